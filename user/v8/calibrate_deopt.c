// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * calibrate_deopt: learning where optimized code keeps its deoptimization
 * data and how its frame translations are written (calibrate.h,
 * "Deoptimization data"), from the code log of the same run.
 *
 * The run logs code, so V8 kept source positions for it: they are the
 * truth the deoptimization data is held to.  At a call with a lazy
 * deoptimization point, the frames its translation lists must be the
 * inline stack the positions give at the call; every other entry's frames
 * must be the code's own function outermost and functions it inlined.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/v8/calibrate.h"
#include "lib/errmsg.h"
#include "lib/procmem.h"
#include "symbolize/v8deopt.h"
#include "symbolize/v8heap.h"

#define MAX_OBJECTS 48		/* code objects learnt from */
#define ELEMENTS_MAX 8192	/* deoptimization data elements read */
#define TRANSLATION_MAX (1u << 20)
#define CODE_MAX (1u << 20)
#define CODE_HEADER 128
#define EXIT_SIZE_MAX 16

struct dobj {
	const struct calib_code *log;
	char tier;
	uint64_t *elems;	/* the deoptimization data's elements */
	size_t nelems;
	uint64_t *lits;		/* the literals, as SFI addresses (0: not an object) */
	size_t nlits;
	uint8_t *tr;		/* the frame translations */
	size_t trlen;
	uint8_t *code;		/* the instructions, and the bytes after (Maglev's safepoints) */
	size_t codelen;
};

struct learn {
	pid_t pid;
	struct v8_layout *l;
	uint64_t cage;
	struct dobj o[MAX_OBJECTS];
	size_t n;
	struct calib_deopt_report *r;
};

#define fail(c, ...) errmsg__set((c)->r->why, sizeof((c)->r->why), __VA_ARGS__)

static uint64_t decomp(const struct learn *c, uint64_t word)
{
	return v8heap__decompress(c->l, c->cage, word);
}

