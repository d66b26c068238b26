// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/code_index: the newest-wins flattening, entries
 * and their payloads, lookups by start, drops and moves, compaction.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/code_index.h"

struct payload {
	uint64_t tag;
	uint32_t extra;
};

static int nr_parses;

/* The whole name as the function, the payload's tag as the line. */
static void parse_plain(const char *name, size_t len, const void *payload, struct v8name *out,
			char *buf, size_t size)
{
	const struct payload *p = payload;

	nr_parses++;
	assert_true(size >= v8name__buf_size(len));
	memset(out, 0, sizeof(*out));
	memcpy(buf, name, len);
	buf[len] = '\0';
	out->function = buf;
	out->tag = "";
	out->marker = "";
	out->line = p ? (uint32_t)p->tag : 0;
}

static struct code_index *new_index(size_t payload_size, bool by_start)
{
	const struct code_index_opts opts = {
		.payload_size = payload_size,
		.by_start = by_start,
		.parse = parse_plain,
	};
	struct code_index *ci = code_index__new(&opts);

	assert_non_null(ci);
	return ci;
}

static long add(struct code_index *ci, uint64_t start, uint64_t size, const char *name,
		uint64_t tag)
{
	struct payload p = { .tag = tag, .extra = 0xabcd };

	return code_index__add(ci, start, size, name, strlen(name), &p);
}

static const char *name_at(struct code_index *ci, uint64_t addr)
{
	struct code_entry e;

	if (code_index__lookup(ci, addr, &e) < 0)
		return NULL;
	assert_true(addr >= e.start && addr - e.start < e.size);
	assert_string_equal(e.parsed->function, e.name);
	return e.name;
}

/* Newest-wins by brute force over random spans, against the flattened index. */
static void test_flatten_random(void **state)
{
	enum { N = 60, SPACE = 400 };
	struct code_span in[N], *out;
	size_t nr_out, i, j, round;
	int winner[SPACE];
	ptrdiff_t f;

	(void)state;
	srandom(42);
	for (round = 0; round < 300; round++) {
		size_t n = 1 + (size_t)random() % N;

		for (i = 0; i < n; i++) {
			in[i].start = (uint64_t)(random() % SPACE);
			in[i].end = in[i].start + 1 + (uint64_t)(random() % (round % 2 ? 40 : 200));
			if (in[i].end > SPACE)
				in[i].end = SPACE;
			in[i].id = i;
		}
		for (i = 0; i < SPACE; i++)
			winner[i] = -1;
		for (i = 0; i < n; i++) {
			for (j = in[i].start; j < in[i].end; j++)
				winner[j] = (int)i;	/* later ids are newer */
		}
		/* flatten wants them sorted by start; ids keep the age */
		for (i = 1; i < n; i++) {
			struct code_span t = in[i];

			for (j = i; j > 0 && in[j - 1].start > t.start; j--)
				in[j] = in[j - 1];
			in[j] = t;
		}
		assert_int_equal(code_spans__flatten(in, n, &out, &nr_out), 0);
		for (i = 0; i + 1 < nr_out; i++) {
			assert_true(out[i].start < out[i].end);
			assert_true(out[i].end <= out[i + 1].start);
			if (out[i].end == out[i + 1].start)
				assert_true(out[i].id != out[i + 1].id);
		}
		for (i = 0; i < SPACE; i++) {
			f = code_spans__find(out, nr_out, i);
			if (winner[i] < 0)
				assert_true(f < 0);
			else
				assert_int_equal(out[f].id, winner[i]);
		}
		free(out);
	}
	assert_int_equal(code_spans__flatten(in, 0, &out, &nr_out), 0);
	assert_null(out);
	assert_int_equal(nr_out, 0);
}

