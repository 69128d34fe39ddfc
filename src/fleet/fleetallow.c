/* fleetallow: a connector configuration from the fleet, checked against the
 * device's fleet.allow.* (fleetallow.h).
 *
 * Why a remote glob is decided component by component: with FNM_PATHNAME a
 * '*' never crosses a '/', and glob(3) (the file source's expansion) matches
 * component by component, so a remote glob can only reach names of as many
 * components as it has. A remote component R is covered by an allowed one P
 * when every name R can match, P matches: both are read as tokens (one
 * character of a set: a literal, '?', a bracket expression, each as the set
 * of bytes it matches, which fnmatch itself tells; or '*'), and coverage is
 * decided over the tokens (covers()): sound, and exact but for a remote '*'
 * that only an allowed '*' covers. fnmatch(P, R as text) alone is not
 * sound: P "?.log" matches the text "*.log", which names "app.log". */
#include "fleet/fleetallow.h"

#include "config/provider.h"
#include "config/settings.h"
#include "core/source.h"
#include "transform/transform.h"

#include <cjson/cJSON.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PATH_MAX_BYTES 4096
#define TOKENS_MAX 256 /* in one component: NAME_MAX 255, and a '*' */
#define ALTS_MAX 64    /* {} alternatives of one remote glob */
#define SHOWN_MAX 200  /* bytes of a remote value quoted in a reason */

const char *fleetallow_strerror(int code)
{
	switch (code) {
	case FLEETALLOW_OK:
		return "allowed";
	case FLEETALLOW_ERR_RECORD:
		return "not a connector configuration";
	case FLEETALLOW_ERR_NAME:
		return "name is not the connector's";
	case FLEETALLOW_ERR_PROVIDER:
		return "a config provider reference not in fleet.allow.providers";
	case FLEETALLOW_ERR_WORKER_KEY:
		return "a worker key";
	case FLEETALLOW_ERR_PRODUCER:
		return "producer.override.* without fleet.allow.producer";
	case FLEETALLOW_ERR_CLUSTER:
		return "a producer override of the cluster's connection";
	case FLEETALLOW_ERR_CLASS:
		return "a class not in fleet.allow.connector.classes";
	case FLEETALLOW_ERR_UNTOLD:
		return "the source cannot say what it names";
	case FLEETALLOW_ERR_PATH:
		return "not an absolute, normalised path";
	case FLEETALLOW_ERR_FILE:
		return "outside fleet.allow.files";
	case FLEETALLOW_ERR_DATABASE:
		return "outside fleet.allow.databases";
	case FLEETALLOW_ERR_JOURNAL:
		return "a journal without fleet.allow.journals";
	case FLEETALLOW_ERR_TOPIC:
		return "outside fleet.allow.topics";
	case FLEETALLOW_ERR_TRANSFORM:
		return "a class not in fleet.allow.transforms";
	case FLEETALLOW_ERR_LOCAL:
		return "a local connector without fleet.allow.replace.local";
	case FLEETALLOW_ERR_LOG_LEVEL:
		return "a log level without fleet.allow.log.level";
	case FLEETALLOW_ERR_NOMEM:
		return "out of memory";
	default:
		return "unknown error";
	}
}

/* A list's value as a reason shows it. */
static const char *shown(const struct config_list *l)
{
	return l->n > 0 && l->text != NULL ? l->text : "empty";
}

/* ---- paths and globs ---------------------------------------------------------- */

/* One token of a component: '*', or one byte of a set. */
struct tok {
	bool star;
	uint8_t set[32]; /* bit b: byte b matches */
};

/* The work of one fleetallow_path: the tokens of one remote and one allowed
 * component, and covers()'s table (heap: 25 KB). */
struct work {
	struct tok r[TOKENS_MAX], p[TOKENS_MAX];
	uint8_t memo[(TOKENS_MAX + 1) * (TOKENS_MAX + 1)];
};

static void set_bit(uint8_t *set, unsigned b)
{
	set[b / 8] |= (uint8_t)(1u << (b % 8));
}

static bool has_bit(const uint8_t *set, unsigned b)
{
	return (set[b / 8] >> (b % 8)) & 1u;
}

