// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: v8heap over a heap of arbitrary bytes.  The input after
 * a header is copied to the start of a 4 GiB-aligned pointer cage in this
 * process (the rest of the cage reserved and unreadable) and read through
 * process_vm_readv() on our own pid, as another tenant's runtime would be:
 * whatever the bytes, no crash, no read outside what procmem reads, a
 * refusal with -EFAULT, -EINVAL or -E2BIG, and names that are terminated,
 * valid UTF-8 of bounded length, cached and stable until v8heap__free().
 *
 * Header (HEADER bytes, little-endian):
 *   [0]     bit 0: compressed (workerd's offsets) or full pointers (node's);
 *           bit 1: compressed objects checked by map word, not type;
 *           bit 2: ScopeInfo name stride 1, not 2
 *   [1]     ScopeInfo name_hashed_from
 *   [2..3]  the SFI's offset in the heap; [4..5] another object's
 *   [6..7]  a string's offset, [8] the buffer and [9] max / 8 it is read with
 *
 * Pointers are offsets from the cage base, tagged: compressed words as V8
 * has them; with full pointers, every 8-byte-aligned word with bit 0 set
 * below 4 GiB is one (the base is added before reading).  Maps for map
 * words are at 0x10 (SFI), 0x20 (ScopeInfo), 0x30 (Script); types are
 * SFI 0xb9, ScopeInfo 0xbc, Script 0xa1, strings below 0x80.
 *
 * Without 8 GiB of address space to reserve, only full pointers are
 * fuzzed, relative below HEAP_MAX, in a smaller reservation.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/utf8.h"
#include "symbolize/v8heap.h"

#define CAGE_SIZE (1ull << 32)
#define HEAP_MAX 65536		/* readable bytes at the cage base */
#define HEADER 10
/* reserved past the cage: the farthest a reader reads beyond an object (ScopeInfo word 2^20 + 7) */
#define OVERRUN (16u << 20)
#define NAME_BYTES (3 * V8HEAP_NAME_MAX) /* a UTF-16 unit is at most 3 bytes of UTF-8 */

static uint8_t *heap;
static uint64_t relative_below;	/* full-pointer words below this are offsets */
static bool have_cage;

static void map_heap(void)
{
	size_t len = 2 * CAGE_SIZE + OVERRUN;
	uint8_t *r;

	r = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r != MAP_FAILED) {
		heap = (uint8_t *)(((uintptr_t)r + CAGE_SIZE - 1) & ~(uintptr_t)(CAGE_SIZE - 1));
		relative_below = CAGE_SIZE;
		have_cage = true;
	} else {
		r = mmap(NULL, HEAP_MAX + OVERRUN, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (r == MAP_FAILED)
			abort();
		heap = r;
		relative_below = HEAP_MAX;
	}
	if (mprotect(heap, HEAP_MAX, PROT_READ | PROT_WRITE))
		abort();
}

static void layout(uint8_t flags, uint8_t hashed_from, struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	if (flags & 1) {
		l->compressed = true;
		l->tagged_size = 4;
		l->sfi_name_or_scope_info = 12;
		l->sfi_script = 20;
		l->scope_info_context_locals = 12;
		l->scope_info_start = 16;
		l->scope_info_name_base = 6;
		l->scope_info_name_hashed_base = 7;
		l->script_source = 4;
		l->script_name = 8;
		l->string_length = 8;
		l->string_chars = 12;
		l->map_instance_type = 8;
		if (flags & 2) {
			l->sfi_map = 0x11;
			l->scope_info_map = 0x21;
			l->script_map = 0x31;
		}
	} else {
		l->tagged_size = 8;
		l->sfi_name_or_scope_info = 16;
		l->sfi_script = 32;
		l->scope_info_context_locals = 24;
		l->scope_info_start = 56;
		l->scope_info_name_base = 4;
		l->scope_info_name_hashed_base = 5;
		l->script_source = 8;
		l->script_name = 16;
		l->string_length = 12;
		l->string_chars = 16;
		l->map_instance_type = 12;
	}
	l->scope_info_name_stride = flags & 4 ? 1 : 2;
	l->scope_info_name_hashed_from = hashed_from;
	l->sfi_type = 0xb9;
	l->scope_info_type = 0xbc;
	l->script_type = 0xa1;
	l->string_type_limit = 0x80;
	l->string_repr_mask = 0x7;
	l->string_one_byte_bit = 0x8;
}

