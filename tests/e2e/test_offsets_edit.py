"""Operators edit a file connector's offsets (issue 24, items 6-8;
docs/offsets.md "Editing an offset"): through REST (GET, change position,
PATCH the body back) or `skiff offsets set`. The position set is taken in
the file the partition names, or in the rotated file the stored offset's
identity names; what the CLI refuses REST refuses too; a document the store
could not keep as sent (a name with \\u0000, one partition twice) is refused
whole. Lines are numbered (faultlib.SeqSource, WIDTH bytes each) and the
topic is read back exactly."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
import pytest  # noqa: E402
import restlib  # noqa: E402

W = fl.WIDTH
NAME = "app"
BASE = f"/connectors/{NAME}"


def offsets_cmd(sk, *args, stdin=None):
    r = subprocess.run([str(harness.skiff_bin()), "offsets", *map(str, args),
                        str(sk.worker_file), *map(str, sk.connector_files)],
                       input=stdin, capture_output=True, text=True, timeout=120)
    return r.returncode, r.stdout, r.stderr


def counter(sk, name):
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", sk.log_text())]
    return max(vals) if vals else 0


def rest_skiff(tmp_path, bootstrap, topic, src):
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    props = fl.worker_props(bootstrap, state, listeners=f"http://127.0.0.1:{port}")
    sk = harness.Skiff(tmp_path, props, [fl.file_connector(NAME, src.path, topic)]).start()
    restlib.wait_up(port)
    return sk, port


def req(port, method, path, body=None):
    r = restlib.request(port, method, path, body)
    return r.status, r.json


def rest_shipped_then_stopped(tmp_path, kafka, topic, lines):
    """A skiff with the REST API whose connector shipped app.log's `lines`
    lines and was STOPPED over REST. Returns (sk, port, src)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(lines)
    sk, port = rest_skiff(tmp_path, kafka.bootstrap, topic, src)
    fl.read_topic(kafka.bootstrap, topic, lines)
    stop_connector(port)
    return sk, port, src


def stop_connector(port):
    assert req(port, "PUT", BASE + "/stop")[0] == 204
    restlib.wait_for(lambda: req(port, "GET", BASE + "/status")[1]["connector"]["state"] ==
                     "STOPPED", what="STOPPED")


def test_rest_round_trip_with_a_new_position(tmp_path, kafka, topic):
    """Item 6: GET, change position, PATCH the body back. The body still
    carries skiff's "tail" (a hash of the bytes before the old position):
    on main it no longer matched at resume, the file was taken as truncated
    and read again from 0. Now the rewind re-sends exactly the lines after
    the position set. A position past the end or inside a line is refused
    as the CLI refuses it (500: the connector's refusal, as Connect answers
    its FileStreamSourceConnector's), and nothing is stored."""
    sk, port, src = rest_shipped_then_stopped(tmp_path, kafka, topic, 3000)
    st, doc = req(port, "GET", BASE + "/offsets")
    assert st == 200 and doc["offsets"][0]["offset"]["position"] == 3000 * W, doc
    assert "tail" in doc["offsets"][0]["offset"], doc  # what made main re-read

    doc["offsets"][0]["offset"]["position"] = 1000 * W
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 200, j
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    src.append(100)
    seqs = fl.read_topic(kafka.bootstrap, topic, 3000 + 2100)
    assert seqs[3000:] == list(range(1000, 3100)), fl.runs_of(seqs[3000:])[:5]
    restlib.wait_for(lambda: fl.peek_line(tmp_path / "state" / "offsets", NAME, src.path) ==
                     3100, what="the offset after line 3099")
    for c in ("truncations", "files_gone_unread", "fingerprint_resets"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])

    stop_connector(port)
    st, doc = req(port, "GET", BASE + "/offsets")
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    for pos, words in [(3101 * W, [str(3100 * W), str(3101 * W)]),
                       (1000 * W + 5, [str(1000 * W + 5), str(1000 * W), str(1001 * W)])]:
        bad = json.loads(json.dumps(doc))
        bad["offsets"][0]["offset"]["position"] = pos
        st, j = req(port, "PATCH", BASE + "/offsets", bad)
        assert st == 500 and str(src.path) in j["message"] and \
            all(w in j["message"] for w in words), (pos, st, j)
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    assert sk.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 5100


