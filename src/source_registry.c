/* The list of source connectors. Adding a source is adding its file and one
 * line here. */
#include "source.h"

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
