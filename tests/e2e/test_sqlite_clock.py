"""The rows a wrong clock hides from the SQLite source's timestamp modes
(issue 23): rows inserted in order, 100 at the real time, 10 stamped in 2099,
100 real, 10 stamped in 1970 (a board without an RTC before NTP), 100 real.

A row stamped in the future waits for its time: counted per table (the gauge
rows_in_future in /metrics and `skiff status`) and named in a warning (table,
id, timestamp; at most once a minute). A new row stamped behind the offset is
delivered at once, out of timestamp order (the JDBC connector skips it):
counted (rows_behind_offset) and named. In timestamp mode the rowid tells a new
row; timestamp+incrementing uses its id, also across a restart."""

import json
import re
import sqlite3
import subprocess
import time

import pytest

import harness
from harness import Skiff, consume
from test_rest import free_port, metric_values, wait_http
from test_sqlite import worker_props
from test_sqlite_offsets import offsets_cmd

FUTURE = "2099-01-01T00:00:00.000Z"
PAST = "1970-01-02T00:00:00.000Z"


def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)


def add(c, n, stamp=None):
    """n rows, one transaction each, stamped now or with stamp; their ids."""
    out = []
    for _ in range(n):
        ts = stamp or iso(int(time.time() * 1000))
        out.append(c.execute("INSERT INTO t(ts, note) VALUES (?, 'x')", (ts,)).lastrowid)
        time.sleep(0.002)
    return out


def status(sk):
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=30)
    return r.stdout + r.stderr


def one(port, name):
    vals = [v for labels, v in metric_values(port, name)
            if json.loads(labels.get("partition", "{}")).get("table") == "t"]
    assert len(vals) <= 1, vals
    return vals[0] if vals else None


def delivered_ids(kafka, topic):
    return [json.loads(r["value"])["id"] for r in consume(kafka.bootstrap, topic)]


def wait_ids(kafka, topic, want, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        got = delivered_ids(kafka, topic)
        if set(want) <= set(got) or time.monotonic() > deadline:
            return got
        time.sleep(0.3)


@pytest.mark.parametrize("mode", ["timestamp", "timestamp+incrementing"])
def test_rows_the_clock_hides(tmp_path, kafka, topic, mode):
    pytest.importorskip("prometheus_client")
    db = tmp_path / "app.db"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, note TEXT)")
    port = free_port()
    conn = {"name": "sq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": mode, "table.whitelist": "t",
            "timestamp.column.name": "ts", "topic.prefix": topic,
            "poll.interval.ms": "100", "timestamp.delay.interval.ms": "200"}
    if mode != "timestamp":
        conn["incrementing.column.name"] = "id"
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka, listeners=f"http://127.0.0.1:{port}"),
               [conn]).start()
    wait_http(port)
    real = add(c, 100)
    future = add(c, 10, FUTURE)
    real += add(c, 100)
    wait_ids(kafka, topic + "t", real)  # the offset is past the 1970 stamp
    past = add(c, 10, PAST)
    real += add(c, 100)
    got = wait_ids(kafka, topic + "t", real + past)
    time.sleep(1)  # more polls: nothing more comes
    got = delivered_ids(kafka, topic + "t")
    assert sorted(got) == sorted(real + past), "every row once, the future ones not yet"
    assert not set(future) & set(got)
    # Counted per table: the rows waiting in the future, the rows behind.
    assert one(port, "skiff_rows_in_future") == 10
    assert one(port, "skiff_rows_behind_offset_total") == 10
    text = status(sk)
    assert re.search(r'\{"protocol":"1","table":"t"\} rows_in_future=10', text), text
    assert re.search(r'\{"protocol":"1","table":"t"\} rows_behind_offset=10', text), text
    # Named in a warning, once for the ten of each kind.
    log = sk.log_text()
    key = "rowid" if mode == "timestamp" else "id"
    fut = re.findall(r"table t: \d+ rows have a timestamp after now \(e\.g\. the row with "
                     + key + r" (\d+), at 2099-01-01T00:00:00\.000000000Z", log)
    assert len(fut) == 1 and int(fut[0]) in future, log
    beh = re.findall(r"table t: the row with " + key + r" (\d+) has the timestamp "
                     r"1970-01-02T00:00:00\.000000000Z, behind the offset", log)
    assert len(beh) == 1 and int(beh[0]) == past[0], log
    assert sk.stop() == 0
    if mode == "timestamp":
        return
    # timestamp+incrementing after a restart: a row stamped behind the offset
    # while skiff was stopped is found by its id.
    late = add(c, 3, PAST)
    sk.start()
    got = wait_ids(kafka, topic + "t", real + past + late)
    assert sorted(got) == sorted(real + past + late)
    assert sk.stop() == 0


