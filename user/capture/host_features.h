/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * host_features: what this kernel and this process offer isoprof, each
 * found by doing what isoprof does, not by the kernel's version: the
 * sampler is loaded (sampler.h), a cpu-clock event opened as the sampler
 * opens them, a uprobe_multi link asked for as the GC probes ask
 * (gc_probes__probe_kernel()).  `isoprof check` prints it; the tests ask
 * `isoprof check --json` which of their checks this host can run
 * (tests/lib.sh, needs_feature).
 *
 *   host_features__init()   the kernel, the sysctls, and the privilege the
 *                           process was started with: call it before
 *                           caps__start()
 *   host_features__probe()  the probes, with the capabilities held now:
 *                           call it in the phase they stand for
 *                           (CAPS_ARMING with CAPS_NEED_BPF | CAPS_NEED_KSYMS:
 *                           what record arms with)
 *
 * Each probe is undone before the next (programs, maps, events closed).
 * A feature that a failed probe before it kept from being asked is
 * HOST_FEATURE_UNKNOWN.  Nothing prints (libbpf's messages only with
 * ISOPROF_DEBUG_LIBBPF set, as in sampler.h).
 */
#ifndef ISOPROF_CAPTURE_HOST_FEATURES_H
#define ISOPROF_CAPTURE_HOST_FEATURES_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* In the order `isoprof check` prints them; keys in host_features.c. */
enum host_feature_id {
	HOST_FEATURE_PRIVILEGE,		/* "privilege": CAP_BPF, CAP_PERFMON */
	HOST_FEATURE_BTF,		/* "btf": /sys/kernel/btf/vmlinux */
	HOST_FEATURE_BPF_PERF_EVENT,	/* "bpf_perf_event": the program type loads */
	HOST_FEATURE_LOCKDOWN,		/* "lockdown": BPF may read kernel memory */
	HOST_FEATURE_SAMPLER,		/* "sampler": bpf/sampler.bpf.c loads */
	HOST_FEATURE_CPU_CLOCK,		/* "cpu_clock": a system-wide cpu-clock event */
	HOST_FEATURE_UPROBE_MULTI,	/* "uprobe_multi": links (6.6) */
	HOST_FEATURE_UPROBE_MULTI_PROCESS, /* "uprobe_multi_process": pid filter per process */
	HOST_FEATURE_GC_PROBES,		/* "gc_probes": bpf/gc.bpf.c loads */
	HOST_FEATURE_KALLSYMS,		/* "kallsyms": /proc/kallsyms with addresses */
	HOST_FEATURE_READ_PROCESSES,	/* "read_processes": other users' processes */
	HOST_FEATURE_DROP_CAP_BPF,	/* "drop_cap_bpf": record gives up CAP_BPF after attach */
	HOST_FEATURE_COUNT,
};

enum host_feature_state {
	HOST_FEATURE_UNKNOWN,
	HOST_FEATURE_YES,
	HOST_FEATURE_NO,
};

struct host_feature {
	const char *key;	/* stable: the JSON key, the tests' name for it */
	const char *name;	/* for people */
	const char *needed_for;	/* "record (required)", "GC pauses (record)", ... */
	bool required;		/* record cannot run without it */
	enum host_feature_state state;
	char value[160];	/* what was found ("uid 0: CAP_BPF CAP_PERFMON", an error) */
	const char *fix;	/* when not YES: what to do ("needs Linux 6.6"); else NULL */
};

#define HOST_SYSCTL_UNKNOWN INT_MIN

struct host_features {
	char kernel[65];		/* uname -r */
	char arch[65];			/* uname -m */
	unsigned int euid;
	uint64_t caps;			/* permitted, as started */
	int perf_event_paranoid;	/* HOST_SYSCTL_UNKNOWN when unreadable */
	int unprivileged_bpf_disabled;
	int kptr_restrict;
	char lockdown[24];		/* "none", "integrity", "confidentiality"; "" unknown */
	struct host_feature f[HOST_FEATURE_COUNT];
};

/* 0, or -errno when uname() or capget() fails. */
int host_features__init(struct host_features *hf);

/* Fills every feature's state; a probe that fails is the answer, not an error. */
void host_features__probe(struct host_features *hf);

/* Every required feature is there. */
bool host_features__record_can_run(const struct host_features *hf);

#endif /* ISOPROF_CAPTURE_HOST_FEATURES_H */
