#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static enum log_level max_level = LOG_INFO;

static const char *const names[] = {"error", "warn", "notice", "info", "debug"};

void log_set_level(enum log_level level)
{
	max_level = level;
}

enum log_level log_get_level(void)
{
	return max_level;
}

int log_level_parse(const char *s, enum log_level *out)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	if (strcmp(s, "warning") == 0) {
		*out = LOG_WARN;
		return 0;
	}
	return -1;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fputs per line so lines from one process never interleave. */
	fprintf(stderr, "skiff %s: %s\n", names[level], line);
}

void log_vconnector(enum log_level level, const char *connector, const char *fmt, va_list ap)
{
	char text[1536];

	if (level > max_level)
		return;
	vsnprintf(text, sizeof(text), fmt, ap);
	log_msg(level, "connector %s: %s", connector, text);
}