def test_rows_behind_offset_once_across_restart(tmp_path, kafka, topic):
    """timestamp+incrementing: a clock set back (an hour, as NTP steps a board
    that ran fast) stamps every new row behind the offset for that hour; each
    is delivered at once, and a restart meanwhile (a reboot, when clocks jump)
    does not send them again: their offset holds their id (hostile finding:
    before, the offset kept the last in-order row's id, and a restart sent
    every row since the jump a second time, 40 of 40 here). Rows stamped
    after the offset's timestamp are read as usual afterwards."""
    db = tmp_path / "app.db"
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, note TEXT)")
    conn = {"name": "sq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp+incrementing",
            "table.whitelist": "t", "timestamp.column.name": "ts",
            "incrementing.column.name": "id", "topic.prefix": topic,
            "poll.interval.ms": "100", "batch.max.rows": "7"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    ids = add(c, 30)
    wait_ids(kafka, topic + "t", ids)
    back = int(time.time() * 1000) - 3600 * 1000
    for i in range(20):  # one by one, as the clock runs on from an hour back
        ids.append(c.execute("INSERT INTO t(ts, note) VALUES (?, 'x')",
                             (iso(back + i),)).lastrowid)
    c.execute("BEGIN")  # and in one transaction, more than a batch
    ids += [c.execute("INSERT INTO t(ts, note) VALUES (?, 'x')", (iso(back + 100 + i),)).lastrowid
            for i in range(20)]
    c.execute("COMMIT")
    wait_ids(kafka, topic + "t", ids)
    assert sk.stop() == 0
    # The stored offset, listed and set back as a script would, is not
    # refused as past the newest row: its id is a row's behind it.
    listed = offsets_cmd(sk, "list")
    assert listed[0] == 0, listed
    stored = json.loads(listed[1])["offsets"][0]["offset"]
    assert stored["incrementing"] == ids[-1], stored
    put = offsets_cmd(sk, "set", "-", stdin=listed[1])
    assert put[0] == 0, put
    sk.start()
    ids += add(c, 5)
    got = wait_ids(kafka, topic + "t", ids)
    time.sleep(1)  # more polls: nothing more comes
    got = delivered_ids(kafka, topic + "t")
    twice = sorted(i for i in set(got) if got.count(i) > 1)
    assert not twice, f"{len(twice)} rows sent twice: {twice}"
    assert sorted(got) == sorted(ids)
    assert "rows_behind_offset" in sk.log_text()
    assert sk.stop() == 0


def test_no_future_rows_while_waiting_for_a_lock(tmp_path, kafka, topic):
    """A rollback-journal application holding its write lock while it stamps
    and commits rows with the real time: skiff's query waits for the lock, and
    the rows committed meanwhile are not 'after now' (hostile finding: now was
    read before the wait, so every such wait counted rows_in_future and warned
    of a wrong clock that was right)."""
    db = tmp_path / "app.db"
    c = sqlite3.connect(db, isolation_level=None, timeout=10)
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts INTEGER NOT NULL)")
    conn = {"name": "sq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp",
            "table.whitelist": "t", "timestamp.column.name": "ts", "topic.prefix": topic,
            "poll.interval.ms": "50"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    sk.wait_log(r"reading .*app\.db")
    ids = []
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        c.execute("BEGIN EXCLUSIVE")  # readers wait for the whole transaction
        time.sleep(0.08)
        ids.append(c.execute("INSERT INTO t(ts) VALUES (?)",
                             (int(time.time() * 1000),)).lastrowid)
        c.execute("COMMIT")
        time.sleep(0.003)
    got = wait_ids(kafka, topic + "t", ids)
    assert sorted(got) == sorted(ids)
    log = sk.log_text()
    assert "database_busy" in log, "skiff never waited for the lock: the test proves nothing"
    assert "timestamp after now" not in log, log
    assert sk.stop() == 0


def ts_conn(db, topic, **more):
    conn = {"name": "sq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp",
            "table.whitelist": "t", "timestamp.column.name": "ts", "topic.prefix": topic,
            "poll.interval.ms": "100"}
    conn.update(more)
    return conn


def app_table(db):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, note TEXT)")
    return c


def stored_offset(sk):
    listed = offsets_cmd(sk, "list")
    assert listed[0] == 0, listed
    return listed[1], json.loads(listed[1])["offsets"][0]["offset"]


