// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof continuous: always-on capture in rolling windows, one profile per
 * isolate per window, pushed to a profile store and/or kept in a directory
 * (docs/continuous.md).  The options, the sink the capture hands each
 * profile to, and the loop over capture.h's windows.
 */
#include <argp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/v8layout.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/push/push.h"
#include "user/record/capture.h"
#include "user/record/continuous.h"
#include "user/record_exit.h"

#define MIN_WINDOW_S 1
#define MAX_WINDOW_S 600
#define MAX_FREQUENCY_HZ 1000
#define DEFAULT_FREQUENCY_HZ 99
#define DEFAULT_WINDOW_S 10
#define DEFAULT_RETENTION_MIN 60
#define DEFAULT_OUT_DIR_MAX_MB 1024
#define DEFAULT_SPOOL_MAX_MB 256
/* at exit, how long the windows not yet sent get to reach the store */
#define LABEL_MAX 128

enum { OPT_WINDOW_S = 0x100, OPT_PUSH, OPT_PUSH_PROTOCOL, OPT_PUSH_TOKEN_FILE, OPT_TENANT,
       OPT_SPOOL, OPT_SPOOL_MAX_MB, OPT_RETENTION_MIN, OPT_OUT_DIR_MAX_MB, OPT_METRICS,
       OPT_HOST, OPT_WINDOWS, OPT_STATE_DIR, OPT_NO_CALIBRATE, OPT_NO_GC_PROBES,
       OPT_SOURCE_MAPS };

struct continuous_env {
	struct record_env rec;
	long window_s;
	const char *out_dir;
	long retention_min;
	long out_dir_max_mb;
	const char *metrics;
	const char *host;
	long max_windows;		/* 0: until a signal */
	struct push_opts push;
	long spool_max_mb;
	bool verbose;
};

static const struct argp_option continuous_options[] = {
	{ "pid", 'p', "PID", 0,
	  "Process to sample; repeatable.  Default: every V8 runtime, and those that start later", 0 },
	{ "frequency", 'F', "HZ", 0, "Samples per second per CPU, 1..1000 (default 99)", 0 },
	{ "window-s", OPT_WINDOW_S, "S", 0, "Length of a window, 1..600 s (default 10)", 0 },
	{ "push", OPT_PUSH, "URL", 0,
	  "Push each window's profiles to the profile store at URL (Grafana Pyroscope's "
	  "/ingest API, or Grafana Alloy's pyroscope.receive_http)", 0 },
	{ "push-protocol", OPT_PUSH_PROTOCOL, "NAME", 0, "The store's API: pyroscope (default)", 0 },
	{ "push-token-file", OPT_PUSH_TOKEN_FILE, "FILE", 0,
	  "Send the token in FILE as 'Authorization: Bearer ...'", 0 },
	{ "tenant", OPT_TENANT, "ID", 0, "Send X-Scope-OrgID: ID (a multi-tenant store)", 0 },
	{ "spool", OPT_SPOOL, "DIR", 0,
	  "Keep windows not yet pushed in DIR, so that none is lost while the store is away "
	  "or across a restart (default: in memory)", 0 },
	{ "spool-max-mb", OPT_SPOOL_MAX_MB, "MB", 0,
	  "Size bound of the spool; the oldest windows go first (default 256)", 0 },
	{ "out-dir", 'O', "DIR", 0,
	  "Keep each window's profiles as files in DIR (<start>+<s>s+<script>+<version>+"
	  "<isolate>+cpu.pb.gz); isoprof serve --out-dir serves time ranges of them", 0 },
	{ "retention-min", OPT_RETENTION_MIN, "MIN", 0,
	  "With --out-dir: delete windows older than MIN minutes (default 60; 0: no age bound)", 0 },
	{ "out-dir-max-mb", OPT_OUT_DIR_MAX_MB, "MB", 0,
	  "With --out-dir: delete the oldest windows beyond MB (default 1024; 0: no bound)", 0 },
	{ "metrics", OPT_METRICS, "FILE", 0,
	  "Write isoprof's own metrics in Prometheus text format to FILE after every window "
	  "(for node_exporter's textfile collector)", 0 },
	{ "host", OPT_HOST, "NAME", 0, "The host label (default: the host name)", 0 },
	{ "windows", OPT_WINDOWS, "N", 0, "Stop after N windows (default: run until SIGINT/SIGTERM)", 0 },
	{ "version-labels", 'L', "FILE", 0,
	  "Map (script, version id) to deployment versions (see docs/attribution.md)", 0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0, "Also look for scripts' source maps in DIR", 0 },
	{ "state-dir", OPT_STATE_DIR, "DIR", 0, "Where calibrated V8 layouts are kept", 0 },
	{ "no-calibrate", OPT_NO_CALIBRATE, NULL, 0, "Never calibrate a runtime binary", 0 },
	{ "no-gc-probes", OPT_NO_GC_PROBES, NULL, 0, "No uprobes on V8's garbage collector", 0 },
	{ "quiet", 'q', NULL, 0, "Errors only", 0 },
	{ "verbose", 'v', NULL, 0, "A line per window", 0 },
	{ 0 },
};

static long parse_long(struct argp_state *state, const char *opt, const char *arg, long min,
		       long max)
{
	long v;

	if (options__long(arg, min, max, &v))
		argp_error(state, "%s must be an integer from %ld to %ld, not '%s'", opt, min, max,
			   arg);
	return v;
}

