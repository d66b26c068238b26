/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The V8 isolate the current thread has entered, for every BPF program
 * that needs it (sampler, GC probes).  Include after vmlinux.h and the
 * libbpf headers.
 */
#ifndef ISOPROF_BPF_ISOLATE_BPF_H
#define ISOPROF_BPF_ISOLATE_BPF_H

#include "isoprof.h"

/*
 * The thread-local v8::internal::g_current_isolate_, at a fixed offset from
 * the thread pointer that userspace computed from the runtime's ELF TLS
 * segment.  0, or -1 when it cannot be read.
 */
static __always_inline int read_isolate(const struct isoprof_target *target, __u64 *isolate)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 tp;

#if defined(__TARGET_ARCH_x86)
	tp = BPF_CORE_READ(task, thread.fsbase);
#elif defined(__TARGET_ARCH_arm64)
	tp = BPF_CORE_READ(task, thread.uw.tp_value);
#else
	return -1;
#endif
	if (!tp)
		return -1;
	return bpf_probe_read_user(isolate, sizeof(*isolate),
				   (void *)(tp + target->isolate_tls_offset));
}

#endif /* ISOPROF_BPF_ISOLATE_BPF_H */
