#!/usr/bin/env python3
"""Benchmark (not a test) of the fleet's control plane (issue 28, design
§5.3). One mode so far:

  status   what `skiff fleet status --json` costs an operator over a fleet of
           --small (1,000) and --large (10,000) simulated devices: each a
           status topic of its own (<prefix>.status.dev-NNNNN, one partition,
           compacted) holding what a device running two connectors writes
           there, encoded by the device's own encoders (tests/tools/fleetfill.c
           -S): status-connector- and status-task- records of both, one
           skiff-outcome- and a heartbeat, 6 records. The two fleets are two
           status topic templates (--status-topic) on one broker, so that runs
           of both interleave. Measured per run, from wait4 of /usr/bin/time
           (GNU time's %M: a child forked from Python would count Python's
           pages): wall time, CPU (user+sys) and peak RSS. Each run's JSON is
           checked: exactly the fleet's devices, each with its heartbeat
           (ok, or stale once 10 min old; version, group), both connectors RUNNING and the outcome
           APPLIED, nothing skipped. A warm-up run of each first, not counted.
           Prints medians (min-max) and, per device, the large fleet's ratio
           to the small one's (1.00: linear in devices).

(The idle device's cost, the other half of §5.3, is to be a mode here too:
add a function to MODES.)

Topics are created once (fleetfill: batches of 500 through the admin API) and
reused: with --bootstrap, a fleet whose topics are there already is not filled
again. Without --bootstrap a broker of its own (1 GiB heap, as bench_fleet.py's
10,000 topics wanted; everything kept).

  python3 tests/bench/bench_fleet_status.py [--mode status] [--reps 5]
         [--small 1000] [--large 10000] [--skiff build-release/skiff]
         [--tools build-release] [--bootstrap HOST:PORT]

Use a release build (cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release).

Measured 2026-12-05 18:51 UTC at f53c1b2 (this branch before its rebase onto
dba85a5: the same src/ as a27749b; Release build, Kafka 3.9.1 from
tests/kafka/kafka.sh with a 1 GiB heap, 11,000 status topics of one partition;
2 cores shared with other work, load average 23: the wall times are loose,
CPU and RSS are not), with
`python3 tests/bench/bench_fleet_status.py --bootstrap 127.0.0.1:25899 --reps 5`:

   devices          wall s         CPU s    peak RSS MiB  JSON KiB  wall/dev x  CPU/dev x  RSS/dev x
      1000  0.52 (0.41-0.86)  0.09 (0.08-0.11)  14.1 (13.8-14.6)  478   1.00       1.00       1.00
     10000  5.39 (3.71-5.73)  0.77 (0.73-0.84)  38.6 (38.0-39.5)  4774  1.03       0.82       0.27

An earlier run the same day (18:47, the same code, load average 10): wall 0.36
(0.31-0.59) and 2.69 (2.33-2.96) s, CPU 0.09 and 0.73 s, RSS 14.3 and 38.7 MiB.
Filling the 10,000 devices' topics (60,000 records, 8.3 MB) took 94 s, 1,000's 5 s.
Before a27749b (all status topics assigned to one consumer from
OFFSET_BEGINNING), 10,000 devices took 109 s of wall time and 83 s of CPU
and failed: exit 75, 53 partitions not read to their end in 30 s
(librdkafka 2.0 looks a topic up by name in a list of all its topics); 1,000
took 0.90 s, 0.24 s of CPU.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import REPO, local_broker, run_tool  # noqa: E402

TEMPLATE = "fleetbench{n}.status.{{device}}"


def topic_prefix(n):
    return TEMPLATE.format(n=n).replace("{device}", "")


def existing(bootstrap, prefix):
    """How many of prefix's device topics the broker lists."""
    r = subprocess.run(["kcat", "-L", "-b", bootstrap, "-J"], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=600)
    if r.returncode != 0:
        sys.exit(f"kcat -L: {r.stderr.decode(errors='replace')[-500:]}")
    return sum(1 for t in json.loads(r.stdout)["topics"] if t["topic"].startswith(prefix))


