"""A device steered through Kafka topics, end to end (issue 28, design §4.2,
§5.2 tests 1-2): a running skiff with fleet.enabled and the operator's
`skiff fleet`, both against the real broker.

One device D with fleet.allow.* covering a tmp directory, FileStreamSource
and a topic prefix, one file source "app" the operator configures:

(a) config --wait -> "applied"; the file's lines arrive exactly once;
    fleet-connectors.json holds it; `fleet status --json` shows app RUNNING
    (fleet.heartbeat.interval.ms=1000);
(b) a config naming a file outside fleet.allow.files -> exit 1, "refused:",
    and the running app keeps shipping (no gap);
(c) pause -> PAUSED and nothing ships; resume -> the rest, 0 lost and 0
    duplicated over all of it;
(d) remove -> the connector gone and its status tombstoned;
(e) a config written while the device is down is applied at its start;
(f) a restart with nothing changed re-applies nothing.

Plus: a damaged fleet-state.json stops the start with exit 78 naming it."""

import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from fleetlib import device_view, fleet, make_device, states, status_records, tag  # noqa: E402


def lines(bootstrap, topic, n, timeout=60):
    """The payloads of topic once it holds at least n records (exactly what
    it holds then, after a short settle for any surplus)."""
    if n == 0:
        got = harness.consume(bootstrap, topic, timeout=3, allow_timeout=True)
    else:
        harness.consume(bootstrap, topic, n=n, timeout=timeout)
        got = harness.consume(bootstrap, topic, timeout=3, allow_timeout=True)
    return [r["value"].decode() for r in got]


def expect(src, first, last):
    return [fl.seq_line(i).decode() for i in range(first, last)]


