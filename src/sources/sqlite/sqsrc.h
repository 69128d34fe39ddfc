/* sqsrc: the SQLite source's state, what its modules act on: the mode and keys bound from the
 * configuration, the tables (sqtable.h) and the database connection (sqdb.c). Main loop only. */
#ifndef SKIFF_SQSRC_H
#define SKIFF_SQSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "sources/sqlite/sqdb.h"
#include "sources/sqlite/sqlitelib.h"
#include "sources/sqlite/sqlts.h"
#include "sources/sqlite/sqvalue.h"

struct source_env;
struct sqtable;

/* mode=, in the order of its choices. */
enum sqmode { SQ_BULK, SQ_INCREMENTING, SQ_TIMESTAMP, SQ_TS_INC };

/* The connector. */
struct sqsrc {
	struct source_env *env;
	enum sqmode mode;
	char *path; /* database file (or URI when uri) */
	char *file; /* the file to watch: path, or the URI's file */
	bool uri;
	char *query;    /* NULL in table mode */
	char *inc_name; /* "" for the rowid */
	size_t nts;
	char **ts_names;
	size_t nkeys;
	char **key_names;
	bool validate_non_null;
	bool has_initial;
	int64_t initial_ms;
	int64_t delay_ms, poll_ms;
	size_t batch_max;

	struct sqtable *tables;
	size_t ntables;
	size_t rr; /* next table to consider first */

	struct sqdb conn; /* the database (sqdb.c) */

	cJSON **owned; /* payloads and keys of the last poll */
	size_t nowned, capowned;
	struct sqvalue_stats stats;
	struct sqlts_clock clock; /* what skiff_ts() counts (sqclock.c) */
	char *pending;            /* an error to report at the next poll */
	bool pending_config;      /* it is the data's or the configuration's: exit 78 */
};

/* How long one attempt waits for a lock inside SQLite (sqdb.c). */
#define SQ_BUSY_TIMEOUT_MS 100

#endif
