"""Helpers for skiff's end-to-end tests: a real Kafka broker (tests/kafka/kafka.sh),
the consume tool (tests/tools/consume.c), and the skiff binary under test.

Paths come from the environment:
  SKIFF_BIN        the skiff binary        (default <repo>/build-asan/skiff)
  SKIFF_TOOLS      the built test tools    (default <repo>/build-asan)
  SKIFF_BOOTSTRAP  an already running broker to use instead of starting one
  KAFKA_VERSION    the broker version kafka.sh fetches (default 3.9.1)

Standard library and pytest only: it must run under Debian's python3-pytest 7.2
as well as newer pytest releases.
"""

import atexit
import base64
import importlib
import json
import os
import re
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
KAFKA_SH = REPO / "tests" / "kafka" / "kafka.sh"


def without_dtls_guess(options):
    """ASAN_OPTIONS with intercept_tls_get_addr=0 unless they say otherwise.
    The sanitizer runtime of GCC <= 13 takes a dynamic TLS block (GnuTLS's,
    dlopen'ed for https listeners) for glibc 2.19's when its address is 16
    past a page, and reads a bogus range from the two words before it: at
    exit LeakSanitizer's tracer then dies on SIGSEGV ("Tracer caught signal
    11", google/sanitizers#1322), a crash that comes and goes with the heap's
    layout. Heap leaks are still reported without it."""
    if "intercept_tls_get_addr" in options:
        return options
    return f"{options}:intercept_tls_get_addr=0" if options else "intercept_tls_get_addr=0"


class HarnessError(AssertionError):
    """A test's precondition or helper failed; the message says what to do."""


def plain_skiff(required=True):
    """A skiff built without sanitizers: SKIFF_PLAIN_BIN, else
    build-release/skiff (scripts/test.sh builds it before the end-to-end
    tests), else build-plain/skiff. For what ASan gets in the way of: RSS
    that means something, RLIMIT_AS, many processes on two cores. None
    found: None, or with required skip_unless_ci."""
    for p in (os.environ.get("SKIFF_PLAIN_BIN"), REPO / "build-release" / "skiff",
              REPO / "build-plain" / "skiff"):
        if p and Path(p).is_file() and os.access(p, os.X_OK):
            return Path(p)
    if required:
        skip_unless_ci("no skiff built without sanitizers (scripts/test.sh builds it: "
                       "cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release && "
                       "cmake --build build-release --target skiff)")
    return None


def skiff_bin():
    """Path of the skiff binary under test; fails clearly when it is missing."""
    p = Path(os.environ.get("SKIFF_BIN") or REPO / "build-asan" / "skiff")
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise HarnessError(
            f"skiff binary not found at {p}: build it (cmake -S . -B build-asan "
            f"-DSKIFF_SANITIZE=ON && cmake --build build-asan -j2) or set SKIFF_BIN")
    return p


def tool(name):
    """Path of a test tool built from tests/tools/NAME.c; fails clearly when missing."""
    d = Path(os.environ.get("SKIFF_TOOLS") or REPO / "build-asan")
    p = d / name
    if not (p.is_file() and os.access(p, os.X_OK)):
        raise HarnessError(
            f"test tool {name} not found at {p}: build it (cmake --build {d} --target {name}) "
            f"or set SKIFF_TOOLS to the build directory that has it")
    return p


def unique_topic(prefix="t"):
    """A topic name no other test uses: PREFIX-<10 hex digits>."""
    prefix = re.sub(r"[^A-Za-z0-9._-]", "-", prefix)[:200]
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# --- what a test needs, and the skips a CI run accepts -------------------------
#
# A test that needs a program, a Python module or a file that the project
# installs (scripts/install-deps.sh) asks for it with require_tool(),
# require_module() or missing() (skip_unless_ci() for what scripts/test.sh
# builds): on a developer's machine without it the test is skipped, naming
# the package that brings it; under CI=true it fails, for there its absence
# is the project's fault, not the machine's. The other skips
# say why they are legitimate through skip_long_profile(), skip_not_here() or
# skip_by_chance(); under CI=true conftest.py turns every other skip (a bare
# pytest.skip, pytest.importorskip, a skipif) into a failure. (pytest is
# imported where it is used: the benchmarks import this module without it.)

SKIP_LONG = "long profile only"   # scripts/test.sh --long (SKIFF_PROFILE=long)
SKIP_NOT_HERE = "not possible here"  # no root or no namespaces; an external broker
SKIP_CHANCE = "not this time"     # the file system did not do what the case needs
LEGIT_SKIPS = (SKIP_LONG, SKIP_NOT_HERE, SKIP_CHANCE)


