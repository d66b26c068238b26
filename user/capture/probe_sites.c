// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* probe_sites: the binaries a family of uprobes goes on; see probe_sites.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/capture/probe_sites.h"
#include "lib/array.h"
#include "symbolize/elf_symtab.h"

struct site_walk {
	const struct probe_binaries *set;
	struct probe_binary *b;
};

static int collect_site(void *ctx, const struct elf_named_sym *sym)
{
	struct site_walk *w = ctx;
	struct probe_binary *b = w->b;
	size_t cap = b->cap;
	__u64 cookie;

	if (sym->type != STT_FUNC || sym->file_offset == UINT64_MAX ||
	    !(cookie = w->set->site_of(sym->name)))
		return 0;
	/* aliases (C1/C2 constructors, identical code folded) share an address */
	for (size_t i = 0; i < b->n; i++)
		if (b->offsets[i] == sym->file_offset)
			return 0;
	if (b->n == w->set->max_sites)
		return -E2BIG;
	if (array_grow(&b->offsets, &b->cap, b->n + 1))
		return -ENOMEM;
	if (b->cap != cap) {
		__u64 *c = realloc(b->cookies, b->cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		b->cookies = c;
	}
	b->offsets[b->n] = sym->file_offset;
	b->cookies[b->n++] = cookie;
	return 0;
}

static int read_sites(const struct probe_binaries *set, struct probe_binary *b)
{
	struct elf_symtab *st = elf_symtab__open_fd(b->fd, NULL);
	struct site_walk w = { .set = set, .b = b };
	int err;

	if (!st)
		return -errno;
	err = elf_symtab__each_symbol(st, collect_site, &w);
	elf_symtab__free(st);
	if (err)
		return err;
	if (set->check)
		return set->check(b);
	return b->n ? 0 : -ENOENT;
}

int probe_binaries__add(struct probe_binaries *set, pid_t pid, int exe_fd)
{
	struct probe_binary *b = NULL;
	struct stat sb;

	if (fstat(exe_fd, &sb))
		return -errno;
	for (size_t i = 0; i < set->n && !b; i++)
		if (set->v[i].dev == sb.st_dev && set->v[i].ino == sb.st_ino)
			b = &set->v[i];
	if (!b) {
		if (array_grow(&set->v, &set->cap, set->n + 1))
			return -ENOMEM;
		b = &set->v[set->n++];
		memset(b, 0, sizeof(*b));
		b->dev = sb.st_dev;
		b->ino = sb.st_ino;
		b->fd = fcntl(exe_fd, F_DUPFD_CLOEXEC, 0);
		b->err = b->fd < 0 ? -errno : read_sites(set, b);
	}
	if (array_grow(&b->pids, &b->pids_cap, b->npids + 1))
		return -ENOMEM;
	b->pids[b->npids++] = pid;
	return b->err;
}

struct probe_binary *probe_binaries__of(const struct probe_binaries *set, pid_t pid)
{
	for (size_t i = 0; i < set->n; i++)
		for (size_t j = 0; j < set->v[i].npids; j++)
			if (set->v[i].pids[j] == pid)
				return &set->v[i];
	return NULL;
}

bool probe_binary__has(const struct probe_binary *b, __u64 cookie)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->cookies[i] == cookie)
			return true;
	return false;
}

void probe_binaries__done(struct probe_binaries *set)
{
	for (size_t i = 0; i < set->n; i++) {
		if (set->v[i].fd >= 0)
			close(set->v[i].fd);
		set->v[i].fd = -1;
	}
}

void probe_binaries__unlink(struct probe_binaries *set)
{
	for (size_t i = 0; i < set->n; i++) {
		for (int k = 0; k < 2; k++) {
			if (set->v[i].links[k])
				close(set->v[i].links[k] - 1);
			set->v[i].links[k] = 0;
		}
	}
}

void probe_binaries__release(struct probe_binaries *set)
{
	probe_binaries__unlink(set);
	probe_binaries__done(set);
	for (size_t i = 0; i < set->n; i++) {
		free(set->v[i].offsets);
		free(set->v[i].cookies);
		free(set->v[i].pids);
	}
	free(set->v);
	set->v = NULL;
	set->n = set->cap = 0;
}
