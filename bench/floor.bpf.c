// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The floor for benchmark 6: the least a BPF stack sampler can do and still
 * deliver isoprof's data, so isoprof's run time can be stated as a ratio to
 * it.  One compare for the pid, one ring buffer slot, the kernel stack when
 * the tick hit kernel mode (a user-mode tick has none), the user stack, and
 * a submit without a wakeup (the loader drains on a timer, as isoprof does).
 * No counters, no maps but the ring, no isolate, no time, no comm.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "floor.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} samples SEC(".maps");

const volatile __u32 target_tgid;
/* Set by `floor ... empty`: return at once, the cost of the tick alone. */
const volatile bool empty;

#define STACK_BYTES (ISOPROF_MAX_STACK_DEPTH * sizeof(__u64))

SEC("perf_event")
int floor_sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct floor_sample *s;

	if (empty || pid_tgid >> 32 != target_tgid)
		return 0;
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s)
		return 0;
	s->pid = pid_tgid >> 32;
	s->tid = (__u32)pid_tgid;
	s->kernel_stack_bytes = (__s64)PT_REGS_IP(&ctx->regs) < 0 ?
		bpf_get_stack(ctx, s->kernel_stack, STACK_BYTES, 0) : 0;
	s->user_stack_bytes = bpf_get_stack(ctx, s->user_stack, STACK_BYTES, BPF_F_USER_STACK);
	bpf_ringbuf_submit(s, BPF_RB_NO_WAKEUP);
	return 0;
}
