/* transform: the transforms and predicates of one connector, parsed from its
 * properties as Connect's ConnectorConfig reads them, and applied in order
 * (transform.h).
 *
 * A step runs when it has no predicate, or when its predicate's test,
 * inverted by negate=true, holds (Connect's TransformationStage). A step
 * that drops the record ends the chain. */
#include "transform/transform.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "util/buf.h"
#include "transform/txops.h"

#define MAX_STEPS 64
#define ALIAS_MAX 128

const char *const transform_config_prefixes[] = {"transforms", "predicates", NULL};

/* One configured transform or predicate. */
struct step {
	char alias[ALIAS_MAX];
	char cls[256];
	const struct tx_ops *ops;
	void *ctx;
	struct txconf conf;
	int predicate; /* index into predicates, -1: none */
	bool negate;
};

struct transform_chain {
	/* Every pass-through entry, values trimmed (ConfigDef trims); secret:
	 * the value came from a config provider (never shown). */
	size_t n;
	char **keys, **values, **wheres;
	bool *secret;
	/* MAX_STEPS each, allocated when the list is set: 30 KB a connector
	 * without transforms would otherwise hold resident. */
	struct step *steps;
	size_t nsteps;
	struct step *preds;
	size_t npreds;
	struct txrec cur; /* the record of the last apply */
	struct record_header hdr[TXREC_MAX_HEADERS];
};

size_t transform_chain_len(const struct transform_chain *c)
{
	return c == NULL ? 0 : c->nsteps;
}

const char *transform_chain_class(const struct transform_chain *c, size_t i, bool *predicate)
{
	*predicate = false;
	if (c == NULL)
		return NULL;
	if (i < c->nsteps)
		return c->steps[i].cls;
	*predicate = true;
	return i - c->nsteps < c->npreds ? c->preds[i - c->nsteps].cls : NULL;
}

/* v as Java's String.trim() leaves it (every char up to ' ' off both ends),
 * as ConfigDef does to the STRING, LIST, CLASS, BOOLEAN and number values
 * that are all a transform's properties (only PASSWORD is kept as written,
 * and no transform has one): a ${dir:...} file's trailing newline goes. */
static char *trimmed(const char *v)
{
	size_t n;

	while (*v != '\0' && (unsigned char)*v <= ' ')
		v++;
	n = strlen(v);
	while (n > 0 && (unsigned char)v[n - 1] <= ' ')
		n--;
	return strndup(v, n);
}

static bool belongs(const char *key)
{
	return strcmp(key, "transforms") == 0 || strcmp(key, "predicates") == 0 ||
	       strncmp(key, "transforms.", 11) == 0 || strncmp(key, "predicates.", 11) == 0;
}

/* Copies cfg's pass-through entries that belong to the chain. */
static int collect(struct transform_chain *c, const struct config_section *cfg, char *errbuf,
                   size_t errlen)
{
	size_t total = config_passthrough_count(cfg);

	c->keys = calloc(total + 1, sizeof(char *));
	c->values = calloc(total + 1, sizeof(char *));
	c->wheres = calloc(total + 1, sizeof(char *));
	c->secret = calloc(total + 1, sizeof(bool));
	if (c->keys == NULL || c->values == NULL || c->wheres == NULL || c->secret == NULL)
		return TRANSFORM_ERR_NOMEM;
	for (size_t i = 0; i < total; i++) {
		const char *k = config_passthrough_key(cfg, i);

		if (!belongs(k)) {
			snprintf(errbuf, errlen,
			         "%s: unknown property '%s' (skiff --help-config lists them all)",
			         config_passthrough_where(cfg, i), k);
			return TRANSFORM_ERR_CONFIG;
		}
		c->keys[c->n] = strdup(k);
		c->values[c->n] = trimmed(config_passthrough_value(cfg, i));
		c->wheres[c->n] = strdup(config_passthrough_where(cfg, i));
		/* shown differs from the value only when it is "[hidden]" */
		c->secret[c->n] =
		    strcmp(config_passthrough_shown(cfg, i), config_passthrough_value(cfg, i)) != 0;
		if (c->keys[c->n] == NULL || c->values[c->n] == NULL || c->wheres[c->n] == NULL) {
			c->n++;
			return TRANSFORM_ERR_NOMEM;
		}
		c->n++;
	}
	return 0;
}

