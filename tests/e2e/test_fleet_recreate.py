"""A device's config topic deleted and made again while the device is down
(issue 28, design §2.4), end to end against the real broker. librdkafka
2.0.2 gives no topic id, so the device tells a recreated topic by its
marker (skiff-topic-id, written by `skiff fleet provision` and by `skiff
fleet config` to an empty topic) and by an end below the offset it applied
up to:

(a) recreated empty: every connector the old topic gave is kept, running,
    and the device says so (its log, a skiff-outcome-<name> record);
(b) recreated with a new config at the offset where the old topic held a
    refused one: applied, not skipped as already refused; what the old topic
    gave is still kept."""

import json
import subprocess
import time

import harness
from test_fleet_control import (expect, fleet, fl, lines, make_device, status_records,
                                tag)


def delete_topic(bootstrap, topic):
    r = subprocess.run([str(harness.tool("consume")), "-b", bootstrap, "-t", topic, "-D"],
                       capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr


def recreate(bootstrap, device, topic):
    """Deletes the device's config topic and provisions it again (empty but
    for a new marker), once the broker has let the old one go."""
    delete_topic(bootstrap, topic)
    deadline = time.monotonic() + 60
    while True:
        rc, out, err = fleet("provision", "--device", device, "--bootstrap", bootstrap)
        if rc == 0 and f"# created topic {topic} " in out:
            break
        assert time.monotonic() < deadline, (rc, out, err)
        time.sleep(1)
    assert f"# wrote skiff-topic-id to {topic} at offset 0" in out, out


def outcome(bootstrap, device, name):
    last = None
    for k, v in status_records(bootstrap, device):
        if k == f"skiff-outcome-{name}" and v is not None:
            last = json.loads(v)
    return last


def test_a_recreated_config_topic_keeps_what_it_gave(tmp_path, kafka):
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    cfg = f"skiff.config.{d}"
    topic, topic2 = f"{prefix}app", f"{prefix}fresh"
    for x in (topic, topic2):
        harness.create_topic(kafka.bootstrap, x)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka.bootstrap)
    assert rc == 0, err
    assert f"# wrote skiff-topic-id to {cfg} at offset 0" in out, out
    sk, allowed, state = make_device(tmp_path, kafka, d, prefix)
    src = fl.SeqSource(allowed / "app.log")
    src.append(50)
    fresh = fl.SeqSource(allowed / "fresh.log")
    fresh.append(20)
    sk.start()
    sk.wait_log(r"fleet: device " + d)
    b = ["--device", d, "--bootstrap", kafka.bootstrap]
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={src.path}", "--set", f"topic={topic}", "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out and f"to {cfg} at offset 1" in out, (rc, out, err)
    # Refused at offset 2 (a file outside fleet.allow.files).
    rc, out, err = fleet("config", "bad", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={tmp_path}/elsewhere.log", "--set", f"topic={topic}",
                         "--wait", "60")
    assert rc == 1 and f"{d}: refused: " in out and f"to {cfg} at offset 2" in out, out
    assert lines(kafka.bootstrap, topic, 50) == expect(src, 0, 50)

    # (a) recreated empty while the device is down: app kept and said so.
    assert sk.stop() == 0
    recreate(kafka.bootstrap, d, cfg)
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"fleet: config topic " + cfg + r" was recreated \(", since=mark)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        o = outcome(kafka.bootstrap, d, "app")
        if o is not None and "recreated" in json.dumps(o):
            break
        time.sleep(0.5)
    assert o is not None and "recreated" in json.dumps(o), o
    src.append(30)
    assert lines(kafka.bootstrap, topic, 80) == expect(src, 0, 80)
    kept = json.loads((state / "fleet-connectors.json").read_text())
    assert [c["name"] for c in kept["connectors"]] == ["app"], kept

    # (b) recreated again, a config at offset 2 (where bad was refused).
    assert sk.stop() == 0
    recreate(kafka.bootstrap, d, cfg)
    rc, out, err = fleet("pause", "later", *b)  # offset 1: a target state, held
    assert rc == 0 and f"to {cfg} at offset 1" in out, (rc, out, err)
    rc, out, err = fleet("config", "fresh", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={fresh.path}", "--set", f"topic={topic2}")
    assert rc == 0 and f"to {cfg} at offset 2" in out, (rc, out, err)
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"fleet: config topic " + cfg + r" was recreated \(", since=mark)
    assert lines(kafka.bootstrap, topic2, 20) == expect(fresh, 0, 20)
    src.append(20)
    assert lines(kafka.bootstrap, topic, 100) == expect(src, 0, 100)
    kept = json.loads((state / "fleet-connectors.json").read_text())
    assert sorted(c["name"] for c in kept["connectors"]) == ["app", "fresh"], kept
    assert sk.stop() == 0
