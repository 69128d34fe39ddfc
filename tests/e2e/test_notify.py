"""systemd's notification protocol, with a listening NOTIFY_SOCKET instead of
systemd (issue 11): READY=1 once the connectors run, STATUS= summaries,
WATCHDOG=1 while the loop turns, STOPPING=1 at SIGTERM, RELOADING=1 then
READY=1 around a reload; a path and an abstract ('@') address."""

import os
import signal
import socket
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402


class Listener:
    """A datagram socket systemd would hold; collects every message."""

    def __init__(self, addr):
        self.addr = addr
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind("\0" + addr[1:] if addr.startswith("@") else addr)
        self.sock.settimeout(0.1)
        self.msgs = []

    def pump(self):
        try:
            while True:
                self.msgs.append(self.sock.recv(4096).decode())
        except (socket.timeout, BlockingIOError):
            pass

    def wait(self, pred, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.pump()
            if pred(self.msgs):
                return
        raise AssertionError(f"no {what} within {timeout}s; got {self.msgs[-10:]}")

    def lines(self):
        """Every KEY=VALUE assignment in order of arrival."""
        return [a for m in self.msgs for a in m.split("\n")]


def first(lines, prefix, start=0):
    return next(i for i in range(start, len(lines)) if lines[i].startswith(prefix))


def test_notify_ready_status_watchdog_stopping(tmp_path, kafka, topic):
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(300)
    ln = Listener(str(tmp_path / "notify.sock"))
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("n", src.path, topic)],
                       env={"NOTIFY_SOCKET": ln.addr, "WATCHDOG_USEC": "400000"})
    sk.start()
    ln.wait(lambda m: any("READY=1" in x for x in m), 30, "READY=1")
    # READY comes once the connectors run, never before.
    assert "running 1 connector" in sk.log_text()
    fl.read_topic(kafka.bootstrap, topic, 300)
    ln.wait(lambda m: any("STATUS=1 connector running, 0 failed; 300 records acked" in x
                          for x in m), 15, "a STATUS= with the 300 acknowledgements")
    ln.wait(lambda m: sum(x == "WATCHDOG=1" for x in m) >= 5, 15, "five WATCHDOG=1")
    assert sk.stop() == 0
    ln.pump()
    lines = ln.lines()
    ready, stopping = first(lines, "READY=1"), first(lines, "STOPPING=1")
    assert ready < stopping
    assert first(lines, "WATCHDOG=1") > ready
    assert not any(x.startswith(("READY=1", "RELOADING=1")) for x in lines[stopping:])
    assert any(x == "STATUS=stopping" for x in lines[stopping:])
    # Half of WATCHDOG_USEC: about 200 ms apart while it ran.
    assert "WATCHDOG=1 every 200 ms" in sk.log_text()


def test_notify_abstract_address_and_reload(tmp_path):
    """No broker needed: skiff starts without one. An abstract address; a
    SIGHUP says RELOADING=1 (with MONOTONIC_USEC) then READY=1 again."""
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    addr = f"@skiff-notify-test-{os.getpid()}-{time.monotonic_ns()}"
    ln = Listener(addr)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props("127.0.0.1:1", state),
                       [fl.file_connector("n", src.path, "t")], env={"NOTIFY_SOCKET": addr})
    sk.start()
    ln.wait(lambda m: any("READY=1" in x for x in m), 30, "READY=1")
    sk.proc.send_signal(signal.SIGHUP)
    ln.wait(lambda m: sum("READY=1" in x for x in m) >= 2, 15, "READY=1 after the reload")
    assert sk.stop() == 0
    ln.pump()
    lines = ln.lines()
    reloading = first(lines, "RELOADING=1")
    assert lines[reloading + 1].startswith("MONOTONIC_USEC=")
    assert first(lines, "READY=1") < reloading < first(lines, "READY=1", reloading)
    assert first(lines, "READY=1", reloading) < first(lines, "STOPPING=1")
    assert "WATCHDOG=1" not in lines  # no WATCHDOG_USEC, no pings
