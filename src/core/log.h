/* log: levelled logging to stderr, the one module that prints.
 *
 * Leaf modules do not log; they return an error and an errbuf, and the caller
 * logs once with context. Called from the main loop only (skiff is one thread
 * of its own; librdkafka's log callback is routed to the main queue). */
#ifndef SKIFF_LOG_H
#define SKIFF_LOG_H

#include <stdarg.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_NOTICE, LOG_INFO, LOG_DEBUG };

/* Sets the most verbose level printed. Default LOG_INFO. */
void log_set_level(enum log_level level);
enum log_level log_get_level(void);

/* Parses "error", "warn", "notice", "info" or "debug". Returns 0 or -1. */
int log_level_parse(const char *s, enum log_level *out);

/* Prints one line "LEVEL message" to stderr (a supervisor adds timestamps). */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logs one line "connector NAME: message" (what a source's env->log writes,
 * at run time and under --check). */
void log_vconnector(enum log_level level, const char *connector, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
