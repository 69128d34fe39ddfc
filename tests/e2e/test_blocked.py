"""While skiff cannot send (broker down, producer queue full, offsets that
cannot be saved) it must sleep: an edge device offline for hours cannot spend
a core on waiting. And what a restart cannot fix must say so with exit 78.

Each test here failed on 5bba890:
- a file written to while the queue is full: the inotify descriptor stayed in
  the poll set undrained, ~300 clock ticks in 3 s (a whole core);
- a SQLite table with rows buffered: timeout 0 while rows wait, a whole core;
- three failed offset flushes with a file written to: a whole core;
- a record larger than the producer queue: 100% CPU forever, no log line;
- configuration errors only found at the first record: exit 75 forever.
CPU is compared with what a spinning loop costs (~100 ticks a second), not
timed: librdkafka's own threads wake now and then, hence an allowance.
"""

import os
import sqlite3
import subprocess
import threading
import time

import pytest

import harness
from harness import Skiff, consume

SPIN_BOUND = 30  # clock ticks in 3 s; a spinning loop takes ~300


def cpu_ticks(pid):
    """utime + stime of a process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def ticks_over(pid, seconds):
    before = cpu_ticks(pid)
    time.sleep(seconds)
    return cpu_ticks(pid) - before


class Appender(threading.Thread):
    """Appends numbered lines to path every `every` seconds until stopped."""

    def __init__(self, path, prefix, every=0.005):
        super().__init__(daemon=True)
        self.path, self.prefix, self.every = path, prefix, every
        self.lines = []
        self.halt = threading.Event()

    def run(self):
        with open(self.path, "a") as f:
            while not self.halt.is_set():
                line = f"{self.prefix} {len(self.lines):06d}"
                f.write(line + "\n")
                f.flush()
                self.lines.append(line)
                time.sleep(self.every)

    def stop(self):
        self.halt.set()
        self.join()


def small_queue_worker(tmp_path, bootstrap, **extra):
    w = {"bootstrap.servers": bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "500",
         "value.converter": "StringConverter",
         "producer.queue.buffering.max.messages": "2000",
         "producer.queue.buffering.max.kbytes": "64"}
    w.update(extra)
    return w


@pytest.mark.serial
@pytest.mark.skiff_timeout(240)
def test_queue_full_and_file_written_to_sleeps(tmp_path, kafka_late, topic):
    """Broker down, queue full, and the file keeps growing: inotify fires on
    every write, but skiff must not wake to read what it cannot send."""
    src = tmp_path / "busy.log"
    first = [f"first {i:06d}" for i in range(20_000)]
    src.write_text("".join(l + "\n" for l in first))
    conn = {"name": "busy", "connector.class": "FileStreamSource", "file": str(src),
            "topic": topic}
    sk = Skiff(tmp_path, small_queue_worker(tmp_path, kafka_late.bootstrap), [conn]).start()
    sk.wait_log(r"reading .*busy\.log from byte 0")
    time.sleep(1.5)  # the queue fills
    app = Appender(src, "more")
    app.start()
    try:
        time.sleep(0.5)
        spent = ticks_over(sk.pid, 3)
    finally:
        app.stop()
    assert spent <= SPIN_BOUND, f"{spent} clock ticks in 3 s while blocked: spinning"
    kafka_late.start()
    want = first + app.lines
    consume(kafka_late.bootstrap, topic, n=len(want), timeout=180)
    assert sk.stop() == 0
    assert [r["value"].decode() for r in consume(kafka_late.bootstrap, topic)] == want


@pytest.mark.serial
@pytest.mark.skiff_timeout(240)
def test_queue_full_with_sqlite_rows_buffered_sleeps(tmp_path, kafka_late, topic):
    """Broker down, queue full, rows read from the table waiting for room."""
    db = tmp_path / "t.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)")
    con.executemany("INSERT INTO t(v) VALUES (?)", [(f"row {i}",) for i in range(30_000)])
    con.commit()
    con.close()
    conn = {"name": "rows", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
            "table.whitelist": "t", "topic.prefix": topic + "-", "poll.interval.ms": "200"}
    worker = small_queue_worker(tmp_path, kafka_late.bootstrap,
                                **{"value.converter": "JsonConverter",
                                   "value.converter.schemas.enable": "false"})
    sk = Skiff(tmp_path, worker, [conn]).start()
    time.sleep(3)  # the queue fills, a batch waits
    spent = ticks_over(sk.pid, 3)
    assert spent <= SPIN_BOUND, f"{spent} clock ticks in 3 s while blocked: spinning"
    kafka_late.start()
    recs = consume(kafka_late.bootstrap, topic + "-t", n=30_000, timeout=180)
    assert sk.stop() == 0
    ids = [int(r["value"].decode().split('"id":')[1].split(",")[0]) for r in recs]
    assert ids == list(range(1, 30_001))


def mount_tmpfs(path, size):
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)


@pytest.mark.serial
@pytest.mark.skiff_timeout(240)
def test_paused_by_failed_flushes_sleeps(tmp_path, kafka, topic, monkeypatch):
    """Offsets cannot be saved (full disk): after three failed flushes reading
    pauses; a file written to meanwhile must not wake skiff into a spin. Each
    flush rewrites the whole file (SKIFF_OFFSETS_COMPACT_BYTES=0): an append
    to the log can still fit in its last page of a full tmpfs and succeed."""
    monkeypatch.setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0")
    if os.geteuid() != 0:
        harness.skip_not_here("mounting a tmpfs needs root")
    state = tmp_path / "state"
    mount_tmpfs(state, "256k")
    app = None
    try:
        src = tmp_path / "app.log"
        src.write_text("".join(f"a {i:06d}\n" for i in range(100)))
        worker = small_queue_worker(tmp_path, kafka.bootstrap,
                                    **{"offset.storage.file.filename": str(state / "offsets"),
                                       "offset.flush.interval.ms": "200"})
        conn = {"name": "fp", "connector.class": "FileStreamSource", "file": str(src),
                "topic": topic}
        sk = Skiff(tmp_path, worker, [conn]).start()
        consume(kafka.bootstrap, topic, n=100, timeout=60)
        filler = state / "filler"
        subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k", "count=1000"],
                       stderr=subprocess.DEVNULL)
        with open(src, "a") as f:
            f.write("b 000000\n")
        sk.wait_log(r"reading pauses until offsets can be saved", timeout=30)
        app = Appender(src, "c", every=0.01)
        app.start()
        time.sleep(0.5)
        spent = ticks_over(sk.pid, 3)
        assert spent <= SPIN_BOUND, f"{spent} clock ticks in 3 s while paused: spinning"
        app.stop()
        filler.unlink()
        sk.wait_log(r"saved again; reading resumes", timeout=30)
        want = 101 + len(app.lines)
        recs = consume(kafka.bootstrap, topic, n=want, timeout=120)
        assert sk.stop() == 0
        assert len(recs) == want
    finally:
        if app is not None and app.is_alive():
            app.stop()
        subprocess.run(["umount", "-l", str(state)], stderr=subprocess.DEVNULL)


def test_record_larger_than_producer_queue_is_a_config_error(tmp_path, kafka, topic):
    """producer.message.max.bytes above queue.buffering.max.kbytes: a record
    that fits the first cannot fit the second; it used to spin forever."""
    src = tmp_path / "big.log"
    src.write_text("small 1\n" + "x" * 1_500_000 + "\nsmall 2\n")
    worker = small_queue_worker(tmp_path, kafka.bootstrap,
                                **{"producer.message.max.bytes": "2000000",
                                   "producer.queue.buffering.max.kbytes": "1024"})
    conn = {"name": "big", "connector.class": "FileStreamSource", "file": str(src),
            "topic": topic, "max.line.bytes": "2000000"}
    sk = Skiff(tmp_path, worker, [conn])
    chk = subprocess.run([str(harness.skiff_bin()), "--check", str(sk.worker_file),
                          *map(str, sk.connector_files)], capture_output=True, text=True,
                         timeout=60)
    assert chk.returncode == 78, chk.stdout + chk.stderr
    assert "producer.message.max.bytes" in chk.stderr and "queue.buffering.max.kbytes" in chk.stderr
    assert "worker.properties" in chk.stderr
    sk.start()
    assert sk.wait(timeout=60) == 78
    assert not (tmp_path / "offsets").exists() or "position" not in (tmp_path / "offsets").read_text()


def test_missing_offsets_directory_is_a_config_error(tmp_path, kafka, topic):
    """A typo in offset.storage.file.filename's directory: no restart creates
    it, so exit 78 naming the path, at --check and at start."""
    src = tmp_path / "a.log"
    src.write_text("a\n")
    missing = tmp_path / "no-such-dir" / "offsets"
    worker = small_queue_worker(tmp_path, kafka.bootstrap,
                                **{"offset.storage.file.filename": str(missing)})
    conn = {"name": "m", "connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sk = Skiff(tmp_path, worker, [conn])
    chk = subprocess.run([str(harness.skiff_bin()), "--check", str(sk.worker_file),
                          *map(str, sk.connector_files)], capture_output=True, text=True,
                         timeout=60)
    assert chk.returncode == 78, chk.stdout + chk.stderr
    assert str(missing.parent) in chk.stderr
    sk.start()
    assert sk.wait(timeout=60) == 78
    assert str(missing.parent) in sk.log_text()


def test_bytearray_converter_with_sqlite_rows_is_a_config_error(tmp_path, kafka, topic):
    """Rows are structs; ByteArrayConverter cannot write them (Connect fails
    the task the same way). Known before any row: --check and exit 78."""
    db = tmp_path / "t.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE t(id INTEGER PRIMARY KEY AUTOINCREMENT, v TEXT)")
    con.execute("INSERT INTO t(v) VALUES ('x')")
    con.commit()
    con.close()
    worker = small_queue_worker(tmp_path, kafka.bootstrap,
                                **{"value.converter": "ByteArrayConverter"})
    conn = {"name": "ba", "connector.class": "JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
            "table.whitelist": "t", "topic.prefix": topic + "-"}
    sk = Skiff(tmp_path, worker, [conn])
    chk = subprocess.run([str(harness.skiff_bin()), "--check", str(sk.worker_file),
                          *map(str, sk.connector_files)], capture_output=True, text=True,
                         timeout=60)
    assert chk.returncode == 78, chk.stdout + chk.stderr
    assert "ByteArrayConverter" in chk.stderr
    sk.start()
    assert sk.wait(timeout=60) == 78


def test_second_skiff_refused_even_without_the_lock_file(tmp_path, kafka, topic):
    """Deleting offsets.lock used to let a second skiff share the store: each
    would commit offsets the other never had acknowledged. The store itself is
    locked now, and an abstract socket named after it (test_state_dir.py)."""
    src = tmp_path / "a.log"
    src.write_text("".join(f"a {i}\n" for i in range(10)))
    worker = small_queue_worker(tmp_path, kafka.bootstrap)
    conn = {"name": "one", "connector.class": "FileStreamSource", "file": str(src),
            "topic": topic}
    first = Skiff(tmp_path, worker, [conn], name="first").start()
    consume(kafka.bootstrap, topic, n=10, timeout=60)
    store = tmp_path / "offsets"
    deadline = time.monotonic() + 30
    while not store.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert store.exists()
    (tmp_path / "offsets.lock").unlink()
    second = Skiff(tmp_path, worker, [conn], name="second").start()
    second.wait_log(r"waiting for it to stop", timeout=60)  # not sharing it
    assert f"another skiff (pid {first.pid}) is running with this offset file" in \
        second.log_text()
    assert second.stop() == 0
    # The first one goes on writing (and keeps holding) the store.
    with open(src, "a") as f:
        f.write("a 10\n")
    consume(kafka.bootstrap, topic, n=11, timeout=60)
    time.sleep(1)
    third = Skiff(tmp_path, worker, [conn], name="third").start()
    third.wait_log(r"waiting for it to stop", timeout=60)
    assert third.stop() == 0
    assert first.stop() == 0
    assert len(consume(kafka.bootstrap, topic)) == 11


def test_line_larger_than_a_small_queue_stops_before_it(tmp_path, kafka, topic):
    """A 64 KiB producer queue with librdkafka's default message.max.bytes
    (1 MB): a 100 KB line used to be refused as "queue full" for ever, at 100%
    CPU. Now the limit follows the queue, so the line fails as too large: the
    lines before it arrive, the offset stops before it, exit 78."""
    src = tmp_path / "big.log"
    before = [f"ok {i}" for i in range(20)]
    src.write_text("".join(l + "\n" for l in before) + "B" * 100_000 + "\nafter\n")
    worker = small_queue_worker(tmp_path, kafka.bootstrap, **{"offset.flush.interval.ms": "100"})
    conn = {"name": "big", "connector.class": "FileStreamSource", "file": str(src),
            "topic": topic, "max.line.bytes": "200000"}
    sk = Skiff(tmp_path, worker, [conn]).start()
    assert sk.wait(timeout=60) == 78
    assert "connector big stopped" in sk.log_text()
    assert [r["value"].decode() for r in consume(kafka.bootstrap, topic)] == before
    import offsetfile
    offs = offsetfile.load(tmp_path / "offsets")
    key = offsetfile.key("big", {"filename": str(src)})
    assert offs[key]["position"] == sum(len(l) + 1 for l in before)
