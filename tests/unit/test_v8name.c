// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for symbolize/v8name: every name form V8 writes, and cut ones. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8name.h"

struct want {
	enum v8name_kind kind;
	const char *tag;
	const char *marker;
	const char *function;
	const char *script;	/* NULL: none */
	uint32_t line, column;
};

static void check_name(const struct v8name *n, const struct want *w, const char *what)
{
	print_message("%s\n", what);
	assert_int_equal(n->kind, w->kind);
	assert_string_equal(n->tag, w->tag);
	assert_string_equal(n->marker, w->marker);
	assert_string_equal(n->function, w->function);
	if (w->script)
		assert_non_null(n->script), assert_string_equal(n->script, w->script);
	else
		assert_null(n->script);
	assert_int_equal(n->line, w->line);
	assert_int_equal(n->column, w->column);
}

/* Parse from an exact-size heap copy, so ASan sees any read past the end. */
static void parse_check(const char *raw, const struct want *w)
{
	size_t len = strlen(raw), size = v8name__buf_size(len);
	char *copy = malloc(len ? len : 1), *buf = malloc(size);
	struct v8name n;

	assert_non_null(copy);
	assert_non_null(buf);
	memcpy(copy, raw, len);
	assert_int_equal(v8name__parse(copy, len, &n, buf, size), 0);
	check_name(&n, w, raw);
	free(copy);
	free(buf);
}

static void test_tiers(void **state)
{
	static const struct {
		const char *raw;
		struct want w;
		enum v8name_tier tier;
		bool cs;
	} v[] = {
		{ "JS:*fib /srv/app/index.js:12:14",
		  { V8NAME_JS, "JS", "*", "fib", "/srv/app/index.js", 12, 14 }, V8NAME_TIER_TURBOFAN, false },
		{ "JS:~handle /srv/app/index.js:30:21",
		  { V8NAME_JS, "JS", "~", "handle", "/srv/app/index.js", 30, 21 }, V8NAME_TIER_INTERPRETED, false },
		{ "JS:^fib w.js:1:13", { V8NAME_JS, "JS", "^", "fib", "w.js", 1, 13 }, V8NAME_TIER_BASELINE, false },
		{ "JS:+fib w.js:1:13", { V8NAME_JS, "JS", "+", "fib", "w.js", 1, 13 }, V8NAME_TIER_MAGLEV, false },
		{ "JS:+'foo w.js:1:1", { V8NAME_JS, "JS", "+'", "foo", "w.js", 1, 1 }, V8NAME_TIER_MAGLEV, true },
		{ "JS:*'foo w.js:1:1", { V8NAME_JS, "JS", "*'", "foo", "w.js", 1, 1 }, V8NAME_TIER_TURBOFAN, true },
		{ "JS:-nci w.js:2:3", { V8NAME_JS, "JS", "-", "nci", "w.js", 2, 3 }, V8NAME_TIER_NCI, false },
		/* optimization disabled: no marker at all */
		{ "JS:plain w.js:4:5", { V8NAME_JS, "JS", "", "plain", "w.js", 4, 5 }, V8NAME_TIER_NONE, false },
	};
	char buf[256];
	struct v8name n;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		parse_check(v[i].raw, &v[i].w);
		assert_int_equal(v8name__parse(v[i].raw, strlen(v[i].raw), &n, buf, sizeof(buf)), 0);
		assert_int_equal(n.tier, v[i].tier);
		assert_int_equal(n.context_specialized, v[i].cs);
		assert_string_equal(n.regexp_flags, "");
	}
	assert_string_equal(v8name_tier__str(V8NAME_TIER_MAGLEV), "maglev");
	assert_string_equal(v8name_tier__str(V8NAME_TIER_NONE), "");
	assert_string_equal(v8name_kind__str(V8NAME_BYTECODE_HANDLER), "bytecode-handler");
	assert_string_equal(v8name_kind__str(V8NAME_UNKNOWN), "unknown");
}

