/* offsetsbench: the CPU one offset flush costs, for tests/bench/
 * bench_offsets_flush.py.
 *
 *   offsetsbench DIR ENTRIES FLUSHES CHANGED
 *
 * Opens the file store DIR/offsets (made empty first), puts ENTRIES file
 * source offsets (keys and values as the file source writes them) and
 * flushes them (the base), then FLUSHES times changes CHANGED of them and
 * flushes (journal appends: the log compacts only past 4x the base).
 * Prints one line: "entries=N flushes=F changed=C cpu_us_median=M
 * cpu_us_mean=A" - the process CPU time (user + system, fsync included)
 * of each offsets_flush. Exits 0, or 2 with a message. */
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static void key_of(char *key, size_t len, long i)
{
	snprintf(key, len, "[\"file-source\",{\"filename\":\"/var/log/app/host-%06ld.log\"}]", i);
}

static void value_of(char *val, size_t len, long i, long pos)
{
	snprintf(val, len,
	         "{\"position\":%ld,\"dev\":2049,\"ino\":%ld,\"fp\":-4527388731920474624,"
	         "\"fplen\":%ld,\"born\":1764900000%09ld}",
	         pos, 1000000 + i, pos < 1024 ? pos : 1024, i);
}

int main(int argc, char **argv)
{
	char path[4096], key[128], val[256], err[512];
	struct offsets *o = NULL;
	long n, flushes, changed;
	int64_t *cost, sum = 0;
	int rc = 2;

	if (argc != 5 || (n = strtol(argv[2], NULL, 10)) <= 0 ||
	    (flushes = strtol(argv[3], NULL, 10)) <= 0 ||
	    (changed = strtol(argv[4], NULL, 10)) <= 0 || changed > n) {
		fprintf(stderr, "usage: offsetsbench DIR ENTRIES FLUSHES CHANGED\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/offsets", argv[1]);
	for (size_t e = 0; e < 4; e++) {
		static const char *const ext[] = {"", ".log", ".prev", ".lock"};
		char p[4200];

		snprintf(p, sizeof(p), "%s%s", path, ext[e]);
		(void)unlink(p);
	}
	cost = calloc((size_t)flushes, sizeof(*cost));
	if (cost == NULL || offsets_open_file(path, &o, err, sizeof(err)) != 0) {
		fprintf(stderr, "offsetsbench: %s\n", cost == NULL ? "out of memory" : err);
		goto out;
	}
	for (long i = 0; i < n; i++) {
		key_of(key, sizeof(key), i);
		value_of(val, sizeof(val), i, 76);
		if (offsets_put(o, key, val) != 0) {
			fprintf(stderr, "offsetsbench: put %ld failed\n", i);
			goto out;
		}
	}
	if (offsets_flush(o, err, sizeof(err)) != 0) {
		fprintf(stderr, "offsetsbench: %s\n", err);
		goto out;
	}
	for (long f = 0; f < flushes; f++) {
		int64_t t0;

		for (long c = 0; c < changed; c++) {
			long i = (f * changed + c) * 7919 % n;

			key_of(key, sizeof(key), i);
			value_of(val, sizeof(val), i, 152 + f);
			if (offsets_put(o, key, val) != 0) {
				fprintf(stderr, "offsetsbench: put failed\n");
				goto out;
			}
		}
		t0 = cpu_ns();
		if (offsets_flush(o, err, sizeof(err)) != 0) {
			fprintf(stderr, "offsetsbench: %s\n", err);
			goto out;
		}
		cost[f] = cpu_ns() - t0;
		sum += cost[f];
	}
	qsort(cost, (size_t)flushes, sizeof(*cost), cmp64);
	printf("entries=%ld flushes=%ld changed=%ld cpu_us_median=%.1f cpu_us_mean=%.1f\n", n,
	       flushes, changed, (double)cost[flushes / 2] / 1000.0,
	       (double)sum / (double)flushes / 1000.0);
	rc = 0;
out:
	offsets_destroy(o);
	free(cost);
	return rc;
}