/* The end (past ']') of the bracket expression at s[0] == '[' within n
 * bytes, as fnmatch reads one; 0 when it does not close (a literal '['). */
static size_t bracket_end(const char *s, size_t n)
{
	size_t j = 1;

	if (j < n && (s[j] == '!' || s[j] == '^'))
		j++;
	if (j < n && s[j] == ']')
		j++;
	while (j < n && s[j] != ']') {
		if (s[j] == '[' && j + 1 < n && strchr(":=.", s[j + 1]) != NULL) {
			char close = s[j + 1];

			for (j += 2; j + 1 < n && !(s[j] == close && s[j + 1] == ']'); j++)
				;
			if (j + 1 >= n)
				return 0;
			j += 2;
		} else if (s[j] == '\\' && j + 1 < n)
			j += 2;
		else
			j++;
	}
	return j < n ? j + 1 : 0;
}

/* The set of bytes (not '/', not NUL) the bracket expression s[0..n) matches. */
static void bracket_set(const char *s, size_t n, uint8_t *set)
{
	char pat[TOKENS_MAX + 1], one[2] = {0, 0};

	memcpy(pat, s, n);
	pat[n] = '\0';
	for (unsigned b = 1; b < 256; b++) {
		one[0] = (char)b;
		if (b != '/' && fnmatch(pat, one, 0) == 0)
			set_bit(set, b);
	}
}

/* Reads the component s[0..n) into t: every byte literal unless glob.
 * Returns the number of tokens, or -1 when there are more than TOKENS_MAX. */
static int tokens(const char *s, size_t n, bool glob, struct tok *t)
{
	int k = 0;

	for (size_t i = 0; i < n; k++) {
		size_t end;

		if (k == TOKENS_MAX)
			return -1;
		memset(&t[k], 0, sizeof(t[k]));
		if (glob && s[i] == '*') {
			t[k].star = true;
			while (i < n && s[i] == '*')
				i++;
		} else if (glob && s[i] == '?') {
			memset(t[k].set, 0xff, sizeof(t[k].set));
			t[k].set[0] &= (uint8_t)~1u;                       /* NUL */
			t[k].set['/' / 8] &= (uint8_t) ~(1u << ('/' % 8)); /* '/' */
			i++;
		} else if (glob && s[i] == '[' && (end = bracket_end(s + i, n - i)) > 0 &&
		           end <= TOKENS_MAX) {
			bracket_set(s + i, end, t[k].set);
			i += end;
		} else {
			if (glob && s[i] == '\\' && i + 1 < n)
				i++;
			set_bit(t[k].set, (unsigned char)s[i]);
			i++;
		}
	}
	return k;
}

/* Whether every name the remote tokens r[0..nr) match, the allowed tokens
 * p[0..np) match. memo[i * (nr + 1) + j]: p[i..] covers r[j..]; filled from
 * the ends. An allowed '*' matches the empty string or absorbs one more
 * remote token (whatever it matches, a remote '*' too); a remote '*' is
 * covered only by an allowed one; one set covers another it includes. */
static bool covers(const struct tok *p, int np, const struct tok *r, int nr, uint8_t *memo)
{
	size_t w = (size_t)nr + 1;

	for (int i = np; i >= 0; i--) {
		for (int j = nr; j >= 0; j--) {
			bool v;

			if (i == np)
				v = j == nr;
			else if (p[i].star)
				v = memo[(size_t)(i + 1) * w + (size_t)j] ||
				    (j < nr && memo[(size_t)i * w + (size_t)j + 1]);
			else if (j == nr || r[j].star)
				v = false;
			else {
				v = memo[(size_t)(i + 1) * w + (size_t)j + 1];
				for (unsigned b = 0; v && b < 256; b++)
					v = !has_bit(r[j].set, b) || has_bit(p[i].set, b);
			}
			memo[(size_t)i * w + (size_t)j] = v;
		}
	}
	return memo[0];
}

/* The next component of path from *at (past a '/'): its start and length. */
static bool next_comp(const char *path, size_t *at, const char **c, size_t *n)
{
	if (path[*at] != '/')
		return false;
	*c = path + *at + 1;
	*n = strcspn(*c, "/");
	*at += 1 + *n;
	return true;
}

