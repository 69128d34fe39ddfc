/* offsets_cli: `skiff offsets`; see offsets_cli.h. Checks and stores
 * offsets the way the REST API's PATCH and DELETE do (offsets_doc.h and each
 * source's check_offset), then writes the store once, as a new generation:
 * above both the file's and the topic's, so the next start takes it. */
#include "offsets_cli.h"

#include "clock.h"
#include "config.h"
#include "offsets.h"
#include "offsets_doc.h"
#include "offsets_import.h"
#include "offsets_kafka.h"
#include "settings.h"
#include "source.h"
#include "worker.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOC (OFFSETS_MAX_BYTES + 65536u)
#define WRITE_MS 60000

struct cli {
	const char *cmd, *input, *connector;
	char *const *files;
	size_t nfiles;
	struct settings s;
	const struct connector_settings *c;
	struct offsets *o;
};

static void usage(FILE *fp)
{
	fprintf(
	    fp,
	    "usage: skiff offsets list   [--connector NAME] WORKER.properties [CONNECTOR...]\n"
	    "       skiff offsets set    [--connector NAME] OFFSETS.json|- WORKER.properties "
	    "[CONNECTOR...]\n"
	    "       skiff offsets reset  [--connector NAME] WORKER.properties [CONNECTOR...]\n"
	    "       skiff offsets import CONNECT.offsets WORKER.properties [CONNECTOR...]\n"
	    "\n"
	    "The stored offsets of a stopped skiff, as KIP-875's document\n"
	    "{\"offsets\":[{\"partition\":{...},\"offset\":{...}}]} (an offset null resets that\n"
	    "partition). import reads a Kafka Connect standalone offsets file.\n"
	    "--connector may be left out when the configuration has one connector.\n");
}

