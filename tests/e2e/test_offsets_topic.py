"""Offsets in Kafka (issue 12, README "Offsets in Kafka"): skiff's offsets
topic against the one a real Connect 3.9.1 distributed worker writes for the
same FileStreamSource file (keys, values and each key's partition, byte for
byte), and a lost state directory restored from the topic."""

import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import connectjvm  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

NAME = "local-file-source"
LINES = 300


def latest(records):
    """{key bytes: (value bytes or None, partition)} as compaction keeps them."""
    out = {}
    for r in records:
        out[r["key"]] = (r["value"], r["partition"])
    return out


def offset_records(bootstrap, topic):
    """The offsets topic's records; none while it has no leader yet."""
    try:
        return harness.consume(bootstrap, topic)
    except harness.HarnessError:
        return []


def position(records, key):
    v = latest(records).get(key, (None, 0))[0]
    return None if v is None else json.loads(v)["position"]


@pytest.fixture(scope="module")
def connect_run(tmp_path_factory, kafka):
    """Connect distributed, one FileStreamSource on a numbered file, run until
    its offsets topic holds the file's end; then stopped."""
    d = tmp_path_factory.mktemp("connect")
    src = fl.SeqSource(d / "app.log")
    src.append(LINES)
    tag = uuid.uuid4().hex[:8]
    offsets = f"connect-offsets-{tag}"
    c = connectjvm.Connect(d / "worker", "distributed", {
        "bootstrap.servers": kafka.bootstrap, "group.id": f"g-{tag}",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.topic": offsets, "config.storage.topic": f"connect-configs-{tag}",
        "status.storage.topic": f"connect-status-{tag}",
        "offset.storage.replication.factor": 1, "config.storage.replication.factor": 1,
        "status.storage.replication.factor": 1, "offset.flush.interval.ms": 500})
    try:
        c.wait_up()
        st, body = c.rest("POST", "/connectors", {"name": NAME, "config": {
            "connector.class": "FileStreamSource", "tasks.max": "1", "file": str(src.path),
            "topic": f"connect-data-{tag}"}})
        assert st == 201, body
        key = f'["{NAME}",{{"filename":"{src.path}"}}]'.encode()
        connectjvm.wait_for(
            lambda: position(offset_records(kafka.bootstrap, offsets), key) ==
            LINES * fl.WIDTH, 120, "Connect's offset at the end of the file")
    finally:
        c.stop()
    yield {"src": src, "offsets": offsets, "key": key,
           "records": harness.consume(kafka.bootstrap, offsets)}


def topic_worker(bootstrap, state, offsets_topic, **extra):
    props = fl.worker_props(bootstrap, state, **extra)
    props.update({"offset.storage.topic": offsets_topic,
                  "offset.storage.replication.factor": "1"})
    return props


def test_records_equal_connects(tmp_path, kafka, topic, connect_run):
    """The same file read to its end: skiff's offsets topic holds the key and
    value bytes Connect's holds, in the same partition of 25 (Java's murmur2),
    and skiff created it compacted."""
    state = tmp_path / "state"
    state.mkdir()
    offsets = topic + "-offsets"
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets),
                       [fl.file_connector(NAME, connect_run["src"].path, topic)])
    sk.start()
    key = connect_run["key"]
    connectjvm.wait_for(lambda: position(offset_records(kafka.bootstrap, offsets), key) ==
                        LINES * fl.WIDTH, 60, "skiff's offset at the end of the file")
    assert sk.stop() == 0
    mine, theirs = latest(offset_records(kafka.bootstrap, offsets)), \
        latest(connect_run["records"])
    # Keys byte for byte, each in Java's partition.
    assert {k: p for k, (v, p) in mine.items()} == {k: p for k, (v, p) in theirs.items()}
    # Values: Connect's {"position":N}, to which skiff's file source adds the
    # file's identity (dev, ino, fingerprint) after it; Connect's
    # FileStreamSourceTask reads only "position".
    want = f'{{"position":{LINES * fl.WIDTH}}}'.encode()
    assert theirs[key][0] == want
    assert mine[key][0].startswith(want[:-1] + b","), mine[key][0]
    r = subprocess.run(
        ["kcat", "-b", kafka.bootstrap, "-L", "-t", offsets], capture_output=True, text=True)
    assert "25 partitions" in r.stdout, r.stdout


def test_lost_state_dir_restored_from_topic(tmp_path, kafka, topic):
    """A new SD card: the offsets file and its directory are gone; skiff
    resumes from the topic at the last flushed position. After a clean stop
    no line is repeated; after kill -9 only the lines past the position the
    topic held repeat. An old copy of the file put back loses to the topic's
    newer generation."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets),
                       [fl.file_connector("sd", src.path, topic)])
    key = fl.file_key("sd", src.path).encode()
    sk.start()
    connectjvm.wait_for(lambda: position(offset_records(kafka.bootstrap, offsets), key) ==
                        1000 * fl.WIDTH, 60, "the offset of line 1000 in the topic")
    assert sk.stop() == 0
    old = tmp_path / "old-offsets"
    shutil.copy(state / "offsets", old)
    shutil.rmtree(state)  # the new card
    state.mkdir()
    src.append(1000)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 2000)
    connectjvm.wait_for(lambda: position(offset_records(kafka.bootstrap, offsets), key) ==
                        2000 * fl.WIDTH, 60, "the offset of line 2000 in the topic")
    sk.kill9()
    src.append(500)
    shutil.rmtree(state)
    state.mkdir()
    shutil.copy(old, state / "offsets")  # an old image of the card: line 1000
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 2500)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
    assert sorted(set(seqs)) == list(range(2500))
    assert len(seqs) == 2500, f"{len(seqs) - 2500} lines repeated"


def test_topic_alone(tmp_path, kafka, topic):
    """offset.storage.topic without offset.storage.file.filename (Connect's
    distributed mode): a restart resumes from the topic."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    props = topic_worker(kafka.bootstrap, tmp_path, offsets)
    del props["offset.storage.file.filename"]
    sk = harness.Skiff(tmp_path, props, [fl.file_connector("alone", src.path, topic)])
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 200)
    assert sk.stop() == 0
    src.append(100)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 300)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
    assert seqs == list(range(300))
