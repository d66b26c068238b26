// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * GC probes: uprobes on V8 in the runtime's binary (user/capture/gc_probes.c
 * attaches them, per target process).
 *
 * Pauses, two ways (docs/attribution.md, "Pauses, from uprobes"):
 *   - the whole call: Heap::CollectGarbage brackets one stop-the-world
 *     collection on the isolate's own thread (scavenge, mark-compact's
 *     atomic pause, minor mark-sweep), the embedder's GC callbacks and
 *     V8's bookkeeping after the pause included.  Entry keeps (start,
 *     isolate) per thread; the return adds the call to the isolate's
 *     totals.  A CollectGarbage inside another is part of the outer call.
 *   - V8's observable pause, what --trace-gc prints: from
 *     GCTracer::StartObservablePause to StopObservablePause, one pair per
 *     CollectGarbage (nested ones included: their pause does not overlap
 *     the outer one's, which starts after the prologue callbacks and stops
 *     before the epilogue ones).
 * Per-isolate sums in a hash map, not one event per pause: there is
 * nothing to wake userspace for.
 *
 * Platform threads: a job (v8::JobTask) is posted by a thread inside its
 * isolate (v8::platform::NewDefaultJobHandle) and run on V8's worker
 * threads through its Run(JobDelegate*), whose `this` is the posted task.
 * Seeing both pointers ties the worker to the isolate, learnt from the
 * running process, with no V8 object layout: the thread is tagged while
 * Run runs, and the sampler charges its samples to that isolate.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "isoprof.h"
#include "isolate.bpf.h"
#include "shared_maps.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct gc_start {
	__u64 start_ns;
	__u64 isolate;
	__u32 depth;
	__u32 pad;
};

/* Per thread: the collection it is in. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct gc_start);
} gc_starts SEC(".maps");

/* Per thread: the observable pause it is in. */
struct obs_start {
	__u64 start_ns;		/* the probe's clock */
	__u64 v8_start_us;	/* V8's TimeTicks; 0 when not passed or not plausible */
	__u64 isolate;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct obs_start);
} obs_starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct isoprof_gc_key);
	__type(value, struct isoprof_gc_pauses);
} gc_pauses SEC(".maps");

/*
 * Posted jobs by (pid, address of the task): least recently used ones go,
 * so a task freed long ago costs nothing; an address reused by a later
 * job is overwritten when that job is posted.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct isoprof_gc_key);	/* isolate field: the task's address */
	__type(value, __u64);			/* the isolate */
} jobs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct isoprof_gc_counters);
} gc_counters SEC(".maps");

/* Pauses that begin before this (CLOCK_MONOTONIC) are not counted; set by userspace. */
volatile __u64 window_start_ns = ~0ull;

static __always_inline struct isoprof_gc_counters *counters(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gc_counters, &zero);
}

/* The target's isolate entered on this thread: 0 none, -1 not a target or unreadable. */
static __always_inline int current_isolate(__u32 tgid, __u64 *isolate)
{
	struct isoprof_target *target = bpf_map_lookup_elem(&targets, &tgid);

	*isolate = 0;
	if (!target || !(target->flags & ISOPROF_TARGET_READ_ISOLATE))
		return -1;
	if (read_isolate(target, isolate)) {
		*isolate = 0;
		return -1;
	}
	return 0;
}

static __always_inline int gc_enter(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct isoprof_gc_counters *cnt;
	struct gc_start st = { 0 }, *cur;

	if (current_isolate(pid_tgid >> 32, &st.isolate))
		return 0;
	cnt = counters();
	cur = bpf_map_lookup_elem(&gc_starts, &tid);
	if (cur) {
		cur->depth++;
		if (cnt)
			cnt->nested++;
		return 0;
	}
	st.start_ns = bpf_ktime_get_ns();
	st.depth = 1;
	if (bpf_map_update_elem(&gc_starts, &tid, &st, BPF_NOEXIST) && cnt)
		cnt->lost_entries++;
	return 0;
}

/* The isolate's entry of gc_pauses, made on first use; NULL when the map is full. */
static __always_inline struct isoprof_gc_pauses *pauses_of(struct isoprof_gc_key *key,
							    struct isoprof_gc_counters *cnt)
{
	struct isoprof_gc_pauses *p, first = { 0 };

	p = bpf_map_lookup_elem(&gc_pauses, key);
	if (p)
		return p;
	bpf_map_update_elem(&gc_pauses, key, &first, BPF_NOEXIST);
	p = bpf_map_lookup_elem(&gc_pauses, key);
	if (!p && cnt)
		cnt->lost_entries++;
	return p;
}

