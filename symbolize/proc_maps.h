/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * proc_maps: a parsed snapshot of /proc/PID/maps.
 *
 * Lines look like
 *   55d0c8a00000-55d0c8a2d000 r-xp 00002000 fe:00 247134     /usr/bin/cat
 * The path is everything after the inode and its padding: it may contain
 * spaces, is empty for anonymous memory, and the kernel appends
 * " (deleted)" when the file was unlinked; that suffix is removed from
 * path and reported in deleted.
 *
 * A malformed line is skipped and counted (proc_maps__malformed()), never a
 * reason to fail the whole file: one odd line must not cost a process all
 * its symbols.
 *
 * Ownership: entries and their paths belong to the proc_maps object and stay
 * valid until proc_maps__free().  Constructors return NULL and set errno.
 */
#ifndef ISOPROF_SYMBOLIZE_PROC_MAPS_H
#define ISOPROF_SYMBOLIZE_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start;
	uint64_t end;		/* exclusive */
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	char perms[5];		/* "r-xp", NUL-terminated */
	bool deleted;		/* the kernel said " (deleted)" */
	const char *path;	/* "" for anonymous memory; never NULL */
};

struct proc_maps;

/*
 * Parse maps text of len bytes (need not be NUL-terminated).  Entries are
 * sorted by start.  Empty input gives an empty table.  NULL with errno
 * ENOMEM on allocation failure.
 */
struct proc_maps *proc_maps__parse(const char *buf, size_t len);

/*
 * Read and parse PROC_ROOT/PID/maps (proc_root NULL means "/proc").  errno:
 * ESRCH when the process does not exist (or exited while being read),
 * EACCES/EPERM when its maps are not readable, ENOMEM.
 */
struct proc_maps *proc_maps__read(const char *proc_root, pid_t pid);

void proc_maps__free(struct proc_maps *maps);

size_t proc_maps__count(const struct proc_maps *maps);

/* The i-th entry in address order; NULL when i is out of range. */
const struct proc_map *proc_maps__entry(const struct proc_maps *maps, size_t i);

/* Lines that were skipped as malformed, and the number of the first one. */
size_t proc_maps__malformed(const struct proc_maps *maps);
size_t proc_maps__first_malformed_line(const struct proc_maps *maps);

/*
 * The entry containing addr, or NULL.  The kernel never reports overlapping
 * entries; for hand-made input with overlaps the entry with the greatest
 * start <= addr is the one tested.
 */
const struct proc_map *proc_maps__find(const struct proc_maps *maps, uint64_t addr);

/* perms[2] == 'x' */
bool proc_map__is_exec(const struct proc_map *map);

#endif /* ISOPROF_SYMBOLIZE_PROC_MAPS_H */
