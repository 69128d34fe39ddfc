#!/usr/bin/env python3
"""Benchmark (not a test) of what many files cost skiff (issue 22, item 3:
"Memory does not grow with files beyond the open-file budget").

For each N (default 1,000, 5,000 and 20,000) one glob over N files of one
line each, every setting at its default but offset.flush.interval.ms=1000:

  start     skiff on no stored offsets: seconds until the topic holds the N
            lines (kcat -Q every 0.2 s), the CPU it used until then
            (utime+stime of /proc/PID/stat), its peak resident memory
            (VmHWM) and VmRSS --settle s later;
  restart   skiff stopped (SIGTERM) and started again on the N stored
            offsets: seconds until a line appended to 10 files spread over
            the glob, right after the start, is in the topic; the CPU,
            VmHWM and VmRSS --settle s after the start;
  flush     then one file gets a line every 50 ms for --busy s: bytes skiff
            writes (write_bytes of /proc/PID/io: what reaches the disk) per
            offset flush (lines appended to NAME.log), with N keys stored;
  per file  the growth of VmRSS after the start between two N, per file.

Medians of --reps runs (min-max); with --before OTHER_SKIFF (e.g. a build of
the commit before) both binaries run interleaved in the same invocation, the
order turning each repetition, and the ratios are printed. --reps-big sets
fewer runs for N >= 10,000 (the code before issue 22 took minutes there).
The figures issue 22 reported are printed beside them. Each run checks that
the topic holds each of its lines exactly once.

  python3 tests/bench/bench_many.py [--skiff build-rel/skiff] [--before old/skiff]
         [--n 1000,5000,20000] [--reps 5] [--reps-big 5] [--settle 5] [--busy 10]

Use release builds: an ASan binary measures AddressSanitizer.
"""

import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "bench"))
from benchlib import (high_watermark, local_broker, one_line_files, proc_cpu_s,  # noqa: E402
                      proc_field, stop_process)

# Issue 22's figures (release build, this kind of machine), for the table.
ISSUE = {
    1000: {},
    5000: {"start_s": 20.8, "rss": 49.9},
    20000: {"start_s": 113, "start_cpu": 95, "hwm": 201, "rss": 182,
            "re_cpu": 17.5, "re_rss": 150},
}
LINE_RE = rb"line (\d+) of file"


def props(run, bootstrap, files, topic):
    w = run / "w.properties"
    w.write_text(f"bootstrap.servers={bootstrap}\n"
                 f"offset.storage.file.filename={run}/offsets\n"
                 "offset.flush.interval.ms=1000\n"
                 "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
                 "connectors.many.connector.class=FileStreamSource\n"
                 f"connectors.many.files={files}/*.log\n"
                 f"connectors.many.topic={topic}\n")
    return w


