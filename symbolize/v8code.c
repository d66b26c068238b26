// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8code: inlined functions from optimized V8 code objects; see v8code.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8code.h"
#include "symbolize/v8deopt.h"
#include "symbolize/v8heap.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/monotime.h"
#include "lib/procmem.h"

#define PAGE 4096u
#define KNOWN_MAPS 8		/* InstructionStream map words seen (one per isolate at most) */
#define INLINING_POSITION_BYTES 16 /* u64 SourcePosition, i32 function index, padding */
#define CODE_HEADER_MAX 256

struct inlining {
	int32_t function;	/* index into the code's inlined SFIs */
	int32_t position;	/* the call site's script offset in the parent */
	int32_t parent;		/* inlining id of the caller; -1: the code's own function */
};

struct deopt_raw;
static void raw_free(struct deopt_raw *r);

struct code_obj {
	uint64_t istream, code, start;
	uint32_t size;
	enum v8code_tier tier;
	uint64_t outer_sfi;
	uint64_t *sfis;
	uint32_t nsfis;
	struct inlining *inl;
	uint32_t ninl;
	struct v8code_position *pos;
	size_t npos;
	/* placement by the deoptimization data (decode_deopt()); nruns 0: none */
	struct v8deopt_run *runs;
	uint32_t nruns;
	uint32_t *entry_frames;	/* per entry: first frame in dframes, outermost first */
	uint8_t *entry_depth;	/* per entry: its frames; 0 when its translation did not read */
	uint32_t nentries;
	struct v8code_frame *dframes;
	uint32_t ndframes;
	struct deopt_raw *raw;	/* read, not yet placed (place_deopt()) */
	uint64_t epoch;		/* when last found valid */
};

struct pc_entry {
	uint64_t pc;
	long code;		/* index into codes, or -1 with err */
	int err;
};

struct v8code {
	pid_t pid;
	struct v8_layout l;
	struct v8deopt_format format;	/* deopt_format's, when learnt */
	bool check_deopt;
	uint64_t cage;
	uint64_t epoch;
	uint32_t header_bytes;	/* of a Code, up to its last field read */
	uint64_t maps[KNOWN_MAPS];
	size_t nmaps;
	struct code_obj *codes;
	size_t ncodes, codes_cap;
	struct pc_entry *pcs;
	size_t npcs, pcs_cap;
	struct index_table by_pc;
	struct v8code_stats stats;
	/* the last page scanned */
	uint64_t page_addr;
	bool page_valid;
	uint8_t page[PAGE];
};

/* ---- Reading ------------------------------------------------------------- */

static int rd(struct v8code *c, uint64_t addr, void *buf, size_t len)
{
	c->stats.reads++;
	c->stats.bytes += len;
	return procmem__read(c->pid, addr, buf, len);
}

static uint64_t load_tagged(const struct v8code *c, const uint8_t *p)
{
	uint64_t w = 0;

	memcpy(&w, p, c->l.tagged_size);
	return w;
}

static uint64_t decompress(const struct v8code *c, uint64_t word)
{
	return v8heap__decompress(&c->l, c->cage, word);
}

/* An array's length and where its elements start. */
static int array_header(struct v8code *c, uint64_t obj, uint64_t *length)
{
	uint8_t buf[16];
	int64_t smi;
	int err;

	if (!obj)
		return -EINVAL;
	if (c->l.array_length_smi) {
		err = rd(c, obj + c->l.array_length, buf, c->l.tagged_size);
		if (err)
			return err;
		if (!v8heap__smi(&c->l, load_tagged(c, buf), &smi) || smi < 0)
			return -EINVAL;
		*length = (uint64_t)smi;
		return 0;
	}
	uint32_t raw;

	err = rd(c, obj + c->l.array_length, &raw, sizeof(raw));
	*length = raw;
	return err;
}

/* n tagged words from the elements of obj into out. */
static int read_elements(struct v8code *c, uint64_t obj, uint64_t n, uint64_t *out)
{
	uint8_t *buf;
	int err;

	if (!n)
		return 0;
	buf = malloc(n * c->l.tagged_size);
	if (!buf)
		return -ENOMEM;
	err = rd(c, obj + c->l.array_elements, buf, n * c->l.tagged_size);
	for (uint64_t i = 0; !err && i < n; i++)
		out[i] = load_tagged(c, buf + i * c->l.tagged_size);
	free(buf);
	return err;
}

/* An array of tagged elements: its first n elements (n <= its length). */
static int array_elements(struct v8code *c, uint64_t obj, uint64_t n, uint64_t *out)
{
	uint64_t length;
	int err;

	err = array_header(c, obj, &length);
	if (err)
		return err;
	if (length < n || n > V8CODE_INLINED_MAX)
		return -EINVAL;
	return read_elements(c, obj, n, out);
}

