// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8log: events, escapes, moves, tailing, and a
 * real node run checked against both its code log and its perf map.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/perfmap.h"
#include "lib/sha256.h"
#include "symbolize/v8log.h"

static char tmpdir[64];
/* Perf maps node left in /tmp, removed even when a test fails half-way. */
static char node_maps[4][64];
static int nr_node_maps;

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-v8log.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	while (nr_node_maps > 0)
		unlink(node_maps[--nr_node_maps]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_file(const char *path, const char *mode, const void *data, size_t len)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void write_str(const char *path, const char *mode, const char *text)
{
	write_file(path, mode, text, strlen(text));
}

static char *read_all(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap + 1);

	assert_non_null(f);
	assert_non_null(buf);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	fclose(f);
	buf[len] = '\0';
	if (lenp)
		*lenp = len;
	return buf;
}

static struct v8log *parse(const char *text)
{
	struct v8log *log = v8log__new(NULL, NULL, NULL);

	assert_non_null(log);
	assert_true(v8log__parse_buf(log, text, strlen(text)) >= 0);
	return log;
}

static void expect_hex(const char *hex, const void *data, size_t len)
{
	uint8_t d[SHA256_DIGEST_LEN];
	char mine[SHA256_HEX_LEN];

	sha256__digest(data, len, d);
	sha256__hex(d, mine);
	assert_string_equal(mine, hex);
}

static void test_filename(void **state)
{
	static const char *const bad[] = {
		"v8.log", "isolate-0x-1-v8.log", "isolate-0x12-0-v8.log", "isolate-0x12-12-",
		"isolate-0xzz-1-a", "isolate-0x12345678901234567-1-a", "isolate-0x12-99999999999-a",
		"isolate-0x12-1", "isolate-0x12--1-a", "xisolate-0x12-1-a", "",
		/* glibc and libc++ both write the 0x: a name without it is another file */
		"isolate-55d5c8a0e000-1-x-y.log", "isolate-0X12-1-a", "isolate-0x0x12-1-a",
	};
	uint64_t isolate;
	pid_t pid;
	size_t i;

	(void)state;
	assert_int_equal(v8log__parse_filename("isolate-0x55d5c8a0e000-12345-v8.log", &isolate, &pid), 0);
	assert_int_equal(isolate, 0x55d5c8a0e000ULL);
	assert_int_equal(pid, 12345);
	/* node 20: a small isolate address */
	assert_int_equal(v8log__parse_filename("/srv/v8t/isolate-0x409e2030-12789-v8.log", &isolate, &pid), 0);
	assert_int_equal(isolate, 0x409e2030ULL);
	assert_int_equal(pid, 12789);
	assert_int_equal(v8log__parse_filename("isolate-0x55d5c8a0e000-1-x-y.log", &isolate, &pid), 0);
	assert_int_equal(isolate, 0x55d5c8a0e000ULL);
	assert_int_equal(pid, 1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		print_message("%s\n", bad[i]);
		assert_int_equal(v8log__parse_filename(bad[i], &isolate, &pid), -EINVAL);
	}
}

static void test_find(void **state)
{
	static const char *const names[] = {
		"isolate-0x2000-100-v8.log", "isolate-0x1000-100-v8.log", "isolate-0x3000-200-v8.log",
		"v8.log", "isolate-0x4000-100", "perf-100.map",
	};
	char dir[128], path[256];
	char **found;
	size_t i;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/find", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		write_str(path, "w", "");
	}
	found = v8log__find(dir, 100, NULL);
	assert_non_null(found);
	snprintf(path, sizeof(path), "%s/isolate-0x1000-100-v8.log", dir);
	assert_string_equal(found[0], path);
	snprintf(path, sizeof(path), "%s/isolate-0x2000-100-v8.log", dir);
	assert_string_equal(found[1], path);
	assert_null(found[2]);
	v8log__find_free(found);

	found = v8log__find(dir, 0, NULL);
	assert_non_null(found);
	for (i = 0; found[i]; i++)
		;
	assert_int_equal(i, 3);
	v8log__find_free(found);

	found = v8log__find(dir, 999, NULL);
	assert_non_null(found);
	assert_null(found[0]);
	v8log__find_free(found);

	snprintf(path, sizeof(path), "%s/missing", tmpdir);
	assert_null(v8log__find(path, 100, NULL));
	assert_int_equal(errno, ENOENT);
	v8log__find_free(NULL);

	/*
	 * A shared directory: a symlink and a FIFO named like logs never count;
	 * with an owner policy, only the target's own files do.
	 */
	snprintf(path, sizeof(path), "%s/isolate-0x5000-100-v8.log", dir);
	assert_int_equal(symlink("/etc/passwd", path), 0);
	snprintf(path, sizeof(path), "%s/isolate-0x6000-100-v8.log", dir);
	assert_int_equal(mkfifo(path, 0644), 0);
	found = v8log__find(dir, 100, &(struct safe_open_opts){
		.owner = SAFE_OPEN_OWNER_TARGET, .uid = geteuid() });
	assert_non_null(found);
	for (i = 0; found[i]; i++)
		;
	assert_int_equal(i, 2);
	v8log__find_free(found);
	found = v8log__find(dir, 100, &(struct safe_open_opts){
		.owner = SAFE_OPEN_OWNER_TARGET, .uid = geteuid() + 1 });
	assert_non_null(found);
	assert_null(found[0]);
	v8log__find_free(found);
}

