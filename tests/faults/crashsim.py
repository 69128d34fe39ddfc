"""Power loss, simulated: from an strace record of skiff's offset-store syscalls,
every on-disk state a power cut could leave, and a judge for each.

The model is the strict one every POSIX file system satisfies (and the one
ext4 with delalloc, the Raspberry Pi's default, comes closest to):

  * a file's data survives a crash only as of its last successful fsync; bytes
    written after it may survive in part (any prefix: a torn write), not at
    all, or as zeros of the right length (size updated, blocks not written);
  * a directory entry change (create, rename, unlink) survives only once the
    directory was fsynced after it; before that, any subset of the pending
    changes may have reached the disk, each one atomic (rename(2) never leaves
    both names or neither).

Nothing else survives. A state is judged by loading it with skiff's own loader
(tests/tools/offsets_dump.c, the code skiff runs at start-up): it must load, and
must hold the newest generation whose flush returned (its directory fsync
succeeded) or a newer one that was fully written, byte for byte, never a torn
or older one.

Standard library only. Record with record_cmd(); parse with parse_trace();
enumerate with crash_states(); materialise and judge with judge()."""

import hashlib
import itertools
import json
import os
import re
import subprocess
from pathlib import Path

SYSCALLS = ("openat", "open", "creat", "write", "pwrite64", "fsync", "fdatasync", "close",
            "rename", "renameat", "renameat2", "unlink", "unlinkat")


def record_cmd(trace_file, state_dir, store_name="offsets"):
    """The strace prefix that records the offset store's syscalls of a command:
    only those on the state directory, the store, its .prev and its .tmp (-P),
    with every byte of every string in hex (-xx) so data can be replayed."""
    d = Path(state_dir)
    paths = [d, d / store_name, d / f"{store_name}.prev", d / f"{store_name}.tmp",
             d / f"{store_name}.log"]
    cmd = ["strace", "-f", "-qq", "-xx", "-s", "1048576", "-o", str(trace_file),
           "-e", "trace=" + ",".join(SYSCALLS)]
    for p in paths:
        cmd += ["-P", str(p)]
    return cmd


_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)\)\s+=\s+(-?\d+|\?)(?:<[^>]*>)?(?:\s+(E\w+))?")
_STR = re.compile(r'"((?:\\x[0-9a-f]{2})*)"')
_FD = re.compile(r"^\s*(-?\d+)")


def _unhex(s):
    return bytes(int(s[i + 2:i + 4], 16) for i in range(0, len(s), 4))


