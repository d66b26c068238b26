// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for symbolize/perfmap: parsing, newest-wins, tailing, memory. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/perfmap.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-perfmap.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_in_tmp(char *buf, size_t size, const char *name)
{
	snprintf(buf, size, "%s/%s", tmpdir, name);
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

static struct perfmap *parse(const char *text)
{
	struct perfmap *pm = perfmap__new(NULL, NULL, NULL);

	assert_non_null(pm);
	assert_true(perfmap__parse_buf(pm, text, strlen(text)) >= 0);
	return pm;
}

static const char *name_at(struct perfmap *pm, uint64_t addr)
{
	struct perfmap_sym sym;

	if (perfmap__lookup(pm, addr, &sym) < 0)
		return NULL;
	return sym.raw;
}

static void test_basic(void **state)
{
	static const char text[] =
		"7f3a1c204c40 1a4 JS:*fib /srv/app/index.js:12:14\n"
		"7f3a1c2051e0 9c JS:~handle /srv/app/index.js:30:21\n"
		"55d5c0a1b2c0 8e0 Builtin:ArrayPrototypePush\n"
		"0x55d5c0b00000 0x40 BytecodeHandler:LdaZero\n"	/* Android style */
		"7f3a1c205a00 c0 Script:~ /srv/app/index.js\n"
		"7F3A1C206000 10 JS:^up per.js:1:1\n";
	struct perfmap *pm = parse(text);
	struct perfmap_sym sym, again;

	(void)state;
	assert_int_equal(perfmap__count(pm), 6);
	assert_int_equal(perfmap__malformed(pm), 0);
	assert_int_equal(perfmap__first_malformed_line(pm), 0);

	assert_int_equal(perfmap__lookup(pm, 0x7f3a1c204c40, &sym), 0);
	assert_int_equal(sym.start, 0x7f3a1c204c40ULL);
	assert_int_equal(sym.size, 0x1a4);
	assert_string_equal(sym.raw, "JS:*fib /srv/app/index.js:12:14");
	assert_int_equal(sym.name.kind, V8NAME_JS);
	assert_int_equal(sym.name.tier, V8NAME_TIER_TURBOFAN);
	assert_string_equal(sym.name.function, "fib");
	assert_string_equal(sym.name.script, "/srv/app/index.js");
	assert_int_equal(sym.name.line, 12);
	assert_int_equal(sym.name.column, 14);
	/* The last byte is in, the byte after is not. */
	assert_int_equal(perfmap__lookup(pm, 0x7f3a1c204c40 + 0x1a3, &again), 0);
	/* Parsed once: the same strings come back until the map changes. */
	assert_ptr_equal(again.name.function, sym.name.function);
	assert_int_equal(perfmap__lookup(pm, 0x7f3a1c204c40 + 0x1a4, &sym), -ENOENT);
	assert_int_equal(perfmap__lookup(pm, 0x7f3a1c204c3f, &sym), -ENOENT);

	assert_int_equal(perfmap__lookup(pm, 0x55d5c0b00020, &sym), 0);
	assert_string_equal(sym.name.tag, "BytecodeHandler");
	assert_string_equal(sym.name.function, "LdaZero");
	assert_int_equal(sym.size, 0x40);
	assert_string_equal(name_at(pm, 0x55d5c0a1b2c0 + 0x8df), "Builtin:ArrayPrototypePush");
	assert_int_equal(perfmap__lookup(pm, 0x7f3a1c205a10, &sym), 0);
	assert_int_equal(sym.name.kind, V8NAME_SCRIPT);
	assert_string_equal(sym.name.script, "/srv/app/index.js");
	assert_string_equal(name_at(pm, 0x7f3a1c206000), "JS:^up per.js:1:1");
	assert_null(name_at(pm, 0));
	assert_null(name_at(pm, UINT64_MAX));
	perfmap__free(pm);
	perfmap__free(NULL);
}

static void test_malformed(void **state)
{
	static const char text[] =
		"1000 10 JS:~ok a.js:1:1\n"	/* 1 */
		"zzzz 10 JS:~bad_hex a.js:1:1\n"	/* 2 */
		"2000 JS:~missing_size\n"	/* 3 */
		"3000 10\n"			/* 4: no name */
		"3000 10 \n"			/* 5: empty name */
		"\n"				/* 6: blank: skipped, not malformed */
		"3000\t10\tJS:~tabs\n"		/* 7 */
		"3000  10 JS:~two_blanks\n"	/* 8 */
		"10000000000000000 10 JS:~too_big\n"	/* 9 */
		"ffffffffffffffff 10 JS:~wraps\n"	/* 10 */
		"0x 10 JS:~no_digits\n"		/* 11 */
		"-3000 10 JS:~neg\n"		/* 12 */
		"\x01\x02\xff\xfe binary\n"	/* 13 */
		"4000 10 JS:~ok2 b.js:2:2\n"	/* 14 */
		"5000 0 JS:~empty_range\n"	/* 15: valid, covers nothing */
		"6000 10 JS:~last c.js:3:3";	/* 16: no newline: fine for a buffer */
	struct perfmap *pm = parse(text);
	struct perfmap_stats st;

	(void)state;
	assert_int_equal(perfmap__count(pm), 3);
	assert_int_equal(perfmap__malformed(pm), 11);
	assert_int_equal(perfmap__first_malformed_line(pm), 2);
	assert_string_equal(name_at(pm, 0x1005), "JS:~ok a.js:1:1");
	assert_string_equal(name_at(pm, 0x4000), "JS:~ok2 b.js:2:2");
	assert_string_equal(name_at(pm, 0x600f), "JS:~last c.js:3:3");
	assert_null(name_at(pm, 0x3000));
	assert_null(name_at(pm, 0x5000));
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, 16);
	perfmap__free(pm);
}

