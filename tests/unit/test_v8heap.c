// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8heap: V8-shaped objects built in this
 * process's own memory and read back through process_vm_readv() on our own
 * pid, which needs no privilege.  Every case runs twice: with full pointers
 * (tagged_size 8, node-like offsets, objects checked by instance type) and
 * with pointer compression (tagged_size 4, the offsets measured on
 * workerd, objects checked by map word) in a 4 GiB-aligned cage; the
 * compressed run is skipped when no cage can be reserved.
 *
 * Names from a String and from a ScopeInfo (both index formulas), UTF-16
 * to UTF-8, a Script's name and the line and column of a start position,
 * refusals (not an SFI, a string that is not sequential or too long, an
 * unmapped address), and the per-SFI cache.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/v8heap.h"

#define CAGE_SIZE (1ull << 32)
#define HEAP_SIZE (1u << 20)	/* readable; the rest of the mapping is not */

/* Instance types: strings below 0x80, numbered as V8 does. */
#define TYPE_SEQ_TWO_BYTE 0x00
#define TYPE_SEQ_ONE_BYTE 0x08
#define TYPE_CONS_ONE_BYTE 0x09
#define TYPE_SLICED_ONE_BYTE 0x0b
#define TYPE_THIN_TWO_BYTE 0x05
#define TYPE_SCRIPT 0xa1
#define TYPE_SFI 0xb9
#define TYPE_SCOPE_INFO 0xbc
#define TYPE_OTHER 0xc7

struct heap {
	struct v8_layout l;
	uint8_t *base;		/* the heap's first byte; the cage base when compressed */
	size_t used;
	void *mapping;		/* what teardown unmaps */
	size_t mapping_len;
	uint64_t hole;		/* an address with nothing readable behind it */
	/* maps */
	uint64_t one_byte, two_byte, cons, sliced, thin, sfi, scope_info, script, other;
	bool skip;
};

/* Offsets of a node-like build without pointer compression. */
static void layout_full_pointers(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->compressed = false;
	l->tagged_size = 8;
	l->fn_sfi = 24;
	l->sfi_name_or_scope_info = 16;
	l->sfi_script = 32;
	l->scope_info_flags = 8;
	l->scope_info_context_locals = 24;
	l->scope_info_start = 56;
	l->scope_info_name_base = 4;
	l->scope_info_name_stride = 2;
	l->scope_info_name_hashed_from = 75;
	l->scope_info_name_hashed_base = 5;
	l->script_source = 8;
	l->script_name = 16;
	l->string_length = 12;
	l->string_chars = 16;
	l->map_instance_type = 12;
}

/* Offsets measured on workerd's V8 15.8 (pointer compression). */
static void layout_compressed(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	l->compressed = true;
	l->tagged_size = 4;
	l->fn_sfi = 16;
	l->sfi_name_or_scope_info = 12;
	l->sfi_script = 20;
	l->scope_info_flags = 4;
	l->scope_info_context_locals = 12;
	l->scope_info_start = 16;
	l->scope_info_name_base = 6;
	l->scope_info_name_stride = 2;
	l->scope_info_name_hashed_from = 75;
	l->scope_info_name_hashed_base = 7;
	l->script_source = 4;
	l->script_name = 8;
	l->string_length = 8;
	l->string_chars = 12;
	l->map_instance_type = 8;
}

static uint64_t obj_new(struct heap *hp, size_t size)
{
	uint64_t addr = (uint64_t)(uintptr_t)(hp->base + hp->used);

	size = (size + 7) & ~(size_t)7;
	assert_true(hp->used + size <= HEAP_SIZE);
	hp->used += size;
	return addr;
}

static void *at(uint64_t addr)
{
	return (void *)(uintptr_t)addr;
}

static void put_word(struct heap *hp, uint64_t obj, uint32_t offset, uint64_t word)
{
	uint32_t w32 = (uint32_t)word;

	if (hp->l.compressed)
		memcpy(at(obj + offset), &w32, sizeof(w32));
	else
		memcpy(at(obj + offset), &word, sizeof(word));
}

