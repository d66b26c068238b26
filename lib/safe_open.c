// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* safe_open: opening files a target controls; see safe_open.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/openat2.h>

#include "lib/procfs.h"
#include "lib/safe_open.h"

#define OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)

static void set_why(struct safe_open_info *info, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_why(struct safe_open_info *info, const char *fmt, ...)
{
	va_list ap;

	if (!info)
		return;
	va_start(ap, fmt);
	vsnprintf(info->why, sizeof(info->why), fmt, ap);
	va_end(ap);
}

void safe_open__size_str(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= (1ull << 30) && !(bytes & ((1ull << 30) - 1)))
		snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
	else if (bytes >= (1ull << 20) && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
	else
		snprintf(buf, len, "%" PRIu64 " bytes", bytes);
}

static const char *open_why(int err)
{
	switch (err) {
	case ELOOP:
		return "symlink refused";
	case EXDEV:
		return "path leaves the target's root";
	case ENOENT:
		return "no such file";
	case EACCES:
	case EPERM:
		return "permission denied";
	case ENXIO:
		return "a socket, not a regular file";
	case ENOTDIR:
		return "a path component is not a directory";
	default:
		return strerror(err);
	}
}

static int sys_openat2(int dirfd, const char *path, int flags, uint64_t resolve)
{
	struct open_how how = { .flags = (uint64_t)flags, .resolve = resolve };

#ifdef SYS_openat2
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
#else
	(void)dirfd;
	(void)path;
	(void)how;
	errno = ENOSYS;
	return -1;
#endif
}

/*
 * openat2() is missing (before 5.6, or filtered by seccomp): walk the path
 * one component at a time under rootfd, refusing symlinks and "..", so
 * nothing leads out of the root.
 */
static int walk_in_root(int rootfd, const char *rest, int flags)
{
	char comp[NAME_MAX + 1];
	const char *p = rest, *slash;
	int dfd = rootfd, fd = -1;
	struct stat st;
	size_t n;

	for (;;) {
		while (*p == '/')
			p++;
		slash = strchr(p, '/');
		n = slash ? (size_t)(slash - p) : strlen(p);
		if (n > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n;
		while (*p == '/')
			p++;
		if (!strcmp(comp, "..")) {
			errno = EXDEV;
			goto fail;
		}
		if (!*p) {
			fd = openat(dfd, n && strcmp(comp, ".") ? comp : ".", flags);
			break;
		}
		if (!n || !strcmp(comp, "."))
			continue;
		if (fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto fail;
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			goto fail;
		}
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto fail;
		if (dfd != rootfd)
			close(dfd);
		dfd = fd;
		fd = -1;
	}
	if (dfd != rootfd) {
		int err = errno;

		close(dfd);
		errno = err;
	}
	return fd;
fail:
	if (dfd != rootfd) {
		int err = errno;

		close(dfd);
		errno = err;
	}
	return -1;
}

static int open_in_root(const char *root, const char *rest, int flags)
{
	int rootfd, fd, err;

	/* The root itself may be a magic link (/proc/N/root): that one is ours to follow. */
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = sys_openat2(rootfd, rest, flags, RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS);
	if (fd < 0 && errno == ENOSYS)
		fd = walk_in_root(rootfd, rest, flags);
	err = fd < 0 ? -errno : fd;
	close(rootfd);
	return err;
}

/* Does path start "PROC/N/root"?  Then *root_len covers that, *rest the rest. */
static bool proc_root_prefix(const char *path, const char *proc_root, size_t *root_len,
			     const char **rest)
{
	size_t plen = strlen(proc_root);
	const char *p;

	while (plen > 1 && proc_root[plen - 1] == '/')
		plen--;
	if (strncmp(path, proc_root, plen) || path[plen] != '/')
		return false;
	p = path + plen + 1;
	if (*p < '1' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (strncmp(p, "/root", 5) || (p[5] && p[5] != '/'))
		return false;
	*root_len = (size_t)(p + 5 - path);
	*rest = p[5] ? p + 5 : "/";
	return true;
}

static int open_path(const char *path, const struct safe_open_opts *o, int flags)
{
	const char *proc_root = o->proc_root ? o->proc_root : "/proc", *rest;
	char root[PATH_MAX];
	size_t root_len;
	int fd;

	if (o->proc_link) {
		fd = open(path, flags & ~O_NOFOLLOW);
		return fd < 0 ? -errno : fd;
	}
	if (o->root)
		return open_in_root(o->root, path, flags);
	if (proc_root_prefix(path, proc_root, &root_len, &rest)) {
		if (root_len >= sizeof(root))
			return -ENAMETOOLONG;
		memcpy(root, path, root_len);
		root[root_len] = '\0';
		return open_in_root(root, rest, flags);
	}
	fd = sys_openat2(AT_FDCWD, path, flags, RESOLVE_NO_MAGICLINKS);
	if (fd < 0 && errno == ENOSYS)
		fd = open(path, flags);
	return fd < 0 ? -errno : fd;
}

static const char *type_str(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symlink";
	return "a special file";
}

static int check_stat(const struct stat *st, const struct safe_open_opts *o,
		      struct safe_open_info *info)
{
	char size[32];

	if (!S_ISREG(st->st_mode)) {
		set_why(info, "%s, not a regular file", type_str(st->st_mode));
		return -EINVAL;
	}
	if (!o)
		return 0;
	if (o->match_file && ((uint64_t)st->st_dev != o->dev || (uint64_t)st->st_ino != o->ino)) {
		set_why(info, "not the expected file (device %u:%u inode %" PRIu64
			" instead of %u:%u inode %" PRIu64 ")",
			major(st->st_dev), minor(st->st_dev), (uint64_t)st->st_ino,
			major((dev_t)o->dev), minor((dev_t)o->dev), o->ino);
		return -ESTALE;
	}
	if (o->owner == SAFE_OPEN_OWNER_TARGET && st->st_uid != o->uid) {
		set_why(info, "owned by uid %u, not the target's uid %u", (unsigned)st->st_uid,
			(unsigned)o->uid);
		return -EPERM;
	}
	if (o->owner == SAFE_OPEN_OWNER_TARGET_OR_ROOT && st->st_uid != o->uid && st->st_uid) {
		set_why(info, "owned by uid %u, not the target's uid %u or root",
			(unsigned)st->st_uid, (unsigned)o->uid);
		return -EPERM;
	}
	if (o->max_bytes && (uint64_t)st->st_size > o->max_bytes) {
		safe_open__size_str(o->max_bytes, size, sizeof(size));
		set_why(info, "larger than the %s cap", size);
		return -EFBIG;
	}
	return 0;
}

int safe_open__check_fd(int fd, const struct safe_open_opts *opts, struct safe_open_info *info)
{
	struct stat st;
	int err;

	if (info)
		info->why[0] = '\0';
	if (fstat(fd, &st) < 0) {
		err = -errno;
		set_why(info, "%s", strerror(-err));
		return err;
	}
	if (info)
		info->st = st;
	return check_stat(&st, opts, info);
}

int safe_open__file(const char *path, const struct safe_open_opts *opts,
		    struct safe_open_info *info)
{
	static const struct safe_open_opts none;
	int fd, err;

	if (info)
		memset(info, 0, sizeof(*info));
	fd = open_path(path, opts ? opts : &none, OPEN_FLAGS);
	if (fd < 0) {
		set_why(info, "%s", open_why(-fd));
		return fd;
	}
	err = safe_open__check_fd(fd, opts, info);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int safe_open__file_at(int dirfd, const char *name, const struct safe_open_opts *opts,
		       struct safe_open_info *info)
{
	int fd, err;

	if (info)
		memset(info, 0, sizeof(*info));
	if (!name || !*name || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		set_why(info, "not a file name");
		return -EINVAL;
	}
	fd = openat(dirfd, name, OPEN_FLAGS);
	if (fd < 0) {
		err = -errno;
		set_why(info, "%s", open_why(-err));
		return err;
	}
	err = safe_open__check_fd(fd, opts, info);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int safe_open__dir(const char *path, const struct safe_open_opts *opts,
		   struct safe_open_info *info)
{
	static const struct safe_open_opts none;
	int fd;

	if (info)
		memset(info, 0, sizeof(*info));
	fd = open_path(path, opts ? opts : &none, OPEN_FLAGS | O_DIRECTORY);
	if (fd < 0) {
		set_why(info, "%s", open_why(-fd));
		return fd;
	}
	if (info && fstat(fd, &info->st) < 0)
		memset(&info->st, 0, sizeof(info->st));
	return fd;
}

bool safe_open__owner_ok(const struct stat *st, const struct safe_open_opts *opts)
{
	if (!opts || opts->owner == SAFE_OPEN_ANY_OWNER)
		return true;
	if (st->st_uid == opts->uid)
		return true;
	return opts->owner == SAFE_OPEN_OWNER_TARGET_OR_ROOT && !st->st_uid;
}

int safe_open__target_uid(const char *proc_root, pid_t pid, uid_t *uid)
{
	char path[PATH_MAX], buf[4096];
	unsigned long v[4];
	const char *line;
	ssize_t n;

	if (pid <= 0)
		return -ESRCH;
	snprintf(path, sizeof(path), "%s/%d/status", proc_root ? proc_root : "/proc", (int)pid);
	n = procfs__read(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	line = strstr(buf, "\nUid:");
	if (!line || sscanf(line + 5, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -EINVAL;
	/* Files are created with the fs uid (the effective one unless setfsuid()). */
	*uid = (uid_t)v[3];
	return 0;
}

void read_budget__init(struct read_budget *b, uint64_t limit)
{
	memset(b, 0, sizeof(*b));
	b->limit = limit;
}

uint64_t read_budget__take(struct read_budget *b, uint64_t want)
{
	uint64_t left;

	if (!b || !b->limit)
		return want;
	left = b->used < b->limit ? b->limit - b->used : 0;
	if (want > left)
		want = left;
	b->used += want;
	if (!want)
		b->spent = true;
	return want;
}

void read_budget__give_back(struct read_budget *b, uint64_t bytes)
{
	if (!b || !b->limit)
		return;
	b->used = bytes < b->used ? b->used - bytes : 0;
}
