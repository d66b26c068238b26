/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * code_index: the JIT code entries of one V8 file (perfmap's
 * /tmp/perf-PID.map, v8log's per-isolate code log) and the address index
 * over them.
 *
 * An entry is a range [start, start + size) with a name (bytes, copied
 * into the index's names arena) and, when the index was made with a
 * payload_size, that many bytes the user keeps with it.  Entries are
 * added in the order the file logs them; for an address the NEWEST entry
 * covering it wins (freed code space is reused by newer code).
 *
 * Added entries show in lookups after code_index__reindex(), which folds
 * the entries added since into a sorted, non-overlapping index of the
 * visible piece of each entry: O(n log n) worst case in the pieces held
 * and the new entries, O(n) without overlaps.  An entry with no visible
 * piece left is dead, and so is a dropped one; dead entries and their
 * names are freed (compaction) once they are more than half of what is
 * held, so memory follows the live entries, not the file.  What a dead
 * entry hid stays hidden.
 *
 * With by_start, live entries are also found by their exact start, as a
 * code log needs for its move and delete events: adding an entry at the
 * start of a live one drops that one (code objects do not overlap), and
 * code_index__move() moves one.
 *
 * Names are split into a struct v8name by the user's parse callback on
 * the first lookup of an entry, and the result is kept with the entry.
 *
 * Ids: an entry's id is its age (a larger id is newer).  Ids from
 * code_index__add(), __move() and __find_start() stay valid until the next
 * code_index__reindex() or code_index__clear(), which may renumber them.
 * Pointers: strings, payloads and parsed names handed out stay valid until
 * the next code_index__add(), __move(), __reindex(), __clear() or
 * __free().  Not thread-safe.  Constructors return NULL and set errno;
 * actions return 0 (or an id) or a negative errno, -ENOMEM or -EINVAL.
 */
#ifndef ISOPROF_SYMBOLIZE_CODE_INDEX_H
#define ISOPROF_SYMBOLIZE_CODE_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/v8name.h"

struct code_index;

/*
 * Split name[0..len) of an entry (NUL-terminated; may hold NULs) into
 * *out, its strings in buf, which holds size == v8name__buf_size(len)
 * bytes and lives as long as the parse is kept.  Strings of out must not
 * point into name: names move on compaction.
 */
typedef void (*code_index_parse_fn)(const char *name, size_t len, const void *payload,
				    struct v8name *out, char *buf, size_t size);

struct code_index_opts {
	size_t payload_size;	/* bytes kept with each entry; 0 for none */
	bool by_start;		/* find live entries by exact start; see above */
	code_index_parse_fn parse;
};

/* What an entry holds. */
struct code_entry {
	uint64_t start;
	uint64_t size;
	const char *name;		/* name_len bytes, then a NUL */
	size_t name_len;
	const void *payload;		/* payload_size bytes; NULL without payload */
	const struct v8name *parsed;	/* from code_index__lookup() only, else NULL */
};

/* errno EINVAL (no parse callback), ENOMEM */
struct code_index *code_index__new(const struct code_index_opts *opts);
void code_index__free(struct code_index *ci);

/* Forget every entry (the file was replaced). */
void code_index__clear(struct code_index *ci);

/*
 * A new entry, newer than all before: [start, start + size) named
 * name[0..len), payload copied (payload_size bytes, or NULL for zeroes).
 * Returns its id, or -EINVAL (size 0, an end past UINT64_MAX, a name of
 * 4 GiB or more), -ENOMEM; the index is then unchanged.
 */
long code_index__add(struct code_index *ci, uint64_t start, uint64_t size, const char *name,
		     size_t len, const void *payload);

/* by_start: the id of the live entry that starts at start, or -1. */
long code_index__find_start(const struct code_index *ci, uint64_t start);

/* Entry id is gone (its memory holds other code now). */
void code_index__drop(struct code_index *ci, size_t id);

/*
 * by_start: entry id moved to to.  It is dropped, and so is the live
 * entry that starts at to; a new newest entry at to takes over its size,
 * name and payload.  Returns the new id, or -EINVAL (to + size past
 * UINT64_MAX), -ENOMEM; the index is then unchanged.
 */
long code_index__move(struct code_index *ci, size_t id, uint64_t to);

/* Entry id as it is now; out->parsed is NULL. */
void code_index__get(const struct code_index *ci, size_t id, struct code_entry *out);

/*
 * Fold the entries added and dropped since the last call into the
 * address index; may compact.  0, or -ENOMEM: entries added since do not
 * show in lookups until a later call succeeds.
 */
int code_index__reindex(struct code_index *ci);

/* The newest indexed entry covering addr, name parsed: 0, -ENOENT or -ENOMEM. */
int code_index__lookup(struct code_index *ci, uint64_t addr, struct code_entry *out);

/* Live entries and pieces in the index, as of the last reindex. */
size_t code_index__count(const struct code_index *ci);
size_t code_index__segments(const struct code_index *ci);
/* Heap held for entries, names, payloads and the indexes (not parsed names). */
size_t code_index__mem_bytes(const struct code_index *ci);

/*
 * The newest-wins flattening itself, for tests.  A span is [start, end)
 * of entry id; a larger id is newer.
 */
struct code_span {
	uint64_t start;
	uint64_t end;
	size_t id;
};

/*
 * Flatten n spans sorted by start (overlaps allowed) into the pieces that
 * are visible when newer spans hide older ones: sorted, non-overlapping,
 * adjacent pieces of one id merged.  *out is malloc()ed (NULL when empty).
 * Returns 0 or -ENOMEM.  O(n log n) worst case, O(n) without overlaps.
 */
int code_spans__flatten(const struct code_span *in, size_t n, struct code_span **out,
			size_t *nr_out);

/* Index of the span in spans[0..n) (sorted, non-overlapping) holding addr, or -1. */
ptrdiff_t code_spans__find(const struct code_span *spans, size_t n, uint64_t addr);

#endif /* ISOPROF_SYMBOLIZE_CODE_INDEX_H */
