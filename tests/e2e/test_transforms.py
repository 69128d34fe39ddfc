"""Connect's single message transforms end to end (issue 13): a connector file
with transforms and predicates, as Connect users write them, runs unchanged
against a real broker; the exact records, topics and fields arrive."""

import json
import sqlite3
import subprocess
import time

import harness
from harness import Skiff, consume
import offsetfile

T = "org.apache.kafka.connect.transforms."
P = "org.apache.kafka.connect.transforms.predicates."


def test_router_filter_and_insert_field(tmp_path, kafka, topic):
    keep, drop = tmp_path / "keep.log", tmp_path / "drop.log"
    keep_lines = [f"keep {i}" for i in range(200)]
    drop_lines = [f"drop {i}" for i in range(150)]
    keep.write_text("".join(l + "\n" for l in keep_lines))
    drop.write_text("".join(l + "\n" for l in drop_lines))
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.interval.ms": "200",
              "value.converter.schemas.enable": "false"}
    # Both connectors write to TOPIC-raw; RegexRouter renames each, and a
    # Filter with TopicNameMatches drops the whole of what reached -junk.
    kept = {"name": "kept", "connector.class": "FileStreamSource", "file": str(keep),
            "topic": f"{topic}-raw",
            "transforms": "hoist,device,route",
            "transforms.hoist.type": T + "HoistField$Value",
            "transforms.hoist.field": "line",
            "transforms.device.type": T + "InsertField$Value",
            "transforms.device.static.field": "device",
            "transforms.device.static.value": "gw-0042",
            "transforms.route.type": T + "RegexRouter",
            "transforms.route.regex": "(.*)-raw",
            "transforms.route.replacement": "$1-clean"}
    dropped = {"name": "dropped", "connector.class": "FileStreamSource", "file": str(drop),
               "topic": f"{topic}-raw",
               "transforms": "route,junk",
               "transforms.route.type": T + "RegexRouter",
               "transforms.route.regex": "(.*)-raw",
               "transforms.route.replacement": "$1-junk",
               "transforms.junk.type": T + "Filter",
               "transforms.junk.predicate": "isjunk",
               "predicates": "isjunk",
               "predicates.isjunk.type": P + "TopicNameMatches",
               "predicates.isjunk.pattern": ".*-junk"}
    sk = Skiff(tmp_path, worker, [kept, dropped])
    sk.start()
    recs = consume(kafka.bootstrap, f"{topic}-clean", n=len(keep_lines), timeout=60)
    assert [json.loads(r["value"]) for r in recs] == \
        [{"line": l, "device": "gw-0042"} for l in keep_lines]
    assert sk.stop() == 0
    # Each connector's offset is past its last line: the filtered ones too.
    offs = offsetfile.load(tmp_path / "offsets")
    assert offs[offsetfile.key("dropped", {"filename": str(drop)})]["position"] == \
        drop.stat().st_size
    assert offs[offsetfile.key("kept", {"filename": str(keep)})]["position"] == \
        keep.stat().st_size
    assert consume(kafka.bootstrap, f"{topic}-junk") == []
    assert consume(kafka.bootstrap, f"{topic}-raw") == []
    assert len(consume(kafka.bootstrap, f"{topic}-clean")) == len(keep_lines)


def test_unimplemented_transform_is_named(tmp_path, kafka, topic):
    conn = {"name": "c", "connector.class": "FileStreamSource", "file": str(tmp_path / "f"),
            "topic": topic, "transforms": "x",
            "transforms.x.type": "io.debezium.transforms.ExtractNewRecordState"}
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets")}, [conn])
    sk.start()
    assert sk.wait(timeout=30) == 78
    assert ("transforms.x.type: 'io.debezium.transforms.ExtractNewRecordState' is not a "
            "transform") in sk.log_text()


# A SQLite table whose text column n holds numbers but for one row, "abc",
# which Cast n:int32 cannot convert (Connect: "Value (abc) was out of range for
# requested data type").
CAST_ROWS = ["1", "2", "abc", "4", "5"]


