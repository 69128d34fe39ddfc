"""Compressed and moved rotations (issue 14): logrotate with `compress` and
without `delaycompress` compresses app.log.1 right after renaming it, so a
file skiff had not finished (it was stopped, or behind) exists only as
app.log.1.gz; with `olddir` the rotated files live in another directory.

Default profile: 10 s per run, two kills. SKIFF_PROFILE=long: 60 s, a kill
every 4-10 s.

Bounds checked:
  with kills      no line lost; every duplicate lies in a window [D, M] of
                  some kill (as in test_tail_logrotate.py): D the first line
                  after the offset durable at the kill, M the last line Kafka
                  held then.
  while stopped   a clean stop, three compressed rotations, a start: every
                  line exactly once, nothing counted as lost.
"""

import gzip
import json
import lzma
import os
import random
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import harness
from harness import Skiff, consume
import offsetfile
from rotator import Rotator
from test_tail_logrotate import allowed, finish, fnv1a64

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "tools"))
from tailwriter import Writer, check_lines, line, number  # noqa: E402

LONG = os.environ.get("SKIFF_PROFILE") == "long"
SECONDS = 60 if LONG else 10
RATE = 2000


def counter(sk, name):
    vals = [int(m) for m in re.findall(rf"\b{name}=(\d+)", sk.log_text())]
    return max(vals) if vals else 0


def content(p):
    """A rotated file's bytes, decompressed; None while it is being written
    (a .gz logrotate has not finished)."""
    try:
        if p.name.endswith(".gz"):
            return gzip.decompress(p.read_bytes())
        if p.name.endswith(".xz"):
            return lzma.decompress(p.read_bytes())
        return p.read_bytes()
    except (EOFError, OSError, lzma.LZMAError, FileNotFoundError):
        return None


def files(dirs):
    return [p for d in dirs for p in d.iterdir() if p.is_file()]


def durable_line(offsets_path, key, dirs):
    """The number of the first line after the durable offset, found in the
    (decompressed) file whose fingerprint the offset names."""
    if not offsets_path.exists():
        return 0
    offs = offsetfile.load(offsets_path)
    if key not in offs:
        return 0
    v = offs[key]
    pos, fplen = v["position"], v.get("fplen", 0)
    fp = v.get("fp", 0) & 0xFFFFFFFFFFFFFFFF
    if fplen == 0:
        # The anchor stored at the first start (a record's offset is past
        # its line): nothing acknowledged yet. An empty hash matches any
        # file, so the loop below would name the wrong one once the
        # anchor's file is compressed (seen: a window (8690, 4969)).
        return 0
    for p in sorted(files(dirs), key=lambda p: (p.stat().st_ino != v["ino"], p.name)):
        data = content(p)
        if data is None or len(data) < pos or fnv1a64(data[:fplen]) != fp:
            continue
        if pos < len(data):
            return number(data[pos:pos + 8])
        lines = data.rstrip(b"\n").split(b"\n")
        return number(lines[-1]) + 1 if lines and lines[-1] else 0
    raise AssertionError(f"no file in {dirs} matches the durable offset {v}")


def setup(tmp_path, kafka, topic, olddir=False, compress="compress"):
    logdir = tmp_path / "logs"
    logdir.mkdir()
    dirs = [logdir]
    log = logdir / "app.log"
    extra = ""
    c = {"name": "rot", "connector.class": "FileStreamSource", "topic": topic,
         "file": str(log), "rotate.wait.ms": "1000"}
    if olddir:
        old = tmp_path / "old"
        old.mkdir()
        dirs.append(old)
        extra = f"  olddir {old}\n"
        c["rotated.dirs"] = str(old)
    conf = tmp_path / "logrotate.conf"
    conf.write_text(f"{log} {{\n  rotate 100000\n  create\n  {compress}\n"
                    f"  missingok\n{extra}}}\n")
    log.write_text("")
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.interval.ms": "300",
              "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    sk = Skiff(tmp_path, worker, [c])
    return sk, log, conf, dirs


def writer_lost(dirs, written, down):
    """Lines in no file on disk, written while skiff was down (or just
    restarted): the writer wrote them into app.log.1 after gzip had read it
    and before it noticed the rotation (a batch, seen: 40 lines): nobody
    holding the file, nobody can read them. Lost by the writer, not skiff."""
    on_disk = set()
    for p in files(dirs):
        for l in (content(p) or b"").split(b"\n"):
            if len(l) >= 8 and l[:8].isdigit():
                on_disk.add(int(l[:8]))
    return {n for a, b in down for n in range(a, min(b, written)) if n not in on_disk}


