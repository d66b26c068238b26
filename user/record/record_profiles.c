// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record's profiles: isoprof's own, from the samples of the window.  The
 * samples go to isolates through the runtimes' code logs, --script and
 * --version keep some of them, and each kept group is written as a pprof
 * (--out-dir: one per isolate and one for what ran outside any) or all of
 * them as one; see record.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/monotime.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "symbolize/v8log.h"
#include "user/attribute/node_script.h"
#include "user/capture/caps.h"
#include "user/record/record.h"

#define MAX_COMMENTS (MAX_PIDS + 64)
/* and two GC lines per isolate of a profile, for this many isolates */
#define MAX_GC_ISOLATES 1024
#define MAX_MATCHES 1024

int record_profiles__open_output(struct capture *c)
{
	const struct record_env *env = c->env;
	const struct fileio_owner *o = &c->out_owner;
	const char *what = env->out_dir ? env->out_dir : env->output;
	const char *slash = env->out_dir ? NULL : strrchr(env->output, '/');
	unsigned int unused = CAPS_NEED_OUTPUT_AS | CAPS_NEED_OUTPUT_GIVE;
	char dir[PATH_MAX], why[160] = "";
	struct atomic_file af;
	int fd, err;

	if (env->out_dir)
		snprintf(dir, sizeof(dir), "%s", env->out_dir);
	else if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)(slash - env->output) >= sizeof(dir))
		return -ENAMETOOLONG;
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == env->output ? 1 : (int)(slash - env->output),
			 env->output);
	c->out_name = slash ? slash + 1 : env->output;
	err = fileio__open_out_dir(dir, env->out_dir != NULL, &c->out_policy, &fd, &c->out_owner,
				   why, sizeof(why));
	if (err == -EPERM && why[0]) {
		fprintf(stderr, "isoprof: %s: refusing to write into this directory: %s\n", dir, why);
		record__set_exit(c, RECORD_EXIT_USAGE);
		return err;
	}
	if (!err) {
		c->out_dirfd = fd + 1;
		/* what this owner does not need goes before anything a target controls is read */
		if (o->how == FILEIO_OWNER_AS)
			unused &= ~CAPS_NEED_OUTPUT_AS;
		else if (o->how == FILEIO_OWNER_GIVE)
			unused &= ~CAPS_NEED_OUTPUT_GIVE;
		err = caps__drop_needs(unused);
		if (err) {
			fprintf(stderr, "isoprof: cannot change capabilities: %s\n", strerror(-err));
			return err;
		}
		/* a file can be created there: the probe is a temporary file, removed */
		err = atomic_file__openat(&af, fd, o, env->out_dir ? "probe" : c->out_name, 0644);
		if (!err)
			atomic_file__abort(&af);
	}
	if (err && o->how != FILEIO_OWNER_SELF)
		fprintf(stderr, "isoprof: %s: cannot write there as uid %u (%s): %s\n", dir,
			(unsigned int)o->uid,
			o->how == FILEIO_OWNER_AS ? "its owner" : "the user who ran sudo",
			strerror(-err));
	else if (err)
		fprintf(stderr, "isoprof: cannot write %s: %s\n", what, strerror(-err));
	return err;
}

/*
 * The isolates the window sampled, (pid, isolate) sorted: their code logs
 * are the only ones a capture reads (docs/design/performance-history.md, "Record at scale").
 */
struct sampled_isolate {
	pid_t pid;
	uint64_t isolate;
};

static int cmp_sampled(const void *a, const void *b)
{
	const struct sampled_isolate *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->isolate < y->isolate ? -1 : x->isolate > y->isolate;
}

static struct sampled_isolate *sampled_isolates(const struct capture *c, size_t *nr)
{
	const struct stored_sample *s = sample_store__samples(c->store);
	size_t n = sample_store__count(c->store), k = 0;
	struct sampled_isolate *out = malloc((n ? n : 1) * sizeof(*out));

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!s[i].isolate)
			continue;
		/* consecutive samples mostly share an isolate: drop repeats early */
		if (k && out[k - 1].pid == (pid_t)s[i].pid && out[k - 1].isolate == s[i].isolate)
			continue;
		out[k].pid = (pid_t)s[i].pid;
		out[k++].isolate = s[i].isolate;
	}
	if (k)
		qsort(out, k, sizeof(*out), cmp_sampled);
	*nr = 0;
	for (size_t i = 0; i < k; i++)
		if (!*nr || cmp_sampled(&out[*nr - 1], &out[i]))
			out[(*nr)++] = out[i];
	return out;
}

static bool was_sampled(const struct sampled_isolate *set, size_t n, pid_t pid, uint64_t isolate)
{
	struct sampled_isolate key = { pid, isolate };

	return bsearch(&key, set, n, sizeof(*set), cmp_sampled) != NULL;
}

