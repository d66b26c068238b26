/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8profile: V8's own profile formats and folded stacks, to and from
 * pprof, one header per format:
 *
 *   cpuprofile.h   the DevTools CPU `Profile` (.cpuprofile, CDP
 *                  Profiler.stop): parse, validate, → pprof, pprof →
 *   heapprofile.h  the DevTools `SamplingHeapProfile` → pprof
 *   folded.h       folded stacks, both ways
 *   v8json.h       what the two JSON formats share (caps, CDP replies,
 *                  callFrames, conversion options)
 *
 * profile_file.h reads a file of any of these kinds (or pprof) and tells
 * which it is.  docs/formats.md has the mapping of every field.
 */
#ifndef ISOPROF_PROTO_V8PROFILE_H
#define ISOPROF_PROTO_V8PROFILE_H

#include "proto/cpuprofile.h"
#include "proto/folded.h"
#include "proto/heapprofile.h"
#include "proto/v8json.h"

#endif /* ISOPROF_PROTO_V8PROFILE_H */
