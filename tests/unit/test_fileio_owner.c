// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for outputs written for another user (lib/fileio.h, struct
 * fileio_owner; user/capture/caps.h): whose a directory's files are, the
 * identity switch around every step (balanced, undone, and with it the
 * owner's own permission checks), files and new directories given to the
 * sudo user, and the sudo user read from the environment.  The cases
 * that change owners need root and are skipped without it; the rules, the
 * switch to one's own ids and the environment run unprivileged.
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
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-test-owner.XXXXXX"
#include "tests/unit/temp_dir.h"

#include "lib/fileio.h"
#include "user/capture/caps.h"

/* uids and gids nobody is expected to use on a test host */
#define U1 424242u
#define G1 424243u
#define U2 424244u
#define G2 424245u

static int raised, lowered;

static int count_privilege(bool raise)
{
	if (raise)
		raised++;
	else
		lowered++;
	return 0;
}

static struct stat dir_stat(uid_t uid, gid_t gid, mode_t mode)
{
	struct stat st;

	memset(&st, 0, sizeof(st));
	st.st_uid = uid;
	st.st_gid = gid;
	st.st_mode = S_IFDIR | mode;
	return st;
}

static void test_owner_rules(void **state)
{
	uid_t me = geteuid(), other = me ? me + 1 : U1;
	struct fileio_policy others = { .for_others = true, .privilege = count_privilege };
	struct fileio_policy give = { .give = true, .give_uid = U2, .give_gid = G2 };
	struct fileio_owner o;
	struct stat st;
	char why[200];

	(void)state;
	/* another user's directory: refused as before, unless isoprof writes for others */
	st = dir_stat(other, G1, 0755);
	assert_int_equal(fileio__out_dir_owner(&st, NULL, &o, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "another user"));
	assert_int_equal(fileio__out_dir_owner(&st, &give, &o, why, sizeof(why)), -EPERM);
	assert_int_equal(fileio__out_dir_owner(&st, &others, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_AS);
	assert_int_equal(o.uid, other);
	assert_int_equal(o.gid, G1);
	assert_ptr_equal(o.privilege, count_privilege);
	/* ... when that user alone can write it: not its group, not everyone, unless sticky */
	st = dir_stat(other, G1, 0775);
	assert_int_equal(fileio__out_dir_owner(&st, &others, &o, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "writable by its group (mode 0775) and not sticky"));
	st = dir_stat(other, G1, 0777);
	assert_int_equal(fileio__out_dir_owner(&st, &others, &o, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "every user"));
	st = dir_stat(other, G1, 01777);
	assert_int_equal(fileio__out_dir_owner(&st, &others, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_AS);
	/* root's and isoprof's own: its files, or the sudo user's */
	st = dir_stat(0, 0, 0755);
	assert_int_equal(fileio__out_dir_owner(&st, NULL, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_SELF);
	assert_int_equal(fileio__out_dir_owner(&st, &others, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_SELF);
	assert_int_equal(fileio__out_dir_owner(&st, &give, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_GIVE);
	assert_int_equal(o.uid, U2);
	assert_int_equal(o.gid, G2);
	st = dir_stat(me, 0, 01777);
	assert_int_equal(fileio__out_dir_owner(&st, &give, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_GIVE);
	/* a group-writable directory is refused whoever owns it */
	st = dir_stat(me, 0, 0770);
	assert_int_equal(fileio__out_dir_owner(&st, &give, &o, why, sizeof(why)), -EPERM);
	assert_int_equal(o.how, FILEIO_OWNER_SELF);
}

/* No temporary file of the atomic writer in dir. */
static bool no_tmp(const char *dir)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "! ls -A '%s' | grep -q '\\.tmp\\.'", dir);
	return system(cmd) == 0;
}

/*
 * The switch itself, to one's own ids (which needs no capability): every
 * step raises and lowers once, the thread's fs ids are its own again.
 */
static void test_as_switch_balanced(void **state)
{
	const char *dir = *state;
	struct fileio_owner o = { FILEIO_OWNER_AS, geteuid(), getegid(), count_privilege };
	char path[300], victim[300];
	struct atomic_file af;
	struct stat st;
	int dfd;

	raised = lowered = 0;
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "a.pb.gz", "abc", 3, 0644), 0);
	/* create, then commit */
	assert_int_equal(raised, 2);
	assert_int_equal(lowered, 2);
	snprintf(path, sizeof(path), "%s/a.pb.gz", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	assert_int_equal(st.st_size, 3);
	/* an aborted write: created and removed as the owner, nothing left */
	assert_int_equal(atomic_file__openat(&af, dfd, &o, "b.pb.gz", 0644), 0);
	fputs("half", af.f);
	atomic_file__abort(&af);
	assert_int_equal(raised, 4);
	assert_int_equal(lowered, 4);
	snprintf(path, sizeof(path), "%s/b.pb.gz", dir);
	assert_int_equal(access(path, F_OK), -1);
	/* a symlink at the name is replaced, not followed */
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	assert_int_equal(fileio__write_atomic(victim, "precious", 8, 0600), 0);
	snprintf(path, sizeof(path), "%s/c.pb.gz", dir);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "c.pb.gz", "new", 3, 0644), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 8);
	assert_true(no_tmp(dir));
	/* the thread's own fs ids again */
	assert_int_equal((uid_t)setfsuid((uid_t)-1), geteuid());
	assert_int_equal((gid_t)setfsgid((gid_t)-1), getegid());
	/* isoprof's own (NULL owner, SELF): no capability step at all */
	raised = lowered = 0;
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "d.pb.gz", "x", 1, 0644), 0);
	assert_int_equal(raised + lowered, 0);
	close(dfd);
}

