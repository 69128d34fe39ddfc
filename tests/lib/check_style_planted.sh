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
# No git: the clean room builds a copy of the tree without .git.
find scripts src -type f -print0 | xargs -0 cp --parents -t "$tmp"

if ! out=$("$tmp/scripts/check-style.sh" 2>&1); then
	echo "check_style_planted: the tree as it is fails: $out" >&2
	exit 1
fi

bad=0
plant() { # rule file line-of-code
	local rule=$1 file=$2 code=$3 out rc=0

	printf 'int planted(int x)\n{\n%s\n}\n' "$code" >"$tmp/$file"
	out=$("$tmp/scripts/check-style.sh" 2>&1) || rc=$?
	if [ "$rc" = 0 ] || ! grep -q "^$file:3:" <<<"$out" || ! grep -q "check-style: $rule:" <<<"$out"; then
		echo "check_style_planted: $rule missed $file: '$code' (exit $rc): $out" >&2
		bad=1
	fi
	rm "$tmp/$file"
}
plant errno src/util/zz_planted.c '	return -errno;'
plant errno src/util/zz_planted.c '	return -ENOMEM;'
plant errno src/util/zz_planted.c '	return x ? 0 : -EBADMSG;'
plant bare-code src/util/zz_planted.c '	return -2;'
plant bare-code src/util/zz_planted.c '	return x ? 0 : -3;'
plant banned src/util/zz_planted.c '	return atoi("1");'
plant config-name src/util/zz_planted.c '	return config_int(x, "k");'
exit $bad
