"""What the benchmarks share: measuring a process (wall, CPU, peak RSS) until a
condition holds, and a local broker for the run."""

import contextlib
import os
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
    """A Kafka broker of the benchmark's own in directory; yields its bootstrap."""
    out = subprocess.check_output([str(KAFKA_SH), "start", str(directory)]).decode()
    bootstrap = out.strip().splitlines()[-1]
    try:
        yield bootstrap
    finally:
        subprocess.run([str(KAFKA_SH), "stop", str(directory)], stdout=subprocess.DEVNULL)
