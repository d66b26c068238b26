/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What every program that writes an isoprof_sample shares: the ring buffer
 * it goes to, the sample's head (process, thread, isolate), and the walk
 * that names its JS frames.  The CPU sampler (sampler.bpf.c) creates the
 * maps; the allocation probes (alloc.bpf.c) reuse their fds
 * (user/capture/alloc_probes.c), so both feed one ring.  Include after
 * vmlinux.h, the libbpf headers, isolate.bpf.h and shared_maps.bpf.h.
 */
#ifndef ISOPROF_BPF_SAMPLE_BPF_H
#define ISOPROF_BPF_SAMPLE_BPF_H

#include "isoprof.h"

/* Sizes are set by the loader before load; this is only a default. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} samples SEC(".maps");

/* Each program's own per-CPU counters (not shared: userspace sums each apart). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct isoprof_counters);
} counters SEC(".maps");

/*
 * How to read a JS frame's function in each V8 build a target runs
 * (isoprof_target.v8_layout is 1 + the index; userspace fills the entries).
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, ISOPROF_V8_LAYOUT_MAX);
	__type(key, __u32);
	__type(value, struct isoprof_v8_layout);
} v8_layouts SEC(".maps");

/* V8 tags heap pointers with bit 0; bit 1 marks a weak reference. */
#define V8_UNTAG(w) ((w) & ~3ULL)
#define V8_CAGE(w) ((w) & 0xffffffff00000000ULL)

/*
 * The tagged pointer in the field at off of the object at obj (untagged),
 * decompressed against the cage of cage_of when the layout is compressed;
 * 0 when unreadable or not a heap object.
 */
static __always_inline __u64 v8_read_tagged(const struct isoprof_v8_layout *l, __u64 obj,
					    __u32 off, __u64 cage_of)
{
	__u64 w = 0;

	if (l->flags & ISOPROF_V8_COMPRESSED) {
		__u32 c;

		if (bpf_probe_read_user(&c, sizeof(c), (void *)(obj + off)))
			return 0;
		w = V8_CAGE(cage_of) + c;
	} else if (bpf_probe_read_user(&w, sizeof(w), (void *)(obj + off))) {
		return 0;
	}
	return (w & 1) ? w : 0;
}

/*
 * What user_function holds for a frame whose fp-16 and fp-8 slots are fn
 * and context (see isoprof.h): 0 for a frame that is not JavaScript.  V8
 * frames keep the context (tagged, odd) at fp-8 and the JSFunction at
 * fp-16; its other frames keep an even Smi marker at fp-8.
 *
 * A global function, so the verifier checks it once rather than once per
 * iteration of the 64-frame walk (6.18: 4,669 instructions processed for
 * the whole program, 44,545 with this inlined), which leaves 6.1's weaker
 * loop pruning a wide margin, for one BPF call per frame.
 */
__noinline __u64 v8_frame_function(const struct isoprof_v8_layout *l, __u64 fn, __u64 context,
				   struct isoprof_counters *cnt)
{
	__u64 sfi, map;
	bool valid;

	if (!l || !cnt || !(context & 1) || !(fn & 1))
		return 0;
	if (l->flags & ISOPROF_V8_RAW)
		return fn;
	cnt->js_frames++;
	/*
	 * JSFunctions are often young and move, so the SFI is read now; SFIs
	 * stay put (none of 2,158 moved across five full mark-compact GCs on
	 * workerd), so userspace names them from the address later.  The map
	 * check keeps a misread word (a frame torn at a prologue, a native
	 * frame with odd slots) from being named as something else.
	 */
	sfi = v8_read_tagged(l, V8_UNTAG(fn), l->fn_sfi, fn);
	if (!sfi)
		goto unnamed;
	sfi = V8_UNTAG(sfi);
	if ((l->flags & ISOPROF_V8_COMPRESSED) && !(l->flags & ISOPROF_V8_SFI_BY_TYPE)) {
		__u32 m;

		valid = !bpf_probe_read_user(&m, sizeof(m), (void *)sfi) && m == l->sfi_map;
	} else {
		__u16 type;

		map = v8_read_tagged(l, sfi, 0, sfi);
		valid = map &&
			!bpf_probe_read_user(&type, sizeof(type),
					     (void *)(V8_UNTAG(map) + l->map_instance_type)) &&
			type == l->sfi_type;
	}
	if (valid)
		return sfi;
unnamed:
	cnt->js_unnamed++;
	/* odd, so no SFI address: userspace counts it against the layout per process */
	return ISOPROF_JS_UNNAMED;
}

/*
 * Fill user_function[] along the frame-pointer chain, in step with the
 * user stack bpf_get_stack() wrote: the frame at fp is that of the code at
 * user_stack[i], and its return address is user_stack[i + 1].  The walk
 * stops where the two part (a frame the chain does not reach the same way)
 * and never goes down the stack, so a garbage rbp ends it instead of
 * looping.
 *
 * A user read costs about the same whatever its size (the checks of
 * copy_from_user_nofault()), and the walk covers every user frame, not
 * only the JS ones near the leaf (workerd: ~32 user frames a sample, ~5 of
 * them JS): one 32-byte read per frame takes the function, the context and
 * the link together.  Measured with the run-time stats of samplers running
 * side by side on a busy 2-vCPU VM (noisy): 4.5-5.5 us a sample without
 * the walk, 2.5-3 us more with it, and 1-4 us more again with two reads
 * per frame; reading and checking the SFIs adds about 0.6 us.
 */
