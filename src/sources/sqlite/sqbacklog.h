/* sqbacklog: the rows still unread (incrementing mode) (sqbacklog.c). Main loop only. */
#ifndef SKIFF_SQBACKLOG_H
#define SKIFF_SQBACKLOG_H

#include <stdint.h>

#include "core/source.h"

struct partition;

/* source_ops.backlog: in incrementing mode, the
 * rows of each table above the last id read, counted within a budget. */
void sqbacklog_count(void *ctx,
                     void (*put)(void *arg, struct partition *p, enum source_unit u, uint64_t n),
                     void *arg);

#endif
