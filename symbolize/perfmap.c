// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* perfmap: incremental reader of V8's /tmp/perf-PID.map; see perfmap.h. */
#include "symbolize/perfmap.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/line_tail.h"
#include "lib/procfs.h"
#include "lib/textscan.h"
#include "symbolize/code_index.h"

#define PERFMAP_PAGE_SHIFT 12
#define PERFMAP_PAGE_BITS 65536
/* Lines over more pages than this skip the page bits. */
#define PERFMAP_PAGE_SPAN 4

struct perfmap {
	struct line_tail tail;
	bool has_file;
	struct code_index *code;

	/*
	 * The filter (perfmap__want()): sorted, unique; only entries covering
	 * one of these are kept.  rescan: addresses were added since the
	 * file was last read from its start.
	 */
	bool filtered;
	uint64_t *want;
	size_t nr_want, want_cap;
	/*
	 * owner[i]: the newest entry kept that covers want[i], by content.
	 * A line identical to the owner of every wanted address it covers
	 * changes no lookup (V8 logs each builtin again for every new
	 * isolate, at the same address), so it is not kept at all.
	 */
	struct want_owner *owner;
	size_t owner_cap;
	/*
	 * A bit per hashed 4 KiB page holding a wanted address: most lines
	 * of a map are rejected by a load or two from these 8 KiB instead
	 * of a binary search over the filter.
	 */
	uint64_t want_pages[PERFMAP_PAGE_BITS / 64];
	bool rescan;
	uint64_t rescans;	/* times the filter grew past what was kept */
	size_t unindexed;	/* entries added since the last reindex */

	size_t added;		/* entries added by the current call */
	uint64_t lines;
	size_t malformed;
	size_t first_malformed;
};

struct want_owner {
	uint64_t start;
	uint64_t size;
	uint64_t name_hash;
	size_t name_len;		/* 0: no owner yet */
};

static void parse_name(const char *name, size_t len, const void *payload, struct v8name *out,
		       char *buf, size_t size)
{
	(void)payload;
	v8name__parse(name, len, out, buf, size);
}

static const struct code_index_opts code_opts = {
	.parse = parse_name,
};

static void note_malformed(struct perfmap *pm)
{
	if (!pm->malformed++)
		pm->first_malformed = (size_t)pm->lines;
}

static size_t page_bit(uint64_t page)
{
	return (size_t)(hash__mix64(page) & (PERFMAP_PAGE_BITS - 1));
}

/* A filtered read folds its new entries into the index this often. */
#define PERFMAP_FOLD_EVERY 16384

/*
 * First index in the filter whose address is >= addr.  Without a branch on
 * the comparison: every line of the map is looked up, and which way each
 * step goes is a coin toss the branch predictor loses.
 */
static size_t want_pos(const struct perfmap *pm, uint64_t addr)
{
	const uint64_t *base = pm->want;
	size_t n = pm->nr_want;

	if (!n)
		return 0;
	while (n > 1) {
		size_t half = n / 2;

		base = base[half] < addr ? base + half : base;
		n -= half;
	}
	return (size_t)(base - pm->want) + (*base < addr);
}

/*
 * Does [start, start + size) hold an address the filter wants?  *first:
 * the first such address's index.
 */
static bool wanted(const struct perfmap *pm, uint64_t start, uint64_t size, size_t *first)
{
	uint64_t page = start >> PERFMAP_PAGE_SHIFT, last = (start + size - 1) >> PERFMAP_PAGE_SHIFT;
	size_t i;

	if (last - page < PERFMAP_PAGE_SPAN) {
		bool maybe = false;

		for (; page <= last && !maybe; page++) {
			i = page_bit(page);
			maybe = pm->want_pages[i / 64] >> (i % 64) & 1;
		}
		if (!maybe)
			return false;
	}
	i = want_pos(pm, start);

	*first = i;
	return i < pm->nr_want && pm->want[i] - start < size;
}

/* A name's hash, a word at a time: most lines of a map get here. */
static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = hash__word(HASH_SEED, len), w;

	for (; len >= 8; name += 8, len -= 8) {
		memcpy(&w, name, 8);
		h = hash__word(h, w);
	}
	w = 0;
	memcpy(&w, name, len);
	return hash__word(h, w);
}

