// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* js_ranges: where a JS frame's pc can be; see js_ranges.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "user/capture/js_ranges.h"
#include "symbolize/proc_maps.h"

/* Anonymous executable memory: JIT code ([heap] when it lands next to brk). */
static bool is_jit(const struct proc_map *m)
{
	return m->perms[2] == 'x' && !m->inode &&
	       (!m->path[0] || !strcmp(m->path, "[heap]") || !strncmp(m->path, "[anon", 5));
}

static void add(struct isoprof_target *t, size_t *n, uint64_t start, uint64_t end)
{
	if (start >= end)
		return;
	/* adjoining the last range: one range */
	if (*n && t->js_end[*n - 1] == start) {
		t->js_end[*n - 1] = end;
		return;
	}
	if (*n == ISOPROF_JS_RANGES) {
		if (start < t->js_start[*n - 1])
			t->js_start[*n - 1] = start;
		if (end > t->js_end[*n - 1])
			t->js_end[*n - 1] = end;
		return;
	}
	t->js_start[*n] = start;
	t->js_end[(*n)++] = end;
}

int js_ranges__find(pid_t pid, const char *exe, uint64_t builtins_offset, uint64_t builtins_size,
		    struct isoprof_target *t)
{
	uint64_t lo = builtins_offset, hi = builtins_offset + builtins_size;
	struct proc_maps *maps;
	size_t n = 0, builtins = 0;

	if (!builtins_size || !exe)
		return -ENOENT;
	maps = proc_maps__read(NULL, pid);
	if (!maps)
		return -errno;
	memset(t->js_start, 0, sizeof(t->js_start));
	memset(t->js_end, 0, sizeof(t->js_end));
	for (size_t i = 0; i < proc_maps__count(maps); i++) {
		const struct proc_map *m = proc_maps__entry(maps, i);
		uint64_t from, to;

		if (is_jit(m)) {
			add(t, &n, m->start, m->end);
			continue;
		}
		if (m->perms[2] != 'x' || strcmp(m->path, exe))
			continue;
		from = lo > m->offset ? lo : m->offset;
		to = hi < m->offset + (m->end - m->start) ? hi : m->offset + (m->end - m->start);
		if (from < to) {
			add(t, &n, m->start + (from - m->offset), m->start + (to - m->offset));
			builtins++;
		}
	}
	proc_maps__free(maps);
	/* without the builtins, interpreted frames would be cut off: walk everything */
	if (!builtins || !n) {
		memset(t->js_start, 0, sizeof(t->js_start));
		memset(t->js_end, 0, sizeof(t->js_end));
		return -ENOENT;
	}
	return 0;
}
