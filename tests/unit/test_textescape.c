// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for lib/textescape (target text on terminals) and the write
 * side of lib/fileio that record relies on: no planted name is followed,
 * out-dirs others could use are refused.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/textescape.h"

static void test_escape(void **state)
{
	char out[TEXTESCAPE_SIZE(64)];

	(void)state;
	assert_string_equal(textescape("worker.js", out, sizeof(out)), "worker.js");
	assert_false(textescape__needed("worker.js"));
	/* ESC, newline, DEL, a bad byte */
	assert_string_equal(textescape("a\x1b[2Jb\nc\x7f\xff", out, sizeof(out)),
			    "a\\x1b[2Jb\\x0ac\\x7f\\xff");
	assert_true(textescape__needed("a\nb"));
	/* printable UTF-8 stays; C1 CSI (U+009B) and RLO (U+202E) do not */
	assert_string_equal(textescape("caf\xc3\xa9", out, sizeof(out)), "caf\xc3\xa9");
	assert_string_equal(textescape("\xc2\x9b" "1m", out, sizeof(out)), "\\xc2\\x9b1m");
	assert_string_equal(textescape("x\xe2\x80\xaey", out, sizeof(out)), "x\\xe2\\x80\\xaey");
	/* a backslash is doubled: the rendering is unambiguous */
	assert_string_equal(textescape("a\\x41", out, sizeof(out)), "a\\\\x41");
	/* truncated UTF-8 and overlong forms are bytes, escaped */
	assert_string_equal(textescape("\xe2\x82", out, sizeof(out)), "\\xe2\\x82");
	assert_string_equal(textescape("\xc0\xaf", out, sizeof(out)), "\\xc0\\xaf");
	assert_string_equal(textescape(NULL, out, sizeof(out)), "");
}

static void test_escape_cut(void **state)
{
	char out[8];

	(void)state;
	/* cut at a whole escape, never inside one */
	assert_string_equal(textescape("ab\x01\x02", out, sizeof(out)), "ab\\x01");
	assert_string_equal(textescape("abc\xc3\xa9xyz", out, 5), "abc");
	assert_string_equal(textescape("abcdefghij", out, sizeof(out)), "abcdefg");
}

static void test_atomic_never_follows(void **state)
{
	char dir[] = "/tmp/isoprof-esc.XXXXXX", victim[300], link[300], cmd[400];
	struct stat st;
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	assert_int_equal(fileio__write_atomic(victim, "precious\n", 9, 0600), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* a symlink at the destination is replaced, not followed */
	snprintf(link, sizeof(link), "%s/out.pb.gz", dir);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "out.pb.gz", "new", 3, 0644), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 9);
	/* names are names: no path, no "..", no "." */
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "../x", "n", 1, 0644), -EINVAL);
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "..", "n", 1, 0644), -EINVAL);
	/* the directory of a path is opened once; "-" is stdout only there */
	snprintf(cmd, sizeof(cmd), "%s/-", dir);
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "-", "d", 1, 0644), 0);
	assert_int_equal(stat(cmd, &st), 0);
	close(dfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_out_dir(void **state)
{
	char dir[] = "/tmp/isoprof-esc.XXXXXX", sub[300], link[300], why[200], cmd[400];
	struct fileio_owner owner;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/new", dir);
	/* created 0755, accepted */
	assert_int_equal(fileio__open_out_dir(sub, true, NULL, &fd, &owner, why, sizeof(why)), 0);
	assert_true(fd >= 0);
	close(fd);
	/* world-writable, not sticky: refused, with a reason */
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(fileio__open_out_dir(sub, false, NULL, &fd, &owner, why, sizeof(why)),
			 -EPERM);
	assert_int_equal(fd, -1);
	assert_non_null(strstr(why, "not sticky"));
	/* sticky and ours: accepted */
	assert_int_equal(chmod(sub, 01777), 0);
	assert_int_equal(fileio__open_out_dir(sub, false, NULL, &fd, &owner, why, sizeof(why)), 0);
	close(fd);
	/* group-writable: refused too */
	assert_int_equal(chmod(sub, 0775), 0);
	assert_int_equal(fileio__open_out_dir(sub, false, NULL, &fd, &owner, why, sizeof(why)),
			 -EPERM);
	/* a symlink to a good directory: refused (its last component is not followed) */
	assert_int_equal(chmod(sub, 0755), 0);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(symlink(sub, link), 0);
	assert_int_equal(fileio__open_out_dir(link, true, NULL, &fd, &owner, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "symbolic link"));
	assert_int_equal(fileio__open_out_dir("/nonexistent-isoprof", false, NULL, &fd, &owner, why,
					      sizeof(why)), -ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_atomic_never_follows),
		cmocka_unit_test(test_out_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
