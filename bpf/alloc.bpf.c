// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Allocation probes: a uprobe where the runtime itself has decided to
 * sample an allocation (user/capture/alloc_probes.c finds and attaches
 * them), sending one isoprof_sample to the CPU sampler's ring with the
 * size asked for.
 *
 *   - V8's sampling heap profiler calls SamplingHeapProfiler::SampleObject
 *     for the allocation that crosses its next sampling point (one per
 *     512 KiB on average while a heap capture runs).  The allocating JS
 *     function is a caller: optimized code allocates inline and enters the
 *     runtime only when the step is due, so its return address, not V8's
 *     own idea of the frame, says which inlined function allocated.
 *   - tcmalloc (workerd) samples one allocation per 2 MiB on its own,
 *     always on; its SampleifyAllocation runs once per sampled allocation.
 *
 * No sampling decision is taken here: the runtime's sampler already made
 * it, so the probe adds no bias of its own.  Probes fire only while a
 * heap capture runs, and only for the targets (the targets map).
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

/*
 * The size argument the cookie names (1-based, as the ABI counts).  Each
 * register is read on its own: folded into one read at a computed offset,
 * the verifier refuses the access to the context.
 */
static __always_inline __u64 size_argument(struct pt_regs *ctx, __u64 arg)
{
	__u64 a1 = PT_REGS_PARM1(ctx), a2 = PT_REGS_PARM2(ctx), a3 = PT_REGS_PARM3(ctx);
	__u64 a4 = PT_REGS_PARM4(ctx), a5 = PT_REGS_PARM5(ctx);

	barrier_var(a1);
	barrier_var(a2);
	barrier_var(a3);
	barrier_var(a4);
	barrier_var(a5);
	return arg == 1 ? a1 : arg == 2 ? a2 : arg == 3 ? a3 : arg == 4 ? a4 : arg == 5 ? a5 : 0;
}

SEC("uprobe")
int isoprof_alloc_sample(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 cookie = bpf_get_attach_cookie(ctx), size;
	struct isoprof_target *target;
	struct isoprof_counters *cnt;
	struct isoprof_sample *s;
	long n;

	/* uprobe programs do not nest on a CPU either (bpf_prog_active) */
	s = sample_reserve(pid_tgid >> 32, &target, &cnt);
	if (!s)
		return 0;
	sample_head(s, target, pid_tgid);
	s->flags |= (cookie & 0xff) == ISOPROF_ALLOC_SITE_V8 ? ISOPROF_SAMPLE_ALLOC_JS
							     : ISOPROF_SAMPLE_ALLOC_NATIVE;
	size = size_argument(ctx, (cookie >> 8) & 0xff);
	s->alloc_size = size > 0xffffffffull ? 0xffffffffu : (__u32)size;

	/* the probe hit in user mode: no kernel frames */
	s->kernel_stack_bytes = 0;
	n = sample_user_stack(ctx, s, cnt);
	s->user_walked = 0;
	/*
	 * At a function's entry rbp is still its caller's frame: frame 0 of
	 * the walk pairs the probed function with that frame (or, below,
	 * frame 1), and from there on each return address meets its own
	 * frame, as on a CPU tick.
	 */
	if (target->v8_layout) {
		__u64 fp = PT_REGS_FP(ctx), ret = 0;
		__u32 first = 0;

		/*
		 * Kernels that know a uprobe hit a function's entry put the
		 * return address at the stack pointer in as frame 1 (the
		 * caller): then rbp's frame is frame 1's, not frame 0's.
		 */
		if (n >= 3 * (long)sizeof(__u64) && fp &&
		    !bpf_probe_read_user(&ret, sizeof(ret), (void *)(fp + 8)) &&
		    ret != s->user_stack[1] && ret == s->user_stack[2])
			first = 1;
		walk_js_frames(fp, first, target, s, n, cnt);
	}
	sample_submit(s);
	return 0;
}
