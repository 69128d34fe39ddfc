/* squri: the file behind an SQLite URI (squri.c). Main loop only. */
#ifndef SKIFF_SQURI_H
#define SKIFF_SQURI_H

#include <stddef.h>

/* The file an SQLite URI ("file:...") names, malloc'd (caller frees); NULL
 * with errbuf when it names none (in-memory) or is malformed. */
char *squri_file(const char *uri, char *errbuf, size_t errlen);

#endif
