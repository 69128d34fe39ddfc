#!/usr/bin/env bash
# Fails when src/ uses a function that STYLE.md bans (curl's checksrc idea).
set -euo pipefail
cd "$(dirname "$0")/.."
if grep -nE '\b(atoi|atol|atoll|strtok|strcpy|strcat|sprintf|vsprintf|gets)\s*\(' -r src; then
	echo "check-style: banned function used (see above); use the checked helpers in src/util" >&2
	exit 1
fi
echo "check-style: ok"
