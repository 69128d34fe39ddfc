#!/usr/bin/env python3
"""Benchmark (not a test) of what skiff costs while most of its files wait
for a descriptor (issue 22, item 3: CPU must not grow with the files
watched; an idle skiff wakes nothing).

One glob over N one-line files (max.open.files at its default, 256), the
broker unreachable (bootstrap 127.0.0.1:9) and the producer queue full from
the start (producer.queue.buffering.max.messages=10): after the start has
settled (less than 0.05 s of CPU in 2 s, or --settle s at most), skiff's
CPU (utime+stime of /proc/PID/stat) over --window s while a line is
appended to one file every 10 ms ("busy"), then over --window s with
nothing appended ("idle"). Before issue 22's change every stream waiting
for a descriptor was looked at again at each turn and each 200 ms retry,
each look a walk of the open list: the cost grew with N. Now they wait in
a queue, served when room is made.

Medians of --reps runs (min-max); with --before OTHER_SKIFF (a build of the
commit before) both binaries run interleaved in the same invocation, the
order turning each repetition, and the ratios are printed.

  python3 tests/bench/bench_starved.py [--skiff build-rel/skiff] [--before old/skiff]
         [--n 1000,5000,20000] [--reps 5] [--window 10]

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

DEAD = "127.0.0.1:9"


def props(run, files):
    w = run / "w.properties"
    w.write_text(f"bootstrap.servers={DEAD}\n"
                 f"offset.storage.file.filename={run}/offsets\n"
                 "producer.queue.buffering.max.messages=10\n"
                 "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                 "connectors.a.connector.class=FileStreamSource\n"
                 f"connectors.a.files={files}/*.log\n"
                 "connectors.a.topic=starved\n")
    return w


def one_run(skiff, files, n, run, args):
    run.mkdir(parents=True)
    w = props(run, files)
    err = open(run / "stderr", "ab")
    p = subprocess.Popen([skiff, str(w)], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=err)
    try:
        t0 = last_at = time.monotonic()
        last = 0.0
        while time.monotonic() - last_at < 2.0 and time.monotonic() - t0 < args.settle:
            time.sleep(0.5)
            if p.poll() is not None:
                sys.exit(f"bench_starved: skiff exited {p.returncode} (see {run}/stderr)")
            cpu = proc_cpu_s(p.pid)
            if cpu - last >= 0.05:
                last, last_at = cpu, time.monotonic()
        target = files / f"f{n // 2:05d}.log"
        cpu0 = proc_cpu_s(p.pid)
        end = time.monotonic() + args.window
        k = 0
        with open(target, "a") as f:
            while time.monotonic() < end:
                f.write(f"appended {k}\n")
                f.flush()
                k += 1
                time.sleep(0.01)
        cpu1 = proc_cpu_s(p.pid)
        time.sleep(args.window)
        cpu2 = proc_cpu_s(p.pid)
        if p.poll() is not None:
            sys.exit(f"bench_starved: skiff exited {p.returncode} (see {run}/stderr)")
        return {"busy": (cpu1 - cpu0) * 10 / args.window, "idle": (cpu2 - cpu1) * 10 / args.window}
    finally:
        stop_process(p)
        err.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--skiff", default=str(REPO / "build-rel" / "skiff"))
    ap.add_argument("--before")
    ap.add_argument("--n", default="1000,5000,20000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--settle", type=float, default=60.0)
    args = ap.parse_args()
    tools = {"this": args.skiff}
    if args.before:
        tools["before"] = args.before
    tmp = Path(tempfile.mkdtemp(prefix="bench_starved."))
    print(f"CPU s per 10 s, broker unreachable, producer queue full; busy: a line "
          f"appended to one file every 10 ms; idle: nothing appended; "
          f"median (min-max) of {args.reps} runs")
    try:
        for n in (int(x) for x in args.n.split(",")):
            results = {k: [] for k in tools}
            for rep in range(args.reps):
                order = list(tools) if rep % 2 == 0 else list(reversed(tools))
                for name in order:
                    files = tmp / f"files-{n}-{name}-{rep}"
                    one_line_files(files, n)
                    run = tmp / f"run-{n}-{name}-{rep}"
                    results[name].append(one_run(tools[name], files, n, run, args))
                    shutil.rmtree(files)
            print(f"\n{n} files:")
            med = {k: {m: statistics.median(r[m] for r in v) for m in ("busy", "idle")}
                   for k, v in results.items()}
            for name, runs in results.items():
                cells = []
                for m in ("busy", "idle"):
                    xs = [r[m] for r in runs]
                    cells.append(f"{med[name][m]:.3f} ({min(xs):.3f}-{max(xs):.3f})")
                ratio = ""
                if "before" in med and name != "before" and med["before"]["busy"] > 0:
                    ratio = f"  busy x{med[name]['busy'] / med['before']['busy']:.3f} of before"
                print(f"  {name:7} busy {cells[0]:>24}  idle {cells[1]:>24}{ratio}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
