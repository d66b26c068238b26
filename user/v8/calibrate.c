// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* calibrate: learn a V8 build's object layout by matching; see calibrate.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/v8/calibrate.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/procmem.h"
#include "symbolize/v8heap.h"

/*
 * Every object is read once, as one block from its start: the fields
 * searched for lie in an object's first words, and a ScopeInfo keeps the
 * name of a function with 80 context locals at word 87 (V8 15.8), so a
 * block covers that with 4-byte words and most of it with 8-byte ones.
 */
#define BLOCK 512
#define MAX_FIELD_WORDS 16	/* tagged fields searched in JSFunction, SFI, Script */
#define MAX_SCOPE_WORDS 120	/* words of a ScopeInfo searched for the name */
#define MAX_SMI_WORDS 8		/* Smi fields searched in a ScopeInfo */
#define HASHED_FROM 75		/* V8's kScopeInfoMaxInlinedLocalNamesSize (not learnt) */
#define SOURCE_MAX (1u << 20)	/* calibration scripts are small; skip larger sources */

struct block {
	uint64_t addr;
	size_t len;		/* bytes readable from addr (0: none) */
	uint8_t data[BLOCK];
};

/* String header candidates: (length offset, first character offset). */
static const struct {
	uint32_t length, chars;
} string_shapes[] = { { 8, 12 }, { 12, 16 }, { 4, 8 }, { 8, 16 } };
#define NSHAPES (sizeof(string_shapes) / sizeof(string_shapes[0]))

static const uint32_t type_offsets[] = { 8, 12, 10, 4, 6, 14 };

struct calib {
	pid_t pid;
	struct block **blocks;	/* each allocated once: pointers stay valid */
	size_t nblocks, blocks_cap;
	struct index_table by_addr;
	struct calib_report *report;
};

/* One distinct observation, with what the search found for it. */
struct obs {
	const struct calib_observation *in;
	bool ascii_name;	/* a non-empty ASCII name: usable for matching */
	uint64_t sfi;
	uint64_t name_object;	/* String or ScopeInfo the SFI points at */
	uint64_t name_string;	/* the String that matched */
	int scope_word;		/* word of the ScopeInfo holding the name; -1: direct */
	int64_t locals;		/* context locals, once known */
	uint64_t script;
};

static bool block_is(const void *ctx, uint32_t index, const void *key)
{
	const struct calib *c = ctx;

	return c->blocks[index]->addr == *(const uint64_t *)key;
}

/* The bytes at addr (up to BLOCK, fewer at a mapping's end), or NULL. */
static const struct block *block(struct calib *c, uint64_t addr)
{
	uint32_t h = hash__fold32(hash__word(HASH_SEED, addr));
	struct block *b;
	size_t slot;
	long i;

	if (!addr || index_table__reserve(&c->by_addr))
		return NULL;
	i = index_table__lookup(&c->by_addr, h, block_is, c, &addr, &slot);
	if (i < 0) {
		if (array_grow(&c->blocks, &c->blocks_cap, c->nblocks + 1))
			return NULL;
		b = malloc(sizeof(*b));
		if (!b)
			return NULL;
		c->blocks[c->nblocks] = b;
		b->addr = addr;
		b->len = 0;
		for (size_t len = BLOCK; len >= 64 && !b->len; len /= 2)
			if (!procmem__read(c->pid, addr, b->data, len))
				b->len = len;
		index_table__set(&c->by_addr, slot, h, (uint32_t)c->nblocks);
		i = (long)c->nblocks++;
	}
	b = c->blocks[i];
	return b->len ? b : NULL;
}

static uint64_t word_at(const struct block *b, size_t off, unsigned int tagged)
{
	uint64_t w = 0;
	uint32_t w32;

	if (!b || off + tagged > b->len)
		return 0;
	if (tagged == 4) {
		memcpy(&w32, b->data + off, 4);
		return w32;
	}
	memcpy(&w, b->data + off, 8);
	return w;
}

static uint64_t decomp(unsigned int tagged, uint64_t base, uint64_t word)
{
	if (!(word & 1))
		return 0;
	if (tagged == 4)
		return ((base & ~0xffffffffull) + (uint32_t)word) & ~3ull;
	return word & ~3ull;
}

