// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for lib/timetext: RFC 3339, unix seconds and times before now
 * as isoprof merge's --from/--until and serve's from=/until= take them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/timetext.h"

#define NOW 1796333100LL	/* 2026-12-03T21:25:00Z */

static int64_t parsed(const char *s)
{
	int64_t t = 12345;

	assert_int_equal(timetext__parse(s, NOW, &t), 0);
	return t;
}

static void test_rfc3339(void **state)
{
	(void)state;
	assert_int_equal(parsed("2026-12-03T21:25:00Z"), NOW);
	assert_int_equal(parsed("2026-12-03t21:25:00z"), NOW);
	/* a fraction is dropped, not rounded */
	assert_int_equal(parsed("2026-12-03T21:25:00.999999Z"), NOW);
	assert_int_equal(parsed("2026-12-03T22:25:00+01:00"), NOW);
	assert_int_equal(parsed("2026-12-03T16:55:00-04:30"), NOW);
	assert_int_equal(parsed("2024-02-29T00:00:00Z"), 1709164800);
	assert_int_equal(parsed("1970-01-01T00:00:00Z"), 0);
	assert_int_equal(parsed("1969-12-31T23:59:59Z"), -1);
}

static void test_unix_and_relative(void **state)
{
	(void)state;
	assert_int_equal(parsed("1796333100"), NOW);
	assert_int_equal(parsed("0"), 0);
	assert_int_equal(parsed("now"), NOW);
	assert_int_equal(parsed("-1h"), NOW - 3600);
	assert_int_equal(parsed("-15m"), NOW - 900);
	assert_int_equal(parsed("-90s"), NOW - 90);
	assert_int_equal(parsed("-7d"), NOW - 7 * 86400);
	assert_int_equal(parsed("-0s"), NOW);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"", " 1", "1 ", "+1h", "-1", "-h", "-1x", "-1hh", "- 1h", "-1.5h", "1e9", "0x10",
		"yesterday", "2026-12-03", "2026-12-03T21:25Z", "2026-12-03T21:25:00",
		"2026-12-03 21:25:00Z", "2026-13-03T21:25:00Z", "2026-02-29T00:00:00Z",
		"2026-12-32T00:00:00Z", "2026-12-03T24:00:00Z", "2026-12-03T21:60:00Z",
		"2026-12-03T21:25:60Z", "2026-12-03T21:25:00.Z", "2026-12-03T21:25:00+0100",
		"2026-12-03T21:25:00+24:00", "2026-12-03T21:25:00Zjunk", "２026-12-03T21:25:00Z",
	};
	int64_t t = 7;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (timetext__parse(bad[i], NOW, &t) >= 0)
			fail_msg("accepted '%s'", bad[i]);
		assert_int_equal(t, 7);
	}
	assert_int_equal(timetext__parse(NULL, NOW, &t), -EINVAL);
	assert_int_equal(timetext__parse("99999999999999999999", NOW, &t), -ERANGE);
	assert_int_equal(timetext__parse("-99999999999999h", NOW, &t), -ERANGE);
	assert_int_equal(timetext__parse("-9999999999d", NOW, &t), -ERANGE);
}

static void test_format(void **state)
{
	char buf[TIMETEXT_RFC3339_LEN];

	(void)state;
	timetext__rfc3339(NOW, buf, sizeof(buf));
	assert_string_equal(buf, "2026-12-03T21:25:00Z");
	timetext__rfc3339(0, buf, sizeof(buf));
	assert_string_equal(buf, "1970-01-01T00:00:00Z");
	timetext__rfc3339(INT64_MAX, buf, sizeof(buf));
	assert_string_equal(buf, "?");
	/* what it writes, it reads back */
	for (int64_t t = -86400; t < 4000000000LL; t += 987654321) {
		timetext__rfc3339(t, buf, sizeof(buf));
		assert_int_equal(parsed(buf), t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rfc3339),
		cmocka_unit_test(test_unix_and_relative),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
