// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* gc_probes: V8's GC pauses and platform-thread jobs; see gc_probes.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/capture/gc_probes.h"
#include "gc.skel.h"
#include "lib/errmsg.h"
#include "user/capture/percpu.h"
#include "user/capture/probe_sites.h"
#include "user/capture/uprobe_multi.h"

#define COLLECT_PREFIX "_ZN2v88internal4Heap14CollectGarbageE"
#define JOB_POST_PREFIX "_ZN2v88platform19NewDefaultJobHandleE"
/* Run(v8::JobDelegate*) inside namespace v8 (S_ = v8) and outside it */
#define JOB_RUN_SUFFIX_V8 "3RunEPNS_11JobDelegateE"
#define JOB_RUN_SUFFIX "3RunEPN2v811JobDelegateE"
/*
 * GCTracer's observable pause, by exact signature: where V8 passes its
 * TimeTicks decides which argument register the probe reads, so a variant
 * not listed here is not probed rather than read at a guess.
 */
#define TRACER "_ZN2v88internal8GCTracer"
static const struct {
	const char *name;
	int site;
} pause_sites[] = {
	/* V8 11 (node 20) */
	{ TRACER "20StartObservablePauseEv", ISOPROF_GC_SITE_PAUSE_START },
	{ TRACER "19StopObservablePauseEv", ISOPROF_GC_SITE_PAUSE_STOP },
	/* V8 12+ (workerd): (TimeTicks), (GarbageCollector, TimeTicks) */
	{ TRACER "20StartObservablePauseENS_4base9TimeTicksE", ISOPROF_GC_SITE_PAUSE_START_TICKS },
	{ TRACER "19StopObservablePauseENS0_16GarbageCollectorENS_4base9TimeTicksE",
	  ISOPROF_GC_SITE_PAUSE_STOP_TICKS },
};

/*
 * V8 has one CollectGarbage, one NewDefaultJobHandle and a few dozen
 * Run(JobDelegate*) (24 in workerd, 22 in node); a binary with far more
 * matching names is not probed: each is a breakpoint in the target.
 */
#define MAX_SITES 256

/* probe_binary.flags */
#define GC_BINARY_OBSERVABLE 1u	/* both ends of the observable pause are probed */

struct gc_probes {
	struct gc_bpf *skel;
	struct probe_binaries binaries;
	bool process_filter;	/* a link's pid filter takes every thread of the process */
	bool every_process;	/* gc_probes_opts.every_process */
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

int gc_probes__site_of(const char *name)
{
	if (!name)
		return 0;
	if (!strncmp(name, COLLECT_PREFIX, strlen(COLLECT_PREFIX)))
		return ISOPROF_GC_SITE_COLLECT;
	if (!strncmp(name, JOB_POST_PREFIX, strlen(JOB_POST_PREFIX)))
		return ISOPROF_GC_SITE_JOB_POST;
	for (size_t i = 0; i < sizeof(pause_sites) / sizeof(pause_sites[0]); i++)
		if (!strcmp(name, pause_sites[i].name))
			return pause_sites[i].site;
	/*
	 * Functions only (_ZN...), not thunks (_ZThn: `this` adjusted before
	 * the real Run, which is probed itself) nor local statics (_ZZ).
	 */
	if (!strncmp(name, "_ZN", 3) &&
	    (ends_with(name, JOB_RUN_SUFFIX_V8) || ends_with(name, JOB_RUN_SUFFIX)))
		return ISOPROF_GC_SITE_JOB_RUN;
	return 0;
}

static __u64 site_cookie(const char *name)
{
	return (__u64)gc_probes__site_of(name);
}

/* A binary without CollectGarbage is not probed; the observable pause needs both ends. */
static int check_sites(struct probe_binary *b)
{
	bool start = probe_binary__has(b, ISOPROF_GC_SITE_PAUSE_START) ||
		     probe_binary__has(b, ISOPROF_GC_SITE_PAUSE_START_TICKS);
	bool stop = probe_binary__has(b, ISOPROF_GC_SITE_PAUSE_STOP) ||
		    probe_binary__has(b, ISOPROF_GC_SITE_PAUSE_STOP_TICKS);

	if (start && stop)
		b->flags |= GC_BINARY_OBSERVABLE;
	return probe_binary__has(b, ISOPROF_GC_SITE_COLLECT) ? 0 : -ENOENT;
}

int gc_probes__add(struct gc_probes *g, pid_t pid, int exe_fd)
{
	return probe_binaries__add(&g->binaries, pid, exe_fd);
}

static int link_uprobe_multi(int prog_fd, const char *path, const struct probe_binary *b,
			     pid_t pid, bool ret)
{
	unsigned long *offsets = calloc(b->n, sizeof(*offsets));
	__u64 *cookies = calloc(b->n, sizeof(*cookies));
	__u32 cnt = 0;
	int fd;

	if (!offsets || !cookies) {
		free(offsets);
		free(cookies);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->n; i++) {
		/* a job is posted, not returned from; a pause's ends are entries */
		if (ret && (b->cookies[i] == ISOPROF_GC_SITE_JOB_POST ||
			    b->cookies[i] >= ISOPROF_GC_SITE_PAUSE_START))
			continue;
		offsets[cnt] = b->offsets[i];
		cookies[cnt++] = b->cookies[i];
	}
	fd = uprobe_multi__attach(prog_fd, path, offsets, cookies, cnt, pid, ret);
	free(offsets);
	free(cookies);
	return fd;
}

int gc_probes__probe_kernel(struct gc_probes_kernel *out)
{
	/* r0 = 0; exit */
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = UPROBE_MULTI_ATTACH_TYPE);
	unsigned long offset = 0;
	int prog_fd, fd;

