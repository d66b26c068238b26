// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof continuous: always-on capture in rolling windows, one profile per
 * isolate per window, pushed to a profile store and/or kept in a directory
 * (docs/continuous.md).  The options, the sink the capture hands each
 * profile to, and the loop over capture.h's windows.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "symbolize/v8layout.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/push/push.h"
#include "user/record/capture.h"
#include "user/record_exit.h"
#include "user/report/window_files.h"

#define MIN_WINDOW_S 1
#define MAX_WINDOW_S 600
#define MAX_FREQUENCY_HZ 1000
#define DEFAULT_FREQUENCY_HZ 99
#define DEFAULT_WINDOW_S 10
#define DEFAULT_RETENTION_MIN 60
#define DEFAULT_OUT_DIR_MAX_MB 1024
#define DEFAULT_SPOOL_MAX_MB 256
/* at exit, how long the windows not yet sent get to reach the store */
#define FLUSH_TIMEOUT_MS 5000
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

/* What the loop counts over the run, for the metrics. */
struct continuous_totals {
	uint64_t windows, profiles, samples, lost, sink_errors, files_written, files_failed;
	uint64_t files_pruned, new_targets, exited_targets;
	double last_process_ms, max_process_ms;
	int targets;
};

struct continuous {
	struct continuous_env *env;
	struct pusher *pusher;
	int out_dirfd;			/* +1; 0: no --out-dir */
	struct fileio_owner out_owner;
	struct continuous_totals totals;
	const char *host;
	char pid_buf[16];
};

/* The sink: one profile of a window, to the directory and to the store. */
static int on_profile(void *ctx, const struct capture_profile *p)
{
	struct continuous *k = ctx;
	int ret = 0;

	if (k->out_dirfd) {
		char name[512];
		int err = window_files__name(p->from_ns, p->until_ns, p->script, p->version,
					     p->isolate, name, sizeof(name));

		if (!err)
			err = fileio__write_atomic_at(k->out_dirfd - 1, &k->out_owner, name, p->data,
						      p->len, 0644);
		if (err) {
			k->totals.files_failed++;
			if (k->totals.files_failed == 1 || k->env->verbose)
				fprintf(stderr, "isoprof: %s: cannot write a window's profile: %s\n",
					k->env->out_dir, strerror(-err));
			ret = err;
		} else {
			k->totals.files_written++;
		}
	}
	if (k->pusher) {
		struct push_window w = {
			.service = p->script,
			.profile_type = "cpu",
			.from_ns = p->from_ns,
			.until_ns = p->until_ns,
			.sample_rate_hz = (unsigned int)k->env->rec.frequency_hz,
			.body = p->data,
			.len = p->len,
		};
		int err;

		w.labels[w.nlabels++] = (struct push_label){ "script", p->script };
		w.labels[w.nlabels++] = (struct push_label){ "version", p->version };
		w.labels[w.nlabels++] = (struct push_label){ "isolate",
							     p->isolate ? p->isolate : "none" };
		if (p->pid) {
			snprintf(k->pid_buf, sizeof(k->pid_buf), "%d", p->pid);
			w.labels[w.nlabels++] = (struct push_label){ "pid", k->pid_buf };
		}
		w.labels[w.nlabels++] = (struct push_label){ "host", k->host };
		err = push__submit(k->pusher, &w);
		if (err)
			ret = err;
	}
	return ret;
}

static void metric(FILE *f, const char *name, const char *type, const char *help, double value)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %.17g\n", name, help, name, type, name, value);
}

