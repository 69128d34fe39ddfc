"""The outage scenario of issue 22, shared by tests/e2e/test_tail_outage.py and
tests/bench/bench_outage.py: an app writes numbered lines of 76 bytes at a
steady rate, real logrotate runs every 0.5 s (size 100k, rotate 2, compress,
create by default), and the broker is stopped for a while. Afterwards the
topic is read back and compared with what was written: the lines missing,
and what skiff counted lost (bytes_unread_lost, lines_unread_lost,
files_gone_unread, the warnings naming files). While it runs, the deleted
files skiff holds open are sampled from /proc: the disk they take.

Standard library only, like harness.py.
"""

import os
import re
import sys
import threading
import time
from pathlib import Path

from harness import Skiff, consume
from rotator import Rotator

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import Writer, check_lines  # noqa: E402

LINE_BYTES = 76  # "NNNNNNNN w xxx...x\n"


class HeldSampler(threading.Thread):
    """Samples the deleted files a process holds open (/proc/PID/fd): the
    most of them at once and the most bytes they took at once."""

    def __init__(self, pid, every=0.1):
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.max_files = self.max_bytes = 0
        # The same while reading pauses (set `pausing` then), before the
        # files read once it resumes linger for late writes.
        self.pausing = False
        self.paused_files = self.paused_bytes = 0
        self._halt = threading.Event()

    def sample(self):
        files = size = 0
        try:
            fds = os.listdir(f"/proc/{self.pid}/fd")
        except FileNotFoundError:
            return
        for fd in fds:
            p = f"/proc/{self.pid}/fd/{fd}"
            try:
                if not os.readlink(p).endswith(" (deleted)"):
                    continue
                st = os.stat(p)
            except OSError:
                continue
            if (st.st_mode & 0o170000) == 0o100000:
                files += 1
                size += st.st_blocks * 512
        self.max_files = max(self.max_files, files)
        self.max_bytes = max(self.max_bytes, size)
        if self.pausing:
            self.paused_files = max(self.paused_files, files)
            self.paused_bytes = max(self.paused_bytes, size)

    def run(self):
        while not self._halt.wait(self.every):
            self.sample()

    def stop(self):
        self._halt.set()
        self.join(10)