/*
 * Is the entry (start, size, name) already the owner of every wanted
 * address from want[first] it covers?  If not, it becomes their owner
 * (the caller keeps it).
 */
static bool owns_all(struct perfmap *pm, size_t first, uint64_t start, uint64_t size,
		     const char *name, size_t len)
{
	struct want_owner me = {
		.start = start,
		.size = size,
		.name_hash = name_hash(name, len),
		.name_len = len,
	};
	bool same = true;
	size_t i;

	for (i = first; i < pm->nr_want && pm->want[i] - start < size; i++) {
		struct want_owner *o = &pm->owner[i];

		if (o->start != me.start || o->size != me.size || o->name_hash != me.name_hash ||
		    o->name_len != me.name_len) {
			same = false;
			*o = me;
		}
	}
	return same;
}

/* One line without its newline; NULL for one too long to keep. */
static int add_line(struct perfmap *pm, const char *line, size_t len)
{
	const char *p = line, *end;
	uint64_t start, size;
	size_t first = 0;
	long id;

	pm->lines++;
	if (!line) {
		note_malformed(pm);
		return 0;
	}
	if (!len)
		return 0;
	end = line + len;
	if (!textscan__hex_0x(&p, end, &start) || p >= end || *p++ != ' ' ||
	    !textscan__hex_0x(&p, end, &size) || p >= end || *p++ != ' ' || p == end ||
	    size > UINT64_MAX - start) {
		note_malformed(pm);
		return 0;
	}
	if (!size || (pm->filtered && !wanted(pm, start, size, &first)))
		return 0;
	/* Only lines kept are scanned whole: a filtered read skips most. */
	if (memchr(p, '\0', (size_t)(end - p))) {
		note_malformed(pm);
		return 0;
	}
	if (pm->filtered && owns_all(pm, first, start, size, p, (size_t)(end - p)))
		return 0;
	id = code_index__add(pm->code, start, size, p, (size_t)(end - p), NULL);
	if (id < 0)
		return (int)id;
	pm->added++;
	/*
	 * V8 logs every builtin again for each new isolate, at the same
	 * address: a wanted address in one is covered a thousand times on a
	 * host of a thousand isolates.  Folding often lets the copies that
	 * newer ones hide die (code_index.h), so a filtered read holds about
	 * what it keeps, not every line that matched.
	 */
	if (pm->filtered && ++pm->unindexed >= PERFMAP_FOLD_EVERY) {
		pm->unindexed = 0;
		return code_index__reindex(pm->code);
	}
	return 0;
}

static void clear(struct perfmap *pm)
{
	code_index__clear(pm->code);
	if (pm->owner)
		memset(pm->owner, 0, pm->owner_cap * sizeof(*pm->owner));
	pm->lines = 0;
	pm->malformed = 0;
	pm->first_malformed = 0;
	pm->added = 0;
}

static int tail_restart(void *ctx)
{
	clear(ctx);
	return 0;
}

static int tail_line(void *ctx, const char *line, size_t len)
{
	return add_line(ctx, line, len);
}

static const struct line_tail_ops tail_ops = {
	.restart = tail_restart,
	.line = tail_line,
};

struct perfmap *perfmap__new(const char *path, const struct safe_open_opts *open,
			     struct read_budget *budget)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	struct safe_open_opts o = { 0 };

	if (!pm)
		return NULL;
	pm->code = code_index__new(&code_opts);
	if (!pm->code)
		goto nomem;
	if (path) {
		if (open)
			o = *open;
		if (!o.max_bytes)
			o.max_bytes = SAFE_OPEN_PERFMAP_MAX;
		if (line_tail__init(&pm->tail, path, PERFMAP_LINE_MAX, &o, budget) < 0)
			goto nomem;
		pm->has_file = true;
	}
	return pm;
nomem:
	code_index__free(pm->code);
	free(pm);
	errno = ENOMEM;
	return NULL;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	if (pm->has_file)
		line_tail__release(&pm->tail);
	code_index__free(pm->code);
	free(pm->want);
	free(pm->owner);
	free(pm);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The owners of the filter after it grew: an address it had keeps its
 * owner; a new one that an entry already kept covers gets that entry
 * (the map need not be read again for it).  false when a new address is
 * covered by nothing kept: an earlier read may have dropped the line
 * naming it, so the map is read again from its start (tail_only: new
 * addresses that only later lines may name; true then).
 *
 * A line read earlier that covers a new address but none wanted then was
 * dropped; if it is newer than the kept entry that covers the address
 * (code at a reused address, overlapping only part of the kept entry),
 * the address keeps the older name until the map is read from its start
 * again.  Rare, and the price of not rereading a map of a thousand
 * isolates (hundreds of MB) each time a sample lands at a new address.
 */
