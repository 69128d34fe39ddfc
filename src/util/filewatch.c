/* filewatch: files watched through their directories (see filewatch.h). */
#include "util/filewatch.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* What tells one version of a file from the next: a rename brings a new
 * inode, a write in place a new mtime, size or ctime. */
struct seen {
	bool exists;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct watched {
	char *path;
	const char *base;   /* inside path: the name the directory's events carry */
	char *target;       /* what path resolves to when it is a symlink, or NULL */
	const char *t_base; /* inside target */
	struct seen seen;
};

struct filewatch {
	int fd;
	struct watched *files;
	size_t n;
};

static void look(const char *path, struct seen *out)
{
	struct stat st;

	memset(out, 0, sizeof(*out));
	if (stat(path, &st) != 0)
		return;
	out->exists = true;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	out->size = st.st_size;
	out->mtime = st.st_mtim;
	out->ctime = st.st_ctim;
}

static bool same(const struct seen *a, const struct seen *b)
{
	return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino &&
	       a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
	       a->mtime.tv_nsec == b->mtime.tv_nsec && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* Adds the watch on path's directory (inotify merges a directory named
 * twice into one watch). */
static int watch_dir(int fd, const char *path, char *errbuf, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int len = slash == NULL ? 1 : slash == path ? 1 : (int)(slash - path);
	uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE |
	                IN_ATTRIB | IN_MODIFY | IN_ONLYDIR;

	if (snprintf(dir, sizeof(dir), "%.*s", len, slash == NULL ? "." : path) >=
	    (int)sizeof(dir)) {
		snprintf(errbuf, errlen, "%s: path too long", path);
		return FILEWATCH_ERR;
	}
	if (inotify_add_watch(fd, dir, mask) < 0) {
		snprintf(errbuf, errlen, "%s: cannot watch its directory %s: %s", path, dir,
		         strerror(errno));
		return errno == ENOMEM ? FILEWATCH_ERR_NOMEM : FILEWATCH_ERR;
	}
	return 0;
}

/* When f's path is a symlink (certs/device.pem -> ../ext/device.pem), also
 * watches the directory of the file it resolves to: a target written over or
 * renamed into its own directory makes no event in the link's. Called again
 * after each change, as the link may point elsewhere now (the old watch
 * stays: a few stale watches cost nothing). Returns 0 or FILEWATCH_ERR_NOMEM;
 * a target that does not resolve or whose directory cannot be watched is
 * left to the link's directory's events. */
static int follow(int fd, struct watched *f)
{
	char real[PATH_MAX], ignored[8];
	const char *slash;

	if (realpath(f->path, real) == NULL || strcmp(real, f->path) == 0 ||
	    (f->target != NULL && strcmp(real, f->target) == 0))
		return 0;
	free(f->target);
	f->t_base = NULL;
	if ((f->target = strdup(real)) == NULL)
		return FILEWATCH_ERR_NOMEM;
	slash = strrchr(f->target, '/');
	f->t_base = slash != NULL ? slash + 1 : f->target;
	return watch_dir(fd, f->target, ignored, sizeof(ignored)) == FILEWATCH_ERR_NOMEM
	           ? FILEWATCH_ERR_NOMEM
	           : 0;
}

int filewatch_new(const char *const *paths, size_t n, struct filewatch **out, char *errbuf,
                  size_t errlen)
{
	struct filewatch *fw = calloc(1, sizeof(*fw));
	int rc = FILEWATCH_ERR_NOMEM;

	*out = NULL;
	if (fw != NULL)
		fw->fd = -1;
	if (fw == NULL || (fw->files = calloc(n > 0 ? n : 1, sizeof(*fw->files))) == NULL) {
		snprintf(errbuf, errlen, "file watch: out of memory");
		goto fail;
	}
	fw->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fw->fd < 0) {
		snprintf(errbuf, errlen, "inotify: %s", strerror(errno));
		rc = errno == ENOMEM ? FILEWATCH_ERR_NOMEM : FILEWATCH_ERR;
		goto fail;
	}
	for (; fw->n < n; fw->n++) {
		struct watched *f = &fw->files[fw->n];
		const char *slash;

		if ((f->path = strdup(paths[fw->n])) == NULL) {
			snprintf(errbuf, errlen, "file watch: out of memory");
			rc = FILEWATCH_ERR_NOMEM;
			goto fail;
		}
		slash = strrchr(f->path, '/');
		f->base = slash != NULL ? slash + 1 : f->path;
		look(f->path, &f->seen);
		if ((rc = watch_dir(fw->fd, f->path, errbuf, errlen)) != 0 ||
		    (rc = follow(fw->fd, f)) != 0) {
			if (rc == FILEWATCH_ERR_NOMEM)
				snprintf(errbuf, errlen, "file watch: out of memory");
			fw->n++;
			goto fail;
		}
	}
	*out = fw;
	return 0;
fail:
	filewatch_destroy(fw);
	return rc;
}

int filewatch_fd(const struct filewatch *fw)
{
	return fw->fd;
}

/* Whether an event names a watched file, or may have replaced one by other
 * means (a symlinked directory swapped, the queue overflowed). */
static bool concerns(const struct filewatch *fw, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW || ev->len == 0)
		return true;
	for (size_t i = 0; i < fw->n; i++)
		if (strcmp(ev->name, fw->files[i].base) == 0 ||
		    (fw->files[i].t_base != NULL && strcmp(ev->name, fw->files[i].t_base) == 0))
			return true;
	/* Kubernetes-style volumes rename "..data" over the link the files go
	 * through: any rename in the directory is worth a look. */
	return (ev->mask & (IN_MOVED_TO | IN_MOVED_FROM)) != 0;
}

bool filewatch_drain(struct filewatch *fw)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool any = false;
	ssize_t len;

	while ((len = read(fw->fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			any |= concerns(fw, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
	return any;
}

const char *filewatch_changed(struct filewatch *fw)
{
	const char *first = NULL;

	for (size_t i = 0; i < fw->n; i++) {
		struct seen now;

		look(fw->files[i].path, &now);
		if (!same(&now, &fw->files[i].seen) && first == NULL)
			first = fw->files[i].path;
		fw->files[i].seen = now;
		/* Out of memory: the target's directory stays unwatched until
		 * the next change; the link's own directory is still watched. */
		(void)follow(fw->fd, &fw->files[i]);
	}
	return first;
}

void filewatch_destroy(struct filewatch *fw)
{
	if (fw == NULL)
		return;
	if (fw->fd >= 0)
		close(fw->fd);
	for (size_t i = 0; i < fw->n; i++) {
		free(fw->files[i].path);
		free(fw->files[i].target);
	}
	free(fw->files);
	free(fw);
}
