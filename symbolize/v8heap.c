// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8heap: JS function names from a running V8's heap; see v8heap.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8heap.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/procmem.h"

struct cached_function {
	uint64_t sfi;
	int err;		/* 0, or why it was refused */
	struct v8heap_function fn;
	uint64_t script;	/* its Script, for positions; 0 when none */
};

/* Line starts of one script's source, for positions -> line and column. */
struct script_lines {
	uint64_t script;	/* the Script object */
	uint32_t *starts;	/* position of each line's first character */
	size_t nlines;
	bool unreadable;
};

struct v8heap {
	pid_t pid;
	struct v8_layout l;
	struct cached_function *fns;
	size_t nfns, fns_cap;
	struct index_table by_sfi;
	struct script_lines *scripts;
	size_t nscripts, scripts_cap;
	struct index_table by_script;
	size_t lines;		/* line starts kept, over every script */
	char **strings;		/* names handed out */
	size_t nstrings, strings_cap;
	struct v8heap_stats stats;
};

uint64_t v8heap__decompress(const struct v8_layout *l, uint64_t base, uint64_t word)
{
	if (!(word & 1))
		return 0;
	/* bit 1 marks a weak reference: the object is the same */
	if (l->compressed)
		return ((base & ~0xffffffffull) + (uint32_t)word) & ~3ull;
	return word & ~3ull;
}

uint64_t v8heap__tagged(const struct v8_layout *l, const uint8_t *p)
{
	uint64_t w = 0;

	memcpy(&w, p, l->tagged_size);
	return w;
}

int v8heap__read_word(pid_t pid, const struct v8_layout *l, uint64_t addr, uint64_t *word)
{
	uint32_t w32;
	int err;

	if (l->tagged_size == 4) {
		err = procmem__read(pid, addr, &w32, sizeof(w32));
		*word = w32;
		return err;
	}
	return procmem__read(pid, addr, word, sizeof(*word));
}

bool v8heap__smi(const struct v8_layout *l, uint64_t word, int64_t *value)
{
	if (word & 1)
		return false;
	*value = l->compressed ? (int64_t)((int32_t)(uint32_t)word >> 1) : (int64_t)word >> 32;
	return true;
}