def spawn(skiff, w, run):
    err = open(run / "stderr", "ab")
    return subprocess.Popen([skiff, str(w)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err)


def status_mb(pid, key):
    return proc_field(pid, "status", key) / 1024.0


def until(cond, timeout, p, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if p.poll() is not None:
            sys.exit(f"bench_many: skiff exited {p.returncode} waiting for {what}")
        if cond():
            return True
        time.sleep(0.2)
    sys.exit(f"bench_many: timed out waiting for {what}")


def flush_lines(run):
    try:
        with open(run / "offsets.log", "rb") as f:
            return f.read().count(b"\n")
    except FileNotFoundError:
        return 0


def busy_bytes(pid, path, run, seconds):
    """Bytes written per offset flush while path grows (a line every 50 ms)."""
    l0, b0 = flush_lines(run), proc_field(pid, "io", "write_bytes")
    end, i = time.monotonic() + seconds, 0
    with open(path, "a") as f:
        while time.monotonic() < end:
            f.write(f"busy {i}\n")
            f.flush()
            i += 1
            time.sleep(0.05)
    time.sleep(2.5)  # the last flush
    flushes = flush_lines(run) - l0
    if flushes <= 0:
        return None  # compacted meanwhile: no count
    return (proc_field(pid, "io", "write_bytes") - b0) / flushes


def one_run(skiff, files, n, run, bootstrap, args):
    run.mkdir(parents=True)
    topic = f"many-{run.name}-{int(time.time() * 1000)}"
    w = props(run, bootstrap, files, topic)
    r = {}
    t0 = time.monotonic()
    p = spawn(skiff, w, run)
    try:
        until(lambda: high_watermark(bootstrap, topic) >= n, 1800, p, f"{n} lines shipped")
        r["start_s"] = time.monotonic() - t0
        r["start_cpu"] = proc_cpu_s(p.pid)
        r["hwm"] = status_mb(p.pid, "VmHWM")
        time.sleep(args.settle)
        r["rss"] = status_mb(p.pid, "VmRSS")
    finally:
        stop_process(p)
    # Restart on the stored offsets; 10 files get a line at once.
    t0 = time.monotonic()
    p = spawn(skiff, w, run)
    try:
        picks = [i * n // 10 for i in range(10)]
        for i in picks:
            with open(files / f"f{i:05d}.log", "a") as f:
                f.write(f"line {n + i} of file {i}\n")
        until(lambda: high_watermark(bootstrap, topic) >= n + 10, 600, p, "the restart's lines")
        r["re_s"] = time.monotonic() - t0
        time.sleep(max(0.0, args.settle - (time.monotonic() - t0)))
        r["re_cpu"] = proc_cpu_s(p.pid)
        r["re_hwm"] = status_mb(p.pid, "VmHWM")
        r["re_rss"] = status_mb(p.pid, "VmRSS")
        r["flush_b"] = busy_bytes(p.pid, files / f"f{n - 1:05d}.log", run, args.busy)
    finally:
        stop_process(p)
    # The lines appended: taken back out for the next run, which reads the
    # files from their start again (its own offsets and topic).
    for i in picks:
        (files / f"f{i:05d}.log").write_text(f"line {i} of file {i}\n")
    (files / f"f{n - 1:05d}.log").write_text(f"line {n - 1} of file {n - 1}\n")
    # Each file's first line once, and the 10 lines appended once: numbers
    # 0..n-1 and n+picks; the busy lines have no number.
    got = subprocess.run(["kcat", "-C", "-q", "-e", "-b", bootstrap, "-t", topic, "-f", "%s\n"],
                         capture_output=True).stdout
    nums = [int(x) for x in re.findall(LINE_RE, got)]
    want = sorted(list(range(n)) + [n + i for i in picks])
    if sorted(nums) != want:
        sys.exit(f"bench_many: {skiff}: N={n}: the topic does not hold each line once "
                 f"({len(nums)} numbered lines, {len(want)} wanted); see {run}")
    shutil.rmtree(run, ignore_errors=True)
    return r


COLS = [("start_s", "start s", "{:.1f}"), ("start_cpu", "start CPU s", "{:.2f}"),
        ("hwm", "peak RSS MB", "{:.1f}"), ("rss", "RSS MB", "{:.1f}"),
        ("re_s", "restart s", "{:.1f}"), ("re_cpu", "restart CPU s", "{:.2f}"),
        ("re_hwm", "restart peak MB", "{:.1f}"), ("re_rss", "restart RSS MB", "{:.1f}"),
        ("flush_b", "bytes/flush", "{:.0f}")]


def cell(xs, fmt):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    med = statistics.median(xs)
    if len(xs) == 1:
        return fmt.format(med)
    return f"{fmt.format(med)} ({fmt.format(min(xs))}-{fmt.format(max(xs))})"


def med(res, k, n, m):
    xs = [r[m] for r in res[k][n] if r.get(m) is not None]
    return statistics.median(xs) if xs else None


def report(res, ns, bins):
    for m, title, fmt in COLS:
        print(f"\n{title}:")
        print(f"  {'N':>6}  " + "  ".join(f"{k:>24}" for k in bins) + f"  {'issue 22':>9}" +
              ("  skiff/before" if "before" in bins else ""))
        for n in ns:
            row = "  ".join(f"{cell([r[m] for r in res[k][n]], fmt):>24}" for k in bins)
            iss = ISSUE.get(n, {}).get(m)
            ratio = ""
            if "before" in bins and med(res, "before", n, m) and med(res, "skiff", n, m):
                ratio = f"  {med(res, 'skiff', n, m) / med(res, 'before', n, m):12.2f}"
            print(f"  {n:>6}  {row}  {('-' if iss is None else fmt.format(iss)):>9}{ratio}")
    # Issue 22's bound: at most 1 KB per watched file that is not open. A
    # memory target is checked here, not in a test: VmRSS after the start's
    # burst moves by tens of bytes a file between runs (heap holes), and a
    # loaded CI machine measured 1.06 KB where quiet runs measured 0.93.
    print("\nVmRSS after the start, growth per file between two N (KB; issue 22: <= 1.00):")
    for k in bins:
        for a, b in zip(ns, ns[1:]):
            ra, rb = med(res, k, a, "rss"), med(res, k, b, "rss")
            print(f"  {k:>7} {a:>6} -> {b:>6}: {(rb - ra) * 1024 / (b - a):.2f} KB per file")
    print("medians over the runs (min-max in brackets)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=str(REPO / "build-rel" / "skiff"))
    ap.add_argument("--before", help="a skiff binary to compare with, interleaved")
    ap.add_argument("--n", default="1000,5000,20000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--reps-big", type=int, help="runs for N >= 10,000 (default --reps)")
    ap.add_argument("--settle", type=float, default=5.0)
    ap.add_argument("--busy", type=float, default=10.0)
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    bins = {"skiff": os.path.abspath(args.skiff)}
    if args.before:
        bins = {"before": os.path.abspath(args.before), **bins}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_many: {b} not built")
    work = Path(tempfile.mkdtemp(prefix="skiff-many-"))
    res = {k: {n: [] for n in ns} for k in bins}
    with local_broker(work / "kafka") as bootstrap:
        print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f}; "
              f"{args.reps} repetitions ({args.reps_big or args.reps} for N >= 10,000), "
              f"interleaved; {', '.join(bins)}")
        for n in ns:
            files = work / f"files-{n}"
            one_line_files(files, n)
            reps = args.reps_big if n >= 10000 and args.reps_big else args.reps
            for rep in range(reps):
                order = list(bins.items())
                for k, b in order[rep % len(order):] + order[:rep % len(order)]:
                    r = one_run(b, files, n, work / f"run-{k}-{n}-{rep}", bootstrap, args)
                    res[k][n].append(r)
                    print(f"  {k} N={n} rep {rep}: " +
                          ", ".join(f"{m}={r[m]:.2f}" for m, _, _ in COLS
                                    if r.get(m) is not None), flush=True)
            shutil.rmtree(files, ignore_errors=True)
        print(f"load average {os.getloadavg()[0]:.1f} at the end; every run delivered each "
              "line exactly once")
    report(res, ns, bins)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
