"""A real Kafka Connect 3.9.1 worker (from tests/rest/connect.sh's Maven
fetch) for the tests that compare skiff's offsets with Connect's own:
standalone (its Java-serialized offsets file) or distributed (its offsets
topic). Connect's JVM takes 10-20 s to start on 2 cores: one run per module."""

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request

import harness

LOG4J = ("log4j.rootLogger=WARN, stdout\n"
         "log4j.appender.stdout=org.apache.log4j.ConsoleAppender\n"
         "log4j.appender.stdout.layout=org.apache.log4j.PatternLayout\n"
         "log4j.appender.stdout.layout.ConversionPattern=%d %p %m%n\n")


def libs():
    """The classpath directory (fetched with Maven when not cached); without
    java, or without mvn when nothing is cached, harness.missing()."""
    harness.require_tool("java", "openjdk-17-jre-headless")
    r = subprocess.run([str(harness.REPO / "tests" / "rest" / "connect.sh"), "fetch"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if r.returncode == 77:
        harness.missing("mvn not found and Connect's jars are not cached", "maven")
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout.decode().strip()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(port, method, path, body=None, timeout=10):
    """(status, parsed JSON or None) of one request to Connect's REST API."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw, status = r.read(), r.status
    except urllib.error.HTTPError as e:
        raw, status = e.read(), e.code
    except OSError:
        return None, None
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode(errors="replace")  # Jetty's page while it starts


def wait_for(pred, timeout, what, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Connect:
    """One Connect worker process in directory d: mode "standalone" (with
    connector property files) or "distributed" (connectors by REST)."""

    def __init__(self, d, mode, worker, connectors=(), jvm_args=(), admin_port=None):
        self.dir = d
        d.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        props = dict(worker, listeners=f"http://127.0.0.1:{self.port}")
        self.admin_port = admin_port
        if admin_port is not None:
            props["admin.listeners"] = f"http://127.0.0.1:{admin_port}"
        (d / "worker.properties").write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        files = []
        for i, c in enumerate(connectors):
            f = d / f"connector-{i}.properties"
            f.write_text("".join(f"{k}={v}\n" for k, v in c.items()))
            files.append(str(f))
        (d / "log4j.properties").write_text(LOG4J)
        cls = ("org.apache.kafka.connect.cli.ConnectStandalone" if mode == "standalone"
               else "org.apache.kafka.connect.cli.ConnectDistributed")
        self.log = d / "connect.log"
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(
                ["java", "-Xmx256m", f"-Dlog4j.configuration=file:{d}/log4j.properties",
                 *jvm_args, "-cp", f"{libs()}/*", cls, str(d / "worker.properties"), *files],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True)

    def rest(self, method, path, body=None):
        return http(self.port, method, path, body)

    def wait_up(self, timeout=120):
        wait_for(lambda: self.proc.poll() is None and self.rest("GET", "/")[0] in (200, 401) or
                 self.proc.poll() is not None, timeout, "Connect's REST API")
        assert self.proc.poll() is None, self.log.read_text()[-3000:]

    def stop(self):
        """SIGTERM (Connect commits its offsets on the way out), then SIGKILL."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
