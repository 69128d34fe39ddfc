"""Reload (SIGHUP) without losing the promise (issue 11).

- Under load (2,000 lines/s into each of two files): connector "a" has its
  topic changed three times by reloads, connector "b" stays the same. Every
  line reaches Kafka exactly once (exact sets over a's topics, and b's), a's
  lines after each reload go to the new topic, and b is never restarted.
- A bad reload (a broken connector file, then a changed bootstrap.servers) is
  refused with the reason logged, and the running configuration still ships.
- Inline connectors: one added by a reload starts, one removed stops."""

import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from restlib import request  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_text(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
        return r.read().decode()


def get_json(port, path):
    return json.loads(get_text(port, path))


def one_source(tmp_path, bootstrap, topic, name, lines):
    """topic made, a state directory, and a SeqSource tmp_path/name of lines
    lines: (state, source)."""
    harness.create_topic(bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / name)
    src.append(lines)
    return state, src


def reload(sk, expect):
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(expect, timeout=30, since=mark)
    return fl.log_since(sk, mark)


@pytest.mark.skiff_timeout(240)
def test_reload_under_load_exactly_once(tmp_path, kafka):
    topics = [harness.unique_topic(f"reload{i}") for i in range(4)]
    tb = harness.unique_topic("reloadb")
    for t in topics + [tb]:
        harness.create_topic(kafka.bootstrap, t, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    sa, sb = fl.SeqSource(tmp_path / "a.log"), fl.SeqSource(tmp_path / "b.log")
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("a", sa.path, topics[0]),
                        fl.file_connector("b", sb.path, tb)])
    sk.start()
    sk.wait_log("running 2 connectors")
    wa, wb = fl.Writer(sa, 2000), fl.Writer(sb, 2000)
    wa.start()
    wb.start()
    cuts = []
    for t in topics[1:]:
        time.sleep(2)
        sk.connector_files[0].write_text(harness.props_text(fl.file_connector("a", sa.path, t)))
        text = reload(sk, r"reload done")
        assert "connector a: stopped to restart with new settings" in text
        assert "connector a: restarted with its new settings" in text
        assert "connector b:" not in text, text  # untouched
        assert "still unacknowledged" not in text
        cuts.append(sa.next)
    time.sleep(2)
    na, nb = wa.stop(), wb.stop()
    per_topic = []
    deadline = time.monotonic() + 90
    while True:
        per_topic = [fl.seqs_of(harness.consume(kafka.bootstrap, t)) for t in topics]
        if sum(map(len, per_topic)) >= na or time.monotonic() > deadline:
            break
        time.sleep(1)
    held_b = fl.read_topic(kafka.bootstrap, tb, nb)
    assert sk.stop() == 0
    seqs_a = [s for p in per_topic for s in p]
    fl.check_delivery(seqs_a, na, max_dups=0, what="a's topics")
    fl.check_delivery(held_b, nb, max_dups=0, what="b's topic")
    # Each topic holds one run: a reload moves the rest to the new topic.
    for i, p in enumerate(per_topic):
        assert p == sorted(p) and (not p or p == list(range(p[0], p[-1] + 1))), i
        assert p, f"topic {i} got nothing"
    fl.figure("reload.under_load", f"2x2000 lines/s, 3 reloads changing a's topic: "
                                   f"{na}+{nb} lines, 0 lost, 0 duplicates, a's split "
                                   f"{[len(p) for p in per_topic]}")


def test_reload_bad_config_refused_old_ships(tmp_path, kafka, topic):
    state, src = one_source(tmp_path, kafka.bootstrap, topic, "app.log", 100)
    good = fl.file_connector("c", src.path, topic)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state), [good])
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 100)
    bad = dict(good, **{"topic": "elsewhere", "no.such.key": "1"})
    sk.connector_files[0].write_text(harness.props_text(bad))
    text = reload(sk, r"reload refused")
    assert "no.such.key" in text and "the running configuration stays" in text
    src.append(100)
    fl.read_topic(kafka.bootstrap, topic, 200)
    sk.connector_files[0].write_text(harness.props_text(good))
    sk.worker_file.write_text(harness.props_text(
        fl.worker_props("127.0.0.1:1", state)))
    text = reload(sk, r"reload refused")
    assert "bootstrap.servers changed" in text and "restart skiff" in text
    src.append(100)
    fl.check_delivery(fl.read_topic(kafka.bootstrap, topic, 300), 300, max_dups=0)
    assert sk.stop() == 0


