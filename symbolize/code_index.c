// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* code_index: JIT code entries and their newest-wins address index; see code_index.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "symbolize/code_index.h"

/* Below this many entries slots, a compaction does not shrink the array. */
#define ENTRIES_KEEP 1024

struct ci_entry {
	uint64_t start;
	uint64_t size;
	size_t name;		/* offset of the NUL-terminated name in names */
	uint32_t name_len;
	bool live;		/* visible after the last reindex, and not dropped since */
	bool visible;		/* has a piece in the index being built */
	bool shares_name;	/* moved: the newer copy took over its name bytes */
};

/* A name split once, on first lookup, and kept while the entry lives. */
struct ci_parsed {
	struct v8name name;
	char buf[];
};

struct code_index {
	size_t payload_size;
	bool by_start;
	code_index_parse_fn parse;

	struct ci_entry *entries;
	size_t nr, cap;
	size_t nr_indexed;	/* entries[0..nr_indexed) went through the last reindex */
	size_t nr_live;
	bool dropped;		/* entries were dropped since the last reindex */

	unsigned char *payloads;	/* payload_size bytes per entry */
	size_t payloads_cap;

	char *names;
	size_t names_len, names_cap;

	struct code_span *segs;
	size_t nr_segs;

	/* by_start: exact start -> live entry */
	struct index_table starts;

	struct ci_parsed **parsed;	/* per entry, filled on first lookup */
	size_t nr_parsed;		/* entries parsed[] has room for */
};

/* ---- newest-wins flattening ------------------------------------------ */

/* Max-heap of span indexes ordered by id: the newest active span is on top. */
static void heap_push(size_t *heap, size_t *n, const struct code_span *in, size_t v)
{
	size_t i = (*n)++;

	while (i) {
		size_t parent = (i - 1) / 2;

		if (in[heap[parent]].id >= in[v].id)
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = v;
}

static void heap_pop(size_t *heap, size_t *n, const struct code_span *in)
{
	size_t i = 0, v = heap[--(*n)];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && in[heap[c + 1]].id > in[heap[c]].id)
			c++;
		if (in[heap[c]].id <= in[v].id)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*n)
		heap[i] = v;
}

int code_spans__flatten(const struct code_span *in, size_t n, struct code_span **outp,
			size_t *nr_out)
{
	struct code_span *out;
	size_t *heap, nh = 0, p = 0, no = 0;
	uint64_t pos = 0;

	*outp = NULL;
	*nr_out = 0;
	if (!n)
		return 0;
	/* Each piece ends at a span's end or at a span's start: at most 2n of them. */
	out = malloc(2 * n * sizeof(*out));
	heap = malloc(n * sizeof(*heap));
	if (!out || !heap) {
		free(out);
		free(heap);
		return -ENOMEM;
	}

	while (p < n || nh) {
		const struct code_span *top;
		uint64_t end;

		if (!nh)
			pos = in[p].start;
		while (p < n && in[p].start <= pos)
			heap_push(heap, &nh, in, p++);
		/* Spans that ended are dropped when they surface; only the top matters. */
		while (nh && in[heap[0]].end <= pos)
			heap_pop(heap, &nh, in);
		if (!nh)
			continue;
		top = &in[heap[0]];
		end = top->end;
		if (p < n && in[p].start < end)
			end = in[p].start;
		if (no && out[no - 1].id == top->id && out[no - 1].end == pos) {
			out[no - 1].end = end;
		} else {
			out[no].start = pos;
			out[no].end = end;
			out[no].id = top->id;
			no++;
		}
		pos = end;
	}
	free(heap);
	if (no < 2 * n) {
		struct code_span *shrunk = realloc(out, no * sizeof(*out));

		if (shrunk)
			out = shrunk;
	}
	*outp = out;
	*nr_out = no;
	return 0;
}

ptrdiff_t code_spans__find(const struct code_span *spans, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	/* First span with start > addr; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (spans[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= spans[lo - 1].end)
		return -1;
	return (ptrdiff_t)(lo - 1);
}

/* ---- entries ------------------------------------------------------------ */

struct code_index *code_index__new(const struct code_index_opts *opts)
{
	struct code_index *ci;

	if (!opts || !opts->parse) {
		errno = EINVAL;
		return NULL;
	}
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	ci->payload_size = opts->payload_size;
	ci->by_start = opts->by_start;
	ci->parse = opts->parse;
	return ci;
}

static void drop_parsed(struct code_index *ci)
{
	size_t i;

	for (i = 0; i < ci->nr_parsed; i++)
		free(ci->parsed[i]);
	free(ci->parsed);
	ci->parsed = NULL;
	ci->nr_parsed = 0;
}

void code_index__clear(struct code_index *ci)
{
	drop_parsed(ci);
	ci->nr = ci->nr_indexed = ci->nr_live = 0;
	ci->dropped = false;
	ci->names_len = 0;
	free(ci->segs);
	ci->segs = NULL;
	ci->nr_segs = 0;
	index_table__release(&ci->starts);
}

void code_index__free(struct code_index *ci)
{
	if (!ci)
		return;
	code_index__clear(ci);
	free(ci->entries);
	free(ci->payloads);
	free(ci->names);
	free(ci);
}

static uint32_t start_hash(uint64_t start)
{
	/* Code starts are aligned: mix so the low bits a table takes vary. */
	return hash__fold32(start);
}

static bool start_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct code_index *ci = ctx;

	return ci->entries[index].start == *(const uint64_t *)key;
}

