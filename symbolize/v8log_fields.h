/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8log_fields: the comma-separated fields of one V8 code-log line, as the
 * two code-log readers (v8log's full parse for record, v8log_scan's light
 * pass for targets) split and read them, so both accept exactly the same
 * lines.  Internal to symbolize/; a field points into the caller's line.
 */
#ifndef ISOPROF_SYMBOLIZE_V8LOG_FIELDS_H
#define ISOPROF_SYMBOLIZE_V8LOG_FIELDS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/textscan.h"

struct fld {
	const char *s;
	size_t n;
};

/* Split [p, end) at ',' into at most max fields, the last taking the rest. */
static inline size_t split(const char *p, const char *end, struct fld *f, size_t max)
{
	size_t nf = 0;
	const char *c;

	while (nf < max) {
		c = nf + 1 < max ? memchr(p, ',', (size_t)(end - p)) : NULL;
		f[nf].s = p;
		f[nf].n = (size_t)((c ? c : end) - p);
		nf++;
		if (!c)
			break;
		p = c + 1;
	}
	return nf;
}


/* The whole field as a number that scan (a textscan__ function) reads. */
static inline bool fld_num(const struct fld *f, bool (*scan)(const char **, const char *, uint64_t *),
		    uint64_t *out)
{
	const char *p = f->s, *end = f->s + f->n;
	uint64_t v;

	if (!scan(&p, end, &v) || p != end)
		return false;
	*out = v;
	return true;
}

/* Hex, "0x" optional (V8 always writes it for pointers). */
static inline bool fld_hex(const struct fld *f, uint64_t *out)
{
	return fld_num(f, textscan__hex_0x, out);
}

static inline bool fld_u64(const struct fld *f, uint64_t *out)
{
	return fld_num(f, textscan__dec, out);
}

static inline bool fld_int(const struct fld *f, int *out)
{
	struct fld digits = *f;
	bool neg = false;
	uint64_t v;

	if (digits.n && digits.s[0] == '-') {
		neg = true;
		digits.s++;
		digits.n--;
	}
	if (!fld_u64(&digits, &v) || v > (uint64_t)INT_MAX + neg)
		return false;
	*out = neg ? (int)(-(int64_t)v) : (int)v;
	return true;
}

/* A decimal V8 printed (a time, possibly negative): checked, not kept. */
static inline bool fld_is_number(const struct fld *f)
{
	size_t i = f->n && f->s[0] == '-';

	if (i == f->n || f->n > 21)
		return false;
	for (; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
	}
	return true;
}

static inline bool fld_is(const struct fld *f, const char *s)
{
	return strlen(s) == f->n && !memcmp(f->s, s, f->n);
}

/*
 * The V8 version of a "v8-version" line's fields
 * (major,minor,build,patch[,embedder],candidate) into buf as
 * "major.minor.build.patch[embedder]"; false for a malformed line.
 */
static inline bool v8log_fields__version(const char *p, const char *end, char *buf, size_t len)
{
	struct fld f[7];
	size_t nf = split(p, end, f, 7), i;
	uint64_t v;

	if (nf < 5 || nf > 6 || !fld_u64(&f[nf - 1], &v))
		return false;
	for (i = 0; i < 4; i++) {
		if (!fld_u64(&f[i], &v))
			return false;
	}
	snprintf(buf, len, "%.*s.%.*s.%.*s.%.*s%.*s", (int)f[0].n, f[0].s, (int)f[1].n,
		 f[1].s, (int)f[2].n, f[2].s, (int)f[3].n, f[3].s,
		 nf == 6 ? (int)(f[4].n > 64 ? 64 : f[4].n) : 0, nf == 6 ? f[4].s : "");
	return true;
}

#endif /* ISOPROF_SYMBOLIZE_V8LOG_FIELDS_H */
