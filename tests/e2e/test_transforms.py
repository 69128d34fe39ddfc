"""Connect's single message transforms end to end (issue 13): a connector file
with transforms and predicates, as Connect users write them, runs unchanged
against a real broker; the exact records, topics and fields arrive."""

import json

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
            "transforms.x.type": T + "Flatten$Value"}
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets")}, [conn])
    sk.start()
    assert sk.wait(timeout=30) == 78
    assert "transforms.x.type: '" + T + "Flatten$Value' is not a transform" in sk.log_text()
