"""The state directory (offset.storage.file.filename's) under a running skiff
(issue 22, item 5): deleted and made again, deleted and left missing, emptied
before a start, or named another way by a second skiff. Lines numbered by
faultlib.SeqSource, read back from a real broker.

What must hold: one skiff per store whatever happens to the directory (the
exclusion is an abstract socket named after the store's canonical path, which
no rm removes); a store unlinked under skiff is noticed at the next flush
(offsets_last_flush_ok 0, /health 503, a warning) and written whole again once
the directory is back; a start on an empty store says so and where each
connector starts."""

import os
import shutil
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from harness import Skiff  # noqa: E402
from test_rest import free_port, health, metric_values, wait_for, wait_http  # noqa: E402


def flush_ok(port):
    return metric_values(port, "skiff_offsets_last_flush_ok")[0][1]


def store_line(state, src):
    """The line a restart would resume from (0: none stored)."""
    return fl.peek_line(state / "offsets", "app", src.path)


def waits(second, first):
    """second neither runs beside first nor exits: it waits for first to go
    (test_second_instance.py), naming it, until SIGTERM (exit 0). Returns
    what it did."""
    second.wait_log(r"waiting for it to stop", timeout=30)
    time.sleep(2)
    said = second.log_text()
    assert second.running(), f"the second skiff exited {second.exitcode}:\n{said[-2000:]}"
    assert "running 1 connector" not in said, f"a second skiff ran:\n{said[-2000:]}"
    assert f"another skiff (pid {first.pid})" in said, said[-2000:]
    assert second.stop() == 0
    return "waited"


@pytest.mark.skiff_timeout(180)
def test_second_skiff_refused_after_the_state_dir_is_made_again(tmp_path, kafka, topic):
    """Item 5: the directory deleted and made again under a running skiff
    took the lock files with it, and a second skiff on the same store ran
    beside the first and re-sent every line. It does not get the store, also
    when it names the store another way (through a symlink, with ".."): it
    waits for the first to go (issue 25), naming it."""
    state = tmp_path / "state"
    state.mkdir()
    (tmp_path / "link").symlink_to(state)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(2000)
    conn = fl.file_connector("app", src.path, topic)
    first = Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state), [conn], name="first").start()
    fl.read_topic(kafka.bootstrap, topic, 2000)
    wait_for(lambda: store_line(state, src) == 2000, 30, what="the offsets of 2,000 lines")
    shutil.rmtree(state)
    state.mkdir()
    names = {"same": state / "offsets", "symlink": tmp_path / "link" / "offsets",
             "dotdot": state / ".." / "state" / "offsets"}
    outcome = {}
    for name, path in names.items():
        props = fl.worker_props(kafka.bootstrap, state)
        props["offset.storage.file.filename"] = str(path)
        second = Skiff(tmp_path, props, [conn], name=name).start()
        outcome[name] = waits(second, first)
    src.append(100)
    fl.read_topic(kafka.bootstrap, topic, 2100)
    assert first.stop() == 0
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), 2100,
                              max_dups=0)
    fl.figure("state_dir.second_skiff", f"{outcome}, {stats['dups']} lines re-sent")


