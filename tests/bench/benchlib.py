"""What the benchmarks share: measuring a process (wall, CPU, peak RSS) until a
condition holds, and a local broker for the run."""

import contextlib
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "tests" / "kafka" / "kafka.sh"
sys.path.insert(0, str(REPO / "tests" / "e2e"))


def run_measured(cmd, until, cwd, stop_signal=None, shell=False):
    """Runs cmd; calls until() every 20 ms until it is true (then sends
    stop_signal if given) or the process exits. Returns (wall, cpu, rss_mb, rc);
    wall is the time until() first held (or the exit). CPU and RSS include the
    children a shell pipeline waited for."""
    t0 = time.monotonic()
    with open(os.path.join(cwd, "bench.stderr"), "ab") as err:
        p = subprocess.Popen(cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, shell=shell)
    wall = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        if wall is None and until is not None and until():
            wall = time.monotonic() - t0
            if stop_signal:
                os.kill(p.pid, stop_signal)
        time.sleep(0.02)
    p.returncode = 0  # reaped above
    if wall is None:
        wall = time.monotonic() - t0
    return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


@contextlib.contextmanager
def local_broker(directory):
    """A Kafka broker of the benchmark's own in directory; yields its bootstrap.
    Its partitions keep everything: the test broker's 256 MiB retention would
    delete the first records of a large run before they are counted."""
    env = dict(os.environ, KAFKA_EXTRA_PROPERTIES="log.retention.bytes=-1")
    out = subprocess.check_output([str(KAFKA_SH), "start", str(directory)], env=env).decode()
    bootstrap = out.strip().splitlines()[-1]
    try:
        yield bootstrap
    finally:
        subprocess.run([str(KAFKA_SH), "stop", str(directory)], stdout=subprocess.DEVNULL)


# --- Side-by-side comparisons (bench_file.py, bench_sqlite.py) ---------------

