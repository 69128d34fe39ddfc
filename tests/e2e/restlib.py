"""Helpers for the REST API's end-to-end tests (test_rest*.py): requests over
http and https with any header, certificates made on the spot, and a skiff
with a file connector and a listener."""

import base64
import datetime
import http.client
import json
import socket
import ssl
import subprocess
import threading
import time

import harness
from harness import Skiff


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Reply:
    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw

    @property
    def ctype(self):
        return self.headers.get("content-type")

    @property
    def json(self):
        return json.loads(self.raw) if self.raw else None

    def __repr__(self):
        return f"Reply({self.status}, {self.ctype}, {self.raw[:300]!r})"


def request(port, method, path, body=None, ctype="application/json", headers=None, tls=None,
            auth=None, host="127.0.0.1", timeout=10):
    """One request on a new connection. body: dict/list (sent as JSON) or
    bytes; tls: an ssl.SSLContext for https; auth: (user, password)."""
    h = dict(headers or {})
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
    if body is not None and ctype is not None:
        h.setdefault("Content-Type", ctype)
    if auth is not None:
        h["Authorization"] = "Basic " + base64.b64encode(
            f"{auth[0]}:{auth[1]}".encode()).decode()
    if tls is not None:
        c = http.client.HTTPSConnection(host, port, timeout=timeout, context=tls)
    else:
        c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=h)
        r = c.getresponse()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
    finally:
        c.close()