/* Why path is not absolute and normalised (NULL: it is). A glob component
 * that can match "." or ".." (".*", ".?", "[.][.]") is one, as glob(3)
 * matches a leading period (only explicitly). */
static const char *malformed(const char *path, bool glob)
{
	size_t at = 0, n;
	const char *c;
	char comp[TOKENS_MAX + 1];

	if (path[0] != '/')
		return "is not an absolute path";
	if (strlen(path) >= PATH_MAX_BYTES)
		return "is too long";
	while (next_comp(path, &at, &c, &n)) {
		if (n == 0)
			return "is not normalised (an empty component)";
		if (n > TOKENS_MAX)
			return "has a component longer than 256 bytes";
		memcpy(comp, c, n);
		comp[n] = '\0';
		if (strcmp(comp, "..") == 0 ||
		    (glob && fnmatch(comp, "..", FNM_PATHNAME | FNM_PERIOD) == 0))
			return "has a '..' component";
		if (strcmp(comp, ".") == 0 ||
		    (glob && fnmatch(comp, ".", FNM_PATHNAME | FNM_PERIOD) == 0))
			return "is not normalised (a '.' component)";
	}
	return NULL;
}

/* Whether the allowed glob p covers path (components as tokens). */
static bool glob_covers(const char *p, const char *path, bool glob, struct work *wk)
{
	size_t pat = 0, rat = 0, pn, rn;
	const char *pc, *rc;

	if (p[0] != '/')
		return false; /* a relative allowed glob allows nothing */
	for (;;) {
		bool more_p = next_comp(p, &pat, &pc, &pn),
		     more_r = next_comp(path, &rat, &rc, &rn);
		int np, nr;

		if (!more_p || !more_r)
			return !more_p && !more_r;
		np = tokens(pc, pn, true, wk->p);
		nr = tokens(rc, rn, glob, wk->r);
		if (np < 0 || nr < 0 || !covers(wk->p, np, wk->r, nr, wk->memo))
			return false;
	}
}

/* The {} alternatives of a glob, as GLOB_BRACE expands them, into alts
 * (malloc'd strings; *n of them). A group without a ',' is taken both
 * ways, expanded and as text. Returns 0, FLEETALLOW_ERR_PATH past ALTS_MAX
 * or FLEETALLOW_ERR_NOMEM. */
static int braces(const char *s, char **alts, size_t *n)
{
	size_t open = 0, close = 0, depth = 0, len = strlen(s), commas = 0;
	bool found = false;
	int rc = 0;

	for (size_t i = 0; i < len && !found; i++) {
		if (s[i] == '\\' && i + 1 < len)
			i++;
		else if (s[i] == '{' && depth++ == 0)
			open = i;
		else if (s[i] == '}' && depth > 0 && --depth == 0)
			close = i, found = true;
	}
	if (!found) {
		if (*n == ALTS_MAX)
			return FLEETALLOW_ERR_PATH;
		if ((alts[*n] = strdup(s)) == NULL)
			return FLEETALLOW_ERR_NOMEM;
		(*n)++;
		return 0;
	}
	for (size_t i = open + 1, start = open + 1, d = 0; i <= close && rc == 0; i++) {
		char *alt;

		if (s[i] == '\\' && i + 1 < close) {
			i++;
			continue;
		}
		if (s[i] == '{')
			d++;
		else if (s[i] == '}' && i < close)
			d--;
		if ((s[i] != ',' || d != 0) && i != close)
			continue;
		commas += s[i] == ',';
		if (i == close && commas == 0) {
			/* "{a}": glob(3) may keep it as text; check that too */
			if ((alt = malloc(len + 3)) == NULL)
				return FLEETALLOW_ERR_NOMEM;
			snprintf(alt, len + 3, "%.*s\\{%.*s\\}%s", (int)open, s,
			         (int)(close - open - 1), s + open + 1, s + close + 1);
			rc = braces(alt, alts, n);
			free(alt);
		}
		if (rc == 0) {
			if ((alt = malloc(len + 1)) == NULL)
				return FLEETALLOW_ERR_NOMEM;
			snprintf(alt, len + 1, "%.*s%.*s%s", (int)open, s, (int)(i - start),
			         s + start, s + close + 1);
			rc = braces(alt, alts, n);
			free(alt);
		}
		start = i + 1;
	}
	return rc;
}

