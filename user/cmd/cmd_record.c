// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof record: sample target processes for a window and write a pprof.
 *
 * One thread does everything: the ring buffer (half a second to a second of
 * samples, see sampler__ringbuf_bytes()) absorbs the ticks taken while it
 * loads symbol tables or re-reads /proc/PID/maps, so sampling never waits
 * for that work.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/monotime.h"
#include "lib/procfs.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "symbolize/symbolizer.h"
#include "symbolize/v8log.h"
#include "user/attribute/attribution.h"
#include "user/attribute/cpu_profile.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/capture/caps.h"
#include "user/capture/discover.h"
#include "user/capture/sample_store.h"
#include "user/capture/sampler.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/cmd/record.h"

#define MIN_DURATION_MS 1000
#define MAX_DURATION_MS 50000
#define MAX_FREQUENCY_HZ 20000
#define LIVENESS_EVERY_NS 200000000ull
#define REFRESH_EVERY_NS 1000000000ull

enum { OPT_V8 = 0x100, OPT_INSPECTOR };

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

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
	  "Keep only the isolates of this worker/script (service name or script name)", 0 },
	{ "version", 'V', "ID|latest", 0,
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
	  "window, save its .cpuprofile and pprof beside isoprof's, and cross-check them "
	  "(needs --out-dir)", 0 },
	{ "inspector", OPT_INSPECTOR, "HOST:PORT", 0,
	  "The target's inspector (loopback only), when isoprof cannot find it", 0 },
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
	case 'V':
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
	case ARGP_KEY_END:
		if (env->v8 && env->type == RECORD_HEAP)
			argp_error(state, "--v8 runs V8's CPU profiler: it goes with --type cpu");
		if (env->v8 && !env->out_dir)
			argp_error(state, "--v8 writes several files per isolate: give --out-dir DIR");
		if (env->inspector && env->npids > 1)
			argp_error(state, "--inspector names the inspector of one process: give one --pid");
		if (env->version && !env->script)
			argp_error(state, "--version goes with --script");
		if (env->out_dir && env->output)
			argp_error(state, "give -o FILE or --out-dir DIR, not both");
		break;
	default:
		return options__rest(key, arg, state);
	}
	return 0;
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

/* Fail before the window, not after it, when the output cannot be written. */
static int probe_output(const char *path)
{
	char probe[PATH_MAX];
	int fd;

	if (snprintf(probe, sizeof(probe), "%s.isoprof-probe-%d", path, getpid()) >=
	    (int)sizeof(probe))
		return -ENAMETOOLONG;
	fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(probe);
	return 0;
}

static int probe_dir(const char *dir)
{
	char probe[PATH_MAX];

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (snprintf(probe, sizeof(probe), "%s/probe", dir) >= (int)sizeof(probe))
		return -ENAMETOOLONG;
	return probe_output(probe);
}

static void print_running_scripts(const struct capture *c);

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

static bool all_exited(const struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++)
		if (!c->targets[i].exited)
			return false;
	return true;
}

static int run_window(struct capture *c)
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
			if (all_exited(c))
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

#define MAX_COMMENTS (MAX_PIDS + 64)

static void accumulate(struct cpu_profile_stats *sum, const struct cpu_profile_stats *one)
{
	sum->samples += one->samples;
	sum->frames += one->frames;
	sum->unsymbolized_frames += one->unsymbolized_frames;
	sum->jit_leaf_samples += one->jit_leaf_samples;
	sum->jit_leaf_named += one->jit_leaf_named;
	for (int i = 0; i < NR_SAMPLE_CLASSES; i++)
		sum->class_samples[i] += one->class_samples[i];
	for (size_t i = 0; i < one->nr_no_perfmap_pids; i++) {
		bool seen = false;

		for (size_t j = 0; j < sum->nr_no_perfmap_pids; j++)
			seen |= sum->no_perfmap_pids[j] == one->no_perfmap_pids[i];
		if (!seen && sum->nr_no_perfmap_pids < CPU_PROFILE_MAX_HINT_PIDS)
			sum->no_perfmap_pids[sum->nr_no_perfmap_pids++] = one->no_perfmap_pids[i];
	}
}

struct group_filter {
	const struct attribution *attr;
	const struct isolate_group *group; /* one group, or NULL: ... */
	bool outside_only;		   /* ... every sample outside isolates */
	const bool *selected;		   /* ... or the selected groups */
};

