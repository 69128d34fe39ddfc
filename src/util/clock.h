/* clock: the two clocks skiff reads. Monotonic milliseconds for deadlines,
 * intervals and rate limits (never jumps with the wall clock); wall-clock
 * nanoseconds for what is compared with times written by others (file
 * mtimes, SQLite timestamps, an offset's birth). Any thread. */
#ifndef SKIFF_CLOCK_H
#define SKIFF_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t clock_mono_ms(void);

/* CLOCK_REALTIME in nanoseconds since the epoch. */
int64_t clock_wall_ns(void);

/* The wall clock as the kernel stamps files (CLOCK_REALTIME_COARSE), in
 * nanoseconds: a file written after this reading has an mtime (and birth) at
 * or after it. CLOCK_REALTIME can be ahead of the stamp of a file written
 * later in the same tick (up to a jiffy), which makes "written since" miss it. */
int64_t clock_file_ns(void);

#endif
