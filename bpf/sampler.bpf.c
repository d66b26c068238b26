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

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Sizes are set by the loader before load; these are only defaults. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct isoprof_counters);
} counters SEC(".maps");

const volatile bool use_thread_tags = false;

#define STACK_BYTES (ISOPROF_MAX_STACK_DEPTH * sizeof(__u64))

/*
 * Waking the consumer costs more than the rest of the program (measured on
 * a 2-vCPU VM: 6.2 us per sample with a wakeup per record, 1.9 us without),
 * so records are submitted silently and userspace drains the ring on a
 * timer; only a ring filling up forces a wakeup.  Set by the loader.
 */
const volatile __u64 wakeup_bytes = 4 << 20;

/* x86-64 and arm64 kernels live in the upper half of the address space. */
static __always_inline bool in_kernel(struct bpf_perf_event_data *ctx)
{
	return (__s64)PT_REGS_IP(&ctx->regs) < 0;
}

SEC("perf_event")
int isoprof_sample_cpu(struct bpf_perf_event_data *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;
	struct isoprof_target *target;
	struct isoprof_counters *cnt;
	struct isoprof_sample *s;
	__u32 zero = 0;
	long n;

	target = bpf_map_lookup_elem(&targets, &tgid);
	if (!target)
		return 0;
	cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!cnt)
		return 0;
	/* per-CPU slot, and a perf_event program never nests on its own CPU */
	cnt->events++;

	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		cnt->lost_ringbuf_full++;
		return 0;
	}
	s->time_ns = bpf_ktime_get_ns();
	s->isolate = 0;
	s->pid = tgid;
	s->tid = (__u32)pid_tgid;
	s->cpu = bpf_get_smp_processor_id();
	s->flags = 0;
	if ((target->flags & ISOPROF_TARGET_READ_ISOLATE) && read_isolate(target, &s->isolate)) {
		s->isolate = 0;
		s->flags |= ISOPROF_SAMPLE_ISOLATE_READ_FAILED;
	}
	if (use_thread_tags && !s->isolate && (target->flags & ISOPROF_TARGET_READ_ISOLATE)) {
		__u32 tid = (__u32)pid_tgid;
		struct isoprof_thread_tag *tag = bpf_map_lookup_elem(&thread_tags, &tid);

		if (tag && tag->isolate) {
			s->isolate = tag->isolate;
			s->flags |= ISOPROF_SAMPLE_ISOLATE_FROM_JOB;
		}
	}
	bpf_get_current_comm(s->comm, sizeof(s->comm));

	/* A user-mode tick has no kernel stack; asking costs 0.25 us. */
	n = in_kernel(ctx) ? bpf_get_stack(ctx, s->kernel_stack, STACK_BYTES, 0) : 0;
	s->kernel_stack_bytes = n;
	if (n < 0)
		cnt->kernel_stack_errors++;
	else if (n == STACK_BYTES) {
		s->flags |= ISOPROF_SAMPLE_KERNEL_TRUNCATED;
		cnt->kernel_truncated++;
	}

	n = bpf_get_stack(ctx, s->user_stack, STACK_BYTES, BPF_F_USER_STACK);
	s->user_stack_bytes = n;
	if (n < 0)
		cnt->user_stack_errors++;
	else if (n == STACK_BYTES) {
		s->flags |= ISOPROF_SAMPLE_USER_TRUNCATED;
		cnt->user_truncated++;
	}

	bpf_ringbuf_submit(s, bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}
