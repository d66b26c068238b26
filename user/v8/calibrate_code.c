// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * calibrate_code: learning where optimized code objects keep what they
 * inlined (calibrate.h, "Code objects"), from a code log of the same run.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/v8/calibrate.h"
#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/procmem.h"
#include "symbolize/v8heap.h"

#define MAX_OBJECTS 64		/* code objects searched: enough to agree, few enough to be quick */
#define CODE_BYTES 128		/* of a Code searched for its fields */
#define HEADER_BYTES 128	/* before an instruction start searched for its header */
#define ELEMENTS_MAX 32		/* deoptimization data elements searched */
#define POSITION_BYTES 16

struct cobj {
	const struct calib_code *log;
	uint8_t before[HEADER_BYTES];	/* the bytes before the instructions */
	uint64_t istream, code;
	uint8_t body[CODE_BYTES];	/* the Code's first bytes */
	bool ok;
};

struct learn {
	pid_t pid;
	struct v8_layout *l;
	uint64_t cage;
	struct cobj *o;
	size_t n;
	struct calib_code_report *r;
};

static void fail(struct learn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fail(struct learn *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->r->why, sizeof(c->r->why), fmt, ap);
	va_end(ap);
}


static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t decomp(const struct learn *c, uint64_t word)
{
	return v8heap__decompress(c->l, c->cage, word);
}

static bool is_optimized(const struct calib_code *k)
{
	return k->tier == '*' || k->tier == '+';
}

/* ---- InstructionStream and Code ------------------------------------------ */

/* Does candidate (h, k) lead from o's instructions to a Code that points back? */
static bool code_of(struct learn *c, struct cobj *o, uint32_t h, uint32_t k)
{
	const struct v8_layout *l = c->l;
	const uint8_t *w = o->before + HEADER_BYTES - h;
	uint64_t code = decomp(c, v8heap__tagged(l, w + k)), istream = o->log->start - h;
	bool start = false, size = false, back = false;

	if (!(v8heap__tagged(l, w) & 1) || !code || procmem__read(c->pid, code, o->body, CODE_BYTES))
		return false;
	for (uint32_t off = 0; off + 8 <= CODE_BYTES; off += 4) {
		start |= u64_at(o->body + off) == o->log->start;
		size |= u32_at(o->body + off) == o->log->size;
		back |= u32_at(o->body + off) == (uint32_t)(istream | 1);
	}
	o->istream = istream;
	o->code = code;
	return start && size && back;
}

/* The u32 (or u64) offset of a Code where every object holds what want() gives. */
static int common_offset(struct learn *c, size_t width, uint64_t (*want)(const struct cobj *),
			 const uint32_t *taken, size_t ntaken, uint32_t *out)
{
	for (uint32_t off = 0; off + width <= CODE_BYTES; off += 4) {
		bool all = true, used = false;

		for (size_t t = 0; t < ntaken; t++)
			used |= taken[t] == off;
		for (size_t i = 0; i < c->n && all && !used; i++) {
			const uint8_t *p = c->o[i].body + off;

			all = (width == 8 ? u64_at(p) : u32_at(p)) == want(&c->o[i]);
		}
		if (all && !used) {
			*out = off;
			return 0;
		}
	}
	return -ENODATA;
}

static uint64_t want_start(const struct cobj *o)
{
	return o->log->start;
}

static uint64_t want_size(const struct cobj *o)
{
	return o->log->size;
}

static uint64_t want_back(const struct cobj *o)
{
	return (uint32_t)(o->istream | 1);
}

