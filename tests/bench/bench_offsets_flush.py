#!/usr/bin/env python3
"""Benchmark (not a test) of what one offset flush costs with many entries
in the store (issue 22, item 3: many files; offsets_log's build of the
journal record).

tests/tools/offsetsbench puts N file-source offsets into a file store,
writes the base, then --flushes times changes --changed of them and
flushes (journal appends, as a skiff tailing N files of which a few are
written to): the process CPU time (user + system, fsync included) of each
flush, its median per run. Before issue 22's change a flush compared every
entry with the journal's shadow (N hash lookups and string compares to
append one offset); now it walks the store's list of what changed.

Medians of --reps runs (min-max); with --before OTHER_TOOL (offsetsbench
built on the commit before: copy tests/tools/offsetsbench.c into that
tree, it uses only offsets.h) both run interleaved in the same invocation,
the order turning each repetition, and the ratios are printed.

  python3 tests/bench/bench_offsets_flush.py [--tool build-rel/offsetsbench]
         [--before old/offsetsbench] [--n 1000,5000,20000] [--reps 5]
         [--flushes 200] [--changed 1]

Use release builds: an ASan binary measures AddressSanitizer.
"""

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one(tool, n, flushes, changed):
    with tempfile.TemporaryDirectory(prefix="skiff-ob-") as d:
        out = subprocess.run([tool, d, str(n), str(flushes), str(changed)], check=True,
                             capture_output=True, text=True).stdout
    return float(re.search(r"cpu_us_median=([0-9.]+)", out).group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default=str(REPO / "build-rel" / "offsetsbench"))
    ap.add_argument("--before")
    ap.add_argument("--n", default="1000,5000,20000")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--flushes", type=int, default=200)
    ap.add_argument("--changed", type=int, default=1)
    args = ap.parse_args()
    tools = [("after", args.tool)] + ([("before", args.before)] if args.before else [])
    print(f"one flush's CPU (us), {args.changed} offset(s) changed, median of "
          f"{args.flushes} flushes per run, median (min-max) of {args.reps} runs")
    for n in (int(x) for x in args.n.split(",")):
        got = {name: [] for name, _ in tools}
        for rep in range(args.reps):
            order = tools if rep % 2 == 0 else tools[::-1]
            for name, tool in order:
                got[name].append(one(tool, n, args.flushes, args.changed))
        line = f"N={n:6d}"
        for name, _ in tools:
            v = got[name]
            line += f"  {name} {statistics.median(v):8.1f} ({min(v):.1f}-{max(v):.1f})"
        if args.before:
            line += (f"  ratio after/before "
                     f"{statistics.median(got['after']) / statistics.median(got['before']):.3f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
