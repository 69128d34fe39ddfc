"""Connect's BasicAuthSecurityRestExtension, admin.listeners and
/admin/loggers (issue 26): the same JAAS file and users file given to a real
Connect 3.9.1 standalone and to skiff get the same answers (401 with
Connect's body, 404 and 405 before authentication, the admin listener
without it); the users file is read again when it changes; what Connect
would run with but skiff refuses (an empty users file) or cannot run (a Java
extension, another login module) is refused by --check and by the start
alike; no password in any output."""

import os
import re
import subprocess
import time

import pytest

import connectjvm
from harness import consume, skiff_bin
from restlib import check, free_port, request, start_skiff, wait_for

MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
EXT = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
NAME = "local-file-source"
ALICE = ("alice", "wonder-secret-1")


def jaas(d, users="alice: wonder-secret-1\nbob=builder-secret-2\n", module=MODULE):
    d.mkdir(parents=True, exist_ok=True)
    (d / "users.properties").write_text(users)
    (d / "jaas.conf").write_text(
        "// the REST API's users\nKafkaConnect {\n"
        f"  {module} required\n  file=\"{d / 'users.properties'}\";\n}};\n"
        "/* another entry, not Connect's */\nOther { x.Y optional; };\n")
    return d / "jaas.conf"


# (method, path, credentials or None): what the two must answer alike.
CASES = [
    ("GET", "/connectors", None), ("GET", "/connectors", ALICE),
    ("GET", "/connectors", ("alice", "wrong-secret-9")), ("GET", "/connectors", ("eve", "x")),
    ("GET", "/connectors", ("bob", "builder-secret-2")), ("GET", "/", None),
    ("GET", "/health", None), ("GET", f"/connectors/{NAME}/status", None),
    ("GET", "/connectors/nope", None), ("GET", "/connectors/nope", ALICE),
    ("GET", "/nope", None), ("POST", "/", None), ("DELETE", "/connectors", None),
    ("PUT", f"/connectors/{NAME}/restart", None), ("HEAD", "/connectors", None),
    ("OPTIONS", "/connectors", None), ("PUT", f"/connectors/{NAME}/pause", None),
    ("GET", "/admin/loggers", None), ("GET", "/admin/loggers", ALICE),
]
ADMIN_CASES = [("GET", "/admin/loggers", None), ("GET", "/admin/loggers/root", None),
               ("GET", "/connectors", None), ("GET", "/", None)]


def answer(port, method, path, creds, headers=None):
    r = request(port, method, path, auth=creds, headers=headers)
    return r.status, r.ctype, r.raw


def test_basic_auth_answers_as_connect(tmp_path, kafka, topic):
    conf = jaas(tmp_path / "auth")
    admin = free_port()
    sk, port, src = start_skiff(
        tmp_path, kafka.bootstrap, topic,
        {"rest.extension.classes": EXT, "admin.listeners": f"http://127.0.0.1:{admin}"},
        env={"KAFKA_OPTS": f"-Xmx64m -Djava.security.auth.login.config={conf}"})
    cadmin = free_port()
    connect = connectjvm.Connect(
        tmp_path / "connect", "standalone",
        {"bootstrap.servers": kafka.bootstrap,
         "key.converter": "org.apache.kafka.connect.json.JsonConverter",
         "value.converter": "org.apache.kafka.connect.json.JsonConverter",
         "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
         "rest.extension.classes": EXT},
        [{"name": NAME, "connector.class": "FileStreamSource", "file": str(src),
          "topic": topic + "-c"}],
        jvm_args=[f"-Djava.security.auth.login.config={conf}"], admin_port=cadmin)
    try:
        connect.wait_up()
        wait_for(lambda: request(connect.port, "GET", f"/connectors/{NAME}/status",
                                 auth=ALICE).status == 200, 60, what="Connect's connector")
        for method, path, creds in CASES:
            s, c = answer(port, method, path, creds), answer(connect.port, method, path, creds)
            assert s[0] == c[0], (method, path, creds, s, c)
            if s[0] == 401:
                assert s == c  # body and Content-Type too
        for method, path, creds in ADMIN_CASES:
            s, c = answer(admin, method, path, creds), answer(cadmin, method, path, creds)
            assert s[0] == c[0], (method, path, s, c)
    finally:
        connect.stop()
    # Credentials given, the API works as ever.
    assert request(port, "PUT", f"/connectors/{NAME}/pause", auth=ALICE).status == 202
    assert request(port, "PUT", f"/connectors/{NAME}/resume", auth=ALICE).status == 202
    assert sk.stop() == 0
    log = sk.log_text()
    assert "wonder-secret-1" not in log and "builder-secret-2" not in log