static bool keep_sample(const struct stored_sample *s, void *ctx)
{
	const struct group_filter *f = ctx;
	const struct isolate_group *g = attribution__group_of(f->attr, s);

	if (f->group)
		return g == f->group;
	if (f->outside_only)
		return !g->isolate;
	return f->selected[g - f->attr->groups];
}

/*
 * Write one profile to path (NULL: build it only) and, for a group the V8
 * side needs, keep it parsed in c->group_profiles[group].
 */
static int write_one(struct capture *c, struct cpu_profile_info *info, struct group_filter *filter,
		     const char *path, ssize_t group)
{
	struct cpu_profile_stats st;
	struct pprof_builder *b;
	uint8_t *bytes = NULL;
	size_t len;
	char why[128];
	int err;

	info->filter = keep_sample;
	info->filter_ctx = filter;
	err = cpu_profile__build(c->store, c->ft, c->sym, info, &b, &st);
	if (err) {
		fprintf(stderr, "isoprof: cannot build %s: %s\n", path ? path : "a profile",
			strerror(-err));
		return err;
	}
	if (path) {
		err = pprof_builder__write_file(b, path, !c->env->raw);
		if (err) {
			fprintf(stderr, "isoprof: cannot write %s: %s\n", path, strerror(-err));
			pprof_builder__free(b);
			return err;
		}
	}
	if (group >= 0 && c->keep_group_profiles) {
		/* the V8 side maps and cross-checks on exactly what was written */
		err = pprof_builder__serialize(b, false, &bytes, &len);
		if (!err)
			err = pprof_profile__parse(bytes, len, &c->group_profiles[group], why,
						   sizeof(why));
		free(bytes);
		if (err == -ENOMEM) {
			pprof_builder__free(b);
			return err;
		}
		if (path)
			c->group_paths[group] = strdup(path);
	}
	pprof_builder__free(b);
	if (!path)
		return 0;
	accumulate(&c->stats, &st);
	c->nwritten++;
	if (!c->first_written[0])
		snprintf(c->first_written, sizeof(c->first_written), "%s", path);
	return 0;
}

/*
 * --out-dir: one profile per isolate, one for what ran outside any isolate.
 * For --type heap the isolates' CPU profiles are built, not written: the
 * V8 side maps heap profiles to isolates with them.
 */
static int write_per_isolate(struct capture *c, struct cpu_profile_info *info)
{
	const char *suffix = c->env->raw ? "cpu.pb" : "cpu.pb.gz";
	struct group_filter filter = { .attr = &c->attr };
	bool write = c->env->type == RECORD_CPU;
	char path[PATH_MAX];
	bool outside = false;
	int err;

	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (!g->isolate) {
			outside |= c->selected[i];
			continue;
		}
		if (!c->selected[i])
			continue;
		err = record__group_path(c, g, suffix, path, sizeof(path));
		if (err)
			return err;
		filter.group = g;
		err = write_one(c, info, &filter, write ? path : NULL, (ssize_t)i);
		if (err)
			return err;
	}
	if (outside && write) {
		filter.group = NULL;
		filter.outside_only = true;
		snprintf(path, sizeof(path), "%s/no-isolate-%s", c->env->out_dir, suffix);
		return write_one(c, info, &filter, path, -1);
	}
	return 0;
}

static int load_code_logs(struct capture *c)
{
	int err;

	for (int i = 0; i < c->ntargets; i++) {
		const struct discover_proc *p = c->targets[i].v8;

		for (size_t j = 0; p && j < p->nr_logs; j++) {
			err = isolate_registry__add_log_pid(c->isolates, p->pid, p->logs[j].path);
			if (err == -ENOMEM)
				return err;
		}
	}
	return 0;
}

static bool isolate_ran(const struct isolate_info *info, void *ctx)
{
	const struct capture *c = ctx;

	for (size_t i = 0; i < c->attr.ngroups; i++)
		if (c->attr.groups[i].info == info && c->attr.groups[i].samples)
			return true;
	return false;
}

#define MAX_MATCHES 1024

/*
 * --script NAME [--version ID|latest]: the isolates to keep (latest: the
 * most recently created matching isolate among those that ran).
 */
