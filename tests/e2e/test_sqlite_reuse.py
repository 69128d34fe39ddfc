"""The SQLite source where users break its assumptions, against a real broker
with a separate writer process (issue 8, items 6-8):

- timestamp mode on a view, a WITHOUT ROWID table and a query, with
  datetime('now') stamps (one per second): rows committed after a poll with an
  already-read timestamp are read once each;
- incrementing ids reused while skiff runs (DELETE FROM t, deleting the newest
  rows, DROP/CREATE, VACUUM renumbering an implicit rowid, the database file
  replaced by mv, also through a jdbc:sqlite:file: URI): nothing new is
  skipped, and skiff says so.

Run as a script, this file is the writer:
  python3 test_sqlite_reuse.py sql DB SCRIPT        (executescript)
  python3 test_sqlite_reuse.py stream DB ROWS RATE  (into t(ts, v, note))
"""

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import Skiff, consume
from test_sqlite import worker_props

HERE = Path(__file__).resolve()


def writer_main(argv):
    db = sqlite3.connect(argv[1], timeout=30, isolation_level=None)
    if argv[0] == "sql":
        db.executescript(argv[2])
        return 0
    rows, rate = int(argv[2]), float(argv[3])
    for v in range(1, rows + 1):
        # A random note sorts the new row anywhere among its equal timestamps.
        db.execute("INSERT INTO t(ts, v, note) VALUES (datetime('now'), ?, ?)",
                   (v, os.urandom(4).hex()))
        time.sleep(1 / rate)
    return 0


def writer(db, *args, wait=True):
    p = subprocess.Popen([sys.executable, str(HERE), *map(str, args[:1]), str(db),
                          *map(str, args[1:])], stdin=subprocess.DEVNULL)
    if wait:
        assert p.wait(60) == 0
    return p


def values(kafka, topic):
    return [json.loads(r["value"])["v"] for r in consume(kafka.bootstrap, topic)]


def wait_values(kafka, topic, want, timeout=60):
    """Waits until every value of want was consumed; returns all values."""
    deadline = time.monotonic() + timeout
    while True:
        got = values(kafka, topic)
        if set(want) <= set(got):
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"never arrived: {sorted(set(want) - set(got))[:20]}; "
                                 f"got {got}")
        time.sleep(0.3)


# --- item 6: equal timestamps without a rowid -------------------------------------------

SOURCES = {
    "view": ("CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v INT, note TEXT);"
             "CREATE VIEW w AS SELECT note, ts, v FROM t;", {"table.whitelist": "w"}),
    "without_rowid": ("CREATE TABLE t(note TEXT PRIMARY KEY, ts TEXT NOT NULL, v INT) "
                      "WITHOUT ROWID;", {"table.whitelist": "t"}),
    "query": ("CREATE TABLE t(id INTEGER PRIMARY KEY, ts TEXT NOT NULL, v INT, note TEXT);",
              {"query": "SELECT note, ts, v FROM t"}),
}


@pytest.mark.parametrize("kind", sorted(SOURCES))
def test_equal_timestamps_without_rowid(tmp_path, kafka, topic, kind):
    """150 rows at 50 rows/s stamped datetime('now'): each second's group is
    read over several polls while it grows. Each row arrives exactly once."""
    db = tmp_path / "eq.db"
    schema, where = SOURCES[kind]
    writer(db, "sql", "PRAGMA journal_mode=wal;" + schema)
    conn = {"name": "eq", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp",
            "timestamp.column.name": "ts", "topic.prefix": topic + ("" if kind == "query" else "."),
            "poll.interval.ms": "100", **where}
    out = topic if kind == "query" else topic + "." + where["table.whitelist"]
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    writer(db, "stream", 150, 50)
    got = wait_values(kafka, out, range(1, 151))
    time.sleep(1.0)  # a few more polls: nothing is sent again
    got = values(kafka, out)
    assert sk.stop() == 0
    assert sorted(got) == list(range(1, 151))


