/* source_file: the file source's keys as bound once from its connector
 * section (issue 27). The source itself is source_file_ops (core/source.h). */
#ifndef SKIFF_SOURCE_FILE_H
#define SKIFF_SOURCE_FILE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "sources/file/tailfile.h"

/* read.from=, watch.mode= and multiline.match=, in the order of their
 * choices (max.line.policy= binds enum tailfile_policy, whose constants
 * follow theirs). */
enum file_from { FILE_FROM_BEGINNING, FILE_FROM_END };
enum file_watch { FILE_WATCH_INOTIFY, FILE_WATCH_POLL };
enum file_match { FILE_MATCH_AFTER, FILE_MATCH_BEFORE };

/* record.key=: what a record's key is (none, or the file's path). */
enum key_mode { KEY_NONE, KEY_PATH };

struct file_conf {
	const char *file, *topic, *header_path, *header_offset;
	struct config_list files, rotated_dirs, excludes;
	int64_t batch_size, max_open, max_held_files, max_held_bytes;
	int64_t max_line, rotate_wait_ms, poll_ms, rescan_ms;
	bool max_line_given;
	enum file_from read_from;
	enum tailfile_policy policy;
	enum file_watch watch;
	enum key_mode key;
	const char *multi_pattern;
	bool multi_negate;
	enum file_match multi_match;
	int64_t multi_max_lines, multi_max_bytes, multi_timeout_ms;
	bool multi_max_bytes_given;
};

/* The source's table (source_file.c). */
extern const struct config_key source_file_keys[];

/* Binds cfg (a connector section of the file source) into *out, whose
 * strings and lists cfg owns. Main loop: open, --check, offset checks. */
static inline void source_file_conf(const struct config_section *cfg, struct file_conf *out)
{
	config_section_bind(cfg, source_file_keys, out);
}

#endif
