"""Two skiffs on one store (issue 25): a restart that overlaps the old
process, a unit started twice, a person starting one by hand beside the
service. The second one exited 75 at once, and under systemd
(Restart=on-failure) was started again every RestartSec for as long as the
first ran: a restart loop. It now waits for the first to go, sleeping, tells
systemd it is up and waiting, then takes the store over (with exactly-once,
fencing what the first left open); nothing is sent twice."""

import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from test_notify import Listener  # noqa: E402

WAIT = 12  # s the second one runs beside the first


def worker(bootstrap, state, topic, eos):
    props = fl.worker_props(bootstrap, state)
    if eos:
        props.update({"offset.storage.topic": topic + "-offsets",
                      "offset.storage.replication.factor": "1",
                      "exactly.once.source.support": "enabled"})
    return props


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@pytest.mark.skiff_timeout(180)
@pytest.mark.parametrize("mode", ["at-least-once", "exactly-once"])
def test_second_instance_waits_then_takes_over(tmp_path, kafka, topic, mode):
    """B starts on A's store while A ships an appending file: B neither exits
    nor ships for WAIT s (one start, no exit, one line in its log, READY=1
    and a STATUS= saying what it waits for, sleeping); A then goes (SIGTERM,
    or kill -9 with exactly-once) and B takes over within seconds: every line
    once, in order (read_committed with exactly-once)."""
    eos = mode == "exactly-once"
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(500)
    state = tmp_path / "state"
    state.mkdir()
    props = worker(kafka.bootstrap, state, topic, eos)
    conn = [fl.file_connector("two", src.path, topic)]
    a = fl.FaultSkiff(tmp_path, props, conn, name="a")
    ln = Listener(str(tmp_path / "notify.sock"))
    b = fl.FaultSkiff(tmp_path, props, conn, name="b",
                      env={"NOTIFY_SOCKET": ln.addr, "WATCHDOG_USEC": "2000000"})
    isolation = "read_committed" if eos else None
    writer = fl.Writer(src, rate=300)
    writer.start()
    a.start()
    harness.consume(kafka.bootstrap, topic, n=500, timeout=60, isolation=isolation)
    b.start()
    b.wait_log(r"waiting for it to stop", timeout=60)
    pid = b.skiff_pid()
    before = cpu_ticks(pid)
    time.sleep(WAIT)
    spent = cpu_ticks(pid) - before
    assert b.running(), f"the second skiff exited {b.exitcode} while the first ran"
    assert a.running(), f"the first skiff exited {a.exitcode}: the second took its store"
    log = b.log_text()
    fl.figure(f"second_instance_{mode}_ticks_waiting_{WAIT}s", spent)
    assert log.count("waiting for it to stop") == 1, log
    assert f"another skiff (pid {a.skiff_pid()}) is running with" in log, log
    assert "running 1 connector" not in log and "fenced" not in log, log
    assert spent <= 50, f"{spent} clock ticks in {WAIT} s of waiting: spinning"
    ln.wait(lambda m: any("READY=1" in x and "STATUS=waiting for the other skiff" in x
                          for x in m), 10, "READY=1 with STATUS=waiting ...")
    ln.wait(lambda m: sum(x == "WATCHDOG=1" for x in m) >= 5, 10, "the watchdog fed")
    if eos:
        a.kill9()  # a crash, with a transaction open: the second fences it
    else:
        assert a.stop() == 0
    b.wait_log(r"let go of the offset store after \d+ s: taking over", timeout=30)
    b.wait_log(r"running 1 connector", timeout=60)
    time.sleep(2)
    total = writer.stop()
    got = harness.consume(kafka.bootstrap, topic, n=total, timeout=60, isolation=isolation)
    assert b.running(), f"the second skiff exited {b.exitcode} after taking over"
    assert b.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, isolation=isolation))
    fl.figure(f"second_instance_{mode}_lines", f"{len(got)} of {total}")
    assert len(seqs) - len(set(seqs)) == 0, "lines sent twice"
    assert seqs == list(range(total))


def test_second_instance_sigterm_while_waiting(tmp_path, kafka, topic):
    """SIGTERM while waiting for the other skiff: exit 0 at once, the other
    untouched."""
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    state = tmp_path / "state"
    state.mkdir()
    props = worker(kafka.bootstrap, state, topic, False)
    conn = [fl.file_connector("two", src.path, topic)]
    a = fl.FaultSkiff(tmp_path, props, conn, name="a")
    b = fl.FaultSkiff(tmp_path, props, conn, name="b")
    a.start()
    harness.consume(kafka.bootstrap, topic, n=10, timeout=60)
    b.start()
    b.wait_log(r"waiting for it to stop", timeout=60)
    assert b.stop(sig=signal.SIGTERM, timeout=5) == 0
    assert a.running()
    assert a.stop() == 0
    assert len(harness.consume(kafka.bootstrap, topic)) == 10
