/* sqlitelib: SQLite, loaded when a SQLite source is first opened.
 *
 * libsqlite3 is 0.26 MB of resident pages in every skiff process that links
 * it, SQLite source or not. So skiff does not link it: the SQLite source's
 * files include this header instead of <sqlite3.h>, and each sqlite3_*
 * function they call is a macro that calls through a table, filled by
 * dlopen() of SKIFF_SQLITE_SONAME (set by the build). Call sites read as
 * plain SQLite calls; the pointers have <sqlite3.h>'s exact types, so the
 * compiler checks each call as it would a direct one.
 *
 * The source's open calls sqlitelib_load(), which can fail with a message.
 * A call made before it (a unit test, a tool) loads the library then, and
 * aborts if it cannot. A function missing from the table below is a link
 * error (undefined sqlite3_...): add it to SQLITELIB_FUNCS and a #define.
 *
 * Main loop only (not thread-safe). Error convention: util/err.h. */
#ifndef SKIFF_SQLITELIB_H
#define SKIFF_SQLITELIB_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

/* True for the answers of a locked database, and of one that needs a writer
 * first: what only a writer can do stands in the way of a read (SQLITE_READONLY:
 * a hot journal to roll back, a -shm to recover or initialise: sqvfs.c lets
 * skiff do neither); the application will. The read is tried again later. */
static inline bool sqlitelib_busy(int rc)
{
	return rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_READONLY;
}

#ifndef SKIFF_SQLITE_SONAME
#define SKIFF_SQLITE_SONAME "libsqlite3.so.0"
#endif

/* The SQLite functions skiff, its unit tests and tools call. */
#define SQLITELIB_FUNCS(X)                                                                         \
	X(sqlite3_bind_blob)                                                                       \
	X(sqlite3_bind_double)                                                                     \
	X(sqlite3_bind_int)                                                                        \
	X(sqlite3_bind_int64)                                                                      \
	X(sqlite3_bind_null)                                                                       \
	X(sqlite3_bind_parameter_count)                                                            \
	X(sqlite3_bind_text)                                                                       \
	X(sqlite3_busy_timeout)                                                                    \
	X(sqlite3_close)                                                                           \
	X(sqlite3_column_blob)                                                                     \
	X(sqlite3_column_bytes)                                                                    \
	X(sqlite3_column_count)                                                                    \
	X(sqlite3_column_decltype)                                                                 \
	X(sqlite3_column_double)                                                                   \
	X(sqlite3_column_int)                                                                      \
	X(sqlite3_column_int64)                                                                    \
	X(sqlite3_column_name)                                                                     \
	X(sqlite3_column_text)                                                                     \
	X(sqlite3_column_type)                                                                     \
	X(sqlite3_column_value)                                                                    \
	X(sqlite3_create_function)                                                                 \
	X(sqlite3_data_count)                                                                      \
	X(sqlite3_db_config)                                                                       \
	X(sqlite3_errcode)                                                                         \
	X(sqlite3_errmsg)                                                                          \
	X(sqlite3_errstr)                                                                          \
	X(sqlite3_exec)                                                                            \
	X(sqlite3_extended_result_codes)                                                           \
	X(sqlite3_file_control)                                                                    \
	X(sqlite3_finalize)                                                                        \
	X(sqlite3_free)                                                                            \
	X(sqlite3_open)                                                                            \
	X(sqlite3_open_v2)                                                                         \
	X(sqlite3_prepare_v2)                                                                      \
	X(sqlite3_prepare_v3)                                                                      \
	X(sqlite3_progress_handler)                                                                \
	X(sqlite3_reset)                                                                           \
	X(sqlite3_result_int64)                                                                    \
	X(sqlite3_result_null)                                                                     \
	X(sqlite3_step)                                                                            \
	X(sqlite3_user_data)                                                                       \
	X(sqlite3_value_bytes)                                                                     \
	X(sqlite3_value_double)                                                                    \
	X(sqlite3_value_int64)                                                                     \
	X(sqlite3_value_text)                                                                      \
	X(sqlite3_value_type)                                                                      \
	X(sqlite3_vfs_find)                                                                        \
	X(sqlite3_vfs_register)                                                                    \
	X(sqlite3_wal_checkpoint_v2)

#define SQLITELIB_FIELD(fn) __typeof__(fn) *fn;
struct sqlitelib {
	SQLITELIB_FUNCS(SQLITELIB_FIELD)
};
#undef SQLITELIB_FIELD

/* Loads SKIFF_SQLITE_SONAME on the first call; later calls do nothing.
 * Returns 0, or -1 with errbuf "WHO: libsqlite3.so.0: why: a SQLite source needs it
 * (Debian: libsqlite3-0)": the library or one of its functions is missing. WHO
 * is where the connector that asks for it is configured ("file:line"). */
int sqlitelib_load(const char *who, char *errbuf, size_t errlen);

/* For the macros below: the table, loaded by sqlitelib_load(). */
extern struct sqlitelib sqlitelib_table;
extern bool sqlitelib_loaded;
/* Loads the library or exits with a message (a call before any open). */
void sqlitelib_need(void);

