"""What a skiff process maps (issue 10, "Memory"): libraries that no part of
the configuration uses are not loaded, since their pages count in the
process's resident set on a device. libmicrohttpd and the TLS libraries it
pulls in (GnuTLS, nettle, p11-kit, ...) only with listeners=; Cyrus SASL's
plugins (and the Berkeley DB one of them needs) only for SASL/GSSAPI, the
one mechanism librdkafka leaves to Cyrus; SQLite only with a SQLite source,
libsystemd (and gcrypt, gpg-error, cap, which only it needs) only with a
journald source. A library a configured source needs but cannot load is a
configuration error naming the connector's file and the library."""

import os
import re
import subprocess

import harness
from harness import Skiff
from test_rest import free_port, http, wait_http

HTTP_LIBS = re.compile(r"/lib(microhttpd|gnutls|p11-kit|nettle|hogweed|gmp|tasn1)\.so")
SASL_PLUGINS = re.compile(r"/sasl2/lib\w+\.so|/libdb-[\d.]+\.so")
SOURCE_LIBS = re.compile(r"/lib(sqlite3|systemd|gcrypt|gpg-error|cap)\.so")


def mapped(pid):
    with open(f"/proc/{pid}/maps") as f:
        return {line.split()[-1] for line in f if "/" in line}


def start(tmp_path, bootstrap, topic, extra=None):
    src = tmp_path / "app.log"
    src.write_text("line 1\n")
    worker = {"bootstrap.servers": bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets")}
    worker.update(extra or {})
    conn = {"name": "m", "connector.class": "FileStreamSource", "file": str(src), "topic": topic}
    sk = Skiff(tmp_path, worker, [conn]).start()
    harness.consume(bootstrap, topic, n=1)
    return sk


def test_no_http_nor_sasl_libraries_when_unused(tmp_path, kafka, topic):
    sk = start(tmp_path, kafka.bootstrap, topic)
    try:
        libs = mapped(sk.pid)
        assert not [x for x in libs if HTTP_LIBS.search(x)], sorted(libs)
        assert not [x for x in libs if SASL_PLUGINS.search(x)], sorted(libs)
        assert not [x for x in libs if SOURCE_LIBS.search(x)], sorted(libs)
    finally:
        sk.stop()


def test_http_library_loaded_with_listeners(tmp_path, kafka, topic):
    port = free_port()
    sk = start(tmp_path, kafka.bootstrap, topic, {"listeners": f"http://127.0.0.1:{port}"})
    try:
        wait_http(port)
        assert http(port, "GET", "/connectors")[1] == ["m"]
        assert [x for x in mapped(sk.pid) if "libmicrohttpd.so" in x]
    finally:
        sk.stop()


def library_path(soname):
    """The file the dynamic linker loads for soname, or None."""
    out = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    m = re.search(rf"^\s*{re.escape(soname)} \(.*\) => (\S+)$", out, re.M)
    return os.path.realpath(m.group(1)) if m else None


# The package of scripts/install-deps.sh that brings each library hidden below.
BROUGHT_BY = {"libsqlite3.so.0": "libsqlite3-dev", "libsystemd.so.0": "libsystemd-dev"}


def without(lib):
    """A command prefix that runs skiff where lib cannot be loaded: in a
    private mount namespace with /dev/null bound over it (unprivileged user
    and mount namespaces; the test is skipped where they are not allowed)."""
    path = library_path(lib)
    if path is None:
        harness.missing(f"{lib} is not in ldconfig's cache", BROUGHT_BY[lib])
    harness.require_tool("unshare", "util-linux")
    wrap = ["unshare", "-rm", "sh", "-c", 'mount --bind /dev/null "$0" && exec "$@"', path]
    r = subprocess.run([*wrap, "true"], capture_output=True, text=True)
    if r.returncode != 0:
        harness.skip_not_here(f"cannot hide {lib} (unshare -rm: {r.stderr.strip()})")
    return wrap


def refused(tmp_path, conn, lib):
    """skiff's log after it exited (78, asserted) with conn and lib hidden."""
    worker = {"bootstrap.servers": "127.0.0.1:9",
              "offset.storage.file.filename": str(tmp_path / "offsets")}
    sk = Skiff(tmp_path, worker, [conn]).start(wrap=without(lib))
    assert sk.proc.wait(60) == 78, sk.log_file.read_text()
    return sk.log_file.read_text()


def class_line(tmp_path):
    """'connector-1.properties:N': where the connector.class line is, the
    setting that made skiff need the library."""
    f = tmp_path / "skiff" / "connector-1.properties"
    n = next(i for i, l in enumerate(f.read_text().splitlines(), 1)
             if l.startswith("connector.class"))
    return re.escape(f"connector-1.properties:{n}:")


def test_sqlite_library_missing(tmp_path):
    conn = {"name": "db", "connector.class": "io.confluent.connect.jdbc.JdbcSourceConnector",
            "connection.url": f"jdbc:sqlite:{tmp_path}/app.db", "mode": "bulk",
            "query": "SELECT 1 AS x", "topic.prefix": "t"}
    log = refused(tmp_path, conn, "libsqlite3.so.0")
    assert re.search(r"connector db: \S*" + class_line(tmp_path) + r" libsqlite3\.so\.0: "
                     r"cannot be loaded: .*: a SQLite source needs it", log), log


def test_systemd_library_missing(tmp_path):
    if b"libsystemd.so.0" not in harness.skiff_bin().read_bytes():
        harness.missing("skiff was built without the journald source", "libsystemd-dev")
    conn = {"name": "j", "connector.class": "journald", "topic": "t",
            "journal.directory": str(tmp_path)}
    log = refused(tmp_path, conn, "libsystemd.so.0")
    assert re.search(r"connector j: \S*" + class_line(tmp_path) + r" libsystemd\.so\.0: "
                     r"cannot be loaded: .*: a journald source needs it", log), log
