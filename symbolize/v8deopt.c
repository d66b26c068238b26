// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8deopt: inlined frames from V8's deoptimization data; see v8deopt.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "symbolize/v8deopt.h"
#include "symbolize/x86_insn.h"

/* ---- Formats ------------------------------------------------------------- */

/*
 * Families 1 and 2 open with the frame opcodes (the JS ones first), then
 * ARGUMENTS_ELEMENTS, ARGUMENTS_LENGTH, REST_LENGTH and the two BEGINs;
 * then value opcodes of one operand each, among which STRING_CONCAT has
 * none; and they end OPTIMIZED_OUT, LITERAL, REGISTER, TAGGED_STACK_SLOT,
 * UINT32_REGISTER, UINT32_STACK_SLOT, UPDATE_FEEDBACK,
 * MATCH_PREVIOUS_TRANSLATION.  Value opcodes come and go between versions
 * (V8 15.8 has two more before OPTIMIZED_OUT than 13.x), which only moves
 * the tail: the opcode count says where it starts.
 *
 * Family 3 sorts them by name: ARGUMENTS_ELEMENTS, ARGUMENTS_LENGTH, BEGIN,
 * BOOL_REGISTER, BOOL_STACK_SLOT, BUILTIN_CONTINUATION_FRAME,
 * CAPTURED_OBJECT, CONSTRUCT_STUB_FRAME, value opcodes and
 * INLINED_EXTRA_ARGUMENTS (13), and a tail of thirteen from
 * INTERPRETED_FRAME_WITH_RETURN: the interpreted and JS continuation
 * frames, JS_TO_WASM_BUILTIN_CONTINUATION_FRAME, OPTIMIZED_OUT, LITERAL,
 * REGISTER, STACK_SLOT, UINT32_REGISTER, UINT32_STACK_SLOT,
 * UPDATE_FEEDBACK, MATCH_PREVIOUS_TRANSLATION (measured: 36 opcodes in
 * node 20's V8 11.3, BEGIN 2, INTERPRETED_FRAME_WITHOUT_RETURN 24).
 */
#define FRAME_OPCODES 11
#define BEGIN_OPCODE 14
#define STRING_CONCAT_OPCODE 19
#define TAIL_OPCODES 8
#define ALPHA_TAIL 13

static const uint8_t frame_operands[2][FRAME_OPCODES] = {
	/* INTERPRETED_FRAME_WITH_RETURN, _WITHOUT_RETURN, JAVASCRIPT_BUILTIN_CONTINUATION,
	 * _WITH_CATCH, CONSTRUCT_CREATE_STUB, CONSTRUCT_INVOKE_STUB, BUILTIN_CONTINUATION,
	 * JS_TO_WASM_BUILTIN_CONTINUATION, WASM_INLINED_INTO_JS, LIFTOFF,
	 * INLINED_EXTRA_ARGUMENTS */
	[0] = { 6, 4, 3, 3, 2, 1, 3, 4, 3, 3, 2 },
	[1] = { 5, 3, 3, 3, 2, 1, 3, 4, 3, 3, 2 },
};

/* family 3's tail, from INTERPRETED_FRAME_WITH_RETURN */
static const uint8_t alpha_tail[ALPHA_TAIL] = { 5, 3, 3, 3, 4, 0, 1, 1, 1, 1, 1, 2, 1 };

void v8deopt__family_range(enum v8deopt_family family, uint32_t *min, uint32_t *max)
{
	*min = *max = 0;
	if (family == V8DEOPT_FAMILY_ARRAY_ID || family == V8DEOPT_FAMILY_NO_ARRAY_ID) {
		/* 45 in the sources of V8 13, 47 measured in 15.8: room either way */
		*min = 42;
		*max = 52;
	} else if (family == V8DEOPT_FAMILY_ALPHABETICAL) {
		*min = 34;
		*max = 40;
	}
}