def in_ci():
    """Whether this is a CI run (CI set, and not to 0/false/no): .ci/run sets
    CI=true; most CI services do too."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what, package):
    """Skips the test (fails it under CI=true): WHAT, which PACKAGE of
    scripts/install-deps.sh brings, is not there."""
    skip_unless_ci(f"{what}: scripts/install-deps.sh installs {package}")


def skip_unless_ci(reason):
    """Skips the test on a developer's machine and fails it under CI=true:
    REASON names what the project's own scripts install or build (a package,
    scripts/test.sh's build-release) and this machine lacks."""
    import pytest
    if in_ci():
        pytest.fail(f"CI=true: {reason}; a CI run does not skip for what the project "
                    f"installs or builds", pytrace=False)
    _skip(reason)


def require_tool(name, package):
    """The path of the program NAME on PATH; missing() when there is none."""
    path = shutil.which(name)
    if path is None:
        missing(f"{name} not found on PATH", package)
    return path


def require_module(name, package):
    """The Python module NAME, imported; missing() when it cannot be."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"python3 cannot import {name} ({e})", package)


def skip_long_profile(what):
    """Skips a case that runs only in the long profile (minutes to hours)."""
    _skip(f"{SKIP_LONG} (scripts/test.sh --long): {what}")


def skip_not_here(why):
    """Skips a case this machine cannot run whatever is installed: no root or
    no CAP_SYS_ADMIN for a mount, namespaces refused (a chroot, a container),
    an external broker (SKIFF_BOOTSTRAP)."""
    _skip(f"{SKIP_NOT_HERE}: {why}")


def skip_by_chance(why):
    """Skips a run in which the kernel or the file system did not do what the
    case needs (an inode not reused); another run may."""
    _skip(f"{SKIP_CHANCE}: {why}")


def _skip(msg):
    """pytest.skip, reported at the test (pytest names the line that raised:
    this one) through pytest's own flag for it, private since pytest 7.0."""
    import pytest
    try:
        exc = pytest.skip.Exception(msg, _use_item_location=True)
    except TypeError:
        exc = pytest.skip.Exception(msg)
    raise exc


def legit_skip(reason):
    """Whether a skip's reason is one a CI run accepts (see above)."""
    return reason.startswith(LEGIT_SKIPS)


# --- the broker ---------------------------------------------------------------

_live_brokers = set()