def test_equal_timestamp_group_too_large(tmp_path, kafka, topic):
    """More rows share one timestamp than skiff remembers: a clear error."""
    db = tmp_path / "big.db"
    writer(db, "sql", "CREATE TABLE t(note TEXT PRIMARY KEY, ts TEXT NOT NULL, v INT) "
           "WITHOUT ROWID; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
           "WHERE i < 100001) INSERT INTO t SELECT 'n' || i, '2024-05-01', i FROM n;")
    conn = {"name": "big", "connector.class": "JdbcSourceConnector",
            "connection.url": str(db), "mode": "timestamp", "timestamp.column.name": "ts",
            "table.whitelist": "t", "topic.prefix": topic + ".", "batch.max.rows": "20000"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    m = sk.wait_log(r"rows share the timestamp", timeout=60)
    assert "timestamp+incrementing" in m.string
    assert sk.wait(30) != 0


# --- items 7 and 8: incrementing ids reused while running -------------------------------

REUSE = {
    # name: (schema, what the writer does after rows 1..10 were read, new values)
    "delete_all": ("id INTEGER PRIMARY KEY", "DELETE FROM t;" +
                   "".join(f"INSERT INTO t(v) VALUES ({100 + i});" for i in range(1, 16)),
                   range(101, 116)),
    "delete_newest": ("id INTEGER PRIMARY KEY", "DELETE FROM t WHERE id > 5;" +
                      "".join(f"INSERT INTO t(v) VALUES ({100 + i});" for i in range(1, 9)),
                      range(101, 109)),
    "drop_create": ("id INTEGER PRIMARY KEY", "DROP TABLE t; CREATE TABLE t(id INTEGER "
                    "PRIMARY KEY, v INT);" +
                    "".join(f"INSERT INTO t(v) VALUES ({100 + i});" for i in range(1, 13)),
                    range(101, 113)),
    "vacuum": ("", "DELETE FROM t WHERE v <= 5; VACUUM;" +
               "".join(f"INSERT INTO t(v) VALUES ({100 + i});" for i in range(1, 11)),
               range(101, 111)),
}


@pytest.mark.parametrize("case", sorted(REUSE))
def test_reused_ids_while_running(tmp_path, kafka, topic, case):
    key, script, new = REUSE[case]
    db = tmp_path / "inc.db"
    writer(db, "sql", f"PRAGMA journal_mode=wal; CREATE TABLE t({key + ', ' if key else ''}"
           "v INT);" + "".join(f"INSERT INTO t(v) VALUES ({i});" for i in range(1, 11)))
    conn = {"name": "inc", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
            "table.whitelist": "t", "topic.prefix": topic + ".", "poll.interval.ms": "100"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    wait_values(kafka, topic + ".t", range(1, 11))
    writer(db, "sql", script)
    got = wait_values(kafka, topic + ".t", new, timeout=30)
    assert sk.stop() == 0
    # Reusable ids are named at start; their reuse when it happens.
    assert "ids can be reused" in sk.log_text()
    assert "ids_reused=" in sk.log_text()
    # Each new row once; only rows still in the table may come twice (vacuum).
    assert sorted(v for v in got if v > 100) == list(new)
    survivors = set(range(6, 11)) if case == "vacuum" else set()
    assert sorted(v for v in got if v <= 10 and v not in survivors) == \
        sorted(set(range(1, 11)) - survivors)


@pytest.mark.parametrize("url", ["path", "uri"])
def test_database_replaced_or_deleted_while_running(tmp_path, kafka, topic, url):
    """The file is replaced by mv with a database of other rows, then deleted:
    the new rows are read from their start, and a deletion is noticed, through
    a plain path and through a jdbc:sqlite:file: URI alike."""
    db = tmp_path / "app.db"
    mk = "CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v INT);"
    writer(db, "sql", mk + "".join(f"INSERT INTO t(v) VALUES ({i});" for i in range(1, 11)))
    conn = {"name": "mv", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}" if url == "path"
            else f"jdbc:sqlite:file:{db}?mode=ro",
            "mode": "incrementing", "table.whitelist": "t", "topic.prefix": topic + ".",
            "poll.interval.ms": "100"}
    sk = Skiff(tmp_path, worker_props(tmp_path, kafka), [conn]).start()
    wait_values(kafka, topic + ".t", range(1, 11))
    new = tmp_path / "new.db"
    writer(new, "sql", mk + "".join(f"INSERT INTO t(v) VALUES ({100 + i});" for i in range(1, 4)))
    os.rename(new, db)
    got = wait_values(kafka, topic + ".t", range(101, 104))
    assert sorted(got) == list(range(1, 11)) + list(range(101, 104))
    sk.wait_log(r"replaced by another file", timeout=10)
    mark = sk.log_mark()
    os.unlink(db)
    sk.wait_log(r"was deleted: waiting for it", timeout=10, since=mark)
    assert sk.stop() == 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] in ("sql", "stream"):
        sys.exit(writer_main(sys.argv[1:]))
    print(__doc__)
