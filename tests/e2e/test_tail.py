"""The file source's tailing guarantees, end to end against a real broker:
rotations and deletions while skiff is stopped, inode reuse, symlinks, long
and partial lines, raw bytes, globs with 1,000 files, idle cost.

Every test states the loss/duplicate bound it checks; "exact" means the set
of lines in the topic equals the set written and no line appears twice."""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
from harness import Skiff, consume
import offsetfile

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import check_lines, line, number  # noqa: E402

LONG = os.environ.get("SKIFF_PROFILE") == "long"


def worker(tmp_path, kafka, **extra):
    w = {"bootstrap.servers": kafka.bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "200",
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(extra)
    return w


def conn(topic, name="tail", **keys):
    c = {"name": name, "connector.class": "FileStreamSource", "topic": topic,
         "rotate.wait.ms": "500"}
    c.update({k.replace("_", "."): v for k, v in keys.items()})
    return c


def write_lines(path, numbers, tag="w", mode="a"):
    with open(path, mode) as f:
        f.write("".join(line(i, tag) + "\n" for i in numbers))


def values(kafka, topic, n=None, timeout=60):
    return [r["value"] for r in consume(kafka.bootstrap, topic, n=n, timeout=timeout)]


def settle(kafka, topic, sk, want):
    """Waits for want records, lets skiff flush, stops it; returns every value."""
    consume(kafka.bootstrap, topic, n=want, timeout=90)
    time.sleep(0.6)
    assert sk.stop() == 0
    return values(kafka, topic)


def assert_exact(vals, written):
    missing, dups, _, unexpected = check_lines(vals, written)
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not unexpected, f"unexpected records {unexpected[:5]}"
    assert not dups, f"{len(dups)} duplicates, first {dups[:10]}"


def counter(sk, name):
    import re
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", sk.log_text())]
    return max(vals) if vals else 0


# --- rotation while stopped -----------------------------------------------------


@pytest.mark.parametrize("rotations", [3, 12])
def test_rotations_while_stopped(tmp_path, kafka, topic, rotations):
    """app.log is read to line 150 of 200; while skiff is stopped it is
    rotated 3 (or 12: more than a stream holds open at once) times
    (app.log -> .1 -> .2 -> .3 ..., each time a new app.log with 100 lines).
    Bound: exact - the rest of the first file, the files in between and the
    new file, in order, nothing read twice."""
    log = tmp_path / "app.log"
    write_lines(log, range(150))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))])
    sk.start()
    consume(kafka.bootstrap, topic, n=150, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    write_lines(log, range(150, 200))
    n = 200
    for _ in range(rotations):
        for k in range(rotations, 0, -1):
            src = tmp_path / f"app.log.{k}"
            if src.exists():
                src.rename(tmp_path / f"app.log.{k + 1}")
        log.rename(tmp_path / "app.log.1")
        write_lines(log, range(n, n + 100), mode="w")
        n += 100
        time.sleep(0.02)  # distinct birth times, as with real rotations
    sk.start()
    vals = settle(kafka, topic, sk, n)
    assert_exact(vals, n)
    assert [number(v) for v in vals] == list(range(n)), "out of order"
    offs = offsetfile.load(tmp_path / "offsets")
    value = offs[offsetfile.key("tail", {"filename": str(log)})]
    assert value["position"] == log.stat().st_size
    assert value["ino"] == log.stat().st_ino and value["fplen"] == 1024


def test_rotated_without_new_file_while_stopped(tmp_path, kafka, topic):
    """Rotated away while stopped and no new file yet: the rotated file is
    found by inode and finished; the new file, created later, is read.
    Bound: exact."""
    log = tmp_path / "app.log"
    write_lines(log, range(100))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))])
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    write_lines(log, range(100, 130))
    log.rename(tmp_path / "app.log-20260101")
    sk.start()
    consume(kafka.bootstrap, topic, n=130, timeout=60)
    write_lines(log, range(130, 160), mode="w")
    assert_exact(settle(kafka, topic, sk, 160), 160)


