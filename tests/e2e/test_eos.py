"""Exactly-once (issue 12 part 3, docs/exactly-once.md): records and their
offsets in one Kafka transaction. A read_committed consumer sees every line
once, in order, after kill -9 of skiff and after a broker restart; without
exactly-once the same kills repeat lines (the negative control); without an
offsets topic the setting is refused."""

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

KILLS = fl.scaled(15, 200)  # about 1 s each; 15: more than the 10 of the control that repeats


def eos_worker(bootstrap, state, offsets, eos=True, **extra):
    props = fl.worker_props(bootstrap, state, **extra)
    props.update({"offset.storage.topic": offsets,
                  "offset.storage.replication.factor": "1"})
    if eos:
        props["exactly.once.source.support"] = "enabled"
    return props


def committed_seqs(bootstrap, topic, n, timeout=60):
    return fl.seqs_of(harness.consume(bootstrap, topic, n=n, timeout=timeout,
                                      isolation="read_committed"))


def restarted_after_75(sk, mark):
    """True; first starts sk again if it exited 75 by itself since mark (the
    start-up failed for now, e.g. InitProducerId answered "Not coordinator"
    by a loaded broker: what systemd restarts). Any other exit fails."""
    if not sk.running():
        assert sk.exitcode == 75 and "exit 75: transient failure" in fl.log_since(sk, mark), \
            f"skiff exited by itself ({sk.exitcode}):\n{fl.log_since(sk, mark)[-2000:]}"
        sk.start()
    return True


def kill_loop(tmp_path, bootstrap, topic, eos, kills, seed, boundary=None):
    rng = random.Random(seed)
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(3000)
    state = tmp_path / "state"
    state.mkdir()
    sk = fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets", eos),
                       [fl.file_connector("eos", src.path, topic, **(boundary or {}))])
    # 20 s at the full rate, then a trickle: the lives below wait for the
    # start-up, which a loaded machine makes long, and 190,000 lines written
    # meanwhile outgrew the final read of 60 s.
    writer = fl.Writer(src, rate=3000, limit=60000, trickle=300)
    writer.start()
    try:
        for k in range(kills):
            last = k == kills - 1
            if last:
                committed = len(harness.consume(bootstrap, topic, isolation="read_committed"))
            mark = sk.log_mark()
            sk.start()
            # A life is 0.2 to 1.2 s of running, counted from the end of the
            # start-up for three lives in four, from the exec for the others
            # (kills during the start-up). The start-up alone can outlast
            # 1.2 s on a loaded machine (with exactly-once, InitProducerId
            # waits for the broker to abort the transaction the last kill
            # left open): counted from the exec only, 15 lives committed
            # nothing at a load average of 12.
            if rng.random() < 0.75:
                fl.wait_for(lambda: restarted_after_75(sk, mark) and
                            re.search(r"running \d+ connector", fl.log_since(sk, mark)),
                            60, f"life {k}: skiff running its connector")
            time.sleep(rng.uniform(0.2, 1.2))
            if last and committed == 0:
                # The kills would have tested nothing: the last life runs
                # until something is committed (or the assert below says so).
                harness.consume(bootstrap, topic, n=1, timeout=60,
                                isolation="read_committed", allow_timeout=True)
            restarted_after_75(sk, mark)
            sk.kill9()
    finally:
        total = writer.stop()
    # Whole-topic reads get 120 s: 160,000 records took the consume tool
    # more than its default 30 s at a load average of 13.
    before = len(harness.consume(bootstrap, topic, isolation="read_committed", timeout=120))
    fl.figure(f"kill9_committed_before_last_start_eos_{eos}", f"{before} of {total}")
    assert before > 0, "nothing shipped between the kills: they tested nothing"
    mark = sk.log_mark()
    sk.start()
    deadline = time.monotonic() + 180
    while not (restarted_after_75(sk, mark) and
               len(harness.consume(bootstrap, topic, n=total, timeout=20,
                                   isolation="read_committed", allow_timeout=True)) >= total):
        assert time.monotonic() < deadline, f"not all {total} lines committed in 180 s"
    assert sk.stop() == 0
    if eos:
        assert "exactly-once: transactions on" in sk.log_text()
    return total, fl.seqs_of(harness.consume(bootstrap, topic, isolation="read_committed",
                                             timeout=120))


