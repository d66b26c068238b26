// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/report/window_merge: window files chosen by script,
 * version and time from their names alone, merged; a corrupt file, a
 * symlink and a FIFO skipped with a note naming them; a profile of
 * another kind stops the merge.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_merge.h"
#include "proto/pprof_reader.h"
#include "user/report/window_files.h"
#include "user/report/window_merge.h"

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-window-merge.XXXXXX"
#include "tests/unit/temp_dir.h"

#define T0 1796333100ULL	/* 2026-12-03T21:25:00Z */
#define NS 1000000000ULL

/* A window file of script/version from T0 + start_s, 10 s, with count samples of fn. */
static void put_window(int dirfd, const char *script, const char *version, uint64_t start_s,
		       const char *fn, int64_t count, bool heap, char *name, size_t len)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_line line;
	uint64_t loc;
	int64_t values[2] = { count, count * 10000000 };
	uint8_t *data;
	size_t n;

	assert_int_equal(window_files__name((T0 + start_s) * NS, (T0 + start_s + 10) * NS, script,
					    version, "0x508dffd4c000", name, len), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, heap ? "alloc_space" : "samples",
							heap ? "bytes" : "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	pprof_builder__set_time(b, (int64_t)((T0 + start_s) * NS), 10 * (int64_t)NS);
	line = (struct pprof_line){ .function_id = pprof_builder__function(b, fn, "", "w.js", 1) };
	loc = pprof_builder__location(b, 0, 0x10, &line, 1);
	assert_int_equal(pprof_builder__add_sample(b, &loc, 1, values, 2, NULL, 0), 0);
	assert_int_equal(pprof_builder__serialize(b, true, &data, &n), 0);
	assert_int_equal(fileio__write_atomic_at(dirfd, NULL, name, data, n, 0644), 0);
	free(data);
	pprof_builder__free(b);
}

static void test_version_parsed(void **state)
{
	struct window_file f;

	(void)state;
	assert_int_equal(window_files__parse("20261203T212500Z+10s+alpha+f6adb5d816f5+"
					     "0x508dffd4c000+cpu.pb.gz", &f), 0);
	assert_string_equal(f.script, "alpha");
	assert_string_equal(f.version, "f6adb5d816f5");
	assert_string_equal(f.isolate, "0x508dffd4c000");
	assert_int_equal(f.from_s, T0);
	assert_int_equal(f.until_s, T0 + 10);
	window_file__release(&f);
	assert_int_equal(window_files__parse("20261203T212500Z+10s+alpha++none+cpu.pb.gz", &f),
			 -EINVAL);
}

static void test_select(void **state)
{
	struct window_file f;
	struct window_select sel = { .from_s = INT64_MIN, .until_s = INT64_MAX };

	(void)state;
	assert_int_equal(window_files__parse("20261203T212500Z+10s+my_worker+v1+none+cpu.pb.gz",
					     &f), 0);
	assert_true(window_select__match(&sel, &f));
	/* the name's rules: what a script name becomes in a file name */
	sel.script = "my worker";
	assert_true(window_select__match(&sel, &f));
	sel.script = "alpha";
	assert_false(window_select__match(&sel, &f));
	sel.script = NULL;
	sel.version = "v2";
	assert_false(window_select__match(&sel, &f));
	sel.version = "v1";
	/* half-open ranges: [T0, T0 + 10) */
	sel.from_s = (int64_t)T0 + 10;
	assert_false(window_select__match(&sel, &f));
	sel.from_s = (int64_t)T0 + 9;
	assert_true(window_select__match(&sel, &f));
	sel.until_s = (int64_t)T0;
	assert_false(window_select__match(&sel, &f));
	sel.from_s = (int64_t)T0 - 100;
	sel.until_s = (int64_t)T0 + 1;
	assert_true(window_select__match(&sel, &f));
	window_file__release(&f);
}

struct notes {
	char text[1024];
	int n;
};

static void note(void *ctx, const char *name, const char *why)
{
	struct notes *ns = ctx;

	snprintf(ns->text + strlen(ns->text), sizeof(ns->text) - strlen(ns->text), "%s: %s\n",
		 name, why);
	ns->n++;
}