/* An array's length, -E2BIG when it is over max. */
static int array_length_max(struct v8code *c, uint64_t obj, uint64_t max, uint64_t *length)
{
	int err = array_header(c, obj, length);

	return err ? err : *length > max ? -E2BIG : 0;
}

/* A byte array's bytes, malloc'd, at most max. */
static int byte_array(struct v8code *c, uint64_t obj, size_t max, uint8_t **out, size_t *len)
{
	uint64_t length;
	int err;

	*out = NULL;
	*len = 0;
	err = array_length_max(c, obj, max, &length);
	if (err)
		return err;
	if (!length)
		return 0;
	*out = malloc(length);
	if (!*out)
		return -ENOMEM;
	err = rd(c, obj + c->l.array_elements, *out, length);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*len = length;
	return 0;
}

/* ---- Positions ----------------------------------------------------------- */

void v8code__source_position(uint64_t raw, int32_t *position, int32_t *inlining_id)
{
	/* bit 0 external; bits 1-30 script offset + 1; bits 31-46 inlining id + 1 */
	*position = (raw & 1) ? -1 : (int32_t)((raw >> 1) & 0x3fffffff) - 1;
	*inlining_id = (int32_t)((raw >> 31) & 0xffff) - 1;
}

static int varint(const uint8_t **p, const uint8_t *end, int64_t *out)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (*p == end || shift > 63)
			return -EINVAL;
		b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	/* zig-zag */
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return 0;
}

long v8code__decode_positions(const uint8_t *table, size_t len, uint32_t encoding,
			      struct v8code_position **out)
{
	const uint8_t *p = table, *end = table + len;
	struct v8code_position *pos = NULL;
	size_t n = 0, cap = 0;
	/* V8's tables start before the first instruction (kFunctionEntryBytecodeOffset) */
	int64_t offset = -1, field, delta;
	uint64_t raw = 0;

	*out = NULL;
	if (encoding != 1 && encoding != 2)
		return -EINVAL;
	while (p < end) {
		if (varint(&p, end, &field))
			goto bad;
		/* 1: the sign says "not a statement"; 2: two flag bits below the delta */
		if (encoding == 1)
			delta = field >= 0 ? field : -(field + 1);
		else
			delta = field >> 2;
		/* code is smaller than 2 GiB: anything else is not a table */
		if (delta < 0 || delta > INT32_MAX || offset + delta > INT32_MAX)
			goto bad;
		offset += delta;
		if (varint(&p, end, &field))
			goto bad;
		/* SourcePosition is a bit field: deltas wrap as V8's own arithmetic does */
		raw += (uint64_t)field;
		if (array_grow(&pos, &cap, n + 1)) {
			free(pos);
			return -ENOMEM;
		}
		pos[n].code_offset = offset;
		v8code__source_position(raw, &pos[n].position, &pos[n].inlining_id);
		n++;
	}
	*out = pos;
	return (long)n;
bad:
	free(pos);
	return -EINVAL;
}

/* ---- Finding and decoding a code object ---------------------------------- */

static uint32_t code_header_bytes(const struct v8_layout *l)
{
	uint32_t ends[] = {
		l->code_istream + 4,
		l->code_instruction_start + 8,
		l->code_instruction_size + 4,
		l->code_flags + 4,
		l->code_deopt_data + l->tagged_size,
		l->code_position_table + l->tagged_size,
	};
	uint32_t m = 0;

	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (ends[i] > m)
			m = ends[i];
	return m;
}

/* Is word the map of an InstructionStream?  A map seen once is trusted by its word. */
static bool is_istream_map(struct v8code *c, uint64_t word)
{
	uint16_t type;
	uint64_t map;

	if (!(word & 1))
		return false;
	for (size_t i = 0; i < c->nmaps; i++)
		if (c->maps[i] == word)
			return true;
	map = decompress(c, word);
	if (!map || rd(c, map + c->l.map_instance_type, &type, sizeof(type)) ||
	    type != c->l.istream_type)
		return false;
	if (c->nmaps < KNOWN_MAPS)
		c->maps[c->nmaps++] = word;
	return true;
}

/*
 * The Code of the InstructionStream at istream, if its header holds it:
 * the Code's own header read into hdr.  0, or -EINVAL.
 */
static int check_istream(struct v8code *c, uint64_t istream, uint64_t code_word, uint8_t *hdr,
			 uint64_t *code)
{
	const struct v8_layout *l = &c->l;
	uint64_t start = 0;
	uint32_t back;

	*code = decompress(c, code_word);
	if (!*code || rd(c, *code, hdr, c->header_bytes))
		return -EINVAL;
	memcpy(&back, hdr + l->code_istream, sizeof(back));
	memcpy(&start, hdr + l->code_instruction_start, sizeof(start));
	/* the code range may compress against a cage of its own: the low half must match */
	if (back != (uint32_t)(istream | 1) || start != istream + l->istream_instructions)
		return -EINVAL;
	return 0;
}

