// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/symbolizer: live children running the symfix
 * fixture (plain, deleted after exec, stripped), a fake proc root for the
 * mapping history rules and damaged files, and a fake kallsyms.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolize/symbolizer.h"

static char fixture[4096];

/* Test paths are short; a truncated one is a broken test, not a warning. */
static void fmt_ok(int n, size_t size)
{
	assert_true(n >= 0 && (size_t)n < size);
}
static char tmpdir[] = "/tmp/test_symbolizer.XXXXXX";

#define MAX_SYMS 16

struct child {
	pid_t pid;
	int in_fd;
	FILE *out;
	size_t nr;
	struct {
		char name[64];
		uint64_t addr;
	} syms[MAX_SYMS];
};

static bool find_fixture(char *out, size_t len)
{
	const char *env = getenv("FIXTURES"), *build = getenv("BUILD");
	const char *fmts[] = { "%s/symfix", "%s/fixtures/symfix", "%s/../fixtures/symfix" };
	const char *bases[] = { env, build, build };
	size_t i;

	for (i = 0; i < 3; i++) {
		if (!bases[i])
			continue;
		snprintf(out, len, fmts[i], bases[i]);
		if (!access(out, X_OK))
			return true;
	}
	snprintf(out, len, "build/fixtures/symfix");
	return !access(out, X_OK);
}

static int setup(void **state)
{
	(void)state;
	if (!find_fixture(fixture, sizeof(fixture))) {
		fprintf(stderr, "symfix fixture not found: set FIXTURES or BUILD\n");
		return -1;
	}
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	fmt_ok(snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir), sizeof(cmd));
	return system(cmd) == 0 ? 0 : -1;
}

static void run(const char *fmt, const char *a, const char *b)
{
	char cmd[9000];

	fmt_ok(snprintf(cmd, sizeof(cmd), fmt, a, b), sizeof(cmd));
	assert_int_equal(system(cmd), 0);
}

