"""The fleet's tie to Kafka (issue 28, src/kafka/fleetlink.h) against the real
broker, driven by tests/tools/fleetlinkprobe.c in skiff's main loop: its
status and configuration topics created compacted, status records written
(a tombstone as a null value), a configuration topic read to its end and
then long-polled with the fleet's fetch.wait.max.ms (55 s): a new record
ends the wait at once. Not yet the worker's (issue 28's later steps)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

RUNNING = '{"state":"RUNNING","trace":null,"worker_id":"dev-1","generation":1}'


def probe_cmd(tmp_path, kafka, *args, props=None):
    worker = tmp_path / "worker.properties"
    worker.write_text(harness.props_text({"bootstrap.servers": kafka.bootstrap, **(props or {})}))
    return [str(harness.tool("fleetlinkprobe")), "-w", str(worker), "-d", "dev-1", *args]


def run_probe(tmp_path, kafka, *args, timeout=90, props=None):
    return subprocess.run(probe_cmd(tmp_path, kafka, *args, props=props),
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=timeout)


def test_topics_created_status_written_snapshot_then_long_poll(tmp_path, kafka):
    cfg = harness.unique_topic("skiff.config.dev-1")
    status = harness.unique_topic("skiff.status.dev-1")
    # First start: both topics made, an empty snapshot, two status records
    # (a state and a tombstone) acknowledged.
    r = run_probe(tmp_path, kafka, "-c", cfg, "-C", cfg, "-s", status, "-p", "3",
                  "-k", "status-connector-app=" + RUNNING, "-k", "status-task-old-0")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert lines.index(f"begin {cfg} 0") < lines.index(f"snapshot {cfg} 0")
    assert "sent status-connector-app 0" in lines
    assert "sent status-task-old-0 0" in lines
    got = {(x["key"], x["value"]) for x in harness.consume(kafka.bootstrap, status, n=2)}
    assert got == {(b"status-connector-app", RUNNING.encode()), (b"status-task-old-0", None)}

    # An operator writes two configurations; the device reads them as its
    # snapshot, then a third arrives during its 55 s long poll and is
    # handed out without waiting for the poll to end (-T 30000).
    harness.produce(kafka.bootstrap, cfg, ['{"properties":{"name":"app"}}'], key="connector-app")
    harness.produce(kafka.bootstrap, cfg, ['{"state":"PAUSED","state.v2":"PAUSED"}'],
                    key="target-state-app")
    p = subprocess.Popen(probe_cmd(tmp_path, kafka, "-c", cfg, "-s", status, "-n", "3",
                                   "-T", "30000"),
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in p.stdout:
            seen.append(line.rstrip("\n"))
            if line.startswith("snapshot "):
                break
        assert seen == [f"begin {cfg} 2",
                        f'record {cfg} 0 connector-app {{"properties":{{"name":"app"}}}}',
                        f'record {cfg} 1 target-state-app '
                        f'{{"state":"PAUSED","state.v2":"PAUSED"}}',
                        f"snapshot {cfg} 2"], seen
        time.sleep(1)  # into the long poll
        harness.produce(kafka.bootstrap, cfg, ['{"properties":{"name":"db"}}'],
                        key="connector-db")
        rest, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, rest + err
    assert rest.splitlines() == [f'record {cfg} 2 connector-db {{"properties":{{"name":"db"}}}}']


def test_status_topic_that_deletes_refused(tmp_path, kafka):
    """A status topic the broker created for a write (cleanup.policy=delete)
    is refused as Connect refuses it, naming the policy and the fix."""
    cfg = harness.unique_topic("skiff.config.dev-1")
    status = harness.unique_topic("skiff.status.dev-1")
    r = subprocess.run(["kcat", "-P", "-b", kafka.bootstrap, "-t", status],
                       input=b"x\n", capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = run_probe(tmp_path, kafka, "-c", cfg, "-s", status)
    assert r.returncode == 2, r.stdout + r.stderr
    assert (f"status.storage.topic {status} has cleanup.policy=delete: a status topic must be "
            f"compacted only") in r.stderr
    assert "--add-config cleanup.policy=compact" in r.stderr


def test_missing_config_topic_said(tmp_path, kafka):
    """A configuration topic that does not exist is said once, and its
    snapshot does not end: read as empty, it would remove every connector
    it gave."""
    cfg = harness.unique_topic("skiff.config.dev-1")
    r = run_probe(tmp_path, kafka, "-c", cfg, "-T", "3000")
    assert r.returncode == 3, r.stdout + r.stderr
    assert r.stdout.splitlines() == [
        f"error fleet: configuration topic {cfg}: no such topic: "
        f"its snapshot waits until it can be read"], r.stdout


@pytest.fixture(scope="module")
def secure_kafka(tmp_path_factory):
    if os.environ.get("SKIFF_BOOTSTRAP"):
        harness.skip_not_here("an external broker (SKIFF_BOOTSTRAP) has not the TLS/SASL "
                              "listeners of kafka.sh --security")
    broker = harness.Broker(tmp_path_factory.mktemp("kafka-fleetlink"), security=True)
    broker.start()
    yield broker
    broker.stop()


def test_over_sasl_ssl(tmp_path, secure_kafka):
    """Both clients take the worker's connection settings (kconf_worker, as
    the offsets topic's): SASL_SSL with SCRAM-SHA-512, topics created, a
    status record acknowledged, the snapshot read."""
    sec = secure_kafka.security()

    class Secure:
        bootstrap = sec["SASL_SSL"]

    props = {"security.protocol": "SASL_SSL", "ssl.ca.location": sec["CA"],
             "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": sec["SCRAM_USER"],
             "sasl.password": sec["SCRAM_PASSWORD"]}
    cfg = harness.unique_topic("skiff.config.dev-1")
    status = harness.unique_topic("skiff.status.dev-1")
    r = run_probe(tmp_path, Secure, "-c", cfg, "-C", cfg, "-s", status,
                  "-k", "status-connector-app=" + RUNNING, props=props)
    assert r.returncode == 0, r.stdout + r.stderr
    # The status record's report and the snapshot come in either order.
    assert sorted(r.stdout.splitlines()) == [f"begin {cfg} 0", "sent status-connector-app 0",
                                             f"snapshot {cfg} 0"], r.stdout
    # Without the SASL settings the same cluster is not reached: they were used.
    r = run_probe(tmp_path, Secure, "-c", cfg, "-T", "3000", timeout=60)
    assert r.returncode in (2, 3), r.stdout + r.stderr
    assert "snapshot" not in r.stdout
