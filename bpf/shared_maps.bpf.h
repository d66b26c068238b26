/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The maps the sampler and the GC probes share.  Each program's object
 * declares them through this header; the sampler's are created (sizes set
 * by user/capture/sampler.c), and gc_probes.c reuses their fds
 * (bpf_map__reuse_fd), so both programs see the same entries.  Include
 * after vmlinux.h and the libbpf headers.
 */
#ifndef ISOPROF_BPF_SHARED_MAPS_BPF_H
#define ISOPROF_BPF_SHARED_MAPS_BPF_H

#include "isoprof.h"

/* The traced processes, keyed by tgid (user/capture/sampler.c fills it). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct isoprof_target);
} targets SEC(".maps");

/*
 * Platform threads running a job for an isolate, keyed by tid: tagged by the
 * GC probes, read by the sampler only when the loader says the probes are on.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct isoprof_thread_tag);
} thread_tags SEC(".maps");

#endif /* ISOPROF_BPF_SHARED_MAPS_BPF_H */