static void test_entries(void **state)
{
	static const char nul_name[] = "a\0b";
	const struct code_index_opts no_parse = { 0 };
	struct code_index *ci = new_index(sizeof(struct payload), false);
	const struct payload *p;
	const struct v8name *first;
	struct code_entry e;
	long id;

	(void)state;
	errno = 0;
	assert_null(code_index__new(&no_parse));
	assert_int_equal(errno, EINVAL);
	assert_null(code_index__new(NULL));

	assert_int_equal(add(ci, 0x1000, 0x100, "old", 1), 0);
	assert_int_equal(add(ci, 0x1080, 0x10, "new", 2), 1);
	/* Nothing shows before the reindex. */
	assert_int_equal(code_index__lookup(ci, 0x1000, &e), -ENOENT);
	assert_int_equal(code_index__count(ci), 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_int_equal(code_index__count(ci), 2);
	assert_int_equal(code_index__segments(ci), 3);
	assert_string_equal(name_at(ci, 0x107f), "old");
	assert_string_equal(name_at(ci, 0x1080), "new");
	assert_string_equal(name_at(ci, 0x108f), "new");
	assert_string_equal(name_at(ci, 0x1090), "old");
	assert_null(name_at(ci, 0x1100));
	assert_null(name_at(ci, 0xfff));

	/* The payload and the parse come with a lookup; a name is parsed once. */
	nr_parses = 0;
	assert_int_equal(code_index__lookup(ci, 0x1085, &e), 0);
	p = e.payload;
	assert_int_equal(p->tag, 2);
	assert_int_equal(p->extra, 0xabcd);
	assert_int_equal(e.parsed->line, 2);
	assert_int_equal(e.start, 0x1080);
	assert_int_equal(e.size, 0x10);
	assert_int_equal(e.name_len, 3);
	first = e.parsed;
	assert_int_equal(code_index__lookup(ci, 0x1081, &e), 0);
	assert_ptr_equal(e.parsed, first);
	assert_int_equal(nr_parses, 0);

	/* Names are bytes: a NUL inside is kept, and one is added after. */
	id = code_index__add(ci, 0x2000, 0x10, nul_name, 3, NULL);
	assert_int_equal(id, 2);
	code_index__get(ci, (size_t)id, &e);
	assert_int_equal(e.name_len, 3);
	assert_memory_equal(e.name, "a\0b", 4);
	assert_null(e.parsed);
	p = e.payload;
	assert_int_equal(p->tag, 0);	/* NULL payload: zeroes */

	/* Empty and wrapping ranges are refused and change nothing. */
	assert_int_equal(add(ci, 0x3000, 0, "empty", 3), -EINVAL);
	assert_int_equal(add(ci, UINT64_MAX - 1, 2, "wraps", 3), -EINVAL);
	assert_int_equal(add(ci, UINT64_MAX - 1, 1, "last", 3), 3);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_int_equal(code_index__count(ci), 4);
	assert_string_equal(name_at(ci, UINT64_MAX - 1), "last");
	assert_null(name_at(ci, UINT64_MAX));

	/* Without by_start there is no lookup by start; entries at one start stack. */
	assert_int_equal(code_index__find_start(ci, 0x1000), -1);
	assert_true(add(ci, 0x1000, 0x20, "small", 4) >= 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0x1010), "small");
	assert_string_equal(name_at(ci, 0x1020), "old");

	code_index__clear(ci);
	assert_int_equal(code_index__count(ci), 0);
	assert_null(name_at(ci, 0x1010));
	assert_int_equal(add(ci, 0x5000, 0x10, "again", 5), 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0x5000), "again");
	code_index__free(ci);
	code_index__free(NULL);
}

