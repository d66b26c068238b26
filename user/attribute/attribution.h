/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * attribution: which isolate each sample belongs to, and what that isolate
 * is (docs/isolates-and-classes.md).
 *
 * Samples are grouped by (pid, isolate pointer read in BPF); isolate 0 is
 * "outside any isolate": a thread that has not entered one (V8 platform
 * worker threads doing concurrent GC, the runtime's I/O threads, idle event
 * loops) or a process that is not a V8 runtime.  A platform thread running
 * a job that an isolate posted is charged to that isolate when the GC
 * probes tagged it (ISOPROF_SAMPLE_ISOLATE_FROM_JOB).  Each group counts its
 * samples by cost class and carries the registry's description of its
 * isolate (script, version).  For isolates without a code log, the script
 * names of their own JS frames are handed to the registry, which names the
 * isolate after them.
 *
 * Errors: -ENOMEM.  The attribution points into the store, frame table and
 * registry it was built from; they must outlive it.
 */
#ifndef ISOPROF_ATTRIBUTE_ATTRIBUTION_H
#define ISOPROF_ATTRIBUTE_ATTRIBUTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/attribute/cpu_profile.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/capture/sample_store.h"

struct isolate_group {
	uint32_t pid;
	uint64_t isolate;		/* 0: outside any isolate */
	char isolate_str[24];		/* "0x55d5c8a0e000", "" for 0 */
	const struct isolate_info *info; /* NULL for isolate 0 */
	uint64_t samples;
	uint64_t class_samples[NR_SAMPLE_CLASSES];
	uint64_t deopt_samples;		/* with V8's deoptimizer on the stack */
	/* JIT-leaf samples by who placed the leaf among inlined functions */
	uint64_t placed_samples[NR_FRAME_PLACEMENTS];
	/* taken on V8 platform threads running the isolate's jobs (gc_probes.h) */
	uint64_t job_samples;
	uint64_t job_gc_samples;	/* ... of them classed gc */
	uint64_t last_sample_ns;	/* CLOCK_MONOTONIC of its newest sample */
};

struct attribution {
	const struct sample_store *store;
	struct isolate_group *groups;	/* in order of first sample */
	size_t ngroups;
	uint32_t *sample_group;		/* per sample: index into groups */
};

int attribution__build(struct attribution *a, const struct sample_store *store,
		       const struct frame_table *ft, struct isolate_registry *reg);
void attribution__release(struct attribution *a);

/* The group of sample s (which must come from the store). */
const struct isolate_group *attribution__group_of(const struct attribution *a,
						  const struct stored_sample *s);

/* cpu_profile attribution callback: ctx is the struct attribution. */
void attribution__sample_attr(const struct stored_sample *s, void *ctx, struct sample_attr *out);

/* The label to show for a group's version: the operator's label, else the id. */
const char *isolate_group__version(const struct isolate_group *g);
/* The script (worker) name to show for a group. */
const char *isolate_group__script(const struct isolate_group *g);

#endif
