"""`skiff offsets list|set|reset|import` (issue 12, README "Offsets in
Kafka"): round trips on the file and the topic store, refused while a skiff
runs, and the import of an offsets file a real Connect 3.9.1 standalone
worker wrote."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import connectjvm  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402


def offsets_cmd(sk, *args, stdin=None):
    r = subprocess.run([str(harness.skiff_bin()), "offsets", *map(str, args),
                        str(sk.worker_file), *map(str, sk.connector_files)],
                       input=stdin, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def run_until(sk, bootstrap, topic, n):
    sk.start()
    seqs = fl.read_topic(bootstrap, topic, n)
    assert sk.stop() == 0
    return seqs


@pytest.mark.parametrize("store", ["file", "topic"])
def test_list_set_reset_round_trip(tmp_path, kafka, topic, store):
    """list -> edit -> set: skiff resumes at the set line; reset: from the
    start; while skiff runs the file store is refused, naming its pid."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    state = tmp_path / "state"
    state.mkdir()
    props = fl.worker_props(kafka.bootstrap, state)
    if store == "topic":
        del props["offset.storage.file.filename"]
        props.update({"offset.storage.topic": topic + "-offsets",
                      "offset.storage.replication.factor": "1"})
    sk = harness.Skiff(tmp_path, props, [fl.file_connector("rt", src.path, topic)])
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 100)
    if store == "file":
        rc, out, err = offsets_cmd(sk, "list")
        assert rc == 75 and f"pid {sk.pid}" in err and "REST API" in err, (rc, err)
    assert sk.stop() == 0
    rc, out, err = offsets_cmd(sk, "list")
    assert rc == 0, err
    doc = json.loads(out)
    assert [e["partition"] for e in doc["offsets"]] == [{"filename": str(src.path)}]
    assert doc["offsets"][0]["offset"]["position"] == 100 * fl.WIDTH
    doc["offsets"][0]["offset"] = {"position": 40 * fl.WIDTH}
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))
    assert rc == 0, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"] == \
        {"position": 40 * fl.WIDTH}
    seqs = run_until(sk, kafka.bootstrap, topic, 160)
    assert seqs == list(range(100)) + list(range(40, 100))
    rc, out, err = offsets_cmd(sk, "reset")
    assert rc == 0 and "1 offsets reset" in out, err
    assert json.loads(offsets_cmd(sk, "list")[1]) == {"offsets": []}
    seqs = run_until(sk, kafka.bootstrap, topic, 260)
    assert seqs[160:] == list(range(100))
    # A document the source would not use changes nothing.
    bad = {"offsets": [{"partition": {"filename": "/elsewhere"}, "offset": {"position": 0}}]}
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(bad))
    assert rc == 78 and "/elsewhere" in err, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"]["position"] == \
        100 * fl.WIDTH


def test_import_connect_standalone(tmp_path, kafka, topic):
    """A Connect 3.9.1 standalone worker reads 200 lines and stops; 50 more
    are appended; skiff imports Connect's offsets file and ships lines 200 to
    249 only: none lost, none repeated."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    cdir = tmp_path / "connect"
    cfile = cdir / "connect.offsets"
    c = connectjvm.Connect(cdir, "standalone", {
        "bootstrap.servers": kafka.bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": cfile, "offset.flush.interval.ms": 500},
        [{"name": "imp", "connector.class": "FileStreamSource", "tasks.max": 1,
          "file": src.path, "topic": topic + "-connect"}])
    want = f'{{"position":{200 * fl.WIDTH}}}'.encode()
    try:
        connectjvm.wait_for(lambda: cfile.exists() and want in cfile.read_bytes(), 120,
                            "Connect's offsets file at line 200")
    finally:
        c.stop()
    assert cfile.read_bytes()[:2] == b"\xac\xed"
    src.append(50)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("imp", src.path, topic)])
    rc, out, err = offsets_cmd(sk, "import", cfile)
    assert rc == 0 and "imported 1 offsets" in out, err
    sk.start()
    seqs = fl.read_topic(kafka.bootstrap, topic, 50)
    time.sleep(1)  # anything more than the 50 would show now
    assert sk.stop() == 0
    assert fl.seqs_of(harness.consume(kafka.bootstrap, topic)) == list(range(200, 250))
    assert seqs[:50] == list(range(200, 250))
