"""logrotate itself rotates a log every second while a writer appends 2,000
lines a second and skiff is killed with SIGKILL at random moments.

Default profile: 12 s per mode, two kills. SKIFF_PROFILE=long: 60 s per
mode, a kill every 4-10 s.

Bounds checked:
  create        no line lost; every duplicate lies in a window [D, M] of
                some kill, where D is the first line after the offset that
                was durable at the kill and M the last line Kafka held then.
  copytruncate  the same, except lines logrotate itself destroyed: a line
                that is in no rotated copy and not in the final file was
                written between the copy and the truncation (the window
                copytruncate makes unavoidable). Every line that survived on
                disk must be in the topic.
"""

import os
import random
import sys
import time
from pathlib import Path

import pytest

from harness import Skiff, consume
import offsetfile
from rotator import Rotator

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import Writer, check_lines, number  # noqa: E402

LONG = os.environ.get("SKIFF_PROFILE") == "long"
SECONDS = 60 if LONG else 12
RATE = 2000


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def durable_line(offsets_path, key, logdir):
    """The number of the first line after the durable offset, found in the
    file whose inode or fingerprint the offset names."""
    if not offsets_path.exists():
        return 0
    offs = offsetfile.load(offsets_path)
    if key not in offs:
        return 0
    v = offs[key]
    pos, fplen = v["position"], v.get("fplen", 0)
    fp = v.get("fp", 0) & 0xFFFFFFFFFFFFFFFF
    candidates = sorted(logdir.iterdir(), key=lambda p: (p.stat().st_ino != v["ino"], p.name))
    for p in candidates:
        data = p.read_bytes()
        if len(data) < pos or fnv1a64(data[:fplen]) != fp:
            continue
        if pos < len(data):
            return number(data[pos:pos + 8])
        lines = data.rstrip(b"\n").split(b"\n")
        return number(lines[-1]) + 1 if lines and lines[-1] else 0
    raise AssertionError(f"no file in {logdir} matches the durable offset {v}")


def run(tmp_path, kafka, topic, mode):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    log = logdir / "app.log"
    conf = tmp_path / "logrotate.conf"
    conf.write_text(f"{log} {{\n  rotate 100000\n  {mode}\n  missingok\n  nocompress\n}}\n")
    log.write_text("")
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.interval.ms": "300",
              "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    c = {"name": "rot", "connector.class": "FileStreamSource", "topic": topic,
         "file": str(log), "rotate.wait.ms": "1000"}
    key = offsetfile.key("rot", {"filename": str(log)})
    sk = Skiff(tmp_path, worker, [c]).start()
    writer = Writer(log, rate=RATE, reopen=(mode == "create"))
    rot = Rotator(conf, tmp_path / "logrotate.state")
    writer.start()
    rot.start()
    rng = random.Random(int(os.environ.get("SKIFF_SEED", "0")) or None)
    windows = []
    end = time.monotonic() + SECONDS
    next_kill = time.monotonic() + (rng.uniform(4, 10) if LONG else SECONDS / 4)
    while time.monotonic() < end:
        time.sleep(0.2)
        if time.monotonic() < next_kill or time.monotonic() > end - 2:
            continue
        sk.kill9()
        shipped = [number(v["value"]) for v in consume(kafka.bootstrap, topic)]
        windows.append((durable_line(tmp_path / "offsets", key, logdir),
                        max(shipped) if shipped else -1))
        time.sleep(rng.uniform(0.3, 2.5))  # rotations go on while skiff is down
        sk.start()
        next_kill = time.monotonic() + (rng.uniform(4, 10) if LONG else SECONDS / 4)
    written = writer.stop()
    rot.stop()
    assert not rot.errors, rot.errors[:3]
    return sk, logdir, written, windows, rot.runs


def lines_on_disk(logdir):
    found = set()
    for p in logdir.iterdir():
        for l in p.read_bytes().split(b"\n"):
            if len(l) >= 8 and l[:8].isdigit():
                found.add(int(l[:8]))
    return found


def finish(kafka, topic, sk, want):
    recs = consume(kafka.bootstrap, topic, n=want, timeout=120, allow_timeout=True)
    time.sleep(1.5)
    assert sk.stop() == 0
    return [r["value"] for r in consume(kafka.bootstrap, topic)]


def allowed(windows):
    ok = set()
    for d, m in windows:
        ok.update(range(d, m + 1))
    return ok


@pytest.mark.skiff_timeout(SECONDS * 2 + 240)
def test_logrotate_create_with_kills(tmp_path, kafka, topic):
    sk, logdir, written, windows, runs = run(tmp_path, kafka, topic, "create")
    vals = finish(kafka, topic, sk, written)
    missing, dups, bad_dups, unexpected = check_lines(vals, written, allowed(windows))
    print(f"create: {written} lines, {runs} rotations, kills {windows}, "
          f"{len(dups)} duplicates (allowed windows {sum(m - d + 1 for d, m in windows)})")
    assert not unexpected
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not bad_dups, f"{len(bad_dups)} duplicates outside the kill windows: {bad_dups[:10]}"
    assert runs >= SECONDS - 3


@pytest.mark.skiff_timeout(SECONDS * 2 + 240)
def test_logrotate_copytruncate_with_kills(tmp_path, kafka, topic):
    sk, logdir, written, windows, runs = run(tmp_path, kafka, topic, "copytruncate")
    survived = lines_on_disk(logdir)
    lost_by_logrotate = set(range(written)) - survived
    vals = finish(kafka, topic, sk, len(survived))
    missing, dups, bad_dups, unexpected = check_lines(vals, written, allowed(windows),
                                                      lost_ok=lost_by_logrotate)
    print(f"copytruncate: {written} lines, {runs} rotations, {len(lost_by_logrotate)} lost "
          f"by logrotate between copy and truncate, kills {windows}, {len(dups)} duplicates")
    assert not unexpected
    assert not missing, f"{len(missing)} lines that survived on disk are not in Kafka: {missing[:10]}"
    assert not bad_dups, f"{len(bad_dups)} duplicates outside the kill windows: {bad_dups[:10]}"