/* set NULL: every log; otherwise those of the isolates in set[0..n). */
static int load_logs(struct capture *c, const struct sampled_isolate *set, size_t n)
{
	int err;

	for (int i = 0; i < c->ntargets; i++) {
		const struct discover_proc *p = c->targets[i].v8;
		struct safe_open_opts own;

		if (p)
			discover_proc__file_opts(p, &own);
		for (size_t j = 0; p && j < p->nr_logs; j++) {
			if (set && !was_sampled(set, n, p->pid, p->logs[j].isolate))
				continue;
			err = isolate_registry__add_log_pid(c->isolates, p->pid, p->logs[j].path,
							    &own);
			if (err == -ENOMEM)
				return err;
		}
	}
	return 0;
}

/*
 * The workerd targets' configs (services.h), once per process: parsed
 * only (an embedded module is read when a sampled isolate's match needs
 * it), after the window unless --script or --namespace needs them before.
 */
static int load_services(struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++) {
		int err;

		if (!c->targets[i].v8)
			continue;
		err = service_map__add_process(c->services, c->targets[i].v8);
		if (err)
			return err;
	}
	return 0;
}

int record_profiles__load_code_logs(struct capture *c)
{
	int err;

	/*
	 * A host's code logs hold everything it ever compiled, sources
	 * included (hundreds of MB at a thousand isolates): they are read
	 * after the window, only for the isolates it sampled.  --script and
	 * --namespace are checked before the window, and need them all.
	 */
	if (!c->env->script && !c->env->namespace_id)
		return 0;
	err = load_services(c);
	if (!err)
		err = load_logs(c, NULL, 0);
	if (!err)
		err = service_map__name_isolates(c->services, c->isolates);
	return err < 0 ? err : 0;
}

/*
 * After the window: the code logs of the isolates it sampled, in the
 * directories where the targets write them (those of isolates created
 * during the window too), and any known from before it (--script).
 */
void record_profiles__find_new_code_logs(struct capture *c)
{
	uint64_t t0 = monotime_ns();
	struct sampled_isolate *set;
	size_t nset = 0;

	load_services(c);
	set = sampled_isolates(c, &nset);
	if (!set)
		return;
	if (nset)
		load_logs(c, set, nset);
	for (int i = 0; nset && i < c->ntargets; i++) {
		const struct discover_proc *p = c->targets[i].v8;
		struct safe_open_opts own;
		uint64_t isolate;
		pid_t log_pid;
		char **paths;

		if (!p)
			continue;
		/* Only the target's own files (a shared directory: anyone can plant names). */
		discover_proc__file_opts(p, &own);
		for (size_t d = 0; d < p->nr_log_dirs; d++) {
			/* V8 names the file with the pid inside the runtime's pid namespace */
			paths = v8log__find(p->log_dirs[d], p->nspid ? p->nspid : p->pid, &own);
			for (size_t j = 0; paths && paths[j]; j++) {
				if (v8log__parse_filename(paths[j], &isolate, &log_pid) ||
				    !was_sampled(set, nset, p->pid, isolate))
					continue;
				isolate_registry__add_log_pid(c->isolates, p->pid, paths[j], &own);
			}
			v8log__find_free(paths);
		}
	}
	free(set);
	c->code_logs_ms = (monotime_ns() - t0) / 1e6;
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
			record__esc(all[i]->name),
			record__esc(all[i]->label ? all[i]->label : all[i]->version),
			(unsigned long long)all[i]->isolate, all[i]->pid);
	fputc('\n', stderr);
}

/* What --script selects: the service hosting --namespace, else --script. */
static const char *selected_script(const struct capture *c)
{
	return c->ns_service ? c->ns_service->name : c->env->script;
}

static bool in_ns_pids(const struct capture *c, pid_t pid)
{
	for (int i = 0; i < c->ns_npids; i++)
		if (c->ns_pids[i] == pid)
			return true;
	return false;
}

/* Why some workerd targets have no service names, on stderr. */
static void print_services_unknown(const struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++) {
		const char *why = service_map__why_unknown(c->services, c->targets[i].pid);

		if (why)
			fprintf(stderr, "isoprof: pid %d: %s\n", c->targets[i].pid, record__esc(why));
	}
}

/*
 * --namespace NS: the service whose worker declares it (uniqueKey,
 * className or service:className), in --script's worker when both are
 * given; its processes.
 */
