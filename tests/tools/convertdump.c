/* convertdump: runs src/convert/convert.c over tests/convert/lines.hex and
 * tests/convert/structs.txt and prints what it produces, in the format of
 * tests/convert/ConnectDump.java, for tests/convert/compare.sh.
 *
 * Usage: convertdump LINES STRUCTS ZONE[,ZONE...]
 *
 * Output, one item a line, bytes as lower-case hex ("null" for a null
 * result, "-" for no bytes):
 *   line N replaced K        invalid UTF-8 sequences replaced with U+FFFD
 *   line N json HEX          JsonConverter, schemas.enable=false
 *   line N json-schema HEX   JsonConverter, schemas.enable=true
 *   line N string HEX        StringConverter
 *   struct N json|json-schema HEX
 *   struct N string@ZONE HEX StringConverter with TZ=ZONE
 *   nullkey json|json-schema|string HEX
 * A struct's string form is "unmatched" when it has a non-null bytes field
 * (Connect prints a byte[]'s identity hash there).
 *
 * Each struct is built as a source would build it: a cJSON schema, its
 * members deliberately not in Connect's order (convert.c must reorder them)
 * and without "optional" where it is false, float32 by its Schema.Type name
 * (Connect's JSON says "float"), and a cJSON payload with int64
 * and timestamps as raw text, other numbers as cJSON numbers, bytes as
 * base64, and null fields alternately null and absent. A struct marked
 * source=sqlite is built as the SQLite source builds a row instead: its
 * values bound into "SELECT ?1, ?2, ..." on an in-memory database (text and
 * blobs with their length, NUL bytes and invalid UTF-8 included) and read
 * back through sqvalue_row(), schema and all. Exit status 1 on a malformed
 * input file or a conversion failure. */
#include "convert/convert.h"
#include "util/num.h"
#include "core/source.h"
#include "sources/sqlite/sqvalue.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#define MAX_TOKENS 64

struct bytes {
	char *p;
	size_t len, cap;
};

static void die(const char *what, const char *why)
{
	fprintf(stderr, "convertdump: %s: %s\n", what, why);
	exit(1);
}