def test_deleted_while_stopped(tmp_path, kafka, topic):
    """The file is deleted while skiff is stopped (its unread tail is gone)
    and a new one is created. Bound: the lines of the deleted file after the
    committed offset are lost and counted (files_gone_unread=1); the new
    file is read whole; no duplicates."""
    log = tmp_path / "app.log"
    write_lines(log, range(100))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))])
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    write_lines(log, range(100, 120))  # never read: deleted with the file
    log.unlink()
    write_lines(log, range(120, 170), tag="new", mode="w")
    sk.start()
    vals = settle(kafka, topic, sk, 150)
    missing, dups, _, unexpected = check_lines(vals, 170, lost_ok=set(range(100, 120)))
    assert not missing and not dups and not unexpected
    assert counter(sk, "files_gone_unread") == 1


def test_deleted_while_open_is_finished(tmp_path, kafka, topic):
    """Deleted while skiff reads it, with lines appended after the delete by
    a writer that still holds it: read to its end through the open
    descriptor, then closed. Bound: exact."""
    log = tmp_path / "app.log"
    write_lines(log, range(50))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=50, timeout=60)
    with open(log, "a") as w:
        log.unlink()
        w.write("".join(line(i) + "\n" for i in range(50, 80)))
        w.flush()
        time.sleep(0.2)
        w.write("".join(line(i) + "\n" for i in range(80, 90)))
    assert_exact(settle(kafka, topic, sk, 90), 90)
    assert "finished" in sk.log_text()


# --- identity -----------------------------------------------------------------------


