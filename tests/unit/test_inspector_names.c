// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/v8/inspector_names: a workerd inspector's target list
 * set beside the config's worker services (confirmed, not listed, not in
 * the config, names unknown), and an inspector that cannot be asked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "user/v8/inspector_names.h"

static struct workerd_service services[] = {
	{ .name = "alpha", .is_worker = true },
	{ .name = "counter", .is_worker = true },
	{ .name = "internet", .is_worker = false },	/* a network service: never listed */
	{ .name = "alloc", .is_worker = true },
};
static const struct workerd_config config = { services, 4 };

static struct inspector_target target(char *id)
{
	return (struct inspector_target){ .id = id, .title = "", .type = "node", .url = "" };
}

static void test_all_confirmed(void **state)
{
	struct inspector_target t[] = { target("alpha"), target("counter"), target("alloc") };
	struct inspector_names in = { 0 };

	(void)state;
	assert_int_equal(inspector_names__compare(t, 3, &config, &in), 0);
	assert_int_equal(in.confirmed, 3);
	assert_int_equal(in.nr_listed, 3);
	assert_string_equal(in.listed[2], "alloc");
	assert_int_equal(in.nr_not_listed, 0);
	assert_int_equal(in.nr_not_in_config, 0);
	inspector_names__free(&in);
}

/* a config edited since workerd started: alloc renamed alloc2 in the file */
static void test_config_not_the_running_one(void **state)
{
	struct inspector_target t[] = { target("alpha"), target("counter"), target("alloc2"),
					 target("internet") };
	struct inspector_names in = { 0 };

	(void)state;
	assert_int_equal(inspector_names__compare(t, 4, &config, &in), 0);
	assert_int_equal(in.confirmed, 2);
	assert_int_equal(in.nr_not_listed, 1);
	assert_string_equal(in.not_listed[0], "alloc");
	/* a target named like a network service is no worker of the config */
	assert_int_equal(in.nr_not_in_config, 2);
	assert_string_equal(in.not_in_config[0], "alloc2");
	assert_string_equal(in.not_in_config[1], "internet");
	inspector_names__free(&in);
	assert_null(in.listed);
}

/* names unknown (a binary config): the list only */
static void test_no_config(void **state)
{
	struct inspector_target t[] = { target("bin-alpha"), target(NULL) };
	struct inspector_names in = { 0 };

	(void)state;
	assert_int_equal(inspector_names__compare(t, 2, NULL, &in), 0);
	assert_int_equal(in.nr_listed, 2);
	assert_string_equal(in.listed[0], "bin-alpha");
	assert_string_equal(in.listed[1], "");
	assert_int_equal(in.confirmed, 0);
	assert_int_equal(in.nr_not_listed + in.nr_not_in_config, 0);
	inspector_names__free(&in);
}

/* nothing listens there: an answer saying why, not an error */
static void test_nothing_listens(void **state)
{
	struct inspector_names in;

	(void)state;
	assert_int_equal(inspector_names__check(getpid(), "127.0.0.1:1", 500, &config, &in), 0);
	assert_int_equal(in.err, -ECONNREFUSED);
	assert_string_equal(in.address, "127.0.0.1:1");
	assert_non_null(strstr(in.why, "refused"));
	assert_int_equal(in.nr_listed, 0);
	inspector_names__free(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_confirmed),
		cmocka_unit_test(test_config_not_the_running_one),
		cmocka_unit_test(test_no_config),
		cmocka_unit_test(test_nothing_listens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