/* A tagged pointer: compressed, the low half of the address. */
static void put_ptr(struct heap *hp, uint64_t obj, uint32_t offset, uint64_t target)
{
	put_word(hp, obj, offset, target | 1);
}

static void put_smi(struct heap *hp, uint64_t obj, uint32_t offset, int32_t value)
{
	if (hp->l.compressed)
		put_word(hp, obj, offset, (uint32_t)value << 1);
	else
		put_word(hp, obj, offset, (uint64_t)(uint32_t)value << 32);
}

static uint64_t map_new(struct heap *hp, uint16_t type)
{
	uint64_t map = obj_new(hp, hp->l.map_instance_type + 8);

	memcpy(at(map + hp->l.map_instance_type), &type, sizeof(type));
	return map;
}

static uint64_t string_new(struct heap *hp, uint64_t map, const void *chars, uint32_t length,
			   size_t unit)
{
	uint64_t s = obj_new(hp, hp->l.string_chars + (size_t)length * unit);

	put_ptr(hp, s, 0, map);
	memcpy(at(s + hp->l.string_length), &length, sizeof(length));
	memcpy(at(s + hp->l.string_chars), chars, (size_t)length * unit);
	return s;
}

static uint64_t one_byte(struct heap *hp, const char *text)
{
	return string_new(hp, hp->one_byte, text, (uint32_t)strlen(text), 1);
}

static uint64_t two_byte(struct heap *hp, const uint16_t *units, uint32_t n)
{
	return string_new(hp, hp->two_byte, units, n, 2);
}

/* name_or_scope and script 0: the Smi V8 leaves there. */
static uint64_t sfi_new(struct heap *hp, uint64_t name_or_scope, uint64_t script)
{
	uint64_t sfi = obj_new(hp, 64);

	put_ptr(hp, sfi, 0, hp->sfi);
	if (name_or_scope)
		put_ptr(hp, sfi, hp->l.sfi_name_or_scope_info, name_or_scope);
	else
		put_smi(hp, sfi, hp->l.sfi_name_or_scope_info, 0);
	if (script)
		put_ptr(hp, sfi, hp->l.sfi_script, script);
	else
		put_smi(hp, sfi, hp->l.sfi_script, 0);
	return sfi;
}

static uint64_t script_new(struct heap *hp, uint64_t source, uint64_t name)
{
	uint64_t script = obj_new(hp, 32);

	put_ptr(hp, script, 0, hp->script);
	put_ptr(hp, script, hp->l.script_source, source);
	put_ptr(hp, script, hp->l.script_name, name);
	return script;
}

static uint32_t name_index(const struct v8_layout *l, uint32_t c, bool hashed)
{
	return hashed ? l->scope_info_name_hashed_base + c :
			l->scope_info_name_base + l->scope_info_name_stride * c;
}

static bool header_word(const struct v8_layout *l, uint32_t word)
{
	uint32_t offset = word * l->tagged_size;

	return !offset || offset == l->scope_info_flags ||
	       offset == l->scope_info_context_locals || offset == l->scope_info_start;
}

/*
 * A ScopeInfo with c context locals, the function name where the layout
 * says, and another name in every word a wrong index would read: the
 * local names before it, the word after it, the other formula's word.
 */
