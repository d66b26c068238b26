/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * listing_cache: what a listing of isolates (isoprof targets) shows of
 * each per-isolate code log, kept between listings so that a long-lived
 * lister (isoprof serve's) reads only what changed since its last pass.
 *
 * Per code log (looked up by path, valid for one file: device, inode):
 *   - a struct line_tail and a v8log_scan of that file without sources
 *     (scripts: id, name, SHA-256, length; the V8 version);
 *   - the isolate's name, version id and creation time, as
 *     isolate_registry__add_scan() computes them (the ids record gives),
 *     and a digest of the user scripts they were computed from;
 *   - the file's device, inode, size and mtime when it was last read.
 * A listing (listing_cache__begin(), listing_cache__read() for each log,
 * listing_cache__end()):
 *   - a log whose lstat() gives the same device, inode, size and mtime as
 *     at the last read is not opened (a rewrite in place to the very same
 *     size and mtime is seen at its next change, by line_tail's check);
 *   - a grown log is read from where the last read stopped (a last line
 *     without newline is read again next time, whole);
 *   - a log that shrank, was rewritten or replaced, or whose owner rule
 *     changed is read again from the start;
 *   - when what was appended changes the user scripts (a new one, a new
 *     source), the version id is computed again, which needs the user
 *     sources: the log is read again from the start, keeping them, and they
 *     are dropped after (rare: a worker compiles its scripts when it starts);
 *   - a log not read during a listing, or whose read failed, is forgotten
 *     at its end (a failed one is read whole when it comes back).
 * Memory: per log its scripts' names and hashes, not their sources; the
 * sources of the runtime's own scripts are remembered once for all logs
 * (v8log_scan.h's memo, 8 MB at most).
 *
 * Logs are opened through lib/safe_open.h with the options given (the
 * target's owner rule; max_bytes 0: SAFE_OPEN_CODE_LOG_MAX).  Not
 * thread-safe.  Actions return 0 or a negative errno; the constructor
 * returns NULL and sets errno.  Nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_LISTING_CACHE_H
#define ISOPROF_ATTRIBUTE_LISTING_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"
#include "lib/sha256.h"
#include "symbolize/v8log_scan.h"
#include "user/attribute/isolates.h"

/* One code log as a listing shows it; owned by the cache. */
struct listing_log {
	struct v8log_scan *scan;	/* scripts (sources dropped) and V8 version */
	bool known;			/* the isolate fields below are set */
	const char *name;		/* isolate_info.name */
	char version[ISOLATE_VERSION_LEN + 1];
	char version_full[SHA256_HEX_LEN];
	uint64_t created_ns;		/* isolate_info.created_ns */
	bool created_is_btime;
};

struct listing_cache_stats {
	size_t logs;		/* cached now */
	size_t unchanged;	/* this listing: not opened */
	size_t appended;	/* read from where the last read stopped */
	size_t whole;		/* read from the start (new, replaced, shrunk) */
	size_t reread;		/* read again from the start for the version id */
	size_t forgotten;	/* gone since the listing before */
	uint64_t bytes;		/* bytes read this listing */
};

struct listing_cache;

struct listing_cache *listing_cache__new(void);
void listing_cache__free(struct listing_cache *c);

/* A listing starts: stats count from here. */
void listing_cache__begin(struct listing_cache *c);

/*
 * The log at path (a per-isolate code log name; host_pid > 0: the pid the
 * process has on this host, see isolate_registry__add_log_pid()), brought
 * up to date as above.  *out stays valid until the next call of
 * listing_cache__read() or listing_cache__end().  0; or the errno of
 * lstat or of reading (-ENOENT, -ELOOP, -EPERM, -EFBIG, ...: the log's
 * state is dropped and it is read whole next time; *why says why when
 * the reader said), -EINVAL (not a code log name), -ENOMEM.
 */
int listing_cache__read(struct listing_cache *c, pid_t host_pid, const char *path,
			const struct safe_open_opts *open, const struct listing_log **out,
			const char **why);

/* The listing is over: forget the logs it did not read. */
void listing_cache__end(struct listing_cache *c);

void listing_cache__stats(const struct listing_cache *c, struct listing_cache_stats *st);

#endif /* ISOPROF_ATTRIBUTE_LISTING_CACHE_H */