def run_with_kills(tmp_path, kafka, topic, olddir):
    sk, log, conf, dirs = setup(tmp_path, kafka, topic, olddir)
    key = offsetfile.key("rot", {"filename": str(log)})
    sk.start()
    writer = Writer(log, rate=RATE, reopen=True)
    rot = Rotator(conf, tmp_path / "logrotate.state")
    writer.start()
    rot.start()
    rng = random.Random(int(os.environ.get("SKIFF_SEED", "0")) or None)
    windows, down = [], []
    end = time.monotonic() + SECONDS
    next_kill = time.monotonic() + (rng.uniform(4, 10) if LONG else SECONDS / 4)
    while time.monotonic() < end:
        time.sleep(0.2)
        if time.monotonic() < next_kill or time.monotonic() > end - 2:
            continue
        sk.kill9()
        down_from = writer.count
        shipped = [number(v["value"]) for v in consume(kafka.bootstrap, topic)]
        windows.append((durable_line(tmp_path / "offsets", key, dirs),
                        max(shipped) if shipped else -1))
        time.sleep(rng.uniform(1.2, 2.5))  # at least one compressed rotation while down
        sk.start()
        down.append((down_from, writer.count + 2 * RATE))  # + its first reads
        next_kill = time.monotonic() + (rng.uniform(4, 10) if LONG else SECONDS / 4)
    written = writer.stop()
    rot.stop()
    assert not rot.errors, rot.errors[:3]
    vals = finish(kafka, topic, sk, written)
    lost_by_writer = writer_lost(dirs, written, down)
    missing, dups, bad_dups, unexpected = check_lines(vals, written, allowed(windows),
                                                      lost_ok=lost_by_writer)
    gz = sum(1 for p in files(dirs) if p.name.endswith(".gz"))
    print(f"{'olddir' if olddir else 'compress'}: {written} lines, {rot.runs} rotations, "
          f"{gz} .gz files, kills {windows}, {len(dups)} duplicates, "
          f"{len(lost_by_writer)} lost by the writer while skiff was down, "
          f"files_gone_unread={counter(sk, 'files_gone_unread')}")
    assert not unexpected
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not bad_dups, f"{len(bad_dups)} duplicates outside the kill windows: {bad_dups[:10]}"
    assert counter(sk, "files_gone_unread") == 0
    assert rot.runs >= SECONDS // 2  # about one a second; fewer on a loaded machine


@pytest.mark.skiff_timeout(SECONDS * 2 + 240)
def test_compress_with_kills(tmp_path, kafka, topic):
    run_with_kills(tmp_path, kafka, topic, olddir=False)


@pytest.mark.skiff_timeout(SECONDS * 2 + 240)
def test_compress_olddir_with_kills(tmp_path, kafka, topic):
    run_with_kills(tmp_path, kafka, topic, olddir=True)


def write_lines(path, numbers):
    with open(path, "a") as f:
        for i in numbers:
            f.write(line(i) + "\n")


@pytest.mark.parametrize("olddir", [False, True], ids=["samedir", "olddir"])
def test_compressed_rotations_while_stopped(tmp_path, kafka, topic, olddir):
    """Lines 0-99 read; skiff stopped cleanly; 100-149 appended (unread),
    then three rotations with compress, each followed by 50 new lines: the
    file of the stored offset exists only as a .gz, so do the two after it.
    Bound: every line once, nothing counted lost."""
    sk, log, conf, dirs = setup(tmp_path, kafka, topic, olddir)
    write_lines(log, range(100))
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    n = 100
    for _ in range(3):
        write_lines(log, range(n, n + 50))
        n += 50
        subprocess_logrotate(conf, tmp_path / "logrotate.state")
    write_lines(log, range(n, n + 50))
    n += 50
    assert not os.path.exists(str(log) + ".1"), "logrotate did not compress"
    sk.start()
    consume(kafka.bootstrap, topic, n=n, timeout=60, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, n)
    assert not unexpected
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates: {dups[:10]}"
    assert counter(sk, "files_gone_unread") == 0
    assert counter(sk, "bytes_unread_lost") == 0