static const char sample[] =
	"v8-version,12,4,254,21,-node.33,0\n"
	"v8-platform,linux,linux\n"
	"new,MemoryChunk,0xfc96e40000,262144\n"
	"code-creation,Builtin,2,1532,0x55d5c0a1b2c0,2272,ArrayPrototypePush\n"
	"code-creation,BytecodeHandler,1,1533,0x55d5c0b00000,64,LdaZero\n"
	"code-creation,JS,12,98231,0x7f3a1c204c40,420,fib /srv/app/index.js:12:14,0x2d7e0a1b2c81,*\n"
	"code-creation,JS,11,98232,0x7f3a1c205000,100,g /srv/app/index.js:20:1,0x2d7e0a1b2c99,+'\n"
	"code-creation,Script,9,40512,0x3b1e00a8c1d4,88,/srv/app/index.js,0x2d7e0a1b2a11,~\n"
	"code-creation,Eval,10,35586,0x26a3936892ae,5, [eval]:1:1,0x26a393689158,~\n"
	/* node 20 writes the debug name raw: a raw comma, raw UTF-8 */
	"code-creation,JS,2,43431,0x7fdea0025000,888,a,b /srv/v8u/a b\\x2C\\xe9.js:2:56,0x1b20e72d0fb8,~\n"
	"code-creation,JS,13,40385,0x7fdea0024e40,384,h\xc3\xa9llo\xe6\x97\xa5 /a.js:1:17,0x1b20e72d0f18,*\n"
	"code-creation,Callback,-2,100,0x4000,1,get foo\n"
	"code-creation,RegExp,7,100,0x5000,64,a\\x2Cb\\\\d\n"
	"sfi-move,0x2d7e0a1b2c81,0x2d7e0c000021\n"
	"code-move,0x3b1e00a8c1d4,0x3b1e00b00000\n"
	"code-source-info,0x7f14ef7c3040,80,0,2181,,,\n"
	"tick,0x1234,100,0,0x0,0\n"
	"script-source,17,/srv/app/index.js,function fib(n) {\\n  return n < 2 ? n : fib(n - 1) + fib(n - 2)\\x2C 0;\\n}\n"
	"script-details,17,/srv/app/index.js,0,0,app.js.map\n"
	"script-details,18,worker.js,2,4,\n";

static void test_events(void **state)
{
	struct v8log *log = parse(sample);
	const struct v8log_script *s;
	struct v8log_stats st;
	struct v8log_sym sym;

	(void)state;
	assert_string_equal(v8log__version(log), "12.4.254.21-node.33");
	assert_int_equal(v8log__isolate(log), 0);
	assert_int_equal(v8log__pid(log), 0);
	assert_int_equal(v8log__malformed(log), 0);
	assert_int_equal(v8log__count(log), 10);

	assert_int_equal(v8log__lookup(log, 0x7f3a1c204c40 + 0x10, &sym), 0);
	assert_int_equal(sym.start, 0x7f3a1c204c40ULL);
	assert_int_equal(sym.size, 420);
	assert_int_equal(sym.kind, 12);
	assert_int_equal(sym.sfi, 0x2d7e0a1b2c81ULL);
	assert_string_equal(sym.raw, "fib /srv/app/index.js:12:14");
	assert_int_equal(sym.name.kind, V8NAME_JS);
	assert_string_equal(sym.name.tag, "JS");
	assert_string_equal(sym.name.marker, "*");
	assert_int_equal(sym.name.tier, V8NAME_TIER_TURBOFAN);
	assert_string_equal(sym.name.function, "fib");
	assert_string_equal(sym.name.script, "/srv/app/index.js");
	assert_int_equal(sym.name.line, 12);
	assert_int_equal(sym.name.column, 14);
	assert_int_equal(v8log__lookup(log, 0x7f3a1c204c40 + 420, &sym), -ENOENT);

	assert_int_equal(v8log__lookup(log, 0x7f3a1c205000, &sym), 0);
	assert_string_equal(sym.name.marker, "+'");
	assert_true(sym.name.context_specialized);

	assert_int_equal(v8log__lookup(log, 0x55d5c0a1b2c0, &sym), 0);
	assert_int_equal(sym.name.kind, V8NAME_BUILTIN);
	assert_string_equal(sym.name.function, "ArrayPrototypePush");
	assert_int_equal(sym.sfi, 0);
	assert_int_equal(v8log__lookup(log, 0x55d5c0b00000, &sym), 0);
	assert_int_equal(sym.name.kind, V8NAME_BYTECODE_HANDLER);

	/* The top-level script moved. */
	assert_int_equal(v8log__lookup(log, 0x3b1e00a8c1d4, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x3b1e00b00000 + 87, &sym), 0);
	assert_int_equal(sym.start, 0x3b1e00b00000ULL);
	assert_int_equal(sym.name.kind, V8NAME_SCRIPT);
	assert_string_equal(sym.name.function, "");
	assert_string_equal(sym.name.script, "/srv/app/index.js");
	assert_int_equal(v8log__lookup(log, 0x26a3936892ae, &sym), 0);
	assert_string_equal(sym.name.tag, "Eval");
	assert_string_equal(sym.name.script, "[eval]");
	assert_int_equal(sym.name.line, 1);

	assert_int_equal(v8log__lookup(log, 0x7fdea0025000, &sym), 0);
	assert_string_equal(sym.raw, "a,b /srv/v8u/a b,\xc3\xa9.js:2:56");
	assert_string_equal(sym.name.function, "a,b");
	assert_string_equal(sym.name.script, "/srv/v8u/a b,\xc3\xa9.js");
	assert_string_equal(sym.name.marker, "~");
	assert_int_equal(v8log__lookup(log, 0x7fdea0024e40, &sym), 0);
	assert_string_equal(sym.name.function, "h\xc3\xa9llo\xe6\x97\xa5");

	assert_int_equal(v8log__lookup(log, 0x4000, &sym), 0);
	assert_int_equal(sym.kind, -2);
	assert_int_equal(sym.name.kind, V8NAME_OTHER);
	assert_string_equal(sym.name.function, "get foo");
	assert_int_equal(v8log__lookup(log, 0x4001, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x5000, &sym), 0);
	assert_int_equal(sym.name.kind, V8NAME_REGEXP);
	assert_string_equal(sym.name.function, "a,b\\d");

	assert_int_equal(v8log__script_count(log), 2);
	s = v8log__script(log, 17);
	assert_non_null(s);
	assert_ptr_equal(s, v8log__script_at(log, 0));
	assert_int_equal(s->id, 17);
	assert_string_equal(s->name, "/srv/app/index.js");
	assert_string_equal(s->source, "function fib(n) {\n  return n < 2 ? n : fib(n - 1) + fib(n - 2), 0;\n}");
	assert_int_equal(s->source_len, strlen(s->source));
	/* computed independently (python hashlib) */
	assert_string_equal(s->sha256_hex, "172d7f735d060b3d927b20b9309c9d08f3b95808fa840a557eb4dfd5cbee5052");
	expect_hex(s->sha256_hex, s->source, s->source_len);
	assert_string_equal(s->source_mapping_url, "app.js.map");

	s = v8log__script(log, 18);
	assert_non_null(s);
	assert_string_equal(s->name, "worker.js");
	assert_null(s->source);
	assert_int_equal(s->source_len, 0);
	assert_string_equal(s->sha256_hex, "");
	assert_null(s->source_mapping_url);
	assert_int_equal(s->line_offset, 2);
	assert_int_equal(s->column_offset, 4);
	assert_null(v8log__script(log, 19));
	assert_null(v8log__script_at(log, 2));

	v8log__stats(log, &st);
	assert_int_equal(st.lines, 20);
	assert_int_equal(st.events, 17); /* code-source-info and sfi-move count: they feed v8inline */
	assert_int_equal(st.scripts, 2);
	assert_int_equal(st.unmatched_moves, 0);
	v8log__free(log);
	v8log__free(NULL);

	log = parse("v8-version,11,3,244,8,0\n");
	assert_string_equal(v8log__version(log), "11.3.244.8");
	v8log__free(log);
}

