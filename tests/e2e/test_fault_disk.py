"""Fault suite, 4: fsync and write errors, and a full file system.

Injected with strace (the call is not executed, it fails with the errno):
EIO from the temp file's fsync, ENOSPC from its write and from its creation,
EIO from the rename into place and from the directory fsync. Then a real full
disk: a small tmpfs holding the state directory, filled up, freed, filled.

Bound checked: a failed flush never renames its temp file into place after the
failure (strace record), never leaves a temp file behind, leaves the previous
generation loadable (a kill -9 in the middle of the failures proves it), and
the first flush after the fault clears succeeds; no line lost; duplicates only
from a restart at the durable offset; zero without a restart. Stopping while
the disk is full exits 75 (restart me) and says why."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import crashsim  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
import offsetfile  # noqa: E402

# (name, syscall, the file strace matches ("" for the directory), errno,
# whether the new file is in place when the call fails, and which calls fail
# in the recorded run). The recorder watches the directory, the store, .prev
# and .tmp (strace -P), and strace counts calls over that set: a fresh store
# loads with two openat calls, then each flush opens the directory, creates
# the temp file, fsyncs it, fsyncs the directory, closes both; the first
# flush does not rotate (nothing to rotate). The trace check below confirms
# every failure hit the intended call.
FAULTS = [
    ("fsync tmp EIO", "fsync", "offsets.tmp", "EIO", False, "3+"),
    ("write tmp ENOSPC", "write", "offsets.tmp", "ENOSPC", False, "2+"),
    ("create tmp ENOSPC", "openat", "offsets.tmp", "ENOSPC", False, "6+2"),
    ("rename into place EIO", "rename", "offsets.tmp", "EIO", False, "3+"),
    ("fsync directory EIO", "fsync", "", "EIO", True, "4+2"),
] + fl.scaled([], [
    ("close tmp EIO", "close", "offsets.tmp", "EIO", False, "3+2"),
    ("rename to prev EIO", "rename", "offsets", "EIO", False, "2+"),
    ("write tmp EIO", "write", "offsets.tmp", "EIO", False, "2+"),
])


@pytest.fixture(autouse=True)
def whole_file_writes(request, monkeypatch):
    """The injected faults above target the whole-file write (temp file,
    fsync, rename, directory fsync). Since 477454c most flushes append to
    offsets.log instead, so each write here is made a whole-file one
    (SKIFF_OFFSETS_COMPACT_BYTES=0); test_fault_log_append_errors covers the
    log. The full-disk pause too: an append can still fit in the last page
    of a full tmpfs, and succeed (offsets saved: nothing to pause for), which
    test_fault_full_disk_then_space_returns runs with the default."""
    if request.node.name.startswith(("test_fault_flush_errors",
                                     "test_fault_full_disk_pauses_reading")):
        monkeypatch.setenv("SKIFF_OFFSETS_COMPACT_BYTES", "0")


def count(sk, pattern, mark=0):
    with open(sk.log_file, "rb") as f:
        f.seek(mark)
        return len(re.findall(pattern.encode(), f.read()))


def flushes(events, state):
    """The events split at each opening of the state directory (one flush
    attempt each)."""
    out = []
    for e in events:
        if e["op"] in ("open", "create") and e.get("directory") and e["ok"]:
            out.append([])
        if out:
            out[-1].append(e)
    return out


def check_failed_flushes(events, state, syscall, match, errno_name):
    """Every failure hit syscall on match; in every flush attempt where one
    did: no rename of the temp file after the failure, and the temp file is
    gone at its end. Returns the number of failed attempts."""
    tmp = str(state / "offsets.tmp")
    target = str(state / match) if match else str(state)
    op = {"openat": "create", "close": "close", "fsync": "fsync", "write": "write",
          "rename": "rename"}[syscall]
    failed = 0
    for attempt in flushes(events, state):
        fds = {e["fd"]: e["path"] for e in attempt if e["op"] in ("open", "create") and e["ok"]}
        bad = [i for i, e in enumerate(attempt) if e["ok"] is False and e.get("err") == errno_name]
        if not bad:
            continue
        failed += 1
        e = attempt[bad[0]]
        where = e.get("path") or e.get("src") or fds.get(e.get("fd"))
        assert e["op"] == op and where == target, f"the fault hit {e} ({where}), not {target}"
        after = attempt[bad[0] + 1:]
        assert not any(x["op"] == "rename" and x["src"] == tmp for x in after), \
            f"the temp file was renamed into place after {e}"
        created = any(x["op"] == "create" and x["path"] == tmp and x["ok"] for x in attempt)
        renamed = any(x["op"] == "rename" and x["src"] == tmp and x["ok"] for x in attempt)
        if created and not renamed and attempt[-1]["ok"] is not None:
            assert any(x["op"] == "unlink" and x["path"] == tmp and x["ok"] for x in after), \
                f"the temp file of a failed flush was left: {[x['op'] for x in attempt]}"
    return failed


@pytest.mark.skiff_timeout(fl.scaled(200, 600))
@pytest.mark.parametrize("name,syscall,match,errno_name,in_place,when", FAULTS,
                         ids=[f[0].replace(" ", "-") for f in FAULTS])
def test_fault_flush_errors(tmp_path, kafka, topic, name, syscall, match, errno_name, in_place,
                            when):
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("de", src.path, topic)])
    writer = fl.Writer(src, rate=500)
    writer.start()
    target = state / match if match else state
    record = crashsim.record_cmd(tmp_path / "trace-1.txt", state)
    try:
        # Phase 1: every flush from the second on fails; kill -9 in the middle.
        sk.start(["--log-level", "debug"],
                 wrap=[*record, "-e", f"inject={syscall}:error={errno_name}:when={when}"])
        fl.wait_for(lambda: count(sk, r"offsets: .*(Input/output error|No space left)") >= 3
                    or not sk.running(), 30, "three failed flushes")
        assert sk.running(), f"skiff exited ({sk.exitcode}) on a failed flush"
        sk.kill9()
        events = crashsim.parse_trace(tmp_path / "trace-1.txt")
        assert check_failed_flushes(events, state, syscall, match, errno_name) >= 3
        res = fl.load_store(state / "offsets")
        assert res["ok"], f"after failed flushes and a kill the store does not load: {res}"
        if not in_place:
            assert res["generation"] == 1, f"generation {res['generation']}: not the last good one"
        _, durable = fl.durable_line(state / "offsets", "de", src.path)
        # Phase 2: three failures, then the fault clears: the next flush succeeds.
        mark = sk.log_mark()
        sk.start(["--log-level", "debug"],
                 wrap=["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(target),
                       "-e", f"trace={syscall}",
                       "-e", f"inject={syscall}:error={errno_name}:when=1..3"])
        fl.wait_for(lambda: count(sk, r"offsets: flushed", mark) >= 1 and
                    count(sk, r"offsets: .*(Input/output error|No space left)", mark) >= 3
                    or not sk.running(), 30, "three failures, then a flush")
        assert sk.running()
        assert sk.term() == 0
        assert not (state / "offsets.tmp").exists(), "a temp file was left behind"
    finally:
        n = writer.stop()
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, n)
    assert sk.stop() == 0
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n,
                              resume={0, durable})
    fl.figure(f"disk.{name.replace(' ', '_')}", f"{stats['dups']} duplicates after a kill "
                                                 f"during the failures")


@pytest.mark.skiff_timeout(fl.scaled(120, 300))
@pytest.mark.parametrize("syscall,errno_name", [("fsync", "EIO"), ("write", "ENOSPC")])
def test_fault_log_append_errors(tmp_path, kafka, topic, syscall, errno_name):
    """The appended log (offsets.log) fails from its second append on: every
    failure is logged, skiff keeps running, a kill -9 in the middle leaves a
    store that loads, and a restart resumes at its durable line: no line lost,
    duplicates only from that resume."""
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("dl", src.path, topic)])
    writer = fl.Writer(src, rate=500)
    writer.start()
    try:
        sk.start(["--log-level", "debug"],
                 wrap=["strace", "-f", "-qq", "-o", "/dev/null", "-P",
                       str(state / "offsets.log"), "-e", f"trace={syscall}",
                       "-e", f"inject={syscall}:error={errno_name}:when=2+"])
        fl.wait_for(lambda: count(sk, r"offsets: .*(Input/output error|No space left)") >= 3
                    or not sk.running(), 30, "three failed appends")
        assert sk.running(), f"skiff exited ({sk.exitcode}) on a failed append"
        sk.kill9()
        res = fl.load_store(state / "offsets")
        assert res["ok"], f"after failed appends and a kill the store does not load: {res}"
        _, durable = fl.durable_line(state / "offsets", "dl", src.path)
    finally:
        n = writer.stop()
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, n)
    assert sk.stop() == 0
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n,
                              resume={0, durable})
    fl.figure(f"disk.log_{syscall}_{errno_name}",
              f"{stats['dups']} duplicates after a kill during failed appends")


# --- a real full disk ----------------------------------------------------------


def mount_tmpfs(path, size):
    path.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs",
                        str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        harness.skip_not_here(f"cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): "
                              f"{r.stderr.decode().strip()}")


def fill(directory):
    """Fills the file system of directory; returns the filler's path."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while os.write(fd, b"\0" * 4096) > 0:
            pass
    except OSError as e:
        assert e.errno == 28, e
    finally:
        os.close(fd)
    return filler


