// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: v8log_scan against v8log on the same code log.  The
 * listing's scan must see the same version and scripts (ids, names,
 * lengths, SHA-256) as the full parser, and the sources it keeps must be
 * the full parser's bytes.  One scan object for every input, so its memo
 * of hashed sources is exercised too.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/v8log.h"
#include "symbolize/v8log_scan.h"

static bool keep_js(const char *name, void *ctx)
{
	size_t n = strlen(name);

	(void)ctx;
	return n >= 3 && !strcmp(name + n - 3, ".js");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct v8log_scan *scan;
	const struct v8log_scan_script *a;
	const struct v8log_script *b;
	struct v8log *log;
	size_t i, n;

	if (!scan && !(scan = v8log_scan__new(keep_js, NULL)))
		return 0;
	log = v8log__new(NULL, NULL, NULL);
	if (!log)
		return 0;
	if (v8log__parse_buf(log, (const char *)data, size) < 0 ||
	    v8log_scan__buf(scan, (const char *)data, size) < 0)
		goto out;	/* ENOMEM */
	if (strcmp(v8log_scan__version(scan), v8log__version(log)))
		__builtin_trap();
	n = v8log__script_count(log);
	if (v8log_scan__count(scan) != n)
		__builtin_trap();
	for (i = 0; i < n; i++) {
		a = v8log_scan__at(scan, i);
		b = v8log__script_at(log, i);
		if (!a || !b || a->id != b->id || strcmp(a->name, b->name) ||
		    a->has_source != (b->source != NULL) || a->source_len != b->source_len ||
		    strcmp(a->sha256_hex, b->sha256_hex))
			__builtin_trap();
		if (keep_js(a->name, NULL) && a->has_source &&
		    (!a->source || memcmp(a->source, b->source, b->source_len)))
			__builtin_trap();
	}
	if (v8log_scan__at(scan, n))
		__builtin_trap();
out:
	v8log__free(log);
	return 0;
}
