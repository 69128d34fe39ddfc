"""The device keeps the last word at run time (issue 28, docs/fleet.md): every
connector of the fleet's layer carries the fleet's guard (fleetallow_guard),
from its first read, across reloads and restarts; no other connector does.

(a) a fleet connector allowed DIR/*.log where DIR/x.log is a link to a secret
    outside: FAILED, the trace naming the real path and fleet.allow.files,
    files_refused counted, the secret's bytes not in the topic;
(b) the same after a restart, the connector read from fleet-connectors.json
    by the first load, before the fleet opens;
(c) a RegexRouter to a topic outside fleet.allow.topics: FAILED with the
    reason, nothing produced to that topic;
(d) a connector of the device's own files reading the same link ships it:
    no guard. (It also keeps the device running: a worker whose every
    connector failed exits, fleet or not.)"""

import json
import subprocess

import harness  # noqa: E402
from test_fleet_control import (device_view, fleet, lines, make_device, states,
                                status_records, tag)


def status(sk):
    """`skiff status` of the worker file: each connector's counters."""
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=30)
    return r.stdout + r.stderr


def failed(kafka, d, name):
    """Once `fleet status` shows name FAILED: its status records' last
    values (Connect's status-connector-NAME and status-task-NAME-0, the
    trace in them), as one text."""
    device_view(kafka.bootstrap, d, lambda v: states(v).get(name) == "FAILED", timeout=60)
    last = dict(status_records(kafka.bootstrap, d))
    return " ".join(last.get(k) or "" for k in (f"status-connector-{name}",
                                                 f"status-task-{name}-0"))


def test_a_fleet_connector_is_guarded_a_local_one_is_not(tmp_path, kafka):
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    topic, routed, local = f"{prefix}app", f"routed-{t}", f"local-{t}"
    for x in (topic, routed, local):
        harness.create_topic(kafka.bootstrap, x)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka.bootstrap)
    assert rc == 0, err
    sk, allowed, state = make_device(tmp_path, kafka, d, prefix)
    secret = tmp_path / "secret"
    secret.write_text("SHADOW-BYTES\n")
    (allowed / "x.log").symlink_to(secret)
    with open(sk.worker_file, "a") as f:
        f.write(harness.props_text({
            "connectors.mine.connector.class": "FileStreamSource",
            "connectors.mine.files": f"{allowed}/*.log",
            "connectors.mine.topic": local,
        }))
    sk.start()
    sk.wait_log(r"fleet: device " + d)
    # (d) the device's own connector reads the link: no guard.
    assert lines(kafka.bootstrap, local, 1) == ["SHADOW-BYTES"]
    b = ["--device", d, "--bootstrap", kafka.bootstrap]

    # (a) the link inside the allowed directory: refused where it really is.
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"files={allowed}/*.log", "--set", f"topic={topic}",
                         "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    trace = failed(kafka, d, "app")
    assert f"resolves to {secret}, outside fleet.allow.files" in trace, trace
    st = status(sk)
    assert "files_refused=" in st and "files_refused=0" not in st, st
    assert lines(kafka.bootstrap, topic, 0) == []

    # (b) after a restart: loaded from fleet-connectors.json, guarded at once.
    assert sk.stop() == 0
    kept = json.loads((state / "fleet-connectors.json").read_text())
    assert [c["name"] for c in kept["connectors"]] == ["app"], kept
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(str(secret) + r".*fleet\.allow\.files", since=mark, timeout=60)
    trace = failed(kafka, d, "app")
    assert f"resolves to {secret}, outside fleet.allow.files" in trace, trace
    assert lines(kafka.bootstrap, topic, 0) == []

    # (c) a router to a topic outside fleet.allow.topics.
    plain = allowed / "plain.log"
    plain.write_text("one\ntwo\n")
    rc, out, err = fleet("config", "routed", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={plain}", "--set", f"topic={prefix}r",
                         "--set", "transforms=r",
                         "--set", "transforms.r.type="
                         "org.apache.kafka.connect.transforms.RegexRouter",
                         "--set", "transforms.r.regex=.*",
                         "--set", f"transforms.r.replacement={routed}",
                         "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    trace = failed(kafka, d, "routed")
    assert f"{routed} (after the transforms) is outside fleet.allow.topics" in trace, trace
    assert lines(kafka.bootstrap, routed, 0) == []
    # The local connector ran on through all of it.
    assert lines(kafka.bootstrap, local, 3) == ["SHADOW-BYTES", "one", "two"]
    assert sk.stop() == 0


def test_a_device_whose_every_connector_failed_stays_up_for_the_fleet(tmp_path, kafka):
    """A device steered by the fleet whose only connector fails (here: the
    guard refuses its file) stays up, as Connect's distributed worker does
    with every connector FAILED: it reports the failure on its status topic
    and the fleet can remove or repair it. (Before: exit 78, and at every
    restart the same connector loaded from fleet-connectors.json, the same
    failure, the same exit: the fleet could never reach it.)"""
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    topic = f"{prefix}app"
    harness.create_topic(kafka.bootstrap, topic)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka.bootstrap)
    assert rc == 0, err
    sk, allowed, state = make_device(tmp_path, kafka, d, prefix)
    secret = tmp_path / "secret"
    secret.write_text("SHADOW-BYTES\n")
    (allowed / "x.log").symlink_to(secret)
    sk.start()
    sk.wait_log(r"fleet: device " + d)
    b = ["--device", d, "--bootstrap", kafka.bootstrap]
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"files={allowed}/*.log", "--set", f"topic={topic}",
                         "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    trace = failed(kafka, d, "app")
    assert f"resolves to {secret}, outside fleet.allow.files" in trace, trace
    # Three heartbeats later it still runs, and the fleet can repair it.
    device_view(kafka.bootstrap, d, lambda v: states(v).get("app") == "FAILED", timeout=30)
    assert sk.proc.poll() is None, sk.log_text()
    (allowed / "x.log").unlink()
    (allowed / "a.log").write_text("fixed\n")
    rc, out, err = fleet("remove", "app", *b, "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    rc, out, err = fleet("config", "app2", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"files={allowed}/*.log", "--set", f"topic={topic}",
                         "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    assert lines(kafka.bootstrap, topic, 1) == ["fixed"]
    assert sk.proc.poll() is None, sk.log_text()
    assert sk.stop() == 0