def shipped_then_stopped(tmp_path, kafka, topic, lines):
    """A skiff that shipped app.log's `lines` lines and stopped with its
    offset there. Returns (sk, src, state)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(lines)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector(NAME, src.path, topic)])
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, lines)
    fl.wait_for(lambda: fl.peek_line(state / "offsets", NAME, src.path) == lines, 30,
                f"the offset at line {lines}")
    assert sk.stop() == 0
    return sk, src, state


def rotated_while_stopped(tmp_path, kafka, topic, compress=False):
    """Stopped at line 1000; the app wrote 1000-1499 and rotated; the new
    app.log holds 1500-2999 (issue 24, item 7). Returns (sk, src)."""
    sk, src, state = shipped_then_stopped(tmp_path, kafka, topic, 1000)
    src.append(500)
    os.rename(src.path, str(src.path) + ".1")
    if compress:
        with open(str(src.path) + ".1", "rb") as f, gzip.open(str(src.path) + ".1.gz",
                                                              "wb") as z:
            shutil.copyfileobj(f, z)
        os.unlink(str(src.path) + ".1")
    src.append(1500)
    return sk, src


def test_set_on_a_rotated_file_applies_to_it(tmp_path, kafka, topic):
    """Item 7: `set {"position":N}` after the file rotated: main took N in
    the new app.log (the identity of the stored offset dropped) and lost
    lines 1000-2499 without a word. The position is taken in app.log.1,
    the file the stored offset names: rewound to line 900, lines 900-2999
    follow, none lost."""
    sk, src = rotated_while_stopped(tmp_path, kafka, topic)
    doc = {"offsets": [{"partition": {"filename": str(src.path)},
                        "offset": {"position": 900 * W}}]}
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))
    assert rc == 0, err
    sk.start()
    fl.wait_for(lambda: fl.peek_line(tmp_path / "state" / "offsets", NAME, src.path) == 1500,
                60, "the offset at the end of app.log")
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
    assert seqs[1000:] == list(range(900, 3000)), fl.runs_of(seqs[1000:])[:5]
    assert str(src.path) + ".1" in err, err  # says which file the position is in
    for c in ("truncations", "files_gone_unread", "fingerprint_resets"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])


def test_set_in_a_rotated_compressed_file_is_checked_in_its_bytes(tmp_path, kafka, topic):
    """Item 7, the stored offset's file compressed since (app.log.1.gz,
    1,500 lines): a new position is checked in its uncompressed bytes as in
    a plain file (i24-ops refused every position in it, "cannot be
    checked"; main took it in the new app.log and lost lines). Past its end
    and inside a line: refused naming app.log.1.gz and the numbers, nothing
    stored. At the start of line 900: stored, and skiff resumes there
    exactly: lines 900-2999 follow (900-1499 from the .gz), nothing before,
    none lost."""
    sk, src = rotated_while_stopped(tmp_path, kafka, topic, compress=True)
    gz = str(src.path) + ".1.gz"
    before = offsets_cmd(sk, "list")[1]

    def set_pos(pos):
        doc = {"offsets": [{"partition": {"filename": str(src.path)},
                            "offset": {"position": pos}}]}
        return offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))

    for pos, words in [(1501 * W, [f"holds {1500 * W} uncompressed bytes", str(1501 * W)]),
                       (900 * W + 5, [str(900 * W + 5), f"starts at byte {900 * W}",
                                      f"next at byte {901 * W}"])]:
        rc, out, err = set_pos(pos)
        assert rc == 78 and gz in err and all(w in err for w in words), (pos, rc, err)
        assert offsets_cmd(sk, "list")[1] == before
    rc, out, err = set_pos(900 * W)
    assert rc == 0 and gz in err, (rc, err)  # says which file the position is in
    sk.start()
    fl.wait_for(lambda: fl.peek_line(tmp_path / "state" / "offsets", NAME, src.path) == 1500,
                60, "the offset at the end of app.log")
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
    assert seqs[1000:] == list(range(900, 3000)), fl.runs_of(seqs[1000:])[:5]
    for c in ("truncations", "files_gone_unread", "fingerprint_resets", "compressed_cut_short"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])


@pytest.mark.parametrize("cut", ["half", "header"])
def test_set_in_a_damaged_compressed_file(tmp_path, kafka, topic, cut):
    """The stored offset's file compressed since into an app.log.1.gz cut
    short: half of it (its first bytes still tell it is the offset's file,
    the stream fails its check before the position) or all but its header
    (not one byte decodes: found as resuming finds it, the oldest .gz
    compressed since). A new position cannot be checked in it and is
    refused naming it (i24-ops: refused as any .gz for half; for header
    taken in the new app.log, where it skips lines 1500-2399 unasked). The
    stored position sent back alone, Connect's way, is what skiff does
    unasked: accepted, the stored offset kept as it is (i24-ops refused it
    for half, and for header stored the bare position, which then meant the
    new app.log)."""
    sk, src = rotated_while_stopped(tmp_path, kafka, topic, compress=True)
    gz = str(src.path) + ".1.gz"
    with open(gz, "r+b") as f:
        f.truncate(os.path.getsize(gz) // 2 if cut == "half" else 10)
    before = offsets_cmd(sk, "list")[1]

    def set_pos(pos):
        doc = {"offsets": [{"partition": {"filename": str(src.path)},
                            "offset": {"position": pos}}]}
        return offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))

    rc, out, err = set_pos(900 * W)
    assert rc == 78 and gz in err and \
        ("cannot be read" if cut == "half" else "cannot be decoded") in err, (rc, err)
    assert offsets_cmd(sk, "list")[1] == before
    rc, out, err = set_pos(1000 * W)
    assert rc == 0, (rc, err)
    assert offsets_cmd(sk, "list")[1] == before


def test_rest_decodes_a_bounded_part_of_a_compressed_file(tmp_path, kafka, topic):
    """A REST request is answered on skiff's main loop, so PATCH decodes at
    most 64 MiB of a .gz to check a position: further in, refused (500)
    naming `skiff offsets set`, which checks it whole while skiff is
    stopped. Stopped at line 1000; 2,200,000 lines more (70 MB) written,
    the file rotated and compressed (app.log.1.gz): a position at line
    1,500 is taken in the .gz over REST; one at line 2,150,000 (68.8 MB
    in) is refused over REST and taken by `set` (i24-ops refused both, as
    any position in a .gz, "cannot be checked")."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    sk, port = rest_skiff(tmp_path, kafka.bootstrap, topic, src)
    fl.read_topic(kafka.bootstrap, topic, 1000)
    restlib.wait_for(lambda: fl.peek_line(tmp_path / "state" / "offsets", NAME, src.path) ==
                     1000, what="the offset after line 999")
    stop_connector(port)
    for _ in range(11):
        src.append(200000)
    plain, gz = str(src.path) + ".1", str(src.path) + ".1.gz"
    os.rename(src.path, plain)
    with open(plain, "rb") as f, gzip.open(gz, "wb", compresslevel=1) as z:
        shutil.copyfileobj(f, z)
    os.unlink(plain)
    src.append(10)

    def body(line):
        return {"offsets": [{"partition": {"filename": str(src.path)},
                             "offset": {"position": line * W}}]}

    st, j = req(port, "PATCH", BASE + "/offsets", body(2150000))
    assert st == 500 and gz in j["message"] and "skiff offsets set" in j["message"], (st, j)
    st, j = req(port, "PATCH", BASE + "/offsets", body(1500))
    assert st == 200, (st, j)
    off = req(port, "GET", BASE + "/offsets")[1]["offsets"][0]["offset"]
    assert off["position"] == 1500 * W and off["ino"] == os.stat(gz).st_ino, off
    assert sk.stop() == 0
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(body(2150000)))
    assert rc == 0 and gz in err, (rc, err)
    off = json.loads(offsets_cmd(sk, "list")[1])["offsets"][0]["offset"]
    assert off["position"] == 2150000 * W and off["ino"] == os.stat(gz).st_ino, off


