/* What each source says its configuration names (source_ops.resources,
 * source_ops.key_names): the fleet's allow-list check (fleet/fleetallow.c)
 * knows no source's keys, so a key that names a file, a database or a topic
 * and is not reported is a hole in it (issue 28, design §6 risk 4). Every
 * row of every source's table must be classified, and every key classified
 * as naming something must be set in a case below that sees it reported. */
#include "config/config.h"
#include "config/props.h"
#include "core/source.h"
#include "testlib.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PUT 16

struct got {
	size_t n;
	enum source_resource kind[MAX_PUT];
	char what[MAX_PUT][256];
};

static void put(void *arg, enum source_resource kind, const char *what)
{
	struct got *g = arg;

	if (g->n == MAX_PUT)
		return;
	g->kind[g->n] = kind;
	snprintf(g->what[g->n], sizeof(g->what[0]), "%s", what);
	g->n++;
}

static const struct source_ops *ops_of(const char *kind)
{
	for (size_t i = 0; source_registry[i] != NULL; i++)
		if (strcmp(source_registry[i]->kind, kind) == 0)
			return source_registry[i];
	return NULL;
}

static enum source_resource names_of(const struct source_ops *o, const char *key, bool *found)
{
	*found = false;
	for (const struct source_key_names *k = o->key_names; k != NULL && k->key != NULL; k++) {
		if (strcmp(k->key, key) == 0) {
			*found = true;
			return k->names;
		}
	}
	return SOURCE_RES_NONE;
}

/* Every row of every source's table is classified, and nothing else is. */
static void test_every_key_classified(void)
{
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		const struct source_ops *o = source_registry[i];
		size_t rows = 0, listed = 0;

		CHECK(o->resources != NULL);
		CHECK(o->key_names != NULL);
		if (o->key_names == NULL)
			continue;
		for (const struct config_key *k = o->config_keys; k->name != NULL; k++) {
			bool found;

			names_of(o, k->name, &found);
			if (!found)
				fprintf(stderr, "source %s: key %s: not in key_names\n", o->kind,
				        k->name);
			CHECK(found);
			rows++;
		}
		for (const struct source_key_names *k = o->key_names; k->key != NULL; k++)
			listed++;
		/* an entry that names no row: a row renamed, its entry left */
		CHECK_INT(listed, rows);
	}
}

/* A case: a source's configuration and what it must report, as "K what"
 * lines (K: F file, G glob, D database, J journal, T topic). */
struct rcase {
	const char *kind;
	const char *props;
	const char *want;
	int rc;
};

static const struct rcase cases[] = {
    {"file", "file=/var/log/app/a.log\ntopic=t\n", "F /var/log/app/a.log\nT t\n", 0},
    {"file",
     "files=/var/log/app/*.log,/srv/?/b.log,/srv/\\\\x.log\nrotated.dirs=/var/log/old,/o[1]\n"
     "topic=logs\n",
     "G /var/log/app/*.log\nG /srv/?/b.log\nF /srv/\\x.log\nG /var/log/old/*\nG /o\\[1\\]/*\n"
     "T logs\n",
     0},
    {"sqlite",
     "connection.url=jdbc:sqlite:/data/app.db?busy=1\nmode=bulk\ntable.whitelist=a,b\n"
     "topic.prefix=db-\n",
     "D /data/app.db\nT db-a\nT db-b\n", 0},
    {"sqlite",
     "connection.url=jdbc:sqlite:file:///data/my%20app.db?mode=ro\nmode=bulk\n"
     "table.include.list=c\ntopic.prefix=\n",
     "D /data/my app.db\nT c\n", 0},
    {"sqlite", "connection.url=/data/plain.db\nmode=bulk\nquery=SELECT 1\ntopic.prefix=q\n",
     "D /data/plain.db\nT q\n", 0},
    {"sqlite", "connection.url=jdbc:mysql://h/db\nmode=bulk\ntopic.prefix=q\n", "",
     SOURCE_ERR_CONFIG},
    {"journald", "topic=j\n", "J \nT j\n", 0},
    {"journald", "topic=j\njournal.directory=/var/log/journal/x\n", "J /var/log/journal/x\nT j\n",
     0},
};

static char letter(enum source_resource k)
{
	switch (k) {
	case SOURCE_RES_FILE:
		return 'F';
	case SOURCE_RES_FILE_GLOB:
		return 'G';
	case SOURCE_RES_DATABASE:
		return 'D';
	case SOURCE_RES_JOURNAL:
		return 'J';
	case SOURCE_RES_TOPIC:
		return 'T';
	case SOURCE_RES_NONE:
		break;
	}
	return '?';
}

static void run_case(const struct rcase *c, const struct source_ops *o)
{
	const struct config_key *tables[1] = {o->config_keys};
	struct config_spec spec = {.prefix = "", .tables = tables, .ntables = 1};
	struct config_section *s = NULL;
	struct props *p = NULL;
	struct got g = {0};
	char err[512] = "", text[2048] = "";
	size_t at = 0;

	CHECK_INT(props_load_mem("c.properties", c->props, strlen(c->props), &p, err, sizeof(err)),
	          0);
	if (config_section_load(p, &spec, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", c->props, err);
		CHECK(0);
		props_destroy(p);
		return;
	}
	CHECK_INT(o->resources(s, put, &g, err, sizeof(err)), c->rc);
	for (size_t i = 0; i < g.n; i++)
		at += (size_t)snprintf(text + at, sizeof(text) - at, "%c %s\n", letter(g.kind[i]),
		                       g.what[i]);
	if (c->rc == 0)
		CHECK_STR(text, c->want);
	else
		CHECK(err[0] != '\0');
	config_section_destroy(s);
	props_destroy(p);
}

/* Each key classified as naming something is set in a case of its source
 * that passes: a new resource key needs a case here. */
static bool key_in_cases(const char *kind, const char *key)
{
	size_t klen = strlen(key);

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].props;

		if (strcmp(cases[i].kind, kind) != 0 || cases[i].rc != 0)
			continue;
		for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (strncmp(p, key, klen) == 0 && p[klen] == '=')
				return true;
	}
	return false;
}

static void test_cases(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct source_ops *o = ops_of(cases[i].kind);

		if (o == NULL) /* journald: built without libsystemd */
			continue;
		run_case(&cases[i], o);
	}
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		const struct source_ops *o = source_registry[i];

		for (const struct source_key_names *k = o->key_names; k && k->key; k++) {
			if (k->names == SOURCE_RES_NONE)
				continue;
			if (!key_in_cases(o->kind, k->key))
				fprintf(stderr, "source %s: key %s names a resource: add a case\n",
				        o->kind, k->key);
			CHECK(key_in_cases(o->kind, k->key));
		}
	}
}

int main(void)
{
	test_every_key_classified();
	test_cases();
	return testlib_done("test_source_resources");
}
