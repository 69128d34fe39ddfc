/* offsets_fleet: devices meeting in one offsets topic. Each offset record
 * carries a header skiff.device naming the device that wrote it (its
 * device.id, else its machine id: device.h). Connect's rule is that a
 * connector name is unique within an offsets topic; a fleet of devices with
 * one image and one config breaks it without knowing: each writes the same
 * keys (["app",{"filename":"/var/log/app.log"}]) and each restart takes
 * another device's position for its own file. This module tells, at load,
 * this device's records from another device's, and the keys of this
 * skiff's connectors from everyone else's (the only ones it reads into
 * memory and the only ones it writes). Main loop only; never logs. */
#ifndef SKIFF_OFFSETS_FLEET_H
#define SKIFF_OFFSETS_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/device.h"

struct connector_settings;
struct settings;

/* Embedded by its owner; fields are this module's, but for device (what
 * to write in skiff.device) and warn (load's warning, "" if none). */
struct offsets_fleet {
	const struct settings *s; /* borrowed: the connectors running here */
	const char *topic;        /* borrowed, for messages */
	bool configured;          /* device is the configured device.id */
	char device[DEVICE_NAME_MAX];
	char machine[DEVICE_NAME_MAX];
	char store[40]; /* this offsets store's id (skiff.store), "": none */
	bool made;      /* store was made at this start */
	bool fenced;    /* exactly-once: the transactional.id keeps one writer */
	char warn[2048];
};

/* Fills f for the connectors of s (borrowed for f's life) and topic. With
 * file (the offset file, NULL: none), f->store is the store's id, kept in
 * "<file>.store" (made when missing and create): what tells apart two
 * boards cloned from one image, which share /etc/machine-id. */
void offsets_fleet_init(struct offsets_fleet *f, const struct settings *s, const char *topic,
                        const char *file, bool create);

/* The connector of this skiff that key (len bytes, not NUL-terminated)
 * belongs to: the one its first element names, or NULL for a key of no
 * connector running here (another writer's, or not an offset key). Reads
 * only the name (no parse of the key): called for every record of a shared
 * topic. The result is valid until the settings change (a reload). */
const struct connector_settings *offsets_fleet_connector(const struct offsets_fleet *f,
                                                         const char *key, size_t len);

/* Whether a record skiff wrote (skiff.device device, skiff.store store;
 * NULL: the header is missing) was written by this offsets store: this
 * store's id (not one made at this start), whatever device name it had
 * then; or this device's name or machine id, and no id to tell stores apart
 * (a record of the exactly-once transactions, or of a skiff from before
 * store ids; a store id made at this start). Only such a record's
 * generation can be compared with the offset file's. */
bool offsets_fleet_mine(const struct offsets_fleet *f, const char *device, const char *store);

/* Judges the topic's last record of key, written by device (its
 * skiff.device; NULL: no header, Connect's or an older skiff's: nobody's)
 * from store (its skiff.store; NULL: none) with generation gen (0: none),
 * against the offset file's generation fgen (0: no file loaded).
 * This store's own record (its id, not made at this start) at or below
 * fgen passes whatever device name it carries: the device was renamed,
 * and the file, which holds that write or a later one, stands.
 * A key of a connector running here, written by a device that is neither
 * this device's device.id nor its machine id, is another device's. It is
 * refused when this device can tell it is another one: its device.id is
 * configured (it survives re-flashing) or fgen > 0 (its offset file loaded:
 * it was not re-flashed). Otherwise (a new card, or the topic alone, named by
 * a machine id that a re-flash may have changed) the record may be this
 * device's own from before: it is taken and f->warn says so (the first one).
 * A record of this device's own name from another store while fgen > 0 is a
 * clone's (same image, same machine id): refused (an older copy of this
 * store's own file is the same store; a re-flashed card has no file; an id
 * made at this start judges nothing), unless the name is the configured
 * device.id: then the other store is this device's own other state
 * directory (a new card, an older backup put back), and passes.
 * Returns 0, or OFFSETS_ERR_CONFIG with errbuf naming the connector, the key,
 * the other device or store and the fix. */
int offsets_fleet_check(struct offsets_fleet *f, const char *key, const char *device,
                        const char *store, uint64_t gen, uint64_t fgen, char *errbuf,
                        size_t errlen);

#endif
