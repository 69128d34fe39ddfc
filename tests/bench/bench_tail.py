#!/usr/bin/env python3
"""Benchmark (not a test) of the file source's many-file and rotation paths:

  glob      FILES files of LINES lines each under one glob, max.open.files=256
            (most files are closed and reopened by identity); CPU, wall time
            and peak RSS until every offset is at its file's end.
  rotate    one file rotated (rename + create) every ROTATE_EVERY lines while
            it is shipped: the same figures, and the rotations followed.

  python3 tests/bench/bench_tail.py [--files 1000] [--lines 1000] [--skiff build/skiff]

Use a release build (cmake -S . -B build && cmake --build build): the
default build-asan binary measures AddressSanitizer.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
sys.path.insert(0, str(REPO / "tests" / "bench"))
import offsetfile  # noqa: E402
from benchlib import run_measured  # noqa: E402

LINE = "{:09d} " + "x" * 140 + "\n"


def write_props(path, props):
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))


def done_when(offsets, want):
    """True once every partition in want (path -> (size, inode)) is at the
    end of that file (a rotated file of the same size does not count)."""
    def done():
        try:
            offs = offsetfile.load(offsets)
        except (FileNotFoundError, ValueError):
            return False
        got = {k: (v["position"], v.get("ino")) for k, v in offs.items()}
        return all(got.get(offsetfile.key("bench", {"filename": p})) == w for p, w in want.items())
    return done


def bench_glob(work, skiff, bootstrap, files, lines):
    d = work / "glob"
    d.mkdir()
    want = {}
    for i in range(files):
        p = d / f"f{i:05d}.log"
        p.write_text("".join(LINE.format(i * lines + j) for j in range(lines)))
        want[str(p)] = (p.stat().st_size, p.stat().st_ino)
    worker, conn = work / "glob-worker.properties", work / "glob-conn.properties"
    write_props(worker, {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "500",
                         "offset.storage.file.filename": str(work / "glob.offsets"),
                         "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    write_props(conn, {"name": "bench", "connector.class": "FileStreamSource",
                       "topic": "bench-glob", "files": f"{d}/*.log", "max.open.files": "256"})
    return run_measured([str(skiff), str(worker), str(conn)],
                        done_when(work / "glob.offsets", want), cwd=str(work),
                        stop_signal=15)


def bench_rotate(work, skiff, bootstrap, total, every):
    d = work / "rot"
    d.mkdir()
    log = d / "app.log"
    n, k = 0, 0
    while n < total:  # the rotations happened before skiff starts: a restart's worst case
        log.write_text("".join(LINE.format(i) for i in range(n, min(total, n + every))))
        n += every
        if n < total:
            k += 1
            log.rename(d / f"app.log.{k:05d}")
    worker, conn = work / "rot-worker.properties", work / "rot-conn.properties"
    write_props(worker, {"bootstrap.servers": bootstrap, "offset.flush.interval.ms": "500",
                         "offset.storage.file.filename": str(work / "rot.offsets"),
                         "value.converter": "org.apache.kafka.connect.storage.StringConverter"})
    write_props(conn, {"name": "bench", "connector.class": "FileStreamSource",
                       "topic": "bench-rot", "files": f"{log}*", "max.open.files": "256"})
    want = {str(log): (log.stat().st_size, log.stat().st_ino)}
    return run_measured([str(skiff), str(worker), str(conn)],
                        done_when(work / "rot.offsets", want), cwd=str(work), stop_signal=15), k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--lines", type=int, default=1000)
    ap.add_argument("--skiff", default=str(REPO / "build" / "skiff"))
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="skiff-bench-tail-"))
    kafka_sh = REPO / "tests" / "kafka" / "kafka.sh"
    bootstrap = subprocess.check_output([str(kafka_sh), "start", str(work / "kafka")]).decode().strip()
    try:
        total = args.files * args.lines
        wall, cpu, rss, rc = bench_glob(work, args.skiff, bootstrap, args.files, args.lines)
        print(f"glob:   {args.files} files x {args.lines} lines: {wall:.1f} s wall, "
              f"{cpu:.1f} s CPU, {total / cpu:.0f} lines per CPU second, peak RSS {rss:.1f} MB (exit {rc})")
        (wall, cpu, rss, rc), k = bench_rotate(work, args.skiff, bootstrap, total, max(1, total // 200))
        print(f"rotate: {total} lines in {k + 1} files ({k} rotated files read first as history, oldest first by birth time): "
              f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak RSS {rss:.1f} MB (exit {rc})")
    finally:
        subprocess.run([str(kafka_sh), "stop", str(work / "kafka")], stdout=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