static bool smi(unsigned int tagged, uint64_t word, int64_t *v)
{
	if (word & 1)
		return false;
	*v = tagged == 4 ? (int64_t)((int32_t)(uint32_t)word >> 1) : (int64_t)word >> 32;
	return true;
}

/* Does obj hold the one-byte string s in header shape k? */
static bool string_matches(struct calib *c, uint64_t obj, size_t k, const char *s)
{
	const struct block *b = block(c, obj);
	size_t n = strlen(s);
	uint32_t len;

	if (!b || string_shapes[k].length + 4 > b->len || string_shapes[k].chars + n > b->len)
		return false;
	memcpy(&len, b->data + string_shapes[k].length, 4);
	return len == n && !memcmp(b->data + string_shapes[k].chars, s, n);
}

static void fail(struct calib *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->report->why, sizeof(c->report->why), fmt, ap);
	va_end(ap);
}

static bool is_ascii_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return false;
	return true;
}

/*
 * Step 1: the tagged size and the JSFunction -> SFI field.  Candidates are
 * fields whose objects share one map in most observations (every SFI has
 * the same map); the name search below decides between them.
 */
static size_t consistent_fields(struct calib *c, struct obs *o, size_t n, unsigned int tagged,
				uint32_t *fields, size_t max)
{
	size_t nfields = 0;

	for (uint32_t k = 1; k < MAX_FIELD_WORDS && nfields < max; k++) {
		uint64_t maps[64];
		size_t nm = 0, best = 0, usable = 0;

		for (size_t i = 0; i < n && nm < 64; i++) {
			const struct block *fb = block(c, o[i].in->function & ~3ull);
			uint64_t obj = decomp(tagged, o[i].in->function, word_at(fb, k * tagged, tagged));
			const struct block *ob = block(c, obj);

			if (!o[i].ascii_name)
				continue;
			usable++;
			if (ob)
				maps[nm++] = word_at(ob, 0, tagged);
		}
		for (size_t i = 0; i < nm; i++) {
			size_t same = 0;

			for (size_t j = 0; j < nm; j++)
				same += maps[j] == maps[i];
			if (same > best)
				best = same;
		}
		if (usable && best * 10 >= usable * 8)
			fields[nfields++] = k * tagged;
	}
	return nfields;
}

struct name_vote {
	uint32_t fn_sfi, name_off;
	size_t shape;
	size_t votes;
};

/* Does the SFI's field name_off lead to the observation's name? */
static bool find_name(struct calib *c, struct obs *o, unsigned int tagged, uint32_t name_off,
		      size_t shape, bool record)
{
	const struct block *sb = block(c, o->sfi), *nb;
	uint64_t obj = decomp(tagged, o->sfi, word_at(sb, name_off, tagged));

	if (!obj)
		return false;
	if (string_matches(c, obj, shape, o->in->name)) {
		if (record) {
			o->name_object = obj;
			o->name_string = obj;
			o->scope_word = -1;
		}
		return true;
	}
	nb = block(c, obj);
	if (!nb)
		return false;
	for (int j = 1; j < MAX_SCOPE_WORDS && (size_t)(j + 1) * tagged <= nb->len; j++) {
		uint64_t s = decomp(tagged, obj, word_at(nb, (size_t)j * tagged, tagged));

		if (s && string_matches(c, s, shape, o->in->name)) {
			if (record) {
				o->name_object = obj;
				o->name_string = s;
				o->scope_word = j;
			}
			return true;
		}
	}
	return false;
}

