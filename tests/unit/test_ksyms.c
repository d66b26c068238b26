// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for symbolize/ksyms. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/ksyms.h"

static const char kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 t __pi_srso_alias_untrain_ret\n"
	"ffffffff81000100 t local_func\n"
	"ffffffff81000200 W weak_func\n"
	"ffffffff81000300 T last_text\n"
	"ffffffff81000400 T _etext\n"
	"ffffffff81200000 D some_data\n"
	"ffffffff81300000 r some_rodata\n"
	"ffffffff83780000 T _sinittext\n"
	"ffffffff83780010 t init_func\n"
	"ffffffff83780100 T _einittext\n"
	"ffffffff84000000 B __bss_start\n"
	"ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc0a01000 t ext4_foo\t[ext4]\n"
	"ffffffffc0a01080 T ext4_bar\t[ext4]\n"
	"ffffffffc0a02000 d ext4_data\t[ext4]\n"
	"ffffffffc0b00000 t xfs_first\t[xfs]\n";

static struct ksyms *parse(const char *text)
{
	struct ksyms *ks = ksyms__parse(text, strlen(text));

	assert_non_null(ks);
	return ks;
}

static void expect_sym(const struct ksyms *ks, uint64_t addr, const char *name,
		       const char *module)
{
	const struct ksym *k = ksyms__find(ks, addr);

	if (!k)
		fail_msg("%#llx: no symbol, expected %s", (unsigned long long)addr, name);
	assert_string_equal(k->name, name);
	if (module)
		assert_string_equal(k->module, module);
	else
		assert_null(k->module);
}

static void test_lookup(void **state)
{
	struct ksyms *ks = parse(kallsyms);

	(void)state;
	assert_int_equal(ksyms__malformed(ks), 0);
	assert_null(ksyms__find(ks, 0));
	assert_null(ksyms__find(ks, 0xffffffff80ffffffULL));
	/* Aliases: the global name without underscores wins. */
	expect_sym(ks, 0xffffffff81000000ULL, "srso_alias_untrain_ret", NULL);
	expect_sym(ks, 0xffffffff810000ffULL, "srso_alias_untrain_ret", NULL);
	expect_sym(ks, 0xffffffff81000100ULL, "local_func", NULL);
	expect_sym(ks, 0xffffffff81000250ULL, "weak_func", NULL);
	expect_sym(ks, 0xffffffff810003ffULL, "last_text", NULL);
	/* Past the end of kernel text: data, rodata, the gap before init. */
	assert_null(ksyms__find(ks, 0xffffffff81000400ULL));
	assert_null(ksyms__find(ks, 0xffffffff81200010ULL));
	assert_null(ksyms__find(ks, 0xffffffff83000000ULL));
	expect_sym(ks, 0xffffffff83780000ULL, "_sinittext", NULL);
	expect_sym(ks, 0xffffffff83780020ULL, "init_func", NULL);
	assert_null(ksyms__find(ks, 0xffffffff83780100ULL));
	/* Modules, bounded by their next symbol or the tail limit. */
	expect_sym(ks, 0xffffffffc0201010ULL, "ftrace_trampoline", "__builtin__ftrace");
	assert_null(ksyms__find(ks, 0xffffffffc0201000ULL + KSYMS_TAIL_MAX));
	expect_sym(ks, 0xffffffffc0a01000ULL, "ext4_foo", "ext4");
	expect_sym(ks, 0xffffffffc0a01fffULL, "ext4_bar", "ext4");
	assert_null(ksyms__find(ks, 0xffffffffc0a02000ULL));
	expect_sym(ks, 0xffffffffc0b00000ULL + KSYMS_TAIL_MAX - 1, "xfs_first", "xfs");
	assert_null(ksyms__find(ks, 0xffffffffc0b00000ULL + KSYMS_TAIL_MAX));
	assert_null(ksyms__find(ks, UINT64_MAX));

	assert_int_equal(ksyms__count(ks), 10);
	assert_null(ksyms__entry(ks, 10));
	assert_true(ksyms__entry(ks, 0)->addr <= ksyms__entry(ks, 1)->addr);
	ksyms__free(ks);
}

