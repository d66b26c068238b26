// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * CPU sampler: runs on every cpu-clock tick of every CPU, keeps the ticks
 * that land on a target process and sends one record per sample to
 * userspace through a ring buffer (see isoprof.h for why not a stack map).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "isoprof.h"
#include "isolate.bpf.h"
#include "shared_maps.bpf.h"
#include "sample.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* x86-64 and arm64 kernels live in the upper half of the address space. */
static __always_inline bool in_kernel(struct bpf_perf_event_data *ctx)
{
	return (__s64)PT_REGS_IP(&ctx->regs) < 0;
}

/*
 * The user frame pointer at the tick.  A tick in the kernel (a syscall, a
 * page fault) has the user registers where the kernel saved them on entry,
 * which is also where bpf_get_stack() starts the user stack from.  arm64
 * keeps its frame record and link register differently: not walked there.
 */
static __always_inline __u64 user_frame_pointer(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	struct pt_regs *regs;

	if (!in_kernel(ctx))
		return PT_REGS_FP(&ctx->regs);
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	return PT_REGS_FP_CORE(regs);
#else
	return 0;
#endif
}

SEC("perf_event")
int isoprof_sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct isoprof_target *target;
	struct isoprof_counters *cnt;
	struct isoprof_sample *s;
	long n;

	s = sample_reserve(pid_tgid >> 32, &target, &cnt);
	if (!s)
		return 0;
	sample_head(s, target, pid_tgid);

	/* A user-mode tick has no kernel stack; asking costs 0.25 us. */
	n = in_kernel(ctx) ? bpf_get_stack(ctx, s->kernel_stack, SAMPLE_STACK_BYTES, 0) : 0;
	s->kernel_stack_bytes = n;
	if (n < 0)
		cnt->kernel_stack_errors++;
	else if (n == SAMPLE_STACK_BYTES) {
		s->flags |= ISOPROF_SAMPLE_KERNEL_TRUNCATED;
		cnt->kernel_truncated++;
	}

	n = sample_user_stack(ctx, s, cnt);

	/* ring memory is not zeroed: the count is always written, entries up to it */
	s->user_walked = 0;
	s->alloc_size = 0;
	if (target->v8_layout)
		walk_js_frames(user_frame_pointer(ctx), 0, target, s, n, cnt);

	sample_submit(s);
	return 0;
}