int v8heap__instance_type(pid_t pid, const struct v8_layout *l, uint64_t obj, uint32_t *type)
{
	uint64_t map_word, map;
	uint16_t t;
	int err;

	err = v8heap__read_word(pid, l, obj, &map_word);
	if (err)
		return err;
	map = v8heap__decompress(l, obj, map_word);
	if (!map)
		return -EINVAL;
	err = procmem__read(pid, map + l->map_instance_type, &t, sizeof(t));
	if (err)
		return err;
	*type = t;
	return 0;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

static bool is_string_type(const struct v8_layout *l, uint32_t type)
{
	return type < l->string_type_limit;
}

/*
 * A thin string stands for the internalized string it points to, from the
 * word where a cons string keeps its first half: node 20 names a CommonJS
 * script with one (its __filename).  V8 tags it 5 in the representation
 * bits (instance-type.h: cons 1, external 2, sliced 3, thin 5, since V8
 * 5.9); the layout does not learn it, so it is taken only where the
 * encoding calibrated is that one (mask 7, cons 1); else 0, never read.
 */
static uint32_t thin_tag(const struct v8_layout *l)
{
	return l->string_repr_mask == 0x7 && l->string_cons_tag == 0x1 ? 0x5 : 0;
}

/* Cons strings nest; names V8 infers are a few parts ("a" "." "b"). */
#define CONS_DEPTH_MAX 16
#define CONS_PARTS_MAX 64	/* strings read for one name, whatever the tree's shape */

/*
 * The string at obj appended to buf at *pos as UTF-8; *left characters may
 * still be read (-E2BIG past it).  A cons string is its two halves.
 */
static int append_string(pid_t pid, const struct v8_layout *l, uint64_t obj, char *buf,
			 size_t buf_len, size_t *pos, size_t *left, bool *one_byte_out, int depth,
			 int *parts)
{
	uint16_t units[V8HEAP_NAME_MAX];
	uint32_t type, length;
	bool one_byte;
	int err;

	if (--*parts < 0)
		return -E2BIG;
	err = v8heap__instance_type(pid, l, obj, &type);
	if (err)
		return err;
	if (!is_string_type(l, type))
		return -EINVAL;
	if (l->string_cons_tag && (type & l->string_repr_mask) == l->string_cons_tag) {
		uint64_t half;

		if (depth >= CONS_DEPTH_MAX)
			return -E2BIG;
		for (int i = 0; i < 2; i++) {
			err = v8heap__read_word(pid, l, obj + l->string_chars + i * l->tagged_size,
						&half);
			half = err ? 0 : v8heap__decompress(l, obj, half);
			if (!half)
				return err ? err : -EINVAL;
			err = append_string(pid, l, half, buf, buf_len, pos, left, one_byte_out,
					    depth + 1, parts);
			if (err)
				return err;
		}
		return 0;
	}
	if (thin_tag(l) && (type & l->string_repr_mask) == thin_tag(l)) {
		uint64_t actual;

		if (depth >= CONS_DEPTH_MAX)
			return -E2BIG;
		err = v8heap__read_word(pid, l, obj + l->string_chars, &actual);
		actual = err ? 0 : v8heap__decompress(l, obj, actual);
		if (!actual)
			return err ? err : -EINVAL;
		return append_string(pid, l, actual, buf, buf_len, pos, left, one_byte_out,
				     depth + 1, parts);
	}
	if (type & l->string_repr_mask)
		return -EINVAL;
	err = procmem__read(pid, obj + l->string_length, &length, sizeof(length));
	if (err)
		return err;
	if (length > *left)
		return -E2BIG;
	*left -= length;
	one_byte = type & l->string_one_byte_bit;
	*one_byte_out &= one_byte;
	err = procmem__read(pid, obj + l->string_chars, units, length * (one_byte ? 1 : 2));
	if (err)
		return err;
	for (uint32_t i = 0; i < length; i++) {
		uint32_t cp = one_byte ? ((const uint8_t *)units)[i] : units[i];

		/* a surrogate pair joins; a lone surrogate becomes U+FFFD */
		if (!one_byte && cp >= 0xd800 && cp < 0xdc00 && i + 1 < length &&
		    units[i + 1] >= 0xdc00 && units[i + 1] < 0xe000) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (units[i + 1] - 0xdc00);
			i++;
		} else if (!one_byte && cp >= 0xd800 && cp < 0xe000) {
			cp = 0xfffd;
		}
		if (*pos + 5 > buf_len) {
			buf[*pos] = 0;
			return -E2BIG;
		}
		*pos += put_utf8(buf + *pos, cp);
	}
	buf[*pos] = 0;
	return 0;
}

int v8heap__read_string(pid_t pid, const struct v8_layout *l, uint64_t obj, char *buf,
			size_t buf_len, size_t max, bool *one_byte_out)
{
	size_t pos = 0, left = max > V8HEAP_NAME_MAX ? V8HEAP_NAME_MAX : max;
	bool one_byte = true;
	int parts = CONS_PARTS_MAX, err;

	if (!buf_len)
		return -EINVAL;
	buf[0] = 0;
	err = append_string(pid, l, obj, buf, buf_len, &pos, &left, &one_byte, 0, &parts);
	if (err) {
		buf[0] = 0;
		return err;
	}
	if (one_byte_out)
		*one_byte_out = one_byte;
	return 0;
}

