// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record's V8 side: V8's own CPU profiler (--v8) or sampling heap profiler
 * (--type heap) over the capture's window, through the runtimes'
 * inspectors; the profiles mapped to isoprof's isolates (v8match.h), saved
 * beside isoprof's, and cross-checked (crosscheck.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "lib/json.h"
#include "lib/monotime.h"
#include "lib/procfs.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "proto/profile_vocab.h"
#include "proto/v8profile.h"
#include "user/record/record.h"
#include "user/v8/crosscheck.h"
#include "user/v8/v8match.h"

/* One V8 profile on its way to disk: converted, and what mapping needs. */
struct v8_result {
	struct v8_target *target;
	struct pprof_builder *builder;
	struct pprof_profile *profile;	/* builder's output, parsed back */
	struct v8match_side side;
	const char **names;		/* storage of side.scripts, then side.functions */
	int64_t samples;
	enum v8match_result why;	/* not mapped: why */
};

static const char *type_word(const struct capture *c)
{
	return c->env->type == RECORD_HEAP ? "heap" : "CPU";
}

/* The outcome of V8 target t (record.h); NULL before record_v8__finish(). */
static struct v8_outcome *outcome_of(const struct capture *c, const struct v8_target *t)
{
	return c->v8_outcomes ? &c->v8_outcomes[t - c->v8->targets] : NULL;
}

/* Why target t's cross-check is skipped: the first reason given wins.  No-op on ENOMEM. */
static __attribute__((format(printf, 3, 4))) void skip_crosscheck(const struct capture *c,
								  const struct v8_target *t,
								  const char *fmt, ...)
{
	struct v8_outcome *o = outcome_of(c, t);
	va_list ap;

	if (!o || o->skipped || c->env->type != RECORD_CPU)
		return;
	va_start(ap, fmt);
	if (vasprintf(&o->skipped, fmt, ap) < 0)
		o->skipped = NULL;
	va_end(ap);
}

/* The flag that gives a runtime an inspector, for the error that asks for it. */
static const char *inspector_hint(const struct discover_proc *p)
{
	if (p->runtime == DISCOVER_WORKERD)
		return "start workerd with --inspector-addr=127.0.0.1:9229";
	if (p->runtime == DISCOVER_NODE)
		return "start node with --inspect=127.0.0.1:9229 (or send it SIGUSR1)";
	return "start it with its inspector enabled";
}

/*
 * node 20's V8 (11.3) samples for its CPU profiler in a signal handler
 * that, under --interpreted-frames-native-stack, looks code up under a
 * mutex the thread itself may hold while it allocates code: then the
 * thread waits on itself for good (docs/v8-profiler.md).  Said before the
 * window, since --v8 is what starts that profiler.
 */
static void note_deadlock_risk(const struct target_state *t)
{
	char path[64], cmdline[8192];
	ssize_t n;

	if (t->v8->runtime != DISCOVER_NODE || !t->v8->version || t->v8->version[0] != 'v' ||
	    atoi(t->v8->version + 1) > 20)
		return;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", t->pid);
	n = procfs__read(path, cmdline, sizeof(cmdline));
	/* NUL-separated arguments; node's own flags come before the script's */
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(cmdline + i) + 1)
		if (!strcmp(cmdline + i, "--interpreted-frames-native-stack")) {
			fprintf(stderr,
				"isoprof: note: pid %d: node %s with --interpreted-frames-native-stack: "
				"V8's CPU profiler can deadlock its main thread for good while code is "
				"being compiled (docs/v8-profiler.md); isoprof's capture is not "
				"affected, the process is\n",
				t->pid, record__esc(t->v8->version));
			return;
		}
}

int record_v8__prepare(struct capture *c)
{
	const struct record_env *env = c->env;
	uint32_t interval_us = (uint32_t)(1000000 / env->frequency_hz);
	size_t ready = 0, missing = 0;

	c->v8 = v8_capture__new(env->type == RECORD_HEAP ? V8_CAPTURE_HEAP : V8_CAPTURE_CPU,
				interval_us ? interval_us : 1);
	if (!c->v8) {
		fprintf(stderr, "isoprof: out of memory\n");
		return -ENOMEM;
	}
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];
		const char *addr = env->inspector;
		char why[320] = "";
		size_t first = c->v8->ntargets;
		int n;

		if (!t->v8)
			continue;
		if (!addr)
			addr = t->v8->inspector;
		if (!addr) {
			missing++;
			if (t->v8->inspector_flag)
				fprintf(stderr,
					"isoprof: pid %d (%s): no V8 %s profile: its command line asks "
					"for an inspector at %s but nothing listens there\n",
					t->pid, record__esc(t->comm), type_word(c),
					record__esc(t->v8->inspector_flag));
			else
				fprintf(stderr, "isoprof: pid %d (%s): no V8 %s profile: no inspector; "
						"%s\n",
					t->pid, record__esc(t->comm), type_word(c), inspector_hint(t->v8));
			continue;
		}
		n = v8_capture__add_process(c->v8, t->pid, addr, env->script, why, sizeof(why));
		if (n < 0) {
			fprintf(stderr, "isoprof: pid %d (%s): no V8 %s profile: %s\n", t->pid,
				record__esc(t->comm), type_word(c), record__esc(why[0] ? why : strerror(-n)));
			continue;
		}
		if (!n)
			fprintf(stderr, "isoprof: pid %d (%s): its inspector at %s lists no target\n",
				t->pid, record__esc(t->comm), addr);
		else if (env->type == RECORD_CPU)
			note_deadlock_risk(t);
		for (size_t k = first; k < c->v8->ntargets; k++) {
			const struct v8_target *vt = &c->v8->targets[k];

			if (vt->err)
				fprintf(stderr, "isoprof: pid %d: inspector target '%s': %s\n", vt->pid,
					record__esc(vt->id), record__esc(vt->errmsg));
			else
				ready++;
		}
	}
	c->v8_missing_inspector = missing;
	if (ready)
		return 0;
	if (env->type == RECORD_HEAP) {
		fprintf(stderr, "isoprof: no inspector target could take a heap profile; "
				"nothing to record\n");
		record__set_exit(c, missing ? RECORD_EXIT_NO_INSPECTOR : RECORD_EXIT_FAILED);
		return -ENOENT;
	}
	fprintf(stderr, "isoprof: V8's profiler will not run; isoprof's own capture goes on\n");
	return 0;
}

