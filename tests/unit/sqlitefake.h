/* sqlitefake: what the test_source_sqlite_*.c unit tests share: a fake
 * worker environment (partitions, committed offsets, counters, the last log
 * line), temporary databases and polling helpers. Compiled into each of them
 * by its test_source_sqlite_*.cmake. */
#ifndef SKIFF_SQLITEFAKE_H
#define SKIFF_SQLITEFAKE_H

#include "core/source.h"

#include <stddef.h>
#include <stdint.h>

extern const struct source_ops source_sqlite_ops;

#define MAXP 8
#define MAXC 16

struct fake {
	struct source_env env;
	char *parts[MAXP];
	char *committed[MAXP];
	size_t nparts;
	const char *cnames[MAXC];
	uint64_t cvals[MAXC];
	size_t ncounts;
	char lastlog[1024];
	int nlogs;
	/* Optional: called with each line the source logs, as it logs it
	 * (from inside a query, for some). */
	void (*on_log)(struct fake *f, const char *line);
};

/* The database of the running test (new_db) and the records of the last poll. */
extern char dbpath[512];
extern struct record recs[2048];

uint64_t counted(struct fake *f, const char *name);
void fake_init(struct fake *f);
void fake_free(struct fake *f);
void commit(struct fake *f, void *ctx, const struct record *r);
void sql(const char *path, const char *text);
void new_db(const char *name);
int open_src(struct fake *f, const char *text, void **ctx, char *err, size_t errlen);
int64_t mono_ms(void);
int poll_once(void *ctx, struct source_batch *b, size_t max, char *err, size_t errlen);
char *payload_text(const struct record *r);
const char *field(const struct record *r, const char *name);
const char *offj(void *ctx, const struct record *r);
int64_t int_field(const struct record *r, const char *name);
size_t drain(struct fake *f, void *ctx, size_t max, int64_t *ids, size_t cap);
/* Inserts rows from..to into t(id, v) of dbpath ("row N"). */
void fill(int from, int to);

#endif