static void test_tags(void **state)
{
	static const struct {
		const char *raw;
		struct want w;
	} v[] = {
		{ "Builtin:ArrayPrototypePush",
		  { V8NAME_BUILTIN, "Builtin", "", "ArrayPrototypePush", NULL, 0, 0 } },
		{ "BytecodeHandler:LdaZero", { V8NAME_BYTECODE_HANDLER, "BytecodeHandler", "", "LdaZero", NULL, 0, 0 } },
		{ "BytecodeHandler:CreateRegExpLiteral.ExtraWide",
		  { V8NAME_BYTECODE_HANDLER, "BytecodeHandler", "", "CreateRegExpLiteral.ExtraWide", NULL, 0, 0 } },
		/* the marker is not looked for outside JS/Script tags */
		{ "Builtin:~odd name 1:2", { V8NAME_BUILTIN, "Builtin", "", "~odd name 1:2", NULL, 0, 0 } },
		{ "Stub:CEntryStub", { V8NAME_OTHER, "Stub", "", "CEntryStub", NULL, 0, 0 } },
		{ "Handler:KeyedLoadIC_Megamorphic",
		  { V8NAME_OTHER, "Handler", "", "KeyedLoadIC_Megamorphic", NULL, 0, 0 } },
		{ "Callback:get foo", { V8NAME_OTHER, "Callback", "", "get foo", NULL, 0, 0 } },
		{ "KeyedLoadIC:x", { V8NAME_OTHER, "KeyedLoadIC", "", "x", NULL, 0, 0 } },
		{ "Script:~ /srv/app.js", { V8NAME_SCRIPT, "Script", "~", "", "/srv/app.js", 0, 0 } },
		{ "Script:~ /srv/my app/main.js", { V8NAME_SCRIPT, "Script", "~", "", "/srv/my app/main.js", 0, 0 } },
		{ "Script:~ [eval]:1:1", { V8NAME_SCRIPT, "Script", "~", "", "[eval]", 1, 1 } },
		{ "Eval:~ node:internal/main/eval_string:1:1",
		  { V8NAME_SCRIPT, "Eval", "~", "", "node:internal/main/eval_string", 1, 1 } },
		{ "Eval:~ [eval]-wrapper:1:1", { V8NAME_SCRIPT, "Eval", "~", "", "[eval]-wrapper", 1, 1 } },
		/* old V8 tags */
		{ "LazyCompile:*toFib /Volumes/d/dev/fibonacci.js:43",
		  { V8NAME_JS, "LazyCompile", "*", "toFib", "/Volumes/d/dev/fibonacci.js", 43, 0 } },
		{ "LazyCompile:~ /srv/a.js:1", { V8NAME_JS, "LazyCompile", "~", "", "/srv/a.js", 1, 0 } },
		{ "Function:~foo a.js:1:2", { V8NAME_JS, "Function", "~", "foo", "a.js", 1, 2 } },
		{ "InterpretedFunction:foo a.js:7:8",
		  { V8NAME_JS, "InterpretedFunction", "", "foo", "a.js", 7, 8 } },
		/* names with no tag at all */
		{ "fib [eval]:1:13", { V8NAME_UNKNOWN, "", "", "fib", "[eval]", 1, 13 } },
		{ "some_jit_symbol", { V8NAME_UNKNOWN, "", "", "some_jit_symbol", NULL, 0, 0 } },
		{ "java/lang/Object:hashCode", { V8NAME_UNKNOWN, "", "", "java/lang/Object:hashCode", NULL, 0, 0 } },
		{ "foo:12:3", { V8NAME_UNKNOWN, "", "", "foo:12:3", NULL, 0, 0 } },
		{ "get foo", { V8NAME_UNKNOWN, "", "", "get foo", NULL, 0, 0 } },
		{ "file:///a/b.js:1:2", { V8NAME_UNKNOWN, "", "", "file:///a/b.js:1:2", NULL, 0, 0 } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		parse_check(v[i].raw, &v[i].w);
}

static void test_regexp(void **state)
{
	static const struct {
		const char *raw;
		const char *src;
		const char *flags;
	} v[] = {
		{ "RegExp:a+b", "a+b", "" },
		{ "RegExp:^(\\d+), (\\w+)$", "^(\\d+), (\\w+)$", "" },
		{ "RegExp.> src: 'a+b' flags: 'gi'", "a+b", "gi" },
		{ "RegExp.> src: 'it's' flags: ''", "it's", "" },
		{ "RegExp.> src: 'x' flags: 'y' flags: 'dgimsuy'", "x' flags: 'y", "dgimsuy" },
		{ "RegExp.> src: 'cut mid-way", "cut mid-way", "" },
		{ "RegExp.> src: 'a' flags: 'g", "a", "g" },
		{ "RegExp.> src: '", "", "" },
	};
	char buf[128];
	struct v8name n;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		print_message("%s\n", v[i].raw);
		assert_int_equal(v8name__parse(v[i].raw, strlen(v[i].raw), &n, buf, sizeof(buf)), 0);
		assert_int_equal(n.kind, V8NAME_REGEXP);
		assert_string_equal(n.tag, "RegExp");
		assert_string_equal(n.function, v[i].src);
		assert_string_equal(n.regexp_flags, v[i].flags);
		assert_null(n.script);
		assert_int_equal(n.tier, V8NAME_TIER_NONE);
	}
}

static void test_spaces_commas_colons(void **state)
{
	static const struct {
		const char *raw;
		struct want w;
	} v[] = {
		/* anonymous: a blank, then the script, blanks and all */
		{ "JS:~ file.js:3:10", { V8NAME_JS, "JS", "~", "", "file.js", 3, 10 } },
		{ "JS:^ node:internal/modules/helpers:247:41",
		  { V8NAME_JS, "JS", "^", "", "node:internal/modules/helpers", 247, 41 } },
		{ "JS:~ /srv/my app/x.js:3:10", { V8NAME_JS, "JS", "~", "", "/srv/my app/x.js", 3, 10 } },
		/* debug names with blanks */
		{ "JS:~get foo /srv/a.js:9:3", { V8NAME_JS, "JS", "~", "get foo", "/srv/a.js", 9, 3 } },
		{ "JS:~get href node:internal/url:925:11",
		  { V8NAME_JS, "JS", "~", "get href", "node:internal/url", 925, 11 } },
		{ "JS:*set x y worker.js:1:2", { V8NAME_JS, "JS", "*", "set x y", "worker.js", 1, 2 } },
		{ "JS:~Object.<anonymous> /srv/a.js:1:1",
		  { V8NAME_JS, "JS", "~", "Object.<anonymous>", "/srv/a.js", 1, 1 } },
		{ "JS:~<instance_members_initializer> node:internal/vm/module:256:1",
		  { V8NAME_JS, "JS", "~", "<instance_members_initializer>", "node:internal/vm/module", 256, 1 } },
		{ "JS:~#updateContext node:internal/url:874:17",
		  { V8NAME_JS, "JS", "~", "#updateContext", "node:internal/url", 874, 17 } },
		/* an absolute path with blanks wins over the last blank (seen in node) */
		{ "JS:~a,b /srv/v8u/a b,\xc3\xa9.js:2:56",
		  { V8NAME_JS, "JS", "~", "a,b", "/srv/v8u/a b,\xc3\xa9.js", 2, 56 } },
		{ "JS:*get foo /srv/me/My Project/app.js:5:6",
		  { V8NAME_JS, "JS", "*", "get foo", "/srv/me/My Project/app.js", 5, 6 } },
		/* non-ASCII debug names are raw UTF-8 */
		{ "JS:*h\xc3\xa9llo\xe6\x97\xa5 /a.js:1:17",
		  { V8NAME_JS, "JS", "*", "h\xc3\xa9llo\xe6\x97\xa5", "/a.js", 1, 17 } },
		/* script names with colons */
		{ "JS:*fetch file:///a/b.js:3:4", { V8NAME_JS, "JS", "*", "fetch", "file:///a/b.js", 3, 4 } },
		{ "JS:~x http://localhost:8080/app.js:1:2",
		  { V8NAME_JS, "JS", "~", "x", "http://localhost:8080/app.js", 1, 2 } },
		{ "JS:~run workerd:internal:5:6", { V8NAME_JS, "JS", "~", "run", "workerd:internal", 5, 6 } },
		{ "JS:~fetch worker.js:1:1", { V8NAME_JS, "JS", "~", "fetch", "worker.js", 1, 1 } },
		/* Symbol as script name */
		{ "JS:~foo symbol(hash 1a2b):1:2", { V8NAME_JS, "JS", "~", "foo", "symbol(hash 1a2b)", 1, 2 } },
		{ "JS:~get a symbol(\"d e\" hash 3f):7:8",
		  { V8NAME_JS, "JS", "~", "get a", "symbol(\"d e\" hash 3f)", 7, 8 } },
		/* no position */
		{ "JS:~get foo", { V8NAME_JS, "JS", "~", "get foo", NULL, 0, 0 } },
		{ "JS:~get foo ", { V8NAME_JS, "JS", "~", "get foo", "", 0, 0 } },
		{ "JS:fib-0-liftoff", { V8NAME_JS, "JS", "", "fib-0-liftoff", NULL, 0, 0 } },
		{ "JS:~fib /srv/app/ind", { V8NAME_JS, "JS", "~", "fib", "/srv/app/ind", 0, 0 } },
		/* no blank before the position: not V8's form, nothing is split */
		{ "JS:~fib:1:2", { V8NAME_JS, "JS", "~", "fib:1:2", NULL, 0, 0 } },
		{ "JS:~ :1:2", { V8NAME_JS, "JS", "~", "", "", 1, 2 } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		parse_check(v[i].raw, &v[i].w);
}

static void test_truncated(void **state)
{
	static const struct {
		const char *raw;
		struct want w;
	} v[] = {
		{ "JS:*fib /srv/app/index.js:12:", { V8NAME_JS, "JS", "*", "fib", "/srv/app/index.js:12:", 0, 0 } },
		{ "JS:*fib /srv/app/index.js:12", { V8NAME_JS, "JS", "*", "fib", "/srv/app/index.js", 12, 0 } },
		{ "JS:*fib /srv/app/index.js:", { V8NAME_JS, "JS", "*", "fib", "/srv/app/index.js:", 0, 0 } },
		{ "JS:*fib ", { V8NAME_JS, "JS", "*", "fib", "", 0, 0 } },
		{ "JS:*fi", { V8NAME_JS, "JS", "*", "fi", NULL, 0, 0 } },
		{ "JS:+", { V8NAME_JS, "JS", "+", "", NULL, 0, 0 } },
		{ "JS:+'", { V8NAME_JS, "JS", "+'", "", NULL, 0, 0 } },
		{ "JS:", { V8NAME_JS, "JS", "", "", NULL, 0, 0 } },
		{ "JS", { V8NAME_UNKNOWN, "", "", "JS", NULL, 0, 0 } },
		{ "J", { V8NAME_UNKNOWN, "", "", "J", NULL, 0, 0 } },
		{ "", { V8NAME_UNKNOWN, "", "", "", NULL, 0, 0 } },
		{ "Script:", { V8NAME_SCRIPT, "Script", "", "", NULL, 0, 0 } },
		{ "Builtin:", { V8NAME_BUILTIN, "Builtin", "", "", NULL, 0, 0 } },
		/* numbers that cannot be V8 ints stay in the name */
		{ "JS:~f a.js:99999999999:1", { V8NAME_JS, "JS", "~", "f", "a.js:99999999999", 1, 0 } },
		{ "JS:~f a.js:4294967296:1", { V8NAME_JS, "JS", "~", "f", "a.js:4294967296", 1, 0 } },
		{ "JS:~f a.js:4294967295:1", { V8NAME_JS, "JS", "~", "f", "a.js", 4294967295u, 1 } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		parse_check(v[i].raw, &v[i].w);
}

/* V8's name buffer is 4096 bytes: full-size names, and names cut at every length. */
static void test_long_and_cut(void **state)
{
	const size_t len = 4096;
	char *raw = malloc(len + 1), *buf = malloc(v8name__buf_size(len));
	struct v8name n;
	size_t i, cut;

	(void)state;
	assert_non_null(raw);
	assert_non_null(buf);
	memcpy(raw, "JS:*", 4);
	for (i = 4; i < 3000; i++)
		raw[i] = (char)('a' + i % 26);
	raw[3000] = ' ';
	raw[3001] = '/';
	for (i = 3002; i < len - 6; i++)
		raw[i] = (char)('a' + i % 26);
	memcpy(raw + len - 6, ":12:34", 6);
	raw[len] = '\0';

	assert_int_equal(v8name__parse(raw, len, &n, buf, v8name__buf_size(len)), 0);
	assert_int_equal(strlen(n.function), 3000 - 4);
	assert_int_equal(strlen(n.script), len - 6 - 3001);
	assert_int_equal(n.line, 12);
	assert_int_equal(n.column, 34);
	assert_int_equal(n.tier, V8NAME_TIER_TURBOFAN);

	/* Cut anywhere: a heap copy of exactly cut bytes, never a crash. */
	for (cut = 0; cut <= len; cut += (cut < 10 || cut > len - 10 || (cut > 2990 && cut < 3010)) ? 1 : 97) {
		char *c = malloc(cut ? cut : 1);

		assert_non_null(c);
		memcpy(c, raw, cut);
		assert_int_equal(v8name__parse(c, cut, &n, buf, v8name__buf_size(cut)), 0);
		assert_true(strlen(n.function) <= cut);
		if (cut > 4)
			assert_int_equal(n.kind, V8NAME_JS);
		if (n.script)
			assert_true(strlen(n.function) + strlen(n.script) < cut);
		free(c);
	}
	free(raw);
	free(buf);
}

static void test_small_buffer_and_nul(void **state)
{
	static const char raw[] = "JS:*fib /srv/app/index.js:12:14";
	static const char nul[] = "JS:~f\0oo /a.js:1:2";
	char buf[64];
	struct v8name n;

	(void)state;
	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, strlen(raw)), -ENOSPC);
	assert_int_equal(n.kind, V8NAME_UNKNOWN);
	assert_string_equal(n.function, "");
	assert_null(n.script);
	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, v8name__buf_size(strlen(raw))), 0);

	/* A NUL inside cuts the C string of its field, nothing more. */
	assert_int_equal(v8name__parse(nul, sizeof(nul) - 1, &n, buf, sizeof(buf)), 0);
	assert_string_equal(n.function, "f");
	assert_string_equal(n.script, "/a.js");
	assert_int_equal(n.line, 1);
}

static void test_parse_log(void **state)
{
	char buf[128];
	struct v8name n;
	static const struct {
		const char *tag, *marker, *name;
		struct want w;
	} v[] = {
		{ "JS", "*", "fib [eval]:1:13", { V8NAME_JS, "JS", "*", "fib", "[eval]", 1, 13 } },
		{ "JS", "+'", "foo w.js:1:1", { V8NAME_JS, "JS", "+'", "foo", "w.js", 1, 1 } },
		{ "Script", "~", " [eval]:1:1", { V8NAME_SCRIPT, "Script", "~", "", "[eval]", 1, 1 } },
		{ "Script", "~", "/srv/app.js", { V8NAME_SCRIPT, "Script", "~", "", "/srv/app.js", 0, 0 } },
		{ "Script", "~", "/srv/my app.js", { V8NAME_SCRIPT, "Script", "~", "", "/srv/my app.js", 0, 0 } },
		{ "Eval", "~", "", { V8NAME_SCRIPT, "Eval", "~", "", "", 0, 0 } },
		{ "Builtin", NULL, "ArrayPrototypePush",
		  { V8NAME_BUILTIN, "Builtin", "", "ArrayPrototypePush", NULL, 0, 0 } },
		{ "Builtin", "", "A B", { V8NAME_BUILTIN, "Builtin", "", "A B", NULL, 0, 0 } },
		{ "RegExp", NULL, "a,b\\d", { V8NAME_REGEXP, "RegExp", "", "a,b\\d", NULL, 0, 0 } },
		{ "Callback", NULL, "get foo", { V8NAME_OTHER, "Callback", "", "get foo", NULL, 0, 0 } },
		{ "JS", "?", "x a.js:1:1", { V8NAME_JS, "JS", "", "x", "a.js", 1, 1 } },
		{ "JS", "~~", "x a.js:1:1", { V8NAME_JS, "JS", "", "x", "a.js", 1, 1 } },
		{ "", NULL, "x a.js:1:1", { V8NAME_UNKNOWN, "", "", "x", "a.js", 1, 1 } },
		{ NULL, NULL, "plain", { V8NAME_UNKNOWN, "", "", "plain", NULL, 0, 0 } },
		{ "LazyCompile", "*", "toFib /a.js:43", { V8NAME_JS, "LazyCompile", "*", "toFib", "/a.js", 43, 0 } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		assert_int_equal(v8name__parse_log(v[i].tag, v[i].marker, v[i].name, strlen(v[i].name),
						   &n, buf, sizeof(buf)),
				 0);
		check_name(&n, &v[i].w, v[i].name);
	}
	assert_int_equal(v8name__parse_log("JS", "*", "fib a.js:1:1", 12, &n, buf, 12), -ENOSPC);
	assert_int_equal(v8name__tag_kind("Eval", 4), V8NAME_SCRIPT);
	assert_int_equal(v8name__tag_kind("JSX", 3), V8NAME_OTHER);
	assert_int_equal(v8name__tag_kind("JSX", 2), V8NAME_JS);
	assert_int_equal(v8name__tag_kind("", 0), V8NAME_UNKNOWN);
}

static void osr_markers(void **state)
{
	char buf[256];
	struct v8name n;
	const char *raw = "JS:o+sieveBeta beta.js:5:19";
	(void)state;

	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, sizeof(buf)), 0);
	assert_int_equal(n.kind, V8NAME_JS);
	assert_true(n.osr);
	assert_int_equal(n.tier, V8NAME_TIER_MAGLEV);
	assert_string_equal(n.marker, "o+");
	assert_string_equal(n.function, "sieveBeta");
	assert_string_equal(n.script, "beta.js");
	assert_int_equal(n.line, 5);
	raw = "JS:o*'f a.js:1:2";
	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, sizeof(buf)), 0);
	assert_true(n.osr && n.context_specialized);
	assert_int_equal(n.tier, V8NAME_TIER_TURBOFAN);
	assert_string_equal(n.function, "f");
	/* a function whose name starts with 'o' is not OSR code */
	raw = "JS:~onload a.js:1:2";
	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, sizeof(buf)), 0);
	assert_false(n.osr);
	assert_string_equal(n.function, "onload");
	raw = "JS:*o a.js:1:2";
	assert_int_equal(v8name__parse(raw, strlen(raw), &n, buf, sizeof(buf)), 0);
	assert_false(n.osr);
	assert_string_equal(n.function, "o");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(osr_markers),
		cmocka_unit_test(test_tiers),
		cmocka_unit_test(test_tags),
		cmocka_unit_test(test_regexp),
		cmocka_unit_test(test_spaces_commas_colons),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_long_and_cut),
		cmocka_unit_test(test_small_buffer_and_nul),
		cmocka_unit_test(test_parse_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