class Broker:
    """A broker run by tests/kafka/kafka.sh in its own directory.

    external=True wraps a broker this harness did not start (SKIFF_BOOTSTRAP):
    it has a bootstrap address and nothing else.
    """

    def __init__(self, directory=None, bootstrap=None, security=False):
        self.dir = Path(directory) if directory else None
        self._bootstrap = bootstrap
        self.external = directory is None
        # TLS and SASL listeners too (kafka.sh --security); see security().
        self.with_security = security

    def _sh(self, cmd, timeout=180):
        if self.external:
            raise HarnessError(
                f"kafka {cmd}: not possible on the external broker at {self._bootstrap} "
                f"(SKIFF_BOOTSTRAP); use the kafka_private fixture for outage tests")
        try:
            flag = ["--security"] if self.with_security and cmd in ("prepare", "start") else []
            r = subprocess.run([str(KAFKA_SH), cmd, *flag, str(self.dir)], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise HarnessError(f"kafka.sh {cmd} {self.dir}: no answer in {timeout}s") from e
        out = r.stdout.decode(errors="replace").strip()
        if r.returncode != 0 and not (cmd == "status" and r.returncode == 1):
            raise HarnessError(f"kafka.sh {cmd} {self.dir} exited {r.returncode}:\n"
                               f"{r.stderr.decode(errors='replace')}")
        return r.returncode, out

    @property
    def bootstrap(self):
        """127.0.0.1:PORT; fixed from prepare on, across stops and restarts."""
        if self._bootstrap is None:
            self._bootstrap = self._sh("bootstrap")[1]
        return self._bootstrap

    def prepare(self):
        """Config and formatted storage, no process. Returns the bootstrap."""
        self._bootstrap = self._sh("prepare")[1]
        return self._bootstrap

    def start(self):
        """Starts (preparing first when needed) and waits until it serves."""
        _live_brokers.add(self)
        self._bootstrap = self._sh("start")[1].splitlines()[-1]
        return self._bootstrap

    def stop(self):
        """SIGTERM, then SIGKILL after 30 s."""
        self._sh("stop")
        _live_brokers.discard(self)

    def kill(self):
        """SIGKILL at once: a crash, not a shutdown."""
        self._sh("kill")
        _live_brokers.discard(self)

    def pause(self):
        """SIGSTOP: the broker holds its connections and answers nothing."""
        self._sh("pause")

    def resume(self):
        """SIGCONT after pause()."""
        self._sh("resume")

    def running(self):
        if self.external:
            return True
        return self._sh("status")[0] == 0

    def log_text(self):
        """The broker's own log (logs/server.log), '' when there is none."""
        if self.external:
            return ""
        try:
            return (self.dir / "logs" / "server.log").read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def security(self):
        """What a client of the TLS and SASL listeners needs (security=True):
        a dict of DIR/security, e.g. SSL, MTLS, SASL_SSL, BADHOST, EXPIRED
        (host:port), SCRAM_USER/SCRAM_PASSWORD, PLAIN_USER/PLAIN_PASSWORD, CA,
        OTHER_CA, CLIENT_CERT/CLIENT_KEY, EXPIRED_CLIENT_CERT/EXPIRED_CLIENT_KEY."""
        if self.external or not self.with_security:
            raise HarnessError("no TLS/SASL listeners: use Broker(dir, security=True)")
        text = (self.dir / "security").read_text()
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def __repr__(self):
        return f"Broker({self.dir or 'external'}, {self._bootstrap})"


@atexit.register
def _kill_brokers():
    # Last resort when the fixtures' teardown did not run (an interpreter exit
    # in the middle of a session); a clean session has none left.
    for b in list(_live_brokers):
        try:
            b.kill()
        except Exception:  # noqa: BLE001 - nothing better to do at exit
            pass


class LateBroker:
    """A running broker behind a door that opens at .start(): until then its
    .bootstrap (127.0.0.1:PORT) refuses connections, as a broker that is down
    does; then every connection is forwarded to the broker. Clients learn the
    broker's own address from its metadata and talk to it directly after that.
    To a client this is a broker that came up late, without one of its own
    (a JVM start) for the test. .kill() shuts the door again."""

    def __init__(self, broker):
        self._target = broker.bootstrap.rsplit(":", 1)
        self._target = (self._target[0], int(self._target[1]))
        # The port is held from here on: bound, not listening (a connection
        # is refused, as by a broker that is down). Picked and released
        # here to be bound again at start(), it was taken meanwhile once
        # ("Address already in use"), by another test's broker or door.
        self._held = _bind_below_ephemeral()
        self.port = self._held.getsockname()[1]
        self.bootstrap = f"127.0.0.1:{self.port}"
        self._server = None
        self._socks = []
        self._lock = threading.Lock()

    def start(self):
        """Opens the door; returns the bootstrap address."""
        if self._server is None:
            if self._held is None:  # started again after kill(): its port again
                self._held = _bind_below_ephemeral(self.port)
            self._server, self._held = self._held, None
            self._server.listen()
            threading.Thread(target=self._accept, args=(self._server,), daemon=True).start()
        return self.bootstrap

    def kill(self):
        """Closes the door and every connection through it."""
        server, self._server = self._server, None
        if server is not None:
            # close() alone leaves the thread blocked in accept() holding the
            # listening socket open; shutdown() wakes it.
            try:
                server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            server.close()
        held, self._held = self._held, None
        if held is not None:
            held.close()
        with self._lock:
            socks, self._socks = self._socks, []
        for s in socks:
            s.close()

    def _accept(self, server):
        while True:
            try:
                client, _ = server.accept()
            except OSError:
                return  # closed by kill()
            try:
                upstream = socket.create_connection(self._target, timeout=10)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)  # the 10 s were for connecting: idle is fine
            with self._lock:
                self._socks += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src, dst):
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _bind_below_ephemeral(port=None):
    """A TCP socket bound to 127.0.0.1 (to PORT, or to a free port below the
    kernel's ephemeral range, as kafka.sh picks its ports, so that no client
    connection takes it), not listening. Without SO_REUSEADDR: while it is
    bound nobody else can bind the port, listening or not."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(1 if port else 200):
        s = socket.socket()
        if port:  # the door's own port again: its old connections may linger
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port or (random.randint(10000, low - 1) if low > 11000 else 0)))
        except OSError:
            s.close()
            continue
        return s
    raise HarnessError(f"no free port for a late broker's door ({port or 'any'})")


# --- the consume tool ----------------------------------------------------------


class ConsumeTimeout(AssertionError):
    """consume(n=...) saw fewer than n records in time; .records has those it saw."""

    def __init__(self, msg, records):
        super().__init__(msg)
        self.records = records


def _b64(v):
    return None if v is None else base64.b64decode(v)


def _record(line):
    j = json.loads(line)
    return {
        "partition": j["partition"],
        "offset": j["offset"],
        "timestamp": j["timestamp"],
        "key": _b64(j["key"]),
        "value": _b64(j["value"]),
        "headers": [(h[0], _b64(h[1])) for h in j["headers"]],
    }


def consume(bootstrap, topic, n=None, timeout=30, isolation=None, allow_timeout=False):
    """Records of a topic as dicts: partition, offset, timestamp (ms), key and
    value (bytes or None), headers (list of (str, bytes or None)).

    n=None: everything up to the high watermarks as of now; a missing topic is
    empty. n=N: waits up to timeout seconds for the topic and at least N records,
    then returns everything up to the high watermarks of that moment; with fewer,
    raises ConsumeTimeout, or returns what came when allow_timeout.
    isolation: "read_committed" or "read_uncommitted" (the default).
    """
    cmd = [str(tool("consume")), "-b", bootstrap, "-t", topic, "-T", str(int(timeout * 1000))]
    if n is not None:
        cmd += ["-n", str(n)]
    if isolation:
        cmd += ["-x", isolation]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout + 60)
    except subprocess.TimeoutExpired as e:
        raise HarnessError(f"consume {topic}: tool hung past {timeout + 60}s") from e
    err = r.stderr.decode(errors="replace")
    records = [_record(line) for line in r.stdout.decode().splitlines() if line]
    if r.returncode == 3:
        if allow_timeout:
            return records
        raise ConsumeTimeout(f"consume {topic} from {bootstrap}: {len(records)} records, "
                             f"wanted {n if n is not None else 'the high watermark'} "
                             f"within {timeout}s\n{err}", records)
    if r.returncode != 0:
        raise HarnessError(f"consume {topic} from {bootstrap} exited {r.returncode}:\n{err}")
    return records


def create_topic(bootstrap, topic, partitions=1, timeout=30):
    """Creates TOPIC with PARTITIONS partitions (replication 1); fine if it exists.
    Returns when every partition has a leader."""
    r = subprocess.run([str(tool("consume")), "-b", bootstrap, "-t", topic,
                        "-c", str(partitions), "-T", str(int(timeout * 1000))],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout + 60)
    if r.returncode != 0:
        raise HarnessError(f"create topic {topic}: exit {r.returncode}:\n"
                           f"{r.stderr.decode(errors='replace')}")


def produce(bootstrap, topic, values, key=None, partition=None, headers=(), timeout=30,
            partitioner=None):
    """Produces each bytes value of VALUES as one record, in order, with kcat
    (any bytes, NUL included). key: bytes or str for every record; headers:
    (name, value) str pairs for every record; partitioner: librdkafka's
    (murmur2_random: Java's partition of the key, as Connect writes)."""
    with tempfile.TemporaryDirectory(prefix="skiff-produce-") as d:
        files = []
        for i, v in enumerate(values):
            f = Path(d) / f"{i:06d}"
            f.write_bytes(v if isinstance(v, bytes) else v.encode())
            files.append(str(f))
        cmd = ["kcat", "-P", "-b", bootstrap, "-t", topic, "-X", "message.timeout.ms=20000"]
        if key is not None:
            cmd += ["-k", key.decode() if isinstance(key, bytes) else key]
        if partition is not None:
            cmd += ["-p", str(partition)]
        if partitioner is not None:
            cmd += ["-X", f"partitioner={partitioner}"]
        for name, value in headers:
            cmd += ["-H", f"{name}={value}"]
        r = subprocess.run(cmd + files, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        if r.returncode != 0:
            raise HarnessError(f"kcat produce to {topic} exited {r.returncode}:\n"
                               f"{r.stderr.decode(errors='replace')}")


# --- skiff ---------------------------------------------------------------------

_live_skiffs = set()
_all_skiffs = []  # made during the current test, for its failure report


def _escape_props(s, key=False):
    """java.util.Properties escaping, so a dict round-trips exactly."""
    out = []
    for i, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif c == "\f":
            out.append("\\f")
        elif c == " " and (key or i == 0):
            out.append("\\ ")
        elif c in "=:#!" and (key or i == 0):
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def props_text(props):
    """A .properties text from a dict (escaped, one key=value a line) or a str
    (taken as it is)."""
    if isinstance(props, str):
        return props
    return "".join(f"{_escape_props(str(k), key=True)}={_escape_props(str(v))}\n"
                   for k, v in props.items())


class Skiff:
    """One skiff process: Skiff(tmp_path, worker_props, connectors).

    Writes DIR/worker.properties and DIR/connector-N.properties (N from 1);
    runs `skiff [extra_args] worker.properties connector-1.properties ...` in
    DIR with stdout and stderr in DIR/skiff.stdout / DIR/skiff.log (appended
    across restarts, so one Skiff can be started again after a stop or kill).
    Every process is killed at test teardown (conftest) and at interpreter exit.
    """

    def __init__(self, tmp_path, worker_props, connectors=(), env=None, name="skiff"):
        self.dir = Path(tmp_path) / name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.worker_file = self.dir / "worker.properties"
        self.worker_file.write_text(props_text(worker_props))
        self.connector_files = []
        for i, c in enumerate(connectors, 1):
            f = self.dir / f"connector-{i}.properties"
            f.write_text(props_text(c))
            self.connector_files.append(f)
        self.log_file = self.dir / "skiff.log"
        self.stdout_file = self.dir / "skiff.stdout"
        self.env = dict(env or {})
        self.proc = None
        self.args = None
        _all_skiffs.append(self)

    def start(self, extra_args=(), wrap=(), asan_options=None):
        """Starts skiff and returns at once (see wait_log). wrap: a command
        skiff runs under (strace, eatmydata: tests/faults/faultlib.py);
        asan_options replaces ASAN_OPTIONS (a traced skiff wants other ones).
        The one launcher of the end-to-end and fault tests."""
        if self.proc is not None and self.proc.poll() is None:
            raise HarnessError(f"skiff pid {self.proc.pid} is still running")
        self.args = [*map(str, wrap), str(skiff_bin()), *map(str, extra_args),
                     str(self.worker_file), *map(str, self.connector_files)]
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "abort_on_error=0:detect_leaks=1")
        if asan_options is not None:
            env["ASAN_OPTIONS"] = asan_options
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        env.update(self.env)
        env["ASAN_OPTIONS"] = without_dtls_guess(env["ASAN_OPTIONS"])
        with open(self.log_file, "ab") as err, open(self.stdout_file, "ab") as out:
            # A session of its own: ^C on the test run must not reach skiff
            # before the test means it to; teardown kills it regardless.
            self.proc = subprocess.Popen(self.args, cwd=self.dir, stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=err, env=env,
                                         start_new_session=True)
        _live_skiffs.add(self)
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def exitcode(self):
        """The exit code (negative: killed by that signal), None while running."""
        return None if self.proc is None else self.proc.poll()

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def log_text(self):
        """Everything skiff wrote to stderr so far (all runs)."""
        try:
            return self.log_file.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def log_mark(self):
        """A position in the log: pass as wait_log(since=...) to wait for
        something new only."""
        try:
            return self.log_file.stat().st_size
        except FileNotFoundError:
            return 0

    def _tail(self, lines=40):
        return "\n".join(self.log_text().splitlines()[-lines:])

    def wait_log(self, regex, timeout=30, since=0):
        """Waits until a line of the log (from byte offset since) matches regex;
        returns the re.Match. Fails early when skiff exits first."""
        pat = re.compile(regex)
        deadline = time.monotonic() + timeout
        while True:
            data = b""
            try:
                with open(self.log_file, "rb") as f:
                    f.seek(since)
                    data = f.read()
            except FileNotFoundError:
                pass
            for line in data.decode(errors="replace").splitlines():
                m = pat.search(line)
                if m:
                    return m
            if not self.running():
                raise HarnessError(f"skiff exited ({self.exitcode}) before logging /{regex}/; "
                                   f"log tail:\n{self._tail()}")
            if time.monotonic() >= deadline:
                raise HarnessError(f"skiff did not log /{regex}/ within {timeout}s; "
                                   f"log tail:\n{self._tail()}")
            time.sleep(0.05)

    def wait(self, timeout=30):
        """Waits for skiff to exit by itself; returns the exit code."""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill9()
            raise HarnessError(f"skiff did not exit within {timeout}s (killed); "
                               f"log tail:\n{self._tail()}") from None
        _live_skiffs.discard(self)
        return rc

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Sends sig and waits for the exit; returns the exit code. A skiff
        that outlives timeout is killed with SIGKILL and the test fails."""
        if self.proc is None:
            raise HarnessError("skiff was never started")
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.wait(timeout)

    def kill9(self):
        """SIGKILL at once (a power cut, as far as skiff can tell); returns the
        exit code (-9)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        rc = self.proc.wait()
        _live_skiffs.discard(self)
        return rc


def kill_all_skiffs():
    """SIGKILLs every skiff still running; returns those that were."""
    left = [s for s in list(_live_skiffs) if s.running()]
    for s in list(_live_skiffs):
        s.kill9()
    return left


atexit.register(kill_all_skiffs)
