/* tailnotice: how the file source hears of changes - inotify, or nothing
 * (stat polling). One const ops table per backend; watch.mode picks one
 * once, at open, and nothing else asks which (STYLE habit 3). The streams
 * and the directory table stay in tailwatch/tailchain: a backend only adds
 * and removes watches and reports what they heard.
 *
 * Called from the main loop only. */
#ifndef SKIFF_TAILNOTICE_H
#define SKIFF_TAILNOTICE_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tailnotice; /* a backend's state, opaque */

/* What open returns. */
enum {
	TAILNOTICE_OK = 0,
	TAILNOTICE_ERR_NOMEM = -1,
	TAILNOTICE_ERR_SYSTEM = -2, /* the kernel refused (inotify_init1) */
};

/* What a change noticed is (bits of the `what` given to drain's callback). */
enum {
	TAILNOTICE_NAME_IN = 1u << 0,  /* a name created or moved into a watched dir */
	TAILNOTICE_CREATED = 1u << 1,  /* the name was created (not moved in) */
	TAILNOTICE_ISDIR = 1u << 2,    /* the name is a directory */
	TAILNOTICE_WRITE = 1u << 3,    /* a file written */
	TAILNOTICE_ATTRIB = 1u << 4,   /* a file's metadata (link count) changed */
	TAILNOTICE_GONE = 1u << 5,     /* the watched object deleted; its watch is no more */
	TAILNOTICE_MOVED = 1u << 6,    /* the watched object moved away (watch still held) */
	TAILNOTICE_DROPPED = 1u << 7,  /* the watch ended (removed, or its object gone) */
	TAILNOTICE_OVERFLOW = 1u << 8, /* changes were lost: look at everything */
	TAILNOTICE_PASS = 1u << 9,     /* poll: a stat pass is due, look at everything */
};

/* Called by drain for each change noticed: h is the handle of the watch
 * (-1 with TAILNOTICE_OVERFLOW and TAILNOTICE_PASS), name the entry in a watched directory
 * (NULL when the change is to the watched object itself). */
typedef void (*tailnotice_fn)(void *arg, int h, const char *name, unsigned what);

struct tailnotice_ops {
	/* True when the backend hears changes between looks; false: every
	 * look is a full stat pass (poll). */
	bool hears;
	/* Opens the backend into *out (freed by close); pass_ms is the
	 * period of poll's stat passes (inotify has none). TAILNOTICE_OK, or
	 * an error code with "what: why" in errbuf. */
	int (*open)(struct tailnotice **out, int64_t pass_ms, char *errbuf, size_t errlen);
	/* Fills out with at most max descriptors to wait on; returns how many. */
	int (*fds)(const struct tailnotice *n, struct pollfd *out, int max);
	/* When drain next has something to report without a descriptor being
	 * ready (poll: the next stat pass), in ms of the clock drain is given;
	 * -1: never. */
	int64_t (*deadline)(const struct tailnotice *n);
	/* Watches the names in dir (and writes to its files when writes);
	 * watching the same dir again replaces the mask and returns the same
	 * handle. Returns a handle >= 0, or -1 with errno set. */
	int (*watch_dir)(struct tailnotice *n, const char *dir, bool writes);
	/* Watches one file by a path naming it (/proc/self/fd/N). Returns a
	 * handle >= 0, or -1 with errno set (always -1 without hears). */
	int (*watch_file)(struct tailnotice *n, const char *path);
	void (*unwatch)(struct tailnotice *n, int handle);
	/* Reports every change queued at now (ms) to fn, then returns. */
	void (*drain)(struct tailnotice *n, int64_t now, tailnotice_fn fn, void *arg);
	/* Releases n; accepts NULL. */
	void (*close)(struct tailnotice *n);
};

extern const struct tailnotice_ops tailnotice_inotify, tailnotice_poll;

#endif