@pytest.fixture
def small_ext4(tmp_path):
    """A 16 MiB ext4 file system on a loop device (ext4 hands a freed inode
    to the next file created); skips when mount is not permitted."""
    img, mnt = tmp_path / "fs.img", tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["truncate", "-s", "16M", str(img)], check=True)
    mkfs = harness.require_tool("mkfs.ext4", "e2fsprogs")
    subprocess.run([mkfs, "-q", "-F", str(img)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = subprocess.run(["mount", "-o", "loop", str(img), str(mnt)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        harness.skip_not_here(f"cannot loop-mount ext4: {r.stdout.decode().strip()}")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_inode_reuse_is_a_new_file(tmp_path, kafka, topic, small_ext4):
    """The file is deleted while skiff is stopped and a new, longer file gets
    the same inode. dev+ino alone would resume the new file at the old
    position and lose its first lines; the fingerprint tells them apart.
    Bound: the old file had nothing unread; the new file is read whole -
    exact, no duplicates."""
    log = small_ext4 / "app.log"
    write_lines(log, range(100), tag="old")
    ino = log.stat().st_ino
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    log.unlink()
    write_lines(log, range(100, 300), tag="new", mode="w")
    assert log.stat().st_ino == ino, "ext4 did not reuse the inode"
    sk.start()
    assert_exact(settle(kafka, topic, sk, 300), 300)
    assert counter(sk, "fingerprint_resets") == 1


def test_symlink_repointed(tmp_path, kafka, topic):
    """The configured path is a symlink; it is re-pointed to another file
    while skiff runs, and the old target still gets a few lines right after.
    Bound: exact - the old target is finished, the new one read from 0."""
    a, b, link = tmp_path / "a.log", tmp_path / "b.log", tmp_path / "current.log"
    write_lines(a, range(100))
    link.symlink_to(a)
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(link))]).start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    write_lines(b, range(120, 200), mode="w")
    tmp = tmp_path / "current.tmp"
    tmp.symlink_to(b)
    tmp.rename(link)  # atomic re-point, as ln -sfn does
    write_lines(a, range(100, 120))
    assert_exact(settle(kafka, topic, sk, 200), 200)


# --- lines ------------------------------------------------------------------------


def test_5mb_line_split_and_truncated(tmp_path, kafka, topic):
    """A 5 MB line between ordinary lines: split into max.line.bytes records
    (split) or cut (truncate); it never stalls the file. Bound: the lines
    around it exact; the long line's records reassemble to it (split) or are
    its first max.line.bytes (truncate); counted."""
    big = b"".join(b"%07d|" % i for i in range(5 * 1024 * 1024 // 8))
    for policy in ("split", "truncate"):
        t = f"{topic}-{policy}"
        log = tmp_path / f"{policy}.log"
        log.write_bytes(b"before\n" + big + b"\nafter\n")
        sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(t, file=str(log),
                                                          max_line_policy=policy)],
                   name=f"sk-{policy}").start()
        n = 2 + (-(-len(big) // 524288) if policy == "split" else 1)
        vals = settle(kafka, t, sk, n)
        assert vals[0] == b"before" and vals[-1] == b"after" and len(vals) == n
        if policy == "split":
            assert b"".join(vals[1:-1]) == big
            assert all(len(v) == 524288 for v in vals[1:-2])
            assert counter(sk, "lines_split") == 1
        else:
            assert vals[1] == big[:524288]
            assert counter(sk, "lines_truncated") == 1


# Lines longer than max.line.bytes=16 with a character across byte 16, and
# the pieces each must arrive as (backed off to the character's first byte).
E4, E3, E2 = "\U0001F600", "\u20ac", "\u00e9"  # 4-, 3- and 2-byte characters
STRADDLE = [
    ("abcdefghijklmn" + E4 + "gh", ["abcdefghijklmn", E4 + "gh"]),      # 2 bytes before
    ("abcdefghijklmno" + E4 + "xyz", ["abcdefghijklmno", E4 + "xyz"]),  # 1 before
    ("abcdefghijklm" + E4 + "z", ["abcdefghijklm", E4 + "z"]),          # 3 before
    ("abcdefghijklmn" + E3 + "tail", ["abcdefghijklmn", E3 + "tail"]),
    ("abcdefghijklmno" + E3 + "tail", ["abcdefghijklmno", E3 + "tail"]),
    ("abcdefghijklmno" + E2 + "x", ["abcdefghijklmno", E2 + "x"]),
    ("abcdefghijkl" + E4 + "rest", ["abcdefghijkl" + E4, "rest"]),     # ends at the cut
    ("a" + E4 * 10, ["a" + E4 * 3, E4 * 4, E4 * 3]),                    # three pieces
]
# Bytes at the cut that are no valid sequence prefix: cut at byte 16 as
# before (what StringConverter makes of each piece, as Java decodes it).
INVALID = [
    (b"abcdefghijklmno\xff\x80\x80abc", ["abcdefghijklmno\ufffd", "\ufffd\ufffdabc"]),
    (b"abcdefghijklmn\xe0\x80\x80zz", ["abcdefghijklmn\ufffd\ufffd", "\ufffdzz"]),
    (b"abcdefghijklm\x80\x80\x80\x80x", ["abcdefghijklm\ufffd\ufffd\ufffd", "\ufffdx"]),
]
STRING = "org.apache.kafka.connect.storage.StringConverter"
JSON = "org.apache.kafka.connect.json.JsonConverter"


def envelope(text):
    """What Connect's JsonConverter (schemas.enable=true) writes for a line:
    Jackson writes a character above U+FFFF as its two escaped surrogates."""
    import json
    payload = json.dumps(text, ensure_ascii=False, separators=(",", ":"))
    payload = "".join(c if ord(c) < 0x10000 else "\\u%04X\\u%04X" % (
        0xD800 + ((ord(c) - 0x10000) >> 10), 0xDC00 + ((ord(c) - 0x10000) & 0x3FF))
        for c in payload)
    return (b'{"schema":{"type":"string","optional":false},"payload":' + payload.encode() + b"}")


def split_conns(topic, log, tag, **keys):
    """One connector per converter over log; their topics."""
    return [conn(f"{topic}-{tag}-s", name=f"{tag}-s", file=str(log), value_converter=STRING,
                 **keys),
            conn(f"{topic}-{tag}-j", name=f"{tag}-j", file=str(log), value_converter=JSON,
                 **keys)]


def assert_pieces(kafka, topic, tag, want):
    """want: the text of each record, in order, through both converters."""
    got_s = values(kafka, f"{topic}-{tag}-s", n=len(want))
    got_j = values(kafka, f"{topic}-{tag}-j", n=len(want))
    assert [v.decode() for v in got_s] == want
    assert got_j == [envelope(t) for t in want]


def test_split_backs_off_to_a_character_start(tmp_path, kafka, topic):
    """max.line.policy=split never cuts inside a well-formed UTF-8 character
    (2, 3 and 4 bytes straddling the cut, at max.line.bytes=16 and at
    524288 in a 600,000-byte line): the cut backs off to the
    character's first byte. Bound: exact records through StringConverter and
    JsonConverter, each piece at most max.line.bytes, the pieces join into
    the line, no U+FFFD anywhere (the log counts no replacement)."""
    small = tmp_path / "small.log"
    small.write_bytes(b"".join(t.encode() + b"\n" for t, _ in STRADDLE) + b"end\n")
    big_line = "x" * 524286 + E4 + "y" * (600000 - 524290)
    big = tmp_path / "big.log"
    big.write_bytes(big_line.encode() + b"\nend\n")
    cs = (split_conns(topic, small, "small", max_line_bytes="16") +
          split_conns(topic, big, "big", max_line_bytes="524288"))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), cs).start()
    want = [p for _, pieces in STRADDLE for p in pieces] + ["end"]
    for text, pieces in STRADDLE:
        assert "".join(pieces) == text and all(len(p.encode()) <= 16 for p in pieces)
    assert_pieces(kafka, topic, "small", want)
    assert_pieces(kafka, topic, "big", ["x" * 524286, E4 + "y" * (600000 - 524290), "end"])
    time.sleep(0.6)
    assert sk.stop() == 0
    assert "converters replaced" not in sk.log_text()


# What a line's bytes can become in one record: JsonConverter writes a
# control character as 6 bytes (\u0001), StringConverter an invalid byte as
# U+FFFD (3); the key, headers and envelope get 16 KiB of message.max.bytes.
def default_limit(per_byte, message_max=1000000):
    return (message_max - 16384) // per_byte


def test_default_limit_fits_the_converted_record(tmp_path, kafka, topic):
    """A line of 524,288 double quotes (JsonConverter makes each 2 bytes) and
    one of 524,288 invalid bytes (StringConverter makes each U+FFFD, 3 bytes)
    at the default limits: before, each became a record over the producer's
    message.max.bytes, the broker refused it, the connector stopped (exit 78)
    and the file stayed stuck before it. Now the default max.line.bytes is
    what surely fits once converted. Bound: exact pieces, joined back into
    the line, and the next line arrives; an explicit max.line.bytes above
    what fits is taken, with a warning naming its line."""
    quotes, bad = tmp_path / "quotes.log", tmp_path / "bad.log"
    quotes.write_bytes(b'"' * 524288 + b"\nafter\n")
    bad.write_bytes(b"\xff" * 524288 + b"\nafter\n")
    plain = tmp_path / "plain.log"
    plain.write_bytes(b"one\n")
    cs = [conn(f"{topic}-q", name="q", file=str(quotes), value_converter=JSON),
          conn(f"{topic}-b", name="b", file=str(bad), value_converter=STRING),
          conn(f"{topic}-p", name="p", file=str(plain), value_converter=JSON,
               max_line_bytes="524288")]
    sk = Skiff(tmp_path, worker(tmp_path, kafka), cs).start()
    jq = default_limit(6)
    want_q = ['"' * jq] * (524288 // jq) + ['"' * (524288 % jq), "after"]
    got_q = values(kafka, f"{topic}-q", n=len(want_q), timeout=90)
    assert got_q == [envelope(t) for t in want_q]
    sb = default_limit(3)
    want_b = ["\ufffd" * sb, "\ufffd" * (524288 - sb), "after"]
    assert [v.decode() for v in values(kafka, f"{topic}-b", n=3, timeout=90)] == want_b
    assert values(kafka, f"{topic}-p", n=1) == [envelope("one")]
    time.sleep(0.6)
    assert sk.stop() == 0
    assert (f"max.line.bytes=524288: a record of that many bytes can be more than the "
            f"producer's message.max.bytes once converted") in sk.log_text()
    assert f"{jq} bytes or fewer always fit" in sk.log_text()


def test_default_limit_fits_a_small_message_max_bytes(tmp_path, kafka, topic):
    """producer.message.max.bytes=10000, everything else default: a line of
    100,000 control bytes (0x01, 6 bytes each in JsonConverter's text) used
    to keep max.line.bytes at 524288 (the 16 KiB of room for key, headers and
    envelope left nothing), the record was refused and the connector stopped.
    Now the room is a quarter of a small message.max.bytes. Bound: the
    pieces join back into the line, the next line arrives."""
    log = tmp_path / "ctl.log"
    log.write_bytes(b"\x01" * 100_000 + b"\nafter\n")
    sk = Skiff(tmp_path, worker(tmp_path, kafka, **{"producer.message.max.bytes": "10000"}),
               [conn(topic, file=str(log), value_converter=JSON)]).start()
    limit = (10_000 - 10_000 // 4) // 6  # 1,250: 80 pieces
    want = ["\x01" * limit] * -(-100_000 // limit) + ["after"]
    got = values(kafka, topic, n=len(want), timeout=90)
    assert got == [envelope(t) for t in want]
    time.sleep(0.6)
    assert sk.stop() == 0


def test_split_invalid_utf8_at_the_cut_as_before(tmp_path, kafka, topic):
    """Bytes at the cut that are not a valid sequence prefix (0xFF, E0 80,
    lone continuation bytes) are cut at max.line.bytes as before: nothing is
    backed off over them. Bound: exact records (Java's U+FFFD per malformed
    sequence), each replacement counted once per converter."""
    log = tmp_path / "bad.log"
    log.write_bytes(b"".join(b + b"\n" for b, _ in INVALID) + b"end\n")
    sk = Skiff(tmp_path, worker(tmp_path, kafka),
               split_conns(topic, log, "bad", max_line_bytes="16")).start()
    want = [p for _, pieces in INVALID for p in pieces] + ["end"]
    assert_pieces(kafka, topic, "bad", want)
    time.sleep(0.6)
    assert sk.stop() == 0
    n = sum(p.count("\ufffd") for p in want)
    assert f"converters replaced {2 * n} invalid UTF-8 sequences" in sk.log_text()


def test_split_kill9_between_pieces_resumes_at_the_character(tmp_path, kafka, topic):
    """A long line still being written is split at a 4-byte character; skiff
    is killed -9 once the first piece's offset is stored, the line is
    finished while it is down. Bound: exact, the second piece starts with
    the whole character (the stored position is the cut, backed off)."""
    log = tmp_path / "app.log"
    log.write_bytes(b"first\nabcdefghijklmn" + E4.encode() + b"ghijklmnop")
    c = conn(topic, file=str(log), max_line_bytes="16", value_converter=STRING)
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [c]).start()
    assert [v.decode() for v in values(kafka, topic, n=2)] == ["first", "abcdefghijklmn"]
    key = offsetfile.key("tail", {"filename": str(log)})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            pos = offsetfile.load(tmp_path / "offsets").get(key, {}).get("position")
        except (OSError, ValueError):
            pos = None
        if pos is not None and pos > 6:
            break
        time.sleep(0.1)
    assert pos == 20, pos
    sk.kill9()
    with open(log, "ab") as f:
        f.write(b"q\nlast\n")
    sk.start()
    want = ["first", "abcdefghijklmn", E4 + "ghijklmnopq", "last"]
    got = [v.decode() for v in values(kafka, topic, n=len(want))]
    time.sleep(0.6)
    assert sk.stop() == 0
    assert [v.decode() for v in values(kafka, topic)] == want, got


def test_partial_line_at_rotation(tmp_path, kafka, topic):
    """The file ends in a line without a newline when it is rotated: after
    rotate.wait.ms with the successor still empty it ships as a line and is
    counted. Bound: exact (the partial line arrives once, whole)."""
    log = tmp_path / "app.log"
    log.write_text("".join(line(i) + "\n" for i in range(10)) + line(10))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=10, timeout=60)
    log.rename(tmp_path / "app.log.1")
    log.write_text("")
    time.sleep(1.5)
    write_lines(log, range(11, 20))
    vals = settle(kafka, topic, sk, 20)
    assert_exact(vals, 20)
    assert vals[10] == line(10).encode()
    assert counter(sk, "partial_lines_shipped") == 1


def test_nul_and_invalid_utf8_across_rotation(tmp_path, kafka, topic):
    """Raw bytes (NUL, invalid UTF-8, CR LF) arrive byte-identical, before
    and after a rotation. Bound: exact, byte for byte, in order."""
    log = tmp_path / "bin.log"
    first = [b"nul\x00in\x00side", b"bad \xff\xfe utf8", b"\xc3\x28", b"", b"tab\tend"]
    second = [b"\x00", b"after \xed\xa0\x80 surrogate", b"crlf"]
    log.write_bytes(b"".join(v + b"\n" for v in first))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=len(first), timeout=60)
    log.rename(tmp_path / "bin.log.1")
    log.write_bytes(b"\x00\nafter \xed\xa0\x80 surrogate\ncrlf\r\n")
    assert settle(kafka, topic, sk, len(first) + len(second)) == first + second


# --- many files ---------------------------------------------------------------------


@pytest.mark.skiff_timeout(400)
def test_1000_files_under_one_glob(tmp_path, kafka, topic):
    """1,000 files match one glob (max.open.files=100, so most are closed
    and reopened by identity); an excluded file and rotated names are left
    out; files appended to later and a file created later are read.
    Bound: exact per file and in file order; nothing from excluded files."""
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(1000):
        write_lines(d / f"f{i:04d}.log", range(i * 10, i * 10 + 5), mode="w")
    write_lines(d / "skip.log", range(90000, 90005), mode="w")
    write_lines(d / "f0000.log.1", range(91000, 91005), mode="w")  # history, read first
    c = conn(topic, files=f"{d}/*.log*", files_exclude="skip.log",
             max_open_files="100", header_path="log.file.path")
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [c]).start()
    consume(kafka.bootstrap, topic, n=5005, timeout=180)
    for i in range(0, 1000, 7):
        write_lines(d / f"f{i:04d}.log", range(i * 10 + 5, i * 10 + 10))
    write_lines(d / "late.log", range(10000, 10003), mode="w")
    recs = consume(kafka.bootstrap, topic, n=5005 + 143 * 5 + 3, timeout=180)
    time.sleep(0.6)
    assert sk.stop() == 0
    recs = consume(kafka.bootstrap, topic)
    by_file = {}
    for r in recs:
        path = dict(r["headers"])["log.file.path"].decode()
        by_file.setdefault(path, []).append(number(r["value"]))
    assert len(recs) == 5005 + 143 * 5 + 3
    for i in range(1000):
        want = list(range(i * 10, i * 10 + (10 if i % 7 == 0 else 5)))
        if i == 0:
            want = list(range(91000, 91005)) + want
        assert by_file[f"{d}/f{i:04d}.log"] == want
    assert by_file[f"{d}/late.log"] == [10000, 10001, 10002]
    assert f"{d}/skip.log" not in by_file


