#!/usr/bin/env bash
# footprint.sh QEMU BIN [SYSROOT]: the memory footprint of a skiff binary
# (cross-built, run under qemu-user; or QEMU=- for a native binary) against a
# real broker on loopback. Prints the stripped size and:
#   idle: VmRSS after 10 s with one file connector at the end of an empty file
#   full speed: VmHWM while it ships 200,000 lines of 48 bytes appended at once
#     (skiff's default producer queue: 2 MiB / 5,000 records), and how long
#     until the consume tool read them all back.
# Under qemu-user the numbers are the qemu process's: the guest's pages plus
# qemu's own (its translation cache, ~10-30 MB), so they bound a board's from
# above. SKIFF_TOOLS: a host build with the consume tool (default build-board).
set -euo pipefail
die() {
	echo "footprint: $*" >&2
	exit 1
}
[ $# -ge 2 ] || die "usage: $0 QEMU|- BIN [SYSROOT]"
src=$(cd "$(dirname "$0")/.." && pwd)
qemu=$1
bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
sysroot=${3:-}
tools=${SKIFF_TOOLS:-$src/build-board}
[ -x "$tools/consume" ] || die "no $tools/consume (cmake --build $tools --target consume)"
work=$(mktemp -d "${TMPDIR:-/tmp}/skiff-footprint.XXXXXX")
pid=
cleanup() {
	[ -z "$pid" ] || kill -9 "$pid" 2>/dev/null || true
	"$src/tests/kafka/kafka.sh" kill "$work/kafka" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

strip_tool=strip
case $(file -b "$bin") in
*aarch64*) strip_tool=aarch64-linux-gnu-strip ;;
*ARM,*) strip_tool=arm-linux-gnueabihf-strip ;;
esac
"$strip_tool" -o "$work/skiff.stripped" "$bin"
echo "footprint: $(basename "$(dirname "$bin")"): stripped $(stat -c %s "$work/skiff.stripped") bytes"

bootstrap=$("$src/tests/kafka/kafka.sh" start "$work/kafka")
topic=fp-$$
"$tools/consume" -b "$bootstrap" -t "$topic" -c 1 >/dev/null
: >"$work/app.log"
cat >"$work/skiff.properties" <<EOF
bootstrap.servers=$bootstrap
offset.storage.file.filename=$work/offsets
value.converter=org.apache.kafka.connect.storage.StringConverter
connectors.fp.connector.class=FileStreamSource
connectors.fp.file=$work/app.log
connectors.fp.topic=$topic
EOF
run=("$bin")
[ "$qemu" = - ] || run=("$qemu" ${sysroot:+-L "$sysroot"} "$bin")
"${run[@]}" "$work/skiff.properties" 2>"$work/skiff.log" &
pid=$!
sleep 10
kill -0 "$pid" || { cat "$work/skiff.log" >&2; die "skiff stopped"; }
idle=$(awk '/^VmRSS/{print $2 " " $3}' "/proc/$pid/status")
ticks0=$(awk '{print $14 + $15}' "/proc/$pid/stat")
sleep 5
ticks1=$(awk '{print $14 + $15}' "/proc/$pid/stat")
echo "footprint: idle VmRSS $idle, CPU over 5 s idle: $((ticks1 - ticks0)) ticks"

n=200000
seq -f '%07g xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' 1 $n >>"$work/app.log"
t0=$(date +%s.%N)
"$tools/consume" -b "$bootstrap" -t "$topic" -n $n -T 120000 | wc -l >"$work/count"
t1=$(date +%s.%N)
hwm=$(awk '/^VmHWM/{print $2 " " $3}' "/proc/$pid/status")
echo "footprint: full speed VmHWM $hwm; $(cat "$work/count") records read back in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}') s"
kill -TERM "$pid"
wait "$pid" || die "skiff exited $? on SIGTERM"
pid=
