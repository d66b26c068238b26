// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "user/capture/caps.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif

static bool kernel_checks_every_bpf_command(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return true;
	return major < 6 || (major == 6 && minor < 5);
}

int caps__drop_after_attach(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	int keep[] = { CAP_SYS_PTRACE, CAP_SYSLOG, CAP_DAC_READ_SEARCH, CAP_DAC_OVERRIDE,
		       CAP_CHECKPOINT_RESTORE, -1 };
	__u32 mask[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (kernel_checks_every_bpf_command())
		keep[sizeof(keep) / sizeof(keep[0]) - 1] = CAP_BPF;
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
		if (keep[i] >= 0)
			mask[keep[i] / 32] |= 1u << (keep[i] % 32);
	}
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		data[i].effective &= mask[i];
		data[i].permitted &= mask[i];
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}