/* Start "path serve" and read the addresses it reports. */
static void spawn(struct child *c, const char *path)
{
	int in[2], out[2];
	char line[256];

	memset(c, 0, sizeof(*c));
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		execl(path, path, "serve", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	c->out = fdopen(out[0], "r");
	assert_non_null(c->out);
	while (fgets(line, sizeof(line), c->out)) {
		unsigned long long addr;
		char name[64];

		if (!strcmp(line, "ready\n"))
			return;
		if (sscanf(line, "%63s %llx", name, &addr) == 2 && c->nr < MAX_SYMS) {
			strcpy(c->syms[c->nr].name, name);
			c->syms[c->nr++].addr = addr;
		}
	}
	fail_msg("%s serve: no \"ready\"", path);
}

static uint64_t child_addr(const struct child *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (!strcmp(c->syms[i].name, name))
			return c->syms[i].addr;
	fail_msg("fixture did not report %s", name);
	return 0;
}

static void reap(struct child *c)
{
	int status;

	close(c->in_fd);
	kill(c->pid, SIGKILL);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	fclose(c->out);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static bool has_note(const struct symbolizer *s, const char *part1, const char *part2)
{
	const char *const *notes;
	size_t n = symbolizer__notes(s, &notes), i;

	for (i = 0; i < n; i++)
		if (strstr(notes[i], part1) && strstr(notes[i], part2))
			return true;
	return false;
}

static void expect_user(struct symbolizer *s, pid_t pid, uint64_t ip, const char *name,
			const char *system_name, uint64_t offset)
{
	struct sym_frame f;

	assert_int_equal(symbolizer__resolve_user(s, pid, ip, &f), 0);
	if (f.miss != SYM_OK)
		fail_msg("%#llx: %s, expected %s", (unsigned long long)ip, sym_miss__str(f.miss),
			 name);
	assert_string_equal(f.name, name);
	assert_string_equal(f.system_name, system_name ? system_name : name);
	assert_int_equal(f.symbol_offset, offset);
	assert_non_null(f.mapping);
	assert_true(f.mapping->id >= 1);
	assert_true(f.mapping->start <= ip && ip < f.mapping->limit);
	assert_null(f.file);
	assert_int_equal(f.line, 0);
}

static void check_fixture_frames(struct symbolizer *s, const struct child *c)
{
	uint64_t alpha = child_addr(c, "symfix_alpha");

	expect_user(s, c->pid, alpha, "symfix_alpha", NULL, 0);
	expect_user(s, c->pid, alpha + 4, "symfix_alpha", NULL, 4);
	expect_user(s, c->pid, child_addr(c, "symfix_beta") + 1, "symfix_beta", NULL, 1);
	expect_user(s, c->pid, child_addr(c, "symfix_local"), "symfix_local", NULL, 0);
	expect_user(s, c->pid, child_addr(c, "_ZN6symfix7mangledEi") + 2, "symfix::mangled",
		    "_ZN6symfix7mangledEi", 2);
	expect_user(s, c->pid, child_addr(c, "_RNvCs1_6symfix4rust"), "symfix::rust",
		    "_RNvCs1_6symfix4rust", 0);
	expect_user(s, c->pid, child_addr(c, "symfix_nosize") + 3, "symfix_nosize", NULL, 3);
	expect_user(s, c->pid, child_addr(c, "main"), "main", NULL, 0);
}

static void test_live_process(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	struct sym_frame f, g;
	struct child c, c2;

	(void)state;
	assert_non_null(s);
	spawn(&c, fixture);
	assert_int_equal(symbolizer__track(s, c.pid), 0);
	assert_int_equal(symbolizer__preload(s, c.pid), 0);
	check_fixture_frames(s, &c);

	assert_int_equal(symbolizer__resolve_user(s, c.pid, child_addr(&c, "main"), &f), 0);
	assert_true(ends_with(f.mapping->path, "/symfix"));
	assert_int_equal(strlen(f.mapping->build_id), 40);

	assert_int_equal(symbolizer__resolve_user(s, c.pid, child_addr(&c, "anon") + 8, &g), 0);
	assert_int_equal(g.miss, SYM_MISS_NO_PERFMAP);
	assert_null(g.name);
	assert_non_null(g.mapping);
	assert_string_equal(g.mapping->path, "[anon]");
	assert_string_equal(g.mapping->build_id, "");
	assert_int_not_equal(g.mapping->id, f.mapping->id);

	assert_int_equal(symbolizer__resolve_user(s, c.pid, child_addr(&c, "vdso") + 16, &g), 0);
	assert_int_equal(g.miss, SYM_MISS_NOT_COVERED);
	assert_non_null(g.mapping);
	assert_string_equal(g.mapping->path, "[vdso]");

	assert_int_equal(symbolizer__resolve_user(s, c.pid, 0x1000, &g), 0);
	assert_int_equal(g.miss, SYM_MISS_NO_MAPPING);
	assert_null(g.mapping);

	/* A second process of the same binary shares the cached symbols. */
	spawn(&c2, fixture);
	assert_int_equal(symbolizer__track(s, c2.pid), 0);
	check_fixture_frames(s, &c2);
	assert_int_equal(symbolizer__resolve_user(s, c2.pid, child_addr(&c2, "main"), &g), 0);
	assert_ptr_equal(g.system_name, f.system_name);
	assert_ptr_equal(g.mapping->build_id, f.mapping->build_id);
	assert_int_not_equal(g.mapping->id, f.mapping->id);
	reap(&c2);

	/* Gone: the snapshot stays, a refresh says so. */
	reap(&c);
	assert_int_equal(symbolizer__refresh(s, c.pid), -ESRCH);
	check_fixture_frames(s, &c);
	assert_false(has_note(s, "symfix", ""));

	assert_int_equal(symbolizer__resolve_user(s, 999999999, 0x1000, &g), -ESRCH);
	assert_int_equal(g.miss, SYM_MISS_NO_MAPPING);
	assert_null(g.mapping);
	assert_int_equal(symbolizer__refresh(s, 999999999), -ESRCH);
	assert_int_equal(symbolizer__preload(s, 999999999), -ESRCH);
	assert_true(symbolizer__track(s, 999999999) == -ESRCH);
	symbolizer__free(s);
	symbolizer__free(NULL);
}

/* Unlinked after exec: the path is gone, /proc/PID/map_files/ is not. */
static void test_deleted_binary(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[4200];
	struct sym_frame f;
	struct child c;

	(void)state;
	assert_non_null(s);
	/* Opening map_files/ entries takes CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE). */
	if (geteuid()) {
		symbolizer__free(s);
		skip();
	}
	fmt_ok(snprintf(path, sizeof(path), "%s/symfix-deleted", tmpdir), sizeof(path));
	run("cp '%s' '%s'", fixture, path);
	spawn(&c, path);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symbolizer__track(s, c.pid), 0);
	check_fixture_frames(s, &c);
	assert_int_equal(symbolizer__resolve_user(s, c.pid, child_addr(&c, "main"), &f), 0);
	assert_string_equal(f.mapping->path, path);
	reap(&c);
	symbolizer__free(s);
}

static void test_stripped_binary(void **state)
{
	struct symbolizer *s = symbolizer__new(NULL);
	char path[4200];
	struct sym_frame f;
	struct child c;

	(void)state;
	assert_non_null(s);
	fmt_ok(snprintf(path, sizeof(path), "%s/symfix-stripped", tmpdir), sizeof(path));
	run("objcopy --strip-all '%s' '%s'", fixture, path);
	spawn(&c, path);
	assert_int_equal(symbolizer__track(s, c.pid), 0);
	assert_int_equal(symbolizer__resolve_user(s, c.pid, child_addr(&c, "symfix_alpha"), &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NO_SYMBOLS);
	assert_null(f.name);
	assert_null(f.system_name);
	assert_non_null(f.mapping);
	assert_string_equal(f.mapping->path, path);
	assert_int_equal(strlen(f.mapping->build_id), 40);
	assert_true(has_note(s, path, "no function symbols"));
	reap(&c);
	symbolizer__free(s);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	fmt_ok(snprintf(path, sizeof(path), "%s/%s", dir, name), sizeof(path));
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * The fake process's maps; it shares our mount namespace (ns/mnt of it and
 * of "self" are ours), so its mapped files are opened by the paths named.
 */
static void write_maps(const char *root, int pid, const char *text)
{
	char dir[4200], link[4300];

	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d", root, pid), sizeof(dir));
	mkdir(dir, 0755);
	write_file(dir, "maps", text);
	fmt_ok(snprintf(link, sizeof(link), "%s/ns", dir), sizeof(link));
	mkdir(link, 0755);
	fmt_ok(snprintf(link, sizeof(link), "%s/ns/mnt", dir), sizeof(link));
	symlink("/proc/self/ns/mnt", link);
	fmt_ok(snprintf(dir, sizeof(dir), "%s/self", root), sizeof(dir));
	mkdir(dir, 0755);
	fmt_ok(snprintf(link, sizeof(link), "%s/ns", dir), sizeof(link));
	mkdir(link, 0755);
	fmt_ok(snprintf(link, sizeof(link), "%s/ns/mnt", dir), sizeof(link));
	symlink("/proc/self/ns/mnt", link);
}

/* "MAJ:MIN" of the device path is on, as /proc/PID/maps writes it (8 kept at a time). */
static const char *dev_of(const char *path)
{
	static char buf[8][32];
	static int next;
	struct stat st;
	char *b = buf[next++ % 8];

	assert_int_equal(stat(path, &st), 0);
	snprintf(b, sizeof(buf[0]), "%02x:%02x", major(st.st_dev), minor(st.st_dev));
	return b;
}

static uint64_t nm_addr(const char *name)
{
	char cmd[8192], line[512], sym[256], type;
	unsigned long long addr, found = 0;
	FILE *f;

	fmt_ok(snprintf(cmd, sizeof(cmd), "nm --defined-only '%s'", fixture), sizeof(cmd));
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name))
			found = addr;
	pclose(f);
	assert_true(found != 0);
	return found;
}