static int resolve_namespace(struct capture *c)
{
	struct service_ns_match m[MAX_PIDS];
	const char *script = c->env->script;
	char all[2048];
	size_t n, k = 0;

	n = service_map__find_namespace(c->services, c->env->namespace_id, m, MAX_PIDS);
	if (n > MAX_PIDS)
		n = MAX_PIDS;
	for (size_t i = 0; i < n; i++) {
		bool ok = !script || !strcmp(m[i].service->name, script);

		for (size_t j = 0; script && !ok && j < m[i].service->nr_modules; j++)
			ok = isolate__script_matches(m[i].service->modules[j].name, script);
		if (ok)
			m[k++] = m[i];
	}
	if (!k) {
		service_map__list_namespaces(c->services, all, sizeof(all));
		fprintf(stderr, "isoprof: no Durable Object namespace '%s'%s%s%s; namespaces: %s\n",
			record__esc(c->env->namespace_id), script ? " in script '" : "",
			script ? record__esc(script) : "", script ? "'" : "", record__esc(all));
		print_services_unknown(c);
		record__set_exit(c, RECORD_EXIT_NOT_FOUND);
		return -ENOENT;
	}
	for (size_t i = 1; i < k; i++) {
		if (strcmp(m[i].service->name, m[0].service->name) ||
		    strcmp(m[i].ns->class_name, m[0].ns->class_name)) {
			fprintf(stderr, "isoprof: --namespace '%s' is ambiguous: ",
				record__esc(c->env->namespace_id));
			for (size_t j = 0; j < k; j++)
				fprintf(stderr, "%s%s:%s (%s, pid %d)", j ? ", " : "",
					record__esc(m[j].service->name),
					record__esc(m[j].ns->class_name),
					m[j].ns->unique_key ? record__esc(m[j].ns->unique_key)
							    : "ephemeral", m[j].pid);
			fprintf(stderr, "; give its uniqueKey or service:className\n");
			record__set_exit(c, RECORD_EXIT_USAGE);
			return -EINVAL;
		}
	}
	c->ns_service = m[0].service;
	c->ns = m[0].ns;
	for (size_t i = 0; i < k; i++)
		if (!in_ns_pids(c, m[i].pid) && c->ns_npids < MAX_PIDS)
			c->ns_pids[c->ns_npids++] = m[i].pid;
	return 0;
}

/*
 * A NAME that selects isolates of several workers (bundlers name every
 * main module index.js) is an error listing them, not a capture of all.
 */
static int check_ambiguous(struct capture *c, const char *script,
			   const struct isolate_info *const *m, int n)
{
	const char *first = NULL;
	bool ambiguous = false;

	for (int i = 0; i < n && i < MAX_MATCHES; i++) {
		if (c->ns_npids && !in_ns_pids(c, m[i]->pid))
			continue;
		if (!first)
			first = m[i]->name;
		ambiguous |= strcmp(first, m[i]->name) != 0;
	}
	if (!ambiguous)
		return 0;
	fprintf(stderr, "isoprof: --script '%s' is ambiguous; it names:", record__esc(script));
	for (int i = 0; i < n && i < MAX_MATCHES; i++)
		fprintf(stderr, "%s %s (version %s, isolate 0x%llx, pid %d)", i ? "," : "",
			record__esc(m[i]->name), record__esc(m[i]->version),
			(unsigned long long)m[i]->isolate, m[i]->pid);
	fprintf(stderr, "; give one of these names\n");
	record__set_exit(c, RECORD_EXIT_USAGE);
	return -EINVAL;
}

/*
 * A V8 target none of whose isolates the code logs name yet (a runtime
 * started without --log-code): only its samples will tell what it runs.
 */
static bool some_target_unlogged(const struct capture *c, const struct isolate_info *const *list,
				  size_t nr)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct target_state *t = &c->targets[i];
		bool logged = false;

		if (!t->v8)
			continue;
		for (size_t k = 0; k < nr && !logged; k++)
			logged = list[k]->pid == t->pid && list[k]->has_code_log;
		if (!logged)
			return true;
	}
	return false;
}

/*
 * Fail before the window, not after it, when --namespace or --script
 * names nothing the configs and code logs know of, or names several
 * workers.  While a target runs without code logs, a name not found yet
 * may still be its: the check then waits for the samples.
 */
int record_profiles__precheck_script(struct capture *c)
{
	const struct isolate_info *m[MAX_MATCHES];
	const struct isolate_info *const *list;
	const char *script;
	size_t nr;
	int n;

	if (c->env->namespace_id && resolve_namespace(c))
		return -ENOENT;
	script = selected_script(c);
	list = isolate_registry__list(c->isolates, &nr);
	if (!script || !nr)
		return 0;
	n = isolate_registry__match(c->isolates, script, NULL, NULL, NULL, m, MAX_MATCHES);
	if (n > 0)
		return check_ambiguous(c, script, m, n);
	if (some_target_unlogged(c, list, nr))
		return 0;
	fprintf(stderr, "isoprof: no running isolate of script '%s'; ", record__esc(script));
	print_running_scripts(c);
	print_services_unknown(c);
	record__set_exit(c, RECORD_EXIT_NOT_FOUND);
	return -ENOENT;
}