def subprocess_logrotate(conf, state):
    import subprocess
    r = subprocess.run(["logrotate", "-f", "-s", str(state), str(conf)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, r.stdout.decode(errors="replace")


@pytest.mark.parametrize("damage", ["corrupt", "truncated"])
def test_damaged_gz_sibling_ships_none_of_its_lines(tmp_path, kafka, topic, damage):
    """Issue 14: a rotated .gz with a corrupted middle byte shipped 32,494
    garbage lines before its trailer showed the damage. Now a gzip member's
    lines ship only once its CRC32 and length have verified: none of the
    damaged file's lines (corrupt, or cut short), one warning naming it,
    compressed_cut_short=1; its siblings and the live file arrive whole, once."""
    sk, log, conf, dirs = setup(tmp_path, kafka, topic)
    write_lines(log, range(100))
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    n, per = 100, 5000
    for _ in range(3):  # app.log.3.gz holds the stored offset; .2.gz is damaged
        write_lines(log, range(n, n + per))
        n += per
        subprocess_logrotate(conf, tmp_path / "logrotate.state")
    write_lines(log, range(n, n + 100))
    n += 100
    bad = log.parent / "app.log.2.gz"
    data = bytearray(bad.read_bytes())
    if damage == "corrupt":
        data[len(data) // 2] ^= 0xFF
    else:
        del data[len(data) // 2:]
    bad.write_bytes(bytes(data))
    bad_lines = set(range(100 + per, 100 + 2 * per))
    sk.start()
    consume(kafka.bootstrap, topic, n=n - per, timeout=60, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, n, lost_ok=bad_lines)
    shipped_bad = [v for v in vals if v[:8].isdigit() and number(v) in bad_lines]
    print(f"{damage}: {len(shipped_bad)} lines of the damaged file shipped, "
          f"{len(unexpected)} garbage lines, {len(missing)} others missing")
    assert not unexpected, f"{len(unexpected)} garbage lines, first {unexpected[:3]}"
    assert not shipped_bad, f"{len(shipped_bad)} lines of {bad.name} shipped"
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates: {dups[:10]}"
    assert counter(sk, "compressed_cut_short") == 1
    assert re.search(rf"{re.escape(str(bad))}: (not valid compressed data|the compressed "
                     rf"data ends early)", sk.log_text()), sk.log_text()[-2000:]


def backup_race(log, first, n, old=None):
    """What logrotate (create, compress) and a writer that recreates its
    file do when the writer wins the race: logrotate renames app.log to
    app.log.1, the writer recreates app.log and writes lines [first,
    first + n), logrotate finds app.log there when it is about to create it
    and renames it to app.log-YYYYMMDDHH.backup, creates app.log, then
    compresses app.log.1. The .backup file is never rotated or compressed
    again: it stays beside files compressed long after it was made. old:
    logrotate's olddir (app.log.1 and its .gz there), else log's directory.
    As logrotate does, the .gz gets app.log.1's mtime."""
    d = log.parent
    o = old if old is not None else d
    os.rename(log, o / "app.log.1")
    write_lines(log, range(first, first + n))
    os.rename(log, d / "app.log-2026120105.backup")
    log.write_text("")
    with open(o / "app.log.1", "rb") as src, gzip.open(o / "app.log.1.gz", "wb") as dst:
        dst.write(src.read())
    st = os.stat(o / "app.log.1")
    os.utime(o / "app.log.1.gz", ns=(st.st_atime_ns, st.st_mtime_ns))
    os.unlink(o / "app.log.1")


def test_backup_older_than_compressed_not_read_again(tmp_path, kafka, topic):
    """Issue 14 (test_compress_with_kills, 22 duplicates outside the kill
    windows): after a restart whose stored offset's file had been compressed
    since, skiff read it from its .gz, then took every uncompressed rotated
    sibling as newer - logrotate's app.log-YYYYMMDDHH.backup too, though it
    is older than the offset's file and was read and acknowledged before.
    Lines 0-99 in A; the backup race puts 100-121 in the .backup and 122-199
    in C (app.log); all read, clean stop; while stopped 200-209 are added to
    C and C is rotated and compressed. Restart: every line exactly once.
    Then the offset a kill -9 leaves while the .gz is read (line 199 the last
    acknowledged, set with `skiff offsets set`), a restart, 210-259: lines
    200-209 again (that kill's window), nothing else twice."""
    sk, log, conf, dirs = setup(tmp_path, kafka, topic)
    write_lines(log, range(100))
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    backup_race(log, 100, 22)
    write_lines(log, range(122, 200))
    consume(kafka.bootstrap, topic, n=200, timeout=60, allow_timeout=True)
    time.sleep(0.6)
    assert sk.stop() == 0
    write_lines(log, range(200, 210))
    subprocess_logrotate(conf, tmp_path / "logrotate.state")  # C -> app.log.1.gz
    assert not os.path.exists(str(log) + ".1"), "logrotate did not compress"
    sk.start()
    consume(kafka.bootstrap, topic, n=210, timeout=60, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, 210)
    assert not unexpected and not missing, (unexpected[:3], missing[:10])
    assert not dups, f"{len(dups)} duplicates: {dups[:10]}"

    r = subprocess.run([str(harness.skiff_bin()), "offsets", "list", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    off = doc["offsets"][0]["offset"]
    assert off["ino"] == (log.parent / "app.log.1.gz").stat().st_ino, off
    off.pop("finished", None)
    off["position"] -= 10 * (len(line(0)) + 1)  # line 199 the last acknowledged
    # The offset names the .gz by inode: `offsets set` does not check its
    # position against the (empty) file at the path.
    r = subprocess.run([str(harness.skiff_bin()), "offsets", "set", "-",
                        str(sk.worker_file),
                        *map(str, sk.connector_files)], input=json.dumps(doc),
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sk.start()
    write_lines(log, range(210, 260))
    consume(kafka.bootstrap, topic, n=270, timeout=60, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, bad_dups, unexpected = check_lines(vals, 260, set(range(200, 210)))
    assert not unexpected and not missing, (unexpected[:3], missing[:10])
    assert not bad_dups, f"{len(bad_dups)} duplicates outside 200-209: {bad_dups[:10]}"
    assert counter(sk, "files_gone_unread") == 0


BANNER = "".join(f"BANNER {0:0100d}\n" for _ in range(10))


def banner_rotations(tmp_path, kafka, topic, rules, parts):
    """Every file starts with the same 1,080 byte BANNER (longer than the
    fingerprint). For each part in turn, BANNER and the part's lines are
    appended to app.log, and logrotate runs after each part but the last,
    with rules (its directives; None: setup's); skiff reads the first part
    and stops before it is rotated. Returns (sk, log, (size, inode) of log
    when skiff stopped)."""
    sk, log, conf, _ = setup(tmp_path, kafka, topic)
    assert len(BANNER) == 1080
    if rules is not None:
        conf.write_text(f"{log} {{\n" + "".join(f"  {r}\n" for r in rules) + "}\n")
    for k, part in enumerate(parts):
        with open(log, "a") as f:
            f.write(BANNER)
        write_lines(log, part)
        if k == 0:
            sk.start()
            consume(kafka.bootstrap, topic, n=60, timeout=60)
            time.sleep(0.6)
            assert sk.stop() == 0
            stopped = log.stat().st_size, log.stat().st_ino
        if k < len(parts) - 1:
            subprocess_logrotate(conf, tmp_path / "logrotate.state")
    return sk, log, stopped


def banner_restart(sk, kafka, topic, n):
    """Starts skiff again, then checks the topic: lines 0 to n-1 once each
    and the three files' banners (30 lines)."""
    sk.start()
    consume(kafka.bootstrap, topic, n=n + 30, timeout=30, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [v.decode() if isinstance(v, bytes) else v
            for v in (r["value"] for r in consume(kafka.bootstrap, topic))]
    assert sum(1 for v in vals if v.startswith("BANNER")) == 30
    missing, dups, _, unexpected = check_lines(
        [v for v in vals if not v.startswith("BANNER")], n)
    assert not unexpected
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates: {dups[:10]}"


def test_compressed_rotation_sharing_a_banner_not_skipped(tmp_path, kafka, topic):
    """A hostile tester of issue 14: every file starts with the same 1,080
    byte banner (longer than the fingerprint). Lines 0-49 read, skiff
    stopped; rotate, banner + 50-199, rotate, banner + 200-249; start.
    app.log.1.gz decodes to the banner the live file starts with, and was
    taken for a copy logrotate was still compressing from it: its 150 lines
    were skipped for good, silently. Bound: every line once, three banners."""
    sk, _, _ = banner_rotations(tmp_path, kafka, topic, None,
                                [range(0, 50), range(50, 200), range(200, 250)])
    banner_restart(sk, kafka, topic, 250)


def test_stored_file_gone_with_a_sibling_sharing_its_banner(tmp_path, kafka, topic):
    """A hostile tester of issue 14: every file starts with the same 1,080
    byte banner; logrotate compress, rotate 1. Lines 0-49 read (position
    4,130), skiff stopped; rotate, banner + 50-149, rotate (the stored
    offset's .gz deleted), banner + 150-199; start. app.log.1.gz, the next
    file, has the stored fingerprint and was resumed at byte 4,130: lines
    50-99 lost silently, files_gone_unread=0. Bound: 50-199 once each, the
    stored file counted gone."""
    sk, log, _ = banner_rotations(tmp_path, kafka, topic,
                                  ["rotate 1", "create", "compress", "missingok"],
                                  [range(0, 50), range(50, 150), range(150, 200)])
    assert not (log.parent / "app.log.2.gz").exists()
    banner_restart(sk, kafka, topic, 200)
    assert counter(sk, "files_gone_unread") == 1


def test_copytruncate_copy_of_a_newer_file_sharing_its_banner(tmp_path, kafka, topic):
    """The same with logrotate copytruncate, rotate 1: lines 0-49 read
    (position 4,130), stopped; copytruncate, banner + 50-149, copytruncate
    (the stored file's copy deleted), banner + 150-159 (shorter than the
    position). app.log.1, a copy of the next file, has the stored fingerprint:
    it was resumed at byte 4,130, losing 50-99. Bound: 50-159 once each, the
    stored file counted gone."""
    sk, log, _ = banner_rotations(tmp_path, kafka, topic,
                                  ["rotate 1", "copytruncate", "nocompress", "missingok"],
                                  [range(0, 50), range(50, 150), range(150, 160)])
    assert not (log.parent / "app.log.2").exists()
    banner_restart(sk, kafka, topic, 160)
    assert counter(sk, "files_gone_unread") == 1


def test_copytruncate_twice_new_content_longer_than_the_position(tmp_path, kafka, topic):
    """The same, but the last part (banner + 150-259) is longer than the
    stored position 4,130: app.log has the stored inode, the stored first KiB
    and at least the position's bytes, and was resumed at byte 4,130, losing
    150-199 (and 50-149, in app.log.1, never looked at). The 64 bytes before
    the position differ: a truncation. Bound: 50-259 once each, one
    truncation, the stored file counted gone."""
    sk, log, (pos, ino) = banner_rotations(
        tmp_path, kafka, topic, ["rotate 1", "copytruncate", "nocompress", "missingok"],
        [range(0, 50), range(50, 150), range(150, 260)])
    assert log.stat().st_ino == ino and log.stat().st_size > pos
    banner_restart(sk, kafka, topic, 260)
    assert counter(sk, "truncations") == 1
    assert counter(sk, "files_gone_unread") == 1


def test_cut_gz_of_stored_offset_says_what_it_decodes_to(tmp_path, kafka, topic):
    """A hostile tester: the stored offset's file, compressed and cut short,
    was said to end "before the position" though it decodes to more bytes
    than that (none verify: a stream is read only once its check passes).
    The warning now says how many bytes it decodes to; nothing of it ships."""
    import zlib
    sk, log, conf, dirs = setup(tmp_path, kafka, topic)
    write_lines(log, range(1000))
    sk.start()
    consume(kafka.bootstrap, topic, n=1000, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    pos = log.stat().st_size
    write_lines(log, range(1000, 3000))
    subprocess_logrotate(conf, tmp_path / "logrotate.state")
    write_lines(log, range(3000, 3100))
    gz = log.parent / "app.log.1.gz"
    data = gz.read_bytes()[:len(gz.read_bytes()) // 2]
    gz.write_bytes(data)
    decoded = len(zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data))
    assert decoded > pos
    sk.start()
    consume(kafka.bootstrap, topic, n=1100, timeout=30, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    m = re.search(rf"{re.escape(str(gz))}: the compressed data ends early.*", sk.log_text())
    assert m, sk.log_text()[-2000:]
    assert f"decodes to {decoded} bytes" in m.group(0), m.group(0)
    assert f"the position to read it from is {pos}" in m.group(0), m.group(0)
    assert counter(sk, "compressed_cut_short") == 1


from test_tail import small_ext4  # noqa: E402,F401 (a fixture)


def test_inode_reused_after_compression_is_not_a_loss(tmp_path, kafka, topic, small_ext4):
    """A hostile tester: the stored offset's file rotated and compressed
    (nocreate), the writer's new app.log given its freed inode. The .gz was
    finished from the position, nothing lost, yet a warning said the inode
    "now belongs to a newer file" and fingerprint_resets=1 (listed among what
    cannot be saved). Bound: every line once; no loss counted or warned."""
    log = small_ext4 / "app.log"
    conf = tmp_path / "logrotate.conf"
    conf.write_text(f"{log} {{\n  rotate 5\n  nocreate\n  compress\n  missingok\n}}\n")
    worker = {"bootstrap.servers": kafka.bootstrap,
              "offset.storage.file.filename": str(tmp_path / "offsets"),
              "offset.flush.interval.ms": "300",
              "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter"}
    sk = Skiff(tmp_path, worker, [{"name": "rot", "connector.class": "FileStreamSource",
                                   "topic": topic, "file": str(log)}])
    write_lines(log, range(100))
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    time.sleep(0.6)
    assert sk.stop() == 0
    write_lines(log, range(100, 200))
    ino = log.stat().st_ino
    subprocess_logrotate(conf, tmp_path / "logrotate.state")
    write_lines(log, range(200, 250))
    if log.stat().st_ino != ino:
        harness.skip_by_chance("ext4 did not reuse the inode")
    sk.start()
    consume(kafka.bootstrap, topic, n=250, timeout=30, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, 250)
    assert not unexpected and not missing and not dups, (missing[:5], dups[:5])
    assert counter(sk, "fingerprint_resets") == 0, sk.log_text()[-2000:]
    assert counter(sk, "files_gone_unread") == 0
    # The first start's "no stored offsets" warning is expected (an empty
    # state directory is always said); nothing else may warn.
    assert " warn: " not in "\n".join(
        ln for ln in sk.log_text().splitlines()
        if "kafka:" not in ln and "no stored offsets" not in ln), sk.log_text()[-2000:]


@pytest.mark.parametrize("olddir", [False, True], ids=["samedir", "olddir"])
def test_offset_in_backup_then_successor_compressed(tmp_path, kafka, topic, olddir):
    """Issue 22 (test_compress_olddir_with_kills, 3,925 lines lost and none
    counted): the stored offset named logrotate's app.log-YYYYMMDDHH.backup,
    read to its end; while skiff was down the file after it (C, the one
    logrotate created at the path) was rotated and compressed. The .backup
    is never compressed, yet the restart took every compressed sibling as
    older than it and went on with the path's new file: C's lines were
    skipped without a word.
    Lines 0-99 in A; the backup race puts 100-120 in the .backup (A
    compressed); all read, clean stop (the offset names the .backup at its
    end); while stopped 121-199 go to C, C is rotated and compressed, 200-
    209 go to the path's new file. Restart: 121-209, each once."""
    sk, log, conf, dirs = setup(tmp_path, kafka, topic, olddir)
    write_lines(log, range(100))
    sk.start()
    consume(kafka.bootstrap, topic, n=100, timeout=60)
    backup_race(log, 100, 21, dirs[-1])
    consume(kafka.bootstrap, topic, n=121, timeout=60, allow_timeout=True)
    time.sleep(1.5)  # rotate.wait.ms: the .backup let go, the offset names it
    assert sk.stop() == 0
    backup = log.parent / "app.log-2026120105.backup"
    r = subprocess.run([str(harness.skiff_bin()), "offsets", "list", str(sk.worker_file),
                        *map(str, sk.connector_files)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    off = json.loads(r.stdout)["offsets"][0]["offset"]
    assert off["ino"] == backup.stat().st_ino and off["position"] == 21 * 61, off
    write_lines(log, range(121, 200))
    subprocess_logrotate(conf, tmp_path / "logrotate.state")  # C -> app.log.1.gz
    assert not os.path.exists(dirs[-1] / "app.log.1"), "logrotate did not compress"
    write_lines(log, range(200, 210))
    sk.start()
    consume(kafka.bootstrap, topic, n=210, timeout=60, allow_timeout=True)
    time.sleep(1.0)
    assert sk.stop() == 0
    vals = [r["value"] for r in consume(kafka.bootstrap, topic)]
    missing, dups, _, unexpected = check_lines(vals, 210)
    assert not unexpected
    assert not missing, f"{len(missing)} lines lost, first {missing[:10]}"
    assert not dups, f"{len(dups)} duplicates: {dups[:10]}"
    assert counter(sk, "files_gone_unread") == 0
    assert counter(sk, "bytes_unread_lost") == 0
