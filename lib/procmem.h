/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * procmem: read another process's memory, read-only, with
 * process_vm_readv(): no ptrace stop, the target never waits.  The caller
 * needs what ptrace read access needs (root with CAP_SYS_PTRACE, or the
 * same user under Yama's scope).
 *
 * Actions return 0 or a negative errno: -EFAULT when any byte of the range
 * is unmapped (a partial read is a failure: a half-read object is worse
 * than none), -ESRCH when the process is gone, -EPERM without the right.
 */
#ifndef ISOPROF_LIB_PROCMEM_H
#define ISOPROF_LIB_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* len bytes at addr of pid into buf. */
int procmem__read(pid_t pid, uint64_t addr, void *buf, size_t len);

#endif /* ISOPROF_LIB_PROCMEM_H */