static int learn_istream(struct learn *c)
{
	struct v8_layout *l = c->l;
	uint32_t taken[3];
	uint64_t align = 4096;

	for (size_t i = 0; i < c->n; i++)
		while (align > 8 && c->o[i].log->start % align)
			align /= 2;
	if (align < 16) {
		fail(c, "code starts are not aligned (%" PRIu64 " bytes)", align);
		return -ENODATA;
	}
	l->code_alignment = (uint32_t)align;
	for (uint32_t h = 2 * l->tagged_size; h <= HEADER_BYTES && h <= 4 * align;
	     h += l->tagged_size) {
		for (uint32_t k = l->tagged_size; k < h; k += l->tagged_size) {
			bool all = true;

			for (size_t i = 0; i < c->n && all; i++)
				all = code_of(c, &c->o[i], h, k);
			if (!all)
				continue;
			l->istream_instructions = h;
			l->istream_code = k;
			goto found;
		}
	}
	fail(c, "no InstructionStream header leads to a Code for all %zu code objects", c->n);
	return -ENODATA;
found:
	if (common_offset(c, 8, want_start, NULL, 0, &l->code_instruction_start))
		goto none;
	taken[0] = l->code_instruction_start;
	taken[1] = l->code_instruction_start + 4;
	if (common_offset(c, 4, want_size, taken, 2, &l->code_instruction_size))
		goto none;
	if (common_offset(c, 4, want_back, NULL, 0, &l->code_istream))
		goto none;
	/* the InstructionStream map's instance type, the same for all */
	for (size_t i = 0; i < c->n; i++) {
		uint64_t map = decomp(c, v8heap__tagged(l, c->o[i].before + HEADER_BYTES - l->istream_instructions));
		uint16_t type;

		if (!map || procmem__read(c->pid, map + l->map_instance_type, &type, sizeof(type)) ||
		    (i && type != l->istream_type)) {
			fail(c, "InstructionStream maps disagree on their instance type");
			return -ENODATA;
		}
		l->istream_type = type;
	}
	return 0;
none:
	fail(c, "no Code field holds the instruction start, size or InstructionStream for all");
	return -ENODATA;
}

/* Does the u32 at off lie in a Code field already learnt (a pointer's upper half)? */
static bool overlaps_known(const struct v8_layout *l, uint32_t off)
{
	const struct {
		uint32_t at, len;
	} known[] = {
		{ l->code_instruction_start, 8 },
		{ l->code_instruction_size, 4 },
		{ l->code_istream, l->tagged_size },
		{ l->code_deopt_data, l->tagged_size },
		{ l->code_position_table, l->tagged_size },
	};

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (off + 4 > known[i].at && off < known[i].at + known[i].len)
			return true;
	return false;
}

/*
 * Code.flags: the kind tells TurboFan, Maglev and baseline code apart.
 * Learnt last, so that no pointer field passes for it.
 */
static int learn_kind(struct learn *c)
{
	static const uint32_t masks[] = { 0x1f, 0xf };
	struct v8_layout *l = c->l;

	for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
		for (uint32_t off = 0; off + 4 <= CODE_BYTES; off += 4) {
			uint32_t tf = 0, mg = 0;
			bool have_tf = false, have_mg = false, ok = true;

			if (overlaps_known(l, off))
				continue;
			for (size_t i = 0; i < c->n && ok; i++) {
				uint32_t kind = u32_at(c->o[i].body + off) & masks[m];

				if (c->o[i].log->tier == '*') {
					ok = !have_tf || kind == tf;
					tf = kind;
					have_tf = true;
				} else if (c->o[i].log->tier == '+') {
					ok = !have_mg || kind == mg;
					mg = kind;
					have_mg = true;
				}
			}
			ok = ok && have_tf && tf && (!have_mg || mg != tf);
			/* baseline code must not pass for optimized code */
			for (size_t i = 0; i < c->n && ok; i++) {
				uint32_t kind = u32_at(c->o[i].body + off) & masks[m];

				if (c->o[i].log->tier == '^')
					ok = kind != tf && (!have_mg || kind != mg);
			}
			if (!ok)
				continue;
			l->code_flags = off;
			l->code_kind_mask = masks[m];
			l->code_kind_turbofan = tf;
			l->code_kind_maglev = have_mg ? mg : 0;
			return 0;
		}
	}
	fail(c, "no Code field tells TurboFan code from the rest");
	return -ENODATA;
}

