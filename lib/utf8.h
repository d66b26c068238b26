/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * utf8: validating the UTF-8 that goes into JSON and HTML, where invalid
 * bytes from a profile (names are whatever a binary or a script holds)
 * must be replaced, not passed on, and a script file's, whose bytes V8
 * compiles as they are only when they are UTF-8.
 */
#ifndef ISOPROF_LIB_UTF8_H
#define ISOPROF_LIB_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Length (1..4) of the well-formed UTF-8 sequence at s, which has len
 * bytes, or 0 when it is not one (overlong forms, surrogates and code
 * points above U+10FFFF are not).  A NUL ends a sequence as an invalid
 * continuation byte, so for a NUL-terminated string len may be 4.
 */
static inline size_t utf8__seq(const unsigned char *s, size_t len)
{
	size_t n;
	uint32_t cp;

	if (!len)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i >= len || (s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* Is s[0..len) well-formed UTF-8 throughout (NUL bytes allowed)? */
static inline bool utf8__valid(const void *s, size_t len)
{
	const unsigned char *p = s;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) {
			i++;
			continue;
		}
		n = utf8__seq(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

#endif
