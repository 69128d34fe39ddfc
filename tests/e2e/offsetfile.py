"""Reads skiff's offset file (offset.storage.file.filename) the way a person
or a migration script would: plain JSON, checksum verified.

  {"format":"skiff-offsets","version":1,"generation":N,
   "offsets":[{"key":<Connect key>,"value":<Connect value>},...],"crc32c":"xxxxxxxx"}

Connect's key and value may be stored as embedded JSON or as JSON text in a
string; both are accepted here.
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


def load(path):
    """{key text: value dict} of the file at path."""
    doc = read_document(path)
    return {json.dumps(_as_json(e["key"]), separators=(",", ":"), ensure_ascii=False):
            _as_json(e["value"]) for e in doc["offsets"]}


def generation(path):
    return read_document(path)["generation"]