static bool isolate_ran(const struct isolate_info *info, void *ctx)
{
	const struct capture *c = ctx;

	for (size_t i = 0; i < c->attr.ngroups; i++)
		if (c->attr.groups[i].info == info && c->attr.groups[i].samples)
			return true;
	return false;
}

/*
 * --script NAME [--version ID|latest]: the isolates to keep (latest: the
 * most recently created matching isolate among those that ran).
 */
static int select_groups(struct capture *c)
{
	const struct isolate_info *matches[MAX_MATCHES];
	const char *script = selected_script(c);
	size_t kept = 0;
	int n;

	if (!script) {
		for (size_t i = 0; i < c->attr.ngroups; i++)
			c->selected[i] = true;
		return 0;
	}
	n = isolate_registry__match(c->isolates, script, NULL, NULL, NULL, matches, MAX_MATCHES);
	if (n > 0 && check_ambiguous(c, script, matches, n))
		return -EINVAL;
	n = isolate_registry__match(c->isolates, script, c->env->version, isolate_ran, c,
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
		if (c->ns_npids && g->info && !in_ns_pids(c, g->info->pid))
			c->selected[i] = false;
		kept += c->selected[i] && g->samples;
	}
	if (!kept) {
		fprintf(stderr, "isoprof: no isolate of script '%s'%s%s ran during the window; ",
			record__esc(script), c->env->version ? " version " : "",
			c->env->version ? c->env->version : "");
		print_running_scripts(c);
		/* known but idle (send traffic and retry) is not the same as unknown */
		n = isolate_registry__match(c->isolates, script, c->env->version, NULL, NULL,
					    matches, 1);
		record__set_exit(c, n > 0 ? RECORD_EXIT_NO_SAMPLES : RECORD_EXIT_NOT_FOUND);
		return -ENOENT;
	}
	return 0;
}

/* JS frames in their authors' names, from the scripts' source maps. */
static int map_sources(struct capture *c)
{
	struct source_maps_opts o = {
		.dir = c->env->source_maps,
		.budget = &c->read_budget,
		.services = c->services,
		.reg = c->isolates,
	};
	long n;

	/* continuous: the maps read in an earlier window serve the next ones */
	if (!c->maps)
		c->maps = source_maps__new(&o);
	if (!c->maps)
		return -ENOMEM;
	n = frame_table__map_sources(c->ft, c->store, c->maps);
	if (n < 0)
		return (int)n;
	c->mapped_frames = n;
	return 0;
}

/* Samples to isolates, then the groups --script/--version keep. */
static int attribute_samples(struct capture *c)
{
	int err;

	/* code logs first: the frame table takes inlined functions from them */
	err = c->code_logs_at_end ? 0 : isolate_registry__refresh(c->isolates);
	if (err == -ENOMEM)
		return err;
	/* workerd: the isolates of known services get their names (services.h) */
	err = service_map__name_isolates(c->services, c->isolates);
	if (err == -ENOMEM)
		return err;
	c->ft = frame_table__build(c->store, c->sym, c->isolates);
	if (!c->ft)
		return -ENOMEM;
	err = attribution__build(&c->attr, c->store, c->ft, c->isolates);
	if (err)
		return err;
	/* isolates with no code log: by the module names their JS frames carry */
	err = service_map__name_isolates_by_module(c->services, c->isolates);
	if (err == -ENOMEM)
		return err;
	c->services_by_module = err > 0 ? (size_t)err : 0;
	/* no code log: version ids from the scripts' own files, where they are known */
	err = service_map__version_isolates(c->services, c->isolates);
	for (int i = 0; err != -ENOMEM && i < c->ntargets; i++)
		err = node_script__version_isolates(c->isolates, c->targets[i].v8, &c->read_budget);
	if (err == -ENOMEM)
		return err;
	/* after naming isolates, which reads the generated script names */
	err = map_sources(c);
	if (err)
		return err;
	c->selected = calloc(c->attr.ngroups + 1, sizeof(*c->selected));
	c->group_profiles = calloc(c->attr.ngroups + 1, sizeof(*c->group_profiles));
	c->group_paths = calloc(c->attr.ngroups + 1, sizeof(*c->group_paths));
	if (!c->selected || !c->group_profiles || !c->group_paths)
		return -ENOMEM;
	if (record__gc_tally(c))
		return -ENOMEM;
	return select_groups(c);
}