static uint64_t scope_info_new(struct heap *hp, uint32_t c, uint64_t name, int32_t start)
{
	const struct v8_layout *l = &hp->l;
	bool hashed = c >= l->scope_info_name_hashed_from;
	uint32_t index = name_index(l, c, hashed), wrong = name_index(l, c, !hashed);
	uint32_t words = (index > wrong ? index : wrong) + 2;
	uint64_t scope = obj_new(hp, (size_t)words * l->tagged_size);
	uint64_t decoy = one_byte(hp, "decoy");

	put_ptr(hp, scope, 0, hp->scope_info);
	put_smi(hp, scope, l->scope_info_flags, 0);
	put_smi(hp, scope, l->scope_info_context_locals, (int32_t)c);
	put_smi(hp, scope, l->scope_info_start, start);
	for (uint32_t k = 0; k < c && !hashed; k++)
		if (!header_word(l, name_index(l, k, false)))
			put_ptr(hp, scope, name_index(l, k, false) * l->tagged_size, decoy);
	if (!header_word(l, index + 1))
		put_ptr(hp, scope, (index + 1) * l->tagged_size, decoy);
	if (!header_word(l, wrong))
		put_ptr(hp, scope, wrong * l->tagged_size, decoy);
	if (name)
		put_ptr(hp, scope, index * l->tagged_size, name);
	else
		put_smi(hp, scope, index * l->tagged_size, 0);
	return scope;
}

/* Compressed: a 4 GiB cage, readable only in its first HEAP_SIZE bytes. */
static int map_cage(struct heap *hp)
{
	size_t len = 2 * CAGE_SIZE;
	uint8_t *r, *cage;

	r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return -1;
	cage = (uint8_t *)(((uintptr_t)r + CAGE_SIZE - 1) & ~(uintptr_t)(CAGE_SIZE - 1));
	if (cage > r)
		munmap(r, cage - r);
	munmap(cage + CAGE_SIZE, r + len - (cage + CAGE_SIZE));
	if (mprotect(cage, HEAP_SIZE, PROT_READ | PROT_WRITE)) {
		munmap(cage, CAGE_SIZE);
		return -1;
	}
	hp->mapping = hp->base = cage;
	hp->mapping_len = CAGE_SIZE;
	return 0;
}

/* Full pointers: anywhere, with an unreadable page after the heap. */
static int map_heap(struct heap *hp)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *m;

	m = mmap(NULL, HEAP_SIZE + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (m == MAP_FAILED)
		return -1;
	if (mprotect(m + HEAP_SIZE, page, PROT_NONE)) {
		munmap(m, HEAP_SIZE + page);
		return -1;
	}
	hp->mapping = hp->base = m;
	hp->mapping_len = HEAP_SIZE + page;
	return 0;
}

static int setup(void **state, bool compressed)
{
	struct heap *hp = calloc(1, sizeof(*hp));
	struct v8_layout *l;

	if (!hp)
		return -1;
	*state = hp;
	l = &hp->l;
	if (compressed) {
		layout_compressed(l);
		if (map_cage(hp)) {
			hp->skip = true;
			return 0;
		}
	} else {
		layout_full_pointers(l);
		if (map_heap(hp))
			return -1;
	}
	hp->hole = (uint64_t)(uintptr_t)(hp->base + HEAP_SIZE);
	hp->used = 16;	/* no object at the cage base */
	l->sfi_type = TYPE_SFI;
	l->scope_info_type = TYPE_SCOPE_INFO;
	l->script_type = TYPE_SCRIPT;
	l->string_type_limit = 0x80;
	l->string_repr_mask = 0x7;
	l->string_one_byte_bit = 0x8;
	hp->one_byte = map_new(hp, TYPE_SEQ_ONE_BYTE);
	hp->two_byte = map_new(hp, TYPE_SEQ_TWO_BYTE);
	hp->cons = map_new(hp, TYPE_CONS_ONE_BYTE);
	hp->sliced = map_new(hp, TYPE_SLICED_ONE_BYTE);
	hp->thin = map_new(hp, TYPE_THIN_TWO_BYTE);
	hp->sfi = map_new(hp, TYPE_SFI);
	hp->scope_info = map_new(hp, TYPE_SCOPE_INFO);
	hp->script = map_new(hp, TYPE_SCRIPT);
	hp->other = map_new(hp, TYPE_OTHER);
	if (compressed) {
		/* read-only maps: one compressed word per kind in a build */
		l->sfi_map = (uint32_t)(hp->sfi | 1);
		l->scope_info_map = (uint32_t)(hp->scope_info | 1);
		l->script_map = (uint32_t)(hp->script | 1);
	}
	return 0;
}

