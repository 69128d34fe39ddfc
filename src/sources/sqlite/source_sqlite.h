/* source_sqlite: the polling connector (Confluent's JdbcSourceConnector on a
 * SQLite database). This header is the source's face to
 * the rest of skiff: its ops table, its keys and their binding. Its state is
 * struct sqsrc (sqsrc.h) and its tables' struct sqtable (sqtable.h), which the
 * modules below act on; each module declares its functions (and the state it
 * alone keeps) in its own header, and a file includes the headers of what it
 * calls:
 *
 *   source_sqlite.c  config, lifecycle, scheduling, offsets (the ops table)
 *   sqdb.c           the database connection: open, replaced, busy back-off
 *   sqlts.c          timestamps: parsing and the skiff_ts() SQL function
 *   sqvalue.c        row values to Connect payloads and schemas
 *   sqseen.c         row fingerprints: the last timestamp's group, the last ids
 *   sqlayout.c       a table's columns and the SQL that reads it
 *   sqquery.c        running one bounded batch
 *   sqrows.c         a table's rows read and not yet handed out
 *   sqclock.c        the rows a wrong clock hides from the timestamp modes
 *   sqreuse.c        incrementing ids reused under skiff (checked each query)
 *   sqguard.c        paths that are not files, the system calls SQLite may
 *                    make for skiff, journal mode, --check's env
 *   sqvfs.c          the read-only VFS every database is opened through
 *   squri.c          the file behind an SQLite URI
 *   sqbacklog.c      the rows still unread (incrementing mode)
 *   sqcheck.c        offsets a person sends (KIP-875), checked
 *   sqlitelib.c      SQLite itself, loaded when first needed
 *
 * Each file exports only functions named after it (sqlts.c: sqlts_*). The
 * types they share keep short names (struct sqtable, struct sqcol, SQ_*)
 * and sit in the header of the file that defines their meaning (sqtable.h,
 * sqsrc.h and sqerr.h for the three every module shares).
 *
 * Everything here runs on the main loop. */
#ifndef SKIFF_SOURCE_SQLITE_H
#define SKIFF_SOURCE_SQLITE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "core/source.h"
#include "sources/sqlite/sqsrc.h"

/* The source (source_sqlite.c), as the registry lists it. */
extern const struct source_ops source_sqlite_ops;

/* The connector's keys (source_sqlite.c's table), bound once. */
struct sqlite_conf {
	const char *url, *query, *topic_prefix, *inc_name, *timezone;
	enum sqmode mode;
	struct config_list whitelist, include_list, ts_names, key_names;
	int64_t ts_initial, delay_ms, poll_ms, batch_max;
	bool ts_initial_given, validate_non_null;
};

/* The source's table (source_sqlite.c). */
extern const struct config_key source_sqlite_keys[];

/* Binds cfg (a connector section of this source's keys) into *out, whose
 * strings and lists cfg owns. Main loop, at open and check. */
static inline void source_sqlite_conf(const struct config_section *cfg, struct sqlite_conf *out)
{
	config_section_bind(cfg, source_sqlite_keys, out);
}

#endif
