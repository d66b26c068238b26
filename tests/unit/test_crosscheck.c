// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crosscheck tests: small profiles in isoprof's and V8's conventions,
 * built with the pprof builder and read back, and the numbers the report
 * must come to (worked out by hand in each test).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "user/v8/crosscheck.h"
#include "user/v8/crosscheck_int.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"

#define V8_COMMENT "source: V8 CPU profiler (.cpuprofile), test"

static struct pprof_builder *new_profile(bool v8)
{
	struct pprof_builder *b = pprof_builder__new();

	assert_non_null(b);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	pprof_builder__set_period(b, "cpu", "nanoseconds", 1000000);
	pprof_builder__set_time(b, 1700000000000000000LL, 2000000000LL);
	if (v8)
		assert_int_equal(pprof_builder__add_comment(b, V8_COMMENT), 0);
	else
		assert_int_equal(pprof_builder__add_comment(b, "isoprof record --pid 1"), 0);
	return b;
}

static uint64_t loc_lines(struct pprof_builder *b, const struct pprof_line *lines, size_t n)
{
	uint64_t id = pprof_builder__location(b, 0, 0, lines, n);

	assert_int_not_equal(id, 0);
	return id;
}

/* A JS function as isoprof names it from the perf map. */
static uint64_t js(struct pprof_builder *b, const char *name, const char *file, int64_t line)
{
	char sys[256];
	struct pprof_line l = { .line = line };

	snprintf(sys, sizeof(sys), "JS:*%s %s:%lld:1", strcmp(name, "(anonymous)") ? name : "",
		 file, (long long)line);
	l.function_id = pprof_builder__function(b, name, sys, file, line);
	assert_int_not_equal(l.function_id, 0);
	return loc_lines(b, &l, 1);
}

/* A JS function as the V8-derived profile names it (system name = function name). */
static uint64_t v8js(struct pprof_builder *b, const char *name, const char *url, int64_t line)
{
	struct pprof_line l = { .line = line };

	l.function_id = pprof_builder__function(b, name, name, url, line);
	assert_int_not_equal(l.function_id, 0);
	return loc_lines(b, &l, 1);
}

/* Native, kernel, builtin and synthetic frames: no file name. */
static uint64_t named(struct pprof_builder *b, const char *name)
{
	struct pprof_line l = { 0 };

	l.function_id = pprof_builder__function(b, name, name, NULL, 0);
	assert_int_not_equal(l.function_id, 0);
	return loc_lines(b, &l, 1);
}

/* Optimized code of outer with inner inlined: lines[0] is the inlined callee. */
static uint64_t inlined(struct pprof_builder *b, const char *inner, const char *inner_file,
			const char *outer, const char *outer_file)
{
	char sys[256];
	struct pprof_line l[2] = { { .line = 5 }, { .line = 20 } };

	l[0].function_id = pprof_builder__function(b, inner, inner, inner_file, 0);
	snprintf(sys, sizeof(sys), "JS:*%s %s:18:1", outer, outer_file);
	l[1].function_id = pprof_builder__function(b, outer, sys, outer_file, 18);
	assert_int_not_equal(l[0].function_id, 0);
	assert_int_not_equal(l[1].function_id, 0);
	return loc_lines(b, l, 2);
}

struct who {
	const char *cls;
	int64_t tid;		/* 0: no tid/thread labels */
	const char *thread;
	const char *isolate;
};

static void add(struct pprof_builder *b, const struct who *w, int64_t count, size_t n, ...)
{
	uint64_t locs[16];
	struct pprof_label labels[4];
	size_t nl = 0;
	int64_t values[2] = { count, count * 1000000 };
	va_list ap;

	assert_true(n <= 16);
	va_start(ap, n);
	for (size_t i = 0; i < n; i++)
		locs[i] = va_arg(ap, uint64_t);
	va_end(ap);
	if (w->cls)
		labels[nl++] = (struct pprof_label){ .key = "class", .str = w->cls };
	if (w->tid) {
		labels[nl++] = (struct pprof_label){ .key = "tid", .num = w->tid };
		labels[nl++] = (struct pprof_label){ .key = "thread", .str = w->thread };
	}
	if (w->isolate)
		labels[nl++] = (struct pprof_label){ .key = "isolate", .str = w->isolate };
	assert_int_equal(pprof_builder__add_sample(b, locs, n, values, 2, labels, nl), 0);
}

static struct pprof_profile *finish(struct pprof_builder *b)
{
	struct pprof_profile *p = NULL;
	uint8_t *buf = NULL;
	size_t len = 0;
	char err[256] = "";

	assert_int_equal(pprof_builder__serialize(b, true, &buf, &len), 0);
	pprof_builder__free(b);
	if (pprof_profile__parse(buf, len, &p, err, sizeof(err)))
		fail_msg("parse: %s", err);
	free(buf);
	return p;
}

static const struct who MAIN_JS = { "js", 100, "node", "0x1000" };
static const struct who V8_JS = { "js", 0, NULL, NULL };

/* isoprof: A 60, B 30, C 10; V8: A 50, B 40, D 10 (all in two.js). */
static void build_pair(struct pprof_profile **iso, struct pprof_profile **v8)
{
	struct pprof_builder *b = new_profile(false);

	add(b, &MAIN_JS, 60, 1, js(b, "A", "/srv/x/two.js", 1));
	add(b, &MAIN_JS, 30, 1, js(b, "B", "/srv/x/two.js", 5));
	add(b, &MAIN_JS, 10, 1, js(b, "C", "/srv/x/two.js", 9));
	*iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 50, 1, v8js(b, "A", "file:///srv/x/two.js", 1));
	add(b, &V8_JS, 40, 1, v8js(b, "B", "file:///srv/x/two.js", 5));
	add(b, &V8_JS, 10, 1, v8js(b, "D", "file:///srv/x/two.js", 13));
	*v8 = finish(b);
}

static struct json_object *report_json(const struct crosscheck_report *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct json_object *o;

	assert_non_null(f);
	assert_int_equal(crosscheck__print_json(r, f), 0);
	fclose(f);
	o = json_tokener_parse(text);
	if (!o)
		fail_msg("not JSON: %s", text);
	free(text);
	return o;
}