static void test_unsorted_and_malformed(void **state)
{
	static const char text[] =
		"ffffffff81000300 T c\n"
		"not a line\n"
		"ffffffff81000100 T a\n"
		"ffffffff81000200\n"
		"ffffffff81000200 T\n"
		"ffffffff81000200 T \n"
		"zzzz T bad_addr\n"
		"10000000000000000 T overflow\n"
		"ffffffff81000250 t mod_unclosed\t[mod\n"
		"ffffffff81000260 t mod_empty\t[]\n"
		"ffffffff81000270 t mod_junk\tjunk\n"
		"\n"
		"ffffffff81000200 t b";
	struct ksyms *ks = parse(text);

	(void)state;
	assert_int_equal(ksyms__malformed(ks), 9);
	assert_int_equal(ksyms__count(ks), 3);
	expect_sym(ks, 0xffffffff81000150ULL, "a", NULL);
	expect_sym(ks, 0xffffffff81000250ULL, "b", NULL);
	expect_sym(ks, 0xffffffff81000300ULL, "c", NULL);
	ksyms__free(ks);
}

static void test_hidden_addresses(void **state)
{
	static const char text[] = "0000000000000000 T _stext\n"
				   "0000000000000000 T start_kernel\n"
				   "0000000000000000 t foo\t[mod]\n";

	(void)state;
	errno = 0;
	assert_null(ksyms__parse(text, strlen(text)));
	assert_int_equal(errno, EPERM);
}

static void test_empty_and_no_text(void **state)
{
	static const char data_only[] = "ffffffff82000000 D d1\nffffffff82000010 b b1\n";

	(void)state;
	errno = 0;
	assert_null(ksyms__parse("", 0));
	assert_int_equal(errno, ENODATA);
	errno = 0;
	assert_null(ksyms__parse("\n\n", 2));
	assert_int_equal(errno, ENODATA);
	errno = 0;
	assert_null(ksyms__parse(data_only, strlen(data_only)));
	assert_int_equal(errno, ENODATA);
	errno = 0;
	assert_null(ksyms__parse("garbage\n", 8));
	assert_int_equal(errno, ENODATA);
	ksyms__free(NULL);
}

static void test_nul_and_huge_line(void **state)
{
	static const char with_nul[] = "ffffffff81000000 T a\0b\nffffffff81000100 T c\n";
	size_t n = 1 << 20;
	char *text = malloc(n + 64), *p;
	struct ksyms *ks;

	(void)state;
	ks = ksyms__parse(with_nul, sizeof(with_nul) - 1);
	assert_non_null(ks);
	assert_int_equal(ksyms__count(ks), 1);
	assert_int_equal(ksyms__malformed(ks), 1);
	ksyms__free(ks);

	assert_non_null(text);
	p = text + sprintf(text, "ffffffff81000000 T ");
	memset(p, 'x', n);
	p += n;
	p += sprintf(p, "\nffffffff81000100 T y\n");
	ks = ksyms__parse(text, (size_t)(p - text));
	assert_non_null(ks);
	assert_int_equal(ksyms__count(ks), 2);
	assert_int_equal(strlen(ksyms__find(ks, 0xffffffff81000000ULL)->name), n);
	ksyms__free(ks);
	free(text);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/test_ksyms.XXXXXX";
	struct ksyms *ks;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, kallsyms, strlen(kallsyms)), (ssize_t)strlen(kallsyms));
	close(fd);
	ks = ksyms__load(path);
	assert_non_null(ks);
	expect_sym(ks, 0xffffffffc0a01080ULL, "ext4_bar", "ext4");
	ksyms__free(ks);
	unlink(path);

	errno = 0;
	assert_null(ksyms__load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
}

/* The real file, when readable with addresses: a sanity check, not a spec. */
static void test_real_kallsyms(void **state)
{
	struct ksyms *ks;
	const struct ksym *k;

	(void)state;
	ks = ksyms__load("/proc/kallsyms");
	if (!ks) {
		assert_true(errno == EPERM || errno == EACCES || errno == ENOENT);
		skip();
	}
	assert_true(ksyms__count(ks) > 1000);
	assert_int_equal(ksyms__malformed(ks), 0);
	k = ksyms__entry(ks, ksyms__count(ks) / 2);
	assert_ptr_equal(ksyms__find(ks, k->addr), k);
	ksyms__free(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_unsorted_and_malformed),
		cmocka_unit_test(test_hidden_addresses),
		cmocka_unit_test(test_empty_and_no_text),
		cmocka_unit_test(test_nul_and_huge_line),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_real_kallsyms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