/* ---- Arrays -------------------------------------------------------------- */

struct shape {
	uint32_t length, elements, smi;
};

static int array_length(struct learn *c, const struct shape *s, uint64_t obj, uint64_t *len)
{
	uint8_t buf[8] = { 0 };
	int64_t v;

	if (!obj)
		return -EINVAL;
	if (s->smi) {
		if (procmem__read(c->pid, obj + s->length, buf, c->l->tagged_size) ||
		    !v8heap__smi(c->l, v8heap__tagged(c->l, buf), &v) || v < 0)
			return -EINVAL;
		*len = (uint64_t)v;
		return 0;
	}
	if (procmem__read(c->pid, obj + s->length, buf, 4))
		return -EINVAL;
	*len = u32_at(buf);
	return 0;
}

/* Is obj an array whose first n elements are the SFIs want[n]? */
static bool holds_sfis(struct learn *c, const struct shape *s, uint64_t obj, const uint64_t *want,
		       size_t n)
{
	uint8_t buf[8];
	uint64_t len;

	if (array_length(c, s, obj, &len) || len < n || len > 100000)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (procmem__read(c->pid, obj + s->elements + i * c->l->tagged_size, buf,
				  c->l->tagged_size) ||
		    decomp(c, v8heap__tagged(c->l, buf)) != want[i])
			return false;
	}
	return true;
}

/* Is obj a byte array of the log's InliningPositions? */
static bool holds_inlining(struct learn *c, const struct shape *s, uint64_t obj,
			   const struct calib_code *k)
{
	uint8_t buf[POSITION_BYTES];
	uint64_t len;

	if (array_length(c, s, obj, &len) || len != k->ninlining * POSITION_BYTES)
		return false;
	for (size_t i = 0; i < k->ninlining; i++) {
		int32_t pos, parent, fn;

		if (procmem__read(c->pid, obj + s->elements + i * POSITION_BYTES, buf, sizeof(buf)))
			return false;
		v8code__source_position(u64_at(buf), &pos, &parent);
		memcpy(&fn, buf + 8, sizeof(fn));
		if (fn != k->inlining[i].function || pos != k->inlining[i].position ||
		    parent != k->inlining[i].parent)
			return false;
	}
	return true;
}

/* The roles an element of the deoptimization data can play, as bit masks over indices. */
struct roles {
	uint32_t count, literals, positions, sfi[3];	/* sfi: directly, wrapper +ts, +2ts */
};

static void roles_of(struct learn *c, const struct shape *s, const struct cobj *o,
		     const uint64_t *elems, size_t n, struct roles *r)
{
	const struct calib_code *k = o->log;
	unsigned int ts = c->l->tagged_size;

	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < n; i++) {
		uint64_t obj = decomp(c, elems[i]);
		int64_t v;

		if (v8heap__smi(c->l, elems[i], &v)) {
			if (v == (int64_t)k->ninlined)
				r->count |= 1u << i;
			continue;
		}
		if (!obj)
			continue;
		if (obj == k->sfi)
			r->sfi[0] |= 1u << i;
		for (unsigned int w = 1; w <= 2; w++) {
			uint8_t buf[8];

			if (!procmem__read(c->pid, obj + w * ts, buf, ts) &&
			    decomp(c, v8heap__tagged(c->l, buf)) == k->sfi)
				r->sfi[w] |= 1u << i;
		}
		if (holds_sfis(c, s, obj, k->inlined, k->ninlined))
			r->literals |= 1u << i;
		if (holds_inlining(c, s, obj, k))
			r->positions |= 1u << i;
	}
}

static int lowest(uint32_t mask)
{
	return mask ? __builtin_ctz(mask) : -1;
}