static struct json_object *get(struct json_object *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k; k = strtok_r(NULL, ".", &save)) {
		struct json_object *next;

		if (json_object_is_type(o, json_type_array))
			next = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &next))
			next = NULL;
		if (!next)
			fail_msg("no %s in the report (at %s)", path, k);
		o = next;
	}
	return o;
}

static double num(struct json_object *o, const char *path)
{
	return json_object_get_double(get(o, path));
}

static const char *str(struct json_object *o, const char *path)
{
	return json_object_get_string(get(o, path));
}

static void test_tvd_rho_and_one_side(void **state)
{
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct crosscheck_opts o = { .top = 2 };
	struct json_object *j;
	char err[256] = "";

	(void)state;
	build_pair(&iso, &v8);
	if (crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	/* 0.5 * (0.1 + 0.1 + 0.1 + 0.1) */
	assert_float_equal(crosscheck_report__tvd(r), 0.2, 1e-9);
	/* ranks A 1 1, B 2 2, C 3 4, D 4 3: 1 - 6 * 2 / (4 * 15) */
	assert_float_equal(crosscheck_report__spearman(r), 0.8, 1e-9);
	/*
	 * 10 samples of C and none of D, and the reverse: a shuffle of the 200
	 * rarely splits both that unevenly, so beyond noise even at 100 a side
	 */
	assert_true(crosscheck_report__noise_floor(r) > 0.05);
	assert_true(crosscheck_report__noise_floor(r) + 0.03 < 0.2);
	assert_false(crosscheck_report__agree(r));
	assert_non_null(strstr(crosscheck_report__verdict(r), "disagree: TVD 0.200 > "));
	/* "file://" and directories are dropped: the two sides' A are one function */
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_ISOPROF), "A (two.js)");
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_V8), "A (two.js)");

	j = report_json(r);
	assert_int_equal(json_object_array_length(get(j, "isoprof.only_here")), 1);
	assert_string_equal(str(j, "isoprof.only_here.0.function"), "C");
	assert_float_equal(num(j, "isoprof.only_here.0.isoprof_share"), 0.1, 1e-9);
	assert_int_equal(json_object_array_length(get(j, "v8.only_here")), 1);
	assert_string_equal(str(j, "v8.only_here.0.function"), "D");
	assert_float_equal(num(j, "v8.only_here.0.v8_share"), 0.1, 1e-9);
	/* --top 2: A and B on both sides, so two rows */
	assert_int_equal(json_object_array_length(get(j, "functions")), 2);
	assert_int_equal(json_object_array_length(get(j, "isoprof.top")), 2);
	assert_string_equal(str(j, "functions.1.function"), "B");
	assert_float_equal(num(j, "functions.1.isoprof_share"), 0.3, 1e-9);
	assert_float_equal(num(j, "functions.1.v8_share"), 0.4, 1e-9);
	/* 30 of 100 against 40 of 100: -10 points, within noise */
	assert_float_equal(num(j, "functions.1.diff_pp"), -10, 1e-9);
	assert_true(num(j, "functions.1.diff_pp_interval.0") < -10);
	assert_true(num(j, "functions.1.diff_pp_interval.1") > 0);
	assert_false(json_object_get_boolean(get(j, "functions.1.significant")));
	assert_float_equal(num(j, "noise_floor"), crosscheck_report__noise_floor(r), 1e-12);
	assert_float_equal(num(j, "tvd_threshold"), num(j, "noise_floor") + 0.03, 1e-12);
	assert_int_equal(json_object_get_int(get(j, "noise.resamples")), 400);
	assert_true(num(j, "noise.median") <= num(j, "noise.floor"));
	assert_false(json_object_get_boolean(get(j, "top_differs_beyond_noise")));
	assert_int_equal(json_object_get_int(get(j, "isoprof.samples")), 100);
	assert_float_equal(num(j, "isoprof.rate_hz"), 50.0, 1e-9);	/* 100 in 2 s */
	assert_false(json_object_get_boolean(get(j, "agree")));
	/* the key numbers (record --json): the same values under the same names */
	{
		static const char *const same[] = { "verdict", "agree", "agree_physical",
						    "agree_no_osr", "tvd", "noise_floor",
						    "tvd_threshold", "spearman", "top_isoprof",
						    "top_v8", "same_top", "v8_deopt_inflated" };
		struct json_object *k = crosscheck__key_json(r);

		assert_non_null(k);
		for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
			assert_string_equal(json_object_to_json_string(get(k, same[i])),
					    json_object_to_json_string(get(j, same[i])));
		assert_int_equal(json_object_get_int(get(k, "isoprof_js_samples")),
				 json_object_get_int(get(j, "isoprof.js_samples")));
		assert_int_equal(json_object_get_int(get(k, "v8_js_samples")), 100);
		assert_int_equal(json_object_object_length(k), sizeof(same) / sizeof(same[0]) + 2);
		json_object_put(k);
	}
	json_object_put(j);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

