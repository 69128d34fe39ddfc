"""The SQLite source end to end, against a real broker, with a separate writer
process inserting while skiff polls: all four modes for a table and for a
query, restarts without duplicates, kill -9 without losses, equal timestamps
across batch boundaries, late rows inside the delay interval, a writer holding
an exclusive lock, a bounded WAL, exact big integers, BLOBs, and the
schemas.enable shape.

Run as a script, this file is the writer:
  python3 test_sqlite.py writer DB --rows N [--batch B] [--pause S] [--ts now|seq|none]
      [--journal wal|delete] [--payload BYTES] [--hold-exclusive S] [--wal-report FILE]
"""

import argparse
import base64
import calendar
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
from harness import Skiff, consume
import offsetfile

HERE = Path(__file__).resolve()

SCHEMA = ("CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, "
          "v INTEGER NOT NULL, note TEXT)")
QUERY = "SELECT id, ts, v, note FROM t WHERE v >= 0"


# --- the writer (a process of its own) ---------------------------------------------


def iso_ms(ms):
    t = time.gmtime(ms // 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", t) + ".%03dZ" % (ms % 1000)


def writer_main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("db")
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--batch", type=int, default=50)
    ap.add_argument("--pause", type=float, default=0.01)
    ap.add_argument("--ts", default="now", choices=["now", "seq", "none"])
    ap.add_argument("--journal", default="wal", choices=["wal", "delete"])
    ap.add_argument("--payload", type=int, default=0)
    ap.add_argument("--hold-exclusive", type=float, default=0)
    ap.add_argument("--wal-report", default="")
    ap.add_argument("--commit-report", default="")
    a = ap.parse_args(argv)
    db = sqlite3.connect(a.db, timeout=30, isolation_level=None)
    db.execute(f"PRAGMA journal_mode={a.journal}")
    db.execute(SCHEMA)
    if a.hold_exclusive:
        db.execute("BEGIN EXCLUSIVE")
        db.execute("INSERT INTO t(ts, v, note) VALUES (?, 0, 'during the lock')",
                   (iso_ms(int(time.time() * 1000)),))
        time.sleep(a.hold_exclusive)
        db.execute("COMMIT")
    last = 0
    wal_max = 0
    commit_max = 0.0
    done = 0
    while done < a.rows:
        n = min(a.batch, a.rows - done)
        db.execute("BEGIN IMMEDIATE")
        for _ in range(n):
            now = int(time.time() * 1000)
            ts = max(now, last + 1) if a.ts == "seq" else now
            last = ts
            note = os.urandom(a.payload // 2).hex() if a.payload else None
            db.execute("INSERT INTO t(ts, v, note) VALUES (?, ?, ?)", (iso_ms(ts), done, note))
            done += 1
        t0 = time.monotonic()
        db.execute("COMMIT")
        commit_max = max(commit_max, time.monotonic() - t0)
        try:
            wal_max = max(wal_max, os.path.getsize(a.db + "-wal"))
        except FileNotFoundError:
            pass
        if a.pause:
            time.sleep(a.pause)
    db.close()
    if a.wal_report:
        Path(a.wal_report).write_text(str(wal_max))
    if a.commit_report:
        Path(a.commit_report).write_text(str(commit_max))
    return 0


def start_writer(db, rows, **opts):
    args = [sys.executable, str(HERE), "writer", str(db), "--rows", str(rows)]
    for k, v in opts.items():
        args += ["--" + k.replace("_", "-"), str(v)]
    return subprocess.Popen(args, stdin=subprocess.DEVNULL)


def run_writer(db, rows, timeout=120, **opts):
    p = start_writer(db, rows, **opts)
    assert p.wait(timeout) == 0


# --- helpers -----------------------------------------------------------------------


def worker_props(tmp_path, kafka, schemas=False, **extra):
    p = {"bootstrap.servers": kafka.bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "200",
         "key.converter": "org.apache.kafka.connect.json.JsonConverter",
         "value.converter": "org.apache.kafka.connect.json.JsonConverter",
         "key.converter.schemas.enable": str(schemas).lower(),
         "value.converter.schemas.enable": str(schemas).lower()}
    p.update(extra)
    return p


def connector(db, mode, topic, query=False, **extra):
    """Table t (topic: topic + "t") or the query (topic: topic itself)."""
    c = {"name": "sq", "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
         "tasks.max": "1", "connection.url": f"jdbc:sqlite:{db}", "mode": mode,
         "poll.interval.ms": "200", "batch.max.rows": "500", "topic.prefix": topic}
    if query:
        c["query"] = QUERY
    else:
        c["table.whitelist"] = "t"
    if mode in ("incrementing", "timestamp+incrementing"):
        c["incrementing.column.name"] = "id"
    if mode in ("timestamp", "timestamp+incrementing"):
        c["timestamp.column.name"] = "ts"
    c.update(extra)
    return c


def ms_of(iso):
    """Epoch ms of the writer's "YYYY-MM-DDTHH:MM:SS.mmmZ"."""
    return calendar.timegm(time.strptime(iso[:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + int(iso[20:23])


def payloads(records):
    return [json.loads(r["value"]) for r in records]


def ids(records):
    return [p["id"] for p in payloads(records)]


def wait_ids(kafka, topic, want, timeout=90):
    """Waits until every id of want was consumed; returns all records."""
    deadline = time.monotonic() + timeout
    while True:
        recs = consume(kafka.bootstrap, topic)
        if set(want) <= set(ids(recs)):
            return recs
        if time.monotonic() > deadline:
            missing = sorted(set(want) - set(ids(recs)))
            raise AssertionError(f"{len(missing)} ids never arrived, e.g. {missing[:10]}")
        time.sleep(0.3)


def make_db(db, journal="wal"):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute(f"PRAGMA journal_mode={journal}")
    c.execute(SCHEMA)
    c.close()


def row_count(db):
    c = sqlite3.connect(db)
    n = c.execute("SELECT count(*) FROM t").fetchone()[0]
    c.close()
    return n


# --- all four modes, table and query --------------------------------------------------


MODES = ["bulk", "incrementing", "timestamp", "timestamp+incrementing"]


@pytest.mark.parametrize("query", [False, True], ids=["table", "query"])
@pytest.mark.parametrize("mode", MODES)
def test_mode_restart_and_kill9(tmp_path, kafka, topic, mode, query):
    """A writer inserts while skiff polls; a clean restart adds no duplicate;
    kill -9 loses nothing. Bulk: every pass is complete."""
    db = tmp_path / "app.db"
    make_db(db)
    out = topic if query else topic + "t"
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [connector(db, mode, topic, query)])
    sk.start()
    run_writer(db, 1000, batch=50, pause=0.02, ts="seq")
    if mode == "bulk":
        recs = wait_ids(kafka, out, range(1, 1001))
        assert sk.stop() == 0
        got = ids(recs)
        # A pass is the table in rowid order; a pass after the writer finished
        # has every row.
        passes = [got[i:i + 1000] for i, x in enumerate(got) if x == 1]
        assert any(p == list(range(1, 1001)) for p in passes), got[-20:]
        offs = offsetfile.load(tmp_path / "offsets")
        key = offsetfile.key("sq", {"query": "query"} if query else {"table": "t"})
        assert list(offs[key]) == ["polling.timestamp"]
        return
    recs = wait_ids(kafka, out, range(1, 1001))
    assert sk.stop() == 0
    assert sorted(ids(recs)) == list(range(1, 1001))
    # Clean restart while the writer goes on: no duplicates.
    w = start_writer(db, 1000, batch=50, pause=0.02, ts="seq")
    sk.start()
    assert w.wait(120) == 0
    recs = wait_ids(kafka, out, range(1, 2001))
    assert sorted(ids(recs)) == list(range(1, 2001)), "a clean restart duplicated rows"
    # kill -9 in the middle of a stream: nothing lost.
    w = start_writer(db, 3000, batch=20, pause=0.005, ts="seq")
    time.sleep(1.0)
    assert sk.kill9() == -9
    sk.start()
    assert w.wait(120) == 0
    recs = wait_ids(kafka, out, range(1, 5001))
    assert sk.stop() == 0
    assert set(ids(recs)) == set(range(1, 5001))
    offs = offsetfile.load(tmp_path / "offsets")
    part = {"query": "query"} if query else {"protocol": "1", "table": "t"}
    value = offs[offsetfile.key("sq", part)]
    if mode == "incrementing":
        assert value == {"incrementing": 5000}
    else:
        last = sqlite3.connect(db).execute("SELECT ts FROM t WHERE id = 5000").fetchone()[0]
        ms = ms_of(last)
        assert value["timestamp"] == ms and value["timestamp_nanos"] == (ms % 1000) * 1000000
        if mode == "timestamp+incrementing":
            assert list(value) == ["timestamp_nanos", "incrementing", "timestamp"]
            assert value["incrementing"] == 5000
        elif query:
            assert list(value) == ["timestamp_nanos", "timestamp"]
        else:  # and skiff's member: the largest rowid looked at
            assert list(value) == ["timestamp_nanos", "timestamp", "rowid_seen"]
            assert value["rowid_seen"] == 5000


# --- timestamps ---------------------------------------------------------------------


def test_equal_timestamps_across_batches_and_kill9(tmp_path, kafka, topic):
    """1000 rows share 10 timestamps; batches of 64 split every group. One run
    delivers each row once; after kill -9 at any point nothing is missing."""
    db = tmp_path / "eq.db"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v INTEGER)")
    c.execute("BEGIN")
    for i in range(1, 1001):
        c.execute("INSERT INTO t VALUES (?, ?, ?)", (i, f"2024-05-01 12:00:0{(i - 1) // 100}", i))
    c.execute("COMMIT")
    c.close()
    conn = {"name": "eq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp",
            "timestamp.column.name": "ts", "table.whitelist": "t", "topic.prefix": topic,
            "batch.max.rows": "64", "poll.interval.ms": "200"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    recs = wait_ids(kafka, topic + "t", range(1, 1001))
    assert sk.stop() == 0
    assert sorted(ids(recs)) == list(range(1, 1001))
    offs = offsetfile.load(tmp_path / "offsets")
    assert offs[offsetfile.key("eq", {"protocol": "1", "table": "t"})] == \
        {"timestamp_nanos": 0, "timestamp": 1714564809000, "rowid_seen": 1000}
    # Again from scratch, killed after a partial delivery, then restarted.
    topic2 = topic + "-again"
    conn.update({"topic.prefix": topic2, "batch.max.rows": "7"})
    sk2 = Skiff(tmp_path, worker_props(tmp_path, kafka, **{
        "offset.flush.interval.ms": "50",
        "offset.storage.file.filename": str(tmp_path / "offsets-again")}), [conn], name="again")
    sk2.start()
    consume(kafka.bootstrap, topic2 + "t", n=300, timeout=60)
    sk2.kill9()
    sk2.start()
    recs = wait_ids(kafka, topic2 + "t", range(1, 1001))
    assert sk2.stop() == 0
    assert set(ids(recs)) == set(range(1, 1001))


def test_late_rows_within_the_delay_interval(tmp_path, kafka, topic):
    """A row committed after a newer one, with an older timestamp, is read when
    it is within timestamp.delay.interval.ms; the newer one waits for it."""
    db = tmp_path / "late.db"
    make_db(db)
    conn = connector(db, "timestamp", topic, **{"timestamp.delay.interval.ms": "3000",
                                                "poll.interval.ms": "100"})
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    c = sqlite3.connect(db, isolation_level=None)
    now = int(time.time() * 1000)
    c.execute("INSERT INTO t(id, ts, v) VALUES (1, ?, 1)", (iso_ms(now),))
    time.sleep(1.0)
    # Not read yet: its timestamp is within the delay.
    assert consume(kafka.bootstrap, topic + "t") == []
    c.execute("INSERT INTO t(id, ts, v) VALUES (2, ?, 2)", (iso_ms(now - 1500),))
    c.close()
    recs = wait_ids(kafka, topic + "t", [1, 2], timeout=30)
    assert ids(recs) == [2, 1]
    assert sk.stop() == 0


def test_timestamp_forms_and_bad_timestamp(tmp_path, kafka, topic):
    """ISO-8601 text with and without fraction or zone and epoch numbers are
    ordered by instant; text skiff does not understand stops the connector
    with a message that says what it reads."""
    db = tmp_path / "forms.db"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, ts NOT NULL)")
    rows = [(1, "2024-01-01 10:00:05"), (2, "2024-01-01T09:00:00.5-01:00"),
            (3, 1704103203), (4, 1704103202000), (5, "2024-01-01T10:00:01.25Z"),
            (6, "2024-01-01 12:00:00+02:00"), (7, "2024-01-01"), (8, "1704103201")]
    c.executemany("INSERT INTO t VALUES (?, ?)", rows)
    c.close()
    conn = connector(db, "timestamp", topic)
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    recs = wait_ids(kafka, topic + "t", range(1, 9))
    # 7: midnight; 6: 10:00:00; 2: 10:00:00.5; 8: 10:00:01 (epoch seconds as
    # text); 5: 10:00:01.25; 4: 10:00:02 (epoch ms); 3: 10:00:03; 1: 10:00:05
    assert ids(recs) == [7, 6, 2, 8, 5, 4, 3, 1]
    sqlite3.connect(db, isolation_level=None).execute(
        "INSERT INTO t VALUES (9, '03/01/2024 10:00')")
    m = sk.wait_log(r"not a timestamp skiff understands", timeout=30)
    assert "ISO-8601" in m.string
    sk.stop()


# --- never in the writers' way ----------------------------------------------------------


@pytest.mark.skiff_timeout(120)
def test_writer_holding_an_exclusive_lock(tmp_path, kafka, topic):
    """Rollback journal: a writer holds BEGIN EXCLUSIVE for 10 s. skiff keeps
    running, says so, and delivers the rows once the lock is gone; its own reads
    never make the writer wait long."""
    db = tmp_path / "lock.db"
    make_db(db, journal="delete")
    conn = connector(db, "incrementing", topic, **{"poll.interval.ms": "100"})
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    run_writer(db, 100, journal="delete", ts="now")
    wait_ids(kafka, topic + "t", range(1, 101))
    t0 = time.monotonic()
    report = tmp_path / "commit-max"
    w = start_writer(db, 2000, journal="delete", hold_exclusive=10, batch=20, pause=0.002,
                     commit_report=report)
    sk.wait_log(r"locked by a writer", timeout=30)
    assert w.wait(120) == 0
    assert time.monotonic() - t0 >= 10
    recs = wait_ids(kafka, topic + "t", range(1, 2102))
    assert sorted(ids(recs)) == list(range(1, 2102))
    assert sk.running()
    # skiff's reads are short: a commit never waited anywhere near the 30 s
    # busy timeout the writer allows (typically a few ms).
    assert float(report.read_text()) < 1.0
    assert sk.stop() == 0
    assert "readable again" in sk.log_text()


@pytest.mark.skiff_timeout(240)
def test_wal_stays_bounded(tmp_path, kafka, topic):
    """WAL mode: 40 MB of inserts while skiff reads them as they come. No read
    transaction outlives a poll, so checkpoints keep resetting the WAL."""
    db = tmp_path / "wal.db"
    make_db(db)
    conn = connector(db, "incrementing", topic, **{"poll.interval.ms": "50",
                                                   "batch.max.rows": "1000"})
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    report = tmp_path / "wal-max"
    run_writer(db, 40000, batch=100, pause=0.001, payload=1000, wal_report=report, timeout=200)
    wait_ids(kafka, topic + "t", [40000], timeout=120)
    assert sk.stop() == 0
    wal_max = int(report.read_text())
    # wal_autocheckpoint is 1000 pages (4 MB); without resets it would pass 40 MB.
    assert wal_max < 12 * 1024 * 1024, f"WAL grew to {wal_max} bytes"


# --- values -------------------------------------------------------------------------------


def test_values_big_ints_blobs_and_schema(tmp_path, kafka, topic):
    db = tmp_path / "vals.db"
    blob = bytes(range(256)) + b"\x00\xff"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("CREATE TABLE vals(id INTEGER PRIMARY KEY, big INTEGER, r REAL, s TEXT NOT NULL, "
              "b BLOB, at DATETIME)")
    c.execute("INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?)",
              (1, 2 ** 53 + 1, 0.1, "ünï \"q\"", blob, "2024-03-01T12:34:56.789Z"))
    c.execute("INSERT INTO vals VALUES (2, -9223372036854775808, NULL, 'x', NULL, NULL)")
    c.close()
    conn = {"name": "vals", "connector.class": "JdbcSourceConnector",
            "connection.url": str(db), "mode": "incrementing", "table.whitelist": "vals",
            "topic.prefix": topic + ".", "key.column.name": "id"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka, schemas=True), [conn]).start()
    recs = consume(kafka.bootstrap, topic + ".vals", n=2, timeout=60)
    assert sk.stop() == 0
    v = recs[0]["value"]
    assert b'"big":9007199254740993' in v  # exact, not 9007199254740992
    doc = json.loads(v)
    assert doc["payload"]["big"] == 2 ** 53 + 1
    assert base64.b64decode(doc["payload"]["b"]) == blob
    assert doc["payload"]["s"] == "ünï \"q\""
    assert doc["payload"]["at"] == 1709296496789
    # Connect's JsonConverter shape, field for field, key order included.
    assert v.startswith(
        b'{"schema":{"type":"struct","fields":['
        b'{"type":"int64","optional":false,"field":"id"},'
        b'{"type":"int64","optional":true,"field":"big"},'
        b'{"type":"double","optional":true,"field":"r"},'
        b'{"type":"string","optional":false,"field":"s"},'
        b'{"type":"bytes","optional":true,"field":"b"},'
        b'{"type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp",'
        b'"version":1,"field":"at"}],"optional":false,"name":"vals"},'
        b'"payload":{"id":1,"big":9007199254740993,"r":0.1,')
    assert recs[0]["key"] == (b'{"schema":{"type":"struct","fields":[{"type":"int64",'
                              b'"optional":false,"field":"id"}],"optional":false},'
                              b'"payload":{"id":1}}')
    assert json.loads(recs[1]["value"])["payload"]["big"] == -9223372036854775808
    # schemas.enable=false: the payload alone.
    sk2 = Skiff(tmp_path, worker_props(tmp_path, kafka, schemas=False,
                                       **{"offset.storage.file.filename":
                                          str(tmp_path / "offsets2")}),
                [dict(conn, **{"topic.prefix": topic + "-plain."})], name="plain").start()
    recs = consume(kafka.bootstrap, topic + "-plain.vals", n=2, timeout=60)
    assert sk2.stop() == 0
    assert recs[1]["value"] == (b'{"id":2,"big":-9223372036854775808,"r":null,"s":"x",'
                                b'"b":null,"at":null}')
    assert recs[1]["key"] == b'{"id":2}'


@pytest.mark.skiff_timeout(180)
def test_more_than_256_topics(tmp_path, kafka, topic):
    """A table per topic, 300 tables: each row arrives and the connector keeps
    running. (Hostile finding: the producer kept at most 256 topic handles and
    stopped the connector at the 257th topic, exit 78 once none ran: a
    TimestampRouter writing a topic a day stopped a device after 256 days.)"""
    db = tmp_path / "many.db"
    c = sqlite3.connect(db, isolation_level=None)
    for i in range(300):
        c.execute(f"CREATE TABLE t{i:03d}(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)")
        c.execute(f"INSERT INTO t{i:03d}(v) VALUES ('row of t{i:03d}')")
    conn = connector(db, "incrementing", topic + "-",
                     **{"table.whitelist": ",".join(f"t{i:03d}" for i in range(300))})
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    for i in (0, 255, 256, 299):
        recs = consume(kafka.bootstrap, f"{topic}-t{i:03d}", n=1, timeout=60)
        assert payloads(recs) == [{"id": 1, "v": f"row of t{i:03d}"}]
    for i in (0, 299):  # an evicted handle and a kept one serve a second row
        c.execute(f"INSERT INTO t{i:03d}(v) VALUES ('again')")
    for i in (0, 299):
        recs = consume(kafka.bootstrap, f"{topic}-t{i:03d}", n=2, timeout=60)
        assert [p["v"] for p in payloads(recs)] == [f"row of t{i:03d}", "again"]
    assert sk.running(), sk.log_text()[-2000:]
    assert sk.stop() == 0
    assert "cannot be used" not in sk.log_text()


def test_config_errors_exit_78(tmp_path, kafka):
    db = tmp_path / "c.db"
    make_db(db)
    bad = {"name": "x", "connector.class": "JdbcSourceConnector",
           "connection.url": f"jdbc:sqlite:{db}", "table.whitelist": "t", "topic.prefix": "p"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [bad]).start()
    assert sk.wait(30) == 78
    assert "mode" in sk.log_text()


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "writer":
        sys.exit(writer_main(sys.argv[2:]))
    print(__doc__)