static int learn_deopt(struct learn *c, struct shape *shape_out)
{
	struct v8_layout *l = c->l;
	unsigned int ts = l->tagged_size;
	const struct shape shapes[] = {
		{ .length = ts, .elements = 2 * ts, .smi = 1 },
		{ .length = 4, .elements = 8, .smi = 0 },
	};

	for (uint32_t d = 0; d + ts <= CODE_BYTES; d += ts) {
		for (size_t si = 0; si < sizeof(shapes) / sizeof(shapes[0]); si++) {
			const struct shape *s = &shapes[si];
			struct roles all;
			bool ok = true;

			memset(&all, 0xff, sizeof(all));
			for (size_t i = 0; i < c->n && ok; i++) {
				uint64_t obj = decomp(c, v8heap__tagged(l, c->o[i].body + d)), len;
				uint64_t elems[ELEMENTS_MAX];
				uint8_t buf[ELEMENTS_MAX * 8];
				struct roles r;

				if (!is_optimized(c->o[i].log))
					continue;
				if (array_length(c, s, obj, &len) || len < 4 || len > 4096) {
					ok = false;
					break;
				}
				if (len > ELEMENTS_MAX)
					len = ELEMENTS_MAX;
				if (procmem__read(c->pid, obj + s->elements, buf, len * ts)) {
					ok = false;
					break;
				}
				for (size_t e = 0; e < len; e++)
					elems[e] = v8heap__tagged(l, buf + e * ts);
				for (size_t e = len; e < ELEMENTS_MAX; e++)
					elems[e] = 0;
				roles_of(c, s, &c->o[i], elems, len, &r);
				all.count &= r.count;
				all.literals &= r.literals;
				all.positions &= r.positions;
				for (int w = 0; w < 3; w++)
					all.sfi[w] &= r.sfi[w];
				ok = all.count && all.literals && all.positions &&
				     (all.sfi[0] || all.sfi[1] || all.sfi[2]);
			}
			if (!ok)
				continue;
			l->code_deopt_data = d;
			l->array_length = s->length;
			l->array_length_smi = s->smi;
			l->array_elements = s->elements;
			l->deopt_inlined_count = (uint32_t)lowest(all.count);
			l->deopt_literals = (uint32_t)lowest(all.literals);
			l->deopt_inlining_positions = (uint32_t)lowest(all.positions);
			for (unsigned int w = 0; w < 3; w++) {
				if (all.sfi[w]) {
					l->deopt_sfi = (uint32_t)lowest(all.sfi[w]);
					l->deopt_sfi_wrapper = w * ts;
					break;
				}
			}
			*shape_out = *s;
			return 0;
		}
	}
	fail(c, "no Code field holds deoptimization data that lists the inlined functions");
	return -ENODATA;
}

/* Does the byte array at obj decode, with encoding, to o's logged positions? */
static bool table_matches(struct learn *c, const struct shape *s, uint64_t obj, uint32_t encoding,
			  const struct calib_code *k)
{
	struct v8code_position *pos = NULL;
	uint8_t *bytes;
	uint64_t len;
	long n;
	bool same;

	if (array_length(c, s, obj, &len) || !len || len > V8CODE_TABLE_MAX)
		return false;
	bytes = malloc(len);
	if (!bytes)
		return false;
	if (procmem__read(c->pid, obj + s->elements, bytes, len)) {
		free(bytes);
		return false;
	}
	n = v8code__decode_positions(bytes, len, encoding, &pos);
	free(bytes);
	same = n >= 0 && (size_t)n == k->npositions;
	for (size_t i = 0; same && i < k->npositions; i++)
		same = pos[i].code_offset == k->positions[i].code_offset &&
		       pos[i].position == k->positions[i].position &&
		       pos[i].inlining_id == k->positions[i].inlining_id;
	free(pos);
	return same;
}

