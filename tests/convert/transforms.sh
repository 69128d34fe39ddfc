#!/usr/bin/env bash
# Compares src/transform/ with Kafka Connect's own single message transforms.
#
# Usage: transforms.sh TRANSFORMDUMP   (the tests/tools/transformdump binary)
#
# TransformDump.java runs each chain of transforms.txt (and of
# transforms-schemaless.txt over records-schemaless.txt) (Connect's classes from
# connect-transforms, configured from the same properties, predicates and
# negate as Connect's TransformationStage applies them) over each record of
# records.txt (lines as FileStreamSourceTask gives them, rows as schema and
# payload), and prints the transformed topic, headers (SimpleHeaderConverter)
# and the key and value through JsonConverter (schemas.enable true and false)
# and StringConverter; transformdump runs src/transform/ and src/convert/convert.c
# over the same; the two dumps must be identical. One JVM start per run.
#
# The jars come from Maven Central once, into
# ${SKIFF_CACHE:-~/.cache/skiff}/connect-transforms-VERSION/libs.
# Environment: CONNECT_VERSION (default 3.9.1), SKIFF_CACHE, JAVA. Exits 77
# (skipped; under CI=true 1, tests/lib/missing.sh) without java, or without
# mvn when the jars are not cached yet; 1 on a difference, 2 when the fetch
# fails.
set -euo pipefail

dump=${1:?usage: transforms.sh TRANSFORMDUMP}
dump=$(cd "$(dirname "$dump")" && pwd -P)/$(basename "$dump")
cd "$(dirname "$0")"
ver=${CONNECT_VERSION:-3.9.1}
java=${JAVA:-java}

# shellcheck source=../lib/missing.sh
. ../lib/missing.sh
# shellcheck source=../lib/maven-fetch.sh
. ../lib/maven-fetch.sh

deps() { # dir log
	local a
	for a in connect-json connect-api connect-transforms; do
		printf '<dependency><groupId>org.apache.kafka</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n    ' "$a" "$ver"
	done
}

command -v "$java" >/dev/null || missing "$java not found" openjdk-17-jre-headless
dir=${SKIFF_CACHE:-${HOME:-/tmp}/.cache/skiff}/connect-transforms-$ver
rc=0
libs=$(maven_fetch "$dir" connect-transforms-compare "$ver" "connect-transforms-$ver.jar" deps) || rc=$?
[ $rc != 3 ] || missing "mvn not found and the Connect jars are not cached" maven
if [ $rc != 0 ]; then
	echo "transforms.sh: fetching Connect $ver failed (log: $dir/fetch.log)" >&2
	exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each chains file runs over its records file: values without a schema
# have their own (the transforms smt13 wrote first take structs only).
pairs="transforms.txt:records.txt transforms-schemaless.txt:records-schemaless.txt"
fail=0
for p in $pairs; do
	if ! TZ=UTC "$java" -Xshare:auto -XX:TieredStopAtLevel=1 -cp "$libs/*" TransformDump.java \
		"${p%%:*}" "${p#*:}" >>"$tmp/java.out" 2>"$tmp/java.err"; then
		grep -v '^SLF4J' "$tmp/java.err" >&2 || true
		echo "transforms.sh: TransformDump.java failed on $p" >&2
		exit 1
	fi
	if ! TZ=UTC "$dump" "${p%%:*}" "${p#*:}" >>"$tmp/c.out" 2>"$tmp/c.err"; then
		cat "$tmp/c.err" >&2
		echo "transforms.sh: transformdump failed on $p" >&2
		fail=1
	fi
done
if ! cmp -s "$tmp/java.out" "$tmp/c.out"; then
	diff -u --label Connect "$tmp/java.out" --label skiff "$tmp/c.out" | cut -c 1-300 | head -n 80 || true
	echo "transforms.sh: src/transform differs from Kafka Connect $ver's transforms (see above)" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "transforms.sh: $(cat transforms*.txt | grep -c '^chain ') chains over" \
	"their records: $(grep -c ' value json-schema ' "$tmp/c.out") transformed," \
	"$(grep -c ' dropped$' "$tmp/c.out") dropped, $(grep -c ' error$' "$tmp/c.out") failed, all as Connect $ver"
exit "$fail"
