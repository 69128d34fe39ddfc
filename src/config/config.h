/* config: the property table. Every key skiff understands is one row of a
 * struct config_key table: name, type, default, range, one line of doc. A
 * generic loader validates a struct props against a table (or several) and
 * yields a struct config_section; unknown keys are errors with file:line.
 *
 * The worker table holds Connect's worker keys (connect-standalone.properties);
 * each source connector adds its own table through struct source_ops. Keys
 * under "producer." and "kafka." pass through to librdkafka, which validates
 * them itself. Secrets are never printed: config_display() masks them.
 *
 * Values are trimmed as Connect's ConfigDef trims them. Leaf module: errors
 * come back in errbuf as "file:line: why". Main loop / start-up only. */
#ifndef SKIFF_CONFIG_H
#define SKIFF_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/err.h"

struct cJSON;
struct props;

enum config_type {
	CFG_STRING,
	CFG_INT,   /* 64-bit, checked against [min, max] */
	CFG_BOOL,  /* true | false, any case */
	CFG_LIST,  /* comma-separated, items trimmed, empty items dropped */
	CFG_ENUM,  /* one of the '|'-separated words in choices */
	CFG_CLASS, /* a Java class name or alias; kept as text */
};

enum config_flags {
	CFG_REQUIRED = 1 << 0, /* no default: absence is an error */
	CFG_SECRET = 1 << 1,   /* never printed; shown as [hidden] */
	CFG_INERT = 1 << 2,    /* a Connect key that means nothing here: accepted with a notice */
};

struct config_key {
	const char *name;
	enum config_type type;
	const char *def; /* default as text; NULL: no default (absent) */
	int64_t min, max;
	const char *choices; /* CFG_ENUM: "a|b|c" */
	unsigned flags;
	const char *doc;
};

/* A validated set of values for one or more tables. */
struct config_section;

/* What to load from one properties file. */
struct config_spec {
	const char *prefix; /* only keys starting with it, prefix stripped; "" for all */
	const struct config_key *const *tables; /* NULL-name row ends each table */
	size_t ntables;
	const char *const *passthrough; /* NULL-terminated key prefixes kept verbatim */
	const char *const *skip;        /* NULL-terminated key prefixes ignored here */
	const char *const *presets;     /* NULL-terminated key, value pairs set before the
	                                 * file is read (e.g. an inline connector's name) */
	const char *presets_where;      /* shown as their origin in messages */
};

/* Failures of config_section_load, config_section_set and config_table_doc
 * (util/err.h). */
enum {
	CONFIG_OK = 0,
	CONFIG_ERR = -1,       /* a bad key or value: a person must act */
	CONFIG_ERR_NOMEM = -2, /* out of memory: a restart may pass */
};

/* Validates the entries of p selected by spec against its tables. Keys
 * matching a pass-through prefix are kept for config_passthrough_*(); keys
 * matching a skip prefix are left for another section; any other unknown key
 * is an error. Inert keys are accepted and reported by config_notice(). Returns
 * 0 and *out (owned by the caller, config_section_destroy), or CONFIG_ERR or
 * CONFIG_ERR_NOMEM with "file:line: why" in errbuf. */
int config_section_load(const struct props *p, const struct config_spec *spec,
                        struct config_section **out, char *errbuf, size_t errlen);

/* Sets a key that did not come from a file (e.g. a connector's name taken
 * from its inline prefix). The key must be in the tables; value is validated.
 * Returns 0 or a CONFIG_ERR* code with errbuf. */
int config_section_set(struct config_section *s, const char *name, const char *value,
                       const char *where, char *errbuf, size_t errlen);

/* Typed accessors. name must be a key of one of the section's tables (an
 * unknown name is a programming error and aborts). Strings are owned by the
 * section. config_str returns NULL for an absent key without default. */
const char *config_str(const struct config_section *s, const char *name);
int64_t config_int(const struct config_section *s, const char *name);
bool config_bool(const struct config_section *s, const char *name);
/* CFG_LIST: number of items and the i-th item. */
size_t config_list_len(const struct config_section *s, const char *name);
const char *config_list_item(const struct config_section *s, const char *name, size_t i);

/* True when the key was set in a file (not just defaulted). */
bool config_is_set(const struct config_section *s, const char *name);

/* "file:line" where name was set, or "file" when defaulted; for messages.
 * Points to storage in s (valid until destroy) */
const char *config_where(const struct config_section *s, const char *name);

/* The value of a table key as a person may see it: "[hidden]" for a secret
 * (by its flag, its name, or because a config provider gave it), NULL when
 * absent. Owned by s. */
const char *config_shown(const struct config_section *s, const char *name);

/* Pass-through entries (key as written, including its prefix). */
size_t config_passthrough_count(const struct config_section *s);
const char *config_passthrough_key(const struct config_section *s, size_t i);
const char *config_passthrough_value(const struct config_section *s, size_t i);
const char *config_passthrough_where(const struct config_section *s, size_t i);
/* Its value as config_shown shows it. */
const char *config_passthrough_shown(const struct config_section *s, size_t i);

/* The keys set in the files, as a person may see them: table keys in table
 * order (inert ones included), then pass-through entries. Fills *key and
 * *shown (the value through config_display: secrets "[hidden]"; both owned by
 * s), advances *cursor (start at 0) and returns true; false past the last.
 * For Connect's GET /connectors/{name}/config. */
bool config_next_set(const struct config_section *s, size_t *cursor, const char **key,
                     const char **shown);

/* Inert keys that were set: "file:line: key" lines to log as notices. */
size_t config_notice_count(const struct config_section *s);
const char *config_notice(const struct config_section *s, size_t i);

/* The value to show a person: "[hidden]" for secrets (flag or a name that
 * looks like one: *.password, *secret*, sasl.jaas.config, ssl.key.*), else the value. */
const char *config_display(const char *key, const char *value, unsigned flags);

/* True when key names a secret by its shape (see config_display). */
bool config_key_is_secret(const char *key);

/* Adds a table's documentation to section (a JSON object of --help-config's
 * document, help.h): "keys", one object per key (name, type, required,
 * default, min and max as decimal text, choices, secret, doc), and
 * "ignored", the names of the Connect keys accepted with a notice. Returns 0
 * or CONFIG_ERR_NOMEM (section then holds part of it; the caller deletes it). */
int config_table_doc(const struct config_key *table, struct cJSON *section);

/* The first key whose value differs between a and b (a table key's value,
 * set or defaulted, or a pass-through entry present in one only or with
 * another value), skipping keys matching a prefix in ignore (NULL-terminated;
 * may be NULL). Returns that key's name (owned by a or b), or NULL when they
 * are equal. For a reload: which settings changed. */
const char *config_section_diff(const struct config_section *a, const struct config_section *b,
                                const char *const *ignore);

void config_section_destroy(struct config_section *s);

#endif
