/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * errmsg: the one-line error text that library modules hand back to the
 * command that reports it (STYLE: libraries never print).
 *
 * errmsg__set() formats into a caller's (err, errlen) buffer; a NULL or
 * empty buffer is allowed and ignored.  errmsg__excerpt() makes untrusted
 * bytes printable for such a message: non-printable bytes become '?', and
 * "..." ends an excerpt that had to be cut.
 */
#ifndef ISOPROF_LIB_ERRMSG_H
#define ISOPROF_LIB_ERRMSG_H

#include <stddef.h>

void errmsg__set(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* errmsg__set(), then ret: `return errmsg__fail(err, errlen, -EINVAL, "...")`. */
int errmsg__fail(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

void errmsg__excerpt(char *dst, size_t dstlen, const void *src, size_t srclen);

#endif
