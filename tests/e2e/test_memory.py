"""What a skiff process maps (issue 10, "Memory"): libraries that no part of
the configuration uses are not loaded, since their pages count in the
process's resident set on a device. libmicrohttpd and the TLS libraries it
pulls in (GnuTLS, nettle, p11-kit, ...) only with listeners=; Cyrus SASL's
plugins (and the Berkeley DB one of them needs) only for SASL/GSSAPI, the
one mechanism librdkafka leaves to Cyrus."""

import re

import harness
from harness import Skiff
from test_rest import free_port, http, wait_http

HTTP_LIBS = re.compile(r"/lib(microhttpd|gnutls|p11-kit|nettle|hogweed|gmp|tasn1)\.so")
SASL_PLUGINS = re.compile(r"/sasl2/lib\w+\.so|/libdb-[\d.]+\.so")


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
