/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cpu_profile: turns stored samples into a pprof CPU profile, or, given
 * allocation weights, allocation samples into a heap profile.
 *
 * Every kept sample becomes a pprof sample [samples/count = 1,
 * cpu/nanoseconds = period] on its symbolized stack (from the frame table),
 * labelled pid, tid, thread, class, and isolate, script and version when
 * the caller's attribution callback names them; the builder merges
 * identical ones.  As V8's own profiler does, samples get a synthetic root
 * frame: "(garbage collector)" for gc, "(idle)" for idle, and "(program)"
 * when no JS frame is on the stack.  Frames that cannot be named keep
 * their address and mapping and get a synthetic function that says why
 * ("[unknown] libfoo.so", "[jit] <unknown>").
 *
 * Allocation samples (cpu_profile_info.alloc; docs/heap.md) become
 * [alloc_objects/count, alloc_space/bytes], the unsampled estimate of what
 * the sample stands for: an allocation of s bytes under a sampler with mean
 * interval r is sampled with probability 1 - exp(-s/r), so it stands for
 * 1 / (1 - exp(-s/r)) allocations of s bytes (V8's own scaling).  Their
 * stacks start at the allocating code: above the innermost JS frame for
 * the JS heap, above the allocator's own frames for the native heap
 * (class native-alloc); no synthetic root.
 *
 * Errors: negative errno (-ENOMEM, or from writing the file).
 */
#ifndef ISOPROF_ATTRIBUTE_CPU_PROFILE_H
#define ISOPROF_ATTRIBUTE_CPU_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/attribute/frames.h"
#include "user/capture/sample_store.h"
#include "symbolize/symbolizer.h"

/* What the caller knows of a sample's isolate; NULL fields are left out. */
struct sample_attr {
	const char *isolate;	/* "0x55d5c8a0e000" */
	const char *script;
	const char *version;
};

/* Keep a sample in this profile?  NULL keeps all. */
typedef bool (*cpu_profile_filter_fn)(const struct stored_sample *s, void *ctx);
typedef void (*cpu_profile_attr_fn)(const struct stored_sample *s, void *ctx,
				    struct sample_attr *out);

/* The mean sampling intervals of allocation samples, in bytes. */
struct alloc_weights {
	uint64_t js_interval;		/* V8's sampling heap profiler */
	uint64_t native_interval;	/* the malloc's sampler */
};

struct cpu_profile_info {
	int64_t time_nanos;		/* wall clock at the start of the window */
	int64_t duration_nanos;		/* length of the window */
	uint64_t period_ns;		/* sampling period */
	const char *const *comments;	/* written in order */
	size_t ncomments;
	cpu_profile_filter_fn filter;
	void *filter_ctx;
	cpu_profile_attr_fn attr;
	void *attr_ctx;
	/* NULL: CPU samples; else the store holds allocation samples */
	const struct alloc_weights *alloc;
};

#define CPU_PROFILE_MAX_HINT_PIDS 16

struct cpu_profile_stats {
	uint64_t samples;		/* samples written */
	uint64_t frames;		/* frames in those samples */
	uint64_t unsymbolized_frames;	/* frames with no name */
	uint64_t jit_leaf_samples;	/* samples whose user leaf is JIT code */
	uint64_t jit_leaf_named;	/* ... and named */
	uint64_t jit_leaf_by[SYM_SOURCE_HEAP + 1]; /* ... by each source (enum sym_source) */
	/* samples whose JIT leaf is inside inlined functions, by who said so */
	uint64_t jit_leaf_inlined_by[SYM_SOURCE_HEAP + 1];
	/* samples whose JIT leaf is optimized code that inlined, by who placed the pc */
	uint64_t jit_leaf_placed_by[NR_FRAME_PLACEMENTS];
	uint64_t class_samples[NR_SAMPLE_CLASSES];
	/* allocation samples: the estimated bytes and objects, JS heap then native */
	double alloc_bytes[2], alloc_objects[2];
	/* processes with JIT frames but no perf map, for the user's hint */
	uint32_t no_perfmap_pids[CPU_PROFILE_MAX_HINT_PIDS];
	size_t nr_no_perfmap_pids;
};

struct pprof_builder;

/* The profile, for a caller that writes or reads it itself; *out is the caller's. */
int cpu_profile__build(const struct sample_store *store, const struct frame_table *ft,
		       struct symbolizer *sym, const struct cpu_profile_info *info,
		       struct pprof_builder **out, struct cpu_profile_stats *stats);

int cpu_profile__write(const struct sample_store *store, const struct frame_table *ft,
		       struct symbolizer *sym, const struct cpu_profile_info *info,
		       const char *path, bool gzip, struct cpu_profile_stats *stats);

/* The sentence that tells the user how to get JIT frames named. */
void cpu_profile__no_perfmap_hint(uint32_t pid, char *buf, size_t len);

#endif
