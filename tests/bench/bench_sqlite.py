#!/usr/bin/env python3
"""Benchmark (not a test): a table of N rows in SQLite shipped to one local
Kafka 3.9.1 broker by

  sqlite3 | kcat -P              sqlite3 -readonly DB "SELECT json_object(...)"
                                 piped to kcat with librdkafka's defaults
  sqlite3 | kcat, skiff's settings   the same with skiff's producer defaults
                                 (src/sink_kafka.c: enable.idempotence=true,
                                 acks=all, linger.ms=5, queue.buffering.max.*,
                                 message.timeout.ms=0): the reference
  skiff schemas.enable=false     JdbcSourceConnector mode=incrementing,
                                 JsonConverter: the same JSON objects
  skiff schemas.enable=true      Connect's envelope, a schema in every record

after one throw-away warm-up run of the references, interleaved (the order
rotates each repetition) across --reps repetitions, a fresh topic per run;
each run's topic is read back and must hold each id exactly once. Prints the
median and min-max of CPU seconds (the process and its threads; the
reference's is sqlite3's and kcat's together), wall seconds, rows/s and peak
RSS, the ratios against the reference with skiff's settings, and skiff's
share of its CPU outside librdkafka's rdk:* threads.

  python3 tests/bench/bench_sqlite.py [--rows N] [--reps 5] [--skiff PATH]

Use a release build. Wall: to exit for the references; for skiff, until the
topic's high watermark reaches N (kcat -Q every 0.2 s), then SIGTERM.
"""

import argparse
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

from benchlib import (REPO, check_delivered, local_broker, run_tool,  # noqa: E402
                      summarize, until_watermark)

SAME = ["enable.idempotence=true", "acks=all", "linger.ms=5",
        "queue.buffering.max.messages=5000", "queue.buffering.max.kbytes=2048",
        "message.timeout.ms=0"]
TOOLS = ["ref", "ref-same", "skiff-false", "skiff-true"]
NAMES = {"ref": "sqlite3 | kcat -P", "ref-same": "sqlite3 | kcat -P, skiff's settings",
         "skiff-false": "skiff schemas.enable=false", "skiff-true": "skiff schemas.enable=true"}
REF_SQL = ("SELECT json_object('id',id,'ts',ts,'sensor',sensor,'value',value,'status',status) "
           "FROM readings")


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


def one_run(tool, work, run_id, db, n, bootstrap, args):
    d = work / f"{tool}-{run_id}"
    d.mkdir()
    if tool.startswith("ref"):
        topic = f"bench-{tool}-{run_id}"
        xs = " ".join(f"-X {s}" for s in (SAME if tool == "ref-same" else []))
        r = run_tool(f"sqlite3 -readonly {db} \"{REF_SQL}\" | kcat -P -b {bootstrap} "
                     f"-t {topic} {xs}", str(d), shell=True)
    else:
        schemas = tool.split("-")[1]
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
            f"connectors.bench.topic.prefix={prefix}\n")
        r = run_tool([args.skiff, str(d / "w.properties")], str(d),
                     until=until_watermark(bootstrap, topic, n))
    r["bad"] = check_delivered(bootstrap, topic, n, rb'"id":(\d+)', base=1)
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--tools", default=",".join(TOOLS))
    args = ap.parse_args()
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
        summarize(results, NAMES["ref-same"], extra(args.rows))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
