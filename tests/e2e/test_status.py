"""`skiff status` (issue 11): the running skiff's summary through skiff.sock
in the state directory (0600); exit 0 healthy, 1 unhealthy (the broker
stopped acknowledging past health.ack.timeout.ms), 2 when no skiff runs."""

import stat
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402


def status(sk):
    r = subprocess.run([str(harness.skiff_bin()), "status", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True,
                       timeout=30)
    return r.returncode, r.stdout + r.stderr


def wait_status(sk, code, timeout=60):
    deadline = time.monotonic() + timeout
    while True:
        rc, out = status(sk)
        if rc == code or time.monotonic() > deadline:
            assert rc == code, out
            return out
        time.sleep(0.5)


def test_status_healthy_unhealthy_unreachable(tmp_path, kafka_private, topic):
    kafka_private.start()
    harness.create_topic(kafka_private.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(100)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka_private.bootstrap, state,
                                                 health__ack__timeout__ms=2000),
                       [fl.file_connector("s", src.path, topic)])
    rc, out = status(sk)
    assert rc == 2 and "skiff.sock" in out, out  # not running yet
    sk.start()
    fl.read_topic(kafka_private.bootstrap, topic, 100)
    out = wait_status(sk, 0)
    assert "healthy" in out.splitlines()[0]
    assert "connector s: RUNNING; records produced 100, acked 100, failed 0" in out
    assert "offsets: last flush" in out and "kafka: 0 records in flight" in out
    assert stat.S_IMODE((state / "skiff.sock").stat().st_mode) == 0o600
    kafka_private.pause()
    try:
        src.append(10)
        out = wait_status(sk, 1)
        assert "UNHEALTHY" in out and "acknowledgement" in out, out
    finally:
        kafka_private.resume()
    fl.read_topic(kafka_private.bootstrap, topic, 110)
    wait_status(sk, 0)
    assert sk.stop() == 0
    assert not (state / "skiff.sock").exists()
    rc, out = status(sk)
    assert rc == 2, out


def test_status_help_and_a_bad_option():
    # `skiff status --help` read --help as a properties file: "--help: No such
    # file or directory", exit 2 (hostile finding, issue 21).
    skiff = str(harness.skiff_bin())
    r = subprocess.run([skiff, "status", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: skiff status [WORKER.properties"), r.stdout
    assert "Exit codes: 0 healthy; 1 unhealthy; 2 cannot reach skiff" in r.stdout
    assert r.stderr == ""
    r = subprocess.run([skiff, "status", "--bogus"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2
    assert "skiff status: unknown option --bogus" in r.stderr, r.stderr
    assert "usage: skiff status" in r.stderr
