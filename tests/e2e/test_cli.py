"""The command line a supervisor and a person see: --check, --help-config,
--version, exit codes, and clear errors naming file and line."""

import json
import signal
import subprocess
import time

import pytest

import harness
from harness import Skiff, consume

EX_CONFIG, EX_TEMPFAIL = 78, 75


def run(args, cwd=None):
    r = subprocess.run([str(harness.skiff_bin()), *map(str, args)], cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def good_worker(tmp_path, extra=""):
    f = tmp_path / "w.properties"
    f.write_text(f"bootstrap.servers=127.0.0.1:1\n"
                 f"offset.storage.file.filename={tmp_path}/offsets\n"
                 f"producer.sasl.password=s3cr3t\n"
                 f"connectors.a.connector.class=FileStreamSource\n"
                 f"connectors.a.file={tmp_path}/a.log\n"
                 f"connectors.a.topic=a\n" + extra)
    return f


def test_version_and_help_config():
    rc, out, _ = run(["--version"])
    assert rc == 0 and out.startswith("skiff ") and "librdkafka" in out
    rc, out, _ = run(["--help-config"])
    assert rc == 0
    for key in ("bootstrap.servers", "offset.storage.file.filename", "offset.flush.interval.ms",
                "offset.flush.timeout.ms", "key.converter", "value.converter.schemas.enable",
                "file", "topic", "max.line.bytes", "batch.size"):
        assert key in out, key
    assert 'offset.flush.interval.ms  (int, default "60000"' in out
    assert 'offset.flush.timeout.ms  (int, default "5000"' in out


def test_check_prints_masked_settings(tmp_path):
    rc, out, err = run(["--check", good_worker(tmp_path)])
    assert rc == 0, err
    assert "configuration ok" in out
    assert "s3cr3t" not in out + err
    assert "producer.sasl.password=[hidden]" in out
    assert not (tmp_path / "offsets").exists(), "--check must not write the offset file"


@pytest.mark.parametrize("extra,message", [
    ("offset.flush.interval.ms=12abc\n", r"w\.properties:7: offset\.flush\.interval\.ms: '12abc' is not an integer"),
    ("bogus.key=1\n", r"w\.properties:7: unknown property 'bogus\.key'"),
    ("connectors.a.max.line.bytes=1\n", r"w\.properties:7: max\.line\.bytes: 1 is out of range"),
    ("producer.no.such.librdkafka.property=1\n", r"w\.properties:7: no\.such\.librdkafka\.property: .*"),
    ("key=\\u12zz\n", r"w\.properties:7: .*\\u"),
])
def test_bad_config_exits_78_naming_file_and_line(tmp_path, extra, message):
    import re
    for args in (["--check"], []):
        rc, _, err = run([*args, good_worker(tmp_path, extra)])
        assert rc == EX_CONFIG, err
        assert re.search(message, err), err
        assert "exit 78" in err


def test_missing_config_file(tmp_path):
    rc, _, err = run([tmp_path / "nope.properties"])
    assert rc == EX_CONFIG
    assert "nope.properties" in err and "No such file" in err


def test_corrupt_offsets_refuse_to_start(tmp_path):
    w = good_worker(tmp_path)
    (tmp_path / "offsets").write_bytes(b'{"format":"skiff-offsets","version":1,"gen')
    (tmp_path / "offsets.prev").write_bytes(b"\x00" * 64)
    rc, _, err = run([w])
    assert rc == EX_CONFIG, err
    assert str(tmp_path / "offsets") in err and "offsets.prev" in err
    assert "delete" in err.lower() or "remove" in err.lower()
    # Nothing was overwritten by the refusal.
    assert (tmp_path / "offsets.prev").read_bytes() == b"\x00" * 64


def test_connect_java_offsets_file_is_named(tmp_path):
    w = good_worker(tmp_path)
    (tmp_path / "offsets").write_bytes(b"\xac\xed\x00\x05sr\x00\x11java.util.HashMap")
    rc, _, err = run([w])
    assert rc == EX_CONFIG
    assert "Kafka Connect" in err


def test_missing_source_file_is_waited_for(tmp_path, kafka, topic):
    src = tmp_path / "later.log"
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "value.converter": "StringConverter"}
    conn = {"name": "later", "connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sk = Skiff(tmp_path, worker, [conn]).start()
    sk.wait_log(r"later\.log does not exist \(yet\): waiting for it")
    src.write_text("one\ntwo\n")
    recs = consume(kafka.bootstrap, topic, n=2, timeout=60)
    assert [r["value"] for r in recs] == [b"one", b"two"]
    assert sk.stop() == 0


def test_sigterm_with_broker_down_exits_within_timeout(tmp_path, kafka_late, topic):
    src = tmp_path / "down.log"
    src.write_text("".join(f"l{i}\n" for i in range(100)))
    worker = {"bootstrap.servers": kafka_late.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.timeout.ms": "2000",
              "value.converter": "StringConverter"}
    conn = {"name": "down", "connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sk = Skiff(tmp_path, worker, [conn]).start()
    sk.wait_log(r"reading .*down\.log from byte 0")
    time.sleep(1)
    t0 = time.monotonic()
    assert sk.stop(timeout=30) == 0
    took = time.monotonic() - t0
    assert took < 20, took
    assert "100 records still unacknowledged" in sk.log_text()
    # Nothing was committed, so the next start (broker up) ships everything.
    kafka_late.start()
    sk.start()
    recs = consume(kafka_late.bootstrap, topic, n=100, timeout=60)
    assert sk.stop() == 0
    assert [r["value"].decode() for r in consume(kafka_late.bootstrap, topic)] == [f"l{i}" for i in range(100)]


def test_second_skiff_on_same_offset_file_refuses(tmp_path, kafka, topic):
    src = tmp_path / "one.log"
    src.write_text("x\n")
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "value.converter": "StringConverter"}
    conn = {"name": "one", "connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    first = Skiff(tmp_path, worker, [conn], name="first").start()
    first.wait_log(r"reading .*one\.log")
    second = Skiff(tmp_path, worker, [conn], name="second").start()
    # It waits for the first to go (issue 25: exiting 75 was a restart loop
    # under systemd), and names the holder (c3272ee), so a person can see
    # which process it is.
    second.wait_log(r"waiting for it to stop", timeout=30)
    assert f"another skiff (pid {first.pid}) is running with this offset file" in \
        second.log_text()
    assert second.stop() == 0
    # --check reads the store without the lock.
    rc, out, err = run(["--check", first.worker_file, *first.connector_files])
    assert rc == 0, err
    assert first.stop() == 0
