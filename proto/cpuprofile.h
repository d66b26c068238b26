/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cpuprofile: V8's CPU profile, the DevTools `Profile` (a `.cpuprofile`
 * file, node --cpu-prof, or the result of CDP `Profiler.stop`), parsed
 * and validated into struct v8_cpu_profile, converted to a pprof builder,
 * and written back from any pprof profile.  docs/formats.md has the
 * mapping of every field; in short:
 *
 *  CPU → pprof: sample types samples/count and cpu/nanoseconds, period
 *  cpu/nanoseconds = the sampling interval.  Each entry of `samples` is one
 *  pprof sample [1, interval] on its node's stack, leaf first, without
 *  "(root)" (hitCount per node when `samples` is absent).  Functions are
 *  named functionName ("(anonymous)" when empty), system_name functionName,
 *  filename url, start_line lineNumber + 1.  Each sample gets a `class`
 *  label from its leaf: gc, idle, program, js (a url), else v8-builtin.
 *
 *  pprof → CPU: a node per distinct call path (root first), pprof inline
 *  frames expanded into nodes, `samples` repeated count times, timeDeltas
 *  from the period.
 *
 * Ownership: parse/from_json return a profile the caller frees with
 * v8_cpu_profile__free(); its strings live as long as it does.  Builders
 * and JSON text returned through out-parameters belong to the caller.
 * Errors: -EINVAL (malformed input, with one line in err naming the field
 * or node), -EFBIG (input or output over the caps), -ENOMEM.  Nothing
 * prints.
 */
#ifndef ISOPROF_PROTO_CPUPROFILE_H
#define ISOPROF_PROTO_CPUPROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "proto/v8json.h"

/* Most `samples` entries written by v8_cpu_profile__from_pprof(). */
#define V8_PROFILE_MAX_SAMPLES (32ULL << 20)
/*
 * Most frames kept of one stack in the conversion to pprof.  V8 records at
 * most 255 frames a sample (inlined frames add some); a node deeper than
 * this keeps its leaf-most frames, and the profile's comments say how many
 * stacks were cut.  The tree itself may be deeper.
 */
#define V8_CPU_PROFILE_MAX_DEPTH 2048

/*
 * The comment a profile converted from a .cpuprofile starts with, which
 * tells V8's profile from isoprof's (v8_cpu_profile__converted()).
 */
#define V8_CPU_PROFILE_SOURCE "source: V8 CPU profiler"

struct json_object;

struct v8_cpu_node {
	uint32_t id;
	const char *function_name;	/* "" for anonymous */
	const char *url;		/* "" for native / no script */
	const char *script_id;
	int32_t line, column;		/* 0-based as in CDP; -1 unknown */
	uint32_t hit_count;
	uint32_t parent;		/* index into nodes[], UINT32_MAX for the root */
	uint32_t depth;			/* frames below the root: 0 for the root */
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
 * as samples, startTime <= endTime.  0 or -EINVAL with the first violation;
 * -EFBIG when the stacks of the nodes with samples, each cut to
 * V8_CPU_PROFILE_MAX_DEPTH, hold over V8_PROFILE_MAX_STACK_FRAMES frames in
 * all (what the pprof conversion would write: a 200,000-deep chain with a
 * sample per node would be 2e10).
 */
int v8_cpu_profile__validate_json(const char *json, size_t len, char *err, size_t errlen);

/* The median of timeDeltas in µs (it resists V8's bursts and gaps); 0 without any. */
int64_t v8_cpu_profile__median_delta_us(const struct v8_cpu_profile *p);

/* V8 CPU profile → pprof builder (caller frees).  o may be NULL. */
int v8_cpu_profile__to_pprof(const struct v8_cpu_profile *p, const struct v8_pprof_opts *o,
			     struct pprof_builder **out);
/* pprof → .cpuprofile JSON text (malloc'd, NUL-terminated; *len excludes the NUL). */
int v8_cpu_profile__from_pprof(const struct pprof_profile *p, char **json, size_t *len,
			       char *err, size_t errlen);

/* Was p converted from a V8 CPU profile (a V8_CPU_PROFILE_SOURCE comment)? */
bool v8_cpu_profile__converted(const struct pprof_profile *p);

#endif /* ISOPROF_PROTO_CPUPROFILE_H */
