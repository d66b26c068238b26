// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for user/v8match: mapping inspector targets to isolates by their scripts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "user/v8/v8match.h"

#define SIDE(p, s, f)                                                                         \
	{ .pid = (p), .scripts = (s), .nscripts = sizeof(s) / sizeof((s)[0]), .functions = (f), \
	  .nfunctions = sizeof(f) / sizeof((f)[0]) }

static const char *const alpha_scripts[] = { "alpha.js" };
static const char *const beta_scripts[] = { "beta.js" };
static const char *const shared_scripts[] = { "shared.js" };
static const char *const node_scripts[] = { "file:///srv/app/main.js", "file:///srv/app/lib.js" };
static const char *const node_iso_scripts[] = { "/srv/app/main.js" };
static const char *const worker_iso_scripts[] = { "/srv/app/worker.js" };
static const char *const alpha_fns[] = { "fibAlpha", "fetch" };
static const char *const beta_fns[] = { "sieveBeta", "fetch" };
static const char *const one_fn[] = { "fibAlpha" };
static const char *const other_fn[] = { "other" };

static void test_script_key(void **state)
{
	(void)state;
	assert_string_equal(v8match__script_key("file:///srv/app/main.js"), "main.js");
	assert_string_equal(v8match__script_key("alpha.js"), "alpha.js");
	assert_string_equal(v8match__script_key(NULL), "");
	assert_string_equal(v8match__script_key("dir/"), "");
}

/* workerd: two services, listed in the other order than the isolates */
static void test_two_workers(void **state)
{
	const struct v8match_side targets[] = { SIDE(10, beta_scripts, beta_fns),
						SIDE(10, alpha_scripts, alpha_fns) };
	const struct v8match_side isolates[] = { SIDE(10, alpha_scripts, alpha_fns),
						 SIDE(10, beta_scripts, beta_fns) };
	enum v8match_result why[2];
	int assign[2];

	(void)state;
	assert_int_equal(v8match__assign(targets, 2, isolates, 2, assign, why), 0);
	assert_int_equal(assign[0], 1);
	assert_int_equal(assign[1], 0);
	assert_int_equal(why[0], V8MATCH_MAPPED);
	assert_int_equal(why[1], V8MATCH_MAPPED);
}

/* node: URLs against paths; the worker thread's isolate runs another script */
static void test_node_main_thread(void **state)
{
	const struct v8match_side targets[] = { SIDE(20, node_scripts, one_fn) };
	const struct v8match_side isolates[] = { SIDE(20, worker_iso_scripts, one_fn),
						 SIDE(20, node_iso_scripts, other_fn) };
	enum v8match_result why[1];
	int assign[1];

	(void)state;
	assert_int_equal(v8match__assign(targets, 1, isolates, 2, assign, why), 0);
	assert_int_equal(assign[0], 1);
	assert_int_equal(why[0], V8MATCH_MAPPED);
}

/* never across processes, whatever the scripts */
static void test_other_process(void **state)
{
	const struct v8match_side targets[] = { SIDE(30, alpha_scripts, alpha_fns) };
	const struct v8match_side isolates[] = { SIDE(31, alpha_scripts, alpha_fns) };
	enum v8match_result why[1];
	int assign[1];

	(void)state;
	assert_int_equal(v8match__assign(targets, 1, isolates, 1, assign, why), 0);
	assert_int_equal(assign[0], -1);
	assert_int_equal(why[0], V8MATCH_NO_SCRIPT);
}

/* functions break a tie on scripts; a tie on both is left unmapped */
static void test_ties(void **state)
{
	const struct v8match_side targets[] = { SIDE(40, shared_scripts, alpha_fns) };
	const struct v8match_side by_function[] = { SIDE(40, shared_scripts, beta_fns),
						    SIDE(40, shared_scripts, alpha_fns) };
	const struct v8match_side same[] = { SIDE(40, shared_scripts, alpha_fns),
					     SIDE(40, shared_scripts, alpha_fns) };
	enum v8match_result why[1];
	int assign[1];

	(void)state;
	assert_int_equal(v8match__assign(targets, 1, by_function, 2, assign, why), 0);
	assert_int_equal(assign[0], 1);
	assert_int_equal(v8match__assign(targets, 1, same, 2, assign, why), 0);
	assert_int_equal(assign[0], -1);
	assert_int_equal(why[0], V8MATCH_AMBIGUOUS);
}

/* one isolate, two targets that fit it: the better one gets it */
static void test_taken(void **state)
{
	const struct v8match_side targets[] = { SIDE(50, alpha_scripts, other_fn),
						SIDE(50, alpha_scripts, alpha_fns) };
	const struct v8match_side isolates[] = { SIDE(50, alpha_scripts, alpha_fns) };
	enum v8match_result why[2];
	int assign[2];

	(void)state;
	assert_int_equal(v8match__assign(targets, 2, isolates, 1, assign, why), 0);
	assert_int_equal(assign[1], 0);
	assert_int_equal(assign[0], -1);
	assert_int_equal(why[0], V8MATCH_TAKEN);
}

static void test_empty(void **state)
{
	const struct v8match_side targets[] = { SIDE(60, alpha_scripts, alpha_fns) };
	enum v8match_result why[1];
	int assign[1];

	(void)state;
	assert_int_equal(v8match__assign(targets, 1, NULL, 0, assign, why), 0);
	assert_int_equal(assign[0], -1);
	assert_int_equal(v8match__assign(NULL, 0, NULL, 0, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script_key),   cmocka_unit_test(test_two_workers),
		cmocka_unit_test(test_node_main_thread), cmocka_unit_test(test_other_process),
		cmocka_unit_test(test_ties),	     cmocka_unit_test(test_taken),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
