"""Fault suite, 3: power loss, simulated (tests/faults/crashsim.py).

strace records every offset-store syscall of two skiff runs in a row (a restart
between them) while an application appends: a dozen flushes, one of whose
temp-file fsyncs fails with EIO, one directory fsync fails with EIO, and one
write fails with ENOSPC. From the record, every state a power cut could leave
at every point is built (only fsynced data and directory-fsynced renames
survive; unsynced data may be torn at any length, empty or zeros; pending
renames may land in any subset) and loaded with skiff's own loader.

Bound checked: every crash state loads, with the newest generation whose flush
returned success or a newer fully written one, byte for byte. Negative
control: the same run under eatmydata (fsync a no-op) must fail that check,
which proves the check can fail."""

import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import crashsim  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
import offsetfile  # noqa: E402


def flushes_logged(sk, mark):
    with open(sk.log_file, "rb") as f:
        f.seek(mark)
        return len(re.findall(rb"offsets: flushed", f.read()))


def recorded_run(sk, state, trace, flushes, wrap_extra=(), inject=()):
    """Runs skiff under the recorder until it logged flushes successful
    flushes, then stops it with SIGTERM. Returns the parsed events."""
    mark = sk.log_mark()
    cmd = crashsim.record_cmd(trace, state)
    for spec in inject:
        cmd += ["-e", f"inject={spec}"]
    sk.start(["--log-level", "debug"], wrap=[*cmd, *wrap_extra])
    fl.wait_for(lambda: flushes_logged(sk, mark) >= flushes or not sk.running(), 60,
                f"{flushes} flushes")
    assert sk.running(), f"skiff exited ({sk.exitcode}) during the recorded run"
    assert sk.term() == 0
    return crashsim.parse_trace(trace)


@pytest.mark.skiff_timeout(fl.scaled(180, 900))
def test_fault_power_loss_every_crash_state(tmp_path, kafka, topic):
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("pl", src.path, topic)])
    writer = fl.Writer(src, rate=500)
    writer.start()
    started = time.monotonic()
    try:
        # fsync calls alternate temp file, directory: #5 is flush 3's temp
        # file, #9 flush 5's directory; write #7 is flush 7's.
        events = recorded_run(sk, state, tmp_path / "trace-a.txt", fl.scaled(12, 40),
                              inject=["fsync:error=EIO:when=5..9+4",
                                      "write:error=ENOSPC:when=7"])
        events += recorded_run(sk, state, tmp_path / "trace-b.txt", fl.scaled(4, 20))
    finally:
        n = writer.stop()
    logs = [e for e in events if e["op"] in ("create", "open") and
            str(e.get("path", "")).endswith("offsets.log")]
    assert logs, "no flush appended to offsets.log: the journal was not exercised"
    failed = [e for e in events if e["ok"] is False and e.get("err") in ("EIO", "ENOSPC")]
    assert len(failed) == 3, f"the injected failures did not all happen: {failed}"
    log = sk.log_text()
    assert "fsync" in log and "Input/output error" in log and "No space left" in log, \
        "skiff did not report the failed flushes"
    # No rename after a failed fsync: the temp file of that flush is discarded.
    for i, e in enumerate(events):
        if e["op"] == "fsync" and e["ok"] is False:
            nxt = [x["op"] for x in events[i + 1:i + 4]]
            assert "rename" not in nxt[:2], f"a rename followed a failed fsync: {nxt}"
    enumerated, distinct, violations = crashsim.judge(
        events, state, tmp_path / "crash-states", harness.tool("offsets_dump"),
        torn_lengths=None)
    assert not violations, (f"{len(violations)} of {distinct} crash states break the promise, "
                            f"e.g. {violations[:3]}")
    fl.figure("powerloss.syscalls_recorded", len(events))
    fl.figure("powerloss.crash_states", f"{enumerated} enumerated, {distinct} distinct loaded")
    # The run itself lost nothing.
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, n, timeout=120)
    assert sk.stop() == 0
    fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n, max_dups=0)
    fl.figure("powerloss.seconds", f"{time.monotonic() - started:.0f}")


@pytest.mark.skiff_timeout(120)
def test_fault_power_loss_negative_control_eatmydata(tmp_path, kafka, topic):
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("nc", src.path, topic)])
    writer = fl.Writer(src, rate=500)
    writer.start()
    try:
        events = recorded_run(sk, state, tmp_path / "trace.txt", 4, wrap_extra=["eatmydata"])
    finally:
        writer.stop()
    assert not [e for e in events if e["op"] == "fsync"], "eatmydata let an fsync through"
    enumerated, distinct, violations = crashsim.judge(
        events, state, tmp_path / "crash-states", harness.tool("offsets_dump"),
        max_combos=64)
    assert violations, ("without fsync every crash state still passed: the power-loss check "
                        "cannot tell a durable flush from a lucky one")
    assert [v for v in violations if v["log"]], \
        "without fsync no journal append was found lost: the check cannot see the log's fsync"
    kinds = {re.sub(r"\d+", "N", v["why"])[:60] for v in violations}
    fl.figure("powerloss.negative_control", f"{len(violations)} of {distinct} states fail "
                                            f"without fsync ({sorted(kinds)[:2]})")