static int select_groups(struct capture *c)
{
	const struct isolate_info *matches[MAX_MATCHES];
	size_t kept = 0;
	int n;

	if (!c->env->script) {
		for (size_t i = 0; i < c->attr.ngroups; i++)
			c->selected[i] = true;
		return 0;
	}
	n = isolate_registry__match(c->isolates, c->env->script, c->env->version, isolate_ran, c,
				    matches, MAX_MATCHES);
	if (n < 0) {
		fprintf(stderr, "isoprof: --version '%s': not a version id (4 to 64 hex digits), "
				"a label or latest\n", c->env->version);
		record__set_exit(c, RECORD_EXIT_NOT_FOUND);
		return n;
	}
	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		for (int k = 0; g->info && k < n && k < MAX_MATCHES; k++)
			c->selected[i] |= matches[k] == g->info;
		kept += c->selected[i] && g->samples;
	}
	if (!kept) {
		fprintf(stderr, "isoprof: no isolate of script '%s'%s%s ran during the window; ",
			c->env->script, c->env->version ? " version " : "",
			c->env->version ? c->env->version : "");
		print_running_scripts(c);
		/* known but idle (send traffic and retry) is not the same as unknown */
		n = isolate_registry__match(c->isolates, c->env->script, c->env->version, NULL,
					    NULL, matches, 1);
		record__set_exit(c, n > 0 ? RECORD_EXIT_NO_SAMPLES : RECORD_EXIT_NOT_FOUND);
		return -ENOENT;
	}
	return 0;
}

/*
 * Fail before the window, not after it, when --script names nothing the
 * code logs know of; without code logs, the check waits for the samples.
 */
static int precheck_script(struct capture *c)
{
	const struct isolate_info *m;
	size_t nr;

	isolate_registry__list(c->isolates, &nr);
	if (!c->env->script || !nr)
		return 0;
	if (isolate_registry__match(c->isolates, c->env->script, NULL, NULL, NULL, &m, 1) != 0)
		return 0;
	fprintf(stderr, "isoprof: no running isolate of script '%s'; ", c->env->script);
	print_running_scripts(c);
	record__set_exit(c, RECORD_EXIT_NOT_FOUND);
	return -ENOENT;
}

/* Isolates created during the window write new logs beside the known ones. */
static void find_new_code_logs(struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct discover_proc *p = c->targets[i].v8;
		char dir[PATH_MAX], **paths;

		if (!p || !p->nr_logs)
			continue;
		snprintf(dir, sizeof(dir), "%s", p->logs[0].path);
		if (!strrchr(dir, '/'))
			continue;
		*strrchr(dir, '/') = '\0';
		/* V8 names the file with the pid inside the runtime's pid namespace */
		paths = v8log__find(dir, p->nspid ? p->nspid : p->pid);
		for (size_t j = 0; paths && paths[j]; j++)
			isolate_registry__add_log_pid(c->isolates, p->pid, paths[j]);
		v8log__find_free(paths);
	}
}

/*
 * From this share of an isolate's samples in the deoptimizer, the summary
 * and the profile's comments name a deopt loop: a function's few
 * deoptimizations while its types settle cost well under 1%.
 */
#define DEOPT_LOOP_PERCENT 1

static bool is_deopt_loop(const struct isolate_group *g)
{
	return g->samples && g->deopt_samples * 100 >= g->samples * DEOPT_LOOP_PERCENT;
}

/* Samples to isolates, then the groups --script/--version keep. */
static int attribute_samples(struct capture *c)
{
	int err;

	/* code logs first: the frame table takes inlined functions from them */
	err = isolate_registry__refresh(c->isolates);
	if (err == -ENOMEM)
		return err;
	c->ft = frame_table__build(c->store, c->sym, c->isolates);
	if (!c->ft)
		return -ENOMEM;
	err = attribution__build(&c->attr, c->store, c->ft, c->isolates);
	if (err)
		return err;
	c->selected = calloc(c->attr.ngroups + 1, sizeof(*c->selected));
	c->group_profiles = calloc(c->attr.ngroups + 1, sizeof(*c->group_profiles));
	c->group_paths = calloc(c->attr.ngroups + 1, sizeof(*c->group_paths));
	if (!c->selected || !c->group_profiles || !c->group_paths)
		return -ENOMEM;
	return select_groups(c);
}