def test_cli_refuses_what_it_cannot_store_as_meant(tmp_path):
    """Item 8: a filename with \\u0000 (main stored it for app.log), one
    partition twice (main: the last won), a position inside a line (main:
    the next start shipped a fragment as a record), an import of a missing
    file (main: 75, "try again"): each refused with exit 78, the reason on
    stderr, nothing stored."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props("127.0.0.1:9", state),
                       [fl.file_connector(NAME, src.path, "t")])

    def entry(name, pos):
        return {"partition": {"filename": name}, "offset": {"position": pos}}

    cases = [
        ([entry(str(src.path) + "\u0000.x", W)], ["\\u0000"]),
        ([entry(str(src.path), W), entry(str(src.path), 2 * W)], ["twice", str(src.path)]),
        ([entry(str(src.path), 3 * W + 7)], [str(3 * W + 7), str(3 * W), str(4 * W)]),
    ]
    for entries, words in cases:
        rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps({"offsets": entries}))
        assert rc == 78 and all(w in err for w in words), (entries, rc, err)
        assert json.loads(offsets_cmd(sk, "list")[1]) == {"offsets": []}
    rc, out, err = offsets_cmd(sk, "import", tmp_path / "no-such.offsets")
    assert rc == 78 and "no-such.offsets" in err, (rc, err)


def test_rest_refuses_what_it_cannot_store_as_meant(tmp_path, kafka, topic):
    """Item 8 over REST: \\u0000 in a name and one partition twice are a bad
    request body (400, the reason; Connect 3.9.1 stores both, the last of
    the two winning), nothing stored."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    sk, port = rest_skiff(tmp_path, kafka.bootstrap, topic, src)
    fl.read_topic(kafka.bootstrap, topic, 10)
    stop_connector(port)
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    for body, word in [
        ({"offsets": [{"partition": {"filename": str(src.path) + "\u0000.x"},
                       "offset": {"position": W}}]}, "\\u0000"),
        ({"offsets": [{"partition": {"filename": str(src.path)}, "offset": {"position": W}},
                      {"partition": {"filename": str(src.path)}, "offset": None}]}, "twice"),
    ]:
        st, j = req(port, "PATCH", BASE + "/offsets", body)
        assert st == 400 and word in j["message"], (body, st, j)
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    assert sk.stop() == 0


