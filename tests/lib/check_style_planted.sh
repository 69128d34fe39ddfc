#!/usr/bin/env bash
# scripts/check-style.sh fails on what it is there to catch: a copy of the
# tree with one planted file per rule must fail, naming the planted line,
# and the copy without them must pass. Guards a rule's grep against drifting
# into matching nothing (the errno rule once saw only "-errno" and let
# "return -ENOMEM;" through; issue 27).
set -euo pipefail
cd "$(dirname "$0")/../.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git ls-files -z scripts src | xargs -0 cp --parents -t "$tmp"
git -C "$tmp" init -q && git -C "$tmp" add -A

if ! out=$("$tmp/scripts/check-style.sh" 2>&1); then
	echo "check_style_planted: the tree as it is fails: $out" >&2
	exit 1
fi

bad=0
plant() { # rule file line-of-code
	local rule=$1 file=$2 code=$3 out rc=0

	printf 'int planted(int x)\n{\n%s\n}\n' "$code" >"$tmp/$file"
	git -C "$tmp" add -A
	out=$("$tmp/scripts/check-style.sh" 2>&1) || rc=$?
	if [ "$rc" = 0 ] || ! grep -q "^$file:3:" <<<"$out" || ! grep -q "check-style: $rule:" <<<"$out"; then
		echo "check_style_planted: $rule missed $file: '$code' (exit $rc): $out" >&2
		bad=1
	fi
	rm "$tmp/$file"
	git -C "$tmp" add -A
}
plant errno src/util/zz_planted.c '	return -errno;'
plant errno src/util/zz_planted.c '	return -ENOMEM;'
plant errno src/util/zz_planted.c '	return x ? 0 : -EBADMSG;'
plant bare-code src/util/zz_planted.c '	return -2;'
plant bare-code src/util/zz_planted.c '	return x ? 0 : -3;'
plant banned src/util/zz_planted.c '	return atoi("1");'
exit $bad