void record_v8__start(struct capture *c)
{
	if (c->v8)
		v8_capture__start(c->v8);
}

/*
 * What one thread of a target was doing, from /proc: the time it has been
 * on a CPU and waiting for one (schedstat), and where it sleeps (wchan).
 */
struct thread_look {
	pid_t tid;
	bool read;		/* schedstat could be read */
	uint64_t oncpu_ns;
	uint64_t runnable_ns;	/* on a CPU or on a run queue: what a busy thread spends */
	char wchan[64];
};

/* Per V8 target: its runtime thread, seen when the stop was asked for; its isolate. */
struct v8_stall {
	struct thread_look before;
	uint64_t isolate;	/* the last isolate isoprof saw that thread in; 0: none */
};

static void look_at_thread(pid_t pid, pid_t tid, struct thread_look *look)
{
	char path[64], buf[512];
	unsigned long long ns, queued_ns;

	memset(look, 0, sizeof(*look));
	look->tid = tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	if (procfs__read(path, buf, sizeof(buf)) > 0 &&
	    sscanf(buf, "%llu %llu", &ns, &queued_ns) == 2) {
		look->read = true;
		look->oncpu_ns = ns;
		look->runnable_ns = ns + queued_ns;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", pid, tid);
	/*
	 * "0" while it runs, and a blocked thread runs too: V8's profiler
	 * signals it every sampling interval.  A few looks, 2 ms apart, find
	 * where it sleeps.  "0" always without ptrace access to the target.
	 */
	for (int i = 0; i < 5; i++) {
		if (procfs__read(path, look->wchan, sizeof(look->wchan)) <= 0)
			look->wchan[0] = '\0';
		if (look->wchan[0] && strcmp(look->wchan, "0"))
			return;
		look->wchan[0] = '\0';
		nanosleep(&(struct timespec){ .tv_nsec = 2000000 }, NULL);
	}
}

/*
 * The thread that serves a target's inspector messages: node's main thread
 * is the process's first; workerd's isolates run on the thread with the
 * most samples inside an isolate.
 */
static pid_t runtime_thread(const struct capture *c, const struct v8_target *vt)
{
	const struct stored_sample *s = sample_store__samples(c->store);
	size_t n = sample_store__count(c->store), ntids = 0, best = 0;
	const struct target_state *t = NULL;
	struct {
		uint32_t tid;
		size_t n;
	} tids[64];

	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].pid == vt->pid)
			t = &c->targets[i];
	if (!t || !t->v8 || t->v8->runtime == DISCOVER_NODE)
		return vt->pid;
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;

		if (s[i].pid != (uint32_t)vt->pid || !s[i].isolate)
			continue;
		while (k < ntids && tids[k].tid != s[i].tid)
			k++;
		if (k == ntids) {
			/* more threads than that run isolates: take the busiest of the first */
			if (ntids == sizeof(tids) / sizeof(tids[0]))
				continue;
			tids[ntids++] = (typeof(tids[0])){ .tid = s[i].tid };
		}
		tids[k].n++;
	}
	for (size_t k = 1; k < ntids; k++)
		if (tids[k].n > tids[best].n)
			best = k;
	return ntids ? (pid_t)tids[best].tid : vt->pid;
}

void record_v8__request_stop(struct capture *c)
{
	if (!c->v8)
		return;
	free(c->v8_stalls);
	c->v8_stalls = calloc(c->v8->ntargets + 1, sizeof(*c->v8_stalls));
	v8_capture__request_stop(c->v8);
	for (size_t i = 0; c->v8_stalls && i < c->v8->ntargets; i++) {
		const struct v8_target *t = &c->v8->targets[i];

		if (t->stop_id)
			look_at_thread(t->pid, runtime_thread(c, t), &c->v8_stalls[i].before);
	}
}

/*
 * isoprof's samples of thread tid: how many in the window's last second,
 * the time of the last one, and the isolate of the last one in an isolate.
 */
static void last_second(const struct capture *c, pid_t pid, pid_t tid, size_t *n,
			uint64_t *last_ns, uint64_t *isolate)
{
	const struct stored_sample *s = sample_store__samples(c->store);
	size_t count = sample_store__count(c->store);
	uint64_t from = c->window_end_ns > 1000000000ull ? c->window_end_ns - 1000000000ull : 0;
	uint64_t isolate_ns = 0;

	*n = 0;
	*last_ns = 0;
	*isolate = 0;
	for (size_t i = 0; i < count; i++) {
		if (s[i].pid != (uint32_t)pid || s[i].tid != (uint32_t)tid ||
		    s[i].time_ns > c->window_end_ns)
			continue;
		if (s[i].time_ns > *last_ns)
			*last_ns = s[i].time_ns;
		if (s[i].isolate && s[i].time_ns >= isolate_ns) {
			isolate_ns = s[i].time_ns;
			*isolate = s[i].isolate;
		}
		*n += s[i].time_ns >= from;
	}
}

