// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "user/capture/sample_store.h"

static void fill(struct isoprof_sample *s, __u32 pid, __u32 tid, const char *comm, int nk, int nu,
		 __u64 seed)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tid = tid;
	s->time_ns = seed * 1000;
	strncpy(s->comm, comm, sizeof(s->comm));
	s->kernel_stack_bytes = nk * 8;
	s->user_stack_bytes = nu * 8;
	for (int i = 0; i < nk; i++)
		s->kernel_stack[i] = 0xffffffff81000000ull + seed + i;
	for (int i = 0; i < nu; i++)
		s->user_stack[i] = 0x400000 + seed * 16 + i;
}

static void interns_stacks_and_comms(void **state)
{
	struct sample_store *st = sample_store__new();
	struct isoprof_sample s;
	struct stored_stack stack;
	const struct stored_sample *all;
	(void)state;

	assert_non_null(st);
	fill(&s, 10, 11, "main", 2, 3, 1);
	assert_int_equal(sample_store__add(st, &s), 0);
	assert_int_equal(sample_store__add(st, &s), 0);
	fill(&s, 10, 12, "worker", 2, 3, 1); /* same stack, other thread */
	assert_int_equal(sample_store__add(st, &s), 0);
	fill(&s, 20, 21, "main", 2, 3, 1); /* same addresses, other process */
	assert_int_equal(sample_store__add(st, &s), 0);
	fill(&s, 10, 11, "main", 0, 3, 1); /* user only */
	assert_int_equal(sample_store__add(st, &s), 0);

	assert_int_equal(sample_store__count(st), 5);
	assert_int_equal(sample_store__stack_count(st), 3);
	all = sample_store__samples(st);
	assert_int_equal(all[0].stack_id, all[1].stack_id);
	assert_int_equal(all[0].stack_id, all[2].stack_id);
	assert_int_not_equal(all[0].stack_id, all[3].stack_id);
	assert_int_not_equal(all[0].comm_id, all[2].comm_id);
	assert_int_equal(all[0].comm_id, all[3].comm_id);
	assert_string_equal(sample_store__comm(st, all[2].comm_id), "worker");

	sample_store__stack(st, all[4].stack_id, &stack);
	assert_int_equal(stack.nkernel, 0);
	assert_int_equal(stack.nuser, 3);
	assert_int_equal(stack.ips[0], 0x400000 + 16);
	sample_store__free(st);
}

static void survives_errors_and_full_stacks(void **state)
{
	struct sample_store *st = sample_store__new();
	struct isoprof_sample s;
	struct stored_stack stack;
	(void)state;

	fill(&s, 1, 1, "x", 0, 0, 0);
	s.kernel_stack_bytes = -14; /* -EFAULT from bpf_get_stack */
	s.user_stack_bytes = 1 << 30; /* nonsense: clamped */
	memset(s.comm, 'A', sizeof(s.comm)); /* no NUL */
	assert_int_equal(sample_store__add(st, &s), 0);
	sample_store__stack(st, 0, &stack);
	assert_int_equal(stack.nkernel, 0);
	assert_int_equal(stack.nuser, ISOPROF_MAX_STACK_DEPTH);
	assert_int_equal(strlen(sample_store__comm(st, 0)), ISOPROF_COMM_LEN);
	sample_store__free(st);
}

