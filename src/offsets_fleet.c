#include "offsets_fleet.h"

#include "offsets.h"
#include "settings.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#define FIX                                                                                        \
	"give each device its own connector names "                                                \
	"(name=app-${file:/etc/skiff/device.properties:device.id}) or its own "                    \
	"offset.storage.topic (README \"Offsets in Kafka\")"

void offsets_fleet_init(struct offsets_fleet *f, const struct settings *s, const char *topic)
{
	memset(f, 0, sizeof(*f));
	f->s = s;
	f->topic = topic;
	f->configured = device_name(s->worker, f->device, sizeof(f->device));
	device_machine_id(f->machine, sizeof(f->machine));
}

/* The connector a key names (its first element) into name, when this skiff
 * runs it: only those keys are this device's to judge. */
static bool runs_here(const struct offsets_fleet *f, const char *key, char *name, size_t len)
{
	cJSON *j = cJSON_Parse(key);
	const cJSON *n = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, 0) : NULL;
	bool here = false;

	for (size_t i = 0; cJSON_IsString(n) && i < f->s->nconnectors && !here; i++) {
		here = strcmp(f->s->connectors[i].name, n->valuestring) == 0;
		if (here)
			snprintf(name, len, "%s", n->valuestring);
	}
	cJSON_Delete(j);
	return here;
}

int offsets_fleet_check(struct offsets_fleet *f, const char *key, const char *device, bool had_file,
                        char *errbuf, size_t errlen)
{
	char name[256];

	if (device == NULL || strcmp(device, f->machine) == 0 || strcmp(device, f->device) == 0 ||
	    !runs_here(f, key, name, sizeof(name)))
		return 0;
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
