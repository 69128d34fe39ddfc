#!/usr/bin/env bash
# Builds skiff's libFuzzer targets (clang, ASan+UBSan, in build-fuzz/) and runs
# each over its seed corpus:
#
#   tests/fuzz/run.sh             the CI run: every target FUZZ_SECONDS (30) of
#                                 wall time, all at once
#   tests/fuzz/run.sh --long      the long profile: FUZZ_SECONDS defaults to 3600
#   tests/fuzz/run.sh --replay    only replays the seed corpora (seconds)
#
# Targets: fuzz_props (the .properties reader), fuzz_offsets (the offset-file
# parser, with a write/reload round trip), fuzz_config (the configuration
# loader), fuzz_rest (the REST API's request handling), fuzz_transform (the
# transform and predicate configuration, applied to a line and a row),
# fuzz_provider (config provider declarations and ${...} references); see each
# file's header. Seeds: tests/fuzz/corpus/<target>/ (and the props reader's
# JVM-checked corpus in tests/props/). Inputs the fuzzer finds go to
# tests/fuzz/out/<target>/ (ignored by git; add the interesting ones to the
# corpus by hand); a crashing input to tests/fuzz/out/<target>-crash-*, and
# the script exits 1 naming it. Replay one with build-fuzz/<target> FILE.
# Prints "FIGURE fuzz.<target>: ..." lines with the executions and time.
set -euo pipefail
cd "$(dirname "$0")/../.."

mode=short
case ${1:-} in
--long) mode=long ;;
--replay) mode=replay ;;
"") ;;
*) echo "run.sh: unknown argument $1 (see the comment at the top)" >&2; exit 2 ;;
esac
seconds=${FUZZ_SECONDS:-$([ "$mode" = long ] && echo 3600 || echo 30)}

if ! command -v clang >/dev/null; then
	echo "run.sh: clang is needed for libFuzzer (apt-get install clang libclang-rt-14-dev)" >&2
	exit 2
fi
targets=(fuzz_props fuzz_offsets fuzz_config fuzz_rest fuzz_provider fuzz_transform)
echo "== fuzz build (clang, libFuzzer, ASan+UBSan)"
# Warnings are the main builds' business (gcc, -Werror): clang's extra ones
# must not stop the fuzzing.
CC=clang cmake -S . -B build-fuzz -DSKIFF_FUZZ=ON -DSKIFF_TESTS=OFF -DSKIFF_WERROR=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]}" >/dev/null

seeds() { # target
	local t=${1#fuzz_}
	echo "tests/fuzz/corpus/$t"
	if [ "$t" = props ]; then
		echo tests/props/corpus tests/props/corpus-invalid
	fi
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
mkdir -p tests/fuzz/out
pids=()
for t in "${targets[@]}"; do
	mkdir -p "tests/fuzz/out/$t"
	log=tests/fuzz/out/$t.log
	if [ "$mode" = replay ]; then
		# shellcheck disable=SC2046
		build-fuzz/$t -runs=0 $(seeds "$t") >"$log" 2>&1 &
	else
		# shellcheck disable=SC2046
		build-fuzz/$t -max_total_time="$seconds" -timeout=10 -max_len=8192 \
			-print_final_stats=1 -artifact_prefix="tests/fuzz/out/$t-" \
			"tests/fuzz/out/$t" $(seeds "$t") >"$log" 2>&1 &
	fi
	pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
	t=${targets[$i]}
	log=tests/fuzz/out/$t.log
	if ! wait "${pids[$i]}"; then
		echo "run.sh: $t FAILED; log tail:" >&2
		tail -n 40 "$log" >&2
		ls tests/fuzz/out/"$t"-* 2>/dev/null >&2 || true
		status=1
		continue
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	corpus=$(find "tests/fuzz/out/$t" -type f | wc -l)
	if [ "$mode" = replay ]; then
		echo "FIGURE fuzz.$t: seed corpus replayed clean"
	else
		echo "FIGURE fuzz.$t: ${execs:-?} executions in ${seconds} s, no crash; $corpus new inputs"
	fi
done
exit $status
