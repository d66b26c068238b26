/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * gc_probes: V8's GC pauses per isolate, and platform threads charged to
 * the isolate whose job they run (bpf/gc.bpf.c; docs/attribution.md, "GC").
 *
 *   gc_probes__new()          open, share the sampler's maps, load
 *   gc_probes__add()          a target and its V8 binary
 *   gc_probes__attach()       uprobes on the binaries added
 *   gc_probes__window_start() count the pauses that begin from then on
 *   gc_probes__detach()       every uprobe off (the maps stay readable)
 *   gc_probes__pauses()       one isolate's pauses
 *   gc_probes__free()         undoes exactly what was done
 *
 * The probe sites are found by symbol name in the binary's symbol table
 * (gc_probes__site_of()), never at fixed addresses:
 *   v8::internal::Heap::CollectGarbage(...)          entry and return: a whole call
 *   v8::internal::GCTracer::StartObservablePause(...) entry: V8's pause begins
 *   v8::internal::GCTracer::StopObservablePause(...)  entry: V8's pause ends
 *   v8::platform::NewDefaultJobHandle(...)           entry: a job posted
 *   <any>::Run(v8::JobDelegate*)                     entry and return: a job run
 *
 * Uprobes are attached through the descriptor of the binary the caller
 * opened (lib/safe_open.h): the kernel probes that very file.  They need
 * uprobe_multi links (Linux 6.6); older kernels get -EOPNOTSUPP.
 *
 * Errors are negative errno; gc_probes__new() returns NULL with errno set
 * and, with err_buf, a sentence naming the failed step.  Nothing prints.
 */
#ifndef ISOPROF_CAPTURE_GC_PROBES_H
#define ISOPROF_CAPTURE_GC_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/isoprof.h"

struct gc_probes;

/*
 * What this kernel offers the probes, found by asking it for a link (see
 * gc_probes__probe_kernel()): 0 when it does, -EOPNOTSUPP when it does
 * not, else the -errno that kept the question from being asked (-EPERM
 * without CAP_BPF and CAP_PERFMON).
 */
struct gc_probes_kernel {
	int links;		/* uprobe_multi links (Linux 6.6) */
	int process_filter;	/* a link's pid filter takes the whole process, not
				 * only its main thread (6.10; 6.9.5, 6.6.35) */
};

/*
 * Load a one-instruction uprobe_multi program and ask for a link on "/"
 * (no real binary): the kernel's answer says which of the above it has.
 * Needs what loading the GC probes needs.  Returns out->links.
 */
int gc_probes__probe_kernel(struct gc_probes_kernel *out);

struct gc_probes_opts {
	int targets_fd;		/* sampler__targets_fd() */
	int thread_tags_fd;	/* sampler__thread_tags_fd() */
	char *err_buf;		/* optional: why gc_probes__new() failed */
	size_t err_len;
	/*
	 * Probe every process that runs a binary, filtered in BPF by the
	 * targets map: a process of that binary that becomes a target later
	 * (continuous) is probed from then on, with no new attach.
	 */
	bool every_process;
};

/*
 * Which probe a (mangled) symbol name is: an ISOPROF_GC_SITE_* value
 * (bpf/isoprof.h), 0 for none.
 */
int gc_probes__site_of(const char *name);

struct gc_probes *gc_probes__new(const struct gc_probes_opts *opts);
void gc_probes__free(struct gc_probes *g);

/*
 * Probe pid, whose V8 is in the binary open as exe_fd (the caller keeps
 * its descriptor; a duplicate is held until gc_probes__attach()).  Symbols
 * are read once per binary.  -ENOENT when the binary has no
 * Heap::CollectGarbage symbol (stripped, or V8 in a shared library),
 * -ENOEXEC for an unreadable symbol table, -E2BIG for a binary with more
 * than 256 functions to probe (V8 has about 25).
 */
int gc_probes__add(struct gc_probes *g, pid_t pid, int exe_fd);

/*
 * Attach the probes of every binary added: two uprobe_multi links per
 * binary (entries, returns), filtered to the one process when a single
 * target runs it and the kernel's pid filter takes the whole process
 * (gc_probes_kernel.process_filter), else to its targets in BPF.  0 when
 * at least one binary is probed, else the first error.
 * gc_probes__probed() says per pid.
 */
int gc_probes__attach(struct gc_probes *g);

/* 0 when pid's GC is probed, else why not (-errno of adding or attaching). */
int gc_probes__probed(const struct gc_probes *g, pid_t pid);

/*
 * Whether pid's binary has both ends of V8's observable pause probed (the
 * obs_* fields of its pauses): false for a V8 whose GCTracer functions are
 * inlined or have a signature gc_probes__site_of() does not know, or
 * whose probes could not be attached.  Still so after gc_probes__detach().
 */
bool gc_probes__observable(const struct gc_probes *g, pid_t pid);

/* Pauses that begin before start_ns (CLOCK_MONOTONIC) are not counted. */
void gc_probes__window_start(struct gc_probes *g, uint64_t start_ns);

/*
 * Continuous: a new window from start_ns; the pauses counted so far are
 * forgotten (read them first).
 */
void gc_probes__next_window(struct gc_probes *g, uint64_t start_ns);

/*
 * The window is over: pauses that end from now on are not counted (a
 * pause counts when it begins and ends inside the window), then every
 * uprobe off.  What was counted stays readable.
 */
void gc_probes__detach(struct gc_probes *g);

/*
 * The pauses of one isolate, whole calls and observable: 0, or -ENOENT
 * when it had none.
 */
int gc_probes__pauses(struct gc_probes *g, uint32_t pid, uint64_t isolate,
		      struct isoprof_gc_pauses *out);

/* Sum of the per-CPU counters. */
int gc_probes__counters(struct gc_probes *g, struct isoprof_gc_counters *out);

#endif /* ISOPROF_CAPTURE_GC_PROBES_H */