static void append(struct bytes *b, const void *s, size_t n)
{
	if (b->cap - b->len < n + 1) {
		size_t cap = (b->len + n + 1) * 2;
		char *p = realloc(b->p, cap);

		if (p == NULL)
			die("memory", "out of memory");
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static char *slurp(const char *path)
{
	struct bytes b = {0};
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (f == NULL)
		die(path, "cannot open");
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		append(&b, buf, n);
	if (ferror(f))
		die(path, "read error");
	fclose(f);
	append(&b, "", 0);
	return b.p;
}

/* Splits the next line of *text off (in place); strips a "#" comment and
 * surrounding blanks. Returns NULL at the end. */
static char *next_line(char **text)
{
	char *l = *text, *e, *h;

	if (*l == '\0')
		return NULL;
	e = strchr(l, '\n');
	*text = e ? e + 1 : l + strlen(l);
	if (e)
		*e = '\0';
	if ((h = strchr(l, '#')) != NULL)
		*h = '\0';
	while (*l == ' ' || *l == '\t')
		l++;
	e = l + strlen(l);
	while (e > l && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return l;
}

/* Splits l in place at blanks into at most MAX_TOKENS tokens. */
static int split(char *l, char **tok)
{
	int n = 0;

	for (;;) {
		while (*l == ' ' || *l == '\t')
			*l++ = '\0';
		if (*l == '\0')
			return n;
		if (n == MAX_TOKENS)
			die(l, "too many tokens");
		tok[n++] = l;
		while (*l != '\0' && *l != ' ' && *l != '\t')
			l++;
	}
}

/* Appends the bytes of a token: HEX, HEX*N or "-". */
static void hex_token(struct bytes *b, const char *tok)
{
	const char *star = strchr(tok, '*');
	size_t hlen = star ? (size_t)(star - tok) : strlen(tok);
	int64_t n = 1;
	char one[256];

	if (hlen == 1 && tok[0] == '-')
		hlen = 0;
	if (star != NULL && num_parse_i64(star + 1, 0, 100000000, &n) != 0)
		die(tok, "bad repeat count");
	if (hlen % 2 != 0 || hlen / 2 > sizeof(one))
		die(tok, "bad hex token");
	for (size_t i = 0; i < hlen / 2; i++) {
		int hi = num_hex_digit(tok[2 * i]), lo = num_hex_digit(tok[2 * i + 1]);

		if (hi < 0 || lo < 0)
			die(tok, "bad hex digit");
		one[i] = (char)(hi << 4 | lo);
	}
	for (int64_t i = 0; i < n; i++)
		append(b, one, hlen / 2);
}

static void emit(const char *label, const char *p, size_t len)
{
	static const char digits[] = "0123456789abcdef";

	fputs(label, stdout);
	putchar(' ');
	if (p == NULL)
		fputs("null", stdout);
	else if (len == 0)
		putchar('-');
	for (size_t i = 0; p != NULL && i < len; i++) {
		putchar(digits[(unsigned char)p[i] >> 4]);
		putchar(digits[p[i] & 15]);
	}
	putchar('\n');
}

/* Converts v with class cls; the caller frees *out. */
static void convert(const char *label, const char *cls, bool schemas, const struct record_value *v,
                    char **out, size_t *len, uint64_t *replaced)
{
	struct converter c;

	if (convert_resolve(cls, schemas, &c) != 0 || convert_value(&c, v, out, len, replaced) != 0)
		die(label, "conversion failed");
}

static void run(const char *label, const char *cls, bool schemas, const struct record_value *v,
                uint64_t *replaced)
{
	char *out = NULL;
	size_t len = 0;

	convert(label, cls, schemas, v, &out, &len, replaced);
	emit(label, out, len);
	free(out);
}

static void dump_lines(char *text)
{
	char *l, *tok[MAX_TOKENS], label[64], *json;
	size_t jlen;
	int n = 0;

	while ((l = next_line(&text)) != NULL) {
		struct bytes b = {0};
		struct record_value v = {.kind = VALUE_STRING};
		uint64_t replaced = 0, again = 0;
		int ntok = split(l, tok);

		if (ntok == 0)
			continue;
		for (int i = 0; i < ntok; i++)
			hex_token(&b, tok[i]);
		append(&b, "", 0);
		v.bytes = b.p;
		v.len = b.len;
		n++;
		snprintf(label, sizeof(label), "line %d json", n);
		convert(label, "JsonConverter", false, &v, &json, &jlen, &replaced);
		printf("line %d replaced %llu\n", n, (unsigned long long)replaced);
		emit(label, json, jlen);
		free(json);
		snprintf(label, sizeof(label), "line %d json-schema", n);
		run(label, "JsonConverter", true, &v, &again);
		snprintf(label, sizeof(label), "line %d string", n);
		run(label, "StringConverter", false, &v, &again);
		if (again != 2 * replaced)
			die(label, "converters count replacements differently");
		free(b.p);
	}
}

/* ---- structs ------------------------------------------------------------ */

static char *base64(const char *p, size_t n)
{
	static const char tab[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *u = (const unsigned char *)p;
	char *res = malloc((n + 2) / 3 * 4 + 1), *o = res;

	if (res == NULL)
		die("memory", "out of memory");
	for (size_t i = 0; i < n; i += 3) {
		unsigned long w = (unsigned long)u[i] << 16 | (i + 1 < n ? u[i + 1] << 8 : 0) |
		                  (i + 2 < n ? u[i + 2] : 0);

		*o++ = tab[w >> 18 & 63];
		*o++ = tab[w >> 12 & 63];
		*o++ = i + 1 < n ? tab[w >> 6 & 63] : '=';
		*o++ = i + 2 < n ? tab[w & 63] : '=';
	}
	*o = '\0';
	return res;
}

static struct bytes hex_text(char **tok, int ntok)
{
	struct bytes b = {0};

	for (int i = 0; i < ntok; i++)
		hex_token(&b, tok[i]);
	append(&b, "", 0);
	return b;
}

static const struct {
	const char *name, *type, *logical;
} types[] = {
    {"int8", "int8", NULL},
    {"int16", "int16", NULL},
    {"int32", "int32", NULL},
    {"int64", "int64", NULL},
    {"float32", "float32", NULL}, /* Schema.Type's name: convert.c writes "float" */
    {"float64", "double", NULL},
    {"boolean", "boolean", NULL},
    {"string", "string", NULL},
    {"bytes", "bytes", NULL},
    {"timestamp", "int64", "org.apache.kafka.connect.data.Timestamp"},
    {"date", "int32", "org.apache.kafka.connect.data.Date"},
    {"time", "int32", "org.apache.kafka.connect.data.Time"},
};

static cJSON *number(const char *s, bool is_float)
{
	char *end;
	double d = is_float ? (double)strtof(s, &end) : strtod(s, &end);

	if (end == s || *end != '\0')
		die(s, "bad number");
	return cJSON_CreateNumber(d);
}

static cJSON *integer(const char *s, bool raw)
{
	int64_t v;

	if (num_parse_i64(s, INT64_MIN, INT64_MAX, &v) != 0)
		die(s, "bad integer");
	return raw ? cJSON_CreateRaw(s) : cJSON_CreateNumber((double)v);
}

/* The payload member for a field of description type t. */
static cJSON *value(const char *t, char **tok, int ntok, bool *is_bytes)
{
	struct bytes text;
	char *b64;
	cJSON *j;

	if (strcmp(t, "float32") == 0 || strcmp(t, "float64") == 0)
		return number(tok[0], t[5] == '3');
	if (strcmp(t, "boolean") == 0)
		return cJSON_CreateBool(strcmp(tok[0], "true") == 0);
	if (strcmp(t, "int64") == 0 || strcmp(t, "timestamp") == 0)
		return integer(tok[0], true);
	if (strcmp(t, "string") != 0 && strcmp(t, "bytes") != 0)
		return integer(tok[0], false);
	text = hex_text(tok, ntok);
	if (strcmp(t, "bytes") == 0) {
		*is_bytes = true;
		b64 = base64(text.p, text.len);
		j = cJSON_CreateString(b64);
		free(b64);
	} else {
		j = cJSON_CreateString(text.p);
	}
	free(text.p);
	return j;
}

/* Splits "key=value" options off tok[from..]; returns the count of the other
 * tokens, moved to the front of tok + from. */
static int options(char **tok, int ntok, int from, char **opt, int *nopt)
{
	int rest = 0;

	*nopt = 0;
	for (int i = from; i < ntok; i++) {
		if (strchr(tok[i], '=') != NULL || strcmp(tok[i], "optional") == 0)
			opt[(*nopt)++] = tok[i];
		else
			tok[from + rest++] = tok[i];
	}
	return rest;
}

static const char *option(char **opt, int nopt, const char *key)
{
	size_t k = strlen(key);

	for (int i = 0; i < nopt; i++) {
		if (strncmp(opt[i], key, k) == 0 && (opt[i][k] == '=' || opt[i][k] == '\0'))
			return opt[i][k] == '=' ? opt[i] + k + 1 : "";
	}
	return NULL;
}

static void add_doc(cJSON *schema, const char *doc)
{
	char *tok[1] = {(char *)doc};
	struct bytes text;

	if (doc == NULL)
		return;
	text = hex_text(tok, 1);
	cJSON_AddStringToObject(schema, "doc", text.p);
	free(text.p);
}

/* One "field" line: its schema goes into fields, its value into payload. */
static void add_field(char *l, cJSON *fields, cJSON *payload, bool *has_bytes)
{
	char *tok[MAX_TOKENS], *opt[MAX_TOKENS];
	int ntok = split(l, tok), nopt, nval;
	size_t t = 0;
	cJSON *f = cJSON_CreateObject();
	bool optional, is_bytes = false;

	nval = options(tok, ntok, 4, opt, &nopt);
	if (ntok < 5 || nval < 1 || strcmp(tok[0], "field") != 0)
		die(tok[0], "bad field line");
	while (t < sizeof(types) / sizeof(types[0]) && strcmp(types[t].name, tok[2]) != 0)
		t++;
	if (t == sizeof(types) / sizeof(types[0]))
		die(tok[2], "unknown type");
	optional = strcmp(tok[3], "optional") == 0;
	/* Not Connect's order, on purpose: field, doc, version, name, optional, type. */
	cJSON_AddStringToObject(f, "field", tok[1]);
	add_doc(f, option(opt, nopt, "doc"));
	if (types[t].logical != NULL) {
		cJSON_AddNumberToObject(f, "version", 1);
		cJSON_AddStringToObject(f, "name", types[t].logical);
	}
	if (optional || fields->child == NULL)
		cJSON_AddBoolToObject(f, "optional", optional);
	cJSON_AddStringToObject(f, "type", types[t].type);
	cJSON_AddItemToArray(fields, f);
	if (strcmp(tok[4], "null") == 0) {
		/* Alternately null and absent: both mean null. */
		if (cJSON_GetArraySize(fields) % 2 == 0)
			cJSON_AddNullToObject(payload, tok[1]);
		return;
	}
	cJSON_AddItemToObject(payload, tok[1], value(tok[2], tok + 4, nval, &is_bytes));
	*has_bytes |= is_bytes;
}

/* ---- structs as the SQLite source builds them ---------------------------- */

struct sqlrow {
	sqlite3 *db;
	sqlite3_stmt *stmt;
	struct sqcol cols[MAX_TOKENS];
	size_t idx[MAX_TOKENS], n;
	struct sqschemas cache;
};

/* Binds one "field" line's value to parameter r->n + 1 and describes its
 * column as a table declared with that type would. */
static void sqlite_field(struct sqlrow *r, char *l, bool *has_bytes)
{
	char *tok[MAX_TOKENS], *opt[MAX_TOKENS];
	int ntok = split(l, tok), nopt, nval = options(tok, ntok, 4, opt, &nopt), rc;
	struct sqcol *c = &r->cols[r->n];
	int at = (int)r->n + 1;
	struct bytes text = {0};
	int64_t i;

	if (ntok < 5 || nval < 1 || strcmp(tok[0], "field") != 0 || r->n + 1 >= MAX_TOKENS)
		die(tok[0], "bad field line");
	c->name = tok[1];
	c->declared = true;
	c->optional = strcmp(tok[3], "optional") == 0;
	c->logical = strcmp(tok[2], "boolean") == 0 ? SQLOG_BOOLEAN : SQLOG_NONE;
	c->kind = strcmp(tok[2], "float64") == 0  ? SQCOL_REAL
	          : strcmp(tok[2], "string") == 0 ? SQCOL_TEXT
	          : strcmp(tok[2], "bytes") == 0  ? SQCOL_BLOB
	                                          : SQCOL_INTEGER;
	if (strcmp(tok[2], "int64") != 0 && strcmp(tok[2], "boolean") != 0 &&
	    c->kind == SQCOL_INTEGER)
		die(tok[2], "not a type a SQLite row carries here");
	if (strcmp(tok[4], "null") == 0) {
		rc = sqlite3_bind_null(r->stmt, at);
	} else if (c->kind == SQCOL_REAL) {
		rc = sqlite3_bind_double(r->stmt, at, strtod(tok[4], NULL));
	} else if (c->logical == SQLOG_BOOLEAN) {
		rc = sqlite3_bind_int(r->stmt, at, strcmp(tok[4], "true") == 0);
	} else if (c->kind == SQCOL_INTEGER) {
		if (num_parse_i64(tok[4], INT64_MIN, INT64_MAX, &i) != 0)
			die(tok[4], "bad integer");
		rc = sqlite3_bind_int64(r->stmt, at, i);
	} else {
		text = hex_text(tok + 4, nval);
		*has_bytes |= c->kind == SQCOL_BLOB;
		rc = c->kind == SQCOL_BLOB
		         ? sqlite3_bind_blob(r->stmt, at, text.p, (int)text.len, SQLITE_TRANSIENT)
		         : sqlite3_bind_text(r->stmt, at, text.p, (int)text.len, SQLITE_TRANSIENT);
		free(text.p);
	}
	if (rc != SQLITE_OK)
		die(tok[1], sqlite3_errmsg(r->db));
	r->idx[r->n] = r->n;
	r->n++;
}

/* Reads the field lines of a source=sqlite struct up to "end" and builds its
 * payload and schema through sqvalue_row() (*schema a copy, *schema_json the
 * source's own rendering, both the caller's). */
static void sqlite_struct(char **text, const char *name, cJSON **schema, cJSON **payload,
                          char **schema_json, bool *has_bytes)
{
	struct sqlrow r = {0};
	struct sqvalue_stats st = {0};
	char sql[16 + MAX_TOKENS * 8] = "SELECT ?1", *l;
	const cJSON *s = NULL;

	for (int i = 2; i < MAX_TOKENS; i++)
		snprintf(sql + strlen(sql), sizeof(sql) - strlen(sql), ", ?%d", i);
	if (sqlite3_open(":memory:", &r.db) != SQLITE_OK ||
	    sqlite3_prepare_v2(r.db, sql, -1, &r.stmt, NULL) != SQLITE_OK)
		die("sqlite", sqlite3_errmsg(r.db));
	while ((l = next_line(text)) != NULL && strcmp(l, "end") != 0) {
		if (*l != '\0')
			sqlite_field(&r, l, has_bytes);
	}
	if (l == NULL)
		die("structs", "missing end");
	if (sqlite3_step(r.stmt) != SQLITE_ROW)
		die("sqlite", sqlite3_errmsg(r.db));
	*payload = sqvalue_row(r.stmt, r.cols, r.idx, r.n, name, &r.cache, &s, &st);
	if (*payload == NULL)
		die("sqlite", "sqvalue_row failed");
	*schema = cJSON_Duplicate(s, true);
	*schema_json = strdup(sqvalue_schemas_json(&r.cache, s));
	if (*schema == NULL || *schema_json == NULL)
		die("memory", "out of memory");
	sqvalue_schemas_clear(&r.cache);
	sqlite3_finalize(r.stmt);
	sqlite3_close(r.db);
}

/* Builds the struct described by head and the field lines after it, up to
 * "end"; returns false at the end of the text. *schema_json is NULL, or for
 * a source=sqlite struct the source's rendering of the schema (caller's). */
static bool next_struct(char **text, cJSON **schema, cJSON **payload, char **schema_json,
                        bool *has_bytes)
{
	char *l, *tok[MAX_TOKENS], *opt[MAX_TOKENS];
	int ntok, nopt;
	const char *name, *version;
	cJSON *fields;

	do {
		if ((l = next_line(text)) == NULL)
			return false;
	} while (*l == '\0');
	ntok = split(l, tok);
	if (strcmp(tok[0], "struct") != 0 || options(tok, ntok, 1, opt, &nopt) != 0)
		die(tok[0], "bad struct line");
	*has_bytes = false;
	*schema_json = NULL;
	if ((version = option(opt, nopt, "source")) != NULL) {
		if (strcmp(version, "sqlite") != 0)
			die(version, "unknown source");
		sqlite_struct(text, option(opt, nopt, "name"), schema, payload, schema_json,
		              has_bytes);
		return true;
	}
	*schema = cJSON_CreateObject();
	*payload = cJSON_CreateObject();
	/* Not Connect's order either: name, version, doc, optional, fields, type;
	 * "optional" only when true (Connect's default is false). */
	if ((name = option(opt, nopt, "name")) != NULL)
		cJSON_AddStringToObject(*schema, "name", name);
	if ((version = option(opt, nopt, "version")) != NULL)
		cJSON_AddItemToObject(*schema, "version", integer(version, false));
	add_doc(*schema, option(opt, nopt, "doc"));
	if (option(opt, nopt, "optional") != NULL)
		cJSON_AddTrueToObject(*schema, "optional");
	fields = cJSON_AddArrayToObject(*schema, "fields");
	cJSON_AddStringToObject(*schema, "type", "struct");
	while ((l = next_line(text)) != NULL && strcmp(l, "end") != 0) {
		if (*l != '\0')
			add_field(l, fields, *payload, has_bytes);
	}
	if (l == NULL)
		die("structs", "missing end");
	return true;
}

static void dump_structs(char *text, char **zones, int nzones)
{
	cJSON *schema, *payload;
	char *schema_json;
	bool has_bytes;
	char label[128];
	int n = 0;
	uint64_t replaced = 0;

	while (next_struct(&text, &schema, &payload, &schema_json, &has_bytes)) {
		struct record_value v = {.kind = VALUE_STRUCT,
		                         .payload = payload,
		                         .schema = schema,
		                         .schema_json = schema_json};

		n++;
		snprintf(label, sizeof(label), "struct %d json", n);
		run(label, "JsonConverter", false, &v, &replaced);
		snprintf(label, sizeof(label), "struct %d json-schema", n);
		run(label, "JsonConverter", true, &v, &replaced);
		for (int z = 0; z < nzones; z++) {
			if (setenv("TZ", zones[z], 1) != 0)
				die(zones[z], "setenv failed");
			snprintf(label, sizeof(label), "struct %d string@%s", n, zones[z]);
			if (has_bytes) {
				char *out = NULL;
				size_t len = 0;

				convert(label, "StringConverter", false, &v, &out, &len, &replaced);
				free(out);
				printf("%s unmatched\n", label);
			} else {
				run(label, "StringConverter", false, &v, &replaced);
			}
		}
		cJSON_Delete(schema);
		cJSON_Delete(payload);
		free(schema_json);
	}
}

int main(int argc, char **argv)
{
	char *lines, *structs, *zlist, *zones[MAX_TOKENS];
	int nzones = 0;
	struct record_value null_key = {.kind = VALUE_NULL};
	uint64_t replaced = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: convertdump LINES STRUCTS ZONE[,ZONE...]\n");
		return 2;
	}
	lines = slurp(argv[1]);
	structs = slurp(argv[2]);
	zlist = argv[3];
	for (char *z = zlist; z != NULL && nzones < MAX_TOKENS;) {
		char *comma = strchr(z, ',');

		if (comma != NULL)
			*comma = '\0';
		zones[nzones++] = z;
		z = comma ? comma + 1 : NULL;
	}
	dump_lines(lines);
	dump_structs(structs, zones, nzones);
	run("nullkey json", "JsonConverter", false, &null_key, &replaced);
	run("nullkey json-schema", "JsonConverter", true, &null_key, &replaced);
	run("nullkey string", "StringConverter", false, &null_key, &replaced);
	free(lines);
	free(structs);
	return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
