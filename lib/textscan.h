/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * textscan: number scanners for the line parsers of symbolize/ (maps,
 * kallsyms, perf maps, V8 logs).  Lines there are cut out of a buffer, not
 * NUL-terminated, and must not accept what strtoull() would (blanks, signs,
 * a silent "0x", overflow), hence these.
 */
#ifndef ISOPROF_LIB_TEXTSCAN_H
#define ISOPROF_LIB_TEXTSCAN_H

#include <stdbool.h>
#include <stdint.h>

/*
 * One more than the value of each byte as a hex digit, 0 for the others: a
 * load per digit instead of three range tests (a perf map of millions of
 * lines is mostly hex).
 */
static const uint8_t textscan_hex_plus1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The value of a hex digit, or -1. */
static inline int textscan__hex_digit(char c)
{
	return (int)textscan_hex_plus1[(unsigned char)c] - 1;
}

/*
 * Hex digits at *pp (at least one, before end); false on none or on
 * overflow.  On success *pp moves past them.
 */
static inline bool textscan__hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	if (p >= end || !textscan_hex_plus1[(unsigned char)*p])
		return false;
	for (; p < end && (d = textscan_hex_plus1[(unsigned char)*p]); p++) {
		if (v > (UINT64_MAX >> 4))
			return false;
		v = (v << 4) | (uint64_t)(d - 1);
	}
	*pp = p;
	*out = v;
	return true;
}

/* textscan__hex() after an optional "0x" or "0X" (as V8 writes pointers). */
static inline bool textscan__hex_0x(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!textscan__hex(&p, end, out))
		return false;
	*pp = p;
	return true;
}

/*
 * Decimal digits at *pp (at least one, before end); false on none or on
 * overflow.  On success *pp moves past them.
 */
static inline bool textscan__dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0, d;

	if (p >= end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*pp = p;
	*out = v;
	return true;
}

#endif /* ISOPROF_LIB_TEXTSCAN_H */
