"""Fault suite, 8: the offset-file catalogue.

A real store is made by two skiff runs: offsets.prev holds generation A at
line 100, offsets holds generation B at line 200, of a 300-line file.

Exhaustively, with skiff's own loader (offsets_dump, one process for all):
offsets empty, truncated at every length, every single-bit flip, zero-filled,
garbage, a Java-serialized Connect file, plain JSON without a checksum,
re-sealed with a bad version, generation, duplicate key or value shape, and
with bytes after the trailer; the same for offsets.prev; and both damaged.
Bound: damage to one generation loads the other exactly (never anything
past the true durable offset, line 200); both damaged refuses with a message
naming both files; a newer format version refuses rather than rewinding.

End to end, with the real binary and a fresh topic per case: it resumes at
exactly line 100 after damage to offsets, at 200 after damage to offsets.prev
or a stale offsets.tmp (even one holding a later offset), at 0 when the stored
position is beyond the end of the file, and refuses to start (78: both bad,
newer version; 75: unreadable, until the permission is back) without shipping
anything."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "faults"))
import faultlib as fl  # noqa: E402
import harness  # noqa: E402
import offsetfile  # noqa: E402

TRAILER = b',"crc32c":"'


def reseal(doc, edit):
    """doc with edit(parsed JSON) applied, written the way skiff writes it,
    with a correct checksum: damage that only the content checks can catch."""
    j = json.loads(doc)
    edit(j)
    body = json.dumps({k: v for k, v in j.items() if k != "crc32c"}, separators=(",", ":"),
                      ensure_ascii=False).encode()[:-1]
    return body + b',"crc32c":"%08x"}\n' % offsetfile._crc32c(body)


def set_field(name, value):
    def edit(j):
        j[name] = value
    return edit


def content_damage(good):
    """(name, bytes) of whole-file damage besides truncations and bit flips."""
    rng = random.Random(5)
    entry = json.loads(good)["offsets"][0]

    def dup_key(j):
        j["offsets"] = j["offsets"] * 2

    def value_not_object(j):
        j["offsets"][0]["value"] = [1]

    def key_shape(j):
        j["offsets"][0]["key"] = {"not": "an array"}

    return [
        ("empty", b""),
        ("zero-filled", b"\0" * len(good)),
        ("garbage", bytes(rng.randrange(256) for _ in range(len(good)))),
        ("Java-serialized Connect offsets", b"\xac\xed\x00\x05sr\x00\x11java.util.HashMap"),
        ("plain JSON, no checksum", json.dumps({"offsets": [entry]}).encode() + b"\n"),
        ("bytes after the trailer", good + b"x"),
        ("two documents", good + good),
        ("version 0", reseal(good, set_field("version", 0))),
        ("version 1.5", reseal(good, set_field("version", 1.5))),
        ("format name", reseal(good, set_field("format", "other"))),
        ("generation 0", reseal(good, set_field("generation", 0))),
        ("generation -1", reseal(good, set_field("generation", -1))),
        ("generation 2^60", reseal(good, set_field("generation", 2 ** 60))),
        ("offsets not a list", reseal(good, set_field("offsets", {}))),
        ("duplicate key", reseal(good, dup_key)),
        ("value not an object", reseal(good, value_not_object)),
        ("key not [name, partition]", reseal(good, key_shape)),
    ]


def every_damage(good):
    yield from content_damage(good)
    for k in range(1, len(good)):
        yield f"truncated to {k} bytes", good[:k]
    for i in range(len(good)):
        for b in range(8):
            d = bytearray(good)
            d[i] ^= 1 << b
            yield f"bit {b} of byte {i} flipped", bytes(d)


@pytest.fixture(scope="module")
def store(kafka, tmp_path_factory):
    """Makes a real two-generation store; returns (dir, source, P, Q)."""
    d = tmp_path_factory.mktemp("store")
    state = d / "state"
    state.mkdir()
    src = fl.SeqSource(d / "app.log")
    topic = harness.unique_topic("catalogue-setup")
    sk = fl.FaultSkiff(d, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("cat", src.path, topic)])
    for lines in (100, 200):
        src.append(lines - src.next)
        sk.start()
        fl.read_topic(kafka.bootstrap, topic, lines)
        assert sk.stop() == 0
    src.append(100)
    path, prev = (state / "offsets").read_bytes(), (state / "offsets.prev").read_bytes()
    assert fl.durable_line(state / "offsets", "cat", src.path)[1] == 200
    return d, src, path, prev


def load_all(root, cases):
    """cases: [(name, {filename: bytes})]. Loads each with offsets_dump in
    one process; returns the reports in order."""
    paths = []
    for i, (_, files) in enumerate(cases):
        d = root / f"c{i:05d}"
        d.mkdir()
        for name, data in files.items():
            (d / name).write_bytes(data)
        paths.append(f"{d}/offsets\n")
    r = subprocess.run([str(harness.tool("offsets_dump")), "-"], input="".join(paths).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert r.returncode == 0, r.stderr.decode()
    return [json.loads(line) for line in r.stdout.decode().splitlines()]


def entries_of(doc):
    return [[json.dumps(e["key"], separators=(",", ":"), ensure_ascii=False),
             json.dumps(e["value"], separators=(",", ":"), ensure_ascii=False)]
            for e in json.loads(doc)["offsets"]]


def test_fault_offset_file_every_damage_loads_the_other_generation(store, tmp_path):
    _, _, good_path, good_prev = store
    gen_b, gen_a = json.loads(good_path)["generation"], json.loads(good_prev)["generation"]
    cases = [(f"offsets {n}", {"offsets": d, "offsets.prev": good_prev})
             for n, d in every_damage(good_path)]
    cases += [(f"offsets.prev {n}", {"offsets": good_path, "offsets.prev": d})
              for n, d in every_damage(good_prev)]
    rng = random.Random(7)
    path_damage, prev_damage = list(every_damage(good_path)), list(every_damage(good_prev))
    both = [(f"both: offsets {a[0]}, offsets.prev {b[0]}", {"offsets": a[1], "offsets.prev": b[1]})
            for a, b in zip(rng.sample(path_damage, 200), rng.sample(prev_damage, 200))]
    results = load_all(tmp_path, cases + both)
    for (name, _), res in zip(cases, results):
        from_prev = name.startswith("offsets ")
        want_gen = gen_a if from_prev else gen_b
        want = entries_of(good_prev if from_prev else good_path)
        assert res["ok"], f"{name}: refused although the other generation is good: {res}"
        assert (res["generation"], res["from_prev"], res["entries"]) == (want_gen, from_prev, want), \
            f"{name}: loaded {res}"
    for (name, _), res in zip(both, results[len(cases):]):
        assert not res["ok"] and res["kind"] == "corrupt", f"{name}: {res}"
        err = res["error"]
        assert "offsets:" in err and "offsets.prev:" in err and "Refusing to start" in err, err
    fl.figure("offsetfile.damaged_stores_loaded", f"{len(cases) + len(both)} "
                                                  f"({len(cases)} one generation damaged, "
                                                  f"{len(both)} both)")


def test_fault_offset_file_newer_version_refuses(store, tmp_path):
    _, _, good_path, good_prev = store
    newer = reseal(good_path, set_field("version", 2))
    res = load_all(tmp_path, [("newer", {"offsets": newer, "offsets.prev": good_prev}),
                              ("newer prev", {"offsets": good_path,
                                              "offsets.prev": reseal(good_prev,
                                                                     set_field("version", 7))})])
    for r in res:
        assert not r["ok"] and r["kind"] == "corrupt" and "newer skiff" in r["error"], r


# --- end to end ------------------------------------------------------------------


def e2e(kafka, store, tmp_path, files, expect_line=None, wrap=(), expect_exit=None):
    """Runs the real skiff on a copy of the store with files replaced (None
    removes one), and checks that it ships exactly the lines from expect_line
    to the end, or that it exits with expect_exit without shipping anything.
    Returns the skiff."""
    d, src, good_path, good_prev = store
    state = tmp_path / "state"
    state.mkdir(parents=True)
    for name, data in {"offsets": good_path, "offsets.prev": good_prev, **files}.items():
        if data is not None:
            (state / name).write_bytes(data)
    topic = harness.unique_topic("catalogue")
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("cat", src.path, topic)])
    sk.start(wrap=wrap)
    if expect_exit is not None:
        rc = sk.wait(timeout=60)
        assert rc == expect_exit, f"exit {rc}, want {expect_exit}\n{sk.log_text()}"
        assert harness.consume(kafka.bootstrap, topic) == [], "shipped although it refused"
        return sk
    # Resuming earlier shows as lines before expect_line, later as too few.
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, n=src.next - expect_line,
                                      timeout=30, allow_timeout=True))
    assert sk.stop() == 0
    assert seqs == list(range(expect_line, src.next)), (
        f"resumed at line {seqs[0] if seqs else None} with {len(seqs)} lines, "
        f"not at {expect_line}")
    return sk


def damaged(store, what):
    _, _, good_path, _ = store
    return {"empty": b"", "truncated": good_path[:len(good_path) // 2],
            "bit flip": bytes([good_path[0] ^ 0x10]) + good_path[1:],
            "garbage": os.urandom(len(good_path)), "zero-filled": b"\0" * len(good_path),
            "version 0": reseal(good_path, set_field("version", 0))}[what]


# Every truncation and flip is loaded above; end to end, a few (all in the long profile).
@pytest.mark.parametrize("what", fl.scaled(["empty", "bit flip", "version 0"],
                                           ["empty", "truncated", "bit flip", "zero-filled",
                                            "garbage", "version 0"]))
def test_fault_offset_file_e2e_damaged_newest_resumes_from_prev(kafka, store, tmp_path, what):
    sk = e2e(kafka, store, tmp_path, {"offsets": damaged(store, what)}, expect_line=100)
    # The fallback re-sends lines 100-199: a person must be told, and why.
    warned = [l for l in sk.log_text().splitlines()
              if "offsets.prev" in l and l.startswith("skiff warn")]
    assert warned, f"resumed from offsets.prev without a warning:\n{sk.log_text()}"


def test_fault_offset_file_e2e_damaged_prev_and_missing_newest(kafka, store, tmp_path):
    e2e(kafka, store, tmp_path, {"offsets.prev": b"garbage"}, expect_line=200)
    # offsets missing (a crash between the two renames): prev is the store.
    e2e(kafka, store, tmp_path / "missing", {"offsets": None}, expect_line=100)


def test_fault_offset_file_e2e_stale_tmp_is_ignored(kafka, store, tmp_path):
    d, src, good_path, _ = store
    key = fl.file_key("cat", src.path)

    def ahead(j):
        j["generation"] += 1
        for e in j["offsets"]:
            if json.dumps(e["key"], separators=(",", ":"), ensure_ascii=False) == key:
                e["value"]["position"] = 250 * fl.WIDTH
    # A complete, valid temp file of a flush that never got renamed: its
    # offset was never durable, so it must not be trusted.
    e2e(kafka, store, tmp_path, {"offsets.tmp": reseal(good_path, ahead)}, expect_line=200)
    assert not (tmp_path / "state" / "offsets.tmp").exists(), "the stale temp file stayed"


def test_fault_offset_file_e2e_offset_beyond_end_of_source(kafka, store, tmp_path):
    d, src, good_path, _ = store

    def beyond(j):
        for e in j["offsets"]:
            e["value"]["position"] = 10 ** 9
    sk = e2e(kafka, store, tmp_path, {"offsets": reseal(good_path, beyond)}, expect_line=0)
    assert "from the start" in sk.log_text() or "truncat" in sk.log_text()


def test_fault_offset_file_e2e_both_bad_refuses(kafka, store, tmp_path):
    sk = e2e(kafka, store, tmp_path, {"offsets": b"", "offsets.prev": b"\0" * 40},
             expect_exit=78)
    log = sk.log_text()
    assert "Refusing to start" in log and "offsets.prev" in log, log


def test_fault_offset_file_e2e_newer_version_refuses(kafka, store, tmp_path):
    _, _, good_path, _ = store
    sk = e2e(kafka, store, tmp_path, {"offsets": reseal(good_path, set_field("version", 2))},
             expect_exit=78)
    assert "newer skiff" in sk.log_text()


def test_fault_offset_file_e2e_unreadable_refuses_then_resumes(kafka, store, tmp_path):
    harness.require_tool("setpriv", "util-linux")  # to drop CAP_DAC_OVERRIDE
    d, src, good_path, good_prev = store
    state = tmp_path / "state"
    # As root, permissions bind only without CAP_DAC_OVERRIDE/READ_SEARCH.
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]
    state.mkdir()
    (state / "offsets").write_bytes(good_path)
    (state / "offsets.prev").write_bytes(good_prev)
    os.chmod(state / "offsets", 0)
    topic = harness.unique_topic("catalogue")
    sk = fl.FaultSkiff(tmp_path, fl.worker_props(kafka.bootstrap, state),
                       [fl.file_connector("cat", src.path, topic)])
    sk.start(wrap=drop)
    rc = sk.wait(timeout=60)
    assert rc == 75, f"unreadable store: exit {rc}, want 75\n{sk.log_text()}"
    assert "Permission denied" in sk.log_text() and "offsets" in sk.log_text()
    assert harness.consume(kafka.bootstrap, topic) == []
    os.chmod(state / "offsets", 0o644)
    sk.start(wrap=drop)
    seqs = fl.seqs_of(harness.consume(kafka.bootstrap, topic, n=src.next - 200, timeout=30,
                                      allow_timeout=True))
    assert sk.stop() == 0
    assert seqs == list(range(200, src.next)), f"resumed at {seqs[:1]}, not 200"
