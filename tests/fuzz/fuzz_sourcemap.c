// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the input as a source map, and, when it is printable
 * text, as the "mappings" of a map with a few sources and names (so the
 * VLQ decoder sees the fuzzer's bytes, not only JSON that happens to
 * parse).  A map that parses is looked up at every line it covers, at
 * columns around its segments, with every generated name length up to 24,
 * and checked against the input as its script.  The input also goes
 * through url_in_script (and the URL found through decode_data_url and
 * back into the parser), decode_data_url, and clean_source, whose cut
 * output must be a prefix of the whole and which must be idempotent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sourcemap.h"

#define MAX_LINES 64
#define MAX_WRAPPED 8192
#define CLEAN_MAX 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile size_t sink;

static void check_pos(const struct sourcemap *sm, uint32_t line, uint32_t col)
{
	struct sourcemap_pos pos, again;

	if (sourcemap__lookup(sm, line, col, &pos))
		return;
	if (pos.gen_line != line || pos.gen_column > col || !pos.source)
		__builtin_trap();
	sink += strlen(pos.source) + (pos.name ? strlen(pos.name) : 0);
	/* the segment found answers for its own column too */
	if (sourcemap__lookup(sm, line, pos.gen_column, &again) || again.source != pos.source ||
	    again.line != pos.line || again.column != pos.column || again.name != pos.name ||
	    again.gen_column != pos.gen_column)
		__builtin_trap();
}

static void check_names(const struct sourcemap *sm, uint32_t line, uint32_t col)
{
	if (sourcemap__function_name(sm, line, col, 0))
		__builtin_trap();
	for (size_t len = 1; len <= 24; len += len < 4 ? 1 : 5) {
		const char *name = sourcemap__function_name(sm, line, col, len);

		if (name)
			sink += strlen(name);
	}
}

static void exercise(const struct sourcemap *sm, const char *text, size_t len)
{
	uint32_t lines = sourcemap__line_count(sm);
	size_t nsegs = sourcemap__segment_count(sm);
	struct sourcemap_check c;

	if (!nsegs != !lines)
		__builtin_trap();
	if (sourcemap__file(sm))
		sink += strlen(sourcemap__file(sm));
	for (uint32_t line = 0; line <= lines && line < MAX_LINES; line++) {
		for (uint32_t col = 0; col < 48; col++) {
			check_pos(sm, line, col);
			check_names(sm, line, col);
		}
		check_pos(sm, line, INT32_MAX);
		check_pos(sm, line, UINT32_MAX);
		check_names(sm, line, UINT32_MAX);
	}
	/* lines far out, for offsets of index maps */
	check_pos(sm, lines ? lines - 1 : 0, 1000);
	check_pos(sm, INT32_MAX, 0);
	check_pos(sm, UINT32_MAX, UINT32_MAX);

	sourcemap__check_script(sm, text, len, &c);
	if (c.segments != nsegs || c.outside > c.segments || c.named > c.segments ||
	    c.named_on_identifier > c.named)
		__builtin_trap();
	if (c.outside && sourcemap_check__matches(&c))
		__builtin_trap();
	sourcemap__check_script(sm, "", 0, &c);
	if (c.segments != nsegs)
		__builtin_trap();
}

static void parse_and_exercise(const char *json, size_t len, const char *text, size_t text_len)
{
	struct sourcemap *sm = (struct sourcemap *)1;
	char err[256];
	int ret;

	err[0] = '\0';
	ret = sourcemap__parse(json, len, &sm, err, sizeof(err));
	if (ret) {
		if (sm || (ret != -EINVAL && ret != -E2BIG && ret != -ENOMEM) ||
		    (ret == -EINVAL && !err[0]))
			__builtin_trap();
		return;
	}
	exercise(sm, text, text_len);
	sourcemap__free(sm);
}

/* The input as the mappings of a map, when it can be put in a JSON string as is. */
static void as_mappings(const uint8_t *data, size_t size)
{
	static const char head[] = "{\"version\":3,\"sources\":[\"a.ts\",null,\"../b/./c.ts\"],"
				   "\"names\":[\"f\",\"g\",\"h\",\"f\"],\"mappings\":\"";
	char *json;
	size_t len;

	if (size > MAX_WRAPPED)
		return;
	for (size_t i = 0; i < size; i++)
		if (data[i] < 0x20 || data[i] > 0x7e || data[i] == '"' || data[i] == '\\')
			return;
	json = malloc(sizeof(head) + size + 2);
	if (!json)
		return;
	memcpy(json, head, sizeof(head) - 1);
	len = sizeof(head) - 1;
	memcpy(json + len, data, size);
	len += size;
	memcpy(json + len, "\"}", 2);
	len += 2;
	parse_and_exercise(json, len, (const char *)data, size);
	free(json);
}

static void check_data_url(const char *url, size_t len, bool parse)
{
	char *out = (char *)1;
	size_t out_len = 0;
	int ret = sourcemap__decode_data_url(url, len, &out, &out_len);

	if (ret) {
		if (ret != -EINVAL && ret != -E2BIG && ret != -ENOMEM)
			__builtin_trap();
		return;
	}
	if (out[out_len] != '\0' || out_len > len)
		__builtin_trap();
	if (parse)
		parse_and_exercise(out, out_len, url, len);
	free(out);
}

static void check_clean(const uint8_t *data, size_t size)
{
	char src[CLEAN_MAX + 1], full[CLEAN_MAX + 1], again[CLEAN_MAX + 1], cut[8];
	size_t n = size < CLEAN_MAX ? size : CLEAN_MAX, flen;

	memcpy(src, data, n);
	src[n] = '\0';
	sourcemap__clean_source(src, full, sizeof(full));
	flen = strlen(full);
	if (flen > strlen(src))
		__builtin_trap();
	sourcemap__clean_source(full, again, sizeof(again));
	if (strcmp(full, again))
		__builtin_trap();
	for (size_t k = 1; k <= sizeof(cut); k += 3) {
		sourcemap__clean_source(src, cut, k);
		if (strlen(cut) != (flen < k - 1 ? flen : k - 1) || strncmp(cut, full, k - 1))
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *url;
	size_t url_len;

	parse_and_exercise(text, size, text, size);
	as_mappings(data, size);
	if (sourcemap__url_in_script(text, size, &url, &url_len)) {
		if (!url_len || url < text || url + url_len > text + size)
			__builtin_trap();
		check_data_url(url, url_len, true);
	}
	check_data_url(text, size, false);
	check_clean(data, size);
	return 0;
}