static void accumulate(struct cpu_profile_stats *sum, const struct cpu_profile_stats *one)
{
	sum->samples += one->samples;
	sum->frames += one->frames;
	sum->unsymbolized_frames += one->unsymbolized_frames;
	sum->jit_leaf_samples += one->jit_leaf_samples;
	sum->jit_leaf_named += one->jit_leaf_named;
	for (size_t k = 0; k < sizeof(sum->jit_leaf_by) / sizeof(sum->jit_leaf_by[0]); k++) {
		sum->jit_leaf_by[k] += one->jit_leaf_by[k];
		sum->jit_leaf_inlined_by[k] += one->jit_leaf_inlined_by[k];
	}
	for (int k = 0; k < NR_FRAME_PLACEMENTS; k++)
		sum->jit_leaf_placed_by[k] += one->jit_leaf_placed_by[k];
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
 * Continuous: the profile to the sink, with what it is of.  The window goes
 * on whatever the sink says (its errors are counted); -ENOMEM only when
 * it could not be made.
 */
static int to_sink(struct capture *c, struct pprof_builder *b, const struct isolate_group *g,
		   uint64_t samples)
{
	struct capture_profile p = {
		.script = g ? isolate_group__script(g) : "no-isolate",
		.version = g ? isolate_group__version(g) : "unknown",
		.isolate = g ? g->isolate_str : NULL,
		.pid = g ? (pid_t)g->pid : 0,
		.from_ns = (uint64_t)c->wall_start.tv_sec * 1000000000ull + c->wall_start.tv_nsec,
		.until_ns = (uint64_t)c->wall_end.tv_sec * 1000000000ull + c->wall_end.tv_nsec,
		.samples = samples,
	};
	uint8_t *data;
	size_t len;
	int err;

	err = pprof_builder__serialize(b, true, &data, &len);
	if (err)
		return err;
	p.data = data;
	p.len = len;
	c->wstats.profiles++;
	if (c->env->sink->profile(c->env->sink->ctx, &p))
		c->wstats.sink_errors++;
	free(data);
	return 0;
}

/* The profile as a reader sees it once written: *out, or NULL when it does not parse. */
static int keep_parsed(struct pprof_builder *b, struct pprof_profile **out)
{
	uint8_t *bytes = NULL;
	char why[128];
	size_t len;
	int err;

	err = pprof_builder__serialize(b, false, &bytes, &len);
	if (!err)
		err = pprof_profile__parse(bytes, len, out, why, sizeof(why));
	free(bytes);
	return err;
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
	int err;

	info->filter = keep_sample;
	info->filter_ctx = filter;
	err = cpu_profile__build(c->store, c->ft, c->sym, info, &b, &st);
	if (err) {
		fprintf(stderr, "isoprof: cannot build %s: %s\n", path ? path : "a profile",
			strerror(-err));
		return err;
	}
	if (path && c->env->sink) {
		err = to_sink(c, b, group >= 0 ? &c->attr.groups[group] : NULL, st.samples);
		if (err == -ENOMEM) {
			pprof_builder__free(b);
			return err;
		}
	} else if (path) {
		err = record__write_profile(c, path, b);
		if (err) {
			fprintf(stderr, "isoprof: cannot write %s: %s\n", path, strerror(-err));
			pprof_builder__free(b);
			return err;
		}
	}
	if (group >= 0 && c->keep_group_profiles) {
		/* the V8 side maps and cross-checks on exactly what was written */
		err = keep_parsed(b, &c->group_profiles[group]);
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
 * Append to info's comments the GC lines of the isolates in groups: per
 * isolate "gc: N pauses, X ms total, Y ms max" (COMMENT_GC_PAUSES), "gc
 * stop: X ms total, Y ms max" (COMMENT_GC_STOP) when measured and, when it
 * did GC, "gc off-thread: P% of Z ms"; with several isolates in one
 * profile each line ends with the isolate it is about.  info->comments
 * must have room (MAX_COMMENTS + 3 * MAX_GC_ISOLATES); drop_gc_comments(info,
 * the count before) takes them off.
 */
static int with_gc_comments(const struct capture *c, struct cpu_profile_info *info,
			    const struct isolate_group *const *groups, size_t n)
{
	char **comments = (char **)info->comments;
	double period_ms = sampler__period_ns(c->sampler) / 1e6;

	for (size_t i = 0; i < n && i < MAX_GC_ISOLATES; i++) {
		const struct isolate_group *g = groups[i];
		char line[160], stop[80], who[128] = "";
		uint64_t gc, off;
		char *a, *b = NULL, *s = NULL;
		bool stopped;

		if (!record__gc_pauses(c, g, line, sizeof(line)))
			continue;
		stopped = record__gc_stop(c, g, stop, sizeof(stop));
		if (n > 1)
			snprintf(who, sizeof(who), " (isolate %s)", g->isolate_str);
		a = record__asprintf("%s%s", line, who);
		if (stopped)
			s = record__asprintf("%s%s", stop, who);
		record__gc_share(c, g, &gc, &off);
		if (c->gc && gc)
			b = record__asprintf("gc off-thread: %.0f%% of %.0f ms%s", 100.0 * off / gc,
					     gc * period_ms, who);
		if (!a || (stopped && !s) || (c->gc && gc && !b)) {
			free(a);
			free(s);
			free(b);
			return -ENOMEM;
		}
		comments[info->ncomments++] = a;
		if (s)
			comments[info->ncomments++] = s;
		if (b)
			comments[info->ncomments++] = b;
	}
	return 0;
}

static void drop_gc_comments(struct cpu_profile_info *info, size_t nbase)
{
	char **comments = (char **)info->comments;

	while (info->ncomments > nbase)
		free(comments[--info->ncomments]);
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
	size_t nbase = info->ncomments;
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
		err = with_gc_comments(c, info, &g, 1);
		if (!err)
			err = write_one(c, info, &filter, write ? path : NULL, (ssize_t)i);
		drop_gc_comments(info, nbase);
		if (err)
			return err;
	}
	if (outside && write) {
		filter.group = NULL;
		filter.outside_only = true;
		snprintf(path, sizeof(path), "%s/no-isolate-%s", c->env->out_dir ? c->env->out_dir : ".",
			 suffix);
		return write_one(c, info, &filter, path, -1);
	}
	return 0;
}

/*
 * --type heap: isoprof's own allocation profiles (docs/heap.md), one per
 * selected isolate, from the allocation samples of its process and
 * isolate; kept parsed in c->group_heap_profiles for the cross-check with
 * V8's.  With -o and no --out-dir, the one isolate that allocated goes to
 * the file.
 */
struct heap_filter {
	uint32_t pid;
	uint64_t isolate;
};

static bool keep_allocation(const struct stored_sample *s, void *ctx)
{
	const struct heap_filter *f = ctx;

	return s->pid == f->pid && s->isolate == f->isolate;
}

static void group_attr(const struct stored_sample *s, void *ctx, struct sample_attr *out)
{
	const struct isolate_group *g = ctx;

	(void)s;
	out->isolate = g->isolate_str;
	out->script = isolate_group__script(g);
	out->version = isolate_group__version(g);
}

static uint64_t group_allocations(const struct capture *c, const struct isolate_group *g)
{
	const struct stored_sample *samples = sample_store__samples(c->alloc_store);
	size_t n = sample_store__count(c->alloc_store);
	uint64_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += samples[i].pid == g->pid && samples[i].isolate == g->isolate;
	return k;
}

/* -o FILE: the one selected isolate with allocations, -ENOENT none, -EINVAL several. */
static ssize_t heap_output_group(const struct capture *c)
{
	ssize_t pick = -ENOENT;
	size_t n = 0;

	for (size_t i = 0; i < c->attr.ngroups; i++) {
		const struct isolate_group *g = &c->attr.groups[i];

		if (c->selected[i] && g->isolate && group_allocations(c, g)) {
			pick = (ssize_t)i;
			n++;
		}
	}
	if (n > 1) {
		fprintf(stderr, "isoprof: %zu isolates allocated for -o %s: name one worker with "
				"--script, or give --out-dir DIR\n", n, c->env->output);
		return -EINVAL;
	}
	return pick;
}

/* Can the profile's JS frames be named: a perf map, or JS names from the heap? */
static bool js_nameable(const struct capture *c, const struct isolate_group *g,
			const struct cpu_profile_stats *st)
{
	bool no_perfmap = false;

	for (size_t i = 0; i < st->nr_no_perfmap_pids; i++)
		no_perfmap |= st->no_perfmap_pids[i] == g->pid;
	if (!no_perfmap)
		return true;
	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].pid == (pid_t)g->pid)
			return c->targets[i].layout != 0;
	return false;
}

