"""Offsets in Kafka (issue 12, docs/offsets.md): skiff's offsets
topic against the one a real Connect 3.9.1 distributed worker writes for the
same FileStreamSource file (keys, values and each key's partition, byte for
byte), and a lost state directory restored from the topic."""

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.parse
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import connectjvm  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

NAMES = ["local-file-source", "app-\u03b1", "svc.log"]  # app-α: UTF-8 in the key
RESET = "svc.log"  # its offsets are reset: a tombstone
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


def latest_headers(records):
    """{key bytes: {header name: bytes}} of each key's last record."""
    return {r["key"]: dict(r["headers"]) for r in records}


def position(records, key):
    v = latest(records).get(key, (None, 0))[0]
    return None if v is None else json.loads(v)["position"]


def key_of(name, path):
    return json.dumps([name, {"filename": str(path)}], separators=(",", ":"),
                      ensure_ascii=False).encode()


def all_at_end(bootstrap, topic, keys):
    recs = offset_records(bootstrap, topic)
    return all(position(recs, k) == LINES * fl.WIDTH for k in keys)


def wait_offset(bootstrap, offsets, key, n, what=None, timeout=60):
    """Waits until the offsets topic holds key's offset after line n of
    app.log (position n * WIDTH); what names it in the timeout's message."""
    connectjvm.wait_for(lambda: position(offset_records(bootstrap, offsets), key) ==
                        n * fl.WIDTH, timeout, what or f"the offset of line {n} in the topic")


@pytest.fixture(scope="module")
def connect_run(tmp_path_factory, kafka):
    """Connect distributed, a FileStreamSource per name on its own numbered
    file, run until its offsets topic holds each file's end; then RESET's
    offsets reset (KIP-875's DELETE: a tombstone), and Connect stopped."""
    d = tmp_path_factory.mktemp("connect")
    files = {}
    for i, name in enumerate(NAMES):
        files[name] = fl.SeqSource(d / f"app{i}.log")
        files[name].append(LINES)
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
    keys = [key_of(n, files[n].path) for n in NAMES]
    try:
        c.wait_up()
        for name in NAMES:
            st, body = c.rest("POST", "/connectors", {"name": name, "config": {
                "connector.class": "FileStreamSource", "tasks.max": "1",
                "file": str(files[name].path), "topic": f"connect-data-{tag}"}})
            assert st == 201, body
        connectjvm.wait_for(lambda: all_at_end(kafka.bootstrap, offsets, keys), 120,
                            "Connect's offsets at the end of each file")
        path = "/connectors/" + urllib.parse.quote(RESET)
        assert c.rest("PUT", path + "/stop")[0] == 204
        connectjvm.wait_for(lambda: (c.rest("GET", path + "/status")[1] or {}).get(
            "connector", {}).get("state") == "STOPPED", 60, "Connect's STOPPED")
        st, body = c.rest("DELETE", path + "/offsets")
        assert st == 200, body
        reset_key = key_of(RESET, files[RESET].path)
        connectjvm.wait_for(
            lambda: latest(offset_records(kafka.bootstrap, offsets)).get(reset_key, (1,))[0]
            is None, 60, "Connect's tombstone")
    finally:
        c.stop()
    yield {"files": files, "offsets": offsets, "keys": keys,
           "records": harness.consume(kafka.bootstrap, offsets)}


def topic_worker(bootstrap, state, offsets_topic, **extra):
    props = fl.worker_props(bootstrap, state, **extra)
    props.update({"offset.storage.topic": offsets_topic,
                  "offset.storage.replication.factor": "1"})
    return props


def topic_alone_worker(bootstrap, state, offsets_topic):
    """topic_worker without offset.storage.file.filename: the topic alone
    (Connect's distributed mode), with a device.id: without a state directory
    a host without /etc/machine-id has no other name (test_exit_codes.py)."""
    props = topic_worker(bootstrap, state, offsets_topic, device__id="test-device")
    del props["offset.storage.file.filename"]
    return props