static int setup_full_pointers(void **state)
{
	return setup(state, false);
}

static int setup_compressed(void **state)
{
	return setup(state, true);
}

static int teardown(void **state)
{
	struct heap *hp = *state;

	if (hp->mapping)
		munmap(hp->mapping, hp->mapping_len);
	free(hp);
	return 0;
}

static struct heap *heap_of(void **state)
{
	struct heap *hp = *state;

	if (hp->skip)
		skip();
	return hp;
}

static struct v8heap *reader(struct heap *hp)
{
	struct v8heap *h = v8heap__new(getpid(), &hp->l);

	assert_non_null(h);
	return h;
}

static void test_string_name(void **state)
{
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn;
	uint64_t sfi, other;

	sfi = sfi_new(hp, one_byte(hp, "handleRequest"), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "handleRequest");
	assert_null(fn.script);
	assert_int_equal(fn.line, 0);
	assert_int_equal(fn.column, 0);

	/* Latin-1 in a one-byte string */
	sfi = sfi_new(hp, one_byte(hp, "caf\xe9"), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "caf\xc3\xa9");

	/* anonymous: a Smi, or an object that is neither String nor ScopeInfo */
	sfi = sfi_new(hp, 0, 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "");
	other = obj_new(hp, 16);
	put_ptr(hp, other, 0, hp->other);
	sfi = sfi_new(hp, other, 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "");
	v8heap__free(h);
}

static void test_scope_info_name(void **state)
{
	static const uint32_t counts[] = { 0, 1, 3, 74, 75, 80 };
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn;
	uint64_t sfi, scope;
	char want[32];

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		snprintf(want, sizeof(want), "locals%u", counts[i]);
		scope = scope_info_new(hp, counts[i], one_byte(hp, want), 0);
		sfi = sfi_new(hp, scope, 0);
		assert_int_equal(v8heap__function(h, sfi, &fn), 0);
		assert_string_equal(fn.name, want);
		assert_null(fn.script);
	}

	/* a ScopeInfo without a function name */
	sfi = sfi_new(hp, scope_info_new(hp, 2, 0, 0), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "");

	/* a context-local count that is not a Smi, negative, or absurd */
	scope = scope_info_new(hp, 0, one_byte(hp, "x"), 0);
	put_ptr(hp, scope, hp->l.scope_info_context_locals, scope);
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), -EINVAL);
	scope = scope_info_new(hp, 0, one_byte(hp, "x"), 0);
	put_smi(hp, scope, hp->l.scope_info_context_locals, -1);
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), -EINVAL);
	scope = scope_info_new(hp, 0, one_byte(hp, "x"), 0);
	put_smi(hp, scope, hp->l.scope_info_context_locals, (1 << 20) + 1);
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), -EINVAL);
	v8heap__free(h);
}

/* A cons string of two halves, as V8 builds inferred names. */
static uint64_t cons_new(struct heap *hp, uint64_t first, uint64_t second, uint32_t length)
{
	uint64_t s = obj_new(hp, hp->l.string_chars + 2 * (size_t)hp->l.tagged_size);

	put_ptr(hp, s, 0, hp->cons);
	memcpy(at(s + hp->l.string_length), &length, sizeof(length));
	put_ptr(hp, s, hp->l.string_chars, first);
	put_ptr(hp, s, hp->l.string_chars + hp->l.tagged_size, second);
	return s;
}

/*
 * A function without a name of its own is named as V8 inferred it
 * ("holder.method", a cons string) from the word the layout says.
 */
