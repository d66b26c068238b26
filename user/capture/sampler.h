/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sampler: the CPU sampler's lifecycle (bpf/sampler.bpf.c skeleton).
 *
 *   sampler__new()        open, size the maps, load
 *   sampler__add_target() which processes to keep (before or after start)
 *   sampler__set_v8_layout() how to read JS frames of a V8 build, for targets
 *                         that name it
 *   sampler__start()      one cpu-clock perf event per online CPU, attached
 *   sampler__poll()       hands each ring buffer record to the callback
 *   sampler__stop()       detaches and closes the events, drains the ring
 *   sampler__free()       undoes exactly what was done
 *
 * Errors are negative errno; sampler__new() returns NULL with errno set and,
 * when err_buf is given, a sentence saying which step failed.  Nothing prints
 * (libbpf's own messages are silenced unless ISOPROF_DEBUG_LIBBPF is set).
 */
#ifndef ISOPROF_CAPTURE_SAMPLER_H
#define ISOPROF_CAPTURE_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "bpf/isoprof.h"

struct sampler;

/* Returns 0 to continue; a negative value stops the current poll. */
typedef int (*sampler_sample_fn)(void *ctx, const struct isoprof_sample *sample);

struct sampler_opts {
	unsigned int frequency_hz;	/* samples per second per CPU */
	size_t ringbuf_bytes;		/* power of two, >= page size; 0: sampler__ringbuf_bytes() */
	unsigned int ringbuf_scale;	/* with ringbuf_bytes 0: that many times it (a power of two to 16; 0: once) */
	unsigned int max_targets;	/* 0: default */
	bool run_time_stats;		/* turn on kernel BPF run-time stats while loaded */
	bool thread_tags;		/* charge tagged platform threads (gc_probes.h) */
	char *err_buf;			/* optional: why sampler__new() failed */
	size_t err_len;
};

/*
 * The default ring size: half a second of samples at frequency_hz on ncpus
 * CPUs, as a power of two from 1 MiB to 64 MiB.
 */
size_t sampler__ringbuf_bytes(unsigned int frequency_hz, unsigned int ncpus);

struct sampler *sampler__new(const struct sampler_opts *opts, sampler_sample_fn fn, void *ctx);
void sampler__free(struct sampler *s);

int sampler__add_target(struct sampler *s, pid_t pid, const struct isoprof_target *target);
int sampler__remove_target(struct sampler *s, pid_t pid);

/*
 * How to read JS frames in one V8 build: entry index (< ISOPROF_V8_LAYOUT_MAX)
 * of the sampler's layouts, used by the targets whose isoprof_target.v8_layout
 * is index + 1.  Set it after sampler__new() and before adding the targets
 * that name it (an entry never set is all zeros, which is no build's
 * layout).  -EINVAL for an index out of range.
 */
int sampler__set_v8_layout(struct sampler *s, unsigned int index,
			   const struct isoprof_v8_layout *l);

/*
 * One system-wide cpu-clock perf event on cpu, a sample every period_ns,
 * as sampler__start() opens one per CPU: its descriptor, or -errno.
 */
int sampler__open_cpu_clock(int cpu, unsigned long long period_ns);

/* Attach to every online CPU.  Returns the number of CPUs, or -errno. */
int sampler__start(struct sampler *s);
/* Consume what is in the ring buffer, waiting up to timeout_ms for more. */
int sampler__poll(struct sampler *s, int timeout_ms);
/* Detach from the CPUs and consume what is left. */
int sampler__stop(struct sampler *s);

/*
 * The maps the GC probes share (gc_probes.h): the targets, and the tags
 * of platform threads.  Descriptors owned by the sampler.
 */
int sampler__targets_fd(const struct sampler *s);
int sampler__thread_tags_fd(const struct sampler *s);
/* The ring and the V8 layouts, for other programs that write samples (alloc_probes.h). */
int sampler__samples_fd(const struct sampler *s);
int sampler__v8_layouts_fd(const struct sampler *s);
size_t sampler__ring_bytes(const struct sampler *s);

/* Sum of the per-CPU counters. */
int sampler__counters(struct sampler *s, struct isoprof_counters *out);

/* The sampling period in nanoseconds actually programmed. */
unsigned long long sampler__period_ns(const struct sampler *s);

/*
 * Run time statistics of the BPF program: valid with opts.run_time_stats (or
 * kernel.bpf_stats_enabled=1).  -ENODATA when stats are off.
 */
int sampler__prog_stats(struct sampler *s, unsigned long long *run_time_ns,
			unsigned long long *run_cnt);

#endif /* ISOPROF_CAPTURE_SAMPLER_H */
