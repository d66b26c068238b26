// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: proc_maps__parse() over arbitrary text. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/proc_maps.h"

/* Keeps reads of every string from being optimized away. */
static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct proc_map *m, *prev = NULL;
	struct proc_maps *maps;
	size_t i, n;

	maps = proc_maps__parse((const char *)data, size);
	if (!maps)
		return 0;
	n = proc_maps__count(maps);
	for (i = 0; i < n; i++) {
		m = proc_maps__entry(maps, i);
		/* Invariants the parser promises. */
		if (m->start >= m->end || strlen(m->perms) != 4 || !m->path ||
		    (prev && prev->start > m->start))
			__builtin_trap();
		sink += strlen(m->path);
		if (!proc_maps__find(maps, m->start))
			__builtin_trap();
		m = proc_maps__find(maps, m->end - 1);
		if (m && (m->start > proc_maps__entry(maps, i)->end - 1))
			__builtin_trap();
		prev = proc_maps__entry(maps, i);
	}
	if (proc_maps__entry(maps, n) ||
	    (proc_maps__malformed(maps) && !proc_maps__first_malformed_line(maps)))
		__builtin_trap();
	proc_maps__find(maps, 0);
	proc_maps__find(maps, UINT64_MAX);
	proc_maps__free(maps);
	return 0;
}