def cast_connector(tmp_path, kafka, topic, tolerance):
    db = tmp_path / "c.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, n TEXT)")
    con.executemany("INSERT INTO t(n) VALUES (?)", [(n,) for n in CAST_ROWS])
    con.commit()
    con.close()
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.interval.ms": "200",
              "value.converter.schemas.enable": "false"}
    conn = {"name": "sq", "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
            "incrementing.column.name": "id", "table.whitelist": "t", "topic.prefix": topic,
            "poll.interval.ms": "200", "errors.tolerance": tolerance,
            "errors.log.enable": "true",
            "transforms": "cast", "transforms.cast.type": T + "Cast$Value",
            "transforms.cast.spec": "n:int32"}
    return Skiff(tmp_path, worker, [conn])


def stored_offsets(path):
    try:
        return list(offsetfile.load(path).values())
    except (FileNotFoundError, ValueError):
        return []


def test_cast_failure_skipped_with_tolerance_all(tmp_path, kafka, topic):
    sk = cast_connector(tmp_path, kafka, topic, "all")
    sk.start()
    recs = consume(kafka.bootstrap, topic + "t", n=4, timeout=60)
    assert [json.loads(r["value"]) for r in recs] == [
        {"id": 1, "n": 1}, {"id": 2, "n": 2}, {"id": 4, "n": 4}, {"id": 5, "n": 5}]
    deadline = time.monotonic() + 30
    while stored_offsets(tmp_path / "offsets") != [{"incrementing": 5}] and \
            time.monotonic() < deadline:
        time.sleep(0.2)
    assert stored_offsets(tmp_path / "offsets") == [{"incrementing": 5}]
    st = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                         *map(str, sk.connector_files)], capture_output=True, text=True,
                        timeout=30)
    assert "records_skipped=1" in st.stdout + st.stderr, st.stdout + st.stderr
    sk.wait_log(r"connector sq: errors\.tolerance=all: skipped a record of .*: "
                r"transforms\.cast .*Value \(abc\) was out of range for requested data type")
    assert sk.stop() == 0
    assert len(consume(kafka.bootstrap, topic + "t")) == 4


def test_cast_failure_stops_with_tolerance_none(tmp_path, kafka, topic):
    sk = cast_connector(tmp_path, kafka, topic, "none")
    sk.start()
    assert sk.wait(timeout=60) == 78
    assert [json.loads(r["value"]) for r in consume(kafka.bootstrap, topic + "t")] == [
        {"id": 1, "n": 1}, {"id": 2, "n": 2}]
    # Stopped before the row it could not cast: the next start reads it again.
    assert stored_offsets(tmp_path / "offsets") == [{"incrementing": 2}]
    assert "Value (abc) was out of range for requested data type" in sk.log_text()


def test_file_records_carry_read_time(tmp_path, kafka, topic):
    """FileStreamSourceTask stamps each record with System.currentTimeMillis():
    TimestampRouter routes by it, InsertField's timestamp.field holds it, and
    it is the record's CreateTime in Kafka."""
    src = tmp_path / "in.log"
    lines = [f"line {i}" for i in range(50)]
    src.write_text("".join(l + "\n" for l in lines))
    conn = {"name": "c", "connector.class": "FileStreamSource", "file": str(src),
            "topic": topic,
            "transforms": "hoist,ts,route",
            "transforms.hoist.type": T + "HoistField$Value",
            "transforms.hoist.field": "line",
            "transforms.ts.type": T + "InsertField$Value",
            "transforms.ts.timestamp.field": "at",
            "transforms.route.type": T + "TimestampRouter",
            "transforms.route.topic.format": "${topic}-${timestamp}",
            "transforms.route.timestamp.format": "yyyy"}
    before = int(time.time() * 1000)
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets"),
                          "value.converter.schemas.enable": "false"}, [conn])
    sk.start()
    year = time.gmtime(before / 1000).tm_year
    recs = consume(kafka.bootstrap, f"{topic}-{year}", n=len(lines), timeout=60)
    after = int(time.time() * 1000)
    assert sk.stop() == 0, sk.log_text()
    values = [json.loads(r["value"]) for r in recs]
    assert [v["line"] for v in values] == lines
    for r, v in zip(recs, values):
        assert before <= v["at"] <= after
        assert r["timestamp"] == v["at"]
