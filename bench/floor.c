// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Loader of the floor sampler (floor.bpf.c) for benchmark 6:
 *
 *   floor PID MILLISECONDS [HZ [empty]]
 *
 * Attaches to cpu-clock on every online CPU at HZ (default 1000) for the
 * window, drains the ring buffer every 50 ms as isoprof does, and prints the
 * program's kernel run-time statistics on stdout:
 *
 *   floor: runs N run_ns T records R ns_per_run X ns_per_record Y
 *
 * With "empty" the program returns at once: what is left is the cost of the
 * sampling tick and of running a BPF program at all (benchmark 1's
 * reference row).  Exit status 0, or 1 with one line on stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "floor.h"
#include "floor.skel.h"

#define MAX_CPUS 1024

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static unsigned long long records;

static int on_record(void *ctx, void *data, size_t len)
{
	(void)ctx;
	(void)data;
	if (len == sizeof(struct floor_sample))
		records++;
	return 0;
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The online CPUs from "0-3,5": returns how many were stored in ids. */
static int online_cpus(int *ids, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = 0, lo, hi;
	char sep;

	if (!f)
		return -errno;
	while (fscanf(f, "%d", &lo) == 1) {
		hi = lo;
		if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
			if (fscanf(f, "%d", &hi) != 1)
				break;
			if (fscanf(f, "%c", &sep) != 1)
				sep = '\n';
		}
		for (int c = lo; c <= hi && n < max; c++)
			ids[n++] = c;
		if (sep != ',')
			break;
	}
	fclose(f);
	return n ? n : -ENODEV;
}

static int open_cpu_clock(int cpu, unsigned long long period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
	};
	long fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

int main(int argc, char **argv)
{
	static int cpus[MAX_CPUS], fds[MAX_CPUS];
	static struct bpf_link *links[MAX_CPUS];
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	unsigned long long deadline, hz = 1000;
	struct ring_buffer *ring = NULL;
	struct floor_bpf *skel;
	int ncpus, nattached = 0, stats_fd, status = 1, err, n;
	long pid, ms;

	if (argc < 3 || argc > 5 || (argc == 5 && strcmp(argv[4], "empty"))) {
		fprintf(stderr, "usage: floor PID MILLISECONDS [HZ [empty]]\n");
		return 2;
	}
	pid = strtol(argv[1], NULL, 10);
	ms = strtol(argv[2], NULL, 10);
	if (argc >= 4)
		hz = strtoull(argv[3], NULL, 10);
	if (pid <= 0 || ms <= 0 || !hz || hz > 100000) {
		fprintf(stderr, "floor: bad PID, MILLISECONDS or HZ\n");
		return 2;
	}
	ncpus = online_cpus(cpus, MAX_CPUS);
	if (ncpus < 0)
		return fail("online CPUs", ncpus);

	skel = floor_bpf__open();
	if (!skel)
		return fail("open", errno);
	skel->rodata->target_tgid = pid;
	skel->rodata->empty = argc == 5;
	err = floor_bpf__load(skel);
	if (err) {
		status = fail("load", err);
		goto out;
	}
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		status = fail("bpf_enable_stats", errno);
		goto out;
	}
	ring = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_record, NULL, NULL);
	if (!ring) {
		status = fail("ring buffer", errno);
		goto out_stats;
	}
	for (int i = 0; i < ncpus; i++) {
		fds[i] = open_cpu_clock(cpus[i], 1000000000ull / hz);
		if (fds[i] < 0) {
			status = fail("perf_event_open", fds[i]);
			goto out_detach;
		}
		links[i] = bpf_program__attach_perf_event(skel->progs.floor_sample_cpu, fds[i]);
		if (!links[i]) {
			status = fail("attach", errno);
			close(fds[i]);
			goto out_detach;
		}
		nattached++;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	deadline = now_ns() + ms * 1000000ull;
	status = 0;
	while (!stop_requested && now_ns() < deadline) {
		/* records are submitted without a wakeup: drain on the timeout */
		n = ring_buffer__poll(ring, 50);
		if (n < 0 && n != -EINTR) {
			status = fail("ring buffer poll", n);
			break;
		}
		ring_buffer__consume(ring);
	}
out_detach:
	for (int i = 0; i < nattached; i++) {
		bpf_link__destroy(links[i]);
		close(fds[i]);
	}
	ring_buffer__consume(ring);
	if (!status) {
		if (bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.floor_sample_cpu), &info,
					   &info_len)) {
			status = fail("prog info", errno);
		} else {
			printf("floor: runs %llu run_ns %llu records %llu ns_per_run %.0f "
			       "ns_per_record %.0f\n",
			       (unsigned long long)info.run_cnt,
			       (unsigned long long)info.run_time_ns, records,
			       info.run_cnt ? (double)info.run_time_ns / info.run_cnt : 0.0,
			       records ? (double)info.run_time_ns / records : 0.0);
		}
	}
	ring_buffer__free(ring);
out_stats:
	close(stats_fd);
out:
	floor_bpf__destroy(skel);
	return status;
}
