/* sqlitefake: what the test_source_sqlite_*.c unit tests share besides the
 * fake worker environment (sourceenv_fake.h): temporary databases and
 * polling helpers. Compiled into each of them by its
 * test_source_sqlite_*.cmake. */
#ifndef SKIFF_SQLITEFAKE_H
#define SKIFF_SQLITEFAKE_H

#include "core/source.h"
#include "sourceenv_fake.h"

#include <stddef.h>
#include <stdint.h>

extern const struct source_ops source_sqlite_ops;

/* The database of the running test (new_db) and the records of the last poll. */
extern char dbpath[512];
extern struct record recs[2048];

void commit(struct sourceenv_fake *f, void *ctx, const struct record *r);
void sql(const char *path, const char *text);
void new_db(const char *name);
int open_src(struct sourceenv_fake *f, const char *text, void **ctx, char *err, size_t errlen);
int64_t mono_ms(void);
int poll_once(void *ctx, struct source_batch *b, size_t max, char *err, size_t errlen);
char *payload_text(const struct record *r);
const char *field(const struct record *r, const char *name);
const char *offj(void *ctx, const struct record *r);
int64_t int_field(const struct record *r, const char *name);
size_t drain(struct sourceenv_fake *f, void *ctx, size_t max, int64_t *ids, size_t cap);
/* Inserts rows from..to into t(id, v) of dbpath ("row N"). */
void fill(int from, int to);

#endif