/* The profiles' comments: how the capture went.  Some may be NULL (ENOMEM). */
static size_t profile_comments(const struct capture *c, const struct isoprof_counters *cnt,
			       char *comments[MAX_COMMENTS])
{
	uint64_t window = c->window_end_ns - c->window_start_ns;
	const char *const *notes;
	size_t n = 0, nnotes;
	char when[64];
	struct tm tm;

	gmtime_r(&c->wall_start.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	comments[n++] = record__asprintf("command: %s", isoprof_command_line);
	comments[n++] = record__asprintf("window: %s + %.3f s", when, window / 1e9);
	comments[n++] = record__asprintf(
		"start-up: sampling armed %.1f ms after launch, symbol tables loaded at %.1f ms",
		(c->armed_ns - c->launch_ns) / 1e6, (c->symbols_ns - c->launch_ns) / 1e6);
	comments[n++] = record__asprintf(
		"rate: %ld Hz per CPU (period %llu ns), cpu-clock on %d CPUs", c->env->frequency_hz,
		sampler__period_ns(c->sampler), c->ncpus);
	comments[n++] = record__asprintf("samples: %zu kept; lost: %llu (ring buffer full)",
					 sample_store__count(c->store),
					 (unsigned long long)cnt->lost_ringbuf_full);
	comments[n++] = record__asprintf(
		"stacks: truncated user %llu, kernel %llu; read errors user %llu, kernel %llu",
		(unsigned long long)cnt->user_truncated, (unsigned long long)cnt->kernel_truncated,
		(unsigned long long)cnt->user_stack_errors,
		(unsigned long long)cnt->kernel_stack_errors);
	for (int i = 0; i < c->ntargets && n < MAX_COMMENTS - 8; i++) {
		const struct target_state *t = &c->targets[i];

		if (t->exited)
			comments[n++] = record__asprintf(
				"note: pid %d (%s) exited %.3f s into the window", t->pid, t->comm,
				t->exited_after_ns / 1e9);
	}
	for (size_t i = 0; i < c->attr.ngroups && n < MAX_COMMENTS - 4; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (c->selected[i] && g->isolate && is_deopt_loop(g))
			comments[n++] = record__asprintf(
				"note: isolate %s (%s): %.1f%% of its samples in V8's deoptimizer, "
				"a deopt loop", g->isolate_str, isolate_group__script(g),
				100.0 * g->deopt_samples / g->samples);
	}
	nnotes = symbolizer__notes(c->sym, &notes);
	for (size_t i = 0; i < nnotes && n < MAX_COMMENTS; i++)
		comments[n++] = record__asprintf("note: %s", notes[i]);
	return n;
}

static int write_profiles(struct capture *c, const struct isoprof_counters *cnt,
			  double *process_ms)
{
	char *comments[MAX_COMMENTS];
	size_t ncomments = 0;
	uint64_t t0 = monotime_ns();
	struct cpu_profile_info info = {
		.time_nanos = (int64_t)c->wall_start.tv_sec * 1000000000ll + c->wall_start.tv_nsec,
		.duration_nanos = (int64_t)(c->window_end_ns - c->window_start_ns),
		.period_ns = sampler__period_ns(c->sampler),
		.attr = attribution__sample_attr,
		.attr_ctx = &c->attr,
	};
	struct group_filter filter = { .attr = &c->attr };
	int err;

	err = attribute_samples(c);
	if (err)
		return err;
	ncomments = profile_comments(c, cnt, comments);
	for (size_t i = 0; i < ncomments; i++) {
		if (!comments[i]) {
			err = -ENOMEM;
			goto out;
		}
	}
	info.comments = (const char *const *)comments;
	info.ncomments = ncomments;
	if (c->env->out_dir || c->env->type == RECORD_HEAP) {
		err = write_per_isolate(c, &info);
	} else {
		filter.selected = c->selected;
		err = write_one(c, &info, &filter, c->env->output, -1);
	}
out:
	for (size_t i = 0; i < ncomments; i++)
		free(comments[i]);
	*process_ms = (monotime_ns() - t0) / 1e6;
	return err;
}

static void print_running_scripts(const struct capture *c)
{
	const struct isolate_info *const *all;
	size_t n;

	all = isolate_registry__list(c->isolates, &n);
	if (!n) {
		fprintf(stderr, "no isolate with a known script is running\n");
		return;
	}
	fprintf(stderr, "running:");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %s (version %s, isolate 0x%llx, pid %d)", i ? "," : "",
			all[i]->name, all[i]->label ? all[i]->label : all[i]->version,
			(unsigned long long)all[i]->isolate, all[i]->pid);
	fputc('\n', stderr);
}

