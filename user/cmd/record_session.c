// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record's session: the targets, the BPF sampler armed on them, and the
 * window; see record.h.
 *
 * One thread does everything: the ring buffer (half a second to a second of
 * samples, see sampler__ringbuf_bytes()) absorbs the ticks taken while it
 * loads symbol tables or re-reads /proc/PID/maps, so sampling never waits
 * for that work.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/monotime.h"
#include "lib/procfs.h"
#include "user/capture/caps.h"
#include "user/cmd/record.h"

#define LIVENESS_EVERY_NS 200000000ull
#define REFRESH_EVERY_NS 1000000000ull

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int add_target(struct capture *c, pid_t pid, const struct discover_proc *v8)
{
	struct target_state *t = &c->targets[c->ntargets];
	int err;

	for (int j = 0; j < c->ntargets; j++)
		if (c->targets[j].pid == pid)
			return 0;
	if (c->ntargets == MAX_PIDS)
		return -E2BIG;
	err = symbolizer__track(c->sym, pid);
	if (err) {
		fprintf(stderr, "isoprof: pid %d: cannot read its memory maps: %s\n", pid,
			strerror(-err));
		return err;
	}
	t->pid = pid;
	t->v8 = v8;
	if (v8 && v8->tls.supported) {
		t->bpf.isolate_tls_offset = v8->tls.tp_offset;
		t->bpf.flags |= ISOPROF_TARGET_READ_ISOLATE;
	}
	procfs__comm(pid, t->comm, sizeof(t->comm));
	c->ntargets++;
	return 0;
}

static const struct discover_proc *find_v8(const struct discover_list *list, pid_t pid)
{
	for (size_t i = 0; i < list->nr; i++)
		if (list->procs[i].pid == pid)
			return &list->procs[i];
	return NULL;
}

/*
 * --pid names processes (V8 or not: a native process is profiled without
 * isolates); no --pid means every V8 runtime on the host.
 */
static int setup_targets(struct capture *c)
{
	int err;

	for (int i = 0; i < c->env->npids; i++) {
		if (!procfs__alive(c->env->pids[i])) {
			fprintf(stderr, "isoprof: pid %d: no such process\n", c->env->pids[i]);
			record__set_exit(c, RECORD_EXIT_NOT_FOUND);
			return -ESRCH;
		}
	}
	err = discover__scan(c->env->npids ? c->env->pids : NULL, c->env->npids, &c->discovered);
	if (err) {
		fprintf(stderr, "isoprof: cannot scan for V8 runtimes: %s\n", strerror(-err));
		return err;
	}
	if (!c->env->npids) {
		if (!c->discovered->nr) {
			fprintf(stderr, "isoprof: no V8 runtime found on this host (isoprof targets "
					"lists them); name a process with --pid\n");
			record__set_exit(c, RECORD_EXIT_NOT_FOUND);
			return -ESRCH;
		}
		for (size_t i = 0; i < c->discovered->nr; i++) {
			err = add_target(c, c->discovered->procs[i].pid, &c->discovered->procs[i]);
			if (err && err != -ESRCH && err != -ENOENT)
				return err;
		}
		return c->ntargets ? 0 : -ESRCH;
	}
	for (int i = 0; i < c->env->npids; i++) {
		err = add_target(c, c->env->pids[i], find_v8(c->discovered, c->env->pids[i]));
		if (err)
			return err;
	}
	return 0;
}

int record_session__open(struct capture *c)
{
	const char *labels = c->env->version_labels;
	int err;

	read_budget__init(&c->read_budget, SAFE_OPEN_CAPTURE_MAX);
	c->store = sample_store__new();
	c->sym = symbolizer__new(&(struct symbolizer_opts){ .budget = &c->read_budget });
	c->isolates = isolate_registry__new();
	if (!c->store || !c->sym || !c->isolates) {
		fprintf(stderr, "isoprof: out of memory\n");
		return -ENOMEM;
	}
	isolate_registry__set_budget(c->isolates, &c->read_budget);
	if (labels) {
		char why[256] = "";

		/* returns how many labels it loaded */
		err = isolate_registry__load_labels(c->isolates, labels, why, sizeof(why));
		if (err < 0) {
			fprintf(stderr, "isoprof: %s: %s\n", labels, why[0] ? why : strerror(-err));
			return err;
		}
	}
	return setup_targets(c);
}

static int on_sample(void *ctx, const struct isoprof_sample *s)
{
	struct capture *c = ctx;
	int err;

	if (c->store_err)
		return 0;
	err = sample_store__add(c->store, s);
	if (err)
		c->store_err = err;
	for (int i = 0; i < c->ntargets; i++) {
		if (c->targets[i].pid == (pid_t)s->pid) {
			c->targets[i].samples++;
			break;
		}
	}
	return 0;
}