# The boundaries the kills meet: poll (a transaction per burst, at most one a
# second), and interval at 100 ms: counted from the start as Connect does, so
# a longer one commits nothing in lives of 0.2 to 1.2 s on a loaded machine
# (at 300 ms, one run committed nothing before the last start).
BOUNDARIES = {"poll": {},
              "interval": {"transaction__boundary": "interval",
                           "transaction__boundary__interval__ms": 100}}


# 15 lives that wait for the start-up and a read of it all: about 160 s at a
# load average of 16; at 30 past the old limit of 240 s.
@pytest.mark.skiff_timeout(fl.scaled(480, 1200))
@pytest.mark.parametrize("boundary", list(BOUNDARIES))
def test_eos_kill9_loop(tmp_path, kafka, topic, boundary):
    """KILLS x kill -9 while an application appends: read_committed sees
    every line exactly once, in file order, at either boundary."""
    seed = int(os.environ.get("SKIFF_FAULT_SEED") or time.time_ns() % 1_000_000)
    print(f"SKIFF_FAULT_SEED={seed}")
    total, seqs = kill_loop(tmp_path, kafka.bootstrap, topic, True, KILLS, seed,
                            BOUNDARIES[boundary])
    dups = len(seqs) - len(set(seqs))
    fl.figure("eos_kill9_lines", total)
    assert dups == 0, f"{dups} lines repeated under exactly-once"
    assert seqs == list(range(total)), "a line missing or out of order"


def test_at_least_once_kill9_repeats(tmp_path, kafka, topic):
    """The negative control: the same kills without exactly-once repeat lines
    (what the transactions remove)."""
    total, seqs = kill_loop(tmp_path, kafka.bootstrap, topic, False, 10, 7)
    assert sorted(set(seqs)) == list(range(total))
    fl.figure("alo_kill9_repeats", len(seqs) - total)
    assert len(seqs) > total, "no line repeated: the control shows nothing"


@pytest.mark.skiff_timeout(240)
def test_eos_broker_restart(tmp_path, kafka_private, topic):
    """The broker stops and comes back mid-run: skiff aborts or waits, exits
    75 if it must (systemd restarts it; here the test does), and read_committed
    still sees every line exactly once, in order."""
    kafka_private.start()
    bootstrap = kafka_private.bootstrap
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(2000)
    state = tmp_path / "state"
    state.mkdir()
    sk = fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets"),
                       [fl.file_connector("eosb", src.path, topic)])
    writer = fl.Writer(src, rate=2000)
    writer.start()
    sk.start()
    committed_seqs(bootstrap, topic, 3000)
    kafka_private.stop()
    time.sleep(3)
    kafka_private.start()
    time.sleep(2)
    total = writer.stop()
    deadline, restarts = time.monotonic() + 120, 0
    while True:
        if not sk.running():
            assert sk.exitcode == 75, f"skiff exited {sk.exitcode}, not 75"
            sk.start()
            restarts += 1
        recs = harness.consume(bootstrap, topic, isolation="read_committed")
        if len(recs) >= total or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert sk.stop() == 0
    fl.figure("eos_broker_restart_skiff_restarts", restarts)
    seqs = fl.seqs_of(harness.consume(bootstrap, topic, isolation="read_committed"))
    assert len(seqs) - len(set(seqs)) == 0, "lines repeated"
    assert seqs == list(range(total))