static bool owners_follow(struct perfmap *pm, const uint64_t *old_want,
			  const struct want_owner *old_owner, size_t old, bool tail_only)
{
	size_t j = 0;

	for (size_t i = 0; i < pm->nr_want; i++) {
		struct code_entry e;

		while (j < old && old_want[j] < pm->want[i])
			j++;
		if (j < old && old_want[j] == pm->want[i]) {
			pm->owner[i] = old_owner[j];
			continue;
		}
		if (code_index__lookup(pm->code, pm->want[i], &e)) {
			if (!tail_only)
				return false;
			pm->owner[i] = (struct want_owner){ 0 };
			continue;
		}
		pm->owner[i] = (struct want_owner){
			.start = e.start,
			.size = e.size,
			.name_hash = name_hash(e.name, e.name_len),
			.name_len = e.name_len,
		};
	}
	return true;
}

static int want(struct perfmap *pm, const uint64_t *addrs, size_t n, bool tail_only)
{
	size_t total = pm->nr_want + n, k = 0, old = pm->nr_want;
	struct want_owner *old_owner = NULL;
	uint64_t *old_want = NULL;
	bool followed;

	/* what an unfiltered read kept is more than asked for: start over */
	if (!pm->filtered && perfmap__count(pm))
		pm->rescan = true;
	pm->filtered = true;
	if (!n)
		return 0;
	if (array_grow(&pm->want, &pm->want_cap, total))
		return -ENOMEM;
	if (pm->owner_cap < pm->want_cap) {
		struct want_owner *o = realloc(pm->owner, pm->want_cap * sizeof(*o));

		if (!o)
			return -ENOMEM;
		memset(o + pm->owner_cap, 0, (pm->want_cap - pm->owner_cap) * sizeof(*o));
		pm->owner = o;
		pm->owner_cap = pm->want_cap;
	}
	/* the owners are by position: kept aside while the filter is sorted */
	if (!pm->rescan && old && perfmap__count(pm)) {
		old_want = malloc(old * sizeof(*old_want));
		old_owner = malloc(old * sizeof(*old_owner));
		if (old_want && old_owner) {
			memcpy(old_want, pm->want, old * sizeof(*old_want));
			memcpy(old_owner, pm->owner, old * sizeof(*old_owner));
		}
	}
	memcpy(pm->want + old, addrs, n * sizeof(*addrs));
	qsort(pm->want, total, sizeof(*pm->want), cmp_u64);
	for (size_t i = 0; i < total; i++)
		if (!k || pm->want[i] != pm->want[k - 1])
			pm->want[k++] = pm->want[i];
	pm->nr_want = k;
	memset(pm->want_pages, 0, sizeof(pm->want_pages));
	for (size_t i = 0; i < k; i++) {
		size_t bit = page_bit(pm->want[i] >> PERFMAP_PAGE_SHIFT);

		pm->want_pages[bit / 64] |= 1ULL << (bit % 64);
	}
	if (k != old && (pm->lines || perfmap__count(pm))) {
		followed = (!old || (old_want && old_owner)) &&
			   owners_follow(pm, old_want, old_owner, old, tail_only);
		/* entries dropped by an earlier read may cover the new addresses */
		if (!followed) {
			pm->rescan = true;
			pm->rescans++;
		}
	}
	free(old_want);
	free(old_owner);
	return 0;
}

int perfmap__want(struct perfmap *pm, const uint64_t *addrs, size_t n)
{
	return want(pm, addrs, n, false);
}

int perfmap__want_tail(struct perfmap *pm, const uint64_t *addrs, size_t n)
{
	return want(pm, addrs, n, true);
}

int perfmap__hold(struct perfmap *pm)
{
	return pm->has_file ? line_tail__hold(&pm->tail) : -EINVAL;
}

static int added(const struct perfmap *pm)
{
	return pm->added > INT_MAX ? INT_MAX : (int)pm->added;
}