/* --out-dir NEW, made by its parent's rules: with a trailing '/', or under a missing parent. */
static void test_make_out_dir(void **state)
{
	const char *dir = *state;
	struct fileio_owner o;
	char path[300], why[200];
	struct stat st;
	int dfd;

	snprintf(path, sizeof(path), "%s/new//", dir);
	assert_int_equal(fileio__open_out_dir(path, true, NULL, &dfd, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_SELF);
	assert_int_equal(fstat(dfd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_uid, geteuid());
	close(dfd);
	/* there already: opened as it is */
	assert_int_equal(fileio__open_out_dir(path, true, NULL, &dfd, &o, why, sizeof(why)), 0);
	close(dfd);
	snprintf(path, sizeof(path), "%s/missing/new", dir);
	assert_int_equal(fileio__open_out_dir(path, true, NULL, &dfd, &o, why, sizeof(why)),
			 -ENOENT);
	assert_int_equal(dfd, -1);
	assert_int_equal(fileio__open_out_dir(".", true, NULL, &dfd, &o, why, sizeof(why)), 0);
	close(dfd);
}

static void make_sub(const char *dir, const char *name, uid_t uid, gid_t gid, mode_t mode,
		     char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, uid, gid), 0);
	assert_int_equal(chmod(path, mode), 0);
}

static void assert_owned(const char *path, uid_t uid, gid_t gid)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_int_equal(st.st_uid, uid);
	assert_int_equal(st.st_gid, gid);
}

/* Root: another user's directory, written as that user. */
static void test_as_other_user(void **state)
{
	const char *dir = *state;
	struct fileio_policy p = { .for_others = true };
	char home[300], ro[300], path[400], why[200];
	struct fileio_owner o;
	int dfd;

	if (geteuid())
		skip();
	make_sub(dir, "home", U1, G1, 0755, home, sizeof(home));
	assert_int_equal(fileio__open_out_dir(home, false, &p, &dfd, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_AS);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "prof.pb.gz", "pprof", 5, 0644), 0);
	snprintf(path, sizeof(path), "%s/prof.pb.gz", home);
	assert_owned(path, U1, G1);
	/* over a file of root's there: the owner may replace it, so isoprof may */
	assert_int_equal(fileio__write_atomic_at(dfd, NULL, "root.pb.gz", "r", 1, 0644), 0);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "root.pb.gz", "u", 1, 0644), 0);
	snprintf(path, sizeof(path), "%s/root.pb.gz", home);
	assert_owned(path, U1, G1);
	close(dfd);
	assert_int_equal((uid_t)setfsuid((uid_t)-1), 0);
	assert_int_equal((gid_t)setfsgid((gid_t)-1), 0);
	assert_true(no_tmp(home));

	/* --out-dir NEW there: made as the owner (the parent's gid) */
	snprintf(path, sizeof(path), "%s/new", home);
	assert_int_equal(fileio__open_out_dir(path, true, &p, &dfd, &o, why, sizeof(why)), 0);
	assert_owned(path, U1, G1);
	assert_int_equal(o.how, FILEIO_OWNER_AS);
	close(dfd);

	/*
	 * The owner's permissions, not root's: this test holds
	 * CAP_DAC_OVERRIDE, and still cannot write where the owner cannot.
	 */
	make_sub(dir, "ro", U1, G1, 0555, ro, sizeof(ro));
	assert_int_equal(fileio__open_out_dir(ro, false, &p, &dfd, &o, why, sizeof(why)), 0);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "prof.pb.gz", "x", 1, 0644), -EACCES);
	close(dfd);
	snprintf(path, sizeof(path), "%s/sub", ro);
	assert_int_equal(fileio__open_out_dir(path, true, &p, &dfd, &o, why, sizeof(why)), -EACCES);

	/* not for others: refused, as ever */
	assert_int_equal(fileio__open_out_dir(home, false, NULL, &dfd, &o, why, sizeof(why)),
			 -EPERM);
	assert_non_null(strstr(why, "another user"));
}