def test_set_force_inside_a_line_resumes_there(tmp_path, kafka, topic):
    """Hostile finding: `set --force` of a position inside a line, the body
    read with `list` (it carries the old position's "tail"), stored it as
    sent: at the start the tail no longer matched, the file was taken as
    truncated and all 3,000 lines were sent again. Forced, the offset is
    stored with the file's identity at that position: the rest of line
    1,000 (what --force asks for), then lines 1,001 on, nothing again."""
    sk, src, state = shipped_then_stopped(tmp_path, kafka, topic, 3000)
    rc, out, err = offsets_cmd(sk, "list")
    doc = json.loads(out)
    assert "tail" in doc["offsets"][0]["offset"], doc
    doc["offsets"][0]["offset"]["position"] = 1000 * W + 3
    rc, out, err = offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))
    assert rc == 78 and str(1000 * W + 3) in err, (rc, err)
    rc, out, err = offsets_cmd(sk, "set", "--force", "-", stdin=json.dumps(doc))
    assert rc == 0 and "inside a line" in err, (rc, err)
    sk.start()
    src.append(10)
    recs = harness.consume(kafka.bootstrap, topic, n=3000 + 2010, timeout=60)
    after = [r["value"] for r in recs[3000:]]
    assert after[0] == fl.seq_line(1000)[3:], after[:3]
    assert fl.seqs_of(recs[3001:]) == list(range(1001, 3010)), \
        fl.runs_of(fl.seqs_of(recs[3001:]))[:5]
    fl.wait_for(lambda: fl.peek_line(state / "offsets", NAME, src.path) == 3010, 30,
                "the offset after line 3009")
    assert sk.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 3000 + 2010
    for c in ("truncations", "files_gone_unread", "fingerprint_resets"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])


