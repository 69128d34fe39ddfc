"""The Kafka ACLs that make a fleet safe (issue 28, design §2.6, §5.2 test 6),
proven against a real broker that authorises: KRaft's StandardAuthorizer,
allow.everyone.if.no.acl.found=false, SCRAM users per device (gw-1, gw-10)
and an operator (ops) on the SASL_SSL listener. The broker itself and the
test's admin are User:ANONYMOUS on the PLAINTEXT listener, a super user.

The grants are exactly the kafka-acls.sh lines `skiff fleet provision`
prints, run by Kafka's own AclCommand (the class kafka-acls.sh runs): the
printed lines are what is tested. The device is tests/tools/fleetlinkprobe
(the device's Kafka link: assign() of its configuration topics with group.id
skiff-fleet-<device>, an idempotent status producer, its status topic
created or checked); the operator is `skiff fleet`."""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

AUTHORIZER = "\n".join([
    "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    # The broker (inter-broker and controller listeners are PLAINTEXT here)
    # and the test's admin; kafka.sh's own SCRAM user.
    "super.users=User:ANONYMOUS;User:alice",
    "allow.everyone.if.no.acl.found=false",
])
RUNNING = '{"state":"RUNNING","trace":null,"worker_id":"gw-1","generation":1}'
USERS = ("gw-1", "gw-10", "ops")
PASSWORD = "fleet-secret"


def kafka_class(broker, cls, *args, timeout=120):
    """Runs one of Kafka's own command-line classes (what bin/kafka-*.sh
    run) from the broker's jars."""
    ver = (broker.dir / "kafka.version").read_text().strip()
    libs = Path(os.environ.get("SKIFF_CACHE") or Path.home() / ".cache" / "skiff")
    libs = libs / f"kafka-{ver}" / "libs"
    return subprocess.run(["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", f"{libs}/*",
                           cls, *args], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=timeout)


def acl_class(broker):
    ver = (broker.dir / "kafka.version").read_text().strip()
    return "kafka.admin.AclCommand" if ver.startswith("3.") else "org.apache.kafka.tools.AclCommand"


def kafka_acls(broker, args):
    """kafka-acls.sh ARGS (a list, the words after the script's name)."""
    r = kafka_class(broker, acl_class(broker), *args)
    assert r.returncode == 0, f"kafka-acls.sh {shlex.join(args)}:\n{r.stdout}{r.stderr}"
    return r.stdout


def printed_acls(out):
    """The kafka-acls.sh lines of provision's output, each as its words
    after the script's name."""
    lines = [shlex.split(line) for line in out.splitlines() if line.startswith("kafka-acls.sh")]
    assert lines, out
    return [w[1:] for w in lines]


@pytest.fixture(scope="module")
def acl_kafka(tmp_path_factory):
    if os.environ.get("SKIFF_BOOTSTRAP"):
        harness.skip_not_here("an external broker (SKIFF_BOOTSTRAP): the test needs one that "
                              "authorises, with its own SCRAM users")
    old = os.environ.get("KAFKA_EXTRA_PROPERTIES")
    os.environ["KAFKA_EXTRA_PROPERTIES"] = AUTHORIZER + ("\n" + old if old else "")
    broker = harness.Broker(tmp_path_factory.mktemp("kafka-acls"), security=True)
    try:
        broker.start()
    finally:
        if old is None:
            del os.environ["KAFKA_EXTRA_PROPERTIES"]
        else:
            os.environ["KAFKA_EXTRA_PROPERTIES"] = old
    try:
        for user in USERS:
            r = kafka_class(broker, "kafka.admin.ConfigCommand", "--bootstrap-server",
                            broker.bootstrap, "--alter", "--add-config",
                            f"SCRAM-SHA-512=[iterations=4096,password={PASSWORD}]",
                            "--entity-type", "users", "--entity-name", user)
            assert r.returncode == 0, r.stdout + r.stderr
        yield broker
    finally:
        broker.kill()


def client_props(broker, user, path):
    sec = broker.security()
    path.write_text(harness.props_text({
        "bootstrap.servers": sec["SASL_SSL"], "security.protocol": "SASL_SSL",
        "ssl.ca.location": sec["CA"], "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": user, "sasl.password": PASSWORD}))
    return path


