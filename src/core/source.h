/* source: the interface every source connector implements.
 *
 * A connector fills one `const struct source_ops`; the worker never switches
 * on the kind of source. Adding a source is adding a file and one line in
 * source_registry.c.
 *
 * The path of a record: the worker calls poll(), which returns records that
 * point into memory the source owns until its next poll() or close(); the
 * worker converts and produces them, and their offsets advance the offset
 * store only once Kafka acknowledged them, over the contiguous acked prefix
 * of each source partition. A source never moves the stored offset itself: at
 * open it asks the environment for the committed offset of each partition and
 * reads from there. All calls come from the main loop. */
#ifndef SKIFF_SOURCE_H
#define SKIFF_SOURCE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util/err.h"

struct config_key;
struct config_section;
struct partition; /* worker-owned handle of one source partition */
struct stats_desc;

/* The part of an offset that does not fit in four integers (a journald
 * cursor; a file's birth time and where skiff let go of it): an object the
 * source allocates, embedding struct src_ref at its start, and renders in
 * offset_json(). It is reference-counted so that it lives exactly as long as
 * some offset names it, and nothing is ever left out: the worker holds a
 * reference for each copy it keeps (a record in flight, a partition's
 * committable offset) and drops it when done. free must not need the
 * source's context (the last reference may go after close()). Main loop
 * only: the count is a plain integer. */
struct src_ref {
	uint32_t refs;
	void (*free)(struct src_ref *ref);
};

/* A source offset, a value the source owns completely: four integers whose
 * meaning is the source's (file: position and file identity; sqlite:
 * incrementing id, timestamp ms, nanos), and optionally a reference to more.
 * The source turns it into Connect's JSON with offset_json(). 40 bytes: the
 * worker keeps one per record in flight. */
struct src_offset {
	int64_t v[4];
	struct src_ref *ref; /* NULL: none */
};

/* Sets r's count to 1 (the creator's reference). */
static inline void src_ref_init(struct src_ref *r, void (*free_fn)(struct src_ref *ref))
{
	r->refs = 1;
	r->free = free_fn;
}

/* Takes a reference to r (NULL: none); returns r. */
static inline struct src_ref *src_ref_hold(struct src_ref *r)
{
	if (r != NULL)
		r->refs++;
	return r;
}

/* Gives a reference back; the last one frees r. Accepts NULL. */
static inline void src_ref_drop(struct src_ref *r)
{
	if (r != NULL && --r->refs == 0)
		r->free(r);
}

enum value_kind {
	VALUE_NULL,
	VALUE_STRING, /* bytes/len: a line, passed through unchanged */
	VALUE_STRUCT, /* payload: a cJSON object; schema: Connect's schema JSON for it */
	/* A struct already written as JsonConverter writes it: bytes/len its
	 * payload, schema_json its schema; payload and schema NULL. Only from
	 * a source whose env says json_values (json_keys for keys). */
	VALUE_JSON,
};

struct record_value {
	enum value_kind kind;
	const char *bytes;
	size_t len;
	const cJSON *payload;
	const cJSON *schema;
	/* Optional: schema as convert_schema_json() renders it, owned like
	 * schema. A source that reuses one schema object for many records
	 * renders it once and saves the converter that work per record. */
	const char *schema_json;
};

struct record_header {
	const char *name;
	const void *value;
	size_t len;
};

#define RECORD_MAX_HEADERS 4

struct record {
	struct partition *part; /* from source_env.partition() */
	/* The offset *after* this record. Its ref, if any, is the source's
	 * (held until its next poll() or close(), like the bytes); the worker
	 * holds its own while it keeps a copy. */
	struct src_offset offset;
	const char *topic; /* the topic; set by the source, valid like the record */
	struct record_value key;
	struct record_value value;
	int64_t timestamp_ms; /* 0: now */
	size_t nheaders;
	struct record_header headers[RECORD_MAX_HEADERS];
};

