/* config: validation of properties against config tables. */
#include "config/config.h"

#include "util/num.h"
#include "config/props.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One key of the section's tables and what the files said about it. */
struct slot {
	const struct config_key *key;
	char *value; /* trimmed, or the default, or NULL */
	char *where; /* "file:line" or "file" */
	bool set;
	bool secret; /* the value came from a config provider */
	int64_t ival;
	bool bval;
	char **items; /* CFG_LIST */
	size_t nitems;
};

struct entry {
	char *key, *value, *where;
	bool secret;
};

/* A struct bound by config_section_keep. */
struct kept {
	const struct config_key *table;
	void *conf;
};

struct config_section {
	struct slot *slots;
	size_t nslots;
	struct entry *pass;
	size_t npass;
	char **notices;
	size_t nnotices;
	char *file;
	struct kept *kept;
	size_t nkept;
};

static char *dupstr(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *trimmed(const char *s)
{
	size_t len;

	while (isspace((unsigned char)*s))
		s++;
	len = strlen(s);
	while (len > 0 && isspace((unsigned char)s[len - 1]))
		len--;
	return strndup(s, len);
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool any_prefix(const char *s, const char *const *list)
{
	for (; list != NULL && *list != NULL; list++) {
		if (has_prefix(s, *list))
			return true;
	}
	return false;
}

static struct slot *find_slot(const struct config_section *s, const char *name)
{
	for (size_t i = 0; i < s->nslots; i++) {
		if (strcmp(s->slots[i].key->name, name) == 0)
			return &s->slots[i];
	}
	return NULL;
}

static struct slot *must_slot(const struct config_section *s, const char *name)
{
	struct slot *sl = find_slot(s, name);

	if (sl == NULL) {
		/* A typo in our own code: fail loudly in tests, never at a user. */
		fprintf(stderr, "skiff: internal error: config key '%s' is in no table\n", name);
		abort();
	}
	return sl;
}

static bool choice_ok(const char *choices, const char *v)
{
	size_t vlen = strlen(v);
	const char *p = choices;

	while (p != NULL && *p != '\0') {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == vlen && strncmp(p, v, len) == 0)
			return true;
		p = bar ? bar + 1 : NULL;
	}
	return false;
}

static void free_items(struct slot *sl)
{
	for (size_t i = 0; i < sl->nitems; i++)
		free(sl->items[i]);
	free(sl->items);
	sl->items = NULL;
	sl->nitems = 0;
}

static int split_list(struct slot *sl)
{
	const char *p = sl->value;

	free_items(sl);
	while (p != NULL && *p != '\0') {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char *raw = strndup(p, len), *item = raw ? trimmed(raw) : NULL;
		char **grown;

		free(raw);
		if (item == NULL)
			return -1;
		if (*item == '\0') {
			free(item);
		} else {
			grown = realloc(sl->items, (sl->nitems + 1) * sizeof(*grown));
			if (grown == NULL) {
				free(item);
				return -1;
			}
			sl->items = grown;
			sl->items[sl->nitems++] = item;
		}
		p = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* The slot's value as a person may see it. */
static const char *slot_shown(const struct slot *sl)
{
	return config_display(sl->key->name, sl->value,
	                      sl->key->flags | (sl->secret ? CFG_SECRET : 0));
}

/* Parses sl->value by the key's type into the slot's typed fields. */
static int parse_value(struct slot *sl, char *errbuf, size_t errlen)
{
	const struct config_key *k = sl->key;
	const char *v = sl->value;

	if (v == NULL)
		return 0;
	switch (k->type) {
	case CFG_INT:
		if (num_parse_i64(v, INT64_MIN, INT64_MAX, &sl->ival) != 0) {
			snprintf(errbuf, errlen, "%s: %s: '%s' is not an integer", sl->where,
			         k->name, slot_shown(sl));
			return -1;
		}
		if (sl->ival < k->min || sl->ival > k->max) {
			snprintf(errbuf, errlen, "%s: %s: %s is out of range [%lld, %lld]",
			         sl->where, k->name, slot_shown(sl), (long long)k->min,
			         (long long)k->max);
			return -1;
		}
		return 0;
	case CFG_BOOL:
		if (num_parse_bool(v, &sl->bval) != 0) {
			snprintf(errbuf, errlen, "%s: %s: '%s' is not true or false", sl->where,
			         k->name, slot_shown(sl));
			return -1;
		}
		return 0;
	case CFG_ENUM:
		if (!choice_ok(k->choices, v)) {
			snprintf(errbuf, errlen, "%s: %s: '%s' is not one of %s", sl->where,
			         k->name, slot_shown(sl), k->choices);
			return -1;
		}
		return 0;
	case CFG_LIST:
		if (split_list(sl) != 0) {
			snprintf(errbuf, errlen, "%s: %s: out of memory", sl->where, k->name);
			return CONFIG_ERR_NOMEM;
		}
		return 0;
	case CFG_STRING:
	case CFG_CLASS:
		return 0;
	}
	return 0;
}

static int assign(struct slot *sl, const char *raw, const char *where, bool set, bool secret,
                  char *errbuf, size_t errlen)
{
	char *v = raw ? trimmed(raw) : NULL;
	char *w = dupstr(where);

	if ((raw != NULL && v == NULL) || w == NULL) {
		free(v);
		free(w);
		snprintf(errbuf, errlen, "%s: out of memory", where);
		return CONFIG_ERR_NOMEM;
	}
	free(sl->value);
	free(sl->where);
	sl->value = v;
	sl->where = w;
	sl->set = set;
	sl->secret = secret;
	return parse_value(sl, errbuf, errlen);
}

static int add_entry(struct entry **arr, size_t *n, const char *key, const char *value,
                     const char *where, bool secret)
{
	struct entry *grown = realloc(*arr, (*n + 1) * sizeof(**arr));

	if (grown == NULL)
		return -1;
	*arr = grown;
	grown[*n].key = dupstr(key);
	grown[*n].value = dupstr(value);
	grown[*n].where = dupstr(where);
	grown[*n].secret = secret;
	(*n)++;
	if (grown[*n - 1].key == NULL || grown[*n - 1].value == NULL || grown[*n - 1].where == NULL)
		return -1;
	return 0;
}

static int add_notice(struct config_section *s, const char *where, const char *key)
{
	char line[1536];
	char **grown = realloc(s->notices, (s->nnotices + 1) * sizeof(*grown));

	if (grown == NULL)
		return -1;
	s->notices = grown;
	snprintf(line, sizeof(line),
	         "%s: %s is a Kafka Connect setting with no meaning for skiff; ignored", where,
	         key);
	grown[s->nnotices] = strdup(line);
	return grown[s->nnotices++] ? 0 : -1;
}

static int init_slots(struct config_section *s, const struct config_spec *spec, char *errbuf,
                      size_t errlen)
{
	size_t n = 0;

	for (size_t t = 0; t < spec->ntables; t++)
		for (const struct config_key *k = spec->tables[t]; k->name != NULL; k++)
			n++;
	s->slots = calloc(n ? n : 1, sizeof(*s->slots));
	if (s->slots == NULL)
		goto nomem;
	for (size_t t = 0; t < spec->ntables; t++) {
		for (const struct config_key *k = spec->tables[t]; k->name != NULL; k++) {
			struct slot *sl = &s->slots[s->nslots++];

			int rc;

			sl->key = k;
			if ((rc = assign(sl, k->def, s->file, false, false, errbuf, errlen)) != 0)
				return rc;
		}
	}
	return 0;
nomem:
	snprintf(errbuf, errlen, "%s: out of memory", s->file);
	return CONFIG_ERR_NOMEM;
}

/* Applies one file entry (key already stripped of the section prefix). */
static int apply(struct config_section *s, const struct config_spec *spec, const char *key,
                 const char *fullkey, const char *value, bool secret, const char *where,
                 char *errbuf, size_t errlen)
{
	struct slot *sl = find_slot(s, key);
	int kept;

	if (sl != NULL && !(sl->key->flags & CFG_INERT))
		return assign(sl, value, where, true, secret, errbuf, errlen);
	if (sl != NULL)
		kept = add_notice(s, where, fullkey);
	else if (any_prefix(key, spec->passthrough))
		kept = add_entry(&s->pass, &s->npass, key, value, where, secret);
	else {
		snprintf(errbuf, errlen,
		         "%s: unknown property '%s' (skiff --help-config lists them all)", where,
		         fullkey);
		return CONFIG_ERR;
	}
	if (kept != 0) {
		snprintf(errbuf, errlen, "%s: out of memory", where);
		return CONFIG_ERR_NOMEM;
	}
	return 0;
}

static int check_required(const struct config_section *s, char *errbuf, size_t errlen)
{
	for (size_t i = 0; i < s->nslots; i++) {
		const struct slot *sl = &s->slots[i];

		if ((sl->key->flags & CFG_REQUIRED) && (sl->value == NULL || *sl->value == '\0')) {
			snprintf(errbuf, errlen, "%s: missing required property '%s' (%s)", s->file,
			         sl->key->name, sl->key->doc);
			return -1;
		}
	}
	return 0;
}

int config_section_load(const struct props *p, const struct config_spec *spec,
                        struct config_section **out, char *errbuf, size_t errlen)
{
	struct config_section *s = calloc(1, sizeof(*s));
	size_t plen = strlen(spec->prefix);
	int rc = CONFIG_ERR_NOMEM;

	*out = NULL;
	if (s == NULL || (s->file = strdup(props_name(p))) == NULL) {
		snprintf(errbuf, errlen, "%s: out of memory", props_name(p));
		goto out;
	}
	if ((rc = init_slots(s, spec, errbuf, errlen)) != 0)
		goto out;
	for (const char *const *kv = spec->presets; kv != NULL && kv[0] != NULL; kv += 2)
		if ((rc = assign(must_slot(s, kv[0]), kv[1], spec->presets_where, true, false,
		                 errbuf, errlen)) != 0)
			goto out;
	for (size_t i = 0; i < props_count(p); i++) {
		const char *key = props_key(p, i);
		char where[1024];

		if (!has_prefix(key, spec->prefix) || any_prefix(key, spec->skip))
			continue;
		snprintf(where, sizeof(where), "%s:%d", props_name(p), props_line(p, i));
		if ((rc = apply(s, spec, key + plen, key, props_value(p, i), props_secret(p, i),
		                where, errbuf, errlen)) != 0)
			goto out;
	}
	if ((rc = check_required(s, errbuf, errlen)) != 0)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	config_section_destroy(s);
	return rc;
}

int config_section_set(struct config_section *s, const char *name, const char *value,
                       const char *where, char *errbuf, size_t errlen)
{
	int rc = assign(must_slot(s, name), value, where, true, false, errbuf, errlen);

	for (size_t i = 0; rc == 0 && i < s->nkept; i++)
		config_section_bind(s, s->kept[i].table, s->kept[i].conf);
	return rc;
}

/* The size a bound member of a key of type t takes. */
static size_t field_size(enum config_type t)
{
	switch (t) {
	case CFG_STRING:
	case CFG_CLASS:
		return sizeof(const char *);
	case CFG_INT:
		return sizeof(int64_t);
	case CFG_BOOL:
		return sizeof(bool);
	case CFG_ENUM:
		return sizeof(int);
	case CFG_LIST:
		return sizeof(struct config_list);
	}
	return 0;
}

/* The index of v among the '|'-separated choices, or -1. */
static int choice_index(const char *choices, const char *v)
{
	size_t vlen = strlen(v);
	int i = 0;

	for (const char *p = choices; p != NULL && *p != '\0'; i++) {
		size_t len = strcspn(p, "|");

		if (len == vlen && strncmp(p, v, len) == 0)
			return i;
		p = p[len] == '|' ? p + len + 1 : NULL;
	}
	return -1;
}

static void bind_slot(const struct slot *sl, unsigned char *conf)
{
	const struct config_key *k = sl->key;
	unsigned char *at = conf + k->field;
	struct config_list list;
	int e;

	switch (k->type) {
	case CFG_STRING:
	case CFG_CLASS:
		memcpy(at, &sl->value, sizeof(sl->value));
		break;
	case CFG_INT:
		memcpy(at, &sl->ival, sizeof(sl->ival));
		break;
	case CFG_BOOL:
		memcpy(at, &sl->bval, sizeof(sl->bval));
		break;
	case CFG_ENUM:
		e = sl->value != NULL ? choice_index(k->choices, sl->value) : -1;
		memcpy(at, &e, sizeof(e));
		break;
	case CFG_LIST:
		list.n = sl->nitems;
		list.items = (const char *const *)sl->items;
		list.text = sl->value;
		memcpy(at, &list, sizeof(list));
		break;
	}
	if (k->set_at != 0)
		memcpy(conf + k->set_at - 1, &sl->set, sizeof(sl->set));
}

void config_section_bind(const struct config_section *s, const struct config_key *table, void *conf)
{
	for (const struct config_key *k = table; k->name != NULL; k++) {
		if (k->size == 0)
			continue;
		if (k->size != field_size(k->type)) {
			/* A row bound to a member of another type: our own bug. */
			fprintf(stderr,
			        "skiff: internal error: config key '%s' bound to a member "
			        "of %zu bytes\n",
			        k->name, k->size);
			abort();
		}
		bind_slot(must_slot(s, k->name), conf);
	}
}

int config_section_keep(struct config_section *s, const struct config_key *table, size_t size)
{
	struct kept *grown = realloc(s->kept, (s->nkept + 1) * sizeof(*grown));
	void *conf;

	if (grown == NULL)
		return CONFIG_ERR_NOMEM;
	s->kept = grown;
	if ((conf = calloc(1, size ? size : 1)) == NULL)
		return CONFIG_ERR_NOMEM;
	config_section_bind(s, table, conf);
	s->kept[s->nkept].table = table;
	s->kept[s->nkept++].conf = conf;
	return 0;
}

const void *config_section_kept(const struct config_section *s, const struct config_key *table)
{
	for (size_t i = 0; i < s->nkept; i++)
		if (s->kept[i].table == table)
			return s->kept[i].conf;
	/* A section made elsewhere than the loader that binds it: our bug. */
	fprintf(stderr, "skiff: internal error: a section without its bound keys\n");
	abort();
}

/* True when [a, a + alen) and [b, b + blen) share a byte. */
static bool overlap(size_t a, size_t alen, size_t b, size_t blen)
{
	return a < b + blen && b < a + alen;
}

/* True when row k's member or flag shares a byte with a row's before it. */
static bool shares(const struct config_key *table, const struct config_key *k)
{
	for (const struct config_key *o = table; o != k; o++) {
		if (o->size == 0)
			continue;
		if (overlap(k->field, k->size, o->field, o->size) ||
		    (k->set_at && overlap(k->set_at - 1, sizeof(bool), o->field, o->size)) ||
		    (o->set_at && overlap(k->field, k->size, o->set_at - 1, sizeof(bool))) ||
		    (k->set_at && o->set_at && k->set_at == o->set_at))
			return true;
	}
	return false;
}

const char *config_table_check(const struct config_key *table, size_t size)
{
	for (const struct config_key *k = table; k->name != NULL; k++) {
		if (k->flags & CFG_INERT) {
			if (k->size != 0)
				return k->name;
			continue;
		}
		if (k->size == 0 || k->size != field_size(k->type) || k->field + k->size > size ||
		    (k->set_at != 0 && k->set_at - 1 + sizeof(bool) > size) || shares(table, k))
			return k->name;
	}
	return NULL;
}

const char *config_str(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->value;
}

int64_t config_int(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->ival;
}

bool config_bool(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->bval;
}

size_t config_list_len(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->nitems;
}

const char *config_list_item(const struct config_section *s, const char *name, size_t i)
{
	struct slot *sl = must_slot(s, name);

	return i < sl->nitems ? sl->items[i] : NULL;
}

bool config_is_set(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->set;
}

const char *config_where(const struct config_section *s, const char *name)
{
	return must_slot(s, name)->where;
}

size_t config_passthrough_count(const struct config_section *s)
{
	return s->npass;
}

const char *config_passthrough_key(const struct config_section *s, size_t i)
{
	return s->pass[i].key;
}

const char *config_passthrough_value(const struct config_section *s, size_t i)
{
	return s->pass[i].value;
}

const char *config_passthrough_where(const struct config_section *s, size_t i)
{
	return s->pass[i].where;
}

const char *config_shown(const struct config_section *s, const char *name)
{
	return slot_shown(must_slot(s, name));
}

const char *config_passthrough_shown(const struct config_section *s, size_t i)
{
	const struct entry *e = &s->pass[i];

	return config_display(e->key, e->value, e->secret ? CFG_SECRET : 0);
}

bool config_next_set(const struct config_section *s, size_t *cursor, const char **key,
                     const char **shown)
{
	for (; *cursor < s->nslots; (*cursor)++) {
		const struct slot *sl = &s->slots[*cursor];

		if (sl->set && sl->value != NULL) {
			*key = sl->key->name;
			*shown = config_shown(s, sl->key->name);
			(*cursor)++;
			return true;
		}
	}
	if (*cursor - s->nslots < s->npass) {
		const struct entry *e = &s->pass[*cursor - s->nslots];

		*key = e->key;
		*shown = config_passthrough_shown(s, *cursor - s->nslots);
		(*cursor)++;
		return true;
	}
	return false;
}

size_t config_notice_count(const struct config_section *s)
{
	return s->nnotices;
}

const char *config_notice(const struct config_section *s, size_t i)
{
	return s->notices[i];
}

bool config_key_is_secret(const char *key)
{
	static const char *const parts[] = {"password",
	                                    "secret",
	                                    "jaas",
	                                    "ssl.key.",
	                                    "token",
	                                    "credential",
	                                    "sasl.oauthbearer.config",
	                                    NULL};

	for (const char *const *p = parts; *p != NULL; p++) {
		if (strstr(key, *p) != NULL)
			return true;
	}
	return false;
}

const char *config_display(const char *key, const char *value, unsigned flags)
{
	if ((flags & CFG_SECRET) || config_key_is_secret(key))
		return "[hidden]";
	return value;
}

static const char *type_name(enum config_type t)
{
	switch (t) {
	case CFG_STRING:
		return "string";
	case CFG_INT:
		return "int";
	case CFG_BOOL:
		return "boolean";
	case CFG_LIST:
		return "list";
	case CFG_ENUM:
		return "enum";
	case CFG_CLASS:
		return "class";
	}
	return "?";
}

/* One key as a JSON object; NULL when out of memory. */
static cJSON *key_doc(const struct config_key *k)
{
	cJSON *o = cJSON_CreateObject(), *choices = NULL;
	char num[32];
	bool ok;

	if (o == NULL)
		return NULL;
	ok = cJSON_AddStringToObject(o, "name", k->name) != NULL &&
	     cJSON_AddStringToObject(o, "type", type_name(k->type)) != NULL &&
	     cJSON_AddBoolToObject(o, "required", (k->flags & CFG_REQUIRED) != 0) != NULL &&
	     cJSON_AddBoolToObject(o, "secret", (k->flags & CFG_SECRET) != 0) != NULL &&
	     cJSON_AddStringToObject(o, "doc", k->doc) != NULL;
	if (ok && k->def != NULL && !(k->flags & CFG_REQUIRED))
		ok = cJSON_AddStringToObject(o, "default", k->def) != NULL;
	/* As text: an int64 bound is not exact in a JSON number read as a double. */
	if (ok && k->type == CFG_INT) {
		snprintf(num, sizeof(num), "%lld", (long long)k->min);
		ok = cJSON_AddStringToObject(o, "min", num) != NULL;
		snprintf(num, sizeof(num), "%lld", (long long)k->max);
		ok = ok && cJSON_AddStringToObject(o, "max", num) != NULL;
	}
	if (ok && k->type == CFG_ENUM) {
		ok = (choices = cJSON_AddArrayToObject(o, "choices")) != NULL;
		for (const char *c = k->choices; ok && *c != '\0';) {
			size_t n = strcspn(c, "|");
			char word[128]; /* the longest choice is a few letters */
			cJSON *w;

			snprintf(word, sizeof(word), "%.*s", (int)n, c);
			w = cJSON_CreateString(word);
			if (w == NULL || !cJSON_AddItemToArray(choices, w)) {
				cJSON_Delete(w);
				ok = false;
			}
			c += n + (c[n] == '|');
		}
	}
	if (!ok) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

int config_table_doc(const struct config_key *table, struct cJSON *section)
{
	cJSON *keys = cJSON_AddArrayToObject(section, "keys");
	cJSON *ignored = cJSON_AddArrayToObject(section, "ignored");

	if (keys == NULL || ignored == NULL)
		return CONFIG_ERR_NOMEM;
	for (const struct config_key *k = table; k->name != NULL; k++) {
		cJSON *item = (k->flags & CFG_INERT) ? cJSON_CreateString(k->name) : key_doc(k);

		if (item == NULL ||
		    !cJSON_AddItemToArray((k->flags & CFG_INERT) ? ignored : keys, item)) {
			cJSON_Delete(item);
			return CONFIG_ERR_NOMEM;
		}
	}
	return 0;
}

void config_section_destroy(struct config_section *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nslots; i++) {
		free(s->slots[i].value);
		free(s->slots[i].where);
		free_items(&s->slots[i]);
	}
	for (size_t i = 0; i < s->npass; i++) {
		free(s->pass[i].key);
		free(s->pass[i].value);
		free(s->pass[i].where);
	}
	for (size_t i = 0; i < s->nnotices; i++)
		free(s->notices[i]);
	for (size_t i = 0; i < s->nkept; i++)
		free(s->kept[i].conf);
	free(s->kept);
	free(s->slots);
	free(s->pass);
	free(s->notices);
	free(s->file);
	free(s);
}

static bool same_text(const char *x, const char *y)
{
	return (x == NULL && y == NULL) || (x != NULL && y != NULL && strcmp(x, y) == 0);
}

/* The first table key of a that b lacks or holds with another value. */
static const char *diff_slots(const struct config_section *a, const struct config_section *b,
                              const char *const *ignore)
{
	for (size_t i = 0; i < a->nslots; i++) {
		const struct slot *sa = &a->slots[i], *sb = find_slot(b, sa->key->name);

		if (any_prefix(sa->key->name, ignore))
			continue;
		if (sb == NULL || !same_text(sa->value, sb->value))
			return sa->key->name;
	}
	return NULL;
}

/* The first pass-through key of a that b lacks or holds with another value. */
static const char *diff_pass(const struct config_section *a, const struct config_section *b,
                             const char *const *ignore)
{
	for (size_t i = 0; i < a->npass; i++) {
		const char *v = NULL;

		if (any_prefix(a->pass[i].key, ignore))
			continue;
		for (size_t j = 0; j < b->npass && v == NULL; j++)
			if (strcmp(a->pass[i].key, b->pass[j].key) == 0)
				v = b->pass[j].value;
		if (!same_text(a->pass[i].value, v))
			return a->pass[i].key;
	}
	return NULL;
}

const char *config_section_diff(const struct config_section *a, const struct config_section *b,
                                const char *const *ignore)
{
	const char *k = diff_slots(a, b, ignore);

	if (k == NULL)
		k = diff_slots(b, a, ignore);
	if (k == NULL)
		k = diff_pass(a, b, ignore);
	if (k == NULL)
		k = diff_pass(b, a, ignore);
	return k;
}
