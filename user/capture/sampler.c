// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sampler: the CPU sampler's lifecycle; see sampler.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "user/capture/sampler.h"
#include "lib/errmsg.h"
#include "sampler.skel.h"
#include "user/capture/cpus.h"
#include "user/capture/percpu.h"

/*
 * The ring holds what arrives before the reader's first poll (symbol
 * preload, up to 140 ms cold on workerd; V8's Profiler.start with --v8)
 * and between polls (50 ms).  Half a second of samples on every CPU,
 * rounded up to a power of two, is ample, and keeps memory down: the
 * kernel maps the ring's pages twice, so a 16 MiB ring cost 32 MiB of
 * resident memory once it had wrapped (104 MB peak RSS for a 50 s capture
 * of the demo; 2-4 MiB rings lost nothing at 2000 records/s).
 */
#define RINGBUF_SECONDS_NUM 1
#define RINGBUF_SECONDS_DEN 2
#define MIN_RINGBUF_BYTES (1u << 20)
#define MAX_RINGBUF_BYTES (64u << 20)
#define DEFAULT_MAX_TARGETS 4096

struct sampler {
	struct sampler_bpf *skel;
	struct ring_buffer *ring;
	sampler_sample_fn fn;
	void *ctx;
	unsigned long long period_ns;
	int *event_fds;
	struct bpf_link **links;
	int nevents;
	int stats_fd;
};

static int libbpf_print_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (!getenv("ISOPROF_DEBUG_LIBBPF"))
		return 0;
	(void)level;
	return vfprintf(stderr, fmt, args);
}

static int on_ring_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	/* The kernel side always submits whole records; anything else is a bug. */
	if (size < sizeof(struct isoprof_sample))
		return 0;
	return s->fn(s->ctx, data);
}

size_t sampler__ringbuf_bytes(unsigned int frequency_hz, unsigned int ncpus)
{
	uint64_t want = (uint64_t)frequency_hz * (ncpus ? ncpus : 1) *
			sizeof(struct isoprof_sample) * RINGBUF_SECONDS_NUM / RINGBUF_SECONDS_DEN;
	size_t bytes = MIN_RINGBUF_BYTES;

	while (bytes < want && bytes < MAX_RINGBUF_BYTES)
		bytes <<= 1;
	return bytes;
}

struct sampler *sampler__new(const struct sampler_opts *opts, sampler_sample_fn fn, void *ctx)
{
	int possible = libbpf_num_possible_cpus();
	size_t ring_bytes = opts->ringbuf_bytes
				    ? opts->ringbuf_bytes
				    : sampler__ringbuf_bytes(opts->frequency_hz,
							     possible > 0 ? (unsigned int)possible : 1) *
					      (opts->ringbuf_scale > 1 && opts->ringbuf_scale <= 16 &&
							       !(opts->ringbuf_scale & (opts->ringbuf_scale - 1))
						       ? opts->ringbuf_scale : 1);
	unsigned int max_targets = opts->max_targets ? opts->max_targets : DEFAULT_MAX_TARGETS;
	struct sampler *s;
	int err;

	if (!opts->frequency_hz || opts->frequency_hz > 1000000000u) {
		errmsg__set(opts->err_buf, opts->err_len, "frequency must be 1..1000000000 Hz");
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fn = fn;
	s->ctx = ctx;
	s->stats_fd = -1;
	s->period_ns = 1000000000ull / opts->frequency_hz;

	libbpf_set_print(libbpf_print_quiet);
	s->skel = sampler_bpf__open();
	if (!s->skel) {
		err = -errno;
		errmsg__set(opts->err_buf, opts->err_len, "cannot open the BPF object: %s",
			    strerror(-err));
		goto fail;
	}
	/* be woken when a quarter of the ring is used; drain on a timer otherwise */
	s->skel->rodata->wakeup_bytes = ring_bytes / 4;
	s->skel->rodata->use_thread_tags = opts->thread_tags;
	err = bpf_map__set_max_entries(s->skel->maps.samples, ring_bytes);
	if (!err)
		err = bpf_map__set_max_entries(s->skel->maps.targets, max_targets);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len, "cannot size the BPF maps: %s",
			    strerror(-err));
		goto fail;
	}
	err = sampler_bpf__load(s->skel);
	if (err) {
		errmsg__set(opts->err_buf, opts->err_len,
			    "cannot load the BPF sampler (%s): isoprof needs root, or "
			    "CAP_BPF and CAP_PERFMON, and a kernel with BTF; 'isoprof check' "
			    "says what this host lacks",
			    strerror(-err));
		goto fail;
	}
	if (opts->run_time_stats) {
		/* stats stay on while this fd is open, and go off when we exit */
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (s->stats_fd < 0) {
			err = -errno;
			errmsg__set(opts->err_buf, opts->err_len,
				    "cannot enable BPF run-time stats: %s", strerror(-err));
			goto fail;
		}
	}
	s->ring = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), on_ring_record, s, NULL);
	if (!s->ring) {
		err = -errno;
		errmsg__set(opts->err_buf, opts->err_len, "cannot set up the ring buffer: %s",
			    strerror(-err));
		goto fail;
	}
	return s;
