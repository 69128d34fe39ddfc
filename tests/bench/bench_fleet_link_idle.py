#!/usr/bin/env python3
"""Benchmark (not a test) of what the fleet's Kafka link costs an idle device
(issue 28, docs/fleet.md "What it costs"): bytes on its TCP connections per
hour while nothing is written to its configuration topic.

The link is src/kafka/fleetlink_kafka.c as the device opens it, driven in
skiff's main loop by tests/tools/fleetlinkprobe.c: its configuration topic read
to its end, then long-polled; its idle status producer. --procs probes of each
setting run at once against a broker of the benchmark's own, each with its own
topics, and after each one's snapshot ended and --settle seconds, its sockets'
bytes (bytes_acked + bytes_received of `ss -tinp`: TCP payload, so Kafka's
protocol; TCP/IP headers and ACKs not counted) are read at the start and the
end of a --window seconds window. Per hour: the window's bytes scaled. A
connection closed inside the window loses its bytes (none was, in the runs
quoted in the docs: the connection count is printed).

  fleet       fetch.wait.max.ms 55000 (fleet.fetch.wait.max.ms's default)
  librdkafka  fetch.wait.max.ms 500 (librdkafka's default): the reference

No heartbeat is sent (a heartbeat is one status record every
fleet.heartbeat.interval.ms); what is measured is the link's floor.

  python3 tests/bench/bench_fleet_link_idle.py [--tools build-rel] [--procs 5]
         [--window 120] [--settle 10]

Use a release build's tools."""

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib  # noqa: E402

SETTINGS = (("fleet", 55000), ("librdkafka", 500))


def socket_bytes(pid):
    """(bytes, connections) of pid's TCP sockets: bytes_acked + bytes_received."""
    out = subprocess.run(["ss", "-tinpH"], capture_output=True, text=True, check=True).stdout
    total, conns, mine = 0, 0, False
    for line in out.splitlines():
        if not line.startswith((" ", "\t")):
            mine = f"pid={pid}," in line
            if mine:
                conns += 1
            continue
        if mine:
            for key in ("bytes_acked", "bytes_received"):
                m = re.search(rf"\b{key}:(\d+)", line)
                if m:
                    total += int(m.group(1))
    return total, conns


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tools", default=str(benchlib.REPO / "build-rel"))
    ap.add_argument("--procs", type=int, default=5)
    ap.add_argument("--window", type=float, default=120.0)
    ap.add_argument("--settle", type=float, default=10.0)
    a = ap.parse_args()
    probe = Path(a.tools) / "fleetlinkprobe"
    with tempfile.TemporaryDirectory(prefix="bench-fleet-link-") as d, \
            benchlib.local_broker(Path(d) / "kafka") as bootstrap:
        worker = Path(d) / "worker.properties"
        worker.write_text(f"bootstrap.servers={bootstrap}\n")
        procs = []
        for name, wait in SETTINGS:
            for i in range(a.procs):
                dev = f"{name}-{i}"
                cmd = [str(probe), "-w", str(worker), "-d", dev,
                       "-c", f"skiff.config.{dev}", "-C", f"skiff.config.{dev}",
                       "-s", f"skiff.status.{dev}", "-p", "1", "-W", str(wait),
                       "-n", "1", "-T", str(int((a.settle + a.window + 120) * 1000))]
                out = open(Path(d) / f"{dev}.out", "w+")
                procs.append((name, subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                                     stdin=subprocess.DEVNULL), out))
        deadline = time.monotonic() + 60
        for _, p, out in procs:
            while "snapshot " not in Path(out.name).read_text():
                if time.monotonic() > deadline or p.poll() is not None:
                    sys.exit(f"bench: a probe's snapshot did not end:\n"
                             f"{Path(out.name).read_text()}")
                time.sleep(0.2)
        time.sleep(a.settle)
        first = [socket_bytes(p.pid) for _, p, _ in procs]
        time.sleep(a.window)
        last = [socket_bytes(p.pid) for _, p, _ in procs]
        for _, p, out in procs:
            benchlib.stop_process(p)
            out.close()
    per_h = {}
    for (name, _, _), (b0, c0), (b1, c1) in zip(procs, first, last):
        per_h.setdefault(name, []).append(((b1 - b0) * 3600.0 / a.window, c0, c1))
    print(f"bytes per hour of an idle fleet link, {a.procs} probes each, window {a.window:.0f} s "
          f"after {a.settle:.0f} s of settling; medians (min-max), ratio to 'librdkafka'")
    ref = statistics.median(x[0] for x in per_h["librdkafka"])
    for name, xs in per_h.items():
        v = [x[0] for x in xs]
        med = statistics.median(v)
        conns = sorted({(x[1], x[2]) for x in xs})
        print(f"  {name:11} {med / 1000:9.1f} KB/h ({min(v) / 1000:.1f}-{max(v) / 1000:.1f})"
              f"  x{med / ref:.3f}  connections at start, end: {conns}")


if __name__ == "__main__":
    main()
