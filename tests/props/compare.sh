#!/usr/bin/env bash
# Compares src/config/props.c with java.util.Properties over the corpus.
#
# Usage: compare.sh PROPSDUMP   (the tests/tools/propsdump binary)
#
# Every corpus/*.properties must load in both and give identical dumps;
# every corpus-invalid/*.properties must fail in both. The JVM starts twice
# in all (PropsDump.java takes many files). Environment: JAVA (default java).
# Exits 77 (skipped; under CI=true 1, tests/lib/missing.sh) without java.
set -euo pipefail

dump=${1:?usage: compare.sh PROPSDUMP}
cd "$(dirname "$0")"
# shellcheck source=../lib/missing.sh
. ../lib/missing.sh
java=${JAVA:-java}
command -v "$java" >/dev/null || missing "$java not found" openjdk-17-jre-headless
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

valid=(corpus/*.properties)
invalid=(corpus-invalid/*.properties)
if [ "${#valid[@]}" -lt 25 ] || [ ! -e "${invalid[0]}" ]; then
	echo "compare.sh: corpus missing or too small (${#valid[@]} valid files)" >&2
	exit 1
fi

fail=0
"$java" PropsDump.java "${valid[@]}" >"$tmp/java.out" 2>"$tmp/java.err" || {
	echo "compare.sh: Java failed on the valid corpus:" >&2
	cat "$tmp/java.err" >&2
	fail=1
}
"$dump" "${valid[@]}" >"$tmp/c.out" 2>"$tmp/c.err" || {
	echo "compare.sh: props.c failed on the valid corpus:" >&2
	cat "$tmp/c.err" >&2
	fail=1
}
if ! diff -u --label java "$tmp/java.out" --label props.c "$tmp/c.out"; then
	echo "compare.sh: props.c differs from java.util.Properties (see diff)" >&2
	fail=1
fi

# Both must print ERROR for every invalid file, and exit 1.
for f in "${invalid[@]}"; do printf '== %s\nERROR\n' "$f"; done >"$tmp/want.out"
java_rc=0
c_rc=0
"$java" PropsDump.java "${invalid[@]}" >"$tmp/java-inv.out" 2>/dev/null || java_rc=$?
"$dump" "${invalid[@]}" >"$tmp/c-inv.out" 2>/dev/null || c_rc=$?
for side in java c; do
	if ! diff -u --label expected "$tmp/want.out" --label "$side" "$tmp/$side-inv.out"; then
		echo "compare.sh: $side accepted a file of corpus-invalid/ (see diff)" >&2
		fail=1
	fi
done
if [ "$java_rc" != 1 ] || [ "$c_rc" != 1 ]; then
	echo "compare.sh: on corpus-invalid/ java exited $java_rc, props.c $c_rc (want 1)" >&2
	fail=1
fi

[ "$fail" = 0 ] && echo "compare.sh: ${#valid[@]} valid and ${#invalid[@]} invalid files agree"
exit "$fail"
