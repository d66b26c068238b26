/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The record of the floor sampler (bench/floor.bpf.c): only what a stack
 * profiler cannot do without, the two stacks at isoprof's depth and whose
 * they are.  Shared by the BPF program and its loader (bench/floor.c).
 */
#ifndef ISOPROF_BENCH_FLOOR_H
#define ISOPROF_BENCH_FLOOR_H

#include "isoprof.h"

struct floor_sample {
	__u32 pid;
	__u32 tid;
	__s32 kernel_stack_bytes;
	__s32 user_stack_bytes;
	__u64 kernel_stack[ISOPROF_MAX_STACK_DEPTH];
	__u64 user_stack[ISOPROF_MAX_STACK_DEPTH];
};

_Static_assert(sizeof(struct floor_sample) == 16 + 2 * 8 * ISOPROF_MAX_STACK_DEPTH,
	       "floor_sample layout");

#endif /* ISOPROF_BENCH_FLOOR_H */
