// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* timetext: instants as text; see timetext.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "lib/timetext.h"

/* Unix seconds far enough from both ends that no sum below overflows. */
#define MAX_SECONDS (1LL << 40)

/* Exactly n decimal digits at s into *out. */
static bool digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

static bool leap(long y)
{
	return (y % 4 == 0 && y % 100) || y % 400 == 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian), without timegm()'s TZ games. */
static int64_t days_from_civil(long y, int m, int d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int64_t)era * 146097 + doe - 719468;
}

static int parse_rfc3339(const char *s, int64_t *out)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	const char *p = s + 19;

	if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] + (mo == 2 && leap(y)) || h > 23 ||
	    mi > 59 || sec > 59)
		return -EINVAL;
	if (*p == '.') {
		if (p[1] < '0' || p[1] > '9')
			return -EINVAL;
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	}
	if ((*p == 'Z' || *p == 'z') && !p[1]) {
		sign = 0;
	} else if ((*p == '+' || *p == '-') && strlen(p) == 6 && digits(p + 1, 2, &oh) &&
		   p[3] == ':' && digits(p + 4, 2, &om) && oh <= 23 && om <= 59) {
		sign = *p == '+' ? 1 : -1;
	} else {
		return -EINVAL;
	}
	/* local time = UTC + offset */
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
	       sign * (oh * 3600 + om * 60);
	return 0;
}

/* Decimal digits (at least one, at most 15) at s up to end into *out. */
static int number(const char *s, const char *end, int64_t *out)
{
	int64_t v = 0;

	if (s == end)
		return -EINVAL;
	for (const char *p = s; p < end; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		if (p - s >= 15)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	*out = v;
	return 0;
}

int timetext__parse(const char *s, int64_t now_s, int64_t *out)
{
	static const struct {
		char unit;
		int64_t seconds;
	} units[] = { { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	size_t len;
	int64_t v;
	int err;

	if (!s || !*s)
		return -EINVAL;
	len = strlen(s);
	if (!strcmp(s, "now")) {
		*out = now_s;
		return 0;
	}
	if (s[0] == '-') {
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (len < 3 || s[len - 1] != units[i].unit)
				continue;
			err = number(s + 1, s + len - 1, &v);
			if (err)
				return err;
			if (v > MAX_SECONDS / units[i].seconds)
				return -ERANGE;
			*out = now_s - v * units[i].seconds;
			return 0;
		}
		return -EINVAL;
	}
	if (strspn(s, "0123456789") == len) {
		err = number(s, s + len, &v);
		if (!err && v > MAX_SECONDS)
			err = -ERANGE;
		if (!err)
			*out = v;
		return err;
	}
	return parse_rfc3339(s, out);
}

void timetext__rfc3339(int64_t s, char *buf, size_t len)
{
	struct tm tm;
	time_t t = (time_t)s;

	if (!len)
		return;
	if (s < -MAX_SECONDS || s > MAX_SECONDS || !gmtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "?");
}
