/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cpu_profile: turns stored samples into a pprof CPU profile.
 *
 * Frames are symbolized once per distinct (process, address); every sample
 * becomes a pprof sample [samples/count = 1, cpu/nanoseconds = period] with
 * labels pid, tid and thread (the builder merges identical ones).  Frames
 * that cannot be named keep their address and mapping and get a synthetic
 * function that says why ("[unknown] libfoo.so", "[jit] <unknown>").
 *
 * Errors: negative errno (-ENOMEM, or from writing the file).
 */
#ifndef ISOPROF_USER_CPU_PROFILE_H
#define ISOPROF_USER_CPU_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample_store.h"
#include "symbolizer.h"

struct cpu_profile_info {
	int64_t time_nanos;		/* wall clock at the start of the window */
	int64_t duration_nanos;		/* length of the window */
	uint64_t period_ns;		/* sampling period */
	const char *const *comments;	/* written in order */
	size_t ncomments;
};

/* Keep a sample in this profile?  NULL keeps all. */
typedef bool (*cpu_profile_filter_fn)(const struct stored_sample *s, void *ctx);

#define CPU_PROFILE_MAX_HINT_PIDS 16

struct cpu_profile_stats {
	uint64_t samples;		/* samples written */
	uint64_t frames;		/* frames in those samples */
	uint64_t unsymbolized_frames;	/* frames with no name */
	uint64_t jit_leaf_samples;	/* samples whose user leaf is JIT code */
	uint64_t jit_leaf_named;	/* ... and named by the perf map */
	/* processes with JIT frames but no perf map, for the user's hint */
	uint32_t no_perfmap_pids[CPU_PROFILE_MAX_HINT_PIDS];
	size_t nr_no_perfmap_pids;
};

int cpu_profile__write(const struct sample_store *store, struct symbolizer *sym,
		       const struct cpu_profile_info *info, cpu_profile_filter_fn filter,
		       void *filter_ctx, const char *path, bool gzip,
		       struct cpu_profile_stats *stats);

/* The sentence that tells the user how to get JIT frames named. */
void cpu_profile__no_perfmap_hint(uint32_t pid, char *buf, size_t len);

#endif