static int write_heap_one(struct capture *c, struct cpu_profile_info *info, size_t group,
			  const char *path)
{
	const struct isolate_group *g = &c->attr.groups[group];
	struct heap_filter filter = { .pid = g->pid, .isolate = g->isolate };
	struct cpu_profile_stats st;
	struct pprof_builder *b;
	int err;

	info->filter = keep_allocation;
	info->filter_ctx = &filter;
	info->attr = group_attr;
	info->attr_ctx = (void *)g;
	err = cpu_profile__build(c->alloc_store, c->alloc_ft, c->sym, info, &b, &st);
	if (err) {
		fprintf(stderr, "isoprof: cannot build %s: %s\n", path, strerror(-err));
		return err;
	}
	if (!js_nameable(c, g, &st)) {
		/* its JS frames would all be "[jit]": V8's profile names them, it is written instead */
		fprintf(stderr, "isoprof: pid %u: isolate %s: JIT frames cannot be named (no perf map, "
				"no calibrated layout): V8's heap profile is written in place of isoprof's\n",
			g->pid, g->isolate_str);
		pprof_builder__free(b);
		return 0;
	}
	err = record__write_profile(c, path, b);
	if (err) {
		fprintf(stderr, "isoprof: cannot write %s: %s\n", path, strerror(-err));
		pprof_builder__free(b);
		return err;
	}
	/* the cross-check with V8's heap profile reads exactly what was written */
	err = keep_parsed(b, &c->group_heap_profiles[group]);
	pprof_builder__free(b);
	if (err == -ENOMEM)
		return err;
	c->group_heap_paths[group] = strdup(path);
	if (!c->group_heap_paths[group])
		return -ENOMEM;
	if (!c->env->quiet)
		fprintf(stderr, "isoprof: wrote %s: heap profile of isolate %s (%s), %llu allocation "
				"samples: JS heap %.1f MiB, native %.1f MiB allocated\n",
			path, g->isolate_str, record__esc(isolate_group__script(g)),
			(unsigned long long)st.samples, st.alloc_bytes[0] / 1048576.0,
			st.alloc_bytes[1] / 1048576.0);
	accumulate(&c->stats, &st);
	c->nwritten++;
	if (!c->first_written[0])
		snprintf(c->first_written, sizeof(c->first_written), "%s", path);
	return 0;
}

