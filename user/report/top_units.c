// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* top_units: a port of pprof's internal/measurement; see top_units.h. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "user/report/top_units.h"

struct unit {
	const char *name;
	const char *aliases[4];
	double factor;
};

struct unit_type {
	const struct unit *units;
	size_t n;
	struct unit def;
};

static const struct unit byte_units[] = {
	{ "B", { "b", "byte" }, 1 },
	{ "kB", { "kb", "kbyte", "kilobyte" }, 1024.0 },
	{ "MB", { "mb", "mbyte", "megabyte" }, 1048576.0 },
	{ "GB", { "gb", "gbyte", "gigabyte" }, 1073741824.0 },
	{ "TB", { "tb", "tbyte", "terabyte" }, 1099511627776.0 },
	{ "PB", { "pb", "pbyte", "petabyte" }, 1125899906842624.0 },
};

static const struct unit time_units[] = {
	{ "ns", { "ns", "nanosecond" }, 1 },
	{ "us", { "\xce\xbcs", "us", "microsecond" }, 1e3 },
	{ "ms", { "ms", "millisecond" }, 1e6 },
	{ "s", { "s", "sec", "second" }, 1e9 },
	{ "hrs", { "hour", "hr" }, 3600e9 },
};

static const struct unit gcu_units[] = {
	{ "n*GCU", { "nanogcu" }, 1e-9 },
	{ "u*GCU", { "microgcu" }, 1e-6 },
	{ "m*GCU", { "milligcu" }, 1e-3 },
	{ "GCU", { "gcu" }, 1 },
	{ "k*GCU", { "kilogcu" }, 1e3 },
	{ "M*GCU", { "megagcu" }, 1e6 },
	{ "G*GCU", { "gigagcu" }, 1e9 },
	{ "T*GCU", { "teragcu" }, 1e12 },
	{ "P*GCU", { "petagcu" }, 1e15 },
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct unit_type unit_types[] = {
	{ byte_units, ARRAY_SIZE(byte_units), { "B", { "b", "byte" }, 1 } },
	{ time_units, ARRAY_SIZE(time_units), { "s", { NULL }, 1e9 } },
	{ gcu_units, ARRAY_SIZE(gcu_units), { "GCU", { NULL }, 1 } },
};

static const struct unit *sniff_unit(const struct unit_type *ut, const char *unit)
{
	char low[64];
	size_t len = strlen(unit);

	if (len >= sizeof(low))
		return NULL;
	for (size_t i = 0; i <= len; i++)
		low[i] = unit[i] >= 'A' && unit[i] <= 'Z' ? (char)(unit[i] - 'A' + 'a') : unit[i];
	if (len > 2 && low[len - 1] == 's')
		low[len - 1] = '\0';
	for (size_t i = 0; i < ut->n; i++) {
		const char *const *alias = ut->units[i].aliases;

		for (size_t j = 0; j < ARRAY_SIZE(ut->units[i].aliases) && alias[j]; j++)
			if (!strcmp(low, alias[j]))
				return &ut->units[i];
	}
	return NULL;
}

static bool convert_unit(const struct unit_type *ut, int64_t value, const char *from,
			 const char *to, double *v, const char **u)
{
	const struct unit *fu = sniff_unit(ut, from), *tu;

	if (!fu)
		return false;
	*v = (double)value * fu->factor;
	if (!strcmp(to, "minimum") || !strcmp(to, "auto")) {
		double f = 0;
		const char *best = NULL;

		for (size_t i = 0; i < ut->n; i++) {
			if (ut->units[i].factor >= f && *v / ut->units[i].factor >= 1.0) {
				f = ut->units[i].factor;
				best = ut->units[i].name;
			}
		}
		if (best) {
			*v /= f;
			*u = best;
			return true;
		}
		*v /= ut->def.factor;
		*u = ut->def.name;
		return true;
	}
	tu = sniff_unit(ut, to);
	if (!tu) {
		*v /= ut->def.factor;
		*u = ut->def.name;
		return true;
	}
	*v /= tu->factor;
	*u = tu->name;
	return true;
}

double top_units__scale(int64_t value, const char *from, const char *to, const char **unit)
{
	static const char *const plain[] = { "count", "sample", "unit", "minimum", "auto" };
	double v;

	if (value < 0 && value != INT64_MIN)
		return -top_units__scale(-value, from, to, unit);
	for (size_t i = 0; i < ARRAY_SIZE(unit_types); i++)
		if (convert_unit(&unit_types[i], value, from, to, &v, unit))
			return v;
	*unit = to;
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (!strcmp(to, plain[i]))
			*unit = "";
	return (double)value;
}

const char *top_units__label(int64_t value, const char *from, const char *to, char *buf,
			     size_t size)
{
	const char *unit;
	double v = top_units__scale(value, from, to, &unit);
	char num[400];
	size_t len;

	snprintf(num, sizeof(num), "%.2f", v);
	len = strlen(num);
	if (len > 3 && !strcmp(num + len - 3, ".00"))
		num[len - 3] = '\0';
	if (!strcmp(num, "0") || !strcmp(num, "-0"))
		unit = "";
	snprintf(buf, size, "%s%s", num, unit);
	return buf;
}

const char *top_units__percentage(int64_t value, int64_t total, char *buf, size_t size)
{
	double ratio = 0;

	if (total)
		ratio = fabs((double)value / (double)total) * 100;
	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, size, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, size, "%5.2f%%", ratio);
	else
		snprintf(buf, size, "%5.2g%%", ratio);
	return buf;
}
