"""Exit codes that tell systemd the truth (issue 22, item 6). The shipped unit
restarts on 75 and never on 78 (RestartPreventExitStatus=78), so 78 is only
for what a person must fix:

- out of memory or of another resource, at start or while running, is 75
  (prlimit --as: "Failed to create thread" exited 78, and systemd never
  started skiff again);
- more than 64 connectors run (the limit exited 78, undocumented)."""

import os
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from harness import Skiff  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def plain_skiff():
    """A skiff built without sanitizers: ASan reserves terabytes of address
    space and cannot run under RLIMIT_AS. scripts/test.sh builds
    build-release/skiff; SKIFF_PLAIN_BIN names another."""
    for p in (os.environ.get("SKIFF_PLAIN_BIN"), REPO / "build-release" / "skiff",
              REPO / "build-plain" / "skiff"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return Path(p)
    pytest.skip("no skiff built without sanitizers (cmake -S . -B build-release "
                "-DCMAKE_BUILD_TYPE=Release && cmake --build build-release --target skiff)")


@pytest.mark.skiff_timeout(600)
def test_out_of_memory_at_start_or_run_exits_75(tmp_path, kafka, topic, monkeypatch):
    """prlimit --as from 12 MB up in 512 KB steps until skiff runs six times in
    a row: every run either ships its line or exits 75 saying what ran out;
    never 78. Not skiff's: the dynamic loader failing to map a library (127),
    and librdkafka aborting on an allocation it asserts (SIGABRT); systemd
    restarts both (Restart=on-failure)."""
    monkeypatch.setenv("SKIFF_BIN", str(plain_skiff()))
    harness.create_topic(kafka.bootstrap, topic)
    outcomes, ok_in_a_row, kb = {}, 0, 12 * 1024
    while ok_in_a_row < 6 and kb <= 96 * 1024:
        d = tmp_path / f"as{kb}"
        (d / "state").mkdir(parents=True)
        src = fl.SeqSource(d / "app.log")
        src.append(1)
        sk = Skiff(d, fl.worker_props(kafka.bootstrap, d / "state"),
                   [fl.file_connector("app", src.path, topic)])
        sk.start(wrap=["prlimit", f"--as={kb * 1024}"])
        deadline = time.monotonic() + 20
        while sk.running() and time.monotonic() < deadline and \
                fl.peek_line(d / "state" / "offsets", "app", src.path) < 1:
            time.sleep(0.05)
        rc = sk.stop() if sk.running() else sk.wait()
        log = sk.log_text()
        shipped = fl.peek_line(d / "state" / "offsets", "app", src.path) == 1
        outcomes[kb // 1024 if kb % 1024 == 0 else kb / 1024] = rc if not shipped else "ran"
        if rc == 127 and "error while loading shared libraries" in log:
            ok_in_a_row = 0
        elif rc == -6 and ("Unexpected error." in log or "Assertion" in log):
            # librdkafka asserts every allocation (rd_malloc: abort by
            # design); glibc's assert says "Unexpected error." when it has
            # no memory for its message. A signal is restarted as 75 is.
            ok_in_a_row = 0
        elif shipped:
            assert rc == 0, f"--as={kb} KB: shipped, then exit {rc}:\n{log[-2000:]}"
            ok_in_a_row += 1
        else:
            ok_in_a_row = 0
            assert rc == 75, (f"--as={kb} KB: exit {rc} without shipping its line "
                              f"(out of memory is 75, restart me):\n{log[-3000:]}")
            assert any(w in log for w in ("out of memory", "Cannot allocate memory",
                                          "Resource temporarily unavailable")), log[-2000:]
        kb += 512
    assert ok_in_a_row == 6, f"skiff never ran: {outcomes}"
    fl.figure("exit.prlimit_as", f"exit by RLIMIT_AS (MB): {outcomes}")


@pytest.mark.skiff_timeout(180)
def test_more_than_64_connectors(tmp_path, kafka, topic):
    """70 connectors declared inline exited 78 ("more than 64 connectors",
    undocumented). They run, and a reload adds a 71st."""
    state = tmp_path / "state"
    state.mkdir()
    props = fl.worker_props(kafka.bootstrap, state)
    files = []
    for i in range(71):
        f = tmp_path / f"in{i:03d}.log"
        f.write_text(f"line of {i:03d}\n")
        files.append(f)
    for i in range(70):
        props[f"connectors.c{i:03d}.connector.class"] = "FileStreamSource"
        props[f"connectors.c{i:03d}.file"] = str(files[i])
        props[f"connectors.c{i:03d}.topic"] = topic
    sk = Skiff(tmp_path, props).start()
    recs = harness.consume(kafka.bootstrap, topic, n=70, timeout=60)
    assert sorted(r["value"] for r in recs) == [f"line of {i:03d}".encode() for i in range(70)]
    props["connectors.c070.connector.class"] = "FileStreamSource"
    props["connectors.c070.file"] = str(files[70])
    props["connectors.c070.topic"] = topic
    sk.worker_file.write_text(harness.props_text(props))
    mark = sk.log_mark()
    sk.proc.send_signal(1)
    sk.wait_log(r"reload", 30, since=mark)
    recs = harness.consume(kafka.bootstrap, topic, n=71, timeout=60)
    assert sorted(r["value"] for r in recs) == [f"line of {i:03d}".encode() for i in range(71)]
    assert sk.stop() == 0
