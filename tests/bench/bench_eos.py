#!/usr/bin/env python3
"""Benchmark (not a test): CPU of exactly-once (docs/exactly-once.md) against
at-least-once, on one file of N numbered lines of ~150 bytes shipped by skiff
to one local Kafka 3.9.1 broker, in modes

  alo-file       at least once, offsets in the file (skiff's default)
  alo-topic      at least once, offsets in the file and offset.storage.topic:
                 the reference of the ratios (the store exactly-once needs)
  eos-poll       exactly.once.source.support=enabled, transaction.boundary=poll
                 (the default: one transaction per poll of the source)
  eos-interval   ... transaction.boundary=interval, 1000 ms

interleaved (the order rotates each repetition) across --reps repetitions, a
fresh topic and offsets topic per run, offset.flush.interval.ms=1000. A run ends when the offsets file holds
the file's end (with exactly-once it is written after the transaction that
carried the last line committed), then skiff gets SIGTERM; CPU (utime+stime)
includes that shutdown. Each run's topic is read back read_committed (kcat's
default) and must hold each line number exactly once. Prints medians, ranges
and the ratios of the medians to alo-topic's.

  python3 tests/bench/bench_eos.py [--lines 300000] [--reps 3] [--skiff PATH]

Use a release build (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release).
"""

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from benchlib import REPO, check_delivered, local_broker, run_tool, summarize  # noqa: E402

import offsetfile  # noqa: E402  (tests/e2e, on the path through benchlib)

NUMBER_RE = rb"(\d{9}) 2026-11-30T02"
MODES = ["alo-file", "alo-topic", "eos-poll", "eos-interval"]


def write_input(src, n):
    with open(src, "w") as f:
        for i in range(n):
            f.write(f"{i:09d} 2026-11-30T02:00:00.000Z gateway-7 sensor=temp value={i % 997}.5 "
                    f"unit=C status=ok site=edge-07 note=the-quick-brown-fox-jumps-over-the-lazy-dog\n")


def worker_text(mode, d, src, topic, bootstrap):
    lines = [f"bootstrap.servers={bootstrap}",
             f"offset.storage.file.filename={d}/offsets",
             "offset.flush.interval.ms=1000",
             "value.converter=org.apache.kafka.connect.storage.StringConverter",
             "connectors.bench.connector.class=FileStreamSource",
             f"connectors.bench.file={src}", f"connectors.bench.topic={topic}"]
    if mode != "alo-file":
        lines += [f"offset.storage.topic={topic}-offsets", "offset.storage.replication.factor=1"]
    if mode.startswith("eos"):
        lines.append("exactly.once.source.support=enabled")
    if mode == "eos-interval":
        lines += ["connectors.bench.transaction.boundary=interval",
                  "connectors.bench.transaction.boundary.interval.ms=1000"]
    return "\n".join(lines) + "\n"


def until_end(store, src):
    key = offsetfile.key("bench", {"filename": str(src)})
    end = src.stat().st_size

    def done():
        try:
            v = offsetfile.load(store).get(key)
        except Exception:  # noqa: BLE001 - mid-rename or not written yet
            return False
        return v is not None and v.get("position") == end
    return done


def one_run(mode, work, run_id, src, n, bootstrap, skiff):
    d = work / f"{mode}-{run_id}"
    d.mkdir()
    topic = f"bench-{mode}-{run_id}"
    (d / "worker.properties").write_text(worker_text(mode, d, src, topic, bootstrap))
    r = run_tool([skiff, str(d / "worker.properties")], str(d),
                 until=until_end(d / "offsets", src))
    r["bad"] = check_delivered(bootstrap, topic, n, NUMBER_RE)
    if r["bad"]:
        sys.exit(f"bench: {mode} run {run_id}: {r['bad']} (see {d}/bench.stderr)")
    shutil.rmtree(d, ignore_errors=True)
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    args = ap.parse_args()
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built")
    skiff = os.path.abspath(args.skiff)
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-eos-"))
    with local_broker(work / "kafka") as bootstrap:
        src = work / "lines.log"
        write_input(src, args.lines)
        print(f"input: {args.lines} lines, {src.stat().st_size / 1e6:.1f} MB; {args.reps} "
              f"repetitions; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
        one_run("alo-topic", work, "warmup", src, args.lines, bootstrap, skiff)
        results = {m: [] for m in MODES}
        for rep in range(args.reps):
            k = rep % len(MODES)
            for m in MODES[k:] + MODES[:k]:
                results[m].append(one_run(m, work, rep, src, args.lines, bootstrap, skiff))
        print(f"load average {os.getloadavg()[0]:.2f} at the end; every run delivered each "
              f"of the {args.lines} lines exactly once (read_committed)")
        summarize(results, "alo-topic")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
