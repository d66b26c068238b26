// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: v8layout__parse() over arbitrary bytes.  What parses
 * also checks, fits a layout file, and survives format -> parse unchanged;
 * a refusal always says why.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1), err[256], buf[V8LAYOUT_FILE_MAX], small[64];
	struct v8_layout a, b;
	size_t n;
	int ret;

	if (!text)
		return 0;
	/* an exact-size copy: ASan sees a read past the end */
	memcpy(text, data, size);
	ret = v8layout__parse(text, size, &a, err, sizeof(err));
	if (ret) {
		if ((ret != -EINVAL && ret != -ESTALE) || !err[0] || strlen(err) >= sizeof(err))
			__builtin_trap();
		goto out;
	}
	if (err[0] || v8layout__check(&a, NULL, 0))
		__builtin_trap();
	n = v8layout__format(&a, buf, sizeof(buf));
	if (n >= sizeof(buf) || strlen(buf) != n)
		__builtin_trap();
	/* snprintf style on a short buffer: the same length, a terminated prefix */
	if (v8layout__format(&a, small, sizeof(small)) != n ||
	    strncmp(small, buf, sizeof(small) - 1) ||
	    strlen(small) != (n < sizeof(small) ? n : sizeof(small) - 1))
		__builtin_trap();
	if (v8layout__parse(buf, n, &b, err, sizeof(err)) || memcmp(&a, &b, sizeof(a)))
		__builtin_trap();
out:
	free(text);
	return 0;
}