@pytest.mark.skiff_timeout(300)
def test_every_offset_of_1200_files_names_its_birth_time(tmp_path, kafka, topic):
    """1,200 files under one glob, one line each: every stored offset carries
    the file's birth time (a 4,096-slot side cache used to leave it out on a
    collision, for about one file in five), and nothing else in it changes."""
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(1200):
        write_lines(d / f"f{i:04d}.log", [i], mode="w")
    c = conn(topic, files=f"{d}/*.log", max_open_files="100")
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [c]).start()
    settle(kafka, topic, sk, 1200)
    offs = offsetfile.load(tmp_path / "offsets")
    for i in range(1200):
        path = d / f"f{i:04d}.log"
        st = os.stat(path)
        value = offs[offsetfile.key("tail", {"filename": str(path)})]
        assert value["position"] == st.st_size and value["ino"] == st.st_ino, (path, value)
        assert isinstance(value.get("born"), int) and value["born"] > 0, (path, value)
        assert list(value) == ["position", "dev", "ino", "fp", "fplen", "born"], (path, value)


def test_read_from_end_and_new_files(tmp_path, kafka, topic):
    """read.from=end: a file present at start is read from its end (its
    partial last line included when it completes); a file created later is
    read from its beginning. Bound: exact over the lines written after
    start plus the late file."""
    d = tmp_path / "logs"
    d.mkdir()
    old = d / "old.log"
    old.write_text("".join(line(i) + "\n" for i in range(50)) + line(50)[:20])
    sk = Skiff(tmp_path, worker(tmp_path, kafka),
               [conn(topic, files=f"{d}/*.log", read_from="end")]).start()
    sk.wait_log(r"starting at byte", timeout=30)
    with open(old, "a") as f:
        f.write(line(50)[20:] + "\n" + "".join(line(i) + "\n" for i in range(51, 60)))
    write_lines(d / "new.log", range(60, 70), mode="w")
    vals = settle(kafka, topic, sk, 20)
    missing, dups, _, unexpected = check_lines(vals, 70, lost_ok=set(range(50)))
    assert not missing and not dups and not unexpected


