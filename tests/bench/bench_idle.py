#!/usr/bin/env python3
"""Benchmark (not a test) of what idle files and one busy file cost as the
number of files grows (issue 10, "Cost as the work grows").

For each N (default 10, 100, 1,000, 10,000): N files of one line under one
glob are shipped, skiff is stopped and started again on its stored offsets
with nothing written to any file, and then

  idle      CPU (utime+stime from /proc/PID/stat) per 60 s, the median of
            --windows windows of --window seconds after --settle seconds,
            and VmRSS at the end;
  busy      one of the N files gets a line every 50 ms for --busy seconds with
            offset.flush.interval.ms=1000: bytes skiff writes (write_bytes of
            /proc/PID/io: what reaches the disk, fsynced) per offset flush.

Idle CPU and bytes per flush are printed as ratios to the smallest N of the
same invocation. With --strace, syscall counts (strace -c -f) over one window
are printed too. Fluent Bit (from PATH or FLUENT_BIT=...) tails the same idle
files for the same windows when present; the script says when it is absent.

  python3 tests/bench/bench_idle.py [--skiff build/skiff] [--n 10,100,1000,10000]
         [--window 60] [--windows 3] [--busy 20] [--strace]

Use a release build: the default build-asan binary measures AddressSanitizer.
"""

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "tests" / "bench"))
import offsetfile  # noqa: E402
from benchlib import local_broker, proc_cpu_s, proc_field, proc_rss_mb, stop_process  # noqa: E402


def write_props(path, props):
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def wait_for(cond, deadline_s, what):
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    raise SystemExit(f"bench_idle: timed out waiting for {what}")


def shipped(offsets, want):
    def done():
        try:
            offs = offsetfile.load(offsets)
        except (FileNotFoundError, ValueError):
            return False
        return all(offs.get(offsetfile.key("idle", {"filename": p}), {}).get("position") == s
                   for p, s in want.items())
    return done


def idle_windows(pid, settle, window, windows):
    """CPU seconds per 60 s of each window."""
    time.sleep(settle)
    out = []
    for _ in range(windows):
        c0, t0 = proc_cpu_s(pid), time.monotonic()
        time.sleep(window)
        out.append((proc_cpu_s(pid) - c0) * 60.0 / (time.monotonic() - t0))
    return out


