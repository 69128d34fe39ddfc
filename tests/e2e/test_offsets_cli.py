"""`skiff offsets list|set|reset|import` (issue 12, docs/offsets.md): round trips on the file and the topic store, refused while a skiff
runs, set with the broker down, and the import of an offsets file a real
Connect 3.9.1 standalone worker wrote (one JVM run: it takes 10-20 s)."""

import json
import os
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
        props.update({"offset.storage.topic": topic + "-offsets", "device.id": "test-device",
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


def utf16_line(i):
    """Line i: a number, then é, an emoji (two Java chars) or CJK."""
    return f"{i:04d} " + ("café au lait", "ship it 🚀🛶", "日本語のログ")[i % 3]


def write_lines(path, lo, hi):
    with open(path, "ab") as f:
        f.write("".join(utf16_line(i) + "\n" for i in range(lo, hi)).encode())


def java_chars(text):
    return len(text.encode("utf-16-le")) // 2


def test_import_counts_java_chars_checks_and_never_moves_back(tmp_path, kafka, topic):
    """Connect's position counts Java chars (UTF-16 units), not bytes: over
    lines with é, emoji and CJK, skiff resumes after Connect's last line, with
    exactly the appended lines. Then: an entry the file source would refuse
    (a flipped byte in "position", a negative position) stores nothing; the
    file gone: refused, naming it; a store already further ahead is not moved
    back without --force."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = tmp_path / "app.log"
    write_lines(src, 0, 60)
    chars = sum(java_chars(utf16_line(i) + "\n") for i in range(60))
    size = src.stat().st_size
    assert chars != size
    cdir = tmp_path / "connect"
    cfile = cdir / "connect.offsets"
    c = connectjvm.Connect(cdir, "standalone", {
        "bootstrap.servers": kafka.bootstrap,
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "offset.storage.file.filename": cfile, "offset.flush.interval.ms": 500},
        [{"name": "imp", "connector.class": "FileStreamSource", "tasks.max": 1,
          "file": src, "topic": topic + "-connect"}])
    want = f'{{"position":{chars}}}'.encode()
    try:
        connectjvm.wait_for(lambda: cfile.exists() and want in cfile.read_bytes(), 120,
                            "Connect's offsets file at line 60")
    finally:
        c.stop()
    connect_bytes = cfile.read_bytes()
    assert connect_bytes[:2] == b"\xac\xed"  # Java serialization
    write_lines(src, 60, 70)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("imp", src, topic)])
    rc, out, err = offsets_cmd(sk, "import", cfile)
    assert rc == 0 and "imported 1 offsets" in out, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"] == \
        {"position": size}
    sk.start()
    harness.consume(kafka.bootstrap, topic, 10)
    time.sleep(1)  # anything more than the 10 would show now
    assert sk.stop() == 0
    got = [r["value"].decode() for r in harness.consume(kafka.bootstrap, topic)]
    assert got == [utf16_line(i) for i in range(60, 70)]

    # skiff's store is at line 70 now: Connect's line 60 would move it back.
    rc, out, err = offsets_cmd(sk, "import", cfile)
    end = src.stat().st_size
    assert rc == 78 and str(src) in err and str(end) in err and str(size) in err \
        and "--force" in err, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"]["position"] == end
    rc, out, err = offsets_cmd(sk, "import", "--force", cfile)
    assert rc == 0, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"] == \
        {"position": size}

    # Damaged entries, into an empty store: refused, nothing stored.
    state2 = tmp_path / "state2"
    state2.mkdir()
    sk2 = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state2),
                        [fl.file_connector("imp", src, topic)], name="fresh")
    digits = str(chars).encode()
    for bad, says in ((b'"pos\xfftion"', "pos"),
                      (b'"position":-' + digits[1:], "non-negative")):
        damaged = tmp_path / "damaged.offsets"
        damaged.write_bytes(connect_bytes.replace(b'"position":' + digits, bad + b":" + digits
                                                  if bad.endswith(b'tion"') else bad))
        assert damaged.read_bytes() != connect_bytes
        rc, out, err = offsets_cmd(sk2, "import", damaged)
        assert rc == 78 and says in err and "imp" in err, (bad, err)
        assert json.loads(offsets_cmd(sk2, "list")[1]) == {"offsets": []}
    # Another connector's entry: refused; --connector naming a connector the
    # file does not hold (a misspelling) is refused too, naming what it holds.
    damaged.write_bytes(connect_bytes.replace(b'["imp",', b'["imq",'))
    rc, out, err = offsets_cmd(sk2, "import", damaged)
    assert rc == 78 and "'imq' is not in the configuration" in err, err
    rc, out, err = offsets_cmd(sk2, "import", "--connector", "imp", damaged)
    assert rc == 78 and "no offsets of connector 'imp'" in err and "holds offsets of: imq" \
        in err and "nothing written" in err, (rc, out, err)
    assert json.loads(offsets_cmd(sk2, "list")[1]) == {"offsets": []}
    src.rename(tmp_path / "away.log")
    rc, out, err = offsets_cmd(sk2, "import", cfile)
    assert rc == 78 and str(src) in err, err
    assert json.loads(offsets_cmd(sk2, "list")[1]) == {"offsets": []}


def test_set_offline_beside_the_topic(tmp_path, kafka, topic):
    """set with the file and the topic, the broker unreachable: the file takes
    it (exit 0, the topic named as not reached); the next start with the broker
    uses the set position and writes it to the topic. With the topic alone:
    nothing written, exit 75."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    state = tmp_path / "state"
    state.mkdir()
    otopic = topic + "-offsets"
    props = fl.worker_props(kafka.bootstrap, state, offset__storage__topic=otopic,
                            offset__storage__replication__factor=1)
    conn = fl.file_connector("off", src.path, topic)
    sk = harness.Skiff(tmp_path, props, [conn])
    run_until(sk, kafka.bootstrap, topic, 100)
    # Unreachable: read for 10 s (the least), a write given up after 1 s.
    unreachable = {"bootstrap.servers": "127.0.0.1:9", "offset.flush.timeout.ms": "1000"}
    down = harness.Skiff(tmp_path, dict(props, **unreachable), [conn], name="down")
    doc = {"offsets": [{"partition": {"filename": str(src.path)},
                        "offset": {"position": 40 * fl.WIDTH}}]}
    rc, out, err = offsets_cmd(down, "set", "-", stdin=json.dumps(doc))
    assert rc == 0 and "offset.storage.topic" in err and "not written" not in err, err
    seqs = run_until(sk, kafka.bootstrap, topic, 160)
    assert seqs == list(range(100)) + list(range(40, 100))
    key = json.dumps(["off", {"filename": str(src.path)}], separators=(",", ":")).encode()
    last = [r["value"] for r in harness.consume(kafka.bootstrap, otopic) if r["key"] == key][-1]
    assert json.loads(last)["position"] == 100 * fl.WIDTH
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"]["position"] == \
        100 * fl.WIDTH

    alone = dict(props, **unreachable, **{"device.id": "test-device"})
    del alone["offset.storage.file.filename"]
    down2 = harness.Skiff(tmp_path, alone, [conn], name="down2")
    rc, out, err = offsets_cmd(down2, "set", "-", stdin=json.dumps(doc))
    assert rc == 75 and "nothing written" in err, err


def test_set_past_the_end_refused(tmp_path):
    """A position beyond the file's size would read as a truncation (the file
    read again from its start): refused naming the file, its size and the
    position, unless --force."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props("127.0.0.1:9", state),
                       [fl.file_connector("p", src.path, "t")])
    doc = {"offsets": [{"partition": {"filename": str(src.path)},
                        "offset": {"position": 11 * fl.WIDTH}}]}
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))
    assert rc == 78 and str(src.path) in err and str(10 * fl.WIDTH) in err \
        and str(11 * fl.WIDTH) in err and "--force" in err, err
    assert json.loads(offsets_cmd(sk, "list")[1]) == {"offsets": []}
    doc["offsets"][0]["offset"]["position"] = 10 * fl.WIDTH
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))
    assert rc == 0, err
    doc["offsets"][0]["offset"]["position"] = 11 * fl.WIDTH
    rc, out, err = offsets_cmd(sk, "set", "--force", "-", stdin=json.dumps(doc))
    assert rc == 0, err
    assert json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"] == \
        {"position": 11 * fl.WIDTH}


def test_set_offset_of_another_file_checked_against_that_file(tmp_path):
    """Issue 14: an offset skiff writes while it reads a rotated file names
    that file by dev and ino; its position is not checked against the
    (newer, shorter) file at the path. Issue 24 (item 7): it is checked
    against the file it names, where rotation put it (app.log.1), said on
    stderr; past that file's end it is refused naming it. The path's own
    file named: checked, refused past its end."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(20)
    os.rename(src.path, str(src.path) + ".1")
    old = os.stat(str(src.path) + ".1")
    src.append(10)
    new = os.stat(src.path)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props("127.0.0.1:9", state),
                       [fl.file_connector("p", src.path, "t")])

    def doc(st, pos):
        return json.dumps({"offsets": [{"partition": {"filename": str(src.path)},
                                        "offset": {"position": pos, "dev": st.st_dev,
                                                   "ino": st.st_ino}}]})
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(old, 15 * fl.WIDTH))
    assert rc == 0 and f"{src.path}.1" in err, err
    stored = json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"]
    assert (stored["position"], stored["ino"]) == (15 * fl.WIDTH, old.st_ino), stored
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(old, 21 * fl.WIDTH))
    assert rc == 78 and f"{src.path}.1 holds {20 * fl.WIDTH} bytes" in err, err
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(new, 11 * fl.WIDTH))
    assert rc == 78 and str(10 * fl.WIDTH) in err and "--force" in err, err
    os.unlink(src.path)  # the path's file gone: the offset's file is not
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=doc(old, 16 * fl.WIDTH))
    assert rc == 0 and f"{src.path}.1" in err, err