/* The entry for key (the last one), or -1. */
static int entry(const struct transform_chain *c, const char *key)
{
	for (size_t i = c->n; i-- > 0;)
		if (strcmp(c->keys[i], key) == 0)
			return (int)i;
	return -1;
}

/* Points s->conf at the entries under "KIND.ALIAS." (the conf gets its own
 * arrays of pointers); listed is where KIND= names the alias. */
static int make_conf(struct transform_chain *c, struct step *s, const char *kind,
                     const char *listed)
{
	char prefix[ALIAS_MAX + 16];
	size_t plen, m = 0;
	const char **k = calloc(c->n + 1, sizeof(char *));
	const char **v = calloc(c->n + 1, sizeof(char *));
	const char **w = calloc(c->n + 1, sizeof(char *));
	bool *sec = calloc(c->n + 1, sizeof(bool));
	char *p;

	snprintf(prefix, sizeof(prefix), "%s.%s.", kind, s->alias);
	p = strdup(prefix);
	if (k == NULL || v == NULL || w == NULL || sec == NULL || p == NULL) {
		free(k), free(v), free(w), free(sec), free(p);
		return TRANSFORM_ERR_NOMEM;
	}
	plen = strlen(prefix);
	for (size_t i = 0; i < c->n; i++) {
		if (strncmp(c->keys[i], prefix, plen) != 0)
			continue;
		k[m] = c->keys[i] + plen;
		v[m] = c->values[i];
		sec[m] = c->secret[i];
		w[m++] = c->wheres[i];
	}
	s->conf = (struct txconf){.prefix = p,
	                          .n = m,
	                          .keys = k,
	                          .values = v,
	                          .wheres = w,
	                          .secret = sec,
	                          .listed = listed};
	return 0;
}

static void list_names(const struct tx_ops *const *list, char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	for (size_t i = 0; list[i] != NULL && at < len; i++)
		at += (size_t)snprintf(out + at, len - at, "%s%s%s", i ? ", " : "", list[i]->name,
		                       list[i]->variants ? "$Key|$Value" : "");
}

/* Sets up step s (alias set) of kind "transforms" or "predicates", listed
 * at "file:line" listed. */
static int init_step(struct transform_chain *c, struct step *s, const char *kind,
                     const char *listed, const struct tx_ops *const *list, char *errbuf,
                     size_t errlen)
{
	const char *type;
	char known[1024];
	int rc = make_conf(c, s, kind, listed);

	if (rc != 0)
		return rc;
	if (txconf_require(&s->conf, "type", &type, errbuf, errlen) != 0)
		return TRANSFORM_ERR_CONFIG;
	snprintf(s->cls, sizeof(s->cls), "%s", type);
	s->ops = txregistry_find(list, type, &s->conf.key);
	if (s->ops == NULL) {
		list_names(list, known, sizeof(known));
		txconf_error(&s->conf, "type", errbuf, errlen,
		             "'%s' is not a %s skiff implements (it has: %s)", type,
		             list == txregistry_predicates ? "predicate" : "transform", known);
		return TRANSFORM_ERR_CONFIG;
	}
	rc = s->ops->init(&s->conf, &s->ctx, errbuf, errlen);
	if (rc == TX_ERR_NOMEM)
		return TRANSFORM_ERR_NOMEM;
	return rc != 0 ? TRANSFORM_ERR_CONFIG : 0;
}

/* Reads the list KIND ("transforms" or "predicates") into *stepsp,
 * allocated here (MAX_STEPS) when KIND is set. */
