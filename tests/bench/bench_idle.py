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
same invocation. The floor: in the same windows, `kcat -P` with skiff's
producer settings, connected to the same broker and idle on its stdin (its
main thread blocks in read(), so what it spends is librdkafka's own timers:
rdk:main and one thread per broker wake about once a second whatever the
program does); skiff's idle CPU is printed beside it and as a ratio. For both,
CPU and wakeups per 60 s of each thread (/proc/PID/task/*/schedstat: ns, and
times scheduled in), skiff's own thread apart from librdkafka's rdk:*. With --strace, syscall counts (strace -c -f) over one window
are printed too. Fluent Bit (from PATH or FLUENT_BIT=...) tails the same idle
files for the same windows when present; the script says when it is absent.

  python3 tests/bench/bench_idle.py [--skiff build/skiff] [--n 10,100,1000,10000]
         [--window 60] [--windows 3] [--busy 20] [--strace] [--no-kcat]

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
from benchlib import (local_broker, proc_cpu_s, proc_field, proc_rss_mb, stop_process,  # noqa: E402
                      thread_delta, thread_sample)


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


def idle_windows(pids, settle, window, windows):
    """For each {name: pid} sampled in the same windows: (CPU seconds per 60 s
    of each window, {thread name: [CPU s, wakeups] per 60 s over all the
    windows})."""
    time.sleep(settle)
    cpu = {k: [] for k in pids}
    thr0 = {k: thread_sample(p) for k, p in pids.items()}
    t_all = time.monotonic()
    for _ in range(windows):
        c0, t0 = {k: proc_cpu_s(p) for k, p in pids.items()}, time.monotonic()
        time.sleep(window)
        for k, p in pids.items():
            cpu[k].append((proc_cpu_s(p) - c0[k]) * 60.0 / (time.monotonic() - t0))
    per60 = 60.0 / (time.monotonic() - t_all)
    out = {}
    for k, p in pids.items():
        thr = thread_delta(thr0[k], thread_sample(p))
        out[k] = (cpu[k], {c: [v[0] * per60, v[1] * per60] for c, v in thr.items()})
    return out


# skiff's producer defaults (src/kafka/sink_kafka.c) that kcat takes; no
# statistics.interval.ms: skiff sets it only with listeners= or a bandwidth cap.
KCAT_AS_SKIFF = ("enable.idempotence=true", "acks=all", "linger.ms=5", "message.timeout.ms=0",
                 "partitioner=murmur2_random", "queue.buffering.max.messages=5000",
                 "queue.buffering.max.kbytes=2048", "client.id=skiff",
                 "log.connection.close=false")


def start_kcat(bootstrap, topic, log):
    """`kcat -P` with skiff's producer settings, waiting on its stdin (a pipe
    this side keeps open), or None when kcat is not on PATH."""
    if not shutil.which("kcat"):
        return None
    argv = ["kcat", "-P", "-b", bootstrap, "-t", topic]
    for kv in KCAT_AS_SKIFF:
        argv += ["-X", kv]
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)


def stop_kcat(k):
    """End of input: kcat has nothing to flush and exits."""
    k.stdin.close()
    try:
        k.wait(30)
    except subprocess.TimeoutExpired:
        stop_process(k)


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
    k = None if args.no_kcat else start_kcat(bootstrap, f"bench-idle-kcat-{n}", log)
    res = {}
    try:
        pids = {"skiff": p.pid, **({"kcat": k.pid} if k else {})}
        idle = idle_windows(pids, args.settle, args.window, args.windows)
        res["idle"], res["threads"] = idle["skiff"]
        if k:
            res["kcat"], res["kcat_threads"] = idle["kcat"]
            stop_kcat(k)
            k = None
        res["rss"] = proc_rss_mb(p.pid)
        if args.strace and shutil.which("strace"):
            res["strace"] = strace_counts(p.pid, args.window)
        res["busy"] = busy_bytes(p.pid, d / "f00000.log", offsets, args.busy)
    finally:
        if k:
            stop_kcat(k)
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
        idle = idle_windows({"fb": p.pid}, args.settle, args.window, args.windows)["fb"][0]
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
    ap.add_argument("--no-kcat", action="store_true", help="no kcat -P floor in the idle windows")
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
    if "kcat" in r:
        kmed = statistics.median(r["kcat"])
        ratios = [s / k for s, k in zip(r["idle"], r["kcat"]) if k > 0] or [0.0]
        ns_s = sum(v[0] for v in r["threads"].values())
        ns_k = sum(v[0] for v in r["kcat_threads"].values())
        print(f"        kcat -P, skiff's producer settings, idle on stdin, same windows: "
              f"{kmed:.3f} ({min(r['kcat']):.3f}-{max(r['kcat']):.3f}) s/60s; skiff/kcat "
              f"{med / max(kmed, 1e-9):.2f}x (per window {min(ratios):.2f}-{max(ratios):.2f}); "
              f"by schedstat over all windows {ns_s:.3f} vs {ns_k:.3f} s/60s, "
              f"{ns_s / max(ns_k, 1e-9):.2f}x", flush=True)
    for who, key in (("skiff", "threads"), ("kcat", "kcat_threads")):
        if key in r:
            print(f"        {who} threads, CPU s / wakeups per 60 s: {fmt_threads(r[key])}",
                  flush=True)


def fmt_threads(thr):
    """'name cpu/wakeups, ...', librdkafka's rdk:* threads summed after them."""
    cells = [f"{c} {v[0]:.3f}/{v[1]:.0f}" for c, v in sorted(thr.items())]
    rdk = [v for c, v in thr.items() if c.startswith("rdk:")]
    own = [v for c, v in thr.items() if not c.startswith("rdk:")]
    return (", ".join(cells) + f"; rdk:* {sum(v[0] for v in rdk):.3f}/{sum(v[1] for v in rdk):.0f}"
            f", others {sum(v[0] for v in own):.3f}/{sum(v[1] for v in own):.0f}")


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
