/* tailscan: globs, rotated siblings, files by inode. */
#include "sources/file/tailscan.h"

#include "sources/file/tailz.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

/* Test seam: tailscan_set_listed_hook. */
static void (*listed_hook)(void *opaque);
static void *listed_opaque;

char *tailscan_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

bool tailscan_notifies(int fd)
{
	/* linux/magic.h and the file systems' own sources: NFS, SMB, CIFS,
	 * SMB2, FUSE, 9P, Ceph, AFS (two), Coda, NCP, Lustre, GFS2, OCFS2. */
	static const unsigned long remote[] = {
	    0x6969,     0x517B,     0xFF534D42, 0xFE534D42, 0x65735546, 0x01021997, 0x00C36400,
	    0x5346414F, 0x6B414653, 0x73757245, 0x564C,     0x0BD00BD0, 0x01161970, 0x7461636F};
	struct statfs sf;

	if (fstatfs(fd, &sf) != 0)
		return false;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((unsigned long)sf.f_type == remote[i])
			return false;
	return true;
}

bool tailscan_dir_watchable(const char *dir)
{
	char *real = dir[0] == '/' ? realpath(dir, NULL) : NULL;
	int fd = real != NULL && strcmp(real, dir) == 0
	             ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)
	             : -1;
	bool ok = fd >= 0 && tailscan_notifies(fd);

	if (fd >= 0)
		close(fd);
	free(real);
	return ok;
}

bool tailscan_file_watchable(const char *path, int fd)
{
	struct stat at, open_st;

	return lstat(path, &at) == 0 && S_ISREG(at.st_mode) && fstat(fd, &open_st) == 0 &&
	       at.st_dev == open_st.st_dev && at.st_ino == open_st.st_ino && tailscan_notifies(fd);
}

static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool tailscan_excluded(const char *path, const char *const *excludes, size_t nex)
{
	for (size_t i = 0; i < nex; i++) {
		const char *subject = strchr(excludes[i], '/') ? path : base_of(path);

		if (fnmatch(excludes[i], subject, strchr(excludes[i], '/') ? FNM_PATHNAME : 0) == 0)
			return true;
	}
	return false;
}

int tailscan_glob(const char *const *patterns, size_t n, const char *const *excludes, size_t nex,
                  void (*fn)(void *opaque, const char *path), void *opaque)
{
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		glob_t g;
		int rc = glob(patterns[i], GLOB_BRACE | GLOB_MARK, NULL, &g);

		if (rc == GLOB_NOMATCH)
			continue;
		if (rc != 0) {
			globfree(&g);
			return -1;
		}
		for (size_t j = 0; j < g.gl_pathc && found < TAILSCAN_MAX_ENTRIES; j++) {
			const char *p = g.gl_pathv[j];
			size_t len = strlen(p);

			if (len == 0 || p[len - 1] == '/' || tailscan_excluded(p, excludes, nex))
				continue; /* GLOB_MARK: a directory */
			fn(opaque, p);
			found++;
		}
		globfree(&g);
	}
	return found;
}

bool tailscan_matches(const char *path, const char *const *patterns, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(patterns[i], path, FNM_PATHNAME) == 0 || strcmp(patterns[i], path) == 0)
			return true;
	return false;
}

bool tailscan_is_history(const char *path, const char *const *patterns, size_t n)
{
	const char *base = base_of(path);
	size_t dirlen = (size_t)(base - path), blen = strlen(base);
	char stem[4096];

	for (size_t i = 1; i + 1 < blen; i++) {
		if (base[i] != '.' && base[i] != '-' && base[i] != '_')
			continue;
		if (dirlen + i >= sizeof(stem))
			return false;
		memcpy(stem, path, dirlen + i);
		stem[dirlen + i] = '\0';
		if (tailid_rotated_name(stem + dirlen, base) != TAILID_NOT_ROTATED &&
		    tailscan_matches(stem, patterns, n))
			return true;
	}
	return false;
}

static int older_first(const void *a, const void *b)
{
	const struct tailscan_entry *x = a, *y = b;
	int c = tailid_cmp_age(&x->id, &y->id);

	return c != 0 ? c : strcmp(x->path, y->path);
}

static char *join(const char *dir, const char *name)
{
	char *p = NULL;

	return asprintf(&p, "%s/%s", dir, name) < 0 ? NULL : p;
}

/* Appends dir/name to the list when it is a regular file; *raced set when
 * the name is gone since readdir (renamed by a rotation, most likely). */
