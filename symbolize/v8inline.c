// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8inline: inlined JS frames from V8 code-source-info lines; see v8inline.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/textscan.h"
#include "symbolize/v8inline.h"
#include "symbolize/v8name.h"

struct vi_pos {
	uint32_t off;		/* pc offset in the code */
	int32_t pos;		/* source position */
	int32_t inl;		/* inlining id, -1 when none */
};

struct vi_inl {
	int32_t fn;		/* index into s[] */
	int32_t pos;		/* call position in the parent */
	int32_t parent;		/* inlining id of the caller, -1: the code's own function */
};

struct vi_code {
	uint64_t start;
	size_t seq;		/* order logged: the newest entry for a start wins */
	int script;
	struct vi_pos *c;
	uint32_t nc;
	struct vi_inl *f;
	uint32_t nf;
	uint64_t *s;
	uint32_t *s_fn;		/* per s[]: fns[] index when it was logged, NO_FN: none yet */
	uint32_t ns;
	uint64_t size;		/* retired entries: the code's size; else 0 */
};

#define NO_FN UINT32_MAX

struct vi_fn {
	uint64_t sfi;
	char *name;		/* "fib a.js:1:13" as the code log names it */
};

/*
 * Only the newest code entry for a start is ever looked up, so the code
 * table keeps one entry per start, indexed by it: a code-move or a lookup
 * costs the same however many entries a log made.
 *
 * An SFI's address names different functions over a log's life: V8 frees
 * the SFIs of functions it no longer needs (their script's or outer
 * function's bytecode was flushed) and allocates new ones where they were,
 * and moves SFIs when it compacts (sfi-move).  So fns[] keeps every name an
 * address had, fn_tab points at its newest, and a code entry's S list is
 * read against the names as they were when its code-source-info line came:
 * the newest name then, not the first one ever, nor one logged later.
 */
struct v8inline {
	struct vi_code *codes;
	size_t ncodes, codes_cap;
	struct index_table code_tab;	/* start -> codes[] */
	struct vi_fn *fns;
	size_t nfns, fns_cap;
	struct index_table fn_tab;	/* sfi -> fns[] */
	size_t seq;
	/* the last code created, when its positions are worth a table without inlining */
	uint64_t positions_start;
	bool want_positions;
	/*
	 * Per start, the entry of the code that new code at the same start
	 * replaced (v8inline__retire()): samples taken before the
	 * replacement still need its table.
	 */
	struct vi_code *retired;
	size_t nretired, retired_cap;
	struct index_table retired_tab;	/* start -> retired[] */
	/* strings of the frames handed out by the last __stack() call */
	char arena[16384];
	size_t arena_used;
};

struct v8inline *v8inline__new(void)
{
	return calloc(1, sizeof(struct v8inline));
}

static void code_release(struct vi_code *c)
{
	free(c->c);
	free(c->f);
	free(c->s);
	free(c->s_fn);
}

void v8inline__clear(struct v8inline *vi)
{
	for (size_t i = 0; i < vi->ncodes; i++)
		code_release(&vi->codes[i]);
	for (size_t i = 0; i < vi->nretired; i++)
		code_release(&vi->retired[i]);
	vi->nretired = 0;
	index_table__clear(&vi->retired_tab);
	for (size_t i = 0; i < vi->nfns; i++)
		free(vi->fns[i].name);
	vi->ncodes = vi->nfns = 0;
	index_table__clear(&vi->code_tab);
	index_table__clear(&vi->fn_tab);
}

void v8inline__free(struct v8inline *vi)
{
	if (!vi)
		return;
	v8inline__clear(vi);
	index_table__release(&vi->code_tab);
	index_table__release(&vi->fn_tab);
	index_table__release(&vi->retired_tab);
	free(vi->retired);
	free(vi->codes);
	free(vi->fns);
	free(vi);
}

static uint32_t key_hash(uint64_t key)
{
	return hash__fold32(hash__mix64(key));
}

static bool code_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8inline *)ctx)->codes[idx].start == *(const uint64_t *)key;
}

static bool fn_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8inline *)ctx)->fns[idx].sfi == *(const uint64_t *)key;
}

