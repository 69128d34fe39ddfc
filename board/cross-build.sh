#!/usr/bin/env bash
# cross-build.sh [options] BOARD: cross-builds skiff for board/BOARD on a
# Debian/Ubuntu build host with Debian multiarch.
#
#   BOARD            a directory of board/ with a board.conf (raspberrypi-arm64,
#                    raspberrypi-armhf, generic-gateway)
#   -B DIR           build directory (default: build-BOARD in the source tree)
#   --no-setup       do not touch apt: the cross compiler and the target's -dev
#                    packages are already installed
#   --sysroot        build against a sysroot of the target's own .debs
#                    (board/sysroot.sh, into BUILD_DIR.sysroot) instead of
#                    Debian multiarch; chosen by itself when multiarch apt fails
#   --test           also run the unit tests under qemu-user (ctest)
#   --e2e            also run the end-to-end subset under qemu-user against a
#                    real broker on loopback (board/e2e-qemu.sh)
#   --deb            also package the result (firmware/debian/build-deb.sh)
#
# Environment: SKIFF_CPU (-mcpu for one board model, see board.conf),
# DEB_ARCH (generic-gateway only: arm64 or armhf), CMAKE_BUILD_TYPE
# (default RelWithDebInfo; packaging strips the binary), SKIFF_CTEST_EXCLUDE
# (--test: regex of tests not to run under qemu; see below).
#
# Setup (as root, needs the Debian archive; skipped when all is installed):
#   dpkg --add-architecture ARCH; apt-get update; apt-get install
#   crossbuild-essential-ARCH qemu-user and the :ARCH -dev packages of
#   librdkafka, cJSON, SQLite, libmicrohttpd, zlib, zstd, xz, libsystemd; when the :ARCH libraries cannot be
#   installed (see --sysroot), mmdebstrap and board/sysroot.sh instead.
# Then configures with board/toolchains/TOOLCHAIN, builds, checks with `file`
# that the binary is for the board, prints its size stripped and not, and runs
# `skiff --version` under qemu-user when it is installed.
set -euo pipefail

die() {
	echo "cross-build: $*" >&2
	exit 1
}
usage() {
	sed -n '2,21s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

src=$(cd "$(dirname "$0")/.." && pwd)
build=
setup=1
run_tests=0
run_e2e=0
make_deb=0
use_sysroot=0
board=
while [ $# -gt 0 ]; do
	case "$1" in
	-B) [ $# -ge 2 ] || usage; build=$2; shift 2 ;;
	--no-setup) setup=0; shift ;;
	--sysroot) use_sysroot=1; shift ;;
	--test) run_tests=1; shift ;;
	--e2e) run_e2e=1; shift ;;
	--deb) make_deb=1; shift ;;
	-h | --help) usage ;;
	-*) die "unknown option $1" ;;
	*) [ -z "$board" ] || usage; board=$1; shift ;;
	esac