int record_session__arm(struct capture *c)
{
	struct sampler_opts sopts = {
		.frequency_hz = c->env->frequency_hz,
		.run_time_stats = c->env->bpf_stats,
	};
	struct sigaction sa = { .sa_handler = on_signal };
	char err_buf[256] = "";
	int err;

	sopts.err_buf = err_buf;
	sopts.err_len = sizeof(err_buf);
	c->sampler = sampler__new(&sopts, on_sample, c);
	if (!c->sampler) {
		err = errno ? -errno : -EINVAL;
		fprintf(stderr, "isoprof: %s\n", err_buf[0] ? err_buf : strerror(-err));
		record__set_exit(c, RECORD_EXIT_NO_BPF);
		return err;
	}
	for (int i = 0; i < c->ntargets; i++) {
		err = sampler__add_target(c->sampler, c->targets[i].pid, &c->targets[i].bpf);
		if (err) {
			fprintf(stderr, "isoprof: pid %d: cannot add target: %s\n",
				c->targets[i].pid, strerror(-err));
			return err;
		}
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	c->ncpus = sampler__start(c->sampler);
	c->armed_ns = monotime_ns();
	if (c->ncpus < 0) {
		fprintf(stderr, "isoprof: cannot attach to the CPUs' cpu-clock events: %s\n",
			strerror(-c->ncpus));
		record__set_exit(c, RECORD_EXIT_NO_BPF);
		return c->ncpus;
	}
	/* V8's window starts once isoprof's is armed, and ends before it */
	record_v8__start(c);
	/* BPF is loaded and attached: what is left only reads /proc and writes the file. */
	err = caps__drop_after_attach();
	if (err)
		fprintf(stderr, "isoprof: warning: cannot drop capabilities: %s\n",
			strerror(-err));
	return 0;
}

static void progress(const struct capture *c, uint64_t now, bool final)
{
	double elapsed = (now - c->window_start_ns) / 1e9;

	if (c->env->quiet || !isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rrecording: %5.1f / %.1f s, %zu samples%s", elapsed,
		c->env->duration_ms / 1000.0, sample_store__count(c->store), final ? "\n" : "");
}

static void check_targets(struct capture *c, uint64_t now, bool refresh_maps)
{
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (t->exited)
			continue;
		if (!procfs__alive(t->pid)) {
			t->exited = true;
			t->exited_after_ns = now - c->window_start_ns;
			sampler__remove_target(c->sampler, t->pid);
			continue;
		}
		if (refresh_maps)
			symbolizer__refresh(c->sym, t->pid);
	}
}

bool record_session__all_exited(const struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++)
		if (!c->targets[i].exited)
			return false;
	return true;
}

int record_session__run_window(struct capture *c)
{
	uint64_t deadline, now, last_liveness, last_refresh;
	int n;

	c->window_start_ns = monotime_ns();
	clock_gettime(CLOCK_REALTIME, &c->wall_start);
	deadline = c->window_start_ns + (uint64_t)c->env->duration_ms * 1000000ull;

	/* Sampling is already armed; the ring buffer holds what arrives meanwhile. */
	for (int i = 0; i < c->ntargets; i++)
		symbolizer__preload(c->sym, c->targets[i].pid);
	c->symbols_ns = monotime_ns();

	last_liveness = last_refresh = monotime_ns();
	while (!stop_requested) {
		n = sampler__poll(c->sampler, 50);
		if (n < 0)
			return n;
		now = monotime_ns();
		if (now >= deadline)
			break;
		if (now - last_liveness >= LIVENESS_EVERY_NS) {
			bool refresh = now - last_refresh >= REFRESH_EVERY_NS;

			check_targets(c, now, refresh);
			if (refresh)
				last_refresh = now;
			last_liveness = now;
			if (record_session__all_exited(c))
				break;
			progress(c, now, false);
		}
	}
	record_v8__stop(c);
	c->window_end_ns = monotime_ns();
	check_targets(c, c->window_end_ns, true);
	sampler__stop(c->sampler);
	progress(c, c->window_end_ns, true);
	return 0;
}

void record_session__release(struct capture *c)
{
	record_v8__free(c);
	sampler__free(c->sampler);
	attribution__release(&c->attr);
	frame_table__free(c->ft);
	free(c->selected);
	isolate_registry__free(c->isolates);
	discover__free(c->discovered);
	symbolizer__free(c->sym);
	sample_store__free(c->store);
}