def test_poll_mode_follows_rotation(tmp_path, kafka, topic):
    """watch.mode=poll (no inotify): growth and a rotation are noticed by
    stat polling; the key is the path and a header the line's byte offset.
    Bound: exact."""
    log = tmp_path / "app.log"
    write_lines(log, range(100))
    c = conn(topic, file=str(log), watch_mode="poll", poll_interval_ms="100",
             record_key="path", header_offset="log.offset")
    sk = Skiff(tmp_path, worker(tmp_path, kafka, **{"key.converter": "StringConverter"}),
               [c]).start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    write_lines(log, range(100, 150))
    log.rename(tmp_path / "app.log.1")
    write_lines(log, range(150, 200), mode="w")
    assert_exact(settle(kafka, topic, sk, 200), 200)
    recs = consume(kafka.bootstrap, topic)
    assert all(r["key"] == str(log).encode() for r in recs)
    # log.offset: the byte offset of the line in the file it was read from
    offsets = [int(dict(r["headers"])["log.offset"]) for r in recs]
    assert offsets[:150] == [61 * i for i in range(150)]
    assert offsets[150:] == [61 * i for i in range(50)]


@pytest.mark.parametrize("rotation", ["rename", "copytruncate"])
def test_poll_mode_rotated_while_stopped(tmp_path, kafka, topic, rotation):
    """watch.mode=poll: 1,000 lines read and committed, skiff stopped, 500
    more appended, the file rotated (renamed to app.log.1, or copied there
    and truncated in place) and 500 lines written to the path. The restart
    finds the stored offset's file among the rotated siblings (by inode, or
    the copy by its first bytes), reads it from the offset, then the path's
    file from 0. Bound: exact, in order."""
    log = tmp_path / "app.log"
    write_lines(log, range(1000))

    def start():
        c = conn(topic, file=str(log), watch_mode="poll", poll_interval_ms="100")
        return Skiff(tmp_path, worker(tmp_path, kafka), [c]).start()

    assert_exact(settle(kafka, topic, start(), 1000), 1000)
    write_lines(log, range(1000, 1500))
    if rotation == "rename":
        log.rename(tmp_path / "app.log.1")
    else:
        shutil.copyfile(log, tmp_path / "app.log.1")
        os.truncate(log, 0)
    write_lines(log, range(1500, 2000))
    sk = start()
    vals = settle(kafka, topic, sk, 2000)
    assert_exact(vals, 2000)
    assert [number(v) for v in vals] == list(range(2000)), "out of order"
    text = sk.log_text()
    assert "bytes_unread_lost" not in text and "files_gone_unread" not in text, text


