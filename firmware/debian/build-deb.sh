#!/usr/bin/env bash
# build-deb.sh [BUILD_DIR] [ARCH]: packages a configured and built skiff tree
# as a Debian package, offline.
#
#   BUILD_DIR  a CMake build directory in which skiff was built (default: build)
#   ARCH       Debian architecture: amd64, arm64, armhf (default: read from the
#              binary's ELF header; when given, it must match the binary)
#
# Environment:
#   SKIFF_DEB_REVISION    Debian revision (default 1): VERSION-REVISION
#   SKIFF_DEB_MAINTAINER  Maintainer field (default "skiff maintainers <skiff@example.org>")
#   SKIFF_DEB_NOSTRIP=1   keep debug symbols in /usr/bin/skiff
#   SKIFF_DEB_OUT         output directory (default: BUILD_DIR)
#
# It runs `cmake --install` into a staging directory (DESTDIR: the binary and
# the man pages skiff(1) and skiff.properties(5)), adds the unit,
# the sysusers.d entry, the sample config (a conffile) and the maintainer
# scripts from firmware/, computes Depends with dpkg-shlibdeps (falling back
# to a fixed list), and builds with `dpkg-deb --build --root-owner-group`.
# Prints the path of the .deb on stdout.
set -euo pipefail

die() {
	echo "build-deb: $*" >&2
	exit 1
}

here=$(cd "$(dirname "$0")" && pwd)
firmware=$(dirname "$here")
build=${1:-build}
arch=${2:-}

[ -f "$build/CMakeCache.txt" ] || die "$build is not a CMake build directory; run:
  cmake -S . -B $build -DCMAKE_BUILD_TYPE=RelWithDebInfo && cmake --build $build"
build=$(cd "$build" && pwd)
[ -x "$build/skiff" ] || die "$build/skiff missing: run cmake --build $build first"
for tool in dpkg-deb readelf gzip; do
	command -v "$tool" >/dev/null || die "$tool not found (apt-get install dpkg-dev binutils)"
done

src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
[ -f "$src/CMakeLists.txt" ] || die "cannot find the source tree of $build"

# The architecture of what was built, from the ELF header, so that an amd64
# build is never packaged as arm64 by mistake.
machine=$(readelf -h "$build/skiff" | sed -n 's/^ *Machine: *//p')
case "$machine" in
*X86-64*) elf_arch=amd64 ;;
*AArch64*) elf_arch=arm64 ;;
*ARM*) elf_arch=armhf ;;
*80386*) elf_arch=i386 ;;
*RISC-V*) elf_arch=riscv64 ;;
*) die "unknown ELF machine '$machine' in $build/skiff" ;;
esac
if [ -z "$arch" ]; then
	arch=$elf_arch
elif [ "$arch" != "$elf_arch" ]; then
	die "ARCH $arch does not match $build/skiff, which is $machine ($elf_arch)"
fi