/*
 * Why a target did not answer its stop in time, as far as its runtime
 * thread shows it: blocked (asleep in the kernel, no CPU time while
 * isoprof waited) or busy (on a CPU all along, never back in the loop
 * that serves the inspector).
 */
static void explain_late(const struct capture *c, struct v8_target *t, struct v8_stall *st)
{
	const struct thread_look *b = &st->before;
	struct thread_look a;
	double wait_s = (t->reply_ns - t->stop_ns) / 1e9, window_s, share, wait_share;
	uint64_t last_ns, isolate;
	const struct target_state *ts = NULL;
	size_t n;
	char where[96] = "";
	int len;

	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].pid == t->pid)
			ts = &c->targets[i];
	if (!b->tid)
		return;
	if (!procfs__alive(t->pid)) {
		snprintf(t->late_why, sizeof(t->late_why), "the process exited");
		return;
	}
	look_at_thread(t->pid, b->tid, &a);
	last_second(c, t->pid, b->tid, &n, &last_ns, &isolate);
	st->isolate = isolate;
	window_s = (c->window_end_ns - c->window_start_ns) / 1e9;
	share = 100.0 * (double)n / (double)c->env->frequency_hz / (window_s < 1 ? window_s : 1);
	if (share > 100)
		share = 100;
	/* on a run queue counts as busy: on a crowded host a busy thread waits for a CPU */
	wait_share = b->read && a.read && wait_s > 0
			     ? 100.0 * (double)(a.runnable_ns - b->runnable_ns) / 1e9 / wait_s
			     : -1;
	if (a.wchan[0])
		snprintf(where, sizeof(where), " and sleeps in the kernel's %s()", a.wchan);
	len = snprintf(t->late_why, sizeof(t->late_why), "its %s thread (tid %d) ",
		       b->tid == t->pid ? "main" : "isolate", b->tid);
	if (len < 0 || (size_t)len >= sizeof(t->late_why))
		return;
	/* not the state letter: V8's profiler wakes even a blocked thread to sample it */
	if (wait_share >= 0 && wait_share < 10) {
		len += snprintf(t->late_why + len, sizeof(t->late_why) - (size_t)len,
				"is blocked: it ran %.0f ms of the %.1f s wait%s; isoprof saw it on a "
				"CPU %.0f%% of the window's last second",
				(a.oncpu_ns - b->oncpu_ns) / 1e6, wait_s, where, share);
		if (last_ns && c->window_end_ns - last_ns > 200000000ull &&
		    (size_t)len < sizeof(t->late_why))
			len += snprintf(t->late_why + len, sizeof(t->late_why) - (size_t)len,
					", last %.1f s before its end",
					(c->window_end_ns - last_ns) / 1e9);
		if (ts && ts->v8 && ts->v8->runtime == DISCOVER_NODE && strstr(a.wchan, "futex") &&
		    (size_t)len < sizeof(t->late_why))
			snprintf(t->late_why + len, sizeof(t->late_why) - (size_t)len,
				 "; it waits on a lock: node 20's V8 can deadlock that thread in its "
				 "own profiler's signal handler under --interpreted-frames-native-stack "
				 "(docs/v8-profiler.md)");
	} else if (wait_share >= 80 || (wait_share < 0 && share >= 80)) {
		snprintf(t->late_why + len, sizeof(t->late_why) - (size_t)len,
			 "is busy and never yielded to the inspector: running or runnable %.0f%% "
			 "of the %.1f s wait (on a CPU %.0f ms), and on a CPU %.0f%% of the window's "
			 "last second%s",
			 wait_share >= 0 ? wait_share : share, wait_s,
			 (a.oncpu_ns - b->oncpu_ns) / 1e6, share,
			 isolate ? ", inside its isolate" : "");
	} else {
		snprintf(t->late_why + len, sizeof(t->late_why) - (size_t)len,
			 "was running or runnable %.0f%% of the %.1f s wait%s: V8 may still be "
			 "building its profile",
			 wait_share >= 0 ? wait_share : 0, wait_s, where);
	}
}

void record_v8__collect(struct capture *c)
{
	int timeout_ms;

	if (!c->v8)
		return;
	timeout_ms = v8_capture__stop_timeout_ms(c->env->duration_ms);
	v8_capture__collect(c->v8, timeout_ms);
	for (size_t i = 0; c->v8_stalls && i < c->v8->ntargets; i++) {
		struct v8_target *t = &c->v8->targets[i];

		if (t->late)
			explain_late(c, t, &c->v8_stalls[i]);
	}
}

/* Scripts (user scripts only, as isoprof defines them) and JS function names of a profile. */
static int collect_side(const struct pprof_profile *p, const struct isolate_info *info, pid_t pid,
			struct v8match_side *side, const char ***storage)
{
	size_t nframes = p ? pprof_profile__frame_count(p) : 0;
	size_t nscripts = info ? info->nr_scripts : 0, cap = 2 * nframes + nscripts + 1, n = 0;
	const char **names = calloc(cap, sizeof(*names));
	size_t nfunctions = 0;

	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < nscripts; i++)
		names[n++] = info->scripts[i];
	for (size_t i = 0; i < nframes; i++) {
		const struct pprof_frame *f = pprof_profile__frame(p, i);

		if (f->filename[0] && isolate__is_user_script(f->filename))
			names[n++] = f->filename;
	}
	side->scripts = names;
	side->nscripts = n;
	for (size_t i = 0; i < nframes; i++) {
		const struct pprof_frame *f = pprof_profile__frame(p, i);

		if (f->filename[0] && f->name[0])
			names[n + nfunctions++] = f->name;
	}
	side->functions = names + n;
	side->nfunctions = nfunctions;
	side->pid = pid;
	*storage = names;
	return 0;
}

