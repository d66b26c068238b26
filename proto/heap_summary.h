/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * heap_summary: what a heap profile as heapprofile.h writes it adds up to,
 * read from the profile: its alloc_space and alloc_objects over every
 * sample, its period (the sampling interval), and the function that
 * allocated most itself (flat alloc_space, the leaf frame's).
 *
 * What the numbers are is heapprofile.h's: bytes is V8's own estimate of
 * the bytes allocated, scaled from its samples; objects counts the sampled
 * allocations, unscaled (one per `interval` bytes on average).
 *
 * A function is its name and file, as isoprof's profiles name it (source
 * maps applied); its line is the function's start line, 0 when unknown.
 * `go tool pprof -top` merges functions by name alone, so it differs only
 * where two files have a function of the same name.  Ties in bytes go to
 * the name, then the file, that sort first.
 *
 * Errors: -EINVAL (no alloc_space / alloc_objects sample type: not a heap
 * profile), -ENOMEM.  The summary owns its strings until
 * heap_summary__release().  Nothing prints.
 */
#ifndef ISOPROF_PROTO_HEAP_SUMMARY_H
#define ISOPROF_PROTO_HEAP_SUMMARY_H

#include <stdint.h>

struct pprof_profile;

struct heap_summary {
	int64_t bytes;		/* alloc_space, every sample */
	int64_t objects;	/* alloc_objects: allocations sampled */
	int64_t interval;	/* the profile's period in bytes; 0 when unknown */
	char *top_name;		/* the function with the most flat bytes; NULL: none */
	char *top_file;		/* its file; "" when unknown */
	int64_t top_line;	/* its start line; 0 when unknown */
	int64_t top_bytes;	/* its flat alloc_space */
};

int heap_summary__compute(const struct pprof_profile *p, struct heap_summary *out);
void heap_summary__release(struct heap_summary *s);

#endif /* ISOPROF_PROTO_HEAP_SUMMARY_H */
