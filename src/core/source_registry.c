/* The list of source connectors. Adding a source is adding its file and one
 * line here. */
#include "core/source.h"
#include "core/stats.h"

#include <stdio.h>
#include <string.h>

extern const struct source_ops source_file_ops;
extern const struct source_ops source_sqlite_ops;
#ifdef SKIFF_HAVE_JOURNALD /* built with libsystemd (CMake SKIFF_JOURNALD) */
extern const struct source_ops source_journald_ops;
#endif

const struct source_ops *const source_registry[] = {
    &source_file_ops,
    &source_sqlite_ops,
#ifdef SKIFF_HAVE_JOURNALD
    &source_journald_ops,
#endif
    NULL,
};

size_t source_class_names(char *buf, size_t len)
{
	size_t n = 0;

	if (len > 0)
		buf[0] = '\0';
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		int w = snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s%s",
		                 i > 0 ? ", " : "", source_registry[i]->classes[0]);

		n += w > 0 ? (size_t)w : 0;
	}
	return n;
}

const struct source_ops *source_find(const char *connector_class)
{
	for (size_t i = 0; source_registry[i] != NULL; i++) {
		const char *const *c = source_registry[i]->classes;

		for (; *c != NULL; c++) {
			if (strcmp(*c, connector_class) == 0)
				return source_registry[i];
		}
	}
	return NULL;
}

int source_counters(struct source_env *env, const struct stats_desc *d, size_t n)
{
	for (size_t i = 0; i < n && env->counter != NULL; i++)
		if (env->counter(env, &d[i]) != 0)
			return SOURCE_ERR_NOMEM;
	return 0;
}