/*
 * Scan back from pc for the InstructionStream whose instructions hold it:
 * instructions are code_alignment-aligned, so its header sits that far
 * before one of the aligned addresses at or below pc.
 */
static int find_istream(struct v8code *c, uint64_t pc, uint64_t *istream, uint64_t *code,
			uint8_t *hdr)
{
	const struct v8_layout *l = &c->l;
	uint64_t s = pc & ~((uint64_t)l->code_alignment - 1);
	uint64_t lowest = pc > V8CODE_SCAN_MAX ? pc - V8CODE_SCAN_MAX : 0;

	for (; s >= l->istream_instructions && s > lowest; s -= l->code_alignment) {
		uint64_t h = s - l->istream_instructions, page = h & ~(uint64_t)(PAGE - 1);
		uint64_t map, code_word;
		uint32_t size;

		if (h + l->istream_code + l->tagged_size > page + PAGE)
			continue;
		if (!c->page_valid || c->page_addr != page) {
			c->page_valid = false;
			/* below the code's mapping: nothing further back */
			if (rd(c, page, c->page, PAGE))
				return -EINVAL;
			c->page_addr = page;
			c->page_valid = true;
		}
		map = load_tagged(c, c->page + (h - page));
		code_word = load_tagged(c, c->page + (h - page) + l->istream_code);
		if (!(code_word & 1) || !is_istream_map(c, map) ||
		    check_istream(c, h, code_word, hdr, code))
			continue;
		memcpy(&size, hdr + l->code_instruction_size, sizeof(size));
		if (pc >= s + size)
			return -EINVAL;	/* between code objects: no code holds pc */
		*istream = h;
		return 0;
	}
	return -EINVAL;
}

static void code_free(struct code_obj *o)
{
	free(o->sfis);
	free(o->inl);
	free(o->pos);
	free(o->runs);
	free(o->entry_frames);
	free(o->entry_depth);
	free(o->dframes);
	raw_free(o->raw);
	memset(o, 0, sizeof(*o));
}

/* The deoptimization data's tables and the position table of the Code at code. */
static int decode(struct v8code *c, const uint8_t *hdr, struct code_obj *o)
{
	const struct v8_layout *l = &c->l;
	uint32_t need = l->deopt_inlined_count;
	uint64_t elems[32], lits[V8CODE_INLINED_MAX], deopt, word;
	uint8_t *bytes = NULL, buf[8];
	size_t len;
	int64_t count;
	long n;
	int err;

	need = need > l->deopt_literals ? need : l->deopt_literals;
	need = need > l->deopt_sfi ? need : l->deopt_sfi;
	need = need > l->deopt_inlining_positions ? need : l->deopt_inlining_positions;
	deopt = decompress(c, load_tagged(c, hdr + l->code_deopt_data));
	err = array_elements(c, deopt, need + 1, elems);
	if (err)
		return err;
	if (!v8heap__smi(l, elems[l->deopt_inlined_count], &count) || count < 0 ||
	    count > V8CODE_INLINED_MAX)
		return -EINVAL;
	err = array_elements(c, decompress(c, elems[l->deopt_literals]), (uint64_t)count, lits);
	if (err)
		return err;
	o->sfis = malloc(((size_t)count + 1) * sizeof(*o->sfis));
	if (!o->sfis)
		return -ENOMEM;
	for (int64_t i = 0; i < count; i++)
		o->sfis[i] = decompress(c, lits[i]);
	o->nsfis = (uint32_t)count;

	word = elems[l->deopt_sfi];
	if (l->deopt_sfi_wrapper) {
		uint64_t wrapper = decompress(c, word);

		if (!wrapper || rd(c, wrapper + l->deopt_sfi_wrapper, buf, l->tagged_size))
			return -EINVAL;
		word = load_tagged(c, buf);
	}
	o->outer_sfi = decompress(c, word);
	if (!o->outer_sfi)
		return -EINVAL;

	err = byte_array(c, decompress(c, elems[l->deopt_inlining_positions]),
			 (size_t)V8CODE_INLINED_MAX * INLINING_POSITION_BYTES, &bytes, &len);
	if (err)
		return err == -E2BIG ? -EINVAL : err;
	if (len % INLINING_POSITION_BYTES) {
		free(bytes);
		return -EINVAL;
	}
	o->ninl = (uint32_t)(len / INLINING_POSITION_BYTES);
	o->inl = calloc(o->ninl + 1, sizeof(*o->inl));
	if (!o->inl) {
		free(bytes);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < o->ninl; i++) {
		uint64_t raw;
		int32_t fn, parent;

		memcpy(&raw, bytes + i * INLINING_POSITION_BYTES, sizeof(raw));
		memcpy(&fn, bytes + i * INLINING_POSITION_BYTES + 8, sizeof(fn));
		v8code__source_position(raw, &o->inl[i].position, &parent);
		/* a parent is inlined before its callees: ids only point back */
		if (fn < 0 || (uint32_t)fn >= o->nsfis || parent >= (int32_t)i) {
			free(bytes);
			return -EINVAL;
		}
		o->inl[i].function = fn;
		o->inl[i].parent = parent;
	}
	free(bytes);

	err = byte_array(c, decompress(c, load_tagged(c, hdr + l->code_position_table)),
			 V8CODE_TABLE_MAX, &bytes, &len);
	if (err)
		return err == -E2BIG ? -EINVAL : err;
	n = v8code__decode_positions(bytes, len, l->spt_encoding, &o->pos);
	free(bytes);
	if (n < 0)
		return (int)n;
	o->npos = (size_t)n;
	for (size_t i = 0; i < o->npos; i++)
		if (o->pos[i].inlining_id >= (int32_t)o->ninl)
			return -EINVAL;
	return 0;
}

