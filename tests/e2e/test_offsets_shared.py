"""An offsets topic that others share (issue 24, docs/offsets.md "Offsets in
Kafka"): a device writes only the keys of the connectors it runs, whoever
else writes the topic (Kafka Connect, another skiff alone on the topic,
the other devices of a fleet), and its start costs it only its own keys.
Kafka Connect itself (a real distributed worker) is in
test_offsets_connect.py."""

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
import pytest  # noqa: E402
from test_offsets_topic import (key_of, latest, offset_records, topic_worker,  # noqa: E402
                                wait_offset)


def device_skiff(tmp_path, name, bootstrap, offsets, connectors, alone=False, **extra):
    """A device: its own directory, state directory and device.id."""
    state = tmp_path / name / "state"
    state.mkdir(parents=True, exist_ok=True)
    props = topic_worker(bootstrap, state, offsets, device__id=name, **extra)
    if alone:
        del props["offset.storage.file.filename"]
    return harness.Skiff(tmp_path, props, connectors, name=name)


def writers(records):
    """{key bytes: set of skiff.device values of its records}."""
    out = {}
    for r in records:
        out.setdefault(r["key"], set()).add(dict(r["headers"]).get("skiff.device"))
    return out


def test_restart_writes_only_its_own_keys(tmp_path, kafka, topic):
    """A skiff with an offsets file beside the topic, restarted, writes
    records only for the keys of its own connectors: the keys Connect wrote
    (records without skiff's headers) and those of a skiff that keeps its
    offsets in the topic alone stay as they were (before: a tombstone for
    each at the first flush, and both re-sent everything). The skiff alone
    then resumes without a repeat."""
    offsets = topic + "-offsets"
    mine_src, alone_src = fl.SeqSource(tmp_path / "mine.log"), fl.SeqSource(tmp_path / "alone.log")
    mine_src.append(100)
    alone_src.append(200)
    mine_key, alone_key = key_of("mine", mine_src.path), key_of("alone", alone_src.path)
    connect_key = key_of("connect-app", "/data/connect.log")
    for t in (topic + "-mine", topic + "-alone"):
        harness.create_topic(kafka.bootstrap, t, partitions=1)
    mine = device_skiff(tmp_path, "dev-mine", kafka.bootstrap, offsets,
                        [fl.file_connector("mine", mine_src.path, topic + "-mine")])
    alone = device_skiff(tmp_path, "dev-alone", kafka.bootstrap, offsets,
                         [fl.file_connector("alone", alone_src.path, topic + "-alone")],
                         alone=True)
    mine.start()
    wait_offset(kafka.bootstrap, offsets, mine_key, 100)
    assert mine.stop() == 0
    alone.start()
    fl.read_topic(kafka.bootstrap, topic + "-alone", 200)
    wait_offset(kafka.bootstrap, offsets, alone_key, 200)
    assert alone.stop() == 0
    # Connect's record: no headers, in the key's murmur2 partition.
    harness.produce(kafka.bootstrap, offsets, ['{"position":4000}'], key=connect_key,
                    partitioner="murmur2_random")
    before = latest(offset_records(kafka.bootstrap, offsets))

    mine.start()  # the restart: the file loaded, the topic read
    mine_src.append(50)
    wait_offset(kafka.bootstrap, offsets, mine_key, 150)
    assert mine.stop() == 0
    recs = offset_records(kafka.bootstrap, offsets)
    after = latest(recs)
    assert after[connect_key] == before[connect_key] == (b'{"position":4000}',
                                                          before[connect_key][1])
    assert after[alone_key] == before[alone_key]
    assert {k for k, who in writers(recs).items() if "dev-mine".encode() in who} == {mine_key}

    alone_src.append(10)
    alone.start()
    fl.read_topic(kafka.bootstrap, topic + "-alone", 210)
    wait_offset(kafka.bootstrap, offsets, alone_key, 210)
    assert alone.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic + "-alone"))
    assert seqs == list(range(210)), f"{len(seqs) - 210} lines repeated"


