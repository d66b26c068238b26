/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * spool: the pusher's queue of encoded windows (user/push/spool_record.h),
 * oldest first, capped in bytes; in a directory or in memory.
 *
 * On disk each window is one file, written atomically (lib/fileio: a
 * hidden temporary file renamed into place), named
 * "w-<until_ns, 20 digits>-<sequence, 10 digits>.isp" so that names sort
 * chronologically; the sequence continues after the highest one found,
 * so a new run never reuses a predecessor's name.  Opening a directory
 * removes the temporary files a crash left ("`.w-*.tmp.*`"), takes every
 * spool file in as queued, and ignores other names.  A file is read only
 * when it is next to go; one that fails validation is renamed to
 * "NAME.corrupt" and never sent.  In memory the records are kept as they
 * would be written.
 *
 * The cap counts record bytes (file sizes).  Adding a record that would
 * pass it drops the oldest first, except the one being sent (so the cap
 * may be passed by that one for a while); a record bigger than the whole
 * cap is refused.
 *
 * One process at a time uses a spool directory (flock(2) on it, held
 * while open): a second one is refused.
 *
 * Thread-safe (one lock inside, held for the index only, never for disk
 * I/O but an unlink or rename).  One taker at a time (the sender).
 * Actions return 0 or a negative errno.
 */
#ifndef ISOPROF_PUSH_SPOOL_H
#define ISOPROF_PUSH_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spool;

struct spool_open_info {
	uint64_t recovered, recovered_bytes;	/* a predecessor's records queued */
	uint64_t removed_tmp;			/* half-written temporary files removed */
	uint64_t dropped;			/* recovered ones dropped to fit the cap */
};

/*
 * A spool in dir (created 0700 if missing; NULL: in memory) holding at
 * most max_bytes.  NULL with errno and a sentence in err.
 */
struct spool *spool__open(const char *dir, uint64_t max_bytes, struct spool_open_info *info,
			  char *err, size_t err_len);

/* Free s; the files stay. */
void spool__close(struct spool *s);

/*
 * Queue the record rec[0..len) (the spool takes rec, malloc()ed, either
 * way) for a window ending at until_ns.  *dropped: how many of the oldest
 * went to make room.  0, -EFBIG (bigger than the cap: not queued), -errno
 * of the write.
 */
int spool__add(struct spool *s, uint8_t *rec, size_t len, uint64_t until_ns, uint64_t *dropped);

struct spool_item {
	uint64_t id;		/* which entry (for spool__finish()) */
	char name[48];		/* its file name ("" in memory) */
	const uint8_t *data;	/* the record, valid until spool__finish() */
	size_t len;
	bool owned;		/* data was read from disk for this item */
};

/*
 * The oldest record, held (never dropped) until spool__finish().  0,
 * -ENOENT when the queue is empty, -errno when its file could not be read
 * (the entry is then forgotten: try again).
 */
int spool__take(struct spool *s, struct spool_item *it);

enum spool_outcome {
	SPOOL_DONE,	/* sent or given up: remove it */
	SPOOL_KEEP,	/* not sent: it stays first in line */
	SPOOL_CORRUPT,	/* invalid: set aside (NAME.corrupt), never sent */
};

void spool__finish(struct spool *s, struct spool_item *it, enum spool_outcome what);

/* Records queued now and their bytes. */
void spool__count(struct spool *s, uint64_t *n, uint64_t *bytes);

/* The directory (NULL in memory). */
const char *spool__dir(const struct spool *s);

/* Spool file names: "w-<until_ns>-<seq>.isp" into out; is name one, and which? */
void spool__name(uint64_t until_ns, uint64_t seq, char *out, size_t len);
bool spool__parse_name(const char *name, uint64_t *until_ns, uint64_t *seq);
/* Is name a temporary file lib/fileio left while writing a spool file? */
bool spool__is_tmp(const char *name);

#endif /* ISOPROF_PUSH_SPOOL_H */
