"""Fault suite, 6: produce errors and latency from librdkafka's mock cluster
(tests/tools/mockcluster.c), with idempotence on and no restart of skiff.

While an application appends, the cluster returns NOT_LEADER_FOR_PARTITION,
NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, LEADER_NOT_AVAILABLE and dropped
connections to Produce requests (each one confirmed served), moves the
partition's leadership, answers slowly (RTT half the request timeout) and
takes the leader off the network. Bound checked: no loss, order kept, zero
duplicates, the connector never stops, the stored offset ends at the last line.

Last, the cluster answers later than the request timeout, so requests it did
append time out and are retried. The mock cluster does not deduplicate an
idempotent producer that is not transactional (rd_kafka_mock_validate_records
returns before any sequence check without a TransactionalId), so it appends a
retried batch again where a real broker answers DUPLICATE_SEQUENCE; that case
is held to zero duplicates against the real broker (test_fault_broker.py,
SIGSTOP). Here it is held to: no loss, order kept, and duplicates only among
records appended during that phase, each a batch re-sent whole."""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

REQUEST_TIMEOUT_MS = 1000


class Mock:
    def __init__(self, topic, brokers=3):
        self.proc = subprocess.Popen([str(harness.tool("mockcluster")), "-b", str(brokers),
                                      "-t", topic, "-p", "1"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        first = self.proc.stdout.readline().split()
        assert first and first[0] == "bootstrap", f"mockcluster said {first}"
        self.bootstrap = first[1]

    def __call__(self, command):
        """Runs a command; returns what follows "ok" in the answer."""
        self.proc.stdin.write(command + "\n")
        answer = self.proc.stdout.readline().strip()
        assert answer.startswith("ok"), f"mockcluster: {command}: {answer}"
        return answer[2:].strip()

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            self.proc.wait(10)


@pytest.fixture
def mock(topic):
    m = Mock(topic)
    yield m
    m.close()


# (phase, commands, seconds it lasts, what proves it bit). Broker 1 leads at
# the start. "served": the broker's error stack is empty when it ends.
PHASES = [
    ("NOT_LEADER_FOR_PARTITION, NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT",
     ["errors {leader} 12 NOT_LEADER_FOR_PARTITION NOT_ENOUGH_REPLICAS REQUEST_TIMED_OUT"],
     0, "served"),
    ("LEADER_NOT_AVAILABLE and dropped connections",
     ["errors {leader} 6 LEADER_NOT_AVAILABLE _TRANSPORT NOT_ENOUGH_REPLICAS"], 0, "served"),
    ("leadership moves", ["leader {topic} 0 2", "leader {topic} 0 3"], 1, None),
    ("RTT half the request timeout", [f"rtt {{leader}} {REQUEST_TIMEOUT_MS // 2}"], 2, None),
    ("leader off the network", ["down {leader}"], 2, None),
]
LATE = ("RTT twice the request timeout", [f"rtt {{leader}} {REQUEST_TIMEOUT_MS * 2}"],
        2 * REQUEST_TIMEOUT_MS / 1000 + 0.5, r"[Tt]imed out")


def run_phase(sk, mock, topic, leader, phase):
    name, commands, seconds, proof = phase
    mark = sk.log_mark()
    for c in commands:
        mock(c.format(topic=topic, leader=leader))
        if c.startswith("leader"):
            leader = int(c.split()[-1])
    time.sleep(seconds)
    if proof == "served":
        fl.wait_for(lambda: mock(f"pending {leader}") == "0", 20,
                    f"{name}: every injected error served", interval=0.1)
    elif proof:
        assert re.search(proof, fl.log_since(sk, mark)), f"{name}: no sign of it in the log"
    # Heal: latency off, broker back; the next phase starts clean.
    mock(f"rtt {leader} 0")
    mock(f"up {leader}")
    assert sk.running(), f"skiff exited during {name}"
    have = len(harness.consume(mock.bootstrap, topic))
    fl.wait_for(lambda: len(harness.consume(mock.bootstrap, topic)) > have + 100, 20,
                f"shipping to resume after {name}", interval=0.3)
    return leader


@pytest.mark.skiff_timeout(180)
def test_fault_mock_cluster_produce_errors_no_duplicates(tmp_path, mock, topic):
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(200)
    # A ProduceRequest times out locally after socket.timeout.ms (librdkafka:
    # request.timeout.ms is the broker's ack timeout): both set low.
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(mock.bootstrap, state,
                                                 producer__request__timeout__ms=REQUEST_TIMEOUT_MS,
                                                 producer__socket__timeout__ms=REQUEST_TIMEOUT_MS),
                       [fl.file_connector("mock", src.path, topic)])
    writer = fl.Writer(src, rate=400)
    writer.start()
    leader = 1
    mock(f"leader {topic} 0 {leader}")
    try:
        sk.start(["--log-level", "debug"])
        fl.read_topic(mock.bootstrap, topic, 200, timeout=60)
        for phase in PHASES:
            leader = run_phase(sk, mock, topic, leader, phase)
        before_late = fl.seqs_of(harness.consume(mock.bootstrap, topic))
        fl.check_delivery(before_late, max(before_late) + 1, max_dups=0,
                          what="the topic before the late answers")
        leader = run_phase(sk, mock, topic, leader, LATE)
    finally:
        n = writer.stop()
    fl.read_topic(mock.bootstrap, topic, n, timeout=120)
    assert sk.stop() == 0
    assert "stopped:" not in sk.log_text(), "a connector stopped on a retriable error"
    seqs = fl.seqs_of(harness.consume(mock.bootstrap, topic))
    stats = fl.check_delivery(seqs, n)
    late = seqs[len(before_late):]
    assert seqs[:len(before_late)] == before_late
    # Duplicates of the late phase: whole batches appended again right after
    # themselves (the retry), never an older record.
    assert all(b[0] > max(before_late) for b in stats["runs"][1:]), stats["runs"][:5]
    _, line = fl.durable_line(state / "offsets", "mock", src.path)
    assert line == n
    fl.figure("mock.produce_errors", f"{n} lines through {len(PHASES)} phases "
                                     f"({'; '.join(p[0] for p in PHASES)}): 0 duplicates; "
                                     f"then {stats['dups']} re-appended by the mock "
                                     f"(no idempotence without transactions) among the "
                                     f"{len(late)} records of the late-answer phase")