static void expect_miss(struct symbolizer *s, pid_t pid, uint64_t ip, enum sym_miss miss,
			const char *path)
{
	struct sym_frame f;

	assert_int_equal(symbolizer__resolve_user(s, pid, ip, &f), 0);
	if (f.miss != miss)
		fail_msg("%#llx: %s, expected %s", (unsigned long long)ip, sym_miss__str(f.miss),
			 sym_miss__str(miss));
	assert_null(f.name);
	if (path) {
		assert_non_null(f.mapping);
		assert_string_equal(f.mapping->path, path);
	} else {
		assert_null(f.mapping);
	}
}

/*
 * History: a refresh adds what is new, newer mappings win where they
 * overlap older ones, unmapped ones still answer, the same mapping seen
 * again keeps its id.  The fixture's text is at file offset 0x1000 (and
 * vaddr 0x1000), so mapped at M with offset 0x1000, symbol S is at
 * M + S - 0x1000.
 */
static void append_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * A process in another pid namespace (NSpid 4343 -> 7) whose V8 writes a
 * perf map: JIT addresses, in an anonymous mapping or in none at all, are
 * named from it, newest entry first, and lines appended later are found.
 */
static void test_perfmap(void **state)
{
	struct symbolizer_opts opts = { 0 };
	char root[4200], dir[4300], map[4400], status[256];
	struct symbolizer *s;
	struct sym_frame f;
	const int pid = 4343;

	(void)state;
	fmt_ok(snprintf(root, sizeof(root), "%s/proc-perfmap", tmpdir), sizeof(root));
	assert_int_equal(mkdir(root, 0755), 0);
	write_maps(root, pid, "7f0000000000-7f0000100000 r-xp 00000000 00:00 0 \n");
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d", root, pid), sizeof(dir));
	fmt_ok(snprintf(status, sizeof(status), "Name:\tnode\nTgid:\t4343\nNSpid:\t4343\t7\n"
			"Uid:\t%u\t%u\t%u\t%u\n", (unsigned)geteuid(), (unsigned)geteuid(),
			(unsigned)geteuid(), (unsigned)geteuid()), sizeof(status));
	write_file(dir, "status", status);
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d/root", root, pid), sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d/root/tmp", root, pid), sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	fmt_ok(snprintf(map, sizeof(map), "%s/perf-7.map", dir), sizeof(map));
	write_file(dir, "perf-7.map",
		   "7f0000001000 100 JS:~fib /srv/w.js:3:13\n"
		   "7f0000001000 80 JS:*fib /srv/w.js:3:13\n"
		   "7f0000002000 40 Builtin:ArrayPrototypePush\n"
		   "this line is not a perf map line\n"
		   "7f0000003000 20 JS:~ /srv/w.js:9:1\n");

	opts.proc_root = root;
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__track(s, pid), 0);
	assert_true(symbolizer__has_perfmap(s, pid));

	/* newest entry wins where they overlap, the older shows past its end */
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f0000001010, &f), 0);
	assert_int_equal(f.miss, SYM_OK);
	assert_int_equal(f.kind, SYM_FRAME_JIT);
	assert_string_equal(f.name, "fib");
	assert_string_equal(f.system_name, "JS:*fib /srv/w.js:3:13");
	assert_string_equal(f.file, "/srv/w.js");
	assert_int_equal(f.line, 3);
	assert_int_equal(f.column, 13);
	assert_string_equal(f.jit_tier, "turbofan");
	assert_non_null(f.mapping);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f00000010f0, &f), 0);
	assert_string_equal(f.jit_tier, "interpreted");

	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f0000002004, &f), 0);
	assert_string_equal(f.name, "Builtin:ArrayPrototypePush");
	assert_null(f.file);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f0000003000, &f), 0);
	assert_string_equal(f.name, "(anonymous)");

	/* covered by no entry: still anonymous JIT memory, with its mapping */
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f0000050000, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_ANON);
	assert_non_null(f.mapping);

	/* code compiled after the first read, outside any known mapping; a miss
	 * rereads the map at most every 20 ms */
	append_file(map, "7f1000000000 200 JS:^later /srv/w.js:20:5\n");
	usleep(30000);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x7f1000000100, &f), 0);
	assert_int_equal(f.miss, SYM_OK);
	assert_string_equal(f.name, "later");
	assert_null(f.mapping);
	assert_string_equal(f.jit_tier, "baseline");
	symbolizer__free(s);
}

