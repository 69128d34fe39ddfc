"""Fault suite, 9: hostile sources and a hostile environment.

The source file made unreadable and readable again (skiff runs without
CAP_DAC_OVERRIDE, so permissions bind as for a service user), replaced by a
FIFO or by a directory and then by a regular file, skiff started with a low
limit on open files, and a SQLite connector pointed at a file that is not a
database until it becomes one.

skiff runs under a small supervisor with systemd's policy for the packaged
unit (firmware/systemd/skiff.service: exit 75 restarted, 78 not): a connector
that cannot go on stops, skiff exits 75 when none is left, and the supervisor
starts it again. Bound checked: no crash (no signal, no sanitizer report), a
clear error naming the file and the cause, a resume once the cause is gone,
no line lost, and duplicates only from restarts at a durable offset."""

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

DROP_CAPS = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]
CRASH_SIGNS = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "Segmentation")


class Supervisor:
    """Restart=on-failure, RestartPreventExitStatus=78, RestartSec=0.3 s."""

    def __init__(self, sk, state, connector, source, wrap=()):
        self.sk, self.state, self.connector, self.source = sk, state, connector, source
        self.wrap, self.restarts, self.resume, self.exits = wrap, 0, {0}, []

    def start(self):
        self.sk.start(wrap=self.wrap)

    def tend(self):
        """Restarts skiff when it exited 75; fails on any other exit."""
        if self.sk.running():
            return
        rc = self.sk.wait()
        self.exits.append(rc)
        assert rc == 75, f"skiff exited {rc}, not 75 (restart me)\n{self.sk._tail()}"
        if self.source is not None:
            self.resume.add(fl.durable_line(self.state / "offsets", self.connector,
                                            self.source.path)[1])
        time.sleep(0.3)
        self.restarts += 1
        self.start()

    def until(self, cond, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.tend()
            if cond():
                return
            time.sleep(0.2)
        raise AssertionError(f"timed out after {timeout}s waiting for {what}\n{self.sk._tail()}")

    def stop(self):
        if self.sk.running():
            rc = self.sk.term() if self.wrap else self.sk.stop()
            assert rc in (0, 75), f"stop: exit {rc}"
        log = self.sk.log_text()
        assert not any(s in log for s in CRASH_SIGNS), f"a crash or sanitizer report:\n{log[-3000:]}"


def count(bootstrap, topic):
    return len(harness.consume(bootstrap, topic))


def file_skiff(tmp_path, kafka, topic, name="hf"):
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector(name, src.path, topic, rescan__interval__ms=300)])
    return state, src, sk


def needs_setpriv():
    harness.require_tool("setpriv", "util-linux")  # permissions bind for root without it


@pytest.mark.skiff_timeout(120)
def test_fault_source_permission_removed_and_restored(tmp_path, kafka, topic):
    needs_setpriv()
    state, src, sk = file_skiff(tmp_path, kafka, topic)
    src.append(100)
    os.chmod(src.path, 0)
    sup = Supervisor(sk, state, "hf", src, wrap=DROP_CAPS)
    sup.start()
    sup.until(lambda: "Permission denied" in sk.log_text(), 20, "an error about the permission")
    assert str(src.path) in sk.log_text()
    assert count(kafka.bootstrap, topic) == 0
    os.chmod(src.path, 0o644)
    sup.until(lambda: count(kafka.bootstrap, topic) >= 100, 30, "lines once readable")
    # Removed while open: the open descriptor keeps reading, as tail -f does.
    os.chmod(src.path, 0)
    src.append(100)
    sup.until(lambda: count(kafka.bootstrap, topic) >= 200, 30, "lines appended while 000")
    os.chmod(src.path, 0o644)
    sup.stop()
    fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), src.next,
                      resume=sup.resume)
    fl.figure("hostile.permission", f"restarts by the supervisor: {sup.restarts}")


def replace_path(path, kind):
    os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.mkdir(path)


REPORTED = ("not a regular file", "is a directory", "fifo")


