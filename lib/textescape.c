// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* textescape: target text safe for terminals and logs; see textescape.h. */
#include <stdint.h>
#include <string.h>

#include "lib/textescape.h"
#include "lib/utf8.h"

/* Bytes at s to escape one by one (0: keep the n-byte sequence as it is). */
static size_t escaped_bytes(const unsigned char *s, size_t *n)
{
	size_t len = strnlen((const char *)s, 4);
	uint32_t cp;

	*n = utf8__seq(s, len);
	if (!*n)
		return 1;
	if (*n == 1)
		return s[0] < 0x20 || s[0] == 0x7f ? 1 : 0;
	if (*n == 2) {
		cp = (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
		return cp <= 0x9f ? 2 : 0;
	}
	if (*n == 3) {
		cp = (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
		if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
			return 3;
	}
	return 0;
}

bool textescape__needed(const char *in)
{
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t n;

	while (*s) {
		if (*s == '\\' || escaped_bytes(s, &n))
			return true;
		s += n;
	}
	return false;
}

const char *textescape(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)(in ? in : "");
	size_t o = 0, n, esc;

	if (!len)
		return out;
	while (*s) {
		esc = *s == '\\' ? 0 : escaped_bytes(s, &n);
		if (*s == '\\') {
			if (o + 2 >= len)
				break;
			out[o++] = '\\';
			out[o++] = '\\';
			s++;
			continue;
		}
		if (!esc) {
			if (o + n >= len)
				break;
			memcpy(out + o, s, n);
			o += n;
			s += n;
			continue;
		}
		if (o + 4 * esc >= len)
			break;
		for (size_t i = 0; i < esc; i++, s++) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[*s >> 4];
			out[o++] = hex[*s & 15];
		}
	}
	out[o] = '\0';
	return out;
}
