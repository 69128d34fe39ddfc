#!/usr/bin/env python3
"""Loops test_rest_slow.py's test_local_probes_and_clients_never_refused
against one skiff, and counts the requests closed without a reply.

    python3 tests/e2e/stress_rest_clients.py [ITERATIONS] [key=value ...]

Each iteration: 100 slowloris connections from 127.0.0.1, 24 /health probes,
the slowloris stopped, then 50 clients each sending
GET /connectors/NAME/status on a new connection in a loop for 5 s. The
key=value pairs go to worker.properties (rest.max.connections=52 makes the
listener nearly full of the 50 clients: what once cost 1 request in 30,496
then costs dozens an iteration). No broker is needed: the REST API answers
without one. SKIFF_BIN picks the binary (default build-asan/skiff).

Not a test: it asserts nothing and takes a minute; CI failures of that test
are reproduced with it."""

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Skiff  # noqa: E402
from restlib import free_port, request, wait_up  # noqa: E402
from test_rest_slow import Slowloris  # noqa: E402

NAME = "local-file-source"


def iteration(port):
    slow = Slowloris(port, 100)
    for _ in range(24):
        try:
            request(port, "GET", "/health", timeout=5)
        except OSError:
            pass
    slow.stop()
    stop, failed, done = threading.Event(), [], [0]

    def client():
        while not stop.is_set():
            try:
                request(port, "GET", f"/connectors/{NAME}/status", timeout=10)
                done[0] += 1
            except OSError as e:
                failed.append(repr(e))
    threads = [threading.Thread(target=client) for _ in range(50)]
    for t in threads:
        t.start()
    time.sleep(5)
    stop.set()
    for t in threads:
        t.join()
    return done[0], failed


def main():
    iters = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    extra = dict(a.split("=", 1) for a in sys.argv[2:])
    tmp = Path(tempfile.mkdtemp(prefix="skiff-stress-rest-"))
    port = free_port()
    src = tmp / "app.log"
    src.touch()
    worker = {"bootstrap.servers": "127.0.0.1:1", "offset.storage.file.filename": tmp / "offsets",
              "listeners": f"http://127.0.0.1:{port}", **extra}
    sk = Skiff(tmp, worker, [{"name": NAME, "connector.class": "FileStreamSource",
                              "tasks.max": 1, "file": src, "topic": "t"}]).start()
    total_ok = total_failed = 0
    try:
        wait_up(port)
        for i in range(iters):
            ok, failed = iteration(port)
            total_ok += ok
            total_failed += len(failed)
            print(f"iteration {i}: {ok} answered, {len(failed)} failed {failed[:2]}", flush=True)
            time.sleep(1)
    finally:
        sk.proc.terminate()
        sk.proc.wait()
    print(f"{total_ok} answered, {total_failed} closed without a reply "
          f"({iters} iterations, {extra or 'defaults'}, {sk.args[0]}; log {sk.log_file})")


if __name__ == "__main__":
    main()
