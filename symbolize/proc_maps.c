// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* proc_maps: parse /proc/PID/maps; see proc_maps.h for the contract. */
#include "symbolize/proc_maps.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "lib/textscan.h"

struct proc_maps {
	struct proc_map *entries;
	size_t nr;
	size_t nr_malformed;
	size_t first_malformed;	/* 1-based line number, 0 when none */
	char *paths;		/* every path, NUL-separated */
};

static const char deleted_suffix[] = " (deleted)";

static bool expect(const char **pp, const char *end, char c)
{
	if (*pp >= end || **pp != c)
		return false;
	(*pp)++;
	return true;
}

static bool parse_perms(const char **pp, const char *end, char perms[5])
{
	const char *p = *pp;

	if (end - p < 4)
		return false;
	if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
	    (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
		return false;
	memcpy(perms, p, 4);
	perms[4] = '\0';
	*pp = p + 4;
	return true;
}

/*
 * Parse one line [p, end) into *m, copying the path to *pool.  Returns false
 * for a malformed line, leaving *pool unchanged.
 */
static bool parse_line(const char *p, const char *end, struct proc_map *m, char **pool)
{
	uint64_t major, minor;
	size_t n;

	if (memchr(p, '\0', (size_t)(end - p)))
		return false;
	if (!textscan__hex(&p, end, &m->start) || !expect(&p, end, '-') ||
	    !textscan__hex(&p, end, &m->end) || !expect(&p, end, ' ') ||
	    !parse_perms(&p, end, m->perms) || !expect(&p, end, ' ') ||
	    !textscan__hex(&p, end, &m->offset) || !expect(&p, end, ' ') ||
	    !textscan__hex(&p, end, &major) || !expect(&p, end, ':') ||
	    !textscan__hex(&p, end, &minor) || !expect(&p, end, ' ') ||
	    !textscan__dec(&p, end, &m->inode))
		return false;
	if (m->start >= m->end || major > UINT32_MAX || minor > UINT32_MAX)
		return false;
	m->dev_major = (uint32_t)major;
	m->dev_minor = (uint32_t)minor;

	/* Anonymous lines end right after the inode or with one blank. */
	if (p < end && *p != ' ')
		return false;
	while (p < end && *p == ' ')
		p++;

	n = (size_t)(end - p);
	m->deleted = false;
	if (n >= sizeof(deleted_suffix) - 1 &&
	    !memcmp(end - (sizeof(deleted_suffix) - 1), deleted_suffix,
		    sizeof(deleted_suffix) - 1)) {
		m->deleted = true;
		n -= sizeof(deleted_suffix) - 1;
	}
	if (!n) {
		m->path = "";
		return true;
	}
	memcpy(*pool, p, n);
	(*pool)[n] = '\0';
	m->path = *pool;
	*pool += n + 1;
	return true;
}

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

struct proc_maps *proc_maps__parse(const char *buf, size_t len)
{
	struct proc_maps *maps;
	const char *p, *end = buf + len, *eol;
	size_t lines = 1, lineno = 0;
	bool sorted = true;
	char *pool;

	maps = calloc(1, sizeof(*maps));
	if (!maps)
		return NULL;
	if (!len)
		return maps;

	for (p = buf; (eol = memchr(p, '\n', (size_t)(end - p))); p = eol + 1)
		lines++;
	maps->entries = calloc(lines, sizeof(*maps->entries));
	/* A path plus its NUL never outgrows its line plus newline. */
	maps->paths = malloc(len + 1);
	if (!maps->entries || !maps->paths) {
		proc_maps__free(maps);
		errno = ENOMEM;
		return NULL;
	}
	pool = maps->paths;

	for (p = buf; p < end; p = eol + 1) {
		struct proc_map *m = &maps->entries[maps->nr];

		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		lineno++;
		if (eol == p)
			continue;
		if (!parse_line(p, eol, m, &pool)) {
			if (!maps->nr_malformed++)
				maps->first_malformed = lineno;
			continue;
		}
		if (maps->nr && map_cmp(&maps->entries[maps->nr - 1], m) > 0)
			sorted = false;
		maps->nr++;
	}
	/* The kernel writes them in order; hand-made input may not be. */
	if (!sorted)
		qsort(maps->entries, maps->nr, sizeof(*maps->entries), map_cmp);
	return maps;
}

struct proc_maps *proc_maps__read(const char *proc_root, pid_t pid)
{
	struct proc_maps *maps;
	char path[PATH_MAX];
	uint8_t *buf;
	size_t len;
	int err;

	if (!proc_root)
		proc_root = "/proc";
	if (pid <= 0) {
		errno = ESRCH;
		return NULL;
	}
	if (snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)pid) >=
	    (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	/* The file reports size 0: the size is no limit, read to EOF. */
	err = fileio__read_all(path, 0, &buf, &len);
	if (err < 0) {
		errno = err == -ENOENT ? ESRCH : -err;
		return NULL;
	}
	maps = proc_maps__parse((const char *)buf, len);
	err = errno;
	free(buf);
	errno = err;
	return maps;
}

void proc_maps__free(struct proc_maps *maps)
{
	if (!maps)
		return;
	free(maps->entries);
	free(maps->paths);
	free(maps);
}

size_t proc_maps__count(const struct proc_maps *maps)
{
	return maps->nr;
}

const struct proc_map *proc_maps__entry(const struct proc_maps *maps, size_t i)
{
	return i < maps->nr ? &maps->entries[i] : NULL;
}

size_t proc_maps__malformed(const struct proc_maps *maps)
{
	return maps->nr_malformed;
}

size_t proc_maps__first_malformed_line(const struct proc_maps *maps)
{
	return maps->first_malformed;
}

const struct proc_map *proc_maps__find(const struct proc_maps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->nr;

	/* First entry with start > addr; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (maps->entries[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= maps->entries[lo - 1].end)
		return NULL;
	return &maps->entries[lo - 1];
}

bool proc_map__is_exec(const struct proc_map *map)
{
	return map->perms[2] == 'x';
}