static __always_inline int gc_exit(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), pause;
	__u32 tid = (__u32)pid_tgid;
	struct isoprof_gc_key key = { .pid = pid_tgid >> 32 };
	struct isoprof_gc_pauses *p;
	struct isoprof_gc_counters *cnt;
	struct gc_start *st;

	st = bpf_map_lookup_elem(&gc_starts, &tid);
	if (!st)
		return 0;
	if (--st->depth)
		return 0;
	key.isolate = st->isolate;
	pause = now - st->start_ns;
	/* begun before the window: not this capture's */
	if (st->start_ns < window_start_ns) {
		bpf_map_delete_elem(&gc_starts, &tid);
		return 0;
	}
	bpf_map_delete_elem(&gc_starts, &tid);
	cnt = counters();
	if (cnt) {
		cnt->pauses++;
		cnt->no_isolate += !key.isolate;
	}
	p = pauses_of(&key, cnt);
	if (!p)
		return 0;
	/* an isolate collects on one thread at a time: no other writer of this entry */
	p->count++;
	p->total_ns += pause;
	if (pause > p->max_ns)
		p->max_ns = pause;
	p->tid = tid;
	return 0;
}

/*
 * V8's TimeTicks argument, in microseconds, when it is one: read a few
 * microseconds before the probe's trap on the same clock (TimeTicks::Now()
 * is CLOCK_MONOTONIC on Linux, as bpf_ktime_get_ns() is).  Anything else
 * (a build whose ABI passes it otherwise) is 0: the probe's clock is used.
 */
static __always_inline __u64 v8_ticks(__u64 arg, __u64 now)
{
	__u64 ns = arg * 1000;

	if (!arg || arg > now / 1000 || now - ns > 100000000ull)
		return 0;
	return arg;
}

/*
 * Which clock the observable pause takes, when V8 passes its own: V8's.
 * Its pause is exactly the difference of the two values it records as the
 * event's start and end, and --trace-gc-nvp prints it in microseconds;
 * the probes' clock reads later, after each trap, and adds the difference
 * of the two traps' delays.  Both clocks measured in the same captures
 * (workerd 2026-11-17, V8 15.8, tests/e2e/gc_pauses.sh, three runs): over
 * 303-316 sub-millisecond scavenges V8's values summed to V8's printed
 * total within 9 µs (151.842 / 132.524 / 130.180 ms against 151.838 /
 * 132.515 / 130.176), the probes' clock 61, 291 and -5 µs away; over
 * ~100 pauses of several ms, V8's values to the µs, the probes' clock
 * 39-108 µs above.  Node 20's V8 passes nothing and prints 0.1 ms.
 */
static __always_inline int obs_start(struct pt_regs *ctx, bool ticks)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tid = (__u32)pid_tgid;
	struct obs_start st = { .start_ns = now };
	struct isoprof_gc_counters *cnt;

	if (current_isolate(pid_tgid >> 32, &st.isolate))
		return 0;
	if (ticks)
		st.v8_start_us = v8_ticks(PT_REGS_PARM2(ctx), now);
	/* a Start with no Stop seen (the probe attached in between) is replaced */
	if (bpf_map_update_elem(&obs_starts, &tid, &st, BPF_ANY)) {
		cnt = counters();
		if (cnt)
			cnt->lost_entries++;
	}
	return 0;
}

static __always_inline int obs_stop(struct pt_regs *ctx, bool ticks)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns(), pause, v8_us = 0;
	__u32 tid = (__u32)pid_tgid;
	struct isoprof_gc_key key = { .pid = pid_tgid >> 32 };
	struct isoprof_gc_counters *cnt = counters();
	struct isoprof_gc_pauses *p;
	struct obs_start *st;

	st = bpf_map_lookup_elem(&obs_starts, &tid);
	if (!st) {
		if (cnt)
			cnt->obs_unpaired++;
		return 0;
	}
	key.isolate = st->isolate;
	if (ticks)
		v8_us = v8_ticks(PT_REGS_PARM3(ctx), now);
	if (v8_us && st->v8_start_us && v8_us >= st->v8_start_us)
		pause = (v8_us - st->v8_start_us) * 1000;
	else
		pause = now - st->start_ns;
	/* begun before the window: not this capture's */
	if (st->start_ns < window_start_ns) {
		bpf_map_delete_elem(&obs_starts, &tid);
		return 0;
	}
	bpf_map_delete_elem(&obs_starts, &tid);
	p = pauses_of(&key, cnt);
	if (!p)
		return 0;
	p->obs_count++;
	p->obs_total_ns += pause;
	if (pause > p->obs_max_ns)
		p->obs_max_ns = pause;
	return 0;
}

/*
 * Note one candidate for a posted task, and the word it points at: a
 * small value (a priority, a thread count) is no address.
 */