static void test_nul_and_junk(void **state)
{
	static const char text[] = "1000 10 JS:~a\0b x.js:1:1\n2000 10 JS:~c x.js:1:1\n\0\0\0\n";
	struct perfmap *pm = perfmap__new(NULL, NULL, NULL);
	char junk[4096];
	size_t i;

	(void)state;
	assert_non_null(pm);
	assert_int_equal(perfmap__parse_buf(pm, text, sizeof(text) - 1), 1);
	assert_int_equal(perfmap__malformed(pm), 2);
	assert_string_equal(name_at(pm, 0x2000), "JS:~c x.js:1:1");

	srandom(7);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (char)random();
	assert_true(perfmap__parse_buf(pm, junk, sizeof(junk)) >= 0);
	assert_string_equal(name_at(pm, 0x2000), "JS:~c x.js:1:1");
	perfmap__free(pm);
}

static void test_newest_wins(void **state)
{
	struct perfmap *pm;

	(void)state;
	pm = parse("1000 1000 JS:~old a.js:1:1\n"
		   "1800 100 JS:*new a.js:1:1\n");
	assert_int_equal(perfmap__count(pm), 2);
	assert_string_equal(name_at(pm, 0x17ff), "JS:~old a.js:1:1");
	assert_string_equal(name_at(pm, 0x1800), "JS:*new a.js:1:1");
	assert_string_equal(name_at(pm, 0x18ff), "JS:*new a.js:1:1");
	assert_string_equal(name_at(pm, 0x1900), "JS:~old a.js:1:1");
	assert_string_equal(name_at(pm, 0x1fff), "JS:~old a.js:1:1");
	assert_null(name_at(pm, 0x2000));

	/* An older, smaller entry does not show through a newer big one. */
	assert_int_equal(perfmap__parse_buf(pm, "1000 1000 JS:~all a.js:2:2\n", 27), 1);
	assert_int_equal(perfmap__count(pm), 1);
	assert_string_equal(name_at(pm, 0x1850), "JS:~all a.js:2:2");
	/* Later in the same batch wins too; a lower address later in the file as well. */
	assert_int_equal(perfmap__parse_buf(pm, "1400 10 JS:~x a.js:3:3\n1000 500 JS:~y a.js:4:4\n", 46), 2);
	assert_string_equal(name_at(pm, 0x1405), "JS:~y a.js:4:4");
	assert_string_equal(name_at(pm, 0x1500), "JS:~all a.js:2:2");
	assert_int_equal(perfmap__count(pm), 2);
	perfmap__free(pm);
}

