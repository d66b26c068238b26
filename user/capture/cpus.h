/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * cpus: the kernel's CPU list format ("0-3,5,7-8"), as in
 * /sys/devices/system/cpu/online.  Errors: -EINVAL for a malformed list,
 * -ENOMEM, -errno from reading the file.
 */
#ifndef ISOPROF_CAPTURE_CPUS_H
#define ISOPROF_CAPTURE_CPUS_H

#include <stddef.h>

struct cpu_set_list {
	int *ids;	/* ascending, owned; free with cpus__free() */
	size_t count;
};

int cpus__parse_list(const char *text, struct cpu_set_list *out);
int cpus__online(struct cpu_set_list *out);
void cpus__free(struct cpu_set_list *set);

#endif
