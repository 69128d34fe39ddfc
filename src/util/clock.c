/* clock: the monotonic and wall clocks. clock_gettime cannot fail for these
 * two clock ids on Linux, so there is no error to pass on. */
#include "util/clock.h"

#include <time.h>

/* CMakeLists.txt sets _TIME_BITS=64: on 32-bit glibc 2.34+ (Debian 12's armhf)
 * a time_t of 32 bits would wrap in 2038. */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
_Static_assert(sizeof(time_t) == 8, "time_t is 64 bits (_TIME_BITS=64)");
#endif

int64_t clock_mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
