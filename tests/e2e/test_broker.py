"""The test infrastructure itself: the broker from kafka.sh, the consume tool,
and the Skiff process wrapper (driven here by a stand-in script)."""

import subprocess
import textwrap

import pytest

import harness


def kcat_produce(bootstrap, topic, args, data):
    subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-p", "0", *args],
                   input=data, check=True, timeout=60)


def test_records_round_trip_exactly(kafka, topic):
    binary = b"\x00bin\xff\x00ary\nwith newline\r\n\x00"
    # Keyed, with headers (one of them without a value), from kcat's line mode.
    kcat_produce(kafka.bootstrap, topic, ["-K", ":", "-H", "h1=v1", "-H", "h2"], b"k1:hello\n")
    kcat_produce(kafka.bootstrap, topic, [], b"plain\n")
    # Any bytes: kcat sends a file given as an argument as one record.
    harness.produce(kafka.bootstrap, topic, [binary], partition=0)

    recs = harness.consume(kafka.bootstrap, topic)

    assert [(r["partition"], r["offset"]) for r in recs] == [(0, 0), (0, 1), (0, 2)]
    assert [(r["key"], r["value"], r["headers"]) for r in recs] == [
        (b"k1", b"hello", [("h1", b"v1"), ("h2", None)]),
        (None, b"plain", []),
        (None, binary, []),
    ]
    assert all(r["timestamp"] > 1_500_000_000_000 for r in recs)
    # -n: waits for at least n, returns everything there is.
    assert harness.consume(kafka.bootstrap, topic, n=1, timeout=20) == recs


def test_consume_missing_topic_and_timeout(kafka):
    missing = harness.unique_topic("missing")
    assert harness.consume(kafka.bootstrap, missing) == []
    with pytest.raises(harness.ConsumeTimeout):
        harness.consume(kafka.bootstrap, missing, n=1, timeout=2)
    assert harness.consume(kafka.bootstrap, missing, n=1, timeout=1, allow_timeout=True) == []


def test_create_topic_with_partitions(kafka, topic):
    harness.create_topic(kafka.bootstrap, topic, partitions=3)
    harness.create_topic(kafka.bootstrap, topic, partitions=3)  # exists: fine
    harness.produce(kafka.bootstrap, topic, [b"p2"], partition=2)
    harness.produce(kafka.bootstrap, topic, [b"p0"], partition=0)
    recs = harness.consume(kafka.bootstrap, topic)
    assert sorted((r["partition"], r["value"]) for r in recs) == [(0, b"p0"), (2, b"p2")]


def test_private_broker_keeps_address_and_data(kafka_private, topic):
    bootstrap = kafka_private.bootstrap
    assert not kafka_private.running()
    # A reader started while the broker is down waits for it.
    waiting = subprocess.Popen([str(harness.tool("consume")), "-b", bootstrap, "-t", topic,
                                "-n", "1", "-T", "60000"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        assert kafka_private.start() == bootstrap
        harness.produce(bootstrap, topic, [b"kept"])
        out, _ = waiting.communicate(timeout=60)
    finally:
        waiting.kill()
        waiting.wait()
    assert waiting.returncode == 0 and b'"value":"a2VwdA=="' in out

    kafka_private.stop()
    assert not kafka_private.running()
    assert kafka_private.start() == bootstrap
    assert [r["value"] for r in harness.consume(bootstrap, topic)] == [b"kept"]

    kafka_private.pause()
    with pytest.raises(harness.HarnessError):
        harness.consume(bootstrap, topic, timeout=2)
    kafka_private.resume()
    assert [r["value"] for r in harness.consume(bootstrap, topic)] == [b"kept"]

    kafka_private.kill()
    assert kafka_private.start() == bootstrap
    assert [r["value"] for r in harness.consume(bootstrap, topic)] == [b"kept"]


def test_skiff_wrapper_lifecycle(tmp_path, monkeypatch):
    fake = tmp_path / "fake-skiff"
    fake.write_text(textwrap.dedent("""\
        #!/bin/sh
        echo "skiff info: started with $*" >&2
        trap 'echo "skiff info: stopping" >&2; exit 0' TERM
        while :; do sleep 0.05; done
        """))
    fake.chmod(0o755)
    monkeypatch.setenv("SKIFF_BIN", str(fake))

    s = harness.Skiff(tmp_path, {"bootstrap.servers": "127.0.0.1:1", "a key": "x=y\\z"},
                      [{"name": "c1"}, "name=c2\n"])
    assert s.worker_file.read_text() == "bootstrap.servers=127.0.0.1:1\na\\ key=x=y\\\\z\n"
    assert s.connector_files[1].read_text() == "name=c2\n"

    s.start(["--flag"])
    m = s.wait_log(r"started with (\S+) (\S+)worker\.properties", timeout=10)
    assert m.group(1) == "--flag"
    mark = s.log_mark()
    assert s.stop() == 0
    s.wait_log(r"skiff info: stopping", since=mark, timeout=1)

    s.start()
    s.wait_log(r"started with \S+worker", timeout=10)
    assert s.kill9() == -9 and s.exitcode == -9
    with pytest.raises(harness.HarnessError, match="exited"):
        s.wait_log(r"never printed", timeout=5)

    monkeypatch.setenv("SKIFF_BIN", str(tmp_path / "missing"))
    with pytest.raises(harness.HarnessError, match="skiff binary not found"):
        harness.Skiff(tmp_path, {}, [], name="other").start()
