// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof record: sample target processes for a window and write a pprof.
 * The options, then the stages of record.h in order.
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/monotime.h"
#include "user/capture/caps.h"
#include "user/cmd/commands.h"
#include "user/v8/calibration.h"
#include "user/cmd/options.h"
#include "user/cmd/record.h"

#define MIN_DURATION_MS 1000
#define MAX_DURATION_MS 50000
#define MAX_FREQUENCY_HZ 20000

enum { OPT_V8 = 0x100, OPT_INSPECTOR, OPT_NO_GC_PROBES, OPT_NAMESPACE, OPT_ACTOR,
       OPT_STATE_DIR, OPT_NO_CALIBRATE, OPT_SOURCE_MAPS, OPT_VERSION };

#define ACTOR_ID_LEN 64

static const struct argp_option record_options[] = {
	{ "pid", 'p', "PID", 0,
	  "Process to sample (all its threads); repeatable.  Default: every V8 runtime", 0 },
	{ "duration-ms", 'd', "MS", 0, "Length of the window, 1000..50000 (default 10000)", 0 },
	{ "frequency", 'F', "HZ", 0, "Samples per second per CPU (default 1000)", 0 },
	{ "output", 'o', "FILE", 0, "Profile to write (default isoprof-cpu.pb.gz)", 0 },
	{ "raw", 'r', NULL, 0, "Write uncompressed protobuf instead of gzip", 0 },
	{ "quiet", 'q', NULL, 0, "No progress line", 0 },
	{ "out-dir", 'O', "DIR", 0,
	  "One profile per isolate in DIR (<script>-<version>-<isolate>-cpu.pb.gz), "
	  "and no-isolate-cpu.pb.gz for samples outside any isolate", 0 },
	{ "script", 's', "NAME", 0,
	  "Keep only the isolates of this worker: its service name (workerd), a module or "
	  "script name, or a module name without its extension", 0 },
	{ "namespace", OPT_NAMESPACE, "NS", 0,
	  "With --actor: the isolate hosting this Durable Object namespace (workerd: its "
	  "uniqueKey, className or service:className)", 0 },
	{ "actor", OPT_ACTOR, "ID", 0,
	  "With --namespace: the object's id (64 hex digits); the profile covers every "
	  "object of the namespace in that isolate", 0 },
	{ "version", OPT_VERSION, "ID|latest", 0,
	  "With --script: a version id (prefix) or label, or latest", 0 },
	{ "version-labels", 'L', "FILE", 0,
	  "Map (script, version id) to deployment versions (see docs/attribution.md)", 0 },
	{ "bpf-stats", 'S', NULL, 0,
	  "Measure the BPF program's run time (kernel BPF stats) and print it", 0 },
	{ "type", 't', "cpu|heap", 0,
	  "cpu (default): isoprof's CPU profile; heap: V8's sampling heap profiler through "
	  "the inspector (allocations during the window, every 512 KiB)", 0 },
	{ "v8", OPT_V8, NULL, 0,
	  "Also run V8's own CPU profiler (inspector) on the same isolates over the same "
	  "window, save its profile beside isoprof's (<stem>-v8.cpuprofile, "
	  "<stem>-cpu.v8.pb.gz) and cross-check them (<stem>-crosscheck.json; needs "
	  "--out-dir)", 0 },
	{ "inspector", OPT_INSPECTOR, "HOST:PORT", 0,
	  "The target's inspector (loopback only), when isoprof cannot find it", 0 },
	{ "json", 'j', NULL, 0,
	  "Print the summary as JSON on stdout, and nothing else there: text goes to stderr "
	  "(cpu: samples, isolates, their classes and GC pauses, V8's cross-checks; heap: "
	  "bytes per isolate and its top allocating function)", 0 },
	{ "no-gc-probes", OPT_NO_GC_PROBES, NULL, 0,
	  "No uprobes on V8's garbage collector: no GC pauses per isolate, and GC jobs on "
	  "V8's platform threads stay outside isolates", 0 },
	{ "state-dir", OPT_STATE_DIR, "DIR", 0,
	  "Where calibrated V8 layouts are kept (default $" V8LAYOUT_STATE_DIR_ENV ", else " V8LAYOUT_DEFAULT_STATE_DIR "): with "
	  "one for a runtime's binary, its JS frames are named with no V8 flags", 0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Also look for scripts' source maps in DIR (DIR/<script>.map, or the file name "
	  "the script's sourceMappingURL gives); inline maps and maps next to a script are "
	  "found without it (docs/source-maps.md)", 0 },
	{ "no-calibrate", OPT_NO_CALIBRATE, NULL, 0,
	  "Never calibrate a runtime binary that has no layout yet (its JS stays unnamed "
	  "without a perf map)", 0 },
	{ 0 },
};