def test_records_equal_connects(tmp_path, kafka, topic, connect_run):
    """The same files read to their ends, then one connector's offsets reset
    (`skiff offsets reset`, Connect's DELETE): skiff's offsets topic holds the
    key bytes Connect's holds, each in the same partition of 25 (Java's
    murmur2), the same tombstone, and skiff created it compacted."""
    state = tmp_path / "state"
    state.mkdir()
    offsets = topic + "-offsets"
    files = connect_run["files"]
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets),
                       [fl.file_connector(n, files[n].path, topic) for n in NAMES])
    sk.start()
    connectjvm.wait_for(lambda: all_at_end(kafka.bootstrap, offsets, connect_run["keys"]), 60,
                        "skiff's offsets at the end of each file")
    assert sk.stop() == 0
    r = subprocess.run([str(harness.skiff_bin()), "offsets", "reset", "--connector", RESET,
                        str(sk.worker_file), *map(str, sk.connector_files)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    mine, theirs = latest(offset_records(kafka.bootstrap, offsets)), \
        latest(connect_run["records"])
    # Keys byte for byte, each in Java's partition; the same tombstone.
    assert {k: p for k, (v, p) in mine.items()} == {k: p for k, (v, p) in theirs.items()}
    assert {k for k, (v, p) in mine.items() if v is None} == \
        {k for k, (v, p) in theirs.items() if v is None} == \
        {key_of(RESET, files[RESET].path)}
    # Values: Connect's {"position":N} byte for byte; skiff's whole offset
    # (the file's identity: dev, ino, fingerprint) is in the header
    # skiff.offset.
    want = f'{{"position":{LINES * fl.WIDTH}}}'.encode()
    hdrs = latest_headers(offset_records(kafka.bootstrap, offsets))
    for k, (v, p) in theirs.items():
        if v is not None:
            assert v == want
            assert mine[k][0] == want, mine[k][0]
            assert hdrs[k]["skiff.offset"].startswith(want[:-1] + b","), hdrs[k]
    r = subprocess.run(["kcat", "-b", kafka.bootstrap, "-L", "-t", offsets],
                       capture_output=True, text=True)
    assert "25 partitions" in r.stdout, r.stdout


def test_lost_state_dir_restored_from_topic(tmp_path, kafka, topic):
    """A new SD card: the offsets file and its directory are gone; skiff
    resumes from the topic at the last flushed position. After a clean stop
    no line is repeated; after kill -9 only the lines past the position the
    topic held repeat. An old copy of the file put back loses to the topic's
    newer generation."""
    sk, src, offsets, key = stopped_at_line(tmp_path, kafka, topic, 1000)
    state = tmp_path / "state"
    old = tmp_path / "old-offsets"
    shutil.copy(state / "offsets", old)
    shutil.rmtree(state)  # the new card
    state.mkdir()
    src.append(1000)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 2000)
    wait_offset(kafka.bootstrap, offsets, key, 2000)
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


def stopped_at_line(tmp_path, kafka, topic, lines):
    """skiff (topic store beside the file) run until the topic holds the
    offset of line LINES of app.log, then stopped: (skiff, source, offsets
    topic, key)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(lines)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets),
                       [fl.file_connector("sd", src.path, topic)])
    key = key_of("sd", src.path)
    sk.start()
    wait_offset(kafka.bootstrap, offsets, key, lines)
    assert sk.stop() == 0
    return sk, src, offsets, key


def new_card(tmp_path):
    shutil.rmtree(tmp_path / "state")
    (tmp_path / "state").mkdir()


def test_values_are_connects_identity_in_header(tmp_path, kafka, topic):
    """The offsets topic's value is Connect's {"position":N} alone and the
    file's identity rides in the header skiff.offset: with the state
    directory lost and app.log rotated while skiff was stopped, the restart
    finds the rotated file by that identity and reads its rest, then the new
    app.log. Bound: exact."""
    sk, src, offsets, key = stopped_at_line(tmp_path, kafka, topic, 1000)
    recs = offset_records(kafka.bootstrap, offsets)
    assert latest(recs)[key][0] == f'{{"position":{1000 * fl.WIDTH}}}'.encode()
    full = json.loads(latest_headers(recs)[key]["skiff.offset"])
    assert full["position"] == 1000 * fl.WIDTH
    assert full["ino"] == src.path.stat().st_ino and "fp" in full, full
    new_card(tmp_path)
    src.append(200)
    src.path.rename(tmp_path / "app.log.1")
    new = fl.SeqSource(tmp_path / "app.log")
    new.next = 1200
    new.append(100)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 1300)
    wait_offset(kafka.bootstrap, offsets, key, 100, "the new app.log's end in the topic")
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
    assert seqs == list(range(1300)), f"{len(seqs)} records, first {seqs[1000:1010]}"


def test_value_altered_by_connect_tool(tmp_path, kafka, topic):
    """A Connect tool (KIP-875's alter offsets) writes a value without skiff's
    headers: the restart on a new card resumes at that position of app.log.
    Then a value that no longer matches the skiff.offset header beside it
    (a tool that copied the headers): the value wins too."""
    sk, src, offsets, key = stopped_at_line(tmp_path, kafka, topic, 1000)
    recs = offset_records(kafka.bootstrap, offsets)
    part = latest(recs)[key][1]
    full = latest_headers(recs)[key]["skiff.offset"].decode()
    for at, headers, before in ((300, (), 1000), (500, (("skiff.offset", full),), 1700)):
        new_card(tmp_path)
        harness.produce(kafka.bootstrap, offsets, [f'{{"position":{at * fl.WIDTH}}}'],
                        key=key, partition=part, headers=headers)
        sk.start()
        fl.read_topic(kafka.bootstrap, topic, before + 1000 - at)
        wait_offset(kafka.bootstrap, offsets, key, 1000)
        assert sk.stop() == 0
        seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
        assert seqs[before:] == list(range(at, 1000)), f"resumed at {seqs[before:before + 1]}"


def test_topic_alone(tmp_path, kafka, topic):
    """offset.storage.topic without offset.storage.file.filename (Connect's
    distributed mode): a restart resumes from the topic."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    props = topic_alone_worker(kafka.bootstrap, tmp_path, offsets)
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


def test_starts_offline_from_the_file(tmp_path, kafka_private, topic):
    """File and topic, no broker at start: skiff starts from the file (as it
    does without the topic) and says so; once the broker is back the lines
    written meanwhile arrive once and the topic gets the offset. Without the
    file it does not start (exit 75): it would re-send everything."""
    kafka_private.start()
    bootstrap = kafka_private.bootstrap
    harness.create_topic(bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, topic_worker(bootstrap, state, offsets,
                                              offset__flush__timeout__ms=1000),
                       [fl.file_connector("off", src.path, topic)])
    sk.start()
    fl.read_topic(bootstrap, topic, 100)
    assert sk.stop() == 0
    kafka_private.stop()
    src.append(50)
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"started from the offset file alone", timeout=60, since=mark)
    kafka_private.start()
    fl.read_topic(bootstrap, topic, 150)
    key = key_of("off", src.path)
    wait_offset(bootstrap, offsets, key, 150)
    assert sk.stop() == 0
    assert fl.seqs_of(harness.consume(bootstrap, topic)) == list(range(150))
    kafka_private.stop()
    shutil.rmtree(state)
    state.mkdir()
    sk.start()
    assert sk.wait(timeout=60) == 75


def test_fleet_sharing_one_topic(tmp_path, kafka, topic):
    """Two devices of one image (connector "app" on the same path, one
    offsets topic), each with its own state directory and machine id. A
    device with a device.id, or with its offset file, finding its key last
    written by the other device exits 78 naming the connector, key, device
    and fix; a new card named only by its machine id (a re-flash may have
    changed it) takes the record as its own and warns."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    key = key_of("app", src.path)

    def device(name, **extra):
        (tmp_path / name / "state").mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.machine-id").write_text(name[0] * 32 + "\n")
        return harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, tmp_path / name / "state",
                                                    offsets, **extra),
                             [fl.file_connector("app", src.path, topic)], name=name,
                             env={"SKIFF_MACHINE_ID_FILE": str(tmp_path / f"{name}.machine-id")})

    a = device("a")
    a.start()
    wait_offset(kafka.bootstrap, offsets, key, 100, "device a's offset of line 100")
    assert a.stop() == 0
    b = device("b", device__id="dev-b")
    b.start()
    assert b.wait(timeout=60) == 78
    for said in ["connector app", key.decode(), "device " + "a" * 32, "own connector names"]:
        assert said in b.log_text()
    b = device("b2")  # a new card, its machine id only
    b.start()
    b.wait_log(r"taken as this device's own from before a re-flash", timeout=60)
    src.append(50)
    wait_offset(kafka.bootstrap, offsets, key, 150, "device b2's offset of line 150")
    assert b.stop() == 0
    a.start()  # its file loaded: b2 is another device
    assert a.wait(timeout=60) == 78
    assert "device " + "b" * 32 in a.log_text()


def test_clones_sharing_machine_id_refused(tmp_path, kafka, topic):
    """Two boards cloned from one image: one /etc/machine-id, no device.id,
    one offsets topic. Each state directory keeps its own store id
    (skiff.store); a board whose file loaded finding its key last written by
    the other store exits 78 saying why and how to fix it. Its own records
    (a restart) pass."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    key = key_of("app", src.path)
    (tmp_path / "machine-id").write_text("c" * 32 + "\n")

    def board(name):
        (tmp_path / name).mkdir(exist_ok=True)
        return harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, tmp_path / name, offsets),
                             [fl.file_connector("app", src.path, topic)], name=name,
                             env={"SKIFF_MACHINE_ID_FILE": str(tmp_path / "machine-id")})

    def at(n):
        wait_offset(kafka.bootstrap, offsets, key, n, f"the offset of line {n}")

    a, b = board("a"), board("b")
    for n in (100, 120):  # a restart: its own records
        a.start()
        at(n)
        assert a.stop() == 0
        src.append(20)
    b.start()  # no file yet: takes the record, as a re-flashed board must
    at(140)
    assert b.stop() == 0
    a.start()
    assert a.wait(timeout=60) == 78
    for said in ["another offsets store", "cloned from one image", "device.id",
                 "systemd-machine-id-setup"]:
        assert said in a.log_text()


