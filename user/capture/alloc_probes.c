// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* alloc_probes: allocation samples where the runtime samples; see alloc_probes.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/capture/alloc_probes.h"
#include "alloc.skel.h"
#include "lib/array.h"
#include "lib/errmsg.h"
#include "symbolize/elf_symtab.h"
#include "user/capture/percpu.h"
#include "user/capture/uprobe_multi.h"

#define SAMPLE_OBJECT "_ZN2v88internal20SamplingHeapProfiler12SampleObjectEmm"
#define SAMPLEIFY_PREFIX "_ZN8tcmalloc17tcmalloc_internal19SampleifyAllocationI"

/* tcmalloc has one SampleifyAllocation per allocation policy (49 in workerd). */
#define MAX_SITES 128

struct alloc_binary {
	dev_t dev;
	ino_t ino;
	int fd;			/* a duplicate of the caller's, until attached */
	unsigned long *offsets;
	__u64 *cookies;
	size_t n, cap;
	unsigned int sites;	/* ALLOC_SITES_* */
	int err;
	pid_t *pids;
	size_t npids, pids_cap;
	int link;		/* +1; 0: none */
};

struct alloc_probes {
	struct alloc_bpf *skel;
	struct alloc_binary *binaries;
	size_t nbinaries, binaries_cap;
};

/*
 * SampleifyAllocation<Policy>(Static&, Policy, size_t requested_size,
 * size_t weight, size_t size_class, Span*): the policies are empty
 * classes, passed in no register, so requested_size is the second
 * argument in every instance (rsi; checked on workerd's 49 instances).
 */
#define SAMPLEIFY_SIZE_ARG 2

__u64 alloc_probes__cookie_of(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, SAMPLE_OBJECT))
		return ISOPROF_ALLOC_COOKIE(ISOPROF_ALLOC_SITE_V8, 3);
	if (!strncmp(name, SAMPLEIFY_PREFIX, strlen(SAMPLEIFY_PREFIX)))
		return ISOPROF_ALLOC_COOKIE(ISOPROF_ALLOC_SITE_NATIVE, SAMPLEIFY_SIZE_ARG);
	return 0;
}

static int collect_site(void *ctx, const struct elf_named_sym *sym)
{
	struct alloc_binary *b = ctx;
	size_t cap = b->cap;
	__u64 cookie;

	if (sym->type != STT_FUNC || sym->file_offset == UINT64_MAX ||
	    !(cookie = alloc_probes__cookie_of(sym->name)))
		return 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->offsets[i] == sym->file_offset)
			return 0;
	if (b->n == MAX_SITES)
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
	b->sites |= (cookie & 0xff) == ISOPROF_ALLOC_SITE_V8 ? ALLOC_SITES_JS : ALLOC_SITES_NATIVE;
	return 0;
}

static int read_sites(struct alloc_binary *b)
{
	struct elf_symtab *st = elf_symtab__open_fd(b->fd, NULL);
	int err;

	if (!st)
		return -errno;
	err = elf_symtab__each_symbol(st, collect_site, b);
	elf_symtab__free(st);
	if (err)
		return err;
	return b->n ? 0 : -ENOENT;
}

int alloc_probes__add(struct alloc_probes *a, pid_t pid, int exe_fd)
{
	struct alloc_binary *b = NULL;
	struct stat sb;

	if (fstat(exe_fd, &sb))
		return -errno;
	for (size_t i = 0; i < a->nbinaries && !b; i++)
		if (a->binaries[i].dev == sb.st_dev && a->binaries[i].ino == sb.st_ino)
			b = &a->binaries[i];
	if (!b) {
		if (array_grow(&a->binaries, &a->binaries_cap, a->nbinaries + 1))
			return -ENOMEM;
		b = &a->binaries[a->nbinaries++];
		memset(b, 0, sizeof(*b));
		b->dev = sb.st_dev;
		b->ino = sb.st_ino;
		b->fd = fcntl(exe_fd, F_DUPFD_CLOEXEC, 0);
		b->err = b->fd < 0 ? -errno : read_sites(b);
	}
	if (array_grow(&b->pids, &b->pids_cap, b->npids + 1))
		return -ENOMEM;
	b->pids[b->npids++] = pid;
	return b->err;
}