/* Terminated within max bytes, well-formed; *units: the UTF-16 units it came from. */
static bool valid(const char *s, size_t max, size_t *units)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, len = 0;

	*units = 0;
	while (p[len]) {
		n = utf8__seq(p + len, 4);
		if (!n)
			return false;
		len += n;
		*units += n == 4 ? 2 : 1;
		if (len > max)
			return false;
	}
	return true;
}

static void check(int err, const struct v8heap_function *fn)
{
	size_t units;

	if (err) {
		if (err != -EFAULT && err != -EINVAL && err != -E2BIG)
			__builtin_trap();
		return;
	}
	if (!fn->name || !valid(fn->name, NAME_BYTES, &units))
		__builtin_trap();
	if (fn->script && !valid(fn->script, NAME_BYTES, &units))
		__builtin_trap();
	if (!fn->line != !fn->column)
		__builtin_trap();
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t base, sfi, other, addrs[4];
	struct v8heap_function fn, again, fn2;
	struct v8heap_stats s1, s2;
	size_t len, units, distinct = 0;
	struct v8_layout l;
	struct v8heap *h;
	size_t buf_len;
	bool one_byte;
	char *buf;
	int err;

	if (!heap)
		map_heap();
	if (size < HEADER || ((data[0] & 1) && !have_cage))
		return 0;
	layout(data[0], data[1], &l);
	len = size - HEADER < HEAP_MAX ? size - HEADER : HEAP_MAX;
	memset(heap, 0, HEAP_MAX);
	memcpy(heap, data + HEADER, len);
	base = (uint64_t)(uintptr_t)heap;
	for (size_t i = 0; !l.compressed && i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, heap + i, sizeof(w));
		if ((w & 1) && w < relative_below) {
			w += base;
			memcpy(heap + i, &w, sizeof(w));
		}
	}

	h = v8heap__new(getpid(), &l);
	if (!h)
		return 0;
	sfi = base + get16(data + 2);
	other = base + get16(data + 4);

	err = v8heap__function(h, sfi, &fn);
	check(err, &fn);
	/* cached: the same answer, not a byte read */
	v8heap__stats(h, &s1);
	if (v8heap__function(h, sfi, &again) != err ||
	    (!err && memcmp(&fn, &again, sizeof(fn))))
		__builtin_trap();
	v8heap__stats(h, &s2);
	if (s2.reads != s1.reads || s2.bytes != s1.bytes)
		__builtin_trap();

	check(v8heap__function(h, other, &fn2), &fn2);
	check(v8heap__function(h, other + 2, &fn2), &fn2);
	/* past the readable heap: nothing there */
	if (v8heap__function(h, base + HEAP_MAX, &fn2) != -EFAULT)
		__builtin_trap();
	/* the first answer's strings outlive later lookups */
	if (!err && (!valid(fn.name, NAME_BYTES, &units) ||
		     (fn.script && !valid(fn.script, NAME_BYTES, &units))))
		__builtin_trap();

	/* each address named or refused once */
	addrs[0] = sfi;
	addrs[1] = other;
	addrs[2] = other + 2;
	addrs[3] = base + HEAP_MAX;
	for (size_t i = 0; i < 4; i++) {
		size_t j = 0;

		while (addrs[j] != addrs[i])
			j++;
		distinct += j == i;
	}
	v8heap__stats(h, &s2);
	if (s2.named + s2.refused != distinct)
		__builtin_trap();
	v8heap__free(h);

	/* a string on its own, into an exact-size buffer */
	buf_len = data[8];
	buf = malloc(buf_len ? buf_len : 1);
	if (!buf)
		return 0;
	err = v8heap__read_string(getpid(), &l, base + get16(data + 6), buf, buf_len,
				  (size_t)data[9] * 8, &one_byte);
	if (err && err != -EFAULT && err != -EINVAL && err != -E2BIG)
		__builtin_trap();
	if (!err && (!memchr(buf, 0, buf_len) || !valid(buf, buf_len - 1, &units) ||
		     units > (size_t)data[9] * 8))
		__builtin_trap();
	free(buf);
	return 0;
}
