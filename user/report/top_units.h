/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * top_units: values the way pprof prints them (a port of its
 * internal/measurement), so `isoprof top` and `go tool pprof -top` print
 * the same text for the same number.
 *
 * Units are sniffed as pprof sniffs them: byte units (B, kB = 1024 B, MB
 * ...), time units (ns, us, ms, s, hrs; "nanoseconds", "microsecond" and
 * other aliases, a plural 's' dropped) and GCU units.  A unit of none of
 * these is printed as it is ("count", "sample", "unit": nothing).
 */
#ifndef ISOPROF_REPORT_TOP_UNITS_H
#define ISOPROF_REPORT_TOP_UNITS_H

#include <stddef.h>
#include <stdint.h>

/*
 * value, in unit from, in unit to; "minimum" and "auto" pick the largest
 * unit of from's kind in which it is at least 1.  *unit gets the unit's
 * short name (static), "" for a count.
 */
double top_units__scale(int64_t value, const char *from, const char *to, const char **unit);

/* pprof's ScaledLabel into buf: "1.50s", "10ms", "0", "12" (two decimals, ".00" dropped). */
const char *top_units__label(int64_t value, const char *from, const char *to, char *buf,
			     size_t size);

/* pprof's Percentage of |value| in total into buf: "  100%", "12.34%", "0.042%". */
const char *top_units__percentage(int64_t value, int64_t total, char *buf, size_t size);

#endif /* ISOPROF_REPORT_TOP_UNITS_H */
