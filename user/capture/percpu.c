// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* percpu: per-CPU counters summed over the CPUs; see percpu.h. */
#include "user/capture/percpu.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

int percpu__sum_u64(const struct bpf_map *map, void *out, size_t size)
{
	int ncpus = libbpf_num_possible_cpus();
	size_t nr = size / sizeof(uint64_t);
	uint64_t *per_cpu, *sum = out;
	uint32_t key = 0;

	memset(out, 0, size);
	if (size % sizeof(uint64_t))
		return -EINVAL;
	if (ncpus <= 0)
		return ncpus ? ncpus : -EINVAL;
	per_cpu = calloc((size_t)ncpus, size);
	if (!per_cpu)
		return -ENOMEM;
	if (bpf_map__lookup_elem(map, &key, sizeof(key), per_cpu, (size_t)ncpus * size, 0)) {
		int err = -errno;

		free(per_cpu);
		return err;
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (size_t i = 0; i < nr; i++)
			sum[i] += per_cpu[(size_t)cpu * nr + i];
	free(per_cpu);
	return 0;
}
