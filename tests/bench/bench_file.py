#!/usr/bin/env python3
"""Benchmark (not a test): ships 1,000,000 lines of ~150 bytes from a file to a
local Kafka broker with skiff, and the same file with `kcat -P -l` as the
reference, in the same run and against the same broker, and prints CPU seconds,
wall time and peak RSS of both and their ratios.

  python3 tests/bench/bench_file.py [--lines N] [--skiff build/skiff]

skiff runs with StringConverter (kcat sends raw lines too) and then with
Connect's default JsonConverter envelope. Both producers use the same delivery
settings (idempotence, acks=all, linger.ms=5). Targets (issue 2): CPU <= 1.5x
kcat, peak RSS <= 32 MB.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import REPO, run_measured, local_broker  # noqa: E402
import offsetfile  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    args = ap.parse_args()
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built (cmake -S . -B build && cmake --build build)")
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-"))
    with local_broker(work / "kafka") as bootstrap:
        src = work / "lines.log"
        with open(src, "w") as f:
            for i in range(args.lines):
                f.write(f"{i:09d} 2026-11-30T02:00:00.000Z gateway-7 sensor=temp value={i % 997}.5 "
                        f"unit=C status=ok note=the-quick-brown-fox-jumps-over-the-lazy-dog\n")
        size = src.stat().st_size
        print(f"input: {args.lines} lines, {size / args.lines:.0f} bytes/line, {size / 1e6:.1f} MB")
        common = ["-X", "enable.idempotence=true", "-X", "acks=all", "-X", "linger.ms=5"]
        kcat = run_measured(["kcat", "-P", "-b", bootstrap, "-t", "bench-kcat", "-l", *common,
                             str(src)], None, cwd=str(work))
        results = {"kcat -P -l": kcat}
        for conv in ("StringConverter", "JsonConverter"):
            d = work / conv
            d.mkdir()
            (d / "w.properties").write_text(
                f"bootstrap.servers={bootstrap}\n"
                f"offset.storage.file.filename={d}/offsets\n"
                f"offset.flush.interval.ms=200\n"
                f"value.converter=org.apache.kafka.connect.{'json' if conv == 'JsonConverter' else 'storage'}.{conv}\n"
                f"connectors.bench.connector.class=FileStreamSource\n"
                f"connectors.bench.file={src}\n"
                f"connectors.bench.topic=bench-{conv}\n")

            def done(d=d):
                try:
                    offs = offsetfile.load(d / "offsets")
                except (FileNotFoundError, ValueError):
                    return False
                return any(v.get("position") == size for v in offs.values())
            import signal
            results[f"skiff {conv}"] = run_measured([args.skiff, str(d / "w.properties")], done,
                                                    cwd=str(d), stop_signal=signal.SIGTERM)
        ref = results["kcat -P -l"]
        print(f"{'':24} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12} {'cpu ratio':>10} {'rss ratio':>10}")
        for name, (wall, cpu, rss, rc) in results.items():
            print(f"{name:24} {wall:8.2f} {cpu:8.2f} {rss:12.1f} {cpu / ref[1]:10.2f} {rss / ref[2]:10.2f}"
                  + ("" if rc == 0 else f"  (exit {rc})"))
        print("skiff wall time counts until its offset file says the last line was "
              "acknowledged (flush interval 200 ms).")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
