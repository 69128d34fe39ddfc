#!/usr/bin/env bash
# sysroot.sh ARCH DIR: makes DIR a sysroot of Debian 12 for ARCH (arm64,
# armhf, ...) holding what skiff builds and runs against: the -dev packages
# of the libraries CMakeLists.txt looks for, and all they depend on.
#
# The packages are downloaded and unpacked, not installed (mmdebstrap
# --variant=extract: apt resolves the dependencies for ARCH alone, then each
# .deb is unpacked as dpkg -x does), so nothing of the build host's dpkg
# database is involved and the set is consistent by construction: one glibc,
# and every library from the same index. That is the way out when multiarch
# apt refuses (a foreign index mid-sync, or a Multi-Arch: same library whose
# host version the target's index does not have).
#
# Absolute symlinks (libm.so -> /lib/...) are made relative, so that both the
# cross linker (--sysroot) and qemu-user (-L DIR) resolve them inside DIR.
#
# Environment: SKIFF_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# SKIFF_DEBIAN_SECURITY (default http://deb.debian.org/debian-security; the
# security suite is tried first and left out if its index cannot be fetched).
# Needs root (or unshare) and mmdebstrap; DIR is replaced if it exists.
set -euo pipefail

die() {
	echo "sysroot: $*" >&2
	exit 1
}
[ $# -eq 2 ] || die "usage: $0 ARCH DIR"
arch=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
command -v mmdebstrap >/dev/null || die "mmdebstrap not found (apt-get install mmdebstrap)"

mirror=${SKIFF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${SKIFF_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
# What CMakeLists.txt's pkg_check_modules look for, required and optional.
pkgs=libc6-dev,librdkafka-dev,libcjson-dev,libsqlite3-dev,libmicrohttpd-dev,libgnutls28-dev
pkgs=$pkgs,zlib1g-dev,libzstd-dev,liblzma-dev,libsystemd-dev
log=$(mktemp "${TMPDIR:-/tmp}/sysroot.XXXXXX")
trap 'rm -f "$log"' EXIT

make_root() { # extra source lines...
	rm -rf "$dir"
	mmdebstrap --variant=extract --architectures="$arch" --include="$pkgs" \
		bookworm "$dir" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
		"$@" >"$log" 2>&1
}

if ! make_root "deb $security bookworm-security main"; then
	echo "sysroot: with bookworm-security it failed, trying without:" >&2
	grep -E '^(E|W):' "$log" | head -n 5 >&2 || true
	make_root || {
		tail -n 20 "$log" >&2
		die "mmdebstrap failed for $arch"
	}
fi

# Relative symlinks: an absolute one would point into the build host's /.
find "$dir" -type l -lname '/*' -print0 | while IFS= read -r -d '' l; do
	ln -sfnr "$dir$(readlink "$l")" "$l.rel$$"
	mv -Tf "$l.rel$$" "$l"
done
echo "sysroot: $dir ($arch): $(du -sh "$dir" | cut -f1)" >&2