/* What the worker offers a source. */
struct source_env {
	void *opaque;
	const char *connector; /* connector name (from `name`) */
	/* Returns the partition handle for partition_json (a compact JSON object
	 * such as {"filename":"/var/log/a"}), creating it on first use; NULL when
	 * the partition limit is reached or memory is short. Handles live until
	 * the worker is destroyed. */
	struct partition *(*partition)(struct source_env *env, const char *partition_json);
	/* The committed offset of partition p as compact JSON, or NULL when none
	 * was ever committed. Owned by the worker, valid until the next call. */
	const char *(*committed)(struct source_env *env, struct partition *p);
	/* Optional (NULL: not offered). Calls fn(arg, partition_json,
	 * offset_json) for each offset stored under this connector's name,
	 * whether or not the source has named its partition this run: the
	 * partitions of files gone since (the file source resumes those its
	 * patterns still match). Both strings are compact JSON, valid during
	 * the call only; no partition handle is made. One pass over the store
	 * (at most OFFSETS_MAX_ENTRIES entries), for open(): fn must not call
	 * partition() or anchor() (the store may change under the walk); it
	 * copies what it wants to act on. */
	void (*stored)(struct source_env *env,
	               void (*fn)(void *arg, const char *partition_json, const char *offset_json),
	               void *arg);
	/* Optional (NULL: none). Stores *off as p's committed offset when p has
	 * none yet (never over one), and has it written promptly, together with
	 * every other anchor of the same turn: where reading of a partition
	 * starts, before anything of it was read, so that a restart starts
	 * there too (the file source: the file and position it began at). It
	 * names no record, so it never passes an unacknowledged one. off->ref
	 * is only read. */
	void (*anchor)(struct source_env *env, struct partition *p, const struct src_offset *off);
	/* Optional (NULL: none; use source_counters()). Registers the
	 * counter d (static: name, help, STATS_F_LOG for an event a person
	 * should see) in the stats registry, labelled with the connector, so
	 * that exporters list it with its help from the start. Returns 0 or
	 * SOURCE_ERR_NOMEM (also for a name registered with another help:
	 * said in the log). */
	int (*counter)(struct source_env *env, const struct stats_desc *d);
	/* Counts an event the user should see in the status report (e.g.
	 * "lines_truncated"); name must be a static string, registered with
	 * counter() (else it gets a generic help text). */
	void (*count)(struct source_env *env, const char *name, uint64_t n);
	/* Optional (NULL: none). Sets the gauge name (a static string,
	 * registered with counter() as a STATS_GAUGE) to value. */
	void (*set)(struct source_env *env, const char *name, uint64_t value);
	/* Optional (NULL: not offered). Adds n to the counter d of partition p,
	 * or sets the gauge d to n (d->type), labelled with the connector and
	 * p's partition: for what is known per partition (a table's rows the
	 * clock hides). d is static; STATS_F_LOG shows it in the log (when it
	 * first is not 0, then at offset flushes) and in `skiff status`. */
	void (*partition_stat)(struct source_env *env, struct partition *p,
	                       const struct stats_desc *d, uint64_t n);
	/* Logs one line prefixed with the connector's name; level is a
	 * log.h enum log_level (LOG_WARN, LOG_INFO, ...). */
	void (*log)(struct source_env *env, int level, const char *fmt, ...)
	    __attribute__((format(printf, 3, 4)));
	/* True when no transform reads this connector's records and its value
	 * (key) converter is JsonConverter: poll() may hand a struct value
	 * (key) as VALUE_JSON, rendered once, instead of a cJSON tree. Fixed
	 * for the life of the source (a change of converter or transforms
	 * opens it again). */
	bool json_values, json_keys;
	/* The most bytes of one record's value, as the source reads them, that
	 * surely fit one Kafka record after the connector's value converter
	 * (0: not known): message.max.bytes, less room for the key, headers and
	 * envelope, over what the converter can make of one byte (JsonConverter
	 * 6, "\u0001"; StringConverter 3, an invalid byte becoming U+FFFD;
	 * ByteArrayConverter 1). Transforms can add more. */
	size_t value_bytes_max;
	/* A file of the source's own (NULL: none, the offsets are in a topic
	 * alone), in the state directory beside the offsets file
	 * (<offset.storage.file.filename>.state-<connector name, escaped>):
	 * what the source must know after a kill -9 that no offset says (the
	 * file source: the rotated files it held). Written as the offsets are
	 * (crash-safe), at most every state_interval_ms
	 * (offset.flush.interval.ms) and only when it changed. Owned by the
	 * worker, valid until close(). */
	const char *state_file;
	int64_t state_interval_ms;
	/* Optional (NULL: no guard, every local connector). Whether the file
	 * at real_path (where an opened file really is: links resolved) may be
	 * read: 0 yes, else not, with the reason in why ("outside
	 * fleet.allow.files (/var/log/app/x.log)"). A source calls it for every
	 * file it opens before it reads a byte of it, and fails (poll()'s
	 * SOURCE_ERR_CONFIG) on a refusal, never skipping silently. From the
	 * connector's guard (struct source_guard). */
	int (*allow_path)(struct source_env *env, const char *real_path, char *why, size_t len);
};

