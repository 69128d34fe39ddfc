"""Where a file source starts reading is stored before anything is acknowledged.

A stream that starts reading a file for which no offset was ever committed
stores an anchor at once - the file's identity and the position reading
starts at (0, or the end with read.from=end) - and flushes it promptly. Lines
read but never acknowledged (a dead broker, then SIGTERM or kill -9 before
the first offset flush) are therefore read again at the next start even when
the file was rotated meanwhile: the restart finds the anchored file among
the rotated siblings by identity. Without the anchor the restart read the
path's new file from byte 0 and the rotated file was never looked at.
"""

import os
import signal
import sys
import time
from pathlib import Path

import pytest

import offsetfile
from harness import Skiff, consume

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import check_lines, line  # noqa: E402

DEAD = "127.0.0.1:1"


def worker(tmp_path, bootstrap, **extra):
    w = {"bootstrap.servers": bootstrap,
         "offset.storage.file.filename": str(tmp_path / "offsets"),
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(extra)
    return w


def write(path, numbers):
    with open(path, "a") as f:
        f.write("".join(line(i) + "\n" for i in numbers))


def wait_entries(tmp_path, n, timeout=20):
    """Waits until the offsets file holds n entries; returns them."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            offs = offsetfile.load(tmp_path / "offsets")
            if len(offs) >= n:
                return offs
        except (FileNotFoundError, ValueError):
            pass
        assert time.monotonic() < deadline, f"no {n} offsets stored within {timeout}s"
        time.sleep(0.05)


def exact(kafka, topic, sk, want):
    consume(kafka.bootstrap, topic, n=len(want), timeout=60, allow_timeout=True)
    time.sleep(1.0)  # duplicates, if any, arrive too
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, max(want) + 1,
                                               lost_ok=set(range(max(want) + 1)) - set(want))
    assert not unexpected, f"unexpected records: {unexpected[:3]}"
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates, first {dups[:10]}"
    return sk


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_unacked_lines_survive_a_rotation_before_the_restart(tmp_path, kafka, topic, sig):
    """Lines 0-999 read while the broker is unreachable, never acknowledged;
    skiff stopped (SIGTERM, or kill -9 long before offset.flush.interval.ms);
    app.log renamed to app.log.1 and 1000-1999 written to a new app.log.
    Bound: the restart ships 0-1999 exactly once."""
    log = tmp_path / "app.log"
    write(log, range(1000))
    conn = {"name": "anchor", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(log)}
    dead = Skiff(tmp_path, worker(tmp_path, DEAD), [conn], name="dead").start()
    dead.wait_log(r"reading .*app\.log from byte 0")
    offs = wait_entries(tmp_path, 1)
    assert offs[offsetfile.key("anchor", {"filename": str(log)})]["position"] == 0
    if sig == signal.SIGKILL:
        dead.kill9()
    else:
        assert dead.stop(sig) == 0
    log.rename(tmp_path / "app.log.1")
    write(log, range(1000, 2000))
    live = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="live").start()
    exact(kafka, topic, live, range(2000))


def test_read_from_end_is_not_evaluated_again_at_a_restart(tmp_path, kafka, topic):
    """read.from=end on a file holding 0-999: reading starts at its end.
    skiff stops before anything is acknowledged; 1000-1999 are written
    meanwhile. Bound: the restart ships exactly 1000-1999 (it must not take
    "the end" again and skip them)."""
    log = tmp_path / "app.log"
    write(log, range(1000))
    size = log.stat().st_size
    conn = {"name": "end", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(log), "read.from": "end"}
    dead = Skiff(tmp_path, worker(tmp_path, DEAD), [conn], name="dead").start()
    offs = wait_entries(tmp_path, 1)
    assert offs[offsetfile.key("end", {"filename": str(log)})]["position"] == size
    dead.kill9()
    write(log, range(1000, 2000))
    live = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="live").start()
    exact(kafka, topic, live, range(1000, 2000))


def test_new_files_under_a_glob_are_anchored_in_one_flush(tmp_path, kafka, topic):
    """Twenty files appear under a glob while skiff runs against a dead
    broker; each is read, nothing is acknowledged; kill -9; every file is
    rotated. Bound: the restart ships every line exactly once, and the
    anchors of the files present at the start took one write, not one per
    file."""
    logs = tmp_path / "logs"
    logs.mkdir()
    conn = {"name": "glob", "connector.class": "FileStreamSource", "topic": topic,
            "files": str(logs / "*.log"), "rescan.interval.ms": "200"}
    for k in range(20):
        write(logs / f"f{k:02d}.log", range(k * 100, k * 100 + 50))
    dead = Skiff(tmp_path, worker(tmp_path, DEAD), [conn], name="dead").start()
    wait_entries(tmp_path, 20)
    assert offsetfile.generation(tmp_path / "offsets") <= 2, "one write per file"
    for k in range(5):  # new files while running
        write(logs / f"g{k:02d}.log", range(2000 + k * 100, 2000 + k * 100 + 50))
    wait_entries(tmp_path, 25)
    dead.kill9()
    want = []
    for p in sorted(logs.iterdir()):
        p.rename(p.with_name(p.name + ".1"))
        base = 2000 if p.name.startswith("g") else 0
        k = int(p.name[1:3])
        write(p, range(base + k * 100 + 50, base + k * 100 + 100))
        want += range(base + k * 100, base + k * 100 + 100)
    live = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn], name="live").start()
    exact(kafka, topic, live, sorted(want))


def test_glob_file_rotated_while_stopped_without_a_successor(tmp_path, kafka, topic):
    """Under a glob, app.log is read to its end and skiff stops; the app
    writes 50 more lines, logrotate renames it to app.log.1 and the app
    writes no new app.log yet. The promise (docs/source-file.md, Rotation):
    a restart finds the file it was reading by identity and finishes it; or
    else counts it (files_gone_unread). Before (hostile run, issue 27):
    lines 50-99 never read, nothing logged, nothing counted."""
    logs = tmp_path / "logs"
    logs.mkdir()
    conn = {"name": "glob", "connector.class": "FileStreamSource", "topic": topic,
            "files": str(logs / "*.log"), "rescan.interval.ms": "200"}
    write(logs / "app.log", range(50))
    sk = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn]).start()
    consume(kafka.bootstrap, topic, n=50, timeout=60)
    time.sleep(1.5)
    assert sk.stop() == 0
    write(logs / "app.log", range(50, 100))
    (logs / "app.log").rename(logs / "app.log.1")
    sk.start()
    exact(kafka, topic, sk, range(100))


def counted(sk, name, since=0):
    """The last value of counter name the log shows after byte since (0: none)."""
    import re
    text = sk.log_text().encode()[since:].decode(errors="replace")
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", text)]
    return vals[-1] if vals else 0


def test_glob_file_deleted_while_stopped_is_counted_once(tmp_path, kafka, topic):
    """As above, but app.log is deleted instead of rotated: its 50 new lines
    are gone. Bound: counted as file= counts it, once - files_gone_unread=1,
    no bytes (what was written after the stop is not known), one warning
    naming the file - and not again at the next start. Before: nothing
    logged, nothing counted."""
    logs = tmp_path / "logs"
    logs.mkdir()
    conn = {"name": "glob", "connector.class": "FileStreamSource", "topic": topic,
            "files": str(logs / "*.log"), "rescan.interval.ms": "200"}
    write(logs / "app.log", range(50))
    sk = Skiff(tmp_path, worker(tmp_path, kafka.bootstrap), [conn]).start()
    consume(kafka.bootstrap, topic, n=50, timeout=60)
    time.sleep(1.5)
    assert sk.stop() == 0
    write(logs / "app.log", range(50, 100))
    (logs / "app.log").unlink()
    m = sk.log_mark()
    sk.start()
    sk.wait_log(r"app\.log: the file of the stored offset .* is gone", since=m)
    sk.wait_log(r"files_gone_unread=1", since=m)
    time.sleep(1.0)
    assert sk.stop() == 0
    text = sk.log_text().encode()[m:].decode(errors="replace")
    assert text.count("is gone") == 1, text
    assert counted(sk, "files_gone_unread", m) == 1
    assert counted(sk, "bytes_unread_lost", m) == 0
    m = sk.log_mark()
    sk.start()
    sk.wait_log(r"running \d+ connector", since=m)
    time.sleep(2.0)
    assert sk.stop() == 0
    text = sk.log_text().encode()[m:].decode(errors="replace")
    assert "is gone" not in text and "files_gone_unread" not in text, text
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, 50)
    assert not missing and not dups and not unexpected, (missing, dups, unexpected)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def restart_quiet(sk, extra, bootstrap, topic):
    """Starts sk again and checks the start warns about, counts and opens
    nothing (extra: a file written after the start is still read, its line
    in the topic before the stop); returns the process's CPU seconds 2 s
    after it runs its connectors."""
    before = len(consume(bootstrap, topic))
    m = sk.log_mark()
    sk.start()
    sk.wait_log(r"running \d+ connector", since=m)
    time.sleep(2.0)
    cpu = cpu_seconds(sk.proc.pid)
    write(extra, [9999])
    sk.wait_log(rf"reading .*{extra.name} from byte 0", since=m)
    consume(bootstrap, topic, n=before + 1, timeout=60)  # not just opened: sent
    assert sk.stop() == 0
    text = sk.log_text().encode()[m:].decode(errors="replace")
    said = [ln for ln in text.splitlines() if "warn:" in ln or "gone" in ln]
    assert not said, said[:5]
    opened = [ln for ln in text.splitlines() if "reading " in ln and extra.name not in ln]
    assert not opened, opened[:5]
    extra.unlink()
    return cpu


@pytest.mark.parametrize("ending", ["stop", "kill9"])
def test_many_stale_offsets_of_deleted_files_cost_nothing(tmp_path, kafka, topic, ending):
    """A glob of dated files keeps an offset for each file it ever read (as
    Connect keeps every stored offset). 2,000 files are read, deleted while
    skiff runs (read to their end: nothing lost), skiff stops. Bound: the
    restart warns about none, counts none, opens none. After a kill -9
    nothing said they were let go: the restart cannot tell them from files
    lost since, and counts each once (files_gone_unread=2000, no bytes); its
    stop stores them as let go, and the start after it is quiet. The start's
    CPU is printed, not asserted (the machine is shared)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    conn = {"name": "dated", "connector.class": "FileStreamSource", "topic": topic,
            "files": str(logs / "app-*.log"), "rescan.interval.ms": "200",
            "rotate.wait.ms": "200"}
    for k in range(2000):
        write(logs / f"app-{k:04d}.log", [k])
    w = worker(tmp_path, kafka.bootstrap, **{"offset.flush.interval.ms": "200"})
    sk = Skiff(tmp_path, w, [conn]).start()
    consume(kafka.bootstrap, topic, n=2000, timeout=120)
    wait_entries(tmp_path, 2000)
    time.sleep(1.5)  # the last acknowledgements flushed
    for p in logs.iterdir():
        p.unlink()
    time.sleep(3.0)  # every deletion seen, every file let go
    if ending == "stop":
        assert sk.stop() == 0
    else:
        sk.kill9()
        m = sk.log_mark()
        sk.start()
        sk.wait_log(r"running \d+ connector", since=m)
        time.sleep(2.0)
        cpu = cpu_seconds(sk.proc.pid)
        assert sk.stop() == 0
        text = sk.log_text().encode()[m:].decode(errors="replace")
        assert text.count("is gone") == 2000
        assert counted(sk, "files_gone_unread", m) == 2000
        assert counted(sk, "bytes_unread_lost", m) == 0
        print(f"\nstart CPU resolving 2,000 stale offsets after a kill -9: {cpu:.2f} s")
    cpu = restart_quiet(sk, logs / "app-9999.log", kafka.bootstrap, topic)
    print(f"\nstart CPU with 2,000 stale offsets let go ({ending}): {cpu:.2f} s")
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, _, _, unexpected = check_lines(vals, 10000, lost_ok=set(range(2000, 9999)))
    assert not missing and not unexpected, (missing[:5], unexpected[:5])


def test_restarted_idle_skiff_writes_nothing(tmp_path, kafka, topic):
    """Offsets stored, nothing new: a restarted skiff anchors nothing and
    writes no offsets."""
    log = tmp_path / "app.log"
    write(log, range(10))
    conn = {"name": "idle", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(log)}
    w = worker(tmp_path, kafka.bootstrap, **{"offset.flush.interval.ms": "100"})
    sk = Skiff(tmp_path, w, [conn]).start()
    consume(kafka.bootstrap, topic, n=10, timeout=60)
    assert sk.stop() == 0
    st = os.stat(tmp_path / "offsets")
    m = sk.log_mark()
    sk.start()
    sk.wait_log(r"reading .*app\.log from byte", since=m)
    time.sleep(2.0)
    st2 = os.stat(tmp_path / "offsets")
    assert (st.st_ino, st.st_mtime_ns) == (st2.st_ino, st2.st_mtime_ns)
    assert sk.stop() == 0