static void test_escapes(void **state)
{
	static const char text[] =
		"script-source,5,/srv/\\xe9\\u65e5.js,"
		"a\\x2Cb\\\\c\\nd\\x09e\\x00f\\xe9\\u65e5\\ud83d\\ude00\\ud83dx\\ude00\\ud83d\\u0041\\q\\u12\n"
		"script-source,6,trail,x\\x4\n"
		"script-source,7,trail2,y\\\n"
		"script-source,8,<unknown>,\n"
		/* code names: a \xNN run that is UTF-8 stays bytes, a lone one is Latin-1 */
		"code-creation,JS,2,1,0x1000,16,f\\xc3\\xa9 \\xe9\\xc3x.js:1:1,0x10,~\n";
	static const char want[] = "a,b\\c\nd\te\0f\xc3\xa9\xe6\x97\xa5\xf0\x9f\x98\x80\xed\xa0\xbdx"
				   "\xed\xb8\x80\xed\xa0\xbd"
				   "A\\q\\u12";
	struct v8log *log = parse(text);
	const struct v8log_script *s;
	struct v8log_sym sym;

	(void)state;
	assert_int_equal(v8log__malformed(log), 0);
	s = v8log__script(log, 5);
	assert_non_null(s);
	assert_string_equal(s->name, "/srv/\xc3\xa9\xe6\x97\xa5.js");
	assert_int_equal(s->source_len, sizeof(want) - 1);
	assert_memory_equal(s->source, want, sizeof(want) - 1);
	assert_int_equal(s->source[s->source_len], '\0');
	/* python: hashlib.sha256(want).hexdigest() */
	assert_string_equal(s->sha256_hex, "60ab556e1faf03b6b380a74793660960cad7232ffb602288532b2ef32854c87b");
	expect_hex(s->sha256_hex, want, sizeof(want) - 1);

	assert_string_equal(v8log__script(log, 6)->source, "x\\x4");
	assert_string_equal(v8log__script(log, 7)->source, "y\\");
	s = v8log__script(log, 8);
	assert_string_equal(s->name, "<unknown>");
	assert_string_equal(s->source, "");
	assert_string_equal(s->sha256_hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");

	assert_int_equal(v8log__lookup(log, 0x1000, &sym), 0);
	assert_string_equal(sym.name.function, "f\xc3\xa9");
	assert_string_equal(sym.name.script, "\xc3\xa9\xc3\x83x.js");
	v8log__free(log);
}

static void test_malformed(void **state)
{
	static const char text[] =
		"v8-version,12,4,254,21,-node.33,0\n"				/* 1 */
		"code-creation,JS,12,1,0x1000,16,ok a.js:1:1,0x10,~\n"	/* 2 */
		"not an event\n"						/* 3 */
		"code-creation,JS,12,1,0x1000\n"				/* 4 */
		"code-creation,JS,x,1,0x2000,16,f\n"				/* 5 */
		"code-creation,JS,12,1,0xzz,16,f\n"				/* 6 */
		"code-creation,JS,12,1,0x2000,sixteen,f\n"			/* 7 */
		"code-creation,,12,1,0x2000,16,f\n"				/* 8 */
		"code-creation,JS,12,1,0xffffffffffffffff,16,f\n"		/* 9 */
		"code-move,0x1000\n"						/* 10 */
		"code-move,0x1000,nothex\n"					/* 11 */
		"code-delete,\n"						/* 12 */
		"script-source,abc,n,s\n"					/* 13 */
		"script-source,1\n"						/* 14 */
		"script-details,1,n,x,0,\n"					/* 15 */
		"v8-version,a,b\n"						/* 16 */
		"shared-library-end\n"						/* 17: no fields, fine */
		"\x01\x02,\xff\xfe\n"						/* 18: unknown event, ignored */
		"code-creation,J S,12,1,0x3000,16,f\n"				/* 19 */
		"code-creation,JS,12,1,0x4000,16,ok2 b.js:2:2\n"		/* 20 */
		"\n";								/* 21: blank, quiet */
	struct v8log *log = parse(text);
	struct v8log_stats st;
	struct v8log_sym sym;

	(void)state;
	v8log__stats(log, &st);
	assert_int_equal(st.lines, 21);
	assert_int_equal(v8log__malformed(log), 15);
	assert_int_equal(v8log__first_malformed_line(log), 3);
	assert_int_equal(v8log__count(log), 2);
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), 0);
	assert_string_equal(sym.name.function, "ok");
	assert_int_equal(v8log__lookup(log, 0x4000, &sym), 0);
	assert_int_equal(v8log__lookup(log, 0x2000, &sym), -ENOENT);
	assert_int_equal(v8log__script_count(log), 0);
	assert_string_equal(v8log__version(log), "12.4.254.21-node.33");
	v8log__free(log);
}

