// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/sourcemap: Base64 VLQ values, a real esbuild
 * map of a minified bundle (tests/fixtures/sourcemaps/, lookups, function
 * names, the check against its script and against a changed one, the
 * same map inline in a data: URL), sourceRoot, index maps, segments of
 * one field, malformed maps and the error each gives, the
 * sourceMappingURL comment, data: URLs and source name cleaning.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/sourcemap.h"

#define FIXTURES "tests/fixtures/sourcemaps/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static struct sourcemap *parse_ok(const char *json)
{
	struct sourcemap *sm;
	char err[256] = "";
	int ret = sourcemap__parse(json, strlen(json), &sm, err, sizeof(err));

	if (ret)
		fail_msg("sourcemap__parse: %d: %s\n%s", ret, err, json);
	return sm;
}

/* A map that fails with ret and an error that says what (contains want). */
static void parse_bad(const char *json, int ret, const char *want)
{
	struct sourcemap *sm = (struct sourcemap *)1;
	char err[256] = "";
	int got = sourcemap__parse(json, strlen(json), &sm, err, sizeof(err));

	if (got != ret || !strstr(err, want))
		fail_msg("%s\n  gave %d \"%s\", want %d \"...%s...\"", json, got, err, ret, want);
	assert_null(sm);
}

/* A regular map of sources a.ts, b.ts, c.ts and names n0..n3 around mappings. */
static struct sourcemap *simple(const char *mappings)
{
	char json[4096];

	snprintf(json, sizeof(json),
		 "{\"version\":3,\"sources\":[\"a.ts\",\"b.ts\",\"c.ts\"],"
		 "\"names\":[\"n0\",\"n1\",\"n2\",\"n3\"],\"mappings\":\"%s\"}",
		 mappings);
	return parse_ok(json);
}

static void simple_bad(const char *mappings, const char *want)
{
	char json[4096];

	snprintf(json, sizeof(json),
		 "{\"version\":3,\"sources\":[\"a.ts\",\"b.ts\",\"c.ts\"],"
		 "\"names\":[\"n0\",\"n1\",\"n2\",\"n3\"],\"mappings\":\"%s\"}",
		 mappings);
	parse_bad(json, -EINVAL, want);
}

static void expect_pos(const struct sourcemap *sm, uint32_t line, uint32_t column,
		       const char *source, uint32_t oline, uint32_t ocol, const char *name)
{
	struct sourcemap_pos pos;
	int ret = sourcemap__lookup(sm, line, column, &pos);

	if (ret)
		fail_msg("lookup %u:%u: %d", line, column, ret);
	assert_string_equal(pos.source, source);
	assert_int_equal(pos.line, oline);
	assert_int_equal(pos.column, ocol);
	if (name)
		assert_string_equal(pos.name, name);
	else
		assert_null(pos.name);
}

static void expect_none(const struct sourcemap *sm, uint32_t line, uint32_t column)
{
	struct sourcemap_pos pos;

	assert_int_equal(sourcemap__lookup(sm, line, column, &pos), -ENOENT);
}

/* --- VLQ --- */

/* Each vector as the original line of a 4-field segment: "AA" value "A". */
static void test_vlq_vectors(void **state)
{
	static const struct {
		const char *vlq;
		uint32_t value;
	} vec[] = {
		{ "A", 0 },	  { "C", 1 },		 { "gB", 16 },
		{ "2H", 123 },	  { "qxmvrH", 123456789 }, { "+/////D", 2147483647 },
	};
	char m[64];

	(void)state;
	for (size_t i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		struct sourcemap *sm;

		snprintf(m, sizeof(m), "AA%sA", vec[i].vlq);
		sm = simple(m);
		expect_pos(sm, 0, 0, "a.ts", vec[i].value, 0, NULL);
		sourcemap__free(sm);
	}
	/* "D" is -1: the second segment goes back a line */
	{
		struct sourcemap *sm = simple("AACA,CADA");

		expect_pos(sm, 0, 0, "a.ts", 1, 0, NULL);
		expect_pos(sm, 0, 1, "a.ts", 0, 0, NULL);
		sourcemap__free(sm);
	}
	/* ... and back a column: 2, then 1 */
	{
		struct sourcemap *sm = simple("EAAA,DAAC");

		expect_pos(sm, 0, 1, "a.ts", 0, 1, NULL);
		expect_pos(sm, 0, 2, "a.ts", 0, 0, NULL);
		assert_int_equal(sourcemap__segment_count(sm), 2);
		sourcemap__free(sm);
	}
	/* 2^31 - 1 is the largest column; one more is out of range */
	{
		struct sourcemap *sm = simple("+/////DAAA");

		expect_pos(sm, 0, 2147483647u, "a.ts", 0, 0, NULL);
		expect_none(sm, 0, 2147483646u);
		sourcemap__free(sm);
	}
	simple_bad("+/////DAAA,CAAA", "generated column 2147483648 out of range");
}

static void test_vlq_errors(void **state)
{
	(void)state;
	/* 2^31 is over 32 bits signed, and so is any 8th digit */
	simple_bad("AAggggggEA", "line 1, segment 1: a VLQ value over 32 bits");
	simple_bad("AAggggggggA", "a VLQ value over 32 bits");
	simple_bad("AA//////DA", "original line -2147483647 out of range");
	/* "B", negative zero, is -2^31 */
	simple_bad("AAAB", "original column -2147483648 out of range");
	simple_bad("AAAD", "original column -1 out of range");
	simple_bad("AA!A", "line 1, segment 1: not a Base64 digit at offset 2");
	simple_bad("AAAA;AAAA,AA=A", "line 2, segment 2: not a Base64 digit");
	simple_bad("AAAg", "a VLQ value ends early");
	simple_bad("Ag,AAAA", "a VLQ value ends early");
	simple_bad("Ag;AAAA", "a VLQ value ends early");
}

/* --- the esbuild map --- */

