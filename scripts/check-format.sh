#!/usr/bin/env bash
# Fails when a file listed in .clang-format-enforced differs from what
# clang-format (Debian's clang-format, version 14) makes of it with the repo's
# .clang-format. Only the listed files: the rest of the tree is reformatted in
# one commit of its own, after which the list goes and every file is checked.
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    rewrite the listed files in place
set -euo pipefail
cd "$(dirname "$0")/.."

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format clang-format-14; do
		if command -v "$c" >/dev/null; then cf=$c; break; fi
	done
fi
if [ -z "$cf" ]; then
	echo "check-format: clang-format not found (scripts/install-deps.sh installs it)" >&2
	exit 1
fi

fix=0
[ "${1:-}" = --fix ] && fix=1
bad=0
while IFS= read -r f; do
	case $f in '' | '#'*) continue ;; esac
	if [ ! -f "$f" ]; then
		echo "check-format: $f is listed in .clang-format-enforced but missing" >&2
		bad=1
		continue
	fi
	if [ $fix = 1 ]; then
		"$cf" -i --style=file "$f"
	elif ! "$cf" --style=file "$f" | cmp -s - "$f"; then
		echo "check-format: $f is not formatted (scripts/check-format.sh --fix; diff:)" >&2
		"$cf" --style=file "$f" | diff -u "$f" - | head -20 >&2 || true
		bad=1
	fi
done <.clang-format-enforced
[ $bad = 0 ] && echo "check-format: ok" || exit 1
