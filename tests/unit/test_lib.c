// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for lib/: hashing, growing arrays, the index table (with
 * deletions), procfs parsers, whole-file reads and atomic writes, gzip
 * both ways, and JSON text that is not UTF-8.
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
#include <unistd.h>

#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/gzip.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "lib/utf8.h"

static void test_hash(void **state)
{
	(void)state;
	/* FNV-1a 64 reference values (Fowler, Noll, Vo test suite). */
	assert_true(hash__str(HASH_SEED, "") == 0xcbf29ce484222325ULL);
	assert_true(hash__str(HASH_SEED, "a") == 0xaf63dc4c8601ec8cULL);
	assert_true(hash__str(HASH_SEED, "foobar") == 0x85944171f73967e8ULL);
	assert_true(hash__bytes(HASH_SEED, "foobar", 6) == hash__str(HASH_SEED, "foobar"));
	/* fmix64 is a bijection with 0 as a fixed point; aligned inputs spread. */
	assert_true(hash__mix64(0) == 0);
	assert_true((hash__mix64(0x1000) & 0xfff) != (hash__mix64(0x2000) & 0xfff));
	assert_true(hash__word(HASH_SEED, 1) != hash__word(HASH_SEED, 2));
}

static void test_array(void **state)
{
	int *a = NULL;
	size_t cap = 0;

	(void)state;
	assert_int_equal(array_grow(&a, &cap, 1), 0);
	assert_int_equal(cap, ARRAY_MIN_CAP);
	a[0] = 7;
	assert_int_equal(array_grow(&a, &cap, 100), 0);
	assert_int_equal(cap, 128);
	assert_int_equal(a[0], 7);
	/* Room already: nothing moves. */
	int *before = a;
	assert_int_equal(array_grow(&a, &cap, 128), 0);
	assert_ptr_equal(a, before);
	/* An impossible size fails and leaves the array alone. */
	assert_int_equal(array__grow((void **)&a, &cap, SIZE_MAX / 2 + 2, sizeof(*a)), -ENOMEM);
	assert_int_equal(cap, 128);
	assert_int_equal(a[0], 7);
	free(a);
}

struct keys {
	uint64_t *k;
	size_t n;
};

static bool key_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct keys *ks = ctx;

	return ks->k[index] == *(const uint64_t *)key;
}

/* A deliberately poor hash, so that clusters form and removal must shift them. */
static uint32_t poor_hash(uint64_t k)
{
	return (uint32_t)(k % 7);
}

static void test_index_table(void **state)
{
	struct index_table t = { 0 };
	uint64_t store[2000] = { 0 };
	struct keys ks = { store, 0 };
	size_t slot;
	long i;

	(void)state;
	assert_int_equal(index_table__lookup(&t, 1, key_eq, &ks, &store[0], NULL), -1);
	for (uint64_t k = 0; k < 2000; k++) {
		assert_int_equal(index_table__reserve(&t), 0);
		assert_int_equal(index_table__lookup(&t, poor_hash(k), key_eq, &ks, &k, &slot), -1);
		store[ks.n] = k;
		index_table__set(&t, slot, poor_hash(k), (uint32_t)ks.n++);
	}
	assert_int_equal(t.count, 2000);
	/* Remove every third key; the others stay reachable past the holes. */
	for (uint64_t k = 0; k < 2000; k += 3) {
		i = index_table__lookup(&t, poor_hash(k), key_eq, &ks, &k, &slot);
		assert_int_equal(i, (long)k);
		index_table__remove(&t, slot);
	}
	for (uint64_t k = 0; k < 2000; k++) {
		i = index_table__lookup(&t, poor_hash(k), key_eq, &ks, &k, NULL);
		assert_int_equal(i, k % 3 ? (long)k : -1);
	}
	assert_int_equal(t.count, 2000 - 667);
	assert_true(index_table__bytes(&t) > 0);
	index_table__clear(&t);
	assert_int_equal(t.count, 0);
	assert_int_equal(index_table__lookup(&t, poor_hash(1), key_eq, &ks, &store[1], NULL), -1);
	index_table__release(&t);
}