static void test_inferred_name(void **state)
{
	struct heap *hp = heap_of(state);
	const struct v8_layout *l = &hp->l;
	uint32_t index = name_index(l, 1, false);
	uint64_t scope, sfi, name, deep;
	struct v8heap_function fn;
	struct v8heap *h;

	name = cons_new(hp, cons_new(hp, one_byte(hp, "holder"), one_byte(hp, "."), 7),
			one_byte(hp, "method"), 13);
	scope = obj_new(hp, (size_t)(index + 4) * l->tagged_size);
	put_ptr(hp, scope, 0, hp->scope_info);
	put_smi(hp, scope, l->scope_info_flags, 0);
	put_smi(hp, scope, l->scope_info_context_locals, 1);
	put_smi(hp, scope, l->scope_info_start, 0);
	put_ptr(hp, scope, index * l->tagged_size, one_byte(hp, ""));
	put_ptr(hp, scope, (index + 1) * l->tagged_size, one_byte(hp, "decoy"));
	put_ptr(hp, scope, (index + 2) * l->tagged_size, name);
	sfi = sfi_new(hp, scope, 0);

	/* a layout that has not learnt inferred names: anonymous, as before */
	h = reader(hp);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "");
	v8heap__free(h);

	hp->l.scope_info_inferred_delta = 2;
	hp->l.string_cons_tag = TYPE_CONS_ONE_BYTE & 0x7;
	h = reader(hp);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "holder.method");

	/* a name of its own wins over the inferred one */
	put_ptr(hp, scope, index * l->tagged_size, one_byte(hp, "own"));
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), 0);
	assert_string_equal(fn.name, "own");

	/* a cons string nested past the depth bound, or one that loops: no name */
	deep = one_byte(hp, "x");
	for (int i = 0; i < 20; i++)
		deep = cons_new(hp, deep, one_byte(hp, "y"), (uint32_t)i + 2);
	put_ptr(hp, scope, index * l->tagged_size, one_byte(hp, ""));
	put_ptr(hp, scope, (index + 2) * l->tagged_size, deep);
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), 0);
	assert_string_equal(fn.name, "");
	name = cons_new(hp, 0, 0, 2);
	put_ptr(hp, name, l->string_chars, name);
	put_ptr(hp, name, l->string_chars + l->tagged_size, name);
	put_ptr(hp, scope, (index + 2) * l->tagged_size, name);
	assert_int_equal(v8heap__function(h, sfi_new(hp, scope, 0), &fn), 0);
	assert_string_equal(fn.name, "");
	v8heap__free(h);
	hp->l.scope_info_inferred_delta = 0;
	hp->l.string_cons_tag = 0;
}

/* A thin string (node's CommonJS script names) is the string it points to. */
static void test_thin_script_name(void **state)
{
	struct heap *hp = heap_of(state);
	const struct v8_layout *l = &hp->l;
	uint64_t thin, script, sfi;
	struct v8heap_function fn;
	struct v8heap *h;

	thin = obj_new(hp, l->string_chars + l->tagged_size);
	put_ptr(hp, thin, 0, hp->thin);
	put_ptr(hp, thin, l->string_chars, one_byte(hp, "/srv/app/main.js"));
	script = script_new(hp, one_byte(hp, "function f() {}\n"), thin);
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "f"), 0), script);

	/* an encoding not learnt as V8's (no cons tag): not followed */
	h = reader(hp);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_null(fn.script);
	v8heap__free(h);

	hp->l.string_cons_tag = TYPE_CONS_ONE_BYTE & 0x7;
	h = reader(hp);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "f");
	assert_string_equal(fn.script, "/srv/app/main.js");
	/* one that points at itself is no name, and no hang */
	put_ptr(hp, thin, l->string_chars, thin);
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "g"), 0),
		      script_new(hp, one_byte(hp, "function g() {}\n"), thin));
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_null(fn.script);
	v8heap__free(h);
	hp->l.string_cons_tag = 0;
}