def test_eos_needs_offsets_topic(tmp_path):
    """exactly.once.source.support=enabled with only a file: refused, saying why."""
    worker = tmp_path / "w.properties"
    worker.write_text("bootstrap.servers=localhost:1\n"
                      f"offset.storage.file.filename={tmp_path}/offsets\n"
                      "exactly.once.source.support=enabled\n"
                      "connectors.a.connector.class=FileStreamSource\n"
                      f"connectors.a.file={tmp_path}/a.log\nconnectors.a.topic=t\n")
    r = subprocess.run([str(harness.skiff_bin()), str(worker)], stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=30)
    assert r.returncode == 78
    assert b"exactly.once.source.support=enabled needs offset.storage.topic" in r.stderr


@pytest.mark.skiff_timeout(120)
def test_eos_new_producer_on_reload(tmp_path, kafka, topic):
    """A reload that changes a producer key (or a rotated certificate) makes a
    new producer: the old one's transaction commits first, the new one is
    fenced in; read_committed still sees every line once, in order."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(2000)
    state = tmp_path / "state"
    state.mkdir()
    props = eos_worker(kafka.bootstrap, state, topic + "-offsets")
    sk = fl.FaultSkiff(tmp_path, props, [fl.file_connector("eosr", src.path, topic)])
    writer = fl.Writer(src, rate=2000)
    writer.start()
    sk.start()
    committed_seqs(kafka.bootstrap, topic, 3000)
    props["producer.linger.ms"] = "7"
    sk.worker_file.write_text(harness.props_text(props))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"a new producer after", timeout=60, since=mark)
    time.sleep(1)
    total = writer.stop()
    committed_seqs(kafka.bootstrap, topic, total)
    assert sk.running(), f"skiff exited {sk.exitcode}"
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, isolation="read_committed"))
    assert seqs == list(range(total))


def test_eos_interval_boundary(tmp_path, kafka, topic):
    """transaction.boundary=interval: the last lines commit within the
    interval, with nothing else to wake skiff."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(3000)
    props = eos_worker(kafka.bootstrap, tmp_path, topic + "-offsets",
                       offset__flush__interval__ms=60000)
    sk = fl.FaultSkiff(tmp_path, props, [fl.file_connector(
        "eosi", src.path, topic, transaction__boundary="interval",
        transaction__boundary__interval__ms=500)])
    sk.start()
    assert committed_seqs(kafka.bootstrap, topic, 3000, timeout=30) == list(range(3000))
    assert sk.stop() == 0


def offsets_records(bootstrap, topic, since_ms):
    """(all, of them transactions') records of the offsets topic of topic
    timestamped since since_ms, read_committed. A transaction's offset
    records carry no skiff.store header; the store's own writes do."""
    recs = [r for r in harness.consume(bootstrap, topic + "-offsets", isolation="read_committed")
            if r["timestamp"] >= since_ms]
    txn = [r for r in recs if "skiff.store" not in dict(r["headers"])]
    return len(recs), len(txn)


