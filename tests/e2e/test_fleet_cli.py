"""`skiff fleet`, the operator's tool of a fleet steered through Kafka topics
(issue 28, design §4.7), against the real broker.

No device loop writes status topics yet: the devices' records are written here
as a device writes them, encoded by the device's own encoders (tests/tools/
fleetdev: fleet_heartbeat, connect_records) and produced with kcat. What the
tool writes is read back byte for byte and compared with the records a real
Connect 3.9.1 distributed worker wrote (/work/notes/i28/connect-records.json:
connector-app, target-state-app, restart-connector-app, the remove's two
tombstones)."""

import json
import os
import re
import subprocess
import time
import uuid

import pytest

import harness


def skiff(*args, stdin=None, timeout=120):
    r = subprocess.run([str(harness.skiff_bin()), "fleet", *args], input=stdin,
                       capture_output=True, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def dev(*args):
    r = subprocess.run([str(harness.tool("fleetdev")), *map(str, args)], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stdout


def records(bootstrap, topic):
    """(key, value) of each record of the topic, values as text (None: tombstone)."""
    out = []
    for r in harness.consume(bootstrap, topic):
        key = r["key"].decode() if r["key"] is not None else None
        val = r["value"].decode() if r["value"] is not None else None
        out.append((r["offset"], key, val))
    return out


def provision(bootstrap, device, *groups):
    args = ["provision", "--device", device, "--bootstrap", bootstrap]
    for g in groups:
        args += ["--group", g]
    rc, out, err = skiff(*args)
    assert rc == 0, err
    return out


def heartbeat(bootstrap, device, age_ms=1000, interval_ms=60000, health="ok", conns="app",
              groups="-"):
    now = int(time.time() * 1000)
    harness.produce(bootstrap, f"skiff.status.{device}",
                    [dev("heartbeat", device, now - age_ms, interval_ms, health, conns, groups)],
                    key="skiff-heartbeat")


def tag():
    return uuid.uuid4().hex[:8]


def test_provision_creates_compacted_topics_and_prints_literal_acls(kafka):
    d, g = f"gw-{tag()}", f"site-{tag()}"
    out = provision(kafka.bootstrap, d, g)
    for topic, parts in ((f"skiff.config.{d}", 1), (f"skiff.status.{d}", 1),
                         (f"skiff.config.group.{g}", 1)):
        r = subprocess.run([str(harness.tool("fleetdev")), "describe", kafka.bootstrap, topic],
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr
        conf = dict(line.split("=", 1) for line in r.stdout.decode().splitlines())
        assert conf["partitions"] == str(parts)
        assert conf["cleanup.policy"] == "compact"
        assert conf["segment.ms"] == "3600000"
        assert conf["delete.retention.ms"] == "2592000000"
        assert f"# created topic {topic}" in out
    acl = [line for line in out.splitlines() if line.startswith("kafka-acls.sh")]
    server = f"kafka-acls.sh --bootstrap-server {kafka.bootstrap} --add --allow-principal User:{d}"
    assert acl == [
        f"{server} --operation Read --operation Describe --topic skiff.config.{d} "
        "--resource-pattern-type literal",
        f"{server} --operation Write --operation Describe --operation Create "
        f"--operation DescribeConfigs --topic skiff.status.{d} --resource-pattern-type literal",
        f"{server} --operation Read --operation Describe --topic skiff.config.group.{g} "
        "--resource-pattern-type literal",
        f"{server} --operation Describe --group skiff-fleet-{d} "
        "--resource-pattern-type literal",
    ]
    # Again: the topics exist and are left as they are.
    again = provision(kafka.bootstrap, d)
    assert f"# topic skiff.config.{d} exists (compacted): left as it is" in again
    # A topic of that name that deletes is refused: the device would forget.
    bad = f"gw-{tag()}"
    harness.create_topic(kafka.bootstrap, f"skiff.status.{bad}")
    rc, out, err = skiff("provision", "--device", bad, "--bootstrap", kafka.bootstrap)
    assert rc == 78 and f"skiff.status.{bad}" in err and "compact" in err, (out, err)
    # Without --bootstrap it only prints.
    rc, out, err = skiff("provision", "--device", "gw-offline")
    assert rc == 0, err
    assert "--topic skiff.config.gw-offline --resource-pattern-type literal" in out
    assert "created" not in out


def test_provision_topic_configs_from_command_config(kafka, tmp_path):
    """config.storage.X / status.storage.X in the --command-config file are the
    created topics' configs, as a worker file's are."""
    d = f"gw-{tag()}"
    cc = tmp_path / "client.properties"
    cc.write_text("config.storage.segment.ms=7200000\n")
    rc, out, err = skiff("provision", "--device", d, "--bootstrap", kafka.bootstrap,
                         "--command-config", str(cc))
    assert rc == 0, err
    got = {}
    for topic in (f"skiff.config.{d}", f"skiff.status.{d}"):
        r = subprocess.run([str(harness.tool("fleetdev")), "describe", kafka.bootstrap, topic],
                           capture_output=True, timeout=60)
        got[topic] = dict(line.split("=", 1) for line in r.stdout.decode().splitlines())
    assert got[f"skiff.config.{d}"]["segment.ms"] == "7200000"
    assert got[f"skiff.status.{d}"]["segment.ms"] == "3600000"
    assert got[f"skiff.config.{d}"]["delete.retention.ms"] == "2592000000"


def test_writes_connect_records_byte_for_byte(kafka, tmp_path):
    d = f"gw-{tag()}"
    provision(kafka.bootstrap, d)
    props = tmp_path / "app.properties"
    props.write_text("connector.class=FileStreamSource\ntasks.max=1\n"
                     "file=/tmp/i28cap-e9e0lr9c/in.txt\ntopic=data-15f0c3\n")
    b = ["--bootstrap", kafka.bootstrap, "--device", d]
    for args in (["config", "app", str(props)], ["pause", "app"], ["resume", "app"],
                 ["stop", "app"], ["restart", "app", "--include-tasks"], ["remove", "app"]):
        rc, out, err = skiff(*args, *b)
        assert rc == 0, err
        assert f"to skiff.config.{d} at offset" in out
    got = [(k, v) for _, k, v in records(kafka.bootstrap, f"skiff.config.{d}")]
    # First the topic's marker (provision's): its id for devices whose
    # librdkafka gives none, a key Connect's readers skip.
    assert got[0][0] == "skiff-topic-id", got
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",
                        got[0][1]), got
    got = got[1:]
    # As Connect 3.9.1 wrote them (connect-records.json, offsets 1, 4, 5, 7,
    # 14, 21, 22): "name" appended as Connect's REST API does.
    assert got == [
        ("connector-app", '{"properties":{"connector.class":"FileStreamSource","tasks.max":"1",'
                          '"file":"/tmp/i28cap-e9e0lr9c/in.txt","topic":"data-15f0c3",'
                          '"name":"app"}}'),
        ("target-state-app", '{"state":"PAUSED","state.v2":"PAUSED"}'),
        ("target-state-app", '{"state":"STARTED","state.v2":"STARTED"}'),
        ("target-state-app", '{"state":"PAUSED","state.v2":"STOPPED"}'),
        ("restart-connector-app", '{"include-tasks":true,"only-failed":false}'),
        ("connector-app", None),
        ("target-state-app", None),
    ]


def test_bad_input_is_named(kafka, tmp_path):
    d = f"gw-{tag()}"
    b = ["--bootstrap", kafka.bootstrap]
    rc, _, err = skiff("config", "app", "--device", d, "--set", "topic=x",
                       "--set", "connector.class=FileStreamSource", *b)
    assert rc == 78
    assert f"unknown device {d}" in err and f"skiff.config.{d}" in err
    rc, _, err = skiff("config", "app", "--device", d, "--set", "nothing", *b)
    assert rc == 78 and "--set nothing: give KEY=VALUE" in err
    bad = tmp_path / "bad.properties"
    bad.write_text("connector.class=FileStreamSource\nfile=\\u12\n")
    provision(kafka.bootstrap, d)
    rc, _, err = skiff("config", "app", "--device", d, str(bad), *b)
    assert rc == 78 and f"{bad}:2:" in err, err
    rc, _, err = skiff("status", "--device", "gw-nowhere", *b)
    assert rc == 78 and "unknown device gw-nowhere" in err
    two = f"gw-{tag()}"
    harness.create_topic(kafka.bootstrap, f"skiff.config.{two}", partitions=2)
    rc, _, err = skiff("pause", "app", "--device", two, *b)
    assert rc == 78 and f"skiff.config.{two} has 2 partitions" in err, err
    rc, _, err = skiff("pause", "app", "--device", "gw_1", *b)
    assert rc == 78 and 'device "gw_1"' in err
    cc = tmp_path / "client.properties"
    cc.write_text("security.protocol=PLAINTEXT\nsasl.jaas.config=x required;\n")
    rc, _, err = skiff("status", "--command-config", str(cc), *b)
    assert rc == 78 and f"{cc}:2" in err, err


def test_status_table_and_json(kafka):
    t = tag()
    ok, failed, stale = f"gw-{t}-a", f"gw-{t}-b", f"gw-{t}-c"
    group = f"site-{t}"
    for d in (ok, failed, stale):
        provision(kafka.bootstrap, d)
    heartbeat(kafka.bootstrap, ok, conns="app", groups=group)
    harness.produce(kafka.bootstrap, f"skiff.status.{ok}", [dev("status", ok, "RUNNING")],
                    key="status-connector-app")
    heartbeat(kafka.bootstrap, failed, conns="app,db", groups=group)
    st = f"skiff.status.{failed}"
    harness.produce(kafka.bootstrap, st, [dev("status", failed, "RUNNING")],
                    key="status-connector-app")
    harness.produce(kafka.bootstrap, st, [dev("status", failed, "RUNNING")],
                    key="status-connector-db")
    harness.produce(kafka.bootstrap, st, [dev("status", failed, "FAILED")],
                    key="status-connector-db")
    # 5 minutes old with a 1-minute interval: stale.
    heartbeat(kafka.bootstrap, stale, age_ms=300000, interval_ms=60000, conns="app")
    rc, out, err = skiff("status", "--bootstrap", kafka.bootstrap, "--group", group)
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["DEVICE", "HEALTH", "LAST-SEEN", "VERSION", "CONNECTORS",
                                "BACKLOG", "LOST", "RSS"]
    assert [line.split()[:2] for line in lines[1:]] == [[ok, "ok"], [failed, "ok"]]
    assert "2 (db FAILED)" in lines[2]
    assert "1.5 KB" in lines[1] and "8.2 MB" in lines[1]
    rc, out, err = skiff("status", "--bootstrap", kafka.bootstrap, "--json")
    assert rc == 0, err
    devices = {d["device"]: d for d in json.loads(out)["devices"]}
    assert {ok, failed, stale} <= set(devices)
    assert devices[stale]["health"] == "stale" and devices[stale]["stale"] is True
    assert devices[ok]["health"] == "ok" and devices[ok]["stale"] is False
    assert devices[failed]["connectors"] == [{"name": "app", "state": "RUNNING"},
                                             {"name": "db", "state": "FAILED"}]
    assert devices[ok]["groups"] == [group] and devices[ok]["version"] == "0.28.0-test"
    rc, out, err = skiff("status", "--bootstrap", kafka.bootstrap, "--device", stale)
    assert rc == 0, err
    assert out.splitlines()[1].split()[:3] == [stale, "stale", "5m"]


def answer(bootstrap, device, topic, offset, outcome, reason=None):
    args = ["outcome", device, topic, offset, outcome] + ([reason] if reason else [])
    harness.produce(bootstrap, f"skiff.status.{device}", [dev(*args)], key="skiff-outcome-app")


def test_wait_names_each_device(kafka):
    t = tag()
    yes, no, mute = f"gw-{t}-a", f"gw-{t}-b", f"gw-{t}-c"
    group = f"site-{t}"
    gtopic = f"skiff.config.group.{group}"
    for d in (yes, no, mute):
        provision(kafka.bootstrap, d, group)
        heartbeat(kafka.bootstrap, d, conns="app", groups=group)
    # An answer to an older record of the same topic is no answer.
    answer(kafka.bootstrap, yes, gtopic, 0, "APPLIED")
    harness.produce(kafka.bootstrap, gtopic, [b"{}"], key="skiff-test-filler", partition=0)
    wait = subprocess.Popen([str(harness.skiff_bin()), "fleet", "config", "app", "--group", group,
                             "--set", "connector.class=FileStreamSource", "--set", "topic=t",
                             "--bootstrap", kafka.bootstrap, "--wait", "20"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    offset = None
    deadline = time.time() + 30
    while offset is None and time.time() < deadline:
        recs = [o for o, k, _ in records(kafka.bootstrap, gtopic) if k == "connector-app"]
        offset = recs[0] if recs else None
        time.sleep(0.2)
    assert offset == 2  # after provision's marker (0) and the filler (1)
    answer(kafka.bootstrap, yes, gtopic, offset, "APPLIED")
    answer(kafka.bootstrap, no, gtopic, offset, "REFUSED", "file /etc/shadow: not in fleet.allow.files")
    out, err = wait.communicate(timeout=60)
    out = out.decode()
    assert wait.returncode == 75, (out, err)
    assert f"{yes}: applied" in out
    assert f"{no}: refused: file /etc/shadow: not in fleet.allow.files" in out
    assert f"{mute}: no answer (last seen " in out
    # An answer naming the group's topic is no answer to a write to the
    # device's own topic.
    rc, out, err = skiff("pause", "app", "--device", yes, "--bootstrap", kafka.bootstrap,
                         "--wait", "3")
    assert rc == 75 and f"{yes}: no answer (last seen " in out, (out, err)
    # A device answering with its own topic's offset: applied -> 0, refused -> 1.
    for d, outcome, code in ((yes, "APPLIED", 0), (no, "REFUSED", 1)):
        own = f"skiff.config.{d}"
        nxt = len(records(kafka.bootstrap, own))
        answer(kafka.bootstrap, d, own, nxt, outcome, None if outcome == "APPLIED" else "no")
        rc, out, err = skiff("resume", "app", "--device", d, "--bootstrap", kafka.bootstrap,
                             "--wait", "10")
        assert rc == code, (out, err)
        assert f"{d}: {'applied' if code == 0 else 'refused: no'}" in out


@pytest.fixture(scope="module")
def wire(tmp_path_factory):
    if os.environ.get("SKIFF_BOOTSTRAP"):
        harness.skip_not_here("an external broker (SKIFF_BOOTSTRAP) has not the TLS/SASL "
                              "listeners of kafka.sh --security")
    broker = harness.Broker(tmp_path_factory.mktemp("kafka-fleet-wire"), security=True)
    broker.start()
    yield broker
    broker.stop()


def test_over_sasl_ssl_with_command_config(wire, tmp_path):
    """Kafka tools' --command-config file, Connect's client keys: SCRAM over
    TLS for every command; without it the SASL_SSL listener is not reached."""
    sec = wire.security()
    cc = tmp_path / "client.properties"
    cc.write_text(harness.props_text({
        "security.protocol": "SASL_SSL", "ssl.ca.location": sec["CA"],
        "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": sec["SCRAM_USER"],
        "sasl.password": sec["SCRAM_PASSWORD"]}))
    d = f"gw-{tag()}"
    b = ["--bootstrap", sec["SASL_SSL"], "--command-config", str(cc), "--timeout", "20"]
    rc, out, err = skiff("provision", "--device", d, *b)
    assert rc == 0, err
    assert f"# created topic skiff.config.{d}" in out
    rc, out, err = skiff("pause", "app", "--device", d, *b)
    assert rc == 0, err
    assert [(k, v) for _, k, v in records(wire.bootstrap, f"skiff.config.{d}")][1:] == [
        ("target-state-app", '{"state":"PAUSED","state.v2":"PAUSED"}')]  # after the marker
    heartbeat(wire.bootstrap, d)
    rc, out, err = skiff("status", "--device", d, *b)
    assert rc == 0, err
    assert out.splitlines()[1].split()[:2] == [d, "ok"]
    # Without the client keys: plaintext against the TLS listener.
    rc, out, err = skiff("status", "--bootstrap", sec["SASL_SSL"], "--timeout", "5")
    assert rc == 75, (rc, out, err)


def test_status_of_more_devices_than_a_read_window(kafka):
    """`skiff fleet status` reads the status topics a window of 500 at a time,
    each by a consumer of its own, from offset 0 (no ListOffsets per topic):
    1,100 devices (3 windows) are each listed with their records; a topic
    whose first records were deleted (a status topic with cleanup.policy
    compact,delete) is read from where it starts now, not skipped to its end."""
    prefix = f"fb{tag()}.status."
    gone = f"{prefix}dev-00700"
    harness.create_topic(kafka.bootstrap, gone)  # cleanup.policy=delete
    r = subprocess.run([str(harness.tool("fleetfill")), "-b", kafka.bootstrap, "-t", prefix,
                        "-d", "1100", "-S"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("6600 records ")
    now = int(time.time() * 1000)
    harness.produce(kafka.bootstrap, gone,
                    [dev("heartbeat", "dev-00700", now, 60000, "degraded", "app,db", "all")],
                    key="skiff-heartbeat")
    d = subprocess.run([str(harness.tool("fleetdev")), "delete-records", kafka.bootstrap, gone,
                        "6"], capture_output=True, timeout=60)
    assert d.returncode == 0, d.stderr
    rc, out, err = skiff("status", "--bootstrap", kafka.bootstrap, "--status-topic",
                         prefix + "{device}", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["skipped"] == 0
    devs = {x["device"]: x for x in doc["devices"]}
    assert list(devs) == [f"dev-{i:05d}" for i in range(1100)]
    running = [{"name": "app", "state": "RUNNING"}, {"name": "db", "state": "RUNNING"}]
    for name, x in devs.items():
        if name == "dev-00700":
            continue
        assert (x["health"], x["groups"], x["connectors"]) == ("ok", ["all"], running), x
        assert [(o["name"], o["outcome"], o["topic"]) for o in x["outcomes"]] == [
            ("app", "APPLIED", f"skiff.config.{name}")], x
    # Its statuses and outcome deleted: the heartbeat written after them.
    x = devs["dev-00700"]
    assert x["health"] == "degraded" and x["last_seen_ms"] == now, x
    assert x["connectors"] == [{"name": "app", "state": None}, {"name": "db", "state": None}]
    assert x["outcomes"] == []
