// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* capture: the pipeline's calls in order, over the stages of record.h; see capture.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/monotime.h"
#include "user/capture/caps.h"
#include "user/record/capture.h"
#include "user/record/record.h"
#include "user/v8/calibration.h"

/* Before any BPF: the output, the state, targets, code logs, V8's profilers. */
static int prepare(struct capture *c)
{
	struct record_env *env = c->env;
	int err;

	/* continuous: its profiles go to the sink, no file of the capture's own */
	if (!env->sink && !env->output && !env->out_dir)
		env->output = env->type == RECORD_HEAP ? "isoprof-heap.pb.gz" : "isoprof-cpu.pb.gz";
	err = env->sink ? 0 : record_profiles__open_output(c);
	if (!err)
		err = record_session__open(c);
	if (!err)
		err = record_profiles__load_code_logs(c);
	if (!err)
		err = record_profiles__precheck_script(c);
	if (err)
		return err;
	c->keep_group_profiles = env->v8 || env->type == RECORD_HEAP;
	/* inspector sessions are opened and profilers prepared before the window */
	if (env->v8 || env->type == RECORD_HEAP) {
		/* CAP_SYS_ADMIN, for setns(), only when a target needs it */
		if (record_session__foreign_netns(c))
			err = caps__enter(CAPS_INSPECTOR);
		if (!err)
			err = record_v8__prepare(c);
		else
			fprintf(stderr, "isoprof: cannot change capabilities: %s\n", strerror(-err));
	}
	return err;
}

/*
 * First use of a runtime binary with no V8 layout: calibrate it now, before
 * privileges are dropped (the run needs its own BPF sampler and a child run
 * as nobody), and say so, since it takes a few seconds once per binary.
 * Only targets with no perf map: where V8 writes one, it names the frames,
 * and a capture must not start seconds late for what only adds inlined
 * functions the code log missed (`isoprof calibrate` once gives those;
 * docs/v8-frames.md).  A failed calibration is a note; the capture goes on.
 */
static void auto_calibrate(const struct record_env *env)
{
	struct discover_list *list = NULL;
	char done[ISOPROF_V8_LAYOUT_MAX][V8LAYOUT_BUILD_ID_MAX + 1];
	size_t ndone = 0;

	if (env->no_calibrate || env->type != RECORD_CPU ||
	    discover__scan(env->npids ? env->pids : NULL, (size_t)env->npids, DISCOVER_FILES,
			   &list))
		return;
	for (size_t i = 0; i < list->nr && ndone < ISOPROF_V8_LAYOUT_MAX; i++) {
		const struct discover_proc *p = &list->procs[i];
		struct calibration_result r;
		struct calibration_opts o = { 0 };
		struct v8_layout l;
		char exe[64], err[512] = "";
		bool seen = false;
		int ret;

		if (!p->build_id[0] || p->perf_map_exists || p->runtime == DISCOVER_V8)
			continue;
		for (size_t k = 0; k < ndone && !seen; k++)
			seen = !strcmp(done[k], p->build_id);
		ret = seen ? 0 : v8layout__load(env->state_dir, p->build_id, &l, NULL, 0);
		if (ret != -ENOENT && ret != -ESTALE)
			continue;
		snprintf(done[ndone++], sizeof(done[0]), "%s", p->build_id);
		fprintf(stderr,
			"isoprof: pid %d: %s %s (build-id %.12s...) has no V8 layout yet: calibrating "
			"it once, a few seconds (isoprof calibrate; --no-calibrate to skip)\n",
			p->pid, discover__runtime_name(p->runtime), p->version, p->build_id);
		/* the binary the process runs, whatever its path in our mount namespace */
		snprintf(exe, sizeof(exe), "/proc/%d/exe", p->pid);
		o.binary = exe;
		o.err = err;
		o.err_len = sizeof(err);
		ret = calibration__run(&o, &r);
		if (!ret && strcmp(r.layout.build_id, p->build_id))
			snprintf(err, sizeof(err), "the run's build-id %s is not the target's",
				 r.layout.build_id);
		else if (!ret && (ret = v8layout__store(env->state_dir, &r.layout)))
			snprintf(err, sizeof(err), "cannot store it under %s: %s", env->state_dir,
				 strerror(-ret));
		if (ret || err[0])
			fprintf(stderr, "isoprof: pid %d: calibration failed: %s\n", p->pid, err);
		else
			fprintf(stderr, "isoprof: pid %d: calibrated: %zu of %zu functions named as "
				"the perf map names them\n", p->pid, r.report.agree_name, r.report.checked);
	}
	discover__free(list);
}