static int learn_table(struct learn *c, const struct shape *s)
{
	struct v8_layout *l = c->l;

	for (uint32_t d = 0; d + l->tagged_size <= CODE_BYTES; d += l->tagged_size) {
		if (d == l->code_deopt_data)
			continue;
		for (uint32_t enc = 1; enc <= 2; enc++) {
			bool ok = true;

			for (size_t i = 0; i < c->n && ok; i++) {
				if (is_optimized(c->o[i].log) && c->o[i].log->npositions)
					ok = table_matches(c, s, decomp(c, v8heap__tagged(l, c->o[i].body + d)),
							   enc, c->o[i].log);
			}
			if (ok) {
				l->code_position_table = d;
				l->spt_encoding = enc;
				return 0;
			}
		}
	}
	fail(c, "no Code field holds a source position table that decodes to the log's");
	return -ENODATA;
}

/* ---- The check ----------------------------------------------------------- */

/* The log's stack at position entry e of k, innermost first, as SFIs. */
static size_t log_stack(const struct calib_code *k, size_t e, uint64_t *out, size_t max)
{
	int32_t id = k->positions[e].inlining_id;
	size_t n = 0;

	while (id >= 0 && (size_t)id < k->ninlining && n + 1 < max) {
		int32_t fn = k->inlining[id].function;

		out[n++] = fn >= 0 && (size_t)fn < k->ninlined ? k->inlined[fn] : 0;
		if (k->inlining[id].parent >= id)
			break;
		id = k->inlining[id].parent;
	}
	out[n++] = k->sfi;
	return n;
}

/* Read every object back through symbolize/v8code.h and compare with the log. */
static void check(struct learn *c, const struct calib_code *codes, size_t ncodes)
{
	struct v8code *vc = v8code__new(c->pid, c->l);

	if (!vc)
		return;
	v8code__set_cage(vc, c->cage);
	for (size_t i = 0; i < ncodes; i++) {
		const struct calib_code *k = &codes[i];
		bool agree = true;

		if (!is_optimized(k) || !k->described || !k->npositions)
			continue;
		c->r->checked++;
		for (size_t e = 0; e < k->npositions && agree; e++) {
			struct v8code_frame got[32];
			uint64_t want[32];
			size_t nwant;
			int n;

			/* an offset several entries share: the last of them applies */
			if (k->positions[e].code_offset < 0 ||
			    (e + 1 < k->npositions &&
			     k->positions[e + 1].code_offset == k->positions[e].code_offset))
				continue;
			nwant = log_stack(k, e, want, 32);
			n = v8code__stack(vc, k->start + (uint64_t)k->positions[e].code_offset, got, 32,
					  NULL);
			c->r->positions++;
			agree = n == (int)nwant;
			for (int f = 0; agree && f < n; f++)
				agree = got[f].sfi == want[f];
		}
		c->r->agree += agree;
	}
	v8code__free(vc);
}

static void clear_code_fields(struct v8_layout *l)
{
	memset(&l->code_alignment, 0,
	       (size_t)((const char *)(&l->spt_encoding + 1) - (const char *)&l->code_alignment));
}

int calibrate__learn_code(pid_t pid, const struct calib_code *codes, size_t ncodes,
			  struct v8_layout *l, struct calib_code_report *report)
{
	struct learn c = { .pid = pid, .l = l, .r = report };
	struct shape shape;
	size_t inl = 0;
	int err = 0;

