#!/usr/bin/env bash
# Renders the man pages (docs/man/*.[1-8]) with every groff warning on, for a
# terminal (-Tutf8, as man shows them) and for print (groff's default device),
# and fails on any warning: an undefined macro, a bad escape, a line groff
# cannot break. Exit 77 (skipped) without groff, 1 under CI=true: there groff
# must be installed (scripts/install-deps.sh installs groff-base;
# tests/lib/missing.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=../tests/lib/missing.sh
. tests/lib/missing.sh
command -v groff >/dev/null || missing "groff not found" groff-base
rc=0
for page in docs/man/*.[1-8]; do
	for dev in utf8 ps; do
		err=$(groff -man -ww -z -T"$dev" "$page" 2>&1 >/dev/null) || rc=1
		if [ -n "$err" ]; then
			echo "check-man: $page (-T$dev):" >&2
			echo "$err" >&2
			rc=1
		fi
	done
done
[ $rc = 0 ] && echo "check-man: $(ls docs/man/*.[1-8] | wc -l) pages render without a warning"
exit $rc