def fleet(*args, timeout=120):
    r = subprocess.run([str(harness.skiff_bin()), "fleet", *args], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def probe(broker, tmp_path, user, *args, timeout=90):
    """The device's Kafka link as USER (fleetlinkprobe -d USER)."""
    worker = client_props(broker, user, tmp_path / f"{user}.properties")
    r = subprocess.run([str(harness.tool("fleetlinkprobe")), "-w", str(worker), "-d", user,
                        *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def provision(broker, *args):
    rc, out, err = fleet("provision", "--bootstrap", broker.bootstrap, *args)
    assert rc == 0, out + err
    return out


def remove_args(words):
    """A printed --add line's words as the --remove that takes it back."""
    return [("--remove" if w == "--add" else w) for w in words] + ["--force"]


@pytest.fixture(scope="module")
def fleet_acls(acl_kafka):
    """gw-1 (of group site-a), gw-10 and the operator ops provisioned by the
    admin, each with exactly the grants provision printed for them; a
    configuration record for each device. Returns the printed lines."""
    b = acl_kafka
    lines = {}
    for who, args in (("gw-1", ["--device", "gw-1", "--group", "site-a"]),
                      ("gw-10", ["--device", "gw-10"]),
                      ("ops", ["--operator", "User:ops"])):
        lines[who] = printed_acls(provision(b, *args))
        for words in lines[who]:
            kafka_acls(b, words)
    harness.produce(b.bootstrap, "skiff.config.gw-1", ['{"properties":{"name":"app"}}'],
                    key="connector-app")
    harness.produce(b.bootstrap, "skiff.config.gw-10", ['{"properties":{"name":"x"}}'],
                    key="connector-x")
    return lines


def probe_until(rc_wanted, broker, tmp_path, user, *args, tries=5):
    """probe() until it exits rc_wanted, at most tries times: an ACL just
    added or removed reaches the broker's authorizer through the metadata
    log, a moment after kafka-acls.sh returned. Its last result."""
    for _ in range(tries):
        r = probe(broker, tmp_path, user, *args)
        if r[0] == rc_wanted:
            break
    return r


def test_printed_device_lines(fleet_acls, acl_kafka):
    """What provision prints for a device: LITERAL grants only, on its own
    topics and its group's, and Describe on its own consumer group."""
    bs = ["--bootstrap-server", acl_kafka.bootstrap, "--add", "--allow-principal", "User:gw-1"]
    lit = ["--resource-pattern-type", "literal"]
    assert fleet_acls["gw-1"] == [
        bs + ["--operation", "Read", "--operation", "Describe", "--topic", "skiff.config.gw-1"]
        + lit,
        bs + ["--operation", "Write", "--operation", "Describe", "--operation", "Create",
              "--operation", "DescribeConfigs", "--topic", "skiff.status.gw-1"] + lit,
        bs + ["--operation", "Read", "--operation", "Describe", "--topic",
              "skiff.config.group.site-a"] + lit,
        bs + ["--operation", "Describe", "--group", "skiff-fleet-gw-1"] + lit,
    ]


def test_device_reads_its_configuration_and_writes_its_status(fleet_acls, acl_kafka, tmp_path):
    """gw-1 with its printed grants only: its link opens (its status topic
    checked: Create and DescribeConfigs on it), reads its configuration and
    its group's, and its idempotent producer writes its status (no
    IdempotentWrite on the cluster: Kafka >= 2.8 takes Write on a topic)."""
    rc, out, err = probe(acl_kafka, tmp_path, "gw-1", "-c", "skiff.config.gw-1",
                         "-c", "skiff.config.group.site-a", "-s", "skiff.status.gw-1",
                         "-k", "status-connector-app=" + RUNNING, "-n", "1")
    assert rc == 0, out + err
    lines = out.splitlines()
    assert 'record skiff.config.gw-1 1 connector-app {"properties":{"name":"app"}}' in lines
    assert "snapshot skiff.config.group.site-a 1" in lines
    assert "sent status-connector-app 0" in lines
    assert not [x for x in lines if x.startswith("error")], out
    got = [(x["key"], x["value"]) for x in harness.consume(acl_kafka.bootstrap,
                                                           "skiff.status.gw-1", n=1)]
    assert (b"status-connector-app", RUNNING.encode()) in got


def test_device_cannot_read_another_devices_configuration(fleet_acls, acl_kafka, tmp_path):
    """gw-1 asking for gw-10's configuration topic: TOPIC_AUTHORIZATION_FAILED,
    said as such (not "no such topic"). A PREFIXED grant skiff.config.gw-1
    would have let it read it: the trap the LITERAL lines avoid."""
    b = acl_kafka
    denied = (f"error fleet: configuration topic skiff.config.gw-10: Broker: Topic "
              f"authorization failed: its snapshot waits until it can be read")
    rc, out, err = probe(b, tmp_path, "gw-1", "-c", "skiff.config.gw-10", "-T", "5000")
    assert rc == 3 and out.splitlines() == [denied], out + err
    prefixed = ["--bootstrap-server", b.bootstrap, "--add", "--allow-principal", "User:gw-1",
                "--operation", "Read", "--operation", "Describe", "--topic",
                "skiff.config.gw-1", "--resource-pattern-type", "prefixed"]
    kafka_acls(b, prefixed)
    try:
        rc, out, err = probe_until(0, b, tmp_path, "gw-1", "-c", "skiff.config.gw-10",
                                   "-n", "1", "-T", "20000")
        assert rc == 0, out + err
        assert 'record skiff.config.gw-10 1 connector-x {"properties":{"name":"x"}}' in \
            out.splitlines()
    finally:
        kafka_acls(b, remove_args(prefixed))
    rc, out, err = probe_until(3, b, tmp_path, "gw-1", "-c", "skiff.config.gw-10", "-T", "5000")
    assert rc == 3 and out.splitlines() == [denied], out + err


def test_device_cannot_write_its_configuration_nor_touch_other_status(fleet_acls, acl_kafka,
                                                                      tmp_path):
    """gw-1 writing its own configuration topic (skiff fleet config, with
    gw-1's credentials) is refused; so are reading gw-10's status topic and
    writing (creating) it."""
    b = acl_kafka
    props = client_props(b, "gw-1", tmp_path / "gw-1.client.properties")
    before = harness.consume(b.bootstrap, "skiff.config.gw-1")
    rc, out, err = fleet("config", "app", "--device", "gw-1", "--set",
                         "connector.class=FileStreamSource", "--bootstrap",
                         b.security()["SASL_SSL"], "--command-config", str(props),
                         "--timeout", "10")
    assert rc == 75, out + err
    assert ("skiff.config.gw-1: connector-app not written: Broker: Topic authorization failed"
            in err), err
    assert harness.consume(b.bootstrap, "skiff.config.gw-1") == before
    rc, out, err = probe(b, tmp_path, "gw-1", "-c", "skiff.status.gw-10", "-T", "5000")
    assert rc == 3 and out.splitlines() == [
        "error fleet: configuration topic skiff.status.gw-10: Broker: Topic authorization "
        "failed: its snapshot waits until it can be read"], out + err
    rc, out, err = probe(b, tmp_path, "gw-1", "-c", "skiff.config.gw-1",
                         "-s", "skiff.status.gw-10", "-k", "status-connector-x=" + RUNNING)
    assert rc == 2, out + err
    assert "status.storage.topic skiff.status.gw-10: cannot create it: Authorization failed" \
        in err, err
    assert harness.consume(b.bootstrap, "skiff.status.gw-10") == []


def test_assign_without_group_describe(fleet_acls, acl_kafka, tmp_path):
    """librdkafka 2.0.2's assign() with a group.id sends FindCoordinator,
    which wants Describe on the group. Without the printed grant the device
    still reads its configuration (assign() fetches without a coordinator),
    but librdkafka reports GROUP_AUTHORIZATION_FAILED as a consumer error at
    every start: the grant keeps the device's log clean of a false alarm
    (docs/security.md records this)."""
    b = acl_kafka
    group = [w for w in fleet_acls["gw-1"] if "--group" in w]
    assert len(group) == 1
    kafka_acls(b, remove_args(group[0]))
    try:
        rc, out, err = probe(b, tmp_path, "gw-1", "-c", "skiff.config.gw-1", "-n", "1",
                             "-T", "20000")
        assert rc == 0, out + err
        lines = out.splitlines()
        assert 'record skiff.config.gw-1 1 connector-app {"properties":{"name":"app"}}' in lines
        assert "snapshot skiff.config.gw-1 2" in lines
        assert [x for x in lines if x.startswith("error")] == [
            "error fleet: configuration topic (none): FindCoordinator response error: "
            "Group authorization failed."], out
    finally:
        kafka_acls(b, group[0])


def test_operator_with_printed_grants(fleet_acls, acl_kafka, tmp_path):
    """ops, with the grants provision --operator printed (PREFIXED on the
    fixed part of the topic names): provisions a device, writes a device's
    and a group's configuration, reads the fleet's status."""
    b = acl_kafka
    sasl = b.security()["SASL_SSL"]
    pre = ["--bootstrap-server", b.bootstrap, "--add", "--allow-principal", "User:ops"]
    assert fleet_acls["ops"] == [
        pre + ["--operation", "Write", "--operation", "Describe", "--operation", "Create",
               "--operation", "DescribeConfigs", "--topic", "skiff.config.",
               "--resource-pattern-type", "prefixed"],
        pre + ["--operation", "Read", "--operation", "Describe", "--operation", "Create",
               "--operation", "DescribeConfigs", "--topic", "skiff.status.",
               "--resource-pattern-type", "prefixed"],
        pre + ["--operation", "Describe", "--group", "skiff-fleet-operator",
               "--resource-pattern-type", "literal"],
    ]
    # gw-1 says its connector runs, as in the test above (run alone too).
    rc, out, err = probe(b, tmp_path, "gw-1", "-c", "skiff.config.gw-1", "-s",
                         "skiff.status.gw-1", "-k", "status-connector-app=" + RUNNING)
    assert rc == 0, out + err
    next_offset = len(harness.consume(b.bootstrap, "skiff.config.gw-1"))
    props = client_props(b, "ops", tmp_path / "ops.properties")
    cc = ["--bootstrap", sasl, "--command-config", str(props), "--timeout", "20"]
    rc, out, err = fleet("provision", "--device", "gw-2", *cc)
    assert rc == 0, out + err
    assert "# created topic skiff.status.gw-2 (compacted)" in out
    rc, out, err = fleet("config", "app", "--device", "gw-1", "--set",
                         "connector.class=FileStreamSource", "--set", "file=/var/log/app.log",
                         *cc)
    assert rc == 0, out + err
    assert out.startswith(f"wrote connector-app to skiff.config.gw-1 at offset {next_offset}"), out
    rc, out, err = fleet("pause", "app", "--group", "site-a", *cc)
    assert rc == 0, out + err
    assert out.startswith("wrote target-state-app to skiff.config.group.site-a at offset"), out
    rc, out, err = fleet("status", "--json", *cc)
    assert rc == 0, out + err
    view = {d["device"]: d for d in json.loads(out)["devices"]}
    assert sorted(view) == ["gw-1", "gw-10", "gw-2"], out
    assert view["gw-1"]["connectors"] == [{"name": "app", "state": "RUNNING"}], out


def test_a_running_skiff_with_the_printed_grants(fleet_acls, acl_kafka, tmp_path):
    """The device as skiff itself (fleet.enabled, SASL_SSL as gw-1) with
    the printed grants and Write on its data topic (the grant the printed
    comment names): the operator's configuration, written with ops's
    grants, is applied, answered on gw-1's status topic, and its lines
    shipped."""
    b = acl_kafka
    sec = b.security()
    data = harness.unique_topic("fleet-acl-data")
    harness.create_topic(b.bootstrap, data)
    kafka_acls(b, ["--bootstrap-server", b.bootstrap, "--add", "--allow-principal",
                   "User:gw-1", "--operation", "Write", "--topic", data,
                   "--resource-pattern-type", "literal"])
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    src = allowed / "app.log"
    src.write_text("".join(f"line {i}\n" for i in range(20)))
    sk = harness.Skiff(tmp_path / "dev", {
        "bootstrap.servers": sec["SASL_SSL"], "security.protocol": "SASL_SSL",
        "ssl.ca.location": sec["CA"], "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "gw-1", "sasl.password": PASSWORD,
        "offset.storage.file.filename": str(tmp_path / "offsets"),
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "device.id": "gw-1", "fleet.enabled": "true", "fleet.groups": "site-a",
        "fleet.allow.files": f"{allowed}/*",
        "fleet.allow.connector.classes": "FileStreamSource",
        "fleet.allow.topics": data, "fleet.heartbeat.interval.ms": "1000",
    })
    sk.start()
    sk.wait_log(r"fleet: device gw-1")
    props = client_props(b, "ops", tmp_path / "ops.properties")
    rc, out, err = fleet("config", "tail", "--device", "gw-1", "--set",
                         "connector.class=FileStreamSource", "--set", f"file={src}",
                         "--set", f"topic={data}", "--bootstrap", sec["SASL_SSL"],
                         "--command-config", str(props), "--wait", "60")
    assert rc == 0 and "gw-1: applied" in out, (rc, out, err, sk.log_text())
    got = harness.consume(b.bootstrap, data, n=20)
    assert [r["value"].decode() for r in got] == [f"line {i}" for i in range(20)]
    assert "authorization failed" not in sk.log_text().lower(), sk.log_text()
    sk.stop()