static int add_entry(struct tailscan_entry **list, size_t *n, size_t *cap, const char *dir,
                     const char *name, enum tailid_rotated kind, bool *raced)
{
	struct tailscan_entry e = {.kind = kind};

	if ((e.path = join(dir, name)) == NULL)
		return -1;
	if (tailid_of_path(e.path, &e.id) != 0 || !e.id.regular) {
		if (errno == ENOENT)
			*raced = true;
		free(e.path);
		return 0; /* gone since readdir, or not a file */
	}
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct tailscan_entry *grown = realloc(*list, ncap * sizeof(*grown));

		if (grown == NULL) {
			free(e.path);
			return -1;
		}
		*list = grown;
		*cap = ncap;
	}
	(*list)[(*n)++] = e;
	return 0;
}

/* Adds the rotated names of base in dir to list. Returns 0, or -1 when dir
 * cannot be read (must: the path's own) or out of memory. *raced: set when
 * a name was added to, renamed in or removed from dir while it was read
 * (its mtime moved): readdir may then have missed a file, or listed one
 * under the name it had before. */
static int list_dir(const char *dir, const char *base, bool must, struct tailscan_entry **list,
                    size_t *count, size_t *cap, bool *raced)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat before, after;
	int rc = 0;

	if (d == NULL)
		return must ? -1 : 0; /* an olddir not made yet holds nothing */
	if (fstat(dirfd(d), &before) != 0)
		*raced = true;
	while (rc == 0 && (de = readdir(d)) != NULL && *count < TAILSCAN_MAX_ENTRIES) {
		enum tailid_rotated kind = tailid_rotated_name(base, de->d_name);

		if (kind != TAILID_NOT_ROTATED)
			rc = add_entry(list, count, cap, dir, de->d_name, kind, raced);
	}
	if (fstat(dirfd(d), &after) != 0 || after.st_mtim.tv_sec != before.st_mtim.tv_sec ||
	    after.st_mtim.tv_nsec != before.st_mtim.tv_nsec)
		*raced = true;
	closedir(d);
	return rc;
}

/* tailscan_family, and *raced (list_dir) for each directory listed. */
static int family(const char *path, const char *const *dirs, size_t ndirs,
                  struct tailscan_entry **out, size_t *n, bool *raced)
{
	char *dir = tailscan_dirname(path);
	const char *base = base_of(path);
	struct tailscan_entry *list = NULL;
	size_t cap = 0, count = 0;
	int rc = -1;

	*out = NULL;
	*n = 0;
	*raced = false;
	if (dir == NULL || list_dir(dir, base, true, &list, &count, &cap, raced) != 0)
		goto out;
	for (size_t i = 0; i < ndirs; i++)
		if (strcmp(dirs[i], dir) != 0 &&
		    list_dir(dirs[i], base, false, &list, &count, &cap, raced) != 0)
			goto out;
	if (count > 1)
		qsort(list, count, sizeof(*list), older_first);
	*out = list;
	*n = count;
	list = NULL;
	rc = 0;
out:
	tailscan_free(list, count);
	free(dir);
	return rc;
}

int tailscan_family(const char *path, const char *const *dirs, size_t ndirs,
                    struct tailscan_entry **out, size_t *n)
{
	bool raced;

	return family(path, dirs, ndirs, out, n, &raced);
}

void tailscan_set_listed_hook(void (*fn)(void *opaque), void *opaque)
{
	listed_hook = fn;
	listed_opaque = opaque;
}

/* Opens e's path when it still names the file listed as e. Returns the fd,
 * or -1 with *raced set when the path names another file or none now. */
static int open_listed(const struct tailscan_entry *e, bool *raced)
{
	int fd = open(e->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct tailid id;

	if (fd >= 0 && (tailid_of_fd(fd, &id) != 0 || !tailid_same(&id, &e->id))) {
		close(fd);
		fd = -1;
		errno = ENOENT;
	}
	if (fd < 0 && errno == ENOENT)
		*raced = true; /* renamed between the listing and the open */
	return fd;
}

/* tailscan_head of the file open as fd, named path. */
static ssize_t head_of_fd(int fd, const char *path, unsigned char *buf, int *zerr)
{
	bool named = tailz_named(path);
	enum tailz_format f = named ? tailz_detect(fd) : TAILZ_NONE;
	struct tailz *z = NULL;
	const void *head;
	size_t len = 0;
	ssize_t got = -1;

	*zerr = 0;
	if (f == TAILZ_NONE) {
		got = pread(fd, buf, TAILZ_HEAD, 0);
		if (named && got == 0)
			*zerr = TAILZ_ERR_SHORT; /* not even a header */
	} else if (tailz_open(fd, f, 4096, &z) == 0) {
		head = tailz_head(z, &len);
		memcpy(buf, head, len);
		got = (ssize_t)len;
		*zerr = tailz_error(z);
	}
	tailz_free(z);
	return got;
}

ssize_t tailscan_head(const char *path, unsigned char *buf, int *zerr)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t got;

	*zerr = 0;
	if (fd < 0)
		return -1;
	got = head_of_fd(fd, path, buf, zerr);
	close(fd);
	return got;
}