/* The index of the code entry at start, or -1; *slot as index_table__lookup(). */
static long code_find(const struct v8inline *vi, uint64_t start, size_t *slot)
{
	return index_table__lookup(&vi->code_tab, key_hash(start), code_eq, vi, &start, slot);
}

static bool retired_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8inline *)ctx)->retired[idx].start == *(const uint64_t *)key;
}

static long retired_find(const struct v8inline *vi, uint64_t start, size_t *slot)
{
	return index_table__lookup(&vi->retired_tab, key_hash(start), retired_eq, vi, &start,
				   slot);
}

/* The newest name record of sfi, or -1; *slot as index_table__lookup(). */
static long fn_find(const struct v8inline *vi, uint64_t sfi, size_t *slot)
{
	return index_table__lookup(&vi->fn_tab, key_hash(sfi), fn_eq, vi, &sfi, slot);
}

/* name[len] becomes sfi's newest name (a new record: older code keeps the old one). */
static int fn_set(struct v8inline *vi, uint64_t sfi, const char *name, size_t len)
{
	struct vi_fn *f;
	size_t slot;
	long old;

	if (vi->nfns >= NO_FN - 1 || index_table__reserve(&vi->fn_tab) ||
	    array_grow(&vi->fns, &vi->fns_cap, vi->nfns + 1))
		return -ENOMEM;
	old = fn_find(vi, sfi, &slot);
	/* as strndup() keeps it: up to a NUL in the name, if it has one */
	len = strnlen(name, len);
	if (old >= 0 && strlen(vi->fns[old].name) == len && !memcmp(vi->fns[old].name, name, len))
		return 0;
	f = &vi->fns[vi->nfns];
	f->name = strndup(name, len);
	if (!f->name)
		return -ENOMEM;
	f->sfi = sfi;
	if (old >= 0)
		vi->fn_tab.idx1[slot] = (uint32_t)vi->nfns + 1;
	else
		index_table__set(&vi->fn_tab, slot, key_hash(sfi), (uint32_t)vi->nfns);
	vi->nfns++;
	return 0;
}

int v8inline__function(struct v8inline *vi, uint64_t sfi, const char *name, size_t len)
{
	return sfi ? fn_set(vi, sfi, name, len) : 0;
}

int v8inline__sfi_move(struct v8inline *vi, uint64_t from, uint64_t to)
{
	size_t slot;
	long i;

	if (from == to || !to)
		return 0;
	i = fn_find(vi, from, &slot);
	if (i < 0)
		return 0;
	/* nothing lives at from any more; code logged before keeps its names */
	index_table__remove(&vi->fn_tab, slot);
	return fn_set(vi, to, vi->fns[i].name, strlen(vi->fns[i].name));
}

/* A decimal of at most max at *pp, which moves past it. */
static bool scan_dec(const char **pp, const char *end, int64_t max, int64_t *out)
{
	const char *p = *pp;
	uint64_t v;

	if (!textscan__dec(&p, end, &v) || v > (uint64_t)max)
		return false;
	*pp = p;
	*out = (int64_t)v;
	return true;
}

/* One field of "<L>num O num [I num]" entries (L is 'C' or 'F'); -1: malformed. */
static long count_entries(const char *p, const char *end, char letter)
{
	long n = 0;

	for (; p < end; p++)
		n += *p == letter;
	return n;
}

static int parse_entries(const char *p, const char *end, char letter, int32_t *a, int32_t *b,
			 int32_t *c, size_t stride, size_t max)
{
	size_t n = 0;
	int64_t v;

	while (p < end) {
		if (*p++ != letter || n == max || !scan_dec(&p, end, INT32_MAX, &v))
			return -1;
		*(int32_t *)((char *)a + n * stride) = (int32_t)v;
		if (p >= end || *p++ != 'O' || !scan_dec(&p, end, INT32_MAX, &v))
			return -1;
		*(int32_t *)((char *)b + n * stride) = (int32_t)v;
		*(int32_t *)((char *)c + n * stride) = -1;
		if (p < end && *p == 'I') {
			p++;
			if (!scan_dec(&p, end, INT32_MAX, &v))
				return -1;
			*(int32_t *)((char *)c + n * stride) = (int32_t)v;
		}
		n++;
	}
	return (int)n;
}