static void test_rho_ties_and_small_sets(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	char err[256] = "";

	(void)state;
	/* isoprof A 40, B 40, C 20: ranks 1.5 1.5 3; V8 A 50, B 30, C 20: 1 2 3 */
	add(b, &MAIN_JS, 40, 1, js(b, "A", "t.js", 1));
	add(b, &MAIN_JS, 40, 1, js(b, "B", "t.js", 2));
	add(b, &MAIN_JS, 20, 1, js(b, "C", "t.js", 3));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 50, 1, v8js(b, "A", "t.js", 1));
	add(b, &V8_JS, 30, 1, v8js(b, "B", "t.js", 2));
	add(b, &V8_JS, 20, 1, v8js(b, "C", "t.js", 3));
	v8 = finish(b);
	if (crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	/* dx -.5 -.5 1, dy -1 0 1: 1.5 / sqrt(1.5 * 2) */
	assert_float_equal(crosscheck_report__spearman(r), 1.5 / sqrt(3.0), 1e-9);
	/* 0.5 * (0.1 + 0.1 + 0) */
	assert_float_equal(crosscheck_report__tvd(r), 0.1, 1e-9);
	/* A and B tie at 40 on isoprof's side: the name breaks the tie */
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_ISOPROF), "A (t.js)");
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);

	/* two functions: no correlation */
	b = new_profile(false);
	add(b, &MAIN_JS, 40, 1, js(b, "A", "t.js", 1));
	add(b, &MAIN_JS, 10, 1, js(b, "B", "t.js", 2));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 10, 1, v8js(b, "A", "t.js", 1));
	add(b, &V8_JS, 40, 1, v8js(b, "B", "t.js", 2));
	v8 = finish(b);
	if (crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	assert_true(isnan(crosscheck_report__spearman(r)));
	assert_float_equal(crosscheck_report__tvd(r), 0.6, 1e-9);
	assert_false(crosscheck_report__agree(r));
	assert_non_null(strstr(crosscheck_report__verdict(r), "disagree: TVD 0.600 > "));
	/* 40 to 10 on one side, 10 to 40 on the other: each side is sure of its own */
	assert_non_null(strstr(crosscheck_report__verdict(r),
			       "), and the top JS function differs beyond noise "
			       "(isoprof: A (t.js), V8: B (t.js))"));
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/*
 * Which samples count, and for which function.  isoprof side, all on the
 * isolate's thread:
 *   2  js          foo                                   -> foo
 *   3  v8-builtin  Builtin:ArrayPrototypePush <- foo     -> foo
 *   4  v8-builtin  Builtins_StringAdd_CheckNone <- bar   -> bar
 *   5  js          (bar inlined into foo)                -> bar
 *   6  js          (baz, no script, inlined into foo)    -> baz
 *   7  v8-builtin  Builtin:CallApiCallback <- node::Fs <- foo  -> none (native)
 *   8  v8-runtime  v8::internal::Runtime_X <- foo        -> none (class)
 *   9  js          [jit] <unknown> <- foo                -> none (unnamed)
 *  10  kernel      do_syscall_64 <- foo                  -> none (class)
 *  11  v8-builtin  LoadIC: <- (anonymous) at line 30     -> (anonymous):30
 * JS samples: 2+3+4+5+6+11 = 31; unattributed (js / v8-builtin): 7+9 = 16.
 */
static void test_js_attribution(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct who builtin = MAIN_JS, runtime = MAIN_JS, kernel = MAIN_JS;
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct json_object *j, *fns;
	char err[256] = "";
	uint64_t foo;
	double share[5] = { 0 };
	const char *names[5] = { "foo", "bar", "baz", "(anonymous)", "(anonymous)" };

	(void)state;
	builtin.cls = "v8-builtin";
	runtime.cls = "v8-runtime";
	kernel.cls = "kernel";
	foo = js(b, "foo", "/srv/app.js", 10);
	add(b, &MAIN_JS, 2, 1, foo);
	add(b, &builtin, 3, 2, named(b, "Builtin:ArrayPrototypePush"), foo);
	add(b, &builtin, 4, 2, named(b, "Builtins_StringAdd_CheckNone"),
	    js(b, "bar", "/srv/app.js", 2));
	add(b, &MAIN_JS, 5, 1, inlined(b, "bar", "/srv/app.js", "foo", "/srv/app.js"));
	add(b, &MAIN_JS, 6, 1, inlined(b, "baz", NULL, "foo", "/srv/app.js"));
	add(b, &builtin, 7, 3, named(b, "Builtin:CallApiCallback"), named(b, "node::Fs"), foo);
	add(b, &runtime, 8, 2, named(b, "v8::internal::Runtime_X"), foo);
	add(b, &MAIN_JS, 9, 2, named(b, "[jit] <unknown>"), foo);
	add(b, &kernel, 10, 2, named(b, "do_syscall_64"), foo);
	add(b, &builtin, 11, 2, named(b, "LoadIC:x"), js(b, "(anonymous)", "/srv/app.js", 30));
	iso = finish(b);

	/* V8: the same functions; a second anonymous function at another line stays apart */
	b = new_profile(true);
	add(b, &V8_JS, 10, 1, v8js(b, "foo", "file:///srv/app.js", 10));
	add(b, &V8_JS, 10, 1, v8js(b, "bar", "file:///srv/app.js", 2));
	add(b, &V8_JS, 10, 1, v8js(b, "(anonymous)", "file:///srv/app.js", 30));
	add(b, &V8_JS, 10, 1, v8js(b, "(anonymous)", "file:///srv/app.js", 40));
	add(b, &(struct who){ .cls = "program" }, 50, 1, named(b, "(program)"));
	add(b, &(struct who){ .cls = "v8-builtin" }, 5, 1, named(b, "now"));
	v8 = finish(b);

	if (crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	j = report_json(r);
	assert_int_equal(json_object_get_int(get(j, "isoprof.js_samples")), 31);
	assert_int_equal(json_object_get_int(get(j, "isoprof.js_unattributed_samples")), 16);
	assert_int_equal(json_object_get_int(get(j, "v8.js_samples")), 40);
	fns = get(j, "functions");
	for (size_t i = 0; i < json_object_array_length(fns); i++) {
		struct json_object *f = json_object_array_get_idx(fns, i);
		const char *name = str(f, "function");
		struct json_object *line;
		int k;

		for (k = 0; k < 3 && strcmp(name, names[k]); k++)
			;
		if (k == 3 && json_object_object_get_ex(f, "start_line", &line))
			k = json_object_get_int(line) == 30 ? 3 : 4;
		if (k == 2)
			assert_string_equal(str(f, "file"), "");
		else
			assert_string_equal(str(f, "file"), "app.js");
		share[k] = num(f, "isoprof_share");
	}
	assert_float_equal(share[0], 2.0 / 31 + 3.0 / 31, 1e-9);	/* foo */
	assert_float_equal(share[1], 4.0 / 31 + 5.0 / 31, 1e-9);	/* bar */
	assert_float_equal(share[2], 6.0 / 31, 1e-9);			/* baz */
	assert_float_equal(share[3], 11.0 / 31, 1e-9);		/* (anonymous):30 */
	assert_float_equal(share[4], 0, 1e-9);			/* (anonymous):40 */
	/* the top on isoprof's side: (anonymous):30 with 11 */
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_ISOPROF),
			    "(anonymous) (app.js:30)");
	json_object_put(j);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/*
 * What only isoprof sees.  isoprof (tid 100 is the isolate's thread):
 *   tid 100: js 10, gc 2 (rooted at (garbage collector)), idle 3, kernel 1,
 *            runtime-native 4 rooted at (program)            -> 20
 *   tid 200 "V8 Worker": gc 6; tid 201 "V8 Worker": gc 2, v8-runtime 2;
 *   tid 300 "libuv-worker": runtime-native 10               -> 20 more
 * V8: js 10, (program) 5, (garbage collector) 3, (idle) 2.
 */
static void test_classes_and_threads(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct json_object *j;
	char err[256] = "";
	uint64_t f;

	(void)state;
	f = js(b, "f", "w.js", 1);
	add(b, &MAIN_JS, 10, 1, f);
	add(b, &(struct who){ "gc", 100, "node", "0x1000" }, 2, 3,
	    named(b, "v8::internal::Heap::CollectGarbage"), f, named(b, "(garbage collector)"));
	add(b, &(struct who){ "idle", 100, "node", NULL }, 3, 3, named(b, "ep_poll"),
	    named(b, "uv_run"), named(b, "(idle)"));
	add(b, &(struct who){ "kernel", 100, "node", "0x1000" }, 1, 2, named(b, "do_syscall_64"),
	    f);
	add(b, &(struct who){ "runtime-native", 100, "node", "0x1000" }, 4, 3, named(b, "malloc"),
	    named(b, "node::Start"), named(b, "(program)"));
	add(b, &(struct who){ "gc", 200, "V8 Worker", NULL }, 6, 2,
	    named(b, "v8::internal::ConcurrentMarking::Run"), named(b, "(garbage collector)"));
	add(b, &(struct who){ "gc", 201, "V8 Worker", NULL }, 2, 2,
	    named(b, "v8::internal::Sweeper::Sweep"), named(b, "(garbage collector)"));
	add(b, &(struct who){ "v8-runtime", 201, "V8 Worker", NULL }, 2, 2,
	    named(b, "v8::internal::Compile"), named(b, "(program)"));
	add(b, &(struct who){ "runtime-native", 300, "libuv-worker", NULL }, 10, 2,
	    named(b, "uv__work"), named(b, "(program)"));
	iso = finish(b);

	b = new_profile(true);
	add(b, &V8_JS, 10, 1, v8js(b, "f", "w.js", 1));
	add(b, &(struct who){ .cls = "program" }, 5, 1, named(b, "(program)"));
	add(b, &(struct who){ .cls = "gc" }, 3, 1, named(b, "(garbage collector)"));
	add(b, &(struct who){ .cls = "idle" }, 2, 1, named(b, "(idle)"));
	v8 = finish(b);

	if (crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	assert_float_equal(crosscheck_report__tvd(r), 0, 1e-12);
	assert_true(crosscheck_report__agree(r));
	j = report_json(r);
	assert_int_equal(json_object_get_int(get(j, "isoprof.main_tid")), 100);
	assert_string_equal(str(j, "isoprof.main_thread"), "node");
	assert_int_equal(json_object_get_int(get(j, "isoprof.main_thread_samples")), 20);
	assert_int_equal(json_object_get_int(get(j, "isoprof.samples")), 40);
	assert_float_equal(num(j, "isoprof.class_shares_main_thread.js"), 0.5, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares_main_thread.gc"), 0.1, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares_main_thread.idle"), 0.15, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares_main_thread.kernel"), 0.05, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares_main_thread.runtime-native"), 0.2, 1e-9);
	assert_float_equal(num(j, "isoprof.program_root_share_main_thread"), 0.2, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares.gc"), 10.0 / 40, 1e-9);
	assert_float_equal(num(j, "isoprof.class_shares.runtime-native"), 14.0 / 40, 1e-9);
	assert_float_equal(num(j, "v8.class_shares.program"), 0.25, 1e-9);
	assert_float_equal(num(j, "v8.class_shares.gc"), 0.15, 1e-9);
	assert_float_equal(num(j, "v8.class_shares.idle"), 0.1, 1e-9);
	assert_float_equal(num(j, "v8.program_root_share_main_thread"), 0.25, 1e-9);
	/* other threads, by samples: V8 Worker (2 tids, 10, 8 gc), libuv-worker (10) */
	assert_int_equal(json_object_array_length(get(j, "isoprof.other_threads")), 2);
	assert_string_equal(str(j, "isoprof.other_threads.0.thread"), "V8 Worker");
	assert_int_equal(json_object_get_int(get(j, "isoprof.other_threads.0.tids")), 2);
	assert_int_equal(json_object_get_int(get(j, "isoprof.other_threads.0.samples")), 10);
	assert_float_equal(num(j, "isoprof.other_threads.0.gc_share"), 0.8, 1e-9);
	assert_float_equal(num(j, "isoprof.other_threads.0.share"), 0.25, 1e-9);
	assert_string_equal(str(j, "isoprof.other_threads.1.thread"), "libuv-worker");
	json_object_put(j);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

static void test_isolate_filter(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct crosscheck_opts o = { 0 };
	struct json_object *j;
	char err[256] = "";

	(void)state;
	add(b, &MAIN_JS, 10, 1, js(b, "mine", "a.js", 1));
	add(b, &(struct who){ "js", 101, "worker", "0x2000" }, 30, 1, js(b, "theirs", "b.js", 1));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 10, 1, v8js(b, "mine", "a.js", 1));
	v8 = finish(b);

	/* both isolates: the other's thread is the busiest, and a note says to pick one */
	if (crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	j = report_json(r);
	assert_int_equal(json_object_get_int(get(j, "isoprof.isolates")), 2);
	assert_non_null(strstr(str(j, "notes.0"), "--isolate"));
	assert_false(crosscheck_report__agree(r));
	json_object_put(j);
	crosscheck__free(r);

	o.isolate = "0x1000";
	if (crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	assert_true(crosscheck_report__agree(r));
	assert_float_equal(crosscheck_report__tvd(r), 0, 1e-12);
	j = report_json(r);
	assert_int_equal(json_object_get_int(get(j, "isoprof.main_tid")), 100);
	assert_int_equal(json_object_get_int(get(j, "isoprof.samples")), 10);
	json_object_put(j);
	crosscheck__free(r);

	/* an isolate the profile does not have: say which it has */
	o.isolate = "0x3000";
	assert_int_equal(crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)), -ENODATA);
	assert_null(r);
	assert_string_equal(err, "isoprof profile: no samples of isolate 0x3000 "
				 "(it has 0x1000, 0x2000)");
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

static void test_no_js_samples(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	char err[256] = "";

	(void)state;
	add(b, &MAIN_JS, 9, 2, named(b, "[jit] <unknown>"), named(b, "node::Start"));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 10, 1, v8js(b, "f", "w.js", 1));
	v8 = finish(b);
	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), -ENODATA);
	assert_null(r);
	assert_non_null(strstr(err, "isoprof profile"));
	assert_non_null(strstr(err, "no JS samples"));
	assert_non_null(strstr(err, "--perf-basic-prof"));
	/* and the other way round */
	assert_int_equal(crosscheck__compute(v8, iso, NULL, &r, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "V8 profile"));
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/* Roles from content, and a text report that says what it compared. */
static void test_load_and_text(void **state)
{
	static const char cpuprofile[] =
		"  {\"nodes\":["
		"{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\","
		"\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":0,"
		"\"children\":[2,3]},"
		"{\"id\":2,\"callFrame\":{\"functionName\":\"A\",\"scriptId\":\"5\","
		"\"url\":\"file:///srv/x/two.js\",\"lineNumber\":0,\"columnNumber\":10},"
		"\"hitCount\":3},"
		"{\"id\":3,\"callFrame\":{\"functionName\":\"(program)\",\"scriptId\":\"0\","
		"\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"hitCount\":1}],"
		"\"startTime\":1000,\"endTime\":5000,\"samples\":[2,2,3,2],"
		"\"timeDeltas\":[900,1000,1100,1000]}";
	struct pprof_profile *iso, *v8, *loaded = NULL;
	struct crosscheck_report *r = NULL;
	struct crosscheck_opts o = { .names = { "iso.pb.gz", "CPU.cpuprofile" } };
	uint8_t *buf = NULL;
	size_t len = 0;
	bool is_v8 = true;
	int64_t delta = -1;
	char err[256] = "", *text = NULL;
	FILE *f;
	struct pprof_builder *b;

	(void)state;
	build_pair(&iso, &v8);
	assert_false(crosscheck__is_v8_profile(iso));
	assert_true(crosscheck__is_v8_profile(v8));
	pprof_profile__free(v8);

	/* a pprof from memory */
	b = new_profile(false);
	add(b, &MAIN_JS, 1, 1, js(b, "A", "two.js", 1));
	assert_int_equal(pprof_builder__serialize(b, false, &buf, &len), 0);
	pprof_builder__free(b);
	assert_int_equal(crosscheck__load_buffer(buf, len, &loaded, &is_v8, &delta, err,
						 sizeof(err)), 0);
	assert_false(is_v8);
	assert_int_equal(delta, 0);
	pprof_profile__free(loaded);
	free(buf);

	/* garbage is an error, not a crash */
	assert_int_equal(crosscheck__load_buffer((const uint8_t *)"", 0, &loaded, &is_v8, NULL,
						 err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty file");
	assert_true(crosscheck__load_buffer((const uint8_t *)"{nope", 5, &loaded, &is_v8, NULL,
					    err, sizeof(err)) < 0);
	assert_null(loaded);
	assert_true(crosscheck__load_buffer((const uint8_t *)"\x08\xff", 2, &loaded, &is_v8, NULL,
					    err, sizeof(err)) < 0);
	assert_true(crosscheck__load("/nonexistent/x.pb.gz", &loaded, &is_v8, NULL, err,
				     sizeof(err)) == -ENOENT);

	/* a .cpuprofile: V8's, converted, median delta 1 ms */
	if (crosscheck__load_buffer((const uint8_t *)cpuprofile, sizeof(cpuprofile) - 1, &v8,
				    &is_v8, &delta, err, sizeof(err)))
		fail_msg("load .cpuprofile: %s", err);
	assert_true(is_v8);
	assert_int_equal(delta, 1000000);
	o.v8_median_delta_ns = delta;
	if (crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	/* V8: A is all of its 3 JS samples; isoprof: A 0.6 */
	assert_float_equal(crosscheck_report__tvd(r), 0.4, 1e-9);
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_V8), "A (two.js)");

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(crosscheck__print_text(r, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "iso.pb.gz"));
	assert_non_null(strstr(text, "CPU.cpuprofile"));
	assert_non_null(strstr(text, "median sample interval"));
	assert_non_null(strstr(text, "Total variation distance over JS self shares: 0.400"));
	assert_non_null(strstr(text, "Spearman rank correlation over the top 3 by mean share: "));
	/* 3 samples of V8's: a TVD of 0.4 is well within what sampling gives */
	assert_non_null(strstr(text, "Noise floor: TVD "));
	assert_non_null(strstr(text, "of the 103 pooled\n  JS samples into 100 and 3;"));
	assert_non_null(strstr(text, "note: with 100 and 3 JS samples, sampling noise alone "
				     "reaches a TVD of "));
	assert_non_null(strstr(text, "Verdict: agree\n"));
	free(text);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/*
 * V8 without inlining positions (code optimized before its profiler
 * started) charges the inlined callee to its caller: by function the two
 * disagree, with isoprof's inlining folded into the caller they agree.
 * OSR code ("o+" after the tag) gets a note.
 */
static void test_physical_and_osr(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct json_object *o;
	char err[256] = "";
	struct pprof_line osr = { .line = 3 };

	(void)state;
	add(b, &MAIN_JS, 70, 1, inlined(b, "sieve", "/w/beta.js", "fetch", "/w/beta.js"));
	add(b, &MAIN_JS, 20, 1, js(b, "fetch", "/w/beta.js", 18));
	osr.function_id = pprof_builder__function(b, "loop", "JS:o+loop /w/beta.js:3:1",
						  "/w/beta.js", 3);
	add(b, &MAIN_JS, 10, 1, loc_lines(b, &osr, 1));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 88, 1, v8js(b, "fetch", "beta.js", 18));
	add(b, &V8_JS, 12, 1, v8js(b, "loop", "beta.js", 3));
	v8 = finish(b);

	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), 0);
	assert_false(crosscheck_report__agree(r));
	assert_true(crosscheck_report__agree_physical(r));
	o = report_json(r);
	assert_true(num(o, "tvd") > 0.6);
	assert_true(num(o, "tvd_physical") < 0.03);
	assert_string_equal(str(o, "top_physical_isoprof"), "fetch (beta.js)");
	assert_string_equal(str(o, "top_physical_v8"), "fetch (beta.js)");
	assert_non_null(strstr(str(o, "verdict"), "inlined functions are charged"));
	assert_non_null(strstr(str(o, "notes.0"), "10.0% of isoprof's JS samples ran in "
						 "on-stack-replacement code"));
	json_object_put(o);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/*
 * A deopt loop: V8 records a sample at every deoptimization, charged to
 * the caller of code it does not know, so its samples outnumber its
 * timer's ticks (4800 over 2 s at 1 ms) and name the wrong function;
 * isoprof sees the thread in the deoptimizer.
 */