	memset(report, 0, sizeof(*report));
	clear_code_fields(l);
	c.o = calloc(MAX_OBJECTS, sizeof(*c.o));
	if (!c.o)
		return -ENOMEM;
	/* objects that inlined something first: they are what tells the fields apart */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < ncodes && c.n < MAX_OBJECTS; i++) {
			const struct calib_code *k = &codes[i];
			bool want = pass == 0 ? is_optimized(k) && k->described && k->ninlined :
				    pass == 1 ? is_optimized(k) && k->described && !k->ninlined :
						k->tier == '^';

			if (!want || (pass == 2 && c.n >= MAX_OBJECTS / 2 + MAX_OBJECTS / 4))
				continue;
			if (procmem__read(pid, k->start - HEADER_BYTES, c.o[c.n].before, HEADER_BYTES))
				continue;
			c.o[c.n++].log = k;
		}
	}
	for (size_t i = 0; i < ncodes; i++) {
		report->objects += is_optimized(&codes[i]) && codes[i].described;
		report->with_inlining += is_optimized(&codes[i]) && codes[i].ninlined > 0;
	}
	for (size_t i = 0; i < c.n; i++)
		inl += c.o[i].log->ninlined > 0;
	for (size_t i = 0; i < c.n && !c.cage; i++)
		if (c.o[i].log->sfi)
			c.cage = c.o[i].log->sfi;
	if (l->compressed)
		c.cage &= ~0xffffffffull;
	if (!inl || c.n < 4) {
		fail(&c, "the run's code log describes %zu optimized code objects, %zu of them "
		     "with inlined functions: too few to learn from", report->objects,
		     report->with_inlining);
		err = -ENODATA;
	}
	if (!err)
		err = learn_istream(&c);
	if (!err)
		err = learn_deopt(&c, &shape);
	if (!err)
		err = learn_table(&c, &shape);
	if (!err)
		err = learn_kind(&c);
	if (!err) {
		check(&c, codes, ncodes);
		/* a few objects may die between the log and the read; a wrong field fails most */
		if (report->checked < 4 || report->agree * 10 < report->checked * 9) {
			fail(&c, "read back from memory, %zu of %zu code objects agree with the log",
			     report->agree, report->checked);
			err = -ENODATA;
		}
	}
	if (err)
		clear_code_fields(l);
	free(c.o);
	return err;
}

/* ---- The log ------------------------------------------------------------- */

/* The idx'th comma-separated field of line[len] (names escape their commas). */
static bool field_of(const char *line, size_t len, size_t idx, const char **f, size_t *flen)
{
	const char *p = line, *end = line + len;

	for (size_t i = 0; i < idx; i++) {
		const char *comma = memchr(p, ',', (size_t)(end - p));

		if (!comma)
			return false;
		p = comma + 1;
	}
	const char *comma = memchr(p, ',', (size_t)(end - p));

	*f = p;
	*flen = (size_t)((comma ? comma : end) - p);
	return true;
}

static bool number(const char **p, const char *end, int64_t *v)
{
	bool neg = false;
	int64_t x = 0;
	int base = 10;

	if (*p < end && **p == '-') {
		neg = true;
		(*p)++;
	}
	if (end - *p > 2 && (*p)[0] == '0' && (*p)[1] == 'x') {
		base = 16;
		*p += 2;
	}
	if (*p == end)
		return false;
	for (; *p < end; (*p)++) {
		int d = **p >= '0' && **p <= '9' ? **p - '0' :
			base == 16 && **p >= 'a' && **p <= 'f' ? **p - 'a' + 10 : -1;

		if (d < 0)
			break;
		if (x > (INT64_MAX - d) / base)
			return false;
		x = x * base + d;
	}
	*v = neg ? -x : x;
	return true;
}

/* "L<a>O<b>[I<c>]..." into triples; c -1 when absent.  -1: malformed. */
static long triples(const char *p, size_t len, char letter, int64_t (**out)[3])
{
	const char *end = p + len;
	int64_t (*t)[3] = NULL;
	size_t n = 0, cap = 0;

	while (p < end) {
		if (*p++ != letter || array_grow(&t, &cap, n + 1) || !number(&p, end, &t[n][0]) ||
		    p == end || *p++ != 'O' || !number(&p, end, &t[n][1]))
			goto bad;
		t[n][2] = -1;
		if (p < end && *p == 'I') {
			p++;
			if (!number(&p, end, &t[n][2]))
				goto bad;
		}
		n++;
	}
	*out = t;
	return (long)n;
bad:
	free(t);
	return -1;
}

static void code_release(struct calib_code *k)
{
	free(k->inlined);
	free(k->inlining);
	free(k->positions);
	k->inlined = NULL;
	k->inlining = NULL;
	k->positions = NULL;
	k->ninlined = k->ninlining = k->npositions = 0;
	k->described = false;
}

