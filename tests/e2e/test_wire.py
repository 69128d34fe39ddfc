"""On the wire: TLS and SASL against a real broker (kafka.sh --security: one
broker for this module with SSL, mutual TLS, SASL_SSL with SCRAM-SHA-512 and
PLAIN, and listeners with a wrong-host and an expired certificate).

Each way in ships numbered lines, read back exactly over PLAINTEXT. Each way
to get it wrong (wrong password, unknown CA, expired certificate, wrong host
name, expired client certificate) is logged with its cause, delivers nothing,
and once the configuration is fixed and skiff restarted, the exact set arrives.
Secrets stay out of /proc/PID/cmdline and the log (debug level, librdkafka's
own debug too), the offset files and the lock are 0600, and Connect-only names
(JKS stores, JAAS) and OIDC on a librdkafka built without it are refused by
--check with the reason."""

import os
import re
import stat
import subprocess
import time

import pytest

import harness
from harness import Skiff, consume

N = 300
HANDSHAKE = r"kafka: .*(SSL handshake failed|SASL authentication error|Receive failed|" \
            r"verification callback failed)"


@pytest.fixture(scope="module")
def wire(tmp_path_factory):
    if os.environ.get("SKIFF_BOOTSTRAP"):
        harness.skip_not_here("an external broker (SKIFF_BOOTSTRAP) has not the TLS/SASL "
                              "listeners of kafka.sh --security")
    broker = harness.Broker(tmp_path_factory.mktemp("kafka-wire"), security=True)
    broker.start()
    yield broker
    broker.stop()


def client(sec, how):
    """(bootstrap, worker properties) of one way in, with Connect's names where
    librdkafka shares them (sasl.mechanism, ssl.key.password...)."""
    tls = {"security.protocol": "SSL", "ssl.ca.location": sec["CA"]}
    sasl = {"security.protocol": "SASL_SSL", "ssl.ca.location": sec["CA"]}
    return {
        "ssl": (sec["SSL"], tls),
        "mtls": (sec["MTLS"], {**tls, "ssl.certificate.location": sec["CLIENT_CERT"],
                               "ssl.key.location": sec["CLIENT_KEY"]}),
        "scram": (sec["SASL_SSL"], {**sasl, "sasl.mechanism": "SCRAM-SHA-512",
                                    "sasl.username": sec["SCRAM_USER"],
                                    "sasl.password": sec["SCRAM_PASSWORD"]}),
        "plain": (sec["SASL_SSL"], {**sasl, "sasl.mechanism": "PLAIN",
                                    "sasl.username": sec["PLAIN_USER"],
                                    "sasl.password": sec["PLAIN_PASSWORD"]}),
    }[how]


