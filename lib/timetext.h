/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * timetext: instants as people type them on a command line or in a URL,
 * to unix seconds, and back to RFC 3339 text.
 *
 * timetext__parse() takes:
 *   - RFC 3339: "2026-12-03T21:25:00Z", with an optional fraction of a
 *     second (dropped: the result is whole seconds, rounded down) and "Z"
 *     or a numeric offset ("+01:00", "-05:30"); 't' and 'z' as well;
 *   - unix seconds: "1796332800" (decimal digits only);
 *   - "now", or a time before now: "-90s", "-15m", "-1h", "-7d" (one
 *     number and one unit: s, m, h or d);
 * and nothing else: no blanks, no dates without a time, no leap second.
 * Returns 0 with the instant in *out, or -EINVAL (-ERANGE for a number
 * out of range).  now_s is the caller's clock, so results are testable.
 *
 * timetext__rfc3339() writes "2026-12-03T21:25:00Z" into buf (at least
 * TIMETEXT_RFC3339_LEN bytes); an instant it cannot write gives "?".
 *
 * No globals, no I/O, no locale: safe from any thread.
 */
#ifndef ISOPROF_LIB_TIMETEXT_H
#define ISOPROF_LIB_TIMETEXT_H

#include <stddef.h>
#include <stdint.h>

#define TIMETEXT_RFC3339_LEN 32

int timetext__parse(const char *s, int64_t now_s, int64_t *out);
void timetext__rfc3339(int64_t s, char *buf, size_t len);

#endif /* ISOPROF_LIB_TIMETEXT_H */