def test_old_backup_put_back_after_a_new_card_resumes(tmp_path, kafka, topic):
    """A device with its device.id loses its state directory (a new card:
    a new store id), runs, and then an older backup of its first state
    directory is put back. The configured device.id says it is this device:
    its other store is its own earlier or later state directory, and the
    topic's newer record wins (hostile finding: exit 78 'boards cloned from
    one image ... give each board its own device.id', and the device
    shipped nothing until a person acted)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    key = key_of("app", src.path)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets,
                                              device__id="dev-1"),
                       [fl.file_connector("app", src.path, topic)])

    def run(n):
        src.append(100)
        sk.start()
        wait_offset(kafka.bootstrap, offsets, key, n, f"the offset of line {n}")
        assert sk.stop() == 0

    run(100)
    shutil.copytree(state, tmp_path / "backup")
    run(200)  # the backup is now older than the topic
    shutil.rmtree(state)  # the card is lost; a new one makes a new store id
    state.mkdir()
    run(300)
    shutil.rmtree(state)  # the old backup put back
    shutil.copytree(tmp_path / "backup", state)
    run(400)
    assert "another offsets store" not in sk.log_text()
    fl.check_delivery(fl.read_topic(kafka.bootstrap, topic, 400), 400, max_dups=0)


def test_device_renamed_resumes_from_its_file(tmp_path, kafka, topic):
    """A device's device.id is changed (provisioning renamed it) with its
    state directory kept: the topic's record of its key names the old
    device.id but this very store (skiff.store), with a generation the
    file holds: its own record, and the file stands (hostile finding: exit
    78 'last written by device dev-old ... give each device its own
    connector names', and `skiff offsets` refused too: nothing but the old
    name let the device run). A record of this store above the file's
    generation under another name is still refused: a state directory
    copied to another board (the file cannot tell it from a clone)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    key = key_of("app", src.path)
    state = tmp_path / "state"
    state.mkdir()

    def device(name):
        return harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, state, offsets,
                                                    device__id=name),
                             [fl.file_connector("app", src.path, topic)], name=name)

    def run(sk, n):
        src.append(100)
        sk.start()
        wait_offset(kafka.bootstrap, offsets, key, n, f"the offset of line {n}")
        assert sk.stop() == 0

    run(device("dev-old"), 100)
    shutil.copytree(state, tmp_path / "copy")
    run(device("dev-new"), 200)
    run(device("dev-new"), 300)
    fl.check_delivery(fl.read_topic(kafka.bootstrap, topic, 300), 300, max_dups=0)
    shutil.rmtree(state)  # the copy made at line 100 on a board named otherwise
    shutil.copytree(tmp_path / "copy", state)
    other = device("dev-other")
    other.start()
    assert other.wait(timeout=60) == 78
    assert "was last written by device dev-new" in other.log_text()


