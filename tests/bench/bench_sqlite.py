#!/usr/bin/env python3
"""Benchmark (not a test): a table of N rows in SQLite shipped to one local
Kafka 3.9.1 broker by

  sqlite3 | kcat -P              sqlite3 -readonly DB "SELECT json_object(...)"
                                 piped to kcat with librdkafka's defaults
  sqlite3 | kcat, skiff's settings   the same with skiff's producer defaults
                                 (src/kafka/sink_kafka.c: enable.idempotence=true,
                                 acks=all, linger.ms=5, queue.buffering.max.*,
                                 message.timeout.ms=0): the reference
  skiff schemas.enable=false     JdbcSourceConnector mode=incrementing,
                                 JsonConverter: the same JSON objects
  sqlite3 | kcat, envelope       the reference with skiff's settings, each
                                 row in JsonConverter's schemas.enable=true
                                 envelope: json_object('schema', json(S),
                                 'payload', json_object(...)), S the schema
                                 skiff writes for the table (the same bytes:
                                 checked on the first record of each run)
  skiff schemas.enable=true      Connect's envelope, a schema in every record

after one throw-away warm-up run of the references, interleaved (the order
rotates each repetition) across --reps repetitions, a fresh topic per run;
each run's topic is read back and must hold each id exactly once. Prints the
median and min-max of CPU seconds (the process and its threads; the
reference's is sqlite3's and kcat's together), wall seconds, rows/s and peak
RSS, and skiff's share of its CPU outside librdkafka's rdk:* threads, in two
tables: schemas.enable=false against the reference with skiff's settings,
schemas.enable=true against that reference writing the same envelope.

  python3 tests/bench/bench_sqlite.py [--rows N] [--reps 5] [--skiff PATH]
          [--skiff-base PATH] [--tools ref,ref-same,ref-envelope,skiff-false,skiff-true]
          [--set K=V ...]

--skiff-base adds base-false and base-true: the same two runs of another
build (say the previous commit's), interleaved with the rest, for a
before/after from one invocation. --set K=V changes a producer setting for
skiff (producer.K=V) and the references with skiff's settings alike.

Use a release build. Wall: to exit for the references; for skiff, until the
topic's high watermark reaches N (kcat -Q every 0.2 s), then SIGTERM.
"""

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchlib import (REPO, check_delivered, local_broker, run_tool,  # noqa: E402
                      summarize, until_watermark)

SAME = ["enable.idempotence=true", "acks=all", "linger.ms=5",
        "queue.buffering.max.messages=5000", "queue.buffering.max.kbytes=2048",
        "message.timeout.ms=0"]
TOOLS = ["ref", "ref-same", "ref-envelope", "skiff-false", "skiff-true"]
NAMES = {"ref": "sqlite3 | kcat -P", "ref-same": "sqlite3 | kcat -P, skiff's settings",
         "ref-envelope": "sqlite3 | kcat, skiff's, envelope",
         "skiff-false": "skiff schemas.enable=false", "skiff-true": "skiff schemas.enable=true",
         "base-false": "skiff schemas=false, --skiff-base",
         "base-true": "skiff schemas=true, --skiff-base"}
PAYLOAD = "json_object('id',id,'ts',ts,'sensor',sensor,'value',value,'status',status)"
# The schema JsonConverter writes for readings (make_table), as skiff renders it.
SCHEMA = ('{"type":"struct","fields":['
          '{"type":"int64","optional":false,"field":"id"},'
          '{"type":"string","optional":false,"field":"ts"},'
          '{"type":"string","optional":true,"field":"sensor"},'
          '{"type":"double","optional":true,"field":"value"},'
          '{"type":"string","optional":true,"field":"status"}],'
          '"optional":false,"name":"readings"}')
REF_SQL = {"ref": f"SELECT {PAYLOAD} FROM readings",
           "ref-envelope": f"SELECT json_object('schema',json('{SCHEMA}'),'payload',{PAYLOAD}) "
                           "FROM readings"}


def make_table(db, rows):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE readings(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, sensor TEXT, "
              "value REAL, status TEXT)")
    c.execute("BEGIN")
    c.executemany("INSERT INTO readings VALUES (?, ?, ?, ?, ?)",
                  ((i, f"2026-11-30T02:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
                    f"gateway-7/sensor-{i % 16}", (i % 997) + 0.5, "ok")
                   for i in range(1, rows + 1)))
    c.execute("COMMIT")
    c.close()


def first_record(bootstrap, topic):
    return subprocess.run(["kcat", "-C", "-q", "-e", "-c", "1", "-b", bootstrap, "-t", topic],
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE).stdout


def same_first(bootstrap, topic, firsts):
    """"" when topic's first record is byte for byte the first of the other
    envelope runs (the reference must write what skiff writes), else why."""
    got = first_record(bootstrap, topic)
    firsts.setdefault("envelope", got)
    return "" if got == firsts["envelope"] else \
        f"first record differs from another run's: {got[:300]!r} vs {firsts['envelope'][:300]!r}"