int fleetallow_path(const struct config_list *globs, const char *path, bool glob, const char **why)
{
	char *alts[ALTS_MAX];
	size_t n = 0;
	struct work *wk = NULL;
	int rc;

	*why = NULL;
	rc = glob ? braces(path, alts, &n) : 0;
	if (!glob && (alts[0] = strdup(path)) != NULL)
		n = 1;
	else if (!glob)
		rc = FLEETALLOW_ERR_NOMEM;
	if (rc == FLEETALLOW_ERR_PATH)
		*why = "has more than 64 {} alternatives";
	if (rc != 0)
		goto out;
	if ((wk = malloc(sizeof(*wk))) == NULL) {
		rc = FLEETALLOW_ERR_NOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		bool ok = false;

		if ((*why = malformed(alts[i], glob)) != NULL) {
			rc = FLEETALLOW_ERR_PATH;
			break;
		}
		for (size_t k = 0; k < globs->n && !ok; k++)
			ok = glob_covers(globs->items[k], alts[i], glob, wk);
		if (!ok)
			rc = FLEETALLOW_ERR_FILE;
	}
out:
	for (size_t i = 0; i < n; i++)
		free(alts[i]);
	free(wk);
	return rc;
}

/* ---- pass 1: the record --------------------------------------------------------- */

/* Producer overrides that point a connector at another cluster, or load
 * code (librdkafka's plugins), allowed by nothing. */
static const char *const cluster_keys[] = {
    "bootstrap.servers", "metadata.broker.list", "security.", "sasl.", "ssl.",
    "enable.ssl.",       "plugin.library.paths", NULL,
};

static bool key_in(const char *key, const char *const *names)
{
	for (size_t i = 0; names[i] != NULL; i++) {
		size_t n = strlen(names[i]);

		if (names[i][n - 1] == '.' ? strncmp(key, names[i], n) == 0
		                           : strcmp(key, names[i]) == 0)
			return true;
	}
	return false;
}

