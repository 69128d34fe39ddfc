/* offsets_fleet: devices meeting in one offsets topic. Each offset record
 * carries a header skiff.device naming the device that wrote it (its
 * device.id, else its machine id: device.h). Connect's rule is that a
 * connector name is unique within an offsets topic; a fleet of devices with
 * one image and one config breaks it without knowing: each writes the same
 * keys (["app",{"filename":"/var/log/app.log"}]) and each restart takes
 * another device's position for its own file. This module tells, at load,
 * this device's records from another device's. Start-up only; never logs. */
#ifndef SKIFF_OFFSETS_FLEET_H
#define SKIFF_OFFSETS_FLEET_H

#include <stdbool.h>
#include <stddef.h>

#include "device.h"

struct settings;

/* Embedded by its owner; fields are this module's, but for device (what
 * to write in skiff.device) and warn (load's warning, "" if none). */
struct offsets_fleet {
	const struct settings *s; /* borrowed: the connectors running here */
	const char *topic;        /* borrowed, for messages */
	bool configured;          /* device is the configured device.id */
	char device[DEVICE_NAME_MAX];
	char machine[DEVICE_NAME_MAX];
	char warn[2048];
};

/* Fills f for the connectors of s (borrowed for f's life) and topic. */
void offsets_fleet_init(struct offsets_fleet *f, const struct settings *s, const char *topic);

/* Judges the topic's last record of key, written by device (its
 * skiff.device; NULL: no header, Connect's or an older skiff's: nobody's).
 * A key of a connector running here, written by a device that is neither
 * this device's device.id nor its machine id, is another device's. It is
 * refused when this device can tell it is another one: its device.id is
 * configured (it survives re-flashing) or had_file (its offset file loaded:
 * it was not re-flashed). Otherwise (a new card, or the topic alone, named by
 * a machine id that a re-flash may have changed) the record may be this
 * device's own from before: it is taken and f->warn says so (the first one).
 * Returns 0, or OFFSETS_ERR_CONFIG with errbuf naming the connector, the key,
 * the other device and the fix. */
int offsets_fleet_check(struct offsets_fleet *f, const char *key, const char *device, bool had_file,
                        char *errbuf, size_t errlen);

#endif