static void test_procfs_parsers(void **state)
{
	char comm[PROCFS_COMM_LEN + 1], st;
	unsigned long flags;
	pid_t nspid;

	(void)state;
	assert_int_equal(procfs__parse_nspid("Name:\tx\nNSpid:\t4781\t12\t3\nTgid:\t1\n", &nspid), 0);
	assert_int_equal(nspid, 3);
	assert_int_equal(procfs__parse_nspid("Name:\tx\nPid:\t5\n", &nspid), -ENOENT);
	assert_int_equal(procfs__parse_nspid("NSpid:\tx\n", &nspid), -EINVAL);
	assert_int_equal(procfs__parse_nspid("NSpid:\t\n", &nspid), -EINVAL);

	/* A comm with blanks and parentheses; flags is field 9. */
	assert_int_equal(procfs__parse_stat("42 (a (b) c) S 1 42 42 0 -1 4194560 0 0", comm, &st,
					    &flags), 0);
	assert_string_equal(comm, "a (b) c");
	assert_int_equal(st, 'S');
	assert_int_equal(flags, 4194560);
	assert_int_equal(procfs__parse_stat("1 (zz) Z", NULL, &st, NULL), 0);
	assert_int_equal(st, 'Z');
	assert_int_equal(procfs__parse_stat("1 (zz) S 1 2", NULL, NULL, &flags), -EINVAL);
	assert_int_equal(procfs__parse_stat("no parens", comm, &st, &flags), -EINVAL);
	assert_int_equal(procfs__parse_stat("1 (abcdefghijklmnopqrstuvwxyz) R", comm, NULL, NULL), 0);
	assert_int_equal(strlen(comm), PROCFS_COMM_LEN);

	/* starttime is field 22, counted after the comm whatever it holds */
	{
		unsigned long long ticks = 0;
		uint64_t start, tick, now;
		struct timespec ts;

		assert_int_equal(procfs__parse_starttime("7 (a) b) c) S 1 7 7 0 -1 4194560 0 0 0 0 "
							 "1 2 0 0 20 0 1 0 123456 9 10", &ticks), 0);
		assert_int_equal(ticks, 123456);
		assert_int_equal(procfs__parse_starttime("7 (a) S 1 7 7 0 -1 1 0 0", &ticks), -EINVAL);
		assert_int_equal(procfs__parse_starttime("7 (a) S 1 7 7 0 -1 1 0 0 0 0 1 2 0 0 20 "
							 "0 1 0 x 9", &ticks), -EINVAL);
		assert_int_equal(procfs__parse_starttime("no parens", &ticks), -EINVAL);
		/* this process started before now, and not before the boot */
		assert_int_equal(procfs__start_realtime(getpid(), &start, &tick), 0);
		assert_true(tick > 0);
		clock_gettime(CLOCK_REALTIME, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		assert_true(start <= now + tick && start > now - 3600ull * 1000000000ull);
		assert_int_equal(procfs__start_realtime(999999999, &start, &tick), -ESRCH);
		/* a file changed before it, or within the margin, is not after it */
		ts.tv_sec = (time_t)(start / 1000000000ull);
		ts.tv_nsec = (long)(start % 1000000000ull);
		assert_false(procfs__after_start(&ts, start, tick));
		ts.tv_sec += 1;
		assert_true(procfs__after_start(&ts, start, tick));
	}

	assert_true(procfs__alive(getpid()));
	assert_false(procfs__alive(999999999));
	assert_int_equal(procfs__comm(getpid(), comm, sizeof(comm)), 0);
	assert_true(strlen(comm) > 0 && !strchr(comm, '\n'));

	long v = -1;

	assert_int_equal(procfs__sysctl_int("/proc/sys/kernel/pid_max", &v), 0);
	assert_true(v >= 301);
	assert_int_equal(procfs__sysctl_int("/proc/self/comm", &v), -EINVAL);
	assert_int_equal(procfs__sysctl_int("/proc/sys/kernel/no_such_sysctl", &v), -ENOENT);
}

/* What V8 would take byte for byte: well-formed UTF-8 only. */
static void test_utf8_valid(void **state)
{
	(void)state;
	assert_true(utf8__valid("", 0));
	assert_true(utf8__valid("plain\0with a NUL", 16));
	assert_true(utf8__valid("\xef\xbb\xbf\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80", 12));
	assert_false(utf8__valid("bad \xff\xfe", 6));
	assert_false(utf8__valid("\xc0\xaf", 2));	/* overlong '/' */
	assert_false(utf8__valid("\xed\xa0\x80", 3));	/* a surrogate */
	assert_false(utf8__valid("\xf4\x90\x80\x80", 4));	/* past U+10FFFF */
	assert_false(utf8__valid("cut \xe4\xb8", 6));
}

static void test_fileio(void **state)
{
	char dir[] = "/tmp/isoprof-lib.XXXXXX", path[256], cmd[300];
	struct atomic_file af;
	uint8_t *data;
	size_t len;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.txt", dir);

	assert_int_equal(fileio__write_atomic(path, "hello\n", 6, 0644), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(fileio__read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, 6);
	assert_memory_equal(data, "hello\n", 6);
	assert_int_equal(data[6], 0);
	free(data);
	assert_int_equal(fileio__read_all(path, 5, &data, &len), -EFBIG);
	assert_null(data);
	assert_int_equal(fileio__read_all(dir, 0, &data, &len), -EISDIR);

	/* An aborted write leaves the old file and no temporary file. */
	assert_int_equal(atomic_file__open(&af, path, 0644), 0);
	fputs("half", af.f);
	atomic_file__abort(&af);
	assert_int_equal(fileio__read_all(path, 0, &data, &len), 0);
	assert_int_equal(len, 6);
	free(data);
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", dir);
	assert_int_equal(system(cmd), 0);

	assert_int_equal(fileio__write_atomic(dir, "x", 1, 0644) < 0, 1);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_gzip(void **state)
{
	static const uint8_t text[] = "pprof pprof pprof pprof pprof pprof";
	uint8_t *gz, *back, *two;
	size_t gzlen, backlen;
	const char *why;

	(void)state;
	assert_int_equal(gzip__compress(text, sizeof(text), &gz, &gzlen), 0);
	assert_true(gzip__is_gzip(gz, gzlen));
	assert_int_equal(gzip__decompress(gz, gzlen, 1 << 20, &back, &backlen, &why), 0);
	assert_int_equal(backlen, sizeof(text));
	assert_memory_equal(back, text, sizeof(text));
	free(back);
	assert_int_equal(gzip__decompress(gz, gzlen, 10, &back, &backlen, &why), -EFBIG);
	assert_int_equal(gzip__decompress(gz, gzlen - 3, 1 << 20, &back, &backlen, &why),
			 -EBADMSG);
	assert_non_null(why);

	/* Two members concatenate; junk after one does not. */
	two = malloc(gzlen * 2 + 1);
	memcpy(two, gz, gzlen);
	memcpy(two + gzlen, gz, gzlen);
	assert_int_equal(gzip__decompress(two, gzlen * 2, 1 << 20, &back, &backlen, &why), 0);
	assert_int_equal(backlen, 2 * sizeof(text));
	free(back);
	two[gzlen] = 'x';
	assert_int_equal(gzip__decompress(two, gzlen + 1, 1 << 20, &back, &backlen, &why),
			 -EBADMSG);
	assert_string_equal(why, "invalid data after stream");
	free(two);
	free(gz);
}

static void test_json(void **state)
{
	struct json_object *o = json_object_new_object(), *v;
	const char *s;
	int64_t n;

	(void)state;
	json_object_object_add(o, "ok", json__text("caf\xc3\xa9 a/b"));
	json_object_object_add(o, "bad", json__text("x\xff" "y\xc3"));
	json_object_object_add(o, "n", json_object_new_int64(-5));
	json_object_object_add(o, "null", json__text(NULL));
	s = json__dump(o, false, NULL);
	assert_string_equal(s, "{\"ok\":\"caf\xc3\xa9 a/b\",\"bad\":\"x\xef\xbf\xbdy\xef\xbf\xbd\","
			       "\"n\":-5,\"null\":null}");
	assert_true(json__int64(json__member(o, "n"), &n));
	assert_int_equal(n, -5);
	assert_false(json__int64(json__member(o, "ok"), &n));
	assert_null(json__str(json__member(o, "n")));
	assert_null(json__member(o, "null"));
	assert_null(json__member(o, "absent"));
	v = json__member(o, "ok");
	assert_null(json__member(v, "x"));
	json_object_put(o);
}

static int three_out(struct json_out *out, const void *ctx)
{
	const char *name = ctx;

	return json_out__raw(out, "[", 1) | json_out__int(out, -3) | json_out__raw(out, ",", 1) |
	       json_out__text(out, name) | json_out__raw(out, ",", 1) |
	       json_out__text(out, NULL) | json_out__raw(out, "]", 1);
}

/* A streamed part lands in place, its strings escaped as json-c escapes them. */
static void test_json_part(void **state)
{
	struct json_object *o = json_object_new_object();

	(void)state;
	json__put(o, "a", json_object_new_int(1));
	json__put(o, "part", json__part(three_out, "q\"\xff/"));
	json__put(o, "b", json__text("z"));
	assert_string_equal(json__dump(o, false, NULL),
			    "{\"a\":1,\"part\":[-3,\"q\\\"\xef\xbf\xbd/\",null],\"b\":\"z\"}");
	/* Pretty printing around a part keeps the part's own text. */
	assert_non_null(strstr(json__dump(o, true, NULL), "[-3,\"q\\\"\xef\xbf\xbd/\",null]"));
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_array),
		cmocka_unit_test(test_index_table),
		cmocka_unit_test(test_procfs_parsers),
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_fileio),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_part),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