static int64_t merged_value(struct pprof_merge *m, const char *fn)
{
	struct pprof_stack st = { 0 };
	struct pprof_profile *p;
	int64_t total = 0;
	char err[256];
	uint8_t *data;
	size_t len;

	assert_int_equal(pprof_merge__serialize(m, true, &data, &len), 0);
	assert_int_equal(pprof_profile__parse(data, len, &p, err, sizeof(err)), 0);
	free(data);
	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		assert_int_equal(pprof_profile__stack(p, s, &st), 0);
		if (!strcmp(st.frames[0]->name, fn))
			total += pprof_profile__value(p, s, 0);
	}
	pprof_stack__release(&st);
	pprof_profile__free(p);
	return total;
}

static void test_dir(void **state)
{
	struct window_select sel = { .script = "alpha", .from_s = INT64_MIN,
				     .until_s = INT64_MAX };
	char name[256], path[512], bad[256], fifo[256], link[256], err[256] = "";
	struct notes ns = { "", 0 };
	struct pprof_merge *m;
	size_t matched, merged;
	int dirfd;

	dirfd = open(*state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	for (int i = 0; i < 6; i++)
		put_window(dirfd, "alpha", "v1", 10 * (uint64_t)i, "fibAlpha", i + 1, false, name,
			   sizeof(name));
	put_window(dirfd, "beta", "v1", 0, "sieveBeta", 100, false, name, sizeof(name));
	put_window(dirfd, "alpha", "v2", 20, "fibAlpha", 1000, false, name, sizeof(name));
	/* a corrupt window, a FIFO and a symlink under window names */
	assert_int_equal(window_files__name((T0 + 60) * NS, (T0 + 70) * NS, "alpha", "v1", NULL,
					    bad, sizeof(bad)), 0);
	assert_int_equal(fileio__write_atomic_at(dirfd, NULL, bad, "\x1f\x8b junk", 7, 0644), 0);
	assert_int_equal(window_files__name((T0 + 70) * NS, (T0 + 80) * NS, "alpha", "v1", NULL,
					    fifo, sizeof(fifo)), 0);
	assert_int_equal(mkfifoat(dirfd, fifo, 0644), 0);
	assert_int_equal(window_files__name((T0 + 80) * NS, (T0 + 90) * NS, "alpha", "v1", NULL,
					    link, sizeof(link)), 0);
	snprintf(path, sizeof(path), "%s/%s", (const char *)*state, name);
	assert_int_equal(symlinkat(path, dirfd, link), 0);

	m = pprof_merge__new();
	assert_int_equal(window_merge__dir(m, dirfd, &sel, &matched, &merged, note, &ns, err,
					   sizeof(err)), 0);
	/* the FIFO and the symlink are no window files (window_files__list()) */
	assert_int_equal(matched, 8);
	assert_int_equal(merged, 7);
	assert_int_equal(ns.n, 1);
	assert_non_null(strstr(ns.text, bad));
	assert_int_equal(merged_value(m, "fibAlpha"), 1 + 2 + 3 + 4 + 5 + 6 + 1000);
	assert_int_equal(merged_value(m, "sieveBeta"), 0);
	pprof_merge__free(m);

	/* version and time: v1's windows from T0+15 to T0+35 are those at 10, 20 and 30 */
	sel.version = "v1";
	sel.from_s = (int64_t)T0 + 15;
	sel.until_s = (int64_t)T0 + 35;
	m = pprof_merge__new();
	assert_int_equal(window_merge__dir(m, dirfd, &sel, &matched, &merged, note, &ns, err,
					   sizeof(err)), 0);
	assert_int_equal(merged, 3);
	assert_int_equal(merged_value(m, "fibAlpha"), 2 + 3 + 4);
	pprof_merge__free(m);

	/* nothing there: no error, nothing merged */
	sel.from_s = (int64_t)T0 + 3600;
	sel.until_s = INT64_MAX;
	m = pprof_merge__new();
	assert_int_equal(window_merge__dir(m, dirfd, &sel, &matched, &merged, note, &ns, err,
					   sizeof(err)), 0);
	assert_int_equal(matched, 0);
	pprof_merge__free(m);

	/* a window of another kind stops the merge, naming it */
	put_window(dirfd, "alpha", "v1", 100, "fibAlpha", 1, true, name, sizeof(name));
	sel.from_s = INT64_MIN;
	m = pprof_merge__new();
	assert_int_equal(window_merge__dir(m, dirfd, &sel, &matched, &merged, note, &ns, err,
					   sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, name));
	assert_non_null(strstr(err, "sample types"));
	pprof_merge__free(m);
	close(dirfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version_parsed),
		cmocka_unit_test(test_select),
		cmocka_unit_test_setup_teardown(test_dir, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
