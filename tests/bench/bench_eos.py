#!/usr/bin/env python3
"""Benchmark (not a test): the CPU exactly-once costs against at-least-once
(docs/exactly-once.md), in the three ways a device runs, each shipped by skiff
from one file to one local Kafka 3.9.1 broker:

  tail-100     an application appends numbered lines of ~148 bytes at 100
               lines/s for --window s (20); CPU is measured over that window,
               after skiff caught up with a first few lines
  tail-3000    ... at 3,000 lines/s
  backlog      a file of --lines (300,000) such lines shipped from its start;
               CPU until the offsets file holds its end (with exactly-once
               the file is written after the transaction that carried the
               last line committed), and "+stop": with the SIGTERM that
               follows (utime+stime of every thread, from /proc and wait4)

in modes (--modes)

  alo          at least once, offsets in the file and offset.storage.topic:
               the reference of the ratios (the store exactly-once needs)
  eos-poll     exactly.once.source.support=enabled, transaction.boundary=poll
               (the default)
  eos-interval ... transaction.boundary=interval, 1000 ms

with offset.flush.interval.ms=1000 (--flush-ms) and the same producer
delivery settings in every mode (enable.idempotence=true, acks=all,
linger.ms=5, message.timeout.ms=60000: exactly-once's own). A warm-up run of
each mode on a fresh broker first (thrown away); then --reps repetitions
(5), the modes interleaved and their order rotating each repetition, a fresh
topic and offsets topic per run. Every run's topic is read back
read_committed (kcat's default) and must hold each line number exactly once,
or the benchmark stops. Also counted per run: the records skiff wrote to
the offsets topic (per second of the window), and its transactions.

Prints per scenario and mode the median and min-max of the CPU, and the
ratios against alo: of the medians, and the median (min-max) of each
repetition's ratio against the alo run beside it.

  python3 tests/bench/bench_eos.py [--skiff build/skiff] [--reps 5]
      [--scenarios tail-100,tail-3000,backlog] [--lines 300000] [--window 20]

Use a release build (cmake -S . -B build -DCMAKE_BUILD_TYPE=Release); the
machine's load average is printed at the start and the end: a shared machine
makes single figures noisy, and interleaving is what keeps the ratios fair.
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

from benchlib import REPO, check_delivered, high_watermark, local_broker, thread_sample  # noqa: E402

import offsetfile  # noqa: E402  (tests/e2e, on the path through benchlib)

NUMBER_RE = rb"(\d{9}) 2026-11-30T02"
MODES = ["alo", "eos-poll", "eos-interval"]
SCENARIOS = ["tail-100", "tail-3000", "backlog"]
FIRST_LINES = 10  # a tail run starts measuring once these are in the topic


def line(i):
    return (f"{i:09d} 2026-11-30T02:00:00.000Z gateway-7 sensor=temp value={i % 997}.5 "
            f"unit=C status=ok site=edge-07 note=the-quick-brown-fox-jumps-over-the-lazy-dog\n")


def write_lines(path, first, n):
    with open(path, "a") as f:
        f.write("".join(line(i) for i in range(first, first + n)))


def worker_text(mode, d, src, topic, bootstrap, flush_ms):
    lines = [f"bootstrap.servers={bootstrap}",
             f"offset.storage.file.filename={d}/offsets",
             f"offset.flush.interval.ms={flush_ms}",
             f"offset.storage.topic={topic}-offsets", "offset.storage.replication.factor=1",
             "producer.enable.idempotence=true", "producer.acks=all", "producer.linger.ms=5",
             "producer.message.timeout.ms=60000",
             "value.converter=org.apache.kafka.connect.storage.StringConverter",
             "connectors.bench.connector.class=FileStreamSource",
             f"connectors.bench.file={src}", f"connectors.bench.topic={topic}"]
    if mode.startswith("eos"):
        lines.append("exactly.once.source.support=enabled")
    if mode == "eos-interval":
        lines += ["connectors.bench.transaction.boundary=interval",
                  "connectors.bench.transaction.boundary.interval.ms=1000"]
    return "\n".join(lines) + "\n"


def cpu_s(pid):
    """utime+stime of pid's live threads (s), from schedstat (ns): ticks of
    10 ms are too coarse for 1% of a core over 20 s."""
    return sum(ns for _, ns, _ in thread_sample(pid).values()) / 1e9


def at_end(store, src):
    key = offsetfile.key("bench", {"filename": str(src)})
    end = src.stat().st_size
    try:
        v = offsetfile.load(store).get(key)
    except Exception:  # noqa: BLE001 - mid-rename or not written yet
        return False
    return v is not None and v.get("position") == end


def wait_for(cond, timeout, what, p):
    deadline = time.monotonic() + timeout
    while not cond():
        if p.poll() is not None:
            sys.exit(f"bench: skiff exited {p.returncode} while waiting for {what}")
        if time.monotonic() > deadline:
            sys.exit(f"bench: no {what} within {timeout} s")
        time.sleep(0.02)


def append_at(path, first, rate, seconds):
    """Appends lines numbered from first at rate lines/s for seconds, a
    write(2) each tick (10 ms, or 1 ms above 100 lines/s) of the lines due.
    Returns how many it wrote."""
    tick = 0.01 if rate <= 100 else 0.001
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    t0 = time.monotonic()
    n = 0
    try:
        while True:
            el = time.monotonic() - t0
            due = min(int(el * rate), int(seconds * rate))
            if due > n:
                os.write(fd, "".join(line(first + i) for i in range(n, due)).encode())
                n = due
            if el >= seconds:
                return n
            time.sleep(tick)
    finally:
        os.close(fd)


def offsets_records(bootstrap, topic, t0_ms=None, t1_ms=None):
    """(records, of them a transaction's) in topic's offsets topic, read
    read_committed, timestamped within [t0_ms, t1_ms) when given. A
    transaction's offset records carry no skiff.store header (the store's
    own writes do)."""
    r = subprocess.run(["kcat", "-C", "-q", "-e", "-b", bootstrap, "-t", f"{topic}-offsets",
                        "-f", "%T %h\n"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    n = txn = 0
    for ln in r.stdout.decode(errors="replace").splitlines():
        ts, _, headers = ln.partition(" ")
        if t0_ms is not None and not t0_ms <= int(ts) < t1_ms:
            continue
        n += 1
        txn += "skiff.store=" not in headers
    return n, txn


def start_skiff(skiff, d):
    err = open(d / "bench.stderr", "ab")
    return subprocess.Popen([skiff, str(d / "worker.properties")], cwd=str(d),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)


def stop_skiff(p):
    """SIGTERM, then the exit; returns utime+stime of the whole run (wait4)."""
    p.send_signal(signal.SIGTERM)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"bench: skiff exited {p.returncode} at SIGTERM")
    return ru.ru_utime + ru.ru_stime


def run_backlog(mode, d, topic, bootstrap, skiff, args):
    src = args.backlog_file
    (d / "worker.properties").write_text(
        worker_text(mode, d, src, topic, bootstrap, args.flush_ms))
    t0 = time.monotonic()
    p = start_skiff(skiff, d)
    last = [0.0]

    def done():  # samples the threads each time: a thread may end before the stop
        last[0] = cpu_s(p.pid)
        return at_end(d / "offsets", src)
    wait_for(done, 600, "end of the backlog in the offsets file", p)
    wall = time.monotonic() - t0
    total = stop_skiff(p)
    n = args.lines
    return {"cpu": last[0], "stop": total, "wall": wall, "n": n, "rate": None,
            "offsets": offsets_records(bootstrap, topic)}


def run_tail(mode, d, topic, bootstrap, skiff, args, rate):
    src = d / "lines.log"
    src.write_text("")
    (d / "worker.properties").write_text(
        worker_text(mode, d, src, topic, bootstrap, args.flush_ms))
    p = start_skiff(skiff, d)
    write_lines(src, 0, FIRST_LINES)
    wait_for(lambda: high_watermark(bootstrap, topic) >= FIRST_LINES, 120,
             "first lines in the topic", p)
    time.sleep(1.0)  # the first transaction's commit, the first flush
    c0, t0, e0 = cpu_s(p.pid), time.monotonic(), time.time()
    n = append_at(src, FIRST_LINES, rate, args.window)
    c1, t1, e1 = cpu_s(p.pid), time.monotonic(), time.time()
    # Until the last line is stored: then the stop has nothing left to send.
    wait_for(lambda: at_end(d / "offsets", src), 120, "end of the file in the offsets file",
             p)
    stop_skiff(p)
    return {"cpu": (c1 - c0) / (t1 - t0), "stop": None, "wall": t1 - t0,
            "n": FIRST_LINES + n, "rate": rate,
            "offsets": offsets_records(bootstrap, topic, int(e0 * 1000), int(e1 * 1000))}


def one_run(scenario, mode, work, run_id, bootstrap, skiff, args):
    d = work / f"{scenario}-{mode}-{run_id}"
    d.mkdir()
    topic = f"bench-{scenario}-{mode}-{run_id}"
    if scenario == "backlog":
        r = run_backlog(mode, d, topic, bootstrap, skiff, args)
    else:
        r = run_tail(mode, d, topic, bootstrap, skiff, args, int(scenario.split("-")[1]))
    bad = check_delivered(bootstrap, topic, r["n"], NUMBER_RE)
    if bad:
        sys.exit(f"bench: {scenario} {mode} run {run_id}: {bad} (see {d}/bench.stderr)")
    shutil.rmtree(d, ignore_errors=True)
    return r


def fmt_range(xs, f):
    return f"{f(statistics.median(xs))} ({f(min(xs))}-{f(max(xs))})"


def summarize(scenario, results, modes):
    ref = results["alo"]
    tail = scenario != "backlog"
    unit = "% of a core" if tail else "CPU s"
    pct = (lambda x: f"{100 * x:.2f}") if tail else (lambda x: f"{x:.3f}")
    print(f"\n{scenario}: {unit}, median (min-max) of {len(ref)}; ratios against alo")
    for m in modes:
        runs = results[m]
        cpu = [r["cpu"] for r in runs]
        paired = [a["cpu"] / b["cpu"] for a, b in zip(runs, ref)]
        cells = [f"{m:13}", f"{fmt_range(cpu, pct):>24}",
                 f"x{statistics.median(cpu) / statistics.median([r['cpu'] for r in ref]):.2f}",
                 f"paired x{fmt_range(paired, lambda x: f'{x:.2f}')}"]
        if not tail:
            stop = [r["stop"] for r in runs]
            cells.append(f"+stop {fmt_range(stop, lambda x: f'{x:.3f}')} x"
                         f"{statistics.median(stop) / statistics.median([r['stop'] for r in ref]):.2f}")
        per = [r["offsets"][0] / (r["wall"] if tail else 1) for r in runs]
        txn = [r["offsets"][1] / (r["wall"] if tail else 1) for r in runs]
        what = "offsets records/s" if tail else "offsets records"
        cells.append(f"{what} {statistics.median(per):.1f} (transactions' "
                     f"{statistics.median(txn):.1f})")
        print("  " + "  ".join(cells))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--window", type=float, default=20.0)
    ap.add_argument("--flush-ms", type=int, default=1000)
    args = ap.parse_args()
    scenarios = args.scenarios.split(",")
    modes = args.modes.split(",")
    if "alo" not in modes or not set(modes) <= set(MODES) or not set(scenarios) <= set(SCENARIOS):
        sys.exit(f"bench: modes among {MODES} with alo; scenarios among {SCENARIOS}")
    if not os.access(args.skiff, os.X_OK):
        sys.exit(f"bench: {args.skiff} not built")
    skiff = os.path.abspath(args.skiff)
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-eos-"))
    args.backlog_file = work / "backlog.log"
    write_lines(args.backlog_file, 0, args.lines)
    commit = subprocess.run(["git", "-C", str(REPO), "describe", "--always", "--dirty"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    print(f"{time.strftime('%Y-%m-%d %H:%M')}, commit {commit}, {args.skiff}; {args.reps} "
          f"repetitions; backlog {args.lines} lines; tail window {args.window:g} s; "
          f"offset.flush.interval.ms={args.flush_ms}; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f}", flush=True)
    with local_broker(work / "kafka") as bootstrap:
        for m in modes:  # a warm broker: its first transactions, topics, segments
            one_run("backlog", m, work, "warmup", bootstrap, skiff, args)
        results = {s: {m: [] for m in modes} for s in scenarios}
        for rep in range(args.reps):
            k = rep % len(modes)
            for s in scenarios:
                for m in modes[k:] + modes[:k]:
                    results[s][m].append(one_run(s, m, work, rep, bootstrap, skiff, args))
            print(f"repetition {rep + 1} done, load average {os.getloadavg()[0]:.2f}",
                  flush=True)
        print(f"load average {os.getloadavg()[0]:.2f} at the end; every run delivered each "
              f"of its lines exactly once (read_committed)")
        for s in scenarios:
            summarize(s, results[s], modes)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
