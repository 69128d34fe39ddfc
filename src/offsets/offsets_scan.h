/* offsets_scan: a stored offsets document (offsets_file.c) or a journal
 * record (offsets_log.c) checked piece by piece: its top-level members and
 * each entry of its "offsets" array are parsed alone with cJSON, never the
 * whole text at once. A tree of the whole is about 1 KB per entry: 20 MB
 * for the offsets of 20,000 files, twice at every start (the file and the
 * one before it), and glibc keeps what it made resident. The entries' text
 * is then cut out exactly (cJSON would round integers above 2^53) by the
 * callers. Leaf module: no logging. Main loop only. */
#ifndef SKIFF_OFFSETS_SCAN_H
#define SKIFF_OFFSETS_SCAN_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

enum {
	OFFSETS_SCAN_MEMBERS = 4, /* most members asked for */
};

/* Where an entry's shape is wrong. */
enum offsets_scan_bad {
	OFFSETS_SCAN_OK,
	OFFSETS_SCAN_BAD_KEY,   /* "key" is not ["connector",{partition}] */
	OFFSETS_SCAN_BAD_VALUE, /* "value" is not an object (or null, when allowed) */
};

struct offsets_scan {
	/* The members asked for, parsed (NULL: absent); the first of a name. */
	cJSON *member[OFFSETS_SCAN_MEMBERS];
	bool has_offsets;          /* an "offsets" member that is an array */
	int nentries;              /* its elements */
	int bad;                   /* the first entry of a wrong shape, -1: none */
	enum offsets_scan_bad why; /* ... and what is wrong with it */
};

/* Checks that the n bytes at text (whitespace after them allowed) are one
 * JSON object, each of whose members parses, and whose "offsets" member, if
 * an array, holds objects that parse, each with a "key" and a "value" of
 * the store's shapes (null values too when null_values). Fills *out (free
 * with offsets_scan_free) with the members named in names[0..nnames)
 * (nnames <= OFFSETS_SCAN_MEMBERS) and what the entries are. Returns true,
 * or false when the text does not parse (out is then freed). */
bool offsets_scan(const char *text, size_t n, const char *const *names, size_t nnames,
                  bool null_values, struct offsets_scan *out);

/* Frees the members out holds. Accepts a zeroed one. */
void offsets_scan_free(struct offsets_scan *out);

#endif
