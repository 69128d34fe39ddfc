#include "device.h"

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void device_machine_id(char *out, size_t len)
{
	const char *path = getenv("SKIFF_MACHINE_ID_FILE");
	FILE *f = fopen(path != NULL && *path != '\0' ? path : "/etc/machine-id", "r");
	size_t n = 0;

	if (f != NULL) {
		n = fgets(out, (int)len, f) != NULL ? strspn(out, "0123456789abcdef") : 0;
		fclose(f);
	}
	/* Fewer than 16 hex digits: an empty or "uninitialized" file of an
	 * image not booted yet, not an id. */
	if (n >= 16) {
		out[n] = '\0';
		return;
	}
	if (gethostname(out, len) != 0)
		snprintf(out, len, "skiff");
	out[len - 1] = '\0';
}

bool device_name(const struct config_section *worker, char *out, size_t len)
{
	const char *id = config_str(worker, "device.id");

	if (id != NULL && *id != '\0') {
		snprintf(out, len, "%s", id);
		return true;
	}
	device_machine_id(out, len);
	return false;
}