/* An integer member of V8's profile; 0 when absent or not an integer. */
static int64_t json_int(struct json_object *o, const char *key)
{
	int64_t v;

	return json__int64(json__member(o, key), &v) ? v : 0;
}

/* Convert one target's profile to pprof (and parse it back for the mapping). */
static int convert(struct capture *c, struct v8_result *r, const struct isolate_group *g)
{
	struct v8_target *t = r->target;
	struct v8_cpu_profile *cpu = NULL;
	struct v8_pprof_opts opts = { 0 };
	struct source_maps_v8 smv;
	struct pprof_label labels[4];
	char *comments[4] = { 0 };
	char why[256] = "";
	size_t nlabels = 0;
	uint8_t *bytes = NULL;
	size_t len;
	int64_t wall_ns = (int64_t)c->wall_start.tv_sec * 1000000000ll + c->wall_start.tv_nsec;
	int err;

	/* V8's TimeTicks are CLOCK_MONOTONIC microseconds on Linux */
	if (c->env->type == RECORD_CPU && json_int(t->profile, "startTime") > 0)
		opts.time_nanos = wall_ns + json_int(t->profile, "startTime") * 1000 -
				  (int64_t)c->window_start_ns;
	else
		opts.time_nanos = wall_ns + (int64_t)(t->start_ns - c->window_start_ns);
	opts.interval_ns = c->env->type == RECORD_CPU ? (uint64_t)c->v8->interval_us * 1000 : 0;
	labels[nlabels++] = (struct pprof_label){ .key = LABEL_PID, .num = t->pid };
	if (g) {
		labels[nlabels++] = (struct pprof_label){ .key = LABEL_ISOLATE, .str = g->isolate_str };
		labels[nlabels++] =
			(struct pprof_label){ .key = LABEL_SCRIPT, .str = isolate_group__script(g) };
		labels[nlabels++] =
			(struct pprof_label){ .key = LABEL_VERSION, .str = isolate_group__version(g) };
	}
	opts.labels = labels;
	opts.nlabels = nlabels;
	/*
	 * Like with like: V8's frames through the same source maps as
	 * isoprof's, once the isolate is known (the first conversion's
	 * generated names are what matches V8's targets to isolates).
	 */
	if (c->maps && g) {
		smv = (struct source_maps_v8){ c->maps, t->pid, g ? g->isolate : 0 };
		opts.map_frame = source_maps__v8_frame;
		opts.map_ctx = &smv;
	}
	comments[0] = record__asprintf("command: %s", c->env->command_line);
	comments[1] = record__asprintf("inspector: %s target '%s' (pid %d)", t->hostport, t->id,
				       t->pid);
	comments[2] = record__asprintf("window: V8's own (startTime to endTime); isoprof's is %.3f s",
				       (c->window_end_ns - c->window_start_ns) / 1e9);
	if (!comments[0] || !comments[1] || !comments[2]) {
		err = -ENOMEM;
		goto out;
	}
	opts.comments = (const char *const *)comments;
	opts.ncomments = 3;

	if (c->env->type == RECORD_HEAP) {
		err = v8_heap_profile__to_pprof_json(t->profile, &opts, c->v8->heap_interval,
						     &r->builder, why, sizeof(why));
	} else {
		err = v8_cpu_profile__from_json(t->profile, &cpu, why, sizeof(why));
		if (!err) {
			r->samples = (int64_t)cpu->nsamples;
			err = v8_cpu_profile__to_pprof(cpu, &opts, &r->builder);
		}
	}
	if (err) {
		fprintf(stderr, "isoprof: pid %d: V8 profile of target '%s': %s\n", t->pid,
			record__esc(t->id), record__esc(why[0] ? why : strerror(-err)));
		skip_crosscheck(c, t, "V8's profile: %s", why[0] ? why : strerror(-err));
		goto out;
	}
	err = pprof_builder__serialize(r->builder, false, &bytes, &len);
	if (!err)
		err = pprof_profile__parse(bytes, len, &r->profile, why, sizeof(why));
	if (err) {
		fprintf(stderr, "isoprof: pid %d: V8 profile of target '%s' as pprof: %s\n", t->pid,
			record__esc(t->id), record__esc(why[0] ? why : strerror(-err)));
		skip_crosscheck(c, t, "V8's profile as pprof: %s", why[0] ? why : strerror(-err));
	}
out:
	free(bytes);
	v8_cpu_profile__free(cpu);
	for (size_t i = 0; i < 4; i++)
		free(comments[i]);
	return err;
}

static void release_result(struct v8_result *r)
{
	pprof_builder__free(r->builder);
	pprof_profile__free(r->profile);
	free(r->names);
	memset(r, 0, sizeof(*r));
}

static const char *why_unmapped(enum v8match_result m)
{
	switch (m) {
	case V8MATCH_AMBIGUOUS:
		return "two isolates run the same scripts";
	case V8MATCH_TAKEN:
		return "its isolate fits another target better";
	default:
		return "no isolate isoprof sampled runs its scripts";
	}
}

/*
 * Where the cross-check's text goes: stdout, unless --json keeps stdout for
 * the one JSON document.
 */
static FILE *crosscheck_stream(const struct capture *c)
{
	return c->env->json ? stderr : stdout;
}