static void alphabetical(uint32_t opcodes, struct v8deopt_format *out)
{
	uint32_t tail = opcodes - ALPHA_TAIL;

	out->begin[0] = out->begin[1] = 2;
	out->operands[1] = 0;		/* ARGUMENTS_LENGTH */
	out->operands[2] = 3;		/* BEGIN */
	out->operands[5] = 3;		/* BUILTIN_CONTINUATION_FRAME */
	out->operands[7] = 3;		/* CONSTRUCT_STUB_FRAME */
	out->operands[13] = 2;		/* INLINED_EXTRA_ARGUMENTS */
	out->frame[5] = out->frame[7] = out->frame[13] = true;
	memcpy(out->operands + tail, alpha_tail, ALPHA_TAIL);
	for (uint32_t i = tail; i < tail + 5; i++)
		out->frame[i] = true;
	out->interpreted[tail] = out->interpreted[tail + 1] = true;
}

int v8deopt__format(enum v8deopt_family family, uint32_t opcodes, struct v8deopt_format *out)
{
	uint32_t min, max, tail;

	memset(out, 0, sizeof(*out));
	v8deopt__family_range(family, &min, &max);
	if (!min || opcodes < min || opcodes > max || opcodes > V8DEOPT_OPCODES_MAX)
		return -EINVAL;
	out->opcodes = opcodes;
	out->match_previous = opcodes - 1;
	for (uint32_t i = 0; i < opcodes; i++)
		out->operands[i] = 1;
	if (family == V8DEOPT_FAMILY_ALPHABETICAL) {
		alphabetical(opcodes, out);
		return 0;
	}
	out->begin[0] = BEGIN_OPCODE;
	out->begin[1] = BEGIN_OPCODE + 1;
	memcpy(out->operands, frame_operands[family - 1], FRAME_OPCODES);
	for (uint32_t i = 0; i < FRAME_OPCODES; i++)
		out->frame[i] = true;
	out->interpreted[0] = out->interpreted[1] = true;
	out->operands[11] = 1;			/* ARGUMENTS_ELEMENTS */
	out->operands[12] = 0;			/* ARGUMENTS_LENGTH */
	out->operands[13] = 0;			/* REST_LENGTH */
	out->operands[BEGIN_OPCODE] = 3;
	out->operands[BEGIN_OPCODE + 1] = 3;
	out->operands[STRING_CONCAT_OPCODE] = 0;
	tail = opcodes - TAIL_OPCODES;
	out->operands[tail] = 0;		/* OPTIMIZED_OUT */
	out->operands[opcodes - 2] = 2;		/* UPDATE_FEEDBACK */
	out->operands[opcodes - 1] = 1;		/* MATCH_PREVIOUS_TRANSLATION */
	return 0;
}

/* ---- Translations --------------------------------------------------------- */