static bool key_prefixed(const char *key, const char *const *prefixes)
{
	for (size_t i = 0; prefixes[i] != NULL; i++)
		if (strncmp(key, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

static bool in_table(const struct config_key *t, const char *key)
{
	for (; t->name != NULL; t++)
		if (strcmp(t->name, key) == 0)
			return true;
	return false;
}

/* A key a connector takes: the common connector keys, any source's, the
 * transforms' (connectors of other classes are refused in pass 2). */
static bool connector_key(const char *key)
{
	if (in_table(settings_connector_keys, key))
		return true;
	for (size_t i = 0; source_registry[i] != NULL; i++)
		if (in_table(source_registry[i]->config_keys, key))
			return true;
	for (size_t i = 0; transform_config_prefixes[i] != NULL; i++) {
		size_t n = strlen(transform_config_prefixes[i]);

		if (strncmp(key, transform_config_prefixes[i], n) == 0 &&
		    (key[n] == '\0' || key[n] == '.'))
			return true;
	}
	return false;
}

/* A key of the worker file: its tables' rows, the prefixes it passes to
 * librdkafka or another reader, and fleet.* (the fleet's own keys: in the
 * worker table, and never a connector's whatever that table holds). */
static bool worker_key(const char *key)
{
	static const char *const fleet[] = {"fleet.", NULL};

	if (connector_key(key))
		return false;
	for (size_t i = 0; settings_worker_tables[i] != NULL; i++)
		if (in_table(settings_worker_tables[i], key))
			return true;
	return key_prefixed(key, settings_worker_passthrough) ||
	       key_prefixed(key, settings_worker_skip) || key_prefixed(key, fleet);
}

/* Whether fleet.allow.providers allows the reference whose provider, path
 * and key are the spans sp of v. */
static bool provider_allowed(const struct fleet_allow_conf *allow, const char *v, size_t sp[3][2])
{
	size_t plen = sp[0][1] - sp[0][0];
	char path[PATH_MAX_BYTES];
	struct config_list one = {.n = 1};
	const char *why;

	for (size_t i = 0; i < allow->providers.n; i++) {
		const char *item = allow->providers.items[i], *colon = strchr(item, ':');
		size_t ilen = colon != NULL ? (size_t)(colon - item) : strlen(item);

		if (ilen != plen || strncmp(item, v + sp[0][0], plen) != 0)
			continue;
		if (colon == NULL)
			return true;
		if (sp[1][1] - sp[1][0] >= sizeof(path) ||
		    memchr(v + sp[2][0], '/', sp[2][1] - sp[2][0]) != NULL)
			continue;
		snprintf(path, sizeof(path), "%.*s", (int)(sp[1][1] - sp[1][0]), v + sp[1][0]);
		one.items = &(const char *){colon + 1};
		if (fleetallow_path(&one, path, false, &why) == 0)
			return true;
	}
	return false;
}

static int refuse(char *errbuf, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int refuse(char *errbuf, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
	return code;
}

/* One property of the record. */
static int check_property(const struct fleet_allow_conf *allow, const char *name, const char *key,
                          const cJSON *value, char *errbuf, size_t errlen)
{
	const char *v = cJSON_GetStringValue(value);
	size_t at = 0, start, end, sp[3][2];

	if (v == NULL && !cJSON_IsNull(value))
		return refuse(errbuf, errlen, FLEETALLOW_ERR_RECORD,
		              "connector %s: property %.*s is not a string", name, SHOWN_MAX, key);
	while (v != NULL && providers_next_ref(v, &at, &start, &end, sp))
		if (!provider_allowed(allow, v, sp))
			return refuse(errbuf, errlen, FLEETALLOW_ERR_PROVIDER,
			              "connector %s: %.*s in %.*s is not allowed by "
			              "fleet.allow.providers (%s)",
			              name,
			              (int)(end - start > SHOWN_MAX ? SHOWN_MAX : end - start),
			              v + start, SHOWN_MAX, key, shown(&allow->providers));
	if (strncmp(key, "producer.override.", 18) == 0) {
		if (key_in(key + 18, cluster_keys))
			return refuse(errbuf, errlen, FLEETALLOW_ERR_CLUSTER,
			              "connector %s: %.*s would connect it elsewhere: never "
			              "allowed from the fleet, whatever fleet.allow.producer says",
			              name, SHOWN_MAX, key);
		if (!allow->producer)
			return refuse(errbuf, errlen, FLEETALLOW_ERR_PRODUCER,
			              "connector %s: %.*s needs fleet.allow.producer=true", name,
			              SHOWN_MAX, key);
		return 0;
	}
	if (worker_key(key))
		return refuse(errbuf, errlen, FLEETALLOW_ERR_WORKER_KEY,
		              "connector %s: %.*s is a worker key: only the device's own worker "
		              "file sets it",
		              name, SHOWN_MAX, key);
	if (strcmp(key, "name") == 0 && (v == NULL || strcmp(v, name) != 0))
		return refuse(errbuf, errlen, FLEETALLOW_ERR_NAME,
		              "connector %s: name is '%.*s', not the record's connector", name,
		              SHOWN_MAX, v != NULL ? v : "null");
	return 0;
}

int fleetallow_record(const struct fleet_allow_conf *allow, const char *name,
                      const struct cJSON *properties, char *errbuf, size_t errlen)
{
	const cJSON *p;
	int rc;

	if (!cJSON_IsObject(properties))
		return refuse(errbuf, errlen, FLEETALLOW_ERR_RECORD,
		              "connector %s: properties is not an object", name);
	cJSON_ArrayForEach(p, properties)
	{
		if ((rc = check_property(allow, name, p->string, p, errbuf, errlen)) != 0)
			return rc;
	}
	return 0;
}

/* ---- pass 2: the connector -------------------------------------------------------- */

/* What pass 2 found so far: the first refusal's code and reason, and each
 * fleet.allow.* key a refusal named (bit: enum need). */
enum need { NEED_CLASSES, NEED_FILES, NEED_DATABASES, NEED_JOURNALS, NEED_TOPICS, NEED_TRANSFORMS };

static const char *const need_keys[] = {
    "fleet.allow.connector.classes", "fleet.allow.files",  "fleet.allow.databases",
    "fleet.allow.journals",          "fleet.allow.topics", "fleet.allow.transforms",
};

struct vet {
	const struct fleet_allow_conf *allow;
	const char *name;
	int rc;
	int first; /* enum need of the first refusal; -1: not a key's */
	unsigned needs;
	char *errbuf;
	size_t errlen;
};

static void deny(struct vet *v, int code, int need, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void deny(struct vet *v, int code, int need, const char *fmt, ...)
{
	va_list ap;

	if (need >= 0)
		v->needs |= 1u << need;
	if (v->rc != 0)
		return;
	v->rc = code;
	v->first = need;
	va_start(ap, fmt);
	vsnprintf(v->errbuf, v->errlen, fmt, ap);
	va_end(ap);
}

static void check_class(struct vet *v, const struct connector_settings *c)
{
	const char *cls = settings_connector(c->cfg)->connector_class;
	const struct config_list *l = &v->allow->connector_classes;

	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], cls) == 0 || source_find(l->items[i]) == c->ops)
			return;
	deny(v, FLEETALLOW_ERR_CLASS, NEED_CLASSES,
	     "connector %s: class %s is not in fleet.allow.connector.classes (%s)", v->name, cls,
	     shown(l));
}

static void check_path(struct vet *v, const char *what, bool glob, bool database)
{
	const struct config_list *l = database ? &v->allow->databases : &v->allow->files;
	const char *key = database ? "fleet.allow.databases" : "fleet.allow.files";
	const char *kind = database ? "database" : glob ? "file glob" : "file";
	const char *why;
	int need = database ? NEED_DATABASES : NEED_FILES;
	int rc = fleetallow_path(l, what, glob, &why);

	if (rc == FLEETALLOW_ERR_NOMEM)
		deny(v, rc, -1, "connector %s: out of memory", v->name);
	else if (rc == FLEETALLOW_ERR_PATH)
		deny(v, rc, need, "connector %s: %s %.*s %s (%s takes absolute, normalised paths)",
		     v->name, kind, SHOWN_MAX, what, why, key);
	else if (rc != 0)
		deny(v, database ? FLEETALLOW_ERR_DATABASE : FLEETALLOW_ERR_FILE, need,
		     "connector %s: %s %.*s is outside %s (%s)", v->name, kind, SHOWN_MAX, what,
		     key, shown(l));
}

static void check_topic(struct vet *v, const char *topic)
{
	const struct config_list *l = &v->allow->topics;

	for (size_t i = 0; i < l->n; i++)
		if (fnmatch(l->items[i], topic, 0) == 0)
			return;
	deny(v, FLEETALLOW_ERR_TOPIC, NEED_TOPICS,
	     "connector %s: topic %.*s is outside fleet.allow.topics (%s)", v->name, SHOWN_MAX,
	     topic, shown(l));
}

/* source_ops.resources' put. */
static void put_resource(void *arg, enum source_resource kind, const char *what)
{
	struct vet *v = arg;

	switch (kind) {
	case SOURCE_RES_FILE:
	case SOURCE_RES_FILE_GLOB:
		check_path(v, what, kind == SOURCE_RES_FILE_GLOB, false);
		break;
	case SOURCE_RES_DATABASE:
		check_path(v, what, false, true);
		break;
	case SOURCE_RES_JOURNAL:
		if (!v->allow->journals)
			deny(v, FLEETALLOW_ERR_JOURNAL, NEED_JOURNALS,
			     "connector %s: the journal%s%.*s needs fleet.allow.journals=true",
			     v->name, *what != '\0' ? " in " : "", SHOWN_MAX, what);
		break;
	case SOURCE_RES_TOPIC:
		check_topic(v, what);
		break;
	case SOURCE_RES_NONE:
		break;
	}
}

/* cls matches an item of l: a glob, or a class without $Key/$Value that
 * names both. */
static bool class_allowed(const struct config_list *l, const char *cls)
{
	for (size_t i = 0; i < l->n; i++) {
		size_t n = strlen(l->items[i]);

		if (fnmatch(l->items[i], cls, 0) == 0 ||
		    (strncmp(cls, l->items[i], n) == 0 &&
		     (strcmp(cls + n, "$Key") == 0 || strcmp(cls + n, "$Value") == 0)))
			return true;
	}
	return false;
}

static void check_transforms(struct vet *v, const struct connector_settings *c)
{
	const char *cls;
	bool pred;

	for (size_t i = 0; (cls = transform_chain_class(c->chain, i, &pred)) != NULL; i++)
		if (!class_allowed(&v->allow->transforms, cls))
			deny(v, FLEETALLOW_ERR_TRANSFORM, NEED_TRANSFORMS,
			     "connector %s: %s %s is not in fleet.allow.transforms (%s)", v->name,
			     pred ? "predicate" : "transform", cls, shown(&v->allow->transforms));
}

/* Appends "; also needs KEY, KEY" for the keys refused after the first. */
static void also(struct vet *v)
{
	size_t at = strlen(v->errbuf);
	const char *sep = "; also needs ";

	for (int k = 0; k <= NEED_TRANSFORMS; k++) {
		if (k == v->first || !(v->needs & (1u << k)) || at >= v->errlen)
			continue;
		at += (size_t)snprintf(v->errbuf + at, v->errlen - at, "%s%s", sep, need_keys[k]);
		sep = ", ";
	}
}

int fleetallow_connector(const struct fleet_allow_conf *allow, const struct connector_settings *c,
                         char *errbuf, size_t errlen)
{
	struct vet v = {
	    .allow = allow, .name = c->name, .first = -1, .errbuf = errbuf, .errlen = errlen};
	char why[512] = "";
	int rc;

	check_class(&v, c);
	if (c->ops->resources == NULL)
		deny(&v, FLEETALLOW_ERR_UNTOLD, -1,
		     "connector %s: the %s source cannot say what it names: not taken from the "
		     "fleet",
		     v.name, c->ops->kind);
	else if ((rc = c->ops->resources(c->cfg, put_resource, &v, why, sizeof(why))) != 0)
		deny(&v, rc == SOURCE_ERR_NOMEM ? FLEETALLOW_ERR_NOMEM : FLEETALLOW_ERR_UNTOLD, -1,
		     "connector %s: %s", v.name, why);
	check_transforms(&v, c);
	if (v.rc != 0 && v.rc != FLEETALLOW_ERR_NOMEM)
		also(&v);
	return v.rc;
}

/* ---- records about other things ----------------------------------------------------- */

int fleetallow_local(const struct fleet_allow_conf *allow, const char *name, bool in_files,
                     char *errbuf, size_t errlen)
{
	if (!in_files || allow->replace_local)
		return 0;
	return refuse(errbuf, errlen, FLEETALLOW_ERR_LOCAL,
	              "connector %s: defined in the device's own files: the fleet may change it "
	              "only with fleet.allow.replace.local=true",
	              name);
}

int fleetallow_log_level(const struct fleet_allow_conf *allow, const char *ns, char *errbuf,
                         size_t errlen)
{
	if (allow->log_level)
		return 0;
	return refuse(errbuf, errlen, FLEETALLOW_ERR_LOG_LEVEL,
	              "logger %.*s: a log level from the fleet needs fleet.allow.log.level=true",
	              SHOWN_MAX, ns);
}

/* ---- the run-time guard ------------------------------------------------------- */

static int guard_path(const void *arg, const char *real_path, char *why, size_t len)
{
	const struct fleet_allow_conf *allow = arg;
	const char *malformed_why;
	int rc = fleetallow_path(&allow->files, real_path, false, &malformed_why);

	if (rc == 0)
		return 0;
	if (rc == FLEETALLOW_ERR_NOMEM)
		snprintf(why, len, "%s", "not checked: out of memory");
	else
		snprintf(why, len, "outside fleet.allow.files (%s)", shown(&allow->files));
	return rc;
}

static int guard_topic(const void *arg, const char *topic, char *why, size_t len)
{
	const struct fleet_allow_conf *allow = arg;
	const struct config_list *l = &allow->topics;

	for (size_t i = 0; i < l->n; i++)
		if (fnmatch(l->items[i], topic, 0) == 0)
			return 0;
	snprintf(why, len, "outside fleet.allow.topics (%s)", shown(l));
	return FLEETALLOW_ERR_TOPIC;
}

void fleetallow_guard(const struct fleet_allow_conf *allow, struct source_guard *out)
{
	*out = (struct source_guard){
	    .allow_path = guard_path, .allow_topic = guard_topic, .arg = allow};
}
