"""Reads skiff's offset file (offset.storage.file.filename) the way a person
or a migration script would: plain JSON, checksum verified.

  {"format":"skiff-offsets","version":1,"generation":N,
   "offsets":[{"key":<Connect key>,"value":<Connect value>},...],"crc32c":"xxxxxxxx"}

Connect's key and value may be stored as embedded JSON or as JSON text in a
string; both are accepted here.

Beside it, PATH.log (the journal) holds the offsets that changed since PATH
was written, one line per flush:

  {"log":1,"base":N,"generation":M,"offsets":[{"key":..,"value":..|null}]}<TAB>crc32c

applied in order over PATH when "base" is PATH's generation; replay stops at
the first line that is torn or fails its checksum, as skiff's does.
"""

import json


def _crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def key(connector, partition):
    """Connect's offset key text: ["connector",{partition}] compact."""
    return json.dumps([connector, partition], separators=(",", ":"), ensure_ascii=False)


def read_document(path):
    """The parsed document; ValueError when the checksum or JSON is wrong."""
    raw = open(path, "rb").read()
    marker = b',"crc32c":"'
    i = raw.rfind(marker)
    if i < 0:
        raise ValueError(f"{path}: no crc32c field")
    want = raw[i + len(marker):i + len(marker) + 8].decode()
    if f"{_crc32c(raw[:i]):08x}" != want.lower():
        raise ValueError(f"{path}: checksum mismatch")
    doc = json.loads(raw)
    if doc.get("format") != "skiff-offsets":
        raise ValueError(f"{path}: not a skiff offsets file")
    return doc


def _as_json(v):
    return json.loads(v) if isinstance(v, str) else v


def _kt(k):
    return json.dumps(_as_json(k), separators=(",", ":"), ensure_ascii=False)


def log_records(path, base):
    """The records of path.log that apply over a base of generation base."""
    try:
        raw = open(f"{path}.log", "rb").read()
    except FileNotFoundError:
        return []
    out, last = [], base
    for line in raw.split(b"\n")[:-1]:  # the last piece: empty, or torn
        body, _, crc = line.rpartition(b"\t")
        if len(crc) != 8 or f"{_crc32c(body):08x}".encode() != crc:
            break
        rec = json.loads(body)
        if rec.get("base") != base:
            continue
        if rec["generation"] <= last:
            break
        out.append(rec)
        last = rec["generation"]
    return out


def load_with_generation(path):
    """({key text: value dict}, generation) of the store at path: the base
    file with its log applied."""
    doc = read_document(path)
    offs = {_kt(e["key"]): _as_json(e["value"]) for e in doc["offsets"]}
    gen = doc["generation"]
    for rec in log_records(path, gen):
        for e in rec["offsets"]:
            if e["value"] is None:
                offs.pop(_kt(e["key"]), None)
            else:
                offs[_kt(e["key"])] = _as_json(e["value"])
        gen = rec["generation"]
    return offs, gen


def load(path):
    """{key text: value dict} of the store at path (its log applied)."""
    return load_with_generation(path)[0]


def generation(path):
    return load_with_generation(path)[1]
