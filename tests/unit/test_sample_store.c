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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(interns_stacks_and_comms),
		cmocka_unit_test(survives_errors_and_full_stacks),
		cmocka_unit_test(many_distinct_stacks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