def cpu_seconds(pid):
    """utime + stime of a process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def counter(sk, name, marks=(0,)):
    """The last value skiff logged for a counter ("connector X: name=N"),
    summed over its runs: marks are where each run's log begins (a restart
    counts from 0 again)."""
    text = sk.log_text().encode()
    total = 0
    for i, at in enumerate(marks):
        end = marks[i + 1] if i + 1 < len(marks) else len(text)
        vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", text[at:end].decode(errors="replace"))]
        total += max(vals) if vals else 0
    return total


class Scene:
    """What a `mid` callable of run() may act on: the running skiff, the
    writer and the rotator, and restart() (which keeps the counters and the
    held-file sampling right across skiff runs)."""

    def __init__(self, sk, writer, rot, held):
        self.sk, self.writer, self.rot, self.held = sk, writer, rot, held
        self.marks = [0]

    def restart(self):
        self.marks.append(self.sk.log_mark())
        self.sk.start()
        self.held.pid = self.sk.pid


def logrotate_conf(log, directives):
    return f"{log} {{\n" + "".join(f"  {d}\n" for d in directives) + "  missingok\n}\n"


def run(tmp_path, broker, topic, outage, before=3.0, after=5.0, rate=2000, connector=None,
        worker=None, directives=("size 100k", "rotate 2", "compress", "create"),
        pause_offsets=None, drain_timeout=180, skiff_env=None, mid=None, back=None):
    """Runs the scenario against broker (running at the start; stopped for
    `outage` seconds after `before`, then started again; the writer goes on
    for `after` seconds more). connector, worker: keys added to skiff's.
    pause_offsets: a callable(skiff) run instead of the broker stop (then
    `outage` is how long it lasts; it returns a callable that ends it).
    mid: a callable(Scene) run halfway through the broker's outage (it may
    stop or kill skiff, stop the writer, restart skiff). back: a callable(Scene)
    run right after the broker is started again (e.g. restart a skiff mid
    killed).

    Returns a dict: written, missing (line numbers), dups, unexpected,
    counted (bytes_unread_lost, lines_unread_lost, files_gone_unread),
    named (files named in loss warnings), held_files/held_bytes (peak, from
    /proc), rotations, skiff (the Skiff)."""
    logdir = tmp_path / "logs"
    logdir.mkdir()
    log = logdir / "app.log"
    log.write_text("")
    conf = tmp_path / "logrotate.conf"
    conf.write_text(logrotate_conf(log, directives))
    w = {"bootstrap.servers": broker.bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "offset.flush.interval.ms": "1000",
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(worker or {})
    c = {"name": "outage", "connector.class": "FileStreamSource", "topic": topic,
         "file": str(log)}
    c.update(connector or {})
    sk = Skiff(tmp_path, w, [c], env=skiff_env).start()
    sk.wait_log(r"reading .*app\.log from byte", timeout=60)
    writer = Writer(log, rate=rate, reopen=True, width=LINE_BYTES - 1)
    rot = Rotator(conf, tmp_path / "logrotate.state", every=0.5, force=False)
    held = HeldSampler(sk.pid)
    scene = Scene(sk, writer, rot, held)
    writer.start()
    rot.start()
    held.start()
    try:
        time.sleep(before)
        t0 = time.monotonic()
        cpu0 = cpu_seconds(sk.pid)
        if pause_offsets is None:
            broker.stop()
            if mid is not None:
                time.sleep(outage / 2)
                mid(scene)
            # Sampled "while reading paused" once the files read before
            # stopped lingering for late writes (rotate.wait.ms, 5 s).
            time.sleep(max(0.0, min(8.0, outage / 2) - (time.monotonic() - t0)))
            held.pausing = True
            time.sleep(max(0.0, outage - (time.monotonic() - t0)))
            held.pausing = False
            cpu = cpu_seconds(sk.pid) - cpu0 if mid is None else 0.0
            broker.start()
            if back is not None:
                back(scene)
        else:
            end = pause_offsets(sk)
            time.sleep(max(0.0, min(8.0, outage / 2) - (time.monotonic() - t0)))
            held.pausing = True
            time.sleep(max(0.0, outage - (time.monotonic() - t0)))
            held.pausing = False
            cpu = cpu_seconds(sk.pid) - cpu0
            end()
        time.sleep(after)
    finally:
        written = writer.stop()
        rot.stop()
    assert not rot.errors, rot.errors[:3]
    # Everything left on disk ships; wait until the topic stops growing.
    lost_now = counter(sk, "lines_unread_lost", scene.marks)
    values = drain(broker, topic, written - lost_now, drain_timeout)
    held.stop()
    assert sk.running(), sk._tail()
    assert sk.stop() == 0, sk._tail()
    records = consume(broker.bootstrap, topic)
    values = [r["value"] for r in records]
    missing, dups, _, unexpected = check_lines(values, written)
    named = re.findall(r"rotated file (\S+) was deleted before skiff could open it|"
                       r"let go of rotated file (inode \d+) .* lost|"
                       r"closing rotated file (inode \d+) .* lost|"
                       r"rotated file (inode \d+) .*held when skiff stopped, is gone|"
                       r"stored offset \((inode \d+), held when skiff stopped|"
                       r"(\S+ was truncated (?:at byte \d+|again)), and (?:its|that) copy deleted|"
                       r"at this stop: \S+ \((inode \d+)\) .* lost", sk.log_text())
    return {"written": written, "missing": missing, "dups": dups, "unexpected": unexpected,
            "bytes_unread_lost": counter(sk, "bytes_unread_lost", scene.marks),
            "lines_unread_lost": counter(sk, "lines_unread_lost", scene.marks),
            "files_gone_unread": counter(sk, "files_gone_unread", scene.marks),
            "marks": scene.marks, "records": records,
            "named": named, "held_files": held.max_files, "held_bytes": held.max_bytes,
            "paused_files": held.paused_files, "paused_bytes": held.paused_bytes,
            "paused_cpu": cpu,
            "rotations": writer.reopens,
            "skiff": sk}


def drain(broker, topic, want, timeout):
    """Waits until the topic holds want records, or stops growing for 10 s."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        n = len(consume(broker.bootstrap, topic, timeout=30))
        if n >= want:
            return n
        if n != last:
            last, since = n, time.monotonic()
        elif time.monotonic() - since > 10:
            return n
        time.sleep(1)
    return last


def ranges(numbers):
    """Sorted line numbers as [(first, last), ...] runs."""
    out = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


def summary(r):
    lost = len(r["missing"])
    return (f"{r['written']} lines written, {lost} lost ({100.0 * lost / max(1, r['written']):.1f}%), "
            f"counted lost: {r['lines_unread_lost']} lines, {r['bytes_unread_lost']} bytes "
            f"(lost lines' bytes {lost * LINE_BYTES}), {r['files_gone_unread']} files; "
            f"held at most {r['held_files']} deleted files, {r['held_bytes'] / 1e6:.1f} MB "
            f"({r['paused_files']}, {r['paused_bytes'] / 1e6:.1f} MB while reading paused, "
            f"skiff's CPU then {r['paused_cpu']:.2f} s); "
            f"{len(r['dups'])} duplicates")
