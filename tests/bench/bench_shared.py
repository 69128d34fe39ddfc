#!/usr/bin/env python3
"""Benchmark (not a test) of what a second file connector's glob costs when
another connector already tails many files (issue 22, item 3: many files;
taildup's check that no file is tailed by two connectors).

Two connectors, each with one glob over N one-line files of its own
directory, against an unreachable broker (nothing ships: only the start is
measured): skiff's CPU (utime+stime of /proc/PID/stat) once it has settled
(less than 0.05 s of CPU in 2 s), and the wall time until then. Each new
path of the second connector's glob is compared with every path of the
first's: one statx per path of the first, per new path (N x N), or one
statx per path of the first per glob (an index for the pass).

With --aliases instead: one connector whose glob names its N files
twice, through their directory and through a symlink to it
(files=DIR/*.log,LINK/*.log, rescan.interval.ms=1000): every rescan looks
up each of the N skipped paths among the N already said (taildup's
aliases); measured: skiff's CPU over --idle s once the start settled (or
after 15 s, when its rescans keep it busy).

Medians of --reps runs (min-max); with --before OTHER_SKIFF (a build of the
commit before) both binaries run interleaved in the same invocation, the
order turning each repetition, and the ratios are printed.

  python3 tests/bench/bench_shared.py [--skiff build-rel/skiff] [--before old/skiff]
         [--n 1000,5000] [--reps 5] [--aliases [--idle 20]]

Use release builds: an ASan binary measures AddressSanitizer.
"""

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "bench"))
from benchlib import one_line_files, proc_cpu_s, stop_process  # noqa: E402

DEAD = "127.0.0.1:1"


def props(run, files, aliases):
    w = run / "w.properties"
    text = (f"bootstrap.servers={DEAD}\n"
            f"offset.storage.file.filename={run}/offsets\n"
            "value.converter=org.apache.kafka.connect.storage.StringConverter\n")
    if aliases:
        text += ("connectors.a.connector.class=FileStreamSource\n"
                 f"connectors.a.files={files}/a/*.log,{files}/link/*.log\n"
                 "connectors.a.rescan.interval.ms=1000\n"
                 "connectors.a.topic=shared-a\n")
        w.write_text(text)
        return w
    for name in ("a", "b"):
        text += (f"connectors.{name}.connector.class=FileStreamSource\n"
                 f"connectors.{name}.files={files}/{name}/*.log\n"
                 f"connectors.{name}.topic=shared-{name}\n")
    w.write_text(text)
    return w


def one_run(skiff, files, run, args):
    run.mkdir(parents=True)
    w = props(run, files, args.aliases)
    err = open(run / "stderr", "ab")
    t0 = time.monotonic()
    p = subprocess.Popen([skiff, str(w)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=err)
    try:
        last, at = 0.0, time.monotonic()
        while True:
            time.sleep(0.5)
            if p.poll() is not None:
                sys.exit(f"bench_shared: skiff exited {p.returncode} (see {run}/stderr)")
            cpu = proc_cpu_s(p.pid)
            if cpu - last >= 0.05:
                last, at = cpu, time.monotonic()
            elif time.monotonic() - at >= 2.0 and not args.aliases:
                return {"cpu": cpu, "wall": at - t0}
            if args.aliases and (time.monotonic() - at >= 2.0 or time.monotonic() - t0 >= 15):
                # Settled, or busy with its rescans for good (the code
                # before, at thousands of paths): the idle window.
                cpu = proc_cpu_s(p.pid)
                time.sleep(args.idle)
                return {"cpu": proc_cpu_s(p.pid) - cpu, "wall": time.monotonic() - t0}
            if time.monotonic() - t0 > 1800:
                sys.exit("bench_shared: not settled in 30 minutes")
    finally:
        stop_process(p)
        err.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skiff", default=str(REPO / "build-rel" / "skiff"))
    ap.add_argument("--before")
    ap.add_argument("--n", default="1000,5000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--aliases", action="store_true")
    ap.add_argument("--idle", type=float, default=20.0)
    args = ap.parse_args()
    tools = {"this": args.skiff}
    if args.before:
        tools["before"] = args.before
    tmp = Path(tempfile.mkdtemp(prefix="bench_shared."))
    try:
        for n in (int(x) for x in args.n.split(",")):
            files = tmp / f"files{n}"
            one_line_files(files / "a", n)
            if args.aliases:
                (files / "link").symlink_to(files / "a")
            else:
                one_line_files(files / "b", n)
            results = {k: [] for k in tools}
            for rep in range(args.reps):
                order = list(tools) if rep % 2 == 0 else list(reversed(tools))
                for name in order:
                    run = tmp / f"run-{n}-{name}-{rep}"
                    results[name].append(one_run(tools[name], files, run, args))
            if args.aliases:
                print(f"\n{n} files named twice (a symlinked directory), CPU over "
                      f"{args.idle:.0f} s idle with a rescan a second ({args.reps} runs each):")
            else:
                print(f"\n{n} files in each of two connectors ({args.reps} runs each):")
            med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu", "wall")}
                   for k, v in results.items()}
            for name, runs in results.items():
                cells = []
                for m in ("cpu", "wall"):
                    xs = [r[m] for r in runs]
                    cells.append(f"{med[name][m]:.2f} ({min(xs):.2f}-{max(xs):.2f})")
                ratio = ""
                if "before" in med and name != "before":
                    ratio = (f"  CPU x{med[name]['cpu'] / med['before']['cpu']:.3f}, "
                             f"wall x{med[name]['wall'] / med['before']['wall']:.3f} of before")
                print(f"  {name:7} CPU s {cells[0]:>22}  settled after s {cells[1]:>22}{ratio}")
            shutil.rmtree(files)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