/* The by-start slot of start: *slot gets where it is, or the empty slot it would go to. */
static long starts_lookup(const struct code_index *ci, uint64_t start, size_t *slot)
{
	return index_table__lookup(&ci->starts, start_hash(start), start_eq, ci, &start, slot);
}

long code_index__find_start(const struct code_index *ci, uint64_t start)
{
	if (!ci->by_start)
		return -1;
	return starts_lookup(ci, start, NULL);
}

void code_index__drop(struct code_index *ci, size_t id)
{
	struct ci_entry *e = &ci->entries[id];
	size_t slot;

	if (ci->by_start && starts_lookup(ci, e->start, &slot) == (long)id)
		index_table__remove(&ci->starts, slot);
	e->live = false;
	ci->dropped = true;
}

/* Room for one more entry with name_bytes of name, so that appending cannot fail. */
static int reserve(struct code_index *ci, size_t name_bytes)
{
	/* Ids are 32-bit in the by-start table; no code log comes near. */
	if (ci->nr >= UINT32_MAX || array_grow(&ci->entries, &ci->cap, ci->nr + 1) ||
	    array_grow(&ci->names, &ci->names_cap, ci->names_len + name_bytes))
		return -ENOMEM;
	if (ci->payload_size &&
	    array__grow((void **)&ci->payloads, &ci->payloads_cap, ci->nr + 1, ci->payload_size))
		return -ENOMEM;
	if (ci->by_start && index_table__reserve(&ci->starts))
		return -ENOMEM;
	return 0;
}

/* Append an entry (room reserved) and make it the one found at its start. */
static size_t append(struct code_index *ci, const struct ci_entry *e, const void *payload)
{
	size_t id = ci->nr++, slot;
	long old;

	ci->entries[id] = *e;
	if (ci->payload_size) {
		if (payload)
			memcpy(ci->payloads + id * ci->payload_size, payload, ci->payload_size);
		else
			memset(ci->payloads + id * ci->payload_size, 0, ci->payload_size);
	}
	if (ci->by_start) {
		/* Whatever started here before is gone: code objects do not overlap. */
		old = starts_lookup(ci, e->start, &slot);
		if (old >= 0) {
			ci->entries[old].live = false;
			ci->dropped = true;
			/* Same start, same hash: the slot changes hands. */
			ci->starts.idx1[slot] = (uint32_t)id + 1;
		} else {
			index_table__set(&ci->starts, slot, start_hash(e->start), (uint32_t)id);
		}
	}
	return id;
}

long code_index__add(struct code_index *ci, uint64_t start, uint64_t size, const char *name,
		     size_t len, const void *payload)
{
	struct ci_entry e = {
		.start = start,
		.size = size,
		.name = ci->names_len,
		.name_len = (uint32_t)len,
		.live = true,
	};

	if (!size || size > UINT64_MAX - start || len >= UINT32_MAX)
		return -EINVAL;
	if (reserve(ci, len + 1))
		return -ENOMEM;
	memcpy(ci->names + ci->names_len, name, len);
	ci->names[ci->names_len + len] = '\0';
	ci->names_len += len + 1;
	return (long)append(ci, &e, payload);
}

long code_index__move(struct code_index *ci, size_t id, uint64_t to)
{
	struct ci_entry copy = ci->entries[id];
	long at;

	if (copy.size > UINT64_MAX - to)
		return -EINVAL;
	if (reserve(ci, 0))
		return -ENOMEM;
	code_index__drop(ci, id);
	at = code_index__find_start(ci, to);
	if (at >= 0)
		code_index__drop(ci, (size_t)at);
	ci->entries[id].shares_name = true;
	copy.start = to;
	copy.live = true;
	copy.shares_name = false;
	return (long)append(ci, &copy,
			    ci->payload_size ? ci->payloads + id * ci->payload_size : NULL);
}