static int learn_names(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	struct name_vote best = { 0 };
	size_t usable = 0;

	for (size_t i = 0; i < n; i++)
		usable += o[i].ascii_name;
	if (!usable) {
		fail(c, "no sampled JS frame had a named function in the perf map");
		return -ENODATA;
	}
	for (unsigned int tagged = 4; tagged <= 8; tagged += 4) {
		uint32_t fields[MAX_FIELD_WORDS];
		size_t nf = consistent_fields(c, o, n, tagged, fields, MAX_FIELD_WORDS);

		for (size_t f = 0; f < nf; f++) {
			for (size_t i = 0; i < n; i++) {
				const struct block *fb = block(c, o[i].in->function & ~3ull);

				o[i].sfi = decomp(tagged, o[i].in->function,
						  word_at(fb, fields[f], tagged));
			}
			for (uint32_t k = 1; k < MAX_FIELD_WORDS; k++) {
				for (size_t shape = 0; shape < NSHAPES; shape++) {
					struct name_vote v = { fields[f], k * tagged, shape, 0 };

					for (size_t i = 0; i < n; i++)
						if (o[i].ascii_name && o[i].sfi &&
						    find_name(c, &o[i], tagged, v.name_off, shape, false))
							v.votes++;
					if (v.votes > best.votes) {
						best = v;
						l->tagged_size = tagged;
					}
				}
			}
		}
	}
	if (best.votes * 10 < usable * 8) {
		fail(c, "no JSFunction -> SFI -> name path fits the perf map's names (best %zu of %zu)",
		     best.votes, usable);
		return -ENODATA;
	}
	l->compressed = l->tagged_size == 4;
	l->fn_sfi = best.fn_sfi;
	l->sfi_name_or_scope_info = best.name_off;
	l->string_length = string_shapes[best.shape].length;
	l->string_chars = string_shapes[best.shape].chars;
	for (size_t i = 0; i < n; i++) {
		const struct block *fb = block(c, o[i].in->function & ~3ull);

		o[i].sfi = decomp(l->tagged_size, o[i].in->function,
				  word_at(fb, l->fn_sfi, l->tagged_size));
		o[i].scope_word = 0;
		if (o[i].ascii_name && o[i].sfi &&
		    find_name(c, &o[i], l->tagged_size, l->sfi_name_or_scope_info, best.shape, true)) {
			if (o[i].scope_word < 0)
				c->report->named_by_string++;
			else
				c->report->named_by_scope++;
		}
	}
	return 0;
}

/* The value most entries of v[n] share (v >= 0), and how many share it. */
static int most_common(const int *v, size_t n, size_t *count)
{
	int best = -1;

	*count = 0;
	for (size_t i = 0; i < n; i++) {
		size_t same = 0;

		if (v[i] < 0)
			continue;
		for (size_t j = 0; j < n; j++)
			same += v[j] == v[i];
		if (same > *count) {
			*count = same;
			best = v[i];
		}
	}
	return best;
}

/*
 * Step 2: where a ScopeInfo keeps the function name: word base + stride * c
 * for c context locals, found by fitting the words the names were found at
 * against each Smi field that could be c.
 */
static int learn_scope_names(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	unsigned int t = l->tagged_size;
	size_t best_votes = 0, scoped = 0;
	bool best_varies = false;
	int *bases = calloc(n ? n : 1, sizeof(int));

	if (!bases)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		scoped += o[i].scope_word > 0;
	if (!scoped) {
		free(bases);
		fail(c, "no sampled function had its name in a ScopeInfo");
		return -ENODATA;
	}
	for (uint32_t k = 1; k < MAX_SMI_WORDS; k++) {
		for (uint32_t stride = 1; stride <= 3; stride++) {
			size_t nb = 0, same;
			bool varies = false;
			int base;

			for (size_t i = 0; i < n; i++) {
				const struct block *b = block(c, o[i].name_object);
				int64_t locals;

				if (o[i].scope_word <= 0 || !smi(t, word_at(b, k * t, t), &locals) ||
				    locals < 0 || locals >= HASHED_FROM)
					continue;
				varies |= locals > 0;
				bases[nb++] = o[i].scope_word - (int)(stride * locals);
			}
			base = most_common(bases, nb, &same);
			/* a fit that c explains beats one where c is always 0 */
			if (base > 0 &&
			    (same > best_votes || (same == best_votes && varies && !best_varies))) {
				best_votes = same;
				best_varies = varies;
				l->scope_info_context_locals = k * t;
				l->scope_info_name_stride = stride;
				l->scope_info_name_base = (uint32_t)base;
			}
		}
	}
	free(bases);
	if (!best_varies) {
		fail(c, "no sampled function with context locals: the ScopeInfo name rule is unknown");
		return -ENODATA;
	}
	if (best_votes * 10 < scoped * 8) {
		fail(c, "ScopeInfo names fit no rule (best %zu of %zu)", best_votes, scoped);
		return -ENODATA;
	}
	l->scope_info_flags = t;
	l->scope_info_name_hashed_from = HASHED_FROM;
	/* V8 15.8 measured: list 6 + 2c, hash table 7 + c; checked below when seen */
	l->scope_info_name_hashed_base = l->scope_info_name_base + 1;
	for (size_t i = 0; i < n; i++) {
		const struct block *b = block(c, o[i].name_object);
		int64_t locals = -1;

		if (o[i].scope_word <= 0)
			continue;
		smi(t, word_at(b, l->scope_info_context_locals, t), &locals);
		o[i].locals = locals;
		if ((size_t)locals > c->report->max_context_locals)
			c->report->max_context_locals = (size_t)locals;
		if (locals >= HASHED_FROM && o[i].scope_word > locals) {
			l->scope_info_name_hashed_base = (uint32_t)(o[i].scope_word - locals);
			c->report->hashed_seen++;
		}
	}
	return 0;
}

