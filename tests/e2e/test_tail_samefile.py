"""The same file named twice (issue 8, item 16, file part): a symlink and
its target, or overlapping globs, in one connector are read once; the same
file in two connectors is shipped by both, as Connect would, but not
without a word.

Bounds checked: exact (every line once) within one connector, with one
warning naming both paths and paths_duplicate=1 however many rescans; with
two connectors, every line once per connector and a warning naming the
file and both connectors."""

import os
import sys
import time
from pathlib import Path

from harness import Skiff, consume

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import check_lines, line  # noqa: E402


def worker(tmp_path, kafka):
    return {"bootstrap.servers": kafka.bootstrap,
            "offset.storage.file.filename": str(tmp_path / "offsets"),
            "offset.flush.interval.ms": "200",
            "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}


def conn(topic, name="same", **keys):
    c = {"name": name, "connector.class": "FileStreamSource", "topic": topic,
         "rescan.interval.ms": "100"}
    c.update({k.replace("_", "."): v for k, v in keys.items()})
    return c


def append(path, numbers):
    with open(path, "a") as f:
        f.write("".join(line(i) + "\n" for i in numbers))


def counter(log, name):
    import re
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", log)]
    return max(vals) if vals else 0


def run_once(tmp_path, kafka, topic, files):
    """Writes 200 lines to logs/app.log in two halves, with rescans between;
    returns (values, log)."""
    log = tmp_path / "logs" / "app.log"
    append(log, range(100))
    sk = Skiff(tmp_path, worker(tmp_path, kafka), [conn(topic, files=files)]).start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(1)  # ten rescans
    append(log, range(100, 200))
    consume(kafka.bootstrap, topic, n=200, timeout=60)
    time.sleep(1)  # anything more arrives too
    assert sk.stop() == 0
    return [r["value"] for r in consume(kafka.bootstrap, topic)], sk.log_text()


def assert_once(vals, log, n, alias):
    missing, dups, _, unexpected = check_lines(vals, n)
    assert not missing and not unexpected, (missing[:5], unexpected[:5])
    assert not dups, f"{len(dups)} lines shipped twice"
    assert log.count("is the same file as") == 1, log
    assert f"{alias} is the same file as" in log
    assert counter(log, "paths_duplicate") == 1


def test_symlink_and_target_in_one_connector(tmp_path, kafka, topic):
    """files=logs/app.log,logs/current.log with current.log -> app.log."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "current.log").symlink_to("app.log")
    files = f"{tmp_path}/logs/app.log,{tmp_path}/logs/current.log"
    vals, log = run_once(tmp_path, kafka, topic, files)
    assert_once(vals, log, 200, f"{tmp_path}/logs/current.log")


def test_overlapping_globs_in_one_connector(tmp_path, kafka, topic):
    """files=logs/*.log,var/*.log with var -> logs (a directory reached by
    two routes): each file once."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "var").symlink_to("logs")
    files = f"{tmp_path}/logs/*.log,{tmp_path}/var/*.log"
    vals, log = run_once(tmp_path, kafka, topic, files)
    assert_once(vals, log, 200, f"{tmp_path}/var/app.log")


def test_same_file_in_two_connectors(tmp_path, kafka, topic):
    """Two connectors tail one file (one through a symlink) into one topic:
    both ship it, and skiff says so at start, naming the file and both
    connectors; and again for a file both find later (new.log, matched by
    both globs)."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "current.log").symlink_to("app.log")
    append(d / "app.log", range(100))
    sk = Skiff(tmp_path, worker(tmp_path, kafka),
               [conn(topic, name="first", files=f"{d}/app.log,{d}/new.*"),
                conn(topic, name="second", files=f"{d}/current.*,{d}/*.log")]).start()
    consume(kafka.bootstrap, topic, n=200, timeout=60)
    append(d / "new.log", range(100, 150))
    vals = [r["value"] for r in consume(kafka.bootstrap, topic, n=300, timeout=60)]
    time.sleep(0.5)
    assert sk.stop() == 0
    missing, dups, _, _ = check_lines(vals, 150)
    assert not missing and len(dups) == 150
    log = sk.log_text()
    assert (f"connector second: {d}/current.log is also tailed by connector first "
            f"(as {d}/app.log)") in log, log
    assert (f"connector second: {d}/new.log is also tailed by connector first (as {d}/new.log)"
            in log or
            f"connector first: {d}/new.log is also tailed by connector second (as {d}/new.log)"
            in log), log
    assert log.count("is also tailed") == 2, log