void code_index__get(const struct code_index *ci, size_t id, struct code_entry *out)
{
	const struct ci_entry *e = &ci->entries[id];

	out->start = e->start;
	out->size = e->size;
	out->name = ci->names + e->name;
	out->name_len = e->name_len;
	out->payload = ci->payload_size ? ci->payloads + id * ci->payload_size : NULL;
	out->parsed = NULL;
}

/* ---- the address index -------------------------------------------------- */

static int span_cmp(const void *a, const void *b)
{
	const struct code_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

/* The by-start table for the entries that survive compaction, under their new ids. */
static int starts_rebuild(const struct code_index *ci, struct index_table *t)
{
	size_t r, w = 0, k;
	uint32_t h;

	memset(t, 0, sizeof(*t));
	for (r = 0; r < ci->nr; r++) {
		if (!ci->entries[r].live)
			continue;
		if (index_table__reserve(t)) {
			index_table__release(t);
			return -ENOMEM;
		}
		/* Live starts are unique: take the first empty slot. */
		h = start_hash(ci->entries[r].start);
		for (k = index_table__first(t, h); t->idx1[k]; k = index_table__next(t, k))
			;
		index_table__set(t, k, h, (uint32_t)w++);
	}
	return 0;
}

/*
 * Drop dead entries and their names; entry order (age) is kept.  Everything
 * is allocated first: failing leaves all as it was, compaction is only
 * about memory.
 */
static int compact(struct code_index *ci, size_t live_names)
{
	struct index_table starts = { 0 };
	size_t *remap, r, w = 0, off = 0;
	char *names;

	remap = malloc(ci->nr * sizeof(*remap));
	names = malloc(live_names ? live_names : 1);
	if (!remap || !names || (ci->by_start && starts_rebuild(ci, &starts))) {
		free(remap);
		free(names);
		return -ENOMEM;
	}
	for (r = 0; r < ci->nr; r++) {
		struct ci_entry *e = &ci->entries[r];

		if (!e->live) {
			if (r < ci->nr_parsed) {
				free(ci->parsed[r]);
				ci->parsed[r] = NULL;
			}
			continue;
		}
		if (r < ci->nr_parsed) {
			struct ci_parsed *parsed = ci->parsed[r];

			ci->parsed[r] = NULL;
			ci->parsed[w] = parsed;
		}
		memcpy(names + off, ci->names + e->name, (size_t)e->name_len + 1);
		if (ci->payload_size && w != r)
			memcpy(ci->payloads + w * ci->payload_size, ci->payloads + r * ci->payload_size,
			       ci->payload_size);
		ci->entries[w] = *e;
		ci->entries[w].name = off;
		off += (size_t)e->name_len + 1;
		remap[r] = w++;
	}
	for (r = 0; r < ci->nr_segs; r++)
		ci->segs[r].id = remap[ci->segs[r].id];
	free(remap);
	free(ci->names);
	ci->names = names;
	ci->names_len = ci->names_cap = live_names;
	if (ci->by_start) {
		index_table__release(&ci->starts);
		ci->starts = starts;
	}
	ci->nr = ci->nr_indexed = w;
	if (ci->cap > ENTRIES_KEEP && ci->cap / 4 > ci->nr) {
		size_t cap = ci->nr * 2 > ENTRIES_KEEP ? ci->nr * 2 : ENTRIES_KEEP;
		struct ci_entry *entries = realloc(ci->entries, cap * sizeof(*entries));
		unsigned char *payloads = ci->payload_size ?
			realloc(ci->payloads, cap * ci->payload_size) : NULL;

		if (entries) {
			ci->entries = entries;
			ci->cap = cap;
		}
		if (payloads) {
			ci->payloads = payloads;
			ci->payloads_cap = cap;
		}
	}
	return 0;
}

/*
 * The spans to flatten, sorted by start: the pieces of the old index still
 * live (dropping an entry removes its pieces) merged with the live new
 * entries.  *in is malloc()ed.
 */
static int spans_to_flatten(struct code_index *ci, struct code_span **inp, size_t *nr_in)
{
	size_t k = 0, n = 0, i, j, nr_old = ci->nr_segs;
	struct code_span *in;
	bool sorted = true;

	in = malloc((ci->nr_segs + ci->nr - ci->nr_indexed + 1) * sizeof(*in));
	if (!in)
		return -ENOMEM;
	if (ci->dropped) {
		nr_old = 0;
		for (i = 0; i < ci->nr_segs; i++) {
			if (ci->entries[ci->segs[i].id].live)
				ci->segs[nr_old++] = ci->segs[i];
		}
		ci->nr_segs = nr_old;
	}
	/* New spans at the tail of in, then merged with the old pieces in place. */
	for (i = ci->nr_indexed; i < ci->nr; i++) {
		const struct ci_entry *e = &ci->entries[i];
		struct code_span *s = &in[nr_old + k];

		if (!e->live)
			continue;
		s->start = e->start;
		s->end = e->start + e->size;
		s->id = i;
		if (k && s->start < s[-1].start)
			sorted = false;
		k++;
	}
	if (!sorted)
		qsort(in + nr_old, k, sizeof(*in), span_cmp);
	i = 0;
	j = nr_old;
	while (i < nr_old || j < nr_old + k) {
		if (j == nr_old + k || (i < nr_old && ci->segs[i].start <= in[j].start))
			in[n++] = ci->segs[i++];
		else
			in[n++] = in[j++];
	}
	*inp = in;
	*nr_in = n;
	return 0;
}

/*
 * Live now means visible somewhere.  Entries hidden since the last reindex
 * leave the by-start table (the dropped ones left it already): a later
 * move of that address is about the newer code.  Compacts when the dead
 * are more than half of the entries or names.
 */
static void mark_live(struct code_index *ci)
{
	size_t dead = 0, dead_names = 0, live_names = 0, i, slot;

	for (i = 0; i < ci->nr_segs; i++)
		ci->entries[ci->segs[i].id].visible = true;
	for (i = 0; i < ci->nr; i++) {
		struct ci_entry *e = &ci->entries[i];
		size_t bytes = (size_t)e->name_len + 1;

		if (e->live && !e->visible && ci->by_start &&
		    starts_lookup(ci, e->start, &slot) == (long)i)
			index_table__remove(&ci->starts, slot);
		e->live = e->visible;
		e->visible = false;
		if (e->live) {
			live_names += bytes;
			continue;
		}
		dead++;
		if (!e->shares_name)
			dead_names += bytes;
	}
	ci->nr_live = ci->nr - dead;
	if (dead * 2 > ci->nr || dead_names * 2 > ci->names_len)
		compact(ci, live_names);
}

/*
 * The old pieces stand for the old entries (whatever they hid is hidden
 * for good), so flattening them with the new entries gives the same index
 * as flattening everything.
 */
int code_index__reindex(struct code_index *ci)
{
	struct code_span *in, *segs;
	size_t nr_in, nr_segs;
	int err;

	if (ci->nr_indexed == ci->nr && !ci->dropped)
		return 0;
	err = spans_to_flatten(ci, &in, &nr_in);
	if (err < 0)
		return err;
	err = code_spans__flatten(in, nr_in, &segs, &nr_segs);
	free(in);
	if (err < 0)
		return err;
	free(ci->segs);
	ci->segs = segs;
	ci->nr_segs = nr_segs;
	ci->nr_indexed = ci->nr;
	ci->dropped = false;
	mark_live(ci);
	return 0;
}

/* ---- lookups -------------------------------------------------------------- */

static const struct ci_parsed *parsed_of(struct code_index *ci, size_t id)
{
	const struct ci_entry *e = &ci->entries[id];
	struct ci_parsed *parsed;
	size_t size;

	if (ci->nr_parsed < ci->nr) {
		struct ci_parsed **grown = realloc(ci->parsed, ci->nr * sizeof(*grown));

		if (!grown)
			return NULL;
		memset(grown + ci->nr_parsed, 0, (ci->nr - ci->nr_parsed) * sizeof(*grown));
		ci->parsed = grown;
		ci->nr_parsed = ci->nr;
	}
	parsed = ci->parsed[id];
	if (parsed)
		return parsed;
	size = v8name__buf_size(e->name_len);
	parsed = malloc(sizeof(*parsed) + size);
	if (!parsed)
		return NULL;
	ci->parse(ci->names + e->name, e->name_len,
		  ci->payload_size ? ci->payloads + id * ci->payload_size : NULL, &parsed->name,
		  parsed->buf, size);
	ci->parsed[id] = parsed;
	return parsed;
}

int code_index__lookup(struct code_index *ci, uint64_t addr, struct code_entry *out)
{
	ptrdiff_t i = code_spans__find(ci->segs, ci->nr_segs, addr);
	const struct ci_parsed *parsed;
	size_t id;

	if (i < 0)
		return -ENOENT;
	id = ci->segs[i].id;
	parsed = parsed_of(ci, id);
	if (!parsed)
		return -ENOMEM;
	code_index__get(ci, id, out);
	out->parsed = &parsed->name;
	return 0;
}

size_t code_index__count(const struct code_index *ci)
{
	return ci->nr_live;
}

size_t code_index__segments(const struct code_index *ci)
{
	return ci->nr_segs;
}

size_t code_index__mem_bytes(const struct code_index *ci)
{
	return sizeof(*ci) + ci->cap * sizeof(*ci->entries) + ci->payloads_cap * ci->payload_size +
	       ci->names_cap + ci->nr_segs * sizeof(*ci->segs) + index_table__bytes(&ci->starts);
}
