"""Fault suite, 7: SIGTERM, with the broker up and with it down.

- Broker up: SIGTERM in the middle of shipping a large backlog, three times.
  Bound: exit 0 at once; Kafka then holds exactly the lines before the stored
  offset (what was in flight was acknowledged and committed before the exit),
  so a restart re-sends nothing: zero duplicates, zero loss overall.
- Broker down: SIGTERM with records in flight. Bound: exit 0 within
  offset.flush.timeout.ms (plus 2 s for teardown), a log line
  saying how many records were not acknowledged, and one naming the file
  that holds them, still on disk, read again at the next start; after the
  broker and skiff come back, zero loss and zero duplicates (the broker
  never had those records)."""

import os
import random
import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

FLUSH_TIMEOUT_MS = 3000
# Start-up and teardown on top of the flush timeout (memcheck is slow at both).
MARGIN_S = 15 if os.environ.get("SKIFF_VALGRIND_LOGS") else 2


@pytest.mark.skiff_timeout(180)
def test_fault_sigterm_broker_up_mid_backlog(tmp_path, kafka, topic):
    rng = random.Random()
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    # Slowed down (small queue, 50 ms linger) so that a stop lands mid-backlog
    # with up to 1000 records in flight.
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state,
                                                 producer__linger__ms=50,
                                                 producer__queue__buffering__max__messages=1000),
                       [fl.file_connector("up", src.path, topic)])
    stops = []
    for cycle in range(3):
        src.append(30_000)
        sk.start()
        time.sleep(rng.uniform(0.3, 1.0))
        t = time.monotonic()
        assert sk.stop() == 0
        took = time.monotonic() - t
        _, durable = fl.durable_line(state / "offsets", "up", src.path)
        held = fl.seqs_of(harness.consume(kafka.bootstrap, topic))
        # Nothing acknowledged beyond the stored offset, nothing missing below it.
        assert held == list(range(durable)), (
            f"stop {cycle}: Kafka holds {len(held)} records, the stored offset is line "
            f"{durable}: {'duplicates ahead' if len(held) > durable else 'a gap'}")
        stops.append((durable, round(took, 2)))
    n = src.next
    sk.worker_file.write_text(harness.props_text(fl.worker_props(kafka.bootstrap, state)))
    sk.start()  # at full speed for the rest
    fl.read_topic(kafka.bootstrap, topic, n, timeout=120)
    assert sk.stop() == 0
    fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n, max_dups=0)
    fl.figure("sigterm.broker_up", f"3 stops mid-backlog at lines {[d for d, _ in stops]}, "
                                   f"exit in {[s for _, s in stops]} s, 0 duplicates")


@pytest.mark.serial
@pytest.mark.skiff_timeout(180)
def test_fault_sigterm_broker_down_exits_in_time(tmp_path, kafka_private, topic):
    kafka_private.start()
    harness.create_topic(kafka_private.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(1000)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka_private.bootstrap, state,
                                                 offset__flush__timeout__ms=FLUSH_TIMEOUT_MS),
                       [fl.file_connector("down", src.path, topic)])
    sk.start()
    fl.read_topic(kafka_private.bootstrap, topic, 1000)
    fl.wait_for(lambda: fl.peek_line(state / "offsets", "down", src.path) == 1000, 30,
                "the offset of the first 1000 lines")
    kafka_private.stop()
    src.append(3000)
    time.sleep(1.5)  # read, produced, stuck in flight
    mark = sk.log_mark()
    t = time.monotonic()
    rc = sk.stop(timeout=FLUSH_TIMEOUT_MS / 1000 + 20)
    took = time.monotonic() - t
    assert rc == 0, f"exit {rc}"
    assert took <= FLUSH_TIMEOUT_MS / 1000 + MARGIN_S, f"took {took:.1f}s to stop, broker down"
    said = fl.log_since(sk, mark)
    assert re.search(r"\d+ records still unacknowledged", said), "no word about the records left"
    # The file holding them named, with what was read of it: still on disk.
    assert re.search(re.escape(str(src.path)) + r" \(inode \d+\) from byte \d+ to \d+: on disk, "
                     r"read again at the next start", said), said
    _, durable = fl.durable_line(state / "offsets", "down", src.path)
    assert durable == 1000, f"the offset moved to line {durable} with the broker down"
    kafka_private.start()
    sk.start()
    n = src.next
    fl.read_topic(kafka_private.bootstrap, topic, n, timeout=120)
    assert sk.stop() == 0
    fl.check_delivery(fl.seqs_of(harness.consume(kafka_private.bootstrap, topic)), n,
                      max_dups=0)
    fl.figure("sigterm.broker_down", f"exit 0 in {took:.1f} s (offset.flush.timeout.ms="
                                     f"{FLUSH_TIMEOUT_MS}), 0 lost, 0 duplicates")
