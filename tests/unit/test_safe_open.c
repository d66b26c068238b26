// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for lib/safe_open: what a target can put where isoprof looks
 * (FIFO, symlink, directory, device, foreign owner, sparse huge file,
 * an absolute symlink out of a root) is refused with a reason, without
 * blocking; the read budget.  Owner cases need root to chown: they are
 * skipped when not root.
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

#include "lib/safe_open.h"

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-safe-open.XXXXXX"
#include "tests/unit/temp_dir.h"

static void in_dir(char *path, size_t size, void **state, const char *name)
{
	snprintf(path, size, "%s/%s", (const char *)*state, name);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* Open path under opts; expect err (0: success), and a reason containing why. */
static void expect(const char *path, const struct safe_open_opts *opts, int err,
		   const char *why)
{
	struct safe_open_info info;
	int fd = safe_open__file(path, opts, &info);

	if (!err) {
		assert_true(fd >= 0);
		assert_string_equal(info.why, "");
		close(fd);
		return;
	}
	assert_int_equal(fd, err);
	if (why && !strstr(info.why, why))
		fail_msg("%s: reason \"%s\" lacks \"%s\"", path, info.why, why);
}

static void test_types(void **state)
{
	char file[512], fifo[512], link[512], sock_dir[512];

	in_dir(file, sizeof(file), state, "map");
	in_dir(fifo, sizeof(fifo), state, "fifo");
	in_dir(link, sizeof(link), state, "link");
	in_dir(sock_dir, sizeof(sock_dir), state, "dir");
	put(file, "1 2 a\n");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(mkdir(sock_dir, 0755), 0);

	expect(file, NULL, 0, NULL);
	/* A FIFO with no writer: open() would block forever without O_NONBLOCK. */
	expect(fifo, NULL, -EINVAL, "a FIFO, not a regular file");
	expect(link, NULL, -ELOOP, "symlink refused");
	expect(sock_dir, NULL, -EINVAL, "a directory");
	expect("/dev/null", NULL, -EINVAL, "a character device");
	in_dir(file, sizeof(file), state, "missing");
	expect(file, NULL, -ENOENT, "no such file");
}

/* The same refusals for a name in an open directory, and names that are no file's. */
static void test_file_at(void **state)
{
	struct safe_open_opts cap = { .max_bytes = 4 };
	struct safe_open_info info;
	char file[512], fifo[512], link[512];
	int dirfd, fd;

	in_dir(file, sizeof(file), state, "w.pb.gz");
	in_dir(fifo, sizeof(fifo), state, "fifo");
	in_dir(link, sizeof(link), state, "link");
	put(file, "12345678");
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(symlink(file, link), 0);
	dirfd = open((const char *)*state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);

	fd = safe_open__file_at(dirfd, "w.pb.gz", NULL, &info);
	assert_true(fd >= 0);
	assert_string_equal(info.why, "");
	close(fd);
	assert_int_equal(safe_open__file_at(dirfd, "w.pb.gz", &cap, &info), -EFBIG);
	assert_non_null(strstr(info.why, "larger than"));
	assert_int_equal(safe_open__file_at(dirfd, "fifo", NULL, &info), -EINVAL);
	assert_non_null(strstr(info.why, "a FIFO"));
	assert_int_equal(safe_open__file_at(dirfd, "link", NULL, &info), -ELOOP);
	assert_non_null(strstr(info.why, "symlink refused"));
	assert_int_equal(safe_open__file_at(dirfd, "missing", NULL, &info), -ENOENT);
	assert_int_equal(safe_open__file_at(dirfd, ".", NULL, &info), -EINVAL);
	assert_int_equal(safe_open__file_at(dirfd, "..", NULL, &info), -EINVAL);
	assert_int_equal(safe_open__file_at(dirfd, "", NULL, &info), -EINVAL);
	assert_int_equal(safe_open__file_at(dirfd, "../w.pb.gz", NULL, &info), -EINVAL);
	close(dirfd);
}

static void test_size_cap(void **state)
{
	struct safe_open_opts o = { .max_bytes = 256ull << 20 };
	char path[512];
	int fd;

	in_dir(path, sizeof(path), state, "sparse");
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	/* 1 TB, no blocks: refused on its size alone, nothing is read. */
	assert_int_equal(ftruncate(fd, 1ll << 40), 0);
	close(fd);
	expect(path, &o, -EFBIG, "larger than the 256 MiB cap");
	o.max_bytes = 0;
	expect(path, &o, 0, NULL);
	o.max_bytes = 1ull << 40;
	expect(path, &o, 0, NULL);
}

static void test_identity(void **state)
{
	struct safe_open_opts o = { .match_file = true };
	struct stat st;
	char a[512], b[512];

	in_dir(a, sizeof(a), state, "a");
	in_dir(b, sizeof(b), state, "b");
	put(a, "a");
	put(b, "b");
	assert_int_equal(stat(a, &st), 0);
	o.dev = st.st_dev;
	o.ino = st.st_ino;
	expect(a, &o, 0, NULL);
	expect(b, &o, -ESTALE, "not the expected file");
	/* Same inode number on another device is another file. */
	o.dev = st.st_dev + 1;
	expect(a, &o, -ESTALE, "not the expected file");
}

static void test_owner(void **state)
{
	struct safe_open_opts o = { .owner = SAFE_OPEN_OWNER_TARGET, .uid = 65534 };
	char mine[512], theirs[512], roots[512];

	if (geteuid()) {
		/* chown needs root; make check runs without it */
		skip();
		return;
	}
	in_dir(mine, sizeof(mine), state, "mine");
	in_dir(theirs, sizeof(theirs), state, "theirs");
	in_dir(roots, sizeof(roots), state, "roots");
	put(mine, "x");
	put(theirs, "x");
	put(roots, "x");
	assert_int_equal(chown(mine, 65534, 65534), 0);
	assert_int_equal(chown(theirs, 1000, 1000), 0);

	expect(mine, &o, 0, NULL);
	expect(theirs, &o, -EPERM, "owned by uid 1000, not the target's uid 65534");
	/* A file the target writes itself: one planted by root is not its. */
	expect(roots, &o, -EPERM, "owned by uid 0");
	o.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT;
	expect(roots, &o, 0, NULL);
	expect(theirs, &o, -EPERM, "owned by uid 1000, not the target's uid 65534 or root");
	o.owner = SAFE_OPEN_ANY_OWNER;
	expect(theirs, &o, 0, NULL);
}

/*
 * A fake root holding an absolute symlink to a file outside it and a
 * directory symlink: resolved inside the root, neither reaches the outside.
 */
static void test_in_root(void **state)
{
	char root[512], outside[512], path[600];
	struct safe_open_opts o = { 0 };

	in_dir(root, sizeof(root), state, "root");
	in_dir(outside, sizeof(outside), state, "secret");
	put(outside, "secret\n");
	assert_int_equal(mkdir(root, 0755), 0);
	snprintf(path, sizeof(path), "%s/run", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/run/real.map", root);
	put(path, "1 2 a\n");
	/* /run/dir -> the test dir, /run/abs -> outside: absolute, as a target plants them */
	snprintf(path, sizeof(path), "%s/run/dir", root);
	assert_int_equal(symlink((const char *)*state, path), 0);

	o.root = root;
	expect("/run/real.map", &o, 0, NULL);
	expect("run/real.map", &o, 0, NULL);
	/* Through the directory symlink: inside the root, <state> does not exist. */
	snprintf(path, sizeof(path), "/run/dir/secret");
	expect(path, &o, -ENOENT, NULL);
	/* ".." cannot climb above the root either. */
	expect("/../../../../secret", &o, -ENOENT, NULL);
	snprintf(path, sizeof(path), "%s/run/abs", root);
	assert_int_equal(symlink(outside, path), 0);
	expect("/run/abs", &o, -ELOOP, "symlink refused");
}

/* A path under /proc/N/root is resolved inside that root: our own here. */
static void test_proc_root(void **state)
{
	char file[512], path[700];

	in_dir(file, sizeof(file), state, "f");
	put(file, "x");
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)getpid(), file);
	expect(path, NULL, 0, NULL);
	/* a magic link is never followed on the way, only when named as one */
	snprintf(path, sizeof(path), "/proc/self/cwd/%s", file);
	expect(path, NULL, -ELOOP, NULL);
}