version=$(sed -n 's/^project(skiff VERSION \([0-9][0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || die "no 'project(skiff VERSION x.y.z' in $src/CMakeLists.txt"
version="$version-${SKIFF_DEB_REVISION:-1}"
maintainer=${SKIFF_DEB_MAINTAINER:-skiff maintainers <skiff@example.org>}
out=${SKIFF_DEB_OUT:-$build}
mkdir -p "$out"
out=$(cd "$out" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/skiff-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
root=$work/root

# 1. The binary, exactly as CMake installs it.
strip_opt=--strip
[ "${SKIFF_DEB_NOSTRIP:-0}" = 1 ] && strip_opt=
DESTDIR=$root cmake --install "$build" --prefix /usr $strip_opt >&2
[ -x "$root/usr/bin/skiff" ] || die "cmake --install did not produce usr/bin/skiff"
# The man pages CMake installs, compressed as Debian's policy wants them
# (gzip -9n: no name or time stamp, so the package builds the same twice).
for page in skiff.1 skiff.properties.5; do
	f=$root/usr/share/man/man${page##*.}/$page
	[ -f "$f" ] || die "cmake --install did not produce usr/share/man/man${page##*.}/$page"
	gzip -9n "$f"
done

# 2. Integration files. Debian 12 keeps units in /lib (usr-merge moratorium).
install -D -m 0644 "$firmware/systemd/skiff.service" "$root/lib/systemd/system/skiff.service"
install -D -m 0644 "$firmware/systemd/skiff.sysusers" "$root/usr/lib/sysusers.d/skiff.conf"
install -D -m 0644 "$firmware/etc/skiff.properties" "$root/etc/skiff/skiff.properties"
doc=$root/usr/share/doc/skiff
install -D -m 0644 "$firmware/README.md" "$doc/README.md"
install -m 0644 "$firmware/systemd/skiff-backoff.conf" "$doc/skiff-backoff.conf"
# Not a Debian upload: no bug to close.
mkdir -p "$root/usr/share/lintian/overrides"
printf 'skiff: initial-upload-closes-no-bugs\n' >"$root/usr/share/lintian/overrides/skiff"
# Per-board settings (queue bounds, MemoryMax) for whoever edits the config.
for b in "$src"/board/*/README.md; do
	[ -f "$b" ] || continue
	name=$(basename "$(dirname "$b")")
	install -D -m 0644 "$b" "$doc/boards/$name.md"
done
{
	echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
	echo "Upstream-Name: skiff"
	echo
	echo "Files: *"
	echo "Copyright: $(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y) the skiff authors"
	if [ -f "$src/LICENSE" ]; then
		echo "License: see below"
		sed 's/^$/./; s/^/ /' "$src/LICENSE"
	else
		echo "License: not yet chosen; see the skiff repository"
	fi
} >"$doc/copyright"
chmod 0644 "$doc/copyright"
{
	echo "skiff ($version) unstable; urgency=medium"
	echo
	echo "  * Package built from the skiff tree by firmware/debian/build-deb.sh."
	echo
	echo " -- $maintainer  $(date -R -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}")"
} | gzip -9n >"$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

# 3. Dependencies. dpkg-shlibdeps reads the shlibs/symbols files of the
# libraries for ARCH (for a cross build, the :ARCH -dev packages must be
# installed, as board/cross-build.sh does).
depends=
if command -v dpkg-shlibdeps >/dev/null && command -v dpkg-architecture >/dev/null; then
	mkdir -p "$work/shlibs/debian"
	printf 'Source: skiff\n\nPackage: skiff\nArchitecture: any\n' >"$work/shlibs/debian/control"
	if (cd "$work/shlibs" && dpkg-architecture -a "$arch" -f -c \
		dpkg-shlibdeps -O -e"$root/usr/bin/skiff" 2>"$work/shlibdeps.err") >"$work/substvars"; then
		depends=$(sed -n 's/^shlibs:Depends=//p' "$work/substvars")
	else
		echo "build-deb: dpkg-shlibdeps failed, Depends from the binary's NEEDED:" >&2
		sed 's/^/  /' "$work/shlibdeps.err" >&2
	fi
fi
if [ -z "$depends" ]; then
	# A cross build against a sysroot (board/sysroot.sh) has no dpkg database
	# of the target's libraries. The binary's NEEDED entries, each mapped to
	# its Debian 12 package with the bound dpkg-shlibdeps computes for amd64
	# from the same symbols files.
	for soname in $(readelf -d "$root/usr/bin/skiff" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		case $soname in
		libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2) d="libc6 (>= 2.34)" ;;
		librdkafka.so.1) d="librdkafka1 (>= 1.2.1)" ;;
		libcjson.so.1) d="libcjson1 (>= 1.7.13)" ;;
		libsqlite3.so.0) d="libsqlite3-0 (>= 3.20.0)" ;;
		libsystemd.so.0) d="libsystemd0 (>= 246)" ;;
		libzstd.so.1) d="libzstd1 (>= 1.5.2)" ;;
		liblzma.so.5) d="liblzma5 (>= 5.1.1alpha+20120614)" ;;
		libz.so.1) d="zlib1g (>= 1:1.1.4)" ;;
		*) die "no package known for $soname (NEEDED by skiff); add it here" ;;
		esac
		case ", $depends, " in *", $d, "*) ;; *) depends=${depends:+$depends, }$d ;; esac
	done
	echo "build-deb: Depends from NEEDED: $depends" >&2
fi

# skiff dlopen()s libmicrohttpd when listeners= is set (src/control/mhdlib.h): no
# NEEDED entry, so neither dpkg-shlibdeps nor the map above sees it.
case ", $depends, " in *", libmicrohttpd12"*) ;; *) depends="$depends, libmicrohttpd12 (>= 0.9.71)" ;; esac
# And GnuTLS for an https:// listener (src/control/gnutlslib.h).
case ", $depends, " in *", libgnutls30"*) ;; *) depends="$depends, libgnutls30" ;; esac
# Likewise SQLite and libsystemd (src/sources/sqlite/sqlitelib.h, src/sources/journald/journallib.h), loaded
# when a SQLite or journald source is opened. libsystemd only when the build
# has the journald source (the binary then names libsystemd.so.0).
case ", $depends, " in *", libsqlite3-0"*) ;; *) depends="$depends, libsqlite3-0 (>= 3.22.0)" ;; esac
if grep -aq 'libsystemd\.so\.0' "$root/usr/bin/skiff" 2>/dev/null; then
	case ", $depends, " in *", libsystemd0"*) ;; *) depends="$depends, libsystemd0 (>= 246)" ;; esac
fi

# 4. Control files.
mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<EOF
Package: skiff
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Section: net
Priority: optional
Description: Kafka source connector for edge devices
 skiff tails log files and polls SQLite databases on a gateway and produces
 their records to Apache Kafka, keeping its source offsets in a crash-safe
 local file. It reads Kafka Connect's property names from one .properties
 file and runs as the systemd unit skiff.service.
EOF
echo /etc/skiff/skiff.properties >"$root/DEBIAN/conffiles"
for s in postinst prerm postrm; do
	install -m 0755 "$here/$s" "$root/DEBIAN/$s"
done

deb=$out/skiff_${version}_${arch}.deb
dpkg-deb --build --root-owner-group "$root" "$deb" >&2
echo "$deb"