done
[ -n "$board" ] || usage
conf=$src/board/$board/board.conf
if [ ! -f "$conf" ]; then
	boards=
	for b in "$src"/board/*/board.conf; do
		boards="$boards $(basename "$(dirname "$b")")"
	done
	die "no $conf; boards:$boards"
fi
# shellcheck source=/dev/null
. "$conf"
: "${DEB_ARCH:?board.conf sets no DEB_ARCH}" "${TRIPLET:?}" "${TOOLCHAIN:?}"
build=${build:-$src/build-$board}
mkdir -p "$build"
build=$(cd "$build" && pwd)

installed() {
	dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}

apt_install() { # packages...: as root, only what is missing
	local missing=() p
	for p in "$@"; do
		installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	[ "$(id -u)" = 0 ] || die "missing ${missing[*]}; run as root, or install them and pass --no-setup"
	echo "cross-build: installing ${missing[*]}" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

if [ "$setup" = 1 ]; then
	# The host's own tools: the cross compiler is an amd64 package.
	apt_install crossbuild-essential-"$DEB_ARCH" qemu-user cmake pkg-config file ||
		{ apt-get update -qq || true; apt_install crossbuild-essential-"$DEB_ARCH" qemu-user cmake pkg-config file; }
	if [ "$use_sysroot" = 0 ]; then
		if ! dpkg --print-foreign-architectures | grep -qx "$DEB_ARCH" &&
			[ "$(dpkg --print-architecture)" != "$DEB_ARCH" ]; then
			echo "cross-build: dpkg --add-architecture $DEB_ARCH" >&2
			dpkg --add-architecture "$DEB_ARCH"
		fi
		libs=()
		for p in librdkafka-dev libcjson-dev libsqlite3-dev libmicrohttpd-dev libgnutls28-dev zlib1g-dev \
			libzstd-dev liblzma-dev libsystemd-dev; do
			libs+=("$p:$DEB_ARCH")
		done
		if ! apt_install "${libs[@]}"; then
			# A mirror mid-sync can fail one index; the others may still do.
			apt-get update -qq || echo "cross-build: apt-get update reported errors, trying anyway" >&2
			# Multiarch needs every Multi-Arch: same library at the host's
			# exact version; a foreign index that lags (or fails) cannot give
			# it. The target's own .debs, unpacked, are consistent.
			apt_install "${libs[@]}" || {
				echo "cross-build: multiarch install failed; using a sysroot of $DEB_ARCH .debs" >&2
				use_sysroot=1
			}
		fi
	fi
	[ "$use_sysroot" = 0 ] || apt_install mmdebstrap
fi
sysroot=
if [ "$use_sysroot" = 1 ]; then
	sysroot=$build.sysroot
	if [ ! -f "$sysroot/.skiff-sysroot" ]; then
		"$src/board/sysroot.sh" "$DEB_ARCH" "$sysroot"
		date -u +%FT%TZ >"$sysroot/.skiff-sysroot"
	fi
fi
# Runs a target binary under qemu-user. Multiarch: no -L, so the loader is the
# multiarch one (/lib/ld-linux-*.so) with its own libc; -L /usr/$TRIPLET would
# mix the cross toolchain's glibc with multiarch libraries (librdkafka then
# spins). A sysroot carries its own loader and libc: -L SYSROOT.
target_run() {
	if [ -n "$sysroot" ]; then
		"$QEMU" -L "$sysroot" "$@"
	else
		"$QEMU" "$@"
	fi
}
command -v "$TRIPLET-gcc" >/dev/null || die "$TRIPLET-gcc not found (crossbuild-essential-$DEB_ARCH)"

tests=OFF
[ "$run_tests" = 1 ] && tests=ON
echo "cross-build: $BOARD_DESC -> $build" >&2
cmake -S "$src" -B "$build" \
	-DCMAKE_TOOLCHAIN_FILE="$src/board/toolchains/$TOOLCHAIN" \
	-DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-RelWithDebInfo}" \
	-DSKIFF_CPU="${SKIFF_CPU:-}" \
	-DSKIFF_SYSROOT="$sysroot" \
	-DSKIFF_TESTS="$tests" >&2
cmake --build "$build" -j"$(nproc)" >&2

bin=$build/skiff
[ -x "$bin" ] || die "no $bin after the build"
desc=$(file -b "$bin")
case "$DEB_ARCH:$desc" in
arm64:*"ARM aarch64"* | armhf:*"32-bit"*"ARM,"*) ;;
amd64:*x86-64*) ;;
*) die "$bin is not a $DEB_ARCH binary: $desc" ;;
esac
echo "cross-build: $bin: $desc" >&2
stripped=$(mktemp)
trap 'rm -f "$stripped"' EXIT
"$TRIPLET-strip" -o "$stripped" "$bin"
echo "cross-build: size $(stat -c %s "$bin") bytes, stripped $(stat -c %s "$stripped") bytes" >&2

if command -v "$QEMU" >/dev/null; then
	echo "cross-build: $QEMU ${sysroot:+-L $sysroot }$bin --version:" >&2
	target_run "$bin" --version >&2 || die "$bin --version failed under $QEMU"
else
	echo "cross-build: $QEMU not installed, not running the binary" >&2
fi

if [ "$run_tests" = 1 ]; then
	# ctest puts qemu in front of test targets (CMAKE_CROSSCOMPILING_EMULATOR),
	# but not in front of a target binary that a test script runs itself: such
	# tests need binfmt_misc (qemu-user-binfmt), absent in containers. Skip them
	# unless SKIFF_CTEST_EXCLUDE says otherwise ('' runs everything).
	exclude=${SKIFF_CTEST_EXCLUDE-'^props\.java_compare$'}
	ctest --test-dir "$build" --output-on-failure ${exclude:+-E "$exclude"} >&2
fi
if [ "$run_e2e" = 1 ]; then
	"$src/board/e2e-qemu.sh" "$QEMU" "$bin" "$sysroot"
fi
if [ "$make_deb" = 1 ]; then
	"$src/firmware/debian/build-deb.sh" "$build" "$DEB_ARCH"
fi