#define ZPREFIX_CHUNK 16384u

/* tailscan_zprefix of the open compressed file z, its buffers given. */
static bool zprefix_of(struct tailz *z, int fd, unsigned char *zb, unsigned char *pb)
{
	int64_t off = 0;
	bool at_end = false;
	size_t got = 0;

	while (off < (int64_t)TAILSCAN_ZPREFIX_MAX && !at_end) {
		if (tailz_read(z, off, zb, ZPREFIX_CHUNK, &got, &at_end) != 0)
			return false;
		/* Regular files: a short pread is their end, so the copy holds
		 * more than its source does. */
		if (got > 0 &&
		    (pread(fd, pb, got, off) != (ssize_t)got || memcmp(zb, pb, got) != 0))
			return false;
		off += (int64_t)got;
		if (got == 0)
			break;
	}
	return true;
}

bool tailscan_zprefix(const char *zpath, int fd)
{
	int zfd = open(zpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	enum tailz_format f = zfd >= 0 ? tailz_detect(zfd) : TAILZ_NONE;
	unsigned char *zb = NULL, *pb = NULL;
	struct tailz *z = NULL;
	bool prefix = false;

	if (f == TAILZ_NONE || tailz_open_unverified(zfd, f, ZPREFIX_CHUNK, &z) != 0)
		goto out;
	if ((zb = malloc(ZPREFIX_CHUNK)) == NULL || (pb = malloc(ZPREFIX_CHUNK)) == NULL)
		goto out;
	prefix = zprefix_of(z, fd, zb, pb);
out:
	tailz_free(z);
	free(zb);
	free(pb);
	if (zfd >= 0)
		close(zfd);
	return prefix;
}

int64_t tailscan_zdecoded(const char *zpath, int64_t max)
{
	int zfd = open(zpath, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	enum tailz_format f = zfd >= 0 ? tailz_detect(zfd) : TAILZ_NONE;
	unsigned char *buf = malloc(ZPREFIX_CHUNK);
	struct tailz *z = NULL;
	int64_t n = -1;
	bool at_end = false;
	size_t got = 1;

	if (f == TAILZ_NONE || buf == NULL || tailz_open_unverified(zfd, f, ZPREFIX_CHUNK, &z) != 0)
		goto out;
	for (n = 0; n < max && !at_end && got > 0; n += (int64_t)got)
		if (tailz_read(z, n, buf, ZPREFIX_CHUNK, &got, &at_end) != 0)
			break;
out:
	tailz_free(z);
	free(buf);
	if (zfd >= 0)
		close(zfd);
	return n;
}

char *tailscan_find_undecodable(const char *path, const char *const *dirs, size_t ndirs,
                                int64_t born_after, struct tailid *id)
{
	struct tailscan_entry *fam = NULL;
	unsigned char head[TAILZ_HEAD];
	size_t nfam = 0;
	char *found = NULL;
	int64_t oldest = INT64_MIN;
	int zerr = 0;

	if (tailscan_family(path, dirs, ndirs, &fam, &nfam) != 0)
		return NULL;
	/* Only the oldest (logrotate compresses oldest first), or one of the
	 * oldest when their births tie (made within one clock tick). */
	for (size_t i = 0; i < nfam && found == NULL; i++) {
		if (fam[i].kind != TAILID_COMPRESSED || fam[i].id.born < born_after ||
		    !tailz_named(fam[i].path))
			continue;
		if (oldest == INT64_MIN)
			oldest = fam[i].id.born;
		if (fam[i].id.born != oldest)
			break;
		if (tailscan_head(fam[i].path, head, &zerr) == 0 && zerr != 0) {
			found = fam[i].path;
			fam[i].path = NULL;
			*id = fam[i].id;
		}
	}
	tailscan_free(fam, nfam);
	return found;
}

void tailscan_free(struct tailscan_entry *e, size_t n)
{
	for (size_t i = 0; e != NULL && i < n; i++)
		free(e[i].path);
	free(e);
}

char *tailscan_find_inode(const char *dir, int64_t dev, int64_t ino)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;

	if (d == NULL)
		return NULL;
	while (found == NULL && (de = readdir(d)) != NULL) {
		struct tailid id;
		char *p;

		if ((int64_t)de->d_ino != ino || (p = join(dir, de->d_name)) == NULL)
			continue;
		if (tailid_of_path(p, &id) == 0 && id.regular && id.dev == dev && id.ino == ino)
			found = p;
		else
			free(p);
	}
	closedir(d);
	return found;
}

char *tailscan_find_moved(const char *path, const char *const *dirs, size_t ndirs, int64_t dev,
                          int64_t ino)
{
	char *dir = tailscan_dirname(path), *found = NULL, *real = NULL, *rdir = NULL;

	if (dir == NULL)
		return NULL;
	found = tailscan_find_inode(dir, dev, ino);
	for (size_t i = 0; found == NULL && i < ndirs; i++)
		found = tailscan_find_inode(dirs[i], dev, ino);
	if (found == NULL && (real = realpath(path, NULL)) != NULL &&
	    (rdir = tailscan_dirname(real)) != NULL && strcmp(rdir, dir) != 0)
		found = tailscan_find_inode(rdir, dev, ino);
	free(rdir);
	free(real);
	free(dir);
	return found;
}

/* True when the file at path starts with fplen bytes that hash to fp and,
 * when last_len > 0, holds last[0..last_len) just before byte at. */
static bool holds(const char *path, uint64_t fp, int64_t fplen, const void *last, size_t last_len,
                  int64_t at)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	unsigned char there[256];
	uint64_t h;
	bool same;

	if (fd < 0)
		return false;
	same = tailid_fp_file(fd, fplen, &h) == 0 && h == fp;
	if (same && last_len > 0)
		same = last_len <= sizeof(there) && at >= (int64_t)last_len &&
		       pread(fd, there, last_len, at - (int64_t)last_len) == (ssize_t)last_len &&
		       memcmp(there, last, last_len) == 0;
	close(fd);
	return same;
}

