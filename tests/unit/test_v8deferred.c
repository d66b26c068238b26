// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8deferred: the main-body address that Maglev's
 * deferred allocation code jumps back to, from the bytes at the runtime
 * call's return address.  The blocks are copied from workerd's V8 15.8
 * (fetch's Maglev OSR code in tests/fixtures/heap/instr.js).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdint.h>
#include <string.h>

#include "symbolize/v8deferred.h"

/* mov %rax,%rdi; pop r15 r12 r11 r9 r8 rbx rdx rcx rax; jmp -0x644 */
static const uint8_t with_mov[] = {
	0x48, 0x8b, 0xf8, 0x41, 0x5f, 0x41, 0x5c, 0x41, 0x5b, 0x41, 0x59, 0x41, 0x58,
	0x5b, 0x5a, 0x59, 0x58, 0xe9, 0xbc, 0xf9, 0xff, 0xff, 0xcc, 0x8b, 0xc9,
};

/* no mov (the result stays in rax): pop r15 r12 r11 r9 r8 rdi rsi rbx rdx; jmp */
static const uint8_t pops_only[] = {
	0x41, 0x5f, 0x41, 0x5c, 0x41, 0x5b, 0x41, 0x59, 0x41, 0x58, 0x5f, 0x5e,
	0x5b, 0x5a, 0xe9, 0xc4, 0xf8, 0xff, 0xff, 0xcc,
};

static void test_maglev_blocks(void **state)
{
	(void)state;
	/* as objdump gave them: 0x55fe75983e28 -> 0x55fe759837fa */
	assert_int_equal(v8deferred__continuation(with_mov, sizeof(with_mov), 0x55fe75983e28),
			 0x55fe759837fa);
	assert_int_equal(v8deferred__continuation(pops_only, sizeof(pops_only), 0x55fe75983af1),
			 0x55fe759833c8);
}

static void test_not_a_block(void **state)
{
	/* a forward jump, a call, code cut short, a second mov: not the block */
	static const uint8_t forward[] = { 0x5b, 0xe9, 0x10, 0x00, 0x00, 0x00 };
	static const uint8_t call[] = { 0x5b, 0xe8, 0x10, 0xf0, 0xff, 0xff };
	static const uint8_t two_movs[] = { 0x48, 0x8b, 0xf8, 0x48, 0x8b, 0xc8, 0xeb, 0xf0 };
	(void)state;

	assert_int_equal(v8deferred__continuation(forward, sizeof(forward), 0x1000000), 0);
	assert_int_equal(v8deferred__continuation(call, sizeof(call), 0x1000000), 0);
	assert_int_equal(v8deferred__continuation(with_mov, 19, 0x55fe75983e28), 0);
	assert_int_equal(v8deferred__continuation(two_movs, sizeof(two_movs), 0x1000000), 0);
	assert_int_equal(v8deferred__continuation(with_mov, 0, 0x55fe75983e28), 0);
}

static void test_short_jump_and_bound(void **state)
{
	/* pop rbx; jmp -0x20 (eb e0) */
	static const uint8_t short_jmp[] = { 0x5b, 0xeb, 0xe0 };
	/* pop rbx; jmp -0x200000: farther back than any code object */
	static const uint8_t far[] = { 0x5b, 0xe9, 0x00, 0x00, 0xe0, 0xff };
	(void)state;

	assert_int_equal(v8deferred__continuation(short_jmp, sizeof(short_jmp), 0x1000),
			 0x1000 + 3 - 0x20);
	assert_int_equal(v8deferred__continuation(far, sizeof(far), 0x10000000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_maglev_blocks),
		cmocka_unit_test(test_not_a_block),
		cmocka_unit_test(test_short_jump_and_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
