/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * perfmap: the JIT symbol file V8 writes with --perf-basic-prof,
 * /tmp/perf-PID.map, read incrementally while the process runs.
 *
 * Lines are "<start> <size> <name>\n": lowercase hex (an optional "0x" on
 * either number, as V8 writes for Android's simpleperf), one blank each,
 * the name is raw bytes up to the newline.  One file per process, shared
 * by all its isolates; entries are appended and never removed.  When GC
 * frees code its range can be reused, and the new code is appended: for an
 * address the NEWEST entry covering it wins.
 *
 * Memory follows the live entries, not the file: after each batch of new
 * lines the map keeps a sorted, non-overlapping index of the visible piece
 * of each entry; an entry with no visible piece left is dead, and dead
 * entries and their names are dropped once they are more than half of
 * what is held (symbolize/code_index.h).  Entries of size 0 cover nothing
 * and are not kept.
 *
 * Filtered (perfmap__want()): a reader that knows which addresses it will
 * look up (a capture, after its window) keeps only the entries covering
 * one of them, so memory follows the distinct sampled addresses, not the
 * file, and a read is one pass of parsing two numbers per line.  For a
 * wanted address the answer is the same as without the filter (the newest
 * entry covering it wins: that entry is kept); other addresses are not
 * found.  A line that matches the newest entry kept for every wanted
 * address it covers (start, size and name: V8 logs each builtin again for
 * every new isolate) is not kept again.  Wanting addresses not wanted before makes the next update read
 * the file again from its start (entries dropped earlier may cover them).
 *
 * Reading (lib/line_tail.h): perfmap__update() reads only the bytes
 * appended since the last call.  A last line without its newline is left for a later call (V8
 * writes line-buffered, a reader can see half a line).  When the file was
 * replaced (other inode), shrank, or its already-read bytes changed (the
 * pid was reused and V8 truncated the file), the map starts over.  Lines
 * longer than PERFMAP_LINE_MAX and lines that do not parse are skipped and
 * counted, never fatal; the first one's line number is kept for a message.
 *
 * Ownership and lifetime: the map owns every string.  Strings and pointers
 * handed out by perfmap__lookup() stay valid until the next
 * perfmap__update(), perfmap__parse_buf() or perfmap__free().  Not
 * thread-safe.  Constructors return NULL and set errno; actions return a
 * count or 0, or a negative errno.
 */
#ifndef ISOPROF_SYMBOLIZE_PERFMAP_H
#define ISOPROF_SYMBOLIZE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"
#include "symbolize/v8name.h"

/* V8 cuts names at 4096 bytes; other JITs write longer ones, but not this long. */
#define PERFMAP_LINE_MAX (64 * 1024)

struct perfmap;

struct perfmap_sym {
	uint64_t start;		/* the entry's start (not the looked-up address) */
	uint64_t size;
	const char *raw;	/* the name as written in the file */
	struct v8name name;	/* raw split by v8name__parse() */
};

struct perfmap_stats {
	size_t entries;		  /* live entries (perfmap__count()) */
	size_t segments;	  /* pieces in the address index */
	uint64_t lines;		  /* lines parsed since the (re)start, malformed included */
	size_t malformed;
	size_t first_malformed_line; /* 1-based; 0 when none */
	uint64_t offset;	  /* bytes of the file consumed: whole lines only */
	uint64_t bytes_read;	  /* bytes read from the file over all updates */
	size_t restarts;	  /* times the file was found replaced or truncated */
	uint64_t rescans;	  /* reads from the start because the filter grew */
	size_t mem_bytes;	  /* heap held for entries, names and the index */
};

/*
 * A map for path (not opened yet: the first perfmap__update() reads it).
 * path NULL gives a map fed only by perfmap__parse_buf().  The file is
 * opened through safe_open.h with open (NULL: any owner; a max_bytes of 0
 * means SAFE_OPEN_PERFMAP_MAX): a target's map is owned by the target
 * (SAFE_OPEN_OWNER_TARGET).  Reads are charged to budget (NULL: none).
 * See line_tail__init() for what must outlive the map.  errno ENOMEM.
 */
struct perfmap *perfmap__new(const char *path, const struct safe_open_opts *open,
			     struct read_budget *budget);
void perfmap__free(struct perfmap *pm);

/*
 * Read the lines appended since the last call.  Returns the number of new
 * entries kept, or -ENOENT when the file does not exist (what was read before
 * stays: late samples still resolve after the process exits), -EINVAL for
 * a map without path, a refusal or cap of line_tail__read() (then
 * perfmap__why() says why), -ENOMEM, or the errno of open/read.
 */
int perfmap__update(struct perfmap *pm);

/*
 * Open the file now and read that one from then on, wherever its path
 * points later (line_tail__hold()): a capture that reads its target's map
 * after the window holds it from before, so a map deleted or replaced
 * meanwhile still names what the target ran.  0, -EINVAL without a path,
 * or the refusal or errno of the open (perfmap__why() says why; later
 * updates then open the path as without it).
 */
int perfmap__hold(struct perfmap *pm);

/* The path given to perfmap__new(); "" without one. */
const char *perfmap__path(const struct perfmap *pm);

/* Why the last perfmap__update() failed ("a FIFO, not a regular file"); "" */
const char *perfmap__why(const struct perfmap *pm);

/*
 * Add the lines of buf[0..len) as one batch, newer than all before; a last
 * line without newline counts as complete.  Returns the number of new
 * entries or -ENOMEM.  For tests and fuzzing; also usable for a map text
 * obtained another way.
 */
int perfmap__parse_buf(struct perfmap *pm, const char *buf, size_t len);

/*
 * From now on keep only the entries covering one of addrs[0..n) or of the
 * addresses wanted before (see above); n may be 0 (then nothing is kept
 * until addresses are wanted).  The next perfmap__update() reads from the
 * start when a new address is covered by no entry kept (a new address
 * inside a kept entry, a sample elsewhere in a function already named,
 * costs no read), or an unfiltered read kept entries.
 * 0 or -ENOMEM (the filter is then unchanged).
 */
int perfmap__want(struct perfmap *pm, const uint64_t *addrs, size_t n);

/*
 * perfmap__want() for addresses only lines not read yet can name (no
 * mapping held them when the map was last read: code mapped since, or a
 * frame walk's garbage): they never make the map read from its start.
 */
int perfmap__want_tail(struct perfmap *pm, const uint64_t *addrs, size_t n);

/* Would a lookup of addr be answered (no filter, or addr is wanted)? */
bool perfmap__wants(const struct perfmap *pm, uint64_t addr);

/*
 * The newest entry covering addr: 0, or -ENOENT (none, or a filtered map
 * that does not want addr), -ENOMEM.
 */
int perfmap__lookup(struct perfmap *pm, uint64_t addr, struct perfmap_sym *out);

size_t perfmap__count(const struct perfmap *pm);
size_t perfmap__malformed(const struct perfmap *pm);
size_t perfmap__first_malformed_line(const struct perfmap *pm);
void perfmap__stats(const struct perfmap *pm, struct perfmap_stats *st);

/*
 * Where the perf map of pid is, as seen from here: "/tmp/perf-PID.map", or,
 * when pid lives in another pid or mount namespace (a container),
 * "PROC_ROOT/PID/root/tmp/perf-NSPID.map" where NSPID is the pid inside its
 * own namespace (the last NSpid: value of PROC_ROOT/PID/status).
 * proc_root NULL means "/proc".  Returns 0, -ESRCH when the process does
 * not exist, -ENAMETOOLONG when buf is too small.
 */
int perfmap__path_for_pid(const char *proc_root, pid_t pid, char *buf, size_t size);

#endif /* ISOPROF_SYMBOLIZE_PERFMAP_H */
