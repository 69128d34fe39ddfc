#!/usr/bin/env bash
# Renders the man pages (docs/man/*.[1-8]) with every groff warning on, for a
# terminal (-Tutf8, as man shows them) and for print (groff's default device),
# and fails on any warning: an undefined macro, a bad escape, a line groff
# cannot break. Exit 77 (skipped) without groff, unless CI is set: there groff
# must be installed (scripts/install-deps.sh installs groff-base).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v groff >/dev/null; then
	echo "check-man: groff not found (apt-get install groff-base)" >&2
	[ -n "${CI:-}" ] && exit 1
	exit 77
fi
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
