/* offsets_cli: `skiff offsets`; see offsets_cli.h. Checks and stores
 * offsets the way the REST API's PATCH and DELETE do (offsets_doc.h and each
 * source's check_offset), then writes the store once, as a new generation:
 * above both the file's and the topic's, so the next start takes it. */
#include "cli/offsets_cli.h"

#include "util/clock.h"
#include "config/config.h"
#include "core/device.h"
#include "util/jsonint.h"
#include "offsets/offsets.h"
#include "offsets/offsets_doc.h"
#include "offsets/offsets_import.h"
#include "offsets/offsets_factory.h"
#include "offsets/offsets_kafka.h"
#include "config/settings.h"
#include "core/source.h"
#include "core/worker.h"

#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DOC (OFFSETS_MAX_BYTES + 65536u)
#define WRITE_MS 60000

struct cli {
	const char *cmd, *input, *connector;
	bool force;
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
	    "       skiff offsets set    [--connector NAME] [--force] OFFSETS.json|- "
	    "WORKER.properties [CONNECTOR...]\n"
	    "       skiff offsets reset  [--connector NAME] WORKER.properties [CONNECTOR...]\n"
	    "       skiff offsets import [--connector NAME] [--force] CONNECT.offsets "
	    "WORKER.properties [CONNECTOR...]\n"
	    "\n"
	    "The stored offsets of a stopped skiff, as KIP-875's document\n"
	    "{\"offsets\":[{\"partition\":{...},\"offset\":{...}}]} (an offset null resets that\n"
	    "partition). import reads a Kafka Connect standalone offsets file.\n"
	    "--connector may be left out when the configuration has one connector (import:\n"
	    "every connector in the file must be configured, or --connector takes one).\n"
	    "--force: set a position past a file's end, inside a line or past a table's newest\n"
	    "row; import over a position further ahead.\n");
}

