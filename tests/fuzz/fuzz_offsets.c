/* fuzz_offsets: libFuzzer target for the offset-file parser (src/offsets/offsets_file.c
 * through offsets_open_file, the code skiff runs at start-up).
 *
 * The input is the newest generation ("offsets"); when it holds the line
 * "--log--", what follows is the journal ("offsets.log", applied over it);
 * then, after a line "--prev--", the previous one ("offsets.prev"). An input
 * whose first byte is '#' is sealed first: that byte is dropped and each file
 * gets the CRC-32C trailer skiff writes (each line of the log its tab and
 * CRC), so that mutations reach the JSON and content checks behind the
 * checksum instead of failing it. Beyond "no
 * crash, no leak, no undefined behaviour", a store that loads must survive a
 * round trip: one more entry is put and flushed, and loading again gives the
 * next generation with every entry byte for byte. A store that does not load
 * must say why. The files live in a private directory (TMPDIR, /dev/shm
 * preferred), removed at exit. */
#include "util/crc32c.h"
#include "offsets/offsets.h"
#include "offsets/offsets_file.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define MARK "\n--prev--\n"
#define LOGMARK "\n--log--\n"

static char dir[256], path[300], prev[300], tmp[300], lock[300], logp[300];

static void cleanup(void)
{
	unlink(logp);
	unlink(path);
	unlink(prev);
	unlink(tmp);
	unlink(lock);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/skiff-fuzz-offsets-XXXXXX", base ? base : "/tmp");
	if (mkdtemp(dir) == NULL) {
		perror("fuzz_offsets: mkdtemp");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/offsets", dir);
	snprintf(prev, sizeof(prev), "%s/offsets.prev", dir);
	snprintf(tmp, sizeof(tmp), "%s/offsets.tmp", dir);
	snprintf(lock, sizeof(lock), "%s/offsets.lock", dir);
	snprintf(logp, sizeof(logp), "%s/offsets.log", dir);
	atexit(cleanup);
	return 0;
}

static void put_file(const char *name, const uint8_t *data, size_t len, int seal)
{
	FILE *f = fopen(name, "wb");

	if (f == NULL || (len > 0 && fwrite(data, 1, len, f) != len))
		abort();
	if (seal && fprintf(f, ",\"crc32c\":\"%08x\"}\n", (unsigned)crc32c(0, data, len)) < 0)
		abort();
	if (fclose(f) != 0)
		abort();
}

/* Writes the log: sealed, each line gets a tab and its CRC-32C. */
static void put_log(const uint8_t *data, size_t len, int seal)
{
	FILE *f = fopen(logp, "wb");
	size_t at = 0;

	if (f == NULL)
		abort();
	while (at < len) {
		const uint8_t *nl = memchr(data + at, '\n', len - at);
		size_t n = nl ? (size_t)(nl - (data + at)) : len - at;

		if (n > 0 && fwrite(data + at, 1, n, f) != n)
			abort();
		if (seal && fprintf(f, "\t%08x", (unsigned)crc32c(0, data + at, n)) < 0)
			abort();
		if (nl != NULL && fputc('\n', f) == EOF)
			abort();
		at += n + (nl != NULL);
	}
	if (fclose(f) != 0)
		abort();
}

/* Loads again and compares with o (plus key -> value); aborts on a mismatch. */
static void check_round_trip(struct offsets *o, uint64_t gen)
{
	static const char key[] = "[\"fuzz-round-trip\",{\"p\":\"\\u00e9\"}]", val[] = "{\"n\":1}";
	struct offsets *again = NULL;
	struct offsets_stats st;
	char errbuf[2048];

	if (offsets_get(o, key) != NULL)
		return; /* the input holds our key already: nothing to add */
	if (offsets_put(o, key, val) != 0)
		return; /* full: the store is at its limits, which is fine */
	if (offsets_flush(o, errbuf, sizeof(errbuf)) != 0) {
		/* Only refusing a generation past the format's 2^53 is expected. */
		if (gen < (UINT64_C(1) << 53))
			abort();
		return;
	}
	if (offsets_open_file(path, &again, errbuf, sizeof(errbuf)) != 0) {
		fprintf(stderr, "fuzz_offsets: a store skiff wrote does not load: %s\n", errbuf);
		abort();
	}
	offsets_stats(again, &st);
	if (st.generation != gen + 1 || st.loaded_from_prev ||
	    offsets_count(again) != offsets_count(o))
		abort();
	for (size_t i = 0; i < offsets_count(o); i++) {
		const char *v = offsets_get(again, offsets_key(o, i));

		if (v == NULL || strcmp(v, offsets_value(o, i)) != 0)
			abort();
	}
	offsets_destroy(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int seal = size > 0 && data[0] == '#';
	const uint8_t *mark, *lmark, *start = data + seal;
	size_t first, base;
	struct offsets *o = NULL;
	struct offsets_stats st;
	char errbuf[2048] = "";

	size -= (size_t)seal;
	mark = memmem(start, size, MARK, sizeof(MARK) - 1);
	first = mark ? (size_t)(mark - start) : size;
	lmark = memmem(start, first, LOGMARK, sizeof(LOGMARK) - 1);
	base = lmark ? (size_t)(lmark - start) : first;
	unlink(prev);
	unlink(tmp);
	unlink(logp);
	put_file(path, start, base, seal);
	if (lmark != NULL)
		put_log(lmark + sizeof(LOGMARK) - 1, first - base - (sizeof(LOGMARK) - 1), seal);
	if (mark != NULL)
		put_file(prev, mark + sizeof(MARK) - 1, size - first - (sizeof(MARK) - 1), seal);
	if (offsets_open_file(path, &o, errbuf, sizeof(errbuf)) != 0) {
		if (o != NULL || errbuf[0] == '\0')
			abort();
		return 0;
	}
	offsets_stats(o, &st);
	for (size_t i = 0; i < offsets_count(o); i++)
		if (offsets_get(o, offsets_key(o, i)) != offsets_value(o, i))
			abort();
	check_round_trip(o, st.generation);
	offsets_destroy(o);
	return 0;
}
