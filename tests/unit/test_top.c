// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The pieces of `isoprof top` that port pprof's Go code: value formatting
 * (top_units, pprof's internal/measurement) and names and paths (top_names,
 * Go's filepath and pprof's symbolizer).  The expected strings are what
 * the Go code prints; tests/e2e/top_vs_pprof.sh compares whole tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto/pprof_reader.h"
#include "user/report/top_names.h"
#include "user/report/top_units.h"

static void test_labels(void **state)
{
	static const struct {
		int64_t v;
		const char *from, *to, *want;
	} cases[] = {
		{ 1500000000, "nanoseconds", "minimum", "1.50s" },
		{ 10000000, "nanoseconds", "minimum", "10ms" },
		{ 10000000, "nanoseconds", "s", "0.01s" },
		{ 999, "nanoseconds", "minimum", "999ns" },
		{ 0, "nanoseconds", "minimum", "0" },
		{ -2500000, "nanoseconds", "minimum", "-2.50ms" },
		{ 7200000000000, "nanoseconds", "minimum", "2hrs" },
		{ 2048, "bytes", "minimum", "2kB" },
		{ 3 << 20, "bytes", "minimum", "3MB" },
		{ 12, "count", "minimum", "12" },
		{ 12, "samples", "minimum", "12" },
		{ 12, "widgets", "widgets", "12widgets" },
	};
	char buf[64];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		assert_string_equal(top_units__label(cases[i].v, cases[i].from, cases[i].to, buf,
						     sizeof(buf)),
				    cases[i].want);
}

static void test_scale(void **state)
{
	const char *unit;

	(void)state;
	assert_true(top_units__scale(1500, "microseconds", "minimum", &unit) == 1.5);
	assert_string_equal(unit, "ms");
	assert_true(top_units__scale(1, "s", "ms", &unit) == 1000);
	assert_string_equal(unit, "ms");
	assert_true(top_units__scale(5, "count", "minimum", &unit) == 5);
	assert_string_equal(unit, "");
}

static void test_percentage(void **state)
{
	char buf[32];

	(void)state;
	assert_string_equal(top_units__percentage(1, 1, buf, sizeof(buf)), "  100%");
	assert_string_equal(top_units__percentage(-1, 1, buf, sizeof(buf)), "  100%");
	assert_string_equal(top_units__percentage(1234, 10000, buf, sizeof(buf)), "12.34%");
	assert_string_equal(top_units__percentage(42, 100000, buf, sizeof(buf)), "0.042%");
	assert_string_equal(top_units__percentage(5, 0, buf, sizeof(buf)), "    0%");
}

static void test_paths(void **state)
{
	static const char *const clean[][2] = {
		{ "", "." },	      { "a/../b", "b" },     { "/../x", "/x" },
		{ "../../a", "../../a" }, { "a//b/./c/", "a/b/c" }, { "/", "/" },
		{ "a/b/../..", "." }, { "./x.js", "x.js" },
	};
	char buf[64], *s;

	(void)state;
	for (size_t i = 0; i < sizeof(clean) / sizeof(clean[0]); i++) {
		s = top_names__path_clean(clean[i][0]);
		assert_non_null(s);
		assert_string_equal(s, clean[i][1]);
		free(s);
	}
	assert_string_equal(top_names__path_base("/a/b/", buf, sizeof(buf)), "b");
	assert_string_equal(top_names__path_base("", buf, sizeof(buf)), ".");
	assert_string_equal(top_names__path_base("//", buf, sizeof(buf)), "/");
	assert_string_equal(top_names__path_base("node", buf, sizeof(buf)), "node");
	assert_string_equal(top_names__trim_path("/proc/self/cwd/./src/x.js"), "src/x.js");
	assert_string_equal(top_names__trim_path("/proc/self/cwd/x.js"), "x.js");
	assert_string_equal(top_names__trim_path("/srv/x.js"), "/srv/x.js");
}

/* The name pprof prints for a frame named name with system name sys. */
static char *shown(const char *name, const char *sys)
{
	struct pprof_frame f = {
		.name = name, .system_name = sys, .filename = "", .mapping_file = "",
		.has_function = true,
	};
	char *out = NULL;

	assert_int_equal(top_names__frame(&f, &out), 0);
	return out ? out : strdup(name);
}

static void test_frame_names(void **state)
{
	static const char *const cases[][3] = {
		/* name, system name, shown */
		{ "_ZN2v88internal7Isolate4InitEv", "_ZN2v88internal7Isolate4InitEv",
		  "v8::internal::Isolate::Init" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi", "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector::push_back" },
		{ "std::map<int, int>::find(int const&)", "std::map<int, int>::find(int const&)",
		  "std::map::find" },
		{ "", "uv_run", "uv_run" },
		{ "fib", "fib", "fib" },
		/* a name of its own (JS) is left alone */
		{ "handler", "_ZN2v88internal7Isolate4InitEv", "handler" },
		/* Java's <init> and Go's (*T[...]).M are not C++ */
		{ "Foo.<init>", "Foo.<init>", "Foo.<init>" },
	};
	char *s;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		s = shown(cases[i][0], cases[i][1]);
		assert_non_null(s);
		assert_string_equal(s, cases[i][2]);
		free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_percentage),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_frame_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