static void many_distinct_stacks(void **state)
{
	struct sample_store *st = sample_store__new();
	const struct stored_sample *all;
	struct stored_stack stack;
	struct isoprof_sample s;
	(void)state;

	for (int round = 0; round < 2; round++)
		for (__u64 i = 0; i < 20000; i++) {
			char comm[16];

			snprintf(comm, sizeof(comm), "t%llu", (unsigned long long)(i % 300));
			fill(&s, 7, 7, comm, 1, 20, i);
			assert_int_equal(sample_store__add(st, &s), 0);
		}
	assert_int_equal(sample_store__count(st), 40000);
	assert_int_equal(sample_store__stack_count(st), 20000);
	/* the second round finds what the first interned, across the tables' growth */
	all = sample_store__samples(st);
	for (size_t i = 0; i < 20000; i++) {
		assert_int_equal(all[i].stack_id, i);
		assert_int_equal(all[20000 + i].stack_id, i);
		assert_int_equal(all[20000 + i].comm_id, all[i].comm_id);
	}
	assert_string_equal(sample_store__comm(st, all[299].comm_id), "t299");
	assert_int_equal(all[300].comm_id, all[0].comm_id);
	sample_store__stack(st, 12345, &stack);
	assert_int_equal(stack.pid, 7);
	assert_int_equal(stack.nkernel, 1);
	assert_int_equal(stack.nuser, 20);
	assert_int_equal(stack.ips[0], 0xffffffff81000000ull + 12345);
	assert_int_equal(stack.ips[1], 0x400000 + 12345 * 16);
	sample_store__free(st);
}

/* user_walked and user_function as the sampler writes them, garbage past walked */
static void walk(struct isoprof_sample *s, __u32 walked, const __u64 *fns, size_t n)
{
	for (size_t i = 0; i < ISOPROF_MAX_JS_WALK; i++)
		s->user_function[i] = 0xdead0000 + i; /* ring memory is not zeroed */
	s->user_walked = walked;
	for (size_t i = 0; i < n; i++)
		s->user_function[i] = fns[i];
}

static void functions_are_part_of_the_stack(void **state)
{
	const __u64 a[] = { 0, 0x9b900001234, 0 }, b[] = { 0, 0x9b900005678, 0 };
	const __u64 zeros[] = { 0, 0, 0 };
	struct sample_store *st = sample_store__new();
	const struct stored_sample *all;
	struct stored_stack stack;
	struct isoprof_sample s;
	(void)state;

	assert_non_null(st);
	fill(&s, 10, 11, "main", 1, 5, 1);
	assert_int_equal(sample_store__add(st, &s), 0); /* 0: no layout */
	walk(&s, 3, a, 3);
	assert_int_equal(sample_store__add(st, &s), 0); /* 1: same ips, function a */
	walk(&s, 3, b, 3);
	assert_int_equal(sample_store__add(st, &s), 0); /* 2: function b */
	walk(&s, 2, a, 2);
	assert_int_equal(sample_store__add(st, &s), 0); /* 3: a again, walked less */
	walk(&s, 3, zeros, 3);
	assert_int_equal(sample_store__add(st, &s), 0); /* 4: walked, no JS frame */
	walk(&s, 1000, (const __u64[]){ 0, a[1], 0, 0, 0 }, 5);
	assert_int_equal(sample_store__add(st, &s), 0); /* 5: walked past nuser: clamped */

	all = sample_store__samples(st);
	assert_int_equal(sample_store__stack_count(st), 3);
	assert_int_not_equal(all[0].stack_id, all[1].stack_id);
	assert_int_not_equal(all[1].stack_id, all[2].stack_id);
	assert_int_equal(all[3].stack_id, all[1].stack_id);
	assert_int_equal(all[4].stack_id, all[0].stack_id);

	sample_store__stack(st, all[0].stack_id, &stack);
	assert_null(stack.functions);
	sample_store__stack(st, all[1].stack_id, &stack);
	assert_non_null(stack.functions);
	assert_int_equal(stack.nuser, 5);
	assert_int_equal(stack.ips[stack.nkernel], 0x400000 + 16);
	assert_int_equal(stack.functions[0], 0);
	assert_int_equal(stack.functions[1], a[1]);
	for (int i = 2; i < 5; i++) /* past the walk: 0, not what the ring held */
		assert_int_equal(stack.functions[i], 0);
	sample_store__stack(st, all[2].stack_id, &stack);
	assert_int_equal(stack.functions[1], b[1]);

	/* past nuser, and past ISOPROF_MAX_JS_WALK: neither read */
	fill(&s, 10, 11, "main", 0, 2, 2);
	walk(&s, 3, (const __u64[]){ 7, 8, 9 }, 3);
	assert_int_equal(sample_store__add(st, &s), 0);
	sample_store__stack(st, sample_store__samples(st)[6].stack_id, &stack);
	assert_int_equal(stack.nuser, 2);
	assert_int_equal(stack.functions[0], 7);
	assert_int_equal(stack.functions[1], 8);
	fill(&s, 10, 11, "main", 0, ISOPROF_MAX_STACK_DEPTH, 3);
	walk(&s, ISOPROF_MAX_STACK_DEPTH, NULL, 0);
	assert_int_equal(sample_store__add(st, &s), 0);
	sample_store__stack(st, sample_store__samples(st)[7].stack_id, &stack);
	assert_non_null(stack.functions);
	assert_int_equal(stack.functions[ISOPROF_MAX_JS_WALK - 1],
			 0xdead0000 + ISOPROF_MAX_JS_WALK - 1);
	for (int i = ISOPROF_MAX_JS_WALK; i < ISOPROF_MAX_STACK_DEPTH; i++)
		assert_int_equal(stack.functions[i], 0);
	sample_store__free(st);
}