/* Field i (0-based) of a comma-separated line: [*s, *e). */
static bool field(const char *p, const char *end, int i, const char **s, const char **e)
{
	for (; i > 0; i--) {
		p = memchr(p, ',', (size_t)(end - p));
		if (!p)
			return false;
		p++;
	}
	*s = p;
	*e = memchr(p, ',', (size_t)(end - p));
	if (!*e)
		*e = end;
	return true;
}

int v8inline__source_info(struct v8inline *vi, const char *p, size_t len)
{
	const char *end = p + len, *s, *e;
	struct vi_code code = { 0 };
	uint64_t start;
	int64_t script;
	long nc, nf, ns;

	if (!field(p, end, 0, &s, &e) || e - s < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	s += 2;
	if (!textscan__hex(&s, e, &start) || s != e)
		return 0;
	if (!field(p, end, 5, &s, &e))
		return 0;
	/*
	 * Kept: code that inlined something (frames to add), and optimized
	 * code (the line of a sample in it); the rest, bytecode above all,
	 * adds nothing a sample can use.
	 */
	nf = count_entries(s, e, 'F');
	if (!nf && !(vi->want_positions && vi->positions_start == start))
		return 1;
	if (!field(p, end, 1, &s, &e) || !scan_dec(&s, e, INT32_MAX, &script) || s != e)
		return 0;
	code.start = start;
	code.script = (int)script;

	if (!field(p, end, 4, &s, &e))
		return 0;
	nc = count_entries(s, e, 'C');
	code.c = calloc(nc ? nc : 1, sizeof(*code.c));
	code.f = calloc(nf ? nf : 1, sizeof(*code.f));
	if (!code.c || !code.f)
		goto nomem;
	{
		/* pc offsets as int32 into a scratch view, then widened */
		int n = parse_entries(s, e, 'C', (int32_t *)&code.c[0].off, &code.c[0].pos,
				      &code.c[0].inl, sizeof(code.c[0]), (size_t)nc);

		if (n < 0)
			goto bad;
		code.nc = (uint32_t)n;
	}
	if (!field(p, end, 5, &s, &e))
		goto bad;
	{
		int n = parse_entries(s, e, 'F', &code.f[0].fn, &code.f[0].pos, &code.f[0].parent,
				      sizeof(code.f[0]), (size_t)nf);

		if (n < 0)
			goto bad;
		code.nf = (uint32_t)n;
	}
	if (!field(p, end, 6, &s, &e))
		goto bad;
	ns = count_entries(s, e, 'S');
	code.s = calloc(ns ? ns : 1, sizeof(*code.s));
	code.s_fn = calloc(ns ? ns : 1, sizeof(*code.s_fn));
	if (!code.s || !code.s_fn)
		goto nomem;
	while (s < e) {
		uint64_t sfi;

		if (e - s < 4 || s[0] != 'S' || s[1] != '0' || s[2] != 'x')
			goto bad;
		s += 3;
		if (!textscan__hex(&s, e, &sfi) || code.ns == (uint32_t)ns)
			goto bad;
		{
			long fn = fn_find(vi, sfi, NULL);

			code.s_fn[code.ns] = fn >= 0 ? (uint32_t)fn : NO_FN;
		}
		code.s[code.ns++] = sfi;
	}
	if (vi->ncodes >= UINT32_MAX - 1 || index_table__reserve(&vi->code_tab) ||
	    array_grow(&vi->codes, &vi->codes_cap, vi->ncodes + 1))
		goto nomem;
	code.seq = vi->seq++;
	{
		size_t slot;
		long old = code_find(vi, code.start, &slot);

		/* The newest entry for a start wins: it replaces the older one. */
		if (old >= 0) {
			code_release(&vi->codes[old]);
			vi->codes[old] = code;
			return 1;
		}
		index_table__set(&vi->code_tab, slot, key_hash(code.start), (uint32_t)vi->ncodes);
		vi->codes[vi->ncodes++] = code;
	}
	return 1;
bad:
	code_release(&code);
	return 0;
nomem:
	code_release(&code);
	return -ENOMEM;
}

/* Drop codes[i], whose slot in the index is slot: the last entry takes its place. */
static void code_drop(struct v8inline *vi, size_t i, size_t slot)
{
	size_t last = vi->ncodes - 1, last_slot;

	index_table__remove(&vi->code_tab, slot);
	code_release(&vi->codes[i]);
	if (i != last) {
		vi->codes[i] = vi->codes[last];
		code_find(vi, vi->codes[i].start, &last_slot);
		vi->code_tab.idx1[last_slot] = (uint32_t)i + 1;
	}
	vi->ncodes--;
}

int v8inline__retire(struct v8inline *vi, uint64_t start, uint64_t size)
{
	size_t slot = 0, rslot = 0, last, last_slot;
	long i = code_find(vi, start, &slot), r;

	if (i < 0)
		return 0;
	r = retired_find(vi, start, &rslot);
	if (r >= 0) {
		code_release(&vi->retired[r]);
	} else {
		if (index_table__reserve(&vi->retired_tab) ||
		    array_grow(&vi->retired, &vi->retired_cap, vi->nretired + 1))
			return -ENOMEM;
		retired_find(vi, start, &rslot);
		r = (long)vi->nretired++;
		index_table__set(&vi->retired_tab, rslot, key_hash(start), (uint32_t)r);
	}
	/* the table moves: codes[i] leaves the live index without being released */
	vi->retired[r] = vi->codes[i];
	vi->retired[r].size = size;
	index_table__remove(&vi->code_tab, slot);
	last = vi->ncodes - 1;
	if ((size_t)i != last) {
		vi->codes[i] = vi->codes[last];
		code_find(vi, vi->codes[i].start, &last_slot);
		vi->code_tab.idx1[last_slot] = (uint32_t)i + 1;
	}
	vi->ncodes--;
	if (vi->positions_start == start)
		vi->want_positions = false;
	return 0;
}

void v8inline__want_positions(struct v8inline *vi, uint64_t start)
{
	vi->positions_start = start;
	vi->want_positions = true;
}

void v8inline__drop(struct v8inline *vi, uint64_t start)
{
	size_t slot;
	long i = code_find(vi, start, &slot);

	if (vi->positions_start == start)
		vi->want_positions = false;

	if (i >= 0)
		code_drop(vi, (size_t)i, slot);
}

void v8inline__move(struct v8inline *vi, uint64_t from, uint64_t to)
{
	size_t slot, to_slot;
	long i, other;

	if (from == to)
		return;
	i = code_find(vi, from, &slot);
	if (i < 0)
		return;
	other = code_find(vi, to, &to_slot);
	if (other >= 0) {
		/* Two entries at one start: the newer stays, as if both were kept. */
		if (vi->codes[other].seq > vi->codes[i].seq) {
			code_drop(vi, (size_t)i, slot);
			return;
		}
		code_drop(vi, (size_t)other, to_slot);
		/* the drop may have moved codes[i] into other's place */
		i = code_find(vi, from, &slot);
	}
	index_table__remove(&vi->code_tab, slot);
	vi->codes[i].start = to;
	/* a slot was just freed, so the reserve done when it was added still holds */
	code_find(vi, to, &to_slot);
	index_table__set(&vi->code_tab, to_slot, key_hash(to), (uint32_t)i);
}

/* The newest code entry for start, or NULL. */
static const struct vi_code *find_code(struct v8inline *vi, uint64_t start)
{
	long i = code_find(vi, start, NULL);

	return i >= 0 ? &vi->codes[i] : NULL;
}

/* The name of S entry k of code: as it was when the code was logged, else the newest. */
static const char *find_fn(struct v8inline *vi, const struct vi_code *code, uint32_t k)
{
	long i = code->s_fn[k] != NO_FN ? (long)code->s_fn[k] : fn_find(vi, code->s[k], NULL);

	return i >= 0 ? vi->fns[i].name : NULL;
}

static const char *keep(struct v8inline *vi, const char *s)
{
	size_t n;
	char *out;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	if (vi->arena_used + n > sizeof(vi->arena))
		return NULL;
	out = vi->arena + vi->arena_used;
	memcpy(out, s, n);
	vi->arena_used += n;
	return out;
}

uint32_t *v8inline__line_starts(const char *source, size_t len, size_t *nlines)
{
	size_t n = 1, k = 1;
	uint32_t *starts;
	const char *p, *end;

	if (len > INT32_MAX)
		len = INT32_MAX;
	end = source + len;
	for (p = source; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		n++;
	starts = malloc(n * sizeof(*starts));
	if (!starts)
		return NULL;
	starts[0] = 0;
	for (p = source; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		starts[k++] = (uint32_t)(p - source + 1);
	*nlines = n;
	return starts;
}

/* 1-based line and column of source position pos. */
static void line_col(const struct v8inline_script *sc, int32_t pos, uint32_t *line,
		     uint32_t *col)
{
	size_t p = pos < 0 ? 0 : (size_t)pos, lo = 0, hi;

	*line = *col = 0;
	if (!sc || !sc->line_starts || !sc->nlines || p > sc->len)
		return;
	/* the last line that starts at or before p */
	hi = sc->nlines;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sc->line_starts[mid] <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	*line = (uint32_t)lo;
	*col = (uint32_t)(p - sc->line_starts[lo - 1] + 1);
}

static int stack_of(struct v8inline *vi, const struct vi_code *code, uint64_t off,
		    const struct v8inline_sources *src, struct v8inline_frame *frames, size_t max,
		    struct v8inline_frame *outer)
{
	const struct vi_pos *at = NULL;
	char buf[8192];
	size_t lo = 0, hi, n = 0;
	int32_t id, pos;

	vi->arena_used = 0;
	memset(outer, 0, sizeof(*outer));
	if (!code || !code->nc)
		return 0;
	hi = code->nc;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (code->c[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return 0;
	at = &code->c[lo - 1];
	id = at->inl;
	pos = at->pos;
	/* a chain longer than the table is corrupt: stop at nf steps */
	for (uint32_t steps = 0; id >= 0 && steps <= code->nf && n < max; steps++) {
		const struct vi_inl *f;
		const struct v8inline_script *script;
		const char *raw;
		struct v8name name;

		if ((uint32_t)id >= code->nf)
			return 0;
		f = &code->f[id];
		if (f->fn < 0 || (uint32_t)f->fn >= code->ns)
			return 0;
		raw = find_fn(vi, code, (uint32_t)f->fn);
		if (!raw || strlen(raw) + V8NAME_BUF_EXTRA > sizeof(buf) ||
		    v8name__parse_log("JS", "", raw, strlen(raw), &name, buf, sizeof(buf)))
			return 0;
		frames[n].function = keep(vi, name.function);
		frames[n].script = name.script ? keep(vi, name.script) : NULL;
		if (!frames[n].function)
			return 0;
		frames[n].fn_line = name.line;
		frames[n].fn_column = name.column;
		script = name.script && src->by_name ? src->by_name(src->ctx, name.script) : NULL;
		line_col(script, pos, &frames[n].line, &frames[n].column);
		if (!script) {
			/* no source: the function's own first line is the best we know */
			frames[n].line = name.line;
			frames[n].column = 0;
		}
		n++;
		pos = f->pos;
		id = f->parent;
	}
	if (src->by_id && (n || id < 0))
		line_col(src->by_id(src->ctx, code->script), pos, &outer->line, &outer->column);
	return (int)n;
}

int v8inline__stack(struct v8inline *vi, uint64_t start, uint64_t off,
		    const struct v8inline_sources *src, struct v8inline_frame *frames, size_t max,
		    struct v8inline_frame *outer)
{
	return stack_of(vi, find_code(vi, start), off, src, frames, max, outer);
}

int v8inline__stack_retired(struct v8inline *vi, uint64_t start, uint64_t off,
			    const struct v8inline_sources *src, struct v8inline_frame *frames,
			    size_t max, struct v8inline_frame *outer)
{
	long r = retired_find(vi, start, NULL);

	if (r < 0 || off >= vi->retired[r].size)
		return -ENOENT;
	return stack_of(vi, &vi->retired[r], off, src, frames, max, outer);
}