static void test_deopt_loop(void **state)
{
	static const struct who BUILTIN = { "v8-builtin", 100, "node", "0x1000" };
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct json_object *o;
	char err[256] = "";

	(void)state;
	add(b, &MAIN_JS, 70, 1, js(b, "sieve", "/w/beta.js", 5));
	add(b, &BUILTIN, 10, 2, named(b, "Builtins_DeoptimizationEntry_Eager"),
	    js(b, "sieve", "/w/beta.js", 5));
	add(b, &MAIN_JS, 20, 1, js(b, "fetch", "/w/beta.js", 30));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 4500, 1, v8js(b, "fetch", "beta.js", 30));
	add(b, &V8_JS, 300, 1, v8js(b, "sieve", "beta.js", 5));
	v8 = finish(b);

	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), 0);
	assert_false(crosscheck_report__agree(r));
	o = report_json(r);
	assert_true(json_object_get_boolean(get(o, "v8_deopt_inflated")));
	assert_float_equal(num(o, "v8.samples_per_timer_tick"), 2.4, 1e-9);
	assert_float_equal(num(o, "isoprof.samples_per_timer_tick"), 0.05, 1e-9);
	assert_int_equal(json_object_get_int64(get(o, "isoprof.deoptimizer_samples_main_thread")),
			 10);
	assert_non_null(strstr(str(o, "verdict"), "; V8's samples are mostly deoptimizations"));
	assert_non_null(strstr(str(o, "notes.0"), "4800 samples over 2.000 s, 2.4x the ticks"));
	assert_non_null(strstr(str(o, "notes.1"), "10.0% of isoprof's samples on the isolate's "
						 "thread are in V8's deoptimizer"));
	json_object_put(o);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);

	/* an ordinary pair: no inflation, no note */
	build_pair(&iso, &v8);
	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), 0);
	o = report_json(r);
	assert_false(json_object_get_boolean(get(o, "v8_deopt_inflated")));
	assert_int_equal(json_object_array_length(get(o, "notes")), 0);
	assert_null(strstr(str(o, "verdict"), "deoptimizations"));
	json_object_put(o);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/*
 * V8's profiler never logged OSR code compiled before it started, so it
 * charges those ticks to the caller: by function the two disagree, with
 * isoprof's OSR samples charged to the caller they agree.
 * isoprof: loop (OSR) 60 under fetch, fetch 30, helper 10 under fetch;
 * V8: fetch 88, helper 12.  By function TVD (0.6 + 0.58 + 0.02) / 2 = 0.6;
 * without OSR: fetch 0.9 vs 0.88, helper 0.1 vs 0.12, TVD 0.02.
 */