static void test_by_start(void **state)
{
	struct code_index *ci = new_index(sizeof(struct payload), true);
	const struct payload *p;
	struct code_entry e;
	long big, small, id;

	(void)state;
	big = add(ci, 0x1000, 0x100, "big", 1);
	small = add(ci, 0x1080, 0x10, "small", 2);
	assert_int_equal(code_index__find_start(ci, 0x1000), big);
	assert_int_equal(code_index__find_start(ci, 0x1080), small);
	assert_int_equal(code_index__find_start(ci, 0x1001), -1);
	assert_int_equal(code_index__reindex(ci), 0);

	/* big moves away: it shows at its new place with its name and payload. */
	big = code_index__find_start(ci, 0x1000);
	id = code_index__move(ci, (size_t)big, 0x9000);
	assert_true(id > small);
	assert_int_equal(code_index__find_start(ci, 0x1000), -1);
	assert_int_equal(code_index__find_start(ci, 0x9000), id);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_int_equal(code_index__count(ci), 2);
	assert_null(name_at(ci, 0x1000));
	assert_string_equal(name_at(ci, 0x1085), "small");
	assert_int_equal(code_index__lookup(ci, 0x90ff, &e), 0);
	assert_string_equal(e.name, "big");
	assert_int_equal(e.start, 0x9000);
	p = e.payload;
	assert_int_equal(p->tag, 1);
	assert_int_equal(e.parsed->line, 1);
	/* A move that would wrap is refused. */
	id = code_index__find_start(ci, 0x9000);
	assert_int_equal(code_index__move(ci, (size_t)id, UINT64_MAX - 0x10), -EINVAL);
	assert_int_equal(code_index__find_start(ci, 0x9000), id);

	/* A new entry at a live start replaces it whole, even a bigger one. */
	assert_true(add(ci, 0x9000, 0x40, "opt", 3) >= 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0x9000), "opt");
	assert_null(name_at(ci, 0x9000 + 0x80));

	/* A move onto a live start replaces that one. */
	id = add(ci, 0xa000, 0x20, "other", 4);
	assert_int_equal(code_index__reindex(ci), 0);
	id = code_index__find_start(ci, 0xa000);
	id = code_index__move(ci, (size_t)id, 0x9000);
	assert_true(id >= 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0x9000), "other");
	assert_null(name_at(ci, 0x9000 + 0x30));
	assert_null(name_at(ci, 0xa000));
	assert_int_equal(code_index__count(ci), 2);

	/* Dropped: gone from lookups and from the starts; what it hid stays hidden. */
	id = add(ci, 0x1084, 4, "tiny", 5);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0x1085), "tiny");
	code_index__drop(ci, (size_t)id);
	assert_int_equal(code_index__find_start(ci, 0x1084), -1);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_null(name_at(ci, 0x1085));
	assert_string_equal(name_at(ci, 0x1080), "small");
	assert_string_equal(name_at(ci, 0x1088), "small");

	/* Hidden entirely by newer code: dead, and no longer found by its start. */
	small = code_index__find_start(ci, 0x1080);
	assert_true(small >= 0);
	assert_true(add(ci, 0x1000, 0x200, "cover", 6) >= 0);
	assert_int_equal(code_index__find_start(ci, 0x1080), small);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_int_equal(code_index__find_start(ci, 0x1080), -1);
	assert_string_equal(name_at(ci, 0x1085), "cover");

	/* Added, moved twice and back within one batch. */
	id = add(ci, 0xb000, 0x10, "hop", 7);
	id = code_index__move(ci, (size_t)id, 0xc000);
	id = code_index__move(ci, (size_t)id, 0xb000);
	assert_true(id >= 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_string_equal(name_at(ci, 0xb000), "hop");
	assert_null(name_at(ci, 0xc000));
	code_index__free(ci);
}

/* Code re-created and moved many times: memory follows the live entries. */
static void test_compaction(void **state)
{
	struct code_index *ci = new_index(sizeof(struct payload), true);
	size_t round, mem_early = 0, i;
	const struct v8name *kept = NULL;
	struct code_entry e;
	char name[32];
	long id;

	(void)state;
	assert_true(add(ci, 0x500000, 0x10, "survivor", 99) >= 0);
	assert_int_equal(code_index__reindex(ci), 0);
	assert_int_equal(code_index__lookup(ci, 0x500000, &e), 0);
	kept = e.parsed;
	for (round = 0; round < 3000; round++) {
		snprintf(name, sizeof(name), "f%05zu", round);
		id = add(ci, 0x10000 + (round % 50) * 0x100, 64, name, round);
		assert_true(id >= 0);
		id = code_index__move(ci, (size_t)id, 0x90000 + (round % 50) * 0x100);
		assert_true(id >= 0);
		assert_int_equal(code_index__reindex(ci), 0);
		if (round >= 100 && round < 110 && code_index__mem_bytes(ci) > mem_early)
			mem_early = code_index__mem_bytes(ci);
		if (round >= 110)
			assert_true(code_index__mem_bytes(ci) <= mem_early);
	}
	assert_int_equal(code_index__count(ci), 51);
	/* Renumbered by compaction, each entry keeps its own name, payload and parse. */
	for (i = 0; i < 50; i++) {
		const struct payload *p;

		assert_int_equal(code_index__lookup(ci, 0x90000 + i * 0x100 + 63, &e), 0);
		p = e.payload;
		assert_int_equal(p->tag % 50, i);
		assert_true(p->tag >= 2950);
		snprintf(name, sizeof(name), "f%05zu", (size_t)p->tag);
		assert_string_equal(e.name, name);
		assert_string_equal(e.parsed->function, name);
		assert_int_equal(code_index__find_start(ci, 0x90000 + i * 0x100) >= 0, 1);
		assert_int_equal(code_index__find_start(ci, 0x10000 + i * 0x100), -1);
	}
	assert_int_equal(code_index__lookup(ci, 0x500000, &e), 0);
	assert_ptr_equal(e.parsed, kept);
	assert_string_equal(e.name, "survivor");
	assert_int_equal(((const struct payload *)e.payload)->tag, 99);
	code_index__free(ci);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flatten_random),
		cmocka_unit_test(test_entries),
		cmocka_unit_test(test_by_start),
		cmocka_unit_test(test_compaction),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