static void test_moves_and_overlaps(void **state)
{
	struct v8log *log = v8log__new(NULL, NULL, NULL);
	struct v8log_stats st;
	struct v8log_sym sym;

#define FEED(s) assert_true(v8log__parse_buf(log, s, strlen(s)) >= 0)
	(void)state;
	assert_non_null(log);
	FEED("code-creation,JS,10,1,0x1000,0x100,big a.js:1:1,0x10,~\n");
	FEED("code-creation,JS,10,1,0x1000,256,big a.js:1:1,0x10,~\n"
	     "code-creation,JS,10,2,0x1080,16,small a.js:2:2,0x20,~\n");
	assert_int_equal(v8log__malformed(log), 1);	/* sizes are decimal */
	assert_int_equal(v8log__lookup(log, 0x1085, &sym), 0);
	assert_string_equal(sym.name.function, "small");
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), 0);
	assert_string_equal(sym.name.function, "big");
	assert_int_equal(v8log__lookup(log, 0x1090, &sym), 0);
	assert_string_equal(sym.name.function, "big");

	/* big moves away: it shows at its new place, small stays. */
	FEED("code-move,0x1000,0x9000\n");
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x9000 + 255, &sym), 0);
	assert_string_equal(sym.name.function, "big");
	assert_int_equal(sym.start, 0x9000);
	assert_int_equal(v8log__lookup(log, 0x1085, &sym), 0);
	assert_string_equal(sym.name.function, "small");
	assert_int_equal(v8log__count(log), 2);

	/* unknown source of a move; delete */
	FEED("code-move,0x7777,0x8888\ncode-delete,0x1080\ncode-delete,0x1234\n");
	assert_int_equal(v8log__lookup(log, 0x1085, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x8888, &sym), -ENOENT);
	v8log__stats(log, &st);
	assert_int_equal(st.unmatched_moves, 2);
	assert_int_equal(st.code, 1);

	/* A creation at the same start replaces; a move onto a start replaces. */
	FEED("code-creation,JS,13,3,0x9000,64,opt a.js:1:1,0x10,*\n"
	     "code-creation,JS,10,4,0xa000,32,other b.js:1:1,0x30,~\n");
	assert_int_equal(v8log__lookup(log, 0x9000 + 100, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x9000, &sym), 0);
	assert_string_equal(sym.name.marker, "*");
	FEED("code-move,0xa000,0x9000\n");
	assert_int_equal(v8log__lookup(log, 0x9000, &sym), 0);
	assert_string_equal(sym.name.function, "other");
	assert_int_equal(v8log__lookup(log, 0x9000 + 40, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0xa000, &sym), -ENOENT);
	assert_int_equal(v8log__count(log), 1);

	/* Created and moved twice within one batch; moved back to where it was. */
	FEED("code-creation,JS,10,5,0xb000,16,hop c.js:1:1,0x40,~\n"
	     "code-move,0xb000,0xc000\ncode-move,0xc000,0xb000\ncode-move,0xb000,0xb000\n");
	assert_int_equal(v8log__lookup(log, 0xb000, &sym), 0);
	assert_string_equal(sym.name.function, "hop");
	assert_int_equal(v8log__lookup(log, 0xc000, &sym), -ENOENT);
	assert_int_equal(v8log__count(log), 2);
	v8log__free(log);
#undef FEED
}

/* A name looked up before the log grew is whole when looked up again after. */
static void test_names_after_growth(void **state)
{
	struct v8log *log = parse("code-creation,Builtin,2,1,0x1000,16,ArrayPush\n");
	struct v8log_sym sym;
	char line[128];
	size_t i;
	int len;

	(void)state;
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), 0);
	assert_string_equal(sym.name.tag, "Builtin");
	for (i = 0; i < 5000; i++) {
		len = snprintf(line, sizeof(line), "code-creation,Handler,3,%zu,0x%zx,16,h%zu\n", i,
			       0x100000 + i * 0x100, i);
		assert_int_equal(v8log__parse_buf(log, line, (size_t)len), 1);
	}
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), 0);
	assert_string_equal(sym.name.tag, "Builtin");
	assert_string_equal(sym.name.function, "ArrayPush");
	assert_string_equal(sym.raw, "ArrayPush");
	assert_int_equal(sym.name.kind, V8NAME_BUILTIN);
	v8log__free(log);
}

/* Code re-created and moved in place many times: memory follows live code. */
static void test_memory_bounded(void **state)
{
	struct v8log *log = v8log__new(NULL, NULL, NULL);
	size_t round, mem_early = 0;
	struct v8log_stats st;
	struct v8log_sym sym;
	char line[256];
	int len;

	(void)state;
	assert_non_null(log);
	for (round = 0; round < 3000; round++) {
		len = snprintf(line, sizeof(line),
			       "code-creation,JS,10,%zu,0x%zx,64,f%05zu a.js:1:1,0x10,~\n"
			       "code-move,0x%zx,0x%zx\n",
			       round, 0x10000 + (round % 50) * 0x100, round, 0x10000 + (round % 50) * 0x100,
			       0x90000 + (round % 50) * 0x100);
		assert_true(v8log__parse_buf(log, line, (size_t)len) > 0);
		v8log__stats(log, &st);
		if (round >= 100 && round < 110 && st.mem_bytes > mem_early)
			mem_early = st.mem_bytes;
		if (round >= 110)
			assert_true(st.mem_bytes <= mem_early);
	}
	assert_int_equal(v8log__count(log), 50);
	assert_int_equal(v8log__lookup(log, 0x90000 + 49 * 0x100, &sym), 0);
	assert_string_equal(sym.name.function, "f02999");
	assert_int_equal(v8log__lookup(log, 0x10000, &sym), -ENOENT);
	v8log__free(log);
}