/* Is obj of the kind whose map word (compressed builds) or type is given? */
static int object_is(struct v8heap *h, uint64_t obj, uint32_t map, uint32_t type)
{
	uint64_t word;
	uint32_t t;
	int err;

	if (!obj)
		return -EINVAL;
	if (h->l.compressed && map) {
		err = v8heap__read_word(h->pid, &h->l, obj, &word);
		if (err)
			return err;
		return (uint32_t)word == map ? 0 : -EINVAL;
	}
	err = v8heap__instance_type(h->pid, &h->l, obj, &t);
	if (err)
		return err;
	return t == type ? 0 : -EINVAL;
}

static uint64_t field(struct v8heap *h, uint64_t obj, uint32_t offset, int *err)
{
	uint64_t word = 0;

	*err = v8heap__read_word(h->pid, &h->l, obj + offset, &word);
	h->stats.reads++;
	h->stats.bytes += h->l.tagged_size;
	return *err ? 0 : word;
}

static const char *own(struct v8heap *h, const char *s)
{
	char *copy;

	if (array_grow(&h->strings, &h->strings_cap, h->nstrings + 1))
		return NULL;
	copy = strdup(s);
	if (copy)
		h->strings[h->nstrings++] = copy;
	return copy;
}

/* The function name a ScopeInfo holds; "" when it has none. */
static int scope_info_name(struct v8heap *h, uint64_t scope, char *buf, size_t len)
{
	const struct v8_layout *l = &h->l;
	uint64_t word, name;
	int64_t c;
	uint32_t index;
	int err;

	word = field(h, scope, l->scope_info_context_locals, &err);
	if (err)
		return err;
	if (!v8heap__smi(l, word, &c) || c < 0 || c > 1 << 20)
		return -EINVAL;
	index = c < l->scope_info_name_hashed_from ?
			l->scope_info_name_base + l->scope_info_name_stride * (uint32_t)c :
			l->scope_info_name_hashed_base + (uint32_t)c;
	word = field(h, scope, index * l->tagged_size, &err);
	if (err)
		return err;
	name = v8heap__decompress(l, scope, word);
	buf[0] = 0;
	if (name) {
		err = v8heap__read_string(h->pid, l, name, buf, len, V8HEAP_NAME_MAX, NULL);
		if (err)
			return err;
	}
	/* no name of its own: the one V8 inferred ("Proto.method"), as its profiler shows */
	if (buf[0] || !l->scope_info_inferred_delta || c >= l->scope_info_name_hashed_from)
		return 0;
	word = field(h, scope, (index + l->scope_info_inferred_delta) * l->tagged_size, &err);
	name = err ? 0 : v8heap__decompress(l, scope, word);
	if (!name || v8heap__read_string(h->pid, l, name, buf, len, V8HEAP_NAME_MAX, NULL))
		buf[0] = 0;
	return 0;
}

static int line_table(struct v8heap *h, uint64_t script, struct script_lines **out);