firsts = {}


def one_run(tool, work, run_id, db, n, bootstrap, args):
    d = work / f"{tool}-{run_id}"
    d.mkdir()
    if tool.startswith("ref"):
        topic = f"bench-{tool}-{run_id}"
        xs = " ".join(f"-X {s}" for s in (SAME + args.set if tool != "ref" else []))
        (d / "q.sql").write_text(REF_SQL.get(tool, REF_SQL["ref"]))
        r = run_tool(f"sqlite3 -readonly {db} < {d}/q.sql | kcat -P -b {bootstrap} "
                     f"-t {topic} {xs}", str(d), shell=True)
    else:
        schemas = tool.split("-")[1]
        binary = args.skiff_base if tool.startswith("base") else args.skiff
        prefix = f"bench-{tool}-{run_id}-"
        topic = prefix + "readings"
        (d / "w.properties").write_text(
            f"bootstrap.servers={bootstrap}\noffset.storage.file.filename={d}/offsets\n"
            "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
            f"value.converter.schemas.enable={schemas}\n"
            "connectors.bench.connector.class=JdbcSourceConnector\n"
            f"connectors.bench.connection.url=jdbc:sqlite:{db}\n"
            "connectors.bench.mode=incrementing\n"
            "connectors.bench.table.whitelist=readings\n"
            f"connectors.bench.topic.prefix={prefix}\n"
            + "".join(f"producer.{s}\n" for s in args.set))
        r = run_tool([binary, str(d / "w.properties")], str(d),
                     until=until_watermark(bootstrap, topic, n))
    r["bad"] = check_delivered(bootstrap, topic, n, rb'"id":(\d+)', base=1)
    if not r["bad"] and tool in ("ref-envelope", "skiff-true", "base-true"):
        r["bad"] = same_first(bootstrap, topic, firsts)
    if r["bad"] or (tool.startswith("ref") and r["rc"] != 0):
        sys.exit(f"bench: {NAMES[tool]} run {run_id}: exit {r['rc']}; {r['bad']} "
                 f"(see {d}/bench.stderr)")
    shutil.rmtree(d, ignore_errors=True)
    return r


def extra(n):
    def column(name, runs):
        rate = n / statistics.median(r["wall"] for r in runs)
        shares = sorted(r["own"] for r in runs if r.get("own") is not None)
        own = f", own thread {100 * shares[len(shares) // 2]:.0f}% of CPU" if shares else ""
        return f"{rate / 1000:.0f}k rows/s{own}"
    return column


def ratio(runs, ref_runs, m):
    return statistics.median(r[m] for r in runs) / statistics.median(r[m] for r in ref_runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--tools", default=",".join(TOOLS))
    ap.add_argument("--skiff-base", default=None)
    ap.add_argument("--set", action="append", default=[], metavar="K=V",
                    help="a librdkafka property for skiff (producer.K) and for the "
                         "references with skiff's settings alike")
    args = ap.parse_args()
    if args.skiff_base:
        args.skiff_base = os.path.abspath(args.skiff_base)
        args.tools += ",base-false,base-true"
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built (cmake -S . -B build && cmake --build build)")
    args.skiff = os.path.abspath(args.skiff)
    tools = [t for t in args.tools.split(",") if t]
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-sqlite-"))
    with local_broker(work / "kafka") as bootstrap:
        db = work / "app.db"
        make_table(db, args.rows)
        print(f"input: {args.rows} rows, {db.stat().st_size / 1e6:.1f} MB of SQLite; "
              f"{args.reps} repetitions; {os.cpu_count()} CPUs; load average "
              f"{os.getloadavg()[0]:.2f} at start")
        for t in ("ref", "ref-same"):
            one_run(t, work, "warmup", db, args.rows, bootstrap, args)
        results = {NAMES[t]: [] for t in tools}
        for rep in range(args.reps):
            k = rep % len(tools)
            for t in tools[k:] + tools[:k]:
                results[NAMES[t]].append(one_run(t, work, rep, db, args.rows, bootstrap, args))
        print(f"load average {os.getloadavg()[0]:.2f} at the end; every run delivered "
              f"each of the {args.rows} rows exactly once")
        # Each schemas setting against the reference writing the same bytes.
        for group, ref in ((("ref", "ref-same", "skiff-false", "base-false"), "ref-same"),
                           (("ref-envelope", "skiff-true", "base-true"), "ref-envelope")):
            print()
            summarize({NAMES[t]: results[NAMES[t]] for t in group if NAMES[t] in results},
                      NAMES[ref], extra(args.rows))
        print()
        for pre in ("skiff", "base"):
            t, f = results.get(NAMES[f"{pre}-true"]), results.get(NAMES[f"{pre}-false"])
            if t and f:
                print(f"{NAMES[pre + '-true']} / schemas.enable=false: "
                      + ", ".join(f"{m} {ratio(t, f, m):.2f}x" for m in ("cpu", "wall")))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