def in_flight(sk):
    """Records skiff has produced and Kafka not yet acknowledged, from
    `skiff status` (its socket in the state directory)."""
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file)],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    m = re.search(r"^kafka: (\d+) records in flight", r.stdout.decode(errors="replace"), re.M)
    assert m, f"skiff status exited {r.returncode}: {r.stdout!r} {r.stderr!r}"
    return int(m.group(1))


def generation_or_0(path):
    """The generation at path; 0 while a flush has it renamed away."""
    try:
        return offsetfile.generation(path)
    except FileNotFoundError:
        return 0


@pytest.mark.skiff_timeout(fl.scaled(120, 300))
def test_fault_full_disk_then_space_returns(tmp_path, kafka, topic):
    state = tmp_path / "state"
    mount_tmpfs(state, "256k")
    try:
        src = fl.SeqSource(tmp_path / "app.log")
        src.append(200)
        sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                           [fl.file_connector("fd", src.path, topic)])
        writer = fl.Writer(src, rate=500)
        writer.start()
        try:
            sk.start(["--log-level", "debug"])
            fl.wait_for(lambda: (state / "offsets").exists(), 30, "a first flush")
            # Full: flushes fail, skiff keeps shipping, the store stays as it was.
            mark = sk.log_mark()
            filler = fill(state)
            fl.wait_for(lambda: count(sk, r"No space left on device", mark) >= 3, 30,
                        "three flushes failing with ENOSPC")
            assert sk.running()
            gen_full = offsetfile.generation(state / "offsets")
            time.sleep(0.5)
            assert offsetfile.generation(state / "offsets") == gen_full
            assert "retrying at the next flush" in sk.log_text()
            # Space returns: the next flush succeeds, without a restart.
            filler.unlink()
            fl.wait_for(lambda: generation_or_0(state / "offsets") > gen_full, 30,
                        "a flush once space returned")
            # Full again, and a stop: the last flush fails, exit 75 says why.
            filler = fill(state)
            mark = sk.log_mark()
            fl.wait_for(lambda: count(sk, r"No space left on device", mark) >= 1, 30,
                        "a failing flush")
            durable = fl.peek_line(state / "offsets", "fd", src.path)
            rc = sk.stop()
            assert rc == 75, f"stop with a full disk: exit {rc}, want 75 (restart me)"
            assert re.search(r"exit 75", sk.log_text())
            assert not (state / "offsets.tmp").exists(), "a temp file was left on the full disk"
            assert offsetfile.generation(state / "offsets") >= gen_full
            filler.unlink()
        finally:
            n = writer.stop()
        sk.start()
        fl.read_topic(kafka.bootstrap, topic, n)
        assert sk.stop() == 0
        stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n,
                                  resume={0, durable})
        fl.figure("disk.full_tmpfs", f"{stats['dups']} duplicates (lines acked while full)")
    finally:
        subprocess.run(["umount", "-l", str(state)], stderr=subprocess.DEVNULL)