def test_rest_partition_members_in_another_order_and_twice(tmp_path, kafka, topic):
    """Hostile findings: an SQLite partition sent as {"table","protocol"}
    (a script's own dict; Connect compares partitions as maps) was answered
    200 and stored under a second key the connector never reads: the
    rewind did nothing (0 rows again) and GET showed the table twice. It is
    now the connector's partition: rows 801-1000 again, exactly, one entry.
    A member named twice in an offset ({"position":A,"position":B}: skiff
    read A, GET's readers B) is a bad request (400), nothing stored."""
    import sqlite3
    db = tmp_path / "app.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE r (id INTEGER PRIMARY KEY, v TEXT)")
    con.executemany("INSERT INTO r VALUES (?, ?)", [(i, f"row{i}") for i in range(1, 1001)])
    con.commit()
    con.close()
    harness.create_topic(kafka.bootstrap, topic + "r", partitions=1)
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 listeners=f"http://127.0.0.1:{port}"),
                       [{"name": NAME, "connector.class": "JdbcSourceConnector",
                         "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
                         "table.whitelist": "r", "topic.prefix": topic,
                         "poll.interval.ms": "200"}]).start()
    restlib.wait_up(port)
    harness.consume(kafka.bootstrap, topic + "r", n=1000, timeout=60)
    stop_connector(port)
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    st, j = req(port, "PATCH", BASE + "/offsets", raw_body(
        '{"offsets":[{"partition":{"protocol":"1","table":"r"},'
        '"offset":{"incrementing":800,"incrementing":1000}}]}'))
    assert st == 400 and "twice" in j["message"] and "incrementing" in j["message"], (st, j)
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    body = {"offsets": [{"partition": {"table": "r", "protocol": "1"},
                         "offset": {"incrementing": 800}}]}
    st, j = req(port, "PATCH", BASE + "/offsets", body)
    assert st == 200, j
    st, doc = req(port, "GET", BASE + "/offsets")
    assert doc == {"offsets": [{"partition": {"protocol": "1", "table": "r"},
                                "offset": {"incrementing": 800}}]}, doc
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    recs = harness.consume(kafka.bootstrap, topic + "r", n=1200, timeout=60)
    time.sleep(1)
    recs = harness.consume(kafka.bootstrap, topic + "r")
    assert sk.stop() == 0
    ids = [int(re.search(rb"row(\d+)", r["value"]).group(1)) for r in recs]
    assert ids[1000:] == list(range(801, 1001)), (len(ids), fl.runs_of(ids[1000:])[:5])


def raw_body(text):
    return text.encode()


def test_rest_positions_around_a_carriage_return(tmp_path, kafka, topic):
    """Hostile findings: lines ending "\\r\\n", the last one's "\\n" not
    written yet. A position after the "\\r" that ends the file was accepted
    (200); when the "\\n" came, skiff sent an empty record, a line the file
    does not hold. A position between "\\r" and "\\n" was refused naming
    itself as its line's start ("that line starts at byte 59"). Now both are
    refused with the line's real start, nothing stored, and the resume
    sends exactly the lines after the stored offset."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    path = tmp_path / "app.log"
    path.write_bytes(b"".join(b"line%04d\r\n" % i for i in range(10))[:-1])  # 10 bytes a line
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 listeners=f"http://127.0.0.1:{port}"),
                       [fl.file_connector(NAME, path, topic)]).start()
    restlib.wait_up(port)
    harness.consume(kafka.bootstrap, topic, n=9, timeout=60)
    stop_connector(port)
    st, doc = req(port, "GET", BASE + "/offsets")
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    for pos, words in [(59, ["59", "byte 50", "byte 60"]), (99, ["99", "byte 90", "\\r"])]:
        doc["offsets"][0]["offset"]["position"] = pos
        st, j = req(port, "PATCH", BASE + "/offsets", doc)
        assert st == 500 and all(w in j["message"] for w in words), (pos, st, j)
        assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    with open(path, "ab") as f:
        f.write(b"\nline0010\r\n")
    harness.consume(kafka.bootstrap, topic, n=11, timeout=60)
    time.sleep(1)
    values = [r["value"] for r in harness.consume(kafka.bootstrap, topic)]
    assert sk.stop() == 0
    assert values == [b"line%04d" % i for i in range(11)], values


def test_set_in_a_compressed_file_around_a_carriage_return(tmp_path, kafka, topic):
    """The merge of h24b's line-end rules with main's decoded .gz: lines
    ending "\\r\\n" read to line 10; the app wrote lines 10-19 and
    "line0020\\r" (its "\\n" never came), rotated, and the rotated file was
    compressed (app.log.1.gz); the new app.log holds lines 21-29. In the
    .gz, as in a plain file, a position between "\\r" and "\\n" is refused
    naming its line's real start, and one before the "\\r" naming where the
    next line starts; the position after the "\\r" that ends the .gz ends
    a line (the file is written no more, tailfile ends the line there) and
    is stored: skiff resumes with line 21, no empty record, nothing lost."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    path = tmp_path / "app.log"
    path.write_bytes(b"".join(b"line%04d\r\n" % i for i in range(10)))  # 10 bytes a line
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector(NAME, path, topic)])
    sk.start()
    harness.consume(kafka.bootstrap, topic, n=10, timeout=60)
    import offsetfile

    def stored():
        if not (state / "offsets").exists():
            return None
        return offsetfile.load(state / "offsets").get(fl.file_key(NAME, path))

    fl.wait_for(lambda: (stored() or {}).get("position") == 100, 30, "the offset at line 10")
    assert sk.stop() == 0
    with open(path, "ab") as f:
        f.write(b"".join(b"line%04d\r\n" % i for i in range(10, 20)) + b"line0020\r")
    gz = str(path) + ".1.gz"
    with open(path, "rb") as f, gzip.open(gz, "wb") as z:
        shutil.copyfileobj(f, z)
    os.unlink(path)
    path.write_bytes(b"".join(b"line%04d\r\n" % i for i in range(21, 30)))
    before = offsets_cmd(sk, "list")[1]

    def set_pos(pos):
        doc = {"offsets": [{"partition": {"filename": str(path)},
                            "offset": {"position": pos}}]}
        return offsets_cmd(sk, "set", "-", stdin=json.dumps(doc))

    for pos, words in [(159, ["159", "starts at byte 150", "next at byte 160",
                              "uncompressed bytes"]),
                       (208, ["208", "starts at byte 200", "next at byte 209"])]:
        rc, out, err = set_pos(pos)
        assert rc == 78 and gz in err and all(w in err for w in words), (pos, rc, err)
        assert offsets_cmd(sk, "list")[1] == before
    rc, out, err = set_pos(209)
    assert rc == 0 and gz in err, (rc, err)  # says which file the position is in
    sk.start()
    harness.consume(kafka.bootstrap, topic, n=19, timeout=60)
    time.sleep(1)
    values = [r["value"] for r in harness.consume(kafka.bootstrap, topic)]
    assert sk.stop() == 0
    assert values == [b"line%04d" % i for i in [*range(10), *range(21, 30)]], values
    for c in ("truncations", "files_gone_unread", "fingerprint_resets", "compressed_cut_short"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])


