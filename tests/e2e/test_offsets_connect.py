"""Kafka Connect and skiff on one offsets topic (issue 24, docs/offsets.md
"Offsets in Kafka"): a real Connect 3.9.1 distributed worker runs the same
FileStreamSource connectors on the same files, before and after skiff, on
skiff's offsets topic. Per key the newest record wins, whoever wrote it;
Connect's position counts characters from where its task started, skiff's
bytes. Over ASCII and multi-byte UTF-8 lines, every handover ships each line
once and whole. One Connect worker for the module (its JVM takes 10-20 s to
start); each test has its own connectors, files and data topic."""

import json
import shutil
import sys
import urllib.parse
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import connectjvm  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from test_offsets_topic import key_of, latest, offset_records  # noqa: E402

WORDS = {"ascii": ("plain ascii text", "more ascii", "the end of it"),
         "utf8": ("café au lait", "ship it 🚀🛶", "日本語のログ")}


def line(enc, i):
    return f"{i:05d} " + WORDS[enc][i % 3]


class Lines:
    """A log file of numbered lines (ASCII, or é, emoji and CJK)."""

    def __init__(self, path, enc):
        self.path, self.enc, self.n = path, enc, 0
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")

    def append(self, count):
        with open(self.path, "ab") as f:
            f.write("".join(line(self.enc, i) + "\n"
                            for i in range(self.n, self.n + count)).encode())
        self.n += count

    def bytes_to(self, i):
        return sum(len((line(self.enc, j) + "\n").encode()) for j in range(i))

    def chars(self, lo, hi):
        """Java chars (UTF-16 units) of lines lo..hi, newlines included."""
        return sum(len((line(self.enc, j) + "\n").encode("utf-16-le")) // 2
                   for j in range(lo, hi))


@pytest.fixture(scope="module")
def connect(tmp_path_factory, kafka):
    """A Connect distributed worker whose offsets topic skiff shares."""
    d = tmp_path_factory.mktemp("connect")
    tag = uuid.uuid4().hex[:8]
    offsets = f"shared-offsets-{tag}"
    c = connectjvm.Connect(d / "worker", "distributed", {
        "bootstrap.servers": kafka.bootstrap, "group.id": f"g-{tag}",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.topic": offsets, "config.storage.topic": f"configs-{tag}",
        "status.storage.topic": f"status-{tag}", "offset.storage.replication.factor": 1,
        "config.storage.replication.factor": 1, "status.storage.replication.factor": 1,
        "offset.flush.interval.ms": 500})
    c.offsets = offsets
    c.wait_up()
    yield c
    c.stop()


def connector_state(c, name):
    return (c.rest("GET", f"/connectors/{urllib.parse.quote(name)}/status")[1] or {}).get(
        "connector", {}).get("state")


def connect_ships(c, kafka, name, src, data, shipped, position):
    """Connect runs connector name on src (created, or resumed) until the
    data topic holds shipped records and its offset in the topic is
    position, then stops it (its task commits on the way out)."""
    path = "/connectors/" + urllib.parse.quote(name)
    if c.rest("GET", path)[0] == 404:
        st, body = c.rest("POST", "/connectors", {"name": name, "config": {
            "connector.class": "FileStreamSource", "tasks.max": "1", "file": str(src.path),
            "topic": data}})
        assert st == 201, body
    else:
        assert c.rest("PUT", path + "/resume")[0] == 202
    harness.consume(kafka.bootstrap, data, shipped, timeout=120)
    key = key_of(name, src.path)
    want = json.dumps({"position": position}).replace(" ", "").encode()
    connectjvm.wait_for(lambda: latest(offset_records(kafka.bootstrap, c.offsets)).get(
        key, (None,))[0] == want, 120, f"Connect's offset {want}")
    assert c.rest("PUT", path + "/stop")[0] == 204
    connectjvm.wait_for(lambda: connector_state(c, name) == "STOPPED", 60, "STOPPED")


def worker(tmp_path, kafka, c):
    """skiff's worker: its offset file in tmp_path/state, beside Connect's
    offsets topic."""
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    return fl.worker_props(kafka.bootstrap, state, **{"offset.storage.topic": c.offsets})


def skiff_for(tmp_path, kafka, c, name, src, data):
    sk = harness.Skiff(tmp_path, worker(tmp_path, kafka, c),
                       [fl.file_connector(name, src.path, data)])
    sk.offsets_topic = c.offsets
    return sk


def skiff_ships(sk, kafka, src, data, shipped, name):
    """skiff runs until the data topic holds shipped records and its offset
    in the topic is src's end, then stops."""
    sk.start()
    harness.consume(kafka.bootstrap, data, shipped, timeout=120)
    key = key_of(name, src.path)
    connectjvm.wait_for(lambda: json.loads(latest(offset_records(
        kafka.bootstrap, sk.offsets_topic)).get(key, (b"{}",))[0] or b"{}").get("position") ==
        src.path.stat().st_size, 60, "skiff's offset at the end of the file")
    assert sk.stop() == 0


