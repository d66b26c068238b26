// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fileio: whole-file reads and atomic writes; see fileio.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/monotime.h"

/* fd to its end into a malloc()ed buffer; size_hint (0: unknown) sizes the first read. */
static int read_fd(int fd, size_t max, size_t size_hint, uint8_t **data, size_t *len)
{
	size_t cap = size_hint ? size_hint + 1 : 65536, n = 0;
	uint8_t *buf;
	ssize_t r;

	*data = NULL;
	*len = 0;
	if (max && cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n + 1 == cap) {
			size_t ncap = cap * 2;
			uint8_t *nb;

			if (max && n >= max) {
				free(buf);
				return -EFBIG;
			}
			nb = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(buf);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (max && n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

/* Open path and read it whole; streams: pipes and other non-regular files too. */
static int read_path(const char *path, size_t max, bool streams, uint8_t **data, size_t *len)
{
	struct stat st;
	int fd, err;

	*data = NULL;
	*len = 0;
	/* A FIFO refused for a regular-file read must not block open() first. */
	fd = open(path, streams ? O_RDONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !streams) {
		err = -EINVAL;
		goto out;
	}
	if (S_ISREG(st.st_mode) && max && (uint64_t)st.st_size > max) {
		err = -EFBIG;
		goto out;
	}
	/* The size is a hint: the file may grow or shrink while it is read. */
	err = read_fd(fd, max, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, data, len);
out:
	close(fd);
	return err;
}

int fileio__read_all(const char *path, size_t max, uint8_t **data, size_t *len)
{
	return read_path(path, max, false, data, len);
}

int fileio__read_stream(const char *path, size_t max, uint8_t **data, size_t *len)
{
	return read_path(path, max, true, data, len);
}

int fileio__read_fd(int fd, size_t max, uint8_t **data, size_t *len)
{
	return read_fd(fd, max, 0, data, len);
}

int fileio__write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void atomic_file__release(struct atomic_file *af)
{
	if (af->own_dirfd && af->dirfd >= 0)
		close(af->dirfd);
	free(af->path);
	free(af->tmp);
	memset(af, 0, sizeof(*af));
	af->dirfd = -1;
}

/* The calling thread's fs ids before an owner's steps, to go back to. */
struct fs_ids {
	uid_t uid;
	gid_t gid;
	bool as;
};

static void owner__leave(const struct fileio_owner *o, struct fs_ids *saved)
{
	int e = errno;

	if (!saved->as)
		return;
	/* back to ids the thread holds as real or effective ones: no capability needed */
	setfsuid(saved->uid);
	setfsgid(saved->gid);
	/*
	 * The kernel gave back the file capabilities of the permitted set
	 * when the fs uid became 0 again: the plan puts its own set back.
	 */
	if (o->privilege)
		o->privilege(false);
	saved->as = false;
	errno = e;
}

/*
 * Take on the owner's identity for the steps on its directory
 * (FILEIO_OWNER_AS; the others need none).  setfsuid() and setfsgid()
 * report no failure but the id they leave, which an invalid id (-1) reads
 * back.  The switch away from fs uid 0 drops the file capabilities
 * (CAP_DAC_*, CAP_FOWNER, ...) from the effective set: from here to
 * owner__leave(), permissions are checked as the owner's own.
 */
static int owner__enter(const struct fileio_owner *o, struct fs_ids *saved)
{
	int err;

	saved->as = o && o->how == FILEIO_OWNER_AS;
	if (!saved->as)
		return 0;
	saved->uid = (uid_t)setfsuid((uid_t)-1);
	saved->gid = (gid_t)setfsgid((gid_t)-1);
	if (o->privilege) {
		err = o->privilege(true);
		if (err) {
			saved->as = false;
			return err;
		}
	}
	setfsgid(o->gid);
	if ((gid_t)setfsgid((gid_t)-1) == o->gid) {
		setfsuid(o->uid);
		if ((uid_t)setfsuid((uid_t)-1) == o->uid)
			return 0;
	}
	owner__leave(o, saved);
	return -EPERM;
}

/* FILEIO_OWNER_GIVE: fd to the owner, by descriptor, never by path. */
static int owner__give(const struct fileio_owner *o, int fd)
{
	int err;

	if (!o || o->how != FILEIO_OWNER_GIVE)
		return 0;
	if (o->privilege) {
		err = o->privilege(true);
		if (err)
			return err;
	}
	err = fchown(fd, o->uid, o->gid) ? -errno : 0;
	if (o->privilege)
		o->privilege(false);
	return err;
}

/* The temporary file's name removed, as whoever created it. */
static void unlink_tmp(struct atomic_file *af)
{
	struct fs_ids ids;

	if (owner__enter(&af->owner, &ids))
		return;
	unlinkat(af->dirfd, af->tmp, 0);
	owner__leave(&af->owner, &ids);
}

/* A name in a directory, not a path: no '/', not "", "." or "..". */
static bool is_plain_name(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/*
 * The temporary file, created, never opened: O_EXCL refuses any existing
 * name, a symlink included, so nothing planted at a guessed name is
 * followed or truncated.  The name is unpredictable all the same.
 */
static int create_tmp(struct atomic_file *af, const char *name)
{
	static const char digits[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t n = strlen(name) + sizeof("..tmp.XXXXXXXXXX");
	struct fs_ids ids;
	uint8_t rnd[10];
	int fd, err;

	af->tmp = malloc(n);
	if (!af->tmp)
		return -ENOMEM;
	err = owner__enter(&af->owner, &ids);
	if (err)
		return err;
	err = -EEXIST;
	for (int tries = 0; tries < 100; tries++) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
			uint64_t x = monotime_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)tries;

			for (size_t i = 0; i < sizeof(rnd); i++, x >>= 6)
				rnd[i] = (uint8_t)x;
		}
		snprintf(af->tmp, n, ".%s.tmp.", name);
		for (size_t i = 0; i < sizeof(rnd); i++)
			af->tmp[strlen(name) + 6 + i] = digits[rnd[i] % (sizeof(digits) - 1)];
		af->tmp[n - 1] = '\0';
		fd = openat(af->dirfd, af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd >= 0) {
			err = fd;
			break;
		}
		if (errno != EEXIST) {
			err = -errno;
			break;
		}
	}
	owner__leave(&af->owner, &ids);
	return err;
}

int atomic_file__openat(struct atomic_file *af, int dirfd, const struct fileio_owner *owner,
			const char *name, mode_t mode)
{
	int fd, err;

	memset(af, 0, sizeof(*af));
	af->dirfd = dirfd;
	if (owner)
		af->owner = *owner;
	if (!is_plain_name(name))
		return -EINVAL;
	af->mode = mode;
	af->path = strdup(name);
	if (!af->path) {
		atomic_file__release(af);
		return -ENOMEM;
	}
	fd = create_tmp(af, name);
	if (fd < 0) {
		atomic_file__release(af);
		return fd;
	}
	af->f = fdopen(fd, "w");
	if (!af->f) {
		err = -errno;
		close(fd);
		unlink_tmp(af);
		atomic_file__release(af);
		return err;
	}
	return 0;
}

int atomic_file__open_for(struct atomic_file *af, const char *path, const struct fileio_policy *p,
			  mode_t mode)
{
	const char *slash = strrchr(path, '/');
	struct fileio_owner owner = { .how = FILEIO_OWNER_SELF };
	struct stat st;
	char *dir;
	int dirfd, err;

	memset(af, 0, sizeof(*af));
	af->dirfd = -1;
	if (!*path || (slash && !slash[1]))
		return -EINVAL;
	if (!strcmp(path, "-")) {
		af->mode = mode;
		af->f = stdout;
		return 0;
	}
	if (!slash)
		dir = strdup(".");
	else if (slash == path)
		dir = strdup("/");
	else
		dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	/* one directory for the whole write, whatever its path names meanwhile */
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = dirfd < 0 ? -errno : 0;
	free(dir);
	if (err)
		return err;
	/* a directory the policy would refuse: written as isoprof, as ever */
	if (p && (fstat(dirfd, &st) || fileio__out_dir_owner(&st, p, &owner, NULL, 0)))
		owner.how = FILEIO_OWNER_SELF;
	err = atomic_file__openat(af, dirfd, &owner, slash ? slash + 1 : path, mode);
	if (err) {
		close(dirfd);
		return err;
	}
	af->own_dirfd = true;
	return 0;
}

int atomic_file__open(struct atomic_file *af, const char *path, mode_t mode)
{
	return atomic_file__open_for(af, path, NULL, mode);
}

int atomic_file__commit(struct atomic_file *af)
{
	struct fs_ids ids;
	bool entered = false;
	int err = 0, fd;

	if (!af->f)
		return -EINVAL;
	errno = 0;
	if (fflush(af->f) == EOF || ferror(af->f))
		err = -(errno ? errno : EIO);
	if (!af->tmp) {		/* standard output */
		atomic_file__release(af);
		return err;
	}
	fd = fileno(af->f);
	if (!err) {
		err = owner__enter(&af->owner, &ids);
		entered = !err;
	}
	if (!err && fchmod(fd, af->mode) < 0)
		err = -errno;
	/* given away last: after fchown() the file is no longer isoprof's to chmod */
	if (!err)
		err = owner__give(&af->owner, fd);
	if (!err && fsync(fd) < 0)
		err = -errno;
	if (fclose(af->f) && !err)
		err = -errno;
	af->f = NULL;
	/* rename() replaces a symlink at the name; it never follows it */
	if (!err && renameat(af->dirfd, af->tmp, af->dirfd, af->path) < 0)
		err = -errno;
	if (err && entered)
		unlinkat(af->dirfd, af->tmp, 0);
	if (entered)
		owner__leave(&af->owner, &ids);
	else if (err)
		unlink_tmp(af);
	atomic_file__release(af);
	return err;
}

void atomic_file__abort(struct atomic_file *af)
{
	if (af->f && af->tmp) {
		fclose(af->f);
		unlink_tmp(af);
	}
	atomic_file__release(af);
}

static int write_all_atomic(struct atomic_file *af, const void *data, size_t len)
{
	int err;

	if (len && fwrite(data, 1, len, af->f) != len) {
		err = -(errno ? errno : EIO);
		atomic_file__abort(af);
		return err;
	}
	return atomic_file__commit(af);
}

int fileio__write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	struct atomic_file af;
	int err = atomic_file__open(&af, path, mode);

	return err ? err : write_all_atomic(&af, data, len);
}

int fileio__write_atomic_at(int dirfd, const struct fileio_owner *owner, const char *name,
			    const void *data, size_t len, mode_t mode)
{
	struct atomic_file af;
	int err = atomic_file__openat(&af, dirfd, owner, name, mode);

	return err ? err : write_all_atomic(&af, data, len);
}

int fileio__out_dir_owner(const struct stat *st, const struct fileio_policy *p,
			  struct fileio_owner *o, char *why, size_t len)
{
	uid_t me = geteuid();
	bool others = st->st_uid != me && st->st_uid != 0;

	memset(o, 0, sizeof(*o));
	o->how = FILEIO_OWNER_SELF;
	if (why && len)
		why[0] = '\0';
	if (others && !(p && p->for_others)) {
		if (why)
			snprintf(why, len, "owned by uid %u, another user, who could swap its files",
				 (unsigned int)st->st_uid);
		return -EPERM;
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && !(st->st_mode & S_ISVTX)) {
		if (why)
			snprintf(why, len, "writable by %s (mode %04o) and not sticky: others could "
				 "replace its files", st->st_mode & S_IWOTH ? "every user" : "its group",
				 (unsigned int)(st->st_mode & 07777));
		return -EPERM;
	}
	if (others) {
		/* the owner alone can write it: whatever isoprof does there, as the owner */
		o->how = FILEIO_OWNER_AS;
		o->uid = st->st_uid;
		o->gid = st->st_gid;
		o->privilege = p->privilege;
	} else if (p && p->give) {
		o->how = FILEIO_OWNER_GIVE;
		o->uid = p->give_uid;
		o->gid = p->give_gid;
		o->privilege = p->privilege;
	}
	return 0;
}

/*
 * A missing output directory, made by the rules of its parent, so that it
 * is whose the parent's files would be: made as the parent's owner, or
 * made by isoprof and given (by descriptor) to p->give_uid.  A parent the
 * rules refuse gets it made as isoprof, as ever: the directory itself is
 * checked next.
 */
static int make_out_dir(const char *path, const struct fileio_policy *p)
{
	struct fileio_owner po;
	struct fs_ids ids;
	char *copy, *slash, *name;
	const char *parent;
	struct stat st;
	int pfd, fd, err;

	copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	for (size_t n = strlen(copy); n > 1 && copy[n - 1] == '/'; n--)
		copy[n - 1] = '\0';
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	parent = !slash ? "." : slash == copy ? "/" : copy;
	if (slash)
		*slash = '\0';
	/* "/", ".", "..": nothing to make, the open says whether it is there */
	if (!*name || !strcmp(name, ".") || !strcmp(name, "..")) {
		free(copy);
		return 0;
	}
	/* a parent not there (or not searchable): the open that follows says so */
	pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		free(copy);
		return 0;
	}
	if (fstat(pfd, &st) || fileio__out_dir_owner(&st, p, &po, NULL, 0))
		po.how = FILEIO_OWNER_SELF;
	err = owner__enter(&po, &ids);
	if (!err) {
		err = mkdirat(pfd, name, 0755) ? -errno : 0;
		owner__leave(&po, &ids);
	}
	if (!err && po.how == FILEIO_OWNER_GIVE) {
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		/* a symlink swapped in meanwhile is refused by the open that follows */
		if (fd >= 0) {
			/* only what isoprof made: a directory swapped in is someone else's */
			if (!fstat(fd, &st) && st.st_uid == geteuid())
				err = owner__give(&po, fd);
			close(fd);
		}
	}
	close(pfd);
	free(copy);
	return err == -EEXIST ? 0 : err;
}