def _task_files(pid, *names):
    """(tid, [text of /proc/PID/task/TID/NAME for each name]) for each live
    thread of pid; threads that end while read are left out."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return
    for t in tasks:
        try:
            yield int(t), [Path(f"/proc/{pid}/task/{t}/{n}").read_text() for n in names]
        except FileNotFoundError:
            continue


def _tree_cpu(pid):
    """utime+stime (s) of pid's threads by name: {comm: seconds}."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for _, (s,) in _task_files(pid, "stat"):
        comm = s[s.index("(") + 1:s.rindex(")")]
        fields = s[s.rindex(")") + 2:].split()
        out[comm] = out.get(comm, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def own_thread_share(pid):
    """The share of a live process's CPU spent outside librdkafka's threads
    (those librdkafka names rdk:*), from /proc/PID/task/*/stat."""
    cpu = _tree_cpu(pid)
    total = sum(cpu.values())
    own = sum(v for k, v in cpu.items() if not k.startswith("rdk:"))
    return own / total if total else None


def pid_of(argv):
    """The pid of the process running argv, or None. A tool may rewrite its
    command line (kcat cuts -X name=value at the '='): when a wrapper runs it
    (run_tool's /usr/bin/time), that wrapper's command line ending with argv
    names it, as its child."""
    want = ("\0".join(argv) + "\0").encode()
    exact = None
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                line = f.read()
        except OSError:
            continue
        if line == want:
            exact = int(d)
        elif line.endswith(b"\0" + want):
            child = _child(int(d))
            return child if child != int(d) else None
    return exact


def exit_share(argv):
    """For a tool that exits by itself (kcat): (until, share). until() is for
    run_tool (never true): each call samples argv's process's threads; share()
    is then the share of its CPU outside librdkafka's rdk:* threads, from the
    sample with the most CPU in all (its last before threads began to exit:
    an exited thread leaves /proc/PID/task, and its CPU with it)."""
    pid, best = [], {}

    def until():
        if not pid:
            found = pid_of(argv)
            if found is None:
                return False
            pid.append(found)
        cpu = _tree_cpu(pid[0])
        if sum(cpu.values()) >= sum(best.values()):
            best.clear()
            best.update(cpu)
        return False

    def share():
        total = sum(best.values())
        own = sum(v for k, v in best.items() if not k.startswith("rdk:"))
        return own / total if total else None
    return until, share


def _child(pid):
    """The first child of pid (the process /usr/bin/time runs), or pid."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
    except FileNotFoundError:
        kids = []
    return int(kids[0]) if kids else pid


def run_tool(cmd, cwd, until=None, stop_signal=signal.SIGTERM, shell=False, env=None,
             stdout=None):
    """Runs cmd under /usr/bin/time to its exit, or until until() holds
    (polled every 50 ms), then measures its threads and sends stop_signal to
    it. Returns a dict: wall (s, to exit or to until()), cpu (utime + stime
    of the process and the children it waited for), rss (peak, MiB, of it or
    its largest child, as GNU time reports it), rc, own (share of CPU outside
    rdk:* threads when until() ended the run). stdout: a file for cmd's
    standard output (default: discarded).
    Why time: a child forked from this Python starts with Python's resident
    set, which its own ru_maxrss then counts."""
    t0 = time.monotonic()
    rssf = os.path.join(cwd, "bench.maxrss")
    argv = ["sh", "-c", cmd] if shell else list(cmd)
    with open(os.path.join(cwd, "bench.stderr"), "ab") as err, \
            open(stdout or os.devnull, "wb") as out:
        p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", rssf, *argv], cwd=cwd,
                             stdin=subprocess.DEVNULL, stdout=out,
                             stderr=err, env=env, start_new_session=True)
    wall = own = None
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        if wall is None and until is not None and until():
            wall = time.monotonic() - t0
            child = _child(p.pid)
            own = own_thread_share(child)
            os.kill(child, stop_signal)
        time.sleep(0.05)
    p.returncode = 0  # reaped above
    if wall is None:
        wall = time.monotonic() - t0
    with open(rssf) as f:
        rss = int(f.read().split()[-1]) / 1024.0
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rss": rss,
            "rc": os.waitstatus_to_exitcode(status), "own": own}


def high_watermark(bootstrap, topic):
    """The end offset of topic's partition 0 (-1 when it does not exist yet)."""
    r = subprocess.run(["kcat", "-Q", "-b", bootstrap, "-t", f"{topic}:0:-1"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL)
    m = re.search(rb"\[0\] offset (-?\d+)", r.stdout)
    return int(m.group(1)) if r.returncode == 0 and m else -1


def until_watermark(bootstrap, topic, n, every=0.2):
    """An until() for run_tool: true once topic holds n records (checked
    every `every` s: each check runs kcat -Q)."""
    last = [0.0]

    def done():
        now = time.monotonic()
        if now - last[0] < every:
            return False
        last[0] = now
        return high_watermark(bootstrap, topic) >= n
    return done


def check_delivered(bootstrap, topic, n, number_re, base=0):
    """Reads topic back with kcat and checks that it holds each number
    base..base+n-1 (found by number_re's first group in each value) exactly
    once. Returns "" or what is wrong."""
    r = subprocess.run(["kcat", "-C", "-q", "-e", "-b", bootstrap, "-t", topic, "-f", "%s\n"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        return f"kcat -C exited {r.returncode}: {r.stderr.decode(errors='replace')[-200:]}"
    nums = [int(x) - base for x in re.findall(number_re, r.stdout)]
    seen = bytearray(n)
    dup = bad = 0
    for x in nums:
        if not 0 <= x < n:
            bad += 1
        elif seen[x]:
            dup += 1
        else:
            seen[x] = 1
    missing = n - sum(seen)
    if dup or bad or missing:
        return f"read {len(nums)}: {missing} missing, {dup} duplicates, {bad} out of range"
    return ""


def summarize(results, ref, extra=None):
    """Prints, per tool, the median and min-max of CPU s, wall s and peak RSS
    over its runs, and the ratios of the medians to ref's. results: {name:
    [run dicts]}; extra(name, runs) may return a string for the last column."""
    med = {k: {m: statistics.median(r[m] for r in v) for m in ("cpu", "wall", "rss")}
           for k, v in results.items() if v}
    print(f"{'':34} {'CPU s':>17} {'wall s':>17} {'peak RSS MiB':>19} {'CPU x':>6} "
          f"{'wall x':>6}")
    for name, runs in results.items():
        if not runs:
            continue
        cells = []
        for m, fmt in (("cpu", "{:.2f}"), ("wall", "{:.2f}"), ("rss", "{:.1f}")):
            xs = [r[m] for r in runs]
            cells.append(f"{fmt.format(med[name][m])} ({fmt.format(min(xs))}-"
                         f"{fmt.format(max(xs))})")
        ratio = (f"{med[name]['cpu'] / med[ref]['cpu']:6.2f} "
                 f"{med[name]['wall'] / med[ref]['wall']:6.2f}" if ref in med else "")
        tail = extra(name, runs) if extra else ""
        print(f"{name:34} {cells[0]:>17} {cells[1]:>17} {cells[2]:>19} {ratio} {tail}")
    print(f"medians over the runs (min-max in brackets); ratios of medians against '{ref}'.")


# --- Sampling a live process (/proc/PID) (bench_memory.py, bench_idle.py) ---

def proc_field(pid, name, key):
    """The number after "key:" in /proc/PID/name (status: kB, io: bytes), 0
    when the file has no such line."""
    for line in Path(f"/proc/{pid}/{name}").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def proc_rss_mb(pid):
    """VmRSS of pid, MiB."""
    return proc_field(pid, "status", "VmRSS") / 1024.0


def proc_cpu_s(pid):
    """utime+stime of pid (all its threads), seconds, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rollup_kb(pid):
    """{Rss, Pss, Anonymous: kB} of /proc/PID/smaps_rollup, or {} once gone."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if parts[0] in ("Rss:", "Pss:", "Anonymous:"):
            out[parts[0][:-1]] = int(parts[1])
    return out


def proc_smaps_kb(pid):
    """{mapping name: Rss kB} of /proc/PID/smaps, anonymous mappings as [anon]."""
    out, name = {}, None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if "-" in parts[0] and len(parts) >= 5 and not parts[0].endswith(":"):
            name = os.path.basename(parts[5]) if len(parts) > 5 else "[anon]"
        elif parts[0] == "Rss:":
            out[name] = out.get(name, 0) + int(parts[1])
    return out


def stop_process(p):
    """SIGTERM to the Popen p, then SIGKILL if it has not exited within 30 s."""
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


# --- Per-thread idle cost (bench_idle.py) -----------------------------------

def thread_sample(pid):
    """{tid: (comm, on-CPU ns, times scheduled in)} of pid's live threads, from
    /proc/PID/task/TID/schedstat: nanoseconds, where /proc/PID/stat counts
    10 ms ticks (an idle thread's 60 s is a few ticks). Each time a sleeping
    thread wakes it is scheduled in once, so the count is its wakeups (and
    preemptions, which an idle process hardly has)."""
    out = {}
    for tid, (comm, sched) in _task_files(pid, "comm", "schedstat"):
        try:
            run_ns, _, slices = sched.split()[:3]
        except ValueError:
            continue
        out[tid] = (comm.strip(), int(run_ns), int(slices))
    return out


def thread_delta(before, after):
    """{comm: [CPU s, wakeups]} between two thread_sample()s, threads of one
    name summed; a thread in only one of them (started or exited between) is
    left out."""
    out = {}
    for tid, (comm, ns, slices) in after.items():
        if tid in before:
            acc = out.setdefault(comm, [0.0, 0])
            acc[0] += (ns - before[tid][1]) / 1e9
            acc[1] += slices - before[tid][2]
    return out


def one_line_files(d, n):
    """n files f00000.log ... in d (made), one line each ("line I of file I"):
    the many-files benches' glob."""
    d.mkdir(parents=True)
    for i in range(n):
        (d / f"f{i:05d}.log").write_text(f"line {i} of file {i}\n")