def test_fleet_recipe_two_devices_at_once(tmp_path, kafka, topic):
    """docs/offsets.md's fleet recipe: one shared topic, a connector name per
    device, device.id, offset files; two devices running at the same time,
    each restarted, one of them from a new card (its state directory lost).
    Neither stops, neither writes a record of the other's key, no line is
    sent twice (before: A took B's key into its file at a restart and later
    wrote its stale copy; B's next start exited 78). The two devices run on
    one machine: their topic locks (one writer per topic on a device) are
    told apart by spelling the cluster's address differently."""
    offsets = topic + "-offsets"
    devs = {}
    for name, bootstrap in (("dev-a", kafka.bootstrap),
                            ("dev-b", f"{kafka.bootstrap},{kafka.bootstrap}")):
        (tmp_path / name).mkdir()
        src = fl.SeqSource(tmp_path / name / "app.log")
        data = f"{topic}-{name}"
        harness.create_topic(kafka.bootstrap, data, partitions=1)
        sk = device_skiff(tmp_path, name, bootstrap, offsets,
                          [fl.file_connector(f"app-{name}", src.path, data)])
        devs[name] = {"src": src, "data": data, "sk": sk, "key": key_of(f"app-{name}", src.path)}

    def ship(name, n):
        d = devs[name]
        d["src"].append(n)
        wait_offset(kafka.bootstrap, offsets, d["key"], d["src"].next,
                    f"{name}'s offset of line {d['src'].next}")

    for d in devs.values():
        d["sk"].start()
    for name in devs:
        ship(name, 100)
    a, b = devs["dev-a"]["sk"], devs["dev-b"]["sk"]
    assert a.stop() == 0  # a new card for A: restored from the topic
    state = tmp_path / "dev-a" / "state"
    for f in state.iterdir():
        f.unlink()
    a.start()
    ship("dev-b", 100)
    ship("dev-a", 100)
    assert a.stop() == 0  # A again, from its file
    a.start()
    ship("dev-b", 100)
    ship("dev-a", 50)
    assert b.stop() == 0  # B's restart
    b.start()
    ship("dev-b", 50)
    ship("dev-a", 50)
    for name, d in devs.items():
        assert d["sk"].running(), f"{name} stopped:\n{d['sk'].log_text()[-2000:]}"
        assert d["sk"].stop() == 0
    recs = offset_records(kafka.bootstrap, offsets)
    for key, who in writers(recs).items():
        owner = [n for n, d in devs.items() if d["key"] == key]
        assert who == {owner[0].encode()}, f"{key}: written by {who}"
    for name, d in devs.items():
        seqs = fl.seqs_of(harness.consume(kafka.bootstrap, d["data"]))
        assert sorted(set(seqs)) == list(range(d["src"].next)), name
        assert len(seqs) == d["src"].next, f"{name}: {len(seqs) - d['src'].next} lines repeated"


def run_while_moving(cmd, stall=300):
    """Runs cmd, a tool that writes a line to stderr as it makes progress
    (fleetfill), for as long as it takes while it moves: on a machine that
    parallel runs share, a fill is slow, not stuck. Kills it and fails,
    with its last lines, only after stall seconds without a line. Returns
    (returncode, stdout, stderr)."""
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    err, out, last = [], [], [time.monotonic()]

    def pump_err():
        for ln in p.stderr:
            err.append(ln)
            last[0] = time.monotonic()

    pumps = [threading.Thread(target=pump_err, daemon=True),
             threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True)]
    for t in pumps:
        t.start()
    while p.poll() is None:
        if time.monotonic() - last[0] > stall:
            p.kill()
            p.wait()
            pytest.fail(f"{cmd[0]}: no progress for {stall}s, killed; its last lines:\n" +
                        "".join(err[-5:]))
        time.sleep(0.5)
    for t in pumps:
        t.join()
    return p.returncode, "".join(out), "".join(err)


