"""Fault suite, 2: a crash right before every step of an offset flush.

skiff runs under strace, which kills it (SIGKILL, the call never executed) on
entry to the chosen call of the chosen step of its Mth flush: creating
offsets.tmp, writing it, fsyncing it, closing it, renaming offsets to
offsets.prev, renaming offsets.tmp to offsets, fsyncing the directory, closing
the directory (a compaction), and writing and fsyncing a record of the journal
offsets.log (an append). The trials follow one another on one state directory, so each
starts from what the last crash left.

Bound checked per crash: the store loads; it holds exactly the old generation
(every step up to the second rename) or exactly the new one (after it: the
directory fsync only makes it survive a power cut, see test_fault_powerloss);
never a torn file; and its offset is not past what Kafka holds. At the end no
line is lost and every duplicate comes from a restart at a durable offset."""

import re
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import crashsim  # noqa: E402
import faultlib as fl  # noqa: E402
import harness  # noqa: E402

# (step, syscall, which path the call names first, whether the new generation is in
# place when the process dies right before it)
STEPS = [
    ("create tmp", "openat", "tmp", False),
    ("write tmp", "write", "tmp", False),
    ("fsync tmp", "fsync", "tmp", False),
    ("close tmp", "close", "tmp", False),
    ("rename offsets -> offsets.prev", "rename", "store", False),
    ("rename offsets.tmp -> offsets", "rename", "tmp", False),
    ("fsync directory", "fsync", "dir", True),
    ("close directory", "close", "dir", True),
    # The journal (offsets.log): most flushes append one record and fsync it;
    # the steps above are a compaction's (the first write, every ~4 KiB of
    # log here, and a clean stop).
    ("write log", "write", "log", False),
    ("fsync log", "fsync", "log", True),
]
FLUSHES = fl.scaled((1, 2), (1, 2, 3, 5))


def inject_cmd(state, syscall, which, when, trace):
    # strace -P matches the first path of a rename only: offsets.tmp picks
    # rename(tmp, offsets), offsets picks rename(offsets, prev).
    paths = {"tmp": state / "offsets.tmp", "store": state / "offsets", "dir": state,
             "log": state / "offsets.log"}
    return ["strace", "-f", "-qq", "-o", str(trace), "-P", str(paths[which]),
            "-e", f"trace={syscall}",
            "-e", f"inject={syscall}:error=EIO:signal=SIGKILL:when={when}"]


# 20 trials (40 in the long profile) of a skiff under strace: 84 s at a load
# average of 4, 238 s at 7 to 13 (a trial of a second flush up to 23 s).
@pytest.mark.skiff_timeout(fl.scaled(480, 1200))
def test_fault_crash_before_each_flush_step(tmp_path, kafka, topic):
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    state = tmp_path / "state"
    state.mkdir()
    src = fl.SeqSource(tmp_path / "app.log")
    src.append(500)
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("cp", src.path, topic)])
    # At most 40 s of writing at full rate: on a loaded machine the trials
    # take longer, and an unbounded writer made the final read-back outgrow
    # the time limit. Then a trickle, enough for a new offset at every flush:
    # a flush with no offset moved writes nothing, and a trial waiting for
    # the Mth write (a second compaction needs 4 KiB of log appends) waited
    # out its 60 s once the lines stopped (a load average of 12: trials of
    # 10 to 20 s, the writer done after the tenth).
    writer = fl.Writer(src, rate=1000, limit=40500, trickle=50)
    writer.start()
    resume, trials = {0}, 0
    started = time.monotonic()
    try:
        for m in FLUSHES:
            for step, syscall, which, new_in_place in STEPS:
                before = fl.load_store(state / "offsets")
                assert before["ok"], before
                g0 = before["generation"]
                trace = tmp_path / f"trace-{trials}.txt"
                mark = sk.log_mark()
                sk.start(["--log-level", "debug"],
                         wrap=inject_cmd(state, syscall, which, m, trace))
                rc = sk.wait(timeout=120)
                assert rc == -9 or rc == 137, f"{step}, flush {m}: exit {rc}, not killed"
                died = [l for l in crashsim._merge_unfinished(trace.read_text().splitlines())
                        if re.match(rf"\d+ +{syscall}\(.*= \?", l)]
                assert died, f"{step}, flush {m}: killed, but not in {syscall}"
                # Completed flushes of this process: each logs "offsets: flushed".
                with open(sk.log_file, "rb") as f:
                    f.seek(mark)
                    done = len(re.findall(rb"offsets: flushed", f.read()))
                after = fl.load_store(state / "offsets")
                assert after["ok"], f"{step}, flush {m}: does not load: {after['error']}"
                want = g0 + done + (1 if new_in_place else 0)
                assert after["generation"] == want, (
                    f"crash before {step} of flush {done + 1}: loaded generation "
                    f"{after['generation']}, expected {want} (started from {g0})")
                _, line = fl.durable_line(state / "offsets", "cp", src.path)
                held = set(fl.seqs_of(harness.consume(kafka.bootstrap, topic)))
                missing = [s for s in range(line) if s not in held]
                assert not missing, (f"crash before {step}: durable offset {line} is past "
                                     f"what Kafka holds (missing {missing[:5]})")
                resume.add(line)
                trials += 1
    finally:
        n = writer.stop()
    sk.start()
    fl.read_topic(kafka.bootstrap, topic, n, timeout=120)
    assert sk.stop() == 0
    stats = fl.check_delivery(fl.seqs_of(harness.consume(kafka.bootstrap, topic)), n,
                              resume=resume)
    fl.figure("crashpoints.trials", f"{trials} ({len(STEPS)} steps x flushes {FLUSHES})")
    fl.figure("crashpoints.duplicates", stats["dups"])
    fl.figure("crashpoints.seconds", f"{time.monotonic() - started:.0f}")
