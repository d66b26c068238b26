/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * heapprofile: V8's sampling heap profile, the DevTools
 * `SamplingHeapProfile` (CDP HeapProfiler.stopSampling, or a node
 * --heap-prof `.heapprofile`), converted to pprof.  docs/formats.md has the
 * field mapping; in short:
 *
 *  Sample types alloc_objects/count and alloc_space/bytes (default
 *  alloc_space), period space/bytes = the sampling interval.  V8 already
 *  scales what it samples: a node's selfSize is V8's estimate of all bytes
 *  allocated there during the window (each sampled object stands for
 *  ~interval/size objects), so alloc_space = selfSize as is.  alloc_objects
 *  is the number of sampled allocations (entries of `samples` naming the
 *  node), unscaled; 1 for a node with selfSize > 0 when the profile has no
 *  `samples` array.  By default V8 reports only sampled objects still
 *  alive when the profile was taken.
 *
 * The builder returned is the caller's.  Errors: -EINVAL (malformed input,
 * with one line in err naming the field or node), -EFBIG (input over
 * V8_PROFILE_MAX_JSON), -ENOMEM.  Nothing prints.
 */
#ifndef ISOPROF_PROTO_HEAPPROFILE_H
#define ISOPROF_PROTO_HEAPPROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/pprof_builder.h"
#include "proto/v8json.h"

struct json_object;

/*
 * SamplingHeapProfile → pprof.  profile is {head, samples} or a CDP
 * reply/result wrapping it; sampling_interval in bytes, 0 when unknown.
 * o may be NULL.
 */
int v8_heap_profile__to_pprof_json(struct json_object *profile, const struct v8_pprof_opts *o,
				   uint64_t sampling_interval, struct pprof_builder **out,
				   char *err, size_t errlen);
/* The same from JSON text. */
int v8_heap_profile__to_pprof(const char *json, size_t len, const struct v8_pprof_opts *o,
			      uint64_t sampling_interval, struct pprof_builder **out, char *err,
			      size_t errlen);

#endif /* ISOPROF_PROTO_HEAPPROFILE_H */
