/* status_cli: `skiff status` (see status_cli.h). */
#include "cli/status_cli.h"

#include "config/props.h"
#include "config/provider.h"
#include "control/status_sock.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define STATUS_UNREACHABLE 2

/* Connects to the socket at path, with a 5 s receive timeout. Returns the
 * descriptor or -1 (errno set). */
static int dial(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = 5};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Copies what the server says to stdout; 0 healthy, 1 not, 2 nothing read. */
static int relay(int fd)
{
	char buf[4096];
	ssize_t n;
	size_t total = 0;
	int verdict = STATUS_UNREACHABLE;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if (total == 0)
			verdict = memmem(buf, (size_t)n, ": healthy", 9) != NULL ? 0 : 1;
		fwrite(buf, 1, (size_t)n, stdout);
		total += (size_t)n;
	}
	if (n < 0 || total == 0) {
		fprintf(stderr, "skiff status: no answer: %s\n",
		        n < 0 ? strerror(errno) : "closed");
		return STATUS_UNREACHABLE;
	}
	return verdict;
}

/* The offset file's path (malloc'd, NULL when the worker file sets none)
 * from the worker file alone: a person's shell may lack the environment
 * skiff's service has (systemd's Environment=), so only this value's config
 * provider references are resolved, and nothing else is checked. Returns 0
 * or -1 with errbuf. */
static int offsets_file(const char *worker, char **out, char *errbuf, size_t errlen)
{
	static const char key[] = "offset.storage.file.filename";
	struct props *p = NULL;
	struct providers *pv = NULL;
	const char *v;
	char where[1024], *got = NULL;
	bool secret;
	size_t len;
	int rc = -1;

	*out = NULL;
	if (props_load_file(worker, &p, errbuf, errlen) != 0)
		goto out;
	v = props_get(p, key);
	if (v == NULL) {
		rc = 0;
		goto out;
	}
	snprintf(where, sizeof(where), "%s: %s", worker, key);
	if (providers_new(p, &pv, errbuf, errlen) != 0 ||
	    providers_expand(pv, v, where, &got, &secret, errbuf, errlen) != 0)
		goto out;
	/* Trimmed, as the config table trims it. */
	for (v = got; isspace((unsigned char)*v); v++)
		;
	for (len = strlen(v); len > 0 && isspace((unsigned char)v[len - 1]); len--)
		;
	if (len > 0 && (*out = strndup(v, len)) == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(got);
	providers_destroy(pv);
	props_destroy(p);
	return rc;
}

static void status_usage(FILE *f)
{
	fputs("usage: skiff status [WORKER.properties [CONNECTOR.properties ...]]\n"
	      "\n"
	      "Asks the running skiff through skiff.sock in the state directory (the\n"
	      "offsets file's directory; run it as skiff's user or root). The files default\n"
	      "to /etc/skiff/skiff.properties.\n"
	      "Exit codes: 0 healthy; 1 unhealthy; 2 cannot reach skiff (not running, no\n"
	      "permission, configuration unreadable).\n",
	      f);
}

int status_main(int argc, char **argv)
{
	static char *const fallback[] = {"/etc/skiff/skiff.properties"};
	char *const *files = argc > 1 ? argv + 1 : fallback;
	char errbuf[2048], path[128], *offsets = NULL;
	int fd, code = STATUS_UNREACHABLE;

	/* An option is not a file name: --help was opened as one. */
	if (argc > 1 && argv[1][0] == '-') {
		if (strcmp(argv[1], "--help") == 0) {
			status_usage(stdout);
			return 0;
		}
		fprintf(stderr, "skiff status: unknown option %s\n", argv[1]);
		status_usage(stderr);
		return STATUS_UNREACHABLE;
	}
	if (offsets_file(files[0], &offsets, errbuf, sizeof(errbuf)) != 0) {
		fprintf(stderr, "skiff status: %s\n", errbuf);
		goto out;
	}
	if (offsets == NULL) {
		fprintf(stderr, "skiff status: no socket without offset.storage.file.filename; "
		                "use the REST API (listeners)\n");
		goto out;
	}
	if (status_sock_path(offsets, path, sizeof(path)) != 0) {
		fprintf(stderr, "skiff status: the state directory's path is too long\n");
		goto out;
	}
	fd = dial(path);
	if (fd < 0) {
		fprintf(stderr, "skiff status: %s: %s (is skiff running, and are you its user?)\n",
		        path, strerror(errno));
		goto out;
	}
	code = relay(fd);
	close(fd);
out:
	free(offsets);
	return code;
}