static void test_proc_link(void **state)
{
	struct safe_open_opts o = { .proc_link = true };
	char path[64];

	(void)state;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)getpid());
	expect(path, NULL, -ELOOP, "symlink refused");
	expect(path, &o, 0, NULL);
}

static void test_target_uid(void **state)
{
	uid_t uid = 12345;

	(void)state;
	assert_int_equal(safe_open__target_uid(NULL, getpid(), &uid), 0);
	assert_int_equal(uid, geteuid());
	assert_int_equal(safe_open__target_uid(NULL, 0, &uid), -ESRCH);
}

static void test_budget(void **state)
{
	struct read_budget b;

	(void)state;
	read_budget__init(&b, 100);
	assert_int_equal(read_budget__take(&b, 60), 60);
	assert_int_equal(read_budget__take(&b, 60), 40);
	assert_false(b.spent);
	read_budget__give_back(&b, 10);
	assert_int_equal(read_budget__take(&b, 60), 10);
	assert_int_equal(read_budget__take(&b, 1), 0);
	assert_true(b.spent);
	assert_int_equal(read_budget__take(NULL, 7), 7);
	read_budget__init(&b, 0);
	assert_int_equal(read_budget__take(&b, 1ull << 40), 1ull << 40);
}

static void test_size_str(void **state)
{
	char buf[32];

	(void)state;
	safe_open__size_str(1ull << 30, buf, sizeof(buf));
	assert_string_equal(buf, "1 GiB");
	safe_open__size_str(256ull << 20, buf, sizeof(buf));
	assert_string_equal(buf, "256 MiB");
	safe_open__size_str(4097, buf, sizeof(buf));
	assert_string_equal(buf, "4097 bytes");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_types, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_file_at, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_size_cap, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_identity, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_owner, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_in_root, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_proc_root, make_dir, remove_dir),
		cmocka_unit_test(test_proc_link),
		cmocka_unit_test(test_target_uid),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_size_str),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
