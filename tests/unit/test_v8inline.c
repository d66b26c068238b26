// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8inline: the JS functions optimized code
 * inlined at a pc, from code-source-info fields as v8log hands them over
 * (the text after "code-source-info,") and the functions' code-creation
 * names: innermost first, lines and columns from the scripts' sources, the
 * position in the outermost function, code moves, the newest code for a
 * start, and what malformed or inconsistent input gives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolize/v8inline.h"

/*
 * Script 7, "a.js".  Source positions used below:
 *   2 -> 1:3   6 -> 2:2   11 -> 3:2   12 -> 3:3
 */
static const char a_js[] = "0123\n5678\nabcdef\n";

static struct v8inline_script a_script;

static const struct v8inline_script *script_a(void)
{
	if (!a_script.line_starts) {
		a_script.source = a_js;
		a_script.len = sizeof(a_js) - 1;
		a_script.line_starts = v8inline__line_starts(a_js, a_script.len, &a_script.nlines);
		assert_non_null(a_script.line_starts);
	}
	return &a_script;
}

static const struct v8inline_script *by_id(void *ctx, int id)
{
	(void)ctx;
	return id == 7 ? script_a() : NULL;
}

static const struct v8inline_script *by_name(void *ctx, const char *name)
{
	(void)ctx;
	return strcmp(name, "a.js") ? NULL : script_a();
}

static const struct v8inline_sources sources = { .by_id = by_id, .by_name = by_name };
static const struct v8inline_sources no_sources = { 0 };

static void add_function(struct v8inline *vi, uint64_t sfi, const char *name)
{
	assert_int_equal(v8inline__function(vi, sfi, name, strlen(name)), 0);
}

static int source_info(struct v8inline *vi, const char *fields)
{
	return v8inline__source_info(vi, fields, strlen(fields));
}

/*
 * Code at 0x5000 (script 7) whose own function inlined mid() at position 2,
 * which inlined inner() at position 11.  pc offsets 2.., 10.., 20..: the
 * code's own function, mid, inner.
 */
#define NESTED "0x5000,7,0,100,C2O1C10O6I0C20O12I1,F0O2F1O11I0,S0x200S0x100"

static struct v8inline *nested(void)
{
	struct v8inline *vi = v8inline__new();

	assert_non_null(vi);
	add_function(vi, 0x100, "inner a.js:3:1");
	add_function(vi, 0x200, "mid a.js:2:1");
	assert_int_equal(source_info(vi, NESTED), 1);
	return vi;
}

static void expect_frame(const struct v8inline_frame *f, const char *function, const char *script,
			 uint32_t line, uint32_t column)
{
	assert_string_equal(f->function, function);
	if (script)
		assert_string_equal(f->script, script);
	else
		assert_null(f->script);
	assert_int_equal(f->line, line);
	assert_int_equal(f->column, column);
}

static void test_innermost_first(void **state)
{
	struct v8inline *vi = nested();
	struct v8inline_frame frames[8], outer;

	(void)state;
	/* in inner, inlined into mid, inlined into the code's own function */
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 2);
	expect_frame(&frames[0], "inner", "a.js", 3, 3);
	expect_frame(&frames[1], "mid", "a.js", 3, 2);
	assert_int_equal(outer.line, 1);
	assert_int_equal(outer.column, 3);

	/* the last C entry at or before the offset counts: 10..19 is in mid */
	assert_int_equal(v8inline__stack(vi, 0x5000, 10, &sources, frames, 8, &outer), 1);
	expect_frame(&frames[0], "mid", "a.js", 2, 2);
	assert_int_equal(v8inline__stack(vi, 0x5000, 19, &sources, frames, 8, &outer), 1);
	assert_int_equal(outer.line, 1);
	assert_int_equal(outer.column, 3);

	/* the code's own function, before any entry, and other code: nothing inlined */
	assert_int_equal(v8inline__stack(vi, 0x5000, 5, &sources, frames, 8, &outer), 0);
	assert_int_equal(v8inline__stack(vi, 0x5000, 1, &sources, frames, 8, &outer), 0);
	assert_int_equal(outer.line, 0);
	assert_int_equal(v8inline__stack(vi, 0x5001, 25, &sources, frames, 8, &outer), 0);

	/* at most max frames, innermost kept */
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 1, &outer), 1);
	expect_frame(&frames[0], "inner", "a.js", 3, 3);
	v8inline__free(vi);
}

static void test_without_sources(void **state)
{
	struct v8inline *vi = nested();
	struct v8inline_frame frames[8], outer;

	(void)state;
	/* no source to count lines in: the function's own first line, no column */
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &no_sources, frames, 8, &outer), 2);
	expect_frame(&frames[0], "inner", "a.js", 3, 0);
	expect_frame(&frames[1], "mid", "a.js", 2, 0);
	assert_int_equal(outer.line, 0);
	assert_int_equal(outer.column, 0);
	v8inline__free(vi);
}

