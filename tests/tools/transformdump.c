/* transformdump: runs src/transform/ and src/convert/convert.c over
 * tests/convert/records.txt, chain by chain of tests/convert/transforms.txt,
 * and prints the result in the format of tests/convert/TransformDump.java,
 * for tests/convert/transforms.sh.
 *
 * Usage: transformdump CHAINS RECORDS
 *
 * A chain is loaded as a connector file's transforms.* and predicates.* keys
 * are (props, the config table's pass-through, transform_chain_parse); a
 * chain that does not load prints "error" for every record, as Connect's
 * configure() throwing does. A "line" record is a line as the file source
 * gives it; a "row" record a schema and payload parsed from JsonConverter's
 * envelope, as the SQLite source builds them ("schema":null: a value
 * without a schema, as JsonConverter reads it). Exit status 1 on a malformed
 * input file. */
#include "config/config.h"
#include "convert/convert.h"
#include "config/props.h"
#include "core/source.h"
#include "transform/transform.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#define MAX_RECORDS 256
#define MAX_CHAIN 8192

static void die(const char *what)
{
	fprintf(stderr, "transformdump: %s\n", what);
	exit(1);
}

static void emit(const char *label, const char *b, size_t len, bool null)
{
	printf("%s ", label);
	if (null)
		fputs("null", stdout);
	else if (len == 0)
		fputs("-", stdout);
	for (size_t i = 0; !null && i < len; i++)
		printf("%02x", (unsigned char)b[i]);
	putchar('\n');
}

struct rec {
	char *line; /* "line TEXT" or "row TS ENVELOPE" */
	cJSON *env;
	struct record r;
};

static void load_record(struct rec *x, char *line)
{
	memset(&x->r, 0, sizeof(x->r));
	x->line = line;
	x->r.topic = "skiff-test";
	if (strncmp(line, "line ", 5) == 0) {
		x->r.value = (struct record_value){
		    .kind = VALUE_STRING, .bytes = line + 5, .len = strlen(line + 5)};
		return;
	}
	if (strncmp(line, "row ", 4) != 0)
		die("a record is 'line TEXT' or 'row TS ENVELOPE'");
	x->r.timestamp_ms = strtoll(line + 4, NULL, 10);
	x->env = cJSON_Parse(strchr(line + 4, ' ') + 1);
	if (x->env == NULL)
		die("a row's envelope is not JSON");
	x->r.value = (struct record_value){
	    .kind = VALUE_STRUCT,
	    .schema = cJSON_GetObjectItemCaseSensitive(x->env, "schema"),
	    .payload = cJSON_GetObjectItemCaseSensitive(x->env, "payload"),
	};
	/* "schema":null is a value without a schema (a map). */
	if (cJSON_IsNull(x->r.value.schema))
		x->r.value.schema = NULL;
	if (x->r.value.schema == NULL && cJSON_IsNull(x->r.value.payload))
		x->r.value = (struct record_value){.kind = VALUE_NULL};
}

static void convert(const char *label, const struct converter *c, const struct record_value *v)
{
	char *out = NULL;
	size_t len = 0;
	uint64_t replaced = 0;

	if (convert_value(c, v, &out, &len, &replaced) != 0) {
		printf("%s convert-error\n", label);
		return;
	}
	emit(label, out, len, out == NULL);
	free(out);
}

static void dump_one(const char *name, size_t n, struct transform_chain *chain,
                     const struct record *r)
{
	struct converter json = {CONV_JSON, false}, jsch = {CONV_JSON, true},
	                 str = {CONV_STRING, false};
	struct transform_out t;
	char p[256], l[512], err[1024];
	enum transform_result res;

	snprintf(p, sizeof(p), "%s %zu", name, n);
	res = chain ? transform_chain_apply(chain, r, &t, err, sizeof(err)) : TRANSFORM_ERROR;
	if (res == TRANSFORM_DROP || res != TRANSFORM_OK) {
		printf("%s %s\n", p, res == TRANSFORM_DROP ? "dropped" : "error");
		if (res != TRANSFORM_DROP && chain)
			fprintf(stderr, "%s: %s\n", p, err);
		return;
	}
	snprintf(l, sizeof(l), "%s topic", p);
	emit(l, t.topic, strlen(t.topic), false);
	for (size_t i = 0; i < t.nheaders; i++) {
		snprintf(l, sizeof(l), "%s header %s", p, t.headers[i].name);
		emit(l, t.headers[i].value, t.headers[i].len, t.headers[i].value == NULL);
	}
	snprintf(l, sizeof(l), "%s key json-schema", p);
	convert(l, &jsch, &t.key);
	snprintf(l, sizeof(l), "%s value json-schema", p);
	convert(l, &jsch, &t.value);
	snprintf(l, sizeof(l), "%s value json", p);
	convert(l, &json, &t.value);
	snprintf(l, sizeof(l), "%s value string", p);
	convert(l, &str, &t.value);
}

/* Loads the chain whose properties are text. NULL when it does not load. */
static struct transform_chain *load_chain(const char *name, const char *text)
{
	static const struct config_key none[] = {CFG_END};
	const struct config_key *tables[] = {none};
	struct config_spec spec = {
	    .prefix = "", .tables = tables, .ntables = 1, .passthrough = transform_config_prefixes};
	struct props *p = NULL;
	struct config_section *s = NULL;
	struct transform_chain *c = NULL;
	char err[1024];

	if (props_load_mem(name, text, strlen(text), &p, err, sizeof(err)) != 0 ||
	    config_section_load(p, &spec, &s, err, sizeof(err)) != 0 ||
	    transform_chain_parse(s, &c, err, sizeof(err)) != 0)
		fprintf(stderr, "chain %s: %s\n", name, err);
	config_section_destroy(s);
	props_destroy(p);
	return c;
}

static size_t read_lines(const char *path, char **lines, size_t max)
{
	FILE *f = fopen(path, "r");
	char *l = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;

	if (f == NULL)
		die(path);
	while ((len = getline(&l, &cap, f)) >= 0) {
		if (len > 0 && l[len - 1] == '\n')
			l[--len] = '\0';
		if (len == 0 || l[0] == '#')
			continue;
		if (n == max)
			die("too many lines");
		lines[n++] = strdup(l);
	}
	free(l);
	fclose(f);
	return n;
}

int main(int argc, char **argv)
{
	static char *clines[4096], *rlines[MAX_RECORDS];
	static struct rec recs[MAX_RECORDS];
	size_t nc, nr;

	if (argc != 3)
		die("usage: transformdump CHAINS RECORDS");
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	nc = read_lines(argv[1], clines, 4096);
	nr = read_lines(argv[2], rlines, MAX_RECORDS);
	for (size_t i = 0; i < nr; i++)
		load_record(&recs[i], rlines[i]);
	for (size_t i = 0; i < nc; i++) {
		char text[MAX_CHAIN] = "", *name;
		size_t at = 0;
		struct transform_chain *c;

		if (strncmp(clines[i], "chain ", 6) != 0)
			die("a chain starts with 'chain NAME'");
		name = clines[i] + 6;
		for (i++; i < nc && strcmp(clines[i], "end") != 0; i++)
			at += (size_t)snprintf(text + at, sizeof(text) - at, "%s\n", clines[i]);
		c = load_chain(name, text);
		for (size_t r = 0; r < nr; r++)
			dump_one(name, r + 1, c, &recs[r].r);
		transform_chain_destroy(c);
	}
	return 0;
}