/* Root, under sudo: files and new directories in root's given to the sudo user. */
static void test_give_sudo_user(void **state)
{
	const char *dir = *state;
	struct fileio_policy p = { .for_others = true, .give = true, .give_uid = U2, .give_gid = G2 };
	char rootdir[300], path[400], why[200];
	struct fileio_owner o;
	struct atomic_file af;
	struct stat st;
	int dfd;

	if (geteuid())
		skip();
	make_sub(dir, "root", 0, 0, 0755, rootdir, sizeof(rootdir));
	assert_int_equal(fileio__open_out_dir(rootdir, false, &p, &dfd, &o, why, sizeof(why)), 0);
	assert_int_equal(o.how, FILEIO_OWNER_GIVE);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "prof.pb.gz", "pprof", 5, 0644), 0);
	snprintf(path, sizeof(path), "%s/prof.pb.gz", rootdir);
	assert_owned(path, U2, G2);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0644);
	/* aborted: nothing left, nothing given */
	assert_int_equal(atomic_file__openat(&af, dfd, &o, "x.pb.gz", 0644), 0);
	atomic_file__abort(&af);
	assert_true(no_tmp(rootdir));
	close(dfd);

	/* --out-dir NEW in root's: made, given to the sudo user, written as them */
	snprintf(path, sizeof(path), "%s/new/", rootdir);
	assert_int_equal(fileio__open_out_dir(path, true, &p, &dfd, &o, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/new", rootdir);
	assert_owned(path, U2, G2);
	assert_int_equal(o.how, FILEIO_OWNER_AS);
	assert_int_equal(o.uid, U2);
	assert_int_equal(fileio__write_atomic_at(dfd, &o, "a.pb.gz", "a", 1, 0644), 0);
	close(dfd);
	snprintf(path, sizeof(path), "%s/new/a.pb.gz", rootdir);
	assert_owned(path, U2, G2);
	/* an existing directory of root's is not given away */
	make_sub(dir, "old", 0, 0, 0755, path, sizeof(path));
	assert_int_equal(fileio__open_out_dir(path, true, &p, &dfd, &o, why, sizeof(why)), 0);
	assert_owned(path, 0, 0);
	close(dfd);

	/* the file tools' form: atomic_file__open_for() on a path */
	snprintf(path, sizeof(path), "%s/flame.html", rootdir);
	assert_int_equal(atomic_file__open_for(&af, path, &p, 0644), 0);
	fputs("<html>", af.f);
	assert_int_equal(atomic_file__commit(&af), 0);
	assert_owned(path, U2, G2);
}

static void test_sudo_user(void **state)
{
	static const char *const bad[] = { "", "+1000", "1000x", " 1000", "-1", "4294967295",
					   "99999999999", "0" };
	uid_t uid = 1;
	gid_t gid = 1;

	(void)state;
	setenv("SUDO_UID", "1000", 1);
	setenv("SUDO_GID", "100", 1);
	assert_int_equal(caps__sudo_user(&uid, &gid), getuid() == 0);
	if (getuid() == 0) {
		assert_int_equal(uid, 1000);
		assert_int_equal(gid, 100);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("SUDO_UID", bad[i], 1);
		assert_false(caps__sudo_user(&uid, &gid));
	}
	setenv("SUDO_UID", "1000", 1);
	setenv("SUDO_GID", "100x", 1);
	assert_false(caps__sudo_user(&uid, &gid));
	unsetenv("SUDO_GID");
	assert_false(caps__sudo_user(&uid, &gid));
	unsetenv("SUDO_UID");
	assert_false(caps__sudo_user(&uid, &gid));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_rules),
		cmocka_unit_test_setup_teardown(test_as_switch_balanced, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_make_out_dir, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_as_other_user, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_give_sudo_user, make_dir, remove_dir),
		cmocka_unit_test(test_sudo_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