static int parse_list(struct transform_chain *c, const char *kind, struct step **stepsp,
                      size_t *nsteps, const struct tx_ops *const *list, char *errbuf, size_t errlen)
{
	int e = entry(c, kind);
	struct step *steps;
	const char *item;
	size_t n;

	if (e < 0)
		return 0;
	if ((steps = *stepsp = calloc(MAX_STEPS, sizeof(*steps))) == NULL)
		return TRANSFORM_ERR_NOMEM;
	for (size_t i = 0; (n = txconf_list_item(c->values[e], i, &item)) > 0; i++) {
		struct step *s = &steps[*nsteps];
		int rc;

		if (*nsteps == MAX_STEPS || n >= ALIAS_MAX) {
			snprintf(errbuf, errlen,
			         "%s: %s: more than %d %s, or an alias of %d bytes or more",
			         c->wheres[e], kind, MAX_STEPS, kind, ALIAS_MAX);
			return TRANSFORM_ERR_CONFIG;
		}
		for (size_t j = 0; j < *nsteps; j++) {
			if (strlen(steps[j].alias) == n && memcmp(steps[j].alias, item, n) == 0) {
				snprintf(errbuf, errlen, "%s: %s: '%.*s' is listed twice",
				         c->wheres[e], kind, (int)n, item);
				return TRANSFORM_ERR_CONFIG;
			}
		}
		memcpy(s->alias, item, n);
		s->alias[n] = '\0';
		s->predicate = -1;
		(*nsteps)++;
		if ((rc = init_step(c, s, kind, c->wheres[e], list, errbuf, errlen)) != 0)
			return rc;
	}
	return 0;
}

/* Binds each transform's "predicate" and "negate". */
static int bind_predicates(struct transform_chain *c, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < c->nsteps; i++) {
		struct step *s = &c->steps[i];
		const char *p = txconf_get(&s->conf, "predicate");
		const char *neg = txconf_get(&s->conf, "negate");

		if (neg != NULL && strcasecmp(neg, "true") != 0 && strcasecmp(neg, "false") != 0)
			return txconf_error(&s->conf, "negate", errbuf, errlen,
			                    "'%s' is not a boolean (true or false)", neg),
			       TRANSFORM_ERR_CONFIG;
		s->negate = neg != NULL && strcasecmp(neg, "true") == 0;
		if (p == NULL || *p == '\0')
			continue;
		for (size_t j = 0; j < c->npreds; j++)
			if (strcmp(c->preds[j].alias, p) == 0)
				s->predicate = (int)j;
		if (s->predicate < 0)
			return txconf_error(&s->conf, "predicate", errbuf, errlen,
			                    "'%s' is not listed in predicates", p),
			       TRANSFORM_ERR_CONFIG;
	}
	return 0;
}

/* Replaces each secret value of c found in msg (a transform's error may
 * quote a pattern or a list) with "[hidden]"; msg is cut to len. */
static void scrub(const struct transform_chain *c, char *msg, size_t len)
{
	for (size_t i = 0; c != NULL && i < c->n; i++) {
		const char *v = c->values[i], *from = msg, *at;
		char *res = NULL;
		struct buf o;

		if (!c->secret[i] || *v == '\0' || strstr(msg, v) == NULL)
			continue;
		buf_init(&o, 2 * len + 16);
		while ((at = strstr(from, v)) != NULL) {
			buf_add(&o, from, (size_t)(at - from));
			buf_addz(&o, "[hidden]");
			from = at + strlen(v);
		}
		buf_addz(&o, from);
		if (buf_take(&o, &res, NULL) == 0)
			snprintf(msg, len, "%s", res);
		else
			snprintf(msg, len, "transforms: [an error quoting a hidden value]");
		free(res);
	}
}

int transform_chain_parse(const struct config_section *cfg, struct transform_chain **out,
                          char *errbuf, size_t errlen)
{
	struct transform_chain *c = calloc(1, sizeof(*c));
	int rc = TRANSFORM_ERR_NOMEM;

	*out = NULL;
	if (c == NULL)
		goto out;
	if ((rc = collect(c, cfg, errbuf, errlen)) != 0 ||
	    (rc = parse_list(c, "predicates", &c->preds, &c->npreds, txregistry_predicates, errbuf,
	                     errlen)) != 0 ||
	    (rc = parse_list(c, "transforms", &c->steps, &c->nsteps, txregistry_transforms, errbuf,
	                     errlen)) != 0 ||
	    (rc = bind_predicates(c, errbuf, errlen)) != 0)
		goto out;
	*out = c;
	c = NULL;
out:
	if (rc == TRANSFORM_ERR_NOMEM)
		snprintf(errbuf, errlen, "transforms: out of memory");
	else if (rc != 0)
		scrub(c, errbuf, errlen);
	transform_chain_destroy(c);
	return rc;
}

