#!/usr/bin/env bash
# The long profile's extras (scripts/test.sh --long runs this before the
# end-to-end suite, which then runs with SKIFF_PROFILE=long: 500 kills, the
# 30-minute outage, every catalogue case end to end, the rotation soak of
# test_tail_fastrotate.py):
#   - build-plain/skiff, without sanitizers: its RSS means something, so the
#     30-minute outage measures it (SKIFF_PLAIN_BIN);
#   - valgrind memcheck over an end-to-end run: the foundation's file tests,
#     SIGTERM with the broker up and down, and the offset-file catalogue end
#     to end, every skiff process under memcheck; any memory error or definite
#     leak fails (logs kept in build-plain/valgrind/).
# Needs the environment scripts/test.sh sets (SKIFF_TOOLS, a fetched broker).
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== plain build (no sanitizers) for valgrind and RSS figures"
cmake -S . -B build-plain -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSKIFF_TESTS=OFF >/dev/null
cmake --build build-plain -j"$(nproc)" --target skiff

echo "== valgrind memcheck over an end-to-end run"
logs=$PWD/build-plain/valgrind
rm -rf "$logs"
mkdir -p "$logs"
(
	cd tests/e2e
	SKIFF_BIN=$PWD/../faults/valgrind-skiff.sh SKIFF_VALGRIND_LOGS=$logs \
		SKIFF_TEST_TIMEOUT=1800 python3 -m pytest -q \
		test_file_source.py::test_clean_restart_no_duplicates_and_connect_shaped_offsets \
		test_file_source.py::test_bytes_pass_through_and_crlf \
		test_file_source.py::test_rejected_record_stops_connector_before_it \
		test_fault_sigterm.py test_fault_offsetfile.py -k "not every_damage"
)
bad=$(grep -L "ERROR SUMMARY: 0 errors" "$logs"/valgrind.*.log || true)
runs=$(find "$logs" -name 'valgrind.*.log' | wc -l)
if [ -n "$bad" ]; then
	echo "long.sh: valgrind found errors in:" >&2
	for f in $bad; do
		echo "--- $f" >&2
		grep -A20 "Invalid\|uninitialised\|definitely lost" "$f" | head -60 >&2
	done
	exit 1
fi
echo "FIGURE valgrind.memcheck: $runs skiff processes, 0 errors, 0 definite leaks"