def worker(tmp_path, bootstrap, props):
    w = {"bootstrap.servers": bootstrap,
         "offset.storage.file.filename": str(tmp_path / "state" / "offsets"),
         "offset.flush.interval.ms": "200",
         # A stop while nothing can be delivered waits this long for acks.
         "offset.flush.timeout.ms": "1000",
         "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    w.update(props)
    return w


def numbered(path, n):
    path.write_text("".join(f"line {i:06d}\n" for i in range(n)))
    return [f"line {i:06d}".encode() for i in range(n)]


def setup(tmp_path, topic, bootstrap, props):
    (tmp_path / "state").mkdir(exist_ok=True)
    want = numbered(tmp_path / "in.log", N)
    conn = {"name": "wire", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(tmp_path / "in.log")}
    return Skiff(tmp_path, worker(tmp_path, bootstrap, props), [conn]), want


def shipped(wire, topic, want):
    """The topic's values, once all of want arrived (over PLAINTEXT)."""
    return [r["value"] for r in consume(wire.bootstrap, topic, n=len(want), timeout=60)]


@pytest.mark.parametrize("how", ["ssl", "mtls", "scram", "plain"])
def test_ships_over_each_listener(tmp_path, wire, topic, how):
    bootstrap, props = client(wire.security(), how)
    sk, want = setup(tmp_path, topic, bootstrap, props)
    sk.start()
    assert shipped(wire, topic, want) == want
    assert sk.stop() == 0
    assert [r["value"] for r in consume(wire.bootstrap, topic)] == want


# (name, broken, fixed, what the log must name): broken and fixed are
# (listener, {changes to the "how" client's properties}).
FAILURES = {
    "wrong_password": ("scram", ("SASL_SSL", {"sasl.password": "not-the-password"}),
                       r"SASL authentication error: .*invalid credentials"),
    "unknown_ca": ("ssl", ("SSL", {"ssl.ca.location": "OTHER_CA"}),
                   r"certificate verify failed: broker certificate could not be verified|"
                   r"unknown CA"),
    "expired_certificate": ("ssl", ("EXPIRED", {}), r"certificate has expired"),
    "wrong_host_name": ("ssl", ("BADHOST", {}), r"(Hostname|IP address) mismatch"),
    "expired_client_certificate": ("mtls", ("MTLS", {"ssl.certificate.location":
                                                     "EXPIRED_CLIENT_CERT",
                                                     "ssl.key.location": "EXPIRED_CLIENT_KEY"}),
                                   r"alert certificate unknown"),
}


@pytest.mark.parametrize("case", list(FAILURES))
def test_refused_with_its_cause_and_nothing_lost_once_fixed(tmp_path, wire, topic, case):
    how, (listener, changes), cause = FAILURES[case]
    sec = wire.security()
    bootstrap, props = client(sec, how)
    bad = dict(props, **{k: sec.get(v, v) for k, v in changes.items()})
    sk, want = setup(tmp_path, topic, sec[listener], bad)
    sk.start()
    # Not silent: the failed handshake or login is logged at once ...
    sk.wait_log(HANDSHAKE, timeout=30)
    assert consume(wire.bootstrap, topic) == []
    log = sk.log_text()
    # ... and skiff keeps trying (a restart cannot fix it, nor can waiting; it
    # is left to the operator, who reads the cause in the log).
    rc = sk.stop()
    assert rc == 0, f"exit {rc}"
    assert consume(wire.bootstrap, topic) == []

    # Fixed: the right configuration, restarted: everything, once.
    sk.worker_file.write_text(harness.props_text(worker(tmp_path, bootstrap, props)))
    sk.start()
    assert shipped(wire, topic, want) == want
    assert sk.stop() == 0
    assert [r["value"] for r in consume(wire.bootstrap, topic)] == want

    # librdkafka 2.0.2 says "certificate verify failed" for every X509 error;
    # skiff's verify callback (sink_kafka.c) names which.
    assert re.search(cause, log), (f"the log does not name the cause /{cause}/:\n" +
                                   "\n".join(l for l in log.splitlines() if "kafka" in l)[:2000])


def test_secrets_stay_out_of_cmdline_log_and_state(tmp_path, wire, topic):
    sec = wire.security()
    bootstrap, props = client(sec, "scram")
    props = dict(props, **{"producer.debug": "conf,security,broker,protocol"})
    sk, want = setup(tmp_path, topic, bootstrap, props)
    sk.start(["--log-level", "debug"])
    assert shipped(wire, topic, want) == want
    state = tmp_path / "state"
    with open(f"/proc/{sk.pid}/cmdline", "rb") as f:
        cmdline = f.read()
    # A second flush, so that the appended log (offsets.log) exists too, and
    # the clean stop's compaction, which makes offsets.prev.
    harness_wait(lambda: (state / "offsets").exists(), 20)
    with open(tmp_path / "in.log", "a") as f:
        f.write("one more\n")
    assert shipped(wire, topic, want + [b"one more"])[-1] == b"one more"
    harness_wait(lambda: (state / "offsets.log").exists(), 20)
    log_mode = stat.S_IMODE((state / "offsets.log").stat().st_mode)
    assert log_mode == 0o600, oct(log_mode)
    assert sk.stop() == 0
    assert sorted(p.name for p in state.iterdir()) == ["offsets", "offsets.lock", "offsets.prev"]
    password = sec["SCRAM_PASSWORD"].encode()
    assert password not in cmdline
    log = sk.log_file.read_bytes()
    assert b"Client configuration" in log or b"sasl" in log.lower(), "no librdkafka debug seen"
    assert password not in log
    assert password not in (sk.dir / "skiff.stdout").read_bytes()
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in state.iterdir()}
    assert modes and all(m == 0o600 for m in modes.values()), {k: oct(v) for k, v in modes.items()}