static void test_osr_blind_spot(void **state)
{
	struct pprof_builder *b = new_profile(false);
	struct pprof_profile *iso, *v8;
	struct crosscheck_report *r = NULL;
	struct json_object *o;
	char err[256] = "", *text = NULL;
	size_t len = 0;
	FILE *f;
	struct pprof_line osr = { .line = 3 };
	uint64_t loop;

	(void)state;
	osr.function_id = pprof_builder__function(b, "loop", "JS:o+loop /w/beta.js:3:1",
						  "/w/beta.js", 3);
	loop = loc_lines(b, &osr, 1);
	add(b, &MAIN_JS, 60, 2, loop, js(b, "fetch", "/w/beta.js", 30));
	add(b, &MAIN_JS, 30, 1, js(b, "fetch", "/w/beta.js", 30));
	add(b, &MAIN_JS, 10, 2, js(b, "helper", "/w/beta.js", 9), js(b, "fetch", "/w/beta.js", 30));
	iso = finish(b);
	b = new_profile(true);
	add(b, &V8_JS, 88, 1, v8js(b, "fetch", "beta.js", 30));
	add(b, &V8_JS, 12, 1, v8js(b, "helper", "beta.js", 9));
	v8 = finish(b);

	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), 0);
	assert_false(crosscheck_report__agree(r));
	assert_false(crosscheck_report__agree_physical(r));
	assert_true(crosscheck_report__agree_no_osr(r));
	o = report_json(r);
	assert_float_equal(num(o, "tvd"), 0.6, 1e-9);
	assert_float_equal(num(o, "tvd_physical"), 0.6, 1e-9);
	assert_float_equal(num(o, "tvd_no_osr"), 0.02, 1e-9);
	assert_string_equal(str(o, "top_no_osr_isoprof"), "fetch (beta.js)");
	assert_string_equal(str(o, "top_no_osr_v8"), "fetch (beta.js)");
	assert_true(json_object_get_boolean(get(o, "agree_no_osr")));
	assert_non_null(strstr(str(o, "verdict"), "agree once isoprof's samples in "
						  "on-stack-replacement code are charged to the "
						  "caller (TVD 0.020, top fetch (beta.js))"));
	json_object_put(o);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(crosscheck__print_text(r, f), 0);
	fclose(f);
	assert_non_null(strstr(text, "... and with isoprof's samples in OSR code charged to the "
				     "caller: 0.020, top fetch (beta.js) vs fetch (beta.js)"));
	free(text);
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);

	/* no OSR code on isoprof's side: no such agreement, no such line */
	build_pair(&iso, &v8);
	assert_int_equal(crosscheck__compute(iso, v8, NULL, &r, err, sizeof(err)), 0);
	assert_false(crosscheck_report__agree_no_osr(r));
	crosscheck__free(r);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
}