int alloc_probes__attach(struct alloc_probes *a)
{
	int prog_fd = bpf_program__fd(a->skel->progs.isoprof_alloc_sample);
	int first_err = 0;
	bool any = false;

	for (size_t i = 0; i < a->nbinaries; i++) {
		struct alloc_binary *b = &a->binaries[i];
		char path[64];
		int fd;

		if (!b->err && !b->link) {
			/*
			 * Every process of the binary, filtered in BPF by the
			 * targets map: the kernel's own pid filter takes only
			 * the main thread on kernels before 6.10, and workers
			 * allocate on others.
			 */
			snprintf(path, sizeof(path), "/proc/self/fd/%d", b->fd);
			fd = uprobe_multi__attach(prog_fd, path, b->offsets, b->cookies,
						  (__u32)b->n, 0, false);
			if (fd < 0)
				b->err = fd;
			else
				b->link = fd + 1;
		}
		if (b->fd >= 0)
			close(b->fd);
		b->fd = -1;
		any |= !b->err;
		if (b->err && !first_err)
			first_err = b->err;
	}
	return any ? 0 : first_err ? first_err : -ENOENT;
}

int alloc_probes__sites(const struct alloc_probes *a, pid_t pid)
{
	for (size_t i = 0; i < a->nbinaries; i++)
		for (size_t j = 0; j < a->binaries[i].npids; j++)
			if (a->binaries[i].pids[j] == pid)
				return a->binaries[i].link ? (int)a->binaries[i].sites
							   : a->binaries[i].err ? a->binaries[i].err
										: -ENOENT;
	return -ENOENT;
}

struct alloc_probes *alloc_probes__new(const struct alloc_probes_opts *opts)
{
	struct alloc_probes *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->skel = alloc_bpf__open();
	if (!a->skel) {
		err = -errno;
		errmsg__set(opts->err_buf, opts->err_len,
			    "cannot open the allocation probes' BPF object: %s", strerror(-err));
		goto fail;
	}
	a->skel->rodata->wakeup_bytes = opts->ringbuf_bytes / 4;
	a->skel->rodata->use_thread_tags = opts->thread_tags;
	err = bpf_map__reuse_fd(a->skel->maps.samples, opts->samples_fd);
	if (!err)
		err = bpf_map__reuse_fd(a->skel->maps.targets, opts->targets_fd);
	if (!err)
		err = bpf_map__reuse_fd(a->skel->maps.thread_tags, opts->thread_tags_fd);
	if (!err)
		err = bpf_map__reuse_fd(a->skel->maps.v8_layouts, opts->v8_layouts_fd);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len,
			    "cannot share the sampler's maps with the allocation probes: %s",
			    strerror(-err));
		goto fail;
	}
	bpf_program__set_expected_attach_type(a->skel->progs.isoprof_alloc_sample,
					      UPROBE_MULTI_ATTACH_TYPE);
	err = alloc_bpf__load(a->skel);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len, "cannot load the allocation probes: %s",
			    strerror(-err));
		goto fail;
	}
	return a;
fail:
	alloc_probes__free(a);
	errno = -err;
	return NULL;
}

void alloc_probes__detach(struct alloc_probes *a)
{
	for (size_t i = 0; i < a->nbinaries; i++) {
		if (a->binaries[i].link)
			close(a->binaries[i].link - 1);
		a->binaries[i].link = 0;
	}
}

void alloc_probes__free(struct alloc_probes *a)
{
	if (!a)
		return;
	alloc_probes__detach(a);
	for (size_t i = 0; i < a->nbinaries; i++) {
		if (a->binaries[i].fd >= 0)
			close(a->binaries[i].fd);
		free(a->binaries[i].offsets);
		free(a->binaries[i].cookies);
		free(a->binaries[i].pids);
	}
	free(a->binaries);
	alloc_bpf__destroy(a->skel);
	free(a);
}

int alloc_probes__counters(struct alloc_probes *a, struct isoprof_counters *out)
{
	return percpu__sum_u64(a->skel->maps.counters, out, sizeof(*out));
}