def _doc(gen, position):
    body = ('{"format":"skiff-offsets","version":1,"generation":%d,"offsets":[{"key":["c",'
            '{"filename":"f"}],"value":{"position":%d}}]' % (gen, position)).encode()
    return body + b',"crc32c":"%08x"}\n' % offsetfile._crc32c(body)


def _flush(d, gen, order):
    """Synthetic events of one flush of generation gen, steps in order."""
    tmp, path, prev = f"{d}/offsets.tmp", f"{d}/offsets", f"{d}/offsets.prev"
    steps = {
        "open_dir": {"op": "open", "path": d, "fd": 3, "ok": True, "directory": True},
        "create": {"op": "create", "path": tmp, "fd": 4, "ok": True, "directory": False},
        "write": {"op": "write", "fd": 4, "data": _doc(gen, gen * 32), "ok": True},
        "fsync": {"op": "fsync", "fd": 4, "ok": True},
        "close": {"op": "close", "fd": 4, "ok": True},
        "rotate": {"op": "rename", "src": path, "dst": prev, "ok": True},
        "replace": {"op": "rename", "src": tmp, "dst": path, "ok": True},
        "fsync_dir": {"op": "fsync", "fd": 3, "ok": True},
        "close_dir": {"op": "close", "fd": 3, "ok": True},
    }
    return [dict(steps[s]) for s in order]


RIGHT = ["open_dir", "create", "write", "fsync", "close", "rotate", "replace", "fsync_dir",
         "close_dir"]


@pytest.mark.parametrize("name,order,bad", [
    ("skiff's protocol", RIGHT, False),
    ("rename before fsync", ["open_dir", "create", "write", "close", "rotate", "replace",
                             "fsync", "fsync_dir", "close_dir"], True),
    ("no directory fsync", [s for s in RIGHT if s != "fsync_dir"], True),
    ("no file fsync", [s for s in RIGHT if s != "fsync"], True),
    ("rewrite in place", None, True),
])
def test_fault_power_loss_model_catches_classic_bugs(tmp_path, name, order, bad):
    """The simulator itself: it passes the protocol skiff uses and fails the
    classic mistakes (Filebeat's and Flume's among them), without a broker."""
    d = str(tmp_path / "state")
    Path(d).mkdir()
    events = []
    for gen in range(1, 4):
        if order is None:  # open(O_TRUNC), write, fsync: torn or empty on a power cut
            events += [{"op": "open", "path": f"{d}/offsets", "fd": 4, "ok": True,
                        "directory": False, "trunc": True},
                       {"op": "create", "path": f"{d}/offsets", "fd": 4, "ok": True,
                        "directory": False, "trunc": True}][gen == 1:][:1]
            events += [{"op": "write", "fd": 4, "data": _doc(gen, gen * 32), "ok": True},
                       {"op": "fsync", "fd": 4, "ok": True},
                       {"op": "close", "fd": 4, "ok": True}]
        else:
            events += _flush(d, gen, order)
    _, distinct, violations = crashsim.judge(events, d, tmp_path / "states",
                                             harness.tool("offsets_dump"))
    assert bool(violations) == bad, (name, distinct, violations[:3])


def _record(base, gen, position):
    body = ('{"log":1,"base":%d,"generation":%d,"offsets":[{"key":["c",{"filename":"f"}],'
            '"value":{"position":%d}}]}' % (base, gen, position)).encode()
    return body + b"\t%08x\n" % offsetfile._crc32c(body)


def _appends(d, fsync_log, fsync_dir):
    """A base flush (generation 1), then two appends to a new offsets.log."""
    ev = _flush(d, 1, RIGHT)
    ev += [{"op": "create", "path": f"{d}/offsets.log", "fd": 5, "ok": True,
            "directory": False}]
    for gen in (2, 3):
        ev.append({"op": "write", "fd": 5, "data": _record(1, gen, gen * 32), "ok": True})
        if fsync_log:
            ev.append({"op": "fsync", "fd": 5, "ok": True})
        if gen == 2 and fsync_dir:
            ev += [{"op": "open", "path": d, "fd": 3, "ok": True, "directory": True},
                   {"op": "fsync", "fd": 3, "ok": True},
                   {"op": "close", "fd": 3, "ok": True}]
    return ev


@pytest.mark.parametrize("name,fsync_log,fsync_dir,bad", [
    ("skiff's append", True, True, False),
    ("append without fsync", False, True, True),
    ("new log without directory fsync", True, False, True),
])
def test_fault_power_loss_model_log_appends(tmp_path, name, fsync_log, fsync_dir, bad):
    """The same for the journal (offsets.log): an append is durable once
    fsynced, a new log once its directory is; without either, a power cut
    loses a flush skiff reported, and the model says so."""
    d = str(tmp_path / "state")
    Path(d).mkdir()
    _, distinct, violations = crashsim.judge(_appends(d, fsync_log, fsync_dir), d,
                                             tmp_path / "states", harness.tool("offsets_dump"))
    assert bool(violations) == bad, (name, distinct, violations[:3])
