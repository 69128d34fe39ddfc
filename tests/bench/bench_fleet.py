#!/usr/bin/env python3
"""Benchmark (not a test): what a device's start costs in a fleet whose
offsets are in Kafka (docs/offsets.md, "A fleet"), for fleets of 10, 1,000
and 10,000 simulated devices of 20 files each (tests/tools/fleetfill.c: the
records skiff writes, per-device connector names), in two layouts:

  shared      one offsets topic for the fleet (25 partitions, Connect's
              default): a device reads every device's records
  per-device  a topic per device (offset.storage.topic=skiff-offsets-<id>,
              one partition): a device reads its own

Device dev0 of the fleet (connector app-dev0, its 20 keys, and one real file
of 100 lines) is started --reps times per fleet size, its state directory
kept (a restart). Measured per start: the records and bytes (keys, values,
headers) it read from the offsets topic and the read's time (its log line
"offset.storage.topic ...: read N records (B bytes) ... in T ms"), the time
from exec to "running 1 connector", and its peak RSS. For the shared layout
also the bytes in the partitions that hold dev0's keys (murmur2): what a
reader of only those partitions would read. Fleets grow in place (10, then
990 more, then 9,000 more). Prints medians (min-max) and the ratios of the
medians to the 10-device fleet of the same layout.

  python3 tests/bench/bench_fleet.py [--fleets 10,1000,10000] [--reps 5]
                                     [--layouts shared,per-device]
                                     [--skiff PATH] [--bootstrap HOST:PORT]

Use a release build (cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release).
A broker of its own (1 GiB heap: 10,000 topics) unless --bootstrap; creating
10,000 topics takes it minutes.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchlib import REPO, local_broker  # noqa: E402

import harness  # noqa: E402  (tests/e2e, on the path through benchlib)

FILES = 20
NOTE_RE = re.compile(r"read (\d+) records \((\d+) bytes\) from (\d+) partitions? in (\d+) ms, "
                     r"(\d+) keys")


def fill(bootstrap, topic, first, count, per_device):
    cmd = [str(harness.tool("fleetfill")), "-b", bootstrap, "-t", topic, "-o", str(first),
           "-d", str(count), "-f", str(FILES)]
    if per_device:
        cmd.append("-P")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"fleetfill: {r.stderr}")


def start_once(skiff, d, bootstrap, offsets, partitions):
    """Starts device dev0 once: a dict of what its start cost."""
    (d / "state").mkdir(exist_ok=True)
    # The store id fleetfill gave device 0's records: they are this store's.
    (d / "state" / "offsets.store").write_text("%032x\n" % 1)
    worker = d / "worker.properties"
    worker.write_text("".join(f"{k}={v}\n" for k, v in {
        "bootstrap.servers": bootstrap, "device.id": "dev0",
        "offset.storage.file.filename": d / "state" / "offsets",
        "offset.storage.topic": offsets, "offset.storage.partitions": partitions,
        "offset.storage.replication.factor": 1, "offset.flush.interval.ms": 1000,
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "connectors.app-dev0.connector.class": "FileStreamSource",
        "connectors.app-dev0.file": d / "app.log", "connectors.app-dev0.topic": "bench-data",
    }.items()))
    log = d / "skiff.log"
    log.write_text("")
    t0 = time.monotonic()
    with open(log, "ab") as err:
        p = subprocess.Popen([str(skiff), str(worker)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
    started = None
    while time.monotonic() - t0 < 600:
        text = log.read_text(errors="replace")
        if "running 1 connector" in text:
            started = time.monotonic() - t0
            break
        if p.poll() is not None:
            sys.exit(f"skiff exited {p.returncode}:\n{text[-2000:]}")
        time.sleep(0.01)
    hwm = int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{p.pid}/status").read_text()).group(1))
    time.sleep(1.5)  # a flush: its file's offset goes to the topic
    p.terminate()
    p.wait(60)
    m = NOTE_RE.search(log.read_text())
    if started is None or m is None:
        sys.exit(f"no start: {log.read_text()[-2000:]}")
    return {"records": int(m.group(1)), "bytes": int(m.group(2)), "read_ms": int(m.group(4)),
            "keys": int(m.group(5)), "start_s": started, "rss_mb": hwm / 1024}


def own_partition_bytes(bootstrap, topic):
    """Bytes (keys, values, headers) of the shared topic's partitions that
    hold dev0's keys."""
    recs = harness.consume(bootstrap, topic, timeout=600)
    mine = {r["partition"] for r in recs if r["key"].startswith(b'["app-dev0",')}
    return sum(len(r["key"]) + len(r["value"] or b"") +
               sum(len(h) + len(v or b"") for h, v in r["headers"])
               for r in recs if r["partition"] in mine), len(mine)


