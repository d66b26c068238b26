/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The ABI between isoprof's BPF programs and userspace.
 *
 * Every struct here crosses the kernel/user boundary: fixed-width types only,
 * explicit padding, and size/offset assertions checked by both compilers.
 *
 * Transfer design: one ring buffer record per sample (no in-kernel aggregation).
 * Later stages need per-sample time and per-sample context (the current V8
 * isolate), which an aggregating stack map cannot carry; and copying the stack
 * straight into the reserved ring buffer slot avoids both the extra copy of
 * bpf_ringbuf_output() and the jhash + bucket locking of a STACK_TRACE map.
 * docs/design/architecture.md has the measurements behind this choice.
 */
#ifndef ISOPROF_BPF_ISOPROF_H
#define ISOPROF_BPF_ISOPROF_H

#ifdef __bpf__
/* vmlinux.h already defines the __u* types */
#else
#include <linux/types.h>
#endif

/* kernel.perf_event_max_stack defaults to 127 and caps bpf_get_stack() */
#define ISOPROF_MAX_STACK_DEPTH 127
#define ISOPROF_COMM_LEN 16

/*
 * User frames, leaf first, whose V8 JS function the sampler reads (walking
 * the frame-pointer chain that bpf_get_stack() also walks, so frame i of
 * the walk is user_stack[i]).  JS frames sit above the runtime's own, near
 * the leaf; 64 covers every JS frame of the deepest stack measured on the
 * demo (docs/design/js-frames.md).
 */
#define ISOPROF_MAX_JS_WALK 64
/* user_function of a JS frame whose SFI did not validate (odd: no SFI address) */
#define ISOPROF_JS_UNNAMED 1

/* isoprof_sample.flags */
#define ISOPROF_SAMPLE_USER_TRUNCATED (1u << 0)   /* user stack hit the depth cap */
#define ISOPROF_SAMPLE_KERNEL_TRUNCATED (1u << 1) /* kernel stack hit the depth cap */
#define ISOPROF_SAMPLE_ISOLATE_READ_FAILED (1u << 2)
/* isolate is not the thread's own: a V8 platform thread running a job that
 * isolate posted (bpf/gc.bpf.c tags the thread) */
#define ISOPROF_SAMPLE_ISOLATE_FROM_JOB (1u << 3)
/*
 * Not a CPU tick but an allocation the runtime itself chose to sample
 * (bpf/alloc.bpf.c), alloc_size bytes: V8's sampling heap profiler
 * (JS heap), or the process's malloc sampler (native heap).
 */
#define ISOPROF_SAMPLE_ALLOC_JS (1u << 4)
#define ISOPROF_SAMPLE_ALLOC_NATIVE (1u << 5)
#define ISOPROF_SAMPLE_ALLOC (ISOPROF_SAMPLE_ALLOC_JS | ISOPROF_SAMPLE_ALLOC_NATIVE)

struct isoprof_sample {
	__u64 time_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 isolate;		/* current V8 isolate, 0 when none or not read */
	__u32 pid;		/* tgid */
	__u32 tid;
	__u32 cpu;
	__u32 flags;		/* ISOPROF_SAMPLE_* */
	__s32 kernel_stack_bytes; /* bpf_get_stack() result: bytes or -errno */
	__s32 user_stack_bytes;
	char comm[ISOPROF_COMM_LEN];
	__u64 kernel_stack[ISOPROF_MAX_STACK_DEPTH];
	__u64 user_stack[ISOPROF_MAX_STACK_DEPTH];
	__u32 user_walked;	/* entries of user_function written (0 without a layout) */
	__u32 alloc_size;	/* ISOPROF_SAMPLE_ALLOC: bytes asked for (0xffffffff: that or more); else 0 */
	/*
	 * Per user frame i < user_walked: with a naming layout, the untagged
	 * address of the frame's SharedFunctionInfo, validated by its map (0:
	 * not a JS frame; ISOPROF_JS_UNNAMED: a JS frame whose function or
	 * SFI did not read or validate); with a raw (calibration) layout, the
	 * tagged JSFunction word at fp-16 of JS frames.
	 */
	__u64 user_function[ISOPROF_MAX_JS_WALK];
};

