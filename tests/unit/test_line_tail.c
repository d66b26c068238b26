// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for lib/line_tail: whole lines only, restarts, over-long
 * lines, a callback that stops the read, files that are not there, a
 * held file.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/line_tail.h"

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-line-tail.XXXXXX"
#include "tests/unit/temp_dir.h"

/* dir/name into path. */
static void in_dir(char *path, size_t size, void **state, const char *name)
{
	snprintf(path, size, "%s/%s", (const char *)*state, name);
}

/* len bytes of data to path: appended (O_APPEND) or as its whole text (O_TRUNC). */
static void put(const char *path, int how, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | how, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static void put_str(const char *path, int how, const char *text)
{
	put(path, how, text, strlen(text));
}

/* What the callbacks saw: lines joined by '|', "<skip N>" for skipped ones. */
struct seen {
	char text[4096];
	size_t restarts;
	int fail_at;		/* line callback fails on this line number (1-based), 0: never */
	int lines;
};

static int on_restart(void *ctx)
{
	struct seen *s = ctx;

	s->restarts++;
	s->text[0] = '\0';
	return 0;
}

static int on_line(void *ctx, const char *line, size_t len)
{
	struct seen *s = ctx;
	size_t n = strlen(s->text);

	if (s->fail_at && s->lines + 1 == s->fail_at)
		return -EIO;
	s->lines++;
	if (line)
		snprintf(s->text + n, sizeof(s->text) - n, "%.*s|", (int)len, line);
	else
		snprintf(s->text + n, sizeof(s->text) - n, "<skip %zu>|", len);
	return 0;
}

static const struct line_tail_ops ops = {
	.restart = on_restart,
	.line = on_line,
};

/* One read offers n lines (or fails with n), and all seen since the last restart reads text. */
static void expect_read(struct line_tail *t, struct seen *s, int n, const char *text)
{
	assert_int_equal(line_tail__read(t, &ops, s), n);
	assert_string_equal(s->text, text);
}

static void test_lines(void **state)
{
	struct seen s = { 0 };
	struct line_tail t;
	char path[128];

	in_dir(path, sizeof(path), state, "lines");
	assert_int_equal(line_tail__init(&t, path, 0, NULL, NULL), 0);
	assert_int_equal(t.max_line, LINE_TAIL_MAX_DEFAULT);
	assert_int_equal(line_tail__read(&t, &ops, &s), -ENOENT);

	put_str(path, O_TRUNC, "one\n\ntwo\nthr");
	expect_read(&t, &s, 3, "one||two|");
	assert_int_equal(t.offset, 9);
	assert_int_equal(t.bytes_read, 12);
	/* Still no newline: nothing offered, the part is read again. */
	expect_read(&t, &s, 0, "one||two|");
	assert_int_equal(t.bytes_read, 15);
	put_str(path, O_APPEND, "ee\nfour\n");
	expect_read(&t, &s, 2, "one||two|three|four|");
	assert_int_equal(t.offset, 20);
	assert_int_equal(s.restarts, 0);
	assert_null(t.buf);

	/* A failing callback stops the read; its line comes again next time. */
	put_str(path, O_APPEND, "five\nsix\nseven\n");
	s.fail_at = s.lines + 2;
	expect_read(&t, &s, -EIO, "one||two|three|four|five|");
	assert_int_equal(t.offset, 25);
	s.fail_at = 0;
	expect_read(&t, &s, 2, "one||two|three|four|five|six|seven|");
	assert_int_equal(s.restarts, 0);
	line_tail__release(&t);
}

static void test_restarts(void **state)
{
	struct seen s = { 0 };
	struct line_tail t;
	char path[128], other[128];

	in_dir(path, sizeof(path), state, "restart");
	in_dir(other, sizeof(other), state, "restart.new");
	assert_int_equal(line_tail__init(&t, path, 0, NULL, NULL), 0);
	put_str(path, O_TRUNC, "a\nb\n");
	expect_read(&t, &s, 2, "a|b|");

	/* Shrunk. */
	put_str(path, O_TRUNC, "c\n");
	expect_read(&t, &s, 1, "c|");
	assert_int_equal(t.restarts, 1);
	assert_int_equal(s.restarts, 1);

	/* Same size or longer, but the bytes read before changed. */
	put_str(path, O_TRUNC, "d\ne\n");
	expect_read(&t, &s, 2, "d|e|");
	assert_int_equal(t.restarts, 2);

	/* Appended to: no restart. */
	put_str(path, O_APPEND, "f\n");
	expect_read(&t, &s, 1, "d|e|f|");
	assert_int_equal(t.restarts, 2);

	/* Replaced by another file with the same text: another inode. */
	put_str(other, O_TRUNC, "d\ne\nf\n");
	assert_int_equal(rename(other, path), 0);
	expect_read(&t, &s, 3, "d|e|f|");
	assert_int_equal(t.restarts, 3);

	/* Not a regular file. */
	line_tail__release(&t);
	assert_int_equal(line_tail__init(&t, *state, 0, NULL, NULL), 0);
	assert_int_equal(line_tail__read(&t, &ops, &s), -EINVAL);
	line_tail__release(&t);
}

static void test_long_lines(void **state)
{
	struct seen s = { 0 };
	struct line_tail t;
	char path[128], big[100];

	in_dir(path, sizeof(path), state, "long");
	assert_int_equal(line_tail__init(&t, path, 16, NULL, NULL), 0);
	memset(big, 'x', sizeof(big));
	put_str(path, O_TRUNC, "short\n");
	put(path, O_APPEND, big, 20);
	put_str(path, O_APPEND, "\n0123456789abcdef\n");
	/* Longer than max_line: skipped with its length; exactly max_line is kept. */
	expect_read(&t, &s, 3, "short|<skip 20>|0123456789abcdef|");

	/* Growing without a newline: skipped once it is too long, the rest passed over. */
	put(path, O_APPEND, big, 10);
	expect_read(&t, &s, 0, "short|<skip 20>|0123456789abcdef|");
	put(path, O_APPEND, big, sizeof(big));
	expect_read(&t, &s, 1, "short|<skip 20>|0123456789abcdef|<skip 110>|");
	put_str(path, O_APPEND, "yyy\nend\n");
	expect_read(&t, &s, 1, "short|<skip 20>|0123456789abcdef|<skip 110>|end|");
	assert_int_equal(t.offset, 6 + 21 + 17 + 110 + 4 + 4);
	line_tail__release(&t);
}

/*
 * Caps: a file past the per-file cap is refused with a reason; one that
 * grows past it after it was opened is read up to it; the capture's
 * budget stops reading across readers; a FIFO does not block.
 */
static void test_caps(void **state)
{
	struct safe_open_opts o = { .max_bytes = 8 };
	struct read_budget b;
	struct seen s = { 0 };
	struct line_tail t, u;
	char path[128], fifo[128];

	in_dir(path, sizeof(path), state, "capped");
	put_str(path, O_TRUNC, "a\nb\n");
	assert_int_equal(line_tail__init(&t, path, 0, &o, NULL), 0);
	expect_read(&t, &s, 2, "a|b|");
	assert_string_equal(line_tail__why(&t), "");
	put_str(path, O_APPEND, "c\nd\ne\n");
	expect_read(&t, &s, -EFBIG, "a|b|");
	assert_non_null(strstr(line_tail__why(&t), "larger than the 8 bytes cap"));
	line_tail__release(&t);

	in_dir(fifo, sizeof(fifo), state, "fifo");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(line_tail__init(&t, fifo, 0, NULL, NULL), 0);
	assert_int_equal(line_tail__read(&t, &ops, &s), -EINVAL);
	assert_string_equal(line_tail__why(&t), "a FIFO, not a regular file");
	line_tail__release(&t);

	/* Two readers share 12 bytes: the second stops part-way. */
	memset(&s, 0, sizeof(s));
	read_budget__init(&b, 12);
	put_str(path, O_TRUNC, "1234\n5678\n");
	assert_int_equal(line_tail__init(&t, path, 0, NULL, &b), 0);
	assert_int_equal(line_tail__init(&u, path, 0, NULL, &b), 0);
	expect_read(&t, &s, 2, "1234|5678|");
	assert_int_equal(b.used, 10);
	expect_read(&u, &s, -EDQUOT, "1234|5678|");
	assert_true(b.spent);
	assert_non_null(strstr(line_tail__why(&u), "budget of 12 bytes"));
	line_tail__release(&t);
	line_tail__release(&u);
}

/*
 * A held file: read after its path was deleted and another file put
 * there, with what its writer appended meanwhile; still noticed when
 * rewritten in place; a rewind offers it again from its start without a
 * restart; held once, refused as a read would be.
 */
static void test_hold(void **state)
{
	struct seen s = { 0 };
	struct line_tail t;
	char path[128], dir[128];
	int w;

	in_dir(path, sizeof(path), state, "held.map");
	put_str(path, O_TRUNC, "a\nb\n");
	w = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	assert_true(w >= 0);
	assert_int_equal(line_tail__init(&t, path, 0, NULL, NULL), 0);
	assert_int_equal(line_tail__hold(&t), 0);
	assert_int_equal(line_tail__hold(&t), 0);
	assert_int_equal(unlink(path), 0);
	put_str(path, O_TRUNC, "planted\n");
	assert_int_equal(write(w, "c\n", 2), 2);
	expect_read(&t, &s, 3, "a|b|c|");
	assert_int_equal(write(w, "d\n", 2), 2);
	expect_read(&t, &s, 1, "a|b|c|d|");
	/* rewritten in place: a restart, as for a file opened by path */
	assert_int_equal(ftruncate(w, 0), 0);
	assert_int_equal(write(w, "e\n", 2), 2);
	expect_read(&t, &s, 1, "e|");
	assert_int_equal(s.restarts, 1);
	line_tail__rewind(&t);
	s.text[0] = '\0';
	expect_read(&t, &s, 1, "e|");
	assert_int_equal(s.restarts, 1);
	assert_int_equal(t.restarts, 1);
	assert_int_equal(t.bytes_read, 12);
	assert_int_equal(close(w), 0);
	line_tail__release(&t);

	/* a directory is refused at hold as at read; reads then open the path */
	in_dir(dir, sizeof(dir), state, "adir");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(line_tail__init(&t, dir, 0, NULL, NULL), 0);
	assert_int_equal(line_tail__hold(&t), -EINVAL);
	assert_true(*line_tail__why(&t));
	assert_int_equal(line_tail__read(&t, &ops, &s), -EINVAL);
	line_tail__release(&t);
	line_tail__release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lines, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_restarts, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_long_lines, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_caps, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_hold, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
