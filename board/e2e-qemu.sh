#!/usr/bin/env bash
# e2e-qemu.sh QEMU BIN [SYSROOT]: the end-to-end subset for a cross-built
# skiff, run under qemu-user against a real Kafka broker on loopback (each
# pytest run starts its own through tests/kafka/kafka.sh).
#
#   QEMU     qemu-aarch64 or qemu-arm
#   BIN      the cross-built skiff
#   SYSROOT  qemu's -L prefix when BIN was linked against a sysroot
#            (board/sysroot.sh); empty for multiarch (the target's loader in
#            /lib finds its libraries; never -L /usr/<triplet>, see cross-build.sh)
#
# The subset, each with kill -9 and restart and the exact record set read
# back from the broker:
#   file source:   test_file_source.py::test_kill9_while_shipping_200k_lines
#   SQLite source: test_sqlite.py::test_mode_restart_and_kill9 (incrementing, table)
# The tests run the target's skiff through a wrapper that execs qemu, so the
# pid the harness signals is the emulated skiff itself. The host-side tools
# (consume) come from SKIFF_TOOLS, or are built for the host beside BIN.
set -euo pipefail

die() {
	echo "e2e-qemu: $*" >&2
	exit 1
}
[ $# -ge 2 ] || die "usage: $0 QEMU BIN [SYSROOT]"
qemu=$(command -v "$1") || die "$1 not found (apt-get install qemu-user)"
bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
sysroot=${3:-}
[ -z "$sysroot" ] || sysroot=$(cd "$sysroot" && pwd) # the tests run elsewhere
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$bin" ] || die "no $bin"

if [ -z "${SKIFF_TOOLS:-}" ]; then
	SKIFF_TOOLS=$(dirname "$bin").host-tools
	cmake -S "$src" -B "$SKIFF_TOOLS" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build "$SKIFF_TOOLS" -j"$(nproc)" --target consume >/dev/null
fi
export SKIFF_TOOLS

wrap=$(mktemp -d "${TMPDIR:-/tmp}/skiff-qemu.XXXXXX")
trap 'rm -rf "$wrap"' EXIT
{
	echo '#!/bin/sh'
	printf 'exec %q %s%q "$@"\n' "$qemu" "${sysroot:+-L $(printf %q "$sysroot") }" "$bin"
} >"$wrap/skiff"
chmod +x "$wrap/skiff"
echo "e2e-qemu: $(tail -n 1 "$wrap/skiff")" >&2
"$wrap/skiff" --version >&2 || die "the wrapper cannot run $bin"

"$src/tests/kafka/kafka.sh" fetch
cd "$src/tests/e2e"
SKIFF_BIN=$wrap/skiff python3 -m pytest -q -p no:cacheprovider \
	"test_file_source.py::test_kill9_while_shipping_200k_lines" \
	"test_sqlite.py::test_mode_restart_and_kill9" \
	-k "test_kill9_while_shipping_200k_lines or (incrementing and table and not timestamp)"