def test_rest_position_0_for_a_file_gone(tmp_path, kafka, topic):
    """Hostile finding: app.log read whole (3,000 lines) and deleted while
    the connector was STOPPED; the body GET → position 0 → PATCH (what a
    person does to have the next app.log read from its start) kept the gone
    file's identity, and the resume counted files_gone_unread=1 ("whatever
    it held after byte 0 was not read") though every line had been sent;
    {"position":0} alone counted it too, as "inode 0". Position 0 of a file
    not there is stored alone and counts nothing: the new app.log's 100
    lines follow, exactly."""
    sk, port, src = rest_shipped_then_stopped(tmp_path, kafka, topic, 3000)
    os.unlink(src.path)
    st, doc = req(port, "GET", BASE + "/offsets")
    doc["offsets"][0]["offset"]["position"] = 0
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 200, j
    assert req(port, "GET", BASE + "/offsets")[1]["offsets"][0]["offset"] == {"position": 0}
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    time.sleep(1)
    src.append(100)
    seqs = fl.read_topic(kafka.bootstrap, topic, 3100)
    time.sleep(1)
    assert sk.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 3100
    assert seqs[3000:] == list(range(3000, 3100)), fl.runs_of(seqs[3000:])[:5]
    for c in ("truncations", "files_gone_unread", "fingerprint_resets"):
        assert counter(sk, c) == 0, (c, sk.log_text()[-2000:])


