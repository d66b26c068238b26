// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* One-line error messages for library modules (see errmsg.h). */
#include <stdarg.h>
#include <stdio.h>

#include "lib/errmsg.h"

void errmsg__set(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int errmsg__fail(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return ret;
}

void errmsg__excerpt(char *dst, size_t dstlen, const void *src, size_t srclen)
{
	const unsigned char *s = src;
	size_t i, n = 0;

	if (!dstlen)
		return;
	for (i = 0; i < srclen && n + 1 < dstlen; i++)
		dst[n++] = s[i] >= 0x20 && s[i] < 0x7f ? (char)s[i] : '?';
	if (i < srclen && n >= 3) {
		dst[n - 3] = '.';
		dst[n - 2] = '.';
		dst[n - 1] = '.';
	}
	dst[n] = '\0';
}