static void test_incremental(void **state)
{
	static const char first[] = "1000 10 JS:~a x.js:1:1\n2000 10 JS:~b x.js:2:2\n3000 10 JS:~c x.js:3:3\n";
	static const char more[] = "4000 10 JS:~d x.js:4:4\n5000 10 JS:~e x.js:5:5\n";
	struct perfmap_stats st;
	struct perfmap *pm;
	char path[128];

	(void)state;
	path_in_tmp(path, sizeof(path), "incr.map");
	write_str(path, "w", first);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), 3);
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.offset, strlen(first));
	assert_int_equal(st.bytes_read, strlen(first));

	/* Nothing new: nothing read but the check of what was read. */
	assert_int_equal(perfmap__update(pm), 0);
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, 3);
	assert_int_equal(st.bytes_read, strlen(first));

	write_str(path, "a", more);
	assert_int_equal(perfmap__update(pm), 2);
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, 5);
	assert_int_equal(st.offset, strlen(first) + strlen(more));
	assert_int_equal(st.bytes_read, strlen(first) + strlen(more));
	assert_int_equal(st.restarts, 0);
	assert_int_equal(perfmap__count(pm), 5);
	assert_string_equal(name_at(pm, 0x1000), "JS:~a x.js:1:1");
	assert_string_equal(name_at(pm, 0x5000), "JS:~e x.js:5:5");
	perfmap__free(pm);
}

static void test_partial_line(void **state)
{
	struct perfmap_stats st;
	struct perfmap_sym sym;
	struct perfmap *pm;
	char path[128];

	(void)state;
	path_in_tmp(path, sizeof(path), "partial.map");
	write_str(path, "w", "1000 10 JS:~a x.js:1:1\n2000 10 JS:*b x.j");
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), 1);
	assert_int_equal(perfmap__lookup(pm, 0x2000, &sym), -ENOENT);
	perfmap__stats(pm, &st);
	assert_int_equal(st.offset, 23);
	assert_int_equal(st.lines, 1);

	/* Still no newline: still not consumed. */
	write_str(path, "a", "s:1");
	assert_int_equal(perfmap__update(pm), 0);
	assert_int_equal(perfmap__lookup(pm, 0x2000, &sym), -ENOENT);

	write_str(path, "a", ":2\n3000 10 JS:~c x.js:3:3\n");
	assert_int_equal(perfmap__update(pm), 2);
	assert_int_equal(perfmap__lookup(pm, 0x2000, &sym), 0);
	assert_string_equal(sym.raw, "JS:*b x.js:1:2");
	assert_int_equal(sym.name.line, 1);
	assert_int_equal(sym.name.column, 2);
	assert_int_equal(perfmap__malformed(pm), 0);
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, 3);
	perfmap__free(pm);
}

static void test_restart(void **state)
{
	char path[128], other[128];
	struct perfmap_stats st;
	struct perfmap *pm;

	(void)state;
	path_in_tmp(path, sizeof(path), "restart.map");
	path_in_tmp(other, sizeof(other), "restart.new");
	write_str(path, "w", "1000 10 JS:~a x.js:1:1\n2000 10 JS:~b x.js:2:2\n");
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), 2);

	/* Shrunk: a new process truncated it. */
	write_str(path, "w", "3000 10 JS:~c x.js:3:3\n");
	assert_int_equal(perfmap__update(pm), 1);
	assert_null(name_at(pm, 0x1000));
	assert_string_equal(name_at(pm, 0x3000), "JS:~c x.js:3:3");
	perfmap__stats(pm, &st);
	assert_int_equal(st.restarts, 1);
	assert_int_equal(st.lines, 1);

	/* Rewritten in place, longer than before: the bytes read before changed. */
	write_str(path, "w", "4000 10 JS:~d x.js:4:4\n5000 10 JS:~e x.js:5:5\n");
	assert_int_equal(perfmap__update(pm), 2);
	assert_null(name_at(pm, 0x3000));
	assert_string_equal(name_at(pm, 0x5000), "JS:~e x.js:5:5");

	/* Replaced by another file (other inode). */
	write_str(other, "w", "4000 10 JS:~d x.js:4:4\n5000 10 JS:~e x.js:5:5\n6000 10 JS:~f x.js:6:6\n");
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(perfmap__update(pm), 3);
	perfmap__stats(pm, &st);
	assert_int_equal(st.restarts, 3);
	assert_int_equal(perfmap__count(pm), 3);

	/* Gone: an error, but what was read stays for late samples. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(perfmap__update(pm), -ENOENT);
	assert_string_equal(name_at(pm, 0x6000), "JS:~f x.js:6:6");
	perfmap__free(pm);

	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), -ENOENT);
	assert_int_equal(perfmap__count(pm), 0);
	assert_null(name_at(pm, 0x6000));
	perfmap__free(pm);

	/* Not a regular file. */
	pm = perfmap__new(tmpdir, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), -EINVAL);
	perfmap__free(pm);
	pm = perfmap__new(NULL, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), -EINVAL);
	perfmap__free(pm);
}