def strace_counts(pid, window):
    """The top syscalls (count, name) of pid and its threads over window s."""
    st = subprocess.Popen(["strace", "-c", "-f", "-p", str(pid)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    time.sleep(window)
    st.send_signal(signal.SIGINT)
    err = st.communicate(timeout=30)[1]
    rows = []
    for line in err.splitlines():
        parts = line.split()
        if len(parts) >= 5 and parts[0].replace(".", "").isdigit() and parts[-1] != "total":
            calls = parts[3]
            if calls.isdigit():
                rows.append((int(calls), parts[-1]))
    return sorted(rows, reverse=True)[:6]


def make_files(d, n):
    d.mkdir()
    want = {}
    for i in range(n):
        p = d / f"f{i:05d}.log"
        p.write_text(f"line 0 of file {i}\n")
        want[str(p)] = p.stat().st_size
    return want


def bench_skiff(work, skiff, bootstrap, n, args):
    d = work / f"n{n}"
    want = make_files(d, n)
    offsets = work / f"n{n}.offsets"
    worker, conn = work / f"n{n}-worker.properties", work / f"n{n}-conn.properties"
    write_props(worker, {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "1000",
                         "offset.storage.file.filename": str(offsets),
                         "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    write_props(conn, {"name": "idle", "connector.class": "FileStreamSource",
                       "topic": f"bench-idle-{n}", "files": f"{d}/*.log"})
    cmd = [str(skiff), str(worker), str(conn)]
    log = open(work / f"n{n}.stderr", "ab")
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_for(shipped(offsets, want), 600, f"{n} files shipped")
    finally:
        stop_process(p)
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    res = {}
    try:
        res["idle"] = idle_windows(p.pid, args.settle, args.window, args.windows)
        res["rss"] = proc_rss_mb(p.pid)
        if args.strace and shutil.which("strace"):
            res["strace"] = strace_counts(p.pid, args.window)
        res["busy"] = busy_bytes(p.pid, d / "f00000.log", offsets, args.busy)
    finally:
        stop_process(p)
    return res


def busy_bytes(pid, path, offsets, seconds):
    """(bytes written per offset flush, flushes) while path grows."""
    g0, b0 = offsetfile.generation(offsets), proc_field(pid, "io", "write_bytes")
    end = time.monotonic() + seconds
    i = 0
    with open(path, "a") as f:
        while time.monotonic() < end:
            f.write(f"busy line {i}\n")
            f.flush()
            i += 1
            time.sleep(0.05)
    time.sleep(2.5)  # the last flush
    flushes = offsetfile.generation(offsets) - g0
    return (proc_field(pid, "io", "write_bytes") - b0) / max(1, flushes), flushes


def fluent_bit():
    fb = os.environ.get("FLUENT_BIT") or shutil.which("fluent-bit")
    return fb if fb and os.access(fb, os.X_OK) else None


def bench_fluent_bit(fb, work, n, args):
    d = work / f"n{n}"
    conf = work / f"fb{n}.conf"
    conf.write_text(f"[SERVICE]\n    flush 1\n    log_level error\n"
                    f"[INPUT]\n    name tail\n    path {d}/*.log\n    db {work}/fb{n}.db\n"
                    f"    read_from_head true\n[OUTPUT]\n    name null\n    match *\n")
    p = subprocess.Popen([fb, "-c", str(conf)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        idle = idle_windows(p.pid, args.settle, args.window, args.windows)
        return idle, proc_rss_mb(p.pid)
    finally:
        stop_process(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--n", default="10,100,1000,10000")
    ap.add_argument("--window", type=float, default=60.0)
    ap.add_argument("--windows", type=int, default=3)
    ap.add_argument("--settle", type=float, default=15.0)
    ap.add_argument("--busy", type=float, default=20.0)
    ap.add_argument("--strace", action="store_true")
    args = ap.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-idle-"))
    fb = fluent_bit()
    results = {}
    try:
        with local_broker(work / "kafka") as bootstrap:
            header(ns, args)
            for n in ns:
                results[n] = bench_skiff(work, args.skiff, bootstrap, n, args)
                if fb:
                    results[n]["fb"] = bench_fluent_bit(fb, work, n, args)
                row(n, results[n], results[ns[0]])
        report_fluent_bit(ns, results, fb)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def header(ns, args):
    print(f"skiff {args.skiff}; idle CPU per 60 s: median of {args.windows} windows of "
          f"{args.window:.0f} s (min-max); busy: one file of N written every 50 ms, "
          f"offset.flush.interval.ms=1000")
    print(f"{'N':>6} | {'idle CPU s/60s':>22} | {'vs N=' + str(ns[0]):>8} | {'idle RSS':>8} | "
          f"{'bytes/flush':>11} | {'vs N=' + str(ns[0]):>8} | flushes", flush=True)


def row(n, r, ref):
    """One N's line, as ratios to the first N's (ref)."""
    med, ref_cpu = statistics.median(r["idle"]), statistics.median(ref["idle"])
    bpf, flushes = r["busy"]
    print(f"{n:>6} | {med:8.3f} ({min(r['idle']):.3f}-{max(r['idle']):.3f}) | "
          f"{med / max(ref_cpu, 1e-9):7.2f}x | {r['rss']:5.1f} MB | {bpf:11.0f} | "
          f"{bpf / max(ref['busy'][0], 1):7.2f}x | {flushes}", flush=True)
    if "strace" in r:
        print("        syscalls in one window: " +
              ", ".join(f"{name} {calls}" for calls, name in r["strace"]), flush=True)


def report_fluent_bit(ns, results, fb):
    if not fb:
        print("Fluent Bit: absent (not on PATH, FLUENT_BIT unset): no comparison")
        return
    for n in ns:
        idle, rss = results[n]["fb"]
        print(f"Fluent Bit {n:>6} idle files: {statistics.median(idle):.3f} s CPU per 60 s "
              f"({min(idle):.3f}-{max(idle):.3f}), RSS {rss:.1f} MB")


if __name__ == "__main__":
    main()