def test_rest_inside_a_line_longer_than_the_look(tmp_path, kafka, topic):
    """Hostile finding: inside a 200,000-byte line the refusal said "that
    line starts at byte -1, the next is not written yet: -1", though the
    next line was there: the line ends are looked for 64 KiB either side.
    It now says how far it looked, and "not written yet" only where the
    file ends first."""
    path = tmp_path / "app.log"
    path.write_bytes(b"short0\n" + b"x" * 200000 + b"\nshort2\npartial")
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 listeners=f"http://127.0.0.1:{port}"),
                       [fl.file_connector(NAME, path, topic, max__line__bytes=300000)]).start()
    restlib.wait_up(port)
    harness.consume(kafka.bootstrap, topic, n=3, timeout=60)
    stop_connector(port)
    st, doc = req(port, "GET", BASE + "/offsets")
    for pos, words in [(100007, ["100007", "more than 65536 bytes before it",
                                 "more than 65536 bytes after it"]),
                       (12, ["byte 7", "more than 65536 bytes after it"]),
                       (199997, ["more than 65536 bytes before it", "byte 200008"]),
                       (200017, ["byte 200015", "not written yet"])]:
        doc["offsets"][0]["offset"]["position"] = pos
        st, j = req(port, "PATCH", BASE + "/offsets", doc)
        assert st == 500 and all(w in j["message"] for w in words) and \
            "-1" not in j["message"], (pos, st, j)
    assert sk.stop() == 0


def test_rest_position_in_a_file_rotated_and_deleted_since(tmp_path, kafka, topic):
    """Hostile finding: stopped at line 3,000; the app wrote 3,000-3,499,
    rotated, deleted app.log.1 (logrotate's rotate 0); the new app.log holds
    3,500-3,999. GET → position of line 100 (a rewind) → PATCH: answered 200,
    the position taken in the new app.log, whose first 100 lines (3,500-
    3,599) were never sent, and the deleted file no longer counted in
    files_gone_unread: the rewind sent less than no edit. The file the
    offset names being gone, the PATCH is refused naming it (500), nothing
    stored; skiff then counts the gone file and reads the new one whole."""
    sk, port, src = rest_shipped_then_stopped(tmp_path, kafka, topic, 3000)
    src.append(500)
    os.rename(src.path, str(src.path) + ".1")
    new = fl.SeqSource(src.path)
    new.next = 3500
    new.append(500)
    os.unlink(str(src.path) + ".1")
    st, doc = req(port, "GET", BASE + "/offsets")
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    ino = doc["offsets"][0]["offset"]["ino"]
    doc["offsets"][0]["offset"]["position"] = 100 * W
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 500 and str(src.path) in j["message"] and str(ino) in j["message"] and \
        str(100 * W) in j["message"], (st, j)
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    seqs = fl.read_topic(kafka.bootstrap, topic, 3500)
    time.sleep(1)
    assert sk.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 3500
    assert seqs[3000:] == list(range(3500, 4000)), fl.runs_of(seqs[3000:])[:5]
    assert counter(sk, "files_gone_unread") == 1, sk.log_text()[-2000:]


def test_rest_sqlite_new_timestamp_keeps_its_sub_second(tmp_path, kafka, topic):
    """Hostile finding: mode=timestamp, rows 1-1000 stamped T0 + 10 ms * i
    (T0 at .900 s). GET gives {"timestamp_nanos":900000000,"timestamp":..};
    a script changes "timestamp" to row 451's (.410 s) and PATCHes the body
    back: the nanos replace the second's fraction (the JDBC connector's
    Timestamp.setNanos), so skiff read from .900, and rows 452-500 (asked
    for again) never came. The nanos are refreshed from the new timestamp:
    rows 452-1000 again, exactly."""
    import sqlite3
    t0 = 1_700_000_000_900
    db = tmp_path / "app.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE r (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, v TEXT)")
    con.executemany("INSERT INTO r VALUES (?, ?, ?)",
                    [(i, t0 + 10 * i, f"row{i}") for i in range(1, 1001)])
    con.commit()
    con.close()
    harness.create_topic(kafka.bootstrap, topic + "r", partitions=1)
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 listeners=f"http://127.0.0.1:{port}"),
                       [{"name": NAME, "connector.class": "JdbcSourceConnector",
                         "connection.url": f"jdbc:sqlite:{db}", "mode": "timestamp",
                         "timestamp.column.name": "ts", "table.whitelist": "r",
                         "topic.prefix": topic, "poll.interval.ms": "200"}]).start()
    restlib.wait_up(port)
    harness.consume(kafka.bootstrap, topic + "r", n=1000, timeout=60)
    stop_connector(port)
    st, doc = req(port, "GET", BASE + "/offsets")
    off = doc["offsets"][0]["offset"]
    # skiff's rowid_seen beside Connect's members (the largest rowid looked
    # at, source-sqlite.md): kept as sent, only the nanos are refreshed
    assert off == {"timestamp_nanos": 900_000_000, "timestamp": t0 + 10_000,
                   "rowid_seen": 1000}, off
    off["timestamp"] = t0 + 10 * 451
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 200, j
    assert req(port, "GET", BASE + "/offsets")[1]["offsets"][0]["offset"] == \
        {"timestamp_nanos": 410_000_000, "timestamp": t0 + 10 * 451, "rowid_seen": 1000}
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    harness.consume(kafka.bootstrap, topic + "r", n=1000 + 549, timeout=60)
    time.sleep(1.5)
    recs = harness.consume(kafka.bootstrap, topic + "r")
    assert sk.stop() == 0
    ids = [int(re.search(rb"row(\d+)", r["value"]).group(1)) for r in recs]
    assert ids[1000:] == list(range(452, 1001)), (len(ids), fl.runs_of(ids[1000:])[:5])