static error_t record_parse(int key, char *arg, struct argp_state *state)
{
	struct record_env *env = state->input;

	switch (key) {
	case 'p':
		env->pids[env->npids] = options__pid(state, arg, (size_t)env->npids);
		env->npids++;
		break;
	case 'd':
		if (options__long(arg, MIN_DURATION_MS, MAX_DURATION_MS, &env->duration_ms))
			argp_error(state, "--duration-ms must be an integer from %d to %d, not '%s'",
				   MIN_DURATION_MS, MAX_DURATION_MS, arg);
		break;
	case 'F':
		if (options__long(arg, 1, MAX_FREQUENCY_HZ, &env->frequency_hz))
			argp_error(state, "--frequency must be an integer from 1 to %d Hz, not '%s'",
				   MAX_FREQUENCY_HZ, arg);
		break;
	case 'o':
		env->output = arg;
		break;
	case 'r':
		env->raw = true;
		break;
	case 'q':
		env->quiet = true;
		break;
	case 'S':
		env->bpf_stats = true;
		break;
	case 'O':
		env->out_dir = arg;
		break;
	case 's':
		env->script = arg;
		break;
	case OPT_VERSION:
		env->version = arg;
		break;
	case 'L':
		env->version_labels = arg;
		break;
	case 't':
		if (!strcmp(arg, "cpu"))
			env->type = RECORD_CPU;
		else if (!strcmp(arg, "heap"))
			env->type = RECORD_HEAP;
		else
			argp_error(state, "--type is cpu or heap, not '%s'", arg);
		break;
	case OPT_V8:
		env->v8 = true;
		break;
	case OPT_INSPECTOR:
		env->inspector = arg;
		break;
	case OPT_NAMESPACE:
		if (!*arg)
			argp_error(state, "--namespace needs a name");
		env->namespace_id = arg;
		break;
	case OPT_ACTOR:
		if (strlen(arg) != ACTOR_ID_LEN || strspn(arg, "0123456789abcdefABCDEF") != ACTOR_ID_LEN)
			argp_error(state, "--actor must be %d hexadecimal digits", ACTOR_ID_LEN);
		env->actor_id = arg;
		break;
	case OPT_NO_GC_PROBES:
		env->no_gc_probes = true;
		break;
	case OPT_STATE_DIR:
		env->state_dir = arg;
		break;
	case OPT_NO_CALIBRATE:
		env->no_calibrate = true;
		break;
	case OPT_SOURCE_MAPS:
		env->source_maps = arg;
		break;
	case 'j':
		env->json = true;
		break;
	case ARGP_KEY_END:
		if (env->v8 && env->type == RECORD_HEAP)
			argp_error(state, "--v8 runs V8's CPU profiler: it goes with --type cpu");
		if (env->v8 && !env->out_dir)
			argp_error(state, "--v8 writes several files per isolate: give --out-dir DIR");
		if (env->inspector && env->npids > 1)
			argp_error(state, "--inspector names the inspector of one process: give one --pid");
		if (!env->namespace_id != !env->actor_id)
			argp_error(state, "--namespace and --actor go together: give both or neither");
		if (env->version && !env->script && !env->namespace_id)
			argp_error(state, "--version goes with --script");
		if (env->out_dir && env->output)
			argp_error(state, "give -o FILE or --out-dir DIR, not both");
		break;
	default:
		return options__rest(key, arg, state);
	}
	return 0;
}

/* Before any BPF: the output, the state, targets, code logs, V8's profilers. */
static int prepare(struct capture *c)
{
	struct record_env *env = c->env;
	int err;

	if (!env->output && !env->out_dir)
		env->output = env->type == RECORD_HEAP ? "isoprof-heap.pb.gz" : "isoprof-cpu.pb.gz";
	err = record_profiles__open_output(c);
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

int cmd_record(int argc, char **argv)
{
	static const struct argp argp = {
		.options = record_options,
		.parser = record_parse,
		.args_doc = NULL,
		.doc = "Sample the CPU stacks (kernel and user) of target processes with a BPF "
		       "perf_event program and write a pprof profile.",
	};
	struct record_env env = {
		.duration_ms = 10000,
		.frequency_hz = 1000,
		.state_dir = NULL,
	};
	struct capture c = { .env = &env };
	int err;

	/* a signal from here on ends the capture, never loses it (record.h) */
	record_session__catch_signals();
	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return RECORD_EXIT_USAGE;
	if (!env.state_dir)
		env.state_dir = v8layout__state_dir();
	/* tests run record with no calibration unless they ask for one */
	if (getenv("ISOPROF_NO_CALIBRATE"))
		env.no_calibrate = true;
	c.exit_status = RECORD_EXIT_FAILED;
	auto_calibrate(&env);
	c.launch_ns = monotime_ns();
	if (drop_privileges(&c)) {
		if (env.json)
			print_json_outcome(&c);
		return RECORD_EXIT_FAILED;
	}
	if (!prepare(&c) && !record_session__stop_requested() && !record_session__arm(&c) &&
	    !record_session__stop_requested()) {
		record_session__stage(RECORD_STAGE_WINDOW);
		err = record_session__run_window(&c);
		record_session__stage(RECORD_STAGE_WRITING);
		if (err)
			fprintf(stderr, "isoprof: reading samples failed: %s\n", strerror(-err));
		else
			finish(&c);
	}
	record_session__release(&c);
	if (env.json && !c.json_written)
		print_json_outcome(&c);
	return c.exit_status;
}