/* The target state of pid, or NULL. */
static const struct target_state *target_state_of(const struct capture *c, uint32_t pid)
{
	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].pid == (pid_t)pid)
			return &c->targets[i];
	return NULL;
}

/* What the allocation probes took of t's process, for its heap profile's comments. */
static char *allocations_comment(const struct capture *c, const struct target_state *t)
{
	return record__asprintf(
		"allocations: %llu samples kept in pid %d (JS heap %s; native heap %s); lost: %llu "
		"(ring buffer full); user stacks truncated: %llu",
		(unsigned long long)t->alloc_samples, t->pid,
		t->alloc_sites & ALLOC_SITES_JS ? "sampled" : "not sampled: no V8 sampling point",
		t->alloc_sites & ALLOC_SITES_NATIVE
			? "sampled"
			: "not sampled: its malloc has no sampling hook (docs/heap.md)",
		(unsigned long long)c->alloc_counters.lost_ringbuf_full,
		(unsigned long long)c->alloc_counters.user_truncated);
}

static int write_heap_profiles(struct capture *c, const struct cpu_profile_info *base)
{
	const struct alloc_weights weights = {
		.js_interval = V8_HEAP_SAMPLING_INTERVAL,
		.native_interval = c->native_interval,
	};
	struct cpu_profile_info info = *base;
	char **comments = (char **)base->comments;
	const char *suffix = c->env->raw ? "heap.pb" : "heap.pb.gz";
	char path[PATH_MAX];
	ssize_t only = -1;
	int err = 0;

	if (!c->alloc_store || !c->alloc)
		return 0;
	c->group_heap_profiles = calloc(c->attr.ngroups + 1, sizeof(*c->group_heap_profiles));
	c->group_heap_paths = calloc(c->attr.ngroups + 1, sizeof(*c->group_heap_paths));
	c->alloc_ft = frame_table__build(c->alloc_store, c->sym, c->isolates);
	if (!c->group_heap_profiles || !c->group_heap_paths || !c->alloc_ft)
		return -ENOMEM;
	if (c->maps && frame_table__map_sources(c->alloc_ft, c->alloc_store, c->maps) == -ENOMEM)
		return -ENOMEM;
	if (!c->env->out_dir) {
		only = heap_output_group(c);
		if (only == -ENOENT) {
			fprintf(stderr, "isoprof: no allocation samples in the window: only V8's heap "
					"profile is written\n");
			return 0;
		}
		if (only < 0)
			return (int)only;
	}
	info.alloc = &weights;
	comments[info.ncomments] = record__asprintf(
		"heap: allocations sampled during the window where the runtime samples them (JS "
		"heap: V8's sampling heap profiler, interval %d bytes; native heap: the malloc's "
		"sampler, interval %llu bytes, class native-alloc); this is not retained memory",
		V8_HEAP_SAMPLING_INTERVAL, (unsigned long long)c->native_interval);
	if (!comments[info.ncomments])
		return -ENOMEM;
	info.ncomments++;
	for (size_t i = 0; i < c->attr.ngroups && !err; i++) {
		const struct isolate_group *g = &c->attr.groups[i];
		const struct target_state *t = target_state_of(c, g->pid);
		size_t nbase = info.ncomments;

		if (!g->isolate || !c->selected[i] || (only >= 0 && (size_t)only != i) || !t)
			continue;
		if (t->alloc_why) {
			fprintf(stderr, "isoprof: pid %d: isolate %s: no allocation probes (%s): V8's "
					"heap profile is written in place of isoprof's\n",
				t->pid, g->isolate_str, t->alloc_why);
			continue;
		}
		if (only >= 0)
			snprintf(path, sizeof(path), "%s", c->env->output);
		else if ((err = record__group_path(c, g, suffix, path, sizeof(path))))
			break;
		comments[info.ncomments] = allocations_comment(c, t);
		if (!comments[info.ncomments]) {
			err = -ENOMEM;
			break;
		}
		info.ncomments++;
		err = with_gc_comments(c, &info, &g, 1);
		if (!err)
			err = write_heap_one(c, &info, i, path);
		drop_gc_comments(&info, nbase);
	}
	free(comments[--info.ncomments]);
	comments[info.ncomments] = NULL;
	c->heap_written = !err && c->nwritten;
	return err;
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
	comments[n++] = record__asprintf("command: %s", c->env->command_line);
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

		if (c->selected[i] && g->isolate && record__is_deopt_loop(g))
			comments[n++] = record__asprintf(
				"note: isolate %s (%s): %.1f%% of its samples in V8's deoptimizer, "
				"a deopt loop", g->isolate_str, isolate_group__script(g),
				100.0 * g->deopt_samples / g->samples);
	}
	if (c->ns && n < MAX_COMMENTS - 4)
		comments[n++] = record__asprintf(
			"namespace: %s (uniqueKey %s) of service %s, actor %s: this profile covers "
			"every object of namespace %s in that isolate and the worker's own requests "
			"(objects share their worker's isolate; one actor is not told apart)",
			c->ns->class_name, c->ns->unique_key ? c->ns->unique_key : "none: ephemeral",
			c->ns_service->name, c->env->actor_id, c->ns->class_name);
	for (size_t i = 0; i < c->attr.ngroups && n < MAX_COMMENTS - 4; i++) {
		const struct isolate_group *g = &c->attr.groups[i];
		const struct workerd_service *svc = service_map__service_of(c->services, g->info);

		if (c->selected[i] && svc && svc->nr_modules)
			comments[n++] = record__asprintf(
				"service: %s (isolate %s): workerd service, main module %s",
				svc->name, g->isolate_str, svc->modules[0].name);
	}
	for (size_t i = 0; i < c->attr.ngroups && n < MAX_COMMENTS - 4; i++) {
		const struct isolate_info *info = c->attr.groups[i].info;

		if (!c->selected[i] || !info)
			continue;
		if (info->version_from == ISOLATE_VERSION_FROM_FILES)
			comments[n++] = record__asprintf(
				"version: %s (isolate %s): from its scripts' own files (no code log)",
				info->version_full, c->attr.groups[i].isolate_str);
		else if (info->version_why && !info->version_full[0])
			comments[n++] = record__asprintf("note: isolate %s (%s): no version id: %s",
							 c->attr.groups[i].isolate_str, info->name,
							 info->version_why);
	}
	for (int i = 0; i < c->ntargets && n < MAX_COMMENTS - 4; i++) {
		const char *why = service_map__why_unknown(c->services, c->targets[i].pid);
		const char *const *snotes;
		size_t ns = service_map__notes(c->services, c->targets[i].pid, &snotes);

		if (why)
			comments[n++] = record__asprintf("note: pid %d: %s", c->targets[i].pid, why);
		for (size_t k = 0; k < ns && n < MAX_COMMENTS - 4; k++)
			comments[n++] = record__asprintf("note: pid %d: %s", c->targets[i].pid,
							 snotes[k]);
	}
	nnotes = symbolizer__notes(c->sym, &notes);
	for (size_t i = 0; i < nnotes && n < MAX_COMMENTS; i++)
		comments[n++] = record__asprintf("note: %s", notes[i]);
	return n;
}