static void test_incremental(void **state)
{
	char path[256], other[256];
	struct v8log_stats st;
	struct v8log_sym sym;
	struct v8log *log;
	const char *head = "v8-version,11,3,244,8,-node.38,0\n"
			   "code-creation,JS,2,1,0x1000,16,a x.js:1:1,0x10,~\n";

	(void)state;
	snprintf(path, sizeof(path), "%s/isolate-0x55d5c8a0e000-4242-v8.log", tmpdir);
	snprintf(other, sizeof(other), "%s/replacement", tmpdir);
	write_str(path, "w", head);
	log = v8log__new(path, NULL, NULL);
	assert_non_null(log);
	assert_int_equal(v8log__isolate(log), 0x55d5c8a0e000ULL);
	assert_int_equal(v8log__pid(log), 4242);
	assert_string_equal(v8log__version(log), "");
	assert_int_equal(v8log__update(log), 2);
	assert_string_equal(v8log__version(log), "11.3.244.8-node.38");
	v8log__stats(log, &st);
	assert_int_equal(st.bytes_read, strlen(head));

	/* A cut line waits for its end; the source arrives in pieces. */
	write_str(path, "a", "script-source,3,x.js,function a() {\\n");
	assert_int_equal(v8log__update(log), 0);
	assert_null(v8log__script(log, 3));
	write_str(path, "a", "  return 1\\x2C 2;\\n}");
	assert_int_equal(v8log__update(log), 0);
	write_str(path, "a", "\ncode-creation,JS,13,2,0x2000,16,b x.js:2:2,0x20,*\n");
	assert_int_equal(v8log__update(log), 2);
	assert_string_equal(v8log__script(log, 3)->source, "function a() {\n  return 1, 2;\n}");
	assert_int_equal(v8log__lookup(log, 0x2000, &sym), 0);
	assert_string_equal(sym.name.function, "b");
	v8log__stats(log, &st);
	assert_int_equal(st.lines, 4);
	/* the cut line was read again each time, nothing else was */
	assert_int_equal(st.offset, strlen(head) + 38 + 20 + 1 + 49);
	assert_int_equal(st.malformed, 0);

	/* A new file under the same name: everything starts over. */
	write_str(other, "w", "code-creation,JS,2,1,0x3000,16,c x.js:1:1,0x10,~\n");
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(v8log__update(log), 1);
	assert_null(v8log__script(log, 3));
	assert_string_equal(v8log__version(log), "");
	assert_int_equal(v8log__lookup(log, 0x1000, &sym), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x3000, &sym), 0);
	v8log__stats(log, &st);
	assert_int_equal(st.restarts, 1);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(v8log__update(log), -ENOENT);
	assert_int_equal(v8log__lookup(log, 0x3000, &sym), 0);
	v8log__free(log);

	log = v8log__new(NULL, NULL, NULL);
	assert_int_equal(v8log__update(log), -EINVAL);
	v8log__free(log);
}

/* ---- node: the real thing --------------------------------------------- */

static const char fib_js[] = "function fib(n){return n<2?n:fib(n-1)+fib(n-2)} for(let i=0;i<30;i++) fib(25)";

static bool have_node(void)
{
	return system("command -v node >/dev/null 2>&1") == 0;
}

