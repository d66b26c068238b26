/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * monotime: the CLOCK_MONOTONIC time, for windows, deadlines, timeouts
 * and rate limits (never for timestamps a person reads).
 */
#ifndef ISOPROF_LIB_MONOTIME_H
#define ISOPROF_LIB_MONOTIME_H

#include <stdint.h>
#include <time.h>

static inline uint64_t monotime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t monotime_ms(void)
{
	return monotime_ns() / 1000000;
}

#endif /* ISOPROF_LIB_MONOTIME_H */
