#!/usr/bin/env bash
# Compares the SQLite source's offsets-topic keys and values with Kafka
# Connect's for Confluent's JDBC source (issue 12).
#
# Usage: jdbc_offsets.sh DUMPER   (build dir's test_source_sqlite_offsets)
#
# JdbcOffsets.java builds the JDBC connector's partition and offset maps for
# one row (id 42, ts 2024-03-01 12:34:56.123456789 UTC) in each mode and
# serialises them with Connect 3.9's JsonConverter; the dumper polls the same
# row through skiff's source. Keys must be identical in every mode, values in
# every mode but bulk: Confluent's bulk records carry no offset, skiff keeps
# {"polling.timestamp":…} (the start of the pass, not read on restart)
# (docs/source-sqlite.md). Exits 77 (under CI=true 1, tests/lib/missing.sh)
# without java or the cached jars (compare.sh fetches them: CTest runs it
# first), 1 on a difference.
set -euo pipefail
dumper=${1:?usage: jdbc_offsets.sh DUMPER}
dumper=$(cd "$(dirname "$dumper")" && pwd -P)/$(basename "$dumper")
cd "$(dirname "$0")"
java=${JAVA:-java}
libs=${SKIFF_CACHE:-${HOME:-/tmp}/.cache/skiff}/connect-${CONNECT_VERSION:-3.9.1}/libs
# shellcheck source=../lib/missing.sh
. ../lib/missing.sh
command -v "$java" >/dev/null || missing "$java not found" openjdk-17-jre-headless
[ -e "$libs/.complete" ] || missing "no Connect jars in $libs (compare.sh fetches them)" maven
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$java" -Duser.timezone=UTC -cp "$libs/*" JdbcOffsets.java >"$tmp/java.out" 2>"$tmp/java.err" || {
	grep -v '^SLF4J' "$tmp/java.err" >&2 || true
	exit 1
}
(cd ../unit && "$dumper" "$tmp/c.out")
# Bulk values: Connect's null against skiff's polling.timestamp (see above).
sed -E 's/^((query-)?bulk [^ ]+) \{"polling\.timestamp":[0-9]+\}$/\1 null/' "$tmp/c.out" >"$tmp/c.cmp"
if ! diff -u --label Connect "$tmp/java.out" --label skiff "$tmp/c.cmp"; then
	echo "jdbc_offsets.sh: skiff's offsets-topic records differ from Connect's" >&2
	exit 1
fi
echo "jdbc_offsets.sh: $(wc -l <"$tmp/java.out") modes, keys and values as Connect 3.9 writes them"
