"""An SQLite offset past the table's newest row (issue 23): `skiff offsets
set` and REST PATCH refuse it, naming the table's newest value, as a file
position past the file's end is refused; `--force` takes it anyway. Stored,
it would skip the rows up to it when they come: {"incrementing":150} on a
table whose newest id is 100 lost rows 101-150 silently."""

import json
import sqlite3
import subprocess

import pytest

import harness
from harness import Skiff, consume
from test_rest import free_port, http, raw_get, state, wait_for, wait_http


def offsets_cmd(sk, *args, stdin=None):
    r = subprocess.run([str(harness.skiff_bin()), "offsets", *map(str, args),
                        str(sk.worker_file), *map(str, sk.connector_files)],
                       input=stdin, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def table(db, n):
    c = sqlite3.connect(db, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, v TEXT)")
    for i in range(1, n + 1):
        c.execute("INSERT INTO t(ts, v) VALUES (?, ?)", ("2024-01-01T00:%02d:%02d.000Z"
                                                         % (i // 60, i % 60), f"row {i}"))
    return c


def connector(db, mode, topic):
    c = {"name": "rows", "connector.class": "JdbcSourceConnector",
         "connection.url": f"jdbc:sqlite:{db}", "mode": mode, "table.whitelist": "t",
         "topic.prefix": topic + "-", "poll.interval.ms": 200}
    if "incrementing" in mode:
        c["incrementing.column.name"] = "id"
    if "timestamp" in mode:
        c["timestamp.column.name"] = "ts"
    return c


def doc(offset):
    return json.dumps({"offsets": [{"partition": {"protocol": "1", "table": "t"},
                                    "offset": offset}]})


# 2024-01-01T00:01:40Z: row 100's timestamp, and one second later.
NEWEST_MS = 1704067300000
CASES = {
    "incrementing": ({"incrementing": 150}, {"incrementing": 100}, ["newest id", "100", "150"]),
    "timestamp": ({"timestamp": NEWEST_MS + 1000}, {"timestamp": NEWEST_MS},
                  ["newest timestamp", "2024-01-01T00:01:40", str(NEWEST_MS + 1000)]),
    "timestamp+incrementing": ({"timestamp": NEWEST_MS, "incrementing": 101},
                               {"timestamp": NEWEST_MS, "incrementing": 100},
                               ["newest row", "2024-01-01T00:01:40", "id 100"]),
}


@pytest.mark.parametrize("mode", list(CASES))
def test_offsets_set_past_the_newest_row(tmp_path, kafka, topic, mode):
    past, newest, words = CASES[mode]
    db = tmp_path / "app.db"
    app = table(db, 100)
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets")},
               [connector(db, mode, topic)])
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(past))
    assert rc == 78 and all(w in err for w in words) and "--force" in err, err
    assert json.loads(offsets_cmd(sk, "list")[1]) == {"offsets": []}
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(newest))
    assert rc == 0, err
    rc, out, err = offsets_cmd(sk, "set", "--force", "-", stdin=doc(past))
    assert rc == 0, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"] == past
    app.close()


def test_offsets_set_on_a_missing_table_refused(tmp_path, kafka, topic):
    """What cannot be checked is refused too (--force takes it)."""
    db = tmp_path / "app.db"
    sqlite3.connect(db).close()
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets")},
               [connector(db, "incrementing", topic)])
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc({"incrementing": 5}))
    assert rc == 78 and "table t" in err and "--force" in err, err
    assert offsets_cmd(sk, "set", "--force", "-", stdin=doc({"incrementing": 5}))[0] == 0


def test_patch_past_the_newest_row(tmp_path, kafka, topic):
    """REST PATCH on a stopped connector: refused (500, the source's words)
    naming the newest id; up to it, 200, and the resumed connector reads from
    there, losing nothing."""
    db = tmp_path / "app.db"
    app = table(db, 100)
    port = free_port()
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets"),
                          "offset.flush.interval.ms": 200,
                          "listeners": f"http://127.0.0.1:{port}",
                          "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                          "value.converter.schemas.enable": "false"},
               [connector(db, "incrementing", topic)]).start()
    wait_http(port)
    consume(kafka.bootstrap, topic + "-t", n=100)
    base = "/connectors/rows"
    assert http(port, "PUT", base + "/stop")[0] == 204
    wait_for(lambda: state(port, "rows") == "STOPPED", what="STOPPED")
    before = raw_get(port, base + "/offsets")
    st, j = http(port, "PATCH", base + "/offsets", json.loads(doc({"incrementing": 150})))
    # 500 with the source's words, as Connect answers a connector's refusal.
    assert st == 500 and "newest id" in j["message"] and "100" in j["message"], j
    assert raw_get(port, base + "/offsets") == before
    st, j = http(port, "PATCH", base + "/offsets", json.loads(doc({"incrementing": 90})))
    assert st == 200, j
    for i in range(101, 201):
        app.execute("INSERT INTO t(ts, v) VALUES ('2024-01-02T00:00:00.000Z', ?)", (f"row {i}",))
    assert http(port, "PUT", base + "/resume")[0] == 202
    recs = consume(kafka.bootstrap, topic + "-t", n=210)
    ids = [json.loads(r["value"])["id"] for r in recs]
    assert ids == list(range(1, 101)) + list(range(91, 201))
    assert sk.stop() == 0
    app.close()
