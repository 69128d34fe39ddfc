#!/usr/bin/env python3
"""Benchmark (not a test): ships a 1,000,000-row SQLite table to a local Kafka
broker with skiff's SQLite source, and the same rows with
`sqlite3 DB "SELECT json_object(...)" | kcat -P` as the reference, in the same
run and against the same broker, and prints rows/s, CPU seconds and peak RSS
of both and their ratios.

  python3 tests/bench/bench_sqlite.py [--rows N] [--skiff build/skiff]

skiff runs mode=incrementing with JsonConverter, schemas.enable=false (the
reference sends the same JSON objects) and then with schemas.enable=true
(Connect's envelope: every record carries its schema). Both producers use the
same delivery settings (idempotence, acks=all, linger.ms=5). Target (issue 4):
>= 200,000 rows/s.
"""

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import REPO, run_measured, local_broker  # noqa: E402
import offsetfile  # noqa: E402


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    args = ap.parse_args()
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built (cmake -S . -B build && cmake --build build)")
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-sqlite-"))
    with local_broker(work / "kafka") as bootstrap:
        db = work / "app.db"
        make_table(db, args.rows)
        print(f"input: {args.rows} rows, {db.stat().st_size / 1e6:.1f} MB of SQLite")
        common = "-X enable.idempotence=true -X acks=all -X linger.ms=5"
        ref_sql = ("SELECT json_object('id',id,'ts',ts,'sensor',sensor,'value',value,"
                   "'status',status) FROM readings")
        ref = run_measured(f"sqlite3 -readonly {db} \"{ref_sql}\" | "
                           f"kcat -P -b {bootstrap} -t bench-sqlite-ref {common}",
                           None, cwd=str(work), shell=True)
        results = {"sqlite3 | kcat -P": ref}
        for schemas in ("false", "true"):
            d = work / f"schemas-{schemas}"
            d.mkdir()
            (d / "w.properties").write_text(
                f"bootstrap.servers={bootstrap}\n"
                f"offset.storage.file.filename={d}/offsets\n"
                f"offset.flush.interval.ms=100\n"
                f"producer.linger.ms=5\n"
                f"value.converter=org.apache.kafka.connect.json.JsonConverter\n"
                f"value.converter.schemas.enable={schemas}\n"
                f"connectors.bench.connector.class=JdbcSourceConnector\n"
                f"connectors.bench.connection.url=jdbc:sqlite:{db}\n"
                f"connectors.bench.mode=incrementing\n"
                f"connectors.bench.table.whitelist=readings\n"
                f"connectors.bench.topic.prefix=bench-sqlite-{schemas}-\n")

            def done(d=d):
                try:
                    offs = offsetfile.load(d / "offsets")
                except (FileNotFoundError, ValueError):
                    return False
                return any(v.get("incrementing") == args.rows for v in offs.values())
            results[f"skiff schemas={schemas}"] = run_measured(
                [args.skiff, str(d / "w.properties")], done, cwd=str(d),
                stop_signal=signal.SIGTERM)
        r = results["sqlite3 | kcat -P"]
        print(f"{'':22} {'wall s':>7} {'rows/s':>9} {'cpu s':>7} {'peak RSS MB':>12} "
              f"{'rows/s ratio':>13} {'cpu ratio':>10} {'rss ratio':>10}")
        for name, (wall, cpu, rss, rc) in results.items():
            print(f"{name:22} {wall:7.2f} {args.rows / wall:9.0f} {cpu:7.2f} {rss:12.1f} "
                  f"{r[0] / wall:13.2f} {cpu / r[1]:10.2f} {rss / r[2]:10.2f}"
                  + ("" if rc == 0 else f"  (exit {rc})"))
        print("skiff's wall time counts until its offset file says the last row was "
              "acknowledged (flush interval 100 ms); the reference's until kcat exits "
              "(all delivered). The reference's CPU and RSS are sqlite3's and kcat's "
              "together (RSS: the larger).")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
