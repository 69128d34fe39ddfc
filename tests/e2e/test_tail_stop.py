"""A clean stop while Kafka is away: what it drops, it says and counts.

A SIGTERM with records read but never acknowledged (the broker away) drops
them; the next start reads them again from the stored offset, but only
from the files still there. The stop names each file holding them and
says which are read again; a file deleted since is read through and
counted then (bytes, lines, named) - once: the restart does not count the
stored offset's file again. For the stored offset's file still on disk at
the stop, its size then is kept in the offset ("seen"), so that when it is
deleted before the restart the restart counts the bytes it held past the
offset, not only the file.
"""

import re
import sys
import time
from pathlib import Path

import offsetfile
from harness import Skiff, consume
from outage import counter
from test_rest import free_port, metric_values, wait_http

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import check_lines, line  # noqa: E402

DEAD = "127.0.0.1:1"
LINE = len(line(0)) + 1


def worker(tmp_path, bootstrap, **extra):
    w = {"bootstrap.servers": bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "500",
         "offset.flush.timeout.ms": "1000",
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(extra)
    return w


def write(path, numbers):
    with open(path, "a") as f:
        f.write("".join(line(i) + "\n" for i in numbers))


def produced(port):
    return sum(v for _, v in metric_values(port, "skiff_records_produced_total"))


def wait_produced(port, n, timeout=60):
    deadline = time.monotonic() + timeout
    while produced(port) < n:
        assert time.monotonic() < deadline, f"{produced(port)} of {n} records produced"
        time.sleep(0.1)


def dead_skiff(tmp_path, conn):
    """skiff against an unreachable broker, with the REST port (metrics)."""
    port = free_port()
    sk = Skiff(tmp_path, worker(tmp_path, DEAD, listeners=f"http://127.0.0.1:{port}"), [conn],
               name="dead").start()
    wait_http(port)
    return sk, port


def shipped(kafka, topic, want, sk):
    """Waits for the records of want, stops sk; returns the line numbers
    in the topic, checked for duplicates and strangers."""
    consume(kafka.bootstrap, topic, n=len(want), timeout=60, allow_timeout=True)
    time.sleep(1.0)  # more, if any, arrive too
    assert sk.stop() == 0, sk._tail()
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    top = max(want) + 1
    missing, dups, _, unexpected = check_lines(vals, top)
    assert not unexpected and not dups, (unexpected[:3], dups[:3])
    return sorted(set(range(top)) - set(missing))


def test_stored_file_deleted_after_the_stop_is_counted_to_the_byte(tmp_path, kafka, topic):
    """Lines 0-499 acknowledged; 500-999 read while the broker is away,
    unacknowledged at the SIGTERM; the file is still there, so the stop
    says they are read again, and keeps the file's size in the offset.
    The file is deleted before the restart (a rotation while skiff was
    stopped): the restart counts the 500 lines' bytes exactly, and the
    file once. (Before: the stop said "read again" and the restart counted
    the file, no bytes.)"""
    log = tmp_path / "app.log"
    conn = {"name": "stop", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(log)}
    write(log, range(500))
    live = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="live").start()
    consume(kafka.bootstrap, topic, n=500, timeout=60)
    assert live.stop() == 0
    key = offsetfile.key("stop", {"filename": str(log)})
    assert offsetfile.load(tmp_path / "offsets")[key]["position"] == 500 * LINE

    write(log, range(500, 1000))
    dead, port = dead_skiff(tmp_path, conn)
    wait_produced(port, 500)
    assert dead.stop() == 0, dead._tail()
    said = dead.log_text()
    assert re.search(r"500 records still unacknowledged", said), said
    assert re.search(rf"{re.escape(str(log))} \(inode \d+\) from byte {500 * LINE} to "
                     rf"{1000 * LINE}: on disk, read again at the next start", said), said
    stored = offsetfile.load(tmp_path / "offsets")[key]
    assert stored["position"] == 500 * LINE and stored["seen"] == 1000 * LINE, stored

    log.unlink()
    write(log, range(1000, 1500))
    again = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="again").start()
    got = shipped(kafka, topic, list(range(500)) + list(range(1000, 1500)), again)
    assert got == list(range(500)) + list(range(1000, 1500))
    text = again.log_text()
    assert re.search(rf"the file of the stored offset \(inode \d+\) is gone: the {500 * LINE} "
                     rf"bytes it held after byte {500 * LINE} at the last stop were not read",
                     text), text
    assert counter(again, "bytes_unread_lost") == 500 * LINE
    assert counter(again, "files_gone_unread") == 1
    assert counter(dead, "files_gone_unread") == 0


def test_files_deleted_during_the_outage_are_counted_at_the_stop_once(tmp_path, kafka, topic):
    """The broker away: 0-999 read from app.log, which is then rotated
    (app.log.1) and deleted while held; 1000-1499 read from the new
    app.log. SIGTERM: nothing was acknowledged. The stop says app.log.1's
    1000 lines are lost (it is gone) and counts them with their bytes, and
    says the new app.log's are read again; the restart ships 1000-1499 and
    counts nothing more: the stored offset's file counts once. (Before:
    the 1000 lines went uncounted, the stop said all were read again, and
    the restart counted the file alone.)"""
    log = tmp_path / "app.log"
    rotated = tmp_path / "app.log.1"
    # Kept open for late writes long enough (rotate.wait.ms) that the
    # rotated file is held at the stop however slow the machine.
    conn = {"name": "stop", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(log), "rotate.wait.ms": "120000"}
    write(log, range(1000))
    dead, port = dead_skiff(tmp_path, conn)
    wait_produced(port, 1000)
    log.rename(rotated)
    write(log, range(1000, 1500))
    wait_produced(port, 1500)
    rotated.unlink()
    time.sleep(0.5)
    assert dead.stop() == 0, dead._tail()
    said = dead.log_text()
    assert re.search(r"1500 records still unacknowledged", said), said
    assert re.search(r"\(inode \d+\) from byte 0 to %d, deleted since: %d bytes, 1000 lines lost "
                     r"\(counted in bytes_unread_lost" % (1000 * LINE, 1000 * LINE), said), said
    assert re.search(rf"{re.escape(str(log))} \(inode \d+\) from byte 0 to {500 * LINE}: on disk, "
                     rf"read again at the next start", said), said
    assert counter(dead, "lines_unread_lost") == 1000
    assert counter(dead, "bytes_unread_lost") == 1000 * LINE
    assert counter(dead, "files_gone_unread") == 1

    again = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="again").start()
    got = shipped(kafka, topic, list(range(1000, 1500)), again)
    assert got == list(range(1000, 1500))
    assert counter(again, "files_gone_unread") == 0, again.log_text()
    assert counter(again, "bytes_unread_lost") == 0
    assert "is gone" not in again.log_text()
