"""Exit codes that tell systemd the truth (issue 22, item 6). The shipped unit
restarts on 75 and never on 78 (RestartPreventExitStatus=78), so 78 is only
for what a person must fix:

- more than 64 connectors run (the limit exited 78, undocumented)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
from harness import Skiff  # noqa: E402


@pytest.mark.skiff_timeout(180)
def test_more_than_64_connectors(tmp_path, kafka, topic):
    """70 connectors declared inline exited 78 ("more than 64 connectors",
    undocumented). They run, and a reload adds a 71st."""
    state = tmp_path / "state"
    state.mkdir()
    props = fl.worker_props(kafka.bootstrap, state)
    files = []
    for i in range(71):
        f = tmp_path / f"in{i:03d}.log"
        f.write_text(f"line of {i:03d}\n")
        files.append(f)
    for i in range(70):
        props[f"connectors.c{i:03d}.connector.class"] = "FileStreamSource"
        props[f"connectors.c{i:03d}.file"] = str(files[i])
        props[f"connectors.c{i:03d}.topic"] = topic
    sk = Skiff(tmp_path, props).start()
    recs = harness.consume(kafka.bootstrap, topic, n=70, timeout=60)
    assert sorted(r["value"] for r in recs) == [f"line of {i:03d}".encode() for i in range(70)]
    props["connectors.c070.connector.class"] = "FileStreamSource"
    props["connectors.c070.file"] = str(files[70])
    props["connectors.c070.topic"] = topic
    sk.worker_file.write_text(harness.props_text(props))
    mark = sk.log_mark()
    sk.proc.send_signal(1)
    sk.wait_log(r"reload", 30, since=mark)
    recs = harness.consume(kafka.bootstrap, topic, n=71, timeout=60)
    assert sorted(r["value"] for r in recs) == [f"line of {i:03d}".encode() for i in range(71)]
    assert sk.stop() == 0