struct fixture {
	char *map, *js;
	size_t map_len, js_len;
	struct sourcemap *sm;
};

static void esbuild_load(struct fixture *f)
{
	char err[256] = "";
	int ret;

	f->map = slurp(FIXTURES "esbuild_min/worker.js.map", &f->map_len);
	f->js = slurp(FIXTURES "esbuild_min/worker.js", &f->js_len);
	ret = sourcemap__parse(f->map, f->map_len, &f->sm, err, sizeof(err));
	if (ret)
		fail_msg("worker.js.map: %d: %s", ret, err);
}

static void fixture_free(struct fixture *f)
{
	sourcemap__free(f->sm);
	free(f->map);
	free(f->js);
}

/* The column of the first s in the script's first line. */
static uint32_t col_of(const struct fixture *f, const char *s)
{
	const char *p = strstr(f->js, s), *nl = strchr(f->js, '\n');

	assert_non_null(p);
	assert_true(p < nl);
	return (uint32_t)(p - f->js);
}

static void test_esbuild_lookup(void **state)
{
	struct fixture f;
	struct sourcemap_pos pos;
	uint32_t fn_i;

	(void)state;
	esbuild_load(&f);
	assert_null(sourcemap__file(f.sm));
	assert_int_equal(sourcemap__segment_count(f.sm), 164);
	assert_int_equal(sourcemap__line_count(f.sm), 2);

	/* `function c(`: the `(` at column 10 is inside the segment of `c` (column 9) */
	expect_pos(f.sm, 0, 10, "src/pricing.ts", 6, 16, "computeCompoundInterest");
	assert_int_equal(sourcemap__lookup(f.sm, 0, 10, &pos), 0);
	assert_int_equal(pos.gen_line, 0);
	assert_int_equal(pos.gen_column, 9);
	/* `function` itself: line 6 (0-based) of pricing.ts, no name */
	expect_pos(f.sm, 0, 0, "src/pricing.ts", 6, 7, NULL);
	/* the parameter `n` is `principal` */
	expect_pos(f.sm, 0, 11, "src/pricing.ts", 6, 40, "principal");

	/* `function i(` is text.ts's tokenizeInvoiceLines */
	fn_i = col_of(&f, "function i(");
	assert_int_equal(fn_i, 249);
	expect_pos(f.sm, 0, fn_i, "src/text.ts", 1, 7, NULL);
	expect_pos(f.sm, 0, fn_i + 9, "src/text.ts", 1, 16, "tokenizeInvoiceLines");

	/* the fetch handler in index.ts; the template literal's second line */
	expect_pos(f.sm, 0, col_of(&f, "async fetch("), "src/index.ts", 7, 2, NULL);
	expect_pos(f.sm, 1, 0, "src/index.ts", 11, 60, NULL);
	expect_pos(f.sm, 1, 3, "src/index.ts", 13, 0, NULL);
	/* the last segment of a line maps to its end; no line 2 */
	expect_pos(f.sm, 1, 1000, "src/index.ts", 13, 0, NULL);
	expect_none(f.sm, 2, 0);
	fixture_free(&f);
}

static void test_esbuild_function_names(void **state)
{
	struct fixture f;
	uint32_t col;

	(void)state;
	esbuild_load(&f);
	/* V8 places a function at the `(` of its parameters */
	assert_string_equal(sourcemap__function_name(f.sm, 0, 10, 1), "computeCompoundInterest");
	col = col_of(&f, "function i(") + 10;
	assert_string_equal(sourcemap__function_name(f.sm, 0, col, 1), "tokenizeInvoiceLines");
	/* anonymous: nothing */
	assert_null(sourcemap__function_name(f.sm, 0, 10, 0));
	/*
	 * marginalTaxFor and constructor keep their names: the map has no
	 * named segment for them, and the named `t` before each (this.brackets=t)
	 * is one column long, not theirs.
	 */
	col = col_of(&f, "marginalTaxFor(") + 14;
	assert_null(sourcemap__function_name(f.sm, 0, col, 14));
	col = col_of(&f, "constructor(") + 11;
	assert_null(sourcemap__function_name(f.sm, 0, col, 11));
	/* `async fetch(`: fetch kept its name too */
	col = col_of(&f, "async fetch(") + 11;
	assert_null(sourcemap__function_name(f.sm, 0, col, 5));
	/* a line with no segments, and a column before the first */
	assert_null(sourcemap__function_name(f.sm, 5, 10, 1));
	fixture_free(&f);
}

static void test_esbuild_check_script(void **state)
{
	struct sourcemap_check c;
	struct fixture f;
	char *moved;

	(void)state;
	esbuild_load(&f);
	sourcemap__check_script(f.sm, f.js, f.js_len, &c);
	assert_int_equal(c.segments, 164);
	assert_int_equal(c.outside, 0);
	assert_int_equal(c.named, 60);
	assert_int_equal(c.named_on_identifier, 60);
	assert_true(sourcemap_check__matches(&c));

	/* 40 characters more at the start: the named segments land anywhere */
	moved = malloc(f.js_len + 41);
	assert_non_null(moved);
	memset(moved, ' ', 40);
	memcpy(moved + 40, f.js, f.js_len + 1);
	memcpy(moved, "var q=1;", 8);
	sourcemap__check_script(f.sm, moved, f.js_len + 40, &c);
	assert_int_equal(c.outside, 0);
	assert_true(c.named_on_identifier * 10 < c.named * 9);
	assert_false(sourcemap_check__matches(&c));

	/* a line more at the start: line 0's segments fall on the short line 1 */
	moved[0] = '\n';
	memcpy(moved + 1, f.js, f.js_len + 1);
	sourcemap__check_script(f.sm, moved, f.js_len + 1, &c);
	assert_true(c.outside > 100);
	assert_false(sourcemap_check__matches(&c));

	/* the script cut short: the second line's segments are outside */
	sourcemap__check_script(f.sm, f.js, (size_t)(strchr(f.js, '\n') - f.js), &c);
	assert_int_equal(c.outside, 4);
	assert_false(sourcemap_check__matches(&c));
	free(moved);
	fixture_free(&f);
}

