"""Browsers kept out of the REST API (issue 26): a web page on the same
machine reached even a loopback listener, by DNS rebinding (a foreign Host:
200) and by a cross-site "simple" request (a text/plain POST to /restart
from a foreign Origin: 204, and the connector restarted). Now a Host that is
not the listener's is refused, a body must be JSON (415, as Connect's
resources), a foreign Origin is refused, and Connect's
access.control.allow.origin lets a listed page in with CORS headers."""

import socket

from restlib import request, start_skiff

NAME = "local-file-source"


def restarts(sk):
    return sk.log_text().count(f"connector {NAME}: restarting")


def test_foreign_host_refused(tmp_path, kafka, topic):
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic,
                              {"rest.advertised.host.name": "gateway-7.example"})
    for host in ["evil.example", f"evil.example:{port}", "127.0.0.1.evil.example",
                 f"localhost.evil.example:{port}", "[::1"]:
        r = request(port, "GET", "/connectors", headers={"Host": host})
        assert r.status == 421, (host, r)
        assert "DNS rebinding" in r.json["message"]
    for host in [f"127.0.0.1:{port}", "127.0.0.1", f"localhost:{port}", "LOCALHOST.",
                 f"[::1]:{port}", f"{socket.gethostname()}:{port}", "gateway-7.example",
                 f"10.1.2.3:{port}"]:
        r = request(port, "GET", "/connectors", headers={"Host": host})
        assert (r.status, r.json) == (200, [NAME]), (host, r)
    assert sk.stop() == 0


def test_cross_site_requests_refused(tmp_path, kafka, topic):
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic)
    before = restarts(sk)
    path = f"/connectors/{NAME}/restart"
    evil = {"Origin": "http://evil.example"}
    # What a page can send without a preflight: text/plain, a form, no body.
    for body, ctype in [(b'{"x":1}', "text/plain"),
                        (b"a=b", "application/x-www-form-urlencoded"), (None, None)]:
        r = request(port, "POST", path, body, ctype=ctype, headers=evil)
        assert r.status == 403, (ctype, r)
        assert "evil.example" in r.json["message"]
    assert request(port, "POST", path, headers={"Origin": "null"}).status == 403
    assert request(port, "PUT", f"/connectors/{NAME}/stop", headers=evil).status == 403
    assert request(port, "GET", "/connectors", headers=evil).status == 403
    # A body that is not JSON is refused whatever its origin, as Connect does.
    r = request(port, "POST", path, b"{}", ctype="text/plain")
    assert (r.status, r.ctype) == (415, None), r
    r = request(port, "PATCH", f"/connectors/{NAME}/offsets", b"{}", ctype=None)
    assert r.status == 415, r
    assert restarts(sk) == before
    assert request(port, "GET", f"/connectors/{NAME}/status").json["connector"]["state"] == \
        "RUNNING"
    # The listener's own origin, and scripts (no Origin), act.
    own = {"Origin": f"http://127.0.0.1:{port}"}
    assert request(port, "POST", path, headers=own).status == 204
    assert request(port, "POST", path).status == 204
    assert request(port, "POST", path, b"", ctype="application/json; charset=utf-8").status \
        == 204
    sk.wait_log(f"connector {NAME}: restarted", 30)
    assert sk.stop() == 0


def test_listed_origin_gets_cors(tmp_path, kafka, topic):
    sk, port, _ = start_skiff(tmp_path, kafka.bootstrap, topic,
                              {"access.control.allow.origin": "https://dash.example, http://*.lan",
                               "access.control.allow.methods": "GET,PUT"})
    dash = {"Origin": "https://dash.example"}
    r = request(port, "GET", "/connectors", headers=dash)
    assert r.status == 200 and r.headers["access-control-allow-origin"] == "https://dash.example"
    r = request(port, "OPTIONS", f"/connectors/{NAME}/pause",
                headers={"Origin": "http://ops.lan", "Access-Control-Request-Method": "PUT"})
    assert r.status == 200, r
    assert r.headers["access-control-allow-origin"] == "http://ops.lan"
    assert "PUT" in r.headers["access-control-allow-methods"]
    r = request(port, "OPTIONS", f"/connectors/{NAME}/pause",
                headers={"Origin": "http://ops.lan", "Access-Control-Request-Method": "DELETE"})
    assert r.status == 403
    assert request(port, "PUT", f"/connectors/{NAME}/pause", headers=dash).status == 202
    assert request(port, "PUT", f"/connectors/{NAME}/resume", headers=dash).status == 202
    assert request(port, "GET", "/connectors", headers={"Origin": "https://evil.example"}).status \
        == 403
    assert sk.stop() == 0
