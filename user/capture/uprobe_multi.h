/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * uprobe_multi: one BPF link that puts a program on many offsets of one
 * binary (Linux 6.6), created with the bpf() syscall because the libbpf
 * this builds against may predate it.  The GC probes and the allocation
 * probes both attach this way.
 *
 *   uprobe_multi__link()        BPF_LINK_CREATE, the kernel's answer as is
 *   uprobe_multi__attach()      the same, "not supported" as -EOPNOTSUPP
 *
 * Errors are negative errno.  Nothing prints.
 */
#ifndef ISOPROF_CAPTURE_UPROBE_MULTI_H
#define ISOPROF_CAPTURE_UPROBE_MULTI_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

/* BPF_TRACE_UPROBE_MULTI, for bpf_program__set_expected_attach_type() */
#define UPROBE_MULTI_ATTACH_TYPE 48

/*
 * One link of prog_fd on cnt offsets (file offsets) of the file at path,
 * each with its cookie (cookies may be NULL); ret: on the returns.  pid 0:
 * every process that maps the file.  The link's descriptor, or -errno as
 * the kernel gave it.
 */
int uprobe_multi__link(int prog_fd, const char *path, const unsigned long *offsets,
		       const __u64 *cookies, __u32 cnt, pid_t pid, bool ret);

/* uprobe_multi__link(), with a kernel's refusal of the link type as -EOPNOTSUPP. */
int uprobe_multi__attach(int prog_fd, const char *path, const unsigned long *offsets,
			 const __u64 *cookies, __u32 cnt, pid_t pid, bool ret);

/*
 * A kernel without uprobe_multi refuses the attach type as invalid: 6.1's
 * link_create() takes only BPF_PERF_EVENT and BPF_TRACE_KPROBE_MULTI for
 * a kprobe program, and its CHECK_ATTR() finds the fields past
 * kprobe_multi set.
 */
int uprobe_multi__unsupported_as_eopnotsupp(int err);

#endif /* ISOPROF_CAPTURE_UPROBE_MULTI_H */
