/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * caps: give up the capabilities a capture no longer needs once its BPF
 * programs are loaded and attached.
 *
 * Kept: what reading other processes' /proc entries and kallsyms needs
 * (CAP_SYS_PTRACE for maps and /proc/PID/root, CAP_CHECKPOINT_RESTORE for
 * /proc/PID/map_files, CAP_SYSLOG for kallsyms addresses, CAP_DAC_* for
 * their files), and CAP_BPF on kernels before 6.5, where every bpf()
 * command, even a map lookup on an open fd, is checked.  Everything else
 * (CAP_SYS_ADMIN, CAP_PERFMON, network, ...) is dropped from the effective,
 * permitted and inheritable sets, for good.
 *
 * Returns 0 or -errno.
 */
#ifndef ISOPROF_CAPTURE_CAPS_H
#define ISOPROF_CAPTURE_CAPS_H

int caps__drop_after_attach(void);

#endif
