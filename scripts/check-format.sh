#!/usr/bin/env bash
# Fails when a C file of the project differs from what clang-format (Debian's
# clang-format, version 14) makes of it with the repo's .clang-format: src/,
# tests/ (unit, tools, fuzz). Run from scripts/test.sh.
#   scripts/check-format.sh          check
#   scripts/check-format.sh --fix    rewrite them in place
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

files() {
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git ls-files -- 'src/*.c' 'src/*.h' 'tests/*.c' 'tests/*.h'
	else
		find src tests -name '*.[ch]' | sort
	fi
}

fix=0
[ "${1:-}" = --fix ] && fix=1
bad=0
while IFS= read -r f; do
	if [ $fix = 1 ]; then
		"$cf" -i --style=file "$f"
	elif ! "$cf" --style=file "$f" | cmp -s - "$f"; then
		echo "check-format: $f is not formatted (scripts/check-format.sh --fix; diff:)" >&2
		"$cf" --style=file "$f" | diff -u "$f" - | head -20 >&2 || true
		bad=1
	fi
done < <(files)
[ $bad = 0 ] && echo "check-format: ok" || exit 1
