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
# .ci/run calls this with no arguments.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=short
pytest_args=()
while [ $# -gt 0 ]; do
	case $1 in
	--long) profile=long ;;
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
(cd build-asan && ctest --output-on-failure -j"$(nproc)")

echo "== format (clang-format 14, every C file: scripts/check-format.sh)"
scripts/check-format.sh

echo "== fuzz (tests/fuzz/run.sh)"
tests/fuzz/run.sh $([ "$profile" = long ] && echo --long)

echo "== end-to-end tests (real Kafka ${KAFKA_VERSION:-3.9.1})"
tests/kafka/kafka.sh fetch
export SKIFF_BIN=$PWD/build-asan/skiff SKIFF_TOOLS=$PWD/build-asan
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
# A build without sanitizers, for what measures memory (a memory cgroup sees
# AddressSanitizer's shadow): the release build, or the long profile's own.
export SKIFF_PLAIN_BIN=$PWD/build-release/skiff
[ "$profile" = short ] || { tests/faults/long.sh && export SKIFF_PLAIN_BIN=$PWD/build-plain/skiff; }
cd tests/e2e
# Two pytest-xdist workers (each with its own session broker): most tests wait
# on a broker or a kill, not on a core. Tests marked serial (they hold a CPU
# share or an elapsed time to a bound) run afterwards, alone. Without xdist,
# or with SKIFF_E2E_WORKERS=0, everything runs in one process.
workers=${SKIFF_E2E_WORKERS:-2}
if [ "$workers" = 0 ] || ! python3 -c 'import xdist' 2>/dev/null; then
	[ "$workers" = 0 ] || echo "test.sh: pytest-xdist missing: the end-to-end tests run one at a time"
	exec python3 -m pytest -q --durations=25 "${pytest_args[@]}"
fi
parallel=0 alone=0
python3 -m pytest -q --durations=25 -n "$workers" -m "not serial" \
	"${pytest_args[@]}" || parallel=$?
echo "== end-to-end tests that measure CPU or time, alone"
python3 -m pytest -q --durations=10 -m serial "${pytest_args[@]}" || alone=$?
# 5 is "no test selected": a -k EXPR may match tests of one part only.
[ "$parallel" = 5 ] && [ "$alone" != 5 ] && parallel=0
[ "$alone" = 5 ] && [ "$parallel" != 5 ] && alone=0
[ "$parallel" = 0 ] || exit "$parallel"
exit "$alone"