static __always_inline void note_task(struct isoprof_gc_key *key, __u64 arg, __u64 *isolate)
{
	__u64 task = 0;

	if (arg < 4096)
		return;
	key->isolate = arg;
	bpf_map_update_elem(&jobs, key, isolate, BPF_ANY);
	if (!bpf_probe_read_user(&task, sizeof(task), (void *)arg) && task >= 4096) {
		key->isolate = task;
		bpf_map_update_elem(&jobs, key, isolate, BPF_ANY);
	}
}

/*
 * std::unique_ptr<JobHandle> NewDefaultJobHandle(Platform*, TaskPriority,
 * std::unique_ptr<JobTask>, size_t).  Where the task arrives depends on
 * the C++ library's ABI for unique_ptr: passed and returned in registers
 * (libc++'s trivial-ABI option, workerd) it is the third argument itself;
 * otherwise (libstdc++, node) the result goes through a hidden first
 * argument and the task is the fourth, as the address of the caller's
 * unique_ptr.  Every candidate is noted: the wrong ones (stack addresses,
 * a vtable) never match a Run's `this`, and the LRU map forgets them.
 */
static __always_inline int job_post(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), isolate;
	struct isoprof_gc_key key = { .pid = pid_tgid >> 32 };
	struct isoprof_gc_counters *cnt;

	if (current_isolate(key.pid, &isolate) || !isolate)
		return 0;
	note_task(&key, PT_REGS_PARM3(ctx), &isolate);
	note_task(&key, PT_REGS_PARM4(ctx), &isolate);
	cnt = counters();
	if (cnt)
		cnt->jobs_learnt++;
	return 0;
}

static __always_inline int job_run(struct pt_regs *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid(), isolate, *owner;
	struct isoprof_gc_key key = { .pid = pid_tgid >> 32 };
	struct isoprof_thread_tag tag = { 0 }, *cur;
	__u32 tid = (__u32)pid_tgid;
	struct isoprof_gc_counters *cnt;

	if (current_isolate(key.pid, &isolate))
		return 0;
	key.isolate = PT_REGS_PARM1(ctx);
	/*
	 * A thread inside an isolate (the poster joining its job) needs no
	 * tag, and teaches who owns a job posted before the probes were on.
	 */
	if (isolate) {
		bpf_map_update_elem(&jobs, &key, &isolate, BPF_ANY);
		return 0;
	}
	cur = bpf_map_lookup_elem(&thread_tags, &tid);
	if (cur) {
		/* a wrapper's Run calling the task's */
		cur->depth++;
		return 0;
	}
	owner = bpf_map_lookup_elem(&jobs, &key);
	cnt = counters();
	if (!owner) {
		if (cnt)
			cnt->jobs_unknown++;
		return 0;
	}
	tag.isolate = *owner;
	tag.depth = 1;
	if (bpf_map_update_elem(&thread_tags, &tid, &tag, BPF_NOEXIST)) {
		if (cnt)
			cnt->lost_entries++;
		return 0;
	}
	if (cnt)
		cnt->jobs_tagged++;
	return 0;
}

static __always_inline int job_done(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct isoprof_thread_tag *cur;

	cur = bpf_map_lookup_elem(&thread_tags, &tid);
	if (cur && !--cur->depth)
		bpf_map_delete_elem(&thread_tags, &tid);
	return 0;
}

/*
 * One program for every entry and one for every return, attached as
 * uprobe_multi links whose cookie says which function hit: two links per
 * binary, and removing a link waits for one RCU grace period, not one per
 * function (47 single uprobes took 7 s to remove on 6.18).
 */
SEC("uprobe")
int isoprof_gc_entry(struct pt_regs *ctx)
{
	switch (bpf_get_attach_cookie(ctx)) {
	case ISOPROF_GC_SITE_COLLECT:
		return gc_enter(ctx);
	case ISOPROF_GC_SITE_JOB_POST:
		return job_post(ctx);
	case ISOPROF_GC_SITE_JOB_RUN:
		return job_run(ctx);
	case ISOPROF_GC_SITE_PAUSE_START:
		return obs_start(ctx, false);
	case ISOPROF_GC_SITE_PAUSE_START_TICKS:
		return obs_start(ctx, true);
	case ISOPROF_GC_SITE_PAUSE_STOP:
		return obs_stop(ctx, false);
	case ISOPROF_GC_SITE_PAUSE_STOP_TICKS:
		return obs_stop(ctx, true);
	default:
		return 0;
	}
}

SEC("uretprobe")
int isoprof_gc_return(struct pt_regs *ctx)
{
	switch (bpf_get_attach_cookie(ctx)) {
	case ISOPROF_GC_SITE_COLLECT:
		return gc_exit(ctx);
	case ISOPROF_GC_SITE_JOB_RUN:
		return job_done(ctx);
	default:
		return 0;
	}
}
