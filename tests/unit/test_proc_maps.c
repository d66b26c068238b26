// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for symbolize/proc_maps. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/proc_maps.h"

static struct proc_maps *parse(const char *text)
{
	struct proc_maps *maps = proc_maps__parse(text, strlen(text));

	assert_non_null(maps);
	return maps;
}

static void test_basic_fields(void **state)
{
	static const char text[] =
		"5634edbba000-5634edbbc000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
		"5634edbbc000-5634edbc1000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
		"56350f10c000-56350f12d000 rw-p 00000000 00:00 0                          [heap]\n"
		"7f983a41a000-7f983a43c000 rw-p 00000000 00:00 0 \n"
		"7f983a682000-7f983a689000 r--s 00000000 103:0a 332280                     /usr/lib/gconv/gconv-modules.cache\n"
		"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";
	struct proc_maps *maps = parse(text);
	const struct proc_map *m;

	(void)state;
	assert_int_equal(proc_maps__count(maps), 6);
	assert_int_equal(proc_maps__malformed(maps), 0);
	assert_int_equal(proc_maps__first_malformed_line(maps), 0);

	m = proc_maps__entry(maps, 1);
	assert_int_equal(m->start, 0x5634edbbc000ULL);
	assert_int_equal(m->end, 0x5634edbc1000ULL);
	assert_int_equal(m->offset, 0x2000);
	assert_string_equal(m->perms, "r-xp");
	assert_int_equal(m->dev_major, 0xfe);
	assert_int_equal(m->dev_minor, 0);
	assert_int_equal(m->inode, 247134);
	assert_string_equal(m->path, "/usr/bin/cat");
	assert_false(m->deleted);
	assert_true(proc_map__is_exec(m));
	assert_false(proc_map__is_exec(proc_maps__entry(maps, 0)));

	assert_string_equal(proc_maps__entry(maps, 2)->path, "[heap]");
	assert_string_equal(proc_maps__entry(maps, 3)->path, "");
	m = proc_maps__entry(maps, 4);
	assert_int_equal(m->dev_major, 0x103);
	assert_int_equal(m->dev_minor, 0xa);
	assert_string_equal(m->perms, "r--s");
	m = proc_maps__entry(maps, 5);
	assert_int_equal(m->end, 0xffffffffff601000ULL);
	assert_string_equal(m->path, "[vsyscall]");
	assert_null(proc_maps__entry(maps, 6));
	proc_maps__free(maps);
}

static void test_spaces_and_deleted(void **state)
{
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 12 /opt/my app/lib foo.so\n"
		"2000-3000 r-xp 00001000 08:01 13 /opt/gone (deleted)\n"
		"3000-4000 r-xp 00000000 08:01 14 /opt/name with (deleted) inside\n"
		"4000-5000 r-xp 00000000 00:01 15 /memfd:jit (deleted)\n"
		"5000-6000 r-xp 00000000 08:01 16   /leading/blanks/skipped  \n";
	struct proc_maps *maps = parse(text);

	(void)state;
	assert_int_equal(proc_maps__count(maps), 5);
	assert_string_equal(proc_maps__entry(maps, 0)->path, "/opt/my app/lib foo.so");
	assert_false(proc_maps__entry(maps, 0)->deleted);
	assert_string_equal(proc_maps__entry(maps, 1)->path, "/opt/gone");
	assert_true(proc_maps__entry(maps, 1)->deleted);
	assert_string_equal(proc_maps__entry(maps, 2)->path, "/opt/name with (deleted) inside");
	assert_false(proc_maps__entry(maps, 2)->deleted);
	assert_string_equal(proc_maps__entry(maps, 3)->path, "/memfd:jit");
	assert_true(proc_maps__entry(maps, 3)->deleted);
	/* Trailing blanks are part of a file name; only leading padding goes. */
	assert_string_equal(proc_maps__entry(maps, 4)->path, "/leading/blanks/skipped  ");
	proc_maps__free(maps);
}

static void test_malformed_lines(void **state)
{
	static const char text[] =
		"1000-2000 r-xp 00000000 08:01 12 /ok/one\n"	/* 1 */
		"garbage\n"					/* 2 */
		"3000-2000 r-xp 00000000 08:01 12 /end/before/start\n"	/* 3 */
		"4000-5000 rxp 00000000 08:01 12 /short/perms\n"	/* 4 */
		"4000-5000 r-xq 00000000 08:01 12 /bad/perm\n"	/* 5 */
		"4000-5000 r-xp 0000000g 08:01 12 /bad/offset\n"	/* 6 */
		"4000-5000 r-xp 00000000 0801 12 /bad/dev\n"	/* 7 */
		"4000-5000 r-xp 00000000 08:01 x12 /bad/inode\n"	/* 8 */
		"4000-5000 r-xp 00000000 08:01 12/no/blank\n"	/* 9 */
		"10000000000000000-10000000000000001 r-xp 0 0:0 0 /overflow\n" /* 10 */
		"4000-5000 r-xp 00000000 08:01 99999999999999999999 /inode/overflow\n" /* 11 */
		"-5000 r-xp 00000000 08:01 12 /no/start\n"	/* 12 */
		"4000-5000\n"					/* 13 */
		"\n"						/* 14: blank, skipped quietly */
		"6000-7000 r-xp 00000000 08:01 12 /ok/two";	/* 15: no newline */
	struct proc_maps *maps = parse(text);

	(void)state;
	assert_int_equal(proc_maps__count(maps), 2);
	assert_int_equal(proc_maps__malformed(maps), 12);
	assert_int_equal(proc_maps__first_malformed_line(maps), 2);
	assert_string_equal(proc_maps__entry(maps, 0)->path, "/ok/one");
	assert_string_equal(proc_maps__entry(maps, 1)->path, "/ok/two");
	proc_maps__free(maps);
}