@pytest.mark.skiff_timeout(180)
def test_fault_full_disk_pauses_reading_and_bounds_the_replay(tmp_path, kafka, topic):
    """While offsets cannot be saved, a crash would replay everything
    acknowledged since the last good flush: after three failed flushes in a row
    skiff stops reading (the replay stays bounded), and resumes by itself once
    a flush succeeds. Bound: lines shipped while the disk is full stop growing;
    nothing lost at the end."""
    state = tmp_path / "state"
    mount_tmpfs(state, "256k")
    try:
        src = fl.SeqSource(tmp_path / "app.log")
        src.append(100)
        sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                           [fl.file_connector("fp", src.path, topic)])
        sk.start()
        fl.wait_for(lambda: len(harness.consume(kafka.bootstrap, topic)) >= 100, 60,
                    "the first lines")
        filler = fill(state)
        src.append(100)  # acknowledged, but its offsets cannot be saved
        fl.wait_for(lambda: "reading pauses until offsets can be saved" in sk.log_text(), 30,
                    "the pause after three failed flushes")
        # What was read before the pause may still be on its way: the flushes
        # can fail on the first lines' offsets before the next 100 are
        # acknowledged (on a loaded machine, or while the broker answers
        # "Not leader" and librdkafka retries), and those land after the
        # pause. Counted once nothing is in flight, the topic must not grow.
        fl.wait_for(lambda: in_flight(sk) == 0, 60, "no records in flight while paused")
        shipped = len(harness.consume(kafka.bootstrap, topic))
        src.append(300)  # must wait: not read while paused
        time.sleep(2)
        assert len(harness.consume(kafka.bootstrap, topic)) == shipped
        filler.unlink()
        fl.wait_for(lambda: "saved again; reading resumes" in sk.log_text(), 30, "the resume")
        fl.read_topic(kafka.bootstrap, topic, 500)
        assert sk.stop() == 0
        stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), 500,
                                  max_dups=0)
        fl.figure("disk.full_pause", f"shipped {shipped} of 500 while full, "
                                     f"{stats['dups']} duplicates")
    finally:
        subprocess.run(["umount", "-l", str(state)], stderr=subprocess.DEVNULL)