static error_t continuous_parse(int key, char *arg, struct argp_state *state)
{
	struct continuous_env *env = state->input;

	switch (key) {
	case 'p':
		env->rec.pids[env->rec.npids] = options__pid(state, arg, (size_t)env->rec.npids);
		env->rec.npids++;
		break;
	case 'F':
		env->rec.frequency_hz = parse_long(state, "--frequency", arg, 1, MAX_FREQUENCY_HZ);
		break;
	case OPT_WINDOW_S:
		env->window_s = parse_long(state, "--window-s", arg, MIN_WINDOW_S, MAX_WINDOW_S);
		break;
	case OPT_PUSH:
		if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
			argp_error(state, "--push takes an http:// or https:// URL, not '%s'", arg);
		env->push.url = arg;
		break;
	case OPT_PUSH_PROTOCOL:
		env->push.protocol = arg;
		break;
	case OPT_PUSH_TOKEN_FILE:
		env->push.token_file = arg;
		break;
	case OPT_TENANT:
		if (!*arg || strlen(arg) > LABEL_MAX)
			argp_error(state, "--tenant takes an id of 1 to %d bytes", LABEL_MAX);
		env->push.tenant = arg;
		break;
	case OPT_SPOOL:
		env->push.spool_dir = arg;
		break;
	case OPT_SPOOL_MAX_MB:
		env->spool_max_mb = parse_long(state, "--spool-max-mb", arg, 1, 1 << 20);
		break;
	case 'O':
		env->out_dir = arg;
		break;
	case OPT_RETENTION_MIN:
		env->retention_min = parse_long(state, "--retention-min", arg, 0, 60 * 24 * 365);
		break;
	case OPT_OUT_DIR_MAX_MB:
		env->out_dir_max_mb = parse_long(state, "--out-dir-max-mb", arg, 0, 1 << 24);
		break;
	case OPT_METRICS:
		env->metrics = arg;
		break;
	case OPT_HOST:
		if (!*arg || strlen(arg) > LABEL_MAX)
			argp_error(state, "--host takes a name of 1 to %d bytes", LABEL_MAX);
		env->host = arg;
		break;
	case OPT_WINDOWS:
		env->max_windows = parse_long(state, "--windows", arg, 1, 1L << 40);
		break;
	case 'L':
		env->rec.version_labels = arg;
		break;
	case OPT_SOURCE_MAPS:
		env->rec.source_maps = arg;
		break;
	case OPT_STATE_DIR:
		env->rec.state_dir = arg;
		break;
	case OPT_NO_CALIBRATE:
		env->rec.no_calibrate = true;
		break;
	case OPT_NO_GC_PROBES:
		env->rec.no_gc_probes = true;
		break;
	case 'q':
		env->rec.quiet = true;
		break;
	case 'v':
		env->verbose = true;
		break;
	case ARGP_KEY_END:
		if (!env->push.url && !env->out_dir)
			argp_error(state, "give --push URL, --out-dir DIR or both: where the windows go");
		if (env->push.spool_dir && !env->push.url)
			argp_error(state, "--spool keeps what --push could not send: give --push");
		if ((env->push.token_file || env->push.tenant || env->push.protocol) && !env->push.url)
			argp_error(state, "--push-token-file, --tenant and --push-protocol go with --push");
		break;
	default:
		return options__rest(key, arg, state);
	}
	return 0;
}

int cmd_continuous(int argc, char **argv)
{
	static const struct argp argp = {
		.options = continuous_options,
		.parser = continuous_parse,
		.doc = "Sample every V8 runtime on the host (or --pid) all the time, at a low "
		       "rate, in rolling windows; push one pprof per isolate per window to a "
		       "profile store and/or keep them in a directory.",
	};
	struct continuous_env env = {
		.rec = { .frequency_hz = DEFAULT_FREQUENCY_HZ, .type = RECORD_CPU },
		.window_s = DEFAULT_WINDOW_S,
		.retention_min = DEFAULT_RETENTION_MIN,
		.out_dir_max_mb = DEFAULT_OUT_DIR_MAX_MB,
		.spool_max_mb = DEFAULT_SPOOL_MAX_MB,
	};
	struct continuous_opts opts;
	char host[256];

	capture__catch_signals();
	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return RECORD_EXIT_USAGE;
	if (!env.rec.state_dir)
		env.rec.state_dir = v8layout__state_dir();
	if (getenv("ISOPROF_NO_CALIBRATE"))
		env.rec.no_calibrate = true;
	env.rec.window_ms = env.window_s * 1000;
	env.rec.command_line = isoprof_command_line;
	env.push.spool_max_bytes = (uint64_t)env.spool_max_mb << 20;
	if (!env.host) {
		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		env.host = host;
	}
	opts = (struct continuous_opts){
		.rec = &env.rec,
		.out_dir = env.out_dir,
		.retention_min = env.retention_min,
		.out_dir_max_mb = env.out_dir_max_mb,
		.metrics = env.metrics,
		.host = env.host,
		.max_windows = env.max_windows,
		.push = env.push.url ? &env.push : NULL,
		.verbose = env.verbose,
	};
	return continuous__run(&opts);
}