static void test_nul_inside_line(void **state)
{
	static const char text[] = "1000-2000 r-xp 00000000 08:01 12 /a\0b\n"
				   "2000-3000 r-xp 00000000 08:01 12 /c\n";
	struct proc_maps *maps = proc_maps__parse(text, sizeof(text) - 1);

	(void)state;
	assert_non_null(maps);
	assert_int_equal(proc_maps__count(maps), 1);
	assert_int_equal(proc_maps__malformed(maps), 1);
	assert_string_equal(proc_maps__entry(maps, 0)->path, "/c");
	proc_maps__free(maps);
}

static void test_empty(void **state)
{
	struct proc_maps *maps;

	(void)state;
	maps = proc_maps__parse("", 0);
	assert_non_null(maps);
	assert_int_equal(proc_maps__count(maps), 0);
	assert_null(proc_maps__find(maps, 0x1000));
	assert_null(proc_maps__entry(maps, 0));
	proc_maps__free(maps);

	maps = parse("\n\n\n");
	assert_int_equal(proc_maps__count(maps), 0);
	assert_int_equal(proc_maps__malformed(maps), 0);
	proc_maps__free(maps);
	proc_maps__free(NULL);
}

static void test_huge_line(void **state)
{
	size_t pathlen = 1 << 20, i;
	char *text = malloc(pathlen + 200), *p;
	struct proc_maps *maps;

	(void)state;
	assert_non_null(text);
	p = text + sprintf(text, "1000-2000 r-xp 00000000 08:01 12 /");
	for (i = 0; i < pathlen; i++)
		*p++ = 'a' + (char)(i % 26);
	p += sprintf(p, "\n2000-3000 r-xp 0 08:01 13 /short\n");
	maps = proc_maps__parse(text, (size_t)(p - text));
	assert_non_null(maps);
	assert_int_equal(proc_maps__count(maps), 2);
	assert_int_equal(strlen(proc_maps__entry(maps, 0)->path), pathlen + 1);
	assert_string_equal(proc_maps__entry(maps, 1)->path, "/short");
	proc_maps__free(maps);
	free(text);
}

static void test_find_and_sort(void **state)
{
	static const char text[] = "5000-6000 r-xp 0 08:01 3 /c\n"
				   "1000-2000 r-xp 0 08:01 1 /a\n"
				   "3000-4000 r-xp 0 08:01 2 /b\n";
	struct proc_maps *maps = parse(text);

	(void)state;
	assert_string_equal(proc_maps__entry(maps, 0)->path, "/a");
	assert_string_equal(proc_maps__entry(maps, 2)->path, "/c");
	assert_null(proc_maps__find(maps, 0xfff));
	assert_string_equal(proc_maps__find(maps, 0x1000)->path, "/a");
	assert_string_equal(proc_maps__find(maps, 0x1fff)->path, "/a");
	assert_null(proc_maps__find(maps, 0x2000));
	assert_null(proc_maps__find(maps, 0x2fff));
	assert_string_equal(proc_maps__find(maps, 0x3abc)->path, "/b");
	assert_string_equal(proc_maps__find(maps, 0x5fff)->path, "/c");
	assert_null(proc_maps__find(maps, 0x6000));
	assert_null(proc_maps__find(maps, UINT64_MAX));
	proc_maps__free(maps);
}

static void test_read_self(void **state)
{
	struct proc_maps *maps;
	const struct proc_map *m;

	(void)state;
	maps = proc_maps__read(NULL, getpid());
	assert_non_null(maps);
	assert_true(proc_maps__count(maps) > 3);
	assert_int_equal(proc_maps__malformed(maps), 0);
	/* This function's own code is in an executable file mapping. */
	m = proc_maps__find(maps, (uint64_t)(uintptr_t)test_read_self);
	assert_non_null(m);
	assert_true(proc_map__is_exec(m));
	assert_true(strstr(m->path, "test_proc_maps") != NULL);
	proc_maps__free(maps);

	maps = proc_maps__read("/proc", 0);
	assert_null(maps);
	assert_int_equal(errno, ESRCH);
	maps = proc_maps__read("/nonexistent-proc-root", getpid());
	assert_null(maps);
	assert_int_equal(errno, ESRCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic_fields),
		cmocka_unit_test(test_spaces_and_deleted),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_nul_inside_line),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_huge_line),
		cmocka_unit_test(test_find_and_sort),
		cmocka_unit_test(test_read_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