def harness_wait(cond, timeout):
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def check(tmp_path, props):
    """skiff --check with a worker of props (no broker needed): (rc, stderr)."""
    w = tmp_path / "w.properties"
    w.write_text(harness.props_text(worker(tmp_path, "127.0.0.1:9", props)))
    c = tmp_path / "c.properties"
    c.write_text("name=c\nconnector.class=FileStreamSource\ntopic=t\n"
                 f"file={tmp_path / 'in.log'}\n")
    (tmp_path / "state").mkdir(exist_ok=True)
    r = subprocess.run([str(harness.skiff_bin()), "--check", str(w), str(c)],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    return r.returncode, r.stderr.decode(errors="replace")


@pytest.mark.parametrize("props, says", [
    ({"ssl.truststore.location": "/etc/kafka/truststore.jks"},
     r"ssl\.truststore\.location.*ssl\.ca\.location"),
    ({"ssl.truststore.type": "JKS"}, r"ssl\.truststore\.type.*ssl\.ca\.location"),
    ({"ssl.truststore.password": "changeit"}, r"ssl\.truststore\.password"),
    ({"ssl.keystore.type": "JKS"}, r"ssl\.keystore\.type.*PKCS#12"),
    ({"ssl.endpoint.identification.algorithm": ""},
     r"ssl\.endpoint\.identification\.algorithm.*none"),
    ({"sasl.jaas.config": 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                          'username="u" password="jaas-secret-1";'},
     r"sasl\.jaas\.config.*sasl\.username.*sasl\.password"),
])
def test_connect_only_names_refused_with_the_librdkafka_way(tmp_path, props, says):
    rc, err = check(tmp_path, dict({"security.protocol": "SSL"}, **props))
    assert rc == 78, err
    assert re.search(r"w\.properties:\d+: " + says, err), err
    assert "jaas-secret-1" not in err and "changeit" not in err


def test_oidc_refused_by_check_when_librdkafka_lacks_it(tmp_path):
    rc, err = check(tmp_path, {"security.protocol": "SASL_SSL", "sasl.mechanism": "OAUTHBEARER",
                               "sasl.oauthbearer.method": "oidc",
                               "sasl.oauthbearer.client.id": "device-1",
                               "sasl.oauthbearer.client.secret": "oidc-secret-1",
                               "sasl.oauthbearer.token.endpoint.url":
                                   "https://idp.invalid/token"})
    if rc == 0:
        harness.skip_not_here("this librdkafka has OIDC (built with libcurl): --check accepts it")
    assert rc == 78, err
    assert re.search(r"w\.properties:\d+: sasl\.oauthbearer\.method: .*not supported "
                     r"in this build", err), err
    assert "oidc-secret-1" not in err


def test_java_keystore_refused_by_check(tmp_path):
    jks = tmp_path / "keystore.jks"
    jks.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02")  # a JKS header
    rc, err = check(tmp_path, {"security.protocol": "SSL", "ssl.keystore.location": str(jks),
                               "ssl.keystore.password": "ks-secret-1"})
    assert rc == 78, err
    assert re.search(r"w\.properties:\d+: ssl\.keystore\.location: a Java KeyStore; librdkafka "
                     r"reads PKCS#12 only", err), err
    assert "ks-secret-1" not in err


# ---- certificate rotation (sink_kafka.c cannot reload; kafka/supervisor.c rebuilds) ----

def device_cert(tls, lifetime_s, ca="ca", cn="skiff-device-rotated"):
    """A client certificate and key (PEM bytes) signed by tls/CA.pem, valid
    from a minute ago for lifetime_s seconds: the short-lived kind a device
    gets from its fleet's CA."""
    import datetime
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    ca_key = serialization.load_pem_private_key((tls / f"{ca}.key").read_bytes(), None)
    ca_cert = x509.load_pem_x509_certificate((tls / f"{ca}.pem").read_bytes())
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
            .issuer_name(ca_cert.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=1))
            .not_valid_after(now + datetime.timedelta(seconds=lifetime_s))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), False)
            .sign(ca_key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def install_cert(certs, cert_key):
    """As certificate tools do: each file written beside and renamed into
    place, the key first (for a moment the pair does not match)."""
    cert, key = cert_key
    for name, data in (("device.key", key), ("device.pem", cert)):
        tmp = certs / f".{name}.tmp"
        tmp.write_bytes(data)
        os.rename(tmp, certs / name)


class Writer:
    """Appends numbered lines to path at about rate lines/s in a thread."""

    def __init__(self, path, start, n, rate=2000):
        import threading
        self.lines = [f"line {i:06d}" for i in range(start, start + n)]
        self.path, self.rate = path, rate
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        step = self.rate // 10
        with open(self.path, "a") as f:
            for i in range(0, len(self.lines), step):
                f.write("".join(l + "\n" for l in self.lines[i:i + step]))
                f.flush()
                time.sleep(0.1)

    def join(self):
        self.thread.join(60)
        return [l.encode() for l in self.lines]


def rotation_setup(tmp_path, wire, topic, first):
    sec = wire.security()
    certs = tmp_path / "certs"
    certs.mkdir()
    install_cert(certs, first)
    (tmp_path / "state").mkdir()
    (tmp_path / "in.log").write_text("")
    props = {"security.protocol": "SSL", "ssl.ca.location": sec["CA"],
             "ssl.certificate.location": str(certs / "device.pem"),
             "ssl.key.location": str(certs / "device.key")}
    conn = {"name": "wire", "connector.class": "FileStreamSource", "topic": topic,
            "file": str(tmp_path / "in.log")}
    return Skiff(tmp_path, worker(tmp_path, sec["MTLS"], props), [conn]), certs


def delivered_exactly(wire, topic, want, sk, timeout=60):
    """Waits until every value of want is in the topic; asserts nothing else
    is, and that duplicates stay within the records skiff keeps in flight."""
    deadline = time.monotonic() + timeout
    while True:
        got = [r["value"] for r in consume(wire.bootstrap, topic)]
        if set(got) >= set(want) or time.monotonic() > deadline:
            break
        time.sleep(1)
    missing = sorted(set(want) - set(got))
    assert not missing, (f"{len(missing)} lost, first {missing[:3]}; log:\n" +
                         "\n".join(sk.log_text().splitlines()[-30:]))
    assert set(got) == set(want)
    assert len(got) - len(set(got)) <= 20000  # queue.buffering.max.messages
    return len(got) - len(set(got))


def test_client_certificate_rotated_under_load(tmp_path, wire, topic):
    tls = wire.dir / "tls"
    expires = time.monotonic() + 14
    sk, certs = rotation_setup(tmp_path, wire, topic, device_cert(tls, 14))
    sk.start()
    writer = Writer(tmp_path / "in.log", 0, 16000)  # 2,000 lines/s for 8 s
    time.sleep(3)
    install_cert(certs, device_cert(tls, 3600))
    sk.wait_log(r"producer: .*device\.(pem|key) changed on disk", timeout=10)
    sk.wait_log(r"producer: a new producer after .*device\.(pem|key) changed", timeout=30)
    want = writer.join()
    # The first certificate expires; a broker restart makes every connection
    # anew: only a producer that reads the new certificate gets back in.
    time.sleep(max(0, expires + 1 - time.monotonic()))
    wire.stop()
    wire.start()
    more = Writer(tmp_path / "in.log", 16000, 1000).join()
    dups = delivered_exactly(wire, topic, want + more, sk)
    assert sk.stop() == 0
    assert sk.running() is False
    print(f"rotation under load: {len(want + more)} lines, 0 lost, {dups} duplicates")


@pytest.mark.parametrize("broken", ["garbage", "unknown_ca"])
def test_rotation_to_a_broken_certificate_logged_and_nothing_lost_once_fixed(tmp_path, wire,
                                                                              topic, broken):
    tls = wire.dir / "tls"
    sk, certs = rotation_setup(tmp_path, wire, topic, device_cert(tls, 3600))
    sk.start()
    want = Writer(tmp_path / "in.log", 0, 2000).join()
    if broken == "garbage":
        # Truncated mid-write, as a failed download leaves it.
        cert, key = device_cert(tls, 3600)
        install_cert(certs, (cert[:200], key))
        sk.wait_log(r"producer: no new producer after .*device\.pem changed: .*"
                    r"ssl\.certificate\.location", timeout=30)
    else:
        # A well-formed certificate the broker does not trust: the producer
        # is made, but cannot get in; what it holds must not be lost.
        install_cert(certs, device_cert(tls, 3600, ca="other-ca"))
        sk.wait_log(r"producer: a new producer after", timeout=30)
    want += Writer(tmp_path / "in.log", 2000, 2000).join()
    if broken == "unknown_ca":
        sk.wait_log(HANDSHAKE, timeout=30)
    mark = sk.log_mark()
    install_cert(certs, device_cert(tls, 3600))
    sk.wait_log(r"producer: a new producer after .*device\.(pem|key) changed", timeout=30,
                since=mark)
    want += Writer(tmp_path / "in.log", 4000, 500).join()
    delivered_exactly(wire, topic, want, sk)
    assert sk.stop() == 0


def test_sighup_with_new_producer_settings_under_load(tmp_path, wire, topic):
    """A reload that changes the producer's keys (another certificate's path,
    a librdkafka setting) makes a new producer after a drain; one whose keys
    librdkafka refuses is refused whole, and the running producer ships on."""
    import signal
    sec, tls = wire.security(), wire.dir / "tls"
    sk, _ = rotation_setup(tmp_path, wire, topic, device_cert(tls, 3600))
    sk.start()
    writer = Writer(tmp_path / "in.log", 0, 8000)  # 2,000 lines/s for 4 s
    time.sleep(1.5)
    other = tmp_path / "certs2"
    other.mkdir()
    install_cert(other, device_cert(tls, 3600, cn="skiff-device-2"))
    props = worker(tmp_path, sec["MTLS"], {
        "security.protocol": "SSL", "ssl.ca.location": sec["CA"],
        "ssl.certificate.location": str(other / "device.pem"),
        "ssl.key.location": str(other / "device.key"), "producer.linger.ms": "20"})
    sk.worker_file.write_text(harness.props_text(props))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"producer: a new producer after SIGHUP \(", timeout=30, since=mark)
    sk.wait_log(r"reload done", timeout=30, since=mark)
    want = writer.join()

    sk.worker_file.write_text(harness.props_text(dict(props,
                                                      **{"producer.compression.type": "zip"})))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload refused: the new producer settings do not load", timeout=30,
                since=mark)
    assert re.search(r"compression\.type", sk.log_text()[mark:])
    want += Writer(tmp_path / "in.log", 8000, 500).join()
    delivered_exactly(wire, topic, want, sk)
    assert sk.stop() == 0


