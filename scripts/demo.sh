#!/usr/bin/env bash
# skiff's main job, from nothing: installs what is missing, builds skiff, starts a
# local single-node Kafka broker, runs skiff on a sample configuration (Kafka
# Connect's own two files) tailing a log that a writer appends to, and shows the
# records arriving in Kafka. Then it stops skiff (SIGTERM) and shows the offsets it
# committed.
#   scripts/demo.sh              about 15 seconds of records, then a clean stop
#   scripts/demo.sh --follow     keep going until Ctrl-C
# Everything lives in ${SKIFF_DEMO_DIR:-${TMPDIR:-/tmp}/skiff-demo-$(id -un)}, one
# directory per user, emptied by the next run; the broker listens on 127.0.0.1
# only. A second demo while one runs there is refused.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
follow=0
[ "${1:-}" = "--follow" ] && follow=1
demo=${SKIFF_DEMO_DIR:-${TMPDIR:-/tmp}/skiff-demo-$(id -un)}

die() {
	echo "demo: $*" >&2
	exit 1
}

# The demo's directory: ours (in a shared /tmp another user's, or a symlink
# someone put there, is refused, not written into), not in use by another
# demo (locked while this one runs; the broker, the writer and skiff do not
# inherit the lock), emptied in place.
mkdir -p -m 0700 "$demo"
[ ! -L "$demo" ] && [ -d "$demo" ] && [ -O "$demo" ] ||
	die "$demo is not a directory of $(id -un)'s (SKIFF_DEMO_DIR=DIR picks another)"
exec 9<"$demo"
flock -n 9 || die "another demo runs in $demo (SKIFF_DEMO_DIR=DIR picks another)"
find "$demo" -mindepth 1 -delete

scripts/install-deps.sh
echo "== building skiff (release)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKIFF_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
build/skiff --version

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$repo/tests/kafka/kafka.sh" stop "$demo/kafka" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== starting a local Kafka broker (first run downloads it with Maven)"
bootstrap=$(tests/kafka/kafka.sh start "$demo/kafka" 9<&-)
echo "broker at $bootstrap"

cd "$demo"
# Kafka Connect's connect-standalone.properties and connect-file-source.properties,
# as Apache Kafka ships them, pointed at this broker and this directory.
cat >connect-standalone.properties <<PROPS
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
key.converter.schemas.enable=true
value.converter.schemas.enable=true
offset.storage.file.filename=$demo/connect.offsets
offset.flush.interval.ms=10000
PROPS
cat >connect-file-source.properties <<PROPS
name=local-file-source
connector.class=FileStreamSource
tasks.max=1
file=$demo/test.txt
topic=connect-test
PROPS
printf 'hello from skiff\nthis line was there before skiff started\n' >test.txt

( i=0; while :; do i=$((i + 1)); echo "reading $i at $(date +%T.%N | cut -c1-12)" >>test.txt; sleep 0.5; done ) 9<&- &
pids+=($!)

echo "== skiff connect-standalone.properties connect-file-source.properties"
"$repo/build/skiff" connect-standalone.properties connect-file-source.properties 2>skiff.log 9<&- &
skiff_pid=$!
pids+=($skiff_pid)

# The topic is created by the first records skiff produces.
for _ in $(seq 120); do
	kcat -L -b "$bootstrap" -t connect-test 2>/dev/null | grep -q "partition 0" && break
	sleep 0.5
done
echo "== records arriving in topic connect-test (kcat -C):"
if [ $follow = 1 ]; then
	kcat -q -C -b "$bootstrap" -t connect-test -o beginning -f 'partition %p offset %o: %s\n' || true
else
	timeout 15 kcat -q -C -b "$bootstrap" -t connect-test -o beginning \
		-f 'partition %p offset %o: %s\n' | tee records.txt || true
fi

echo "== stopping skiff (SIGTERM): it commits what Kafka acknowledged"
kill -TERM "$skiff_pid"
rc=0
wait "$skiff_pid" || rc=$?
echo "skiff exited $rc"
echo "== skiff's log:"
cat skiff.log
echo "== committed offsets ($demo/connect.offsets):"
cat connect.offsets
echo
# The demo fails when it did not show what it is for (scripts/cleanroom.sh
# runs it on a fresh Debian root).
[ "$rc" = 0 ] || die "skiff exited $rc (its log above)"
[ $follow = 1 ] || [ -s records.txt ] || die "no record arrived in 15 s"