def cell(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fleets", default="10,1000,10000")
    ap.add_argument("--layouts", default="shared,per-device")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skiff", default=str(REPO / "build-release" / "skiff"))
    ap.add_argument("--bootstrap")
    a = ap.parse_args()
    fleets = [int(x) for x in a.fleets.split(",")]
    os.environ.setdefault("SKIFF_TOOLS", str(REPO / "build-asan"))
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as tmp:
        tmp = Path(tmp)
        if a.bootstrap:
            run(a, fleets, a.bootstrap, tmp)
            return
        os.environ.setdefault("KAFKA_HEAP_OPTS", "-Xmx1g -Xms256m")
        with local_broker(tmp / "kafka") as bootstrap:
            run(a, fleets, bootstrap, tmp)


def run(a, fleets, bootstrap, tmp):
    rows = []
    harness.create_topic(bootstrap, "bench-data", partitions=1)
    for layout in a.layouts.split(","):
        prefix = f"fleet-{layout}-{uuid.uuid4().hex[:6]}"
        per_device = layout == "per-device"
        offsets = f"{prefix}-dev0" if per_device else prefix
        d = tmp / prefix
        d.mkdir()
        (d / "app.log").write_text("".join(f"{i:08d} a line of the device's log\n"
                                           for i in range(100)))
        have = 0
        for n in fleets:
            t = time.monotonic()
            fill(bootstrap, prefix, have, n - have, per_device)
            print(f"# {layout}: {n} devices filled ({n - have} more in "
                  f"{time.monotonic() - t:.0f} s)", flush=True)
            have = n
            runs = [start_once(a.skiff, d, bootstrap, offsets, 1 if per_device else 25)
                    for _ in range(a.reps)]
            extra = own_partition_bytes(bootstrap, prefix) if not per_device else None
            rows.append((layout, n, runs, extra))
            print(f"# {layout} {n}: {runs}", flush=True)
    report(rows)


def report(rows):
    print(f"{'layout':11} {'devices':>7} {'records read':>22} {'bytes read':>28} "
          f"{'read ms':>16} {'start s':>19} {'peak RSS MB':>18} {'bytes x':>8} {'start x':>8}"
          f"  own partitions' bytes")
    ref = {}
    for layout, n, runs, extra in rows:
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        ref.setdefault(layout, med)
        r0 = ref[layout]
        bx = med["bytes"] / r0["bytes"] if r0["bytes"] else float("nan")
        own = f"  {extra[0]:,} ({extra[1]} of 25)" if extra else ""
        print(f"{layout:11} {n:>7} {cell([r['records'] for r in runs], '{:,.0f}'):>22} "
              f"{cell([r['bytes'] for r in runs], '{:,.0f}'):>28} "
              f"{cell([r['read_ms'] for r in runs], '{:.0f}'):>16} "
              f"{cell([r['start_s'] for r in runs], '{:.2f}'):>19} "
              f"{cell([r['rss_mb'] for r in runs], '{:.1f}'):>18} {bx:8.2f} "
              f"{med['start_s'] / r0['start_s']:8.2f}{own}")
    print("medians over the starts (min-max in brackets); ratios of medians against the "
          "10-device fleet of the same layout.")


if __name__ == "__main__":
    main()
