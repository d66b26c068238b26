/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8json: what V8's two JSON profile formats (cpuprofile.h, heapprofile.h)
 * share: reading their JSON text within caps, finding the profile inside a
 * CDP reply, reading a node's callFrame, and the options and pprof
 * location both conversions to pprof use.
 *
 * Input is hostile (any file, any inspector reply): every reader checks
 * types and ranges and fills err with one line naming the field.  Nothing
 * prints.
 */
#ifndef ISOPROF_PROTO_V8JSON_H
#define ISOPROF_PROTO_V8JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/pprof_builder.h"

struct json_object;

/* Largest JSON text parsed (a .cpuprofile of hours is tens of MiB). */
#define V8_PROFILE_MAX_JSON (512ULL << 20)
/* Deepest JSON nesting accepted: a heap profile nests two levels per frame. */
#define V8_PROFILE_MAX_DEPTH 4000
/*
 * Most frames in all the stacks of one conversion to pprof (the sum of
 * each sample's stack length): 256 MiB of location ids in the builder.  A
 * real profile is far below: 50,000 distinct stacks 100 deep are 5e6.
 * Hostile trees (a deep chain with a sample on every node) are refused.
 */
#define V8_PROFILE_MAX_STACK_FRAMES (32ULL << 20)

/* Options of a conversion to pprof. */
/*
 * A JS frame of V8's named from its original source (source maps):
 * 1-based, what the pprof gets instead of V8's name, url and position.
 */
struct v8_frame_origin {
	const char *function;
	const char *file;
	int64_t start_line;
	int64_t line;
	int64_t column;
};

/*
 * V8's call frame (line and column 0-based, as V8 gives them): true and
 * *out (strings living until the conversion returns) to name it from its
 * original source, false to keep V8's.
 */
typedef bool (*v8_frame_map_fn)(void *ctx, const char *function_name, const char *url,
				int64_t line, int64_t column, struct v8_frame_origin *out);

struct v8_pprof_opts {
	v8_frame_map_fn map_frame;	/* NULL: frames as V8 names them */
	void *map_ctx;
	int64_t time_nanos;		/* wall clock of startTime; 0: unknown (omit) */
	uint64_t interval_ns;		/* nominal sampling interval; 0: median of time deltas */
	const char *const *comments;
	size_t ncomments;
	const struct pprof_label *labels;	/* added to every sample */
	size_t nlabels;
};

/*
 * Parse JSON text with the caps above: exactly one document (white space
 * around it), no NUL byte.  NULL with err filled and errno set (EFBIG,
 * EINVAL, ENOMEM) on failure; the object is the caller's
 * (json_object_put()).
 */
struct json_object *v8_json__parse(const char *json, size_t len, char *err, size_t errlen);

/*
 * The profile in a bare object, {"profile": ...}, or a CDP reply
 * {"id": N, "result": {"profile": ...}}: the first object that has the
 * member marker ("nodes" for a CPU profile, "head" for a heap profile).
 * NULL with err filled (a CDP error reply says so).  Borrowed from o.
 */
struct json_object *v8_json__unwrap(struct json_object *o, const char *marker, char *err,
				    size_t errlen);

/* An integer, or a number with no fraction (some tools write times as doubles). */
bool v8_json__number(struct json_object *o, int64_t *v);

/* The JSON type of v for a message ("missing" for NULL). */
const char *v8_json__type_name(struct json_object *v);

/* A node's callFrame.  Strings are borrowed from the JSON. */
struct v8_call_frame {
	const char *function_name, *script_id, *url;
	int64_t line, column;		/* 0-based; -1 unknown */
};

/*
 * Read node's callFrame; what names the node in messages.  strict: every
 * field must be there (a .cpuprofile); else missing strings are "" and
 * missing numbers -1 (heap profiles from older V8).  0 or -EINVAL.
 */
int v8_call_frame__load(struct json_object *node, const char *what, bool strict,
			struct v8_call_frame *cf, char *err, size_t errlen);

/*
 * The pprof location of a V8 frame: function named functionName
 * ("(anonymous)" when empty), system_name functionName, filename url,
 * start_line and line lineNumber + 1, column columnNumber + 1; or, when
 * o->map_frame names it from its original source, that name, file and
 * lines, with system_name "functionName url:line:column" (1-based: the
 * generated name and position, as a perf map writes them).  0 on ENOMEM.
 */
uint64_t v8_call_frame__location(struct pprof_builder *b, const struct v8_pprof_opts *o,
				 const char *function_name, const char *url, int64_t line,
				 int64_t column);

#endif /* ISOPROF_PROTO_V8JSON_H */
