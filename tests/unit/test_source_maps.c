// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/source_maps and remap_pprof over a real
 * esbuild map (tests/fixtures/sourcemaps/esbuild_min/: a TypeScript app
 * bundled with --minify): a JS function as V8 places it ("c" at the '(' of
 * its parameters, worker.js:1:11) maps to its TypeScript name, file and
 * line, a sampled position to its own line; a profile taken without the
 * map is renamed afterwards, keeping the generated name and position in
 * system_name, and a profile renamed once is left alone the second time;
 * scripts without a map, and runtime scripts, are not looked up.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "user/attribute/remap_pprof.h"
#include "user/attribute/source_maps.h"
#include "temp_dir.h"

#define FIXTURE "tests/fixtures/sourcemaps/esbuild_min/"

/* A directory holding the fixture's map as DIR/worker.js.map. */
static int setup(void **state)
{
	uint8_t *map;
	size_t len;
	char path[256];
	FILE *f;

	if (make_dir(state))
		return -1;
	if (fileio__read_all(FIXTURE "worker.js.map", 0, &map, &len))
		return -1;
	snprintf(path, sizeof(path), "%s/worker.js.map", (char *)*state);
	f = fopen(path, "w");
	if (!f || fwrite(map, 1, len, f) != len || fclose(f)) {
		free(map);
		return -1;
	}
	free(map);
	return 0;
}

static struct source_maps *maps_in(const char *dir)
{
	struct source_maps_opts o = { .dir = dir };
	struct source_maps *sms = source_maps__new(&o);

	assert_non_null(sms);
	return sms;
}

static void test_map_frame(void **state)
{
	struct source_maps *sms = maps_in(*state);
	struct source_frame fn = { .function = "c", .fn_line = 1, .fn_column = 11 };
	struct source_origin o;
	struct source_map_status st;

	assert_int_equal(source_maps__map(sms, 0, 0, "worker.js", &fn, &o), 1);
	assert_string_equal(o.function, "computeCompoundInterest");
	assert_string_equal(o.file, "src/pricing.ts");
	assert_int_equal(o.start_line, 7);
	assert_int_equal(o.line, 7);
	/* a sample inside it: "e=e*(1+t/2e3)" is the loop's body, line 10 */
	fn.at_line = 1;
	fn.at_column = 52;
	assert_int_equal(source_maps__map(sms, 0, 0, "worker.js", &fn, &o), 1);
	assert_int_equal(o.start_line, 7);
	assert_int_equal(o.line, 10);
	/* a name the bundler kept has no entry in names: V8's stays */
	fn = (struct source_frame){ .function = "marginalTaxFor", .fn_line = 1, .fn_column = 145 };
	assert_int_equal(source_maps__map(sms, 0, 0, "worker.js", &fn, &o), 1);
	assert_string_equal(o.function, "marginalTaxFor");
	assert_string_equal(o.file, "src/pricing.ts");
	assert_int_equal(o.start_line, 19);
	/* tokenizeInvoiceLines: "function i(" */
	fn = (struct source_frame){ .function = "i", .fn_line = 1, .fn_column = 260 };
	assert_int_equal(source_maps__map(sms, 0, 0, "worker.js", &fn, &o), 1);
	assert_string_equal(o.function, "tokenizeInvoiceLines");
	assert_string_equal(o.file, "src/text.ts");
	/* one script looked up, once, with the map from DIR, not checked (no text) */
	assert_int_equal(source_maps__count(sms), 1);
	source_maps__status(sms, 0, &st);
	assert_non_null(st.where);
	assert_non_null(strstr(st.where, "/worker.js.map"));
	assert_false(st.checked);
	assert_int_equal(st.sources, 3);
	assert_int_equal(st.mapped, 4);
	assert_null(st.problem);
	source_maps__free(sms);
}

static void test_no_map(void **state)
{
	struct source_maps *sms = maps_in(*state);
	struct source_frame fn = { .function = "f", .fn_line = 1, .fn_column = 11 };
	struct source_origin o;
	struct source_map_status st;

	/* no DIR/other.js.map: noted, since DIR was given */
	assert_int_equal(source_maps__map(sms, 0, 0, "other.js", &fn, &o), 0);
	assert_int_equal(source_maps__count(sms), 1);
	source_maps__status(sms, 0, &st);
	assert_null(st.where);
	assert_non_null(st.problem);
	assert_non_null(strstr(st.problem, "no source map for it in"));
	/* the runtime's own scripts are never looked up */
	assert_int_equal(source_maps__map(sms, 0, 0, "node:internal/main", &fn, &o), 0);
	assert_int_equal(source_maps__map(sms, 0, 0, "workerd:per-isolate/main", &fn, &o), 0);
	assert_int_equal(source_maps__count(sms), 1);
	/* no position, no map */
	fn.fn_line = 0;
	assert_int_equal(source_maps__map(sms, 0, 0, "worker.js", &fn, &o), 0);
	source_maps__free(sms);
}