@pytest.mark.skiff_timeout(120)
@pytest.mark.parametrize("boundary", ["poll", "interval"])
def test_eos_transactions_follow_the_work(tmp_path, kafka, topic, boundary):
    """An application logging 100 lines a second, then idle: transactions
    follow the lines, not the loop. At most one a second (it was 45 a second
    whatever the rate: one per wake-up of the loop), none while idle, and the
    offsets topic gets the transactions' offset records and nothing more
    (the store's flush wrote them again: two records a second), about one
    per offset.flush.interval.ms of 1 s. A lone line after a commit still
    commits with nothing else to wake skiff. Every line once, in order."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    extra = {} if boundary == "poll" else {"transaction__boundary": "interval",
                                          "transaction__boundary__interval__ms": 1000}
    sk = fl.FaultSkiff(tmp_path, eos_worker(kafka.bootstrap, tmp_path, topic + "-offsets",
                                            offset__flush__interval__ms=1000),
                       [fl.file_connector("eosw", src.path, topic, **extra)])
    sk.start()
    committed_seqs(kafka.bootstrap, topic, 10)
    t0 = time.time()
    writer = fl.Writer(src, rate=100, chunk_interval=0.01)
    writer.start()
    time.sleep(6)
    total = writer.stop()
    assert committed_seqs(kafka.bootstrap, topic, total) == list(range(total))
    time.sleep(3)  # idle
    src.append(1)  # a lone line, within a second of the last commit or not
    assert committed_seqs(kafka.bootstrap, topic, total + 1, timeout=15) == \
        list(range(total + 1))
    seconds = time.time() - t0
    records, txns = offsets_records(kafka.bootstrap, topic, int(t0 * 1000))
    fl.figure(f"eos_{boundary}_transactions_per_s_at_100_lines_per_s", f"{txns / seconds:.2f}")
    fl.figure(f"eos_{boundary}_offsets_records_per_s", f"{records / seconds:.2f}")
    assert txns <= seconds + 2, f"{txns} transactions in {seconds:.1f} s of 100 lines/s"
    assert records <= seconds + 2, f"{records} offsets records in {seconds:.1f} s ({txns} " \
        "of transactions)"
    assert sk.stop() == 0


OUTAGE = 12  # s: longer than the 10 s a start gave the cluster before it exited 75
SPIN_BOUND = 50  # clock ticks over the 10 s waited; a busy loop takes ~1000


def cpu_ticks(pid):
    """utime + stime of a process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def offline_skiff(tmp_path, bootstrap, topic, lines):
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(lines)
    state = tmp_path / "state"
    state.mkdir()
    return fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets",
                                              offset__flush__timeout__ms=1000),
                         [fl.file_connector("eoso", src.path, topic)])