/* The key numbers of a cross-check written to json_path, with the files it compared. */
static int keep_crosscheck(const struct capture *c, struct v8_outcome *o,
			   const struct crosscheck_report *report, ssize_t group,
			   const char *json_path)
{
	char *const *paths = c->env->type == RECORD_HEAP ? c->group_heap_paths : c->group_paths;
	const char *mine = paths ? paths[group] : NULL;
	struct json_object *k = crosscheck__key_json(report);
	int err = 0;

	if (!k)
		return -ENOMEM;
	err |= json__put(k, "file", json__text(json_path));
	err |= mine ? json__put(k, "isoprof_file", json__text(mine))
		    : (json_object_object_add(k, "isoprof_file", NULL) ? -ENOMEM : 0);
	err |= json__put(k, "v8_file", json__text(o->path));
	if (err) {
		json_object_put(k);
		return -ENOMEM;
	}
	o->check_path = strdup(json_path);
	o->crosscheck = k;
	return o->check_path ? 0 : -ENOMEM;
}

static int crosscheck_one(const struct capture *c, const struct v8_target *t, ssize_t group,
			  const struct pprof_profile *theirs, const char *json_path)
{
	const struct isolate_group *g = &c->attr.groups[group];
	bool heap = c->env->type == RECORD_HEAP;
	struct crosscheck_opts opts = {
		.top = 10,
		.isolate = g->isolate_str,
		/* heap: JS shares of the bytes allocated, in sampling intervals */
		.value_type = heap ? SAMPLE_TYPE_ALLOC_SPACE : NULL,
	};
	const struct pprof_profile *mine = heap ? c->group_heap_profiles[group]
						: c->group_profiles[group];
	struct crosscheck_report *report = NULL;
	struct v8_outcome *o = outcome_of(c, t);
	FILE *out = crosscheck_stream(c);
	struct atomic_file af;
	char why[256] = "";
	int err;

	err = crosscheck__compute(mine, theirs, &opts, &report, why, sizeof(why));
	if (err) {
		fprintf(stderr, "isoprof: cross-check of isolate %s (%s): %s\n", g->isolate_str,
			record__esc(isolate_group__script(g)), record__esc(why[0] ? why : strerror(-err)));
		skip_crosscheck(c, t, "%s", why[0] ? why : strerror(-err));
		return err;
	}
	fprintf(out, "== cross-check: isolate %s, %s version %s (pid %u)\n", g->isolate_str,
		record__esc(isolate_group__script(g)), record__esc(isolate_group__version(g)),
		g->pid);
	crosscheck__print_text(report, out);
	fflush(out);
	err = record__open_file(c, json_path, &af);
	if (!err) {
		crosscheck__print_json(report, af.f);
		err = atomic_file__commit(&af);
	}
	if (err) {
		fprintf(stderr, "isoprof: cannot write %s: %s\n", json_path, strerror(-err));
		skip_crosscheck(c, t, "cannot write %s: %s", json_path, strerror(-err));
	} else if (o) {
		err = keep_crosscheck(c, o, report, group, json_path);
	}
	crosscheck__free(report);
	return err;
}

/*
 * Write one mapped or unmapped V8 profile; with a group, cross-check it too
 * (--type cpu), or sum it up (--type heap).
 *
 * Names: a glob on isoprof's own profiles (*-cpu.pb.gz, *-heap.pb.gz)
 * never matches V8's, whose files all carry "v8": <stem>-cpu.v8.pb.gz,
 * <stem>-heap.v8.pb.gz, <stem>-v8.cpuprofile, <stem>-v8.heapprofile.
 * Heap without allocation probes: V8's is the only one, <stem>-heap.pb.gz.
 */
/* Did isoprof write its own heap profile of group? */
static bool own_heap_written(const struct capture *c, ssize_t group)
{
	return group >= 0 && c->group_heap_paths && c->group_heap_paths[group];
}

/* FILE.pb.gz (or .pb) as FILE<ext>: a file that goes with -o FILE. */
static int sibling_path(const char *file, const char *ext, char *out, size_t len)
{
	static const char *const exts[] = { ".pb.gz", ".pb", ".gz" };
	size_t n = strlen(file);
	int k;

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++) {
		size_t m = strlen(exts[i]);

		if (n > m && !strcmp(file + n - m, exts[i])) {
			n -= m;
			break;
		}
	}
	k = snprintf(out, len, "%.*s%s", (int)n, file, ext);
	return k < 0 || (size_t)k >= len ? -ENAMETOOLONG : 0;
}

