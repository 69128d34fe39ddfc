/* err: the one error convention of skiff's C code. Nothing to link; this
 * header is where the rule is written, and modules point here.
 *
 * 1. A function that can fail returns int: 0 on success, or a negative error
 *    code of its module (OFFSETS_ERR_IO, LOOP_ERR_NOMEM, SINK_QUEUE_FULL, ...),
 *    declared in the module's header as an enum, with a MODULE_strerror(int)
 *    that gives a short text for each code. -1 is always the module's generic
 *    "failed, a retry or restart may pass".
 * 2. A function that creates something returns it through an out parameter
 *    (struct x **out, set to NULL on failure), never as a NULL-or-pointer
 *    return, so that the reason travels in the return code. Plain lookups
 *    (x_get, x_find) may return NULL for "not there". Value allocators
 *    whose only failure is memory, like strdup, return the value or NULL:
 *    rstr_new (a refcounted string) and txschema_new (a schema node) are
 *    such values, not objects with a life of their own.
 * 3. Where the reason matters to a person, the caller passes
 *    `char *errbuf, size_t errlen` and gets one line "what: why" back (the
 *    file, key, partition or path first, then the cause). errbuf is written
 *    only on failure, unless the function says otherwise.
 * 4. Out of memory is its own code (X_ERR_NOMEM), never folded into another
 *    condition: a supervisor restarts skiff on it (exit 75), while a
 *    configuration error waits for a person (exit 78).
 * 5. Leaf modules do not log. The caller that decides what happens next logs
 *    once, with its context (usually the connector's name).
 * 6. Asynchronous work (an offset write a Kafka topic acknowledges later)
 *    returns 0 for "started" and reports its outcome once, through a
 *    completion callback that gets the same (code, "what: why") pair.
 *
 * Exit codes (worker.h): 75 transient (restart me), 78 a person must act. */
#ifndef SKIFF_ERR_H
#define SKIFF_ERR_H

#endif
