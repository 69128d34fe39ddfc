/* tailid: file identity, fingerprints, birth order, rotated names. */
#include "sources/file/tailid.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

uint64_t tailid_fp_update(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

int tailid_fp_file(int fd, int64_t len, uint64_t *out)
{
	unsigned char buf[TAILID_FP_MAX];
	int64_t got = 0;

	if (len < 0 || len > TAILID_FP_MAX)
		return -1;
	while (got < len) {
		ssize_t n = pread(fd, buf + got, (size_t)(len - got), got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += n;
	}
	*out = tailid_fp_update(TAILID_FP_EMPTY, buf, (size_t)len);
	return 0;
}

static int64_t ns(const struct statx_timestamp *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* True when the file lives on a file system whose files are made up at
 * each read (/proc, /sys, cgroups, debugfs, ...): they have no appended
 * history, so a position in them means nothing. Such file systems sit on
 * anonymous devices (major 0), as tmpfs and NFS do: only those are asked. */
static bool on_pseudo_fs(int dirfd, const char *path, int flags)
{
	struct statfs sf;

	if (((flags & AT_EMPTY_PATH) ? fstatfs(dirfd, &sf) : statfs(path, &sf)) != 0)
		return false;
	switch ((unsigned long)sf.f_type) {
	case PROC_SUPER_MAGIC:
	case SYSFS_MAGIC:
	case DEBUGFS_MAGIC:
	case TRACEFS_MAGIC:
	case SECURITYFS_MAGIC:
	case CGROUP_SUPER_MAGIC:
	case CGROUP2_SUPER_MAGIC:
	case 0x62656570: /* configfs, not in every linux/magic.h */
	case BPF_FS_MAGIC:
	case EFIVARFS_MAGIC:
		return true;
	default:
		return false;
	}
}

static int fill(int dirfd, const char *path, int flags, struct tailid *id)
{
	struct statx sx;

	if (statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_BTIME, &sx) != 0)
		return -1;
	memset(id, 0, sizeof(*id));
	id->dev = (int64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor);
	id->ino = (int64_t)sx.stx_ino;
	id->size = (int64_t)sx.stx_size;
	id->mtime = ns(&sx.stx_mtime);
	id->has_btime = (sx.stx_mask & STATX_BTIME) != 0;
	id->born = id->has_btime ? ns(&sx.stx_btime) : id->mtime;
	id->pseudo =
	    S_ISREG(sx.stx_mode) && sx.stx_dev_major == 0 && on_pseudo_fs(dirfd, path, flags);
	id->regular = S_ISREG(sx.stx_mode) && !id->pseudo;
	return 0;
}

int tailid_of_fd(int fd, struct tailid *id)
{
	return fill(fd, "", AT_EMPTY_PATH, id);
}

int tailid_of_path(const char *path, struct tailid *id)
{
	return fill(AT_FDCWD, path, 0, id);
}

bool tailid_same(const struct tailid *a, const struct tailid *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

int tailid_cmp_age(const struct tailid *a, const struct tailid *b)
{
	int64_t x = a->has_btime && b->has_btime ? a->born : a->mtime;
	int64_t y = a->has_btime && b->has_btime ? b->born : b->mtime;

	return x < y ? -1 : x > y;
}

static bool compressed_ext(const char *s)
{
	static const char *const exts[] = {".gz",  ".bz2", ".xz",  ".zst",
	                                   ".lz4", ".Z",   ".zip", NULL};

	for (size_t i = 0; exts[i] != NULL; i++)
		if (strcmp(s, exts[i]) == 0)
			return true;
	return false;
}

enum tailid_rotated tailid_rotated_name(const char *base, const char *name)
{
	size_t bl = strlen(base);
	const char *s;

	if (strncmp(name, base, bl) != 0)
		return TAILID_NOT_ROTATED;
	s = name + bl;
	if ((s[0] != '.' && s[0] != '-' && s[0] != '_') || s[1] < '0' || s[1] > '9')
		return TAILID_NOT_ROTATED;
	for (s += 2; *s != '\0'; s++) {
		if ((*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == 'T' || *s == ':')
			continue;
		if (*s == '.' && s[1] >= '0' && s[1] <= '9')
			continue;
		/* logrotate's name for a file it found at the path when about to
		 * create one (a writer recreated it in between): it holds lines
		 * no other file has. */
		if (strcmp(s, ".backup") == 0)
			return TAILID_ROTATED;
		return compressed_ext(s) ? TAILID_COMPRESSED : TAILID_NOT_ROTATED;
	}
	return TAILID_ROTATED;
}