/* V8's VLQ: 7 bits a byte, low group first, bit 7 set on all but the last. */
static int vlq(const uint8_t *tr, size_t len, size_t *at, uint32_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*at >= len || shift > 35)
			return -EINVAL;
		b = tr[(*at)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Signed operands keep the sign in bit 0 and the magnitude above it. */
static int32_t vlq_signed(uint32_t v)
{
	return v & 1 ? -(int32_t)(v >> 1) : (int32_t)(v >> 1);
}

/* One instruction, as much of it as frames need. */
struct insn {
	uint8_t opcode;
	int32_t op0, op1;
};

struct reader {
	const struct v8deopt_format *f;
	const uint8_t *tr;
	size_t len, at;
};

/* The explicit instruction at r->at (not a BEGIN, not a back-reference). */
static int read_insn(struct reader *r, uint8_t opcode, struct insn *out)
{
	uint32_t v;

	out->opcode = opcode;
	out->op0 = out->op1 = 0;
	for (uint32_t k = 0; k < r->f->operands[opcode]; k++) {
		if (vlq(r->tr, r->len, &r->at, &v))
			return -EINVAL;
		if (k == 0)
			out->op0 = vlq_signed(v);
		else if (k == 1)
			out->op1 = vlq_signed(v);
	}
	return 0;
}

static bool is_begin(const struct v8deopt_format *f, uint8_t b)
{
	return b == f->begin[0] || b == f->begin[1];
}

/* The BEGIN at index: its look-back distance and frame counts. */
static int read_begin(struct reader *r, size_t index, uint32_t *lookback, int32_t *frames,
		      int32_t *js_frames)
{
	uint32_t a, b;

	if (index >= r->len || !is_begin(r->f, r->tr[index]))
		return -EINVAL;
	r->at = index + 1;
	if (vlq(r->tr, r->len, &r->at, lookback) || vlq(r->tr, r->len, &r->at, &a) ||
	    vlq(r->tr, r->len, &r->at, &b))
		return -EINVAL;
	*frames = vlq_signed(a);
	*js_frames = vlq_signed(b);
	if (*frames < 1 || *js_frames < 1 || *js_frames > *frames || *frames > V8DEOPT_FRAMES_MAX)
		return -EINVAL;
	return 0;
}

/*
 * The instructions of the basis translation at index (one that refers
 * back to none), up to the next BEGIN: what MATCH_PREVIOUS_TRANSLATION
 * instructions of later translations repeat, by position.
 */
static int read_basis(const struct v8deopt_format *f, const uint8_t *tr, size_t len, size_t index,
		      struct insn **out, size_t *n)
{
	struct reader r = { .f = f, .tr = tr, .len = len };
	struct insn *v = NULL;
	size_t cap = 0, count = 0;
	uint32_t lookback;
	int32_t frames, js;

	*out = NULL;
	*n = 0;
	if (read_begin(&r, index, &lookback, &frames, &js) || lookback)
		return -EINVAL;
	while (r.at < len && !is_begin(f, tr[r.at])) {
		uint8_t b = tr[r.at++];

		/* a basis repeats nothing itself */
		if (b >= f->opcodes || b == f->match_previous || count >= V8DEOPT_BASIS_MAX)
			goto bad;
		if (array_grow(&v, &cap, count + 1)) {
			free(v);
			return -ENOMEM;
		}
		if (read_insn(&r, b, &v[count]))
			goto bad;
		count++;
	}
	*out = v;
	*n = count;
	return 0;
bad:
	free(v);
	return -EINVAL;
}

struct frame_walk {
	const struct v8deopt_format *f;
	struct v8deopt_frame *out;
	size_t max, n;
	int32_t frames_seen;
};

static int frame_insn(struct frame_walk *w, const struct insn *in)
{
	if (!w->f->frame[in->opcode])
		return 0;
	w->frames_seen++;
	if (!w->f->interpreted[in->opcode])
		return 0;
	if (w->n >= w->max)
		return -EINVAL;
	w->out[w->n].bytecode_offset = in->op0;
	w->out[w->n].literal = in->op1;
	w->n++;
	return 0;
}

void v8deopt__basis_release(struct v8deopt_basis *b)
{
	free(b->insns);
	memset(b, 0, sizeof(*b));
}

int v8deopt__frames(const struct v8deopt_format *f, const uint8_t *tr, size_t len, size_t index,
		    struct v8deopt_frame *out, size_t max)
{
	struct v8deopt_basis cache = { 0 };
	int n = v8deopt__frames_cached(f, tr, len, index, out, max, &cache);

	v8deopt__basis_release(&cache);
	return n;
}

int v8deopt__frames_cached(const struct v8deopt_format *f, const uint8_t *tr, size_t len,
			   size_t index, struct v8deopt_frame *out, size_t max,
			   struct v8deopt_basis *cache)
{
	struct reader r = { .f = f, .tr = tr, .len = len };
	struct frame_walk w = { .f = f, .out = out, .max = max };
	struct insn *basis = NULL, in;
	size_t nbasis = 0, pos = 0;	/* instructions of this translation so far */
	uint32_t lookback, count;
	int32_t frames, js;
	int err = -EINVAL;

	if (!f->opcodes || read_begin(&r, index, &lookback, &frames, &js))
		return -EINVAL;
	if (lookback) {
		if (lookback > index)
			return -EINVAL;
		if (!cache->insns || cache->f != f || cache->tr != tr ||
		    cache->index != index - lookback) {
			v8deopt__basis_release(cache);
			err = read_basis(f, tr, len, index - lookback, &basis, &nbasis);
			if (err)
				return err;
			cache->f = f;
			cache->tr = tr;
			cache->index = index - lookback;
			cache->insns = basis;
			cache->n = nbasis;
		}
		basis = cache->insns;
		nbasis = cache->n;
		err = -EINVAL;
	}
	while (w.frames_seen < frames && r.at < len && !is_begin(f, tr[r.at])) {
		uint8_t b = tr[r.at++];

		if (b >= f->opcodes || b == f->match_previous) {
			/* the next count instructions are the basis's at the same positions */
			if (b >= f->opcodes)
				count = b - f->opcodes;
			else if (vlq(tr, len, &r.at, &count))
				goto out;
			if (!basis || pos > nbasis || count > nbasis - pos)
				goto out;
			for (uint32_t k = 0; k < count && w.frames_seen < frames; k++)
				if (frame_insn(&w, &basis[pos + k]))
					goto out;
			pos += count;
			continue;
		}
		if (read_insn(&r, b, &in) || frame_insn(&w, &in))
			goto out;
		pos++;
	}
	/* its frames and JS frames as its BEGIN counts them */
	if (w.frames_seen == frames && w.n >= 1 && w.n <= (size_t)js)
		err = (int)w.n;
out:
	return err;
}

/* ---- Maglev safepoints --------------------------------------------------- */

static uint32_t le_bytes(const uint8_t *p, uint32_t n)
{
	uint32_t v = 0;

	for (uint32_t i = 0; i < n; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

long v8deopt__maglev_calls(const uint8_t *t, size_t len, const struct v8deopt_safepoint_layout *l,
			   uint32_t nentries, struct v8deopt_call **out, size_t *bytes)
{
	struct v8deopt_call *calls = NULL;
	uint32_t count, config, pc_size, deopt_size, reg_size, entry_size, last = 0;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (bytes)
		*bytes = 0;
	if (l->header < 8 || l->config + 4 > l->header || l->length + 4 > l->header ||
	    l->length == l->config || l->header > len)
		return -EINVAL;
	count = le_bytes(t + l->length, 4);
	config = le_bytes(t + l->config, 4);
	reg_size = (config >> 1) & 7;
	pc_size = (config >> 4) & 7;
	deopt_size = (config >> 7) & 7;
	/* nothing but the four fields; sizes of at most 4 bytes */
	if (config >> 10 || !pc_size || pc_size > 4 || deopt_size > 4 || reg_size > 4)
		return -EINVAL;
	entry_size = pc_size + ((config & 1) ? pc_size + deopt_size : 0) + 1 + reg_size;
	/* the size it says it has, also when len holds only its header */
	if (bytes)
		*bytes = l->header + (size_t)count * entry_size;
	if (count > (len - l->header) / entry_size)
		return -EINVAL;
	if (!(config & 1) || !deopt_size)
		return 0;
	for (uint32_t i = 0; i < count; i++) {
		const uint8_t *e = t + l->header + (size_t)i * entry_size;
		uint32_t pc = le_bytes(e, pc_size);
		/* stored + 1, so that "none" (-1) is 0 */
		uint32_t deopt = le_bytes(e + pc_size, deopt_size);

		if (i && pc < last) {
			free(calls);
			return -EINVAL;
		}
		last = pc;
		if (!deopt)
			continue;
		if (deopt - 1 >= nentries) {
			free(calls);
			return -EINVAL;
		}
		if (array_grow(&calls, &cap, n + 1)) {
			free(calls);
			return -ENOMEM;
		}
		calls[n].return_offset = pc;
		calls[n].entry = deopt - 1;
		n++;
	}
	*out = calls;
	return (long)n;
}

/* ---- Placement ----------------------------------------------------------- */

#define UNKNOWN (-2)
#define VISITING (-3)
#define WALK_MAX 4096		/* instructions one forward walk may cross */

struct binsn {
	uint32_t off;		/* instruction start */
	uint8_t len, flow;
	uint8_t is_target;	/* some branch goes here */
	int32_t site;		/* the deoptimization entry of a point, -1 */
	int32_t ahead;		/* memo of the forward walk */
	int64_t target;		/* branch target offset, or -1 */
};

struct body {
	struct binsn *in;
	size_t n, cap;
};

/* The instruction starting at offset, or -1. */
static long insn_at(const struct body *b, int64_t offset)
{
	size_t lo = 0, hi = b->n;

	if (offset < 0)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->in[mid].off < offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->n && b->in[lo].off == offset ? (long)lo : -1;
}

static int decode_body(const uint8_t *code, uint32_t end, struct body *b,
		       struct v8deopt_place_stats *st)
{
	for (uint32_t at = 0; at < end;) {
		struct x86_insn in;
		struct binsn *o;

		if (x86_insn__decode(code + at, end - at, &in)) {
			/* lost: one byte that goes nowhere, and try again after it */
			in.length = 1;
			in.flow = X86_FLOW_STOP;
			in.target = 0;
			st->undecoded++;
		}
		if (array_grow(&b->in, &b->cap, b->n + 1))
			return -ENOMEM;
		o = &b->in[b->n++];
		o->off = at;
		o->len = in.length;
		o->flow = (uint8_t)in.flow;
		o->is_target = 0;
		o->site = -1;
		o->ahead = UNKNOWN;
		o->target = (in.flow == X86_FLOW_JCC || in.flow == X86_FLOW_JMP ||
			     in.flow == X86_FLOW_CALL) ? (int64_t)at + in.target : -1;
		at += in.length;
	}
	return 0;
}

static int cmp_call(const void *a, const void *b)
{
	const struct v8deopt_call *x = a, *y = b;

	return x->return_offset < y->return_offset ? -1 : x->return_offset > y->return_offset;
}

static int32_t call_entry(const struct v8deopt_call *calls, size_t n, uint32_t ret)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (calls[mid].return_offset < ret)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && calls[lo].return_offset == ret ? (int32_t)calls[lo].entry : -1;
}

/* The points in the body: checks branching to an eager exit, calls with a lazy entry. */
static void find_points(struct body *b, const struct v8deopt_exits *x,
			const struct v8deopt_call *calls, size_t ncalls,
			struct v8deopt_place_stats *st)
{
	uint64_t eager_end = (uint64_t)x->start + (uint64_t)x->eager * x->eager_size;

	for (size_t i = 0; i < b->n; i++) {
		struct binsn *in = &b->in[i];
		int64_t t = in->target;
		bool branch = in->flow == X86_FLOW_JCC || in->flow == X86_FLOW_JMP;

		if (branch && t >= x->start && (uint64_t)t < eager_end &&
		    (t - x->start) % x->eager_size == 0) {
			in->site = (int32_t)((t - x->start) / x->eager_size);
			st->checks++;
		} else if (in->flow == X86_FLOW_CALL || in->flow == X86_FLOW_CALL_INDIRECT) {
			in->site = call_entry(calls, ncalls, in->off + in->len);
			st->calls += in->site >= 0;
		}
		if (branch && t >= 0) {
			long k = insn_at(b, t);

			if (k >= 0)
				b->in[k].is_target = 1;
		}
	}
}

/*
 * The first point control reaches from instruction i: through
 * fall-throughs, conditional branches not taken and jumps, until a point,
 * or a return, an indirect jump, a stop, a loop without a point.  Every
 * instruction on the way gets the same answer.
 */
static int32_t walk_ahead(struct body *b, size_t i, size_t *path)
{
	size_t npath = 0, j = i;
	int32_t found = -1;

	while (npath < WALK_MAX) {
		struct binsn *in = &b->in[j];

		if (in->ahead != UNKNOWN) {
			found = in->ahead == VISITING ? -1 : in->ahead;
			break;
		}
		if (in->site >= 0) {
			found = in->site;
			in->ahead = found;
			break;
		}
		in->ahead = VISITING;
		path[npath++] = j;
		if (in->flow == X86_FLOW_JMP) {
			long k = insn_at(b, in->target);

			if (k < 0)
				break;
			j = (size_t)k;
		} else if (in->flow == X86_FLOW_NEXT || in->flow == X86_FLOW_JCC ||
			   in->flow == X86_FLOW_CALL || in->flow == X86_FLOW_CALL_INDIRECT) {
			if (j + 1 >= b->n)
				break;
			j++;
		} else {
			break;
		}
	}
	for (size_t k = 0; k < npath; k++)
		b->in[path[k]].ahead = found;
	return found;
}

/* The last point before instruction i in its block, or -1. */
static int32_t look_behind(const struct body *b, size_t i)
{
	if (b->in[i].is_target)
		return -1;
	for (size_t k = i; k-- > 0;) {
		const struct binsn *in = &b->in[k];

		if (in->site >= 0)
			return in->site;
		/* a branch other than a check, or a way out, ends the block before i */
		if (in->flow != X86_FLOW_NEXT && in->flow != X86_FLOW_CALL &&
		    in->flow != X86_FLOW_CALL_INDIRECT)
			return -1;
		if (in->is_target)
			return -1;
	}
	return -1;
}

static int add_run(struct v8deopt_run **runs, size_t *n, size_t *cap, uint32_t start,
		   int32_t entry, enum v8deopt_how how)
{
	if (*n && (*runs)[*n - 1].entry == entry && (*runs)[*n - 1].how == (uint32_t)how)
		return 0;
	if (array_grow(runs, cap, *n + 1))
		return -ENOMEM;
	(*runs)[*n].start = start;
	(*runs)[*n].entry = entry;
	(*runs)[*n].how = how;
	(*n)++;
	return 0;
}

long v8deopt__place(const uint8_t *code, size_t size, const struct v8deopt_exits *exits,
		    const struct v8deopt_call *calls, size_t ncalls, struct v8deopt_run **runs,
		    struct v8deopt_place_stats *stats)
{
	struct v8deopt_place_stats st = { 0 };
	struct body b = { 0 };
	struct v8deopt_call *sorted = NULL;
	struct v8deopt_run *r = NULL;
	size_t nr = 0, cap = 0, *path = NULL;
	uint64_t exits_end;
	long ret = -ENOMEM;

	*runs = NULL;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	exits_end = (uint64_t)exits->start + (uint64_t)exits->eager * exits->eager_size +
		    (uint64_t)exits->lazy * exits->lazy_size;
	if (size > UINT32_MAX || exits_end > size || !exits->eager_size || !exits->lazy_size)
		return -EINVAL;
	if (ncalls) {
		sorted = malloc(ncalls * sizeof(*sorted));
		if (!sorted)
			return -ENOMEM;
		memcpy(sorted, calls, ncalls * sizeof(*sorted));
		qsort(sorted, ncalls, sizeof(*sorted), cmp_call);
	}
	ret = decode_body(code, exits->start, &b, &st);
	if (ret)
		goto out;
	ret = -ENOMEM;
	path = malloc(WALK_MAX * sizeof(*path));
	if (!path)
		goto out;
	find_points(&b, exits, sorted, ncalls, &st);
	st.instructions = (uint32_t)b.n;
	for (size_t i = 0; i < b.n; i++) {
		int32_t e = walk_ahead(&b, i, path);
		enum v8deopt_how how = V8DEOPT_AHEAD;

		/*
		 * The point ahead first: a check follows what it checks.  Taking
		 * the nearer of ahead and behind, or behind first, placed sampled
		 * pcs of flagged runs alike within a point or two (93-100% each
		 * way): the simplest rule stays.
		 */
		if (e < 0) {
			e = look_behind(&b, i);
			how = e < 0 ? V8DEOPT_NONE : V8DEOPT_BEHIND;
		}
		st.ahead += how == V8DEOPT_AHEAD;
		st.behind += how == V8DEOPT_BEHIND;
		st.none += how == V8DEOPT_NONE;
		if (add_run(&r, &nr, &cap, b.in[i].off, e, how))
			goto out;
	}
	/* the exit stubs: a return address V8 patched for lazy deoptimization lands there */
	for (uint32_t i = 0; i < exits->eager + exits->lazy; i++) {
		uint32_t at = i < exits->eager
				      ? exits->start + i * exits->eager_size
				      : exits->start + exits->eager * exits->eager_size +
						(i - exits->eager) * exits->lazy_size;

		if (add_run(&r, &nr, &cap, at, (int32_t)i, V8DEOPT_EXIT))
			goto out;
	}
	if (exits_end < size && add_run(&r, &nr, &cap, (uint32_t)exits_end, -1, V8DEOPT_NONE))
		goto out;
	*runs = r;
	r = NULL;
	ret = (long)nr;
	if (stats)
		*stats = st;
out:
	free(r);
	free(path);
	free(sorted);
	free(b.in);
	return ret;
}

const struct v8deopt_run *v8deopt__lookup(const struct v8deopt_run *runs, size_t n,
					  uint32_t offset)
{
	size_t lo = 0, hi = n;

	/* the last run starting at or before offset */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (runs[mid].start <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &runs[lo - 1] : NULL;
}
