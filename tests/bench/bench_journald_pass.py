#!/usr/bin/env python3
"""Benchmark (not a test) of the journald source's pass from the head (issue 14):
at a start, and whenever sd-journal reports journal files added or removed
(a rotation), skiff reads the journal from its head and passes over every
entry it read before (positions per sequence-number id, docs/source-journald.md). This measures that pass.

For each N (default 20,000 and 100,000): N entries written by
systemd-journal-remote, shipped, skiff stopped and started again on its
stored offsets; the pass's time is skiff's own log line ("first pass from the
head done in X ms"). Reference in the same invocation: `journalctl
--directory=D -o export --output-fields=SEQ` over the same files (every entry
with its cursor), to /dev/null. Printed: ms, µs per entry, ratio to journalctl.

  python3 tests/bench/bench_journald_pass.py [--skiff build/skiff] [--n 20000,100000]

Use a release build: an AddressSanitizer build measures AddressSanitizer.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib import REPO, local_broker, until_watermark  # noqa: E402,F401
from harness import Skiff  # noqa: E402
import test_journald as tj  # noqa: E402


def one(work, bootstrap, n):
    jdir = work / f"j{n}"
    jdir.mkdir()
    for lo in range(1, n + 1, 20000):
        tj.write_journal(jdir / "a.journal",
                         [tj.entry(i) for i in range(lo, min(lo + 20000, n + 1))])
    topic = f"pass-{n}-{int(time.time())}"
    props = tj.worker(type("K", (), {"bootstrap": bootstrap}), work / f"w{n}")
    (work / f"w{n}").mkdir()
    sk = Skiff(work / f"w{n}", props, [tj.connector(jdir, topic)])
    sk.start()
    done = until_watermark(bootstrap, topic, n)
    deadline = time.monotonic() + 600
    while not done() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert sk.stop() == 0
    mark = sk.log_mark()
    sk.start()
    m = sk.wait_log(r"first pass from the head done in (\d+) ms: (\d+) entries", timeout=600,
                    since=mark)
    assert sk.stop() == 0
    ms, passed = int(m.group(1)), int(m.group(2))
    t = time.monotonic()
    subprocess.run(["journalctl", "--no-pager", f"--directory={jdir}", "-o", "export",
                    "--output-fields=SEQ"], stdout=subprocess.DEVNULL, check=True)
    ref = (time.monotonic() - t) * 1000
    print(f"N={n}: pass {ms} ms over {passed} entries ({1000 * ms / max(passed, 1):.2f} µs "
          f"each); journalctl -o export {ref:.0f} ms; ratio {ms / ref:.2f}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=None)
    ap.add_argument("--n", default="20000,100000")
    a = ap.parse_args()
    if a.skiff:  # the harness runs SKIFF_BIN, and its tools from SKIFF_TOOLS
        os.environ["SKIFF_BIN"] = str(Path(a.skiff).resolve())
        os.environ.setdefault("SKIFF_TOOLS", str(Path(a.skiff).resolve().parent))
    with tempfile.TemporaryDirectory() as d:
        work = Path(d)
        with local_broker(work / "kafka") as bootstrap:
            for n in [int(x) for x in a.n.split(",")]:
                one(work, bootstrap, n)


if __name__ == "__main__":
    main()