def murmur2_partition(key, partitions):
    """Java's murmur2 partition of key bytes (Kafka's default partitioner)."""
    m, h = 0x5bd1e995, 0x9747b28c ^ len(key)
    for i in range(0, len(key) - len(key) % 4, 4):
        k = int.from_bytes(key[i:i + 4], "little") * m & 0xffffffff
        k = (k ^ k >> 24) * m & 0xffffffff
        h = (h * m & 0xffffffff) ^ k
    tail = key[len(key) - len(key) % 4:]
    for i in reversed(range(len(tail))):
        h ^= tail[i] << (8 * i)
    if tail:
        h = h * m & 0xffffffff
    h = (h ^ h >> 13) * m & 0xffffffff
    return ((h ^ h >> 15) & 0x7fffffff) % partitions


def test_topic_grown_under_a_clock_behind(tmp_path, kafka, topic):
    """The offsets topic grows (partitions added: the key's murmur2
    partition moves) and the device's clock is a year behind (a board
    without an RTC before NTP): its next record lands in the new partition
    with an older timestamp than its record in the old one. Its own
    skiff.generation says which is newer; the restart resumes there
    (hostile finding: the later timestamp won, the restart went back to the
    old partition's position and sent 100 lines again)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    key = key_of("app", src.path)
    props = topic_alone_worker(kafka.bootstrap, tmp_path, offsets)
    props["offset.storage.partitions"] = "1"
    sk = harness.Skiff(tmp_path, props, [fl.file_connector("app", src.path, topic)])

    def run(n):
        src.append(100)
        sk.start()
        wait_offset(kafka.bootstrap, offsets, key, n, f"the offset of line {n}")
        assert sk.stop() == 0

    run(100)
    grown = next(n for n in range(2, 64) if murmur2_partition(key, n) != 0)
    subprocess.run([str(harness.tool("consume")), "-b", kafka.bootstrap, "-t", offsets,
                    "-g", str(grown)], check=True, timeout=90)
    sk.env = {"LD_PRELOAD": str(harness.tool("clockshift.so")),
              "CLOCKSHIFT_SECONDS": str(-365 * 86400),
              "ASAN_OPTIONS": "abort_on_error=0:detect_leaks=1:verify_asan_link_order=0"}
    run(200)
    recs = [r for r in offset_records(kafka.bootstrap, offsets) if r["key"] == key]
    moved = murmur2_partition(key, grown)
    assert {r["partition"] for r in recs} == {0, moved}
    assert max(r["timestamp"] for r in recs if r["partition"] == moved) < \
        min(r["timestamp"] for r in recs if r["partition"] == 0)  # the clock behind
    sk.env = {}
    run(300)
    fl.check_delivery(fl.read_topic(kafka.bootstrap, topic, 300), 300, max_dups=0)


def first_alone(tmp_path, kafka, topic, offsets):
    """A skiff with the offsets topic alone, running, its first 10 lines
    read. Returns (src, props, the skiff)."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    props = topic_alone_worker(kafka.bootstrap, tmp_path, offsets)
    first = harness.Skiff(tmp_path, props, [fl.file_connector("l", src.path, topic)])
    first.start()
    fl.read_topic(kafka.bootstrap, topic, 10)
    return src, props, first