int perfmap__update(struct perfmap *pm)
{
	int err, ierr;

	if (!pm->has_file)
		return -EINVAL;
	/* the same file (a held one stays held), from its start */
	if (pm->rescan) {
		line_tail__rewind(&pm->tail);
		clear(pm);
		pm->rescan = false;
	}
	pm->added = 0;
	err = line_tail__read(&pm->tail, &tail_ops, pm);
	/* Lines read before an error are kept: index them anyway. */
	ierr = code_index__reindex(pm->code);
	if (err < 0)
		return err;
	if (ierr < 0)
		return ierr;
	return added(pm);
}

int perfmap__parse_buf(struct perfmap *pm, const char *buf, size_t len)
{
	int err;

	pm->added = 0;
	err = line_tail__feed(buf, len, PERFMAP_LINE_MAX, &tail_ops, pm);
	if (code_index__reindex(pm->code) < 0 || err < 0)
		return -ENOMEM;
	return added(pm);
}

int perfmap__lookup(struct perfmap *pm, uint64_t addr, struct perfmap_sym *out)
{
	struct code_entry e;
	size_t i;
	int err;

	/* an entry kept for another address may hide behind one dropped */
	if (pm->filtered) {
		i = want_pos(pm, addr);
		if (i == pm->nr_want || pm->want[i] != addr)
			return -ENOENT;
	}
	err = code_index__lookup(pm->code, addr, &e);
	if (err < 0)
		return err;
	out->start = e.start;
	out->size = e.size;
	out->raw = e.name;
	out->name = *e.parsed;
	return 0;
}

const char *perfmap__path(const struct perfmap *pm)
{
	return pm->has_file ? pm->tail.path : "";
}

const char *perfmap__why(const struct perfmap *pm)
{
	return pm->has_file ? line_tail__why(&pm->tail) : "";
}

bool perfmap__wants(const struct perfmap *pm, uint64_t addr)
{
	size_t i;

	if (!pm->filtered)
		return true;
	i = want_pos(pm, addr);
	return i < pm->nr_want && pm->want[i] == addr;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return code_index__count(pm->code);
}

size_t perfmap__malformed(const struct perfmap *pm)
{
	return pm->malformed;
}

size_t perfmap__first_malformed_line(const struct perfmap *pm)
{
	return pm->first_malformed;
}

void perfmap__stats(const struct perfmap *pm, struct perfmap_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->entries = code_index__count(pm->code);
	st->segments = code_index__segments(pm->code);
	st->lines = pm->lines;
	st->malformed = pm->malformed;
	st->first_malformed_line = pm->first_malformed;
	st->rescans = pm->rescans;
	st->mem_bytes = sizeof(*pm) + code_index__mem_bytes(pm->code) +
			pm->want_cap * sizeof(*pm->want);
	if (pm->has_file) {
		st->offset = pm->tail.offset;
		st->bytes_read = pm->tail.bytes_read;
		st->restarts = pm->tail.restarts;
		st->mem_bytes += pm->tail.cap;
	}
}

/* ---- where the map is ---------------------------------------------------- */

int perfmap__path_for_pid(const char *proc_root, pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX], status[4096], self_ns[64], ns[64];
	ssize_t a, b;
	bool other_ns;
	pid_t nspid;
	int n;

	if (!proc_root)
		proc_root = "/proc";
	if (pid <= 0)
		return -ESRCH;
	if (snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* NSpid is in the first 4 KiB of status on every kernel seen. */
	if (procfs__read(path, status, sizeof(status)) < 0)
		return -ESRCH;
	/* Kernels before 4.1 have no NSpid: the pid is the same everywhere. */
	if (procfs__parse_nspid(status, &nspid) < 0)
		nspid = pid;

	/* Unreadable namespace links: assume ours (then /proc/PID/root would fail too). */
	snprintf(path, sizeof(path), "%s/self/ns/mnt", proc_root);
	a = readlink(path, self_ns, sizeof(self_ns));
	snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc_root, (int)pid);
	b = readlink(path, ns, sizeof(ns));
	other_ns = a > 0 && b > 0 && (a != b || memcmp(self_ns, ns, (size_t)a));

	if (nspid != pid || other_ns)
		n = snprintf(buf, size, "%s/%d/root/tmp/perf-%d.map", proc_root, (int)pid, (int)nspid);
	else
		n = snprintf(buf, size, "/tmp/perf-%d.map", (int)pid);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
