#!/usr/bin/env python3
"""Loops a scenario of test_rest_slow.py against one skiff, and counts the
requests closed without a reply (or answered other than 200).

    python3 tests/e2e/stress_rest_clients.py clients|chunked [ITERATIONS] [key=value ...]

clients (test_local_probes_and_clients_never_refused): each iteration, 100
slowloris connections from 127.0.0.1, 24 /health probes, the slowloris
stopped, then 50 clients each sending GET /connectors/NAME/status on a new
connection in a loop for 5 s. rest.max.connections=52 makes the listener
nearly full of the 50 clients: what once cost 1 request in 30,496 then cost
dozens an iteration.

chunked (the hostile run's): each iteration, 10 clients at once each stream
a 50 MB chunked body, reading for its 413 meanwhile (the iterations back to
back, so that the refused connections of one are still kept when the next
comes).

The key=value pairs go to worker.properties. No broker is needed: the REST
API answers without one. SKIFF_BIN picks the binary (default
build-asan/skiff).

Not a test: it asserts nothing and takes a minute; CI failures of that test
are reproduced with it."""

import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import Skiff  # noqa: E402
from restlib import client_storm, free_port, request, wait_up  # noqa: E402
from test_rest_slow import Slowloris, read_reply  # noqa: E402

NAME = "local-file-source"


def clients(port):
    slow = Slowloris(port, 100)
    for _ in range(24):
        try:
            request(port, "GET", "/health", timeout=5)
        except OSError:
            pass
    slow.stop()
    return client_storm(port, f"/connectors/{NAME}/status")


def chunked_sender(port, out, i):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"PATCH /connectors/{NAME}/offsets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    got, sent = [None], 0

    def reader():
        got[0] = read_reply(s, 10)
    rt = threading.Thread(target=reader)
    rt.start()
    chunk = b"%x\r\n%s\r\n" % (65536, b"[" * 65536)
    try:
        while sent < 50 * 1024 * 1024 and rt.is_alive():
            s.sendall(chunk)
            sent += 65536
    except OSError:
        pass
    rt.join()
    s.close()
    out[i] = got[0]


def chunked(port):
    out = [None] * 10
    threads = [threading.Thread(target=chunked_sender, args=(port, out, i)) for i in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out.count(413), [f"status {x}" for x in out if x != 413]


def main():
    scenario = {"clients": clients, "chunked": chunked}[sys.argv[1]]
    iters = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    extra = dict(a.split("=", 1) for a in sys.argv[3:])
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
            ok, failed = scenario(port)
            total_ok += ok
            total_failed += len(failed)
            print(f"iteration {i}: {ok} answered, {len(failed)} failed {failed[:2]}", flush=True)
            if scenario is clients:
                time.sleep(1)
    finally:
        sk.proc.terminate()
        sk.proc.wait()
    print(f"{sys.argv[1]}: {total_ok} answered, {total_failed} failed (no reply or not 200) "
          f"({iters} iterations, {extra or 'defaults'}, {sk.args[0]}; log {sk.log_file})")


if __name__ == "__main__":
    main()
