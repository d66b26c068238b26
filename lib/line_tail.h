/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * line_tail: incremental reader of a file that grows by whole lines, such
 * as V8's perf map and code log, polled while their writer runs.
 *
 * Each line_tail__read() opens the file, offers every complete line
 * appended since the last call and closes it again (unless it is held:
 * line_tail__hold()).  A last line without its newline is left for a
 * later call (a writer can be seen half-way through a line).  The file
 * is read from scratch, after ops->restart(), when it was replaced (other
 * device or inode), shrank below what was read, or the bytes just before
 * the read offset changed (the writer truncated and rewrote it, e.g. a new
 * process that reuses the pid).
 * Lines longer than max_line are not buffered: they are offered as
 * skipped (line NULL) as soon as they are known to be too long, and the
 * rest of such a line is passed over.  Reads are sized to what was
 * appended, and no buffer is kept between calls: a host tails hundreds of
 * these files.
 *
 * The file is opened through lib/safe_open.h with the options given to
 * line_tail__init() (owner, root, identity, and a per-file byte cap that
 * also bounds reading when the file grows past it later), and every byte
 * read is charged to the capture's read budget, when there is one: a
 * target that writes without end, rewrites its file over and over or
 * plants a FIFO, a symlink or a sparse terabyte cannot make a reader block
 * or read without bound.  line_tail__why() says why the last read failed.
 *
 * Embed struct line_tail and use the functions; offset, bytes_read and
 * restarts may be read for statistics.  Not thread-safe.  Actions return
 * 0 or a negative errno.
 */
#ifndef ISOPROF_LIB_LINE_TAIL_H
#define ISOPROF_LIB_LINE_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/safe_open.h"

/* max_line when line_tail__init() is given 0. */
#define LINE_TAIL_MAX_DEFAULT (64 * 1024)

struct line_tail {
	char *path;
	size_t max_line;
	bool known;		/* dev and ino describe the file read so far */
	uint64_t dev;
	uint64_t ino;
	uint64_t offset;	/* bytes consumed: up to the last newline */
	bool skipping;		/* inside a line longer than max_line */
	uint8_t check[32];	/* the bytes just before offset, to notice a rewrite */
	size_t check_len;
	char *buf;		/* only during a read */
	size_t cap;
	uint64_t bytes_read;	/* over all reads */
	size_t restarts;	/* times the file was found replaced or rewritten */
	struct safe_open_opts open;
	struct read_budget *budget;
	int fd;			/* held (line_tail__hold()); -1: opened per read */
	char why[128];		/* why the last read failed; "" */
};

struct line_tail_ops {
	/* The file was replaced or rewritten: forget what its lines said. */
	int (*restart)(void *ctx);
	/*
	 * One complete line without its newline; line NULL means a line longer
	 * than max_line was skipped (len is what was seen of it).  A negative
	 * return stops the read; that line is offered again next time.
	 */
	int (*line)(void *ctx, const char *line, size_t len);
};

/*
 * A reader of path (copied; not opened yet).  open (NULL: any owner, no
 * cap) is copied, but the strings it points to (root, proc_root) must
 * outlive the reader; budget (NULL: none) is shared, not owned.  -ENOMEM.
 */
int line_tail__init(struct line_tail *t, const char *path, size_t max_line,
		    const struct safe_open_opts *open, struct read_budget *budget);
void line_tail__release(struct line_tail *t);

/*
 * Open the file now (through safe_open, as a read would) and keep it open:
 * every later read reads this file, and the path is not looked at again.
 * A reader that reads once, long after it starts (a capture, after its
 * window), so still sees the file as it was when it started, and what its
 * writer appended since: deleted or replaced at the path meanwhile, it is
 * the same file (a rewrite in place is noticed as usual).  One descriptor
 * per reader, until line_tail__release().  0 (also when already held), or
 * the negative errno of the open (line_tail__why() says why); the reader
 * then opens by path at each read, as without it.
 */
int line_tail__hold(struct line_tail *t);

/*
 * The next read starts again from the beginning, as a first read (no
 * ops->restart, not counted in restarts); bytes_read and a held file stay.
 */
void line_tail__rewind(struct line_tail *t);

/*
 * Offer every complete line appended since the last call.  Returns the
 * number of lines offered, or a negative errno: that of open/read (-ENOENT
 * when the file is gone), a refusal of safe_open__file() (-EINVAL not a
 * regular file, -ELOOP symlink, -EPERM owner, -EFBIG over the cap, -ESTALE),
 * -EFBIG also when reading reaches the cap, -EDQUOT when the read budget
 * is spent, -ENOMEM, or the first negative return of ops->line or
 * ops->restart.  Lines offered before an error stay consumed.
 */
int line_tail__read(struct line_tail *t, const struct line_tail_ops *ops, void *ctx);

/* Why the last line_tail__read() failed, for a note; "" when it did not say. */
const char *line_tail__why(const struct line_tail *t);

/*
 * Offer the lines of buf[0..len) as line_tail__read() offers a file's, but
 * a last line without its newline counts as complete (a text obtained
 * another way, tests, fuzzing).  Lines longer than max_line are offered
 * as skipped.  Returns 0 or the first negative return of ops->line, which
 * stops the walk; ops->restart is not used.
 */
int line_tail__feed(const char *buf, size_t len, size_t max_line,
		    const struct line_tail_ops *ops, void *ctx);

#endif /* ISOPROF_LIB_LINE_TAIL_H */