def test_misspelt_secret_key_never_prints_its_value(tmp_path):
    """sasl.pasword=... is no key librdkafka knows, so nothing marks it as a
    secret: the error names the file, line and key with librdkafka's reason,
    never the value, at --check, at start and after SIGHUP. No broker needed."""
    import signal
    secret = "TOPSECRET-5f2c"
    bad = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
           "sasl.username": "alice", "sasl.pasword": secret}
    rc, err = check(tmp_path, bad)
    assert rc == 78, err
    assert re.search(r"w\.properties:\d+: sasl\.pasword: .*No such configuration property", err), err
    assert secret not in err, err

    (tmp_path / "state").mkdir(exist_ok=True)
    sk = Skiff(tmp_path, worker(tmp_path, "127.0.0.1:9", bad),
               [{"name": "c", "connector.class": "FileStreamSource", "topic": "t",
                 "file": str(tmp_path / "in.log")}])
    sk.start()
    assert sk.proc.wait(timeout=30) == 78, sk.log_text()
    assert re.search(r"sasl\.pasword: .*No such configuration property", sk.log_text())

    sk.worker_file.write_text(harness.props_text(worker(tmp_path, "127.0.0.1:9", {})))
    sk.start()
    sk.wait_log(r"running 1 connector", timeout=30)
    mark = sk.log_mark()
    sk.worker_file.write_text(harness.props_text(worker(tmp_path, "127.0.0.1:9", bad)))
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"sasl\.pasword", timeout=30, since=mark)
    time.sleep(0.5)
    assert sk.stop() == 0
    assert secret not in sk.log_text(), sk.log_text()[mark:]


def test_tls_file_missing_or_unreadable_named_at_its_own_line(tmp_path):
    """A missing ssl.*.location file says "No such file or directory" (not
    OpenSSL's "system lib"), and an error librdkafka gives when the producer
    is made names the line of the key it is about, not bootstrap.servers'."""
    garbage = tmp_path / "device.key"
    garbage.write_text("not a key\n")
    for props, says in [
        ({"ssl.key.location": str(tmp_path / "nope.key")},
         r"w\.properties:(\d+): ssl\.key\.location = .*nope\.key: No such file or directory"),
        ({"ssl.ca.location": str(tmp_path / "nope-ca.pem")},
         r"w\.properties:(\d+): ssl\.ca\.location = .*nope-ca\.pem: No such file or directory"),
        ({"ssl.key.location": str(garbage)}, r"w\.properties:(\d+): .*ssl\.key\.location"),
    ]:
        rc, err = check(tmp_path, dict({"security.protocol": "SSL"}, **props))
        assert rc == 78, err
        m = re.search(says, err)
        assert m, err
        lines = (tmp_path / "w.properties").read_text().splitlines()
        assert lines[int(m.group(1)) - 1].startswith(next(iter(props))), (m.group(0), lines)