def test_users_read_again_when_they_change(tmp_path, kafka, topic):
    conf = jaas(tmp_path / "auth")
    users = tmp_path / "auth" / "users.properties"
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic,
                                {"rest.extension.classes": EXT,
                                 "java.security.auth.login.config": str(conf)})
    pid = sk.pid
    assert request(port, "GET", "/connectors", auth=ALICE).status == 200
    carol = ("carol", "new-secret-4")
    assert request(port, "GET", "/connectors", auth=carol).status == 401
    tmp = users.with_name(".users.tmp")
    tmp.write_text("carol: new-secret-4\n")
    os.rename(tmp, users)
    wait_for(lambda: request(port, "GET", "/connectors", auth=carol).status == 200, 15, 0.2,
             "carol let in")
    assert request(port, "GET", "/connectors", auth=ALICE).status == 401
    # Emptied: the users read before stay, and the log says why.
    users.write_text("")
    sk.wait_log(r"users\.properties changed, and cannot be used: .*has no user", 15)
    assert request(port, "GET", "/connectors", auth=carol).status == 200
    assert request(port, "GET", "/connectors").status == 401
    assert sk.pid == pid
    assert sk.stop() == 0
    assert "new-secret-4" not in sk.log_text()


def test_refused_by_check_and_start_alike(tmp_path):
    d = tmp_path / "auth"
    cases = [
        ({"rest.extension.classes": "com.example.MyExtension"},
         r"rest\.extension\.classes: 'com\.example\.MyExtension': skiff has one REST extension"),
        ({"rest.extension.classes": EXT}, r"BasicAuthSecurityRestExtension needs a JAAS file"),
        ({"rest.extension.classes": EXT,
          "java.security.auth.login.config": str(jaas(d / "a", users=""))},
         r"has no user: Connect would let every request in; skiff refuses"),
        ({"rest.extension.classes": EXT,
          "java.security.auth.login.config": str(jaas(d / "b", module="com.example.Ldap"))},
         r"names the login module com\.example\.Ldap"),
        ({"rest.extension.classes": EXT,
          "java.security.auth.login.config": str(d / "missing.conf")},
         r"JAAS file .*missing\.conf: No such file"),
    ]
    for i, (keys, says) in enumerate(cases):
        keys = dict(keys, listeners="http://127.0.0.1:1")
        rc, out = check(tmp_path, keys, name=f"c{i}")
        assert rc == 78, (keys, out)
        assert re.search(says, out), (says, out)
        r = subprocess.run([str(skiff_bin()), str(tmp_path / f"c{i}" / "w.properties")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        assert r.returncode == 78 and re.search(says, r.stdout.decode()), r.stdout
    # The JAAS file from KAFKA_OPTS, as Connect takes it; the users' passwords
    # never printed.
    conf = jaas(d / "ok")
    rc, out = check(tmp_path, {"listeners": "http://127.0.0.1:1", "rest.extension.classes": EXT},
                    name="env", env={"KAFKA_OPTS": f"-Djava.security.auth.login.config={conf}"})
    assert rc == 0, out
    assert "secret" not in out


def test_malformed_jaas_named_by_its_line(tmp_path):
    """A JAAS file Java would refuse is refused naming its own line, not
    only the worker key that points at it (hostile finding: a quote never
    closed swallowed the rest of the file into the message, with no line;
    a second KafkaConnect entry was ignored, where Java refuses it). Java's
    flags are case-insensitive: REQUIRED is taken."""
    d = tmp_path / "auth"
    d.mkdir()
    users = d / "users.properties"
    users.write_text("alice: wonder-secret-1\n")
    entry = f'KafkaConnect {{\n  {MODULE} required\n  file="{users}";\n}};\n'
    cases = [
        ("quote.conf", f'// users\nKafkaConnect {{\n  {MODULE} required\n  file="{users};\n}};\n',
         r"quote\.conf:4: a quoted string that never ends"),
        ("flag.conf", f'KafkaConnect {{\n  {MODULE}\n    requird\n  file="{users}";\n}};\n',
         r"flag\.conf:3: the KafkaConnect entry is not .*\(near 'requird'\)"),
        ("twice.conf", entry + "\n" + entry, r"twice\.conf:6: a second KafkaConnect entry "
         r"\(the first is on line 1\)"),
        ("after.conf", entry + "Other {\n  x.Y optional\n", r"after\.conf:7: not a JAAS"),
        ("module.conf", "\n\nKafkaConnect {\n  com.example.Ldap required;\n};\n",
         r"module\.conf:4: the KafkaConnect entry names the login module com\.example\.Ldap"),
    ]
    for name, text, says in cases:
        (d / name).write_text(text)
        keys = {"listeners": "http://127.0.0.1:1", "rest.extension.classes": EXT,
                "java.security.auth.login.config": str(d / name)}
        rc, out = check(tmp_path, keys, name=name)
        assert rc == 78, (name, out)
        assert re.search(r"w\.properties:\d+: JAAS file \S+/" + says, out), (says, out)
        assert "\n};" not in out, out  # no file text spilled into the message
        r = subprocess.run([str(skiff_bin()), str(tmp_path / name / "w.properties")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        assert r.returncode == 78 and re.search(says, r.stdout.decode()), r.stdout
    (d / "upper.conf").write_text(entry.replace("required", "REQUIRED"))
    rc, out = check(tmp_path, {"listeners": "http://127.0.0.1:1", "rest.extension.classes": EXT,
                               "java.security.auth.login.config": str(d / "upper.conf")},
                    name="upper")
    assert rc == 0, out


def test_admin_loggers_change_the_level_at_run_time(tmp_path, kafka, topic):
    sk, port, src = start_skiff(tmp_path, kafka.bootstrap, topic, {"log.level": "info"})
    assert request(port, "GET", "/admin/loggers").json == \
        {"root": {"level": "INFO", "last_modified": None}}
    mark = sk.log_mark()
    src.write_text("line 1\n")
    consume(kafka.bootstrap, topic, n=1)
    r = request(port, "PUT", "/admin/loggers/root", {"level": "DEBUG"})
    assert (r.status, r.json) == (200, ["root"])
    j = request(port, "GET", "/admin/loggers/root").json
    assert j["level"] == "DEBUG" and j["last_modified"] > time.time() * 1000 - 60000
    with open(src, "a") as f:
        f.write("line 2\n")
    consume(kafka.bootstrap, topic, n=2)
    sk.wait_log(r"skiff debug:", 15, since=mark)
    assert "skiff debug:" not in sk.log_text()[:mark]
    assert request(port, "PUT", "/admin/loggers/root", {"level": "bogus"}).status == 404
    assert request(port, "PUT", "/admin/loggers/root", {}).status == 400
    assert request(port, "GET", "/admin/loggers/org.apache.kafka").status == 404
    assert request(port, "PUT", "/admin/loggers/root", {"level": "warn"}).status == 200
    assert request(port, "GET", "/admin/loggers/root").json["level"] == "WARN"
    assert sk.stop() == 0
    # admin.listeners= (empty): no /admin at all, as Connect.
    sk2, port2, _ = start_skiff(tmp_path, kafka.bootstrap, topic, {"admin.listeners": ""},
                                name="noadmin")
    assert request(port2, "GET", "/admin/loggers").status == 404
    assert request(port2, "GET", "/connectors").status == 200
    assert sk2.stop() == 0