static inline const struct sqlitelib *sqlitelib_fns(void)
{
	if (__builtin_expect(!sqlitelib_loaded, 0))
		sqlitelib_need();
	return &sqlitelib_table;
}

/* sqlitelib.c defines SQLITELIB_TABLE to see the real names. */
#ifndef SQLITELIB_TABLE
/* NULL is a no-op here as in SQLite, and needs no library: a source whose
 * open failed before it loaded SQLite closes what it has, nothing. */
static inline int sqlitelib_finalize(sqlite3_stmt *st)
{
	return st == NULL ? SQLITE_OK : sqlitelib_fns()->sqlite3_finalize(st);
}

static inline int sqlitelib_close(sqlite3 *db)
{
	return db == NULL ? SQLITE_OK : sqlitelib_fns()->sqlite3_close(db);
}

#define sqlite3_finalize sqlitelib_finalize
#define sqlite3_close sqlitelib_close
#define sqlite3_bind_blob (sqlitelib_fns()->sqlite3_bind_blob)
#define sqlite3_bind_double (sqlitelib_fns()->sqlite3_bind_double)
#define sqlite3_bind_int (sqlitelib_fns()->sqlite3_bind_int)
#define sqlite3_bind_int64 (sqlitelib_fns()->sqlite3_bind_int64)
#define sqlite3_bind_null (sqlitelib_fns()->sqlite3_bind_null)
#define sqlite3_bind_parameter_count (sqlitelib_fns()->sqlite3_bind_parameter_count)
#define sqlite3_bind_text (sqlitelib_fns()->sqlite3_bind_text)
#define sqlite3_busy_timeout (sqlitelib_fns()->sqlite3_busy_timeout)
#define sqlite3_column_blob (sqlitelib_fns()->sqlite3_column_blob)
#define sqlite3_column_bytes (sqlitelib_fns()->sqlite3_column_bytes)
#define sqlite3_column_count (sqlitelib_fns()->sqlite3_column_count)
#define sqlite3_column_decltype (sqlitelib_fns()->sqlite3_column_decltype)
#define sqlite3_column_double (sqlitelib_fns()->sqlite3_column_double)
#define sqlite3_column_int (sqlitelib_fns()->sqlite3_column_int)
#define sqlite3_column_int64 (sqlitelib_fns()->sqlite3_column_int64)
#define sqlite3_column_name (sqlitelib_fns()->sqlite3_column_name)
#define sqlite3_column_text (sqlitelib_fns()->sqlite3_column_text)
#define sqlite3_column_type (sqlitelib_fns()->sqlite3_column_type)
#define sqlite3_column_value (sqlitelib_fns()->sqlite3_column_value)
#define sqlite3_create_function (sqlitelib_fns()->sqlite3_create_function)
#define sqlite3_data_count (sqlitelib_fns()->sqlite3_data_count)
#define sqlite3_db_config (sqlitelib_fns()->sqlite3_db_config)
#define sqlite3_errcode (sqlitelib_fns()->sqlite3_errcode)
#define sqlite3_errmsg (sqlitelib_fns()->sqlite3_errmsg)
#define sqlite3_errstr (sqlitelib_fns()->sqlite3_errstr)
#define sqlite3_exec (sqlitelib_fns()->sqlite3_exec)
#define sqlite3_extended_result_codes (sqlitelib_fns()->sqlite3_extended_result_codes)
#define sqlite3_file_control (sqlitelib_fns()->sqlite3_file_control)
#define sqlite3_free (sqlitelib_fns()->sqlite3_free)
#define sqlite3_open (sqlitelib_fns()->sqlite3_open)
#define sqlite3_open_v2 (sqlitelib_fns()->sqlite3_open_v2)
#define sqlite3_prepare_v2 (sqlitelib_fns()->sqlite3_prepare_v2)
#define sqlite3_prepare_v3 (sqlitelib_fns()->sqlite3_prepare_v3)
#define sqlite3_progress_handler (sqlitelib_fns()->sqlite3_progress_handler)
#define sqlite3_reset (sqlitelib_fns()->sqlite3_reset)
#define sqlite3_result_int64 (sqlitelib_fns()->sqlite3_result_int64)
#define sqlite3_result_null (sqlitelib_fns()->sqlite3_result_null)
#define sqlite3_step (sqlitelib_fns()->sqlite3_step)
#define sqlite3_user_data (sqlitelib_fns()->sqlite3_user_data)
#define sqlite3_value_bytes (sqlitelib_fns()->sqlite3_value_bytes)
#define sqlite3_value_double (sqlitelib_fns()->sqlite3_value_double)
#define sqlite3_value_int64 (sqlitelib_fns()->sqlite3_value_int64)
#define sqlite3_value_text (sqlitelib_fns()->sqlite3_value_text)
#define sqlite3_value_type (sqlitelib_fns()->sqlite3_value_type)
#define sqlite3_vfs_find (sqlitelib_fns()->sqlite3_vfs_find)
#define sqlite3_vfs_register (sqlitelib_fns()->sqlite3_vfs_register)
#define sqlite3_wal_checkpoint_v2 (sqlitelib_fns()->sqlite3_wal_checkpoint_v2)
#endif

#endif
