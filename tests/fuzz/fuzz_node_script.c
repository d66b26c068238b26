// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: what user/attribute/node_script reads from a node
 * process it does not trust: the command line (NUL-separated words),
 * NODE_OPTIONS, a script's text (the scan for other code it loads), and
 * V8's script names as files, each with checks of what it promises.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/node_script.h"

#define MAX_WORDS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *argv[MAX_WORDS], *script, *why;
	char *text = malloc(size + 1), out[PATH_MAX], why_buf[256];
	size_t argc = 0;
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	/* the command line: words as /proc/PID/cmdline has them */
	for (size_t i = 0; i < size && argc < MAX_WORDS; i += strlen(text + i) + 1)
		argv[argc++] = text + i;
	rc = node_script__parse_cmdline(argv, argc, &script, &why);
	if (rc == 0) {
		/* the script is one of the words, after argv[0] */
		size_t k;

		for (k = 1; k < argc && argv[k] != script; k++)
			;
		if (k == argc || why)
			__builtin_trap();
	} else if ((rc != -ENOENT && rc != -EXDEV) || !why) {
		__builtin_trap();
	}

	rc = node_script__check_options(text, size, &why);
	if (rc ? rc != -EXDEV || !why : why != NULL)
		__builtin_trap();

	rc = node_script__self_contained(text, size, why_buf, sizeof(why_buf));
	if (rc ? rc != -EXDEV || !why_buf[0] || strlen(why_buf) >= sizeof(why_buf) : why_buf[0])
		__builtin_trap();

	/* a name as a file, and a path resolved: absolute, no "." or ".." left */
	if (!node_script__name_path(text, out, sizeof(out)) &&
	    (out[0] != '/' || strlen(out) >= sizeof(out)))
		__builtin_trap();
	if (argc >= 2 && !node_script__resolve("/srv/app", argv[1], out, sizeof(out))) {
		if (out[0] != '/' || strstr(out, "/./") || strstr(out, "/../") || strstr(out, "//"))
			__builtin_trap();
	}
	free(text);
	return 0;
}