@pytest.mark.skiff_timeout(120)
@pytest.mark.parametrize("kind", fl.scaled(["fifo"], ["fifo", "directory"]))
def test_fault_source_replaced_by_fifo_or_directory(tmp_path, kafka, topic, kind):
    state, src, sk = file_skiff(tmp_path, kafka, topic)
    src.append(100)
    sup = Supervisor(sk, state, "hf", None)
    sup.start()
    sup.until(lambda: count(kafka.bootstrap, topic) >= 100, 30, "the first lines")
    mark = sk.log_mark()
    replace_path(src.path, kind)
    for _ in range(10):  # two seconds of rescans with the intruder in place
        time.sleep(0.2)
        sup.tend()
    said = fl.log_since(sk, mark)
    reported = str(src.path) in said and any(w in said.lower() for w in REPORTED)
    # A regular file again (the next rotation): its lines follow.
    if kind == "fifo":
        os.unlink(src.path)
    else:
        os.rmdir(src.path)
    tmp = src.path.with_suffix(".new")
    tmp.write_bytes(b"".join(fl.seq_line(i) + b"\n" for i in range(100, 200)))
    os.rename(tmp, src.path)
    src.next = 200
    sup.until(lambda: count(kafka.bootstrap, topic) >= 200, 30, "lines of the new file")
    sup.stop()
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), 200,
                              max_dups=0)
    fl.figure(f"hostile.{kind}", f"exits {sup.exits}, {stats['dups']} duplicates, "
                                 f"reported: {reported}")
    assert reported, f"no clear word about the {kind} at {src.path}:\n{said}"


@pytest.mark.skiff_timeout(180)
def test_fault_low_open_file_limit(tmp_path, kafka, topic):
    state, src, sk = file_skiff(tmp_path, kafka, topic)
    src.append(300)
    seen = {}
    resume = {0}
    for limit in (8, 16, 24):
        mark = sk.log_mark()
        sk.start(wrap=["prlimit", f"--nofile={limit}"])
        time.sleep(1.2)
        rc = sk.term() if sk.running() else sk.wait()
        log = fl.log_since(sk, mark)
        assert rc in (0, 75, 78), f"nofile={limit}: exit {rc}\n{log[-2000:]}"
        assert not any(s in log for s in CRASH_SIGNS), f"nofile={limit}: crash\n{log[-3000:]}"
        if rc != 0 or "error" in log:
            assert "Too many open files" in log, f"nofile={limit}: unclear error\n{log[-2000:]}"
        seen[limit] = rc
        resume.add(fl.durable_line(state / "offsets", "hf", src.path)[1])
        src.append(100)
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, src.next)
    assert sk.stop() == 0
    fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), src.next,
                      resume=resume)
    fl.figure("hostile.nofile", f"exit codes by RLIMIT_NOFILE: {seen}; then all delivered")


@pytest.mark.skiff_timeout(120)
def test_fault_sqlite_file_that_is_not_a_database(tmp_path, kafka, topic):
    db = tmp_path / "app.db"
    db.write_bytes(b"this is a log file, not a database\n" * 200)
    state = tmp_path / "state"
    state.mkdir()
    props = fl.worker_props(kafka.bootstrap, state,
                            value__converter="org.apache.kafka.connect.json.JsonConverter",
                            value__converter__schemas__enable="false")
    conn = {"name": "sq", "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{db}", "mode": "incrementing",
            "incrementing.column.name": "id", "table.whitelist": "t",
            "topic.prefix": f"{topic}-", "poll.interval.ms": "200"}
    sk = fl.FaultSkiff(tmp_path, props, [conn])
    sup = Supervisor(sk, state, "sq", None)
    sup.start()
    sup.until(lambda: "not a database" in sk.log_text(), 20, "an error naming the cause")
    assert str(db) in sk.log_text()
    time.sleep(1)
    sup.tend()
    # The application creates its database: skiff (restarted if it had to) reads it.
    tmp = tmp_path / "app.db.new"
    c = sqlite3.connect(tmp)
    c.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    c.executemany("INSERT INTO t VALUES (?, ?)",
                  [(i + 1, fl.seq_line(i).decode()) for i in range(300)])
    c.commit()
    c.close()
    os.rename(tmp, db)
    out = f"{topic}-t"
    sup.until(lambda: count(kafka.bootstrap, out) >= 300, 60, "the rows")
    sup.stop()
    values = [json.loads(r["value"])["v"].encode() for r in harness.consume(kafka.bootstrap, out)]
    seqs = fl.seqs_of([{"value": v, "partition": 0, "offset": 0} for v in values])
    fl.check_delivery(seqs, 300, max_dups=0)
    fl.figure("hostile.not_sqlite", f"exits {sup.exits} before the database existed; "
                                    f"300 rows once it did")