static double self_cpu_seconds(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static double self_rss_bytes(void)
{
	unsigned long size, resident;
	FILE *f = fopen("/proc/self/statm", "re");
	int n;

	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	return n == 2 ? (double)resident * (double)sysconf(_SC_PAGESIZE) : 0;
}

/* The metrics file, rewritten whole (atomically) after each window. */
static void write_metrics(const struct continuous *k)
{
	const struct continuous_totals *t = &k->totals;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err;

	if (!f)
		return;
	metric(f, "isoprof_windows_total", "counter", "Windows cut.", (double)t->windows);
	metric(f, "isoprof_profiles_total", "counter", "Profiles made (one per isolate per window).",
	       (double)t->profiles);
	metric(f, "isoprof_samples_total", "counter", "Samples kept.", (double)t->samples);
	metric(f, "isoprof_samples_lost_total", "counter",
	       "Samples lost in the ring buffer (full).", (double)t->lost);
	metric(f, "isoprof_targets", "gauge", "Processes sampled now.", (double)t->targets);
	metric(f, "isoprof_targets_started_total", "counter",
	       "Runtimes picked up after the start.", (double)t->new_targets);
	metric(f, "isoprof_targets_exited_total", "counter", "Targets that exited.",
	       (double)t->exited_targets);
	metric(f, "isoprof_window_process_seconds", "gauge",
	       "Time from the last window's end to its profiles made.", t->last_process_ms / 1e3);
	metric(f, "isoprof_window_process_seconds_max", "gauge",
	       "The longest such time so far.", t->max_process_ms / 1e3);
	if (k->out_dirfd) {
		metric(f, "isoprof_files_written_total", "counter", "Window files written (--out-dir).",
		       (double)t->files_written);
		metric(f, "isoprof_files_failed_total", "counter",
		       "Window files that could not be written.", (double)t->files_failed);
		metric(f, "isoprof_files_pruned_total", "counter",
		       "Window files deleted by the retention bound.", (double)t->files_pruned);
	}
	if (k->pusher) {
		struct push_stats s;

		push__stats(k->pusher, &s);
		metric(f, "isoprof_push_submitted_total", "counter", "Profiles handed to the pusher.",
		       (double)s.submitted);
		metric(f, "isoprof_push_pushed_total", "counter", "Profiles the store accepted.",
		       (double)s.pushed);
		metric(f, "isoprof_push_spooled_total", "counter",
		       "Profiles kept in the spool because the store could not take them then.",
		       (double)s.spooled);
		metric(f, "isoprof_push_dropped_total", "counter",
		       "Profiles dropped, oldest first, because the spool was full.",
		       (double)s.dropped_full);
		metric(f, "isoprof_push_rejected_total", "counter",
		       "Profiles the store refused (4xx): not retried.", (double)s.rejected);
		metric(f, "isoprof_push_retries_total", "counter", "Requests retried.",
		       (double)s.retries);
		metric(f, "isoprof_push_queued", "gauge", "Profiles waiting to be pushed.",
		       (double)s.queued);
		metric(f, "isoprof_push_queued_bytes", "gauge", "Bytes waiting to be pushed.",
		       (double)s.queued_bytes);
		metric(f, "isoprof_push_latency_seconds_last", "gauge",
		       "How long the last accepted push took.", s.last_latency_ms / 1e3);
		metric(f, "isoprof_push_latency_seconds_max", "gauge",
		       "The longest accepted push so far.", s.max_latency_ms / 1e3);
	}
	metric(f, "isoprof_cpu_seconds_total", "counter", "isoprof's own CPU time (user + system).",
	       self_cpu_seconds());
	metric(f, "isoprof_resident_memory_bytes", "gauge", "isoprof's own resident set size.",
	       self_rss_bytes());
	if (fclose(f)) {
		free(text);
		return;
	}
	err = fileio__write_atomic(k->env->metrics, text, len, 0644);
	if (err && t->windows == 1)
		fprintf(stderr, "isoprof: %s: cannot write the metrics: %s\n", k->env->metrics,
			strerror(-err));
	free(text);
}

/* --out-dir: opened once, before privileges are dropped further. */
static int open_out_dir(struct continuous *k)
{
	struct fileio_policy none = { 0 };
	char why[160] = "";
	int fd, err;

	err = fileio__open_out_dir(k->env->out_dir, true, &none, &fd, &k->out_owner, why,
				   sizeof(why));
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", k->env->out_dir, why[0] ? why : strerror(-err));
		return err;
	}
	k->out_dirfd = fd + 1;
	return 0;
}

