/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * continuous: windows in a loop, each profile to its directory and store,
 * the metrics after each window (continuous.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "user/record/continuous.h"
#include "user/record_exit.h"
#include "user/report/window_files.h"

/* At exit: how long what is queued may take to reach the store. */
#define FLUSH_TIMEOUT_MS 5000

/* What the loop counts over the run, for the metrics. */
struct continuous_totals {
	uint64_t windows, profiles, samples, lost, sink_errors, files_written, files_failed;
	uint64_t files_pruned, new_targets, exited_targets;
	double last_process_ms, max_process_ms;
	int targets;
};

struct continuous {
	const struct continuous_opts *o;
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
			if (k->totals.files_failed == 1 || k->o->verbose)
				fprintf(stderr, "isoprof: %s: cannot write a window's profile: %s\n",
					k->o->out_dir, strerror(-err));
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
			.sample_rate_hz = (unsigned int)k->o->rec->frequency_hz,
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
	err = fileio__write_atomic(k->o->metrics, text, len, 0644);
	if (err && t->windows == 1)
		fprintf(stderr, "isoprof: %s: cannot write the metrics: %s\n", k->o->metrics,
			strerror(-err));
	free(text);
}

/* --out-dir: opened once, before privileges are dropped further. */
static int open_out_dir(struct continuous *k)
{
	struct fileio_policy none = { 0 };
	char why[160] = "";
	int fd, err;

	err = fileio__open_out_dir(k->o->out_dir, true, &none, &fd, &k->out_owner, why,
				   sizeof(why));
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", k->o->out_dir, why[0] ? why : strerror(-err));
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
					     (uint64_t)k->o->retention_min * 60,
					     (uint64_t)k->o->out_dir_max_mb << 20);

		if (n > 0)
			t->files_pruned += (uint64_t)n;
	}
	if (k->o->verbose)
		fprintf(stderr, "isoprof: window %llu: %.1f s, %llu samples, %zu profiles, %d "
			"targets, made in %.0f ms\n", (unsigned long long)t->windows,
			(w.until_ns - w.from_ns) / 1e9, (unsigned long long)w.samples, w.profiles,
			w.targets, w.process_ms);
	if (k->o->metrics)
		write_metrics(k);
}

int continuous__run(const struct continuous_opts *o)
{
	struct continuous k = { .o = o, .host = o->host };
	struct capture_sink sink = { .profile = on_profile, .ctx = &k };
	char err_buf[256] = "";
	struct capture *c;
	int status;

	o->rec->sink = &sink;
	if (o->out_dir && open_out_dir(&k))
		return RECORD_EXIT_USAGE;
	if (o->push && o->push->url) {
		k.pusher = push__new(o->push, err_buf, sizeof(err_buf));
		if (!k.pusher) {
			fprintf(stderr, "isoprof: push: %s\n", err_buf[0] ? err_buf : strerror(errno));
			if (k.out_dirfd)
				close(k.out_dirfd - 1);
			return RECORD_EXIT_USAGE;
		}
	}
	c = capture__new(o->rec);
	if (!c) {
		fprintf(stderr, "isoprof: out of memory\n");
		return RECORD_EXIT_FAILED;
	}
	if (!capture__open(c) && !capture__arm(c)) {
		bool last = false;

		if (!o->rec->quiet)
			fprintf(stderr, "isoprof: continuous: %ld Hz, %ld s windows%s%s%s%s\n",
				o->rec->frequency_hz, o->rec->window_ms / 1000,
				k.pusher ? ", pushing to " : "", k.pusher ? o->push->url : "",
				o->out_dir ? ", keeping in " : "", o->out_dir ? o->out_dir : "");
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
			if (last || (o->max_windows && (long)k.totals.windows >= o->max_windows))
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