int fileio__open_out_dir(const char *path, bool create, const struct fileio_policy *p,
			 int *dirfd, struct fileio_owner *owner, char *why, size_t len)
{
	struct stat st;
	int fd, err;

	*dirfd = -1;
	memset(owner, 0, sizeof(*owner));
	owner->how = FILEIO_OWNER_SELF;
	if (why && len)
		why[0] = '\0';
	if (create) {
		err = make_out_dir(path, p);
		if (err)
			return err;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		/* O_NOFOLLOW|O_DIRECTORY on a symlink: ELOOP, or ENOTDIR on some kernels */
		if ((err == -ELOOP || err == -ENOTDIR) && !lstat(path, &st) && S_ISLNK(st.st_mode)) {
			if (why)
				snprintf(why, len, "a symbolic link; name the directory itself");
			return -EPERM;
		}
		return err;
	}
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	err = fileio__out_dir_owner(&st, p, owner, why, len);
	if (err) {
		close(fd);
		return err;
	}
	*dirfd = fd;
	return 0;
}

void fileio__name_part(const char *in, char *out, size_t len)
{
	const char *base = in ? strrchr(in, '/') : NULL;
	size_t n = 0;

	if (!len)
		return;
	if (!in)
		in = "";
	/* a script path or URL: its last component names it well enough */
	if (base && base[1])
		in = base + 1;
	for (; *in && n + 1 < len; in++) {
		char ch = *in;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_'))
			ch = '_';
		if (!n && ch == '.')
			ch = '_';
		out[n++] = ch;
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "unknown");
}
