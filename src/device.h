/* device: this device's name where a fleet meets in one Kafka cluster (the
 * offsets topic's skiff.device header, the exactly-once transactional.id).
 * Start-up only; never logs. */
#ifndef SKIFF_DEVICE_H
#define SKIFF_DEVICE_H

#include <stdbool.h>
#include <stddef.h>

struct config_section;

/* Most bytes of a device name, with its terminating NUL. */
#define DEVICE_NAME_MAX 256

/* Writes this machine's id into out (len > 0): /etc/machine-id (unique per
 * device from its first boot, also on Raspberry Pi OS images; a re-flashed
 * card gets a new one), else the host name, which a fleet of Pis often shares
 * ("raspberrypi"), else "skiff". SKIFF_MACHINE_ID_FILE names another file
 * than /etc/machine-id (tests: two devices on one host). */
void device_machine_id(char *out, size_t len);

/* Writes the name this device signs its offset records with (the offsets
 * topic's skiff.device header) into out: the worker's device.id when set
 * (a name that survives re-flashing), else device_machine_id's.
 * Returns true when it is the configured device.id. */
bool device_name(const struct config_section *worker, char *out, size_t len);

#endif
