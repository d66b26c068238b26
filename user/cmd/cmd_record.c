// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof record: sample target processes for a window and write a pprof.
 * The options, then the capture's calls (user/record/capture.h).
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8layout.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/record/capture.h"
#include "user/record_exit.h"

#define MIN_DURATION_MS 1000
#define MAX_DURATION_MS 50000
#define MAX_FREQUENCY_HZ 20000

enum { OPT_V8 = 0x100, OPT_INSPECTOR, OPT_NO_GC_PROBES, OPT_NO_ALLOC_PROBES, OPT_NAMESPACE, OPT_ACTOR,
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
	{ "no-alloc-probes", OPT_NO_ALLOC_PROBES, NULL, 0,
	  "--type heap: no uprobes where V8 and the malloc sample allocations: V8's own heap "
	  "profile only (it charges inlined functions' allocations to their caller)", 0 },
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
	case OPT_NO_ALLOC_PROBES:
		env->no_alloc_probes = true;
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
	struct capture *c;

	/* a signal from here on ends the capture, never loses it (capture.h) */
	capture__catch_signals();
	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return RECORD_EXIT_USAGE;
	if (!env.state_dir)
		env.state_dir = v8layout__state_dir();
	/* tests run record with no calibration unless they ask for one */
	if (getenv("ISOPROF_NO_CALIBRATE"))
		env.no_calibrate = true;
	env.command_line = isoprof_command_line;
	c = capture__new(&env);
	if (!c) {
		fprintf(stderr, "isoprof: out of memory\n");
		return RECORD_EXIT_FAILED;
	}
	if (!capture__open(c) && !capture__arm(c) && !capture__run_window(c))
		capture__write(c);
	return capture__close(c);
}