/* The same build with --sourcemap=inline: comment, data: URL, map. */
static void test_esbuild_inline(void **state)
{
	struct sourcemap_check c;
	struct sourcemap *sm;
	const char *url;
	size_t len, url_len, json_len;
	char err[256] = "", *js, *json;

	(void)state;
	js = slurp(FIXTURES "esbuild_inline/worker.js", &len);
	assert_true(sourcemap__url_in_script(js, len, &url, &url_len));
	assert_true(url > js && url + url_len <= js + len);
	assert_int_equal(strncmp(url, "data:application/json;base64,", 29), 0);
	assert_int_equal(sourcemap__decode_data_url(url, url_len, &json, &json_len), 0);
	assert_int_equal(strlen(json), json_len);
	assert_int_equal(sourcemap__parse(json, json_len, &sm, err, sizeof(err)), 0);
	expect_pos(sm, 0, 10, "src/pricing.ts", 6, 16, "computeCompoundInterest");
	sourcemap__check_script(sm, js, len, &c);
	assert_int_equal(c.segments, 164);
	assert_true(sourcemap_check__matches(&c));
	sourcemap__free(sm);
	free(json);
	free(js);
}

/* --- maps built here --- */

static void test_source_root(void **state)
{
	struct sourcemap *sm;

	(void)state;
	sm = parse_ok("{\"version\":3,\"sourceRoot\":\"/src\",\"sources\":[\"x.ts\",\"./y/../z.ts\"],"
		      "\"mappings\":\"AAAA,CCAA\",\"file\":\"out.js\"}");
	expect_pos(sm, 0, 0, "/src/x.ts", 0, 0, NULL);
	expect_pos(sm, 0, 1, "/src/z.ts", 0, 0, NULL);
	assert_string_equal(sourcemap__file(sm), "out.js");
	sourcemap__free(sm);

	/* one '/' between them, and the join is cleaned as a whole */
	sm = parse_ok("{\"version\":3,\"sourceRoot\":\"webpack://app/\",\"sources\":[\"./src/a.ts\"],"
		      "\"mappings\":\"AAAA\"}");
	expect_pos(sm, 0, 0, "src/a.ts", 0, 0, NULL);
	sourcemap__free(sm);
	sm = parse_ok("{\"version\":3,\"sourceRoot\":\"../lib\",\"sources\":[\"a.ts\"],"
		      "\"mappings\":\"AAAA\"}");
	expect_pos(sm, 0, 0, "lib/a.ts", 0, 0, NULL);
	sourcemap__free(sm);

	/* empty or null sourceRoot: the source alone; a null source is "" */
	sm = parse_ok("{\"version\":3,\"sourceRoot\":\"\",\"sources\":[\"../a.ts\",null],"
		      "\"mappings\":\"AAAA,CCAA\"}");
	expect_pos(sm, 0, 0, "a.ts", 0, 0, NULL);
	expect_pos(sm, 0, 1, "", 0, 0, NULL);
	sourcemap__free(sm);
	sm = parse_ok("{\"version\":3,\"sourceRoot\":null,\"sources\":[\"a.ts\"],"
		      "\"mappings\":\"AAAA\"}");
	expect_pos(sm, 0, 0, "a.ts", 0, 0, NULL);
	sourcemap__free(sm);
}

/* Sources that clean to one name are one string. */
static void test_interned(void **state)
{
	struct sourcemap_pos a, b;
	struct sourcemap *sm;

	(void)state;
	sm = parse_ok("{\"version\":3,\"sources\":[\"./a.ts\",\"../a.ts\"],\"names\":[\"f\",\"f\"],"
		      "\"mappings\":\"AAAAA,CCAAC\"}");
	assert_int_equal(sourcemap__lookup(sm, 0, 0, &a), 0);
	assert_int_equal(sourcemap__lookup(sm, 0, 1, &b), 0);
	assert_ptr_equal(a.source, b.source);
	assert_ptr_equal(a.name, b.name);
	assert_string_equal(a.source, "a.ts");
	sourcemap__free(sm);
}

static void test_one_field_segments(void **state)
{
	struct sourcemap *sm;

	(void)state;
	/* col 0 mapped, col 4 ends it, col 8 mapped again; line 1 ends with one */
	sm = simple("AAAA,I,ICAE;AAAA,U");
	expect_pos(sm, 0, 0, "a.ts", 0, 0, NULL);
	expect_pos(sm, 0, 3, "a.ts", 0, 0, NULL);
	expect_none(sm, 0, 4);
	expect_none(sm, 0, 7);
	expect_pos(sm, 0, 8, "b.ts", 0, 2, NULL);
	expect_pos(sm, 0, 100, "b.ts", 0, 2, NULL);
	expect_pos(sm, 1, 9, "b.ts", 0, 2, NULL);
	expect_none(sm, 1, 10);
	expect_none(sm, 1, 1000);
	assert_int_equal(sourcemap__segment_count(sm), 5);
	sourcemap__free(sm);

	/* a map of 1-field segments only maps nothing, and needs no sources */
	sm = parse_ok("{\"version\":3,\"sources\":[],\"mappings\":\"A,C;;E\"}");
	expect_none(sm, 0, 0);
	expect_none(sm, 2, 5);
	assert_int_equal(sourcemap__line_count(sm), 3);
	sourcemap__free(sm);
}