	/*
	 * Loading tells nothing: 6.1 loads a kprobe program whatever its
	 * expected_attach_type (bpf_prog_load_check_attach() lets any through
	 * for BPF_PROG_TYPE_KPROBE); only the link is refused.
	 */
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "isoprof_probe", "GPL", insns,
				sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog_fd < 0) {
		out->links = out->process_filter = -errno;
		return out->links;
	}
	/*
	 * "/" is no regular file: a kernel that knows uprobe_multi links gets
	 * as far as the path and refuses it with EBADF (as libbpf's
	 * probe_uprobe_multi_link() relies on); one that does not, with
	 * EINVAL, as a real attach would be (link_uprobe_multi()).
	 */
	fd = uprobe_multi__link(prog_fd, "/", &offset, NULL, 1, 0, false);
	if (fd >= 0)
		close(fd);
	out->links = fd == -EBADF || fd >= 0 ? 0 : uprobe_multi__unsupported_as_eopnotsupp(fd);
	/*
	 * pid -1: a kernel whose pid filter is per process ("bpf: fix
	 * multi-uprobe PID filtering logic", 6.10, 6.9.5, 6.6.35) refuses it
	 * before the path, with EINVAL; the first uprobe_multi kernels look at
	 * the path first.
	 */
	out->process_filter = out->links;
	if (!out->links) {
		fd = uprobe_multi__link(prog_fd, "/", &offset, NULL, 1, -1, false);
		if (fd >= 0)
			close(fd);
		out->process_filter = fd == -EINVAL ? 0 : -EOPNOTSUPP;
	}
	close(prog_fd);
	return out->links;
}

static int attach_binary(struct gc_probes *g, struct probe_binary *b)
{
	char path[64];
	/*
	 * One target: only its memory gets the breakpoints; several: filtered
	 * in BPF.  So is one target where the kernel's pid filter would run
	 * the programs on its main thread only (and miss the GC jobs of the
	 * others): there every process running the binary is probed.
	 */
	pid_t pid = b->npids == 1 && g->process_filter && !g->every_process ? b->pids[0] : 0;
	int fd;

	/* the kernel resolves the path to the open file itself, not to a name */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", b->fd);
	fd = link_uprobe_multi(bpf_program__fd(g->skel->progs.isoprof_gc_entry), path, b, pid,
			       false);
	if (fd < 0)
		return fd;
	b->links[0] = fd + 1;
	fd = link_uprobe_multi(bpf_program__fd(g->skel->progs.isoprof_gc_return), path, b, pid,
			       true);
	if (fd < 0) {
		close(b->links[0] - 1);
		b->links[0] = 0;
		return fd;
	}
	b->links[1] = fd + 1;
	return 0;
}