@pytest.mark.serial
@pytest.mark.skiff_timeout(120)
def test_eos_waits_for_the_cluster(tmp_path, kafka, kafka_late, topic):
    """Started with the cluster unreachable, exactly-once skiff waits for it
    (it exited 75 after 10 s: under systemd a restart every 20 s for the
    whole outage), sleeping; then ships every line once. The offsets file is
    never used alone (it may lag the committed transactions)."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    sk = offline_skiff(tmp_path, kafka_late.bootstrap, topic, 100)
    sk.start()
    sk.wait_log(r"waiting for it")
    pid = sk.skiff_pid()
    before = cpu_ticks(pid)
    time.sleep(OUTAGE - 2)
    spent = cpu_ticks(pid) - before
    fl.figure("eos_offline_wait_ticks_in_10s", spent)
    assert sk.running(), f"skiff exited while the cluster was unreachable ({sk.exitcode})"
    assert spent <= SPIN_BOUND, f"{spent} clock ticks in {OUTAGE - 2} s waiting: spinning"
    kafka_late.start()
    assert committed_seqs(kafka.bootstrap, topic, 100, timeout=60) == list(range(100))
    assert sk.stop() == 0
    log = sk.log_text()
    assert "the Kafka cluster answers after" in log
    assert "exactly-once: transactions on" in log
    assert "started from the offset file alone" not in log
    assert committed_seqs(kafka.bootstrap, topic, 100, timeout=5) == list(range(100))


def test_eos_sigterm_while_waiting(tmp_path, kafka_late, topic):
    """SIGTERM while waiting for the cluster: exit 0 at once."""
    sk = offline_skiff(tmp_path, kafka_late.bootstrap, topic, 10)
    sk.start()
    sk.wait_log(r"waiting for it")
    time.sleep(2)
    assert sk.stop(timeout=5) == 0


def test_eos_transactional_id_is_the_devices(tmp_path, kafka, topic):
    """The transactional.id names the device by /etc/machine-id, not by its
    host name: a fleet of boards that all keep the host name "raspberrypi"
    must not fence each other."""
    machine = Path("/etc/machine-id")
    mid = machine.read_text().strip() if machine.exists() else ""
    if not re.fullmatch(r"[0-9a-f]{32}", mid):
        # test_exit_codes.py covers a device without one.
        harness.missing("no machine id in /etc/machine-id", "systemd (its postinst writes it)")
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(10)
    state = tmp_path / "state"
    state.mkdir()
    sk = fl.FaultSkiff(tmp_path, eos_worker(kafka.bootstrap, state, topic + "-offsets"),
                       [fl.file_connector("eos", src.path, topic)])
    sk.start()
    assert committed_seqs(kafka.bootstrap, topic, 10) == list(range(10))
    sk.wait_log(r"exactly-once: transactional\.id " + topic + "-offsets-" + mid + " ")
    assert sk.stop() == 0


def overlaps(tmp_path, bootstrap, topic, rounds=6):
    """Instances A and B ship one appending file with one configuration, and
    so one transactional.id (a cloned SD card: the same /etc/machine-id), each
    with its own state directory. rounds times, the stopped one starts while
    the other runs. Returns (exit codes of the fenced, [A, B], lines)."""
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(2000)
    sks = []
    # B names the broker otherwise: one host's lock on the offsets topic
    # (/run/lock) then does not refuse it, as another device's would not.
    for name, bs in (("a", bootstrap), ("b", bootstrap.replace("127.0.0.1", "localhost"))):
        (tmp_path / name).mkdir()
        sks.append(fl.FaultSkiff(tmp_path / name, eos_worker(
            bs, tmp_path / name, topic + "-offsets"),
            [fl.file_connector("eos2", src.path, topic)]))
    writer = fl.Writer(src, rate=3000)
    writer.start()
    sks[0].start()
    codes, shipped = [], 2000
    for r in range(rounds):
        old, new = sks[r % 2], sks[(r + 1) % 2]
        shipped += 1000
        committed_seqs(bootstrap, topic, shipped)
        new.start()
        fl.wait_for(lambda: not old.running(), 60, "the first instance fenced")
        codes.append(old.exitcode)
    total = writer.stop()
    committed_seqs(bootstrap, topic, total)
    assert sks[rounds % 2].stop() == 0
    return codes, sks, total


def test_eos_second_instance_fences_first(tmp_path, kafka, topic):
    """Each new instance fences the running one before it reads the
    committed offsets: read_committed sees every line once, in order (it read
    first: the old one committed once more, and those lines came again)."""
    _, _, total = overlaps(tmp_path, kafka.bootstrap, topic)
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, isolation="read_committed"))
    assert len(seqs) - len(set(seqs)) == 0, "lines repeated"
    assert seqs == list(range(total))


def test_eos_fenced_exits_78(tmp_path, kafka, topic):
    """The fenced instance exits 78, naming the transactional.id and the
    likely cause, so that systemd does not restart it to fence the other.
    It says only that: not that a connector stopped on a record "Purged in
    queue" (librdkafka's purge of a fenced producer), to be restarted, nor
    that it aborts a transaction a fenced producer cannot abort."""
    codes, sks, _ = overlaps(tmp_path, kafka.bootstrap, topic, rounds=1)
    assert codes == [78]
    log = sks[0].log_text()
    assert "another skiff with transactional.id " + topic + "-offsets-" in log
    for misleading in ("stopped:", "Purged", "/restart", "aborting it", "kafka fatal error"):
        assert misleading not in log, log


def test_eos_transactional_id_from_device_id(tmp_path, kafka, topic):
    """Two boards cloned from one image share /etc/machine-id but each has its
    own device.id: the transactional.id is "<offsets topic>-<device.id>", so
    running side by side (one offsets topic) neither fences the other."""
    offsets = topic + "-offsets"
    (tmp_path / "machine-id").write_text("c" * 32 + "\n")
    sks, srcs = [], []
    # B names the broker otherwise: this host's lock on the offsets topic
    # would refuse a second instance, another device's would not.
    for name, bs in (("a", kafka.bootstrap), ("b", kafka.bootstrap.replace("127.0.0.1",
                                                                         "localhost"))):
        (tmp_path / name).mkdir()
        harness.create_topic(kafka.bootstrap, topic + "-" + name, partitions=1)
        srcs.append(fl.SeqSource(tmp_path / f"{name}.log"))
        sks.append(harness.Skiff(
            tmp_path / name, eos_worker(bs, tmp_path / name, offsets, device__id="gw-" + name),
            [fl.file_connector("app-" + name, srcs[-1].path, topic + "-" + name)], name=name,
            env={"SKIFF_MACHINE_ID_FILE": str(tmp_path / "machine-id")}))
    for name, sk, src in zip("ab", sks, srcs):
        src.append(500)
        sk.start()
        assert committed_seqs(kafka.bootstrap, topic + "-" + name, 500) == list(range(500))
    for src in srcs:
        src.append(500)
    for name, sk in zip("ab", sks):
        assert sk.running(), sk.log_text()
        assert committed_seqs(kafka.bootstrap, topic + "-" + name, 1000, timeout=30) == \
            list(range(1000))
    for name, sk in zip("ab", sks):
        assert sk.stop() == 0
        assert "fenced" not in sk.log_text()
        assert "exactly-once: transactional.id " + offsets + "-gw-" + name + " " in sk.log_text()


def rest_skiff(tmp_path, bootstrap, topic, name, rate=1000):
    """An exactly-once skiff with the REST API whose transactions stay open
    5 s (boundary interval): what a connector's stop, restart or reload does
    with the records of the open transaction shows, not a race with its
    commit. Returns (skiff, port, writer, source)."""
    from test_rest import free_port, wait_http
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    state = tmp_path / "state"
    state.mkdir()
    port = free_port()
    sk = fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets",
                                            listeners=f"http://127.0.0.1:{port}"),
                       [fl.file_connector(name, src.path, topic,
                                          transaction__boundary="interval",
                                          transaction__boundary__interval__ms=5000)])
    writer = fl.Writer(src, rate=rate)
    writer.start()
    sk.start()
    wait_http(port)
    committed_seqs(bootstrap, topic, 1000)
    return sk, port, writer, src


@pytest.mark.skiff_timeout(120)
@pytest.mark.parametrize("action", ["stop", "restart"])
def test_eos_connector_stop_then_kill9_loses_nothing(tmp_path, kafka, topic, action):
    """Hostile finding: a connector stopped or restarted through REST with
    records in the open transaction put their offsets in the store before
    the transaction committed; a kill -9 then (a power cut) aborted them and
    the next start read on past them: 2,346 lines never reached a
    read_committed consumer. Its offsets now wait for the commit."""
    from test_rest import http, wait_for
    sk, port, writer, _ = rest_skiff(tmp_path, kafka.bootstrap, topic, "eoss")
    time.sleep(1.5)  # lines read into the transaction that opened after the first commit
    base = "/connectors/eoss"
    mark = sk.log_mark()
    if action == "stop":
        assert http(port, "PUT", base + "/stop")[0] == 204
        wait_for(lambda: http(port, "GET", base + "/status")[1]["connector"]["state"] ==
                 "STOPPED", what="STOPPED")
    else:
        assert http(port, "POST", base + "/restart")[0] == 204
        sk.wait_log(r"restarted \(REST API\)", since=mark)
    time.sleep(0.3)  # the store's write, had it the offsets
    sk.kill9()
    sk.start()
    if action == "stop":
        from test_rest import wait_http
        wait_http(port)
        assert http(port, "PUT", base + "/resume")[0] == 202
    time.sleep(2)
    total = writer.stop()
    committed_seqs(kafka.bootstrap, topic, total)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, isolation="read_committed"))
    missing = sorted(set(range(total)) - set(seqs))
    assert not missing, f"{len(missing)} lines lost from line {missing[0]}"
    assert seqs == list(range(total))



@pytest.mark.skiff_timeout(120)
def test_eos_reload_of_a_connector_repeats_nothing(tmp_path, kafka, topic):
    """Hostile finding: a reload that changes a connector restarts it from
    the store, which got the offsets of the open transaction's records only
    at its commit, after the restart: read_committed saw them twice (2,140
    lines, no crash). The reload now commits first."""
    sk, port, writer, _ = rest_skiff(tmp_path, kafka.bootstrap, topic, "eosh")
    time.sleep(1.5)
    text = sk.connector_files[0].read_text()
    sk.connector_files[0].write_text(text + "batch.size=1000\n")
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"connector eosh: restarted with its new settings", since=mark)
    time.sleep(2)
    total = writer.stop()
    committed_seqs(kafka.bootstrap, topic, total)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, isolation="read_committed"))
    assert len(seqs) - len(set(seqs)) == 0, f"{len(seqs) - len(set(seqs))} lines repeated"
    assert seqs == list(range(total))


@pytest.mark.skiff_timeout(240)
def test_eos_frozen_broker_feeds_the_watchdog_and_stops_in_time(tmp_path, kafka_private, topic):
    """Hostile finding: with the broker frozen (SIGSTOP) mid-transaction, the
    commit held skiff's loop up to 6 x offset.flush.timeout.ms without a
    WATCHDOG=1 (past the unit's WatchdogSec, systemd kills it), and a
    SIGTERM then waited the commit out (past TimeoutStopSec: SIGKILL). The
    wait now feeds the watchdog and takes signals, and a stop bounds it by
    offset.flush.timeout.ms. Once the broker is back, every line once."""
    from test_notify import Listener
    kafka_private.start()
    bootstrap = kafka_private.bootstrap
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    state = tmp_path / "state"
    state.mkdir()
    ln = Listener(str(tmp_path / "notify.sock"))
    sk = fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets"),
                       [fl.file_connector("eosw", src.path, topic)],
                       env={"NOTIFY_SOCKET": ln.addr, "WATCHDOG_USEC": "4000000"})
    writer = fl.Writer(src, rate=500)
    writer.start()
    sk.start()
    committed_seqs(bootstrap, topic, 1000)
    pings = []
    kafka_private.pause()
    try:
        frozen = time.monotonic()
        while time.monotonic() - frozen < 15:
            before = len(ln.msgs)
            ln.pump()
            pings += [time.monotonic() for m in ln.msgs[before:] if "WATCHDOG=1" in m]
        sk.proc.send_signal(signal.SIGTERM)
        term = time.monotonic()
        rc = sk.wait(60)
        took = time.monotonic() - term
    finally:
        kafka_private.resume()
    gaps = [b - a for a, b in zip([frozen] + pings, pings + [term])]
    fl.figure("eos_frozen_broker_longest_watchdog_gap_s", round(max(gaps), 1))
    fl.figure("eos_frozen_broker_sigterm_to_exit_s", round(took, 1))
    assert max(gaps) < 4, f"no WATCHDOG=1 for {max(gaps):.1f} s of WATCHDOG_USEC=4 s"
    # offset.flush.timeout.ms is 3 s: the commit's, then the abort's
    assert took < 10, f"SIGTERM took {took:.1f} s to exit"
    assert rc in (0, 75), f"exit {rc}"
    sk.start()
    time.sleep(2)
    total = writer.stop()
    committed_seqs(bootstrap, topic, total)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(bootstrap, topic, isolation="read_committed"))
    assert len(seqs) - len(set(seqs)) == 0, "lines repeated"
    assert seqs == list(range(total))


def test_eos_short_transaction_timeout_starts(tmp_path, kafka, topic):
    """Hostile finding: producer.transaction.timeout.ms set below skiff's
    message.timeout.ms of 60000 (to bound what a frozen broker holds open)
    made the start exit 78 naming message.timeout.ms, which the user never
    set (librdkafka refuses a record timeout longer than the transaction's;
    Connect's Java producer takes it). The record timeout now follows the
    transaction's unless the user set it."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    state = tmp_path / "state"
    state.mkdir()
    sk = fl.FaultSkiff(tmp_path, eos_worker(kafka.bootstrap, state, topic + "-offsets",
                                            producer__transaction__timeout__ms=10000),
                       [fl.file_connector("eost", src.path, topic)])
    sk.start()
    sk.wait_log(r"running 1 connector")
    assert committed_seqs(kafka.bootstrap, topic, 200) == list(range(200))
    assert sk.stop() == 0
    assert "message.timeout.ms" not in sk.log_text()


@pytest.mark.skiff_timeout(120)
def test_eos_reload_changes_the_boundary(tmp_path, kafka, topic):
    """Hostile finding: a SIGHUP that changed transaction.boundary (interval
    of 60 s to poll) said "reload done" and restarted the connector, but
    the transactions kept the start's boundary: the lines written after it
    waited out the 60 s. The reload now takes the new boundary."""
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(300)
    state = tmp_path / "state"
    state.mkdir()
    sk = fl.FaultSkiff(tmp_path, eos_worker(kafka.bootstrap, state, topic + "-offsets"),
                       [fl.file_connector("eosr", src.path, topic,
                                          transaction__boundary="interval",
                                          transaction__boundary__interval__ms=60000)])
    sk.start()
    sk.wait_log(r"reading .* from byte 0")
    text = sk.connector_files[0].read_text()
    sk.connector_files[0].write_text(text.replace("=interval", "=poll"))
    mark = sk.log_mark()
    sk.proc.send_signal(signal.SIGHUP)
    sk.wait_log(r"reload done", since=mark)
    src.append(300)
    assert committed_seqs(kafka.bootstrap, topic, 600, timeout=20) == list(range(600))
    assert sk.stop() == 0


@pytest.mark.skiff_timeout(180)
def test_eos_rest_answers_while_a_transaction_waits(tmp_path, kafka_private, topic):
    """Issue 27: the transaction's wait for its records and its commit ran a
    poll(2) of its own, up to 6 x offset.flush.timeout.ms (18 s here): with
    the broker frozen mid-transaction the REST API answered nothing for that
    long. The wait now goes through the loop: every request is answered
    while the broker is frozen, and once it is back the transaction commits
    and every line arrives once."""
    from test_rest import free_port, http, wait_http
    kafka_private.start()
    bootstrap = kafka_private.bootstrap
    harness.create_topic(bootstrap, topic, partitions=1)
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    state = tmp_path / "state"
    state.mkdir()
    port = free_port()
    sk = fl.FaultSkiff(tmp_path, eos_worker(bootstrap, state, topic + "-offsets",
                                            listeners=f"http://127.0.0.1:{port}"),
                       [fl.file_connector("eosr", src.path, topic)])
    writer = fl.Writer(src, rate=500)
    writer.start()
    sk.start()
    wait_http(port)
    committed_seqs(bootstrap, topic, 1000)
    slowest, answered = 0.0, 0
    kafka_private.pause()
    try:
        frozen = time.monotonic()
        while time.monotonic() - frozen < 8:
            asked = time.monotonic()
            try:
                status = http(port, "GET", "/connectors/eosr/status", timeout=5)[0]
            except OSError as e:
                status = f"no answer ({e})"
            assert status == 200, \
                f"{time.monotonic() - frozen:.1f} s into the freeze: GET status {status}"
            answered += 1
            slowest = max(slowest, time.monotonic() - asked)
            time.sleep(0.2)
    finally:
        kafka_private.resume()
    fl.figure("eos_frozen_broker_slowest_rest_answer_s", round(slowest, 2))
    assert sk.running(), f"skiff exited ({sk.exitcode}) while the broker was frozen"
    time.sleep(2)
    total = writer.stop()
    committed_seqs(bootstrap, topic, total)
    assert sk.stop() == 0
    seqs = fl.seqs_of(harness.consume(bootstrap, topic, isolation="read_committed"))
    assert len(seqs) - len(set(seqs)) == 0, "lines repeated"
    assert seqs == list(range(total))