def test_rest_round_trip_of_a_glob_file_let_go(tmp_path, kafka, topic):
    """Under a glob, app.log (3,000 lines, all sent) is deleted while skiff
    is stopped; the next start counts it once and its stop stores the
    offset as let go ("finished":1, issue 27). That offset goes through an
    operator's round trip: `skiff offsets list` shows it, and `set` of
    that list changes nothing; GET → PATCH of the same body is answered
    200 and changes nothing; a position past 0 in the gone file is refused
    (500, naming it), nothing stored; GET → position 0 → PATCH (read the
    next app.log from its start) stores the position alone, and the new
    app.log's 100 lines follow, exactly, nothing counted."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    logs = tmp_path / "logs"
    logs.mkdir()
    src = fl.SeqSource(logs / "app.log")
    src.append(3000)
    port = restlib.free_port()
    state = tmp_path / "state"
    state.mkdir()
    props = fl.worker_props(kafka.bootstrap, state, listeners=f"http://127.0.0.1:{port}")
    conn = {"name": NAME, "connector.class": "FileStreamSource", "topic": topic,
            "files": str(logs / "*.log"), "rescan.interval.ms": "200"}
    sk = harness.Skiff(tmp_path, props, [conn]).start()
    fl.read_topic(kafka.bootstrap, topic, 3000)
    time.sleep(1.5)  # the last acknowledgements flushed
    assert sk.stop() == 0
    os.unlink(src.path)
    m = sk.log_mark()
    sk.start()
    sk.wait_log(r"app\.log: the file of the stored offset .* is gone", since=m)
    assert sk.stop() == 0
    rc, out, err = offsets_cmd(sk, "list")
    assert rc == 0 and '"finished":1' in out.replace(" ", ""), (rc, out, err)
    rc, _, err = offsets_cmd(sk, "set", "-", stdin=out)
    assert rc == 0, err
    assert offsets_cmd(sk, "list")[1] == out
    m = sk.log_mark()
    sk.start()
    restlib.wait_up(port)
    stop_connector(port)
    st, doc = req(port, "GET", BASE + "/offsets")
    assert st == 200 and len(doc["offsets"]) == 1, doc
    assert doc["offsets"][0]["offset"].get("finished") == 1, doc
    before = restlib.request(port, "GET", BASE + "/offsets").raw
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 200, j
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    doc["offsets"][0]["offset"]["position"] = 100 * W
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 500 and str(src.path) in j["message"], (st, j)
    assert restlib.request(port, "GET", BASE + "/offsets").raw == before
    doc["offsets"][0]["offset"]["position"] = 0
    st, j = req(port, "PATCH", BASE + "/offsets", doc)
    assert st == 200, j
    assert req(port, "GET", BASE + "/offsets")[1]["offsets"][0]["offset"] == {"position": 0}
    assert req(port, "PUT", BASE + "/resume")[0] == 202
    time.sleep(1)
    new = fl.SeqSource(src.path)
    new.next = 3000
    new.append(100)
    seqs = fl.read_topic(kafka.bootstrap, topic, 3100)
    time.sleep(1)
    assert sk.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 3100
    assert seqs[3000:] == list(range(3000, 3100)), fl.runs_of(seqs[3000:])[:5]
    text = sk.log_text().encode()[m:].decode(errors="replace")
    assert "is gone" not in text and "files_gone_unread" not in text, text[-2000:]
