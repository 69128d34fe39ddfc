#!/usr/bin/env bash
# The whole test suite, on a fresh Debian machine or a developer's:
#   scripts/test.sh            install what is missing, build with ASan+UBSan, run the
#                              unit tests (CTest) and the end-to-end tests against a
#                              real single-node Kafka broker (pytest)
#   scripts/test.sh --long     also the long soak and fuzz profile (nightly; hours)
#   scripts/test.sh --kafka4   the end-to-end tests against the newest Kafka 4.x
#   scripts/test.sh -k EXPR    only the end-to-end tests matching EXPR (pytest -k)
#   scripts/test.sh --boards   only the board profile (board/test-boards.sh): arm64 and
#                              armhf cross builds, their unit tests and a kill -9
#                              end-to-end run under qemu-user, the .debs installed into
#                              fresh roots (~5 min; not in CI's default run)
#   scripts/test.sh --cleanroom  also the clean-room step (scripts/cleanroom.sh: install-deps,
#                              the build, the unit tests and the demo in a fresh Debian 12
#                              root; needs root), beside the end-to-end tests; with --long
#                              also the end-to-end tests in that root
# .ci/run calls this with no arguments and CI=true, which adds the clean-room step
# and makes a test that would skip for a tool or module the project installs fail
# (tests/e2e/harness.py, tests/lib/missing.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../tests/lib/missing.sh
. tests/lib/missing.sh

profile=short
pytest_args=()
cleanroom=0
in_ci && cleanroom=1
while [ $# -gt 0 ]; do
	case $1 in
	--long) profile=long ;;
	--cleanroom) cleanroom=1 ;;
	--boards) scripts/install-deps.sh --boards && exec board/test-boards.sh ;;
	--kafka4) export KAFKA_VERSION=${KAFKA4_VERSION:-4.4.0} ;;
	-k) pytest_args+=(-k "$2"); shift ;;
	*) echo "test.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
	esac
	shift
done
export SKIFF_PROFILE=$profile

scripts/install-deps.sh

# SKIFF_REQUIRE_ALL: install-deps installed every optional library; a build
# without one would quietly leave its feature and its tests out.
echo "== build (ASan+UBSan)"
cmake -S . -B build-asan -DSKIFF_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug -DSKIFF_REQUIRE_ALL=ON >/dev/null
cmake --build build-asan -j"$(nproc)"

echo "== release build (-O2: gcc's optimiser finds warnings the Debug build does not)"
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DSKIFF_TESTS=OFF -DSKIFF_REQUIRE_ALL=ON >/dev/null
cmake --build build-release -j"$(nproc)" --target skiff

echo "== unit tests"
run_ctest build-asan --output-on-failure -j"$(nproc)"

echo "== format (clang-format 14, every C file: scripts/check-format.sh)"
scripts/check-format.sh

echo "== fuzz (tests/fuzz/run.sh)"
tests/fuzz/run.sh $([ "$profile" = long ] && echo --long)

# The clean-room step runs beside the end-to-end tests, which mostly wait on
# brokers and kills; it is done before the tests that measure CPU or time.
cleanroom_pid=
if [ $cleanroom = 1 ]; then
	cleanroom_log=$(mktemp "${TMPDIR:-/tmp}/skiff-cleanroom-log.XXXXXX")
	echo "== clean room (scripts/cleanroom.sh), beside the end-to-end tests (log: $cleanroom_log)"
	# A process group of its own, ended with this script whatever the way out.
	# shellcheck disable=SC2046
	setsid nice scripts/cleanroom.sh $([ "$profile" = long ] && echo --e2e) >"$cleanroom_log" 2>&1 &
	cleanroom_pid=$!
	trap '[ -z "$cleanroom_pid" ] || kill -- "-$cleanroom_pid" 2>/dev/null || true' EXIT
fi
# Waits for the clean-room step, shows its output; its status.
cleanroom_done() {
	[ -n "$cleanroom_pid" ] || return 0
	local rc=0
	wait "$cleanroom_pid" || rc=$?
	cleanroom_pid=
	echo "== clean room (scripts/cleanroom.sh)"
	cat "$cleanroom_log"
	rm -f "$cleanroom_log"
	return $rc
}

echo "== end-to-end tests (real Kafka ${KAFKA_VERSION:-3.9.1})"
tests/kafka/kafka.sh fetch
export SKIFF_BIN=$PWD/build-asan/skiff SKIFF_TOOLS=$PWD/build-asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
# A build without sanitizers, for what measures memory (a memory cgroup sees
# AddressSanitizer's shadow): the release build, or the long profile's own.
export SKIFF_PLAIN_BIN=$PWD/build-release/skiff
[ "$profile" = short ] || { tests/faults/long.sh && export SKIFF_PLAIN_BIN=$PWD/build-plain/skiff; }
cd tests/e2e
# Three pytest-xdist workers (each with its own session broker) on CI's two
# cores: most tests wait on a broker, a rotation or a kill, not on a core
# (two workers took 1,233 s on a quiet machine, three 983 s under load 6-10). Tests marked serial (they hold a CPU
# share or an elapsed time to a bound) run afterwards, alone. Without xdist,
# or with SKIFF_E2E_WORKERS=0, everything runs in one process.
workers=${SKIFF_E2E_WORKERS:-3}
clean=0
if [ "$workers" != 0 ] && ! python3 -c 'import xdist' 2>/dev/null; then
	in_ci && { echo "test.sh: pytest-xdist missing (CI=true; scripts/install-deps.sh installs python3-pytest-xdist)" >&2; exit 1; }
	echo "test.sh: pytest-xdist missing: the end-to-end tests run one at a time"
	workers=0
fi
if [ "$workers" = 0 ]; then
	all=0
	cleanroom_done || clean=$?
	python3 -m pytest -q --durations=25 "${pytest_args[@]}" || all=$?
	[ "$all" = 0 ] || exit "$all"
	[ "$clean" = 0 ] || { echo "test.sh: the clean-room step failed (above)" >&2; exit 1; }
	exit 0
fi
parallel=0 alone=0
python3 -m pytest -q --durations=25 -n "$workers" -m "not serial" \
	"${pytest_args[@]}" || parallel=$?
cleanroom_done || clean=$?
echo "== end-to-end tests that measure CPU or time, alone"
python3 -m pytest -q --durations=10 -m serial "${pytest_args[@]}" || alone=$?
# 5 is "no test selected": a -k EXPR may match tests of one part only.
[ "$parallel" = 5 ] && [ "$alone" != 5 ] && parallel=0
[ "$alone" = 5 ] && [ "$parallel" != 5 ] && alone=0
[ "$clean" = 0 ] || { echo "test.sh: the clean-room step failed (above)" >&2; exit 1; }
[ "$parallel" = 0 ] || exit "$parallel"
exit "$alone"
