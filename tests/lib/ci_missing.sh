#!/usr/bin/env bash
# Under CI=true a test script fails for a tool the project installs, where a
# developer's machine without it skips the test (tests/lib/missing.sh; issue
# 21). Each script that compares skiff with Java runs with JAVA pointing
# nowhere: it must exit 77 (CTest: skipped) without CI or with CI=false, and
# 1 with CI=true, naming the package. And run_ctest, which scripts/test.sh
# runs CTest with, fails under CI=true when a test was skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."

bad=0
expect() { # want ci script
	local want=$1 ci=$2 script=$3 rc=0 out
	out=$(env -u CI ${ci:+CI=$ci} JAVA=/nonexistent/java "$script" /bin/true 2>&1) || rc=$?
	if [ "$rc" != "$want" ]; then
		echo "ci_missing: $script with CI=${ci:-(unset)} exited $rc, want $want: $out" >&2
		bad=1
	elif ! grep -q "scripts/install-deps.sh installs openjdk-17-jre-headless" <<<"$out"; then
		echo "ci_missing: $script does not name the package: $out" >&2
		bad=1
	fi
}
for script in tests/props/compare.sh tests/convert/compare.sh tests/convert/transforms.sh \
	tests/convert/jdbc_offsets.sh; do
	expect 77 "" "$script"
	expect 77 false "$script"
	expect 1 true "$script"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run_ctest on a test that skips and on one that fails, from a shell without
# pipefail (as scripts/cleanroom.sh calls it).
mkdir "$tmp/skips" "$tmp/fails"
cat >"$tmp/skips/CTestTestfile.cmake" <<'CTEST'
add_test(skips "sh" "-c" "exit 77")
set_tests_properties(skips PROPERTIES SKIP_RETURN_CODE 77)
CTEST
echo 'add_test(fails "sh" "-c" "exit 1")' >"$tmp/fails/CTestTestfile.cmake"
for c in skips: skips:true fails: fails:true; do
	what=${c%:*} ci=${c#*:} rc=0
	env -u CI ${ci:+CI=$ci} bash -c '. tests/lib/missing.sh; run_ctest "$0"' "$tmp/$what" \
		>"$tmp/out" 2>&1 || rc=$?
	want=$([ "$what" = fails ] || [ -n "$ci" ] && echo 1 || echo 0)
	[ "$what" = fails ] && [ "$rc" != 0 ] && rc=1
	if [ "$rc" != "$want" ]; then
		echo "ci_missing: run_ctest of a test that $what, CI=${ci:-(unset)}: exit $rc, want $want:" >&2
		cat "$tmp/out" >&2
		bad=1
	fi
done
[ $bad = 0 ] && echo "ci_missing: ok: skipped without CI, failed with CI=true"