def _merge_unfinished(lines):
    """Joins "<unfinished ...>" / "<... x resumed>" pairs of one pid."""
    pending, out = {}, []
    for line in lines:
        m = re.match(r"^(\d+)\s+(.*) <unfinished \.\.\.>$", line)
        if m:
            pending[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^(\d+)\s+<\.\.\. \w+ resumed>(.*)$", line)
        if m and m.group(1) in pending:
            out.append(f"{m.group(1)} {pending.pop(m.group(1))}{m.group(2)}")
            continue
        out.append(line)
    # A call the process died in (killed on entry) never returned.
    out += [f"{pid} {text} = ?" for pid, text in pending.items()]
    return out


def parse_trace(path):
    """Events of an strace -xx record: dicts with op (create, write, fsync,
    rename, unlink, close, open), the names involved (full paths), fd, data
    bytes, and ok (the call returned success; None when it never returned)."""
    events = []
    for line in _merge_unfinished(Path(path).read_text().splitlines()):
        m = _LINE.match(line)
        if not m:
            continue
        name, args, ret, err = m.group(2), m.group(3), m.group(4), m.group(5)
        ok = None if ret == "?" else int(ret) >= 0
        before = len(events)
        strs = [_unhex(s).decode("utf-8", "surrogateescape") for s in _STR.findall(args)]
        if name in ("openat", "open", "creat"):
            flags = args
            create = name == "creat" or "O_CREAT" in flags
            events.append({"op": "create" if create else "open", "path": strs[0],
                           "fd": int(ret) if ok else None, "ok": ok,
                           "directory": "O_DIRECTORY" in flags, "trunc": "O_TRUNC" in flags})
        elif name in ("write", "pwrite64"):
            data = _unhex(_STR.findall(args)[0]) if _STR.search(args) else b""
            n = int(ret) if ok else 0
            events.append({"op": "write", "fd": int(_FD.match(args).group(1)),
                           "data": data[:n] if ok else data, "ok": ok})
        elif name in ("fsync", "fdatasync", "close"):
            events.append({"op": "fsync" if name != "close" else "close",
                           "fd": int(_FD.match(args).group(1)), "ok": ok})
        elif name.startswith("rename"):
            events.append({"op": "rename", "src": strs[0], "dst": strs[1], "ok": ok})
        elif name.startswith("unlink"):
            events.append({"op": "unlink", "path": strs[0], "ok": ok})
        if len(events) > before:
            events[-1]["err"] = err
    return events


class _Inode:
    def __init__(self, ident, data=b"", durable=b""):
        self.id = ident
        self.data = bytearray(data)
        self.durable = bytes(durable)  # content as of the last fsync

    def synced(self):
        return bytes(self.data) == self.durable


class Model:
    """The file system as the process saw it (current) and as a power cut
    would leave it at least (durable), for one directory."""

    def __init__(self, directory, initial=None):
        self.dir = str(directory)
        self.inodes = {}
        self.current = {}  # name -> inode id
        self.durable = {}
        self.pending = []  # directory changes since the last directory fsync
        self.fds = {}      # fd -> inode id, or "dir"
        for name, data in (initial or {}).items():
            ino = self._new(data, durable=data)
            self.current[name] = self.durable[name] = ino

    def _new(self, data=b"", durable=b""):
        ino = len(self.inodes) + 1
        self.inodes[ino] = _Inode(ino, data, durable)
        return ino

    def _name(self, path):
        p = str(path)
        if os.path.dirname(p) != self.dir:
            return None
        return os.path.basename(p)

    def apply(self, ev):
        """Applies one successful event."""
        op = ev["op"]
        if not ev["ok"]:
            return
        if op in ("create", "open"):
            if ev.get("directory") or str(ev["path"]) == self.dir:
                self.fds[ev["fd"]] = "dir"
                return
            name = self._name(ev["path"])
            if name is None:
                return
            if name not in self.current:
                ino = self._new()
                self.current[name] = ino
                self.pending.append(("link", name, ino))
            elif ev.get("trunc"):
                self.inodes[self.current[name]].data = bytearray()
            self.fds[ev["fd"]] = self.current[name]
        elif op == "write":
            ino = self.fds.get(ev["fd"])
            if ino not in (None, "dir"):
                self.inodes[ino].data += ev["data"]
        elif op == "fsync":
            ino = self.fds.get(ev["fd"])
            if ino == "dir":
                self.durable = dict(self.current)
                self.pending = []
            elif ino is not None:
                self.inodes[ino].durable = bytes(self.inodes[ino].data)
        elif op == "close":
            self.fds.pop(ev["fd"], None)
        elif op == "rename":
            src, dst = self._name(ev["src"]), self._name(ev["dst"])
            if src is None or dst is None or src not in self.current:
                return
            ino = self.current.pop(src)
            self.current[dst] = ino
            self.pending.append(("rename", src, dst, ino))
        elif op == "unlink":
            name = self._name(ev["path"])
            if name in self.current:
                ino = self.current.pop(name)
                self.pending.append(("unlink", name, ino))

    def _dir_states(self, max_subsets):
        """Name -> inode maps a crash could leave: the durable directory plus
        every subset of the pending changes (applied in order, each atomic)."""
        n = len(self.pending)
        subsets = itertools.product((False, True), repeat=n) if 2 ** n <= max_subsets else \
            ([True] * k + [False] * (n - k) for k in range(n + 1))  # prefixes only
        for pick in subsets:
            names = dict(self.durable)
            for chosen, change in zip(pick, self.pending):
                if not chosen:
                    continue
                if change[0] == "link":
                    names[change[1]] = change[2]
                elif change[0] == "rename":
                    _, src, dst, ino = change
                    if names.get(src) == ino:
                        del names[src]
                    names[dst] = ino
                elif change[0] == "unlink" and names.get(change[1]) == change[2]:
                    del names[change[1]]
            yield names

    def _contents(self, ino, torn_lengths):
        """What a crash could leave in inode ino's data."""
        node = self.inodes[ino]
        data, durable = bytes(node.data), node.durable
        if node.synced():
            return [data]
        # Zeros of the right length: the size reached the disk, the blocks
        # did not; what was fsynced before (the log's earlier records) stays.
        zeros = durable + b"\0" * (len(data) - len(durable)) if data.startswith(durable) \
            else b"\0" * len(data)
        out = {durable, data, zeros}
        if data.startswith(durable):
            lengths = range(len(durable), len(data))
            if torn_lengths is not None and len(lengths) > torn_lengths:
                step = max(1, len(lengths) // torn_lengths)
                lengths = list(lengths[::step]) + [len(data) - 1]
            out.update(data[:k] for k in lengths)
        return sorted(out, key=len)

    def crash_states(self, max_subsets=256, torn_lengths=None, max_combos=2048,
                     ignored=(".tmp",)):
        """Every on-disk state (name -> bytes) a power cut right now could
        leave, as (state, multiplicity). A file whose name ends in one of
        ignored is never read by the loader (it is removed unread), so its
        contents are counted, not materialised: one of them stands for all.
        When several files hold unsynced data at once (a run without fsync),
        torn lengths are sampled to keep the product under max_combos."""
        for names in self._dir_states(max_subsets):
            names = dict(sorted(names.items()))
            for lengths in (torn_lengths, 32, 8, 2):
                options = [[(n, c) for c in self._contents(ino, lengths)]
                           for n, ino in names.items()]
                if _product(len(o) for o in options if not o[0][0].endswith(ignored)) \
                        <= max_combos:
                    break
            mult = _product(len(o) for o in options if o[0][0].endswith(ignored))
            options = [o[:1] if o[0][0].endswith(ignored) else o for o in options]
            for combo in itertools.product(*options):
                yield dict(combo), mult


def _product(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def generation_of(doc):
    """The generation a complete document carries, or None."""
    m = re.search(rb'"generation":(\d+)', doc)
    return int(m.group(1)) if m else None


def _log_records(data):
    """The complete, checksummed records of a log's bytes (see offsetfile.py)."""
    out = []
    for line in data.split(b"\n")[:-1]:
        body, _, crc = line.rpartition(b"\t")
        if len(crc) != 8 or b"%08x" % _crc32c(body) != crc:
            break
        out.append(json.loads(body))
    return out


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


class _Log:
    """What the journal (store.log) adds to a run: the entries of each
    generation a record makes, and when an append returned success (its
    fsync; with no fsync at all, as under eatmydata, the write itself: that
    is what skiff believed)."""

    def __init__(self):
        self.states = {}    # base generation -> entries after its last record
        self.pending = None  # (generation, inode, step) of a record not yet returned

    def written(self, model, ino, documents):
        data = bytes(model.inodes[ino].data)
        recs = _log_records(data) if data.endswith(b"\n") else []
        if not recs:
            return
        rec = recs[-1]
        base = rec["base"]
        if base not in self.states and base not in documents:
            return
        st = dict(self.states[base] if base in self.states else _entry_map(documents[base]))
        for e in rec["offsets"]:
            k = _dump(e["key"])
            if e["value"] is None:
                st.pop(k, None)
            else:
                st[k] = _dump(e["value"])
        self.states[base] = st
        documents[rec["generation"]] = st
        self.pending = (rec["generation"], ino, "written")

    def returned(self, model, ev, must, store):
        """must after ev, an event that follows a record's write: the append
        returned success after its fsync, or after the directory fsync that
        follows it when it created the log; with no fsync at all, right after
        the write."""
        if self.pending is None:
            return must
        gen, ino, step = self.pending
        fd = model.fds.get(ev.get("fd")) if ev["op"] in ("fsync", "write") else None
        if step == "written" and ev["op"] == "write" and fd == ino:
            return must  # the same record, written in parts
        if step == "written" and ev["op"] == "fsync" and fd == ino:
            if not ev["ok"]:
                self.pending = None
                return must
            if model.durable.get(f"{store}.log") == ino:
                self.pending = None
                return max(must, gen)
            self.pending = (gen, ino, "synced")
            return must
        if step == "synced" and ev["op"] == "open" and ev.get("directory"):
            self.pending = (gen, ino, "dir")
            return must
        if step == "dir" and ev["op"] == "fsync" and fd == "dir":
            self.pending = None
            return max(must, gen) if ev["ok"] else must
        if step == "dir":
            return must
        self.pending = None
        return max(must, gen)  # skiff went on: it believed the record durable


def _dump(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def _entry_map(doc):
    e = _entries(doc) if isinstance(doc, bytes) else None
    return dict(e) if e is not None else dict(doc)


def crash_states(events, directory, initial=None, store="offsets", torn_lengths=None,
                 max_combos=2048):
    """Walks the events; after each one (and before the first), yields
    (index, must, documents, state, multiplicity): must is the generation a load must reach
    at least (the newest whose flush returned success to skiff, or the newest
    present before the run), documents maps every generation written so far to
    its complete bytes, and state is one possible on-disk state.

    A flush is the span from opening the directory to closing it
    (atomicfile_replace); it returned success when the temp file was renamed
    over the store and no call in it failed. That is what skiff believed, so a
    run whose fsyncs were silently dropped (eatmydata) is held to it too."""
    model = Model(directory, initial)
    documents, must = {}, 0
    for data in (initial or {}).values():
        g = generation_of(data)
        if g is not None:
            documents[g] = data
            must = max(must, g)
    written = {}  # inode -> generation written into it
    flush = None  # {"dirfd", "gen", "failed"} while a flush is under way
    log = _Log()
    for i in range(len(events) + 1):
        for state, mult in model.crash_states(torn_lengths=torn_lengths, max_combos=max_combos):
            yield i, must, documents, state, mult
        if i == len(events):
            break
        ev = events[i]
        if log.pending is not None:
            must = log.returned(model, ev, must, store)
        model.apply(ev)
        if ev["op"] in ("open", "create") and ev["ok"] and ev.get("directory"):
            flush = {"dirfd": ev["fd"], "gen": None, "failed": False}
        elif flush is not None and ev["ok"] is False and not (
                ev["op"] in ("unlink", "rename") and ev.get("err") == "ENOENT"):
            flush["failed"] = True  # what atomicfile_replace reports as a failure
        if ev["op"] == "write" and ev["ok"] and \
                model.fds.get(ev["fd"]) == model.current.get(f"{store}.log"):
            log.written(model, model.fds[ev["fd"]], documents)
        elif ev["op"] == "write" and ev["ok"]:
            ino = model.fds.get(ev["fd"])
            doc = bytes(model.inodes[ino].data) if ino not in (None, "dir") else b""
            g = generation_of(doc)
            if g is not None and doc.endswith(b"}\n"):
                documents[g] = doc
                written[ino] = g
        elif ev["op"] == "rename" and ev["ok"] and flush is not None and \
                os.path.basename(ev["dst"]) == store:
            flush["gen"] = written.get(model.current.get(store))
        elif ev["op"] == "close" and flush is not None and ev["fd"] == flush["dirfd"]:
            if not flush["failed"] and flush["gen"] is not None:
                must = max(must, flush["gen"])
            flush = None


def judge(events, directory, workdir, dump_tool, initial=None, store="offsets",
          torn_lengths=None, max_combos=2048):
    """Materialises every distinct crash state under workdir, loads each with
    dump_tool (offsets_dump), and returns (enumerated, distinct, violations):
    a violation is a dict saying which state, what loaded and why it is wrong."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    distinct, order, enumerated = {}, [], 0
    for i, must, documents, state, mult in crash_states(events, directory, initial, store,
                                                        torn_lengths, max_combos):
        enumerated += mult
        # The temp file plays no part in a load (it is removed): fold it away.
        key = hashlib.sha256(json.dumps(
            {n: c.hex() for n, c in state.items() if not n.endswith(".tmp")},
            sort_keys=True).encode()).hexdigest()
        if key not in distinct:
            d = workdir / f"s{len(distinct):05d}"
            d.mkdir()
            for n, c in state.items():
                (d / n).write_bytes(c)
            distinct[key] = {"dir": d, "must": must, "event": i, "state": state,
                             "docs": dict(documents)}
            order.append(key)
        else:
            # The strictest requirement seen for this state applies.
            if must > distinct[key]["must"]:
                distinct[key].update(must=must, event=i, docs=dict(documents))
    paths = "".join(f"{distinct[k]['dir'] / store}\n" for k in order)
    r = subprocess.run([str(dump_tool), "-"], input=paths.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    if r.returncode != 0:
        raise AssertionError(f"offsets_dump failed: {r.stderr.decode(errors='replace')}")
    results = [json.loads(l) for l in r.stdout.decode().splitlines()]
    violations = []
    for k, res in zip(order, results):
        s = distinct[k]
        files = {n: (len(c), generation_of(c)) for n, c in s["state"].items()}
        why = None
        if not res["ok"]:
            why = f"does not load: {res['error']}"
        elif res["generation"] < s["must"]:
            why = (f"loaded generation {res['generation']}, but generation {s['must']} had "
                   f"been flushed durably")
        elif res["generation"] > 0:
            doc = s["docs"].get(res["generation"])
            want = sorted(_entry_map(doc).items()) if doc else None
            if want is None or want != sorted(tuple(e) for e in res["entries"]):
                why = f"generation {res['generation']} loaded with entries unlike the ones written"
        if why:
            # log: the generation that had to load was a journal record's.
            violations.append({"event": s["event"], "files": files, "why": why,
                               "log": isinstance(s["docs"].get(s["must"]), dict)})
    return enumerated, len(distinct), violations


def _entries(doc):
    """The [key text, value text] pairs of a complete document, as skiff writes
    them (compact JSON re-serialised the same way skiff's loader reports)."""
    try:
        j = json.loads(doc)
    except ValueError:
        return None
    dump = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    return [(dump(e["key"]), dump(e["value"])) for e in j["offsets"]]