/*
 * lazy_jit, as a capture uses it: the map is opened when the process is
 * tracked and read once, after the addresses are named, for those only.
 * Many entries (most of them not wanted), an address covered by an older
 * and a newer entry (the newer wins), one in no entry, one resolved
 * without being wanted (a pass of its own), lines the target appends to
 * the file it keeps after its path was deleted, and a planted file at the
 * path that is never read.  In another pid namespace (NSpid 4344 -> 8), so
 * the map is under the fake proc root.
 */
#define LAZY_ENTRIES 50000

static void test_lazy_jit(void **state)
{
	struct symbolizer_opts opts = { .lazy_jit = true };
	char root[4200], dir[4300], map[4400], status[256];
	const uint64_t base = 0x7f0000000000ull;
	uint64_t want[4];
	struct symbolizer *s;
	struct sym_frame f;
	const int pid = 4344;
	FILE *w;

	(void)state;
	fmt_ok(snprintf(root, sizeof(root), "%s/proc-lazy", tmpdir), sizeof(root));
	assert_int_equal(mkdir(root, 0755), 0);
	write_maps(root, pid, "7f0000000000-7f0001000000 r-xp 00000000 00:00 0 \n");
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d", root, pid), sizeof(dir));
	fmt_ok(snprintf(status, sizeof(status), "Name:\tworkerd\nTgid:\t4344\nNSpid:\t4344\t8\n"
			"Uid:\t%u\t%u\t%u\t%u\n", (unsigned)geteuid(), (unsigned)geteuid(),
			(unsigned)geteuid(), (unsigned)geteuid()), sizeof(status));
	write_file(dir, "status", status);
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d/root", root, pid), sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	fmt_ok(snprintf(dir, sizeof(dir), "%s/%d/root/tmp", root, pid), sizeof(dir));
	assert_int_equal(mkdir(dir, 0755), 0);
	fmt_ok(snprintf(map, sizeof(map), "%s/perf-8.map", dir), sizeof(map));
	/* the target's writer, kept open as V8 keeps its map */
	w = fopen(map, "w");
	assert_non_null(w);
	for (int i = 0; i < LAZY_ENTRIES; i++)
		fprintf(w, "%llx 40 JS:~f%d /srv/w.js:%d:1\n",
			(unsigned long long)(base + 0x100 * (uint64_t)i), i, i + 1);
	/* a newer entry over f7's start: it wins there, f7 shows past its end */
	fprintf(w, "%llx 10 JS:*f7 /srv/w.js:8:1\n", (unsigned long long)(base + 0x700));
	assert_int_equal(fflush(w), 0);

	opts.proc_root = root;
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__track(s, pid), 0);
	/* not read yet: preload and refresh leave a lazy map alone */
	assert_int_equal(symbolizer__preload(s, pid), 0);
	assert_int_equal(symbolizer__refresh(s, pid), 0);

	/* the path deleted, another file planted there; the target writes on */
	assert_int_equal(unlink(map), 0);
	write_file(dir, "perf-8.map", "7f0000000000 1000000 PLANTED_FRAME\n");
	fprintf(w, "%llx 20 JS:^late /srv/w.js:99:1\n",
		(unsigned long long)(base + 0x100 * LAZY_ENTRIES));
	assert_int_equal(fclose(w), 0);

	want[0] = base + 0x100 * 31337 + 8;
	want[1] = base + 0x704;			/* both f7 entries cover it */
	want[2] = base + 0x720;			/* only the older f7 */
	want[3] = base + 0x100 * LAZY_ENTRIES + 4;	/* appended after the delete */
	assert_int_equal(symbolizer__want_jit(s, pid, want, 4), 0);
	assert_int_equal(symbolizer__want_jit(s, 4343, want, 4), -ESRCH);

	assert_int_equal(symbolizer__resolve_user(s, pid, want[0], &f), 0);
	assert_int_equal(f.miss, SYM_OK);
	assert_string_equal(f.name, "f31337");
	assert_int_equal(f.line, 31338);
	assert_int_equal(symbolizer__resolve_user(s, pid, want[1], &f), 0);
	assert_string_equal(f.name, "f7");
	assert_string_equal(f.jit_tier, "turbofan");
	assert_int_equal(symbolizer__resolve_user(s, pid, want[2], &f), 0);
	assert_string_equal(f.name, "f7");
	assert_string_equal(f.jit_tier, "interpreted");
	assert_int_equal(symbolizer__resolve_user(s, pid, want[3], &f), 0);
	assert_string_equal(f.name, "late");

	/* not wanted, covered: found all the same, by a pass of its own */
	assert_int_equal(symbolizer__resolve_user(s, pid, base + 0x100 * 12 + 1, &f), 0);
	assert_int_equal(f.miss, SYM_OK);
	assert_string_equal(f.name, "f12");
	assert_string_equal(f.system_name, "JS:~f12 /srv/w.js:13:1");
	/* not wanted, in no entry: anonymous JIT memory, as without lazy_jit */
	assert_int_equal(symbolizer__resolve_user(s, pid, base + 0x100 * 5 + 0x80, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_ANON);
	/* the earlier answers hold after the extra pass */
	assert_int_equal(symbolizer__resolve_user(s, pid, want[0], &f), 0);
	assert_string_equal(f.name, "f31337");
	assert_int_equal(symbolizer__resolve_user(s, pid, want[1], &f), 0);
	assert_string_equal(f.jit_tier, "turbofan");
	symbolizer__free(s);
}