/* Options and positional arguments into cli; -1 to go on, or an exit code. */
static int parse(int argc, char **argv, struct cli *cl)
{
	static const struct option longopts[] = {
	    {"connector", required_argument, NULL, 'c'},
	    {"force", no_argument, NULL, 'f'},
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
	while ((opt = getopt_long(argc - 1, argv + 1, "c:fh", longopts, NULL)) != -1) {
		if (opt == 'c' || opt == 'f') {
			cl->connector = opt == 'c' ? optarg : cl->connector;
			cl->force = cl->force || opt == 'f';
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

/* The configured connector named name, or NULL. */
static const struct connector_settings *find_connector(const struct cli *cl, const char *name)
{
	for (size_t i = 0; i < cl->s.nconnectors; i++)
		if (strcmp(cl->s.connectors[i].name, name) == 0)
			return &cl->s.connectors[i];
	return NULL;
}

/* The connector the command is about: --connector, or the only one. */
static int pick_connector(struct cli *cl)
{
	if (cl->connector != NULL)
		cl->c = find_connector(cl, cl->connector);
	else if (cl->s.nconnectors == 1)
		cl->c = &cl->s.connectors[0];
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

/* The offset file beside (or instead of) the topic, or NULL. */
static const char *store_file(const struct cli *cl)
{
	const char *f = settings_worker(cl->s.worker)->offset_file;

	return f != NULL && *f != '\0' ? f : NULL;
}

/* Writes the store and waits for the write (a topic's acknowledgements).
 * Beside a file, the topic is written after the file (offsets_kafka.h): a
 * write the topic alone failed is in the file, whose generation is then the
 * newest, so the next start takes it and writes it to the topic. */
static int write_store(struct cli *cl)
{
	struct written d = {0};
	int64_t deadline = clock_mono_ms() + WRITE_MS;
	const char *file = store_file(cl), *topic = settings_worker(cl->s.worker)->offset_topic;

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
	if (!d.done)
		snprintf(d.why, sizeof(d.why),
		         "offset.storage.topic %s: no acknowledgement within 60 s",
		         topic != NULL ? topic : "");
	if (file != NULL && topic != NULL && *topic != '\0' &&
	    strncmp(d.why, OFFSETS_KAFKA_TOPIC_ERR, strlen(OFFSETS_KAFKA_TOPIC_ERR)) == 0) {
		fprintf(stderr,
		        "skiff offsets: written to the offset file %s, but not to the topic (%s): "
		        "skiff's next start takes the file's offsets (the newest generation) and "
		        "writes them to the topic at its first flush\n",
		        file, d.why);
		return 0;
	}
	fprintf(stderr, "skiff offsets: not written%s: %s\n",
	        file == NULL ? " (or only in part: run the command again)" : "", d.why);
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

/* For the file source: the file an offset's partition names and the
 * offset's position. */
static bool file_position(const struct connector_settings *c, const cJSON *partition,
                          const char *offset, const char **file, int64_t *pos)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(partition, "filename");

	if (strcmp(c->ops->kind, "file") != 0 || !cJSON_IsString(f) || offset == NULL ||
	    jsonint_get(offset, "position", pos) != 0)
		return false;
	*file = f->valuestring;
	return true;
}

/* Whether c's source would use entry e (a null offset always passes), and,
 * unless forced, it lies within its source's data (check_reach: a file's
 * end and its line starts, a table's newest row). *settled: what
 * check_reach would store instead (NULL: e as sent; caller frees); forced,
 * a refused entry is stored as check_reach settled it (a file's identity at
 * a position inside a line), else as sent. A note of check_reach's (which file
 * the position is in) goes to stderr. */
static int check_entry(const struct cli *cl, const struct offsets_doc_entry *e, char **settled,
                       char *errbuf, size_t errlen)
{
	const struct connector_settings *c = cl->c;
	char *part, *off, *key;
	int rc = 0;

	*settled = NULL;
	if (e->offset == NULL || c->ops->check_offset == NULL)
		return 0;
	part = cJSON_PrintUnformatted(e->partition);
	off = strndup(e->offset, e->olen);
	key = offsets_doc_key(c->name, e->partition);
	if (part == NULL || off == NULL || key == NULL) {
		snprintf(errbuf, errlen, "out of memory");
		rc = -1;
	} else {
		rc = c->ops->check_offset(c->cfg, part, off, errbuf, errlen);
	}
	if (rc == 0 && c->ops->check_reach != NULL &&
	    c->ops->check_reach(c->cfg, part, off, offsets_get(cl->o, key), false, settled, errbuf,
	                        errlen) != 0) {
		size_t len = strlen(errbuf);

		if (!cl->force) {
			free(*settled);
			*settled = NULL;
			snprintf(errbuf + len, errlen - len, " (--force to store it anyway)");
		} else {
			fprintf(stderr, "skiff offsets: --force: stored %s: %s\n",
			        *settled != NULL ? "with the file's identity at that position"
			                         : "as sent",
			        errbuf);
		}
		rc = cl->force ? 0 : -1;
	} else if (rc == 0 && c->ops->check_reach != NULL && errbuf[0] != '\0') {
		fprintf(stderr, "skiff offsets: %s\n", errbuf);
	}
	free(part);
	free(off);
	free(key);
	return rc;
}

/* Puts or removes one entry of the document (its offset as settled, when
 * not NULL). */
static int apply_entry(struct cli *cl, const struct offsets_doc_entry *e, const char *settled)
{
	char *key = offsets_doc_key(cl->c->name, e->partition), *val = NULL;
	int rc = OFFSETS_ERR_NOMEM;

	if (e->offset != NULL)
		val = settled != NULL ? strdup(settled) : strndup(e->offset, e->olen);
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
	char *text = read_doc(cl->input, &len), why[1024] = "", **settled = NULL;
	cJSON *j = text != NULL ? cJSON_ParseWithLength(text, len) : NULL;
	struct offsets_doc_entry *e = NULL;
	int rc = WORKER_EXIT_CONFIG, drc;

	if (text == NULL)
		fprintf(stderr, "skiff offsets: %s: cannot read it (or larger than %u bytes)\n",
		        cl->input, MAX_DOC);
	else if (j == NULL)
		fprintf(stderr, "skiff offsets: %s: %s\n", cl->input, offsets_doc_shape);
	else if ((drc = offsets_doc_entries(text, len, j, &e, &n, why, sizeof(why))) != 0)
		fprintf(stderr, "skiff offsets: %s: %s\n", cl->input,
		        drc == OFFSETS_DOC_ERR_VALUE   ? why
		        : drc == OFFSETS_DOC_ERR_NOMEM ? "out of memory"
		                                       : offsets_doc_shape);
	else if ((settled = calloc(n + 1, sizeof(*settled))) == NULL)
		fprintf(stderr, "skiff offsets: out of memory\n");
	else
		rc = 0;
	/* All checked before any is stored: a refused document changes nothing. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (check_entry(cl, &e[i], &settled[i], why, sizeof(why)) != 0) {
			fprintf(stderr, "skiff offsets: %s: entry %zu: %s\n", cl->input, i + 1,
			        why);
			rc = WORKER_EXIT_CONFIG;
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (apply_entry(cl, &e[i], settled[i]) != 0)
			rc = WORKER_EXIT_CONFIG;
	if (rc == 0)
		rc = write_store(cl);
	if (rc == 0)
		printf("connector %s: %zu offsets set\n", cl->c->name, n);
	for (size_t i = 0; i < n && settled != NULL; i++)
		free(settled[i]);
	free(settled);
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

struct importing {
	struct cli *cl;
	size_t imported, skipped;
	char others[256]; /* the connectors left out, ", "-separated, bounded */
};

/* Adds name to the connectors left out, once; a list too long ends in "...". */
static void note_other(struct importing *im, const char *name)
{
	size_t len = strlen(im->others), nlen = strlen(name);
	const char *p = im->others;

	for (; (p = strstr(p, name)) != NULL; p += nlen)
		if ((p == im->others || p[-1] == ' ') && (p[nlen] == ',' || p[nlen] == '\0'))
			return;
	if (len + nlen + 6 < sizeof(im->others))
		snprintf(im->others + len, sizeof(im->others) - len, "%s%s", len ? ", " : "", name);
	else if (len + 5 < sizeof(im->others) && strcmp(im->others + len - 3, "...") != 0)
		snprintf(im->others + len, sizeof(im->others) - len, ", ...");
}

/* Unless forced, an imported offset must not move back a position skiff's
 * store holds further ahead (nor remove it): those lines would be sent again.
 * Returns 0, or OFFSETS_ERR_ARG with why. */
static int not_behind(const struct cli *cl, const char *key, const char *value, char *why,
                      size_t len)
{
	const char *old = offsets_get(cl->o, key);
	int64_t was, now = 0;

	if (cl->force || old == NULL || jsonint_get(old, "position", &was) != 0 ||
	    (value != NULL && (jsonint_get(value, "position", &now) != 0 || now >= was)))
		return 0;
	if (value != NULL)
		snprintf(
		    why, len,
		    "skiff's store already holds position %lld for this partition, ahead of "
		    "Connect's position (byte %lld): importing it would send the lines between "
		    "again (--force to import it anyway, or `skiff offsets set` the position "
		    "wanted)",
		    (long long)was, (long long)now);
	else
		snprintf(
		    why, len,
		    "skiff's store holds position %lld for this partition; Connect's null "
		    "offset would remove it and the file would be read from its start (--force "
		    "to import it anyway)",
		    (long long)was);
	return OFFSETS_ERR_ARG;
}

/* Connect's FileStreamSource position (Java chars, read from the file's
 * start) as skiff's (bytes), into val (len bytes); other offsets are left
 * as they are. */
static int to_bytes(const struct connector_settings *c, const cJSON *part, const char **value,
                    char *val, size_t len, char *why, size_t wlen)
{
	const char *file;
	int64_t chars;
	int rc;

	if (!file_position(c, part, *value, &file, &chars))
		return 0;
	rc = offsets_import_value(file, 0, *value, val, len, why, wlen);
	if (rc == 0)
		*value = val;
	return rc;
}

/* offsets_import_fn: checks one entry of Connect's file as `set` checks its
 * document, turns its position into bytes, and puts it. */
static int import_entry(void *arg, const char *key, const char *value, size_t at, char *errbuf,
                        size_t errlen)
{
	struct importing *im = arg;
	cJSON *k = cJSON_Parse(key);
	const cJSON *name = cJSON_GetArrayItem(k, 0), *part = cJSON_GetArrayItem(k, 1);
	const struct connector_settings *c = NULL;
	char *ptext = NULL, *skey = NULL, val[64], why[1024] = "out of memory";
	int rc = OFFSETS_ERR_ARG;

	if (!cJSON_IsArray(k) || cJSON_GetArraySize(k) != 2 || !cJSON_IsString(name) ||
	    !cJSON_IsObject(part)) {
		snprintf(why, sizeof(why), "the key is not [\"connector\",{partition}]");
		goto out;
	}
	if (im->cl->connector != NULL && strcmp(im->cl->connector, name->valuestring) != 0) {
		im->skipped++;
		note_other(im, name->valuestring);
		rc = 0;
		goto out;
	}
	if ((c = find_connector(im->cl, name->valuestring)) == NULL) {
		snprintf(why, sizeof(why),
		         "connector '%.200s' is not in the configuration (give its connector "
		         "file, or import only one connector with --connector NAME)",
		         name->valuestring);
		goto out;
	}
	ptext = cJSON_PrintUnformatted(part);
	skey = offsets_doc_key(c->name, part);
	if (ptext == NULL || skey == NULL)
		rc = OFFSETS_ERR_NOMEM;
	else if (value == NULL || c->ops->check_offset == NULL ||
	         c->ops->check_offset(c->cfg, ptext, value, why, sizeof(why)) == 0)
		rc = to_bytes(c, part, &value, val, sizeof(val), why, sizeof(why));
	if (rc == 0)
		rc = not_behind(im->cl, skey, value, why, sizeof(why));
	if (rc == 0 && (rc = value != NULL ? offsets_put(im->cl->o, skey, value)
	                                   : offsets_remove(im->cl->o, skey)) != 0)
		snprintf(why, sizeof(why), "%s", offsets_strerror(rc));
	im->imported += rc == 0;
out:
	if (rc != 0)
		snprintf(errbuf, errlen, "%s: the entry at byte %zu (key %.300s): %s",
		         im->cl->input, at, key, why);
	free(skey);
	free(ptext);
	cJSON_Delete(k);
	return rc;
}

/* Every entry is checked before the store is written once: a refused one
 * stores nothing. */
static int cmd_import(struct cli *cl)
{
	struct importing im = {.cl = cl};
	char errbuf[2048];
	size_t n = 0;
	int rc = offsets_import_connect(cl->input, import_entry, &im, &n, errbuf, sizeof(errbuf));

	if (rc != 0) {
		fprintf(stderr, "skiff offsets: %s\n", errbuf);
		return rc == OFFSETS_ERR_IO || rc == OFFSETS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL
		                                                       : WORKER_EXIT_CONFIG;
	}
	if (cl->connector != NULL && im.imported == 0 && im.skipped > 0) {
		/* A misspelled name must not look like an import of nothing. */
		fprintf(
		    stderr,
		    "skiff offsets: %s holds no offsets of connector '%s' (it holds offsets of: "
		    "%s); nothing written\n",
		    cl->input, cl->connector, im.others);
		return WORKER_EXIT_CONFIG;
	}
	rc = write_store(cl);
	if (rc == 0 && im.skipped > 0)
		printf("imported %zu offsets from %s (%zu of other connectors left out)\n",
		       im.imported, cl->input, im.skipped);
	else if (rc == 0)
		printf("imported %zu offsets from %s\n", im.imported, cl->input);
	return rc;
}

/* Opens the store as the one writer; a running skiff holds it. */
static int open_store(struct cli *cl)
{
	char errbuf[2048] = "";
	struct offsets_stats st;
	int rc = offsets_open_store(&cl->s, true, &cl->o, errbuf, sizeof(errbuf));

	if (rc == 0) {
		offsets_stats(cl->o, &st);
		if (st.loaded_from_prev && errbuf[0] != '\0')
			fprintf(stderr, "skiff offsets: warning: %s\n", errbuf);
		return 0;
	}
	if (rc == OFFSETS_ERR_LOCKED) {
		fprintf(stderr,
		        "skiff offsets: %s: stop it first, or use its REST API "
		        "(/connectors/NAME/offsets)\n",
		        errbuf);
		return WORKER_EXIT_TEMPFAIL;
	}
	fprintf(stderr, "skiff offsets: %s%s\n", errbuf,
	        strcmp(cl->cmd, "list") != 0 ? " (nothing written)" : "");
	return rc == OFFSETS_ERR_IO || rc == OFFSETS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL
	                                                       : WORKER_EXIT_CONFIG;
}

int offsets_main(int argc, char **argv)
{
	struct cli cl = {0};
	char errbuf[2048];
	int rc, code = parse(argc, argv, &cl);

	if (code >= 0)
		return code;
	rc = settings_load(cl.files, cl.nfiles, &cl.s, errbuf, sizeof(errbuf));
	code = rc == SETTINGS_ERR_NOMEM ? WORKER_EXIT_TEMPFAIL : WORKER_EXIT_CONFIG;
	if (rc != 0) {
		fprintf(stderr, "skiff offsets: %s\n", errbuf);
		goto out;
	}
	device_init(cl.s.worker, true);
	if ((strcmp(cl.cmd, "import") != 0 || cl.connector != NULL) && pick_connector(&cl) != 0)
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