_Static_assert(sizeof(struct isoprof_sample) ==
		       56 + 2 * 8 * ISOPROF_MAX_STACK_DEPTH + 8 + 8 * ISOPROF_MAX_JS_WALK,
	       "isoprof_sample layout");
_Static_assert(__builtin_offsetof(struct isoprof_sample, user_function) % 8 == 0,
	       "user_function alignment");
_Static_assert(__builtin_offsetof(struct isoprof_sample, comm) == 40, "comm offset");
_Static_assert(__builtin_offsetof(struct isoprof_sample, kernel_stack) == 56,
	       "kernel_stack offset");

/* Value of the targets map, keyed by tgid. */
#define ISOPROF_TARGET_READ_ISOLATE (1u << 0)

/*
 * Address ranges where a JS frame's pc can be (JIT code, V8's builtins):
 * with a layout, the sampler walks no deeper than the last user frame in
 * one of them.  Unused ranges are 0, 0; none at all: every frame walked.
 */
#define ISOPROF_JS_RANGES 4

struct isoprof_target {
	__s64 isolate_tls_offset; /* from the thread pointer (fsbase) to g_current_isolate_ */
	__u32 flags;		  /* ISOPROF_TARGET_* */
	__u32 v8_layout;	  /* 1 + index into the v8_layouts map; 0: no JS frames read */
	__u64 js_start[ISOPROF_JS_RANGES];
	__u64 js_end[ISOPROF_JS_RANGES];	/* exclusive */
};

_Static_assert(sizeof(struct isoprof_target) == 16 + 16 * ISOPROF_JS_RANGES,
	       "isoprof_target layout");

/*
 * What the sampler needs of one V8 build to read a frame's function
 * (symbolize/v8layout.h holds the whole layout; userspace fills this from
 * it).  Offsets are bytes from the untagged object start.
 */
#define ISOPROF_V8_LAYOUT_MAX 8
#define ISOPROF_V8_RAW (1u << 0)	   /* calibration: emit the JSFunction word, read no object */
#define ISOPROF_V8_COMPRESSED (1u << 1)	   /* 4-byte tagged words in a 4 GiB-aligned cage */
#define ISOPROF_V8_SFI_BY_TYPE (1u << 2)   /* validate by the map's instance type, not the map word */

struct isoprof_v8_layout {
	__u32 flags;		/* ISOPROF_V8_* */
	__u32 fn_sfi;		/* JSFunction -> SharedFunctionInfo field */
	__u32 sfi_map;		/* the SFI map's compressed word (COMPRESSED, not SFI_BY_TYPE) */
	__u16 map_instance_type; /* offset of the u16 instance type in a Map (SFI_BY_TYPE) */
	__u16 sfi_type;		/* the SFI instance type (SFI_BY_TYPE) */
};

_Static_assert(sizeof(struct isoprof_v8_layout) == 16, "isoprof_v8_layout layout");

/* Per-CPU counters, summed by userspace. */
struct isoprof_counters {
	__u64 events;		/* program runs on a target */
	__u64 lost_ringbuf_full;
	__u64 user_stack_errors;
	__u64 kernel_stack_errors;
	__u64 user_truncated;
	__u64 kernel_truncated;
	__u64 js_frames;	/* frames with a tagged context at fp-8, read with a layout */
	__u64 js_unnamed;	/* of those, the function or its SFI could not be read or validated */
};

_Static_assert(sizeof(struct isoprof_counters) == 64, "isoprof_counters layout");

/*
 * Allocation probes (bpf/alloc.bpf.c): the cookie of a probe says which
 * sampler it sits in (low byte) and which argument, 1-based, holds the
 * size (next byte), as userspace read it from the function's signature.
 */
#define ISOPROF_ALLOC_SITE_V8 1		/* v8::internal::SamplingHeapProfiler::SampleObject */
#define ISOPROF_ALLOC_SITE_NATIVE 2	/* the malloc's own sampler (tcmalloc) */
#define ISOPROF_ALLOC_COOKIE(site, size_arg) ((__u64)(site) | ((__u64)(size_arg) << 8))