int gc_probes__attach(struct gc_probes *g)
{
	int first_err = 0;
	bool any = false;

	for (size_t i = 0; i < g->binaries.n; i++) {
		struct probe_binary *b = &g->binaries.v[i];

		if (!b->err && !b->links[0])
			b->err = attach_binary(g, b);
		any |= !b->err;
		if (b->err && !first_err)
			first_err = b->err;
	}
	probe_binaries__done(&g->binaries);
	return any ? 0 : first_err ? first_err : -ENOENT;
}

int gc_probes__probed(const struct gc_probes *g, pid_t pid)
{
	const struct probe_binary *b = probe_binaries__of(&g->binaries, pid);

	if (!b)
		return -ENOENT;
	return b->links[0] ? 0 : b->err;
}

bool gc_probes__observable(const struct gc_probes *g, pid_t pid)
{
	const struct probe_binary *b = probe_binaries__of(&g->binaries, pid);

	return b && !b->err && (b->flags & GC_BINARY_OBSERVABLE);
}

struct gc_probes *gc_probes__new(const struct gc_probes_opts *opts)
{
	struct gc_probes *g = calloc(1, sizeof(*g));
	struct gc_probes_kernel kernel;
	int err;

	if (!g)
		return NULL;
	g->binaries.site_of = site_cookie;
	g->binaries.max_sites = MAX_SITES;
	g->binaries.check = check_sites;
	g->skel = gc_bpf__open();
	if (!g->skel) {
		err = -errno;
		errmsg__set(opts->err_buf, opts->err_len, "cannot open the GC probes' BPF object: %s",
			    strerror(-err));
		goto fail;
	}
	err = bpf_map__reuse_fd(g->skel->maps.targets, opts->targets_fd);
	if (!err)
		err = bpf_map__reuse_fd(g->skel->maps.thread_tags, opts->thread_tags_fd);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len,
			    "cannot share the sampler's maps with the GC probes: %s", strerror(-err));
		goto fail;
	}
	/* uprobe_multi programs: libbpf's own section names may predate them */
	bpf_program__set_expected_attach_type(g->skel->progs.isoprof_gc_entry,
					      UPROBE_MULTI_ATTACH_TYPE);
	bpf_program__set_expected_attach_type(g->skel->progs.isoprof_gc_return,
					      UPROBE_MULTI_ATTACH_TYPE);
	err = gc_bpf__load(g->skel);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len, "cannot load the GC probes: %s",
			    strerror(-err));
		goto fail;
	}
	g->process_filter = !gc_probes__probe_kernel(&kernel) && !kernel.process_filter;
	g->every_process = opts->every_process;
	return g;
fail:
	gc_probes__free(g);
	errno = -err;
	return NULL;
}

void gc_probes__window_start(struct gc_probes *g, uint64_t start_ns)
{
	g->skel->data->window_start_ns = start_ns;
}

void gc_probes__next_window(struct gc_probes *g, uint64_t start_ns)
{
	struct bpf_map *m = g->skel->maps.gc_pauses;
	struct isoprof_gc_key key, next;
	bool first = true;

	g->skel->data->window_start_ns = start_ns;
	/* delete as we go: the next key is found from one that still exists */
	while (!bpf_map__get_next_key(m, first ? NULL : &key, &next, sizeof(next))) {
		if (!first)
			bpf_map__delete_elem(m, &key, sizeof(key), 0);
		key = next;
		first = false;
	}
	if (!first)
		bpf_map__delete_elem(m, &key, sizeof(key), 0);
}

void gc_probes__detach(struct gc_probes *g)
{
	if (g->skel)
		g->skel->data->window_start_ns = ~0ull;
	probe_binaries__unlink(&g->binaries);
}

void gc_probes__free(struct gc_probes *g)
{
	if (!g)
		return;
	gc_probes__detach(g);
	probe_binaries__release(&g->binaries);
	gc_bpf__destroy(g->skel);
	free(g);
}

int gc_probes__pauses(struct gc_probes *g, uint32_t pid, uint64_t isolate,
		      struct isoprof_gc_pauses *out)
{
	struct isoprof_gc_key key = { .pid = pid, .isolate = isolate };

	memset(out, 0, sizeof(*out));
	if (bpf_map__lookup_elem(g->skel->maps.gc_pauses, &key, sizeof(key), out, sizeof(*out), 0))
		return -errno;
	return 0;
}

int gc_probes__counters(struct gc_probes *g, struct isoprof_gc_counters *out)
{
	return percpu__sum_u64(g->skel->maps.gc_counters, out, sizeof(*out));
}