static void test_move_and_newest(void **state)
{
	struct v8inline *vi = nested();
	struct v8inline_frame frames[8], outer;

	(void)state;
	v8inline__move(vi, 0x5000, 0x9000);
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 0);
	assert_int_equal(v8inline__stack(vi, 0x9000, 25, &sources, frames, 8, &outer), 2);

	/* new code at the same start: its own inlining wins */
	assert_int_equal(source_info(vi, "0x9000,7,0,100,C0O1C4O12I0,F0O6,S0x100"), 1);
	assert_int_equal(v8inline__stack(vi, 0x9000, 25, &sources, frames, 8, &outer), 1);
	expect_frame(&frames[0], "inner", "a.js", 3, 3);
	assert_int_equal(outer.line, 2);
	assert_int_equal(outer.column, 2);

	/* moved onto newer code: the newer stays; older code moved onto: the moved one wins */
	assert_int_equal(source_info(vi, "0xa000,7,0,100,C0O1C4O2I0,F0O6,S0x100"), 1);
	v8inline__move(vi, 0x9000, 0xa000);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 1);
	expect_frame(&frames[0], "inner", "a.js", 1, 3);
	assert_int_equal(v8inline__stack(vi, 0x9000, 25, &sources, frames, 8, &outer), 0);
	assert_int_equal(source_info(vi, "0xb000,7,0,100,C0O1C4O11I0,F0O6,S0x100"), 1);
	v8inline__move(vi, 0xb000, 0xa000);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 1);
	expect_frame(&frames[0], "inner", "a.js", 3, 2);
	/* a move from where nothing is, or onto itself */
	v8inline__move(vi, 0xc000, 0xa000);
	v8inline__move(vi, 0xa000, 0xa000);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 1);

	v8inline__clear(vi);
	assert_int_equal(v8inline__stack(vi, 0x9000, 25, &sources, frames, 8, &outer), 0);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 0);
	v8inline__free(vi);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A code log with 100,000 inlining code objects, each moved once, then
 * looked up: each move and lookup costs one index probe.  Scanning every
 * entry per move took 44 s for this; the bound leaves room for sanitizers
 * on a busy machine.
 */
static void test_many_moves(void **state)
{
	enum { N = 100000 };
	struct v8inline *vi = v8inline__new();
	struct v8inline_frame frames[8], outer;
	char line[128];
	double t0;

	(void)state;
	assert_non_null(vi);
	t0 = now_s();
	for (unsigned int i = 0; i < N; i++) {
		snprintf(line, sizeof(line), "0x%x,7,0,100,C0O1C4O11I0,F0O6,S0x%x",
			 0x100000 + i * 0x100, 0x9000000 + i);
		assert_int_equal(source_info(vi, line), 1);
		snprintf(line, sizeof(line), "f%u a.js:3:1", i);
		add_function(vi, 0x9000000 + i, line);
	}
	for (unsigned int i = 0; i < N; i++)
		v8inline__move(vi, 0x100000 + i * 0x100, 0x40000000 + i * 0x100);
	for (unsigned int i = 0; i < N; i++) {
		assert_int_equal(v8inline__stack(vi, 0x40000000 + i * 0x100, 5, &sources, frames, 8,
						 &outer), 1);
		assert_int_equal(frames[0].line, 3);
	}
	assert_int_equal(v8inline__stack(vi, 0x100000, 5, &sources, frames, 8, &outer), 0);
	print_message("100000 code objects, moves and lookups: %.2f s\n", now_s() - t0);
	assert_true(now_s() - t0 < 10.0);
	v8inline__free(vi);
}

/* New code at a start without a table of its own (v8inline__drop()) inherits nothing. */
static void test_drop(void **state)
{
	struct v8inline *vi = nested();
	struct v8inline_frame frames[8], outer;

	(void)state;
	v8inline__drop(vi, 0x4000);
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 2);
	v8inline__drop(vi, 0x5000);
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 0);
	/* the next code there brings its own */
	assert_int_equal(source_info(vi, NESTED), 1);
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 2);
	v8inline__free(vi);
}

/* An SFI address names the function it held when the code was logged. */
static void test_sfi_reuse_and_move(void **state)
{
	struct v8inline *vi = nested();
	struct v8inline_frame frames[8], outer;

	(void)state;
	/* the SFIs die and others take their addresses: 0x5000's frames keep their names */
	add_function(vi, 0x100, "other a.js:1:1");
	add_function(vi, 0x200, "other2 a.js:1:1");
	assert_int_equal(v8inline__stack(vi, 0x5000, 25, &sources, frames, 8, &outer), 2);
	assert_string_equal(frames[0].function, "inner");
	assert_string_equal(frames[1].function, "mid");
	/* code logged now names the new ones */
	assert_int_equal(source_info(vi, "0x9000,7,0,100,C0O1C4O12I0,F0O6,S0x100"), 1);
	assert_int_equal(v8inline__stack(vi, 0x9000, 25, &sources, frames, 8, &outer), 1);
	assert_string_equal(frames[0].function, "other");
	/* a moved SFI keeps its name at its new address, and leaves none behind */
	assert_int_equal(v8inline__sfi_move(vi, 0x100, 0x300), 0);
	assert_int_equal(source_info(vi, "0xa000,7,0,100,C0O1C4O12I0,F0O6,S0x300"), 1);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 1);
	assert_string_equal(frames[0].function, "other");
	assert_int_equal(source_info(vi, "0xb000,7,0,100,C0O1C4O12I0,F0O6,S0x100"), 1);
	assert_int_equal(v8inline__stack(vi, 0xb000, 25, &sources, frames, 8, &outer), 0);
	/* a function logged after the code that inlined it is found at lookup */
	add_function(vi, 0x100, "late a.js:3:1");
	assert_int_equal(v8inline__stack(vi, 0xb000, 25, &sources, frames, 8, &outer), 1);
	assert_string_equal(frames[0].function, "late");
	/* the same name again adds nothing; moves from nowhere or onto itself change nothing */
	add_function(vi, 0x100, "late a.js:3:1");
	assert_int_equal(v8inline__sfi_move(vi, 0x777, 0x888), 0);
	assert_int_equal(v8inline__sfi_move(vi, 0x300, 0x300), 0);
	assert_int_equal(v8inline__stack(vi, 0xa000, 25, &sources, frames, 8, &outer), 1);
	v8inline__free(vi);
}