def test_timestamp_rows_behind_offset_written_while_stopped(tmp_path, kafka, topic):
    """timestamp mode (no id column): rows stamped 1970 (a board without an
    RTC before NTP) inserted while skiff is stopped are delivered after the
    restart, each once (hostile finding: the timestamp offset held no id, and
    20 of 20 such rows were lost without a word). The offset keeps the largest
    rowid skiff looked at beside Connect's members; a second restart sends
    none of them again."""
    db = tmp_path / "app.db"
    c = app_table(db)
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka),
               [ts_conn(db, topic, **{"batch.max.rows": "7"})]).start()
    ids = add(c, 30)
    wait_ids(kafka, topic + "t", ids)
    assert sk.stop() == 0
    _, first = stored_offset(sk)
    past = add(c, 20, PAST)  # while skiff is stopped
    real = add(c, 10)
    sk.start()
    got = wait_ids(kafka, topic + "t", ids + past + real)
    time.sleep(1)  # more polls: nothing more comes
    got = delivered_ids(kafka, topic + "t")
    assert sorted(got) == sorted(ids + past + real), \
        f"missing {sorted(set(ids + past + real) - set(got))}"
    assert "rows_behind_offset" in sk.log_text()
    assert sk.stop() == 0
    assert first["rowid_seen"] == ids[-1], first
    _, stored = stored_offset(sk)
    assert stored["rowid_seen"] == real[-1], stored
    # Restarted again: nothing is sent twice, new rows behind still come.
    sk.start()
    more = add(c, 3, PAST) + add(c, 3)
    wait_ids(kafka, topic + "t", ids + past + real + more)
    time.sleep(1)
    got = delivered_ids(kafka, topic + "t")
    assert sorted(got) == sorted(ids + past + real + more)
    assert sk.stop() == 0


def test_timestamp_offset_without_rowid_loads(tmp_path, kafka, topic):
    """An offset as Connect's JDBC connector writes it (no rowid_seen; also one
    an operator sets) is taken: skiff says it looks for new rows behind the
    offset from the table's largest rowid, and goes on from the offset. One
    with rowid_seen is taken by `skiff offsets set` too."""
    db = tmp_path / "app.db"
    c = app_table(db)
    ids = add(c, 20)
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [ts_conn(db, topic)])
    ms = int(c.execute("SELECT strftime('%s', ts) * 1000 + CAST(substr(ts, 21, 3) AS INT) "
                       "FROM t WHERE id = 10").fetchone()[0])
    part = {"protocol": "1", "table": "t"}
    connect = {"timestamp_nanos": (ms % 1000) * 1000000, "timestamp": ms}
    put = offsets_cmd(sk, "set", "-", stdin=json.dumps(
        {"offsets": [{"partition": part, "offset": connect}]}))
    assert put[0] == 0, put
    sk.start()
    late = add(c, 5)
    got = wait_ids(kafka, topic + "t", ids[10:] + late)
    time.sleep(1)
    got = delivered_ids(kafka, topic + "t")
    assert sorted(got) == sorted(ids[10:] + late)
    assert sk.wait_log(r"table t: the stored offset holds no rowid_seen")
    assert sk.stop() == 0
    text, stored = stored_offset(sk)
    assert stored["rowid_seen"] == late[-1], stored
    put = offsets_cmd(sk, "set", "-", stdin=text)
    assert put[0] == 0, put


def test_timestamp_rowid_seen_in_the_offsets_topic(tmp_path, kafka, topic):
    """With offset.storage.topic the record's value stays the JDBC
    connector's {"timestamp_nanos":…,"timestamp":…} and the whole offset, with
    rowid_seen, rides in the header skiff.offset (as the file source's
    identity does): with the offsets file lost and rows stamped 1970 written
    while skiff was stopped, the restart reads the topic and delivers them."""
    db = tmp_path / "app.db"
    c = app_table(db)
    offsets = topic + "-offsets"
    worker = worker_props(tmp_path, kafka, **{"offset.storage.topic": offsets,
                                              "offset.storage.replication.factor": "1"})
    sk = Skiff(tmp_path, worker, [ts_conn(db, topic)]).start()
    ids = add(c, 30)
    wait_ids(kafka, topic + "t", ids)
    key = json.dumps(["sq", {"protocol": "1", "table": "t"}], separators=(",", ":")).encode()
    deadline = time.monotonic() + 60
    while True:  # the last row's offset in the topic
        recs = [r for r in consume(kafka.bootstrap, offsets) if r["key"] == key]
        full = json.loads(dict(recs[-1]["headers"]).get("skiff.offset", "{}")) if recs else {}
        if full.get("rowid_seen") == ids[-1]:
            break
        assert time.monotonic() < deadline, recs[-1:] or "no offset record"
        time.sleep(0.3)
    assert sk.stop() == 0
    value = json.loads(recs[-1]["value"])
    assert list(value) == ["timestamp_nanos", "timestamp"], recs[-1]
    assert value == {k: full[k] for k in value}, (value, full)
    for p in tmp_path.glob("offsets*"):  # the file lost: the topic alone tells
        p.unlink()
    past = add(c, 20, PAST)
    sk.start()
    wait_ids(kafka, topic + "t", ids + past)
    time.sleep(1)
    got = delivered_ids(kafka, topic + "t")
    assert sorted(got) == sorted(ids + past), f"missing {sorted(set(ids + past) - set(got))}"
    assert sk.stop() == 0