/*
 * How many user frames can hold JS: through the last one whose pc is in
 * JIT code or V8's builtins (isoprof_target.js_*).  Below the outermost JS
 * frame a runtime has a dozen or more native frames down to main(), each a
 * read the walk would pay for nothing.  Reads only the stack already
 * copied.  No ranges: every frame.
 */
static __always_inline __u64 js_depth(const struct isoprof_target *t,
				      const struct isoprof_sample *s, __u64 nuser)
{
	__u64 start[ISOPROF_JS_RANGES], len[ISOPROF_JS_RANGES], depth = 0, any = 0;

	for (int r = 0; r < ISOPROF_JS_RANGES; r++) {
		start[r] = t->js_start[r];
		len[r] = t->js_end[r] > t->js_start[r] ? t->js_end[r] - t->js_start[r] : 0;
		any |= len[r];
	}
	if (!any)
		return nuser;
	/*
	 * Branch-free (BPF has no set-on-condition: a comparison is a jump),
	 * so the verifier walks one path per frame, not 2^4: user addresses
	 * are below 2^63, so a difference's sign bit is a comparison.
	 */
	for (__u32 i = 0; i < ISOPROF_MAX_JS_WALK && i < nuser; i++) {
		__u64 pc = s->user_stack[i], hit = 0;

		for (int r = 0; r < ISOPROF_JS_RANGES; r++) {
			__u64 d = pc - start[r];

			/* d >= 0 (signed), and d < len */
			hit |= ~((__s64)d >> 63) & ((__s64)(d - len[r]) >> 63) & 1;
		}
		depth += ((i + 1) - depth) & (0 - hit);
	}
	return depth;
}

static __always_inline void walk_js_frames(__u64 fp, __u32 first,
					   const struct isoprof_target *target,
					   struct isoprof_sample *s, long user_bytes,
					   struct isoprof_counters *cnt)
{
	__u32 idx = target->v8_layout - 1, walked = 0;
	const struct isoprof_v8_layout *l;
	__u64 nuser, depth, frame[4];

	if (idx >= ISOPROF_V8_LAYOUT_MAX || user_bytes <= 0)
		return;
	l = bpf_map_lookup_elem(&v8_layouts, &idx);
	if (!l || !fp)
		return;
	nuser = user_bytes / sizeof(__u64);
	depth = js_depth(target, s, nuser);
	/* frames below first (the stack's leaf, when fp is its caller's) run no JS */
	s->user_function[0] = 0;
	for (__u32 i = first; i < ISOPROF_MAX_JS_WALK && i < depth; i++) {
		/* fp-16: JSFunction, fp-8: context, fp: caller's fp, fp+8: return address */
		if (bpf_probe_read_user(frame, sizeof(frame), (void *)(fp - 16)))
			break;
		s->user_function[i] = v8_frame_function(l, frame[0], frame[1], cnt);
		walked = i + 1;
		if (i + 1 >= nuser || frame[3] != s->user_stack[i + 1] || frame[2] <= fp)
			break;
		fp = frame[2];
	}
	s->user_walked = walked;
}

/*
 * Waking the consumer costs more than the rest of the program (measured on
 * a 2-vCPU VM: 6.2 us per sample with a wakeup per record, 1.9 us without),
 * so records are submitted silently and userspace drains the ring on a
 * timer; only a ring filling up forces a wakeup.  Set by the loader.
 */
const volatile __u64 wakeup_bytes = 4 << 20;

/* Platform threads take the isolate their job works for (bpf/gc.bpf.c). */
const volatile bool use_thread_tags = false;

/*
 * A sample slot for the current process when it is a target: *target and
 * *cnt set, the event counted; NULL when it is no target, or the ring is
 * full (counted).  A program of one kind never nests on its CPU, so the
 * per-CPU counters need no atomics.
 */
static __always_inline struct isoprof_sample *sample_reserve(__u32 tgid,
							     struct isoprof_target **target,
							     struct isoprof_counters **cnt)
{
	struct isoprof_sample *s;
	__u32 zero = 0;

	*target = bpf_map_lookup_elem(&targets, &tgid);
	if (!*target)
		return NULL;
	*cnt = bpf_map_lookup_elem(&counters, &zero);
	if (!*cnt)
		return NULL;
	(*cnt)->events++;
	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s)
		(*cnt)->lost_ringbuf_full++;
	return s;
}

/* Time, process, thread, CPU, isolate and thread name; flags cleared. */
static __always_inline void sample_head(struct isoprof_sample *s,
					const struct isoprof_target *target, __u64 pid_tgid)
{
	s->time_ns = bpf_ktime_get_ns();
	s->isolate = 0;
	s->pid = pid_tgid >> 32;
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
}

#define SAMPLE_STACK_BYTES (ISOPROF_MAX_STACK_DEPTH * sizeof(__u64))

/* The user stack into the sample, leaf first; its bytes, or -errno (counted). */
static __always_inline long sample_user_stack(void *ctx, struct isoprof_sample *s,
					      struct isoprof_counters *cnt)
{
	long n = bpf_get_stack(ctx, s->user_stack, SAMPLE_STACK_BYTES, BPF_F_USER_STACK);

	s->user_stack_bytes = n;
	if (n < 0)
		cnt->user_stack_errors++;
	else if (n == SAMPLE_STACK_BYTES) {
		s->flags |= ISOPROF_SAMPLE_USER_TRUNCATED;
		cnt->user_truncated++;
	}
	return n;
}

static __always_inline void sample_submit(struct isoprof_sample *s)
{
	bpf_ringbuf_submit(s, bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
				      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
}

#endif /* ISOPROF_BPF_SAMPLE_BPF_H */
