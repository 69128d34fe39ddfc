"""Shared pieces of the fault suite (tests/e2e/test_fault*.py).

Every scenario writes input tagged with sequence numbers (SeqSource: fixed-width
lines "00000042 ......", so a byte position names a line), reads the topic
back with the consume tool, and judges it with check_delivery(): no sequence
number lost, first appearances in order, and duplicates only where the bound
of the scenario allows them. The at-least-once bound is always the same: a
restart may re-send only lines at or after the offset that was durable when
the previous process died; check_delivery(resume=...) checks exactly that, run
by run, from the order of the topic.

Profiles: SKIFF_PROFILE=short (the default, CI) or long (scripts/test.sh --long);
scaled(short, long) picks a figure. Figures worth reporting are printed with a
"FIGURE" prefix (pytest -s shows them; tests/faults/figures.sh collects them).

Standard library only, like harness.py (imported from tests/e2e).
"""

import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import harness
from harness import Skiff

PROFILE = os.environ.get("SKIFF_PROFILE", "short")
LONG = PROFILE == "long"
REPO = Path(__file__).resolve().parents[2]

# strace and LD_PRELOAD runs: LeakSanitizer cannot run under ptrace, and
# ASan must not insist on coming first in the library list.
ASAN_TRACED = "detect_leaks=0:abort_on_error=0:verify_asan_link_order=0"


def scaled(short, long):
    """The figure of the current profile."""
    return long if LONG else short


def figure(name, value):
    """Prints a figure for the report (and docs/guarantees.md's table)."""
    line = f"FIGURE {name}: {value}"
    print(line)
    out = os.environ.get("SKIFF_FIGURES")
    if out:
        with open(out, "a") as f:
            f.write(line + "\n")


# --- input tagged with sequence numbers ---------------------------------------

WIDTH = 32  # bytes per line, newline included


def seq_line(i):
    """Line i without its newline: 8 digits, a blank, dots to WIDTH - 1 bytes."""
    return f"{i:08d} ".ljust(WIDTH - 1, ".").encode()


class SeqSource:
    """A file of sequence lines, appended with whole-line writes (O_APPEND)."""

    def __init__(self, path):
        self.path = Path(path)
        self.next = 0
        self.lock = threading.Lock()
        if self.path.exists():
            size = self.path.stat().st_size
            assert size % WIDTH == 0, f"{self.path}: {size} bytes is not whole lines"
            self.next = size // WIDTH

    def append(self, n):
        """Appends the next n lines in one write; returns the new count."""
        with self.lock:
            data = b"".join(seq_line(i) + b"\n" for i in range(self.next, self.next + n))
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
            self.next += n
            return self.next

    @staticmethod
    def line_at(position):
        """The sequence number of the line starting at byte position."""
        assert position % WIDTH == 0, f"position {position} is not at a line boundary"
        return position // WIDTH


class Writer(threading.Thread):
    """Appends to a SeqSource at about rate lines a second, in chunks, until
    stop() or, with limit, until the source holds limit lines; from there on
    at trickle lines a second (0: none). The application a skiff tails."""

    def __init__(self, source, rate, chunk_interval=0.05, limit=None, trickle=0):
        super().__init__(daemon=True)
        self.source, self.rate, self.interval = source, rate, chunk_interval
        self.limit, self.trickle = limit, trickle
        self._halt = threading.Event()

    def run(self):
        carry, last = 0.0, time.monotonic()
        while not self._halt.wait(self.interval):
            now = time.monotonic()
            full = self.limit is not None and self.source.next >= self.limit
            carry += (now - last) * (self.trickle if full else self.rate)
            last = now
            n = int(carry)
            if not full and self.limit is not None and n > self.limit - self.source.next:
                n = self.limit - self.source.next
                carry = n  # the rest of this chunk is not owed to the trickle
            if n >= 1:
                self.source.append(n)
                carry -= n

    def stop(self):
        self._halt.set()
        self.join()
        return self.source.next


_SEQ = re.compile(rb"(\d{8}) \.+")


def seqs_of(records):
    """The sequence numbers of consumed records, in topic order."""
    out = []
    for r in records:
        m = _SEQ.fullmatch(r["value"] or b"")
        if not m or len(r["value"]) != WIDTH - 1:
            raise AssertionError(f"a record that no writer wrote: {r['value'][:80]!r} "
                                 f"(partition {r['partition']} offset {r['offset']})")
        out.append(int(m.group(1)))
    return out


def runs_of(seqs):
    """Maximal runs of consecutive sequence numbers, as (first, last)."""
    runs = []
    for s in seqs:
        if runs and s == runs[-1][1] + 1:
            runs[-1][1] = s
        else:
            runs.append([s, s])
    return [tuple(r) for r in runs]


