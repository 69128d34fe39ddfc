#!/usr/bin/env python3
"""Benchmark (not a test) of skiff's resident memory (issue 10, "Memory").

  idle   VmRSS --settle s after start with 10 idle files already shipped
         (started again on its stored offsets, nothing written);
  load   peak RSS (ru_maxrss) of a run that ships --lines lines of ~150 B
         with default settings, until the topic holds them all;
  after  VmRSS --settle s after such a burst was delivered, with
         offset.flush.interval.ms=1000 (the flush after a burst gives back
         what it made resident; the default flushes after 60 s).

Each is the median of --reps runs, with PSS beside RSS (/proc/PID/
smaps_rollup: a shared library's pages divided among the processes that map
them) and the anonymous part (heap, thread arenas and stacks, slabs; the rest
is file-backed: libraries' pages, counted whole in RSS). The load run's
figures are from the sample of highest VmRSS (every 50 ms); its peak RSS is
ru_maxrss. With --before OTHER_SKIFF (e.g. a build of an older commit) both
binaries run interleaved in the same invocation and the ratios are printed.
--smaps prints where the idle RSS of the last run is, by mapping.

The floor: in the same invocation, each repetition also measures `kcat -P`
with skiff's producer settings (idempotence, acks=all, linger.ms=5, the same
queue bounds, statistics every 5 s) connected to the same broker, waiting on
its stdin after the same --settle s: what any librdkafka producer on this
system pays at idle (libc, librdkafka and the libcrypto/libssl it is linked
with, its threads). skiff's idle RSS and PSS are printed against it as a
ratio. A second kcat run without statistics.interval.ms shows what
librdkafka's statistics cost (its histograms, and libm's pow() tables).
--idle-only skips the load and after-burst runs.

--sqlite measures the SQLite source instead: peak RSS (ru_maxrss) of
shipping a table of --rows rows (bench_sqlite.py's readings) with
JdbcSourceConnector mode=incrementing and JsonConverter, schemas.enable
false and true, default settings but offset.flush.interval.ms=1000 (offsets
are written during the run), until the topic holds every row; each run's
topic must hold each id exactly once.

  python3 tests/bench/bench_memory.py [--skiff build-rel/skiff]
         [--before old/skiff] [--lines 300000] [--reps 3] [--smaps] [--idle-only]
         [--sqlite [--rows 500000]]

Use release builds: an ASan binary measures AddressSanitizer's shadow.
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "bench"))
from bench_file import NUMBER_RE, write_input  # noqa: E402
from benchlib import (check_delivered, local_broker, proc_rollup_kb, proc_rss_mb,  # noqa: E402
                      proc_smaps_kb, run_tool, stop_process, until_watermark)


# libmicrohttpd (the REST API, /metrics) and the libraries it alone pulls in.
MHD_CHAIN = ("libmicrohttpd", "libgnutls", "libp11-kit", "libnettle", "libhogweed", "libgmp",
             "libtasn1", "libidn2", "libunistring", "libffi")
# libsystemd (the journald source) and what only it needs; lz4, zstd and xz
# are shared with librdkafka and the compressed-rotation readers.
SYSTEMD_CHAIN = ("libsystemd", "libgcrypt", "libgpg-error", "libcap")
# What librdkafka loads for TLS and SASL whatever the configuration (the SASL
# plugins and libdb only with SASL/GSSAPI since e92a3c8).
# Cyrus SASL's plugins and the Berkeley DB one of them needs.
SASL_PLUGINS = ("libdb", "libdigestmd5", "libscram", "libntlm", "libsasldb", "libcrammd5",
                "libplain", "liblogin", "libanonymous", "libgssapiv2")
RDK_TLS_SASL = ("libcrypto", "libssl", "libsasl2", "libdb", "libdigestmd5", "libscram",
                "libntlm", "libsasldb", "libcrammd5", "libplain", "liblogin", "libanonymous",
                "libgssapiv2")


def find_pid(exe, arg):
    """The pid of a process running exe with arg, or None."""
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[0] == exe.encode() and arg.encode() in argv:
            return int(d.name)
    return None


def props(d, bootstrap, topic, files, extra=""):
    (d / "w.properties").write_text(
        f"bootstrap.servers={bootstrap}\noffset.storage.file.filename={d}/offsets\n{extra}"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"connectors.m.connector.class=FileStreamSource\nconnectors.m.files={files}\n"
        f"connectors.m.topic={topic}\n")
    return d / "w.properties"


def idle_run(skiff, d, bootstrap, settle, want_smaps):
    """smaps_rollup (kB) of a restart on stored offsets with 10 idle files."""
    d.mkdir()
    (d / "in").mkdir()
    for i in range(10):
        (d / "in" / f"f{i}.log").write_text(f"line 0 of file {i}\n")
    w = props(d, bootstrap, f"mem-idle-{d.name}", f"{d}/in/*.log")
    err = open(d / "stderr", "ab")
    for phase in ("ship", "idle"):
        p = subprocess.Popen([skiff, str(w)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
        try:
            time.sleep(settle)
            if phase == "idle":
                roll = proc_rollup_kb(p.pid)
                smaps = proc_smaps_kb(p.pid) if want_smaps else None
        finally:
            stop_process(p)
    return roll, smaps


# skiff's producer defaults (src/kafka/sink_kafka.c) that kcat can take.
KCAT_AS_SKIFF = ("enable.idempotence=true", "acks=all", "linger.ms=5", "message.timeout.ms=0",
                 "partitioner=murmur2_random", "queue.buffering.max.messages=5000",
                 "queue.buffering.max.kbytes=2048", "client.id=skiff",
                 "statistics.interval.ms=5000")


def kcat_idle_run(d, bootstrap, settle, want_smaps, stats=True):
    """smaps_rollup (kB) of `kcat -P` with skiff's producer settings (without
    statistics if not stats), settle s after it started, waiting on stdin
    (the floor of a librdkafka producer)."""
    d.mkdir()
    argv = ["kcat", "-P", "-b", bootstrap, "-t", f"mem-kcat-{d.name}"]
    for kv in KCAT_AS_SKIFF:
        if stats or not kv.startswith("statistics."):
            argv += ["-X", kv]
    with open(d / "stderr", "ab") as err:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=err)
    try:
        time.sleep(settle)
        roll = proc_rollup_kb(p.pid)
        smaps = proc_smaps_kb(p.pid) if want_smaps else None
    finally:
        p.stdin.close()  # end of input: kcat flushes nothing and exits
        try:
            p.wait(30)
        except subprocess.TimeoutExpired:
            stop_process(p)
    return roll, smaps


def print_smaps(who, smaps):
    anon = sum(v for k, v in smaps.items() if k.startswith("["))
    print(f"{who}: idle RSS by mapping: anonymous+heap+stacks {anon} kB, files "
          f"{sum(smaps.values()) - anon} kB; largest:")
    for name, kb in sorted(smaps.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {kb:6d} kB  {name}")


def load_run(skiff, d, src, n, bootstrap):
    """Peak RSS (MB) of shipping src's n lines, and the smaps_rollup (kB) of
    the sample with the highest RSS."""
    d.mkdir()
    topic = f"mem-load-{d.name}"
    w = props(d, bootstrap, topic, str(src))
    done = until_watermark(bootstrap, topic, n)
    top, pid = {}, []

    def until():
        # run_tool polls this every 50 ms: a sample of skiff's memory each time.
        if not pid or pid[0] is None:
            pid[:] = [find_pid(skiff, str(w))]
        roll = proc_rollup_kb(pid[0]) if pid[0] is not None else {}
        if roll.get("Rss", 0) > top.get("Rss", 0):
            top.clear()
            top.update(roll)
        return done()
    r = run_tool([skiff, str(w)], str(d), until=until)
    bad = check_delivered(bootstrap, topic, n, NUMBER_RE)
    if bad:
        sys.exit(f"bench_memory: {skiff}: {bad} (see {d}/bench.stderr)")
    return r["rss"], top


def after_run(skiff, d, src, n, bootstrap, settle):
    """VmRSS (MB) settle s after src's n lines were delivered."""
    d.mkdir()
    topic = f"mem-after-{d.name}"
    w = props(d, bootstrap, topic, str(src), "offset.flush.interval.ms=1000\n")
    done = until_watermark(bootstrap, topic, n)
    with open(d / "stderr", "ab") as err:
        p = subprocess.Popen([skiff, str(w)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
    try:
        end = time.monotonic() + 300
        while not done() and time.monotonic() < end:
            time.sleep(0.05)
        time.sleep(settle)
        return proc_rss_mb(p.pid)
    finally:
        stop_process(p)


def sqlite_run(skiff, d, db, n, bootstrap, schemas):
    """Peak RSS (MB) of shipping db's n rows, and the smaps_rollup (kB) of
    the sample with the highest RSS."""
    d.mkdir()
    prefix = f"mem-sql-{d.name}-"
    (d / "w.properties").write_text(
        f"bootstrap.servers={bootstrap}\noffset.storage.file.filename={d}/offsets\n"
        "offset.flush.interval.ms=1000\n"
        "value.converter=org.apache.kafka.connect.json.JsonConverter\n"
        f"value.converter.schemas.enable={schemas}\n"
        "connectors.m.connector.class=JdbcSourceConnector\n"
        f"connectors.m.connection.url=jdbc:sqlite:{db}\n"
        "connectors.m.mode=incrementing\nconnectors.m.table.whitelist=readings\n"
        f"connectors.m.topic.prefix={prefix}\n")
    done = until_watermark(bootstrap, prefix + "readings", n)
    top, pid = {}, []

    def until():
        if not pid or pid[0] is None:
            pid[:] = [find_pid(skiff, str(d / "w.properties"))]
        roll = proc_rollup_kb(pid[0]) if pid[0] is not None else {}
        if roll.get("Rss", 0) > top.get("Rss", 0):
            top.clear()
            top.update(roll)
        return done()
    r = run_tool([skiff, str(d / "w.properties")], str(d), until=until)
    bad = check_delivered(bootstrap, prefix + "readings", n, rb'"id":(\d+)', base=1)
    if bad:
        sys.exit(f"bench_memory: {skiff}: {bad} (see {d}/bench.stderr)")
    return r["rss"], top


def main_sqlite(args, bins):
    """The --sqlite runs: each binary, schemas.enable false and true,
    interleaved (the order rotates each repetition)."""
    from bench_sqlite import make_table
    work = Path(tempfile.mkdtemp(prefix="skiff-mem-sql-"))
    runs = [(k, b, sch) for k, b in bins.items() for sch in ("false", "true")]
    peak = {(k, sch): [] for k, _, sch in runs}
    anon = {(k, sch): [] for k, _, sch in runs}
    with local_broker(work / "kafka") as bootstrap:
        db = work / "app.db"
        make_table(db, args.rows)
        print(f"SQLite: {args.rows} rows, {db.stat().st_size / 1e6:.1f} MB; {args.reps} "
              f"repetitions, interleaved; {os.cpu_count()} CPUs; load average "
              f"{os.getloadavg()[0]:.1f}")
        for rep in range(args.reps):
            i = rep % len(runs)
            for k, b, sch in runs[i:] + runs[:i]:
                rss, top = sqlite_run(b, work / f"sql-{k}-{sch}-{rep}", db, args.rows,
                                      bootstrap, sch)
                peak[(k, sch)].append(rss)
                anon[(k, sch)].append(top.get("Anonymous", 0) / 1024.0)
        print(f"load average {os.getloadavg()[0]:.1f} at the end; every run delivered each "
              f"of the {args.rows} rows exactly once")
    for k, sch in peak:
        print(f"{k:7s} schemas.enable={sch:5s} peak RSS {fmt(peak[(k, sch)])}; anonymous at "
              f"the highest sample {statistics.median(anon[(k, sch)]):.1f} MB")
    if args.before:
        for sch in ("false", "true"):
            r = statistics.median(peak[("skiff", sch)]) / statistics.median(
                peak[("before", sch)])
            print(f"schemas.enable={sch}: peak RSS skiff/before = {r:.2f}")
    shutil.rmtree(work, ignore_errors=True)


def fmt(xs):
    return f"{statistics.median(xs):5.1f} MB (min {min(xs):.1f}, max {max(xs):.1f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", default=str(REPO / "build-rel" / "skiff"))
    ap.add_argument("--before", help="a skiff binary to compare with (e.g. the previous commit's)")
    ap.add_argument("--lines", type=int, default=300_000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--settle", type=float, default=4.0)
    ap.add_argument("--smaps", action="store_true")
    ap.add_argument("--idle-only", action="store_true", help="no load and after-burst runs")
    ap.add_argument("--sqlite", action="store_true",
                    help="peak RSS of the SQLite source shipping --rows rows instead")
    ap.add_argument("--rows", type=int, default=500_000)
    args = ap.parse_args()
    bins = {"skiff": os.path.abspath(args.skiff)}
    if args.before:
        bins = {"before": os.path.abspath(args.before), **bins}
    for b in bins.values():
        if not os.access(b, os.X_OK):
            sys.exit(f"bench_memory: {b} not built")
    if args.sqlite:
        return main_sqlite(args, bins)
    work = Path(tempfile.mkdtemp(prefix="skiff-mem-"))
    res = {k: {"idle": [], "load": [], "after": [], "idle_pss": [], "idle_anon": [],
               "load_pss": [], "load_anon": []} for k in bins}
    smaps = kcat_smaps = None
    kcat = {"idle": [], "idle_pss": [], "idle_anon": []}
    kcat_nostats = []
    with local_broker(work / "kafka") as bootstrap:
        src = work / "lines.log"
        if not args.idle_only:
            write_input(src, args.lines)
            print(f"{args.lines} lines of {src.stat().st_size / args.lines:.0f} B; ", end="")
        print(f"{args.reps} repetitions, interleaved; {os.cpu_count()} CPUs; load average "
              f"{os.getloadavg()[0]:.1f}")
        for rep in range(args.reps):
            order = list(bins.items())
            for k, b in order[rep % len(order):] + order[:rep % len(order)]:
                roll, sm = idle_run(b, work / f"idle-{k}-{rep}", bootstrap, args.settle,
                                    args.smaps and k == "skiff")
                res[k]["idle"].append(roll.get("Rss", 0) / 1024.0)
                res[k]["idle_pss"].append(roll.get("Pss", 0) / 1024.0)
                res[k]["idle_anon"].append(roll.get("Anonymous", 0) / 1024.0)
                smaps = sm or smaps
                if args.idle_only:
                    continue
                peak, top = load_run(b, work / f"load-{k}-{rep}", src, args.lines, bootstrap)
                res[k]["load"].append(peak)
                res[k]["load_pss"].append(top.get("Pss", 0) / 1024.0)
                res[k]["load_anon"].append(top.get("Anonymous", 0) / 1024.0)
                res[k]["after"].append(after_run(b, work / f"after-{k}-{rep}", src, args.lines,
                                                 bootstrap, args.settle))
            if shutil.which("kcat"):
                roll, sm = kcat_idle_run(work / f"idle-kcat-{rep}", bootstrap, args.settle,
                                         args.smaps)
                kcat["idle"].append(roll.get("Rss", 0) / 1024.0)
                kcat["idle_pss"].append(roll.get("Pss", 0) / 1024.0)
                kcat["idle_anon"].append(roll.get("Anonymous", 0) / 1024.0)
                kcat_smaps = sm or kcat_smaps
                roll, _ = kcat_idle_run(work / f"idle-kcat-nostats-{rep}", bootstrap,
                                        args.settle, False, stats=False)
                kcat_nostats.append(roll.get("Rss", 0) / 1024.0)
    for k in bins:
        if args.idle_only:
            print(f"{k:7s} idle RSS {fmt(res[k]['idle'])}")
        else:
            print(f"{k:7s} idle RSS {fmt(res[k]['idle'])}   peak RSS {fmt(res[k]['load'])}   "
                  f"after the burst {fmt(res[k]['after'])}")
        med = {m: statistics.median(v) for m, v in res[k].items() if v}
        load = "" if args.idle_only else (
            f";   at the highest sample of the load: PSS {med['load_pss']:.1f} MB, anonymous "
            f"{med['load_anon']:.1f} MB")
        print(f"{'':7s} idle PSS {med['idle_pss']:.1f} MB, anonymous {med['idle_anon']:.1f} MB "
              f"(file-backed {med['idle'] - med['idle_anon']:.1f} MB){load}")
    if kcat["idle"]:
        med = {m: statistics.median(v) for m, v in kcat.items()}
        print(f"kcat -P with skiff's producer settings, idle: RSS {fmt(kcat['idle'])}, PSS "
              f"{med['idle_pss']:.1f} MB, anonymous {med['idle_anon']:.1f} MB (the floor)")
        print(f"kcat -P the same without statistics.interval.ms, idle: RSS {fmt(kcat_nostats)}")
        for k in bins:
            print(f"{k}/kcat at idle: RSS "
                  f"{statistics.median(res[k]['idle']) / med['idle']:.2f}, PSS "
                  f"{statistics.median(res[k]['idle_pss']) / med['idle_pss']:.2f}, anonymous "
                  f"{statistics.median(res[k]['idle_anon']) / med['idle_anon']:.2f}")
    else:
        print("kcat not on PATH: no floor measured")
    if args.before:
        for m in ("idle",) if args.idle_only else ("idle", "load", "after"):
            r = statistics.median(res["skiff"][m]) / statistics.median(res["before"][m])
            print(f"{m}: skiff/before = {r:.2f}")
    if kcat_smaps:
        print_smaps("kcat", kcat_smaps)
        sasl = sum(v for k, v in kcat_smaps.items() if k.startswith(SASL_PLUGINS))
        print(f"kcat's Cyrus SASL plugins and libdb (skiff loads them only for GSSAPI): {sasl} kB")
    if smaps:
        print_smaps("skiff", smaps)
        mhd = sum(v for k, v in smaps.items() if k.startswith(MHD_CHAIN))
        print(f"libmicrohttpd and the libraries only it needs (gnutls, p11-kit, ...): {mhd} kB")
        tls = sum(v for k, v in smaps.items() if k.startswith(RDK_TLS_SASL))
        print(f"librdkafka's TLS and SASL libraries and plugins: {tls} kB")
        sd = sum(v for k, v in smaps.items() if k.startswith(SYSTEMD_CHAIN))
        print(f"libsystemd and the libraries only it needs (gcrypt, gpg-error, cap): {sd} kB")
        print(f"libsqlite3: {sum(v for k, v in smaps.items() if k.startswith('libsqlite3'))} kB")


if __name__ == "__main__":
    main()