static int write_result(struct capture *c, struct v8_result *r, const struct isolate_group *g,
			ssize_t group, const char *only_output)
{
	bool heap = c->env->type == RECORD_HEAP;
	const char *gz = c->env->raw ? "" : ".gz";
	char path[PATH_MAX], raw_path[PATH_MAX], check_path[PATH_MAX], suffix[64], id[96];
	struct v8_outcome *o = outcome_of(c, r->target);
	const char *json;
	size_t len;
	int err;

	if (g) {
		snprintf(suffix, sizeof(suffix), !heap ? "cpu.v8.pb%s"
					  : own_heap_written(c, group) ? "heap.v8.pb%s" : "heap.pb%s", gz);
		err = record__group_path(c, g, suffix, path, sizeof(path));
		if (!err)
			err = record__group_path(c, g, heap ? "v8.heapprofile" : "v8.cpuprofile",
						 raw_path, sizeof(raw_path));
		if (!err)
			err = record__group_path(c, g, heap ? "heap.crosscheck.json" : "crosscheck.json",
						 check_path, sizeof(check_path));
		if (err)
			return err;
	} else {
		fileio__name_part(r->target->id, id, sizeof(id));
		snprintf(path, sizeof(path), "%s/v8-%d-%s-%s.pb%s", c->env->out_dir ? c->env->out_dir : ".",
			 r->target->pid, id, heap ? "heap" : "cpu.v8", gz);
		snprintf(raw_path, sizeof(raw_path), "%s/v8-%d-%s.%s",
			 c->env->out_dir ? c->env->out_dir : ".", r->target->pid, id,
			 heap ? "heapprofile" : "cpuprofile");
	}
	if (only_output && heap && own_heap_written(c, group)) {
		/* isoprof's own heap profile is -o FILE: V8's and the cross-check beside it */
		err = sibling_path(only_output, c->env->raw ? ".v8.pb" : ".v8.pb.gz", path,
				   sizeof(path));
		if (!err)
			err = sibling_path(only_output, ".crosscheck.json", check_path,
					   sizeof(check_path));
		if (err)
			return err;
	} else if (only_output) {
		snprintf(path, sizeof(path), "%s", only_output);
	}
	if (o)
		o->group = g;
	err = record__write_profile(c, path, r->builder);
	if (err) {
		fprintf(stderr, "isoprof: cannot write %s: %s\n", path, strerror(-err));
		skip_crosscheck(c, r->target, "cannot write %s: %s", path, strerror(-err));
		return err;
	}
	if (o && !(o->path = strdup(path)))
		return -ENOMEM;
	if (!only_output) {
		/* the profile as V8 returned it */
		json = json__dump(r->target->profile, false, &len);
		err = json ? record__write_file(c, raw_path, json, len) : -ENOMEM;
		if (err) {
			fprintf(stderr, "isoprof: cannot write %s: %s\n", raw_path, strerror(-err));
			skip_crosscheck(c, r->target, "cannot write %s: %s", raw_path,
					strerror(-err));
			return err;
		}
		if (o && !(o->raw_path = strdup(raw_path)))
			return -ENOMEM;
	}
	if (heap && o) {
		/* isoprof's own profile when there is one: allocations in inlined code included */
		const struct pprof_profile *own =
			g && group >= 0 && c->group_heap_profiles ? c->group_heap_profiles[group] : NULL;

		err = heap_summary__compute(own ? own : r->profile, &o->heap);
		if (err)
			return err;
		o->has_heap = true;
		o->own_path = own ? c->group_heap_paths[group] : NULL;
	}
	if (heap)
		fprintf(stderr, "isoprof: wrote %s: V8 heap profile of '%s' (pid %d)%s%s\n", path,
			record__esc(r->target->id), r->target->pid, g ? ", isolate " : "",
			g ? g->isolate_str : "");
	else
		fprintf(stderr,
			"isoprof: wrote %s and %s: V8 CPU profile of '%s' (pid %d), %lld samples%s%s\n",
			raw_path, path, record__esc(r->target->id), r->target->pid, (long long)r->samples,
			g ? ", isolate " : "", g ? g->isolate_str : "");
	if (heap && (!g || group < 0 || !c->group_heap_profiles || !c->group_heap_profiles[group]))
		return 0;
	if (!g) {
		skip_crosscheck(c, r->target, "not mapped to an isolate: %s", why_unmapped(r->why));
		return 0;
	}
	if (group < 0 || (!heap && !c->group_profiles[group])) {
		skip_crosscheck(c, r->target, "isoprof's profile of isolate %s was not kept",
				g->isolate_str);
		return 0;
	}
	return crosscheck_one(c, r->target, group, r->profile, check_path);
}

/* What record_v8__finish() works on, from the V8 profiles to the files. */
struct finish {
	struct v8_result *res;		/* per V8 profile taken */
	size_t nres;
	struct v8match_side *iso_sides;	/* per selected isolate: what mapping needs */
	const char ***iso_names;
	size_t *iso_group;		/* ... and its attribution group */
	size_t niso;
	int *assign;			/* per result: index into iso_sides, or -1 */
	enum v8match_result *why;	/* per result: why not mapped */
	const char *only_output;	/* heap without --out-dir: the one file, -o */
	size_t written;
	int failures;
};

static int finish_alloc(struct finish *f, const struct capture *c)
{
	f->res = calloc(c->v8->ntargets + 1, sizeof(*f->res));
	f->iso_sides = calloc(c->attr.ngroups + 1, sizeof(*f->iso_sides));
	f->iso_names = calloc(c->attr.ngroups + 1, sizeof(*f->iso_names));
	f->iso_group = calloc(c->attr.ngroups + 1, sizeof(*f->iso_group));
	f->assign = calloc(c->v8->ntargets + 1, sizeof(*f->assign));
	f->why = calloc(c->v8->ntargets + 1, sizeof(*f->why));
	if (!f->res || !f->iso_sides || !f->iso_names || !f->iso_group || !f->assign || !f->why)
		return -ENOMEM;
	return 0;
}

static void finish_release(struct finish *f)
{
	for (size_t k = 0; f->res && k < f->nres; k++)
		release_result(&f->res[k]);
	for (size_t i = 0; f->iso_names && i < f->niso; i++)
		free(f->iso_names[i]);
	free(f->res);
	free(f->iso_sides);
	free(f->iso_names);
	free(f->iso_group);
	free(f->assign);
	free(f->why);
}

/* The selected isolate group of a late target's runtime thread, or NULL. */
static const struct isolate_group *late_group(const struct capture *c, const struct v8_target *t,
					      size_t k)
{
	uint64_t isolate = c->v8_stalls ? c->v8_stalls[k].isolate : 0;

	for (size_t i = 0; isolate && c->selected && i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (c->selected[i] && g->isolate == isolate && g->pid == (uint32_t)t->pid)
			return g;
	}
	return NULL;
}

/*
 * A target whose V8 did not answer the stop in time: why, once on stderr;
 * and where the cross-check would have been (stdout, or stderr with
 * --json), that it is skipped.
 */