/* Line starts: a position's line is found by binary search; a NUL or a final newline counts. */
static void test_line_starts(void **state)
{
	static const char src[] = "a\n\nbc\0d\n";
	struct v8inline_script sc = { .source = src, .len = sizeof(src) - 1 };
	uint32_t *starts;

	(void)state;
	starts = v8inline__line_starts(src, sc.len, &sc.nlines);
	assert_non_null(starts);
	assert_int_equal(sc.nlines, 4);
	assert_int_equal(starts[1], 2);
	assert_int_equal(starts[2], 3);
	assert_int_equal(starts[3], 8);
	free(starts);
	starts = v8inline__line_starts("", 0, &sc.nlines);
	assert_non_null(starts);
	assert_int_equal(sc.nlines, 1);
	free(starts);
}

static void test_unknown_and_malformed(void **state)
{
	static const char *const malformed[] = {
		"5000,7,0,100,C2O1,F0O2,S0x200",	/* start without 0x */
		"0xzz,7,0,100,C2O1,F0O2,S0x200",
		"0x5000,x,0,100,C2O1,F0O2,S0x200",	/* script id */
		"0x5000,7,0,100,C2X1,F0O2,S0x200",	/* C entry */
		"0x5000,7,0,100,C2O1,F0O2I,S0x200",	/* F entry */
		"0x5000,7,0,100,C2O1,F0O2,0x200",	/* S entry */
		"0x5000,7,0,100,C2O1,F0O2",		/* no S field */
		"0x5000",
	};
	struct v8inline *vi = v8inline__new();
	struct v8inline_frame frames[8], outer;
	int n;

	(void)state;
	assert_non_null(vi);
	add_function(vi, 0x200, "mid a.js:2:1");
	/* an SFI of 0 names nothing */
	assert_int_equal(v8inline__function(vi, 0, "x a.js:1:1", 10), 0);
	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		print_message("%s\n", malformed[i]);
		assert_int_equal(source_info(vi, malformed[i]), 0);
		assert_int_equal(v8inline__stack(vi, 0x5000, 5, &sources, frames, 8, &outer), 0);
	}
	/* code that inlined nothing is used, and adds no frame */
	assert_int_equal(source_info(vi, "0x6000,7,0,100,C0O1C4O2,,"), 1);
	assert_int_equal(v8inline__stack(vi, 0x6000, 5, &sources, frames, 8, &outer), 0);

	/* a function no code-creation named, an inlining id or function out of range */
	assert_int_equal(source_info(vi, "0x7000,7,0,100,C0O1I0,F0O2,S0x999"), 1);
	assert_int_equal(v8inline__stack(vi, 0x7000, 5, &sources, frames, 8, &outer), 0);
	assert_int_equal(source_info(vi, "0x7100,7,0,100,C0O1I3,F0O2,S0x200"), 1);
	assert_int_equal(v8inline__stack(vi, 0x7100, 5, &sources, frames, 8, &outer), 0);
	assert_int_equal(source_info(vi, "0x7200,7,0,100,C0O1I0,F4O2,S0x200"), 1);
	assert_int_equal(v8inline__stack(vi, 0x7200, 5, &sources, frames, 8, &outer), 0);

	/* an inlining chain that loops ends: no more steps than the table has entries */
	assert_int_equal(source_info(vi, "0x7300,7,0,100,C0O1I0,F0O2I0,S0x200"), 1);
	n = v8inline__stack(vi, 0x7300, 5, &sources, frames, 8, &outer);
	assert_true(n >= 1 && n <= 2);
	expect_frame(&frames[0], "mid", "a.js", 1, 2);
	v8inline__free(vi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_innermost_first),
		cmocka_unit_test(test_without_sources),
		cmocka_unit_test(test_move_and_newest),
		cmocka_unit_test(test_many_moves),
		cmocka_unit_test(test_drop),
		cmocka_unit_test(test_sfi_reuse_and_move),
		cmocka_unit_test(test_line_starts),
		cmocka_unit_test(test_unknown_and_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