/* Re-appending the same ranges must not grow memory: old entries die. */
static void test_memory_bounded(void **state)
{
	enum { RANGES = 100, ROUNDS = 300 };
	size_t mem_early = 0, round, i;
	struct perfmap_stats st;
	struct perfmap *pm;
	char path[128], line[128], *batch;
	size_t len;

	(void)state;
	path_in_tmp(path, sizeof(path), "grow.map");
	write_str(path, "w", "");
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	batch = malloc(RANGES * sizeof(line));
	assert_non_null(batch);
	for (round = 0; round < ROUNDS; round++) {
		len = 0;
		for (i = 0; i < RANGES; i++)
			len += (size_t)sprintf(batch + len, "%zx 100 JS:*f%zu_%03zu /srv/app/index.js:%zu:1\n",
					       0x10000 + i * 0x100, i, round, i + 1);
		write_file(path, "a", batch, len);
		assert_int_equal(perfmap__update(pm), RANGES);
		perfmap__stats(pm, &st);
		assert_int_equal(st.entries, RANGES);
		assert_int_equal(st.segments, RANGES);
		/* Compaction runs every other round or so: take the high mark of two. */
		if ((round == 10 || round == 11) && st.mem_bytes > mem_early)
			mem_early = st.mem_bytes;
		if (round > 11)
			assert_true(st.mem_bytes <= mem_early);
	}
	snprintf(line, sizeof(line), "JS:*f7_%03d /srv/app/index.js:8:1", ROUNDS - 1);
	assert_string_equal(name_at(pm, 0x10000 + 7 * 0x100 + 0x80), line);
	perfmap__stats(pm, &st);
	assert_int_equal(st.lines, RANGES * ROUNDS);
	free(batch);
	perfmap__free(pm);

	/* The same through parse_buf, and with partial overlaps that keep old pieces alive. */
	pm = perfmap__new(NULL, NULL, NULL);
	assert_non_null(pm);
	for (round = 0; round < 2000; round++) {
		len = (size_t)sprintf(line, "%x 80 JS:~g%zu a.js:1:1\n", 0x1000 + (unsigned)(round % 7) * 0x40,
				      round);
		assert_int_equal(perfmap__parse_buf(pm, line, len), 1);
	}
	perfmap__stats(pm, &st);
	assert_true(st.entries <= 8);
	assert_true(st.mem_bytes < 200 * 1024);
	perfmap__free(pm);
}

static void test_long_lines(void **state)
{
	size_t name_len = 4096, big = PERFMAP_LINE_MAX + 100, len;
	char path[128], *text = malloc(big + 8192), *p;
	struct perfmap_sym sym;
	struct perfmap *pm;

	(void)state;
	assert_non_null(text);
	p = text + sprintf(text, "1000 10 JS:*");
	memset(p, 'n', name_len - 4);
	p += name_len - 4;
	p += sprintf(p, "\n2000 10 ");
	memset(p, 'x', big);	/* longer than any line we keep */
	p += big;
	p += sprintf(p, "\n3000 10 JS:~after a.js:1:1\n");
	len = (size_t)(p - text);

	path_in_tmp(path, sizeof(path), "long.map");
	write_file(path, "w", text, len);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), 2);
	assert_int_equal(perfmap__lookup(pm, 0x1000, &sym), 0);
	assert_int_equal(strlen(sym.raw), name_len);
	assert_int_equal(strlen(sym.name.function), name_len - 4);
	assert_int_equal(perfmap__lookup(pm, 0x2000, &sym), -ENOENT);
	assert_string_equal(name_at(pm, 0x3000), "JS:~after a.js:1:1");
	assert_int_equal(perfmap__malformed(pm), 1);
	assert_int_equal(perfmap__first_malformed_line(pm), 2);
	perfmap__free(pm);

	/* An overlong line still growing across updates is skipped as it comes. */
	write_str(path, "w", "1000 10 JS:~a a.js:1:1\n4000 10 ");
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__update(pm), 1);
	memset(text, 'z', big);
	write_file(path, "a", text, big);	/* no newline yet */
	assert_int_equal(perfmap__update(pm), 0);
	assert_int_equal(perfmap__malformed(pm), 1);
	write_str(path, "a", "yyy\n5000 10 JS:~b b.js:2:2\n");
	assert_int_equal(perfmap__update(pm), 1);
	assert_int_equal(perfmap__malformed(pm), 1);
	assert_null(name_at(pm, 0x4000));
	assert_string_equal(name_at(pm, 0x5000), "JS:~b b.js:2:2");
	perfmap__free(pm);
	free(text);
}