/* Run node with the profiling flags, logs into dir; returns its pid. */
static pid_t run_node(const char *dir, const char *const *args)
{
	char logfile[256];
	const char *argv[16];
	int status, n = 0;
	pid_t pid;

	snprintf(logfile, sizeof(logfile), "--logfile=%s/v8.log", dir);
	argv[n++] = "node";
	argv[n++] = "--perf-basic-prof";
	argv[n++] = "--interpreted-frames-native-stack";
	argv[n++] = "--log-code";
	argv[n++] = "--log-source-code";
	argv[n++] = "--logfile-per-isolate";
	argv[n++] = logfile;
	while (*args)
		argv[n++] = *args++;
	argv[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		if (chdir(dir) < 0)
			_exit(126);
		execvp("node", (char *const *)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (nr_node_maps < 4)
		snprintf(node_maps[nr_node_maps++], sizeof(node_maps[0]), "/tmp/perf-%d.map", (int)pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return pid;
}

/*
 * Every entry whose raw name contains needle, looked up by its start;
 * returns how many matched, checking the fields each time.
 */
static int check_perfmap_fn(struct perfmap *pm, const char *text, const char *needle,
			    const char *fn, const char *script, uint32_t line, uint32_t col,
			    bool *saw_optimized)
{
	const char *p = text;
	struct perfmap_sym sym;
	int found = 0;

	while ((p = strstr(p, needle))) {
		const char *bol = p;
		uint64_t addr;

		while (bol > text && bol[-1] != '\n')
			bol--;
		p += strlen(needle);
		addr = strtoull(bol, NULL, 16);
		assert_int_equal(perfmap__lookup(pm, addr, &sym), 0);
		if (strstr(sym.raw, needle) == NULL)
			continue;	/* that range was reused by later code */
		assert_int_equal(sym.name.kind, V8NAME_JS);
		assert_string_equal(sym.name.function, fn);
		assert_string_equal(sym.name.script, script);
		assert_int_equal(sym.name.line, line);
		assert_int_equal(sym.name.column, col);
		assert_int_not_equal(sym.name.tier, V8NAME_TIER_NONE);
		if (sym.name.tier != V8NAME_TIER_INTERPRETED)
			*saw_optimized = true;
		found++;
	}
	return found;
}

static int check_log_fn(struct v8log *log, const char *text, const char *needle, const char *fn,
			const char *script, uint32_t line, uint32_t col)
{
	const char *p = text;
	struct v8log_sym sym;
	int found = 0;

	while ((p = strstr(p, needle))) {
		const char *bol = p, *f;
		uint64_t addr;
		int commas = 0;

		while (bol > text && bol[-1] != '\n')
			bol--;
		p += strlen(needle);
		if (strncmp(bol, "code-creation,", 14))
			continue;
		for (f = bol; commas < 4; f++)
			commas += *f == ',';
		addr = strtoull(f, NULL, 16);
		if (v8log__lookup(log, addr, &sym) < 0 || sym.start != addr)
			continue;	/* moved or replaced since */
		assert_int_equal(sym.name.kind, V8NAME_JS);
		assert_string_equal(sym.name.function, fn);
		assert_string_equal(sym.name.script, script);
		assert_int_equal(sym.name.line, line);
		assert_int_equal(sym.name.column, col);
		assert_int_not_equal(sym.name.tier, V8NAME_TIER_NONE);
		assert_true(sym.sfi != 0);
		found++;
	}
	return found;
}

static void open_node_outputs(const char *dir, pid_t pid, struct perfmap **pm, char **map_text,
			      struct v8log **log, char **log_text, char *map_path, size_t size)
{
	char **logs;

	snprintf(map_path, size, "/tmp/perf-%d.map", (int)pid);
	*pm = perfmap__new(map_path, NULL, NULL);
	assert_non_null(*pm);
	assert_true(perfmap__update(*pm) > 100);
	assert_int_equal(perfmap__malformed(*pm), 0);
	*map_text = read_all(map_path, NULL);

	logs = v8log__find(dir, pid, NULL);
	assert_non_null(logs);
	assert_non_null(logs[0]);
	assert_null(logs[1]);
	*log = v8log__new(logs[0], NULL, NULL);
	assert_non_null(*log);
	assert_true(v8log__update(*log) > 100);
	assert_int_equal(v8log__pid(*log), pid);
	assert_true(v8log__isolate(*log) != 0);
	assert_true(v8log__version(*log)[0] >= '1' && v8log__version(*log)[0] <= '9');
	assert_int_equal(v8log__malformed(*log), 0);
	*log_text = read_all(logs[0], NULL);
	v8log__find_free(logs);
}

static void test_node_fib(void **state)
{
	const char *const args[] = { "-e", fib_js, NULL };
	char dir[256], map_path[64], *map_text, *log_text;
	const struct v8log_script *s;
	bool optimized = false;
	struct perfmap *pm;
	struct v8log *log;
	int found = 0;
	size_t i;
	pid_t pid;

	(void)state;
	if (!have_node()) {
		print_message("node not found on PATH: real V8 output not checked\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/node-fib", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	pid = run_node(dir, args);
	open_node_outputs(dir, pid, &pm, &map_text, &log, &log_text, map_path, sizeof(map_path));

	assert_true(check_perfmap_fn(pm, map_text, "fib [eval]:1:13", "fib", "[eval]", 1, 13,
				     &optimized) >= 2);
	/* fib(25) 30 times gets optimized: a non-interpreted copy exists */
	assert_true(optimized);
	assert_true(check_log_fn(log, log_text, "fib [eval]:1:13,", "fib", "[eval]", 1, 13) >= 2);

	for (i = 0; (s = v8log__script_at(log, i)); i++) {
		if (strcmp(s->name, "[eval]") || !s->source || strcmp(s->source, fib_js))
			continue;
		/* python: hashlib.sha256(fib_js).hexdigest() */
		assert_string_equal(s->sha256_hex,
				    "0630d7c0b3d35d8245372e006a1c36b4ec0cc43ae162b83d8c05b48541d07d10");
		expect_hex(s->sha256_hex, fib_js, strlen(fib_js));
		found++;
	}
	assert_true(found >= 1);

	free(map_text);
	free(log_text);
	perfmap__free(pm);
	v8log__free(log);
}

/* Non-ASCII, commas and blanks in names and paths: both files must agree with the source file. */
static void test_node_unicode(void **state)
{
	static const char js[] =
		"function h\xc3\xa9llo\xe6\x97\xa5(n){ return n<2?n:h\xc3\xa9llo\xe6\x97\xa5(n-1)+h\xc3\xa9llo\xe6\x97\xa5(n-2) }"
		" // \xc3\xa9 \xf0\x9f\x98\x80 ,\n"
		"const o = { \"a,b\"(){ return h\xc3\xa9llo\xe6\x97\xa5(18) } };\n"
		"for (let i = 0; i < 100; i++) o[\"a,b\"]();\n";
	char dir[256], script[320], map_path[64], *map_text, *log_text;
	const char *args[] = { script, NULL };
	const struct v8log_script *s;
	bool optimized = false;
	struct perfmap *pm;
	struct v8log *log;
	int found = 0;
	size_t i;
	pid_t pid;

	(void)state;
	if (!have_node()) {
		print_message("node not found on PATH: real V8 output not checked\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/node-uni", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(script, sizeof(script), "%s/a b,\xc3\xa9.js", dir);
	write_str(script, "w", js);
	pid = run_node(dir, args);
	open_node_outputs(dir, pid, &pm, &map_text, &log, &log_text, map_path, sizeof(map_path));

	assert_true(check_perfmap_fn(pm, map_text, "h\xc3\xa9llo\xe6\x97\xa5 /", "h\xc3\xa9llo\xe6\x97\xa5",
				     script, 1, 16, &optimized) >= 2);
	assert_true(check_perfmap_fn(pm, map_text, "a,b /", "a,b", script, 2, 18, &optimized) >= 1);
	assert_true(check_log_fn(log, log_text, "h\xc3\xa9llo\xe6\x97\xa5 /", "h\xc3\xa9llo\xe6\x97\xa5",
				 script, 1, 16) >= 2);
	assert_true(check_log_fn(log, log_text, "a,b /", "a,b", script, 2, 18) >= 1);

	for (i = 0; (s = v8log__script_at(log, i)); i++) {
		if (strcmp(s->name, script))
			continue;
		/* The decoded source is the file, byte for byte. */
		assert_int_equal(s->source_len, strlen(js));
		assert_memory_equal(s->source, js, strlen(js));
		expect_hex(s->sha256_hex, js, strlen(js));
		found++;
	}
	assert_int_equal(found, 1);

	free(map_text);
	free(log_text);
	perfmap__free(pm);
	v8log__free(log);
}

/*
 * Optimized code of outer() that inlined inner(): a pc in the inlined part
 * names inner at its position, and outer at the call.
 */
static void test_inline_stack(void **state)
{
	const char *src = "function outer(x) {\n  return inner(x) + 1;\n}\n"
			  "function inner(y) {\n  return y * 2;\n}\n";
	int call = (int)(strstr(src, "inner(x)") - src);
	int body = (int)(strstr(src, "y * 2") - src);
	struct v8inline_frame frames[4], outer;
	struct v8log *log;
	char text[2048];
	(void)state;

	/* the source escapes newlines as the log does */
	snprintf(text, sizeof(text),
		 "script-source,8,w.js,function outer(x) {\\n  return inner(x) + 1;\\n}\\n"
		 "function inner(y) {\\n  return y * 2;\\n}\\n\n"
		 "code-creation,JS,3,1,0x1000,100,outer w.js:1:15,0xa1,~\n"
		 "code-creation,JS,3,2,0x2000,100,inner w.js:4:15,0xa2,~\n"
		 "code-creation,JS,13,5,0x3000,500,outer w.js:1:15,0xa1,*\n"
		 "code-source-info,0x3000,8,0,80,C0O0C20O%dI0C40O%d,F0O%d,S0xa2\n",
		 body, call, call);
	log = parse(text);

	/* at pc offset 25: inside inner, inlined at outer's call */
	assert_int_equal(v8log__inline_stack(log, 0x3000, 25, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "inner");
	assert_string_equal(frames[0].script, "w.js");
	assert_int_equal(frames[0].line, 5);
	assert_int_equal(frames[0].column, 10);
	assert_int_equal(outer.line, 2);
	assert_int_equal(outer.column, 10);
	/* before the inlined part, and past it: outer's own code, at its lines */
	assert_int_equal(v8log__inline_stack(log, 0x3000, 5, frames, 4, &outer), 0);
	assert_int_equal(outer.line, 1);
	assert_int_equal(outer.column, 1);
	assert_int_equal(v8log__inline_stack(log, 0x3000, 45, frames, 4, &outer), 0);
	assert_int_equal(outer.line, 2);
	assert_int_equal(outer.column, 10);
	/* code without inlining info, and unknown code */
	assert_int_equal(v8log__inline_stack(log, 0x1000, 5, frames, 4, &outer), 0);
	assert_int_equal(v8log__inline_stack(log, 0x9000, 5, frames, 4, &outer), 0);
	/* a move takes the info along */
	v8log__parse_buf(log, "code-move,0x3000,0x4000\n", 24);
	assert_int_equal(v8log__inline_stack(log, 0x4000, 25, frames, 4, &outer), 1);
	/* malformed source info is counted, never fatal */
	v8log__parse_buf(log, "code-source-info,0x5000,8,0,80,CxO1,F0O1,S0xa2\n", 48);
	assert_true(v8log__malformed(log) > 0);
	v8log__free(log);
}

/*
 * On-stack-replacement code: V8 marks it "o*" (TurboFan) or "o+" (Maglev)
 * after the SFI.  Its name is the function's, its SFI read, and, as for
 * all optimized code, its source positions kept though it inlined
 * nothing: a sample in it has a line.  Interpreted code keeps none.
 */
static void test_osr_code(void **state)
{
	struct v8inline_frame frames[4], outer;
	struct v8log_sym sym;
	struct v8log *log;
	(void)state;

	log = parse("script-source,8,w.js,function loop(n) {\\n  for (;;) n++;\\n}\\n\n"
		    "code-creation,JS,3,1,0x1000,100,loop w.js:1:14,0xa1,~\n"
		    "code-source-info,0x1000,8,0,30,C0O0C10O22,,\n"
		    "code-creation,JS,13,5,0x3000,500,loop w.js:1:14,0xa1,o*\n"
		    "code-source-info,0x3000,8,0,30,C0O0C40O22,,\n"
		    "code-creation,JS,12,6,0x5000,500,loop w.js:1:14,0xa1,o+\n");
	assert_int_equal(v8log__lookup(log, 0x3000 + 50, &sym), 0);
	assert_int_equal(sym.sfi, 0xa1);
	assert_string_equal(sym.name.function, "loop");
	assert_int_equal(sym.name.tier, V8NAME_TIER_TURBOFAN);
	assert_int_equal(v8log__lookup(log, 0x5000 + 50, &sym), 0);
	assert_int_equal(sym.sfi, 0xa1);
	assert_string_equal(sym.name.function, "loop");
	assert_int_equal(sym.name.tier, V8NAME_TIER_MAGLEV);
	/* pc offset 50: at position 22, on line 2 */
	assert_int_equal(v8log__inline_stack(log, 0x3000, 50, frames, 4, &outer), 0);
	assert_int_equal(outer.line, 2);
	assert_int_equal(outer.column, 4);
	/* the interpreter's copy: no table kept */
	assert_int_equal(v8log__inline_stack(log, 0x1000, 50, frames, 4, &outer), 0);
	assert_int_equal(outer.line, 0);
	v8log__free(log);
}

/*
 * Code addresses are reused: node 20 running TypeScript's checker logged
 * TurboFan code of scanIdentifier (inlining scanner helpers) at one start,
 * and later, at the same start, the interpreter entry of
 * checkGrammarVariableDeclaration, whose code-source-info has no inlining.
 * A pc there is in checkGrammarVariableDeclaration alone: the older
 * code's inlined frames would put scanner functions on top of it, a call
 * the source does not have.  (Lines as logged, their C lists cut short.)
 */
static void test_inline_reused_start(void **state)
{
	static const char text[] =
		"code-creation,JS,3,1000,0x7efdb7000100,200,isIdentifierPart t.js:1:10,0x3e92da107010,~\n"
		"code-creation,JS,13,889411,0x7efdb78c8880,2740,scanIdentifier t.js:3:28,"
		"0x3e92da107078,*\n"
		"code-source-info,0x7efdb78c8880,82,40,80,C0O40C81O12I0C122O14I0C214O45,F0O44,"
		"S0x3e92da107010\n"
		"code-creation,JS,2,2396317,0x7efdb78c8880,888,checkGrammarVariableDeclaration "
		"t.js:9:45,0x3641afa9a458,~\n"
		"code-source-info,0x7efdb78c8880,82,4496764,4499191,,,\n";
	struct v8inline_frame frames[4], outer;
	struct v8log *log;
	(void)state;

	log = parse(text);
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 130, frames, 4, &outer), 0);
	v8log__free(log);

	/* the table holds while the code lives, and a code-delete ends it */
	log = parse("code-creation,JS,3,1000,0x7efdb7000100,200,isIdentifierPart t.js:1:10,"
		    "0x3e92da107010,~\n"
		    "code-creation,JS,13,889411,0x7efdb78c8880,2740,scanIdentifier t.js:3:28,"
		    "0x3e92da107078,*\n"
		    "code-source-info,0x7efdb78c8880,82,40,80,C0O40C81O12I0C122O14I0C214O45,F0O44,"
		    "S0x3e92da107010\n");
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 130, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "isIdentifierPart");
	v8log__parse_buf(log, "code-delete,0x7efdb78c8880\n", 27);
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 130, frames, 4, &outer), 0);
	v8log__free(log);
}

/*
 * Tiering replaces code at its start while a window runs (workerd: Maglev's
 * OSR code of fetch freed, TurboFan's code of leakyInstrumentation logged
 * at the same start, 436 bytes against 4304): a pc past the new code's end
 * was sampled in the old code, and gets the old code's inlining; a pc
 * inside the new code gets the new code's (none here).
 */
static void test_inline_replaced_code(void **state)
{
	static const char text[] =
		"code-creation,JS,3,1000,0x7efdb7000100,200,isIdentifierPart t.js:1:10,0x3e92da107010,~\n"
		"code-creation,JS,13,889411,0x7efdb78c8880,2740,scanIdentifier t.js:3:28,"
		"0x3e92da107078,*\n"
		"code-source-info,0x7efdb78c8880,82,40,80,C0O40C81O12I0C1200O14I0C2214O45,F0O44,"
		"S0x3e92da107010\n"
		"code-creation,JS,2,2396317,0x7efdb78c8880,888,checkGrammarVariableDeclaration "
		"t.js:9:45,0x3641afa9a458,~\n"
		"code-source-info,0x7efdb78c8880,82,4496764,4499191,,,\n";
	struct v8inline_frame frames[4], outer;
	struct v8log *log;
	(void)state;

	log = parse(text);
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 130, frames, 4, &outer), 0);
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 1500, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "isIdentifierPart");
	/* past the old code's end too: nothing */
	assert_int_equal(v8log__inline_stack(log, 0x7efdb78c8880, 3000, frames, 4, &outer), 0);
	v8log__free(log);
}