int record_profiles__write(struct capture *c, const struct isoprof_counters *cnt,
			   double *process_ms)
{
	/* + 2: the heap comments (write_heap_profiles()) */
	char *comments[MAX_COMMENTS + 3 * MAX_GC_ISOLATES + 2];
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
	if (c->env->out_dir || c->env->sink || c->env->type == RECORD_HEAP) {
		err = write_per_isolate(c, &info);
		if (!err && c->env->type == RECORD_HEAP)
			err = write_heap_profiles(c, &info);
	} else {
		const struct isolate_group **groups = calloc(c->attr.ngroups + 1, sizeof(*groups));
		size_t ngroups = 0;

		if (!groups) {
			err = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < c->attr.ngroups; i++)
			if (c->selected[i] && c->attr.groups[i].isolate)
				groups[ngroups++] = &c->attr.groups[i];
		filter.selected = c->selected;
		err = with_gc_comments(c, &info, groups, ngroups);
		if (!err)
			err = write_one(c, &info, &filter, c->env->output, -1);
		drop_gc_comments(&info, ncomments);
		free(groups);
	}
out:
	for (size_t i = 0; i < ncomments; i++)
		free(comments[i]);
	*process_ms = (monotime_ns() - t0) / 1e6 + c->code_logs_ms;
	return err;
}