static void make_link(const char *target, const char *fmt, const char *a, int b)
{
	char path[256];

	snprintf(path, sizeof(path), fmt, a, b);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * A filtered map keeps only the entries covering wanted addresses, gives
 * them the same answers as the whole map (newest wins, reused addresses,
 * appended lines), finds no other address, and reads from the start when
 * the filter grows.
 */
static void test_want(void **state)
{
	static const char first[] =
		"1000 100 JS:~old x.js:1:1\n"	/* later hidden at 0x1010, visible at 0x1080 */
		"2000 10 JS:~b x.js:2:2\n"
		"1000 20 JS:*new x.js:1:1\n"
		"3000 10 JS:~c x.js:3:3\n";
	static const char more[] = "2000 10 JS:*b2 x.js:2:2\n4000 10 JS:~d x.js:4:4\n";
	const uint64_t want[] = { 0x1080, 0x1010, 0x2005, 0x1010 };
	const uint64_t later = 0x3004;
	struct perfmap_sym sym;
	struct perfmap_stats st;
	struct perfmap *pm;
	char path[128];

	(void)state;
	path_in_tmp(path, sizeof(path), "want.map");
	write_str(path, "w", first);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__want(pm, want, 4), 0);
	assert_true(perfmap__wants(pm, 0x1010));
	assert_false(perfmap__wants(pm, 0x3004));
	assert_int_equal(perfmap__update(pm), 3);
	assert_string_equal(name_at(pm, 0x1010), "JS:*new x.js:1:1");
	assert_string_equal(name_at(pm, 0x1080), "JS:~old x.js:1:1");
	assert_string_equal(name_at(pm, 0x2005), "JS:~b x.js:2:2");
	/* covered in the file, but not wanted: not found */
	assert_int_equal(perfmap__lookup(pm, 0x3004, &sym), -ENOENT);
	assert_int_equal(perfmap__lookup(pm, 0x1050, &sym), -ENOENT);

	/* appended lines: read incrementally, newest still wins */
	write_str(path, "a", more);
	assert_int_equal(perfmap__update(pm), 1);
	assert_string_equal(name_at(pm, 0x2005), "JS:*b2 x.js:2:2");
	perfmap__stats(pm, &st);
	assert_int_equal(st.restarts, 0);
	assert_int_equal(st.bytes_read, strlen(first) + strlen(more));

	/* a new address: read again from the start, the old answers unchanged */
	assert_int_equal(perfmap__want(pm, &later, 1), 0);
	assert_int_equal(perfmap__update(pm), 5);
	assert_string_equal(name_at(pm, 0x3004), "JS:~c x.js:3:3");
	assert_string_equal(name_at(pm, 0x1010), "JS:*new x.js:1:1");
	assert_string_equal(name_at(pm, 0x1080), "JS:~old x.js:1:1");
	assert_string_equal(name_at(pm, 0x2005), "JS:*b2 x.js:2:2");
	perfmap__stats(pm, &st);
	assert_int_equal(st.bytes_read, 2 * (strlen(first) + strlen(more)));
	assert_int_equal(st.rescans, 1);
	perfmap__free(pm);
}

/*
 * A new address inside an entry already kept (a sample elsewhere in a
 * function already named) costs no read from the start; one that nothing
 * kept covers does; one wanted from later lines only (no mapping held it)
 * never does, and the next lines name it.
 */