static bool smi_u32(const struct learn *c, uint64_t word, uint32_t *out)
{
	int64_t v;

	if (!v8heap__smi(c->l, word, &v) || v < 0 || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* An array's length (the layout's array header, learnt with the code fields). */
static int length_of(struct learn *c, uint64_t obj, uint64_t *len)
{
	uint8_t buf[8] = { 0 };
	int64_t v;

	if (!obj)
		return -EINVAL;
	if (c->l->array_length_smi) {
		if (procmem__read(c->pid, obj + c->l->array_length, buf, c->l->tagged_size) ||
		    !v8heap__smi(c->l, v8heap__tagged(c->l, buf), &v) || v < 0)
			return -EINVAL;
		*len = (uint64_t)v;
		return 0;
	}
	if (procmem__read(c->pid, obj + c->l->array_length, buf, 4))
		return -EINVAL;
	*len = (uint32_t)(buf[0] | buf[1] << 8 | buf[2] << 16 | (uint32_t)buf[3] << 24);
	return 0;
}

static int read_tagged_array(struct learn *c, uint64_t obj, size_t max, uint64_t **out, size_t *n)
{
	uint64_t len;
	uint8_t *buf;

	*out = NULL;
	*n = 0;
	if (length_of(c, obj, &len) || len > max)
		return -EINVAL;
	buf = malloc(len * c->l->tagged_size + 1);
	*out = malloc((len + 1) * sizeof(**out));
	if (!buf || !*out) {
		free(buf);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	if (procmem__read(c->pid, obj + c->l->array_elements, buf, len * c->l->tagged_size)) {
		free(buf);
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	for (uint64_t i = 0; i < len; i++)
		(*out)[i] = v8heap__tagged(c->l, buf + i * c->l->tagged_size);
	free(buf);
	*n = len;
	return 0;
}

static int read_bytes_array(struct learn *c, uint64_t obj, size_t max, uint8_t **out, size_t *n)
{
	uint64_t len;

	*out = NULL;
	*n = 0;
	if (length_of(c, obj, &len) || !len || len > max)
		return -EINVAL;
	*out = malloc(len);
	if (!*out)
		return -ENOMEM;
	if (procmem__read(c->pid, obj + c->l->array_elements, *out, len)) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	*n = len;
	return 0;
}

static void dobj_free(struct dobj *o)
{
	free(o->elems);
	free(o->lits);
	free(o->tr);
	free(o->code);
	memset(o, 0, sizeof(*o));
}

/* What one logged code object keeps, read once: its Code, deoptimization data, code. */
static int read_object(struct learn *c, const struct calib_code *k, struct dobj *o)
{
	const struct v8_layout *l = c->l;
	uint8_t hdr[CODE_HEADER], word[8];
	uint64_t code, *lits;
	size_t nlits;
	int err;

	memset(o, 0, sizeof(*o));
	o->log = k;
	o->tier = k->tier;
	if (procmem__read(c->pid, k->start - l->istream_instructions + l->istream_code, word,
			  l->tagged_size))
		return -EINVAL;
	code = decomp(c, v8heap__tagged(l, word));
	if (!code || procmem__read(c->pid, code, hdr, sizeof(hdr)))
		return -EINVAL;
	err = read_tagged_array(c, decomp(c, v8heap__tagged(l, hdr + l->code_deopt_data)), ELEMENTS_MAX,
				&o->elems, &o->nelems);
	if (err)
		return err;
	if (o->nelems <= l->deopt_literals)
		return -EINVAL;
	err = read_tagged_array(c, decomp(c, o->elems[l->deopt_literals]), ELEMENTS_MAX, &lits,
				&nlits);
	if (err)
		return err;
	o->lits = lits;
	o->nlits = nlits;
	for (size_t i = 0; i < nlits; i++)
		o->lits[i] = decomp(c, lits[i]);
	/* the instructions and what follows them (Maglev's safepoint table) */
	o->codelen = k->size + 4096 > CODE_MAX ? CODE_MAX : k->size + 4096;
	o->code = malloc(o->codelen);
	if (!o->code)
		return -ENOMEM;
	if (procmem__read(c->pid, k->start, o->code, o->codelen)) {
		/* the code range may end right after it */
		o->codelen = k->size + 256;
		if (procmem__read(c->pid, k->start, o->code, o->codelen))
			return -EINVAL;
	}
	return 0;
}

/* ---- The scalar fields ---------------------------------------------------- */

/*
 * V8 keeps the exit start and the two counts right after the inlining
 * positions and the entries right after them, since V8 11 (checked
 * against 15.8's and 11.3's deoptimization-data.h): the candidates are
 * that, with entries of 3 elements (4 in debug builds), the translation
 * first.
 */
static bool fits(struct learn *c, struct dobj *o, uint32_t x, uint32_t es)
{
	uint32_t exit_start, eager, lazy;
	uint64_t ntr;

	if (o->nelems < x + 3 || (o->nelems - (x + 3)) % es ||
	    !smi_u32(c, o->elems[x], &exit_start) || !smi_u32(c, o->elems[x + 1], &eager) ||
	    !smi_u32(c, o->elems[x + 2], &lazy) || exit_start > o->log->size ||
	    eager + lazy != (o->nelems - (x + 3)) / es || eager + lazy == 0)
		return false;
	if (length_of(c, decomp(c, o->elems[0]), &ntr) || !ntr)
		return false;
	/* every entry's translation index inside the translations */
	for (uint32_t i = 0; i < eager + lazy; i++) {
		uint32_t t;

		if (!smi_u32(c, o->elems[x + 3 + (uint64_t)i * es + 1], &t) || t >= ntr)
			return false;
	}
	return true;
}

static int learn_scalars(struct learn *c)
{
	struct v8_layout *l = c->l;
	uint32_t x = l->deopt_inlining_positions + 1;

	for (uint32_t es = 3; es <= 4; es++) {
		bool all = true;

		for (size_t i = 0; i < c->n && all; i++)
			all = fits(c, &c->o[i], x, es);
		if (!all)
			continue;
		l->deopt_translation = 0;
		l->deopt_exit_start = x;
		l->deopt_eager_count = x + 1;
		l->deopt_lazy_count = x + 2;
		l->deopt_first_entry = x + 3;
		l->deopt_entry_size = es;
		l->deopt_entry_translation = 1;
		l->deopt_entry_pc = 2;
		return 0;
	}
	fail(c, "no exit start, eager and lazy counts after the inlining positions fit all %zu "
	     "code objects", c->n);
	return -ENODATA;
}

static uint32_t field(const struct learn *c, const struct dobj *o, uint32_t index)
{
	uint32_t v = 0;

	smi_u32(c, o->elems[index], &v);
	return v;
}

static uint32_t entry_field(const struct learn *c, const struct dobj *o, uint32_t i, uint32_t k)
{
	const struct v8_layout *l = c->l;
	int64_t v;

	if (!v8heap__smi(l, o->elems[l->deopt_first_entry + (uint64_t)i * l->deopt_entry_size + k],
			 &v) || v < 0 || v > UINT32_MAX)
		return UINT32_MAX;
	return (uint32_t)v;
}

/*
 * The exit stubs are calls of the same builtin, one after another: the
 * smallest stride at which count stubs from at repeat byte for byte.
 */
static uint32_t stub_size(const struct dobj *o, uint32_t at, uint32_t count)
{
	for (uint32_t s = 1; s <= EXIT_SIZE_MAX; s++) {
		bool same = (uint64_t)at + (uint64_t)count * s <= o->log->size;

		for (uint32_t i = 1; same && i < count; i++)
			same = !memcmp(o->code + at, o->code + at + i * s, s);
		if (same)
			return s;
	}
	return 0;
}

static int learn_exits(struct learn *c)
{
	struct v8_layout *l = c->l;
	uint32_t eager = 0, lazy = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct dobj *o = &c->o[i];
		uint32_t x = field(c, o, l->deopt_exit_start), ne = field(c, o, l->deopt_eager_count);
		uint32_t nl = field(c, o, l->deopt_lazy_count), s;

		if (ne >= 2 && (s = stub_size(o, x, ne))) {
			if (eager && eager != s)
				goto disagree;
			eager = s;
		}
		if (eager && nl >= 2 && (s = stub_size(o, x + ne * eager, nl))) {
			if (lazy && lazy != s)
				goto disagree;
			lazy = s;
		}
	}
	if (!eager || !lazy) {
		fail(c, "no code object has two exit stubs of each kind to measure them by");
		return -ENODATA;
	}
	/* every object's stubs end inside its code */
	for (size_t i = 0; i < c->n; i++) {
		const struct dobj *o = &c->o[i];
		uint64_t end = (uint64_t)field(c, o, l->deopt_exit_start) +
			       (uint64_t)field(c, o, l->deopt_eager_count) * eager +
			       (uint64_t)field(c, o, l->deopt_lazy_count) * lazy;

		if (end > o->log->size)
			goto disagree;
	}
	l->deopt_eager_exit_size = eager;
	l->deopt_lazy_exit_size = lazy;
	return 0;
disagree:
	fail(c, "the exit stubs of the code objects are not all of one size");
	return -ENODATA;
}

/* ---- The translation format ------------------------------------------------ */

/* The positions' inline stack at offset off of k, outermost first, as SFIs. */
static size_t log_stack(const struct calib_code *k, int64_t off, uint64_t *out, size_t max)
{
	uint64_t in[V8DEOPT_FRAMES_MAX];
	size_t lo = 0, hi = k->npositions, n = 0;
	int32_t id = -1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->positions[mid].code_offset <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo)
		id = k->positions[lo - 1].inlining_id;
	while (id >= 0 && (size_t)id < k->ninlining && n + 1 < V8DEOPT_FRAMES_MAX) {
		int32_t fn = k->inlining[id].function;

		in[n++] = fn >= 0 && (size_t)fn < k->ninlined ? k->inlined[fn] : 0;
		if (k->inlining[id].parent >= id)
			break;
		id = k->inlining[id].parent;
	}
	in[n++] = k->sfi;
	for (size_t i = 0; i < n && i < max; i++)
		out[i] = in[n - 1 - i];
	return n < max ? n : max;
}

/* The SFIs of entry i's frames, outermost first; -1 when they do not read or check. */
static int entry_sfis(struct learn *c, const struct dobj *o, const struct v8deopt_format *f,
		      uint32_t i, uint64_t *out)
{
	const struct calib_code *k = o->log;
	struct v8deopt_frame fr[V8DEOPT_FRAMES_MAX];
	uint32_t t = entry_field(c, o, i, c->l->deopt_entry_translation);
	int n = v8deopt__frames(f, o->tr, o->trlen, t, fr, V8DEOPT_FRAMES_MAX);

	if (n < 1)
		return -1;
	for (int j = 0; j < n; j++) {
		bool known = false;

		if (fr[j].literal < 0 || (size_t)fr[j].literal >= o->nlits)
			return -1;
		out[j] = o->lits[fr[j].literal];
		known = j == 0 ? out[j] == k->sfi : false;
		for (size_t s = 0; j && !known && s < k->ninlined; s++)
			known = k->inlined[s] == out[j];
		if (!known)
			return -1;
	}
	return n;
}

static int learn_format(struct learn *c)
{
	struct v8_layout *l = c->l;
	uint64_t sfis[V8DEOPT_FRAMES_MAX];

	for (size_t i = 0; i < c->n; i++) {
		struct dobj *o = &c->o[i];
		int err = read_bytes_array(c, decomp(c, o->elems[l->deopt_translation]),
					   TRANSLATION_MAX, &o->tr, &o->trlen);

		if (err) {
			fail(c, "a code object's frame translations do not read");
			return err == -ENOMEM ? err : -ENODATA;
		}
	}
	for (uint32_t fam = 1; fam <= V8DEOPT_FAMILY_MAX; fam++) {
		uint32_t min, max;

		v8deopt__family_range(fam, &min, &max);
		for (uint32_t n = min; n <= max; n++) {
			struct v8deopt_format f;
			bool all = true;

			if (v8deopt__format(fam, n, &f))
				continue;
			for (size_t i = 0; i < c->n && all; i++) {
				const struct dobj *o = &c->o[i];
				uint32_t count = field(c, o, l->deopt_eager_count) +
						 field(c, o, l->deopt_lazy_count);

				for (uint32_t e = 0; e < count && all; e++)
					all = entry_sfis(c, o, &f, e, sfis) > 0;
			}
			if (!all)
				continue;
			l->deopt_format = fam;
			l->deopt_opcodes = n;
			return 0;
		}
	}
	fail(c, "no translation format this isoprof knows reads every entry of the %zu code "
	     "objects as their own function and the functions they inlined", c->n);
	return -ENODATA;
}

/* ---- Maglev's safepoints --------------------------------------------------- */

static int learn_safepoints(struct learn *c)
{
	static const struct v8deopt_safepoint_layout candidates[] = {
		{ .length = 4, .config = 8, .header = 16 },	/* V8 15.8 */
		{ .length = 0, .config = 4, .header = 16 },	/* V8 11-12's source */
	};
	struct v8_layout *l = c->l;
	bool any = false;

	for (size_t k = 0; k < sizeof(candidates) / sizeof(candidates[0]); k++) {
		bool all = true;

		for (size_t i = 0; i < c->n && all; i++) {
			const struct dobj *o = &c->o[i];
			uint32_t eager = field(c, o, l->deopt_eager_count);
			uint32_t lazy = field(c, o, l->deopt_lazy_count);
			struct v8deopt_call *calls = NULL;
			long n;

			if (o->tier != '+')
				continue;
			any = true;
			n = v8deopt__maglev_calls(o->code + o->log->size, o->codelen - o->log->size,
						  &candidates[k], eager + lazy, &calls, NULL);
			/* each call with an entry: a lazy one, returning inside the body */
			all = n > 0;
			for (long j = 0; all && j < n; j++)
				all = calls[j].entry >= eager &&
				      calls[j].return_offset <= field(c, o, l->deopt_exit_start);
			free(calls);
		}
		if (!any)
			return 0;	/* no Maglev code: nothing to learn */
		if (all) {
			l->maglev_safepoint_length = candidates[k].length;
			l->maglev_safepoint_config = candidates[k].config;
			l->maglev_safepoint_header = candidates[k].header;
			return 0;
		}
	}
	/* TurboFan still places its pcs; Maglev's keep their caller */
	c->r->maglev_why = "its safepoint table did not read";
	return 0;
}

/* ---- The check ----------------------------------------------------------- */

/* Lazy points: the translation's frames against the positions' stack at the call. */
static void check_lazy(struct learn *c, const struct v8deopt_format *f)
{
	const struct v8_layout *l = c->l;
	uint64_t got[V8DEOPT_FRAMES_MAX], want[V8DEOPT_FRAMES_MAX];

	for (size_t i = 0; i < c->n; i++) {
		const struct dobj *o = &c->o[i];
		uint32_t eager = field(c, o, l->deopt_eager_count), lazy = field(c, o, l->deopt_lazy_count);
		struct v8deopt_call *calls = NULL;
		long n = 0;

		if (!o->log->npositions)
			continue;
		if (o->tier == '*') {
			calls = malloc(((size_t)lazy + 1) * sizeof(*calls));
			if (!calls)
				return;
			for (uint32_t e = eager; e < eager + lazy; e++) {
				uint32_t pc = entry_field(c, o, e, l->deopt_entry_pc);

				if (pc && pc <= o->log->size) {
					calls[n].return_offset = pc;
					calls[n++].entry = e;
				}
			}
		} else if (l->maglev_safepoint_header) {
			struct v8deopt_safepoint_layout sl = {
				.length = l->maglev_safepoint_length,
				.config = l->maglev_safepoint_config,
				.header = l->maglev_safepoint_header,
			};

			n = v8deopt__maglev_calls(o->code + o->log->size, o->codelen - o->log->size,
						  &sl, eager + lazy, &calls, NULL);
		}
		for (long j = 0; j < n; j++) {
			int ng = entry_sfis(c, o, f, calls[j].entry, got);
			size_t nw = log_stack(o->log, (int64_t)calls[j].return_offset - 1, want,
					      V8DEOPT_FRAMES_MAX);
			bool same = ng > 0 && (size_t)ng == nw;

			for (int k = 0; same && k < ng; k++)
				same = got[k] == want[k];
			c->r->lazy_checked++;
			c->r->lazy_agree += same;
			c->r->turbofan_checked += o->tier == '*';
			c->r->turbofan_agree += o->tier == '*' && same;
		}
		free(calls);
	}
}

/*
 * Every pc the log gives a position for, placed by the deoptimization data
 * through symbolize/v8code.h as record places it, against the positions.
 */
static void check_pcs(struct learn *c, const struct calib_code *codes, size_t ncodes)
{
	struct v8code *vc = v8code__new(c->pid, c->l);

	if (!vc)
		return;
	v8code__set_cage(vc, c->cage);
	v8code__check_deopt(vc, true);
	for (size_t i = 0; i < ncodes; i++) {
		const struct calib_code *k = &codes[i];
		bool objects_counted = false;

		if ((k->tier != '*' && k->tier != '+') || !k->described || !k->ninlined)
			continue;
		/* every byte of the code: each instruction weighs its length */
		for (uint32_t off = 0; off < k->size; off++) {
			struct v8code_frame a[32], b[32];
			uint64_t pc = k->start + off;
			int na, nb;
			bool same;

			na = v8code__stack(vc, pc, a, 32, NULL);
			nb = v8code__deopt_stack(vc, pc, b, 32);
			if (na < 0 || nb < 0)
				break;
			if (!objects_counted) {
				c->r->objects_placed++;
				objects_counted = true;
			}
			same = na == nb;
			for (int f = 0; same && f < na; f++)
				same = a[f].sfi == b[f].sfi;
			c->r->pcs_checked++;
			c->r->pcs_agree += same;
		}
	}
	v8code__free(vc);
}

static void clear_deopt_fields(struct v8_layout *l)
{
	memset(&l->deopt_format, 0,
	       (size_t)((const char *)(&l->maglev_safepoint_header + 1) -
			(const char *)&l->deopt_format));
}

int calibrate__learn_deopt(pid_t pid, const struct calib_code *codes, size_t ncodes,
			   struct v8_layout *l, struct calib_deopt_report *report)
{
	struct learn *c = calloc(1, sizeof(*c));
	struct v8deopt_format f;
	int err = 0;

	memset(report, 0, sizeof(*report));
	clear_deopt_fields(l);
	if (!c)
		return -ENOMEM;
	c->pid = pid;
	c->l = l;
	c->r = report;
	if (!l->code_alignment) {
		fail(c, "code objects not learnt");
		err = -ENODATA;
		goto out;
	}
	for (size_t i = 0; i < ncodes && !c->cage; i++)
		if (codes[i].sfi)
			c->cage = l->compressed ? codes[i].sfi & ~0xffffffffull : codes[i].sfi;
	for (size_t i = 0; i < ncodes && c->n < MAX_OBJECTS; i++) {
		const struct calib_code *k = &codes[i];

		if ((k->tier != '*' && k->tier != '+') || !k->described || !k->ninlined)
			continue;
		err = read_object(c, k, &c->o[c->n]);
		if (err == -ENOMEM)
			goto out;
		/* code that died since the log: not to learn from */
		if (err) {
			dobj_free(&c->o[c->n]);
			err = 0;
			continue;
		}
		c->n++;
	}
	report->objects = c->n;
	if (c->n < 2) {
		fail(c, "%zu optimized code objects with inlined functions read: too few", c->n);
		err = -ENODATA;
		goto out;
	}
	err = learn_scalars(c);
	if (!err)
		err = learn_exits(c);
	if (!err)
		err = learn_format(c);
	if (!err)
		err = learn_safepoints(c);
	if (err)
		goto out;
	if (v8deopt__format(l->deopt_format, l->deopt_opcodes, &f)) {
		err = -ENODATA;
		goto out;
	}
	for (size_t i = 0; i < c->n; i++)
		report->entries += field(c, &c->o[i], l->deopt_eager_count) +
				   field(c, &c->o[i], l->deopt_lazy_count);
	check_lazy(c, &f);
	check_pcs(c, codes, ncodes);
	/*
	 * A lazy point is exact where TurboFan records a call's position: a
	 * wrong field shows there first.  Maglev's positions are coarser (a
	 * call in deferred code takes the last position before it, the outer
	 * function's, where the translation names the inlined caller): a
	 * looser bar where only Maglev code was seen.
	 */
	if (report->turbofan_checked
		    ? report->turbofan_agree * 10 < report->turbofan_checked * 9
		    : report->lazy_agree * 4 < report->lazy_checked * 3) {
		fail(c, "at %zu of %zu calls the translation's frames are not the inline stack the "
		     "positions give", report->lazy_checked - report->lazy_agree,
		     report->lazy_checked);
		err = -ENODATA;
	}
out:
	if (err)
		clear_deopt_fields(l);
	for (size_t i = 0; i < c->n; i++)
		dobj_free(&c->o[i]);
	free(c);
	return err;
}
