#!/usr/bin/env python3
"""Benchmark (not a test): one file of N numbered lines of ~150 bytes shipped
to one local Kafka 3.9.1 broker by each of

  kcat -P -l                 librdkafka's defaults
  kcat same settings         kcat -P -l with skiff's producer defaults
                             (src/kafka/sink_kafka.c: enable.idempotence=true,
                             acks=all, linger.ms=5, queue.buffering.max.
                             messages=5000, queue.buffering.max.kbytes=2048,
                             message.timeout.ms=0): the reference of the ratios
  skiff StringConverter      FileStreamSource, raw lines
  skiff JsonConverter        FileStreamSource, Connect's default converter
                             (schemas.enable=true: each line in the envelope
                             {"schema":{"type":"string","optional":false},
                             "payload":"<line>"})
  kcat JsonConverter's bytes kcat -P -l with skiff's settings fed a file of
                             exactly the records skiff's JsonConverter writes
                             for the input, rendered before the runs (Python's
                             json module, Jackson's escaping); the first and
                             last record of each of its and skiff's
                             JsonConverter runs must be byte for byte the
                             rendered ones: the reference of skiff
                             JsonConverter's second ratio
  Fluent Bit                 tail -> kafka, from PATH or FLUENT_BIT=...
  Kafka Connect              3.9.1 standalone FileStreamSource (jars from Maven
                             Central by tests/rest/connect.sh), StringConverter

after one throw-away warm-up run of both kcats (the broker's JIT), tools
interleaved (the order rotates each repetition) across --reps repetitions, a
fresh topic per run. Each run's topic is read back and must hold each line
number exactly once. Prints, per tool, the median and min-max of CPU seconds
(utime+stime of the process and its threads), wall seconds and peak RSS, the
ratios of the medians against kcat-same-settings (then, in a second table,
the JsonConverter runs against kcat with JsonConverter's bytes, which sends
what they send), and for skiff and kcat the
share of its CPU spent outside librdkafka's rdk:* threads (/proc/PID/task/*/
stat: skiff's when the last record is in, kcat's in its last sample, every
50 ms, before it exits). kcat's own thread reads lines and calls librdkafka's
produce once per record: the floor of that share for any program doing so.

  python3 tests/bench/bench_file.py [--lines N] [--reps 5] [--skiff PATH]
          [--tools kcat,kcat-same,kcat-json,skiff-string,skiff-json,fluent-bit,connect]
          [--skiff-base PATH]

--skiff-base adds base-string and base-json: the same two runs of another
build (say the previous commit's), interleaved with the rest, for a
before/after from one invocation.

Use a release build (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release). Wall
time: to exit for kcat (it exits once all is delivered); for the daemons, to
the moment the topic's high watermark reaches N (polled every 0.2 s with
kcat -Q), after which they get SIGTERM; their CPU includes that shutdown.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import (REPO, check_delivered, exit_share, local_broker, run_tool,  # noqa: E402
                      summarize, until_watermark)

NUMBER_RE = rb"(\d{9}) 2026-11-30T02"
SAME = ["enable.idempotence=true", "acks=all", "linger.ms=5",
        "queue.buffering.max.messages=5000", "queue.buffering.max.kbytes=2048",
        "message.timeout.ms=0"]
TOOLS = ["kcat", "kcat-same", "kcat-json", "skiff-string", "skiff-json", "fluent-bit", "connect"]
NAMES = {"kcat": "kcat -P -l", "kcat-same": "kcat -P -l, skiff's settings",
         "kcat-json": "kcat, skiff's, JsonConverter bytes",
         "skiff-string": "skiff StringConverter", "skiff-json": "skiff JsonConverter",
         "fluent-bit": "Fluent Bit tail -> kafka", "connect": "Connect 3.9.1 FileStreamSource",
         "base-string": "skiff StringConverter, --skiff-base",
         "base-json": "skiff JsonConverter, --skiff-base"}


def write_input(src, n):
    with open(src, "w") as f:
        for i in range(n):
            f.write(f"{i:09d} 2026-11-30T02:00:00.000Z gateway-7 sensor=temp value={i % 997}.5 "
                    f"unit=C status=ok site=edge-07 note=the-quick-brown-fox-jumps-over-the-lazy-dog\n")


# JsonConverter's envelope for a string value with schemas.enable=true, as
# skiff writes it (src/convert/convert.c string_envelope).
STRING_ENVELOPE = b'{"schema":{"type":"string","optional":false},"payload":'
JSON_TOOLS = ("kcat-json", "skiff-json", "base-json")


def _jackson_escape(m):
    # json.dumps writes \u00xx in lower case; Jackson (and skiff) in upper.
    return m.group(1) or "\\u" + m.group(2).upper()


def _surrogates(m):
    cp = ord(m.group(0)) - 0x10000
    return f"\\u{0xD800 + (cp >> 10):04X}\\u{0xDC00 + (cp & 0x3FF):04X}"


def connect_json_string(line):
    """line (bytes, no line end) as a JSON string the way Connect's
    JsonConverter (Jackson) writes it: " \\ and the controls escaped (\\n,
    \\t, ... or \\u00XX), other characters as they are except those outside
    the BMP, which Jackson writes as an escaped UTF-16 surrogate pair. Invalid
    UTF-8 becomes U+FFFD (as Python decodes it; skiff's runs of replaced bytes
    may differ, the benchmark's input is ASCII)."""
    text = json.dumps(line.decode("utf-8", "replace"), ensure_ascii=False)
    text = re.sub(r"(\\\\)|\\u([0-9a-f]{4})", _jackson_escape, text)
    return re.sub("[\U00010000-\U0010FFFF]", _surrogates, text).encode()


def write_json_records(src, dst):
    """dst: one line per line of src (whose lines end in \\n only), the record
    JsonConverter with schemas.enable=true writes for it. Returns (first, last)."""
    first = last = None
    with open(src, "rb") as f, open(dst, "wb") as out:
        for line in f:
            last = STRING_ENVELOPE + connect_json_string(line.rstrip(b"\n")) + b"}"
            first = first or last
            out.write(last + b"\n")
    return first, last


def record_at(bootstrap, topic, offset):
    """The value of topic's record at offset (-1: the last), byte for byte."""
    return subprocess.run(["kcat", "-C", "-q", "-e", "-c", "1", "-b", bootstrap, "-t", topic,
                           "-p", "0", "-o", str(offset), "-f", "%s"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE).stdout


def same_ends(bootstrap, topic, ends):
    """"" when topic's first and last records are byte for byte the rendered
    ones (ends), which kcat-json sends: the reference sends what skiff
    JsonConverter sends. Else why."""
    for what, offset, want in (("first", 0, ends[0]), ("last", -1, ends[1])):
        got = record_at(bootstrap, topic, offset)
        if got != want:
            return f"{what} record differs from the rendered one: {got[:300]!r} vs {want[:300]!r}"
    return ""


def connect_libs():
    if not shutil.which("java"):
        return None, "no java"
    r = subprocess.run([str(REPO / "tests" / "rest" / "connect.sh"), "fetch"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return None, "connect.sh fetch failed: " + r.stderr.decode(errors="replace")[-200:]
    return r.stdout.decode().strip(), ""


def command(tool, d, src, topic, bootstrap, args):
    """(argv, daemon?) for one run of tool in directory d."""
    if tool.startswith("kcat"):
        xs = [a for s in (SAME if tool != "kcat" else []) for a in ("-X", s)]
        data = args.json_records if tool == "kcat-json" else src
        return ["kcat", "-P", "-b", bootstrap, "-t", topic, "-l", *xs, str(data)], False
    if tool.startswith(("skiff", "base")):
        conv = ("org.apache.kafka.connect.json.JsonConverter" if tool.endswith("-json")
                else "org.apache.kafka.connect.storage.StringConverter")
        (d / "w.properties").write_text(
            f"bootstrap.servers={bootstrap}\noffset.storage.file.filename={d}/offsets\n"
            f"value.converter={conv}\nconnectors.bench.connector.class=FileStreamSource\n"
            f"connectors.bench.file={src}\nconnectors.bench.topic={topic}\n")
        return [args.skiff_base if tool.startswith("base") else args.skiff,
                str(d / "w.properties")], True
    if tool == "fluent-bit":
        (d / "fb.conf").write_text(
            "[SERVICE]\n    flush 1\n    log_level warn\n"
            f"[INPUT]\n    name tail\n    path {src}\n    read_from_head true\n"
            f"[OUTPUT]\n    name kafka\n    match *\n    brokers {bootstrap}\n"
            f"    topics {topic}\n"
            + "".join(f"    rdkafka.{s.replace('=', ' ')}\n" for s in SAME))
        return [args.fluent_bit, "-c", str(d / "fb.conf")], True
    (d / "worker.properties").write_text(
        f"bootstrap.servers={bootstrap}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={d}/connect.offsets\nlisteners=http://127.0.0.1:0\n")
    (d / "connector.properties").write_text(
        "name=bench\nconnector.class=FileStreamSource\ntasks.max=1\n"
        f"file={src}\ntopic={topic}\n")
    (d / "log4j.properties").write_text(
        "log4j.rootLogger=WARN, stderr\n"
        "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
        "log4j.appender.stderr.Target=System.err\n"
        "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n")
    return ["java", "-Xmx512m", f"-Dlog4j.configuration=file:{d}/log4j.properties", "-cp",
            f"{args.connect_libs}/*", "org.apache.kafka.connect.cli.ConnectStandalone",
            str(d / "worker.properties"), str(d / "connector.properties")], True


def one_run(tool, work, run_id, src, n, bootstrap, args):
    d = work / f"{tool}-{run_id}"
    d.mkdir()
    topic = f"bench-{tool}-{run_id}"
    argv, daemon = command(tool, d, src, topic, bootstrap, args)
    if daemon:
        r = run_tool(argv, str(d), until=until_watermark(bootstrap, topic, n))
    else:
        sample, share = exit_share(argv)
        r = run_tool(argv, str(d), until=sample)
        r["own"] = share()
    r["bad"] = check_delivered(bootstrap, topic, n, NUMBER_RE)
    if not r["bad"] and tool in JSON_TOOLS:
        r["bad"] = same_ends(bootstrap, topic, args.json_ends)
    if r["bad"] or (r["rc"] != 0 and not daemon):
        sys.exit(f"bench: {NAMES[tool]} run {run_id}: exit {r['rc']}; {r['bad']} "
                 f"(see {d}/bench.stderr)")
    shutil.rmtree(d, ignore_errors=True)
    return r


def own_share(name, runs):
    shares = sorted(r["own"] for r in runs if r.get("own") is not None)
    if not name.startswith(("skiff", "kcat")) or not shares:
        return ""
    return f"own thread {100 * shares[len(shares) // 2]:.0f}% of CPU"


def pick_tools(args):
    tools = [t for t in args.tools.split(",") if t]
    if "fluent-bit" in tools and not (args.fluent_bit and shutil.which(args.fluent_bit)):
        print("Fluent Bit: absent (not on PATH, FLUENT_BIT unset): skipped")
        tools.remove("fluent-bit")
    if "connect" in tools:
        args.connect_libs, why = connect_libs()
        if not args.connect_libs:
            print(f"Kafka Connect: {why}: skipped")
            tools.remove("connect")
    return tools


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--fluent-bit", default=os.environ.get("FLUENT_BIT", "fluent-bit"))
    ap.add_argument("--skiff-base", default=None)
    args = ap.parse_args()
    if args.skiff_base:
        args.skiff_base = os.path.abspath(args.skiff_base)
        args.tools += ",base-string,base-json"
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built (cmake -S . -B build && cmake --build build)")
    args.skiff = os.path.abspath(args.skiff)
    tools = pick_tools(args)
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-"))
    with local_broker(work / "kafka") as bootstrap:
        src = work / "lines.log"
        write_input(src, args.lines)
        size = src.stat().st_size
        print(f"input: {args.lines} lines, {size / args.lines:.0f} bytes/line, "
              f"{size / 1e6:.1f} MB; {args.reps} repetitions; {os.cpu_count()} CPUs; "
              f"load average {os.getloadavg()[0]:.2f} at start")
        if any(t in JSON_TOOLS for t in tools):
            args.json_records = work / "lines.json"
            args.json_ends = write_json_records(src, args.json_records)
            size = args.json_records.stat().st_size
            print(f"JsonConverter's records: {size / args.lines:.0f} bytes each, "
                  f"{size / 1e6:.1f} MB (kcat-json's input)")
            if "kcat-json" in tools and not any(t in tools for t in JSON_TOOLS[1:]):
                print("kcat-json: no JsonConverter run of skiff here to check its bytes against")
        for t in ("kcat", "kcat-same"):
            one_run(t, work, "warmup", src, args.lines, bootstrap, args)
        results = {NAMES[t]: [] for t in tools}
        for rep in range(args.reps):
            k = rep % len(tools)
            for t in tools[k:] + tools[:k]:
                results[NAMES[t]].append(one_run(t, work, rep, src, args.lines, bootstrap, args))
        print(f"load average {os.getloadavg()[0]:.2f} at the end; every run delivered "
              f"each of the {args.lines} lines exactly once")
        summarize(results, NAMES["kcat-same"], own_share)
        if "kcat-json" in tools:
            # JsonConverter against the reference sending the same bytes.
            print()
            summarize({NAMES[t]: results[NAMES[t]] for t in JSON_TOOLS if NAMES[t] in results},
                      NAMES["kcat-json"], own_share)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
