"""A kill -9 (a power cut, the OOM killer) while Kafka is away and rotated
files are held (issue 22): what the held descriptors kept dies with skiff,
and the next start must count and name it, never lose it silently.

skiff keeps the list of the rotated files it holds beside the offsets
(<offsets file>.state-<connector>, docs/source-file.md); at the next start
each one found nowhere, under any name, compressed or not, is counted with
its size when last seen (less the stored position for the stored offset's
own file) and named. Every scene is deterministic: numbered lines of 76
bytes, real `logrotate -f` (rotate N, compress, create: the uncompressed
rotated file is deleted at once, only skiff's descriptor keeps it), the
broker stopped, producer queue small so reading pauses early in the first
file.

Before (main at 64b216b): the first scene counted files_gone_unread=1 and
no bytes for the 3,900 lines of four files lost; the idle scene had no file
to look at.
"""

import os
import re
import subprocess
import time

import pytest

from harness import Skiff, consume
import outage

LINE = 76
NAME = "crash"
FLUSH_MS = 500


def text(lo, hi):
    return "".join(f"{i:08d} " + "x" * (LINE - 10) + "\n" for i in range(lo, hi))


def append(path, lo, hi):
    with open(path, "a") as f:
        f.write(text(lo, hi))


class Scene:
    """app.log under logrotate -f (rotate `keep`, compress, create) and a
    skiff whose reading pauses after 200 lines while the broker is away."""

    def __init__(self, tmp_path, broker, topic, keep, queue="200"):
        self.tmp, self.broker, self.topic = tmp_path, broker, topic
        self.logdir = tmp_path / "logs"
        self.logdir.mkdir()
        self.log = self.logdir / "app.log"
        self.log.write_text("")
        self.conf = tmp_path / "logrotate.conf"
        self.conf.write_text(outage.logrotate_conf(
            self.log, (f"rotate {keep}", "compress", "create")))
        self.offsets = tmp_path / "offsets"
        self.state = tmp_path / f"offsets.state-{NAME}"
        w = {"bootstrap.servers": broker.bootstrap,
             "offset.storage.file.filename": str(self.offsets),
             "offset.flush.interval.ms": str(FLUSH_MS),
             "producer.queue.buffering.max.messages": queue,
             "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
        c = {"name": NAME, "connector.class": "FileStreamSource", "topic": topic,
             "file": str(self.log)}
        self.sk = Skiff(tmp_path, w, [c])
        self.marks = [0]

    def start(self):
        self.sk.start()
        self.sk.wait_log(r"reading .*app\.log from byte", timeout=60)

    def restart(self):
        self.marks.append(self.sk.log_mark())
        self.start()

    def rotate(self):
        r = subprocess.run(["logrotate", "-f", "-s", str(self.tmp / "lr.state"),
                            str(self.conf)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert r.returncode == 0, r.stdout
        time.sleep(0.3)  # skiff notices the rotation (inotify) and holds the file

    def counter(self, name):
        return outage.counter(self.sk, name, self.marks)

    def wait_counter(self, name, want, timeout=30):
        """The counter once it reaches want, or its value at the timeout:
        the log line that says it may come a moment after what it counts
        (the held list removed), more so under load."""
        deadline = time.monotonic() + timeout
        while (got := self.counter(name)) < want and time.monotonic() < deadline:
            time.sleep(0.2)
        return got

    def values(self, want, timeout=120):
        deadline = time.monotonic() + timeout
        while True:
            recs = consume(self.broker.bootstrap, self.topic, timeout=30)
            if len(recs) >= want or time.monotonic() > deadline:
                return [r["value"] for r in recs]
            time.sleep(1)

    def before_outage(self, n):
        """Lines 0..n arrive and their offset is flushed; then the broker stops."""
        self.broker.start()
        self.start()
        append(self.log, 0, n)
        assert len(consume(self.broker.bootstrap, self.topic, n=n, timeout=60)) == n
        time.sleep(3 * FLUSH_MS / 1000)
        self.broker.stop()

    def file(self, lo, hi):
        """Lines lo..hi written to app.log, then rotated; returns the inode."""
        append(self.log, lo, hi)
        ino = os.stat(self.log).st_ino
        time.sleep(0.3)
        self.rotate()
        return ino


def numbers(values):
    return sorted(int(v[:8]) for v in values)


@pytest.mark.skiff_timeout(400)
@pytest.mark.parametrize("queue", ["200", "5000"], ids=["held", "read-unacknowledged"])
def test_kill9_while_holding_counts_and_names_the_files_rotation_deleted(
        tmp_path, kafka_private, topic, queue):
    """Broker stopped after lines 0-99; files A (lines 100-999 unread), B, C
    and D rotated while skiff holds them (compress: their uncompressed
    inodes deleted at once, only skiff's descriptors keep them); E is the
    live file. kill -9; two more rotations while skiff is dead delete the
    last compressed copies of A-D. skiff starts again after the broker is
    back: lines 100-3999 are lost (not avoidable), and counted: 4 files
    (A, the stored offset's, and B, C, D from the held list), each named by
    inode, and 3,900 lines' bytes exactly (their sizes when last seen less
    the stored position). Every other line arrives. (main: files_gone_unread
    =1, bytes_unread_lost=0.) With a producer queue of 5,000 the files are
    all read before the kill, their lines in the queue, unacknowledged: the
    files let go stay in the list until the committed offset passes them,
    and count the same."""
    sc = Scene(tmp_path, kafka_private, topic, keep=2, queue=queue)
    sc.before_outage(100)
    inodes = [sc.file(100, 1000), sc.file(1000, 2000), sc.file(2000, 3000),
              sc.file(3000, 4000)]
    append(sc.log, 4000, 4500)  # E, live
    time.sleep(4 * FLUSH_MS / 1000)  # the held list written
    assert sc.sk.kill9() == -9
    sc.rotate()  # E -> .1.gz; the last copy of C goes
    append(sc.log, 4500, 5000)
    sc.rotate()  # F -> .1.gz, E -> .2.gz; the last copy of D goes
    append(sc.log, 5000, 5100)
    kafka_private.start()
    sc.restart()
    got = numbers(sc.values(100 + 1100))
    lost = set(range(100, 4000))
    assert got == [n for n in range(5100) if n not in lost], (
        len(got), sorted(set(range(5100)) - set(got) - lost)[:10])
    log = sc.sk.log_text()[sc.marks[-1]:]
    print(log)
    assert sc.counter("files_gone_unread") == 4, log
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, log
    named = set(int(i) for i in re.findall(
        r"(?:rotated file |stored offset \()inode (\d+)[ ,)].*held when skiff stopped", log))
    assert named == set(inodes), (named, inodes)
    assert "at least" in log


@pytest.mark.skiff_timeout(400)
def test_kill9_while_holding_files_compressed_since_loses_nothing(
        tmp_path, kafka_private, topic):
    """The same, but logrotate keeps 4 files: the held files' uncompressed
    inodes are deleted (compress) but their compressed copies are on disk,
    and one more rotation compresses the live file while skiff is dead.
    Every line arrives once, and nothing is counted lost: a held file
    found compressed is read, not counted."""
    sc = Scene(tmp_path, kafka_private, topic, keep=4)
    sc.before_outage(100)
    sc.file(100, 1000)
    sc.file(1000, 2000)
    append(sc.log, 2000, 2500)
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.kill9() == -9
    sc.rotate()  # the live file compressed while skiff is dead
    append(sc.log, 2500, 2600)
    kafka_private.start()
    sc.restart()
    got = numbers(sc.values(2600))
    assert got == list(range(2600)), (len(got), sorted(set(range(2600)) - set(got))[:10])
    log = sc.sk.log_text()[sc.marks[-1]:]
    assert sc.counter("files_gone_unread") == 0, log
    assert sc.counter("bytes_unread_lost") == 0, log


@pytest.mark.skiff_timeout(300)
def test_held_list_not_rewritten_while_idle_and_gone_once_read(tmp_path, kafka_private, topic):
    """While files are held and nothing changes, the list is not written
    again (an SD card's wear): its mtime stays over several flush
    intervals. Once Kafka is back and the held files are read, the list is
    removed: an idle skiff with nothing held has no such file, and writes
    nothing."""
    sc = Scene(tmp_path, kafka_private, topic, keep=2)
    sc.before_outage(100)
    sc.file(100, 1000)
    append(sc.log, 1000, 1100)
    deadline = time.monotonic() + 10
    while not sc.state.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sc.state.exists(), "no held list beside the offsets"
    time.sleep(2 * FLUSH_MS / 1000)
    before = os.stat(sc.state).st_mtime_ns, sc.state.read_bytes()
    time.sleep(6 * FLUSH_MS / 1000)
    assert (os.stat(sc.state).st_mtime_ns, sc.state.read_bytes()) == before
    assert before[1].startswith(b"skiff-held 1\n") and b" " + str(sc.log).encode() in before[1]
    kafka_private.start()
    got = numbers(sc.values(1100))
    assert got == list(range(1100))
    deadline = time.monotonic() + 30
    while sc.state.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sc.state.exists(), sc.state.read_bytes()[:300]
    assert sc.sk.stop() == 0


@pytest.mark.parametrize("content", [b"", b"skiff-held 1\nF 1 2", b"\x00garbage\n"],
                         ids=["empty", "cut-short", "garbage"])
def test_unreadable_held_list_is_said_and_never_stops_skiff(tmp_path, kafka, topic, content):
    """A held list that is empty, cut short or garbage (a torn write on
    another file system, a person's edit): one warning naming the file,
    skiff starts and ships, the offsets untouched, and the list is replaced
    at the next write."""
    sc = Scene(tmp_path, kafka, topic, keep=2)
    append(sc.log, 0, 50)
    sc.state.write_bytes(content)
    sc.start()
    assert len(consume(kafka.bootstrap, topic, n=50, timeout=60)) == 50
    sc.sk.wait_log(r"held when skiff last stopped cannot be read \(.*" +
                   re.escape(str(sc.state)))
    deadline = time.monotonic() + 10
    while sc.state.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sc.state.exists()  # nothing held: replaced by no file
    assert sc.sk.stop() == 0
    assert b'"position":3800' in sc.offsets.read_bytes()


@pytest.mark.skiff_timeout(400)
def test_kill9_then_a_glob_match_gone_whole_counts_its_held_files(tmp_path, kafka_private, topic):
    """Hostile finding (h22b): with files=logs/*.log, app.log and all its
    rotations deleted while skiff is dead (the app removed, or its log not
    made again yet at the start): no glob match names it, so no stream took
    its held files, and 2,000 lines were lost unsaid (files_gone_unread=0,
    bytes_unread_lost=0), the held list kept for good though nothing was
    held. The held list's streams the patterns still match are followed:
    the stored offset's file and the held files are counted and named,
    exactly their bytes, and the list is removed once nothing is held. A
    stream the connector no longer follows (file= changed) leaves the list
    with a warning naming it."""
    sc = Scene(tmp_path, kafka_private, topic, keep=2)
    f = sc.sk.connector_files[0]
    f.write_text(f.read_text().replace("file=", "files=").replace("app.log", "*.log"))
    sc.before_outage(100)
    inodes = [sc.file(100, 1000), sc.file(1000, 2000)]
    append(sc.log, 2000, 2100)
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.kill9() == -9
    assert sc.state.exists()
    for p in sc.logdir.glob("app.log*"):
        p.unlink()
    append(sc.logdir / "other.log", 0, 10)
    kafka_private.start()
    sc.marks.append(sc.sk.log_mark())
    sc.sk.start()
    sc.sk.wait_log(r"reading .*other\.log from byte", timeout=60)
    deadline = time.monotonic() + 30
    while sc.state.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    log = sc.sk.log_text()[sc.marks[-1]:]
    assert not sc.state.exists(), (sc.state.read_text(), log)
    lost = sc.wait_counter("bytes_unread_lost", 2000 * LINE)
    log = sc.sk.log_text()[sc.marks[-1]:]
    assert lost == 2000 * LINE, log
    named = set(int(i) for i in re.findall(
        r"(?:rotated file |stored offset \()inode (\d+)[ ,)].*held when skiff stopped", log))
    assert set(inodes) <= named, (named, inodes)
    assert sc.sk.stop() == 0
    # file= changed: the old stream's entries leave the list, said.
    f.write_text(f.read_text().replace("files=", "file=").replace("*.log", "other.log"))
    sc.state.write_text(
        "skiff-held 1\nF 1 2 3 100 4 1024 %s %s\n" % (sc.log, sc.log))
    body = sc.state.read_bytes()
    sc.state.write_bytes(body + b"end %08x\n" % crc32c(body))
    sc.marks.append(sc.sk.log_mark())
    sc.sk.start()
    sc.sk.wait_log(r"no longer follows", timeout=30)
    deadline = time.monotonic() + 10
    while sc.state.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not sc.state.exists(), sc.state.read_text()
    assert sc.sk.stop() == 0


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


@pytest.mark.skiff_timeout(400)
def test_stop_then_compressed_copies_rotated_away_are_counted(tmp_path, kafka_private, topic):
    """Hostile finding (h22b): a clean stop while Kafka is away, the held
    files deleted since with their compressed copies on disk ("read again
    at the next start"), then logrotate deletes those copies while skiff is
    stopped. The stop left them out of the held list (deleted), so the
    middle file's 1,000 lines were lost unsaid: 2,400 lines missing, 106,400
    of their 182,400 bytes counted. The stop keeps a deleted file whose
    compressed copy is on disk in the list: found at the start, it is read;
    gone, it is counted and named."""
    sc = Scene(tmp_path, kafka_private, topic, keep=2)
    w = sc.sk.worker_file
    w.write_text(w.read_text() + "offset.flush.timeout.ms=1000\n")
    sc.before_outage(100)
    inodes = [sc.file(100, 1000), sc.file(1000, 2000)]
    append(sc.log, 2000, 2500)  # the file at the path, on disk at the stop
    inodes.append(os.stat(sc.log).st_ino)
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.stop() == 0
    for lo in (2500, 2600, 2700):  # the compressed copies of all three go
        sc.rotate()
        append(sc.log, lo, lo + 100)
    kafka_private.start()
    sc.restart()
    lost = set(range(100, 2500))
    got = numbers(sc.values(400))
    assert got == [n for n in range(2800) if n not in lost], (
        len(got), sorted(set(range(2800)) - set(got) - lost)[:10])
    log = sc.sk.log_text()[sc.marks[-1]:]
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, log
    named = set(int(i) for i in re.findall(
        r"(?:rotated file |stored offset \()inode (\d+)[ ,)].*(?:held when skiff stopped|"
        r"at the last stop)", log))
    assert named == set(inodes), (named, inodes)
    assert sc.sk.stop() == 0


@pytest.mark.skiff_timeout(400)
def test_stop_counts_a_file_let_go_whose_records_wait(tmp_path, kafka_private, topic):
    """Hostile finding (issue 22, clean stops during an outage with
    `create` rotation: ~4,000 lines lost unsaid, one file per stop): a
    rotated file read to its end and let go (closed) while its records
    still wait for Kafka is in neither the stop's accounting (only open
    files are) nor the held list; logrotate deletes its compressed copy
    before the next start, which finds the stored offset's file gone and
    counts 1 file, no bytes. Its 1,000 unacknowledged lines must be
    counted (bytes) and the file named."""
    sc = Scene(tmp_path, kafka_private, topic, keep=1, queue="5000")
    w = sc.sk.worker_file
    w.write_text(w.read_text() + "offset.flush.timeout.ms=1000\n")
    c = sc.sk.connector_files[0]
    c.write_text(c.read_text() + "rotate.wait.ms=500\n")
    sc.before_outage(100)
    ino = sc.file(100, 1100)  # read to its end through its descriptor
    time.sleep(3)  # quiet past rotate.wait.ms: let go, closed
    append(sc.log, 1100, 1200)  # the file at the path at the stop
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.stop() == 0
    sc.rotate()  # rotate 1: the let-go file's app.log.1.gz goes
    append(sc.log, 1200, 1300)
    kafka_private.start()
    sc.restart()
    lost = set(range(100, 1100))
    got = numbers(sc.values(300))
    assert got == [n for n in range(1300) if n not in lost], (
        len(got), sorted(set(range(1300)) - set(got) - lost)[:10])
    log = sc.sk.log_text()
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, log[sc.marks[-1]:]
    assert re.search(rf"inode {ino}\b.*\b{len(lost) * LINE} bytes", log), log
    assert sc.sk.stop() == 0


@pytest.mark.skiff_timeout(400)
def test_stop_then_copytruncate_twice_reads_the_newer_copy_and_counts_the_gone_one(
        tmp_path, kafka_private, topic):
    """Hostile finding (issue 22, copytruncate + delaycompress, clean
    stops during an outage: ~18,000 lines lost unsaid; about 8,000 of them
    in copies on disk at the next start). Stopped with lines 100-599 read
    but not acknowledged, then two copytruncate rotations (rotate 1) while
    skiff is stopped: the copy holding 100-599 is deleted, the copy holding
    600-999 is on disk. The start said only "the rest of the file it
    replaced is gone" (1 file, no bytes, though the stop wrote what it saw
    as "seen") and read the path from 0: 600-999 were skipped, on disk.
    Now the copies made after the gone one are read, then the path, and
    the gone generation's unread bytes are counted and named."""
    sc = Scene(tmp_path, kafka_private, topic, keep=1, queue="5000")
    sc.conf.write_text(outage.logrotate_conf(sc.log, ("rotate 1", "copytruncate")))
    w = sc.sk.worker_file
    w.write_text(w.read_text() + "offset.flush.timeout.ms=1000\n")
    sc.before_outage(100)
    append(sc.log, 100, 600)
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.stop() == 0
    sc.rotate()  # 0-599 copied to app.log.1, app.log truncated
    append(sc.log, 600, 1000)
    sc.rotate()  # 600-999 copied to app.log.1 (0-599's copy deleted)
    append(sc.log, 1000, 1100)
    kafka_private.start()
    sc.restart()
    lost = set(range(100, 600))
    got = numbers(sc.values(600, timeout=30))
    assert got == [n for n in range(1100) if n not in lost], (
        len(got), sorted(set(range(1100)) - set(got) - lost)[:10])
    log = sc.sk.log_text()[sc.marks[-1]:]
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, log
    assert sc.counter("files_gone_unread") == 1, log
    assert f"bytes {100 * LINE} to {600 * LINE} were not read" in log, log
    assert sc.sk.stop() == 0


@pytest.mark.skiff_timeout(400)
def test_stop_names_and_counts_the_copy_holding_what_a_copytruncate_moved(
        tmp_path, kafka_private, topic):
    """Hostile finding (issue 22, copytruncate, clean stops during an
    outage: "5000 records still unacknowledged" and no file named). Lines
    100-599 read, not acknowledged; logrotate copytruncate (rotate 1) makes
    app.log.1 of them, skiff reads that copy and lets go of it; a second
    copytruncate deletes it (only skiff's descriptor keeps it); lines
    600-799 are the file at the path's new generation. The stop must start
    from the copy, not from the file at the path (same inode, a later
    generation): it names the copy, bytes 7,600 to 45,600, deleted, and
    counts its 500 lines then; it stores no "seen" of the later
    generation's size. (main: nothing named, nothing counted; the restart
    counted 1 file, 0 bytes.)"""
    sc = Scene(tmp_path, kafka_private, topic, keep=1, queue="5000")
    sc.conf.write_text(outage.logrotate_conf(sc.log, ("rotate 1", "copytruncate")))
    w = sc.sk.worker_file
    w.write_text(w.read_text() + "offset.flush.timeout.ms=1000\n")
    sc.before_outage(100)
    append(sc.log, 100, 600)
    time.sleep(1)
    sc.rotate()  # 0-599 copied to app.log.1, app.log truncated
    copy = sc.logdir / "app.log.1"
    ino = os.stat(copy).st_ino
    sc.sk.wait_log(r"was truncated at byte \d+: finishing its copy", timeout=30)
    time.sleep(1)
    sc.rotate()  # an empty copy: the one of 0-599 is deleted
    append(sc.log, 600, 800)
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.stop() == 0
    log = sc.sk.log_text()
    assert re.search(rf"read but not acknowledged at this stop: \S*app\.log\.1 \(inode {ino}\) "
                     rf"from byte {100 * LINE} to {600 * LINE}, deleted since: {500 * LINE} "
                     r"bytes, 500 lines lost", log), log
    assert re.search(rf"app\.log \(inode \d+\) from byte 0 to {200 * LINE}: on disk", log), log
    stored = sc.offsets.read_bytes()
    assert b'"seen"' not in stored, stored
    kafka_private.start()
    sc.restart()
    append(sc.log, 800, 900)
    lost = set(range(100, 600))
    got = numbers(sc.values(400))
    assert got == [n for n in range(900) if n not in lost], (
        len(got), sorted(set(range(900)) - set(got) - lost)[:10])
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, sc.sk.log_text()[sc.marks[-1]:]
    assert sc.sk.stop() == 0


@pytest.mark.skiff_timeout(400)
def test_compressed_file_held_at_a_stop_then_deleted_is_counted_to_the_byte(
        tmp_path, kafka_private, topic):
    """Hostile finding (h22c: compress + copytruncate, SIGTERM during a
    30 s outage: 2,000 lines of one app.log.1.gz lost, its bytes not
    counted): a rotated file skiff opened compressed (logrotate compressed
    it while skiff was stopped) is in the held list of the next stop with
    no size, so when logrotate deletes it before the next start that start
    counts the file and no bytes (and the stored offset's file, opened
    compressed, a second time: files_gone_unread=3 for two). The stop
    writes its uncompressed size (gzip's trailer) and first bytes' hash:
    gone, it is counted to the byte, the stored offset's file once."""
    sc = Scene(tmp_path, kafka_private, topic, keep=2)
    w = sc.sk.worker_file
    w.write_text(w.read_text() + "offset.flush.timeout.ms=1000\n")
    sc.before_outage(100)
    append(sc.log, 100, 1100)  # A: stored offset at 100, "seen" at the stop
    time.sleep(4 * FLUSH_MS / 1000)
    assert sc.sk.stop() == 0
    sc.rotate()  # A -> .1.gz
    append(sc.log, 1100, 2100)  # B
    sc.rotate()  # B -> .1.gz, A -> .2.gz
    append(sc.log, 2100, 2200)  # C, at the path
    sc.restart()  # Kafka still away: A and B opened compressed, held
    time.sleep(4 * FLUSH_MS / 1000)  # the held list written
    assert sc.sk.stop() == 0
    sc.rotate()  # C -> .1.gz, B -> .2.gz, A's last copy goes
    append(sc.log, 2200, 2300)
    sc.rotate()  # B's last copy goes
    append(sc.log, 2300, 2400)
    kafka_private.start()
    sc.restart()
    lost = set(range(100, 2100))
    got = numbers(sc.values(400))
    assert got == [n for n in range(2400) if n not in lost], (
        len(got), sorted(set(range(2400)) - set(got) - lost)[:10])
    log = sc.sk.log_text()
    assert sc.counter("bytes_unread_lost") == len(lost) * LINE, log[-3000:]
    assert re.search(rf"opened as \S+app\.log\.1\.gz\), held when skiff stopped, is gone: "
                     rf"at least {1000 * LINE} bytes lost", log), log[-3000:]
    assert sc.counter("files_gone_unread") == 2, log[-3000:]  # A, B: each once
    assert sc.sk.stop() == 0
