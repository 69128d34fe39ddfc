"""The REST API over https with Connect's own keys (issue 26): PKCS#12
keystores as openssl and Java's keytool make them, PEM keystores (file,
encrypted key, inline text), a truststore and ssl.client.auth=required or
requested, a certificate replaced on disk that serves the next connection
without a restart, and --check refusing what the start refuses, with no
password in any output."""

import http.client
import os
import re
import ssl
import time

import pytest

import harness
from restlib import (CA, check, client_tls, free_port, java_p12, java_truststore, request,
                     start_skiff, wait_for)

NAME = "local-file-source"


@pytest.fixture
def ca(tmp_path):
    harness.require_module("cryptography", "python3-cryptography")
    return CA(tmp_path / "certs")


def served_cn(port, ca_):
    """The common name of the certificate the listener presents now."""
    import socket
    ctx = client_tls(ca_)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
        with ctx.wrap_socket(raw, server_hostname="127.0.0.1") as s:
            cert = s.getpeercert()
    return dict(x[0] for x in cert["subject"])["commonName"]


def keystores(ca_, tmp_path):
    """Each way of giving the listener's key: worker keys."""
    p = "listeners.https."
    crt, key = ca_.pem_files("pem-server")
    ecrt, ekey = ca_.pem_files("enc-server", password="key-secret-1")
    bundle = tmp_path / "certs" / "bundle.pem"
    bundle.write_bytes(ekey.read_bytes() + ecrt.read_bytes())
    icrt, ikey = ca_.pem_files("inline-server")
    out = {
        "openssl-p12": {p + "ssl.keystore.location": str(ca_.p12("p12-server", "ks-secret-1")),
                        p + "ssl.keystore.password": "ks-secret-1",
                        p + "ssl.keystore.type": "PKCS12"},
        "pem-encrypted": {p + "ssl.keystore.location": str(bundle),
                          p + "ssl.keystore.type": "PEM",
                          p + "ssl.key.password": "key-secret-1"},
        "pem-inline": {p + "ssl.keystore.key": ikey.read_text(),
                       p + "ssl.keystore.certificate.chain": icrt.read_text(),
                       p + "ssl.keystore.type": "PEM"},
        # Connect's default type is JKS, which Java reads PKCS#12 as too.
        "untyped-p12": {p + "ssl.keystore.location": str(ca_.p12("any-server", "ks-secret-1")),
                        p + "ssl.keystore.password": "ks-secret-1"},
        # Connect falls back to the worker's ssl.* when no listeners.https.*
        # is set ("all or nothing").
        "top-level": {"ssl.keystore.location": str(ca_.p12("top-server", "ks-secret-1")),
                      "ssl.keystore.password": "ks-secret-1"},
    }
    return out


def test_https_with_each_keystore(tmp_path, kafka, topic, ca):
    stores = keystores(ca, tmp_path)
    try:
        src = java_p12(tmp_path / "certs" / "p12-server.p12", "ks-secret-1",
                       tmp_path / "certs" / "java.p12", "ks-secret-2")
        stores["keytool-p12"] = {"listeners.https.ssl.keystore.location": str(src),
                                 "listeners.https.ssl.keystore.password": "ks-secret-2"}
    except pytest.skip.Exception:
        pass
    for i, (how, keys) in enumerate(stores.items()):
        rc, out = check(tmp_path, dict(keys, listeners="https://127.0.0.1:1"), name=f"c{i}")
        assert rc == 0, (how, out)
        assert "secret" not in out.replace("[hidden]", ""), (how, out)
        sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, name=f"s{i}",
                                  scheme="https", tls=client_tls(ca))
        r = request(port, "GET", "/connectors", tls=client_tls(ca))
        assert (r.status, r.json) == (200, [NAME]), (how, r)
        # Plain http on the https port: no answer but a TLS alert or a close.
        with pytest.raises((OSError, http.client.HTTPException)):
            request(port, "GET", "/connectors", timeout=3)
        assert sk.stop() == 0, how
        assert "secret" not in sk.log_text().replace("[hidden]", ""), how


