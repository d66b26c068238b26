/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * saturate: int64 arithmetic that sticks at INT64_MIN/INT64_MAX instead of
 * overflowing, for numbers that come from hostile input (a profile file
 * may hold any timestamps and counts).
 */
#ifndef ISOPROF_LIB_SATURATE_H
#define ISOPROF_LIB_SATURATE_H

#include <stdint.h>

static inline int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sub_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

#endif /* ISOPROF_LIB_SATURATE_H */
