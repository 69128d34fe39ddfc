"""A file truncated (copytruncate, or truncated and written again) while skiff
is not reading it, and files that are not logs at all (/proc).

Reading is paused - skiff SIGSTOPped here, as a full producer queue during a
broker outage does - while the file is copied away and truncated several
times and grows past the position skiff had reached. Reading on at the old
position would ship a fragment of a line, skip what sits in the copies and
what the new file holds before that position, and read the rest twice.

Bounds checked:
  by hand      copies made with shutil (nothing is written between copy and
               truncation): exact - every line once, no fragment.
  logrotate    `logrotate -f` with copytruncate while a writer appends: a
               line may be missing only if no file on disk holds it (it was
               written between logrotate's copy and its truncation, which
               destroys it); every line that survived on disk is in the
               topic exactly once, and nothing else is.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import Skiff, consume

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import Writer, check_lines, line, number  # noqa: E402


def worker(tmp_path, kafka, **extra):
    w = {"bootstrap.servers": kafka.bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "200",
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(extra)
    return w


def conn(topic, name="trunc", **keys):
    c = {"name": name, "connector.class": "FileStreamSource", "topic": topic,
         "rotate.wait.ms": "500"}
    c.update({k.replace("_", "."): v for k, v in keys.items()})
    return c


def append(path, numbers, head=()):
    with open(path, "a") as f:
        f.write("".join(h + "\n" for h in head))
        f.write("".join(line(i) + "\n" for i in numbers))


def copytruncate(log, keep):
    """What logrotate's copytruncate does, without its window: shift the
    copies, copy the file to .1, truncate the file in place."""
    for k in range(keep, 0, -1):
        src = log.with_name(f"{log.name}.{k}")
        if src.exists():
            src.rename(log.with_name(f"{log.name}.{k + 1}"))
    shutil.copyfile(log, log.with_name(f"{log.name}.1"))
    os.truncate(log, 0)
    time.sleep(0.02)  # distinct birth times, as with real rotations


def numbered(vals):
    """Record values without the banner lines (those are not numbered)."""
    return [v for v in vals if not v.startswith(b"banner")]


def settle(kafka, topic, sk, want):
    consume(kafka.bootstrap, topic, n=want, timeout=90, allow_timeout=True)
    time.sleep(1.0)  # anything beyond want (duplicates) arrives too
    assert sk.stop() == 0
    return [r["value"] for r in consume(kafka.bootstrap, topic)]


def assert_exact(vals, written):
    missing, dups, _, unexpected = check_lines(vals, written)
    assert not unexpected, f"{len(unexpected)} unexpected records (fragments?): {unexpected[:3]}"
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates, first {dups[:10]}"


@pytest.mark.parametrize("banner", [False, True])
def test_copytruncate_while_paused(tmp_path, kafka, topic, banner):
    """1,000 lines are read; skiff is paused; 1,000 more are appended, then
    four copytruncate rotations each followed by 1,500 lines (more than the
    position skiff had reached). With banner, every truncation is followed by
    the same 30-line banner (1.8 KiB): the file's first bytes are the same
    each time, only the bytes before the position differ.
    Bound: exact."""
    log = tmp_path / "app.log"
    head = [f"banner {i:02d} " + "b" * 50 for i in range(30)] if banner else []
    append(log, range(1000), head)
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=1000 + len(head), timeout=60)
    os.kill(sk.pid, signal.SIGSTOP)
    try:
        append(log, range(1000, 2000))
        n = 2000
        for _ in range(4):
            copytruncate(log, keep=4)
            append(log, range(n, n + 1500), head)
            n += 1500
    finally:
        os.kill(sk.pid, signal.SIGCONT)
    vals = settle(kafka, topic, sk, n + 5 * len(head))
    assert_exact(numbered(vals), n)
    assert len(vals) - len(numbered(vals)) == 5 * len(head)
    assert [number(v) for v in numbered(vals)] == list(range(n)), "out of order"


def test_truncated_and_rewritten_while_paused(tmp_path, kafka, topic):
    """No copy: the program truncates its log and writes it again, past the
    position skiff had reached, while skiff is paused. Lines 1000-1999 exist
    nowhere any more. Bound: lines 0-999 and 2000-3999 exactly once, no
    fragment, and the truncation is logged."""
    log = tmp_path / "app.log"
    append(log, range(1000))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    consume(kafka.bootstrap, topic, n=1000, timeout=60)
    os.kill(sk.pid, signal.SIGSTOP)
    try:
        append(log, range(1000, 2000))
        os.truncate(log, 0)
        append(log, range(2000, 4000))
    finally:
        os.kill(sk.pid, signal.SIGCONT)
    vals = settle(kafka, topic, sk, 3000)
    missing, dups, _, unexpected = check_lines(vals, 4000, lost_ok=set(range(1000, 2000)))
    assert not unexpected, f"unexpected records (fragments?): {unexpected[:3]}"
    assert not missing and not dups, (missing[:10], dups[:10])
    assert "was truncated" in sk.log_text()


def lines_on_disk(logdir):
    found = set()
    for p in logdir.iterdir():
        for ln in p.read_bytes().split(b"\n"):
            if len(ln) >= 8 and ln[:8].isdigit():
                found.add(int(ln[:8]))
    return found


@pytest.mark.skiff_timeout(240)
def test_logrotate_copytruncate_while_paused(tmp_path, kafka, topic):
    """A writer appends 2,000 lines/s; skiff is paused for 6 s during which
    logrotate runs copytruncate four times. Bound: every line that survived
    on disk is in the topic exactly once; a line is allowed to be missing
    only when no file holds it (logrotate destroyed it between its copy and
    its truncation); no fragment."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    log = logdir / "app.log"
    conf = tmp_path / "logrotate.conf"
    conf.write_text(f"{log} {{\n  rotate 100\n  copytruncate\n  missingok\n  nocompress\n}}\n")
    log.write_text("")
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    writer = Writer(log, rate=2000, reopen=False)
    writer.start()
    time.sleep(2)
    os.kill(sk.pid, signal.SIGSTOP)
    try:
        for _ in range(4):
            time.sleep(1.5)
            r = subprocess.run(["logrotate", "-f", "-s", str(tmp_path / "state"), str(conf)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            assert r.returncode == 0, r.stdout
    finally:
        os.kill(sk.pid, signal.SIGCONT)
    time.sleep(1)
    written = writer.stop()
    survived = lines_on_disk(logdir)
    lost_by_logrotate = set(range(written)) - survived
    vals = settle(kafka, topic, sk, len(survived))
    missing, dups, _, unexpected = check_lines(vals, written, lost_ok=lost_by_logrotate)
    print(f"{written} lines, {len(lost_by_logrotate)} destroyed by logrotate, "
          f"{len(missing)} missing, {len(dups)} duplicates")
    assert not unexpected, f"unexpected records (fragments?): {unexpected[:3]}"
    assert not missing, f"{len(missing)} lines on disk are not in Kafka, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates, first {dups[:10]}"


def lines_on_disk_z(logdir):
    """lines_on_disk, compressed rotations included."""
    import gzip
    found = set()
    for p in logdir.iterdir():
        data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else p.read_bytes()
        for ln in data.split(b"\n"):
            if len(ln) >= 8 and ln[:8].isdigit():
                found.add(int(ln[:8]))
    return found


@pytest.mark.skiff_timeout(240)
def test_fast_copytruncate_reads_no_copy_twice(tmp_path, kafka, topic):
    """copytruncate, rotate 10, compress, delaycompress every 0.3 s while a
    writer appends 5,000 lines/s (the hostile tester: 3,168 duplicates, whole
    copies read again from byte 0 after "truncated at byte 0"). Bound: no
    duplicate, no fragment; a line may be missing only when no file holds
    it; bytes_unread_lost never counts more bytes than the lines missing."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    log = logdir / "app.log"
    conf = tmp_path / "logrotate.conf"
    conf.write_text(f"{log} {{\n  rotate 100\n  copytruncate\n  compress\n  delaycompress\n"
                    f"  missingok\n  notifempty\n}}\n")
    log.write_text("")
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, file=str(log))]).start()
    writer = Writer(log, rate=5000, reopen=False, batch_ms=1)
    writer.start()
    end = time.monotonic() + 8
    while time.monotonic() < end:
        time.sleep(0.3)
        subprocess.run(["logrotate", "-f", "-s", str(tmp_path / "state"), str(conf)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(0.5)
    written = writer.stop()
    survived = lines_on_disk_z(logdir)
    destroyed = set(range(written)) - survived
    vals = settle(kafka, topic, sk, len(survived))
    missing, dups, _, unexpected = check_lines(vals, written, lost_ok=destroyed)
    lost_bytes = sum(int(m) for m in re.findall(r"bytes_unread_lost=(\d+)", sk.log_text())[-1:])
    gone = set(range(written)) - {number(v) for v in numbered(vals)}
    print(f"{written} lines, {len(destroyed)} destroyed by logrotate, {len(missing)} missing, "
          f"{len(dups)} duplicates, bytes_unread_lost={lost_bytes} ({len(gone)} lines not shipped)")
    assert not unexpected, f"unexpected records (fragments?): {unexpected[:3]}"
    assert not dups, f"{len(dups)} duplicates, first {dups[:10]}"
    assert not missing, f"{len(missing)} lines on disk are not in Kafka, first {missing[:10]}"
    assert lost_bytes <= 61 * len(gone), f"{lost_bytes} bytes counted lost for {len(gone)} lines"


# --- item 5: /proc files ------------------------------------------------------------


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.serial
@pytest.mark.parametrize("key", ["file", "files"])
def test_proc_file_is_not_a_log(tmp_path, kafka, topic, key):
    """file=/proc/loadavg (size 0, yet it reads bytes, new ones each time):
    not a log. Bound: nothing shipped, one warning naming it and
    paths_not_regular=1 however many rescans, and it costs nothing (skiff
    sleeps: under 10% of a core over 3 s; it was 100%, with ~19,000
    duplicate records a second)."""
    c = conn(topic, rescan_interval_ms="100")
    c[key] = "/proc/loadavg"
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [c]).start()
    sk.wait_log(r"/proc/loadavg.*not a log")
    before = cpu_seconds(sk.pid)
    time.sleep(3)
    used = cpu_seconds(sk.pid) - before
    assert sk.stop() == 0
    assert consume(kafka.bootstrap, topic, timeout=2, allow_timeout=True) == []
    log = sk.log_text()
    assert log.count("not a log") == 1 and "does not exist" not in log, log
    assert counter(log, "paths_not_regular") == 1
    assert used < 0.3, f"{used:.2f} s of CPU in 3 s"


def counter(log, name):
    import re
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", log)]
    return max(vals) if vals else 0