def test_client_certificates_required_and_requested(tmp_path, kafka, topic, ca):
    store = ca.p12("server", "ks-secret-1")
    ccrt, ckey = ca.pem_files("good-client", server=False)
    other = CA(tmp_path / "other", "other CA")
    ocrt, okey = other.pem_files("stranger", server=False)
    truststores = {"pem": {"listeners.https.ssl.truststore.location": str(ca.pem),
                           "listeners.https.ssl.truststore.type": "PEM"}}
    try:
        ts = java_truststore(ca.pem, tmp_path / "certs" / "trust.p12", "ts-secret-1")
        truststores["keytool-p12"] = {"listeners.https.ssl.truststore.location": str(ts),
                                      "listeners.https.ssl.truststore.password": "ts-secret-1"}
    except pytest.skip.Exception:
        pass
    for i, (how, trust) in enumerate(truststores.items()):
        keys = {"listeners.https.ssl.keystore.location": str(store),
                "listeners.https.ssl.keystore.password": "ks-secret-1",
                "listeners.https.ssl.client.auth": "required", **trust}
        sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, name=f"req{i}",
                                  scheme="https", wait=False)
        good = client_tls(ca, ccrt, ckey)
        wait_for(lambda: _ok(port, good), 30, 0.2, "the https listener")
        assert request(port, "GET", "/connectors", tls=good).status == 200
        for bad in (client_tls(ca), client_tls(ca, ocrt, okey)):
            with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
                request(port, "GET", "/connectors", tls=bad, timeout=5)
        assert sk.stop() == 0
        assert "TLS client refused" in sk.log_text(), how
    # requested: no certificate passes, a stranger's does not.
    keys = {"listeners.https.ssl.keystore.location": str(store),
            "listeners.https.ssl.keystore.password": "ks-secret-1",
            "listeners.https.ssl.client.auth": "requested",
            "listeners.https.ssl.truststore.location": str(ca.pem)}
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, name="requested",
                              scheme="https", tls=client_tls(ca))
    assert request(port, "GET", "/connectors", tls=client_tls(ca)).status == 200
    assert request(port, "GET", "/connectors", tls=client_tls(ca, ccrt, ckey)).status == 200
    with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
        request(port, "GET", "/connectors", tls=client_tls(ca, ocrt, okey), timeout=5)
    assert sk.stop() == 0


def test_refused_clients_fold_in_the_log(tmp_path, kafka, topic, ca):
    """Hostile finding: each TLS client refused was a log line, so 1,000
    handshakes without a good certificate (3.5 s from one script) wrote
    1,000 lines: anyone who reaches the port fills the journal, and journald's
    rate limit then drops skiff's own lines. The first is logged, then one a
    minute with the number since."""
    other = CA(tmp_path / "other", "other CA")
    ocrt, okey = other.pem_files("stranger", server=False)
    ccrt, ckey = ca.pem_files("good-client", server=False)
    keys = {"listeners.https.ssl.keystore.location": str(ca.p12("server", "ks-secret-1")),
            "listeners.https.ssl.keystore.password": "ks-secret-1",
            "listeners.https.ssl.client.auth": "required",
            "listeners.https.ssl.truststore.location": str(ca.pem)}
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, scheme="https",
                              wait=False)
    good = client_tls(ca, ccrt, ckey)
    wait_for(lambda: _ok(port, good), 30, 0.2, "the https listener")
    for i in range(300):
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            request(port, "GET", "/connectors",
                    tls=client_tls(ca, ocrt, okey) if i % 2 else client_tls(ca), timeout=5)
    assert request(port, "GET", "/connectors", tls=good).status == 200
    assert sk.stop() == 0
    lines = sk.log_text().count("TLS client refused")
    print(f"FIGURE rest.tls_refused_lines: {lines} log lines for 300 clients refused")
    assert lines == 1, lines