static void test_want_no_rescan(void **state)
{
	static const char first[] =
		"1000 100 JS:~f x.js:1:1\n"
		"2000 10 JS:~g x.js:2:2\n"
		"3000 10 JS:~h x.js:3:3\n";
	static const char more[] = "5000 10 JS:~late x.js:5:5\n";
	const uint64_t want = 0x1010, inside[] = { 0x1050, 0x1099 }, elsewhere = 0x3004;
	const uint64_t unmapped[] = { 0x5004, 0x2 };
	struct perfmap_stats st;
	struct perfmap *pm;
	char path[128];
	size_t read;

	(void)state;
	path_in_tmp(path, sizeof(path), "want-no-rescan.map");
	write_str(path, "w", first);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__want(pm, &want, 1), 0);
	assert_int_equal(perfmap__update(pm), 1);
	perfmap__stats(pm, &st);
	read = st.bytes_read;

	assert_int_equal(perfmap__want(pm, inside, 2), 0);
	assert_int_equal(perfmap__update(pm), 0);
	perfmap__stats(pm, &st);
	assert_int_equal(st.rescans, 0);
	assert_int_equal(st.bytes_read, read);
	assert_string_equal(name_at(pm, 0x1050), "JS:~f x.js:1:1");
	assert_string_equal(name_at(pm, 0x1099), "JS:~f x.js:1:1");

	assert_int_equal(perfmap__want_tail(pm, unmapped, 2), 0);
	assert_int_equal(perfmap__update(pm), 0);
	perfmap__stats(pm, &st);
	assert_int_equal(st.rescans, 0);
	assert_int_equal(st.bytes_read, read);
	write_str(path, "a", more);
	assert_int_equal(perfmap__update(pm), 1);
	assert_string_equal(name_at(pm, 0x5004), "JS:~late x.js:5:5");

	assert_int_equal(perfmap__want(pm, &elsewhere, 1), 0);
	assert_int_equal(perfmap__update(pm), 3);
	perfmap__stats(pm, &st);
	assert_int_equal(st.rescans, 1);
	assert_string_equal(name_at(pm, 0x3004), "JS:~h x.js:3:3");
	assert_string_equal(name_at(pm, 0x1050), "JS:~f x.js:1:1");
	assert_string_equal(name_at(pm, 0x5004), "JS:~late x.js:5:5");
	perfmap__free(pm);
}

/*
 * The same builtin logged again by every new isolate, at the same
 * address: a filtered map keeps about one copy, not one per line.
 */
static void test_want_repeats(void **state)
{
	const uint64_t want = 0x5008;
	struct perfmap_stats st;
	struct perfmap *pm;
	char path[128];
	FILE *f;

	(void)state;
	path_in_tmp(path, sizeof(path), "repeats.map");
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < 100000; i++)
		fprintf(f, "5000 40 Builtin:Add_Baseline\n6000 40 Builtin:Sub_%d\n", i);
	assert_int_equal(fclose(f), 0);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__want(pm, &want, 1), 0);
	/* the copies the first one already answers for are not even kept */
	assert_int_equal(perfmap__update(pm), 1);
	assert_string_equal(name_at(pm, 0x5008), "Builtin:Add_Baseline");
	perfmap__stats(pm, &st);
	assert_int_equal(st.entries, 1);
	assert_true(st.mem_bytes < 4 * 1024 * 1024);
	perfmap__free(pm);
}

/*
 * A copy is dropped only when it answers for nothing new: an entry
 * logged again after another one covered part of it is kept, and wins.
 */