static void test_two_byte(void **state)
{
	/* g o U+1F600, a lone high surrogate before x, a lone low one, é, 中, a high one last */
	static const uint16_t units[] = { 'g',	  'o',	  0xd83d, 0xde00, 0xd800,
					  'x',	  0xdc00, 0x00e9, 0x4e2d, 0xdbff };
	static const char want[] = "go\xf0\x9f\x98\x80"
				   "\xef\xbf\xbd"
				   "x\xef\xbf\xbd"
				   "\xc3\xa9\xe4\xb8\xad\xef\xbf\xbd";
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn;
	uint16_t many[V8HEAP_NAME_MAX];
	uint64_t sfi;
	size_t n;

	sfi = sfi_new(hp, two_byte(hp, units, sizeof(units) / sizeof(units[0])), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, want);

	/* the longest names: every unit 3 bytes, or pairs of 4 */
	for (n = 0; n < V8HEAP_NAME_MAX; n++)
		many[n] = 0x4e2d;
	sfi = sfi_new(hp, scope_info_new(hp, 1, two_byte(hp, many, V8HEAP_NAME_MAX), 0), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_int_equal(strlen(fn.name), 3 * V8HEAP_NAME_MAX);
	assert_memory_equal(fn.name + 3 * (V8HEAP_NAME_MAX - 1), "\xe4\xb8\xad", 3);
	for (n = 0; n < V8HEAP_NAME_MAX; n += 2) {
		many[n] = 0xd83d;
		many[n + 1] = 0xde00;
	}
	sfi = sfi_new(hp, two_byte(hp, many, V8HEAP_NAME_MAX), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_int_equal(strlen(fn.name), 2 * V8HEAP_NAME_MAX);
	v8heap__free(h);
}

static void test_script_position(void **state)
{
	static const char head[] = "// worker\n"
				   "\n"
				   "export default {\n"
				   "  async fetch(req) {\n"
				   "    return handle(req);\n"
				   "  }\n"
				   "};\n";
	static const uint16_t units[] = { 'x', '\n', 0x00e9, 0xd83d, 0xde00, '\n', 'f', 'o', 'o' };
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn, fn2;
	struct v8heap_stats s0, s1, s2;
	uint64_t script, source, sfi;
	char text[8192];
	size_t len;

	/* 7 lines, 540 of padding (~6 KB: more than all other reads), then line 548 */
	len = strlen(head);
	memcpy(text, head, len);
	for (int i = 0; i < 540; i++)
		len += (size_t)sprintf(text + len, "// padding\n");
	len += (size_t)sprintf(text + len, "function handle(r) {}\n");
	source = one_byte(hp, text);
	script = script_new(hp, source, one_byte(hp, "worker.js"));

	v8heap__stats(h, &s0);
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "fetch"),
					 (int32_t)(strstr(text, "async") - text)),
		      script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "fetch");
	assert_string_equal(fn.script, "worker.js");
	assert_int_equal(fn.line, 4);
	assert_int_equal(fn.column, 3);
	v8heap__stats(h, &s1);
	assert_true(s1.bytes - s0.bytes >= len);

	/* the script's line table is read once */
	sfi = sfi_new(hp, scope_info_new(hp, 3, one_byte(hp, "handle"),
					 (int32_t)(strstr(text, "function handle") - text)),
		      script);
	assert_int_equal(v8heap__function(h, sfi, &fn2), 0);
	assert_string_equal(fn2.name, "handle");
	assert_string_equal(fn2.script, "worker.js");
	assert_int_equal(fn2.line, 548);
	assert_int_equal(fn2.column, 1);
	v8heap__stats(h, &s2);
	assert_true(s2.bytes - s1.bytes < 1024);

	/* the first character, the last line, one past the end */
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "top"), 0), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_int_equal(fn.line, 1);
	assert_int_equal(fn.column, 1);
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "end"), (int32_t)len), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_int_equal(fn.line, 549);
	assert_int_equal(fn.column, 1);
	/* a negative position: unknown */
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "neg"), -5), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_int_equal(fn.line, 0);
	assert_int_equal(fn.column, 0);
	/* a String name carries no position */
	sfi = sfi_new(hp, one_byte(hp, "lazy"), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.script, "worker.js");
	assert_int_equal(fn.line, 0);

	/* a two-byte source counts UTF-16 units, as V8's positions do */
	script = script_new(hp, two_byte(hp, units, sizeof(units) / sizeof(units[0])),
			    one_byte(hp, "mod.js"));
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "foo"), 7), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.script, "mod.js");
	assert_int_equal(fn.line, 3);
	assert_int_equal(fn.column, 2);

	/* an unreadable source (not sequential) or name: the function still named */
	source = string_new(hp, hp->cons, "a\nb", 3, 1);
	script = script_new(hp, source, source);
	sfi = sfi_new(hp, scope_info_new(hp, 0, one_byte(hp, "f"), 2), script);
	assert_int_equal(v8heap__function(h, sfi, &fn), 0);
	assert_string_equal(fn.name, "f");
	assert_null(fn.script);
	assert_int_equal(fn.line, 0);
	assert_int_equal(fn.column, 0);
	v8heap__free(h);
}

