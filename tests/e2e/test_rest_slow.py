"""Slow and hostile clients cannot starve the REST API (issue 26): with 300
slowloris connections from 40 loopback addresses /health answered after
34 s; the per-address cap refused local probes and most requests of 50 local
clients; a 1 MB body got its 413 after 26 s and a 50 MB chunked one none.
Now each new connection evicts, when the listener is full, the one that has
waited longest without a complete request from the address holding the
most; no address is refused; a body over rest.max.body.bytes is answered 413
as soon as that is known. The pipeline ships meanwhile."""

import contextlib
import json
import os
import signal
import socket
import threading
import time

import pytest

from harness import consume
from restlib import client_storm, request, start_skiff, wait_for

NAME = "local-file-source"


def write_lines(path, lo, hi):
    with open(path, "a") as f:
        f.write("".join(f"line {i}\n" for i in range(lo, hi + 1)))


class Slowloris:
    """n connections, from the given source addresses in turn, each sending
    a request line and then a header byte a second, for as long as it runs."""

    def __init__(self, port, n, sources=("127.0.0.1",)):
        self.socks, self.done = [], threading.Event()
        for i in range(n):
            try:
                s = socket.socket()
                s.settimeout(2)
                s.bind((sources[i % len(sources)], 0))
                s.connect(("127.0.0.1", port))
                s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                self.socks.append(s)
            except OSError:
                pass
        self.thread = threading.Thread(target=self._drip, daemon=True)
        self.thread.start()

    def _drip(self):
        while not self.done.wait(1):
            for s in self.socks:
                try:
                    s.sendall(b"X")
                except OSError:
                    pass

    def stop(self):
        self.done.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def probe(port, timeout=1.0):
    """Seconds /health took, or None when it was not answered in timeout."""
    t0 = time.monotonic()
    try:
        r = request(port, "GET", "/health", timeout=timeout)
    except OSError:
        return None
    return time.monotonic() - t0 if r.status == 200 else None


@pytest.mark.serial
def test_health_within_a_second_under_300_slowloris(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic)
    sources = [f"127.0.0.{i}" for i in range(2, 42)]
    slow = Slowloris(port, 300, sources)
    try:
        write_lines(src, 1, 1000)
        took = [probe(port) for _ in range(20)]
        assert slow.thread.is_alive()
        assert all(t is not None for t in took), took  # each within 1 s
        print(f"FIGURE rest.health_under_300_slowloris: max {max(took):.3f} s, "
              f"median {sorted(took)[10]:.3f} s ({len(slow.socks)} slow connections)")
        got = consume(kafka.bootstrap, topic, n=1000)
        assert [json.loads(r["value"])["payload"] for r in got] == \
            [f"line {i}" for i in range(1, 1001)]
    finally:
        slow.stop()
    assert sk.running()
    assert sk.stop() == 0


def test_local_probes_and_clients_never_refused(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic)
    # A slowloris from the probes' own address.
    slow = Slowloris(port, 100)
    try:
        took = [probe(port, timeout=5) for _ in range(24)]
        assert all(t is not None for t in took), took
    finally:
        slow.stop()
    # 50 local clients at once, each a stream of requests: none refused.
    done, failed = client_storm(port, f"/connectors/{NAME}/status")
    print(f"FIGURE rest.local_clients: {done} requests of 50 clients, "
          f"{len(failed)} failed")
    assert done > 100 and failed == [], failed[:5]
    assert sk.stop() == 0


# ---- requests in flight are never cut ---------------------------------------------
# CI once saw 1 of 30,496 requests of the 50 local clients above closed
# without a reply (RemoteDisconnected), and /tmp stress loops of that test
# with rest.max.connections=52 lost 49 of 67,061: the listener counted the
# connections it had cut and those their clients had closed but that
# libmicrohttpd had not freed yet, so it "made room" among live clients;
# and the connection it picked was one accepted in the same run whose whole
# request sat unread in its socket (libmicrohttpd accepts before it reads),
# older than the idle ones served since. These tests stop skiff (SIGSTOP)
# while clients connect, so that they all meet in one turn, as they did.

HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@contextlib.contextmanager
def stopped(sk):
    """skiff stopped (SIGSTOP) inside the block: a loaded device's turn that
    takes long while connections and requests arrive."""
    os.kill(sk.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(sk.pid, signal.SIGCONT)


def connect(port, source="127.0.0.1"):
    s = socket.socket()
    s.settimeout(5)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def whole_reply(s, timeout=5):
    """The status of the whole reply read from s (its body too, so that the
    connection can be used again), or None when it was closed without one."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            b = s.recv(4096)
            if not b:
                return None
            data += b
        head, body = data.split(b"\r\n\r\n", 1)
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        while len(body) < length:
            b = s.recv(4096)
            if not b:
                return None
            body += b
    except OSError:
        return None
    return int(head.split(b" ")[1])


def served(port, source):
    """A keep-alive connection from source that has had one reply."""
    s = connect(port, source)
    s.sendall(HEAD + b"\r\n")
    assert whole_reply(s) == 200
    return s


def test_whole_requests_are_never_evicted(tmp_path, kafka, topic):
    """Six clients send their whole request to a listener of four while
    skiff's turn is long: all six are answered (the listener holds them above
    rest.max.connections until they are; before, the fifth and sixth evicted
    the first two, whose requests were whole in their sockets)."""
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, {"rest.max.connections": 4})
    with stopped(sk):
        socks = [connect(port) for _ in range(6)]
        for s in socks:
            s.sendall(HEAD + b"\r\n")
    assert [whole_reply(s) for s in socks] == [200] * 6
    for s in socks:
        s.close()
    assert sk.stop() == 0


def test_cut_and_closed_connections_leave_room(tmp_path, kafka, topic):
    """A listener of four: its four connections are cut for
    rest.request.timeout.ms, or closed by their clients, in the turn in which
    four new clients arrive, whose requests come in two parts (a slow link):
    the four are not evicted, as the listener is not full (before: three of
    them were, the cut and closed connections still being counted)."""
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, {
        "rest.max.connections": 4, "rest.request.timeout.ms": 2000})

    def four_new_clients(hold):
        with stopped(sk):
            hold()
            news = [connect(port) for _ in range(4)]
            for s in news:
                s.sendall(b"GET /health HTTP/1.1\r\n")
        time.sleep(0.3)  # accepted, their first parts read
        for s in news:
            s.sendall(b"Host: 127.0.0.1\r\n\r\n")
        got = [whole_reply(s) for s in news]
        for s in news:
            s.close()
        return got

    # Four slow keep-alive clients from the same address, each half-way
    # through its next request: skiff wakes after their time is up.
    slow = [served(port, "127.0.0.1") for _ in range(4)]
    for s in slow:
        s.sendall(b"GET /health HTTP/1.1\r\n")
    assert four_new_clients(lambda: time.sleep(2.3)) == [200] * 4
    for s in slow:
        s.close()
    # Four keep-alive clients, one from each of four other addresses, that
    # closed their connections meanwhile (the newcomers' address then holds
    # the most: before, it lost its own oldest connection each time).
    idle = [served(port, f"127.0.0.{i}") for i in range(2, 6)]
    assert four_new_clients(lambda: [s.close() for s in idle]) == [200] * 4
    assert sk.stop() == 0


def test_refused_bodies_leave_room(tmp_path, kafka, topic):
    """A listener of four holds four clients whose bodies were refused 413 in
    their middle (their reply is written; each is kept a second so that its
    client reads it, not a reset): four new clients are not evicted for them
    (before: three were, while the refused ones waited out their second; a
    hostile run of ten 50 MB chunked senders at once lost one reply so)."""
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, {
        "rest.max.connections": 4, "rest.max.body.bytes": 1024})
    refused = [connect(port) for _ in range(4)]
    for s in refused:
        s.sendall(f"PATCH /connectors/{NAME}/offsets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                  f"800\r\n{'[' * 2048}\r\n".encode())
    assert [read_reply(s, 5) for s in refused] == [413] * 4
    with stopped(sk):
        news = [connect(port) for _ in range(4)]
        for s in news:
            s.sendall(b"GET /health HTTP/1.1\r\n")
    time.sleep(0.3)
    for s in news:
        s.sendall(b"Host: 127.0.0.1\r\n\r\n")
    assert [whole_reply(s) for s in news] == [200] * 4
    for s in news + refused:
        s.close()
    assert sk.stop() == 0


def test_request_arriving_as_the_timeout_passes_is_answered(tmp_path, kafka, topic):
    """A keep-alive client sends its next whole request just as
    rest.request.timeout.ms passes since its last reply, in the turn that
    finds the time up: the request has arrived, so it is answered (before:
    the connection was cut, the client got a close with no reply)."""
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic,
                              {"rest.request.timeout.ms": 2000})
    s = served(port, "127.0.0.1")
    with stopped(sk):
        time.sleep(2.3)
        s.sendall(HEAD + b"\r\n")
    assert whole_reply(s) == 200
    # A request that is not whole when the time is up is cut, as before.
    s.sendall(b"GET /health HTTP/1.1\r\n")
    assert whole_reply(s, timeout=10) is None
    s.close()
    assert sk.stop() == 0


def read_reply(s, timeout):
    """The status of the reply on s, read within timeout (None: none)."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n" not in data:
            b = s.recv(4096)
            if not b:
                break
            data += b
    except (OSError, socket.timeout):
        pass
    return int(data.split(b" ")[1]) if data.startswith(b"HTTP/1.1 ") else None


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


