#!/usr/bin/env python3
"""Benchmark (not a test) of issue 22's outage: an app writes 2,000 numbered
lines of 76 bytes a second, real logrotate runs every 0.5 s (size 100k,
rotate 2, compress, create), and the broker is stopped for OUTAGE seconds
(30 and 240 by default, one run each). Printed per run: lines written, lines
lost (missing from the topic), what skiff counted lost (lines_unread_lost,
bytes_unread_lost, files_gone_unread), the most deleted files skiff held
open at once and the disk they took (sampled from /proc every 0.1 s), and
skiff's CPU while the broker was down.

  python3 tests/bench/bench_outage.py [--skiff build/skiff] [--outages 30,240]
      [--before BIN] [--connector key=value ...] [--kill9] [--stops N]
      [--rotation create|copytruncate]

--before BIN runs the same outages with another binary first (e.g. a build
of the commit before issue 22), in the same invocation. Issue 22's figures
for the code before it: 240 s, 490,180 of 599,994 lines lost (81.7%); 30 s,
54,783 of 119,992 (45.7%); nothing counted.

Use a release build (cmake -S . -B build && cmake --build build). Needs
logrotate and the Kafka jars (tests/kafka/kafka.sh fetch).
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import harness  # noqa: E402
import outage  # noqa: E402


ROTATIONS = {
    "create": ("size 100k", "rotate 2", "compress", "create"),
    "copytruncate": ("size 100k", "rotate 2", "compress", "delaycompress", "copytruncate"),
}


def one(binary, seconds, work, connector, before, after, kill9=False, stops=0,
        rotation="create"):
    os.environ["SKIFF_BIN"] = str(binary)
    d = Path(tempfile.mkdtemp(prefix=f"outage{seconds}-", dir=work))
    broker = harness.Broker(d / "kafka")
    broker.start()
    mid = back = None
    dead = {}
    if kill9:
        # Halfway through the outage: kill -9 (a power cut, the OOM
        # killer); skiff starts again once the broker is back.
        def mid(scene):
            scene.sk.kill9()
            dead["at"], dead["line"] = time.monotonic(), scene.writer.count

        def back(scene):
            scene.restart()
            dead["s"] = time.monotonic() - dead["at"]
            dead["lines"] = scene.writer.count - dead["line"]
    elif stops:
        # Halfway through the outage: SIGTERM, skiff started again at once,
        # `stops` times 3 s apart (a clean stop drops what is unacknowledged:
        # each file holding it must be named, and counted once lost).
        def mid(scene):
            for i in range(stops):
                if i:
                    time.sleep(3)
                assert scene.sk.stop() == 0
                scene.restart()
    try:
        r = outage.run(d, broker, harness.unique_topic("outage"), seconds, before=before,
                       after=after, connector=connector, drain_timeout=900, mid=mid,
                       back=back, directives=ROTATIONS[rotation])
    finally:
        broker.kill()
    if dead:
        r["dead"] = dead
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--before", help="another skiff binary to run first, as a reference")
    ap.add_argument("--outages", default="30,240", help="seconds, comma-separated")
    ap.add_argument("--lead", type=float, default=10, help="seconds written before the outage")
    ap.add_argument("--tail", type=float, default=20, help="seconds written after it")
    ap.add_argument("--connector", action="append", default=[],
                    help="key=value added to the connector (e.g. max.held.files=64)")
    ap.add_argument("--work", default=None, help="directory for the runs (default: a temp dir)")
    ap.add_argument("--kill9", action="store_true",
                    help="kill -9 skiff halfway through the outage, start it again once the "
                         "broker is back (what it held dies with it: counted at the start)")
    ap.add_argument("--stops", type=int, default=0,
                    help="SIGTERM skiff this many times (3 s apart) halfway through the "
                         "outage, starting it again at once each time")
    ap.add_argument("--rotation", choices=sorted(ROTATIONS), default="create",
                    help="logrotate's way: create (rotate 2, compress) or copytruncate "
                         "(rotate 2, compress, delaycompress)")
    a = ap.parse_args()
    connector = dict(kv.split("=", 1) for kv in a.connector)
    work = Path(a.work or tempfile.mkdtemp(prefix="bench-outage-"))
    work.mkdir(parents=True, exist_ok=True)
    if not Path(harness.tool("consume")).exists():
        sys.exit("build the consume tool first")
    runs = [("before", a.before)] if a.before else []
    runs.append(("skiff", a.skiff))
    for label, binary in runs:
        for seconds in [int(s) for s in a.outages.split(",")]:
            r = one(binary, seconds, work, connector, a.lead, a.tail, a.kill9, a.stops,
                    a.rotation)
            dead = r.get("dead")
            print(f"{label} {binary}: outage {seconds} s: {outage.summary(r)}"
                  + (f"; skiff dead {dead['s']:.1f} s, {dead['lines']} lines written meanwhile"
                     if dead else ""), flush=True)


if __name__ == "__main__":
    main()
