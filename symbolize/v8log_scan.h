/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8log_scan: what a listing needs from a per-isolate V8 code log (see
 * v8log.h for the format), in one pass and without a code index: the V8
 * version and the scripts (id, name, SHA-256 and length of the source).
 *
 * Only v8-version, script-source and script-details lines are parsed;
 * every other line (code-creation above all: nearly all of a log) is
 * passed over on its first bytes.  Names and sources are decoded exactly
 * as v8log.c decodes them (v8log__unescape_string()), so a script's
 * SHA-256 here equals v8log_script.sha256_hex.  A source goes through the
 * hash and is dropped, unless the caller's keep_source() asks for it
 * (isoprof targets keeps the user scripts' sources, which the version id
 * hashes): memory grows with the scripts kept, not with the log.
 *
 * A scan object used for several files (the code logs of one process)
 * remembers the sources it did not keep, up to 64 of them and 8 MB, with
 * their hash: a source of the same name and the same bytes (memcmp) is not
 * hashed again.  The runtime's own scripts are the same in every isolate.
 * Scans of one file each (v8log_scan__tail()) share one such memo
 * (v8log_scan__share_memo()).
 *
 * Resumable: v8log_scan__tail() reads a file through a struct line_tail
 * the caller keeps, and adds to what the scan holds only the lines
 * appended since its last call (a last line without newline waits for
 * the next call); the tail restarts the scan when the file was replaced,
 * shrank or was rewritten.  With v8log_scan__drop_sources() between
 * calls, the scan of a file being written holds its scripts' names and
 * hashes, not their sources: a long-lived listing (isoprof serve) keeps
 * one per code log and reads only what was appended.
 *
 * Same rules as v8log: a later script-source of the same id replaces the
 * name and source, a script-details with a name renames.  A script whose
 * source was dropped and that a later line renames into one keep_source()
 * wants is read again (the whole file, keeping every source): rare,
 * exact.  Lines longer than V8LOG_LINE_MAX and malformed script lines are
 * counted and skipped.
 *
 * Ownership: the scan owns every string it hands out until
 * v8log_scan__free().  Not thread-safe.  Actions return 0 or a negative
 * errno; constructors return NULL and set errno.  Nothing prints.
 */
#ifndef ISOPROF_SYMBOLIZE_V8LOG_SCAN_H
#define ISOPROF_SYMBOLIZE_V8LOG_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/safe_open.h"
#include "lib/sha256.h"

struct v8log_scan_script {
	int id;			/* V8's script id */
	const char *name;	/* decoded; "" when the log gave none */
	bool has_source;	/* a script-source line was seen */
	size_t source_len;	/* decoded bytes; 0 without source */
	char sha256_hex[SHA256_HEX_LEN];	/* of the decoded source; "" without */
	const char *source;	/* decoded, NUL-terminated, when kept; NULL otherwise */
};

struct v8log_scan_stats {
	uint64_t lines;
	uint64_t bytes;		/* bytes of the file read */
	size_t malformed;	/* script or version lines that did not parse, long lines */
	size_t rescans;		/* whole-file reads again (see above) */
	size_t memo_hits;	/* sources not hashed again (see above) */
};

/* Whether the decoded source of a script named name is kept. */
typedef bool (*v8log_scan_keep_fn)(const char *name, void *ctx);

struct v8log_scan;
struct line_tail;

/*
 * An empty scan; keep_source NULL keeps no source.  errno ENOMEM.
 */
struct v8log_scan *v8log_scan__new(v8log_scan_keep_fn keep_source, void *ctx);
void v8log_scan__free(struct v8log_scan *s);

/*
 * Read the whole file at path (opened through safe_open.h with open,
 * NULL: any owner; max_bytes 0 means SAFE_OPEN_CODE_LOG_MAX; reads
 * charged to budget, NULL: none), replacing what the scan held.  0, or
 * the errno of line_tail__read() (-ENOENT, -EINVAL, -ELOOP, -EPERM,
 * -EFBIG, -EDQUOT...), -ENOMEM.  On error the scan holds what was read.
 */
int v8log_scan__file(struct v8log_scan *s, const char *path, const struct safe_open_opts *open,
		     struct read_budget *budget);

/*
 * Add the lines t (line_tail.h, a reader of one code log, max_line
 * V8LOG_LINE_MAX; the caller's) offers since its last read; t restarts
 * the scan when the file was replaced or rewritten, and
 * line_tail__rewind() with v8log_scan__restart() reads it from the start.
 * A dropped source renamed into one keep_source() wants reads the whole
 * file again, as v8log_scan__file() does.  0 or the errno of
 * line_tail__read(), as v8log_scan__file(); on error the scan holds what
 * was read.  Frees the decoding buffer when done (one scan per file).
 */
int v8log_scan__tail(struct v8log_scan *s, struct line_tail *t);

/* Forget every script and the version: an empty scan (the memo stays). */
void v8log_scan__restart(struct v8log_scan *s);

/* Free the kept sources (the scripts stay, their source NULL) and buffers. */
void v8log_scan__drop_sources(struct v8log_scan *s);

/*
 * Use owner's memo (see above) instead of one of s's own: owner must
 * outlive s.  Before s hashes anything.  0, -EINVAL (s has its memo
 * already, or is owner), -ENOMEM.
 */
int v8log_scan__share_memo(struct v8log_scan *s, struct v8log_scan *owner);

/* The same for the lines of buf[0..len) (a last line without newline included). */
int v8log_scan__buf(struct v8log_scan *s, const char *buf, size_t len);

/* Why the last v8log_scan__file() failed ("symlink refused"); "" */
const char *v8log_scan__why(const struct v8log_scan *s);

/* "11.3.244.8-node.38" as v8log__version() gives it; "" before the line. */
const char *v8log_scan__version(const struct v8log_scan *s);

size_t v8log_scan__count(const struct v8log_scan *s);
/* The i-th script in id order, or NULL. */
const struct v8log_scan_script *v8log_scan__at(struct v8log_scan *s, size_t i);

void v8log_scan__stats(const struct v8log_scan *s, struct v8log_scan_stats *st);

#endif /* ISOPROF_SYMBOLIZE_V8LOG_SCAN_H */