static void print_classes(const uint64_t *class_samples, uint64_t total)
{
	for (int k = 0; k < NR_SAMPLE_CLASSES; k++)
		if (class_samples[k])
			fprintf(stderr, " %s %.1f%%", sample_class__str(k),
				100.0 * class_samples[k] / total);
	fputc('\n', stderr);
}

static void print_summary(const struct capture *c, const struct isoprof_counters *cnt,
			  double process_ms)
{
	const struct cpu_profile_stats *stats = &c->stats;
	size_t total = sample_store__count(c->store);
	const char *const *notes;
	size_t nnotes;

	if (c->nwritten == 1)
		fprintf(stderr, "isoprof: wrote %s", c->first_written);
	else
		fprintf(stderr, "isoprof: wrote %zu profiles to %s", c->nwritten,
			c->env->out_dir ? c->env->out_dir : ".");
	fprintf(stderr,
		" (%s): %llu of %zu samples over %.2f s at %ld Hz on %d CPUs, "
		"armed %.0f ms after launch (symbols loaded at %.0f ms), post-processing %.0f ms\n",
		c->env->raw ? "pprof, raw protobuf" : "pprof, gzip",
		(unsigned long long)stats->samples, total,
		(c->window_end_ns - c->window_start_ns) / 1e9, c->env->frequency_hz, c->ncpus,
		(c->armed_ns - c->launch_ns) / 1e6, (c->symbols_ns - c->launch_ns) / 1e6,
		process_ms);
	fprintf(stderr,
		"isoprof: lost %llu samples (ring buffer full); truncated stacks: user %llu, "
		"kernel %llu; stack read errors: user %llu, kernel %llu; unnamed frames %llu of %llu\n",
		(unsigned long long)cnt->lost_ringbuf_full,
		(unsigned long long)cnt->user_truncated, (unsigned long long)cnt->kernel_truncated,
		(unsigned long long)cnt->user_stack_errors,
		(unsigned long long)cnt->kernel_stack_errors,
		(unsigned long long)stats->unsymbolized_frames, (unsigned long long)stats->frames);
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];

		fprintf(stderr, "  pid %-7d %-16s %7llu samples %5.1f%%  %s%s\n", t->pid, t->comm,
			(unsigned long long)t->samples, total ? 100.0 * t->samples / total : 0.0,
			t->v8 ? discover__runtime_name(t->v8->runtime) : "not a V8 runtime",
			t->v8 && !t->v8->tls.supported ? " (isolates not readable)" : "");
	}
	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (!c->selected[i])
			continue;
		if (g->isolate)
			fprintf(stderr, "  isolate %s %s version %s (pid %u): %llu samples %.1f%%:",
				g->isolate_str, isolate_group__script(g), isolate_group__version(g),
				g->pid, (unsigned long long)g->samples, 100.0 * g->samples / total);
		else
			fprintf(stderr, "  outside isolates (pid %u): %llu samples %.1f%%:", g->pid,
				(unsigned long long)g->samples, 100.0 * g->samples / total);
		print_classes(g->class_samples, g->samples);
		if (g->isolate && is_deopt_loop(g))
			fprintf(stderr,
				"    %.1f%% of its samples in V8's deoptimizer: code is deoptimized "
				"over and over (a deopt loop; V8's --trace-deopt names the function "
				"and the reason)\n",
				100.0 * g->deopt_samples / g->samples);
	}
	if (stats->jit_leaf_samples)
		fprintf(stderr, "isoprof: JIT-leaf samples: %llu, named %llu (%.1f%%)\n",
			(unsigned long long)stats->jit_leaf_samples,
			(unsigned long long)stats->jit_leaf_named,
			100.0 * stats->jit_leaf_named / stats->jit_leaf_samples);
	for (size_t i = 0; i < stats->nr_no_perfmap_pids; i++) {
		char hint[400];

		cpu_profile__no_perfmap_hint(stats->no_perfmap_pids[i], hint, sizeof(hint));
		fprintf(stderr, "isoprof: %s\n", hint);
	}
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];

		if (t->exited)
			fprintf(stderr,
				"isoprof: note: pid %d exited %.2f s into the window; the profile "
				"holds what was collected before\n",
				t->pid, t->exited_after_ns / 1e9);
	}
	nnotes = symbolizer__notes(c->sym, &notes);
	for (size_t i = 0; i < nnotes; i++)
		fprintf(stderr, "isoprof: note: %s\n", notes[i]);
}