static void test_not_sfi(void **state)
{
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn;
	struct v8heap_stats st;
	uint64_t obj, copy, script;

	script = script_new(hp, one_byte(hp, ""), one_byte(hp, "a.js"));
	assert_int_equal(v8heap__function(h, script, &fn), -EINVAL);
	assert_int_equal(v8heap__function(h, one_byte(hp, "name"), &fn), -EINVAL);
	assert_int_equal(v8heap__function(h, 0, &fn), -EINVAL);
	obj = obj_new(hp, 64);
	put_ptr(hp, obj, 0, hp->other);
	assert_int_equal(v8heap__function(h, obj, &fn), -EINVAL);
	/* a map word that is a Smi */
	obj = obj_new(hp, 64);
	put_smi(hp, obj, 0, 0x12);
	assert_int_equal(v8heap__function(h, obj, &fn), -EINVAL);

	/* a map with the SFI's type: enough without map words, not with them */
	copy = map_new(hp, TYPE_SFI);
	obj = sfi_new(hp, one_byte(hp, "impostor"), 0);
	put_ptr(hp, obj, 0, copy);
	assert_int_equal(v8heap__function(h, obj, &fn), hp->l.compressed ? -EINVAL : 0);

	/* an SFI whose Script is not one: named, no script */
	obj = sfi_new(hp, one_byte(hp, "f"), one_byte(hp, "not a script"));
	assert_int_equal(v8heap__function(h, obj, &fn), 0);
	assert_string_equal(fn.name, "f");
	assert_null(fn.script);

	v8heap__stats(h, &st);
	assert_int_equal(st.lookups, 7);
	assert_int_equal(st.named, hp->l.compressed ? 1 : 2);
	assert_int_equal(st.refused, hp->l.compressed ? 6 : 5);
	v8heap__free(h);
}

