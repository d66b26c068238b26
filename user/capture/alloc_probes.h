/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * alloc_probes: allocation samples, taken where the runtime itself samples
 * (bpf/alloc.bpf.c; docs/heap.md), into the CPU sampler's ring.
 *
 *   alloc_probes__new()       open, share the sampler's maps, load
 *   alloc_probes__add()       a target and its binary
 *   alloc_probes__attach()    one uprobe_multi link per binary added
 *   alloc_probes__detach()    every probe off
 *   alloc_probes__sites()     what a target's binary offers
 *   alloc_probes__counters()  the probes' per-CPU counters, summed
 *   alloc_probes__free()      undoes exactly what was done
 *
 * The sites are found by symbol name, never at fixed addresses:
 *   v8::internal::SamplingHeapProfiler::SampleObject(Address, size_t)
 *       V8's sampling heap profiler, JS heap (size: the third argument);
 *   tcmalloc::tcmalloc_internal::SampleifyAllocation<Policy>(Static&,
 *       Policy, size_t requested_size, ...)
 *       tcmalloc's own sampler, native heap: one instance per policy (49
 *       in workerd), the size in the second argument (empty policies).
 *
 * Samples carry ISOPROF_SAMPLE_ALLOC_JS or _NATIVE and the size asked for.
 * Uprobe_multi links need Linux 6.6 (-EOPNOTSUPP before).  Errors are
 * negative errno; alloc_probes__new() returns NULL with errno set and,
 * with err_buf, a sentence.  Nothing prints.
 */
#ifndef ISOPROF_CAPTURE_ALLOC_PROBES_H
#define ISOPROF_CAPTURE_ALLOC_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bpf/isoprof.h"

struct alloc_probes;

struct alloc_probes_opts {
	int samples_fd;		/* sampler__samples_fd() */
	int targets_fd;		/* sampler__targets_fd() */
	int thread_tags_fd;	/* sampler__thread_tags_fd() */
	int v8_layouts_fd;	/* sampler__v8_layouts_fd() */
	bool thread_tags;	/* as the sampler was told (sampler_opts.thread_tags) */
	size_t ringbuf_bytes;	/* the sampler's ring, for its wakeup threshold */
	char *err_buf;
	size_t err_len;
};

/* tcmalloc's mean sampling interval unless the program sets another (2 MiB) */
#define ALLOC_NATIVE_DEFAULT_INTERVAL (2u << 20)

/* What a binary offers: ALLOC_SITES_* bits. */
#define ALLOC_SITES_JS (1u << 0)	/* V8's sampling heap profiler */
#define ALLOC_SITES_NATIVE (1u << 1)	/* tcmalloc's sampler */

/*
 * Which site a mangled symbol name is, as an ISOPROF_ALLOC_COOKIE() (site
 * and size argument); 0 for none.
 */
__u64 alloc_probes__cookie_of(const char *name);

struct alloc_probes *alloc_probes__new(const struct alloc_probes_opts *opts);
void alloc_probes__free(struct alloc_probes *a);

/*
 * Probe pid, running the binary open as exe_fd (the caller keeps its
 * descriptor).  Symbols are read once per binary.  -ENOENT when it has
 * neither site.
 */
int alloc_probes__add(struct alloc_probes *a, pid_t pid, int exe_fd);

/* Attach every binary added: 0 when one at least is probed, else the first error. */
int alloc_probes__attach(struct alloc_probes *a);

/* ALLOC_SITES_* of pid's binary once attached, else -errno (why not). */
int alloc_probes__sites(const struct alloc_probes *a, pid_t pid);

void alloc_probes__detach(struct alloc_probes *a);

int alloc_probes__counters(struct alloc_probes *a, struct isoprof_counters *out);

#endif /* ISOPROF_CAPTURE_ALLOC_PROBES_H */
