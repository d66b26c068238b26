// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8inline: inlined JS frames from V8 code-source-info lines; see v8inline.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
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
	uint32_t ns;
};

struct vi_fn {
	uint64_t sfi;
	size_t seq;
	char *name;		/* "fib a.js:1:13" as the code log names it */
};

struct v8inline {
	struct vi_code *codes;
	size_t ncodes, codes_cap;
	bool codes_sorted;
	struct vi_fn *fns;
	size_t nfns, fns_cap;
	bool fns_sorted;
	size_t seq;
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
}

void v8inline__clear(struct v8inline *vi)
{
	for (size_t i = 0; i < vi->ncodes; i++)
		code_release(&vi->codes[i]);
	for (size_t i = 0; i < vi->nfns; i++)
		free(vi->fns[i].name);
	vi->ncodes = vi->nfns = 0;
}

void v8inline__free(struct v8inline *vi)
{
	if (!vi)
		return;
	v8inline__clear(vi);
	free(vi->codes);
	free(vi->fns);
	free(vi);
}

int v8inline__function(struct v8inline *vi, uint64_t sfi, const char *name, size_t len)
{
	struct vi_fn *f;

	if (!sfi)
		return 0;
	if (array_grow(&vi->fns, &vi->fns_cap, vi->nfns + 1))
		return -ENOMEM;
	f = &vi->fns[vi->nfns];
	f->name = strndup(name, len);
	if (!f->name)
		return -ENOMEM;
	f->sfi = sfi;
	f->seq = vi->seq++;
	vi->nfns++;
	vi->fns_sorted = false;
	return 0;
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

	if (!field(p, end, 5, &s, &e))
		return 0;
	/* Only code that inlined something is kept: the rest adds no frame. */
	nf = count_entries(s, e, 'F');
	if (!nf)
		return 1;
	if (!field(p, end, 0, &s, &e) || e - s < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	s += 2;
	if (!textscan__hex(&s, e, &start) || s != e)
		return 0;
	if (!field(p, end, 1, &s, &e) || !scan_dec(&s, e, INT32_MAX, &script) || s != e)
		return 0;
	code.start = start;
	code.script = (int)script;

	if (!field(p, end, 4, &s, &e))
		return 0;
	nc = count_entries(s, e, 'C');
	code.c = calloc(nc ? nc : 1, sizeof(*code.c));
	code.f = calloc(nf, sizeof(*code.f));
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
	if (!code.s)
		goto nomem;
	while (s < e) {
		uint64_t sfi;

		if (e - s < 4 || s[0] != 'S' || s[1] != '0' || s[2] != 'x')
			goto bad;
		s += 3;
		if (!textscan__hex(&s, e, &sfi) || code.ns == (uint32_t)ns)
			goto bad;
		code.s[code.ns++] = sfi;
	}
	if (array_grow(&vi->codes, &vi->codes_cap, vi->ncodes + 1))
		goto nomem;
	code.seq = vi->seq++;
	vi->codes[vi->ncodes++] = code;
	vi->codes_sorted = false;
	return 1;
bad:
	code_release(&code);
	return 0;
nomem:
	code_release(&code);
	return -ENOMEM;
}

void v8inline__move(struct v8inline *vi, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < vi->ncodes; i++) {
		if (vi->codes[i].start == from) {
			vi->codes[i].start = to;
			vi->codes_sorted = false;
		}
	}
}

static int code_cmp(const void *a, const void *b)
{
	const struct vi_code *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct vi_fn *x = a, *y = b;

	if (x->sfi != y->sfi)
		return x->sfi < y->sfi ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The newest code entry for start, or NULL. */
static const struct vi_code *find_code(struct v8inline *vi, uint64_t start)
{
	size_t lo = 0, hi;

	if (!vi->codes_sorted && vi->ncodes) {
		qsort(vi->codes, vi->ncodes, sizeof(*vi->codes), code_cmp);
		vi->codes_sorted = true;
	}
	hi = vi->ncodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vi->codes[mid].start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && vi->codes[lo - 1].start == start ? &vi->codes[lo - 1] : NULL;
}

static const char *find_fn(struct v8inline *vi, uint64_t sfi)
{
	size_t lo = 0, hi;

	if (!vi->fns_sorted && vi->nfns) {
		qsort(vi->fns, vi->nfns, sizeof(*vi->fns), fn_cmp);
		vi->fns_sorted = true;
	}
	hi = vi->nfns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (vi->fns[mid].sfi < sfi)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < vi->nfns && vi->fns[lo].sfi == sfi ? vi->fns[lo].name : NULL;
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

/* 1-based line and column of source position pos. */
static void line_col(const char *src, size_t len, int32_t pos, uint32_t *line, uint32_t *col)
{
	size_t p = pos < 0 ? 0 : (size_t)pos, last_nl = 0;
	uint32_t l = 1;
	bool seen_nl = false;

	*line = *col = 0;
	if (!src || p > len)
		return;
	for (size_t i = 0; i < p; i++) {
		if (src[i] == '\n') {
			l++;
			last_nl = i;
			seen_nl = true;
		}
	}
	*line = l;
	*col = (uint32_t)(seen_nl ? p - last_nl : p + 1);
}

int v8inline__stack(struct v8inline *vi, uint64_t start, uint64_t off,
		    const struct v8inline_sources *src, struct v8inline_frame *frames, size_t max,
		    struct v8inline_frame *outer)
{
	const struct vi_code *code;
	const struct vi_pos *at = NULL;
	char buf[8192];
	size_t lo = 0, hi, n = 0;
	int32_t id, pos;

	vi->arena_used = 0;
	memset(outer, 0, sizeof(*outer));
	code = find_code(vi, start);
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
		const char *raw, *script_src;
		struct v8name name;
		size_t srclen = 0;

		if ((uint32_t)id >= code->nf)
			return 0;
		f = &code->f[id];
		if (f->fn < 0 || (uint32_t)f->fn >= code->ns)
			return 0;
		raw = find_fn(vi, code->s[f->fn]);
		if (!raw || strlen(raw) + V8NAME_BUF_EXTRA > sizeof(buf) ||
		    v8name__parse_log("JS", "", raw, strlen(raw), &name, buf, sizeof(buf)))
			return 0;
		frames[n].function = keep(vi, name.function);
		frames[n].script = name.script ? keep(vi, name.script) : NULL;
		if (!frames[n].function)
			return 0;
		script_src = name.script && src->by_name ?
				     src->by_name(src->ctx, name.script, &srclen) : NULL;
		line_col(script_src, srclen, pos, &frames[n].line, &frames[n].column);
		if (!script_src) {
			/* no source: the function's own first line is the best we know */
			frames[n].line = name.line;
			frames[n].column = 0;
		}
		n++;
		pos = f->pos;
		id = f->parent;
	}
	if (n && src->by_id) {
		size_t srclen = 0;
		const char *s = src->by_id(src->ctx, code->script, &srclen);

		line_col(s, srclen, pos, &outer->line, &outer->column);
	}
	return (int)n;
}
