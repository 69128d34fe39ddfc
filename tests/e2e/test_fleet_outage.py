"""The fleet while Kafka is away (issue 28): a device with fleet.enabled
boots, runs its local connectors and queues their records whatever the
broker does; the fleet joins when the broker comes, and follows it through
an outage after the start. Against a broker of the test's own
(kafka_private), stopped and started.

(1) boot with the broker down: skiff stays up and says once that the fleet
    waits for Kafka; the local file connector's lines all arrive exactly
    once after the broker starts, and a fleet config written then is
    applied (`skiff fleet config ... --wait`);
(2) broker stopped for 35 s while running (longer than a delivery's 30 s
    timeout), a connector added meanwhile by a reload: skiff stays up, the
    status record sent meanwhile arrives, a config written after the broker
    returns is applied, and the status view is right."""

import re
import signal
import time

import harness
from test_fleet_control import device_view, expect, fl, fleet, lines, states, tag


def make(tmp_path, broker, device, prefix, local_file, local_topic):
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    state = tmp_path / "state"
    state.mkdir()
    sk = harness.Skiff(tmp_path, {
        "bootstrap.servers": broker.bootstrap,
        "offset.storage.file.filename": str(state / "offsets"),
        "offset.flush.interval.ms": "500",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "device.id": device,
        "fleet.enabled": "true",
        "fleet.allow.files": f"{allowed}/*",
        "fleet.allow.connector.classes": "FileStreamSource",
        "fleet.allow.topics": f"{prefix}*",
        "fleet.heartbeat.interval.ms": "1000",
        "config.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
    }, [{
        "name": "local",
        "connector.class": "FileStreamSource",
        "file": str(local_file),
        "topic": local_topic,
    }])
    return sk, allowed, state


def test_a_device_boots_while_kafka_is_away_and_joins_when_it_comes(tmp_path, kafka_private):
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    local_topic, topic = f"{prefix}local", f"{prefix}app"
    kafka_private.start()
    for x in (local_topic, topic):
        harness.create_topic(kafka_private.bootstrap, x)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka_private.bootstrap)
    assert rc == 0, err
    kafka_private.stop()

    local = fl.SeqSource(tmp_path / "local.log")
    local.append(100)
    sk, allowed, state = make(tmp_path, kafka_private, d, prefix, local.path, local_topic)
    sk.start()
    # Before the fix: the start blocked 30 s on the status topic's check,
    # then exited 75, the local connector never read a line.
    sk.wait_log(r"fleet: waiting for Kafka", timeout=20)
    local.append(50)
    time.sleep(3)
    assert sk.running(), sk.log_text()
    assert len(re.findall(r"fleet: waiting for Kafka", sk.log_text())) == 1, sk.log_text()

    kafka_private.start()
    assert lines(kafka_private.bootstrap, local_topic, 150, timeout=90) == expect(local, 0, 150)
    app = tmp_path / "allowed" / "app.log"
    src = fl.SeqSource(app)
    src.append(40)
    b = ["--device", d, "--bootstrap", kafka_private.bootstrap]
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={src.path}", "--set", f"topic={topic}", "--wait", "90")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    assert lines(kafka_private.bootstrap, topic, 40) == expect(src, 0, 40)
    view = device_view(kafka_private.bootstrap, d,
                       lambda v: states(v).get("app") == "RUNNING" and
                       states(v).get("local") == "RUNNING", timeout=60)
    assert view["health"] == "ok", view
    local.append(10)
    assert lines(kafka_private.bootstrap, local_topic, 160) == expect(local, 0, 160)
    assert sk.stop() == 0


def test_the_fleet_follows_the_broker_through_an_outage(tmp_path, kafka_private):
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    local_topic, topic = f"{prefix}local", f"{prefix}app"
    kafka_private.start()
    for x in (local_topic, topic, f"{local_topic}-extra"):
        harness.create_topic(kafka_private.bootstrap, x)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka_private.bootstrap)
    assert rc == 0, err
    local = fl.SeqSource(tmp_path / "local.log")
    local.append(100)
    sk, allowed, state = make(tmp_path, kafka_private, d, prefix, local.path, local_topic)
    sk.start()
    sk.wait_log(r"fleet: device " + d)
    assert lines(kafka_private.bootstrap, local_topic, 100) == expect(local, 0, 100)
    device_view(kafka_private.bootstrap, d, lambda v: states(v).get("local") == "RUNNING")

    # Away longer than a delivery's timeout (30 s): a status record sent
    # meanwhile (connector "extra", added by a SIGHUP reload) must still
    # reach the topic when the broker returns. Before the fix it timed
    # out, and the fleet never sent it again: the view never showed extra.
    kafka_private.stop()
    away = time.monotonic()
    extra = fl.SeqSource(tmp_path / "extra.log")
    extra.append(20)
    with open(sk.worker_file, "a") as f:
        f.write("connectors.extra.connector.class=FileStreamSource\n"
                f"connectors.extra.file={extra.path}\n"
                f"connectors.extra.topic={local_topic}-extra\n")
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"connector extra: reading", since=mark)
    local.append(50)
    time.sleep(max(0.0, 35 - (time.monotonic() - away)))
    assert sk.running(), sk.log_text()
    kafka_private.start()

    src = fl.SeqSource(allowed / "app.log")
    src.append(30)
    b = ["--device", d, "--bootstrap", kafka_private.bootstrap]
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={src.path}", "--set", f"topic={topic}", "--wait", "90")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    assert lines(kafka_private.bootstrap, topic, 30) == expect(src, 0, 30)
    view = device_view(kafka_private.bootstrap, d,
                       lambda v: states(v).get("app") == "RUNNING" and
                       states(v).get("local") == "RUNNING" and
                       states(v).get("extra") == "RUNNING" and v["stale"] is False,
                       timeout=60)
    assert view["health"] == "ok", view
    assert lines(kafka_private.bootstrap, local_topic, 150) == expect(local, 0, 150)
    assert lines(kafka_private.bootstrap, f"{local_topic}-extra", 20) == expect(extra, 0, 20)
    assert sk.stop() == 0
