"""The backlog in /metrics and `skiff status` (issue 11): what each source
knows is still unread, past its read position. The broker is down, so skiff
reads until the producer's queue (1,000 records) is full and then stops
reading: the backlog is what is left of a 10,000-line file (bytes) and a
10,000-row table in incrementing mode (rows). Lines and rows added meanwhile
add exactly their bytes and rows; once the broker is up everything ships and
the backlog falls to 0. Parsed with prometheus_client's parser."""

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import harness
from harness import Skiff, consume
from test_rest import free_port, metric_values, wait_for, wait_http

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402

BATCH = 100
QUEUE = 1000


def status(sk):
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=30)
    return r.returncode, r.stdout + r.stderr


def one(port, name, connector):
    vals = [v for labels, v in metric_values(port, name) if labels["connector"] == connector]
    assert len(vals) <= 1, vals
    return vals[0] if vals else None


def test_backlog_bytes_and_rows_while_the_broker_is_down(tmp_path, kafka_late, topic):
    harness.require_module("prometheus_client", "python3-prometheus-client")
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10000)
    db = tmp_path / "t.db"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT NOT NULL)")
    c.executemany("INSERT INTO t (v) VALUES (?)", ((f"row {i}",) for i in range(1, 10001)))
    port = free_port()
    worker = fl.worker_props(kafka_late.bootstrap, tmp_path,
                             listeners=f"http://127.0.0.1:{port}",
                             producer__queue__buffering__max__messages=QUEUE)
    sk = Skiff(tmp_path, worker, [
        fl.file_connector("f", src.path, topic + "-f", batch__size=BATCH),
        {"name": "q", "connector.class": "JdbcSourceConnector",
         "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
         "table.whitelist": "t", "topic.prefix": topic + "-", "batch.max.rows": BATCH,
         "poll.interval.ms": 200}]).start()
    wait_http(port)

    # Reading stops once the producer's queue is full: both produced
    # counters settle, with records of both in the queue.
    def settled():
        a = [one(port, "skiff_records_produced_total", n) for n in ("f", "q")]
        if None in a or sum(a) < QUEUE:
            return None
        b = [one(port, "skiff_records_produced_total", n) for n in ("f", "q")]
        return a if a == b else None
    wait_for(settled, 60, 0.5, "the producer's queue to fill")
    produced = {n: one(port, "skiff_partition_records_produced_total", n) for n in ("f", "q")}

    size = src.path.stat().st_size
    left = one(port, "skiff_partition_backlog_bytes", "f")
    # What skiff has not read: whole lines after the last line it read,
    # which is a line of the last batch (polled, maybe not all queued).
    read = size - left
    assert read % fl.WIDTH == 0, (size, left)
    assert produced["f"] <= read // fl.WIDTH <= produced["f"] + BATCH, (produced, read)
    assert left > 0
    rows = one(port, "skiff_partition_backlog_rows", "q")
    # Rows after the last id read: those of the last poll not yet queued
    # and those the query buffered (at most batch.max.rows each) are read.
    assert produced["q"] <= 10000 - rows <= produced["q"] + 2 * BATCH, (rows, produced)
    assert rows > 0
    part = [labels for labels, _ in metric_values(port, "skiff_partition_backlog_bytes")]
    assert part == [{"connector": "f",
                     "partition": json.dumps({"filename": str(src.path)},
                                             separators=(",", ":"))}]
    print(f"FIGURE backlog.blocked: {left:.0f} bytes, {rows:.0f} rows unread; produced {produced}")

    # Blocked, skiff reads nothing more: what is added is added exactly.
    src.append(50)
    c.executemany("INSERT INTO t (v) VALUES (?)", ((f"late {i}",) for i in range(50)))
    wait_for(lambda: one(port, "skiff_partition_backlog_bytes", "f") == left + 50 * fl.WIDTH,
             10, 0.2, "the appended bytes in the backlog")
    assert one(port, "skiff_partition_backlog_rows", "q") == rows + 50
    rc, out = status(sk)
    assert rc == 0, out
    assert f"backlog {int(left) + 50 * fl.WIDTH} bytes" in out, out
    assert f"backlog {int(rows) + 50} rows" in out, out

    # The broker comes: everything ships and the backlog falls to 0.
    kafka_late.start()
    got = fl.seqs_of(consume(kafka_late.bootstrap, topic + "-f", n=10050, timeout=120))
    assert set(got) == set(range(10050))
    assert len(consume(kafka_late.bootstrap, topic + "-t", n=10050, timeout=120)) >= 10050
    wait_for(lambda: one(port, "skiff_partition_backlog_bytes", "f") == 0, 30, 0.5,
             "no bytes left")
    wait_for(lambda: one(port, "skiff_partition_backlog_rows", "q") == 0, 30, 0.5,
             "no rows left")
    rc, out = status(sk)
    assert "backlog 0 bytes" in out and "backlog 0 rows" in out, out
    assert sk.stop() == 0