/* ---- applying ------------------------------------------------------------ */

static enum transform_result step_failed(const struct step *s, int rc, const char *why,
                                         char *errbuf, size_t errlen)
{
	if (rc == TX_ERR_NOMEM)
		snprintf(errbuf, errlen, "%.*s%s (%s): out of memory",
		         (int)strlen(s->conf.prefix) - 1, s->conf.prefix, "", s->cls);
	else
		snprintf(errbuf, errlen, "%.*s (%s): %s", (int)strlen(s->conf.prefix) - 1,
		         s->conf.prefix, s->cls, why);
	return rc == TX_ERR_NOMEM ? TRANSFORM_NOMEM : TRANSFORM_ERROR;
}

/* Runs the steps on c->cur. */
static enum transform_result run(struct transform_chain *c, char *errbuf, size_t errlen)
{
	char why[768];

	for (size_t i = 0; i < c->nsteps; i++) {
		struct step *s = &c->steps[i];
		int rc;

		why[0] = '\0';
		if (s->predicate >= 0) {
			struct step *p = &c->preds[s->predicate];

			rc = p->ops->apply(p->ctx, &c->cur, why, sizeof(why));
			if (rc < 0)
				return step_failed(p, rc, why, errbuf, errlen);
			if ((rc == 1) == s->negate)
				continue;
		}
		rc = s->ops->apply(s->ctx, &c->cur, why, sizeof(why));
		if (rc == TX_DROP)
			return TRANSFORM_DROP;
		if (rc < 0)
			return step_failed(s, rc, why, errbuf, errlen);
	}
	return TRANSFORM_OK;
}

enum transform_result transform_chain_apply(struct transform_chain *c, const struct record *in,
                                            struct transform_out *out, char *errbuf, size_t errlen)
{
	enum transform_result res;
	struct record view;

	if (c == NULL || c->nsteps == 0) {
		*out = (struct transform_out){in->topic,        in->key,     in->value,
		                              in->timestamp_ms, in->headers, in->nheaders};
		return TRANSFORM_OK;
	}
	txrec_release(&c->cur);
	if (txrec_load(&c->cur, in) != 0) {
		snprintf(errbuf, errlen, "transforms: out of memory");
		return TRANSFORM_NOMEM;
	}
	res = run(c, errbuf, errlen);
	if (res == TRANSFORM_ERROR)
		scrub(c, errbuf, errlen);
	if (res != TRANSFORM_OK)
		return res;
	memset(&view, 0, sizeof(view));
	txrec_view(&c->cur, &view, c->hdr, &out->nheaders);
	out->topic = view.topic;
	out->key = view.key;
	out->value = view.value;
	out->timestamp_ms = view.timestamp_ms;
	out->headers = c->hdr;
	return TRANSFORM_OK;
}

/* ---- printing and freeing -------------------------------------------------- */

static void print_step(const struct step *s, const char *indent, FILE *fp)
{
	fprintf(fp, "%s%.*s = %s", indent, (int)strlen(s->conf.prefix) - 1, s->conf.prefix, s->cls);
	for (size_t i = 0; i < s->conf.n; i++) {
		const char *k = s->conf.keys[i];

		if (strcmp(k, "type") == 0 || strcmp(k, "predicate") == 0 ||
		    strcmp(k, "negate") == 0)
			continue;
		fprintf(fp, " %s=%s", k,
		        config_display(k, s->conf.values[i], s->conf.secret[i] ? CFG_SECRET : 0));
	}
	fputc('\n', fp);
}

void transform_chain_print(const struct transform_chain *c, const char *indent, FILE *fp)
{
	if (c == NULL || c->nsteps == 0)
		return;
	fprintf(fp, "%s# transforms, in order\n", indent);
	for (size_t i = 0; i < c->nsteps; i++) {
		const struct step *s = &c->steps[i];

		print_step(s, indent, fp);
		if (s->predicate >= 0)
			fprintf(fp, "%s    only when %s%s\n", indent, s->negate ? "not " : "",
			        c->preds[s->predicate].alias);
	}
	for (size_t i = 0; i < c->npreds; i++)
		print_step(&c->preds[i], indent, fp);
}