static void test_lookup_edges(void **state)
{
	struct sourcemap *sm;

	(void)state;
	/* before the first segment of a line, a line with none, nothing carried over */
	sm = simple("EAAA;;AACA");
	expect_none(sm, 0, 1);
	expect_pos(sm, 0, 2, "a.ts", 0, 0, NULL);
	expect_none(sm, 1, 0);
	expect_none(sm, 1, 50);
	expect_pos(sm, 2, 0, "a.ts", 1, 0, NULL);
	expect_none(sm, 3, 0);
	assert_int_equal(sourcemap__line_count(sm), 3);
	sourcemap__free(sm);

	/*
	 * Unsorted within a line (columns 10, 3, 5, 5): sorted, and of two
	 * segments at one column the later one wins.
	 */
	sm = simple("UAAA,PCAA,ECAC,ADAC");
	expect_none(sm, 0, 2);
	expect_pos(sm, 0, 3, "b.ts", 0, 0, NULL);
	expect_pos(sm, 0, 4, "b.ts", 0, 0, NULL);
	expect_pos(sm, 0, 5, "b.ts", 0, 2, NULL);
	expect_pos(sm, 0, 9, "b.ts", 0, 2, NULL);
	expect_pos(sm, 0, 10, "a.ts", 0, 0, NULL);
	sourcemap__free(sm);

	/* an empty map */
	sm = parse_ok("{\"version\":3,\"sources\":[],\"names\":[],\"mappings\":\"\"}");
	assert_int_equal(sourcemap__segment_count(sm), 0);
	assert_int_equal(sourcemap__line_count(sm), 0);
	expect_none(sm, 0, 0);
	assert_null(sourcemap__function_name(sm, 0, 0, 1));
	sourcemap__free(sm);
}

/* Base64 VLQ of v at p; the end. */
static char *vlq_put(char *p, int64_t v)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint64_t u = v < 0 ? ((uint64_t)-v << 1) | 1 : (uint64_t)v << 1;

	do {
		unsigned int d = u & 31;

		u >>= 5;
		*p++ = b64[d | (u ? 32 : 0)];
	} while (u);
	return p;
}

/*
 * A long line out of order (past the runs sorted by insertion, so merged):
 * segment i at column 7i mod 150, original line i; each column twice (i
 * and i + 150), the later one wins.
 */
static void test_sort_long_line(void **state)
{
	char *json = malloc(16384), *p;
	int64_t col = 0, line = 0;
	struct sourcemap *sm;
	uint32_t want[150];

	(void)state;
	assert_non_null(json);
	p = json + sprintf(json, "{\"version\":3,\"sources\":[\"s.ts\"],\"mappings\":\"");
	for (int64_t i = 0; i < 300; i++) {
		if (i)
			*p++ = ',';
		p = vlq_put(p, i * 7 % 150 - col);
		p = vlq_put(p, 0);
		p = vlq_put(p, i - line);
		p = vlq_put(p, 0);
		col = i * 7 % 150;
		line = i;
		if (i >= 150)
			want[col] = (uint32_t)i;
	}
	strcpy(p, "\"}");
	sm = parse_ok(json);
	assert_int_equal(sourcemap__segment_count(sm), 300);
	for (uint32_t c = 0; c < 150; c++)
		expect_pos(sm, 0, c, "s.ts", want[c], 0, NULL);
	sourcemap__free(sm);
	free(json);
}

static void test_function_name_rules(void **state)
{
	struct sourcemap *sm;
	char json[512];

	(void)state;
	/*
	 * `const a=b=>{`: `const` (no name), `a` = hotLoop at 6, `b` = x
	 * at 8, where V8 places the arrow.  b's identifier ends after 8.
	 */
	snprintf(json, sizeof(json), "{\"version\":3,\"sources\":[\"h.ts\"],"
				     "\"names\":[\"hotLoop\",\"x\"],\"mappings\":\"AAAA,MAAMA,EAAEC\"}");
	sm = parse_ok(json);
	assert_string_equal(sourcemap__function_name(sm, 0, 8, 1), "hotLoop");
	/* b itself, seen from past it, is the nearest name */
	assert_string_equal(sourcemap__function_name(sm, 0, 9, 1), "x");
	/* a generated name of 3 columns at 6 would end after 8 */
	assert_null(sourcemap__function_name(sm, 0, 8, 3));
	sourcemap__free(sm);

	/* slack: `a` ends at 7; 12 columns later still, 13 not */
	sm = parse_ok("{\"version\":3,\"sources\":[\"h.ts\"],\"names\":[\"hotLoop\"],"
		      "\"mappings\":\"AAAA,MAAMA\"}");
	assert_string_equal(sourcemap__function_name(sm, 0, 7 + SOURCEMAP_NAME_SLACK, 1),
			    "hotLoop");
	assert_null(sourcemap__function_name(sm, 0, 8 + SOURCEMAP_NAME_SLACK, 1));
	assert_null(sourcemap__function_name(sm, 1, 8, 1));
	sourcemap__free(sm);

	/* `fooBar=(`: the segments at `=` and `(` have no name and are stepped over */
	sm = parse_ok("{\"version\":3,\"sources\":[\"f.ts\"],\"names\":[\"fooBarOriginal\"],"
		      "\"mappings\":\"AAAAA,MAAM,CAAC\"}");
	assert_string_equal(sourcemap__function_name(sm, 0, 7, 6), "fooBarOriginal");
	assert_null(sourcemap__function_name(sm, 0, 7, 8));
	sourcemap__free(sm);
}

