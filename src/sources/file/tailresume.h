/* tailresume: where a stream without files resumes, from its committed
 * offset or the place kept in memory - part of tailstream's internals
 * (tailchain.h). Include only from tailstream.c and tailresume.c; the cases
 * and the offset-safety argument are at the top of tailstream.c. Main loop
 * only. */
#ifndef SKIFF_TAILRESUME_H
#define SKIFF_TAILRESUME_H

#include <stdint.h>

struct tailstream;

/* Gives s, which has no file open (s->n == 0), its files: on first use
 * reads the committed offset; with no place known, opens the path's file
 * (or its history first) and stores the anchor; else finds the file of the
 * place (at the path, rotated, compressed) and what came after it, and
 * counts what is gone. Leaves s->n at 0 when nothing could be opened yet
 * (nothing there, or no descriptor free: s->no_room). */
void tailresume_resume(struct tailstream *s);

/* Logs what of s was lost ("<path>: what", a warning) and counts it:
 * bytes_unread_lost when bytes > 0, else files_gone_unread. */
void tailresume_lost(struct tailstream *s, const char *what, int64_t bytes);

#endif