/* Line and column (1-based) of position pos in script. */
static void position_of(struct v8heap *h, uint64_t script, int64_t pos, uint32_t *line,
			uint32_t *column)
{
	struct script_lines *sl;
	size_t lo = 0, hi;

	*line = *column = 0;
	if (pos < 0 || line_table(h, script, &sl) || sl->unreadable || !sl->nlines)
		return;
	hi = sl->nlines;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (sl->starts[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	*line = (uint32_t)lo + 1;
	*column = (uint32_t)(pos - sl->starts[lo]) + 1;
}

#define SOURCE_CHUNK 65536

/* Count the lines of a sequential source string, reading it in chunks. */
static int read_lines(struct v8heap *h, uint64_t source, struct script_lines *sl)
{
	const struct v8_layout *l = &h->l;
	uint8_t *chunk = NULL;
	size_t cap = 0, unit;
	uint32_t type, length;
	int err;

	err = v8heap__instance_type(h->pid, l, source, &type);
	if (err)
		return err;
	if (!is_string_type(l, type) || (type & l->string_repr_mask))
		return -EINVAL;
	err = procmem__read(h->pid, source + l->string_length, &length, sizeof(length));
	if (err)
		return err;
	unit = type & l->string_one_byte_bit ? 1 : 2;
	if ((uint64_t)length * unit > V8HEAP_SOURCE_MAX)
		return -EFBIG;
	chunk = malloc(SOURCE_CHUNK);
	if (!chunk)
		return -ENOMEM;
	if (array_grow(&sl->starts, &cap, 1)) {
		free(chunk);
		return -ENOMEM;
	}
	sl->starts[sl->nlines++] = 0;
	for (uint32_t done = 0; done < length && !err;) {
		uint32_t n = (uint32_t)(SOURCE_CHUNK / unit);

		if (n > length - done)
			n = length - done;
		err = procmem__read(h->pid, source + l->string_chars + (uint64_t)done * unit, chunk,
				    n * unit);
		h->stats.reads++;
		h->stats.bytes += n * unit;
		for (uint32_t i = 0; i < n && !err; i++) {
			uint32_t ch = unit == 1 ? chunk[i] : ((const uint16_t *)chunk)[i];

			if (ch != '\n')
				continue;
			/* a hostile source of newlines must not cost a line table each */
			if (h->lines + sl->nlines >= V8HEAP_LINES_MAX)
				err = -EFBIG;
			else if (array_grow(&sl->starts, &cap, sl->nlines + 1))
				err = -ENOMEM;
			else
				sl->starts[sl->nlines++] = done + i + 1;
		}
		done += n;
	}
	free(chunk);
	if (!err)
		h->lines += sl->nlines;
	return err;
}

static bool script_is(const void *ctx, uint32_t index, const void *key)
{
	const struct v8heap *h = ctx;

	return h->scripts[index].script == *(const uint64_t *)key;
}

static int line_table(struct v8heap *h, uint64_t script, struct script_lines **out)
{
	uint32_t hash = hash__fold32(hash__word(HASH_SEED, script));
	struct script_lines *sl;
	uint64_t word, source;
	size_t slot;
	long i;
	int err;

	if (index_table__reserve(&h->by_script))
		return -ENOMEM;
	i = index_table__lookup(&h->by_script, hash, script_is, h, &script, &slot);
	if (i >= 0) {
		*out = &h->scripts[i];
		return 0;
	}
	if (array_grow(&h->scripts, &h->scripts_cap, h->nscripts + 1))
		return -ENOMEM;
	sl = &h->scripts[h->nscripts];
	memset(sl, 0, sizeof(*sl));
	sl->script = script;
	word = field(h, script, h->l.script_source, &err);
	source = err ? 0 : v8heap__decompress(&h->l, script, word);
	err = source ? read_lines(h, source, sl) : -EINVAL;
	if (err) {
		free(sl->starts);
		sl->starts = NULL;
		sl->nlines = 0;
		if (err == -ENOMEM)
			return err;
	}
	sl->unreadable = err != 0;
	index_table__set(&h->by_script, slot, hash, (uint32_t)h->nscripts);
	*out = &h->scripts[h->nscripts++];
	return 0;
}

static int read_function(struct v8heap *h, uint64_t sfi, struct v8heap_function *fn,
			 uint64_t *script_out)
{
	const struct v8_layout *l = &h->l;
	char name[V8HEAP_NAME_MAX * 4 + 1], script_name[V8HEAP_NAME_MAX * 4 + 1];
	uint64_t word, obj, script, scope = 0;
	uint32_t type;
	int64_t start = -1;
	int err;

	err = object_is(h, sfi, l->sfi_map, l->sfi_type);
	if (err)
		return err;
	word = field(h, sfi, l->sfi_name_or_scope_info, &err);
	if (err)
		return err;
	obj = v8heap__decompress(l, sfi, word);
	name[0] = 0;
	if (obj) {
		err = v8heap__instance_type(h->pid, l, obj, &type);
		if (err)
			return err;
		if (is_string_type(l, type)) {
			err = v8heap__read_string(h->pid, l, obj, name, sizeof(name), V8HEAP_NAME_MAX,
						  NULL);
		} else if (type == l->scope_info_type) {
			scope = obj;
			err = scope_info_name(h, obj, name, sizeof(name));
		}
		/* anything else (an empty ScopeInfo sentinel, undefined): no name */
		if (err)
			return err;
	}
	fn->name = own(h, name);
	if (!fn->name)
		return -ENOMEM;

	fn->script = NULL;
	fn->line = fn->column = 0;
	word = field(h, sfi, l->sfi_script, &err);
	script = err ? 0 : v8heap__decompress(l, sfi, word);
	if (!script || object_is(h, script, l->script_map, l->script_type))
		return 0;
	*script_out = script;
	word = field(h, script, l->script_name, &err);
	obj = err ? 0 : v8heap__decompress(l, script, word);
	if (obj && !v8heap__read_string(h->pid, l, obj, script_name, sizeof(script_name),
					V8HEAP_NAME_MAX, NULL)) {
		fn->script = own(h, script_name);
		if (!fn->script)
			return -ENOMEM;
	}
	if (scope) {
		word = field(h, scope, l->scope_info_start, &err);
		if (!err && v8heap__smi(l, word, &start))
			position_of(h, script, start, &fn->line, &fn->column);
	}
	return 0;
}

static bool sfi_is(const void *ctx, uint32_t index, const void *key)
{
	const struct v8heap *h = ctx;

	return h->fns[index].sfi == *(const uint64_t *)key;
}

static int cached(struct v8heap *h, uint64_t sfi, struct cached_function **out)
{
	uint32_t hash = hash__fold32(hash__word(HASH_SEED, sfi));
	struct cached_function *c;
	size_t slot;
	long i;

	h->stats.lookups++;
	if (index_table__reserve(&h->by_sfi))
		return -ENOMEM;
	i = index_table__lookup(&h->by_sfi, hash, sfi_is, h, &sfi, &slot);
	if (i < 0) {
		if (array_grow(&h->fns, &h->fns_cap, h->nfns + 1))
			return -ENOMEM;
		c = &h->fns[h->nfns];
		memset(c, 0, sizeof(*c));
		c->sfi = sfi;
		c->err = read_function(h, sfi, &c->fn, &c->script);
		if (c->err == -ENOMEM)
			return -ENOMEM;
		if (c->err)
			h->stats.refused++;
		else
			h->stats.named++;
		index_table__set(&h->by_sfi, slot, hash, (uint32_t)h->nfns);
		i = (long)h->nfns++;
	}
	c = &h->fns[i];
	*out = c;
	return c->err;
}

int v8heap__function(struct v8heap *h, uint64_t sfi, struct v8heap_function *out)
{
	struct cached_function *c;
	int err = cached(h, sfi, &c);

	if (err)
		return err;
	*out = c->fn;
	return 0;
}

int v8heap__position(struct v8heap *h, uint64_t sfi, int64_t position, uint32_t *line,
		     uint32_t *column)
{
	struct cached_function *c;
	int err = cached(h, sfi, &c);

	*line = *column = 0;
	if (err)
		return err;
	if (c->script)
		position_of(h, c->script, position, line, column);
	return 0;
}

struct v8heap *v8heap__new(pid_t pid, const struct v8_layout *layout)
{
	struct v8heap *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->pid = pid;
	h->l = *layout;
	return h;
}

void v8heap__free(struct v8heap *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->nstrings; i++)
		free(h->strings[i]);
	free(h->strings);
	for (size_t i = 0; i < h->nscripts; i++)
		free(h->scripts[i].starts);
	free(h->scripts);
	free(h->fns);
	index_table__release(&h->by_sfi);
	index_table__release(&h->by_script);
	free(h);
}

void v8heap__stats(const struct v8heap *h, struct v8heap_stats *out)
{
	*out = h->stats;
}