/* The u16 at map + off of obj's map; -1 when unreadable. */
static int type_at(struct calib *c, unsigned int t, uint64_t obj, uint32_t off)
{
	const struct block *b = block(c, obj);
	uint64_t map = decomp(t, obj, word_at(b, 0, t));
	const struct block *mb = block(c, map);
	uint16_t v;

	if (!mb || off + 2 > mb->len)
		return -1;
	memcpy(&v, mb->data + off, 2);
	return v;
}

/*
 * Step 3: the instance type's place in a Map, and the types and map words
 * of SFIs and ScopeInfos.  V8's string types (below 0x80; representation in
 * the low 3 bits, 0 sequential; bit 3 one-byte) have been stable for years:
 * they are checked against the names found, not assumed.
 */
static int learn_types(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	unsigned int t = l->tagged_size;
	int *sfi_types = calloc(n, sizeof(int)), *scope_types = calloc(n, sizeof(int));
	int err = -ENODATA;

	if (!sfi_types || !scope_types) {
		free(sfi_types);
		free(scope_types);
		return -ENOMEM;
	}
	l->string_type_limit = 0x80;
	l->string_repr_mask = 0x7;
	l->string_one_byte_bit = 0x8;
	for (size_t k = 0; k < sizeof(type_offsets) / sizeof(type_offsets[0]); k++) {
		uint32_t off = type_offsets[k];
		size_t nsfi = 0, nscope = 0, strings = 0, strings_ok = 0;
		int sfi_type, scope_type;

		for (size_t i = 0; i < n; i++) {
			int st;

			sfi_types[i] = scope_types[i] = -1;
			if (!o[i].name_string)
				continue;
			sfi_types[i] = type_at(c, t, o[i].sfi, off);
			if (o[i].scope_word > 0)
				scope_types[i] = type_at(c, t, o[i].name_object, off);
			st = type_at(c, t, o[i].name_string, off);
			strings++;
			/* the names matched are ASCII: one-byte, sequential */
			strings_ok += st >= 0 && (uint32_t)st < l->string_type_limit &&
				      !(st & l->string_repr_mask) && (st & l->string_one_byte_bit);
		}
		sfi_type = most_common(sfi_types, n, &nsfi);
		scope_type = most_common(scope_types, n, &nscope);
		if (!strings || strings_ok * 10 < strings * 9 || sfi_type < 0x80 ||
		    nsfi * 10 < strings * 9 || (nscope && (scope_type < 0x80 || scope_type == sfi_type)))
			continue;
		l->map_instance_type = off;
		l->sfi_type = (uint32_t)sfi_type;
		l->scope_info_type = nscope ? (uint32_t)scope_type : 0;
		err = 0;
		break;
	}
	if (err) {
		fail(c, "no place in a Map holds instance types that fit SFIs, ScopeInfos and strings");
		goto out;
	}
	/* Compressed builds share read-only maps: the map word is a constant. */
	l->sfi_map = l->scope_info_map = 0;
	if (l->compressed) {
		for (size_t i = 0; i < n; i++) {
			sfi_types[i] = o[i].name_string ?
					       (int)(word_at(block(c, o[i].sfi), 0, t) & 0x7fffffff) : -1;
			scope_types[i] = o[i].scope_word > 0 ?
					 (int)(word_at(block(c, o[i].name_object), 0, t) & 0x7fffffff) :
					 -1;
		}
		{
			size_t a, b;
			int sm = most_common(sfi_types, n, &a), cm = most_common(scope_types, n, &b);

			l->sfi_map = sm > 0 ? (uint32_t)sm : 0;
			l->scope_info_map = cm > 0 ? (uint32_t)cm : 0;
		}
	}
out:
	free(sfi_types);
	free(scope_types);
	return err;
}