/* Options and positional arguments into cli; -1 to go on, or an exit code. */
static int parse(int argc, char **argv, struct cli *cl)
{
	static const struct option longopts[] = {
	    {"connector", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool needs_input;
	int opt;

	if (argc < 2) {
		usage(stderr);
		return WORKER_EXIT_CONFIG;
	}
	cl->cmd = argv[1];
	needs_input = strcmp(cl->cmd, "set") == 0 || strcmp(cl->cmd, "import") == 0;
	if (!needs_input && strcmp(cl->cmd, "list") != 0 && strcmp(cl->cmd, "reset") != 0) {
		usage(strcmp(cl->cmd, "--help") == 0 ? stdout : stderr);
		return strcmp(cl->cmd, "--help") == 0 ? 0 : WORKER_EXIT_CONFIG;
	}
	optind = 1;
	while ((opt = getopt_long(argc - 1, argv + 1, "c:h", longopts, NULL)) != -1) {
		if (opt == 'c') {
			cl->connector = optarg;
			continue;
		}
		usage(opt == 'h' ? stdout : stderr);
		return opt == 'h' ? 0 : WORKER_EXIT_CONFIG;
	}
	argv += 1 + optind;
	argc -= 1 + optind;
	if (needs_input && argc > 0) {
		cl->input = argv[0];
		argv++;
		argc--;
	}
	if (argc < 1) {
		usage(stderr);
		return WORKER_EXIT_CONFIG;
	}
	cl->files = argv;
	cl->nfiles = (size_t)argc;
	return -1;
}

/* The connector the command is about: --connector, or the only one. */
static int pick_connector(struct cli *cl)
{
	for (size_t i = 0; i < cl->s.nconnectors; i++)
		if (cl->connector == NULL ? cl->s.nconnectors == 1
		                          : strcmp(cl->s.connectors[i].name, cl->connector) == 0)
			cl->c = &cl->s.connectors[i];
	if (cl->c != NULL)
		return 0;
	if (cl->connector != NULL)
		fprintf(stderr, "skiff offsets: no connector named '%s' in the configuration\n",
		        cl->connector);
	else
		fprintf(stderr, "skiff offsets: %zu connectors: say which with --connector NAME\n",
		        cl->s.nconnectors);
	return WORKER_EXIT_CONFIG;
}

struct written {
	bool done;
	int rc;
	char why[512];
};

static void on_written(void *arg, int rc, const char *why)
{
	struct written *d = arg;

	d->done = true;
	d->rc = rc;
	snprintf(d->why, sizeof(d->why), "%s", why != NULL ? why : offsets_strerror(rc));
}

/* Writes the store and waits for the write (a topic's acknowledgements). */
static int write_store(struct cli *cl)
{
	struct written d = {0};
	int64_t deadline = clock_mono_ms() + WRITE_MS;

	if (offsets_write(cl->o, on_written, &d) != 0) {
		fprintf(stderr, "skiff offsets: the store is busy\n");
		return WORKER_EXIT_TEMPFAIL;
	}
	while (!d.done && clock_mono_ms() < deadline) {
		struct pollfd p = {.fd = offsets_fd(cl->o), .events = POLLIN};

		if (p.fd >= 0)
			(void)poll(&p, 1, 100);
		offsets_poll(cl->o);
	}
	if (d.done && d.rc == 0)
		return 0;
	fprintf(stderr, "skiff offsets: not written: %s\n",
	        d.done ? d.why : "no acknowledgement within 60 s");
	return WORKER_EXIT_TEMPFAIL;
}

/* Reads the document at path ("-": standard input), NUL-terminated. */
static char *read_doc(const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char *buf = f != NULL ? malloc(MAX_DOC + 1) : NULL;

	*len = 0;
	if (buf != NULL) {
		*len = fread(buf, 1, MAX_DOC + 1, f);
		if (ferror(f) || *len > MAX_DOC) {
			free(buf);
			buf = NULL;
		} else {
			buf[*len] = '\0';
		}
	}
	if (f != NULL && f != stdin)
		fclose(f);
	return buf;
}

/* Whether c's source would use entry e (a null offset always passes). */
static int check_entry(const struct connector_settings *c, const struct offsets_doc_entry *e,
                       char *errbuf, size_t errlen)
{
	char *part, *off;
	int rc = 0;

	if (e->offset == NULL || c->ops->check_offset == NULL)
		return 0;
	part = cJSON_PrintUnformatted(e->partition);
	off = strndup(e->offset, e->olen);
	if (part == NULL || off == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		rc = -1;
	} else {
		rc = c->ops->check_offset(c->cfg, part, off, errbuf, errlen);
	}
	free(part);
	free(off);
	return rc;
}

/* Puts or removes one entry of the document. */
static int apply_entry(struct cli *cl, const struct offsets_doc_entry *e)
{
	char *key = offsets_doc_key(cl->c->name, e->partition), *val = NULL;
	int rc = OFFSETS_ERR_NOMEM;

	if (e->offset != NULL)
		val = strndup(e->offset, e->olen);
	if (key != NULL && (e->offset == NULL || val != NULL))
		rc = val != NULL ? offsets_put(cl->o, key, val) : offsets_remove(cl->o, key);
	if (rc != 0)
		fprintf(stderr, "skiff offsets: %s: %s\n", key != NULL ? key : "?",
		        offsets_strerror(rc));
	free(key);
	free(val);
	return rc;
}

static int cmd_set(struct cli *cl)
{
	size_t len = 0, n = 0;
	char *text = read_doc(cl->input, &len), why[512];
	cJSON *j = text != NULL ? cJSON_ParseWithLength(text, len) : NULL;
	struct offsets_doc_entry *e = NULL;
	int rc = WORKER_EXIT_CONFIG;

	if (text == NULL)
		fprintf(stderr, "skiff offsets: %s: cannot read it (or larger than %u bytes)\n",
		        cl->input, MAX_DOC);
	else if (j == NULL || offsets_doc_entries(text, len, j, &e, &n) != 0)
		fprintf(stderr, "skiff offsets: %s: %s\n", cl->input, offsets_doc_shape);
	else
		rc = 0;
	/* All checked before any is stored: a refused document changes nothing. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (check_entry(cl->c, &e[i], why, sizeof(why)) != 0) {
			fprintf(stderr, "skiff offsets: %s: entry %zu: %s\n", cl->input, i + 1,
			        why);
			rc = WORKER_EXIT_CONFIG;
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (apply_entry(cl, &e[i]) != 0)
			rc = WORKER_EXIT_CONFIG;
	if (rc == 0)
		rc = write_store(cl);
	if (rc == 0)
		printf("connector %s: %zu offsets set\n", cl->c->name, n);
	free(e);
	cJSON_Delete(j);
	free(text);
	return rc;
}

static int cmd_reset(struct cli *cl)
{
	const char *part;
	size_t plen, removed = 0;
	int rc;

	for (size_t k = offsets_count(cl->o); k-- > 0;)
		if (offsets_doc_own_key(offsets_key(cl->o, k), cl->c->name, &part, &plen)) {
			if (offsets_remove(cl->o, offsets_key(cl->o, k)) != 0)
				return WORKER_EXIT_TEMPFAIL;
			removed++;
		}
	rc = write_store(cl);
	if (rc == 0)
		printf("connector %s: %zu offsets reset\n", cl->c->name, removed);
	return rc;
}

static int cmd_list(struct cli *cl)
{
	char *json = NULL;

	if (offsets_doc_print(cl->o, cl->c->name, &json) != 0) {
		fprintf(stderr, "skiff offsets: out of memory\n");
		return WORKER_EXIT_TEMPFAIL;
	}
	printf("%s\n", json);
	free(json);
	return 0;
}

static int cmd_import(struct cli *cl)
{
	char errbuf[1024];
	size_t n = 0;
	int rc = offsets_import_connect(cl->input, cl->o, &n, errbuf, sizeof(errbuf));

	if (rc != 0) {
		fprintf(stderr, "skiff offsets: %s\n", errbuf);
		return rc == OFFSETS_ERR_IO || rc == OFFSETS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL
		                                                       : WORKER_EXIT_CONFIG;
	}
	rc = write_store(cl);
	if (rc == 0)
		printf("imported %zu offsets from %s\n", n, cl->input);
	return rc;
}

/* Opens the store as the one writer; a running skiff holds it. */
static int open_store(struct cli *cl)
{
	char errbuf[2048];
	int rc = offsets_open_store(cl->s.worker, true, &cl->o, errbuf, sizeof(errbuf));

	if (rc == 0)
		return 0;
	if (rc == OFFSETS_ERR_LOCKED) {
		fprintf(stderr,
		        "skiff offsets: %s: stop it first, or use its REST API "
		        "(/connectors/NAME/offsets)\n",
		        errbuf);
		return WORKER_EXIT_TEMPFAIL;
	}
	fprintf(stderr, "skiff offsets: %s\n", errbuf);
	return rc == OFFSETS_ERR_IO || rc == OFFSETS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL
	                                                       : WORKER_EXIT_CONFIG;
}

int offsets_main(int argc, char **argv)
{
	struct cli cl = {0};
	char errbuf[2048];
	int code = parse(argc, argv, &cl);

	if (code >= 0)
		return code;
	code = WORKER_EXIT_CONFIG;
	if (settings_load(cl.files, cl.nfiles, &cl.s, errbuf, sizeof(errbuf)) != 0) {
		fprintf(stderr, "skiff offsets: %s\n", errbuf);
		goto out;
	}
	if (strcmp(cl.cmd, "import") != 0 && pick_connector(&cl) != 0)
		goto out;
	code = open_store(&cl);
	if (code != 0)
		goto out;
	code = strcmp(cl.cmd, "list") == 0    ? cmd_list(&cl)
	       : strcmp(cl.cmd, "set") == 0   ? cmd_set(&cl)
	       : strcmp(cl.cmd, "reset") == 0 ? cmd_reset(&cl)
	                                      : cmd_import(&cl);
out:
	offsets_destroy(cl.o);
	settings_destroy(&cl.s);
	return code;
}