static void test_refused_names(void **state)
{
	static const uint16_t thin[] = { 'a', 'b' };
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function fn;
	char text[V8HEAP_NAME_MAX + 2];
	uint32_t huge = UINT32_MAX;
	uint64_t s, sfi;

	/* not sequential: cons, sliced, thin */
	s = string_new(hp, hp->cons, "abc", 3, 1);
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -EINVAL);
	s = string_new(hp, hp->sliced, "abc", 3, 1);
	sfi = sfi_new(hp, scope_info_new(hp, 2, s, 0), 0);
	assert_int_equal(v8heap__function(h, sfi, &fn), -EINVAL);
	s = string_new(hp, hp->thin, thin, 2, 2);
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -EINVAL);

	/* V8HEAP_NAME_MAX characters are read, one more is not */
	memset(text, 'n', sizeof(text));
	text[V8HEAP_NAME_MAX] = 0;
	assert_int_equal(v8heap__function(h, sfi_new(hp, one_byte(hp, text), 0), &fn), 0);
	assert_int_equal(strlen(fn.name), V8HEAP_NAME_MAX);
	text[V8HEAP_NAME_MAX] = 'n';
	text[V8HEAP_NAME_MAX + 1] = 0;
	s = one_byte(hp, text);
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -E2BIG);
	/* a length no string has: refused before any read of it */
	memcpy(at(s + hp->l.string_length), &huge, sizeof(huge));
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -E2BIG);

	/* unmapped: the SFI, its fields, its name, a name running off the heap's end */
	assert_int_equal(v8heap__function(h, hp->hole, &fn), -EFAULT);
	sfi = hp->hole - hp->l.tagged_size;
	put_ptr(hp, sfi, 0, hp->sfi);
	assert_int_equal(v8heap__function(h, sfi, &fn), -EFAULT);
	assert_int_equal(v8heap__function(h, sfi_new(hp, hp->hole, 0), &fn), -EFAULT);
	s = hp->hole - hp->l.string_chars - 4;
	put_ptr(hp, s, 0, hp->one_byte);
	memcpy(at(s + hp->l.string_length), &(uint32_t){ 100 }, sizeof(uint32_t));
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -EFAULT);
	/* a ScopeInfo whose name word is past the end */
	s = hp->hole - (hp->l.scope_info_name_base + 1) * hp->l.tagged_size;
	put_ptr(hp, s, 0, hp->scope_info);
	put_smi(hp, s, hp->l.scope_info_context_locals, 10);
	assert_int_equal(v8heap__function(h, sfi_new(hp, s, 0), &fn), -EFAULT);
	v8heap__free(h);
}

static void test_cache(void **state)
{
	struct heap *hp = heap_of(state);
	struct v8heap *h = reader(hp);
	struct v8heap_function a, b;
	struct v8heap_stats s1, s2;
	uint64_t script, sfi;

	script = script_new(hp, one_byte(hp, "\n\nfunction f() {}\n"), one_byte(hp, "c.js"));
	sfi = sfi_new(hp, scope_info_new(hp, 1, one_byte(hp, "f"), 2), script);
	assert_int_equal(v8heap__function(h, sfi, &a), 0);
	assert_string_equal(a.name, "f");
	assert_string_equal(a.script, "c.js");
	assert_int_equal(a.line, 3);
	assert_int_equal(a.column, 1);
	assert_int_equal(v8heap__function(h, hp->hole, &b), -EFAULT);
	v8heap__stats(h, &s1);
	assert_true(s1.reads > 0);

	/* the same pointers and no read at all: the heap is not even readable now */
	assert_int_equal(mprotect(hp->base, HEAP_SIZE, PROT_NONE), 0);
	assert_int_equal(v8heap__function(h, sfi, &b), 0);
	assert_int_equal(v8heap__function(h, hp->hole, &b), -EFAULT);
	assert_int_equal(v8heap__function(h, sfi, &b), 0);
	assert_int_equal(mprotect(hp->base, HEAP_SIZE, PROT_READ | PROT_WRITE), 0);
	assert_ptr_equal(a.name, b.name);
	assert_ptr_equal(a.script, b.script);
	assert_int_equal(a.line, b.line);
	assert_int_equal(a.column, b.column);
	v8heap__stats(h, &s2);
	assert_int_equal(s2.lookups, s1.lookups + 3);
	assert_int_equal(s2.reads, s1.reads);
	assert_int_equal(s2.bytes, s1.bytes);
	assert_int_equal(s2.named, 1);
	assert_int_equal(s2.refused, 1);
	v8heap__free(h);
}

/* Each case with full pointers, then compressed. */
#define BOTH(test)                                                      \
	{ #test "/full", test, setup_full_pointers, teardown, NULL },  \
	{ #test "/compressed", test, setup_compressed, teardown, NULL }

int main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_string_name),	BOTH(test_scope_info_name),
		BOTH(test_two_byte),	BOTH(test_script_position),
		BOTH(test_not_sfi),	BOTH(test_refused_names),
		BOTH(test_cache),	BOTH(test_inferred_name),
		BOTH(test_thin_script_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