static void test_history(void **state)
{
	struct symbolizer_opts opts = { 0 };
	struct symbolizer *s;
	char root[4200], maps[16384];
	uint64_t main_off = nm_addr("main") - 0x1000;
	unsigned int id_a, id_b, id_e;
	struct sym_frame f;
	struct stat st;
	const int pid = 4242;

	(void)state;
	assert_int_equal(stat(fixture, &st), 0);
	fmt_ok(snprintf(root, sizeof(root), "%s/proc-history", tmpdir), sizeof(root));
	assert_int_equal(mkdir(root, 0755), 0);
	opts.proc_root = root;
	s = symbolizer__new(&opts);
	assert_non_null(s);

	snprintf(maps, sizeof(maps),
		 "1000000-1001000 r-xp 00001000 %s %llu %s\n"
		 "2000000-2010000 r-xp 00000000 00:00 0 \n"
		 "3000000-3001000 r-xp 00000000 08:01 77 /nonexistent/lib.so\n"
		 "this line is malformed\n"
		 "4000000-4001000 rw-p 00000000 00:00 0 \n"
		 "5000000-5001000 r-xp 00000000 00:00 0 [anon:v8 code]\n"
		 "6000000-6001000 r-xp 00000000 00:01 9 /memfd:jit (deleted)\n",
		 dev_of(fixture), (unsigned long long)st.st_ino, fixture);
	write_maps(root, pid, maps);
	assert_int_equal(symbolizer__track(s, 4243), -ESRCH);
	assert_int_equal(symbolizer__track(s, pid), 0);

	expect_user(s, pid, 0x1000000 + main_off, "main", NULL, 0);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x1000000 + main_off, &f), 0);
	id_a = f.mapping->id;
	assert_int_equal(f.mapping->offset, 0x1000);
	expect_miss(s, pid, 0x2000010, SYM_MISS_NO_PERFMAP, "[anon]");
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x2000010, &f), 0);
	id_b = f.mapping->id;
	expect_miss(s, pid, 0x3000010, SYM_MISS_BAD_FILE, "/nonexistent/lib.so");
	assert_true(has_note(s, "/nonexistent/lib.so", "not found"));
	expect_miss(s, pid, 0x4000010, SYM_MISS_NO_MAPPING, NULL);
	expect_miss(s, pid, 0x5000010, SYM_MISS_NO_PERFMAP, "[anon:v8 code]");
	expect_miss(s, pid, 0x6000010, SYM_MISS_NO_PERFMAP, "/memfd:jit");
	assert_int_equal(symbolizer__preload(s, pid), -ENOENT);

	/* The fixture unmapped, mapped again inside the anonymous region. */
	snprintf(maps, sizeof(maps),
		 "2000000-2010000 r-xp 00000000 00:00 0 \n"
		 "2008000-2009000 r-xp 00001000 %s %llu %s\n",
		 dev_of(fixture), (unsigned long long)st.st_ino, fixture);
	write_maps(root, pid, maps);
	assert_int_equal(symbolizer__refresh(s, pid), 0);
	expect_user(s, pid, 0x2008000 + main_off, "main", NULL, 0);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x2008000 + main_off, &f), 0);
	id_e = f.mapping->id;
	assert_int_not_equal(id_e, id_a);
	assert_int_not_equal(id_e, id_b);
	expect_miss(s, pid, 0x2007fff, SYM_MISS_NO_PERFMAP, "[anon]");
	expect_miss(s, pid, 0x2009000, SYM_MISS_NO_PERFMAP, "[anon]");
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x2009000, &f), 0);
	assert_int_equal(f.mapping->id, id_b);
	/* Unmapped since, still known. */
	expect_user(s, pid, 0x1000000 + main_off, "main", NULL, 0);
	assert_int_equal(symbolizer__preload(s, pid), 0);

	/* The anonymous region again: seen before, so it wins again, same id. */
	write_maps(root, pid, "2000000-2010000 r-xp 00000000 00:00 0 \n");
	assert_int_equal(symbolizer__refresh(s, pid), 0);
	assert_int_equal(symbolizer__resolve_user(s, pid, 0x2008000 + main_off, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NO_PERFMAP);
	assert_int_equal(f.mapping->id, id_b);
	/* track on a tracked pid is a refresh. */
	assert_int_equal(symbolizer__track(s, pid), 0);

	/* Exited: empty maps (zombie), then none at all; the snapshot stays. */
	write_maps(root, pid, "");
	assert_int_equal(symbolizer__refresh(s, pid), -ESRCH);
	fmt_ok(snprintf(maps, sizeof(maps), "%s/%d/maps", root, pid), sizeof(maps));
	assert_int_equal(unlink(maps), 0);
	assert_int_equal(symbolizer__refresh(s, pid), -ESRCH);
	expect_user(s, pid, 0x1000000 + main_off, "main", NULL, 0);
	expect_miss(s, pid, 0x2000010, SYM_MISS_NO_PERFMAP, "[anon]");
	symbolizer__free(s);
}