/* What a connector may touch at run time beyond what its configuration
 * says, for the checks a configuration check cannot make (a link to
 * outside, a topic a transform computes): set on a connector's settings
 * (connector_settings.guard) by the layer that made it (the fleet:
 * fleetallow_guard), NULL for every other. Each check returns 0 (allowed)
 * or not, with the reason in why; arg is borrowed for the guard's life. */
struct source_guard {
	/* NULL: any path. real_path: absolute, links resolved. */
	int (*allow_path)(const void *arg, const char *real_path, char *why, size_t len);
	/* NULL: any topic. A record's final topic (after its transforms): the
	 * pipeline asks once per new topic of a connector (cached, bounded). */
	int (*allow_topic)(const void *arg, const char *topic, char *why, size_t len);
	const void *arg;
};

/* Registers n counters d[] through env->counter when the env offers it
 * (source.h's slot; unit tests' envs may not). Returns 0 or
 * SOURCE_ERR_NOMEM. For open(). */
int source_counters(struct source_env *env, const struct stats_desc *d, size_t n);

/* Failures of open(), poll() and check(); 0 is success, never a count
 * (error convention: util/err.h). From open() SOURCE_ERR_CONFIG (or
 * SOURCE_ERR) makes skiff exit 78 and SOURCE_ERR_NOMEM 75. From poll() each
 * stops the connector, its offset before the record that could not be read,
 * and the code decides the exit code once no connector runs: 75 when any
 * stopped with SOURCE_ERR or SOURCE_ERR_NOMEM, 78 when all stopped with
 * SOURCE_ERR_CONFIG. From check() (--check only, no connector runs)
 * SOURCE_ERR_CONFIG fails the check and SOURCE_ERR (or _NOMEM) is logged as
 * "not checked". */
enum {
	SOURCE_OK = 0,
	SOURCE_ERR = -1,        /* may pass (I/O error, lock): a restart may succeed (75) */
	SOURCE_ERR_CONFIG = -2, /* a person must act (bad column, bad query): exit 78 */
	SOURCE_ERR_NOMEM = -3,  /* out of memory: a restart may succeed (75) */
	/* check_offset: a well-formed partition this connector does not read
	 * (now): Connect stores its offset (the REST API does too), `skiff
	 * offsets` refuses it as a likely typo. */
	SOURCE_ERR_FOREIGN = -4,
};

struct source_batch {
	struct record *records; /* worker-owned array of max entries */
	size_t max;
	size_t n;  /* filled by poll */
	bool more; /* set by poll: records are ready now, call again soon */
};

/* What a backlog counts (source_ops.backlog). */
enum source_unit {
	SOURCE_UNIT_BYTES, /* bytes of a file after the read position */
	SOURCE_UNIT_ROWS,  /* rows of a table after the last one read */
};

/* How often a source without timeout_ms is polled while it has no records
 * ready. */
#define SOURCE_DEFAULT_POLL_MS 1000

/* While reading pauses, how long a source's descriptors rest after each
 * watch() (source_ops.watch): a log written to all the time wakes the loop
 * at most this often. */
#define SOURCE_WATCH_REST_MS 100

/* What a connector's configuration names outside skiff
 * (source_ops.resources, source_ops.key_names): what a configuration sent
 * from afar may name only as far as the device's fleet.allow.* lists allow
 * (fleet/fleetallow.h). */
enum source_resource {
	SOURCE_RES_NONE,      /* key_names: the key names nothing outside skiff */
	SOURCE_RES_FILE,      /* a file's path, as the source opens it (no glob) */
	SOURCE_RES_FILE_GLOB, /* a glob(3) pattern of files read, {a,b} braces and
	                       * \ escapes included */
	SOURCE_RES_DATABASE,  /* a database file's path (no glob) */
	SOURCE_RES_JOURNAL,   /* the system journal (""), or a journal directory */
	SOURCE_RES_TOPIC,     /* a topic records go to, as configured */
};