def check_delivery(seqs, n, resume=None, max_dups=None, what="topic"):
    """Judges a topic holding sequence numbers seqs (topic order) against n
    lines written. Fails on a loss, a number never written, first appearances
    out of order, a run that starts where no restart could resume (resume: the
    set of durable line numbers at each kill; None: not checked), or more than
    max_dups duplicates. Returns {"records", "dups", "runs"}."""
    unknown = sorted({s for s in seqs if s >= n})
    assert not unknown, f"{what}: sequence numbers never written: {unknown[:10]}"
    seen, firsts = set(), []
    for s in seqs:
        if s not in seen:
            seen.add(s)
            firsts.append(s)
    missing = sorted(set(range(n)) - seen)
    assert not missing, (f"{what}: {len(missing)} of {n} lines LOST, first "
                         f"{missing[:10]}")
    assert firsts == list(range(n)), (
        f"{what}: order broken: first appearance of {next(b for a, b in zip(range(n), firsts) if a != b)} "
        f"comes too early")
    runs = runs_of(seqs)
    if resume is not None:
        allowed = set(resume)
        bad = [r for r in runs[1:] if r[0] not in allowed]
        assert not bad, (f"{what}: a restart re-sent from line {bad[0][0]}, which was not "
                         f"the durable offset at any kill (durable: "
                         f"{sorted(allowed)[:20]}...); runs {runs[:12]}")
    dups = len(seqs) - n
    if max_dups is not None:
        assert dups <= max_dups, f"{what}: {dups} duplicates, the bound is {max_dups}"
    return {"records": len(seqs), "dups": dups, "runs": runs}


def read_topic(bootstrap, topic, n, timeout=120):
    """Waits until the topic holds at least n records, then returns the
    sequence numbers of all of them."""
    return seqs_of(harness.consume(bootstrap, topic, n=n, timeout=timeout))


# --- the offset store, as a restart would load it ------------------------------


def load_store(path):
    """What skiff would load from the offset file at path (offsets_dump):
    {"ok", "generation", "from_prev", "entries": {key: value dict}} or
    {"ok": False, "kind", "error"}. Like skiff, removes a stale PATH.tmp."""
    r = subprocess.run([str(harness.tool("offsets_dump")), str(path)], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    if r.returncode != 0:
        raise AssertionError(f"offsets_dump {path}: exit {r.returncode}: {r.stderr.decode()}")
    res = json.loads(r.stdout)
    if res["ok"]:
        res["entries"] = {k: json.loads(v) for k, v in res["entries"]}
    return res


def file_key(connector, source_path):
    """Connect's offset key of a file connector's partition."""
    return json.dumps([connector, {"filename": str(source_path)}], separators=(",", ":"),
                      ensure_ascii=False)


def durable_line(store_path, connector, source_path):
    """(generation, line number) a restart resumes from; fails unless the
    store loads."""
    res = load_store(store_path)
    assert res["ok"], f"the offset store does not load after the fault: {res['error']}"
    value = res["entries"].get(file_key(connector, source_path))
    return res["generation"], SeqSource.line_at(value["position"]) if value else 0


def peek_line(store_path, connector, source_path):
    """The line the store at store_path resumes from, read with the Python
    reader without removing anything: safe while skiff runs. 0 when there is
    no store or no entry."""
    import offsetfile
    if not Path(store_path).exists():
        return 0
    value = offsetfile.load(store_path).get(file_key(connector, source_path))
    return SeqSource.line_at(value["position"]) if value else 0


def log_since(sk, mark):
    """What sk logged from byte mark on."""
    with open(sk.log_file, "rb") as f:
        f.seek(mark)
        return f.read().decode(errors="replace")


# --- skiff under a wrapper (strace, eatmydata, valgrind) ------------------------


def worker_props(bootstrap, state_dir, **extra):
    """A worker configuration for fault tests: StringConverter values, offsets
    in state_dir/offsets, a short flush interval (many generations)."""
    props = {"bootstrap.servers": bootstrap,
             "offset.storage.file.filename": str(Path(state_dir) / "offsets"),
             "offset.flush.interval.ms": "100",
             "offset.flush.timeout.ms": "3000",
             "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    props.update({k.replace("__", "."): str(v) for k, v in extra.items()})
    return props


def file_connector(name, source_path, topic, **extra):
    props = {"name": name, "connector.class": "FileStreamSource", "file": str(source_path),
             "topic": topic}
    props.update({k.replace("__", "."): str(v) for k, v in extra.items()})
    return props


class FaultSkiff(Skiff):
    """harness.Skiff that can run under a wrapper command (strace, eatmydata),
    with the process group killed as one."""

    def start(self, extra_args=(), wrap=()):
        # harness.Skiff launches; a wrapped skiff is traced: other ASan options.
        return super().start(extra_args, wrap=wrap,
                             asan_options=ASAN_TRACED if wrap else None)

    def skiff_pid(self, timeout=10):
        """The pid of skiff itself (the wrapper's child when wrapped)."""
        deadline = time.monotonic() + timeout
        binary = os.path.realpath(harness.skiff_bin())
        seen = {}
        while time.monotonic() < deadline and self.proc.poll() is None:
            for pid in _group_pids(self.proc.pid):
                try:
                    seen[pid] = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if seen[pid] == binary:
                    return pid
            time.sleep(0.02)
        raise harness.HarnessError(
            f"skiff did not show up under its wrapper (wrapper exit {self.proc.poll()}, "
            f"processes of its group: {seen}); log tail:\n{self._tail()}")

    def term(self, timeout=30):
        """SIGTERM to skiff itself (not the wrapper); waits for the exit."""
        os.kill(self.skiff_pid(), signal.SIGTERM)
        return self.wait(timeout)


def _group_pids(pgid):
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.getpgid(int(d)) == pgid:
                    out.append(int(d))
            except OSError:
                pass
    return out


def proc_status(pid, field):
    """A /proc/PID/status field in kB (VmRSS, VmHWM), or None."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def proc_io(pid, field):
    """A /proc/PID/io counter (rchar: bytes the process got from read(2) and
    pread(2) of any descriptor), or None."""
    try:
        for line in open(f"/proc/{pid}/io"):
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def wait_for(cond, timeout, what, interval=0.05):
    """Polls cond() until true; fails with what after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")
