// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* alloc_probes: allocation samples where the runtime samples; see alloc_probes.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/capture/alloc_probes.h"
#include "alloc.skel.h"
#include "lib/errmsg.h"
#include "user/capture/percpu.h"
#include "user/capture/probe_sites.h"
#include "user/capture/uprobe_multi.h"

#define SAMPLE_OBJECT "_ZN2v88internal20SamplingHeapProfiler12SampleObjectEmm"
#define SAMPLEIFY_PREFIX "_ZN8tcmalloc17tcmalloc_internal19SampleifyAllocationI"

/* tcmalloc has one SampleifyAllocation per allocation policy (49 in workerd). */
#define MAX_SITES 128

struct alloc_probes {
	struct alloc_bpf *skel;
	struct probe_binaries binaries;	/* flags: ALLOC_SITES_* */
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

/* What the binary offers, for alloc_probes__sites(). */
static int check_sites(struct probe_binary *b)
{
	for (size_t i = 0; i < b->n; i++)
		b->flags |= (b->cookies[i] & 0xff) == ISOPROF_ALLOC_SITE_V8 ? ALLOC_SITES_JS
									  : ALLOC_SITES_NATIVE;
	return b->n ? 0 : -ENOENT;
}

int alloc_probes__add(struct alloc_probes *a, pid_t pid, int exe_fd)
{
	return probe_binaries__add(&a->binaries, pid, exe_fd);
}

int alloc_probes__attach(struct alloc_probes *a)
{
	int prog_fd = bpf_program__fd(a->skel->progs.isoprof_alloc_sample);
	int first_err = 0;
	bool any = false;

	for (size_t i = 0; i < a->binaries.n; i++) {
		struct probe_binary *b = &a->binaries.v[i];
		char path[64];
		int fd;

		if (!b->err && !b->links[0]) {
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
				b->links[0] = fd + 1;
		}
		any |= !b->err;
		if (b->err && !first_err)
			first_err = b->err;
	}
	probe_binaries__done(&a->binaries);
	return any ? 0 : first_err ? first_err : -ENOENT;
}

int alloc_probes__sites(const struct alloc_probes *a, pid_t pid)
{
	const struct probe_binary *b = probe_binaries__of(&a->binaries, pid);

	if (!b)
		return -ENOENT;
	return b->links[0] ? (int)b->flags : b->err ? b->err : -ENOENT;
}

struct alloc_probes *alloc_probes__new(const struct alloc_probes_opts *opts)
{
	struct alloc_probes *a = calloc(1, sizeof(*a));
	int err;

	if (!a)
		return NULL;
	a->binaries.site_of = alloc_probes__cookie_of;
	a->binaries.max_sites = MAX_SITES;
	a->binaries.check = check_sites;
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
	probe_binaries__unlink(&a->binaries);
}

void alloc_probes__free(struct alloc_probes *a)
{
	if (!a)
		return;
	probe_binaries__release(&a->binaries);
	alloc_bpf__destroy(a->skel);
	free(a);
}

int alloc_probes__counters(struct alloc_probes *a, struct isoprof_counters *out)
{
	return percpu__sum_u64(a->skel->maps.counters, out, sizeof(*out));
}