static void after_window(struct continuous *k, struct capture *c)
{
	struct continuous_totals *t = &k->totals;
	struct capture_window_stats w;

	capture__window_stats(c, &w);
	t->windows++;
	t->profiles += w.profiles;
	t->samples += w.samples;
	t->lost += w.lost;
	t->sink_errors += w.sink_errors;
	t->new_targets += (uint64_t)w.new_targets;
	t->exited_targets += (uint64_t)w.exited_targets;
	t->targets = w.targets;
	t->last_process_ms = w.process_ms;
	if (w.process_ms > t->max_process_ms)
		t->max_process_ms = w.process_ms;
	if (k->out_dirfd) {
		long n = window_files__prune(k->out_dirfd - 1, (uint64_t)time(NULL),
					     (uint64_t)k->env->retention_min * 60,
					     (uint64_t)k->env->out_dir_max_mb << 20);

		if (n > 0)
			t->files_pruned += (uint64_t)n;
	}
	if (k->env->verbose)
		fprintf(stderr, "isoprof: window %llu: %.1f s, %llu samples, %zu profiles, %d "
			"targets, made in %.0f ms\n", (unsigned long long)t->windows,
			(w.until_ns - w.from_ns) / 1e9, (unsigned long long)w.samples, w.profiles,
			w.targets, w.process_ms);
	if (k->env->metrics)
		write_metrics(k);
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
	struct continuous k = { .env = &env };
	struct capture_sink sink = { .profile = on_profile, .ctx = &k };
	char host[256], err_buf[256] = "";
	struct capture *c;
	int status;

	capture__catch_signals();
	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return RECORD_EXIT_USAGE;
	if (!env.rec.state_dir)
		env.rec.state_dir = v8layout__state_dir();
	if (getenv("ISOPROF_NO_CALIBRATE"))
		env.rec.no_calibrate = true;
	env.rec.window_ms = env.window_s * 1000;
	env.rec.command_line = isoprof_command_line;
	env.rec.sink = &sink;
	env.push.spool_max_bytes = (uint64_t)env.spool_max_mb << 20;
	if (!env.host) {
		if (gethostname(host, sizeof(host)))
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		env.host = host;
	}
	k.host = env.host;
	if (env.out_dir && open_out_dir(&k))
		return RECORD_EXIT_USAGE;
	if (env.push.url) {
		k.pusher = push__new(&env.push, err_buf, sizeof(err_buf));
		if (!k.pusher) {
			fprintf(stderr, "isoprof: push: %s\n", err_buf[0] ? err_buf : strerror(errno));
			if (k.out_dirfd)
				close(k.out_dirfd - 1);
			return RECORD_EXIT_USAGE;
		}
	}
	c = capture__new(&env.rec);
	if (!c) {
		fprintf(stderr, "isoprof: out of memory\n");
		return RECORD_EXIT_FAILED;
	}
	if (!capture__open(c) && !capture__arm(c)) {
		if (!env.rec.quiet)
			fprintf(stderr, "isoprof: continuous: %ld Hz, %ld s windows%s%s%s%s\n",
				env.rec.frequency_hz, env.window_s, env.push.url ? ", pushing to " : "",
				env.push.url ? env.push.url : "", env.out_dir ? ", keeping in " : "",
				env.out_dir ? env.out_dir : "");
		bool last = false;

		for (;;) {
			if (capture__run_window(c))
				break;
			/*
			 * A signal that comes while this window is written ends
			 * the next one at once: what was sampled meanwhile is
			 * made into a last, short window, not lost.
			 */
			if (capture__stop_requested())
				last = true;
			/* a window with no sample is no error: the next may have some */
			capture__write(c);
			after_window(&k, c);
			if (last || (env.max_windows && (long)k.totals.windows >= env.max_windows))
				break;
			if (capture__next_window(c))
				break;
		}
	}
	status = capture__close(c);
	/* a signal ends the run as it was asked to: not a failure */
	if (k.totals.windows)
		status = RECORD_EXIT_OK;
	/* what is not sent by then stays in the spool (the pusher says how many) */
	push__close(k.pusher, FLUSH_TIMEOUT_MS);
	if (k.out_dirfd)
		close(k.out_dirfd - 1);
	return status;
}
