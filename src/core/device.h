/* device: this device's name where a fleet meets in one Kafka cluster (the
 * offsets topic's skiff.device header, the exactly-once transactional.id, the
 * journald partition of the local journal).
 *
 * Never the host name: boards of one image all keep "raspberrypi", and an id
 * they share makes them take each other's offsets or fence each other. The
 * name is the worker's device.id when set; else /etc/machine-id (unique per
 * device from its first boot, also on Raspberry Pi OS images; a re-flashed
 * card gets a new one); else, where that is missing or empty (an image not
 * booted yet, a container, a system without systemd), an id generated once
 * and kept beside the offset file, "<offset.storage.file.filename>.device"
 * (32 random hex digits), which lives as long as the offsets it names. With
 * none of these (the offsets topic alone) there is no name, and what needs
 * one refuses to start, saying to set device.id.
 *
 * Start-up only, main thread; never logs (device_note says what to warn). */
#ifndef SKIFF_DEVICE_H
#define SKIFF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

struct config_section;

/* Most bytes of a device name, with its terminating NUL. */
#define DEVICE_NAME_MAX 256

/* Where a device name comes from. */
enum device_origin {
	DEVICE_NONE,       /* nothing: the name is "" */
	DEVICE_CONFIGURED, /* the worker's device.id */
	DEVICE_MACHINE_ID, /* /etc/machine-id */
	DEVICE_KEPT,       /* the id kept in "<offset file>.device" */
};

/* Says where this process may keep a generated id: worker's
 * offset.storage.file.filename (none: nowhere), made there when first
 * needed if create (a skiff that holds the store; --check makes nothing).
 * Also remembers the worker's device.id for device_name(NULL, ..). Without
 * it, device_machine_id keeps nothing. */
void device_init(const struct config_section *worker, bool create);

/* Writes this machine's id into out (len > 0): /etc/machine-id when it holds
 * one (SKIFF_MACHINE_ID_FILE names another file, for tests), else the id kept
 * beside the offset file (read, or made on the first call after
 * device_init(.., true)); "" when neither. Returns DEVICE_MACHINE_ID,
 * DEVICE_KEPT or DEVICE_NONE. Found once, on the first call. */
enum device_origin device_machine_id(char *out, size_t len);

/* Writes the name this device signs its offset records with into out: the
 * device.id of worker (NULL: device_init's worker) when set, else
 * device_machine_id's. Returns its origin. */
enum device_origin device_name(const struct config_section *worker, char *out, size_t len);

/* How a person knows the origin, for the log: "device.id", "machine id",
 * "id kept in PATH", "no name". Valid until the next call. */
const char *device_origin_text(enum device_origin o);

/* Why this device has no name (device_name gave DEVICE_NONE) and what a
 * person can do, as one sentence for an error message. */
void device_missing(char *buf, size_t len);

/* What a person should hear once the name was needed: the kept id in use
 * (a copy of the state directory on another board would share it) or why
 * none could be kept. Returns false (buf untouched) when nothing. */
bool device_note(char *buf, size_t len);

#endif
