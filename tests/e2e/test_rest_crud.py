"""Connectors created, changed and deleted through the REST API (issue 26):
POST /connectors, PUT and PATCH /connectors/{name}/config and DELETE
/connectors/{name} are applied as a SIGHUP reload is (the same refusals, a
drain so that nothing is lost), refused as a whole when a connector cannot
start (a reload too), and kept beside the offsets file so that they survive
a restart (Connect's standalone worker forgets them)."""

import json
import os
import signal
import threading
import time

from harness import consume
from restlib import request, start_skiff, wait_for

J = "application/json"


def payloads(records):
    return [json.loads(r["value"])["payload"] for r in records]


class Writer:
    """Appends "NAME i" lines to path, about rate a second, until stopped."""

    def __init__(self, path, name, rate=1000):
        self.path, self.name, self.rate, self.n = path, name, rate, 0
        self.done = threading.Event()
        self.t = threading.Thread(target=self._run, daemon=True)
        self.t.start()

    def _run(self):
        step = max(1, self.rate // 20)
        while not self.done.wait(0.05):
            with open(self.path, "a") as f:
                f.write("".join(f"{self.name} {self.n + i}\n" for i in range(step)))
            self.n += step

    def stop(self):
        self.done.set()
        self.t.join()
        return [f"{self.name} {i}" for i in range(self.n)]


def all_of(bootstrap, topics):
    out = []
    for t in topics:
        out += payloads(consume(bootstrap, t))
    return out


def test_changes_at_run_time_lose_nothing_and_survive_a_restart(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic)
    b = tmp_path / "b.log"
    b.touch()
    wa, wb = Writer(src, "a"), Writer(b, "b")
    try:
        time.sleep(0.5)
        cfg = {"connector.class": "FileStreamSource", "file": str(b), "topic": topic + "-b1"}
        r = request(port, "POST", "/connectors", {"name": "b", "config": cfg})
        assert r.status == 201, r
        assert r.json["config"] == dict(cfg, name="b")
        assert r.json["tasks"] == [{"connector": "b", "task": 0}]
        time.sleep(0.5)
        r = request(port, "PUT", "/connectors/b/config", dict(cfg, topic=topic + "-b2"))
        assert (r.status, r.json["config"]["topic"]) == (200, topic + "-b2"), r
        time.sleep(0.5)
        r = request(port, "PATCH", "/connectors/local-file-source/config",
                    {"topic": topic + "-a2"})
        assert (r.status, r.json["config"]["topic"]) == (200, topic + "-a2"), r
        time.sleep(0.5)
        r = request(port, "GET", "/connectors")
        assert sorted(r.json) == ["b", "local-file-source"]
    finally:
        want_a, want_b = wa.stop(), wb.stop()
    got_a = wait_for(lambda: sorted(x for x in all_of(kafka.bootstrap, [topic, topic + "-a2"])
                                    if x.startswith("a ")) == sorted(want_a) or None,
                     60, 1, "every line of a") and all_of(kafka.bootstrap, [topic, topic + "-a2"])
    got_b = all_of(kafka.bootstrap, [topic + "-b1", topic + "-b2"])
    # Nothing lost, nothing twice: each change drained and flushed first.
    assert sorted(got_a) == sorted(want_a), (len(got_a), len(want_a))
    wait_for(lambda: sorted(all_of(kafka.bootstrap, [topic + "-b1", topic + "-b2"])) ==
             sorted(want_b), 60, 1, "every line of b")
    print(f"FIGURE rest.crud_lines: a {len(want_a)}, b {len(want_b)}, 0 lost, 0 twice")
    kept = json.loads((sk.dir.parent / "rest-connectors.json").read_text())
    assert [e["name"] for e in kept["connectors"]] == ["b", "local-file-source"]
    assert oct(os.stat(sk.dir.parent / "rest-connectors.json").st_mode & 0o777) == "0o600"
    # A restart: the same connectors, reading on from their offsets.
    assert sk.stop() == 0
    in_b2 = len(consume(kafka.bootstrap, topic + "-b2"))
    with open(b, "a") as f:
        f.write("b after\n")
    sk.start()
    from restlib import wait_up
    wait_up(port)
    assert sorted(request(port, "GET", "/connectors").json) == ["b", "local-file-source"]
    assert request(port, "GET", "/connectors/b/config").json["topic"] == topic + "-b2"
    assert request(port, "GET", "/connectors/local-file-source/config").json["topic"] == \
        topic + "-a2"
    got = payloads(consume(kafka.bootstrap, topic + "-b2", n=in_b2 + 1))
    assert got[-1] == "b after" and got.count("b after") == 1
    # Deleted: gone now and after a restart, its file left alone.
    assert request(port, "DELETE", "/connectors/local-file-source").status == 204
    assert request(port, "GET", "/connectors").json == ["b"]
    assert request(port, "DELETE", "/connectors/b").status == 204
    assert request(port, "GET", "/connectors").json == []
    assert sk.running()  # no connector left, the API still up
    assert sk.stop() == 0
    sk.start()
    wait_up(port)
    assert request(port, "GET", "/connectors").json == []
    kept = json.loads((sk.dir.parent / "rest-connectors.json").read_text())
    # b existed only through the API: forgotten; the file's one stays deleted.
    assert kept["connectors"] == [{"name": "local-file-source", "deleted": True}]
    # Created again: it reads on from its stored offset.
    r = request(port, "POST", "/connectors",
                {"name": "local-file-source",
                 "config": {"connector.class": "FileStreamSource", "file": str(src),
                            "topic": topic + "-a3"}})
    assert r.status == 201, r
    with open(src, "a") as f:
        f.write("a after\n")
    assert payloads(consume(kafka.bootstrap, topic + "-a3", n=1)) == ["a after"]
    assert sk.stop() == 0


def test_refused_as_a_whole_like_a_reload(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic)
    kept = sk.dir.parent / "rest-connectors.json"
    with open(src, "a") as f:
        f.write("line 1\n")
    consume(kafka.bootstrap, topic, n=1)
    starts = sk.log_text().count("connector local-file-source: reading")
    for body, says in [
        ({"name": "x", "config": {"connector.class": "FileStreamSource", "file": str(src),
                                  "topic": "t", "batch.size": "lots"}},
         "batch.size: 'lots' is not an integer"),
        # No file: the source cannot open; the whole change is refused.
        ({"name": "x", "config": {"connector.class": "FileStreamSource", "topic": "t"}},
         "set exactly one of file"),
        ({"name": "x", "config": {"connector.class": "FileStreamSource", "file": str(src),
                                  "topic": "t", "key.converter": "com.example.Avro"}},
         "unknown converter"),
    ]:
        r = request(port, "POST", "/connectors", body)
        assert r.status == 400, r
        assert r.json["message"].startswith("Connector configuration is invalid") and \
            says in r.json["message"], r
    assert request(port, "GET", "/connectors").json == ["local-file-source"]
    assert not kept.exists()
    # The running connector was never stopped for them.
    assert sk.log_text().count("connector local-file-source: reading") == starts
    # A SIGHUP whose new connector cannot start is refused as a whole too.
    worker = sk.worker_file.read_text()
    sk.worker_file.write_text(worker + "connectors.bad.connector.class=FileStreamSource\n"
                              "connectors.bad.topic=t\n")
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload refused: connector bad: .*set exactly one of file", 30, since=mark)
    assert request(port, "GET", "/connectors").json == ["local-file-source"]
    sk.worker_file.write_text(worker)
    with open(src, "a") as f:
        f.write("line 2\n")
    assert payloads(consume(kafka.bootstrap, topic, n=2)) == ["line 1", "line 2"]
    # KIP-980's initial state.
    b = tmp_path / "b.log"
    b.write_text("b 1\n")
    for name, st in [("p", "PAUSED"), ("s", "STOPPED")]:
        r = request(port, "POST", "/connectors",
                    {"name": name, "initial_state": st,
                     "config": {"connector.class": "FileStreamSource", "file": str(b),
                                "topic": topic + "-" + name}})
        assert r.status == 201, r
        wait_for(lambda: request(port, "GET", f"/connectors/{name}/status")
                 .json["connector"]["state"] == st, 30, what=st)
    time.sleep(1)
    assert consume(kafka.bootstrap, topic + "-p") == [] == consume(kafka.bootstrap, topic + "-s")
    # SIGHUP keeps what the API created.
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload done", 30, since=mark)
    assert sorted(request(port, "GET", "/connectors").json) == ["local-file-source", "p", "s"]
    assert sk.stop() == 0


def test_config_providers_resolve_in_created_connectors(tmp_path, kafka, topic):
    """A connector the API created takes ${env:...} as a file's does: the
    value resolved when it loads, the reference kept as written."""
    sk, port, src = start_skiff(
        tmp_path, kafka.bootstrap, topic,
        {"config.providers": "env",
         "config.providers.env.class":
             "org.apache.kafka.common.config.provider.EnvVarConfigProvider"},
        env={"SKIFF_REST_TOPIC": topic + "-env"})
    b = tmp_path / "b.log"
    b.write_text("from env\n")
    r = request(port, "POST", "/connectors", {"name": "b", "config": {
        "connector.class": "FileStreamSource", "file": str(b),
        "topic": "${env:SKIFF_REST_TOPIC}"}})
    assert r.status == 201, r
    assert r.json["config"]["topic"] == "[hidden]"  # a provider's value: a secret
    assert payloads(consume(kafka.bootstrap, topic + "-env", n=1)) == ["from env"]
    kept = json.loads((sk.dir.parent / "rest-connectors.json").read_text())
    assert kept["connectors"][0]["config"]["topic"] == "${env:SKIFF_REST_TOPIC}"
    assert sk.stop() == 0


def test_a_skiff_without_connectors_waits_for_a_post(tmp_path, kafka, topic):
    """Hostile finding: started with the API and no connector, skiff's first
    line ("no stored offsets ...: ") ended in whatever the stack held (a
    stray '"' here): the list of connectors was never written."""
    from harness import Skiff
    from restlib import free_port, wait_up
    port = free_port()
    sk = Skiff(tmp_path, {"bootstrap.servers": kafka.bootstrap,
                          "offset.storage.file.filename": str(tmp_path / "offsets"),
                          "listeners": f"http://127.0.0.1:{port}"}, []).start()
    wait_up(port)
    assert request(port, "GET", "/connectors").json == []
    line = next(x for x in sk.log_text().splitlines() if "no stored offsets" in x)
    assert line.endswith("(a first start, or its files were deleted): no connector yet"), line
    src = tmp_path / "a.log"
    src.write_text("one\n")
    r = request(port, "POST", "/connectors",
                {"name": "a", "config": {"connector.class": "FileStreamSource",
                                         "file": str(src), "topic": topic}})
    assert r.status == 201, r
    assert payloads(consume(kafka.bootstrap, topic, n=1)) == ["one"]
    assert sk.stop() == 0