static void report_late(const struct capture *c, const struct v8_target *t, size_t k)
{
	const struct isolate_group *g = late_group(c, t, k);
	double wait_s = (t->reply_ns - t->stop_ns) / 1e9;
	struct v8_outcome *o = outcome_of(c, t);
	FILE *out = crosscheck_stream(c);

	fprintf(stderr,
		"isoprof: pid %d: V8's profiler did not answer in time: no reply to %s from "
		"inspector target '%s' within %.1f s of the window's end%s%s; isoprof's profile "
		"is written, the cross-check%s%s is skipped\n",
		t->pid, c->env->type == RECORD_HEAP ? "HeapProfiler.stopSampling" : "Profiler.stop",
		record__esc(t->id), wait_s, t->late_why[0] ? ": " : "", t->late_why,
		g ? " of isolate " : "", g ? g->isolate_str : "");
	if (o)
		o->group = g;
	if (c->env->type != RECORD_CPU)
		return;
	skip_crosscheck(c, t, "V8's profiler did not answer Profiler.stop within %.1f s%s%s",
			wait_s, t->late_why[0] ? ": " : "", t->late_why);
	if (g)
		fprintf(out, "== cross-check: isolate %s, %s version %s (pid %u)\n",
			g->isolate_str, record__esc(isolate_group__script(g)),
			record__esc(isolate_group__version(g)), g->pid);
	else
		fprintf(out, "== cross-check: inspector target '%s' (pid %d)\n",
			record__esc(t->id), t->pid);
	fprintf(out, "skipped: V8's profiler did not answer Profiler.stop within %.1f s%s%s\n",
		wait_s, t->late_why[0] ? ": " : "", t->late_why);
	fflush(out);
}

/* Member key: v when there is a value, else JSON null (json__put() takes NULL for ENOMEM). */
static int put_maybe(struct json_object *o, const char *key, bool there, struct json_object *v)
{
	if (there)
		return json__put(o, key, v);
	json_object_put(v);
	return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
}

struct json_object *record_v8__json(const struct capture *c)
{
	struct json_object *list = json_object_new_array();
	int err = 0;

	if (!list)
		return NULL;
	for (size_t k = 0; c->v8 && k < c->v8->ntargets && !err; k++) {
		const struct v8_target *t = &c->v8->targets[k];
		const struct v8_outcome *out = outcome_of(c, t);
		const struct isolate_group *g = out ? out->group
					      : t->late ? late_group(c, t, k) : NULL;
		struct json_object *o = json_object_new_object(), *check = NULL;
		const char *status = t->profile ? "answered" : t->late ? "late" : "failed";

		if (!o) {
			err = -ENOMEM;
			break;
		}
		err |= json__put(o, "pid", json_object_new_int64(t->pid));
		err |= json__put(o, "target", json__text(t->id));
		err |= json__put(o, "profile", json_object_new_string(status));
		err |= put_maybe(o, "error", t->err, json__text(t->errmsg));
		err |= put_maybe(o, "why", t->late_why[0], json__text(t->late_why));
		err |= put_maybe(o, "stop_wait_s", t->stop_ns && t->reply_ns,
				 json_object_new_double((t->reply_ns - t->stop_ns) / 1e9));
		err |= put_maybe(o, "isolate", g, json__text(g ? g->isolate_str : ""));
		err |= put_maybe(o, "file", out && out->path, json__text(out ? out->path : ""));
		err |= put_maybe(o, "raw_file", out && out->raw_path,
				 json__text(out ? out->raw_path : ""));
		/* a cross-check's key numbers and files, or why there is none */
		if (out && out->crosscheck) {
			check = json_object_get(out->crosscheck);
		} else if (out && out->skipped) {
			check = json_object_new_object();
			err |= check ? json__put(check, "skipped", json__text(out->skipped))
				     : -ENOMEM;
		}
		err |= put_maybe(o, "crosscheck", check, check);
		err |= json__append(list, o);
	}
	if (err) {
		json_object_put(list);
		return NULL;
	}
	return list;
}

/* Each V8 profile taken, converted without isolate labels, with what mapping needs. */
static int convert_profiles(struct capture *c, struct finish *f)
{
	for (size_t i = 0; i < c->v8->ntargets; i++) {
		struct v8_target *t = &c->v8->targets[i];
		struct v8_result *r = &f->res[f->nres];
		int err;

		if (!t->profile) {
			if (t->late)
				report_late(c, t, i);
			else if (t->err && (t->started || t->enabled))
				fprintf(stderr, "isoprof: pid %d: inspector target '%s': no V8 profile: "
						"%s\n", t->pid, record__esc(t->id), record__esc(t->errmsg));
			skip_crosscheck(c, t, "no V8 profile: %s",
					t->err ? t->errmsg : "the profiler did not run");
			f->failures += t->err != 0;
			continue;
		}
		r->target = t;
		/* converted without isolate labels first; mapped ones are converted again */
		if (convert(c, r, NULL)) {
			f->failures++;
			release_result(r);
			continue;
		}
		err = collect_side(r->profile, NULL, t->pid, &r->side, &r->names);
		if (err)
			return err;
		f->nres++;
	}
	return 0;
}

/* Which isolate each V8 profile belongs to (v8match.h), over the isolates written. */
static int map_profiles(struct capture *c, struct finish *f)
{
	struct v8match_side *tsides;
	int err;

	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (!g->isolate || !c->selected[i])
			continue;
		err = collect_side(c->group_profiles[i], g->info, (pid_t)g->pid,
				   &f->iso_sides[f->niso], &f->iso_names[f->niso]);
		if (err)
			return err;
		f->iso_group[f->niso++] = i;
	}
	tsides = calloc(f->nres + 1, sizeof(*tsides));
	if (!tsides)
		return -ENOMEM;
	for (size_t k = 0; k < f->nres; k++)
		tsides[k] = f->res[k].side;
	err = v8match__assign(tsides, f->nres, f->iso_sides, f->niso, f->assign, f->why);
	free(tsides);
	return err;
}

