#include "core/device.h"

#include "config/config.h"
#include "config/settings.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#define ID_HEX 32 /* as /etc/machine-id: 128 bits in lower-case hex */

/* The process's one answer, found at the first device_machine_id. */
static struct {
	bool init, found;
	bool create;
	const struct config_section *worker;
	char kept_path[4096]; /* "<offset file>.device", "" when there is none */
	enum device_origin origin;
	char id[ID_HEX + 1];
	bool made;       /* the kept id was made by this process */
	char why[4400];  /* why no id could be kept, "" when one was or none was tried */
	char text[4200]; /* device_origin_text's */
} self;

void device_init(const struct config_section *worker, bool create)
{
	const char *file = settings_worker(worker)->offset_file;

	memset(&self, 0, sizeof(self));
	self.init = true;
	self.create = create;
	self.worker = worker;
	if (file != NULL && *file != '\0' &&
	    (size_t)snprintf(self.kept_path, sizeof(self.kept_path), "%s.device", file) >=
	        sizeof(self.kept_path))
		self.kept_path[0] = '\0';
}

/* Whether the n bytes of s (NUL-terminated) are ID_HEX lower-case hex
 * digits and maybe a newline: systemd's own test ("uninitialized", empty:
 * no id). */
static bool valid_id(const char *s, size_t n)
{
	if (n < ID_HEX || strspn(s, "0123456789abcdef") < ID_HEX)
		return false;
	return n == ID_HEX || (n == ID_HEX + 1 && s[ID_HEX] == '\n');
}

/* Reads /etc/machine-id (or SKIFF_MACHINE_ID_FILE) into self.id. */
static bool machine_file(void)
{
	const char *path = getenv("SKIFF_MACHINE_ID_FILE");
	char buf[ID_HEX + 3];
	FILE *f = fopen(path != NULL && *path != '\0' ? path : "/etc/machine-id", "r");
	size_t n = f != NULL ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f != NULL)
		fclose(f);
	buf[n] = '\0';
	if (!valid_id(buf, n))
		return false;
	memcpy(self.id, buf, ID_HEX);
	self.id[ID_HEX] = '\0';
	return true;
}

/* Writes a new random id into the open, locked, file fd (the directory
 * fsynced too when created). Returns 0 or -1 with self.why. */