@pytest.mark.serial
def test_slow_readers_of_a_large_metrics_page(tmp_path, kafka, topic):
    """Hostile finding: /metrics of 3,000 file partitions is 3.8 MB, and each
    of 60 clients that asked for it without reading held its own copy: RSS
    from 16 to 186 MB (a device's unit has 64 MB), /health unanswered for
    more than a second in 7 of 25 probes (each render took 125 ms, a
    byte a printf call). One render now serves every request that comes
    while it is being sent."""
    many = tmp_path / "many"
    many.mkdir()
    for i in range(3000):
        (many / f"f{i:05d}-{'x' * 60}.log").write_text(f"hello {i}\n")
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic, {
        # Every partition's series on the page (the default shows the 100
        # most active): the large page is what this test is about.
        "metrics.partition.limit": "5000",
        "connectors.many.connector.class": "FileStreamSource",
        "connectors.many.files": str(many / "*.log"),
        "connectors.many.topic": topic + "-many"})

    def partitions():
        r = request(port, "GET", "/metrics", timeout=10)
        return r.raw.count(b"skiff_partition_records_acked_total{") >= 3000 and len(r.raw)
    size = wait_for(partitions, 60, 0.5, "3,000 partitions in /metrics")
    base = rss_kb(sk.proc.pid)
    socks = []
    for i in range(60):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((f"127.0.0.{2 + i % 20}", 0))
        s.connect(("127.0.0.1", port))
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        socks.append(s)
    try:
        took, peak = [], base
        for _ in range(10):
            took.append(probe(port))
            peak = max(peak, rss_kb(sk.proc.pid))
            time.sleep(0.3)
    finally:
        for s in socks:
            s.close()
    print(f"FIGURE rest.metrics_slow_readers: a {size}-byte page, 60 readers: RSS "
          f"{base} -> {peak} kB, /health max "
          f"{max(t for t in took if t is not None):.3f} s")
    assert all(t is not None for t in took), took
    # A copy per reader is 60 pages (before: 21 -> 305 MB). One shared page
    # costs 2 (10 MB in a Release build); an ASan build keeps each render's
    # freed growth buffers in its quarantine: 41 MB, 9 pages. 20 tells them
    # apart in either build.
    assert peak - base < 20 * size // 1024, (base, peak)
    assert sk.running()
    assert sk.stop() == 0


def test_oversized_bodies_413_at_once(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic)
    path = f"/connectors/{NAME}/offsets"
    # A 1 MB body: 413 when the headers say so.
    s = socket.create_connection(("127.0.0.1", port))
    t0 = time.monotonic()
    s.sendall(f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              f"Content-Length: 1000000\r\n\r\n".encode())
    try:
        s.sendall(b"{" * 1000000)
    except OSError:
        pass  # closed after the 413, as it should
    status = read_reply(s, 5)
    took = time.monotonic() - t0
    s.close()
    assert status == 413
    print(f"FIGURE rest.413_content_length: {took:.3f} s")
    assert took < 1
    # 50 MB chunked, streamed: 413 as soon as the limit is passed, while the
    # client still sends.
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(f"PATCH {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
              f"Transfer-Encoding: chunked\r\n\r\n".encode())
    got, sent = [None], [0]

    def reader():
        got[0] = read_reply(s, 10)
    rt = threading.Thread(target=reader)
    t0 = time.monotonic()
    rt.start()
    chunk = b"%x\r\n%s\r\n" % (65536, b"[" * 65536)
    try:
        while sent[0] < 50 * 1024 * 1024 and rt.is_alive():
            s.sendall(chunk)
            sent[0] += 65536
    except OSError:
        pass
    rt.join()
    took = time.monotonic() - t0
    s.close()
    assert got[0] == 413, got
    print(f"FIGURE rest.413_chunked: {took:.3f} s after {sent[0]} bytes sent")
    assert took < 1
    # Under the limit a body is taken; the limit is the worker's key.
    assert request(port, "PATCH", path, b"{" + b" " * 200000 + b"}").status == 400
    assert sk.stop() == 0
    sk2, port2, _ = start_skiff(tmp_path, kafka.bootstrap, topic,
                                {"rest.max.body.bytes": 4096}, name="small")
    assert request(port2, "PATCH", path, b"{" + b" " * 5000 + b"}").status == 413
    assert request(port2, "PATCH", path, b"{" + b" " * 3000 + b"}").status == 400
    assert sk2.running()
    assert sk2.stop() == 0
