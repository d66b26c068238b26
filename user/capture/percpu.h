/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * percpu: the per-CPU counter structs of isoprof's BPF programs, summed
 * over the CPUs.  A counter struct is all __u64 (bpf/isoprof.h asserts
 * the layouts), so one sum serves every one of them.
 */
#ifndef ISOPROF_USER_CAPTURE_PERCPU_H
#define ISOPROF_USER_CAPTURE_PERCPU_H

#include <stddef.h>

struct bpf_map;

/*
 * Element 0 of the per-CPU array map, summed field by field into out
 * (size bytes, a multiple of 8).  0 or a negative errno; out is zeroed
 * first, and stays zero on error.
 */
int percpu__sum_u64(const struct bpf_map *map, void *out, size_t size);

#endif /* ISOPROF_USER_CAPTURE_PERCPU_H */
