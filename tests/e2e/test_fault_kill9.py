"""Fault suite, 1: kill -9 at random moments while an application appends.

Bound checked: every restart loads a valid offset generation, never older than
the one before and never past the lines written; no line is lost; first
appearances keep file order; and every duplicate comes from a restart that
resumed exactly at the offset durable at its kill (so only lines acknowledged
after the last durable flush repeat). Sampled kills also check that Kafka held
every line below the durable offset at the moment of the kill.

SKIFF_FAULT_SEED replays a run; the seed is printed either way."""

import os
import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

# 20 kills at random moments in 0.02-1 s of a run; each checks the bound.
KILLS = fl.scaled(20, 500)


@pytest.mark.skiff_timeout(fl.scaled(300, 3600))
def test_fault_kill9_loop(tmp_path, kafka, topic):
    seed = int(os.environ.get("SKIFF_FAULT_SEED") or time.time_ns() % 1_000_000)
    print(f"SKIFF_FAULT_SEED={seed}")
    rng = random.Random(seed)
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(2000)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("k9", src.path, topic)])
    writer = fl.Writer(src, rate=2000)
    writer.start()
    resume, last_gen, checked_acked = {0}, 0, 0
    started = time.monotonic()
    try:
        for k in range(KILLS):
            sk.start()
            time.sleep(rng.uniform(0.02, 1.0))
            assert sk.running(), f"kill {k}: skiff exited by itself ({sk.exitcode})"
            sk.kill9()
            written = src.next
            gen, line = fl.durable_line(state / "offsets", "k9", src.path)
            assert gen >= last_gen, f"kill {k}: generation went back from {last_gen} to {gen}"
            assert line <= written, f"kill {k}: durable line {line} beyond the {written} written"
            if k % 10 == 9:
                # The durable offset never passes what Kafka acknowledged.
                held = set(fl.seqs_of(harness.consume(kafka.bootstrap, topic)))
                missing = [s for s in range(line) if s not in held]
                assert not missing, (f"kill {k}: offset {line} is durable but Kafka lacks "
                                     f"lines {missing[:10]}")
                checked_acked += 1
            resume.add(line)
            last_gen = gen
    finally:
        n = writer.stop()
    loop_s = time.monotonic() - started
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, n, timeout=180)
    assert sk.stop() == 0
    _, line = fl.durable_line(state / "offsets", "k9", src.path)
    assert line == n, f"after a clean stop the offset is at line {line}, not {n}"
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n,
                              resume=resume)
    fl.figure("kill9.kills_survived", KILLS)
    fl.figure("kill9.lines", n)
    fl.figure("kill9.duplicates", f"{stats['dups']} (all from restarts at the durable offset; "
                                  f"{len(stats['runs'])} runs)")
    fl.figure("kill9.final_generation", last_gen)
    fl.figure("kill9.acked_checks", checked_acked)
    fl.figure("kill9.loop_seconds", f"{loop_s:.0f}")