/* A malformed map in DIR: reported with where it breaks, frames unchanged. */
static void test_malformed_map(void **state)
{
	struct source_maps_opts o = { .dir = *state };
	struct source_frame fn = { .function = "c", .fn_line = 1, .fn_column = 11 };
	struct source_origin out;
	struct source_map_status st;
	struct source_maps *sms;
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/bad.js.map", (char *)*state);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"version\":3,\"sources\":[\"a.ts\"],\"names\":[],\"mappings\":\"AAAA,C!\"}", f);
	fclose(f);
	sms = source_maps__new(&o);
	assert_non_null(sms);
	assert_int_equal(source_maps__map(sms, 0, 0, "bad.js", &fn, &out), 0);
	source_maps__status(sms, 0, &st);
	assert_null(st.where);
	assert_non_null(st.problem);
	assert_non_null(strstr(st.problem, "not a usable source map"));
	source_maps__free(sms);
}

static void test_position(void **state)
{
	const char *script;
	size_t len;
	uint32_t line, col;

	(void)state;
	assert_true(remap_pprof__position("JS:*c worker.js:1:11", &script, &len, &line, &col));
	assert_int_equal(len, 9);
	assert_memory_equal(script, "worker.js", 9);
	assert_int_equal(line, 1);
	assert_int_equal(col, 11);
	assert_true(remap_pprof__position("fetch /srv/a b.js:12:3", &script, &len, &line, &col));
	assert_memory_equal(script, "b.js", 4);
	assert_false(remap_pprof__position("fib", &script, &len, &line, &col));
	assert_false(remap_pprof__position("v8::internal::Foo(int)", &script, &len, &line, &col));
	assert_false(remap_pprof__position("x a.js:0:3", &script, &len, &line, &col));
	assert_false(remap_pprof__position("a.js:1:3", &script, &len, &line, &col));
	assert_false(remap_pprof__position("x :1:3", &script, &len, &line, &col));
}

/* A profile as record writes it without maps: c, at worker.js:1:11, sampled at 1:52. */
static void build_profile(uint8_t **out, size_t *len)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_line ln = { 0 };
	uint64_t loc;
	int64_t v = 1;

	assert_non_null(b);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	ln.function_id = pprof_builder__function(b, "c", "JS:*c worker.js:1:11", "worker.js", 1);
	ln.line = 1;
	ln.column = 52;
	loc = pprof_builder__location(b, 0, 0x1000, &ln, 1);
	assert_true(loc != 0);
	assert_int_equal(pprof_builder__add_sample(b, &loc, 1, &v, 1, NULL, 0), 0);
	assert_int_equal(pprof_builder__serialize(b, false, out, len), 0);
	pprof_builder__free(b);
}

static void test_remap_profile(void **state)
{
	struct source_maps *sms = maps_in(*state);
	uint8_t *raw, *mapped, *again;
	size_t len, mlen, alen, n;
	struct pprof_profile *p;
	struct pprof_stack st = { 0 };
	char err[256];

	build_profile(&raw, &len);
	assert_int_equal(remap_pprof__apply(sms, raw, len, &mapped, &mlen, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(pprof_profile__parse(mapped, mlen, &p, err, sizeof(err)), 0);
	assert_int_equal(pprof_profile__stack(p, 0, &st), 0);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.frames[0]->name, "computeCompoundInterest");
	assert_string_equal(st.frames[0]->filename, "src/pricing.ts");
	assert_string_equal(st.frames[0]->system_name, "JS:*c worker.js:1:11");
	assert_int_equal(st.frames[0]->start_line, 7);
	assert_int_equal(st.frames[0]->line, 10);
	pprof_stack__release(&st);
	pprof_profile__free(p);
	/* mapped once is mapped: the file is no longer the script of its system name */
	assert_int_equal(remap_pprof__apply(sms, mapped, mlen, &again, &alen, &n, err, sizeof(err)),
			 0);
	assert_int_equal(n, 0);
	free(again);
	/* not a profile: the reader's word for it */
	assert_int_equal(remap_pprof__apply(sms, (const uint8_t *)"\xff\xff\xff", 3, &again, &alen,
					    &n, err, sizeof(err)),
			 -EBADMSG);
	free(raw);
	free(mapped);
	source_maps__free(sms);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_frame),
		cmocka_unit_test(test_no_map),
		cmocka_unit_test(test_malformed_map),
		cmocka_unit_test(test_position),
		cmocka_unit_test(test_remap_profile),
	};

	return cmocka_run_group_tests(tests, setup, remove_dir);
}