/* Step 4: SFI -> Script -> name. */
static int learn_script(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	unsigned int t = l->tagged_size;
	size_t shape = 0, best = 0, usable = 0;

	for (size_t k = 0; k < NSHAPES; k++)
		if (string_shapes[k].length == l->string_length &&
		    string_shapes[k].chars == l->string_chars)
			shape = k;
	for (size_t i = 0; i < n; i++)
		usable += o[i].name_string && is_ascii_name(o[i].in->script);
	if (!usable) {
		fail(c, "no sampled function had a script name");
		return -ENODATA;
	}
	for (uint32_t k = 1; k < MAX_FIELD_WORDS; k++) {
		if (k * t == l->sfi_name_or_scope_info)
			continue;
		for (uint32_t s = 1; s < MAX_FIELD_WORDS; s++) {
			size_t votes = 0;

			for (size_t i = 0; i < n; i++) {
				uint64_t script, name;

				if (!o[i].name_string || !is_ascii_name(o[i].in->script))
					continue;
				script = decomp(t, o[i].sfi, word_at(block(c, o[i].sfi), k * t, t));
				name = decomp(t, script, word_at(block(c, script), s * t, t));
				votes += name && string_matches(c, name, shape, o[i].in->script);
			}
			if (votes > best) {
				best = votes;
				l->sfi_script = k * t;
				l->script_name = s * t;
			}
		}
	}
	if (best * 10 < usable * 8) {
		fail(c, "no SFI -> Script -> name path fits the perf map's scripts (best %zu of %zu)",
		     best, usable);
		return -ENODATA;
	}
	{
		int *types = calloc(n, sizeof(int)), *maps = calloc(n, sizeof(int));
		size_t count;

		if (!types || !maps) {
			free(types);
			free(maps);
			return -ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			types[i] = maps[i] = -1;
			if (!o[i].name_string)
				continue;
			o[i].script = decomp(t, o[i].sfi, word_at(block(c, o[i].sfi), l->sfi_script, t));
			if (!o[i].script)
				continue;
			types[i] = type_at(c, t, o[i].script, l->map_instance_type);
			if (l->compressed)
				maps[i] = (int)(word_at(block(c, o[i].script), 0, t) & 0x7fffffff);
		}
		l->script_type = (uint32_t)most_common(types, n, &count);
		l->script_map = l->compressed ? (uint32_t)most_common(maps, n, &count) : 0;
		free(types);
		free(maps);
	}
	return 0;
}

/* Line and column (1-based, in UTF-16 units) of pos in a sequential source. */
static bool line_col(struct calib *c, uint64_t source, const struct v8_layout *l, int64_t pos,
		     uint32_t *line, uint32_t *col)
{
	const struct block *b = block(c, source);
	uint32_t len, ln = 1, start = 0;
	int type = type_at(c, l->tagged_size, source, l->map_instance_type);
	size_t unit;
	uint8_t *text;

	if (!b || type < 0 || (uint32_t)type >= l->string_type_limit ||
	    (type & l->string_repr_mask) || l->string_length + 4 > b->len)
		return false;
	unit = type & l->string_one_byte_bit ? 1 : 2;
	memcpy(&len, b->data + l->string_length, 4);
	if (len > SOURCE_MAX || pos < 0 || pos >= len)
		return false;
	text = malloc((size_t)pos * unit + 1);
	if (!text || procmem__read(c->pid, source + l->string_chars, text, (size_t)pos * unit)) {
		free(text);
		return false;
	}
	for (int64_t i = 0; i < pos; i++) {
		uint16_t ch = unit == 1 ? text[i] : ((const uint16_t *)text)[i];

		if (ch == '\n') {
			ln++;
			start = (uint32_t)i + 1;
		}
	}
	free(text);
	*line = ln;
	*col = (uint32_t)(pos - start) + 1;
	return true;
}

