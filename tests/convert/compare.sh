#!/usr/bin/env bash
# Compares src/convert/convert.c with Kafka Connect's own converters.
#
# Usage: compare.sh CONVERTDUMP   (the tests/tools/convertdump binary)
#
# ConnectDump.java runs the real JsonConverter (schemas.enable false and
# true) and StringConverter over lines.hex and structs.txt, and checks its
# model of FileStreamSourceTask against the real task; convertdump runs
# src/convert/convert.c over the same; the two dumps must be identical. Struct
# strings are compared in three time zones (Date.toString). With a JVM of
# version 19 or later, structs-jdk19.txt is added (see there).
#
# The Connect jars come from Maven Central once, into
# ${SKIFF_CACHE:-~/.cache/skiff}/connect-VERSION/libs, the way
# tests/kafka/kafka.sh fetches the broker. One JVM start per run.
#
# Environment: CONNECT_VERSION (default 3.9.1), SKIFF_CACHE, JAVA (default
# java). Exits 77 (skipped; under CI=true 1, tests/lib/missing.sh) without
# java, without tzdata's zones, or without mvn when the jars are not cached
# yet; 1 on a difference, 2 when the fetch fails.
set -euo pipefail

dump=${1:?usage: compare.sh CONVERTDUMP}
dump=$(cd "$(dirname "$dump")" && pwd -P)/$(basename "$dump")
cd "$(dirname "$0")"
ver=${CONNECT_VERSION:-3.9.1}
java=${JAVA:-java}

# shellcheck source=../lib/missing.sh
. ../lib/missing.sh
# shellcheck source=../lib/maven-fetch.sh
. ../lib/maven-fetch.sh

connect_deps() { # dir log
	local a
	for a in connect-json connect-api connect-file; do
		printf '<dependency><groupId>org.apache.kafka</groupId><artifactId>%s</artifactId><version>%s</version></dependency>\n    ' "$a" "$ver"
	done
}

# Prints the libs directory, fetching the jars first when needed.
fetch() {
	local rc=0 dir=${SKIFF_CACHE:-${HOME:-/tmp}/.cache/skiff}/connect-$ver
	maven_fetch "$dir" connect-converters "$ver" "connect-json-$ver.jar" connect_deps || rc=$?
	[ $rc != 3 ] || missing "mvn not found and the Connect jars are not cached" maven
	if [ $rc != 0 ]; then
		echo "compare.sh: fetching Connect $ver failed (log: $dir/fetch.log)" >&2
		exit 2
	fi
}

# Shows each differing item as text around its first differing byte (bytes
# outside printable ASCII as \xNN), or as a plain diff without python3.
explain() { # java.out c.out
	if ! command -v python3 >/dev/null; then
		diff -u --label Connect "$1" --label skiff "$2" | cut -c 1-160 | head -n 60 || true
		return 0
	fi
	python3 - "$1" "$2" <<'EOF'
import sys
def load(p):
    d = {}
    for l in open(p):
        k, _, v = l.rstrip("\n").rpartition(" ")
        d[k] = v
    return d
def show(v, at):
    if v in ("null", "unmatched") or not all(c in "0123456789abcdef-" for c in v):
        return v
    b = b"" if v == "-" else bytes.fromhex(v)
    s = "".join(chr(c) if 32 <= c < 127 else "\\x%02x" % c for c in b[max(0, at - 40):at + 80])
    return ("..." if at > 40 else "") + s + ("..." if len(b) > at + 80 else "")
java, c = load(sys.argv[1]), load(sys.argv[2])
n = 0
for k in list(java) + [k for k in c if k not in java]:
    a, b = java.get(k, "(missing)"), c.get(k, "(missing)")
    if a == b:
        continue
    n += 1
    if n > 20:
        print("... and more")
        break
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b))) // 2
    print(f"{k}: differs at byte {at}\n  Connect: {show(a, at)}\n  skiff:   {show(b, at)}")
EOF
}

command -v "$java" >/dev/null || missing "$java not found" openjdk-17-jre-headless
libs=$(fetch)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

zones=UTC
for z in Europe/Berlin Asia/Kolkata; do
	[ -e "/usr/share/zoneinfo/$z" ] || missing "no /usr/share/zoneinfo/$z" tzdata
	zones=$zones,$z
done
cp structs.txt "$tmp/structs.txt"
major=$("$java" -version 2>&1 | sed -n 's/.* version "\([0-9]*\).*/\1/p' | head -n 1)
if [ "${major:-0}" -ge 19 ]; then
	cat structs-jdk19.txt >>"$tmp/structs.txt"
fi

fail=0
if ! "$java" -Xshare:auto -XX:TieredStopAtLevel=1 -cp "$libs/*" ConnectDump.java lines.hex \
	"$tmp/structs.txt" "$tmp" "$zones" >"$tmp/java.out" 2>"$tmp/java.err"; then
	grep -v '^SLF4J' "$tmp/java.err" >&2 || true
	echo "compare.sh: ConnectDump.java failed" >&2
	exit 1
fi
if ! "$dump" lines.hex "$tmp/structs.txt" "$zones" >"$tmp/c.out" 2>"$tmp/c.err"; then
	cat "$tmp/c.err" >&2
	echo "compare.sh: convertdump failed" >&2
	fail=1
fi
if ! cmp -s "$tmp/java.out" "$tmp/c.out"; then
	explain "$tmp/java.out" "$tmp/c.out"
	echo "compare.sh: src/convert/convert.c differs from Kafka Connect $ver's converters (see above)" >&2
	fail=1
fi
[ "$fail" = 0 ] && echo "compare.sh: $(grep -c '^line .* replaced' "$tmp/c.out") lines," \
	"$(grep -c '^struct .* json ' "$tmp/c.out") structs and the null key agree with Connect $ver" \
	"(java $major, zones $zones)"
exit "$fail"