static int make_id(int fd, bool created)
{
	unsigned char rnd[ID_HEX / 2];
	char text[ID_HEX + 2], dirbuf[4096];
	int dfd;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(self.why, sizeof(self.why), "getrandom: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(text + 2 * i, 3, "%02x", rnd[i]);
	text[ID_HEX] = '\n';
	if (ftruncate(fd, 0) != 0 || pwrite(fd, text, ID_HEX + 1, 0) != ID_HEX + 1 ||
	    fsync(fd) != 0) {
		snprintf(self.why, sizeof(self.why), "write %s: %s", self.kept_path,
		         strerror(errno));
		return -1;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", self.kept_path);
	dfd = created ? open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (created && (dfd < 0 || fsync(dfd) != 0)) {
		snprintf(self.why, sizeof(self.why), "fsync the directory of %s: %s",
		         self.kept_path, strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	if (dfd >= 0)
		close(dfd);
	memcpy(self.id, text, ID_HEX);
	self.id[ID_HEX] = '\0';
	self.made = true;
	return 0;
}

/* Opens the kept id's file: read-write, created when missing (*created),
 * with create; else read-only. -1 with errno when it cannot. */
static int open_kept(bool *created)
{
	int fd;

	*created = false;
	if (!self.create)
		return open(self.kept_path, O_RDONLY | O_CLOEXEC);
	fd = open(self.kept_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0)
		*created = true;
	else if (errno == EEXIST)
		fd = open(self.kept_path, O_RDWR | O_CLOEXEC);
	return fd;
}

/* The id kept beside the offset file: read, or made when missing and
 * create. The file is locked while it is read or made, so two skiffs
 * starting at once agree on one id. */
static bool kept_file(void)
{
	char buf[ID_HEX + 3];
	bool created, ok = false;
	ssize_t n;
	int fd;

	if (self.kept_path[0] == '\0')
		return false;
	fd = open_kept(&created);
	if (fd < 0) {
		if (self.create || errno != ENOENT)
			snprintf(self.why, sizeof(self.why), "%s: %s", self.kept_path,
			         strerror(errno));
		return false;
	}
	n = flock(fd, LOCK_EX) == 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	buf[n > 0 ? n : 0] = '\0';
	if (n < 0) {
		snprintf(self.why, sizeof(self.why), "%s: %s", self.kept_path, strerror(errno));
	} else if (valid_id(buf, (size_t)n)) {
		memcpy(self.id, buf, ID_HEX);
		self.id[ID_HEX] = '\0';
		ok = true;
	} else if (n < ID_HEX && strspn(buf, "0123456789abcdef") >= (size_t)n) {
		/* Empty, or cut short by a crash while it was made: nobody used
		 * it, so a new one is made (without create: none yet). */
		ok = self.create && make_id(fd, created) == 0;
	} else {
		snprintf(self.why, sizeof(self.why),
		         "%s holds no id (not %d hex digits): move it away to have a new one made",
		         self.kept_path, ID_HEX);
	}
	close(fd); /* drops the lock */
	return ok;
}

enum device_origin device_machine_id(char *out, size_t len)
{
	if (!self.found) {
		self.found = true;
		self.origin = machine_file() ? DEVICE_MACHINE_ID
		              : kept_file()  ? DEVICE_KEPT
		                             : DEVICE_NONE;
	}
	snprintf(out, len, "%s", self.origin != DEVICE_NONE ? self.id : "");
	return self.origin;
}

enum device_origin device_name(const struct config_section *worker, char *out, size_t len)
{
	const char *id;

	worker = worker != NULL ? worker : self.worker;
	id = worker != NULL ? settings_worker(worker)->device_id : NULL;
	if (id != NULL && *id != '\0') {
		snprintf(out, len, "%s", id);
		return DEVICE_CONFIGURED;
	}
	return device_machine_id(out, len);
}

const char *device_origin_text(enum device_origin o)
{
	switch (o) {
	case DEVICE_CONFIGURED:
		return "device.id";
	case DEVICE_MACHINE_ID:
		return "machine id";
	case DEVICE_KEPT:
		snprintf(self.text, sizeof(self.text), "id kept in %s", self.kept_path);
		return self.text;
	case DEVICE_NONE:
		break;
	}
	return "no name";
}

void device_missing(char *buf, size_t len)
{
	snprintf(buf, len,
	         "this device has no name: /etc/machine-id is missing or empty, and %s%s. Set "
	         "device.id (a name of its own for each board), or give it a machine id "
	         "(systemd-machine-id-setup)",
	         self.why[0] != '\0' ? "no id could be kept beside the offset file: "
	                             : "there is no offset.storage.file.filename to keep a "
	                               "generated id beside",
	         self.why);
}

bool device_note(char *buf, size_t len)
{
	if (!self.found || self.origin == DEVICE_MACHINE_ID)
		return false;
	if (self.origin == DEVICE_KEPT) {
		snprintf(buf, len,
		         "device: /etc/machine-id is empty or missing: this device is named by the "
		         "id %s kept in %s (%s); a copy of that directory on another board would "
		         "share it: give each board a device.id, or a machine id "
		         "(systemd-machine-id-setup)",
		         self.id, self.kept_path,
		         self.made ? "made now" : "made at an earlier start");
		return true;
	}
	if (self.why[0] == '\0')
		return false;
	snprintf(buf, len,
	         "device: /etc/machine-id is empty or missing, and no id could be kept beside the "
	         "offset file: %s",
	         self.why);
	return true;
}