fail:
	sampler__free(s);
	errno = -err;
	return NULL;
}

int sampler__add_target(struct sampler *s, pid_t pid, const struct isoprof_target *target)
{
	struct isoprof_target none = { 0 };
	__u32 key = pid;

	if (bpf_map__update_elem(s->skel->maps.targets, &key, sizeof(key), target ? target : &none,
				 sizeof(*target), BPF_ANY))
		return -errno;
	return 0;
}

int sampler__set_v8_layout(struct sampler *s, unsigned int index,
			   const struct isoprof_v8_layout *l)
{
	__u32 key = index;

	if (index >= ISOPROF_V8_LAYOUT_MAX || !l)
		return -EINVAL;
	if (bpf_map__update_elem(s->skel->maps.v8_layouts, &key, sizeof(key), l, sizeof(*l),
				 BPF_ANY))
		return -errno;
	return 0;
}

int sampler__remove_target(struct sampler *s, pid_t pid)
{
	__u32 key = pid;

	if (bpf_map__delete_elem(s->skel->maps.targets, &key, sizeof(key), 0))
		return -errno;
	return 0;
}

int sampler__open_cpu_clock(int cpu, unsigned long long period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
		.disabled = 0,
	};
	long fd;

	fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

int sampler__start(struct sampler *s)
{
	struct cpu_set_list cpus;
	int err, fd;

	if (s->nevents)
		return -EALREADY;
	err = cpus__online(&cpus);
	if (err)
		return err;
	s->event_fds = calloc(cpus.count, sizeof(*s->event_fds));
	s->links = calloc(cpus.count, sizeof(*s->links));
	if (!s->event_fds || !s->links) {
		cpus__free(&cpus);
		return -ENOMEM;
	}
	for (size_t i = 0; i < cpus.count; i++) {
		fd = sampler__open_cpu_clock(cpus.ids[i], s->period_ns);
		if (fd < 0) {
			err = fd;
			goto fail;
		}
		s->event_fds[s->nevents] = fd;
		s->links[s->nevents] =
			bpf_program__attach_perf_event(s->skel->progs.isoprof_sample_cpu, fd);
		if (!s->links[s->nevents]) {
			err = -errno;
			close(fd);
			goto fail;
		}
		s->nevents++;
	}
	cpus__free(&cpus);
	return s->nevents;
fail:
	cpus__free(&cpus);
	sampler__stop(s);
	return err;
}

int sampler__poll(struct sampler *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->ring, timeout_ms);

	if (n < 0 && n != -EINTR)
		return n;
	/* Records are submitted without a wakeup: a quiet poll must still drain. */
	return ring_buffer__consume(s->ring);
}

int sampler__stop(struct sampler *s)
{
	for (int i = 0; i < s->nevents; i++) {
		bpf_link__destroy(s->links[i]);
		close(s->event_fds[i]);
	}
	free(s->links);
	free(s->event_fds);
	s->links = NULL;
	s->event_fds = NULL;
	s->nevents = 0;
	/* A program already running on another CPU may still submit: consume it. */
	return s->ring ? ring_buffer__consume(s->ring) : 0;
}

void sampler__free(struct sampler *s)
{
	if (!s)
		return;
	if (s->nevents)
		sampler__stop(s);
	ring_buffer__free(s->ring);
	sampler_bpf__destroy(s->skel);
	if (s->stats_fd >= 0)
		close(s->stats_fd);
	free(s);
}

int sampler__targets_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.targets);
}

int sampler__thread_tags_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.thread_tags);
}

int sampler__samples_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.samples);
}

int sampler__v8_layouts_fd(const struct sampler *s)
{
	return bpf_map__fd(s->skel->maps.v8_layouts);
}

size_t sampler__ring_bytes(const struct sampler *s)
{
	return bpf_map__max_entries(s->skel->maps.samples);
}

int sampler__counters(struct sampler *s, struct isoprof_counters *out)
{
	return percpu__sum_u64(s->skel->maps.counters, out, sizeof(*out));
}

unsigned long long sampler__period_ns(const struct sampler *s)
{
	return s->period_ns;
}

int sampler__prog_stats(struct sampler *s, unsigned long long *run_time_ns,
			unsigned long long *run_cnt)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int err;

	err = bpf_obj_get_info_by_fd(bpf_program__fd(s->skel->progs.isoprof_sample_cpu), &info,
				     &len);
	if (err)
		return -errno;
	if (s->stats_fd < 0 && !info.run_cnt)
		return -ENODATA;
	*run_time_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}
