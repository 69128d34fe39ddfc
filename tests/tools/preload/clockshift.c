/* clockshift: an LD_PRELOAD library for the end-to-end tests that moves the
 * wall clock of the process it is loaded into by CLOCKSHIFT_SECONDS (signed;
 * unset: 0): a device whose clock is wrong (a board without an RTC before
 * NTP). CLOCK_REALTIME and CLOCK_REALTIME_COARSE, gettimeofday and time;
 * the monotonic clocks are left alone. Built without sanitizers: it is
 * loaded before the sanitizer runtime (ASAN_OPTIONS verify_asan_link_order=0). */
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);

static long long shift(void)
{
	const char *s = getenv("CLOCKSHIFT_SECONDS");

	return s != NULL ? strtoll(s, NULL, 10) : 0;
}

int clock_gettime(clockid_t id, struct timespec *ts)
{
	static clock_gettime_fn real;
	int rc;

	if (real == NULL)
		real = (clock_gettime_fn)dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE))
		ts->tv_sec += shift();
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec; /* glibc declares tv nonnull */
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return (time_t)-1;
	if (t != NULL)
		*t = ts.tv_sec;
	return ts.tv_sec;
}