/* One row of a source's table and what its value names (SOURCE_RES_NONE:
 * nothing). Every row of config_keys has one, so that a key added without
 * saying whether it names a resource fails the unit test that walks the
 * tables (tests/unit/test_source_resources.c): a key the fleet's check
 * does not hear about is a hole in it. */
struct source_key_names {
	const char *key;
	enum source_resource names;
};

struct source_ops {
	const char *kind;                     /* "file", "sqlite" */
	const char *const *classes;           /* connector.class values, NULL-terminated */
	const struct config_key *config_keys; /* this connector's table */
	/* The size of the struct config_keys binds (CFG_FIELD, config.h);
	 * 0 while the source still reads its keys by name (issue 27). */
	size_t config_size;
	/* What poll() puts in record.value: VALUE_STRING (lines) or VALUE_STRUCT
	 * (rows). Lets settings refuse a converter that cannot write it. */
	enum value_kind value_kind;

	/* Validates cfg and prepares the source without I/O that may block for
	 * long. Returns 0 and *ctx, or an error with errbuf "what: why":
	 * SOURCE_ERR_NOMEM (exit 75); any other (-1) is a configuration error
	 * (exit 78, EX_CONFIG). */
	int (*open)(const struct config_section *cfg, struct source_env *env, void **ctx,
	            char *errbuf, size_t errlen);

	/* Optional (NULL: none). For --check, without Kafka: open()'s checks and
	 * what else can be known now (a database's tables, columns, query). What
	 * the source would wait for at run time is logged, not an error. Returns
	 * 0, SOURCE_ERR_CONFIG (a person must act) or SOURCE_ERR (could not look),
	 * with errbuf. name is the connector's, for its log lines. */
	int (*check)(const struct config_section *cfg, const char *name, char *errbuf,
	             size_t errlen);

	/* Fills batch->records[0..max-1]; returns 0 on success (batch->n may be
	 * 0), SOURCE_ERR or SOURCE_ERR_CONFIG. now_ms is the monotonic clock. */
	int (*poll)(void *ctx, struct source_batch *batch, int64_t now_ms, char *errbuf,
	            size_t errlen);

	/* Optional (NULL: nothing is noticed while reading pauses). Reading
	 * pauses while records cannot go to Kafka (the producer queue full, the
	 * broker away, offsets that cannot be saved, the bandwidth cap) or a
	 * person paused the connector; watching must not: the worker keeps the
	 * source's descriptors (pollfds) in the loop, resting them
	 * SOURCE_WATCH_REST_MS after each call, and calls watch() instead of
	 * poll() when one fires or the deadline it returned passes. The source
	 * notices what changed without producing a record (the file source
	 * opens rotated files before logrotate deletes them, and counts what it
	 * must let go). The records of the last batch not yet produced stay
	 * valid. Returns ms from now_ms until it wants to be called again
	 * without descriptor activity, or -1 for no deadline. */
	int64_t (*watch)(void *ctx, int64_t now_ms);

	/* Optional (NULL: none). Descriptors the source wants watched (POLLIN);
	 * returns how many it wrote, at most max. Readiness makes the worker
	 * call poll(). */
	int (*pollfds)(void *ctx, struct pollfd *fds, int max);

	/* Optional (NULL: every SOURCE_DEFAULT_POLL_MS). Milliseconds from
	 * now_ms until poll() should be called even without descriptor
	 * activity; -1 for no deadline. */
	int64_t (*timeout_ms)(void *ctx, int64_t now_ms);

	/* Required (no default fits every source's integers and reference).
	 * Connect's offset value for off as compact JSON, malloc'd (caller
	 * frees), or NULL on allocation failure. */
	char *(*offset_json)(void *ctx, const struct src_offset *off);

	/* Optional (NULL: unknown). The backlog: what the source knows is still
	 * unread, past its read position (not the committed offset). Calls
	 * put(arg, p, unit, n) for each partition p whose backlog it can tell
	 * cheaply and exactly now; a partition not put is unknown (not
	 * exported). Called from the main loop only when metrics or the status
	 * are read, never on the record path; it must be bounded (no opening or
	 * reading of files, a database query only within a small budget). */
	void (*backlog)(void *ctx,
	                void (*put)(void *arg, struct partition *p, enum source_unit unit,
	                            uint64_t n),
	                void *arg);