def fill(a, bootstrap, n):
    """Fleet n's topics and records, unless they are there already."""
    prefix = topic_prefix(n)
    have = existing(bootstrap, prefix)
    if have == n:
        print(f"# {n} devices: {prefix}* there already", flush=True)
        return
    if have != 0:
        sys.exit(f"{have} topics {prefix}* on {bootstrap}, not {n}: delete them first")
    t = time.monotonic()
    r = subprocess.run([str(Path(a.tools) / "fleetfill"), "-b", bootstrap, "-t", prefix,
                        "-d", str(n), "-S"], capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        sys.exit(f"fleetfill: {r.stderr[-2000:]}")
    print(f"# {n} devices filled in {time.monotonic() - t:.0f} s: {r.stdout.strip()}",
          flush=True)


def check(path, n):
    """What is wrong with a `skiff fleet status --json` of fleet n, or ""."""
    try:
        doc = json.loads(Path(path).read_text())
    except ValueError as e:
        return f"not JSON: {e}"
    devs = doc["devices"]
    names = [d["device"] for d in devs]
    if names != [f"dev-{i:05d}" for i in range(n)]:
        return f"{len(names)} devices listed, not dev-00000..dev-{n - 1:05d}"
    if doc["skipped"] != 0:
        return f"{doc['skipped']} records skipped"
    want_conns = [{"name": "app", "state": "RUNNING"}, {"name": "db", "state": "RUNNING"}]
    for d in devs:
        o = d["outcomes"]
        # Topics are reused across invocations: a heartbeat over 10 min old
        # (twice its interval) is stale.
        if (d["health"] != ("stale" if d["stale"] else "ok") or d["version"] != "0.28.0-bench"
                or d["groups"] != ["all"] or d["connectors"] != want_conns or len(o) != 1
                or o[0]["name"] != "app" or o[0]["outcome"] != "APPLIED"
                or o[0]["topic"] != f"skiff.config.{d['device']}"):
            return f"device {d['device']}: {json.dumps(d)[:400]}"
    return ""


def status_once(a, bootstrap, n, tmp):
    out = tmp / f"status-{n}.json"
    cmd = [a.skiff, "fleet", "status", "--bootstrap", bootstrap, "--status-topic",
           TEMPLATE.format(n=n), "--json"]
    r = run_tool(cmd, str(tmp), stdout=str(out))
    if r["rc"] != 0:
        sys.exit(f"{' '.join(cmd)} exited {r['rc']}: "
                 f"{(tmp / 'bench.stderr').read_text(errors='replace')[-2000:]}")
    bad = check(out, n)
    if bad:
        sys.exit(f"{n} devices: {bad}")
    r["bytes"] = out.stat().st_size
    return r


def cell(xs, fmt):
    return f"{fmt.format(statistics.median(xs))} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def bench_status(a, bootstrap, tmp):
    fleets = [a.small, a.large]
    for n in fleets:
        fill(a, bootstrap, n)
    for n in fleets:  # warm-up: the broker's page cache, the binary's
        status_once(a, bootstrap, n, tmp)
    runs = {n: [] for n in fleets}
    for rep in range(a.reps):
        for n in (fleets if rep % 2 == 0 else fleets[::-1]):
            runs[n].append(status_once(a, bootstrap, n, tmp))
            r = runs[n][-1]
            print(f"# rep {rep} {n} devices: wall {r['wall']:.2f} s, CPU {r['cpu']:.2f} s, "
                  f"RSS {r['rss']:.1f} MiB", flush=True)
    med = {n: {k: statistics.median(r[k] for r in runs[n]) for k in ("wall", "cpu", "rss")}
           for n in fleets}
    print(f"{'devices':>8} {'wall s':>19} {'CPU s':>19} {'peak RSS MiB':>20} {'JSON KiB':>9}"
          f" {'wall/dev x':>10} {'CPU/dev x':>10} {'RSS/dev x':>10}")
    k = fleets[1] / fleets[0]
    for n in fleets:
        x = {m: med[n][m] / med[fleets[0]][m] / (n / fleets[0]) for m in med[n]}
        print(f"{n:>8} {cell([r['wall'] for r in runs[n]], '{:.2f}'):>19} "
              f"{cell([r['cpu'] for r in runs[n]], '{:.2f}'):>19} "
              f"{cell([r['rss'] for r in runs[n]], '{:.1f}'):>20} "
              f"{runs[n][0]['bytes'] / 1024:9.0f} {x['wall']:10.2f} {x['cpu']:10.2f} "
              f"{x['rss']:10.2f}")
    print(f"medians of {a.reps} runs each (min-max), interleaved, after a warm-up run of "
          f"each; per-device ratios: the median over {fleets[0]:,} devices' scaled by "
          f"{k:g} (1.00: linear, below: cheaper per device). Every run listed exactly its "
          "devices, each with its heartbeat, 2 connectors RUNNING and 1 outcome APPLIED.")


MODES = {"status": bench_status}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=sorted(MODES), default="status")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--skiff", default=str(REPO / "build-release" / "skiff"))
    ap.add_argument("--tools", default=str(REPO / "build-release"))
    ap.add_argument("--bootstrap")
    a = ap.parse_args()
    a.skiff = str(Path(a.skiff).resolve())
    with tempfile.TemporaryDirectory(prefix="bench-fleet-status-") as tmp:
        tmp = Path(tmp)
        if a.bootstrap:
            MODES[a.mode](a, a.bootstrap, tmp)
            return
        os.environ.setdefault("KAFKA_HEAP_OPTS", "-Xmx1g -Xms256m")
        with local_broker(tmp / "kafka") as bootstrap:
            MODES[a.mode](a, bootstrap, tmp)


if __name__ == "__main__":
    main()
