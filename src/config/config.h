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
	/* The member of the module's settings struct the value is bound to
	 * (CFG_FIELD): its offset and size (0: not bound; inert keys, and the
	 * tables not migrated yet). The member's type follows the key's:
	 * CFG_STRING, CFG_CLASS: const char * (NULL when absent); CFG_INT:
	 * int64_t; CFG_BOOL: bool; CFG_ENUM: an enum whose constants follow
	 * choices in order (-1 when absent: give such an enum a -1 constant);
	 * CFG_LIST: struct config_list. */
	size_t field, size;
	/* offsetof + 1 of a bool member set true when the key was given (not
	 * defaulted) (CFG_FIELD_SET); 0: none. */
	size_t set_at;
};

/* A row's binding: CFG_FIELD(struct file_conf, batch_size) as the row's
 * last element; CFG_FIELD_SET also records in bool member s whether the key
 * was given. CFG_NOFIELD for inert keys (and unmigrated tables). */
#define CFG_FIELD(type, m) offsetof(type, m), sizeof(((type *)0)->m), 0
#define CFG_FIELD_SET(type, m, s) offsetof(type, m), sizeof(((type *)0)->m), offsetof(type, s) + 1
#define CFG_NOFIELD 0, 0, 0
/* The row ending a table. */
#define CFG_END                                                                                    \
	{                                                                                          \
		NULL, 0, NULL, 0, 0, NULL, 0, NULL, CFG_NOFIELD                                    \
	}

/* A CFG_LIST value as bound: n items, trimmed, none empty, and the value as
 * written (trimmed; NULL when absent); owned by the section. */
struct config_list {
	size_t n;
	const char *const *items;
	const char *text;
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

/* Fills the members of conf (a module's settings struct) that the rows of
 * table bind (CFG_FIELD), from s, whose tables include table. Strings and
 * lists point into s: conf is valid while s is. Called once, where the
 * section is loaded or the module opens: its values are then read as
 * fields, never looked up by name. A row whose member's size does not fit
 * its type, or a table not in s, is a programming error and aborts. */
void config_section_bind(const struct config_section *s, const struct config_key *table,
                         void *conf);

/* config_section_bind into a struct of size bytes that s allocates and
 * keeps (freed with s; bound again by config_section_set), for settings
 * read by many modules through the section (the worker's, a connector's).
 * Returns 0 or CONFIG_ERR_NOMEM. */
int config_section_keep(struct config_section *s, const struct config_key *table, size_t size);

/* The struct config_section_keep bound for table (owned by s). A section
 * that keeps none for table is a programming error and aborts. */
const void *config_section_kept(const struct config_section *s, const struct config_key *table);

/* Checks that table binds a struct of size bytes: every row but inert ones
 * has a member, of the size its type takes, inside the struct, no two rows
 * share one (nor a CFG_FIELD_SET flag). Returns NULL, or the name of the
 * first row that fails. For the unit test that walks every table. */
const char *config_table_check(const struct config_key *table, size_t size);

/* Typed accessors (being replaced by config_section_bind, issue 27). name must be a key of one of
 * the section's tables (an unknown name is a programming error and aborts). Strings are owned by
 * the section. config_str returns NULL for an absent key without default. */
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