def test_client_without_certificate_refused_and_logged(tmp_path, kafka, topic, ca):
    """Hostile finding: under ssl.client.auth=required a client that sent no
    certificate was refused by GnuTLS before skiff's check ran, so the log
    never said so (a prober missing its certificate failed, and the device
    said nothing). Refused over TLS 1.2 and 1.3, and logged."""
    ccrt, ckey = ca.pem_files("good-client", server=False)
    keys = {"listeners.https.ssl.keystore.location": str(ca.p12("server", "ks-secret-1")),
            "listeners.https.ssl.keystore.password": "ks-secret-1",
            "listeners.https.ssl.client.auth": "required",
            "listeners.https.ssl.truststore.location": str(ca.pem)}
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, scheme="https",
                              wait=False)
    wait_for(lambda: _ok(port, client_tls(ca, ccrt, ckey)), 30, 0.2, "the https listener")
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        bare = client_tls(ca)
        bare.minimum_version = bare.maximum_version = version
        with pytest.raises((ssl.SSLError, ConnectionError, OSError)):
            request(port, "GET", "/connectors", tls=bare, timeout=5)
    sk.wait_log(r"TLS client refused: no client certificate", 10)
    assert sk.stop() == 0


def _ok(port, tls):
    try:
        return request(port, "GET", "/", tls=tls, timeout=2).status == 200
    except (OSError, ssl.SSLError):
        return False


def test_new_certificate_served_without_restart(tmp_path, kafka, topic, ca):
    """Replaced on disk as certificate tools do (written beside, renamed
    over): the next connection gets it; a broken one is logged and the one
    before goes on; skiff ships meanwhile and never restarts."""
    store = tmp_path / "certs" / "live.p12"
    ca.p12("first", "ks-secret-1", path=store)
    keys = {"listeners.https.ssl.keystore.location": str(store),
            "listeners.https.ssl.keystore.password": "ks-secret-1"}
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic, keys, scheme="https",
                                tls=client_tls(ca))
    pid = sk.pid
    assert served_cn(port, ca) == "first"
    tmp = tmp_path / "certs" / ".live.p12.tmp"
    ca.p12("second", "ks-secret-1", path=tmp)
    os.rename(tmp, store)
    t0 = time.monotonic()
    wait_for(lambda: served_cn(port, ca) == "second", 15, 0.2, "the new certificate")
    print(f"FIGURE rest.tls_reload_after: {time.monotonic() - t0:.1f} s")
    # A broken file: the log says so, and the last good certificate stays.
    tmp.write_bytes(b"not a keystore")
    os.rename(tmp, store)
    sk.wait_log(r"live\.p12 changed, and cannot be used", 15)
    assert served_cn(port, ca) == "second"
    ca.p12("third", "ks-secret-1", path=tmp)
    os.rename(tmp, store)
    wait_for(lambda: served_cn(port, ca) == "third", 15, 0.2, "the third certificate")
    assert sk.pid == pid and sk.running()
    assert sk.stop() == 0
    assert "ks-secret-1" not in sk.log_text()


