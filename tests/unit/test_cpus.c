// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <cmocka.h>

#include "user/capture/cpus.h"

static void parses_ranges_and_singles(void **state)
{
	struct cpu_set_list s;
	(void)state;

	assert_int_equal(cpus__parse_list("0-3,5,7-8\n", &s), 0);
	assert_int_equal(s.count, 7);
	int want[] = { 0, 1, 2, 3, 5, 7, 8 };
	for (size_t i = 0; i < s.count; i++)
		assert_int_equal(s.ids[i], want[i]);
	cpus__free(&s);

	assert_int_equal(cpus__parse_list("0", &s), 0);
	assert_int_equal(s.count, 1);
	cpus__free(&s);
}

static void rejects_malformed(void **state)
{
	const char *bad[] = { "", "\n", "a", "1-", "3-1", "1,1", "2,1", "0-99999999", "1;2", "-1" };
	struct cpu_set_list s;
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(cpus__parse_list(bad[i], &s), -EINVAL);
		assert_null(s.ids);
	}
}

static void reads_this_machine(void **state)
{
	struct cpu_set_list s;
	(void)state;

	assert_int_equal(cpus__online(&s), 0);
	assert_true(s.count >= 1);
	cpus__free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_ranges_and_singles),
		cmocka_unit_test(rejects_malformed),
		cmocka_unit_test(reads_this_machine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