static void test_check_script_columns(void **state)
{
	/*
	 * Line 0: `v="é𝒳",x=1;` in UTF-16 columns: v 0, = 1, " 2, é 3, 𝒳
	 * 4-5 (a surrogate pair), " 6, `,` 7, x 8, = 9, 1 10, ; 11: 12
	 * columns, 17 bytes.  Then \r\n, line 1 "ab", U+2028, line 2 "c".
	 */
	static const char text[] = "v=\"\xc3\xa9\xf0\x9d\x92\xb3\",x=1;\r\nab\xe2\x80\xa8"
				   "c";
	struct sourcemap_check c;
	struct sourcemap *sm;

	(void)state;
	/* named: v (0), é (3), the pair's second half (5), x (8), b (1 of line 1), c */
	sm = parse_ok("{\"version\":3,\"sources\":[\"s.ts\"],\"names\":[\"n\"],"
		      "\"mappings\":\"AAAAA,GAAAA,EAAAA,GAAAA;CAAAA;AAAAA\"}");
	sourcemap__check_script(sm, text, sizeof(text) - 1, &c);
	assert_int_equal(c.segments, 6);
	assert_int_equal(c.named, 6);
	assert_int_equal(c.outside, 0);
	/* v, é, x, c start identifiers; b follows a, the pair's half is no character */
	assert_int_equal(c.named_on_identifier, 4);
	sourcemap__free(sm);

	/* column 12 is the end of line 0 (inside); 13 is past it; line 3 does not exist */
	sm = parse_ok("{\"version\":3,\"sources\":[\"s.ts\"],\"mappings\":\"YAAA,C;;;A\"}");
	sourcemap__check_script(sm, text, sizeof(text) - 1, &c);
	assert_int_equal(c.segments, 3);
	assert_int_equal(c.outside, 2);
	sourcemap__free(sm);

	/* counted in bytes, column 8 would be inside 𝒳: it is x */
	sm = parse_ok("{\"version\":3,\"sources\":[\"s.ts\"],\"names\":[\"n\"],"
		      "\"mappings\":\"QAAAA\"}");
	sourcemap__check_script(sm, text, sizeof(text) - 1, &c);
	assert_int_equal(c.named_on_identifier, 1);
	sourcemap__free(sm);
}

static void test_check_verdict(void **state)
{
	struct sourcemap_check c = { .segments = 100, .named = 7, .named_on_identifier = 0 };

	(void)state;
	/* fewer than 8 named segments: only the lines and columns count */
	assert_true(sourcemap_check__matches(&c));
	c.outside = 1;
	assert_false(sourcemap_check__matches(&c));
	c.outside = 0;
	c.named = 10;
	c.named_on_identifier = 9;
	assert_true(sourcemap_check__matches(&c));
	c.named_on_identifier = 8;
	assert_false(sourcemap_check__matches(&c));
}

/*
 * One index map: section 0 at (0, 0), a.ts; section 1 at line 1, column
 * 10, under sourceRoot lib: its first line's columns move by 10, the next
 * line's do not.
 */
#define INDEX_MAP(off1)                                                                   \
	"{\"version\":3,\"file\":\"bundle.js\",\"sections\":["                           \
	"{\"offset\":{\"line\":0,\"column\":0},\"map\":{\"version\":3,\"sources\":[\"a.ts\"]," \
	"\"names\":[\"alpha\"],\"mappings\":\"AAAAA,EAAE;AACA\"}},"                        \
	"{\"offset\":" off1 ",\"map\":{\"version\":3,\"sourceRoot\":\"lib\","             \
	"\"sources\":[\"b.ts\"],\"names\":[\"beta\"],\"mappings\":\"CAAAA;EAAE\"}}]}"

static void test_index_map(void **state)
{
	struct sourcemap *sm;

	(void)state;
	sm = parse_ok(INDEX_MAP("{\"line\":1,\"column\":10}"));
	assert_string_equal(sourcemap__file(sm), "bundle.js");
	assert_int_equal(sourcemap__segment_count(sm), 5);
	assert_int_equal(sourcemap__line_count(sm), 3);
	expect_pos(sm, 0, 0, "a.ts", 0, 0, "alpha");
	expect_pos(sm, 0, 2, "a.ts", 0, 2, NULL);
	expect_pos(sm, 1, 10, "a.ts", 1, 2, NULL);
	expect_pos(sm, 1, 11, "lib/b.ts", 0, 0, "beta");
	expect_none(sm, 2, 1);
	expect_pos(sm, 2, 2, "lib/b.ts", 0, 2, NULL);
	assert_string_equal(sourcemap__function_name(sm, 1, 12, 1), "beta");
	sourcemap__free(sm);

	/* a later line: no overlap; a section starting where the other's segment is: overlap */
	sm = parse_ok(INDEX_MAP("{\"line\":5,\"column\":0}"));
	expect_pos(sm, 5, 1, "lib/b.ts", 0, 0, "beta");
	sourcemap__free(sm);
	parse_bad(INDEX_MAP("{\"line\":1,\"column\":0}"), -EINVAL,
		  "sections[1]: offset (line 1, column 0) overlaps the previous section");
	parse_bad(INDEX_MAP("{\"line\":0,\"column\":5}"), -EINVAL,
		  "sections[1]: offset (line 0, column 5) overlaps");
	parse_bad(INDEX_MAP("{\"line\":-1,\"column\":5}"), -EINVAL,
		  "sections[1]: offset.line -1 out of range");
	parse_bad(INDEX_MAP("{\"line\":99999999999,\"column\":5}"), -EINVAL,
		  "sections[1]: offset.line 99999999999 out of range");
	parse_bad(INDEX_MAP("{\"line\":1e300,\"column\":5}"), -EINVAL,
		  "sections[1]: offset.line is double, not an integer");
	parse_bad(INDEX_MAP("{\"line\":1}"), -EINVAL,
		  "sections[1]: offset.column is missing, not an integer");
	parse_bad(INDEX_MAP("{\"line\":2147483647,\"column\":0}"), -EINVAL,
		  "sections[1]: mappings: line 2, segment 1: position out of range");
	parse_bad(INDEX_MAP("{\"line\":0,\"column\":2147483647}"), -EINVAL,
		  "sections[1]: offset (line 0, column 2147483647) overlaps");

	/* sections out of order: the second before the first */
	parse_bad("{\"version\":3,\"sections\":["
		  "{\"offset\":{\"line\":4,\"column\":0},\"map\":{\"version\":3,\"sources\":[],\"mappings\":\"\"}},"
		  "{\"offset\":{\"line\":3,\"column\":9},\"map\":{\"version\":3,\"sources\":[],\"mappings\":\"\"}}]}",
		  -EINVAL,
		  "sections[1]: offset (line 3, column 9) before the previous section's (line 4, column 0)");
	/* by URL, nested, neither, both */
	parse_bad("{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0},"
		  "\"url\":\"http://example.com/a.map\"}]}",
		  -EINVAL, "sections[0]: a section by \"url\" (isoprof never fetches)");
	parse_bad("{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0},"
		  "\"map\":{\"version\":3,\"sections\":[]}}]}",
		  -EINVAL, "sections[0]: an index map's section holds sections");
	parse_bad("{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0}}]}", -EINVAL,
		  "sections[0]: the map is missing, not a JSON object");
	parse_bad("{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0},"
		  "\"map\":{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAC,CAAAC\"}}]}",
		  -EINVAL, "sections[0]: mappings: line 1, segment 2: name index 1 out of range (0 names)");
	parse_bad("{\"version\":3,\"sections\":[],\"mappings\":\"\"}", -EINVAL,
		  "an index map with mappings of its own");
	parse_bad("{\"version\":3,\"sections\":{}}", -EINVAL, "sections is object, not an array");
	parse_bad("{\"version\":3,\"sections\":[7]}", -EINVAL,
		  "sections[0]: the section is int, not a JSON object");
	parse_bad("{\"version\":3,\"sections\":[{\"offset\":{\"line\":0,\"column\":0},"
		  "\"map\":{\"sources\":[],\"mappings\":\"\"}}]}",
		  -EINVAL, "sections[0]: version is missing, not 3");
}