def test_check_and_start_refuse_alike_and_print_no_secret(tmp_path, ca):
    jks = tmp_path / "keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")
    good = str(ca.p12("server", "ks-secret-1"))
    p = "listeners.https."
    cases = [
        ({"listeners": "https://127.0.0.1:1"}, r"an https listener needs "
         r"listeners\.https\.ssl\.keystore\.location"),
        ({"listeners": "https://127.0.0.1:1", p + "ssl.keystore.location": str(jks),
          p + "ssl.keystore.password": "ks-secret-1"}, r"a Java KeyStore \(JKS\): convert it "
         r"with keytool -importkeystore"),
        ({"listeners": "https://127.0.0.1:1", p + "ssl.keystore.location": good,
          p + "ssl.keystore.password": "wrong-secret-9"}, r"is the password right\?"),
        ({"listeners": "https://127.0.0.1:1", p + "ssl.keystore.location": good,
          p + "ssl.keystore.password": "ks-secret-1", p + "ssl.client.auth": "required"},
         r"ssl\.client\.auth=required needs listeners\.https\.ssl\.truststore"),
        ({"listeners": "https://127.0.0.1:1", p + "ssl.keystore.location": good,
          p + "ssl.keystore.password": "ks-secret-1",
          p + "ssl.cipher.suites": "TLS_AES_128_GCM_SHA256"}, r"ssl\.cipher\.suites: Java's"),
        ({"listeners": "http://admin:pw-secret-3@127.0.0.1:8083"},
         r"listeners: 'http://\[hidden\]@127\.0\.0\.1:8083' is not PROTOCOL://HOST:PORT"),
        ({"listeners": "ftp://127.0.0.1:8083"}, r"the protocol must be http or https"),
        # Hostile finding: an https admin listener without its keys was
        # told to set listeners.https.*, which it never reads.
        ({"listeners": "https://127.0.0.1:1", p + "ssl.keystore.location": good,
          p + "ssl.keystore.password": "ks-secret-1", "admin.listeners": "https://127.0.0.1:2"},
         r"admin\.listeners: an https listener needs admin\.listeners\.https\.ssl\.keystore\."
         r"location .*or the worker's ssl\.keystore\.location"),
    ]
    for i, (keys, says) in enumerate(cases):
        rc, out = check(tmp_path, keys, name=f"c{i}")
        assert rc == 78, (keys, out)
        assert re.search(r"w\.properties:\d+: .*" + says, out), (says, out)
        assert "secret" not in out.replace("[hidden]", ""), out
        # The start refuses the same, the same way.
        from harness import skiff_bin
        import subprocess
        r = subprocess.run([str(skiff_bin()), str(tmp_path / f"c{i}" / "w.properties")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        assert r.returncode == 78, r.stdout
        assert re.search(says, r.stdout.decode()), r.stdout
        assert b"secret" not in r.stdout.replace(b"[hidden]", b"")
    # Hostile finding: a truststore that cannot be read was said to be on
    # the keystore's line.
    rc, out = check(tmp_path, {"listeners": "https://127.0.0.1:1",
                               p + "ssl.keystore.location": good,
                               p + "ssl.keystore.password": "ks-secret-1",
                               p + "ssl.truststore.location": str(tmp_path / "missing.p12"),
                               p + "ssl.client.auth": "required"}, name="trust")
    lines = (tmp_path / "trust" / "w.properties").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "truststore.location" in t)
    assert rc == 78, out
    assert f"w.properties:{line}: {p}ssl.truststore.location: " in out, (line, out)


def test_oversized_chunked_body_refused_over_tls(tmp_path, kafka, topic, ca):
    """The 413 written in the middle of a body goes through the TLS session."""
    import socket
    keys = {"listeners.https.ssl.keystore.location": str(ca.p12("server", "ks-secret-1")),
            "listeners.https.ssl.keystore.password": "ks-secret-1",
            "rest.max.body.bytes": 4096}
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic, keys, scheme="https",
                              tls=client_tls(ca))
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    s = client_tls(ca).wrap_socket(raw, server_hostname="127.0.0.1")
    s.sendall(f"PATCH /connectors/{NAME}/offsets HTTP/1.1\r\nHost: 127.0.0.1\r\n"
              "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
    for _ in range(4):
        s.sendall(b"%x\r\n%s\r\n" % (2048, b"[" * 2048))
    data = s.recv(4096)
    s.close()
    assert data.startswith(b"HTTP/1.1 413 "), data
    assert b"rest.max.body.bytes" in data
    assert request(port, "GET", "/connectors", tls=client_tls(ca)).status == 200
    assert sk.stop() == 0
