/* eos: exactly-once (exactly.once.source.support=enabled, KIP-618): one
 * transaction at a time, for the whole worker, driven through the loop.
 *
 * A transaction is a state machine that eos_boundary moves at the end of
 * each turn; only the commit call itself (and init, abort) waits outside
 * the loop:
 *   EOS_IDLE -> EOS_OPEN (the first record: begin) -> EOS_DRAINING (the
 *   boundary came: reading pauses, eos_blocks; each turn looks whether every
 *   record is acknowledged and the store's write completed; a loop timer is
 *   the deadline) -> EOS_COMMITTING (the offset records produced; the
 *   producer's commit, one call bounded by 6 x offset.flush.timeout.ms,
 *   resumed in 1 s steps that feed the watchdog: librdkafka 2.0.2 resumed
 *   turn by turn with a short timeout failed its own assertion) ->
 *   committed: the offsets into the store (commits_store) -> EOS_IDLE.
 * Any failure aborts and the worker is to exit (eos_exit_code).
 *
 * Ownership: the worker owns the struct eos (eos_open, eos_close) and the
 * objects struct eos_env points to, which outlive it. Every function
 * accepts NULL (exactly-once off: no-ops, or the answer of a worker without
 * it). Main loop only. */
#ifndef SKIFF_EOS_H
#define SKIFF_EOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct commits;
struct conn;
struct eos;
struct loop;
struct offsets;
struct partitions;
struct settings;
struct sink;

/* What exactly-once sees of the worker: borrowed, alive as long as it. */
struct eos_env {
	struct loop *loop;
	struct partitions *parts;
	struct commits *commits;
	struct sink *(*sink)(void *ctx); /* the producer now (a rebuild swaps it) */
	const int64_t *flush_timeout;    /* offset.flush.timeout.ms (a reload changes it) */
	const bool *stopping;            /* the worker stops: waits shrink to the flush timeout */
	void *ctx;                       /* for the calls below */
	bool (*more_ready)(void *ctx);   /* a source has records ready now */
	void (*committed)(void *ctx);    /* a transaction committed (stops waiting for it) */
	void (*waiting)(void *ctx);      /* from a wait outside the loop (init, commit, abort): feed
	                                  * the watchdog, take signals */
};

/* The transaction's state (eos_state), see above. */
enum eos_state {
	EOS_IDLE,
	EOS_OPEN,
	EOS_DRAINING,
	EOS_COMMITTING,
};

/* When s enables exactly-once, makes *out (else *out = NULL), with the
 * boundary its connectors ask for (flush_interval behind an interval of
 * -1). Returns 0, or WORKER_ERR_NOMEM with errbuf. */
int eos_open(const struct settings *s, int64_t flush_interval, const struct eos_env *env,
             struct eos **out, char *errbuf, size_t errlen);

/* Claims the transactional.id (init_transactions: fences a previous
 * instance), once; blocks up to 6 x offset.flush.timeout.ms (before the
 * loop runs). 0 or a WORKER_ERR_* code with errbuf. */
int eos_fence(struct eos *e, char *errbuf, size_t errlen);

/* Fences if not done and arms the boundary, with the store o (the
 * generation of the offset records, its write in flight). 0 or WORKER_ERR_*. */
int eos_start(struct eos *e, struct offsets *o, char *errbuf, size_t errlen);

/* Opens a transaction unless one is open: before a record goes to the
 * producer. 0, or -1 when the worker is to exit (eos_boundary returns the
 * code). */
int eos_begin(struct eos *e);

/* A record of the open transaction was not delivered: it will abort. */
void eos_failed(struct eos *e);

/* True while records may not go to the producer: the transaction is past
 * its boundary (draining or committing). */
bool eos_blocks(const struct eos *e);

/* True when no transaction is between its boundary and its end (idle or
 * open): what a stop, a reload or a new producer waits for after
 * eos_boundary(e, true). */
bool eos_idle(const struct eos *e);

enum eos_state eos_state(const struct eos *e);

/* At the end of each turn: moves the transaction on. When it holds
 * something and its boundary came (force: now), it drains, then commits,
 * with the offsets of its records; the next opens with the next record (an
 * idle worker holds none). Returns 0, or the exit code after an abort or
 * the producer's fencing (and from then on: the worker is to exit). */
int eos_boundary(struct eos *e, bool force);

/* After a failed transaction or the producer's fatal error: the exit code,
 * 78 when another instance of the transactional.id took over (logged once,
 * saying what to fix), else 75; from then on eos_boundary returns it. */
int eos_exit_code(struct eos *e);

/* True when another instance of the transactional.id fenced this one: what
 * follows (records purged, a transaction that cannot end) is only that, and
 * eos_exit_code says it. */
bool eos_fenced(const struct eos *e);

/* True when the transaction holds offsets of c's partitions that the store
 * does not have yet (records acknowledged, not committed). */
bool eos_holds(const struct eos *e, const struct conn *c);

/* Commits the open transaction at the end of this turn, whatever the
 * boundary (a connector that stops waits for its offsets). */
void eos_commit_soon(struct eos *e);

/* After a reload: the boundary the connectors of s ask for now, logged when
 * it changed. */
void eos_reload(struct eos *e, const struct settings *s, int64_t flush_interval);

/* For a new producer (the old one's transaction committed: eos_idle):
 * fences; its first transaction opens with the next record. On failure the
 * next eos_boundary exits 75. */
void eos_reopen(struct eos *e);

/* Waits, before the loop runs, until a broker of the cluster answers
 * (servers: for the log), sleeping on sigfd (a signal ends the wait: 1);
 * *waited: it did not answer at once. 0 when it answers, or without
 * exactly-once. */
int eos_await_cluster(struct eos *e, const char *servers, int sigfd, bool *waited);

/* Frees e (NULL: nothing). */
void eos_close(struct eos *e);

#endif
