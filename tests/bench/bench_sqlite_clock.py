#!/usr/bin/env python3
"""Benchmark (not a test): what looking for the rows a wrong clock hides
costs the SQLite source (issue 23, src/sources/sqlite/sqclock.c).

A table of --rows rows (id INTEGER PRIMARY KEY, a text timestamp), shipped
first; then an application inserts --rate rows/s for --seconds s while skiff
polls every --poll ms in timestamp+incrementing mode. Measured: skiff's CPU
seconds over that window (the process and its threads, /proc), per binary:
--skiff (with the check) and --before (a build without it), interleaved,
--reps repetitions, a fresh copy of the database and a fresh topic each run;
each run's topic must hold every row exactly once. Prints the median and
min-max of each, and the ratio.

Also prints the plan SQLite makes for the check's statement (with a stand-in
skiff_ts()): a SEARCH on the rowid over the new rows, beside the batch
query's SCAN of the whole table.

  python3 tests/bench/bench_sqlite_clock.py --skiff build/skiff --before OLD/skiff
          [--rows 200000] [--rate 50] [--seconds 20] [--poll 1000] [--reps 5]

Use release builds.
"""

import argparse
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import REPO, check_delivered, local_broker, proc_cpu_s, stop_process, until_watermark

CLOCK_SQL = ('SELECT *, "id", skiff_ts("ts") FROM "t" WHERE "id" > ?1 ORDER BY "id" LIMIT ?2')
BATCH_SQL = ('SELECT * FROM (SELECT *, "id" AS "__skiff_inc", skiff_ts("ts") AS "__skiff_ts" '
             'FROM "t" LIMIT -1) WHERE ("__skiff_ts" < ?3) AND (("__skiff_ts" = ?1 AND '
             '"__skiff_inc" > ?2) OR "__skiff_ts" > ?1) ORDER BY "__skiff_ts", "__skiff_inc" '
             'LIMIT ?4')


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def make_table(db, rows):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v TEXT)")
    start = int(time.time() * 1000) - 3_600_000
    c.execute("BEGIN")
    c.executemany("INSERT INTO t VALUES (?, ?, ?)",
                  ((i, iso(start + i), "reading %d" % i) for i in range(1, rows + 1)))
    c.execute("COMMIT")
    c.close()


def plans(db):
    c = sqlite3.connect(db)
    c.create_function("skiff_ts", 1, lambda x: 0, deterministic=True)
    for name, sql in (("check", CLOCK_SQL), ("batch", BATCH_SQL)):
        rows = c.execute("EXPLAIN QUERY PLAN " + sql, (0, 0, 0, 0)[:sql.count("?")]).fetchall()
        print(f"plan of the {name} query: " + "; ".join(r[-1] for r in rows))
    c.close()


def one_run(binary, work, run_id, base_db, args, bootstrap):
    d = work / f"run-{run_id}"
    d.mkdir()
    db = d / "app.db"
    shutil.copy(base_db, db)
    topic = f"clock-{run_id}-t"
    (d / "w.properties").write_text(
        f"bootstrap.servers={bootstrap}\noffset.storage.file.filename={d}/offsets\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        "value.converter.schemas.enable=false\n"
        "connectors.c.connector.class=JdbcSourceConnector\n"
        f"connectors.c.connection.url=jdbc:sqlite:{db}\n"
        "connectors.c.mode=timestamp+incrementing\n"
        "connectors.c.table.whitelist=t\nconnectors.c.timestamp.column.name=ts\n"
        "connectors.c.incrementing.column.name=id\n"
        f"connectors.c.topic.prefix=clock-{run_id}-\n"
        "connectors.c.timestamp.delay.interval.ms=500\n"
        f"connectors.c.poll.interval.ms={args.poll}\n")
    with open(d / "bench.stderr", "wb") as err:
        p = subprocess.Popen([binary, str(d / "w.properties")], cwd=d, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
    try:
        done = until_watermark(bootstrap, topic, args.rows)
        deadline = time.monotonic() + 600
        while not done():
            if time.monotonic() > deadline or p.poll() is not None:
                sys.exit(f"bench: run {run_id}: the table did not ship (see {d}/bench.stderr)")
            time.sleep(0.2)
        c = sqlite3.connect(db, isolation_level=None)
        cpu0 = proc_cpu_s(p.pid)
        t0 = time.monotonic()
        n = 0
        while time.monotonic() - t0 < args.seconds:
            c.execute("INSERT INTO t(ts, v) VALUES (?, 'new')", (iso(int(time.time() * 1000)),))
            n += 1
            time.sleep(max(0.0, t0 + n / args.rate - time.monotonic()))
        cpu = proc_cpu_s(p.pid) - cpu0
        c.close()
        total = args.rows + n
        done = until_watermark(bootstrap, topic, total)
        while not done():
            time.sleep(0.2)
    finally:
        stop_process(p)
    bad = check_delivered(bootstrap, topic, total, rb'"id":(\d+)', base=1)
    if bad:
        sys.exit(f"bench: run {run_id}: {bad}")
    shutil.rmtree(d, ignore_errors=True)
    return cpu


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--before", required=True)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--rate", type=float, default=50)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--poll", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    bins = {"with the check": os.path.abspath(args.skiff),
            "before": os.path.abspath(args.before)}
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-clock-"))
    with local_broker(work / "kafka") as bootstrap:
        base = work / "base.db"
        make_table(base, args.rows)
        plans(base)
        print(f"{args.rows} rows shipped first, then {args.rate:g} inserts/s for "
              f"{args.seconds:g} s, poll.interval.ms={args.poll}; {args.reps} repetitions; "
              f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} at start")
        cpu = {k: [] for k in bins}
        for rep in range(args.reps):
            order = list(bins) if rep % 2 == 0 else list(bins)[::-1]
            for k in order:
                cpu[k].append(one_run(bins[k], work, f"{rep}-{k[0]}", base, args, bootstrap))
        print(f"load average {os.getloadavg()[0]:.2f} at the end; every run delivered each "
              "row exactly once")
        for k, v in cpu.items():
            print(f"{k:>15}: CPU {statistics.median(v):.2f} s (min {min(v):.2f}, max "
                  f"{max(v):.2f}) over the {args.seconds:g} s window")
        r = statistics.median(cpu["with the check"]) / statistics.median(cpu["before"])
        print(f"ratio with/before: {r:.3f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
