// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* line_tail: incremental reader of a file that grows by lines; see line_tail.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/line_tail.h"

/*
 * Reads are sized to what was appended, within these bounds: big reads for
 * the first load of a large file, and no buffer kept between reads (a host
 * tails hundreds of these files).
 */
#define TAIL_CHUNK_MIN (4 * 1024)
#define TAIL_CHUNK_MAX (1024 * 1024)

int line_tail__init(struct line_tail *t, const char *path, size_t max_line,
		    const struct safe_open_opts *open, struct read_budget *budget)
{
	memset(t, 0, sizeof(*t));
	t->path = strdup(path);
	if (!t->path)
		return -ENOMEM;
	t->max_line = max_line ? max_line : LINE_TAIL_MAX_DEFAULT;
	t->fd = -1;
	if (open)
		t->open = *open;
	t->budget = budget;
	return 0;
}

const char *line_tail__why(const struct line_tail *t)
{
	return t->why;
}

void line_tail__release(struct line_tail *t)
{
	if (t->fd >= 0)
		close(t->fd);
	free(t->path);
	free(t->buf);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

void line_tail__rewind(struct line_tail *t)
{
	t->known = false;
	t->offset = 0;
	t->skipping = false;
	t->check_len = 0;
}

/* The one place the file is opened (safe_open.h): an fd, or a negative errno. */
static int tail_open(struct line_tail *t, struct stat *st)
{
	struct safe_open_info info;
	int fd;

	fd = safe_open__file(t->path, &t->open, &info);
	if (fd < 0) {
		snprintf(t->why, sizeof(t->why), "%s", info.why);
		return fd;
	}
	*st = info.st;
	return fd;
}

int line_tail__hold(struct line_tail *t)
{
	struct stat st;
	int fd;

	if (t->fd >= 0)
		return 0;
	t->why[0] = '\0';
	fd = tail_open(t, &st);
	if (fd < 0)
		return fd;
	t->fd = fd;
	return 0;
}

/* The file of this read: the held one, or the path opened now. */
static int tail_file(struct line_tail *t, struct stat *st)
{
	if (t->fd < 0)
		return tail_open(t, st);
	if (fstat(t->fd, st)) {
		snprintf(t->why, sizeof(t->why), "fstat: %s", strerror(errno));
		return -errno;
	}
	return t->fd;
}

static void tail_done(struct line_tail *t, int fd)
{
	if (fd != t->fd)
		close(fd);
}

/*
 * How much of want bytes at file offset off may be read: within the
 * per-file cap, and charged to the budget.  0 with t->why set (and err)
 * when nothing may.
 */
static size_t tail_allow(struct line_tail *t, uint64_t off, size_t want, int *err)
{
	uint64_t cap = t->open.max_bytes, got;
	char size[32];

	if (cap && off + want > cap)
		want = off < cap ? (size_t)(cap - off) : 0;
	if (!want) {
		safe_open__size_str(cap, size, sizeof(size));
		snprintf(t->why, sizeof(t->why), "grew past the %s cap; read up to it", size);
		*err = -EFBIG;
		return 0;
	}
	got = read_budget__take(t->budget, want);
	if (!got) {
		safe_open__size_str(t->budget->limit, size, sizeof(size));
		snprintf(t->why, sizeof(t->why),
			 "the capture's budget of %s read from target files is spent", size);
		*err = -EDQUOT;
	}
	return (size_t)got;
}

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * Was the file rewritten under us?  V8 opens the map with "w": a new
 * process that reuses the pid truncates the same inode and writes again,
 * possibly past our offset before we look.  The bytes just before the
 * offset then differ from what was read.
 */
static bool tail_rewritten(struct line_tail *t, int fd, const struct stat *st)
{
	uint8_t now[sizeof(t->check)];

	if (!t->known)
		return false;
	if ((uint64_t)st->st_dev != t->dev || (uint64_t)st->st_ino != t->ino)
		return true;
	if ((uint64_t)st->st_size < t->offset)
		return true;
	if (!t->check_len)
		return false;
	if (pread_full(fd, now, t->check_len, t->offset - t->check_len) != (ssize_t)t->check_len)
		return true;
	return memcmp(now, t->check, t->check_len) != 0;
}

/* Remember the bytes before the offset, for tail_rewritten() next time. */
static void tail_remember(struct line_tail *t, int fd)
{
	t->check_len = t->offset < sizeof(t->check) ? (size_t)t->offset : sizeof(t->check);
	if (t->check_len &&
	    pread_full(fd, t->check, t->check_len, t->offset - t->check_len) != (ssize_t)t->check_len)
		t->check_len = 0;
}

/*
 * First call: a buffer for the new bytes.  Later: a full buffer holding part
 * of one line (never more than max_line bytes: longer lines are skipped),
 * so doubling is bounded.
 */
static int tail_grow(struct line_tail *t, uint64_t pending)
{
	size_t cap = t->cap * 2;
	char *buf;

	if (!t->cap) {
		cap = pending + 1 < TAIL_CHUNK_MAX ? (size_t)pending + 1 : TAIL_CHUNK_MAX;
		if (cap < TAIL_CHUNK_MIN)
			cap = TAIL_CHUNK_MIN;
	}
	buf = realloc(t->buf, cap);
	if (!buf)
		return -ENOMEM;
	t->buf = buf;
	t->cap = cap;
	return 0;
}

/*
 * Offer the complete lines of buf[0..*have), whose bytes from scan on are
 * new, then drop what was consumed from the buffer and move the offset
 * past it.  0, or the negative return of ops->line (the offset then stops
 * before that line).
 */
static int tail_lines(struct line_tail *t, size_t *have, size_t scan,
		      const struct line_tail_ops *ops, void *ctx, size_t *nlines)
{
	size_t start = 0, e;
	char *nl;
	int err;

	while ((nl = memchr(t->buf + scan, '\n', *have - scan))) {
		e = (size_t)(nl - t->buf);
		if (t->skipping) {
			t->skipping = false;
		} else {
			if (e - start > t->max_line)
				err = ops->line(ctx, NULL, e - start);
			else
				err = ops->line(ctx, t->buf + start, e - start);
			if (err < 0) {
				t->offset += start;
				return err;
			}
			(*nlines)++;
		}
		start = scan = e + 1;
	}
	/* No newline in sight for too long: skip the line, do not buffer it. */
	if (!t->skipping && *have - start > t->max_line) {
		err = ops->line(ctx, NULL, *have - start);
		if (err < 0) {
			t->offset += start;
			return err;
		}
		(*nlines)++;
		t->skipping = true;
	}
	if (t->skipping)
		start = *have;
	t->offset += start;
	memmove(t->buf, t->buf + start, *have - start);
	*have -= start;
	return 0;
}

int line_tail__read(struct line_tail *t, const struct line_tail_ops *ops, void *ctx)
{
	size_t have = 0, scan, nlines = 0;
	struct stat st;
	int fd, err = 0;
	ssize_t n;

	t->why[0] = '\0';
	fd = tail_file(t, &st);
	if (fd < 0)
		return fd;
	if (tail_rewritten(t, fd, &st)) {
		t->offset = 0;
		t->skipping = false;
		t->check_len = 0;
		t->restarts++;
		err = ops->restart(ctx);
		if (err < 0) {
			tail_done(t, fd);
			return err;
		}
	}
	t->known = true;
	t->dev = (uint64_t)st.st_dev;
	t->ino = (uint64_t)st.st_ino;

	for (;;) {
		size_t want;

		if (have == t->cap) {
			uint64_t size = (uint64_t)st.st_size;

			err = tail_grow(t, size > t->offset ? size - t->offset : 0);
			if (err < 0)
				goto out;
		}
		/* At the cap and at the end of what fstat saw: nothing to refuse yet. */
		if (t->open.max_bytes && t->offset + have >= t->open.max_bytes &&
		    t->offset + have >= (uint64_t)st.st_size)
			break;
		want = tail_allow(t, t->offset + have, t->cap - have, &err);
		if (!want)
			goto out;
		n = pread(fd, t->buf + have, want, (off_t)(t->offset + have));
		if (n < 0) {
			read_budget__give_back(t->budget, want);
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		read_budget__give_back(t->budget, want - (size_t)n);
		if (!n)
			break;
		t->bytes_read += (uint64_t)n;
		scan = have;
		have += (size_t)n;
		err = tail_lines(t, &have, scan, ops, ctx, &nlines);
		if (err < 0)
			goto out;
	}
	err = nlines > INT_MAX ? INT_MAX : (int)nlines;
out:
	/* Also after an error part-way: the offset may have moved. */
	tail_remember(t, fd);
	free(t->buf);
	t->buf = NULL;
	t->cap = 0;
	tail_done(t, fd);
	return err;
}

int line_tail__feed(const char *buf, size_t len, size_t max_line,
		    const struct line_tail_ops *ops, void *ctx)
{
	const char *p = buf, *end = buf + len, *nl;
	size_t n;
	int err;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		n = (size_t)(nl - p);
		err = ops->line(ctx, n > max_line ? NULL : p, n);
		if (err < 0)
			return err;
		p = nl + 1;
	}
	return 0;
}