def second_refused(tmp_path, props, src, topic, first, offsets):
    """A second skiff with first's configuration does not get the store: it
    waits for first to go, naming first's pid (until SIGTERM: exit 0)."""
    second = harness.Skiff(tmp_path, props, [fl.file_connector("l", src.path, topic)],
                           name="second")
    second.start()
    second.wait_log(r"waiting for it to stop", timeout=60)
    assert f"another skiff (pid {first.pid}) is running with offset.storage.topic " \
        f"{offsets}" in second.log_text()
    assert "running 1 connector" not in second.log_text()
    assert second.stop() == 0


def test_topic_alone_is_locked(tmp_path, kafka, topic):
    """The topic alone: a second skiff with the same topic and bootstrap
    servers exits 75 naming the first one's pid, as with the file store."""
    offsets = topic + "-offsets"
    src, props, first = first_alone(tmp_path, kafka, topic, offsets)
    second_refused(tmp_path, props, src, topic, first, offsets)
    assert first.stop() == 0


def flock_held(path):
    """Whether another process holds an flock(2) on path."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


def test_topic_lock_survives_rm(tmp_path, kafka, topic):
    """The topic alone, its lock file deleted under the first skiff (rm, or
    tmpfiles ageing /tmp): a second one still waits, naming the first's pid
    (the abstract socket @skiff-offsets-<hash> cannot be removed), and no
    line arrives twice."""
    offsets = topic + "-offsets"
    src, props, first = first_alone(tmp_path, kafka, topic, offsets)
    # Held, not only naming first's pid: a skiff killed by an earlier test
    # leaves its lock file, and its pid may be first's now (seen in CI).
    locks = [p for d in ("/run/lock", "/tmp") for p in Path(d).glob("skiff-offsets-*.lock")
             if p.read_text().strip() == str(first.pid) and flock_held(p)]
    assert len(locks) == 1
    locks[0].unlink()
    second_refused(tmp_path, props, src, topic, first, offsets)
    src.append(20)
    fl.read_topic(kafka.bootstrap, topic, 30)
    assert first.stop() == 0
    assert fl.seqs_of(harness.consume(kafka.bootstrap, topic)) == list(range(30))


def test_unreachable_cluster_said_plainly(tmp_path):
    """No broker: `skiff offsets list` and skiff's start with the topic
    alone exit 75 saying the cluster was not reached (not "cannot create
    it": the topic may exist), and librdkafka's own lines come through
    skiff's log, folded, never raw ("%3|...|FAIL|") on stderr."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        bootstrap = f"127.0.0.1:{s.getsockname()[1]}"  # closed once left
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(5)
    props = topic_worker(bootstrap, tmp_path, "nowhere-offsets",
                         offset__flush__timeout__ms=1000, device__id="test-device")
    del props["offset.storage.file.filename"]
    sk = harness.Skiff(tmp_path, props, [fl.file_connector("u", src.path, "nowhere")])
    r = subprocess.run([str(harness.skiff_bin()), "offsets", "list", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=120)
    sk.start()
    assert sk.wait(timeout=90) == 75
    for rc, err in [(r.returncode, r.stderr), (75, sk.log_text())]:
        assert rc == 75, err
        assert f"cannot reach the cluster (bootstrap.servers {bootstrap})" in err, err
        assert "cannot create it" not in err and "%3|" not in err, err
        assert "kafka (skiff-offsets): FAIL:" in err, err
        assert err.count("kafka (skiff-offsets): FAIL:") <= 3, err


def test_non_compacted_topic_refused(tmp_path, kafka, topic):
    """An offsets topic the broker created for a write (cleanup.policy=delete,
    as after it was deleted while a client wrote) is refused: exit 78 naming
    the topic, its policy and the fix, as Connect refuses it."""
    offsets = topic + "-offsets"
    r = subprocess.run(["kcat", "-P", "-b", kafka.bootstrap, "-t", offsets],
                       input=b"x\n", capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, tmp_path, offsets),
                       [fl.file_connector("d", src.path, topic)])
    sk.start()
    assert sk.wait(timeout=60) == 78
    assert f"offset.storage.topic {offsets} has cleanup.policy=delete" in sk.log_text()
    assert "--add-config cleanup.policy=compact" in sk.log_text()


def test_topic_deleted_while_running(tmp_path, kafka, topic):
    """The offsets topic deleted while skiff runs: its writes do not have the
    broker create it (it would delete, not compact); the next write creates it
    compacted and sends every offset, so a restart passes the policy check and
    resumes without a repeat."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    offsets = topic + "-offsets"
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    sk = harness.Skiff(tmp_path, topic_worker(kafka.bootstrap, tmp_path, offsets,
                                              offset__flush__timeout__ms=1000),
                       [fl.file_connector("gone", src.path, topic)])
    key = key_of("gone", src.path)
    sk.start()
    wait_offset(kafka.bootstrap, offsets, key, 100)
    r = subprocess.run([str(harness.tool("consume")), "-b", kafka.bootstrap, "-t", offsets, "-D"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    src.append(50)
    sk.wait_log(r"the topic was deleted\? the next write creates it again", timeout=90)
    wait_offset(kafka.bootstrap, offsets, key, 150, "the offset of line 150 in the new topic",
                timeout=90)
    assert sk.stop() == 0
    src.append(10)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 160)
    assert sk.stop() == 0
    assert fl.seqs_of(harness.consume(kafka.bootstrap, topic)) == list(range(160))