	/* Optional (NULL: every pair is accepted). KIP-875: whether the
	 * connector configured by cfg would use offset (compact JSON object
	 * text, as a person sent it) for partition (a JSON object as cJSON
	 * prints it) instead of treating it as no offset or as another
	 * partition. Called while the connector is stopped (no ctx), before
	 * anything is stored. Returns 0, SOURCE_ERR_CONFIG with errbuf saying
	 * why in Connect's words (the REST API replies 500, as Connect's
	 * connector throws), or SOURCE_ERR_FOREIGN (above). */
	int (*check_offset)(const struct config_section *cfg, const char *partition,
	                    const char *offset, char *errbuf, size_t errlen);

	/* Optional (NULL: not checked). After check_offset passed: whether
	 * offset lies within what the source holds now, not past its end (a
	 * table's newest row, a file's size; a file's position at a line
	 * start), where it would skip what comes up to it or start inside a
	 * record. stored: the partition's offset stored now (NULL: none): what
	 * an offset that leaves something out means (a file's position alone
	 * is in the file the stored offset names). Opens what it reads
	 * read-only and changes nothing. bounded: called from the main loop
	 * (REST), it must answer within a bounded time. Returns 0, or
	 * SOURCE_ERR_CONFIG with errbuf naming the newest value (or why it
	 * cannot tell: refused too); the caller may offer to force it. On 0,
	 * *settled is NULL (store offset as sent) or the offset to store
	 * instead, malloc'd (caller frees): what the source derives from its
	 * data refreshed for the position set (a file's identity members, which
	 * describe the bytes before a position), and errbuf holds a note for
	 * the person ("" when none). Refused, *settled may still hold what
	 * forcing it should store (caller frees either way). */
	int (*check_reach)(const struct config_section *cfg, const char *partition,
	                   const char *offset, const char *stored, bool bounded, char **settled,
	                   char *errbuf, size_t errlen);

	/* Optional (NULL: nothing to say). Called once at a stop (SIGTERM),
	 * after the wait for acknowledgements and before the last offset
	 * flush, while env->committed gives each partition's acknowledged
	 * prefix: what the source read past it is dropped with the process.
	 * The source says which of what it read the next start reads again
	 * and counts what it cannot (the file source: files deleted since).
	 * For a partition whose restart must know more than its offset (the
	 * file source: the size its file had at the stop, to count it if it is
	 * deleted before the restart), it calls put(arg, p, json): json is the
	 * committed offset with members only its own parser reads (Connect's
	 * ignore them), naming the same place; the worker stores it in the
	 * stop's last flush (not with exactly-once, whose offsets only a
	 * transaction moves). Reading has stopped; watch() may still be
	 * called until close(). */
	void (*stopping)(void *ctx, void (*put)(void *arg, struct partition *p, const char *json),
	                 void *arg);

	/* Optional (NULL: the source cannot say, and a configuration from the
	 * fleet naming it is refused). What the connector configured by cfg
	 * would read and write outside skiff: calls put(arg, kind, what) for
	 * each (what: a path, a glob, a topic; "" when the kind says all, as
	 * the system journal), every key of key_names whose kind is not
	 * SOURCE_RES_NONE accounted for, relative paths as written (the
	 * caller refuses them). Opens nothing and reads no file: called with
	 * the connector stopped (no ctx), before it runs. Returns 0, or
	 * SOURCE_ERR_CONFIG with errbuf when the configuration names something
	 * it cannot tell (a malformed connection.url), or SOURCE_ERR_NOMEM. */
	int (*resources)(const struct config_section *cfg,
	                 void (*put)(void *arg, enum source_resource kind, const char *what),
	                 void *arg, char *errbuf, size_t errlen);

	/* What each row of config_keys names, {NULL} ended; NULL only for a
	 * source without resources(). */
	const struct source_key_names *key_names;

	/* Frees everything. Accepts NULL. */
	void (*close)(void *ctx);
};

/* The registry: finds the ops for a connector.class value (exact, case
 * sensitive, as Connect matches class names and aliases). NULL if none. */
const struct source_ops *source_find(const char *connector_class);

/* The first connector.class of each registered source, ", " between them
 * ("FileStreamSource, JdbcSourceConnector"), for messages: written into buf
 * (truncated to len, NUL-terminated when len > 0). Returns the length of the
 * whole list, as snprintf does. */
size_t source_class_names(char *buf, size_t len);

/* All registered sources, NULL-terminated, for --help-config. */
extern const struct source_ops *const source_registry[];

#endif