def test_reload_inline_add_remove_and_log_level(tmp_path, kafka):
    t1, t2 = harness.unique_topic("inl1"), harness.unique_topic("inl2")
    for t in (t1, t2):
        harness.create_topic(kafka.bootstrap, t, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    s1, s2 = fl.SeqSource(tmp_path / "one.log"), fl.SeqSource(tmp_path / "two.log")
    s1.append(50)
    s2.append(70)

    def worker(*conns, level=None):
        p = fl.worker_props(kafka.bootstrap, state)
        for name, src, t in conns:
            p.update({f"connectors.{name}.{k}": v
                      for k, v in fl.file_connector(name, src.path, t).items() if k != "name"})
        if level:
            p["log.level"] = level
        p["listeners"] = f"http://127.0.0.1:{port}"
        return p

    port = free_port()

    sk = fl.FaultSkiff(tmp_path, worker(("one", s1, t1)), [])
    sk.start()
    fl.read_topic(kafka.bootstrap, t1, 50)
    sk.worker_file.write_text(harness.props_text(worker(("one", s1, t1), ("two", s2, t2),
                                                        level="debug")))
    text = reload(sk, r"reload done")
    assert "connector two: started" in text and "connector one:" not in text
    assert "log level: debug" in text
    fl.read_topic(kafka.bootstrap, t2, 70)
    sk.worker_file.write_text(harness.props_text(worker(("two", s2, t2))))
    text = reload(sk, r"reload done")
    assert "connector one: removed" in text
    s1.append(10)  # no longer read
    s2.append(10)
    fl.check_delivery(fl.read_topic(kafka.bootstrap, t2, 80), 80, max_dups=0)
    # The removed connector is gone from the REST API, /health, /metrics and
    # `skiff status` (its slot used to be read as a live connector: a crash).
    assert get_json(port, "/connectors") == ["two"]
    assert get_json(port, "/health")["status"] == "healthy"
    assert "connector=\"one\"" not in get_text(port, "/metrics")
    st = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file)],
                        capture_output=True, text=True, timeout=30)
    assert st.returncode == 0, st.stdout + st.stderr
    assert "two" in st.stdout and "one" not in st.stdout.replace("done", "")
    assert sk.stop() == 0
    assert fl.seqs_of(harness.consume(kafka.bootstrap, t1)) == list(range(50))


def test_reload_added_connector_that_cannot_open_refuses_it(tmp_path, kafka):
    # Issue 11 #5: it used to be logged, then missing from /connectors with
    # /health healthy and `skiff status` exit 0. Issue 26: a reload is
    # refused as a whole when a connector of it cannot start; the running
    # configuration stays, and /health and `skiff status` say healthy.
    t1 = harness.unique_topic("okc")
    state, s1 = one_source(tmp_path, kafka.bootstrap, t1, "one.log", 20)
    port = free_port()

    def worker(bad):
        p = fl.worker_props(kafka.bootstrap, state)
        p.update({f"connectors.one.{k}": v
                  for k, v in fl.file_connector("one", s1.path, t1).items() if k != "name"})
        if bad:  # both file and files: open() refuses it, the check does not
            p.update({f"connectors.bad.{k}": v for k, v in fl.file_connector(
                "bad", tmp_path / "b.log", t1, files=str(tmp_path / "*.x")).items()
                if k != "name"})
        p["listeners"] = f"http://127.0.0.1:{port}"
        return p

    sk = fl.FaultSkiff(tmp_path, worker(False), [])
    sk.start()
    fl.read_topic(kafka.bootstrap, t1, 20)
    sk.worker_file.write_text(harness.props_text(worker(True)))
    text = reload(sk, r"reload refused")
    assert re.search(r"reload refused: connector bad: .*set exactly one of file", text), text
    assert get_json(port, "/connectors") == ["one"]
    assert get_json(port, "/health")["status"] == "healthy"
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "bad" not in r.stdout, r.stdout + r.stderr
    s1.append(10)  # the other one ships on, never restarted
    fl.check_delivery(fl.read_topic(kafka.bootstrap, t1, 30), 30, max_dups=0)
    assert "connector one: stopped" not in sk.log_text()
    assert sk.stop() == 0


def status_line(sk, name):
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=30)
    lines = [x for x in r.stdout.splitlines() if x.startswith(f"connector {name}: ")]
    assert len(lines) == 1, r.stdout + r.stderr
    return lines[0]


@pytest.mark.parametrize("how", ["sighup", "put"])
def test_reopened_connector_keeps_its_last_ack_with_its_acked_count(tmp_path, kafka, topic, how):
    """A connector reopened with changed settings (SIGHUP, or one REST PUT
    of its config) keeps its acked count: `skiff status` said "acked 100;
    last ack never" as the last acknowledgement's time was lost."""
    state, src = one_source(tmp_path, kafka.bootstrap, topic, "app.log", 100)
    port = free_port()
    c = fl.file_connector("c", src.path, topic)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 listeners=f"http://127.0.0.1:{port}"), [c])
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, 100)
    deadline = time.monotonic() + 30
    while "acked 100," not in (line := status_line(sk, "c")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "acked 100, failed 0; last ack " in line and "last ack never" not in line, line
    changed = dict(c, **{"errors.log.enable": "true"})
    if how == "sighup":
        sk.connector_files[0].write_text(harness.props_text(changed))
        reload(sk, r"connector c: restarted with its new settings")
    else:
        mark = sk.log_mark()
        r = request(port, "PUT", "/connectors/c/config",
                    {k: v for k, v in changed.items() if k != "name"})
        assert r.status == 200, r
        sk.wait_log(r"connector c: restarted with its new settings", since=mark)
    line = status_line(sk, "c")
    assert line.startswith("connector c: RUNNING; records produced 100, acked 100, failed 0; "
                           "last ack "), line
    assert "last ack never" not in line, line
    assert sk.stop() == 0