static void test_malformed(void **state)
{
	static const struct {
		const char *json;
		const char *want;
	} bad[] = {
		{ "[]", "the map is array, not a JSON object" },
		{ "\"x\"", "the map is string, not a JSON object" },
		{ "{\"version\":2,\"sources\":[],\"mappings\":\"\"}", "version 2, not 3" },
		{ "{\"version\":\"3\",\"sources\":[],\"mappings\":\"\"}", "version is string, not 3" },
		{ "{\"version\":1e999,\"sources\":[],\"mappings\":\"\"}", "version is double" },
		{ "{\"version\":99999999999999999999999,\"sources\":[],\"mappings\":\"\"}",
		  "version" },
		{ "{\"sources\":[],\"mappings\":\"\"}", "version is missing, not 3" },
		{ "{\"version\":3,\"sources\":[],\"mappings\":\"", "JSON text ends early" },
		{ "{\"version\":3,", "JSON text ends early" },
		{ "", "JSON text ends early" },
		{ "{\"version\":3,\"sources\":[],\"mappings\":\"\"} {}", "data after the document" },
		{ "{\"version\":3 \"sources\":[]}", "invalid JSON at offset" },
		{ "{\"version\":3,\"mappings\":\"\"}", "sources is missing, not an array" },
		{ "{\"version\":3,\"sources\":\"a.ts\",\"mappings\":\"\"}",
		  "sources is string, not an array" },
		{ "{\"version\":3,\"sources\":[\"a\",7],\"mappings\":\"\"}",
		  "sources[1] is int, not a string" },
		{ "{\"version\":3,\"sources\":[],\"sourceRoot\":7,\"mappings\":\"\"}",
		  "sourceRoot is int, not a string" },
		{ "{\"version\":3,\"sources\":[],\"names\":{},\"mappings\":\"\"}",
		  "names is object, not an array" },
		{ "{\"version\":3,\"sources\":[],\"names\":[\"a\",null],\"mappings\":\"\"}",
		  "names[1] is null, not a string" },
		{ "{\"version\":3,\"sources\":[]}", "mappings is missing, not a string" },
		{ "{\"version\":3,\"sources\":[],\"mappings\":[]}", "mappings is array, not a string" },
		{ "{\"version\":3,\"file\":[],\"sources\":[],\"mappings\":\"\"}",
		  "file is array, not a string" },
		/* indexes out of range, with where */
		{ "{\"version\":3,\"sources\":[\"a\",\"b\",\"c\",\"d\"],\"mappings\":\"AAAA;;AAAA,CSAA\"}",
		  "mappings: line 3, segment 2: source index 9 out of range (4 sources)" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA\"}" /* fine */, NULL },
		{ "{\"version\":3,\"sources\":[],\"mappings\":\"AAAA\"}",
		  "source index 0 out of range (0 sources)" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"names\":[\"f\"],\"mappings\":\"AAAAC\"}",
		  "name index 1 out of range (1 names)" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAAA\"}",
		  "name index 0 out of range (0 names)" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAAD\"}",
		  "name index -1 out of range" },
		/* fields and segments */
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AA\"}",
		  "line 1, segment 1: 2 fields (1, 4 or 5 expected)" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA,AAA\"}",
		  "line 1, segment 2: 3 fields" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAAAA\"}",
		  "more than 5 fields" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA,,AAAA\"}",
		  "line 1, segment 2: empty" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA;,AAAA\"}",
		  "line 2, segment 1: empty" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA,\"}",
		  "line 1, segment 2: empty" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA,;A\"}",
		  "line 1, segment 2: empty" },
		{ "{\"version\":3,\"sources\":[\"a\"],\"mappings\":\"AAAA\\u0000\"}",
		  "not a Base64 digit at offset 4" },
	};
	static const char nul[] = "{\"version\":3,\0\"sources\":[],\"mappings\":\"\"}";
	struct sourcemap *sm;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (!bad[i].want) {
			sourcemap__free(parse_ok(bad[i].json));
			continue;
		}
		parse_bad(bad[i].json, -EINVAL, bad[i].want);
	}
	err[0] = '\0';
	assert_int_equal(sourcemap__parse(nul, sizeof(nul) - 1, &sm, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "NUL byte at offset 13"));
	/* over the cap: refused before it is read */
	assert_int_equal(sourcemap__parse(nul, SOURCEMAP_MAX_BYTES + 1ul, &sm, err, sizeof(err)),
			 -E2BIG);
	assert_non_null(strstr(err, "MiB limit"));
	assert_null(sm);
	/* no room for an error message is fine */
	assert_int_equal(sourcemap__parse("[]", 2, &sm, NULL, 0), -EINVAL);
}

