/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8profile: V8's own profile formats and folded stacks, to and from pprof.
 *
 *  - CPU: the DevTools `Profile` (a `.cpuprofile` file, node --cpu-prof, or
 *    the result of CDP `Profiler.stop`), parsed and validated into
 *    struct v8_cpu_profile, converted to a pprof builder, and written back
 *    from any pprof profile.
 *  - Heap: the DevTools `SamplingHeapProfile` (CDP HeapProfiler.stopSampling,
 *    or a node --heap-prof `.heapprofile`) converted to pprof.
 *  - Folded stacks ("root;caller;leaf 12" per line), both ways.
 *
 * The exact mapping of every field is in docs/formats.md; in short:
 *
 *  CPU → pprof: sample types samples/count and cpu/nanoseconds, period
 *  cpu/nanoseconds = the sampling interval.  Each entry of `samples` is one
 *  pprof sample [1, interval] on its node's stack, leaf first, without
 *  "(root)" (hitCount per node when `samples` is absent).  Functions are
 *  named functionName ("(anonymous)" when empty), system_name functionName,
 *  filename url, start_line lineNumber + 1.  Each sample gets a `class`
 *  label from its leaf: gc, idle, program, js (a url), else v8-builtin.
 *
 *  Heap → pprof: sample types alloc_objects/count and alloc_space/bytes
 *  (default alloc_space), period space/bytes = the sampling interval.
 *  V8 already scales what it samples: a node's selfSize is V8's estimate
 *  of all bytes allocated there during the window (each sampled object
 *  stands for ~interval/size objects), so alloc_space = selfSize as is.
 *  alloc_objects is the number of sampled allocations (entries of
 *  `samples` naming the node), unscaled; 1 for a node with selfSize > 0
 *  when the profile has no `samples` array.  By default V8 reports only
 *  sampled objects still alive when the profile was taken.
 *
 *  pprof → CPU: a node per distinct call path (root first), pprof inline
 *  frames expanded into nodes, `samples` repeated count times, timeDeltas
 *  from the period.
 *
 * Ownership: parse/from_json return a profile the caller frees with
 * v8_cpu_profile__free(); its strings live as long as it does.  Builders
 * and JSON text returned through out-parameters belong to the caller.
 * Errors: -EINVAL (malformed input, with one line in err naming the field
 * or node), -EFBIG (input or output over the caps below), -ENOMEM.
 * Nothing prints.
 */
#ifndef ISOPROF_PROTO_V8PROFILE_H
#define ISOPROF_PROTO_V8PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"

struct json_object;

/* Largest JSON text parsed (a .cpuprofile of hours is tens of MiB). */
#define V8_PROFILE_MAX_JSON (512ULL << 20)
/* Deepest JSON nesting accepted: a heap profile nests two levels per frame. */
#define V8_PROFILE_MAX_DEPTH 4000
/* Most `samples` entries written by v8_cpu_profile__from_pprof(). */
#define V8_PROFILE_MAX_SAMPLES (32ULL << 20)

struct v8_cpu_node {
	uint32_t id;
	const char *function_name;	/* "" for anonymous */
	const char *url;		/* "" for native / no script */
	const char *script_id;
	int32_t line, column;		/* 0-based as in CDP; -1 unknown */
	uint32_t hit_count;
	uint32_t parent;		/* index into nodes[], UINT32_MAX for the root */
	uint32_t *children;		/* indexes into nodes[] */
	uint32_t nchildren;
};

struct v8_cpu_profile {
	struct v8_cpu_node *nodes;	/* nodes[0] is the root */
	size_t nnodes;
	uint32_t *samples;		/* indexes into nodes[] (converted from ids) */
	size_t nsamples;
	int64_t *time_deltas;		/* µs, nsamples of them; NULL when absent */
	int64_t start_time, end_time;	/* µs, V8 monotonic clock */
	/* private */
	struct json_object *json;	/* owns the strings */
	uint32_t *child_store;
};

/*
 * Parse a .cpuprofile: a bare Profile object, or a CDP reply/result
 * wrapping {"profile": {...}}.  Validates as v8_cpu_profile__validate_json().
 */
int v8_cpu_profile__parse(const char *json, size_t len, struct v8_cpu_profile **out,
			  char *err, size_t errlen);
/* The same from a parsed Profile object (the profile takes a reference). */
int v8_cpu_profile__from_json(struct json_object *profile, struct v8_cpu_profile **out,
			      char *err, size_t errlen);
void v8_cpu_profile__free(struct v8_cpu_profile *p);

/*
 * Structural check of the DevTools format: nodes a non-empty array whose
 * first node is "(root)", ids positive unique integers, every child id
 * present with exactly one parent, no cycles, every node reachable from
 * the root, callFrame with functionName/scriptId/url strings and
 * lineNumber/columnNumber integers, sample ids present, timeDeltas as long
 * as samples, startTime <= endTime.  0 or -EINVAL with the first violation.
 */
int v8_cpu_profile__validate_json(const char *json, size_t len, char *err, size_t errlen);

struct v8_pprof_opts {
	int64_t time_nanos;		/* wall clock of startTime; 0: unknown (omit) */
	uint64_t interval_ns;		/* nominal sampling interval; 0: median of time deltas */
	const char *const *comments;
	size_t ncomments;
	const struct pprof_label *labels;	/* added to every sample */
	size_t nlabels;
};

/* V8 CPU profile → pprof builder (caller frees).  o may be NULL. */
int v8_cpu_profile__to_pprof(const struct v8_cpu_profile *p, const struct v8_pprof_opts *o,
			     struct pprof_builder **out);
/* pprof → .cpuprofile JSON text (malloc'd, NUL-terminated; *len excludes the NUL). */
int v8_cpu_profile__from_pprof(const struct pprof_profile *p, char **json, size_t *len,
			       char *err, size_t errlen);

/*
 * SamplingHeapProfile → pprof.  profile is {head, samples} or a CDP
 * reply/result wrapping it; sampling_interval in bytes, 0 when unknown.
 */
int v8_heap_profile__to_pprof_json(struct json_object *profile, const struct v8_pprof_opts *o,
				   uint64_t sampling_interval, struct pprof_builder **out,
				   char *err, size_t errlen);
int v8_heap_profile__to_pprof(const char *json, size_t len, const struct v8_pprof_opts *o,
			      uint64_t sampling_interval, struct pprof_builder **out, char *err,
			      size_t errlen);

/*
 * Folded stacks: one "root;...;leaf N" line per distinct stack, sorted,
 * N the sum of sample_index over its samples (zero sums left out).  Frame
 * names have ';' replaced by ':' and line breaks by spaces.  -EIO when
 * writing fails.
 */
int folded__from_pprof(const struct pprof_profile *p, size_t sample_index, FILE *out);
/* Folded text → pprof with one sample type, samples/count. */
int folded__to_pprof(const char *text, size_t len, struct pprof_builder **out, char *err,
		     size_t errlen);

/* Parse JSON text with the caps above; NULL with err filled (and errno) on failure. */
struct json_object *v8_json__parse(const char *json, size_t len, char *err, size_t errlen);

#endif /* ISOPROF_PROTO_V8PROFILE_H */
