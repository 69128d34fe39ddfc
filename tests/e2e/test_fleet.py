"""A fleet (issue 13): three skiff instances run the same worker and connector
files, byte for byte; each tells its records apart by a device id from its own
device.properties (${file:...}) and a site from its environment (${env:...}),
added with InsertField$Value and InsertHeader. Each instance's working
directory stands in for its device's /etc/skiff: the file reference is
relative, so one text serves every device (FileConfigProvider resolves a
relative path against the working directory, as Java does)."""

import json

import harness
from harness import Skiff

WORKER = {
    "bootstrap.servers": None,  # filled in
    "offset.storage.file.filename": "offsets",
    "offset.flush.interval.ms": "500",
    "config.providers": "file,env",
    "config.providers.file.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
    "config.providers.env.class": "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
    "value.converter.schemas.enable": "false",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
}
CONNECTOR = {
    "name": "app", "connector.class": "FileStreamSource", "file": "app.log",
    "topic": None,  # filled in
    "transforms": "hoist,device,site",
    "transforms.hoist.type": "org.apache.kafka.connect.transforms.HoistField$Value",
    "transforms.hoist.field": "line",
    "transforms.device.type": "org.apache.kafka.connect.transforms.InsertField$Value",
    "transforms.device.static.field": "device",
    "transforms.device.static.value": "${file:device.properties:device.id}",
    "transforms.site.type": "org.apache.kafka.connect.transforms.InsertHeader",
    "transforms.site.header": "site",
    "transforms.site.value.literal": "${env:SKIFF_SITE}",
}


def test_three_devices_one_config(tmp_path, kafka, topic):
    harness.create_topic(kafka.bootstrap, topic, partitions=1)
    worker = dict(WORKER, **{"bootstrap.servers": kafka.bootstrap})
    connector = dict(CONNECTOR, topic=topic)
    fleet = []
    for i in (1, 2, 3):
        sk = Skiff(tmp_path, worker, [connector], env={"SKIFF_SITE": f"site-{i}"},
                   name=f"device{i}")
        (sk.dir / "device.properties").write_text(f"# written at provisioning\ndevice.id=gw-{i}\n")
        (sk.dir / "app.log").write_text("".join(f"d{i} line {j}\n" for j in range(3)))
        fleet.append(sk)
    texts = {sk.worker_file.read_bytes() + sk.connector_files[0].read_bytes() for sk in fleet}
    assert len(texts) == 1, "one configuration for the whole fleet"
    for sk in fleet:
        sk.start()
    recs = harness.consume(kafka.bootstrap, topic, 9)
    assert len(recs) == 9
    seen = {}
    for r in recs:
        v = json.loads(r["value"])
        i = int(v["line"][1])
        assert v["device"] == f"gw-{i}", v
        assert r["headers"] == [("site", f"site-{i}".encode())], r["headers"]
        seen.setdefault(i, []).append(v["line"])
    assert seen == {i: [f"d{i} line {j}" for j in range(3)] for i in (1, 2, 3)}
    for sk in fleet:
        assert sk.stop() == 0
        assert "gw-" not in sk.log_text()
