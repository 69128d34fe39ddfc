#include "offsets/offsets_fleet.h"

#include "util/atomicfile.h"
#include "util/jsonspan.h"
#include "offsets/offsets.h"
#include "config/settings.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define FIX                                                                                        \
	"give each device its own connector names "                                                \
	"(name=app-${file:/etc/skiff/device.properties:device.id}) or its own "                    \
	"offset.storage.topic (docs/offsets.md)"

/* The store's id from path ("<offset file>.store"), made (16 random bytes
 * in hex, written durably) when missing and create. Any failure leaves
 * store empty: no id, nothing judged by it (an id not kept would make the
 * next start see its own records as a clone's). */
static void store_id(const char *path, bool create, char *store, size_t len, bool *made)
{
	unsigned char rnd[16];
	char *data = NULL;
	size_t n = 0;

	store[0] = '\0';
	if (atomicfile_read(path, 64, &data, &n, NULL, 0) == 0) {
		if (n >= 32 && n < len)
			snprintf(store, len, "%.32s", data);
		free(data);
		return;
	}
	if (!create || len < 2 * sizeof(rnd) + 2 ||
	    getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return;
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(store + 2 * i, 3, "%02x", rnd[i]);
	store[2 * sizeof(rnd)] = '\n';
	*made = atomicfile_write(path, store, 2 * sizeof(rnd) + 1, NULL, 0) == 0;
	if (!*made)
		store[0] = '\0';
	store[2 * sizeof(rnd)] = '\0';
}

void offsets_fleet_init(struct offsets_fleet *f, const struct settings *s, const char *topic,
                        const char *file, bool create)
{
	char path[4096];

	memset(f, 0, sizeof(*f));
	f->s = s;
	f->topic = topic;
	f->configured = device_name(s->worker, f->device, sizeof(f->device)) == DEVICE_CONFIGURED;
	(void)device_machine_id(f->machine, sizeof(f->machine));
	if (file != NULL && *file != '\0' &&
	    (size_t)snprintf(path, sizeof(path), "%s.store", file) < sizeof(path))
		store_id(path, create, f->store, sizeof(f->store), &f->made);
}

/* A record of this device's name but another offsets store, while ours
 * loaded: two boards cloned from one image (one /etc/machine-id, no
 * device.id). Returns 0 or OFFSETS_ERR_CONFIG with errbuf. */
static int clone_check(const struct offsets_fleet *f, const char *key, const char *name,
                       const char *store, char *errbuf, size_t errlen)
{
	/* An id made just now judges nothing: the file may be a backup put in a
	 * new state directory, or written by a skiff before ids. */
	if (store == NULL || f->store[0] == '\0' || f->made || strcmp(store, f->store) == 0)
		return 0;
	snprintf(errbuf, errlen,
	         "offset.storage.topic %s: connector %s: key %s was last written by another "
	         "offsets store (%s, this one's is %s) of the same device %s: boards cloned from "
	         "one image share /etc/machine-id, and would take each other's positions and "
	         "re-send or skip lines. Fix: give each board its own device.id, or run "
	         "systemd-machine-id-setup on each after removing /etc/machine-id (an older "
	         "copy of this board's state directory put back: set device.id, and its "
	         "newest record wins)",
	         f->topic, name, key, store, f->store, f->device);
	return OFFSETS_ERR_CONFIG;
}

/* Whether store (a record's skiff.store, NULL: none) is this offsets
 * store's id, one not made at this start: written through this state
 * directory, whatever device name it had then. */
static bool own_store(const struct offsets_fleet *f, const char *store)
{
	return store != NULL && f->store[0] != '\0' && !f->made && strcmp(store, f->store) == 0;
}

/* offsets_fleet.h */
const struct connector_settings *offsets_fleet_connector(const struct offsets_fleet *f,
                                                         const char *key, size_t len)
{
	const struct connector_settings *found = NULL;
	const char *v = NULL, *name;
	size_t cursor = 0, vlen = 0, n;
	cJSON *j = NULL;

	while (len > 0 && (*key == ' ' || *key == '\t' || *key == '\n' || *key == '\r')) {
		key++;
		len--;
	}
	if (len == 0 || *key != '[' || !jsonspan_array_next(key, len, &cursor, &v, &vlen) ||
	    vlen < 2 || v[0] != '"')
		return NULL;
	name = v + 1;
	n = vlen - 2;
	/* An escape in the name (rare: Connect's JSON writes UTF-8 as it is)
	 * is read as JSON. */
	if (memchr(name, '\\', n) != NULL) {
		char *text = strndup(v, vlen);

		j = text != NULL ? cJSON_Parse(text) : NULL;
		free(text);
		if (!cJSON_IsString(j)) {
			cJSON_Delete(j);
			return NULL;
		}
		name = j->valuestring;
		n = strlen(name);
	}
	for (size_t i = 0; i < f->s->nconnectors && found == NULL; i++)
		if (strlen(f->s->connectors[i].name) == n &&
		    memcmp(f->s->connectors[i].name, name, n) == 0)
			found = &f->s->connectors[i];
	cJSON_Delete(j);
	return found;
}

/* offsets_fleet.h */
bool offsets_fleet_mine(const struct offsets_fleet *f, const char *device, const char *store)
{
	if (own_store(f, store))
		return true;
	if (device == NULL || (strcmp(device, f->device) != 0 && strcmp(device, f->machine) != 0))
		return false;
	return store == NULL || f->store[0] == '\0' || f->made || strcmp(store, f->store) == 0;
}

int offsets_fleet_check(struct offsets_fleet *f, const char *key, const char *device,
                        const char *store, uint64_t gen, uint64_t fgen, char *errbuf, size_t errlen)
{
	const struct connector_settings *c = offsets_fleet_connector(f, key, strlen(key));
	const char *name = c != NULL ? c->name : "";
	bool had_file = fgen > 0;

	if (device == NULL || c == NULL)
		return 0;
	/* This store's own record under another name (device.id changed) that
	 * the file holds, or a later write: the file stands. */
	if (own_store(f, store) && gen > 0 && gen <= fgen)
		return 0;
	/* With exactly-once, init_transactions fenced any other instance of this
	 * device's transactional.id before the topic was read (a clone is told
	 * so when fenced): another store of the same device is a takeover. */
	/* A configured device.id is a person's word that this is the device:
	 * another store under it is this device's other state directory (a
	 * new card, an older backup put back), and the newest record wins. */
	if (f->configured && strcmp(device, f->device) == 0)
		return 0;
	if (strcmp(device, f->machine) == 0 || strcmp(device, f->device) == 0)
		return had_file && !f->fenced ? clone_check(f, key, name, store, errbuf, errlen)
		                              : 0;
	if (f->configured || had_file) {
		snprintf(errbuf, errlen,
		         "offset.storage.topic %s: connector %s: key %s was last written by device "
		         "%s, not this one (%s): devices sharing one offsets topic with the same "
		         "connector names take each other's positions and re-send or skip lines. "
		         "Fix: " FIX,
		         f->topic, name, key, device, f->device);
		return OFFSETS_ERR_CONFIG;
	}
	if (f->warn[0] == '\0')
		snprintf(
		    f->warn, sizeof(f->warn),
		    "offset.storage.topic %.200s: connector %s: key %.400s was last written by "
		    "device %s, not this one (%s); taken as this device's own from before a "
		    "re-flash. If %s is another device: " FIX "; a device.id makes this a refusal",
		    f->topic, name, key, device, f->device, device);
	return 0;
}