def wait_for(pred, timeout=30, step=0.1, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def client_storm(port, path, clients=50, seconds=5.0):
    """`clients` threads, each sending GET path back to back for `seconds`
    (10 s timeout each). Returns (answered, failures): failures are the
    non-200 statuses and the errors raised."""
    stop, failed, done = threading.Event(), [], [0]

    def client():
        while not stop.is_set():
            try:
                r = request(port, "GET", path, timeout=10)
                if r.status != 200:
                    failed.append(r.status)
                done[0] += 1
            except OSError as e:
                failed.append(repr(e))
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for t in threads:
        t.start()
    time.sleep(seconds)
    stop.set()
    for t in threads:
        t.join()
    return done[0], failed


def wait_up(port, timeout=30, **kw):
    def up():
        try:
            return request(port, "GET", "/", timeout=2, **kw).status in (200, 401)
        except (OSError, ssl.SSLError):
            return False
    wait_for(up, timeout, 0.2, f"the REST API on {port}")


def start_skiff(tmp_path, bootstrap, topic, extra=None, name="skiff", env=None, scheme="http",
                wait=True, **up):
    """A skiff with one file connector (local-file-source) and a listener on
    a free port: (skiff, port, source file)."""
    port = free_port()
    worker = {"bootstrap.servers": bootstrap,
              "offset.storage.file.filename": str(tmp_path / f"{name}.offsets"),
              "offset.flush.interval.ms": 500,
              "listeners": f"{scheme}://127.0.0.1:{port}"}
    worker.update(extra or {})
    src = tmp_path / f"{name}-app.log"
    src.touch()
    conn = {"name": "local-file-source", "connector.class": "FileStreamSource",
            "tasks.max": 1, "file": str(src), "topic": topic}
    sk = Skiff(tmp_path, worker, [conn], name=name, env=env).start()
    if wait:
        wait_up(port, **up)
    return sk, port, src


def check(tmp_path, worker, name="check", env=None):
    """skiff --check on a worker file with one file connector: (exit code,
    stdout + stderr)."""
    from harness import skiff_bin, props_text
    d = tmp_path / name
    d.mkdir(exist_ok=True)
    (d / "a.log").touch()
    props = {"bootstrap.servers": "127.0.0.1:1",
             "offset.storage.file.filename": str(d / "offsets"),
             "connectors.a.connector.class": "FileStreamSource",
             "connectors.a.file": str(d / "a.log"), "connectors.a.topic": "t"}
    props.update(worker)
    (d / "w.properties").write_text(props_text(props))
    import os
    e = dict(os.environ, **(env or {}))
    r = subprocess.run([str(skiff_bin()), "--check", str(d / "w.properties")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60, env=e)
    return r.returncode, r.stdout.decode(errors="replace")


# ---- certificates ------------------------------------------------------------------


class CA:
    """A CA and the certificates it signs, as PEM files in a directory."""

    def __init__(self, d, name="test CA"):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import NameOID
        self.dir = d
        d.mkdir(parents=True, exist_ok=True)
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = datetime.datetime.now(datetime.timezone.utc)
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        self.cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
                     .public_key(self.key.public_key())
                     .serial_number(x509.random_serial_number())
                     .not_valid_before(now - datetime.timedelta(minutes=5))
                     .not_valid_after(now + datetime.timedelta(days=2))
                     .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
                     .sign(self.key, hashes.SHA256()))
        self.pem = d / f"{name.replace(' ', '-')}.pem"
        self.pem.write_bytes(self._pem(self.cert))

    @staticmethod
    def _pem(obj):
        from cryptography.hazmat.primitives import serialization
        return obj.public_bytes(serialization.Encoding.PEM)

    def issue(self, cn, server=True, days=2):
        """(certificate, key) objects for cn: a server certificate for
        127.0.0.1 and localhost, or a TLS client one."""
        import ipaddress
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import rsa
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        now = datetime.datetime.now(datetime.timezone.utc)
        b = (x509.CertificateBuilder()
             .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
             .issuer_name(self.cert.subject).public_key(key.public_key())
             .serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=days)))
        if server:
            b = b.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                 x509.DNSName("localhost")]), False)
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        else:
            b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
        return b.sign(self.key, hashes.SHA256()), key

    def pem_files(self, cn, server=True, password=None):
        """cn.pem (chain) and cn.key (PKCS#8, encrypted with password if given)."""
        from cryptography.hazmat.primitives import serialization
        cert, key = self.issue(cn, server)
        enc = (serialization.BestAvailableEncryption(password.encode()) if password
               else serialization.NoEncryption())
        crt = self.dir / f"{cn}.pem"
        k = self.dir / f"{cn}.key"
        crt.write_bytes(self._pem(cert) + self._pem(self.cert))
        k.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                        serialization.PrivateFormat.PKCS8, enc))
        return crt, k

    def p12(self, cn, password, server=True, path=None):
        """A PKCS#12 keystore of cn's key and chain, as openssl makes them."""
        from cryptography.hazmat.primitives.serialization import (
            BestAvailableEncryption, pkcs12)
        cert, key = self.issue(cn, server)
        data = pkcs12.serialize_key_and_certificates(
            cn.encode(), key, cert, [self.cert], BestAvailableEncryption(password.encode()))
        path = path or self.dir / f"{cn}.p12"
        path.write_bytes(data)
        return path


def keytool():
    """Java's keytool, for Java's own keystores (harness.missing() without)."""
    return harness.require_tool("keytool", "openjdk-17-jre-headless")


def java_p12(src, src_password, dest, password):
    """src (a PKCS#12) converted by Java's keytool: Java's own encryption."""
    subprocess.run([keytool(), "-importkeystore", "-noprompt", "-srckeystore", str(src),
                    "-srcstoretype", "PKCS12", "-srcstorepass", src_password,
                    "-destkeystore", str(dest), "-deststoretype", "PKCS12",
                    "-deststorepass", password], check=True, capture_output=True)
    return dest


def java_truststore(ca_pem, dest, password, storetype="PKCS12"):
    subprocess.run([keytool(), "-importcert", "-noprompt", "-alias", "ca", "-file",
                    str(ca_pem), "-keystore", str(dest), "-storetype", storetype,
                    "-storepass", password], check=True, capture_output=True)
    return dest


def client_tls(ca, cert=None, key=None):
    """An SSLContext that trusts ca (a CA) and presents cert/key if given."""
    ctx = ssl.create_default_context(cafile=str(ca.pem))
    if cert is not None:
        ctx.load_cert_chain(str(cert), str(key))
    return ctx