@pytest.mark.skiff_timeout(240)
def test_state_dir_deleted_under_a_running_skiff(tmp_path, kafka, topic):
    """Item 5: deleted after a good flush, the journal's appends went to an
    unlinked offsets.log with offsets_last_flush_ok 1, /health 200 and exit 0
    at SIGTERM. Now the next flush fails and says why; the directory made
    again takes the whole store at the next flush; deleted and left missing,
    SIGTERM exits 75 (the offsets could not be kept); a start on the empty
    directory says so and reads from where the connector says."""
    harness.require_module("prometheus_client", "python3-prometheus-client")
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    port = free_port()
    props = fl.worker_props(kafka.bootstrap, state, listeners=f"http://127.0.0.1:{port}")
    sk = Skiff(tmp_path, props, [fl.file_connector("app", src.path, topic)]).start()
    wait_http(port)
    fl.read_topic(kafka.bootstrap, topic, 1000)
    wait_for(lambda: store_line(state, src) == 1000, 30, what="the first flush")
    src.append(10)  # one more flush: an append to the journal, offsets.log
    wait_for(lambda: store_line(state, src) == 1010, 30, what="a flush to the journal")
    assert (state / "offsets.log").exists()

    mark = sk.log_mark()
    shutil.rmtree(state)
    src.append(100)  # read or not: reading pauses after three failed flushes
    wait_for(lambda: flush_ok(port) == 0, 15, what="offsets_last_flush_ok 0 once the "
             "directory is gone")
    assert health(port)[0] == 503, health(port)
    sk.wait_log(rf"{state}.*(deleted|removed)", 10, since=mark)

    state.mkdir()
    wait_for(lambda: flush_ok(port) == 1, 15, what="a flush once the directory is back")
    assert health(port)[0] == 200, health(port)
    fl.read_topic(kafka.bootstrap, topic, 1110)
    wait_for(lambda: store_line(state, src) == 1110, 15,
             what="the directory made again holding the store whole")
    assert sk.stop() == 0

    sk.start()  # resumes at line 1,110: nothing re-sent
    wait_http(port)
    src.append(10)
    fl.read_topic(kafka.bootstrap, topic, 1120)
    wait_for(lambda: store_line(state, src) == 1120, 30, what="the flush after the restart")
    src.append(10)
    fl.read_topic(kafka.bootstrap, topic, 1130)
    wait_for(lambda: store_line(state, src) == 1130, 30, what="a flush")
    mark = sk.log_mark()
    shutil.rmtree(state)
    assert sk.stop() == 75, "offsets not kept at the stop: 75, not a clean 0"
    said = fl.log_since(sk, mark)
    assert str(state) in said, said[-2000:]
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), 1130,
                              max_dups=0)

    state.mkdir()
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"no stored offsets.*connector app.*beginning", 30, since=mark)
    fl.read_topic(kafka.bootstrap, topic, 2260)
    assert sk.stop() == 0
    fl.figure("state_dir.deleted", f"{stats['dups']} re-sent while running; then an empty "
                                   f"store, said, read again from the beginning")


@pytest.mark.skiff_timeout(120)
def test_start_on_an_empty_store_says_where_each_connector_starts(tmp_path, kafka, topic):
    """Item 5: a start without stored offsets said nothing and read from byte
    0. One line says the store holds nothing and where each connector starts
    (its read.from, or the beginning for a source without one)."""
    state = tmp_path / "state"
    state.mkdir()
    a, b = fl.SeqSource(tmp_path / "a.log"), fl.SeqSource(tmp_path / "b.log")
    a.append(5)
    b.append(5)
    conns = [fl.file_connector("from-start", a.path, topic),
             fl.file_connector("from-end", b.path, topic, read__from="end")]
    sk = Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state), conns).start()
    m = sk.wait_log(r"no stored offsets", 30)
    line = m.string
    assert str(state / "offsets") in line, line
    assert "from-start" in line and "from-end" in line, line
    assert "beginning" in line.split("from-start", 1)[1].split("from-end")[0], line
    assert "end" in line.split("from-end", 1)[1], line
    fl.read_topic(kafka.bootstrap, topic, 5)
    wait_for(lambda: fl.peek_line(state / "offsets", "from-start", a.path) == 5, 30,
             what="a flush")
    assert sk.stop() == 0
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"running 2 connectors", 30, since=mark)
    assert "no stored offsets" not in fl.log_since(sk, mark)
    assert sk.stop() == 0


@pytest.mark.skiff_timeout(120)
def test_second_skiff_in_another_network_namespace(tmp_path, kafka, topic):
    """Abstract sockets are per network namespace: a skiff in another one (a
    container sharing the state directory) sees no socket of the first, and
    the lock files refuse it, also once the directory was deleted and made
    again: the first skiff takes its lock file again at its next flush."""
    if os.geteuid() != 0:
        harness.skip_not_here("a network namespace needs root")
    harness.require_tool("unshare", "util-linux")
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    conn = fl.file_connector("app", src.path, topic)
    first = Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state), [conn], name="first").start()
    fl.read_topic(kafka.bootstrap, topic, 100)
    wait_for(lambda: store_line(state, src) == 100, 30, what="a flush")
    outcome = []
    for rebuilt in (False, True):
        if rebuilt:
            shutil.rmtree(state)
            state.mkdir()
            wait_for(lambda: store_line(state, src) == 100 and (state / "offsets.lock").exists(),
                     30, what="the store and its lock file written again")
        second = Skiff(tmp_path, fl.worker_props(kafka.bootstrap, state), [conn],
                       name=f"netns{int(rebuilt)}")
        second.start(wrap=["unshare", "-n"])
        outcome.append(waits(second, first))
        assert "offsets.lock" in second.log_text()
    assert first.stop() == 0
    fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), 100, max_dups=0)
