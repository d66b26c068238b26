// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: v8name__parse() and v8name__parse_log() over arbitrary names. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8name.h"

static volatile size_t sink;

static bool inside(const char *s, const char *buf, size_t size)
{
	return (uintptr_t)s >= (uintptr_t)buf && (uintptr_t)s < (uintptr_t)buf + size;
}

/* Invariants: every string ends inside the buffer (or is static), the parts fit in the name. */
static void check(const struct v8name *n, const char *buf, size_t size, size_t len,
		  const char *caller_tag)
{
	const char *fields[] = { n->function, n->script, n->regexp_flags };
	size_t total = 0, i, l;
	enum v8name_tier tier;
	bool cs;

	if (n->kind > V8NAME_OTHER || !n->tag || !n->marker || !n->function || !n->regexp_flags)
		__builtin_trap();
	for (i = 0; i < 3; i++) {
		if (!fields[i])
			continue;
		l = strlen(fields[i]);
		if (l && (!inside(fields[i], buf, size) || !inside(fields[i] + l, buf, size)))
			__builtin_trap();
		total += l;
	}
	if (total > len)
		__builtin_trap();
	if (n->tag != caller_tag && *n->tag && !inside(n->tag, buf, size))
		__builtin_trap();
	/* an OSR marker is "o" and a tier marker */
	if (n->osr && n->marker[0] != 'o')
		__builtin_trap();
	if (!v8name__marker_tier(n->marker + n->osr, strlen(n->marker + n->osr), &tier, &cs) ||
	    tier != n->tier || cs != n->context_specialized)
		__builtin_trap();
	if (!n->script && (n->line || n->column))
		__builtin_trap();
	sink += strlen(v8name_kind__str(n->kind)) + strlen(v8name_tier__str(n->tier));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t bufsize = v8name__buf_size(size), taglen;
	char *raw = malloc(size ? size : 1), *buf = malloc(bufsize), tag[32], marker[3];
	struct v8name n;

	if (!raw || !buf)
		goto out;
	memcpy(raw, data, size);
	if (v8name__parse(raw, size, &n, buf, bufsize) < 0)
		__builtin_trap();
	check(&n, buf, bufsize, size, NULL);
	if (v8name__parse(raw, size, &n, buf, size) != -ENOSPC || n.kind != V8NAME_UNKNOWN)
		__builtin_trap();

	/* As a v8.log name: a tag and a marker taken from the first bytes. */
	if (size >= 2) {
		static const char *const tags[] = { "JS", "Script", "Eval", "Builtin", "RegExp",
						    "LazyCompile", "Callback", "", "Weird" };
		static const char *const markers[] = { "", "~", "^", "+", "+'", "*", "*'", "-", "?" };

		taglen = strlen(tags[data[0] % 9]);
		memcpy(tag, tags[data[0] % 9], taglen + 1);
		strcpy(marker, markers[data[1] % 9]);
		if (v8name__parse_log(tag, data[1] & 0x80 ? NULL : marker, raw + 2, size - 2, &n, buf,
				      bufsize) < 0)
			__builtin_trap();
		check(&n, buf, bufsize, size - 2, tag);
		if (n.tag != tag)
			__builtin_trap();
	}
out:
	free(raw);
	free(buf);
	return 0;
}