/* A stack without functions takes no more room than before they existed. */
static void no_room_for_absent_functions(void **state)
{
	struct sample_store *st = sample_store__new();
	struct stored_stack first, second, third;
	struct isoprof_sample s;
	(void)state;

	fill(&s, 1, 1, "x", 2, 3, 1);
	assert_int_equal(sample_store__add(st, &s), 0);
	fill(&s, 1, 1, "x", 2, 3, 2);
	walk(&s, 3, (const __u64[]){ 0, 0, 0x11 }, 3);
	assert_int_equal(sample_store__add(st, &s), 0);
	fill(&s, 1, 1, "x", 2, 3, 3);
	assert_int_equal(sample_store__add(st, &s), 0);
	/* the stacks' words are consecutive in one array */
	sample_store__stack(st, 0, &first);
	sample_store__stack(st, 1, &second);
	sample_store__stack(st, 2, &third);
	assert_int_equal(second.ips - first.ips, 2 + 3);
	assert_int_equal(third.ips - second.ips, 2 + 3 + 3);
	assert_ptr_equal(second.functions, second.ips + 5);
	assert_null(third.functions);
	sample_store__free(st);
}

/* Many stacks that differ only by their functions, across the tables' growth. */
static void many_function_variants(void **state)
{
	struct sample_store *st = sample_store__new();
	const struct stored_sample *all;
	struct stored_stack stack;
	struct isoprof_sample s;
	(void)state;

	for (int round = 0; round < 2; round++)
		for (__u64 i = 0; i < 5000; i++) {
			fill(&s, 7, 7, "w", 0, 10, 1);
			walk(&s, 10, (const __u64[]){ 0, 0x9b900000001 + 2 * i }, 2);
			assert_int_equal(sample_store__add(st, &s), 0);
		}
	assert_int_equal(sample_store__stack_count(st), 5000);
	all = sample_store__samples(st);
	for (size_t i = 0; i < 5000; i++)
		assert_int_equal(all[5000 + i].stack_id, all[i].stack_id);
	sample_store__stack(st, all[4321].stack_id, &stack);
	assert_int_equal(stack.functions[1], 0x9b900000001 + 2 * 4321);
	sample_store__free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interns_stacks_and_comms),
		cmocka_unit_test(survives_errors_and_full_stacks),
		cmocka_unit_test(many_distinct_stacks),
		cmocka_unit_test(functions_are_part_of_the_stack),
		cmocka_unit_test(no_room_for_absent_functions),
		cmocka_unit_test(many_function_variants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