def test_a_device_follows_its_config_topic(tmp_path, kafka):
    t = tag()
    d, prefix = f"gw-{t}", f"fleet-{t}-"
    topic, topic2 = f"{prefix}app", f"{prefix}app2"
    for x in (topic, topic2):
        harness.create_topic(kafka.bootstrap, x)
    rc, out, err = fleet("provision", "--device", d, "--bootstrap", kafka.bootstrap)
    assert rc == 0, err
    sk, allowed, state = make_device(tmp_path, kafka, d, prefix)
    src = fl.SeqSource(allowed / "app.log")
    src.append(100)
    sk.start()
    sk.wait_log(r"fleet: device " + d)
    b = ["--device", d, "--bootstrap", kafka.bootstrap]
    app = ["--set", "connector.class=FileStreamSource", "--set", f"file={src.path}"]

    # (a) configured from the topic: applied, shipped once, kept, RUNNING.
    rc, out, err = fleet("config", "app", *b, *app, "--set", f"topic={topic}", "--wait", "60")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err, sk.log_text())
    assert lines(kafka.bootstrap, topic, 100) == expect(src, 0, 100)
    kept = json.loads((state / "fleet-connectors.json").read_text())
    assert [c["name"] for c in kept["connectors"]] == ["app"], kept
    assert kept["connectors"][0]["config"]["file"] == str(src.path)
    seen = time.monotonic()
    view = device_view(kafka.bootstrap, d, lambda v: states(v).get("app") == "RUNNING")
    assert time.monotonic() - seen < 2 * 1.0 + 5  # two heartbeats, and the tool's own time
    assert view["health"] == "ok" and view["stale"] is False
    # The heartbeat's memory is the process's now, not 0 (nobody scraped).
    assert view["rss_kb"] > 1024, view

    # (b) a file outside fleet.allow.files: refused, app ships on.
    outside = tmp_path / "elsewhere.log"
    outside.write_text("secret\n")
    src.append(50)
    rc, out, err = fleet("config", "app", *b, "--set", "connector.class=FileStreamSource",
                         "--set", f"file={outside}", "--set", f"topic={topic}", "--wait", "60")
    assert rc == 1, (rc, out, err)
    assert f"{d}: refused: " in out and "outside fleet.allow.files" in out, out
    src.append(50)
    assert lines(kafka.bootstrap, topic, 200) == expect(src, 0, 200)
    assert "secret" not in lines(kafka.bootstrap, topic, 0)

    # (c) pause: PAUSED and nothing ships; resume: the rest, exactly once.
    rc, out, err = fleet("pause", "app", *b, "--wait", "30")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err)
    device_view(kafka.bootstrap, d, lambda v: states(v).get("app") == "PAUSED")
    src.append(70)
    time.sleep(3)
    assert lines(kafka.bootstrap, topic, 200) == expect(src, 0, 200)
    rc, out, err = fleet("resume", "app", *b, "--wait", "30")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err)
    device_view(kafka.bootstrap, d, lambda v: states(v).get("app") == "RUNNING")
    src.append(30)
    assert lines(kafka.bootstrap, topic, 300) == expect(src, 0, 300)

    # (d) remove: gone from the device, its status tombstoned.
    rc, out, err = fleet("remove", "app", *b, "--wait", "30")
    assert rc == 0 and f"{d}: applied" in out, (rc, out, err)
    view = device_view(kafka.bootstrap, d, lambda v: "app" not in states(v))
    assert view["connectors"] == []
    recs = status_records(kafka.bootstrap, d)
    last = {k: v for k, v in recs}
    assert "status-connector-app" in last and last["status-connector-app"] is None, recs
    assert last.get("status-task-app-0", None) is None
    assert json.loads((state / "fleet-connectors.json").read_text())["connectors"] == []
    src.append(20)
    time.sleep(2)
    assert lines(kafka.bootstrap, topic, 300) == expect(src, 0, 300)

    # (e) configured while the device is down: taken at its start. The file
    # holds 320 lines, 300 of them shipped before the remove; the connector
    # "app" again, of the same file, starts from the offsets it left (as
    # Connect keeps a deleted connector's offsets).
    assert sk.stop() == 0
    rc, out, err = fleet("config", "app", *b, *app, "--set", f"topic={topic2}")
    assert rc == 0, err
    sk.start()
    view = device_view(kafka.bootstrap, d, lambda v: states(v).get("app") == "RUNNING",
                       timeout=60)
    got2 = lines(kafka.bootstrap, topic2, 1)
    src.append(30)
    got2 = lines(kafka.bootstrap, topic2, len(got2) + 30)
    # From the offsets the removed app left: the 20 lines written while it
    # was gone, then the 30 after, each once.
    assert got2 == expect(src, 300, 350)
    assert lines(kafka.bootstrap, topic, 300) == expect(src, 0, 300)
    outcomes = [k for k, _ in status_records(kafka.bootstrap, d) if k == "skiff-outcome-app"]

    # (f) a restart with nothing changed: nothing applied again.
    assert sk.stop() == 0
    mark = sk.log_mark()
    sk.start()
    sk.wait_log(r"fleet: device " + d, since=mark)
    beats = [k for k, _ in status_records(kafka.bootstrap, d) if k == "skiff-heartbeat"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # two heartbeats of this run
        now = [k for k, _ in status_records(kafka.bootstrap, d) if k == "skiff-heartbeat"]
        if len(now) >= len(beats) + 2:
            break
        time.sleep(0.5)
    again = [k for k, _ in status_records(kafka.bootstrap, d) if k == "skiff-outcome-app"]
    assert len(again) == len(outcomes) == 6, (outcomes, again)  # a, b, c twice, d, e
    log = sk.log_text()[mark:]
    assert "(the fleet)" not in log, log
    src.append(10)
    got2 = lines(kafka.bootstrap, topic2, len(got2) + 10)
    assert got2 == expect(src, 300, 360)
    assert sk.stop() == 0
    print(f"records: {topic} {len(lines(kafka.bootstrap, topic, 300))}, "
          f"{topic2} {len(got2)}, outcomes {len(again)}")


def test_a_damaged_fleet_store_stops_the_start(tmp_path, kafka):
    d = f"gw-{tag()}"
    sk, _, state = make_device(tmp_path, kafka, d, "x-")
    (state / "fleet-state.json").write_text("{not json\n")
    sk.start()
    assert sk.wait(60) == 78
    log = sk.log_text()
    assert str(state / "fleet-state.json") in log, log
    assert "exit 78" in log


def test_a_device_name_no_topic_can_hold_stops_the_start(tmp_path, kafka):
    sk, _, _ = make_device(tmp_path, kafka, "gw_1", "x-")
    sk.start()
    assert sk.wait(60) == 78
    log = sk.log_text()
    assert re.search(r"worker\.properties:\d+: device\.id=gw_1: with fleet\.enabled", log), log
    assert "exit 78" in log