static void test_want_repeats_newest(void **state)
{
	static const char text[] =
		"5000 40 Builtin:A\n"
		"5000 40 Builtin:A\n"		/* the same: dropped */
		"5010 40 JS:~b x.js:1:1\n"	/* covers 0x5018, not 0x5008 */
		"5000 40 Builtin:A\n"		/* newest at 0x5018 again: kept */
		"5000 40 Builtin:A2\n"		/* same range, another name: kept */
		"5000 40 Builtin:A2\n";	/* the same: dropped */
	const uint64_t want[] = { 0x5008, 0x5018, 0x5048 };
	struct perfmap *pm;
	char path[128];

	(void)state;
	path_in_tmp(path, sizeof(path), "repeats-newest.map");
	write_str(path, "w", text);
	pm = perfmap__new(path, NULL, NULL);
	assert_non_null(pm);
	assert_int_equal(perfmap__want(pm, want, 3), 0);
	assert_int_equal(perfmap__update(pm), 4);
	assert_string_equal(name_at(pm, 0x5008), "Builtin:A2");
	assert_string_equal(name_at(pm, 0x5018), "Builtin:A2");
	assert_string_equal(name_at(pm, 0x5048), "JS:~b x.js:1:1");

	/* appended: the owners carry over to the incremental read */
	write_str(path, "a", "5000 40 Builtin:A2\n5010 40 JS:~b x.js:1:1\n");
	assert_int_equal(perfmap__update(pm), 1);
	assert_string_equal(name_at(pm, 0x5018), "JS:~b x.js:1:1");
	assert_string_equal(name_at(pm, 0x5008), "Builtin:A2");
	perfmap__free(pm);
}

static void test_path_for_pid(void **state)
{
	char root[128], dir[256], buf[256], small[8];

	(void)state;
	path_in_tmp(root, sizeof(root), "proc");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/self", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/self/ns", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	make_link("mnt:[4026531841]", "%s/self/ns/mnt", root, 0);

	/* 100: same namespaces */
	snprintf(dir, sizeof(dir), "%s/100", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/100/ns", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	make_link("mnt:[4026531841]", "%s/%d/ns/mnt", root, 100);
	snprintf(dir, sizeof(dir), "%s/100/status", root);
	write_str(dir, "w", "Name:\tnode\nPid:\t100\nNSpid:\t100\nPPid:\t1\n");
	assert_int_equal(perfmap__path_for_pid(root, 100, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/perf-100.map");
	assert_int_equal(perfmap__path_for_pid(root, 100, small, sizeof(small)), -ENAMETOOLONG);

	/* 200: in a container, pid 7 inside */
	snprintf(dir, sizeof(dir), "%s/200", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/200/status", root);
	write_str(dir, "w", "Name:\tworkerd\nTgid:\t200\nPid:\t200\nNSpid:\t200\t31\t7\nNSsid:\t1\n");
	assert_int_equal(perfmap__path_for_pid(root, 200, buf, sizeof(buf)), 0);
	snprintf(dir, sizeof(dir), "%s/200/root/tmp/perf-7.map", root);
	assert_string_equal(buf, dir);

	/* 300: same pid namespace, other mount namespace (its own /tmp) */
	snprintf(dir, sizeof(dir), "%s/300", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/300/ns", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	make_link("mnt:[4026532999]", "%s/%d/ns/mnt", root, 300);
	snprintf(dir, sizeof(dir), "%s/300/status", root);
	write_str(dir, "w", "Name:\tnode\nNSpid:\t300\n");
	assert_int_equal(perfmap__path_for_pid(root, 300, buf, sizeof(buf)), 0);
	snprintf(dir, sizeof(dir), "%s/300/root/tmp/perf-300.map", root);
	assert_string_equal(buf, dir);

	/* 400: an old kernel without NSpid */
	snprintf(dir, sizeof(dir), "%s/400", root);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(dir, sizeof(dir), "%s/400/status", root);
	write_str(dir, "w", "Name:\tnode\nPid:\t400\n");
	assert_int_equal(perfmap__path_for_pid(root, 400, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/tmp/perf-400.map");

	assert_int_equal(perfmap__path_for_pid(root, 500, buf, sizeof(buf)), -ESRCH);
	assert_int_equal(perfmap__path_for_pid(root, 0, buf, sizeof(buf)), -ESRCH);

	/* This very process, through the real /proc. */
	assert_int_equal(perfmap__path_for_pid(NULL, getpid(), buf, sizeof(buf)), 0);
	snprintf(dir, sizeof(dir), "/tmp/perf-%d.map", (int)getpid());
	assert_string_equal(buf, dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_nul_and_junk),
		cmocka_unit_test(test_newest_wins),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_partial_line),
		cmocka_unit_test(test_restart),
		cmocka_unit_test(test_memory_bounded),
		cmocka_unit_test(test_long_lines),
		cmocka_unit_test(test_want),
		cmocka_unit_test(test_want_no_rescan),
		cmocka_unit_test(test_want_repeats),
		cmocka_unit_test(test_want_repeats_newest),
		cmocka_unit_test(test_path_for_pid),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