/*
 * The privilege plan of a capture (user/capture/caps.h): from here on,
 * everything it reads, it reads without CAP_SYS_ADMIN or CAP_DAC_OVERRIDE.
 */
static int drop_privileges(struct capture *c)
{
	const struct record_env *env = c->env;
	unsigned int needs = CAPS_NEED_BPF | CAPS_NEED_KSYMS;
	int err;

	if (env->bpf_stats)
		needs |= CAPS_NEED_BPF_STATS;
	/* an inspector may live in the target's own network namespace */
	if (env->v8 || env->type == RECORD_HEAP)
		needs |= CAPS_NEED_NETNS;
	/*
	 * Outputs for another user: until the output directory is open,
	 * whatever they may take (record_profiles__open_output() keeps
	 * only what its owner needs), permitted, never effective.
	 */
	caps__output_policy(&c->out_policy);
	needs |= caps__output_needs(&c->out_policy);
	err = caps__start(CAPS_DISCOVERY, needs);
	if (err)
		fprintf(stderr, "isoprof: cannot drop privileges: %s\n", strerror(-err));
	return err;
}

/* --type heap: the summary once V8's profiles are written, as text and with --json. */
static void print_heap_summary(struct capture *c)
{
	record_summary__print_heap(c);
	if (!c->env->json)
		return;
	if (record_summary__print_heap_json(c))
		fprintf(stderr, "isoprof: cannot print the JSON summary\n");
	else
		c->json_written = true;
}

/*
 * --json, and no summary to print (no samples, no such target, no BPF...):
 * stdout still carries one JSON document, the outcome; the sentence that
 * says why is on stderr, as always.
 */
static void print_json_outcome(const struct capture *c)
{
	printf("{\n  \"type\": \"%s\",\n  \"exit_status\": %d,\n  \"error\": \"%s\"\n}\n",
	       c->env->type == RECORD_HEAP ? "heap" : "cpu", c->exit_status,
	       record_exit__outcome(c->exit_status));
	fflush(stdout);
}

/* After the window: the profiles, the summary, V8's side.  Sets the exit status. */
static void finish(struct capture *c)
{
	struct isoprof_counters cnt;
	double process_ms = 0;
	int err;

	if (c->store_err)
		fprintf(stderr, "isoprof: out of memory storing samples; keeping what fit\n");
	sampler__counters(c->sampler, &cnt);
	if (!sample_store__count(c->store)) {
		fprintf(stderr,
			"isoprof: no samples: the target%s did not run on a CPU during the %.1f s "
			"window%s; nothing written\n",
			c->ntargets > 1 ? "s" : "", (c->window_end_ns - c->window_start_ns) / 1e9,
			record_session__all_exited(c) ? " (exited)" : " (idle: send it work and retry)");
		record__set_exit(c, RECORD_EXIT_NO_SAMPLES);
		/* what V8 collected is kept even so, under the inspector's target names */
		if (c->v8)
			record_v8__finish(c);
		if (c->env->type == RECORD_HEAP)
			print_heap_summary(c);
		return;
	}
	if (!c->code_logs_at_end)
		record_profiles__find_new_code_logs(c);
	err = record_profiles__write(c, &cnt, &process_ms);
	if (err) {
		if (err == -ENOMEM)
			fprintf(stderr, "isoprof: out of memory writing the profiles\n");
		return;
	}
	if (c->env->type == RECORD_CPU)
		record_summary__print(c, &cnt, process_ms);
	if (c->env->bpf_stats)
		record_summary__print_bpf_stats(c, &cnt);
	c->exit_status = RECORD_EXIT_OK;
	if ((c->env->v8 || c->env->type == RECORD_HEAP) && record_v8__finish(c))
		record__set_exit(c, RECORD_EXIT_FAILED);
	/* after V8's side: the JSON carries its cross-checks and files */
	if (c->env->type == RECORD_CPU && c->env->json) {
		if (record_summary__print_json(c, &cnt))
			fprintf(stderr, "isoprof: cannot print the JSON summary\n");
		else
			c->json_written = true;
	}
	if (c->env->type == RECORD_HEAP)
		print_heap_summary(c);
}

