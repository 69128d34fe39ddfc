"""A Connect distributed worker file runs skiff as it did before the fleet (issue 28).

Connect's config.storage.topic and status.storage.topic name the fleet's topics
only with fleet.enabled=true. A worker file copied from a Connect cluster names
that cluster's topics: skiff must keep shipping its own connectors, say the
keys are ignored, and never read the Connect cluster's configurations (a
connector record there is not run) nor create or write its status topic
(Connect's status-connector-* records would be overwritten). A SIGHUP that
changes those keys reloads as before, without asking for a restart."""

import json
import re
import signal
import subprocess
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

LINES = 200


def topics(bootstrap):
    """The names of the cluster's topics, from its metadata (no topic named:
    nothing is auto-created by asking)."""
    r = subprocess.run(["kcat", "-L", "-J", "-b", bootstrap, "-m", "20"], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return {t["topic"] for t in json.loads(r.stdout)["topics"]}


def distributed_worker(bootstrap, tag, config_topic, status_topic):
    """Kafka's config/connect-distributed.properties as shipped, on this broker
    (replication 1), StringConverter values to read the lines back."""
    return {
        "bootstrap.servers": bootstrap,
        "group.id": f"connect-cluster-{tag}",
        "key.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "key.converter.schemas.enable": "true",
        "value.converter.schemas.enable": "true",
        "offset.storage.topic": f"connect-offsets-{tag}",
        "offset.storage.replication.factor": "1",
        "config.storage.topic": config_topic,
        "config.storage.replication.factor": "1",
        "status.storage.topic": status_topic,
        "status.storage.replication.factor": "1",
        "status.storage.partitions": "5",
        "offset.flush.interval.ms": "500",
    }


def test_connect_distributed_worker_file_runs_as_before(tmp_path, kafka):
    tag = uuid.uuid4().hex[:8]
    config_topic, status_topic = f"connect-configs-{tag}", f"connect-status-{tag}"
    data = harness.unique_topic("compat")
    harness.create_topic(kafka.bootstrap, data, partitions=1)
    # The Connect cluster's configuration: a connector skiff must not run.
    evil = tmp_path / "evil.log"
    evil.write_text("EVIL\n" * 10)
    harness.create_topic(kafka.bootstrap, config_topic, partitions=1)
    harness.produce(kafka.bootstrap, config_topic, [json.dumps({"properties": {
        "connector.class": "FileStreamSource", "tasks.max": "1", "file": str(evil),
        "topic": data, "name": "evil"}}, separators=(",", ":"))], key="connector-evil")
    machine_id = tmp_path / "machine-id"
    machine_id.write_text("0123456789abcdef0123456789abcdef\n")
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(LINES // 2)
    sk = harness.Skiff(tmp_path, distributed_worker(kafka.bootstrap, tag, config_topic,
                                                    status_topic),
                       [fl.file_connector("app", src.path, data)],
                       env={"SKIFF_MACHINE_ID_FILE": str(machine_id)})
    sk.start()
    for key in ("config.storage.topic", "status.storage.topic",
                "config.storage.replication.factor", "status.storage.replication.factor",
                "status.storage.partitions", "group.id"):
        sk.wait_log(rf"notice: .*worker\.properties:\d+: {key.replace('.', '[.]')} is a "
                    r"Kafka Connect setting with no meaning for skiff; ignored")
    src.append(LINES // 2)
    records = harness.consume(kafka.bootstrap, data, n=LINES, timeout=60)
    fl.check_delivery(fl.seqs_of(records), LINES, max_dups=0)
    assert len(records) == LINES
    assert not any(r["value"] and b"EVIL" in r["value"] for r in records)

    # A SIGHUP with those keys changed: reloaded, no restart asked for.
    worker = distributed_worker(kafka.bootstrap, tag, config_topic + "-moved",
                                status_topic + "-moved")
    sk.worker_file.write_text(harness.props_text(worker))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload done", timeout=30, since=mark)
    assert "restart skiff" not in fl.log_since(sk, mark)
    src.append(10)
    records = harness.consume(kafka.bootstrap, data, n=LINES + 10, timeout=60)
    fl.check_delivery(fl.seqs_of(records), LINES + 10, max_dups=0)
    assert sk.running()
    sk.stop()
    assert sk.exitcode == 0, sk.log_text()

    # Nothing written to, or made in, the Connect cluster's internal topics.
    names = topics(kafka.bootstrap)
    assert status_topic not in names and status_topic + "-moved" not in names
    assert config_topic + "-moved" not in names
    assert len(harness.consume(kafka.bootstrap, config_topic)) == 1


def test_fleet_keys_refused_at_load(tmp_path):
    """With fleet.enabled, what would fail only at provisioning or in the field
    stops the start: exit 78 (a person must act; systemd does not restart it),
    the message naming file, line and key. No broker needed: load refuses it."""
    cases = [
        ("status.storage.topic=skiff.status\n",
         r"w\.properties:7: status\.storage\.topic=skiff\.status must hold \{device\}"),
        ("device.id=gw_1\n",
         r"w\.properties:7: device\.id=gw_1: with fleet\.enabled the device's name names a "
         r"topic, so it may hold only letters, digits and '-'"),
        ("fleet.fetch.wait.max.ms=60000\n",
         r"w\.properties:7: fleet\.fetch\.wait\.max\.ms=60000 must be under "
         r"socket\.timeout\.ms - 1000 \(59000\)"),
    ]
    for extra, want in cases:
        f = tmp_path / "w.properties"
        f.write_text("bootstrap.servers=127.0.0.1:1\n"
                     f"offset.storage.file.filename={tmp_path}/offsets\n"
                     "connectors.a.connector.class=FileStreamSource\n"
                     f"connectors.a.file={tmp_path}/a.log\n"
                     "connectors.a.topic=t\n"
                     "fleet.enabled=true\n" + extra)
        r = subprocess.run([str(harness.skiff_bin()), str(f)], stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=60)
        err = r.stderr.decode(errors="replace")
        assert r.returncode == 78, err
        assert re.search(want, err), err
        # Without fleet.enabled the same file runs as before (--check: no broker).
        f.write_text(f.read_text().replace("fleet.enabled=true\n", ""))
        r = subprocess.run([str(harness.skiff_bin()), "--check", str(f)],
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr.decode(errors="replace")
