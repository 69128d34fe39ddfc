"""What the fleet's end-to-end tests share (issue 28): the operator's
`skiff fleet` run as a user runs it, the devices' status topics read back,
`fleet status --json` polled until it shows what a test waits for, and a
device: a skiff with fleet.enabled and allow-lists over its own directory.

Standard library only, like harness.py."""

import json
import subprocess
import time
import uuid

import harness


def fleet(*args, timeout=120):
    """`skiff fleet ARGS`: (exit code, stdout, stderr)."""
    r = subprocess.run([str(harness.skiff_bin()), "fleet", *map(str, args)],
                       capture_output=True, timeout=timeout)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def tag():
    """A suffix that keeps this run's topics and devices apart from others'."""
    return uuid.uuid4().hex[:8]


def status_records(bootstrap, device):
    """(key, value) of every record on device's status topic, as text."""
    out = []
    for r in harness.consume(bootstrap, f"skiff.status.{device}", timeout=5,
                             allow_timeout=True):
        key = r["key"].decode() if r["key"] is not None else None
        val = r["value"].decode() if r["value"] is not None else None
        out.append((key, val))
    return out


def states(view):
    """A device entry's connector states by name."""
    return {c["name"]: c["state"] for c in view["connectors"]}


def fleet_view(bootstrap, until, *select, timeout=30):
    """`skiff fleet status --json ...select`'s devices once until(devices)
    holds; AssertionError naming the last view otherwise."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        rc, out, err = fleet("status", "--bootstrap", bootstrap, *select, "--json")
        assert rc == 0, err
        last = json.loads(out)["devices"]
        if until(last):
            return last
        time.sleep(0.5)
    raise AssertionError(f"fleet status never matched: last {last}")


def device_view(bootstrap, device, until, timeout=30):
    """`skiff fleet status --json`'s entry for device once until(entry) holds."""

    def mine(devs):
        return [d for d in devs if d["device"] == device]

    devs = fleet_view(bootstrap, lambda ds: bool(mine(ds)) and until(mine(ds)[0]),
                      "--device", device, timeout=timeout)
    return mine(devs)[0]


def make_device(root, kafka, device, prefix, extra=None, env=None):
    """A skiff (not started) in root with device.id=device, fleet on
    (heartbeat 1 s), allowed FileStreamSource over root/allowed/* and topics
    prefix*; extra adds to or replaces worker keys. Returns (skiff, allowed
    dir, state dir). env: the process's variables besides ours."""
    allowed = root / "allowed"
    allowed.mkdir(parents=True)
    state = root / "state"
    state.mkdir()
    props = {
        "bootstrap.servers": kafka.bootstrap,
        "offset.storage.file.filename": str(state / "offsets"),
        "offset.flush.interval.ms": "500",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "device.id": device,
        "fleet.enabled": "true",
        "fleet.allow.files": f"{allowed}/*",
        "fleet.allow.connector.classes": "FileStreamSource",
        "fleet.allow.topics": f"{prefix}*",
        "fleet.heartbeat.interval.ms": "1000",
        "config.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
    }
    props.update(extra or {})
    sk = harness.Skiff(root, props, env=env)
    return sk, allowed, state