/* Step 5: Script -> source and the ScopeInfo's start position. */
static int learn_positions(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	unsigned int t = l->tagged_size;
	size_t best = 0, usable = 0;

	for (size_t i = 0; i < n; i++)
		usable += o[i].script && o[i].scope_word > 0 && o[i].in->line;
	if (!usable) {
		fail(c, "no sampled function had a line in the perf map");
		return -ENODATA;
	}
	for (uint32_t s = 1; s < MAX_FIELD_WORDS; s++) {
		if (s * t == l->script_name)
			continue;
		for (uint32_t k = 1; k < MAX_SMI_WORDS; k++) {
			size_t votes = 0;

			if (k * t == l->scope_info_context_locals)
				continue;
			for (size_t i = 0; i < n; i++) {
				uint64_t source;
				uint32_t line, col;
				int64_t pos;

				if (!o[i].script || o[i].scope_word <= 0 || !o[i].in->line)
					continue;
				source = decomp(t, o[i].script, word_at(block(c, o[i].script), s * t, t));
				if (source && smi(t, word_at(block(c, o[i].name_object), k * t, t), &pos) &&
				    line_col(c, source, l, pos, &line, &col) && line == o[i].in->line &&
				    col == o[i].in->column)
					votes++;
			}
			if (votes > best) {
				best = votes;
				l->script_source = s * t;
				l->scope_info_start = k * t;
			}
		}
	}
	if (best * 10 < usable * 8) {
		fail(c, "no ScopeInfo start and Script source give the perf map's lines (best %zu of %zu)",
		     best, usable);
		return -ENODATA;
	}
	return 0;
}

/* Step 6: name every observation with the layout learnt, as record will. */
static int check_layout(struct calib *c, struct obs *o, size_t n, const struct v8_layout *l)
{
	struct v8heap *h = v8heap__new(c->pid, l);
	struct calib_report *r = c->report;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct v8heap_function fn;

		if (!o[i].sfi || !o[i].in->name[0] || v8heap__function(h, o[i].sfi, &fn))
			continue;
		r->checked++;
		r->agree_name += !strcmp(fn.name, o[i].in->name);
		r->agree_script += fn.script && o[i].in->script && !strcmp(fn.script, o[i].in->script);
		r->agree_line += fn.line == o[i].in->line && fn.column == o[i].in->column;
	}
	v8heap__free(h);
	if (!r->checked || r->agree_name * 10 < r->checked * 9) {
		fail(c, "the layout learnt names %zu of %zu sampled functions as the perf map does",
		     r->agree_name, r->checked);
		return -ENODATA;
	}
	return 0;
}

/*
 * Functions with no name of their own (`holder.method = function () {}`):
 * the perf map shows the name V8 inferred ("holder.method"), kept in the
 * ScopeInfo a few words after the name, often as a cons string.  Which
 * word, and the cons tag, are what the observations with such names agree
 * on; none seen leaves both 0 (names then as before: anonymous).
 */
static int learn_inferred(struct calib *c, struct obs *o, size_t n, struct v8_layout *l)
{
	enum { MAX_DELTA = 4, TAGS = 8 };
	size_t votes[MAX_DELTA + 1][TAGS] = { { 0 } }, best = 0;
	char name[V8HEAP_NAME_MAX * 4 + 1];

	for (size_t i = 0; i < n; i++) {
		uint64_t word, scope, obj;
		uint32_t type, index;
		int64_t locals;

		if (!o[i].sfi || !strchr(o[i].in->name, '.') ||
		    v8heap__read_word(c->pid, l, o[i].sfi + l->sfi_name_or_scope_info, &word))
			continue;
		scope = v8heap__decompress(l, o[i].sfi, word);
		if (!scope || v8heap__instance_type(c->pid, l, scope, &type) ||
		    type != l->scope_info_type ||
		    v8heap__read_word(c->pid, l, scope + l->scope_info_context_locals, &word) ||
		    !v8heap__smi(l, word, &locals) || locals < 0 ||
		    locals >= l->scope_info_name_hashed_from)
			continue;
		index = l->scope_info_name_base + l->scope_info_name_stride * (uint32_t)locals;
		for (uint32_t d = 1; d <= MAX_DELTA; d++) {
			struct v8_layout t = *l;
			uint32_t repr;

			if (v8heap__read_word(c->pid, l, scope + (index + d) * l->tagged_size, &word))
				continue;
			obj = v8heap__decompress(l, scope, word);
			if (!obj || v8heap__instance_type(c->pid, l, obj, &type) ||
			    type >= l->string_type_limit)
				continue;
			repr = type & l->string_repr_mask;
			if (repr >= TAGS)
				continue;
			t.string_cons_tag = repr;
			if (!v8heap__read_string(c->pid, &t, obj, name, sizeof(name), V8HEAP_NAME_MAX,
						 NULL) &&
			    !strcmp(name, o[i].in->name))
				votes[d][repr]++;
		}
	}
	for (uint32_t d = 1; d <= MAX_DELTA; d++) {
		size_t total = 0, tag_votes = 0;

		for (uint32_t r = 0; r < TAGS; r++)
			total += votes[d][r];
		if (total <= best)
			continue;
		best = total;
		l->scope_info_inferred_delta = d;
		l->string_cons_tag = 0;
		for (uint32_t r = 1; r < TAGS; r++) {
			if (votes[d][r] > tag_votes) {
				tag_votes = votes[d][r];
				l->string_cons_tag = r;
			}
		}
	}
	c->report->named_inferred = best;
	return 0;
}