def assert_shipped_once(kafka, data, src):
    got = [r["value"].decode() for r in harness.consume(kafka.bootstrap, data)]
    want = [line(src.enc, i) for i in range(src.n)]
    extra = [v for v in got if v not in set(want)]
    assert not extra, f"fragments or strange records: {extra[:3]}"
    assert got == want, (f"{len(got)} records for {len(want)} lines; "
                         f"repeated: {len(got) - len(set(got))}, "
                         f"lost: {len(set(want) - set(got))}")


@pytest.mark.skiff_timeout(600)
@pytest.mark.parametrize("enc", ["ascii", "utf8"])
@pytest.mark.parametrize("state", ["kept", "lost"])
def test_skiff_connect_skiff(tmp_path, kafka, topic, connect, enc, state):
    """skiff ships 200 lines; Connect takes the connector over on the same
    topic (it skips skiff's position in bytes, then counts characters) and
    ships 150; skiff takes it back, with its state directory kept (its file
    holds its own older position: before, that won and Connect's 150 lines
    were sent again) or lost, and ships 100; then Connect and skiff once
    more. Each line once, whole."""
    name = f"m-{enc}-{state}-{uuid.uuid4().hex[:6]}"
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = Lines(tmp_path / "app.log", enc)
    sk = skiff_for(tmp_path, kafka, connect, name, src, topic)
    for rnd in range(2):
        src.append(200 if rnd == 0 else 50)
        skiff_ships(sk, kafka, src, topic, src.n, name)
        start = src.n
        src.append(150)
        connect_ships(connect, kafka, name, src, topic, src.n,
                      src.bytes_to(start) + src.chars(start, src.n))
        if state == "lost":  # a new card: an empty state directory
            shutil.rmtree(tmp_path / "state")
            (tmp_path / "state").mkdir()
        src.append(100)
        skiff_ships(sk, kafka, src, topic, src.n, name)
    assert_shipped_once(kafka, topic, src)


@pytest.mark.skiff_timeout(600)
@pytest.mark.parametrize("state", ["kept", "lost"])
def test_skiff_connect_restarted_skiff(tmp_path, kafka, topic, connect, state):
    """skiff ships 100 lines of é, emoji and CJK; Connect takes over and
    ships 100; its task restarts (stop, resume: a worker restart or a
    rebalance does the same) and skips its own character position as bytes,
    inside an earlier line (Connect's fragment and repeats: Connect's to
    mend), then ships to line 299; skiff takes back over. Connect's last task
    started at its own earlier record, not at skiff's: counted from skiff's,
    skiff resumed past Connect's line (hostile finding: 25 lines that no one
    sent, and the fragment 't' as a record). skiff ships no fragment and
    every line is in the topic."""
    name = f"r-{state}-{uuid.uuid4().hex[:6]}"
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = Lines(tmp_path / "app.log", "utf8")
    sk = skiff_for(tmp_path, kafka, connect, name, src, topic)
    src.append(100)
    skiff_ships(sk, kafka, src, topic, 100, name)
    src.append(100)
    connect_ships(connect, kafka, name, src, topic, 200,
                  src.bytes_to(100) + src.chars(100, 200))
    src.append(100)
    path = "/connectors/" + urllib.parse.quote(name)
    assert connect.rest("PUT", path + "/resume")[0] == 202
    last = line("utf8", 299).encode()
    connectjvm.wait_for(lambda: any(r["value"] == last for r in harness.consume(
        kafka.bootstrap, topic)), 120, "Connect's line 299")
    key, seen = key_of(name, src.path), []

    def settled():  # Connect's offset the same for 3 s (it commits every 500 ms)
        seen.append(latest(offset_records(kafka.bootstrap, connect.offsets)).get(key))
        return len(seen) > 15 and all(s == seen[-1] for s in seen[-15:])

    connectjvm.wait_for(settled, 120, "Connect's offset settled", step=0.2)
    assert connect.rest("PUT", path + "/stop")[0] == 204
    connectjvm.wait_for(lambda: connector_state(connect, name) == "STOPPED", 60, "STOPPED")
    if state == "lost":
        shutil.rmtree(tmp_path / "state")
        (tmp_path / "state").mkdir()
    src.append(100)
    before = len(harness.consume(kafka.bootstrap, topic))
    sk.start()
    connectjvm.wait_for(lambda: any(r["value"] == line("utf8", 399).encode() for r in
                                    harness.consume(kafka.bootstrap, topic)), 60, "line 399")
    assert sk.stop() == 0
    got = [r["value"].decode() for r in harness.consume(kafka.bootstrap, topic)]
    want = [line("utf8", i) for i in range(src.n)]
    fragments = [v for v in got[before:] if v not in set(want)]
    assert not fragments, f"skiff shipped fragments: {fragments[:3]}"
    lost = sorted(set(want) - set(got))
    assert not lost, f"{len(lost)} lines never sent, first {lost[:3]}"