/* The keys that configure a chain, for --help-config. */
static const char *const chain_keys[][2] = {
    {"transforms", "Aliases of the transforms, comma-separated, applied in this order "
                   "between the source and the converters."},
    {"transforms.ALIAS.type", "The transform's class (below)."},
    {"transforms.ALIAS.PROPERTY", "A property of that transform (below)."},
    {"transforms.ALIAS.predicate",
     "Alias of a predicate: the transform applies only to the records it matches."},
    {"transforms.ALIAS.negate",
     "true: the transform applies to the records the predicate does not match "
     "(default false)."},
    {"predicates", "Aliases of the predicates, comma-separated."},
    {"predicates.P.type", "The predicate's class (below)."},
    {"predicates.P.PROPERTY", "A property of that predicate (below)."},
};

static int add_string(cJSON *o, const char *name, const char *value)
{
	return cJSON_AddStringToObject(o, name, value) != NULL ? 0 : TRANSFORM_ERR_NOMEM;
}

/* Appends one object per transform (or predicate) of list to arr. */
static int help_list(const struct tx_ops *const *list, cJSON *arr)
{
	for (size_t i = 0; list[i] != NULL; i++) {
		const struct tx_ops *o = list[i];
		cJSON *item = cJSON_CreateObject();
		char cls[256];

		if (item == NULL || !cJSON_AddItemToArray(arr, item)) {
			cJSON_Delete(item);
			return TRANSFORM_ERR_NOMEM;
		}
		snprintf(cls, sizeof(cls), "%s.%s", o->pkg, o->name);
		if (add_string(item, "class", cls) != 0 ||
		    cJSON_AddBoolToObject(item, "variants", o->variants) == NULL ||
		    add_string(item, "doc", o->doc) != 0 ||
		    add_string(item, "properties", o->props) != 0)
			return TRANSFORM_ERR_NOMEM;
	}
	return 0;
}

int transform_help_doc(struct cJSON *doc)
{
	cJSON *keys = cJSON_AddArrayToObject(doc, "chain_keys");
	cJSON *tx = cJSON_AddArrayToObject(doc, "transforms");
	cJSON *preds = cJSON_AddArrayToObject(doc, "predicates");

	if (keys == NULL || tx == NULL || preds == NULL)
		return TRANSFORM_ERR_NOMEM;
	for (size_t i = 0; i < sizeof(chain_keys) / sizeof(chain_keys[0]); i++) {
		cJSON *k = cJSON_CreateObject();

		if (k == NULL || !cJSON_AddItemToArray(keys, k)) {
			cJSON_Delete(k);
			return TRANSFORM_ERR_NOMEM;
		}
		if (add_string(k, "name", chain_keys[i][0]) != 0 ||
		    add_string(k, "doc", chain_keys[i][1]) != 0)
			return TRANSFORM_ERR_NOMEM;
	}
	if (help_list(txregistry_transforms, tx) != 0)
		return TRANSFORM_ERR_NOMEM;
	return help_list(txregistry_predicates, preds);
}

static void free_step(struct step *s)
{
	if (s->ops != NULL)
		s->ops->free(s->ctx);
	free((void *)s->conf.prefix);
	free((void *)s->conf.keys);
	free((void *)s->conf.values);
	free((void *)s->conf.wheres);
	free((void *)s->conf.secret);
}

void transform_chain_destroy(struct transform_chain *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < MAX_STEPS; i++) {
		if (c->steps != NULL)
			free_step(&c->steps[i]);
		if (c->preds != NULL)
			free_step(&c->preds[i]);
	}
	free(c->steps);
	free(c->preds);
	for (size_t i = 0; i < c->n; i++) {
		free(c->keys[i]);
		free(c->values[i]);
		free(c->wheres[i]);
	}
	free(c->keys);
	free(c->values);
	free(c->wheres);
	free(c->secret);
	txrec_release(&c->cur);
	free(c);
}
