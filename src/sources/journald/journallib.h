/* journallib: libsystemd's sd-journal, loaded when a journald source is
 * first opened.
 *
 * libsystemd and what only it needs (libgcrypt, libgpg-error, libcap) are
 * 0.56 MB of resident pages in every skiff process that links them, journald
 * source or not. So skiff does not link libsystemd: the journald source's
 * files include this header instead of <systemd/sd-journal.h>, and each
 * sd_* function they call is a macro that calls through a table, filled by
 * dlopen() of SKIFF_SYSTEMD_SONAME (set by the build). Call sites read as
 * plain sd-journal calls, checked by the compiler against its exact types.
 *
 * The source's open calls journallib_load(), which can fail with a message;
 * a call made before it loads the library then, and exits if it cannot. A
 * function missing from the table is a link error (undefined sd_...): add
 * it to JOURNALLIB_FUNCS and a #define.
 *
 * Main loop only (not thread-safe). Error convention: util/err.h. */
#ifndef SKIFF_JOURNALLIB_H
#define SKIFF_JOURNALLIB_H

#include <stdbool.h>
#include <stddef.h>

#include <systemd/sd-id128.h>
#include <systemd/sd-journal.h>

#ifndef SKIFF_SYSTEMD_SONAME
#define SKIFF_SYSTEMD_SONAME "libsystemd.so.0"
#endif

/* The libsystemd functions skiff calls (SD_JOURNAL_FOREACH_DATA's too). */
#define JOURNALLIB_FUNCS(X)                                                                        \
	X(sd_id128_get_machine)                                                                    \
	X(sd_id128_to_string)                                                                      \
	X(sd_journal_add_conjunction)                                                              \
	X(sd_journal_add_disjunction)                                                              \
	X(sd_journal_add_match)                                                                    \
	X(sd_journal_close)                                                                        \
	X(sd_journal_enumerate_available_data)                                                     \
	X(sd_journal_get_cursor)                                                                   \
	X(sd_journal_get_data)                                                                     \
	X(sd_journal_get_events)                                                                   \
	X(sd_journal_get_fd)                                                                       \
	X(sd_journal_get_monotonic_usec)                                                           \
	X(sd_journal_get_realtime_usec)                                                            \
	X(sd_journal_get_timeout)                                                                  \
	X(sd_journal_next)                                                                         \
	X(sd_journal_open)                                                                         \
	X(sd_journal_open_directory)                                                               \
	X(sd_journal_previous)                                                                     \
	X(sd_journal_process)                                                                      \
	X(sd_journal_restart_data)                                                                 \
	X(sd_journal_seek_cursor)                                                                  \
	X(sd_journal_seek_head)                                                                    \
	X(sd_journal_seek_tail)                                                                    \
	X(sd_journal_set_data_threshold)                                                           \
	X(sd_journal_test_cursor)

#define JOURNALLIB_FIELD(fn) __typeof__(fn) *fn;
struct journallib {
	JOURNALLIB_FUNCS(JOURNALLIB_FIELD)
};
#undef JOURNALLIB_FIELD

/* Loads SKIFF_SYSTEMD_SONAME on the first call; later calls do nothing.
 * Returns 0, or -1 with errbuf "WHO: libsystemd.so.0: why: a journald source needs it
 * (Debian: libsystemd0)": the library or one of its functions is missing. WHO
 * is where the connector that asks for it is configured ("file:line"). */
int journallib_load(const char *who, char *errbuf, size_t errlen);

/* For the macros below: the table, loaded by journallib_load(). */
extern struct journallib journallib_table;
extern bool journallib_loaded;
/* Loads the library or exits with a message (a call before any open). */
void journallib_need(void);

static inline const struct journallib *journallib_fns(void)
{
	if (__builtin_expect(!journallib_loaded, 0))
		journallib_need();
	return &journallib_table;
}

/* journallib.c defines JOURNALLIB_TABLE to see the real names. */
#ifndef JOURNALLIB_TABLE
/* NULL is a no-op here as in libsystemd, and needs no library: a source
 * whose open failed before it loaded libsystemd closes nothing. */
static inline void journallib_close(sd_journal *j)
{
	if (j != NULL)
		journallib_fns()->sd_journal_close(j);
}

#define sd_journal_close journallib_close
#define sd_id128_get_machine (journallib_fns()->sd_id128_get_machine)
#define sd_id128_to_string (journallib_fns()->sd_id128_to_string)
#define sd_journal_add_conjunction (journallib_fns()->sd_journal_add_conjunction)
#define sd_journal_add_disjunction (journallib_fns()->sd_journal_add_disjunction)
#define sd_journal_add_match (journallib_fns()->sd_journal_add_match)
#define sd_journal_enumerate_available_data (journallib_fns()->sd_journal_enumerate_available_data)
#define sd_journal_get_cursor (journallib_fns()->sd_journal_get_cursor)
#define sd_journal_get_data (journallib_fns()->sd_journal_get_data)
#define sd_journal_get_events (journallib_fns()->sd_journal_get_events)
#define sd_journal_get_fd (journallib_fns()->sd_journal_get_fd)
#define sd_journal_get_monotonic_usec (journallib_fns()->sd_journal_get_monotonic_usec)
#define sd_journal_get_realtime_usec (journallib_fns()->sd_journal_get_realtime_usec)
#define sd_journal_get_timeout (journallib_fns()->sd_journal_get_timeout)
#define sd_journal_next (journallib_fns()->sd_journal_next)
#define sd_journal_open (journallib_fns()->sd_journal_open)
#define sd_journal_open_directory (journallib_fns()->sd_journal_open_directory)
#define sd_journal_previous (journallib_fns()->sd_journal_previous)
#define sd_journal_process (journallib_fns()->sd_journal_process)
#define sd_journal_restart_data (journallib_fns()->sd_journal_restart_data)
#define sd_journal_seek_cursor (journallib_fns()->sd_journal_seek_cursor)
#define sd_journal_seek_head (journallib_fns()->sd_journal_seek_head)
#define sd_journal_seek_tail (journallib_fns()->sd_journal_seek_tail)
#define sd_journal_set_data_threshold (journallib_fns()->sd_journal_set_data_threshold)
#define sd_journal_test_cursor (journallib_fns()->sd_journal_test_cursor)
#endif

#endif