/* ---- Deoptimization data ---------------------------------------------- */

static bool smi_u32(const struct v8code *c, uint64_t word, uint32_t max, uint32_t *out)
{
	int64_t v;

	if (!v8heap__smi(&c->l, word, &v) || v < 0 || (uint64_t)v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* Every element of an array of tagged words, malloc'd, at most max. */
static int all_elements(struct v8code *c, uint64_t obj, uint64_t max, uint64_t **out,
			uint64_t *n)
{
	uint64_t length;
	int err;

	*out = NULL;
	*n = 0;
	err = array_length_max(c, obj, max, &length);
	if (err)
		return err == -E2BIG ? -EINVAL : err;
	*out = malloc((length + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	err = read_elements(c, obj, length, *out);
	if (err) {
		free(*out);
		*out = NULL;
		return err;
	}
	*n = length;
	return 0;
}

/* The calls with a lazy deoptimization entry: their return offsets and entries. */
static long lazy_calls(struct v8code *c, const struct code_obj *o, const uint64_t *elems,
		       uint32_t eager, uint32_t lazy, struct v8deopt_call **out)
{
	const struct v8_layout *l = &c->l;
	struct v8deopt_safepoint_layout sl = {
		.length = l->maglev_safepoint_length,
		.config = l->maglev_safepoint_config,
		.header = l->maglev_safepoint_header,
	};
	uint8_t head[64], *table;
	size_t bytes;
	long n;

	*out = NULL;
	if (o->tier == V8CODE_TURBOFAN) {
		/* TurboFan: a lazy entry's pc is its call's return offset */
		struct v8deopt_call *calls = malloc(((size_t)lazy + 1) * sizeof(*calls));

		if (!calls)
			return -ENOMEM;
		n = 0;
		for (uint32_t i = eager; i < eager + lazy; i++) {
			uint64_t pcw = elems[l->deopt_first_entry + (uint64_t)i * l->deopt_entry_size +
					     l->deopt_entry_pc];
			uint32_t pc;

			if (!smi_u32(c, pcw, o->size, &pc))
				continue;	/* -1: none */
			calls[n].return_offset = pc;
			calls[n++].entry = i;
		}
		*out = calls;
		return n;
	}
	/* Maglev: the safepoint table right after the instructions maps them */
	if (!sl.header)
		return -EINVAL;
	if (rd(c, o->start + o->size, head, sl.header))
		return -EFAULT;
	n = v8deopt__maglev_calls(head, sl.header, &sl, eager + lazy, out, &bytes);
	if (n < 0 && n != -EINVAL)
		return n;
	free(*out);
	*out = NULL;
	/* the header fits what it says: now the whole table */
	if (!bytes || bytes > V8CODE_TABLE_MAX)
		return -EINVAL;
	table = malloc(bytes);
	if (!table)
		return -ENOMEM;
	if (rd(c, o->start + o->size, table, bytes)) {
		free(table);
		return -EFAULT;
	}
	n = v8deopt__maglev_calls(table, bytes, &sl, eager + lazy, out, NULL);
	free(table);
	return n;
}

/*
 * What placing a code object's pcs needs of the target's memory, read
 * while the code lives (as samples drain): decoding and placing wait for
 * the first lookup (after the window), off the path that drains the ring.
 */
struct deopt_raw {
	uint64_t *elems;	/* the deoptimization data's elements */
	uint64_t nelems;
	uint64_t *lits;		/* its literals */
	uint64_t nlits;
	uint8_t *tr;		/* its frame translations */
	size_t trlen;
	uint8_t *body;		/* the instructions */
	struct v8deopt_call *calls;
	long ncalls;
	struct v8deopt_exits x;
	uint32_t nentries;
};

static void raw_free(struct deopt_raw *r)
{
	if (!r)
		return;
	free(r->elems);
	free(r->lits);
	free(r->tr);
	free(r->body);
	free(r->calls);
	free(r);
}

/* Read what place_deopt() needs into o->raw. */
static int read_deopt(struct v8code *c, const uint8_t *hdr, struct code_obj *o)
{
	const struct v8_layout *l = &c->l;
	struct deopt_raw *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->x.eager_size = l->deopt_eager_exit_size;
	r->x.lazy_size = l->deopt_lazy_exit_size;
	err = all_elements(c, decompress(c, load_tagged(c, hdr + l->code_deopt_data)),
			   l->deopt_first_entry + (uint64_t)V8CODE_ENTRIES_MAX * l->deopt_entry_size,
			   &r->elems, &r->nelems);
	if (err)
		goto out;
	err = -EINVAL;
	if (r->nelems < l->deopt_first_entry ||
	    (r->nelems - l->deopt_first_entry) % l->deopt_entry_size ||
	    !smi_u32(c, r->elems[l->deopt_exit_start], o->size, &r->x.start) ||
	    !smi_u32(c, r->elems[l->deopt_eager_count], V8CODE_ENTRIES_MAX, &r->x.eager) ||
	    !smi_u32(c, r->elems[l->deopt_lazy_count], V8CODE_ENTRIES_MAX, &r->x.lazy))
		goto out;
	r->nentries = (uint32_t)((r->nelems - l->deopt_first_entry) / l->deopt_entry_size);
	if (r->nentries != r->x.eager + r->x.lazy || !r->nentries)
		goto out;
	err = byte_array(c, decompress(c, r->elems[l->deopt_translation]), V8CODE_TABLE_MAX,
			 &r->tr, &r->trlen);
	if (err) {
		err = err == -E2BIG ? -EINVAL : err;
		goto out;
	}
	err = all_elements(c, decompress(c, r->elems[l->deopt_literals]), V8CODE_INLINED_MAX * 4,
			   &r->lits, &r->nlits);
	if (err)
		goto out;
	r->ncalls = lazy_calls(c, o, r->elems, r->x.eager, r->x.lazy, &r->calls);
	if (r->ncalls < 0) {
		err = (int)r->ncalls;
		goto out;
	}
	err = -ENOMEM;
	r->body = malloc(o->size ? o->size : 1);
	if (!r->body)
		goto out;
	err = o->size > V8CODE_BODY_MAX ? -E2BIG : rd(c, o->start, r->body, o->size);
out:
	if (err)
		raw_free(r);
	else
		o->raw = r;
	return err;
}

/*
 * The frames of each deoptimization entry, and every instruction placed
 * (symbolize/v8deopt.h), from o->raw, which goes.  Every entry's
 * outermost frame must be the code's own function and its others
 * functions the code inlined: a layout that reads something else is not
 * used.
 */
static int place_deopt(struct v8code *c, struct code_obj *o)
{
	const struct v8_layout *l = &c->l;
	struct deopt_raw *r = o->raw;
	struct v8deopt_frame fr[V8DEOPT_FRAMES_MAX];
	struct v8deopt_place_stats ps;
	struct v8deopt_basis basis = { 0 };
	uint32_t nentries = r->nentries;
	size_t dcap = (size_t)nentries * 4 + 4;
	long nruns;
	int err = -ENOMEM;

	o->raw = NULL;
	o->entry_frames = calloc(nentries, sizeof(*o->entry_frames));
	o->entry_depth = calloc(nentries, sizeof(*o->entry_depth));
	o->dframes = malloc(dcap * sizeof(*o->dframes));
	if (!o->entry_frames || !o->entry_depth || !o->dframes)
		goto out;
	o->nentries = nentries;
	for (uint32_t i = 0; i < nentries; i++) {
		uint32_t index;
		int n;

		if (!smi_u32(c, r->elems[l->deopt_first_entry + (uint64_t)i * l->deopt_entry_size +
					 l->deopt_entry_translation], (uint32_t)r->trlen, &index)) {
			err = -EINVAL;
			goto out;
		}
		n = v8deopt__frames_cached(&c->format, r->tr, r->trlen, index, fr,
					   V8DEOPT_FRAMES_MAX, &basis);
		if (n < 0) {
			err = n;
			goto out;
		}
		if (o->ndframes + (size_t)n > dcap) {
			size_t ncap = dcap * 2 + (size_t)n;
			struct v8code_frame *g = realloc(o->dframes, ncap * sizeof(*g));

			if (!g)
				goto out;
			o->dframes = g;
			dcap = ncap;
		}
		o->entry_frames[i] = o->ndframes;
		o->entry_depth[i] = (uint8_t)n;
		for (int k = 0; k < n; k++) {
			struct v8code_frame *f = &o->dframes[o->ndframes++];
			uint64_t sfi;
			bool known;

			if (fr[k].literal < 0 || (uint64_t)fr[k].literal >= r->nlits) {
				err = -EINVAL;
				goto out;
			}
			sfi = decompress(c, r->lits[fr[k].literal]);
			known = k == 0 ? sfi == o->outer_sfi : false;
			for (uint32_t j = 0; k && !known && j < o->nsfis; j++)
				known = o->sfis[j] == sfi;
			/* V8 keeps the code's own function outermost, the inlined ones inside */
			if (!known) {
				err = -EINVAL;
				goto out;
			}
			f->sfi = sfi;
			f->position = -1;
			f->bytecode_offset = fr[k].bytecode_offset;
		}
	}
	nruns = v8deopt__place(r->body, o->size, &r->x, r->calls, (size_t)r->ncalls, &o->runs,
			       &ps);
	if (nruns < 0) {
		err = (int)nruns;
		goto out;
	}
	o->nruns = (uint32_t)nruns;
	c->stats.deopt_entries += nentries;
	c->stats.deopt_instructions += ps.instructions;
	err = 0;
out:
	if (err) {
		free(o->runs);
		free(o->entry_frames);
		free(o->entry_depth);
		free(o->dframes);
		o->runs = NULL;
		o->entry_frames = NULL;
		o->entry_depth = NULL;
		o->dframes = NULL;
		o->nruns = o->nentries = o->ndframes = 0;
	}
	v8deopt__basis_release(&basis);
	raw_free(r);
	return err;
}

/* Place o's pcs now if they wait to be (stats say how it went). */
static void ensure_placed(struct v8code *c, struct code_obj *o)
{
	uint64_t t0;

	if (!o->raw)
		return;
	t0 = monotime_ns();
	if (place_deopt(c, o))
		c->stats.deopt_failed++;
	else if (!o->npos)
		c->stats.deopt_placed++;
	c->stats.ns += monotime_ns() - t0;
}

/* The code object holding pc, read from memory: its index in codes. */
static int read_code(struct v8code *c, uint64_t pc, long *index)
{
	const struct v8_layout *l = &c->l;
	uint8_t hdr[CODE_HEADER_MAX];
	uint64_t istream, code, start;
	struct code_obj o = { 0 };
	uint32_t flags, kind;
	int err;

	if (l->compressed && !c->cage)
		return -ENODATA;
	/* most new pcs are in code already read and checked in this batch */
	for (size_t i = c->ncodes; i-- > 0;) {
		const struct code_obj *k = &c->codes[i];

		if (k->epoch == c->epoch && pc >= k->start && pc < k->start + k->size) {
			*index = (long)i;
			return 0;
		}
	}
	err = find_istream(c, pc, &istream, &code, hdr);
	if (err)
		return err;
	memcpy(&start, hdr + l->code_instruction_start, sizeof(start));
	memcpy(&flags, hdr + l->code_flags, sizeof(flags));
	kind = flags & l->code_kind_mask;
	/* baseline code keeps bytecode where optimized code keeps these tables */
	if (kind == l->code_kind_turbofan)
		o.tier = V8CODE_TURBOFAN;
	else if (l->code_kind_maglev && kind == l->code_kind_maglev)
		o.tier = V8CODE_MAGLEV;
	else
		return -EINVAL;
	o.istream = istream;
	o.code = code;
	o.start = start;
	memcpy(&o.size, hdr + l->code_instruction_size, sizeof(o.size));
	/*
	 * An object decoded in an earlier batch, just found again by its
	 * header (what still_there() checks): valid again, not decoded again.
	 */
	for (size_t i = c->ncodes; i-- > 0;) {
		struct code_obj *k = &c->codes[i];

		if (k->start == start && k->code == code && k->istream == istream &&
		    k->size == o.size) {
			k->epoch = c->epoch;
			*index = (long)i;
			return 0;
		}
	}
	err = decode(c, hdr, &o);
	if (err) {
		code_free(&o);
		return err;
	}
	if (array_grow(&c->codes, &c->codes_cap, c->ncodes + 1)) {
		code_free(&o);
		return -ENOMEM;
	}
	o.epoch = c->epoch;
	/*
	 * V8 keeps positions only when something asks (a profiler, a log, a
	 * perf map): else the deoptimization data says where inlined code is
	 */
	if (o.nsfis && c->format.opcodes && (!o.npos || c->check_deopt)) {
		err = read_deopt(c, hdr, &o);
		if (err == -ENOMEM) {
			code_free(&o);
			return err;
		}
		if (err)
			c->stats.deopt_failed++;
	}
	if (o.nsfis && !o.npos)
		c->stats.no_positions++;
	c->codes[c->ncodes] = o;
	*index = (long)c->ncodes++;
	c->stats.decoded++;
	return 0;
}

/* Is the cached code object still there?  Its header and its Code, read again. */
static bool still_there(struct v8code *c, struct code_obj *o)
{
	uint8_t hdr[CODE_HEADER_MAX], head[16];
	uint64_t code;
	uint32_t size;

	c->stats.revalidated++;
	if (rd(c, o->istream, head, c->l.istream_code + c->l.tagged_size) ||
	    !is_istream_map(c, load_tagged(c, head)) ||
	    check_istream(c, o->istream, load_tagged(c, head + c->l.istream_code), hdr, &code) ||
	    code != o->code)
		return false;
	memcpy(&size, hdr + c->l.code_instruction_size, sizeof(size));
	return size == o->size;
}

/* ---- Lookups ------------------------------------------------------------- */

static bool pc_is(const void *ctx, uint32_t index, const void *key)
{
	const struct v8code *c = ctx;

	return c->pcs[index].pc == *(const uint64_t *)key;
}

/* The pc's entry, made (and its code read) on first sight; live: check a stale one. */
static int entry_of(struct v8code *c, uint64_t pc, bool live, struct pc_entry **out)
{
	uint32_t hash = hash__fold32(hash__word(HASH_SEED, pc));
	uint64_t t0 = monotime_ns();
	struct pc_entry *e;
	size_t slot;
	long i, code = -1;
	int err = 0;

	c->stats.lookups++;
	if (index_table__reserve(&c->by_pc))
		return -ENOMEM;
	i = index_table__lookup(&c->by_pc, hash, pc_is, c, &pc, &slot);
	if (i >= 0) {
		e = &c->pcs[i];
		*out = e;
		if (!live || e->code < 0 || c->codes[e->code].epoch == c->epoch)
			return 0;
		if (still_there(c, &c->codes[e->code])) {
			c->codes[e->code].epoch = c->epoch;
			return 0;
		}
		c->stats.replaced++;
		err = read_code(c, pc, &code);
		if (err == -ENOMEM || err == -ENODATA)
			return err;
		e->code = err ? -1 : code;
		e->err = err;
		c->stats.ns += monotime_ns() - t0;
		return 0;
	}
	err = read_code(c, pc, &code);
	c->stats.ns += monotime_ns() - t0;
	/* without a cage nothing was read: ask again once there is one */
	if (err == -ENOMEM || err == -ENODATA)
		return err;
	if (err)
		c->stats.not_optimized++;
	if (array_grow(&c->pcs, &c->pcs_cap, c->npcs + 1))
		return -ENOMEM;
	e = &c->pcs[c->npcs];
	e->pc = pc;
	e->code = err ? -1 : code;
	e->err = err;
	index_table__set(&c->by_pc, slot, hash, (uint32_t)c->npcs++);
	c->stats.pcs++;
	*out = e;
	return 0;
}

int v8code__note(struct v8code *c, uint64_t pc)
{
	struct pc_entry *e;
	int err = entry_of(c, pc, true, &e);

	return err ? err : e->err;
}

/* The frames of deoptimization entry e, innermost first, at most max (>= 1). */
static int entry_stack(const struct code_obj *o, int32_t e, struct v8code_frame *frames,
		       size_t max)
{
	const struct v8code_frame *f = &o->dframes[o->entry_frames[e]];
	size_t depth = o->entry_depth[e], n = 0;

	/* the code's own function outermost: the innermost ones first, as many as fit */
	for (size_t k = depth; k-- > 1 && n + 1 < max;)
		frames[n++] = f[k];
	frames[n++] = f[0];
	return (int)n;
}

/* By the deoptimization data: the stack, or 0 when nothing places the pc. */
static int deopt_stack(const struct code_obj *o, uint64_t pc, struct v8code_frame *frames,
		       size_t max)
{
	const struct v8deopt_run *r;

	if (!o->nruns || pc < o->start)
		return 0;
	r = v8deopt__lookup(o->runs, o->nruns, (uint32_t)(pc - o->start));
	if (!r || r->entry < 0 || (uint32_t)r->entry >= o->nentries || !o->entry_depth[r->entry])
		return 0;
	return entry_stack(o, r->entry, frames, max);
}

/* By the source positions: the last entry at or before the pc's offset. */
static int position_stack(const struct code_obj *o, uint64_t pc, struct v8code_frame *frames,
			  size_t max)
{
	size_t lo = 0, hi = o->npos, n = 0;
	int32_t id = -1, position = -1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->pos[mid].code_offset <= (int64_t)(pc - o->start))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		id = o->pos[lo - 1].inlining_id;
		position = o->pos[lo - 1].position;
	}
	/* ids point back (decode() checked), so this ends */
	while (id >= 0 && n + 1 < max) {
		const struct inlining *in = &o->inl[id];

		frames[n].sfi = o->sfis[in->function];
		frames[n].bytecode_offset = -1;
		frames[n++].position = position;
		position = in->position;
		id = in->parent;
	}
	frames[n].sfi = o->outer_sfi;
	frames[n].bytecode_offset = -1;
	frames[n++].position = position;
	return (int)n;
}

static bool same_functions(const struct v8code_frame *a, int na, const struct v8code_frame *b,
			   int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (a[i].sfi != b[i].sfi)
			return false;
	return true;
}

/* The code object holding pc, its deoptimization data placed. */
static int placed_code_at(struct v8code *c, uint64_t pc, size_t max, struct code_obj **out)
{
	struct pc_entry *e;
	int err = entry_of(c, pc, false, &e);

	if (err)
		return err;
	if (e->err)
		return e->err;
	if (!max)
		return -EINVAL;
	*out = &c->codes[e->code];
	ensure_placed(c, *out);
	return 0;
}

int v8code__stack(struct v8code *c, uint64_t pc, struct v8code_frame *frames, size_t max,
		  struct v8code_where *where)
{
	struct code_obj *o;
	struct v8code_where w = { 0 };
	int n, err = placed_code_at(c, pc, max, &o);

	if (err)
		return err;
	w.tier = o->tier;
	if (o->npos) {
		n = position_stack(o, pc, frames, max);
		w.placed = o->nsfis ? V8CODE_BY_POSITIONS : V8CODE_INLINED_NOTHING;
		if (o->nruns && o->nsfis) {
			struct v8code_frame d[64];
			int nd = deopt_stack(o, pc, d, 64);

			if (nd > 0) {
				c->stats.deopt_checked++;
				c->stats.deopt_agree += same_functions(frames, n, d, nd);
			}
		}
	} else if (o->nsfis && (n = deopt_stack(o, pc, frames, max)) > 0) {
		w.placed = V8CODE_BY_DEOPT;
	} else {
		frames[0].sfi = o->outer_sfi;
		frames[0].position = -1;
		frames[0].bytecode_offset = -1;
		n = 1;
		w.placed = o->nsfis ? V8CODE_CALLER_ONLY : V8CODE_INLINED_NOTHING;
	}
	if (where)
		*where = w;
	return n;
}

int v8code__deopt_stack(struct v8code *c, uint64_t pc, struct v8code_frame *frames, size_t max)
{
	struct code_obj *o;
	int n, err = placed_code_at(c, pc, max, &o);

	if (err)
		return err;
	if (!o->nruns)
		return -ENODATA;
	n = deopt_stack(o, pc, frames, max);
	if (n)
		return n;
	frames[0].sfi = o->outer_sfi;
	frames[0].position = -1;
	frames[0].bytecode_offset = -1;
	return 1;
}

void v8code__check_deopt(struct v8code *c, bool on)
{
	c->check_deopt = on;
}

/* ---- Lifetime ------------------------------------------------------------ */

struct v8code *v8code__new(pid_t pid, const struct v8_layout *layout)
{
	struct v8code *c;

	if (!layout->code_alignment) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = pid;
	c->l = *layout;
	c->epoch = 1;
	/* a format the layout does not name (not learnt): no placement by deopt data */
	if (layout->deopt_format &&
	    v8deopt__format(layout->deopt_format, layout->deopt_opcodes, &c->format))
		memset(&c->format, 0, sizeof(c->format));
	c->header_bytes = code_header_bytes(layout);
	if (c->header_bytes > CODE_HEADER_MAX) {
		free(c);
		errno = EINVAL;
		return NULL;
	}
	return c;
}

void v8code__free(struct v8code *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ncodes; i++)
		code_free(&c->codes[i]);
	free(c->codes);
	free(c->pcs);
	index_table__release(&c->by_pc);
	free(c);
}

void v8code__set_cage(struct v8code *c, uint64_t heap_address)
{
	if (c->l.compressed && !c->cage && heap_address > 0xffffffffull)
		c->cage = heap_address & ~0xffffffffull;
}

void v8code__next_epoch(struct v8code *c)
{
	c->epoch++;
	c->page_valid = false;
}

void v8code__stats(const struct v8code *c, struct v8code_stats *out)
{
	*out = c->stats;
}