@pytest.mark.skiff_timeout(600)
@pytest.mark.parametrize("enc", ["ascii", "utf8"])
@pytest.mark.parametrize("state", ["none", "other"])
def test_connect_skiff(tmp_path, kafka, topic, connect, enc, state):
    """Connect reads a file from its start (its position: Java chars), then
    skiff takes the connector over: with no state directory, or with one
    that holds its other connectors' offsets. It resumes after Connect's
    last line (before: at Connect's chars taken as bytes, inside a line of
    multi-byte characters, shipping a fragment and lines again)."""
    name = f"c-{enc}-{state}-{uuid.uuid4().hex[:6]}"
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = Lines(tmp_path / "app.log", enc)
    src.append(300)
    connect_ships(connect, kafka, name, src, topic, src.n, src.chars(0, src.n))
    src.append(100)
    sk = skiff_for(tmp_path, kafka, connect, name, src, topic)
    if state == "other":
        other = Lines(tmp_path / "other.log", "ascii")
        other.append(10)
        osk = harness.Skiff(tmp_path, worker(tmp_path, kafka, connect), [fl.file_connector(
            "other-" + name, other.path, topic + "-other")], name="other")
        osk.start()
        harness.consume(kafka.bootstrap, topic + "-other", 10, timeout=60)
        assert osk.stop() == 0
    skiff_ships(sk, kafka, src, topic, src.n, name)
    assert_shipped_once(kafka, topic, src)


@pytest.mark.skiff_timeout(600)
def test_skiff_writes_no_record_of_connects_keys(tmp_path, kafka, topic, connect):
    """skiff, with its offset file beside the topic, runs its connector;
    Connect's connector ships a file and is stopped; skiff restarts. Connect's
    connector, resumed with lines appended, ships only those (before: skiff's
    first flush after the restart wrote a tombstone for every key its file
    lacked, Connect's among them, and Connect sent the whole file again)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    harness.create_topic(kafka.bootstrap, topic + "-skiff", partitions=1)
    cname = f"conn-{uuid.uuid4().hex[:6]}"
    src = Lines(tmp_path / "app.log", "ascii")
    sk = skiff_for(tmp_path, kafka, connect, "mine-" + cname, src, topic + "-skiff")
    src.append(10)
    skiff_ships(sk, kafka, src, topic + "-skiff", src.n, "mine-" + cname)
    csrc = Lines(tmp_path / "connect.log", "ascii")
    csrc.append(1000)
    connect_ships(connect, kafka, cname, csrc, topic, 1000, csrc.chars(0, 1000))
    src.append(10)
    skiff_ships(sk, kafka, src, topic + "-skiff", src.n, "mine-" + cname)
    csrc.append(10)
    connect_ships(connect, kafka, cname, csrc, topic, 1010, csrc.chars(0, 1010))
    assert_shipped_once(kafka, topic, csrc)


@pytest.mark.skiff_timeout(600)
def test_connect_tool_edit_wins_over_kept_file(tmp_path, kafka, topic, connect):
    """Connect's own offsets tool (KIP-875, on a connector created STOPPED in
    Connect) rewinds skiff's connector on the shared topic, then resets it,
    while skiff is stopped with its state directory kept. Each edit is the
    key's newest record and wins over the older position in skiff's file:
    skiff resumes at the rewound line, then after the reset from the start
    (before: records without skiff's header counted only when there was no
    file, and both edits were ignored)."""
    name = f"tool-{uuid.uuid4().hex[:6]}"
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = Lines(tmp_path / "app.log", "ascii")
    sk = skiff_for(tmp_path, kafka, connect, name, src, topic)
    src.append(300)
    skiff_ships(sk, kafka, src, topic, 300, name)
    path = "/connectors/" + urllib.parse.quote(name)
    st, body = connect.rest("POST", "/connectors", {
        "name": name, "initial_state": "STOPPED", "config": {
            "connector.class": "FileStreamSource", "tasks.max": "1", "file": str(src.path),
            "topic": topic}})
    assert st == 201, body
    connectjvm.wait_for(lambda: connector_state(connect, name) == "STOPPED", 60, "STOPPED")
    st, body = connect.rest("PATCH", path + "/offsets", {"offsets": [{
        "partition": {"filename": str(src.path)}, "offset": {"position": src.bytes_to(100)}}]})
    assert st == 200, body
    src.append(50)
    skiff_ships(sk, kafka, src, topic, 300 + 250, name)
    st, body = connect.rest("DELETE", path + "/offsets")
    assert st == 200, body
    src.append(50)
    skiff_ships(sk, kafka, src, topic, 550 + 400, name)
    got = [r["value"].decode() for r in harness.consume(kafka.bootstrap, topic)]
    want = ([line("ascii", i) for i in range(300)] + [line("ascii", i) for i in range(100, 350)]
            + [line("ascii", i) for i in range(400)])
    assert got == want, (f"{len(got)} records, {len(want)} wanted; first of the rewind: "
                         f"{got[300:301]}, first after the reset: {got[550:551]}")