static void print_bpf_stats(const struct capture *c, const struct isoprof_counters *cnt)
{
	unsigned long long run_ns, runs;

	if (sampler__prog_stats(c->sampler, &run_ns, &runs) || !runs) {
		fprintf(stderr, "isoprof: BPF run-time stats unavailable\n");
		return;
	}
	/* Runs that are not on a target return after one hash lookup. */
	fprintf(stderr,
		"isoprof: BPF sampler: %llu runs, %llu ns total, %.0f ns per run; "
		"%llu on targets, at most %.0f ns per target sample\n",
		runs, run_ns, (double)run_ns / runs, (unsigned long long)cnt->events,
		cnt->events ? (double)run_ns / cnt->events : 0.0);
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

/* Before any BPF: the output, the state, targets, code logs, V8's profilers. */
static int prepare(struct capture *c)
{
	struct record_env *env = c->env;
	int err;

	if (!env->output && !env->out_dir)
		env->output = env->type == RECORD_HEAP ? "isoprof-heap.pb.gz" : "isoprof-cpu.pb.gz";
	err = env->out_dir ? probe_dir(env->out_dir) : probe_output(env->output);
	if (err) {
		fprintf(stderr, "isoprof: cannot write %s: %s\n",
			env->out_dir ? env->out_dir : env->output, strerror(-err));
		return err;
	}
	c->store = sample_store__new();
	c->sym = symbolizer__new(NULL);
	c->isolates = isolate_registry__new();
	if (!c->store || !c->sym || !c->isolates) {
		fprintf(stderr, "isoprof: out of memory\n");
		return -ENOMEM;
	}
	if (env->version_labels) {
		char why[256] = "";

		/* returns how many labels it loaded */
		err = isolate_registry__load_labels(c->isolates, env->version_labels, why,
						    sizeof(why));
		if (err < 0) {
			fprintf(stderr, "isoprof: %s: %s\n", env->version_labels,
				why[0] ? why : strerror(-err));
			return err;
		}
	}
	err = setup_targets(c);
	if (!err)
		err = load_code_logs(c);
	if (!err)
		err = precheck_script(c);
	if (err)
		return err;
	c->keep_group_profiles = env->v8 || env->type == RECORD_HEAP;
	/* inspector sessions are opened and profilers prepared before the window */
	if (env->v8 || env->type == RECORD_HEAP)
		return record_v8__prepare(c);
	return 0;
}

/* Load and attach the sampler; from here on the window's clock runs. */
static int arm(struct capture *c)
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
		fprintf(stderr, "isoprof: %s\n", err_buf[0] ? err_buf : strerror(errno));
		record__set_exit(c, RECORD_EXIT_NO_BPF);
		return -1;
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
			all_exited(c) ? " (exited)" : " (idle: send it work and retry)");
		record__set_exit(c, RECORD_EXIT_NO_SAMPLES);
		/* what V8 collected is kept even so, under the inspector's target names */
		if (c->v8)
			record_v8__finish(c);
		return;
	}
	find_new_code_logs(c);
	err = write_profiles(c, &cnt, &process_ms);
	if (err) {
		if (err == -ENOMEM)
			fprintf(stderr, "isoprof: out of memory writing the profiles\n");
		return;
	}
	if (c->env->type == RECORD_CPU)
		print_summary(c, &cnt, process_ms);
	if (c->env->bpf_stats)
		print_bpf_stats(c, &cnt);
	c->exit_status = RECORD_EXIT_OK;
	if ((c->env->v8 || c->env->type == RECORD_HEAP) && record_v8__finish(c))
		record__set_exit(c, RECORD_EXIT_FAILED);
}

static void capture_release(struct capture *c)
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
	};
	struct capture c = { .env = &env };
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return RECORD_EXIT_USAGE;
	c.exit_status = RECORD_EXIT_FAILED;
	c.launch_ns = monotime_ns();
	if (!prepare(&c) && !arm(&c)) {
		err = run_window(&c);
		if (err)
			fprintf(stderr, "isoprof: reading samples failed: %s\n", strerror(-err));
		else
			finish(&c);
	}
	capture_release(&c);
	return c.exit_status;
}