static const char *in_dir(char *buf, size_t len, const char *dir, const char *name)
{
	fmt_ok(snprintf(buf, len, "%s/%s", dir, name), len);
	return buf;
}

static unsigned long long inode_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return (unsigned long long)st.st_ino;
}

/* Files that are not usable ELF: a miss and one note each, no crash. */
static void test_bad_files(void **state)
{
	struct symbolizer_opts opts = { 0 };
	char root[4200], maps[32768], files[4200], p[4200];
	const char *const *notes;
	struct symbolizer *s;
	size_t nr_notes;
	const int pid = 77;

	(void)state;
	fmt_ok(snprintf(root, sizeof(root), "%s/proc-bad", tmpdir), sizeof(root));
	fmt_ok(snprintf(files, sizeof(files), "%s/files", tmpdir), sizeof(files));
	assert_int_equal(mkdir(root, 0755), 0);
	assert_int_equal(mkdir(files, 0755), 0);
	run("head -c 3000 '%s' > '%s/truncated'", fixture, files);
	write_file(files, "text", "just some text, not an ELF file\n");
	write_file(files, "empty", "");
	assert_int_equal(mkdir(in_dir(p, sizeof(p), files, "dir"), 0755), 0);

	snprintf(maps, sizeof(maps),
		 "1000000-1001000 r-xp 00000000 %s %llu %s/truncated\n"
		 "2000000-2001000 r-xp 00000000 %s %llu %s/text\n"
		 "3000000-3001000 r-xp 00000000 %s %llu %s/empty\n"
		 "4000000-4001000 r-xp 00000000 %s %llu %s/dir\n"
		 "5000000-5001000 r-xp 00001000 %s %llu %s\n"
		 "6000000-6001000 r-xp 00000000 %s %llu %s (deleted)\n"
		 "7000000-7001000 r-xp 00000000 00:00 0 [vdso]\n",
		 dev_of(files), inode_of(in_dir(p, sizeof(p), files, "truncated")), files,
		 dev_of(files), inode_of(in_dir(p, sizeof(p), files, "text")), files,
		 dev_of(files), inode_of(in_dir(p, sizeof(p), files, "empty")), files,
		 dev_of(files), inode_of(in_dir(p, sizeof(p), files, "dir")), files,
		 dev_of(fixture), inode_of(fixture) + 1, fixture,
		 dev_of(fixture), inode_of(fixture), fixture);
	write_maps(root, pid, maps);
	opts.proc_root = root;
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__track(s, pid), 0);

	in_dir(p, sizeof(p), files, "truncated");
	expect_miss(s, pid, 0x1000010, SYM_MISS_BAD_FILE, p);
	expect_miss(s, pid, 0x1000020, SYM_MISS_BAD_FILE, p);
	assert_true(has_note(s, p, "section headers past end of file"));
	in_dir(p, sizeof(p), files, "text");
	expect_miss(s, pid, 0x2000010, SYM_MISS_BAD_FILE, p);
	assert_true(has_note(s, p, "not an ELF file"));
	in_dir(p, sizeof(p), files, "empty");
	expect_miss(s, pid, 0x3000010, SYM_MISS_BAD_FILE, p);
	assert_true(has_note(s, p, "empty file"));
	in_dir(p, sizeof(p), files, "dir");
	expect_miss(s, pid, 0x4000010, SYM_MISS_BAD_FILE, p);
	assert_true(has_note(s, p, "a directory, not a regular file"));
	/* Right path, wrong inode: some other file, not the one mapped. */
	expect_miss(s, pid, 0x5000010, SYM_MISS_BAD_FILE, fixture);
	assert_true(has_note(s, fixture, "not the expected file"));
	/* Deleted, and no map_files/ to reach it through. */
	expect_miss(s, pid, 0x6000010, SYM_MISS_BAD_FILE, fixture);
	expect_miss(s, pid, 0x7000010, SYM_MISS_NOT_COVERED, "[vdso]");
	assert_true(symbolizer__preload(s, pid) < 0);

	/* Each note once, however often the file is hit. */
	nr_notes = symbolizer__notes(s, &notes);
	assert_true(nr_notes >= 5);
	expect_miss(s, pid, 0x1000030, SYM_MISS_BAD_FILE, in_dir(p, sizeof(p), files, "truncated"));
	assert_int_equal(symbolizer__track(s, pid), 0);
	assert_int_equal(symbolizer__notes(s, NULL), nr_notes);
	symbolizer__free(s);
}