struct capture *capture__new(struct record_env *env)
{
	struct capture *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->env = env;
	c->exit_status = RECORD_EXIT_FAILED;
	c->rolling = env->window_ms > 0;
	return c;
}

int capture__open(struct capture *c)
{
	int err;

	auto_calibrate(c->env);
	c->launch_ns = monotime_ns();
	err = drop_privileges(c);
	if (!err)
		err = prepare(c);
	if (!err && capture__stop_requested())
		err = -EINTR;
	return err;
}

int capture__arm(struct capture *c)
{
	int err = record_session__arm(c);

	if (!err && capture__stop_requested())
		err = -EINTR;
	return err;
}

int capture__run_window(struct capture *c)
{
	int err;

	record_session__stage(RECORD_STAGE_WINDOW);
	err = record_session__run_window(c);
	record_session__stage(RECORD_STAGE_WRITING);
	if (err)
		fprintf(stderr, "isoprof: reading samples failed: %s\n", strerror(-err));
	return err;
}

/*
 * Continuous: the window's profiles to the sink, and no summary: a window
 * with no samples is no error, the next one may have some.
 */
static int write_window(struct capture *c)
{
	struct isoprof_counters cnt;
	uint64_t t0 = monotime_ns();
	double process_ms = 0;
	int err = 0;

	c->wstats.profiles = c->wstats.sink_errors = 0;
	sampler__counters(c->sampler, &cnt);
	cnt.lost_ringbuf_full -= c->cnt_base.lost_ringbuf_full;
	if (c->store_err)
		fprintf(stderr, "isoprof: out of memory storing samples; keeping what fit\n");
	if (sample_store__count(c->store)) {
		record_profiles__find_new_code_logs(c);
		err = record_profiles__write(c, &cnt, &process_ms);
		if (err == -ENOMEM)
			fprintf(stderr, "isoprof: out of memory writing the profiles\n");
	}
	c->exit_status = err ? RECORD_EXIT_FAILED : RECORD_EXIT_OK;
	c->wstats.process_ms = (monotime_ns() - t0) / 1e6;
	return err;
}

int capture__write(struct capture *c)
{
	if (c->rolling)
		return write_window(c);
	finish(c);
	return c->exit_status == RECORD_EXIT_OK ? 0 : -EIO;
}

int capture__next_window(struct capture *c)
{
	int err = record_session__next_window(c);

	if (err)
		fprintf(stderr, "isoprof: cannot start the next window: %s\n", strerror(-err));
	return err;
}

void capture__window_stats(const struct capture *c, struct capture_window_stats *out)
{
	*out = c->wstats;
	out->from_ns = (uint64_t)c->wall_start.tv_sec * 1000000000ull + c->wall_start.tv_nsec;
	out->until_ns = (uint64_t)c->wall_end.tv_sec * 1000000000ull + c->wall_end.tv_nsec;
	out->samples = sample_store__count(c->store);
	out->targets = c->ntargets;
}

int capture__close(struct capture *c)
{
	int status;

	record_session__release(c);
	if (c->env->json && !c->json_written)
		print_json_outcome(c);
	status = c->exit_status;
	free(c);
	return status;
}