def rss_after_shipping(tmp_path, kafka, name, offsets, topic, binary=None, lines=1000):
    """A device started on offsets (file and topic), its app.log of lines
    shipped and its offset in the topic: (VmHWM, VmRSS) in kB."""
    (tmp_path / name).mkdir()
    src = fl.SeqSource(tmp_path / name / "app.log")
    src.append(lines)
    data = f"{topic}-{name}"
    harness.create_topic(kafka.bootstrap, data, partitions=1)
    sk = device_skiff(tmp_path, name, kafka.bootstrap, offsets,
                      [fl.file_connector(f"app-{name}", src.path, data)])
    with pytest.MonkeyPatch.context() as mp:
        if binary is not None:
            mp.setenv("SKIFF_BIN", str(binary))
        sk.start()
    fl.read_topic(kafka.bootstrap, data, lines)
    wait_offset(kafka.bootstrap, offsets, key_of(f"app-{name}", src.path), lines, timeout=120)
    got = (fl.proc_status(sk.pid, "VmHWM"), fl.proc_status(sk.pid, "VmRSS"))
    assert sk.stop() == 0
    assert fl.seqs_of(harness.consume(kafka.bootstrap, data)) == list(range(lines))
    return got


def test_fleet_topic_of_200000_keys(tmp_path, kafka, topic):
    """A shared offsets topic holding the offsets of 10,000 other devices of
    20 files each (200,000 keys, per-device connector names): a device
    starts and ships (before: "offset store full", exit 78, after 134 MB),
    and, without sanitizers (plain_skiff), its peak and final RSS stay
    within 5 MB of what it holds on an empty topic."""
    full = topic + "-fleet"
    rc, out, err = run_while_moving([str(harness.tool("fleetfill")), "-b", kafka.bootstrap,
                                     "-t", full, "-d", "10000", "-f", "20"])
    assert rc == 0, err[-2000:]
    assert out.startswith("200000 records"), out
    rss_after_shipping(tmp_path, kafka, "dev-sanitized", full, topic)
    plain = harness.plain_skiff(required=False)
    if plain is None:
        pytest.skip("no skiff without sanitizers (SKIFF_PLAIN_BIN, build-release/skiff): "
                    "started and shipped, RSS not measured")
    hwm0, rss0 = rss_after_shipping(tmp_path, kafka, "dev-empty", topic + "-empty", topic, plain)
    hwm, rss = rss_after_shipping(tmp_path, kafka, "dev-me", full, topic, plain)
    print(json.dumps({"binary": str(plain), "peak_rss_kb": [hwm0, hwm], "rss_kb": [rss0, rss]}))
    assert hwm - hwm0 <= 5 * 1024, f"peak RSS {hwm} kB against {hwm0} kB on an empty topic"
    assert rss - rss0 <= 5 * 1024, f"RSS {rss} kB against {rss0} kB on an empty topic"


def test_reload_added_connector_resumes_from_the_topic(tmp_path, kafka, topic):
    """Only the running connectors' keys are read at start: a connector a
    reload (SIGHUP) adds has its offsets read from the topic then, and
    resumes where it stopped instead of sending its file again."""
    offsets = topic + "-offsets"
    srcs = {n: fl.SeqSource(tmp_path / f"{n}.log") for n in ("one", "two")}
    for n, src in srcs.items():
        src.append(50)
        harness.create_topic(kafka.bootstrap, f"{topic}-{n}", partitions=1)

    def worker(*names):
        p = topic_worker(kafka.bootstrap, tmp_path, offsets, device__id="dev-r")
        del p["offset.storage.file.filename"]
        for n in names:
            p.update({f"connectors.{n}.{k}": v for k, v in fl.file_connector(
                n, srcs[n].path, f"{topic}-{n}").items() if k != "name"})
        return p

    sk = harness.Skiff(tmp_path, worker("one", "two"), [])
    sk.start()
    for n in srcs:
        wait_offset(kafka.bootstrap, offsets, key_of(n, srcs[n].path), 50)
    assert sk.stop() == 0
    sk.worker_file.write_text(harness.props_text(worker("one")))
    sk.start()
    sk.wait_log(r"running 1 connector", timeout=60)
    srcs["two"].append(20)
    sk.worker_file.write_text(harness.props_text(worker("one", "two")))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload done", timeout=60, since=mark)
    wait_offset(kafka.bootstrap, offsets, key_of("two", srcs["two"].path), 70)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, f"{topic}-two"))
    assert seqs == list(range(70)), f"{len(seqs) - 70} lines repeated"