/*
 * --type heap -o FILE: one heap profile goes to FILE, the one of the isolate
 * asked for; the others are dropped (their target set to NULL).
 */
static int pick_heap_output(struct capture *c, struct finish *f)
{
	size_t candidates = 0, pick = 0;

	for (size_t k = 0; k < f->nres; k++) {
		/* unmapped: only when nothing narrows it down, or the target is named so */
		if (f->assign[k] >= 0 || (f->nres == 1 && !c->env->script) ||
		    (c->env->script && !strcmp(f->res[k].target->id, c->env->script))) {
			candidates++;
			pick = k;
		}
	}
	if (candidates > 1) {
		fprintf(stderr, "isoprof: %zu V8 heap profiles for -o %s: name one worker with "
				"--script, or give --out-dir DIR\n", candidates, c->env->output);
		return -EINVAL;
	}
	if (!candidates) {
		fprintf(stderr, "isoprof: no V8 heap profile of %s%s%s\n",
			c->env->script ? "script " : "the sampled isolates",
			c->env->script ? c->env->script : "",
			c->v8_missing_inspector ? ": its runtime may be one without an "
						  "inspector (see above)" : "");
		return -ENOENT;
	}
	f->only_output = c->env->output;
	for (size_t k = 0; k < f->nres; k++)
		if (k != pick)
			f->res[k].target = NULL;
	return 0;
}

/* Mapped profiles again with their isolate's labels, then every file.  0 or -ENOMEM. */
static int write_results(struct capture *c, struct finish *f)
{
	for (size_t k = 0; k < f->nres; k++) {
		struct v8_result *r = &f->res[k];
		const struct isolate_group *g = NULL;
		ssize_t group = -1;
		int err;

		if (!r->target)
			continue;
		if (f->assign[k] >= 0) {
			group = (ssize_t)f->iso_group[f->assign[k]];
			g = &c->attr.groups[group];
			pprof_builder__free(r->builder);
			pprof_profile__free(r->profile);
			r->builder = NULL;
			r->profile = NULL;
			if (convert(c, r, g)) {
				f->failures++;
				continue;
			}
		} else if (c->env->script && strcmp(r->target->id, c->env->script)) {
			/* not the isolate asked for, as far as anyone can tell */
			skip_crosscheck(c, r->target, "not the worker --script names");
			continue;
		} else {
			fprintf(stderr, "isoprof: pid %d: V8 target '%s' not mapped to an isolate: %s\n",
				r->target->pid, record__esc(r->target->id), why_unmapped(f->why[k]));
			r->why = f->why[k];
		}
		err = write_result(c, r, g, group, f->only_output);
		if (err == -ENOMEM)
			return err;
		if (err)
			f->failures++;
		else
			f->written++;
	}
	if (!f->written && !f->failures && f->nres == 0)
		fprintf(stderr, "isoprof: no V8 profile was taken\n");
	return 0;
}

int record_v8__finish(struct capture *c)
{
	struct finish f = { 0 };
	int err;

	if (!c->v8)
		return 0;
	c->v8_outcomes = calloc(c->v8->ntargets + 1, sizeof(*c->v8_outcomes));
	err = c->v8_outcomes ? finish_alloc(&f, c) : -ENOMEM;
	if (!err)
		err = convert_profiles(c, &f);
	if (!err)
		err = map_profiles(c, &f);
	if (!err && c->env->type == RECORD_HEAP && !c->env->out_dir)
		err = pick_heap_output(c, &f);
	if (!err)
		err = write_results(c, &f);
	if (err == -ENOMEM)
		fprintf(stderr, "isoprof: out of memory with the V8 profiles\n");
	finish_release(&f);
	if (!f.written) {
		/* the likeliest reason first: a runtime in scope had no inspector */
		record__set_exit(c, c->v8_missing_inspector || !c->v8->ntargets
					    ? RECORD_EXIT_NO_INSPECTOR
					    : RECORD_EXIT_FAILED);
		return err ? err : -ENOENT;
	}
	if (err)
		return err;
	return f.failures ? -EIO : 0;
}

void record_v8__free(struct capture *c)
{
	for (size_t k = 0; c->v8_outcomes && c->v8 && k < c->v8->ntargets; k++) {
		struct v8_outcome *o = &c->v8_outcomes[k];

		free(o->path);
		free(o->raw_path);
		free(o->check_path);
		free(o->skipped);
		json_object_put(o->crosscheck);
		heap_summary__release(&o->heap);
	}
	free(c->v8_outcomes);
	c->v8_outcomes = NULL;
	v8_capture__free(c->v8);
	c->v8 = NULL;
	for (size_t i = 0; c->group_profiles && i < c->attr.ngroups; i++)
		pprof_profile__free(c->group_profiles[i]);
	for (size_t i = 0; c->group_paths && i < c->attr.ngroups; i++)
		free(c->group_paths[i]);
	for (size_t i = 0; c->group_heap_profiles && i < c->attr.ngroups; i++) {
		pprof_profile__free(c->group_heap_profiles[i]);
		free(c->group_heap_paths[i]);
	}
	free(c->group_heap_profiles);
	free(c->group_heap_paths);
	c->group_heap_profiles = NULL;
	c->group_heap_paths = NULL;
	frame_table__free(c->alloc_ft);
	c->alloc_ft = NULL;
	free(c->group_profiles);
	free(c->group_paths);
	free(c->v8_stalls);
	c->v8_stalls = NULL;
	c->group_profiles = NULL;
	c->group_paths = NULL;
}