/*
 * GC probes (bpf/gc.bpf.c): V8's stop-the-world pauses per isolate, and the
 * isolate a platform thread works for.
 */

/* The cookie of a GC probe: which V8 function it is on. */
#define ISOPROF_GC_SITE_COLLECT 1	/* v8::internal::Heap::CollectGarbage */
#define ISOPROF_GC_SITE_JOB_POST 2	/* v8::platform::NewDefaultJobHandle */
#define ISOPROF_GC_SITE_JOB_RUN 3	/* a v8::JobTask's Run(JobDelegate*) */
/*
 * V8's observable pause, the one --trace-gc prints: GCTracer's
 * StartObservablePause and StopObservablePause, entries only.  One cookie
 * per signature, told apart by mangled name: V8 11 takes no argument (the
 * probe's own clock is used), V8 12+ the time V8 read, a
 * v8::base::TimeTicks (int64 microseconds of CLOCK_MONOTONIC) by value:
 * Start(TimeTicks) in the second argument register, Stop(GarbageCollector,
 * TimeTicks) in the third.
 */
#define ISOPROF_GC_SITE_PAUSE_START 4		/* StartObservablePause() */
#define ISOPROF_GC_SITE_PAUSE_STOP 5		/* StopObservablePause() */
#define ISOPROF_GC_SITE_PAUSE_START_TICKS 6	/* StartObservablePause(TimeTicks) */
#define ISOPROF_GC_SITE_PAUSE_STOP_TICKS 7	/* StopObservablePause(GarbageCollector,
						 * TimeTicks) */

/* Key of the gc_pauses map: one isolate of one process. */
struct isoprof_gc_key {
	__u32 pid;		/* tgid */
	__u32 pad;
	__u64 isolate;
};

_Static_assert(sizeof(struct isoprof_gc_key) == 16, "isoprof_gc_key layout");

/*
 * Value of the gc_pauses map: the pauses that began in the window, two
 * ways.  The whole Heap::CollectGarbage call (what the isolate's thread
 * lost: "gc stop:"), and V8's observable pause inside it (what --trace-gc
 * prints: "gc:"); docs/attribution.md, "Pauses, from uprobes".
 */
struct isoprof_gc_pauses {
	__u64 count;		/* whole calls */
	__u64 total_ns;
	__u64 max_ns;
	__u32 tid;		/* the thread of the latest call: the isolate's own */
	__u32 pad;
	__u64 obs_count;	/* observable pauses */
	__u64 obs_total_ns;
	__u64 obs_max_ns;
};

_Static_assert(sizeof(struct isoprof_gc_pauses) == 56, "isoprof_gc_pauses layout");
_Static_assert(__builtin_offsetof(struct isoprof_gc_pauses, obs_count) == 32,
	       "isoprof_gc_pauses layout");

/*
 * Value of the thread_tags map, keyed by tid: the isolate whose job the
 * platform thread is running (the sampler reads it when the thread has
 * entered no isolate), and how deep the job functions are nested.
 */
struct isoprof_thread_tag {
	__u64 isolate;
	__u32 depth;
	__u32 pad;
};

_Static_assert(sizeof(struct isoprof_thread_tag) == 16, "isoprof_thread_tag layout");

/* Per-CPU counters of the GC probes, summed by userspace. */
struct isoprof_gc_counters {
	__u64 pauses;		/* outermost Heap::CollectGarbage returns counted */
	__u64 nested;		/* CollectGarbage entered inside another */
	__u64 no_isolate;	/* CollectGarbage on a thread with no isolate entered */
	__u64 lost_entries;	/* a pause or tag not recorded: map full */
	__u64 jobs_learnt;	/* jobs posted by a thread inside an isolate */
	__u64 jobs_tagged;	/* job runs on a platform thread charged to an isolate */
	__u64 jobs_unknown;	/* job runs on a platform thread whose poster is unknown */
	__u64 obs_unpaired;	/* a StopObservablePause with no Start seen on its thread */
};

_Static_assert(sizeof(struct isoprof_gc_counters) == 64, "isoprof_gc_counters layout");

#endif /* ISOPROF_BPF_ISOPROF_H */
