// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* uprobe_multi: BPF links on many offsets of one binary; see uprobe_multi.h. */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

#include "user/capture/uprobe_multi.h"

#define UPROBE_MULTI_RETURN 1u		/* BPF_F_UPROBE_MULTI_RETURN */

/* The kernel's union bpf_attr, link_create member (include/uapi/linux/bpf.h). */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad[9];
};

_Static_assert(__builtin_offsetof(struct uprobe_multi_attr, path) == 16, "uprobe_multi path");
_Static_assert(__builtin_offsetof(struct uprobe_multi_attr, pid) == 56, "uprobe_multi pid");

int uprobe_multi__link(int prog_fd, const char *path, const unsigned long *offsets,
		       const __u64 *cookies, __u32 cnt, pid_t pid, bool ret)
{
	struct uprobe_multi_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = UPROBE_MULTI_ATTACH_TYPE;
	attr.path = (__u64)(unsigned long)path;
	attr.offsets = (__u64)(unsigned long)offsets;
	attr.cookies = (__u64)(unsigned long)cookies;
	attr.cnt = cnt;
	attr.multi_flags = ret ? UPROBE_MULTI_RETURN : 0;
	attr.pid = (__u32)pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : (int)fd;
}

int uprobe_multi__unsupported_as_eopnotsupp(int err)
{
	return err == -EINVAL || err == -E2BIG ? -EOPNOTSUPP : err;
}

int uprobe_multi__attach(int prog_fd, const char *path, const unsigned long *offsets,
			 const __u64 *cookies, __u32 cnt, pid_t pid, bool ret)
{
	int fd = uprobe_multi__link(prog_fd, path, offsets, cookies, cnt, pid, ret);

	return fd < 0 ? uprobe_multi__unsupported_as_eopnotsupp(fd) : fd;
}