# --- cost -------------------------------------------------------------------------


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@pytest.mark.serial
@pytest.mark.skiff_timeout(200)
@pytest.mark.parametrize("mode", ["inotify", "poll"])
def test_idle_cost_100_files(tmp_path, kafka, topic, mode):
    """100 idle files: over 60 s (long profile; 15 s by default, inotify
    only) skiff's CPU stays near zero and it writes nothing (the offsets
    file does not change). Bound: < 0.5% of one core with inotify, < 2%
    with stat polling every second (ASan build)."""
    if mode == "poll" and not LONG:
        harness.skip_long_profile("stat polling's idle cost")
    d = tmp_path / "logs"
    d.mkdir()
    for i in range(100):
        write_lines(d / f"f{i:03d}.log", range(i * 3, i * 3 + 3), mode="w")
    sk = Skiff(tmp_path, worker(tmp_path, kafka),
               [conn(topic, files=f"{d}/*.log", watch_mode=mode)]).start()
    consume(kafka.bootstrap, topic, n=300, timeout=60)
    time.sleep(1.0)
    st = os.stat(tmp_path / "offsets")
    secs = 60 if LONG else 15
    hz = os.sysconf("SC_CLK_TCK")
    t0 = cpu_ticks(sk.pid)
    time.sleep(secs)
    used = (cpu_ticks(sk.pid) - t0) / hz
    st2 = os.stat(tmp_path / "offsets")
    assert (st.st_ino, st.st_mtime_ns) == (st2.st_ino, st2.st_mtime_ns)
    print(f"idle CPU with 100 files ({mode}): {used:.2f} s over {secs} s "
          f"({100 * used / secs:.3f}% of a core)")
    assert used / secs < (0.005 if mode == "inotify" else 0.02)
    assert sk.stop() == 0