char *tailscan_find_copy(const char *path, const char *const *dirs, size_t ndirs, uint64_t fp,
                         int64_t fplen, int64_t min_size, const void *last, size_t last_len,
                         int64_t born_after, int64_t *size)
{
	struct tailscan_entry *fam = NULL;
	size_t nfam = 0;
	char *found = NULL;

	if (tailscan_family(path, dirs, ndirs, &fam, &nfam) != 0)
		return NULL;
	for (size_t i = nfam; i-- > 0 && found == NULL;) {
		if (fam[i].kind != TAILID_ROTATED || fam[i].id.size < min_size ||
		    fam[i].id.size < fplen || fam[i].id.born < born_after ||
		    !holds(fam[i].path, fp, fplen, last, last_len, min_size))
			continue;
		found = fam[i].path;
		fam[i].path = NULL;
		*size = fam[i].id.size;
	}
	tailscan_free(fam, nfam);
	return found;
}

/* One pass of tailscan_find_compressed over one listing; *raced: a rename
 * raced the listing or the opens (the file may be there under a name this
 * listing did not see). */
static char *find_compressed_once(const char *path, const char *const *dirs, size_t ndirs,
                                  uint64_t fp, int64_t fplen, int64_t born_after, struct tailid *id,
                                  bool *raced)
{
	struct tailscan_entry *fam = NULL;
	unsigned char head[TAILZ_HEAD];
	size_t nfam = 0;
	char *found = NULL;
	ssize_t len;
	int zerr, fd;

	if (family(path, dirs, ndirs, &fam, &nfam, raced) != 0) {
		*raced = false; /* an error, not a race: nothing to retry */
		return NULL;
	}
	if (listed_hook != NULL)
		listed_hook(listed_opaque);
	for (size_t i = 0; i < nfam && found == NULL; i++) {
		if (fam[i].kind != TAILID_COMPRESSED || fam[i].id.born < born_after ||
		    (fd = open_listed(&fam[i], raced)) < 0)
			continue;
		len = head_of_fd(fd, fam[i].path, head, &zerr);
		close(fd);
		if (len < fplen || tailid_fp_update(TAILID_FP_EMPTY, head, (size_t)fplen) != fp)
			continue;
		found = fam[i].path;
		fam[i].path = NULL;
		if (id != NULL)
			*id = fam[i].id;
	}
	tailscan_free(fam, nfam);
	return found;
}

char *tailscan_find_compressed(const char *path, const char *const *dirs, size_t ndirs, uint64_t fp,
                               int64_t fplen, int64_t born_after, struct tailid *id)
{
	char *found = NULL;
	bool raced = true;

	if (fplen < 0 || fplen > TAILZ_HEAD)
		return NULL;
	/* A rotation renames every .N.gz in turn: a file not found while one
	 * raced the search may be there under a name not seen; list again. */
	for (int tries = 0; found == NULL && raced && tries < TAILSCAN_RELIST_TRIES; tries++)
		found = find_compressed_once(path, dirs, ndirs, fp, fplen, born_after, id, &raced);
	return found;
}