void calibrate__free_codes(struct calib_code *codes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		code_release(&codes[i]);
	free(codes);
}

static int source_info(struct calib_code *k, const char *line, size_t len)
{
	const char *f, *p;
	int64_t (*t)[3] = NULL;
	size_t flen, cap = 0;
	long n;

	code_release(k);
	if (!field_of(line, len, 5, &f, &flen) || (n = triples(f, flen, 'C', &t)) < 0)
		return -EINVAL;
	k->positions = calloc((size_t)n + 1, sizeof(*k->positions));
	if (!k->positions) {
		free(t);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		k->positions[i].code_offset = t[i][0];
		k->positions[i].position = (int32_t)t[i][1];
		k->positions[i].inlining_id = (int32_t)t[i][2];
	}
	k->npositions = (size_t)n;
	free(t);
	t = NULL;
	if (!field_of(line, len, 6, &f, &flen) || (n = triples(f, flen, 'F', &t)) < 0)
		return -EINVAL;
	k->inlining = calloc((size_t)n + 1, sizeof(*k->inlining));
	if (!k->inlining) {
		free(t);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		k->inlining[i].function = (int32_t)t[i][0];
		k->inlining[i].position = (int32_t)t[i][1];
		k->inlining[i].parent = (int32_t)t[i][2];
	}
	k->ninlining = (size_t)n;
	free(t);
	if (!field_of(line, len, 7, &f, &flen))
		return -EINVAL;
	for (p = f; p < f + flen;) {
		int64_t sfi;

		if (*p++ != 'S' || !number(&p, f + flen, &sfi))
			return -EINVAL;
		if (array_grow(&k->inlined, &cap, k->ninlined + 1))
			return -ENOMEM;
		k->inlined[k->ninlined++] = (uint64_t)sfi;
	}
	k->described = true;
	return 0;
}

int calibrate__parse_code_log(const char *text, size_t len, struct calib_code **out, size_t *nout)
{
	const char *p = text, *end = text + len;
	struct calib_code *codes = NULL;
	size_t n = 0, cap = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *e = nl ? nl : end, *f;
		size_t ll = (size_t)(e - p), flen;
		int64_t start, size, sfi;
		const char *q;

		if (ll > 19 && !memcmp(p, "code-creation,JS,", 17)) {
			/* code-creation,JS,kind,time,0xstart,size,name,0xsfi,marker */
			if (field_of(p, ll, 4, &f, &flen) && (q = f, number(&q, f + flen, &start)) &&
			    field_of(p, ll, 5, &f, &flen) && (q = f, number(&q, f + flen, &size)) &&
			    field_of(p, ll, 7, &f, &flen) && (q = f, number(&q, f + flen, &sfi)) &&
			    field_of(p, ll, 8, &f, &flen) && flen >= 1 &&
			    (*f == '*' || *f == '+' || *f == '^') && size > 0 && size < (1 << 30)) {
				if (array_grow(&codes, &cap, n + 1))
					goto nomem;
				memset(&codes[n], 0, sizeof(codes[n]));
				codes[n].start = (uint64_t)start;
				codes[n].size = (uint32_t)size;
				codes[n].sfi = (uint64_t)sfi;
				codes[n].tier = *f;
				n++;
			}
		} else if (ll > 17 && !memcmp(p, "code-source-info,", 17) &&
			   field_of(p, ll, 1, &f, &flen) && (q = f, number(&q, f + flen, &start))) {
			/* the newest code at that address: the line comes right after it */
			for (size_t i = n; i-- > 0;) {
				if (codes[i].start != (uint64_t)start)
					continue;
				int err = source_info(&codes[i], p, ll);

				/* a malformed line describes nothing, not half of it */
				if (err)
					code_release(&codes[i]);
				if (err == -ENOMEM)
					goto nomem;
				break;
			}
		}
		p = nl ? nl + 1 : end;
	}
	*out = codes;
	*nout = n;
	return 0;
nomem:
	calibrate__free_codes(codes, n);
	return -ENOMEM;
}