/*
 * SFI addresses are reused too (V8 frees the SFIs of flushed functions and
 * allocates new ones in their place) and moved (sfi-move): an inlined
 * frame is named by its SFI as it was when its code was logged.  Naming it
 * by the first function ever logged at that address charged a hot inlined
 * function's time to one that never ran there.
 */
static void test_inline_reused_sfi(void **state)
{
	static const char text[] =
		/* the first function at SFI 0xb1, its code, then the SFI is reused */
		"code-creation,JS,3,10,0x1000,100,isArrayOrTupleType t.js:1:1,0xb1,~\n"
		"code-creation,JS,3,20,0x2000,100,getNodeLinks t.js:2:1,0xb2,~\n"
		"code-creation,JS,13,30,0x3000,500,checkIt t.js:3:1,0xb2,*\n"
		"code-source-info,0x3000,8,0,80,C0O0C20O5I0C40O9,F0O7,S0xb1\n"
		"code-creation,JS,3,40,0x4000,100,getMergedSymbol t.js:4:1,0xb1,~\n"
		"code-creation,JS,13,50,0x5000,500,getSymbolOfDeclaration t.js:5:1,0xb3,*\n"
		"code-source-info,0x5000,8,0,80,C0O0C20O5I0C40O9,F0O7,S0xb1\n"
		/* getMergedSymbol moves; code logged after names it at its new address */
		"sfi-move,0xb1,0xc1\n"
		"code-creation,JS,13,60,0x6000,500,resolveEntityName t.js:6:1,0xb4,*\n"
		"code-source-info,0x6000,8,0,80,C0O0C20O5I0C40O9,F0O7,S0xc1\n";
	struct v8inline_frame frames[4], outer;
	struct v8log *log = parse(text);
	(void)state;

	assert_int_equal(v8log__inline_stack(log, 0x3000, 25, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "isArrayOrTupleType");
	assert_int_equal(v8log__inline_stack(log, 0x5000, 25, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "getMergedSymbol");
	assert_int_equal(v8log__inline_stack(log, 0x6000, 25, frames, 4, &outer), 1);
	assert_string_equal(frames[0].function, "getMergedSymbol");
	assert_int_equal(v8log__malformed(log), 0);
	v8log__free(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_filename),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_inline_stack),
		cmocka_unit_test(test_inline_reused_start),
		cmocka_unit_test(test_inline_replaced_code),
		cmocka_unit_test(test_inline_reused_sfi),
		cmocka_unit_test(test_osr_code),
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_moves_and_overlaps),
		cmocka_unit_test(test_names_after_growth),
		cmocka_unit_test(test_memory_bounded),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_node_fib),
		cmocka_unit_test(test_node_unicode),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