static void test_kernel(void **state)
{
	static const char kallsyms[] = "ffffffff81000000 T _stext\n"
				       "ffffffff81000010 T start_kernel\n"
				       "ffffffff81000100 t helper\n"
				       "ffffffff81000200 T _etext\n"
				       "ffffffffc0001000 t mod_func\t[mod]\n";
	static const char hidden[] = "0000000000000000 T _stext\n"
				     "0000000000000000 T start_kernel\n";
	struct symbolizer_opts opts = { 0 };
	struct symbolizer *s;
	struct sym_frame f;
	char path[4200];

	(void)state;
	fmt_ok(snprintf(path, sizeof(path), "%s/kallsyms", tmpdir), sizeof(path));
	write_file(tmpdir, "kallsyms", kallsyms);
	opts.kallsyms_path = path;
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffff81000014ULL, &f), 0);
	assert_int_equal(f.miss, SYM_OK);
	assert_string_equal(f.name, "start_kernel");
	assert_string_equal(f.system_name, "start_kernel");
	assert_int_equal(f.symbol_offset, 4);
	assert_null(f.mapping);
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffffc0001004ULL, &f), 0);
	assert_string_equal(f.name, "mod_func");
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffff81000200ULL, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NOT_COVERED);
	assert_null(f.name);
	assert_int_equal(symbolizer__resolve_kernel(s, 0x1000, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NOT_COVERED);
	assert_int_equal(symbolizer__notes(s, NULL), 0);
	symbolizer__free(s);

	write_file(tmpdir, "kallsyms", hidden);
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffff81000014ULL, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NO_KALLSYMS);
	assert_null(f.name);
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffff81000014ULL, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NO_KALLSYMS);
	assert_int_equal(symbolizer__notes(s, NULL), 1);
	assert_true(has_note(s, path, "kptr_restrict"));
	symbolizer__free(s);

	fmt_ok(snprintf(path, sizeof(path), "%s/no-kallsyms", tmpdir), sizeof(path));
	s = symbolizer__new(&opts);
	assert_non_null(s);
	assert_int_equal(symbolizer__resolve_kernel(s, 0xffffffff81000014ULL, &f), 0);
	assert_int_equal(f.miss, SYM_MISS_NO_KALLSYMS);
	symbolizer__free(s);
}

static void test_miss_strings(void **state)
{
	int m;

	(void)state;
	for (m = SYM_OK; m <= SYM_MISS_NO_PERFMAP; m++)
		assert_true(strlen(sym_miss__str((enum sym_miss)m)) > 0);
	assert_string_equal(sym_miss__str((enum sym_miss)100), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_process),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_stripped_binary),
		cmocka_unit_test(test_history),
		cmocka_unit_test(test_perfmap),
		cmocka_unit_test(test_lazy_jit),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_miss_strings),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