static bool same_observation(const struct calib_observation *a, const struct calib_observation *b)
{
	return a->function == b->function && !strcmp(a->name, b->name);
}

int calibrate__learn(pid_t pid, const struct calib_observation *in, size_t nin,
		     struct v8_layout *out, struct calib_report *report)
{
	struct calib c = { .pid = pid, .report = report };
	struct v8_layout l;
	struct obs *o = calloc(nin ? nin : 1, sizeof(*o));
	size_t n = 0;
	int err = 0;

	memset(report, 0, sizeof(*report));
	memset(&l, 0, sizeof(l));
	if (!o)
		return -ENOMEM;
	/* the same function sampled a thousand times is one observation */
	for (size_t i = 0; i < nin; i++) {
		bool seen = false;

		if (!(in[i].function & 1) || !in[i].name)
			continue;
		for (size_t j = 0; j < n && !seen; j++)
			seen = same_observation(o[j].in, &in[i]);
		if (seen)
			continue;
		o[n].in = &in[i];
		o[n].ascii_name = is_ascii_name(in[i].name);
		o[n].scope_word = 0;
		n++;
	}
	report->observations = n;
	/* each JSFunction as it was when sampled (first snapshot of an address wins) */
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t addr = o[i].in->function & ~3ull;
		uint32_t h = hash__fold32(hash__word(HASH_SEED, addr));
		size_t slot;

		if (!o[i].in->has_bytes)
			continue;
		if (index_table__reserve(&c.by_addr) ||
		    array_grow(&c.blocks, &c.blocks_cap, c.nblocks + 1)) {
			err = -ENOMEM;
			break;
		}
		if (index_table__lookup(&c.by_addr, h, block_is, &c, &addr, &slot) >= 0)
			continue;
		c.blocks[c.nblocks] = malloc(sizeof(struct block));
		if (!c.blocks[c.nblocks]) {
			err = -ENOMEM;
			break;
		}
		c.blocks[c.nblocks]->addr = addr;
		c.blocks[c.nblocks]->len = CALIB_FUNCTION_BYTES;
		memcpy(c.blocks[c.nblocks]->data, o[i].in->function_bytes, CALIB_FUNCTION_BYTES);
		index_table__set(&c.by_addr, slot, h, (uint32_t)c.nblocks++);
	}
	if (!err)
		err = learn_names(&c, o, n, &l);
	if (!err)
		err = learn_scope_names(&c, o, n, &l);
	if (!err)
		err = learn_types(&c, o, n, &l);
	if (!err)
		err = learn_script(&c, o, n, &l);
	if (!err)
		err = learn_positions(&c, o, n, &l);
	if (!err)
		err = learn_inferred(&c, o, n, &l);
	if (!err)
		err = check_layout(&c, o, n, &l);
	if (!err) {
		memcpy(l.build_id, out->build_id, sizeof(l.build_id));
		memcpy(l.v8_version, out->v8_version, sizeof(l.v8_version));
		*out = l;
	}
	free(o);
	for (size_t i = 0; i < c.nblocks; i++)
		free(c.blocks[i]);
	free(c.blocks);
	index_table__release(&c.by_addr);
	return err;
}
