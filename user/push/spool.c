// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* spool: the pusher's capped, ordered queue, on disk or in memory; see spool.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "user/push/spool.h"

struct spool_entry {
	uint64_t until_ns, seq;	/* the order */
	uint64_t id;
	uint64_t bytes;
	uint8_t *data;		/* in memory: the record */
	bool busy;		/* being sent: never dropped */
};

struct spool {
	pthread_mutex_t mu;
	char *dir;		/* NULL: in memory */
	int dirfd;
	struct fileio_owner owner;
	uint64_t max_bytes, bytes;
	uint64_t next_seq, next_id;
	struct spool_entry *e;	/* sorted by (until_ns, seq) */
	size_t n, cap;
};

void spool__name(uint64_t until_ns, uint64_t seq, char *out, size_t len)
{
	snprintf(out, len, "w-%020" PRIu64 "-%010" PRIu64 ".isp", until_ns, (uint64_t)(seq % 10000000000ull));
}

static bool digits(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (*v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return true;
}

bool spool__parse_name(const char *name, uint64_t *until_ns, uint64_t *seq)
{
	/* w- 20 digits - 10 digits .isp */
	if (strlen(name) != 2 + 20 + 1 + 10 + 4 || strncmp(name, "w-", 2) || name[22] != '-' ||
	    strcmp(name + 33, ".isp"))
		return false;
	return digits(name + 2, 20, until_ns) && digits(name + 23, 10, seq);
}

bool spool__is_tmp(const char *name)
{
	/* lib/fileio's ".NAME.tmp.XXXXXXXXXX" for a NAME of ours */
	return !strncmp(name, ".w-", 3) && strstr(name, ".isp.tmp.");
}

static bool before(const struct spool_entry *a, uint64_t until_ns, uint64_t seq)
{
	return a->until_ns < until_ns || (a->until_ns == until_ns && a->seq < seq);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	if (before(x, y->until_ns, y->seq))
		return -1;
	return before(y, x->until_ns, x->seq) ? 1 : 0;
}

static int grow(struct spool *s)
{
	size_t ncap = s->cap ? s->cap * 2 : 64;
	struct spool_entry *ne;

	if (s->n < s->cap)
		return 0;
	ne = realloc(s->e, ncap * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	s->e = ne;
	s->cap = ncap;
	return 0;
}

/* Forget entry i (and its file or memory); under the lock. */
static void remove_at(struct spool *s, size_t i, bool unlink_file)
{
	struct spool_entry *x = &s->e[i];

	if (s->dir && unlink_file) {
		char name[48];

		spool__name(x->until_ns, x->seq, name, sizeof(name));
		unlinkat(s->dirfd, name, 0);
	}
	free(x->data);
	s->bytes -= x->bytes;
	memmove(&s->e[i], &s->e[i + 1], (s->n - i - 1) * sizeof(*x));
	s->n--;
}

/* Drop the oldest idle entries until extra more bytes fit; under the lock. */
static uint64_t make_room(struct spool *s, uint64_t extra)
{
	uint64_t dropped = 0;
	size_t i = 0;

	while (s->bytes + extra > s->max_bytes && i < s->n) {
		if (s->e[i].busy) {
			i++;
			continue;
		}
		remove_at(s, i, true);
		dropped++;
	}
	return dropped;
}

static int scan(struct spool *s, struct spool_open_info *info)
{
	int fd = dup(s->dirfd);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int err = -errno;

		close(fd);
		return err;
	}
	while ((de = readdir(d))) {
		uint64_t until_ns, seq;
		struct stat st;

		if (spool__is_tmp(de->d_name)) {
			if (!unlinkat(s->dirfd, de->d_name, 0))
				info->removed_tmp++;
			continue;
		}
		if (!spool__parse_name(de->d_name, &until_ns, &seq))
			continue;
		if (fstatat(s->dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (grow(s)) {
			closedir(d);
			return -ENOMEM;
		}
		s->e[s->n++] = (struct spool_entry){
			.until_ns = until_ns,
			.seq = seq,
			.id = ++s->next_id,
			.bytes = (uint64_t)st.st_size,
		};
		s->bytes += (uint64_t)st.st_size;
		if (seq >= s->next_seq)
			s->next_seq = seq + 1;
	}
	closedir(d);
	if (s->n)
		qsort(s->e, s->n, sizeof(*s->e), cmp_entry);
	info->recovered = s->n;
	info->recovered_bytes = s->bytes;
	info->dropped = make_room(s, 0);
	return 0;
}

struct spool *spool__open(const char *dir, uint64_t max_bytes, struct spool_open_info *info,
			  char *err, size_t err_len)
{
	struct spool_open_info dummy;
	struct spool *s = calloc(1, sizeof(*s));
	char why[160];
	int e;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	if (!s) {
		errmsg__set(err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	s->dirfd = -1;
	s->max_bytes = max_bytes;
	if (!dir)
		return s;
	s->dir = strdup(dir);
	if (!s->dir) {
		e = -ENOMEM;
		errmsg__set(err, err_len, "out of memory");
		goto fail;
	}
	/* profiles name a host's code: the spool is its owner's only */
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		e = -errno;
		errmsg__set(err, err_len, "spool %s: cannot create: %s", dir, strerror(-e));
		goto fail;
	}
	why[0] = '\0';
	e = fileio__open_out_dir(dir, false, NULL, &s->dirfd, &s->owner, why, sizeof(why));
	if (e) {
		errmsg__set(err, err_len, "spool %s: %s", dir, why[0] ? why : strerror(-e));
		goto fail;
	}
	/* two pushers on one spool would send each other's windows twice */
	if (flock(s->dirfd, LOCK_EX | LOCK_NB) < 0) {
		e = -errno;
		errmsg__set(err, err_len, "spool %s: %s", dir,
			    e == -EWOULDBLOCK ? "in use by another isoprof" : strerror(-e));
		goto fail;
	}
	e = scan(s, info);
	if (e) {
		errmsg__set(err, err_len, "spool %s: cannot list: %s", dir, strerror(-e));
		goto fail;
	}
	return s;
fail:
	spool__close(s);
	errno = -e;
	return NULL;
}

void spool__close(struct spool *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->e[i].data);
	free(s->e);
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int spool__add(struct spool *s, uint8_t *rec, size_t len, uint64_t until_ns, uint64_t *dropped)
{
	uint64_t seq;
	size_t i;
	int err;

	*dropped = 0;
	if (len > s->max_bytes) {
		free(rec);
		return -EFBIG;
	}
	pthread_mutex_lock(&s->mu);
	seq = s->next_seq++;
	pthread_mutex_unlock(&s->mu);
	if (s->dir) {
		char name[48];

		spool__name(until_ns, seq, name, sizeof(name));
		err = fileio__write_atomic_at(s->dirfd, &s->owner, name, rec, len, 0600);
		free(rec);
		rec = NULL;
		if (err)
			return err;
	}
	pthread_mutex_lock(&s->mu);
	*dropped = make_room(s, len);
	err = grow(s);
	if (err) {
		pthread_mutex_unlock(&s->mu);
		free(rec);
		return err;
	}
	/* almost always the newest: search from the end */
	for (i = s->n; i > 0 && !before(&s->e[i - 1], until_ns, seq); i--)
		;
	memmove(&s->e[i + 1], &s->e[i], (s->n - i) * sizeof(*s->e));
	s->e[i] = (struct spool_entry){
		.until_ns = until_ns,
		.seq = seq,
		.id = ++s->next_id,
		.bytes = len,
		.data = rec,
	};
	s->n++;
	s->bytes += len;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static ssize_t find(struct spool *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].id == id)
			return (ssize_t)i;
	return -1;
}

int spool__take(struct spool *s, struct spool_item *it)
{
	struct spool_entry *x;
	uint8_t *data;
	size_t len;
	int fd, err;

	memset(it, 0, sizeof(*it));
	pthread_mutex_lock(&s->mu);
	if (!s->n) {
		pthread_mutex_unlock(&s->mu);
		return -ENOENT;
	}
	x = &s->e[0];
	x->busy = true;
	it->id = x->id;
	if (!s->dir) {
		it->data = x->data;
		it->len = (size_t)x->bytes;
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	spool__name(x->until_ns, x->seq, it->name, sizeof(it->name));
	pthread_mutex_unlock(&s->mu);

	fd = openat(s->dirfd, it->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		err = fileio__read_fd(fd, s->max_bytes, &data, &len);
		close(fd);
	}
	if (err) {
		/* gone (removed by hand) or unreadable: forget it, the next one goes */
		ssize_t i;

		pthread_mutex_lock(&s->mu);
		i = find(s, it->id);
		if (i >= 0)
			remove_at(s, (size_t)i, false);
		pthread_mutex_unlock(&s->mu);
		return err;
	}
	it->data = data;
	it->len = len;
	it->owned = true;
	return 0;
}

void spool__finish(struct spool *s, struct spool_item *it, enum spool_outcome what)
{
	ssize_t i;

	pthread_mutex_lock(&s->mu);
	i = find(s, it->id);
	if (i >= 0) {
		switch (what) {
		case SPOOL_KEEP:
			s->e[i].busy = false;
			break;
		case SPOOL_CORRUPT:
			if (s->dir) {
				char aside[64];

				snprintf(aside, sizeof(aside), "%s.corrupt", it->name);
				if (renameat(s->dirfd, it->name, s->dirfd, aside) < 0)
					unlinkat(s->dirfd, it->name, 0);
			}
			remove_at(s, (size_t)i, false);
			break;
		case SPOOL_DONE:
			remove_at(s, (size_t)i, true);
			break;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (it->owned)
		free((void *)it->data);
	memset(it, 0, sizeof(*it));
}

void spool__count(struct spool *s, uint64_t *n, uint64_t *bytes)
{
	pthread_mutex_lock(&s->mu);
	*n = s->n;
	*bytes = s->bytes;
	pthread_mutex_unlock(&s->mu);
}

const char *spool__dir(const struct spool *s)
{
	return s->dir;
}