/* ---- Noise ------------------------------------------------------------------ */

/* The test's own generator (splitmix64), apart from the one under test. */
static uint64_t test_rng(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * A flat profile like a compiler's: k functions, function i weighing
 * 1 / (i + 10), so the top one has a few percent.  cdf gets the cumulative
 * weights.
 */
static void flat_cdf(double *cdf, size_t k)
{
	double sum = 0;

	for (size_t i = 0; i < k; i++)
		cdf[i] = sum += 1.0 / (double)(i + 10);
	for (size_t i = 0; i < k; i++)
		cdf[i] /= sum;
}

/* counts[0..k) = n samples drawn from the distribution cdf. */
static void draw(uint64_t *counts, const double *cdf, size_t k, uint64_t n, uint64_t *rng)
{
	memset(counts, 0, k * sizeof(*counts));
	for (uint64_t j = 0; j < n; j++) {
		double u = (double)(test_rng(rng) >> 11) * 0x1.0p-53;
		size_t lo = 0, hi = k - 1;

		while (lo < hi) {
			size_t mid = (lo + hi) / 2;

			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		counts[lo]++;
	}
}

static double tvd_of(const uint64_t *a, const uint64_t *b, size_t k, uint64_t na, uint64_t nb)
{
	double d = 0;

	for (size_t i = 0; i < k; i++)
		d += fabs((double)a[i] / (double)na - (double)b[i] / (double)nb);
	return d / 2;
}

/*
 * The floor is the permutation test's 95th percentile: two samples of one
 * distribution land beyond it about 1 time in 20, whatever the shape.  On a
 * flat profile of 400 functions at 1,500 and 2,500 samples (most functions
 * seen a few times) the observed TVD is ~0.3, the floor just above.  Both
 * ways of dealing give the same floor.
 */
static void test_noise_floor_calibrated(void **state)
{
	enum { K = 400, TRIALS = 100 };
	static double cdf[K];
	static uint64_t a[K], b[K];
	const uint64_t *counts[2] = { a, b };
	uint64_t rng = 42;
	size_t beyond = 0;
	struct cc_noise shuffled, dealt;

	(void)state;
	flat_cdf(cdf, K);
	for (int t = 0; t < TRIALS; t++) {
		struct cc_noise n;

		draw(a, cdf, K, 1500, &rng);
		draw(b, cdf, K, 2500, &rng);
		assert_int_equal(cc_noise__estimate(counts, K, &n), 0);
		assert_int_equal(n.resamples, CC_NOISE_RESAMPLES);
		assert_true(n.median < n.floor);
		assert_true(n.floor > 0.2 && n.floor < 0.4);
		if (tvd_of(a, b, K, 1500, 2500) > n.floor)
			beyond++;
	}
	/* binomial(100, 0.05): 1 to 12 holds 99% of it */
	print_message("      beyond the floor: %zu of %d A/A pairs\n", beyond, TRIALS);
	assert_true(beyond >= 1 && beyond <= 12);

	assert_int_equal(cc_noise__estimate_by(counts, K, CC_NOISE_SHUFFLE, &shuffled), 0);
	assert_int_equal(cc_noise__estimate_by(counts, K, CC_NOISE_BY_FUNCTION, &dealt), 0);
	assert_float_equal(shuffled.floor, dealt.floor, 0.01);
	assert_float_equal(shuffled.median, dealt.median, 0.01);
	/* the smaller side is the noisier */
	assert_true(shuffled.side_floor[0] > shuffled.side_floor[1]);
	/* and reproducible: a fixed seed */
	assert_int_equal(cc_noise__estimate_by(counts, K, CC_NOISE_SHUFFLE, &dealt), 0);
	assert_true(shuffled.floor == dealt.floor && shuffled.median == dealt.median);
}

/*
 * Counts no pool can hold (a hostile file, or hours of samples): dealt
 * function by function, in the same time; and no floor rather than a wrong
 * one when the totals overflow.
 */
static void test_noise_huge_counts(void **state)
{
	uint64_t a[3] = { 6000000000ULL, 3000000000ULL, 1000000000ULL };
	uint64_t b[3] = { 5000000000ULL, 4000000000ULL, 1000000000ULL };
	uint64_t h[2] = { UINT64_MAX, 5 }, one[2] = { 1, 0 };
	const uint64_t *counts[2] = { a, b };
	struct cc_noise n;

	(void)state;
	assert_int_equal(cc_noise__estimate(counts, 3, &n), 0);
	assert_true(n.floor > 0 && n.floor < 1e-4);
	assert_int_equal(cc_noise__estimate_by(counts, 3, CC_NOISE_SHUFFLE, &n), -E2BIG);
	counts[0] = h;
	counts[1] = h;
	assert_int_equal(cc_noise__estimate(counts, 2, &n), 0);
	assert_true(isnan(n.floor));
	/* a side with nothing */
	counts[0] = one;
	counts[1] = one + 1;
	assert_int_equal(cc_noise__estimate(counts, 1, &n), 0);
	assert_true(isnan(n.floor));
}

/* A profile with counts[i] samples of f<i> in big.js, in isoprof's or V8's naming. */
static struct pprof_profile *profile_of(bool v8, const uint64_t *counts, size_t k)
{
	struct pprof_builder *b = new_profile(v8);
	char name[32];

	for (size_t i = 0; i < k; i++) {
		if (!counts[i])
			continue;
		snprintf(name, sizeof(name), "f%zu", i);
		if (v8)
			add(b, &V8_JS, (int64_t)counts[i], 1,
			    v8js(b, name, "file:///srv/big.js", (int64_t)i + 1));
		else
			add(b, &MAIN_JS, (int64_t)counts[i], 1,
			    js(b, name, "/srv/big.js", (int64_t)i + 1));
	}
	return finish(b);
}

static struct crosscheck_report *compare_counts(const uint64_t *a, const uint64_t *b, size_t k)
{
	struct pprof_profile *iso = profile_of(false, a, k), *v8 = profile_of(true, b, k);
	struct crosscheck_report *r = NULL;
	struct crosscheck_opts o = { .top = 5 };
	char err[256] = "";

	if (crosscheck__compute(iso, v8, &o, &r, err, sizeof(err)))
		fail_msg("compute: %s", err);
	pprof_profile__free(iso);
	pprof_profile__free(v8);
	return r;
}

/* Does function f<i> have a row, and is it beyond noise there? */
static bool row_significant(struct json_object *j, size_t i, bool *found)
{
	struct json_object *rows = get(j, "functions");
	char name[32];

	snprintf(name, sizeof(name), "f%zu", i);
	*found = false;
	for (size_t n = 0; n < json_object_array_length(rows); n++) {
		struct json_object *row = json_object_array_get_idx(rows, n), *v;

		json_object_object_get_ex(row, "function", &v);
		if (strcmp(json_object_get_string(v), name))
			continue;
		*found = true;
		json_object_object_get_ex(row, "significant", &v);
		return json_object_get_boolean(v);
	}
	return false;
}

/*
 * Two samples of one flat distribution (300 functions, 3,000 a side, the
 * top one at 4%): a TVD near 0.2 that the old fixed 0.25 barely passed,
 * and now within the floor, every time; and hardly a row beyond noise
 * (Bonferroni keeps the chance of any under 5% a pair).  The same with 25%
 * of V8's samples moved to f7: beyond the floor, and f7's row significant.
 */
static void test_noise_verdict(void **state)
{
	enum { K = 300, N = 3000 };
	static double cdf[K];
	static uint64_t a[K], b[K];
	uint64_t rng = 7;
	size_t false_rows = 0, rows = 0;

	(void)state;
	flat_cdf(cdf, K);
	for (int t = 0; t < 10; t++) {
		struct crosscheck_report *r;
		struct json_object *j;
		bool found;

		draw(a, cdf, K, N, &rng);
		draw(b, cdf, K, N, &rng);
		r = compare_counts(a, b, K);
		if (!crosscheck_report__agree(r))
			fail_msg("A/A pair %d: %s (floor %.3f)", t, crosscheck_report__verdict(r),
				 crosscheck_report__noise_floor(r));
		assert_true(crosscheck_report__tvd(r) > 0.1);
		j = report_json(r);
		for (size_t i = 0; i < K; i++) {
			if (row_significant(j, i, &found))
				false_rows++;
			rows += found;
		}
		json_object_put(j);
		crosscheck__free(r);
	}
	print_message("      A/A rows beyond noise: %zu of %zu\n", false_rows, rows);
	assert_true(rows >= 50);
	assert_true(false_rows <= 1);
	for (int t = 0; t < 5; t++) {
		struct crosscheck_report *r;
		struct json_object *j;
		uint64_t moved = 0;
		bool found;

		draw(a, cdf, K, N, &rng);
		draw(b, cdf, K, N, &rng);
		for (size_t i = 0; i < K; i++) {
			uint64_t take = b[i] * 25 / 100;

			b[i] -= take;
			moved += take;
		}
		b[7] += moved;
		r = compare_counts(a, b, K);
		assert_false(crosscheck_report__agree(r));
		if (!strstr(crosscheck_report__verdict(r), "disagree: TVD "))
			fail_msg("shift %d: %s (TVD %.3f, floor %.3f)", t,
				 crosscheck_report__verdict(r), crosscheck_report__tvd(r),
				 crosscheck_report__noise_floor(r));
		j = report_json(r);
		assert_true(row_significant(j, 7, &found));
		assert_true(found);
		json_object_put(j);
		crosscheck__free(r);
	}
}

/*
 * The top two within noise of each other, swapped between the sides: not
 * "the top differs", a note instead.  Swapped by far: it is.
 */
static void test_noise_top_swap(void **state)
{
	uint64_t a[6] = { 310, 300, 200, 100, 50, 40 }, b[6] = { 300, 310, 200, 100, 50, 40 };
	struct crosscheck_report *r = compare_counts(a, b, 6);
	struct json_object *j;

	(void)state;
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_ISOPROF),
			    "f0 (big.js)");
	assert_string_equal(crosscheck_report__top_function(r, CROSSCHECK_V8), "f1 (big.js)");
	assert_true(crosscheck_report__agree(r));
	assert_string_equal(crosscheck_report__verdict(r), "agree");
	j = report_json(r);
	assert_false(json_object_get_boolean(get(j, "same_top")));
	assert_false(json_object_get_boolean(get(j, "top_differs_beyond_noise")));
	assert_non_null(strstr(str(j, "notes.0"), "the top JS function differs (isoprof: "
						 "f0 (big.js), V8: f1 (big.js)), within sampling "
						 "noise"));
	json_object_put(j);
	crosscheck__free(r);

	a[0] = 500;
	b[1] = 500;
	r = compare_counts(a, b, 6);
	assert_false(crosscheck_report__agree(r));
	assert_non_null(strstr(crosscheck_report__verdict(r), "the top JS function differs beyond "
							      "noise (isoprof: f0 (big.js), V8: "
							      "f1 (big.js))"));
	j = report_json(r);
	assert_true(json_object_get_boolean(get(j, "top_differs_beyond_noise")));
	/* f0: 500 of 1190 against 300 of 1190 */
	assert_float_equal(num(j, "functions.0.diff_pp"), 100.0 * 200 / 1190, 1e-9);
	assert_true(json_object_get_boolean(get(j, "functions.0.significant")));
	json_object_put(j);
	crosscheck__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tvd_rho_and_one_side),
		cmocka_unit_test(test_rho_ties_and_small_sets),
		cmocka_unit_test(test_js_attribution),
		cmocka_unit_test(test_classes_and_threads),
		cmocka_unit_test(test_isolate_filter),
		cmocka_unit_test(test_no_js_samples),
		cmocka_unit_test(test_load_and_text),
		cmocka_unit_test(test_physical_and_osr),
		cmocka_unit_test(test_deopt_loop),
		cmocka_unit_test(test_osr_blind_spot),
		cmocka_unit_test(test_noise_floor_calibrated),
		cmocka_unit_test(test_noise_huge_counts),
		cmocka_unit_test(test_noise_verdict),
		cmocka_unit_test(test_noise_top_swap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