/* A deep document is refused by the tokenizer, not by the stack. */
static void test_deep_json(void **state)
{
	size_t n = 100000, len;
	char *json = malloc(2 * n + 64);
	struct sourcemap *sm;
	char err[256] = "";

	(void)state;
	assert_non_null(json);
	len = (size_t)sprintf(json, "{\"version\":3,\"x\":");
	memset(json + len, '[', n);
	len += n;
	memset(json + len, ']', n);
	len += n;
	len += (size_t)sprintf(json + len, ",\"sources\":[],\"mappings\":\"\"}");
	assert_int_equal(sourcemap__parse(json, len, &sm, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid JSON"));
	free(json);
}

/*
 * Many small values: json-c would build an object for each before any
 * check ran; refused on the text.  Commas inside strings (mappings) do not
 * count.
 */
static void test_many_values(void **state)
{
	size_t n = SOURCEMAP_MAX_VALUES + 1, len;
	char *json = malloc(4 * n + 128);
	struct sourcemap *sm = NULL;
	char err[256] = "";

	(void)state;
	assert_non_null(json);
	len = (size_t)sprintf(json, "{\"version\":3,\"sources\":[],\"names\":[");
	for (size_t i = 0; i < n; i++) {
		memcpy(json + len, i ? ",\"a\"" : "\"a\"", i ? 4 : 3);
		len += i ? 4 : 3;
	}
	len += (size_t)sprintf(json + len, "],\"mappings\":\"\"}");
	assert_int_equal(sourcemap__parse(json, len, &sm, err, sizeof(err)), -E2BIG);
	assert_non_null(strstr(err, "JSON values"));
	assert_null(sm);
	/* the same count of commas inside one string is one value */
	len = (size_t)sprintf(json, "{\"version\":3,\"sources\":[],\"names\":[],\"x\":\"");
	memset(json + len, ',', n);
	len += n;
	len += (size_t)sprintf(json + len, "\",\"mappings\":\"\"}");
	assert_int_equal(sourcemap__parse(json, len, &sm, err, sizeof(err)), 0);
	sourcemap__free(sm);
	free(json);
}

/* --- the sourceMappingURL comment --- */

static void expect_url(const char *text, const char *want)
{
	const char *url = NULL;
	size_t len = 0;
	bool found = sourcemap__url_in_script(text, strlen(text), &url, &len);

	if (!want) {
		if (found)
			fail_msg("\"%s\": found \"%.*s\"", text, (int)len, url);
		return;
	}
	if (!found)
		fail_msg("\"%s\": not found", text);
	assert_true(url >= text && url + len <= text + strlen(text));
	if (len != strlen(want) || memcmp(url, want, len))
		fail_msg("\"%s\": \"%.*s\", want \"%s\"", text, (int)len, url, want);
}

static void test_url_in_script(void **state)
{
	char *big;
	size_t n = 8u << 20;

	(void)state;
	expect_url("f();\n//# sourceMappingURL=a.js.map\n", "a.js.map");
	expect_url("f();\n//@ sourceMappingURL=old.map", "old.map");
	expect_url("f();\r\n//# sourceMappingURL=a.map \t\r\n", "a.map");
	expect_url("f();\n  \t//# sourceMappingURL=indented.map\n", "indented.map");
	expect_url("//# sourceMappingURL=only.map", "only.map");
	expect_url("f();\n//#  sourceMappingURL=  spaced.map  \n\n\n", "spaced.map");
	/* the last one wins */
	expect_url("//# sourceMappingURL=first.map\nf();\n//# sourceMappingURL=second.map\n",
		   "second.map");
	expect_url("//# sourceMappingURL=data:application/json;base64,e30=\n",
		   "data:application/json;base64,e30=");
	/* not at the start of a line; not a comment V8 takes */
	expect_url("f(); //# sourceMappingURL=a.map\n", NULL);
	expect_url("f();\n//#sourceMappingURL=a.map\n", NULL);
	expect_url("f();\n// sourceMappingURL=a.map\n", NULL);
	expect_url("f();\n/*# sourceMappingURL=a.map */\n", NULL);
	expect_url("f();\n//# sourceMappingURL=\n", NULL);
	expect_url("f();\n//# sourceMappingURL=a b.map\n", NULL);
	expect_url("f();\n//# sourceURL=a.js\n", NULL);
	expect_url("", NULL);
	expect_url("\n\n\n", NULL);
	/* only the last lines are searched */
	{
		char text[256] = "//# sourceMappingURL=early.map\n";

		for (int i = 0; i < 30; i++)
			strcat(text, "f();\n");
		expect_url(text, NULL);
	}
	/* a long last line before the comment is one line */
	big = malloc(n + 64);
	assert_non_null(big);
	memset(big, 'x', n);
	strcpy(big + n, "\n//# sourceMappingURL=big.map\n");
	expect_url(big, "big.map");
	strcpy(big + n, "\n");
	expect_url(big, NULL);
	free(big);
}

/* --- data: URLs --- */

static void expect_data(const char *url, const char *want)
{
	char *out = NULL;
	size_t len = 0;
	int ret = sourcemap__decode_data_url(url, strlen(url), &out, &len);

	if (ret)
		fail_msg("%s: %d", url, ret);
	assert_int_equal(len, strlen(want));
	assert_string_equal(out, want);
	free(out);
}

static void expect_data_bad(const char *url)
{
	char *out = NULL;
	size_t len = 0;

	if (sourcemap__decode_data_url(url, strlen(url), &out, &len) != -EINVAL)
		fail_msg("%s: not refused", url);
	assert_null(out);
}

static void test_data_url(void **state)
{
	(void)state;
	expect_data("data:application/json;base64,eyJ2ZXJzaW9uIjozfQ==", "{\"version\":3}");
	expect_data("data:application/json;base64,eyJ2ZXJzaW9uIjozfQ", "{\"version\":3}");
	expect_data("data:application/json;base64,e30=", "{}");
	expect_data("data:application/json;base64,e30", "{}");
	expect_data("data:application/json;base64,", "");
	expect_data("data:application/json;base64,YWJj", "abc");
	expect_data("data:application/json;base64,+/+/", "\xfb\xff\xbf");
	expect_data("data:application/json;charset=utf-8;base64,e30=", "{}");
	expect_data("data:application/json;base64;charset=UTF-8,e30=", "{}");
	expect_data("DATA:Application/JSON;Charset=utf8;BASE64,e30=", "{}");
	/* not base64: percent-encoded */
	expect_data("data:application/json,%7B%22version%22%3A3%7D", "{\"version\":3}");
	expect_data("data:application/json;charset=utf-8,{\"a\":%5b1,2%5D}", "{\"a\":[1,2]}");
	expect_data("data:application/json,", "");

	expect_data_bad("data:text/plain;base64,e30=");
	expect_data_bad("data:;base64,e30=");
	expect_data_bad("data:application/jsonx;base64,e30=");
	expect_data_bad("data:application/json;charset=latin1;base64,e30=");
	expect_data_bad("data:application/json;base64");
	expect_data_bad("http://example.com/a.map");
	expect_data_bad("dat");
	expect_data_bad("data:application/json;base64,e!0=");
	expect_data_bad("data:application/json;base64,e3 0=");
	expect_data_bad("data:application/json;base64,e3\n0=");
	expect_data_bad("data:application/json;base64,eyJ2Z");
	expect_data_bad("data:application/json;base64,e3=0");
	expect_data_bad("data:application/json;base64,e30===");
	expect_data_bad("data:application/json;base64,YQ=");
	expect_data_bad("data:application/json;base64,e-0_");
	expect_data_bad("data:application/json,%7");
	expect_data_bad("data:application/json,%zz");
}

/* --- source names --- */

static void expect_clean(const char *in, const char *want)
{
	char buf[256];

	memset(buf, '#', sizeof(buf));
	sourcemap__clean_source(in, buf, sizeof(buf));
	if (strcmp(buf, want))
		fail_msg("\"%s\": \"%s\", want \"%s\"", in, buf, want);
}

static void test_clean_source(void **state)
{
	char small[5], *long_src;

	(void)state;
	expect_clean("webpack://app/./src/x.ts", "src/x.ts");
	expect_clean("webpack:///./src/x.ts", "src/x.ts");
	expect_clean("webpack-internal:///./src/x.ts", "src/x.ts");
	expect_clean("https://example.com/js/app.ts", "js/app.ts");
	expect_clean("file:///srv/app/src/x.ts", "/srv/app/src/x.ts");
	expect_clean("FILE://host/srv/x.ts", "/srv/x.ts");
	expect_clean("../../src/x.ts", "src/x.ts");
	expect_clean("./x.ts", "x.ts");
	expect_clean("a/./b/../c.ts", "a/c.ts");
	expect_clean("a/../../b.ts", "b.ts");
	expect_clean("a//b.ts", "a/b.ts");
	expect_clean("/abs/../../x.ts", "/x.ts");
	expect_clean("/abs/./x.ts", "/abs/x.ts");
	expect_clean("src/x.ts", "src/x.ts");
	expect_clean("node:internal/x", "node:internal/x");
	expect_clean("C:\\src\\x.ts", "C:\\src\\x.ts");
	expect_clean("x.ts", "x.ts");
	/* nothing left: the name as it was */
	expect_clean("./", "./");
	expect_clean("webpack://app/", "webpack://app/");
	expect_clean("", "");

	/* cut to the buffer, still terminated */
	sourcemap__clean_source("../../src/x.ts", small, sizeof(small));
	assert_string_equal(small, "src/");
	sourcemap__clean_source("abcdefgh", small, sizeof(small));
	assert_string_equal(small, "abcd");
	sourcemap__clean_source("abcd", small, sizeof(small));
	assert_string_equal(small, "abcd");
	sourcemap__clean_source("abc", small, 1);
	assert_string_equal(small, "");
	small[0] = 'z';
	sourcemap__clean_source("abc", small, 0);
	assert_int_equal(small[0], 'z');
	long_src = malloc(10000);
	assert_non_null(long_src);
	memset(long_src, 'a', 9999);
	long_src[9999] = '\0';
	memcpy(long_src, "../", 3);
	sourcemap__clean_source(long_src, small, sizeof(small));
	assert_string_equal(small, "aaaa");
	free(long_src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vlq_vectors),
		cmocka_unit_test(test_vlq_errors),
		cmocka_unit_test(test_esbuild_lookup),
		cmocka_unit_test(test_esbuild_function_names),
		cmocka_unit_test(test_esbuild_check_script),
		cmocka_unit_test(test_esbuild_inline),
		cmocka_unit_test(test_source_root),
		cmocka_unit_test(test_interned),
		cmocka_unit_test(test_one_field_segments),
		cmocka_unit_test(test_lookup_edges),
		cmocka_unit_test(test_sort_long_line),
		cmocka_unit_test(test_function_name_rules),
		cmocka_unit_test(test_check_script_columns),
		cmocka_unit_test(test_check_verdict),
		cmocka_unit_test(test_index_map),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_deep_json),
		cmocka_unit_test(test_many_values),
		cmocka_unit_test(test_url_in_script),
		cmocka_unit_test(test_data_url),
		cmocka_unit_test(test_clean_source),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
