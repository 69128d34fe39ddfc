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

#endif
