// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof targets: the V8 runtime processes on this host (SPEC §6), what
 * each offers a capture (perf map, code logs, inspector), the TLS offset of
 * its current isolate, and, from each isolate's code log, its scripts with
 * their SHA-256.  A table for people, --json for programs.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/capture/discover.h"
#include "user/attribute/isolates.h"
#include "user/capture/sampler.h"
#include "symbolize/v8log.h"
#include "lib/monotime.h"

#define BUILD_ID_SHORT 12
/*
 * A code log grows with every compilation and v8log keeps its code index in
 * memory: past this size a listing leaves it unread rather than take
 * seconds and hundreds of MB to show a few script names.
 */
#define LOG_READ_MAX (256ULL << 20)

struct targets_env {
	bool json;
	long sample_ms;
	pid_t pids[MAX_PIDS];
	size_t npids;
};

static const struct argp_option targets_options[] = {
	{ "json", 'j', NULL, 0, "Print a JSON array of objects instead of a table", 0 },
	{ "pid", 'p', "PID", 0, "Only this process; repeatable", 0 },
	{ "sample-ms", 's', "MS", 0,
	  "Also sample the runtimes for MS milliseconds (BPF, 1000 Hz) and show each "
	  "isolate's recent samples", 0 },
	{ 0 },
};

static error_t targets_parse(int key, char *arg, struct argp_state *state)
{
	struct targets_env *env = state->input;

	switch (key) {
	case 'j':
		env->json = true;
		break;
	case 's':
		if (options__long(arg, 1, 10000, &env->sample_ms))
			argp_error(state, "--sample-ms must be an integer from 1 to 10000, not '%s'",
				   arg);
		break;
	case 'p':
		env->pids[env->npids] = options__pid(state, arg, env->npids);
		env->npids++;
		break;
	default:
		return options__rest(key, arg, state);
	}
	return 0;
}

/* ---- recent activity: a short BPF capture -------------------------------- */

struct activity_count {
	pid_t pid;
	uint64_t isolate;
	uint64_t samples;
};

/* What --sample-ms saw; NULL without it.  One command run, one capture. */
static struct activity {
	struct activity_count *counts;
	size_t nr, cap;
	long ms;
} *activity;

static int count_sample(void *ctx, const struct isoprof_sample *s)
{
	struct activity *a = ctx;

	for (size_t i = 0; i < a->nr; i++) {
		if (a->counts[i].pid == (pid_t)s->pid && a->counts[i].isolate == s->isolate) {
			a->counts[i].samples++;
			return 0;
		}
	}
	if (a->nr == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 16;
		struct activity_count *c = realloc(a->counts, cap * sizeof(*c));

		if (!c)
			return 0; /* a count lost, not the listing */
		a->counts = c;
		a->cap = cap;
	}
	a->counts[a->nr++] = (struct activity_count){ s->pid, s->isolate, 1 };
	return 0;
}

static uint64_t recent_samples(pid_t pid, uint64_t isolate)
{
	for (size_t i = 0; activity && i < activity->nr; i++)
		if (activity->counts[i].pid == pid && activity->counts[i].isolate == isolate)
			return activity->counts[i].samples;
	return 0;
}

static int sample_activity(const struct discover_list *list, long ms, struct activity *a)
{
	struct sampler_opts opts = { .frequency_hz = 1000 };
	struct sampler *s;
	uint64_t t0;
	char why[256] = "";
	int err = 0;

	opts.err_buf = why;
	opts.err_len = sizeof(why);
	a->ms = ms;
	s = sampler__new(&opts, count_sample, a);
	if (!s) {
		fprintf(stderr, "isoprof: targets: --sample-ms: %s\n", why[0] ? why : strerror(errno));
		return -errno;
	}
	for (size_t i = 0; i < list->nr && !err; i++) {
		const struct discover_proc *p = &list->procs[i];
		struct isoprof_target target = { 0 };

		if (p->tls.supported) {
			target.isolate_tls_offset = p->tls.tp_offset;
			target.flags = ISOPROF_TARGET_READ_ISOLATE;
		}
		err = sampler__add_target(s, p->pid, &target);
	}
	if (!err && (err = sampler__start(s)) > 0)
		err = 0;
	t0 = monotime_ms();
	while (!err) {
		if (monotime_ms() - t0 >= (uint64_t)ms)
			break;
		if (sampler__poll(s, 20) < 0)
			break;
	}
	sampler__stop(s);
	sampler__free(s);
	if (err)
		fprintf(stderr, "isoprof: targets: --sample-ms: %s\n", strerror(-err));
	return err;
}

/* ---- scripts, from the code logs ------------------------------------------ */

/* One code log, read for its scripts. */
struct log_view {
	struct v8log *log;	/* NULL when it could not be read */
	int err;		/* why not; -EFBIG: larger than LOG_READ_MAX */
};

static const char *log_error(int err)
{
	return err == -EFBIG ? "larger than 256 MiB: not read" : strerror(-err);
}

/* The runtime's own scripts, by the rule of docs/attribution.md. */
static bool script_is_internal(const char *name)
{
	return !isolate__is_user_script(name);
}

/* Read every code log of p; views[i] for p->logs[i].  -ENOMEM only. */
static int read_logs(const struct discover_proc *p, struct log_view **out)
{
	struct log_view *views;
	size_t i;
	int n;

	*out = NULL;
	if (!p->nr_logs)
		return 0;
	views = calloc(p->nr_logs, sizeof(*views));
	if (!views)
		return -ENOMEM;
	for (i = 0; i < p->nr_logs; i++) {
		if (p->logs[i].size > LOG_READ_MAX) {
			views[i].err = -EFBIG;
			continue;
		}
		views[i].log = v8log__new(p->logs[i].path);
		if (!views[i].log) {
			views[i].err = -errno;
			if (views[i].err == -ENOMEM)
				goto nomem;
			continue;
		}
		n = v8log__update(views[i].log);
		if (n == -ENOMEM) {
			views[i].err = n;
			goto nomem;
		}
		if (n < 0) {
			views[i].err = n;
			v8log__free(views[i].log);
			views[i].log = NULL;
		}
	}
	*out = views;
	return 0;
nomem:
	for (i = 0; i < p->nr_logs; i++)
		v8log__free(views[i].log);
	free(views);
	return -ENOMEM;
}

static void free_logs(struct log_view *views, size_t n)
{
	size_t i;

	for (i = 0; views && i < n; i++)
		v8log__free(views[i].log);
	free(views);
}

/* ---- JSON --------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if ((s[0] & 0xf8) == 0xf0) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and past U+10FFFF are not UTF-8. */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

/*
 * A JSON string.  Paths are bytes, not text: a byte that is not part of
 * valid UTF-8 is written as the code point of the same value (\u00XX), so
 * the output always parses.
 */
static void json_str(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*p) {
		switch (*p) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				fprintf(out, "\\u%04x", *p);
				break;
			}
			n = utf8_len(p);
			if (!n) {
				fprintf(out, "\\u%04x", *p);
				break;
			}
			fwrite(p, 1, n, out);
			p += n;
			continue;
		}
		p++;
	}
	fputc('"', out);
}

static void json_key(FILE *out, const char *indent, const char *key, bool *first)
{
	fprintf(out, "%s\n%s", *first ? "" : ",", indent);
	*first = false;
	json_str(out, key);
	fputs(": ", out);
}

static void json_hex(FILE *out, uint64_t v)
{
	fprintf(out, "\"0x%" PRIx64 "\"", v);
}

static void json_tls(FILE *out, const struct discover_tls *t)
{
	const char *in = "      ";
	bool first = true;

	fputc('{', out);
	json_key(out, in, "symbol", &first);
	json_str(out, DISCOVER_TLS_SYMBOL);
	json_key(out, in, "found", &first);
	fputs(t->found ? "true" : "false", out);
	json_key(out, in, "object", &first);
	json_str(out, t->object);
	json_key(out, in, "in_executable", &first);
	fputs(t->in_executable ? "true" : "false", out);
	json_key(out, in, "load_bias", &first);
	if (t->load_bias_known)
		json_hex(out, t->load_bias);
	else
		fputs("null", out);
	json_key(out, in, "supported", &first);
	fputs(t->supported ? "true" : "false", out);
	if (t->found) {
		json_key(out, in, "st_value", &first);
		json_hex(out, t->st_value);
		json_key(out, in, "tls_memsz", &first);
		fprintf(out, "%" PRIu64, t->tls_memsz);
		json_key(out, in, "tls_align", &first);
		fprintf(out, "%" PRIu64, t->tls_align);
	}
	json_key(out, in, "tp_offset", &first);
	if (t->supported)
		fprintf(out, "%" PRId64, t->tp_offset);
	else
		fputs("null", out);
	json_key(out, in, "why_unsupported", &first);
	json_str(out, t->supported ? NULL : t->why_unsupported);
	fputs("\n    }", out);
}

static void json_log_scripts(FILE *out, const struct log_view *v)
{
	const struct v8log_script *sc;
	size_t i, n;

	if (!v)
		return;
	if (!v->log) {
		fputs(", \"scripts\": null, \"error\": ", out);
		json_str(out, log_error(v->err));
		return;
	}
	fputs(", \"v8_version\": ", out);
	json_str(out, *v8log__version(v->log) ? v8log__version(v->log) : NULL);
	fputs(", \"scripts\": [", out);
	n = v8log__script_count(v->log);
	for (i = 0; i < n; i++) {
		sc = v8log__script_at(v->log, i);
		if (!sc)
			continue;
		fprintf(out, "%s\n        { \"id\": %d, \"name\": ", i ? "," : "", sc->id);
		json_str(out, sc->name);
		fputs(", \"sha256\": ", out);
		json_str(out, sc->sha256_hex[0] ? sc->sha256_hex : NULL);
		fprintf(out, ", \"source_bytes\": %zu, \"internal\": %s }", sc->source_len,
			script_is_internal(sc->name) ? "true" : "false");
	}
	fputs(n ? "\n      ]" : "]", out);
}

static const struct isolate_info *isolate_of(struct isolate_registry *reg,
					     const struct discover_proc *p, size_t j);
static const char *created_str(const struct isolate_info *info, char *buf, size_t len);

static void json_proc(FILE *out, const struct discover_proc *p, const struct log_view *views,
		      struct isolate_registry *reg)
{
	const char *in = "    ";
	bool first = true;
	size_t i;

	fputs("  {", out);
	json_key(out, in, "pid", &first);
	fprintf(out, "%d", p->pid);
	json_key(out, in, "nspid", &first);
	fprintf(out, "%d", p->nspid);
	json_key(out, in, "comm", &first);
	json_str(out, p->comm);
	json_key(out, in, "exe", &first);
	json_str(out, p->exe);
	json_key(out, in, "runtime", &first);
	json_str(out, discover__runtime_name(p->runtime));
	json_key(out, in, "version", &first);
	json_str(out, p->version);
	json_key(out, in, "build_id", &first);
	json_str(out, p->build_id);
	json_key(out, in, "tls", &first);
	json_tls(out, &p->tls);

	json_key(out, in, "perf_map", &first);
	fputs("{ \"path\": ", out);
	json_str(out, p->perf_map);
	fprintf(out, ", \"exists\": %s, \"open\": %s }", p->perf_map_exists ? "true" : "false",
		p->perf_map_open ? "true" : "false");

	json_key(out, in, "code_logs", &first);
	fputs("[", out);
	for (i = 0; i < p->nr_logs; i++) {
		const struct discover_code_log *l = &p->logs[i];

		fprintf(out, "%s\n      { \"path\": ", i ? "," : "");
		json_str(out, l->path);
		fputs(", \"isolate\": ", out);
		json_hex(out, l->isolate);
		fprintf(out, ", \"size\": %" PRIu64 ", \"open\": %s", l->size,
			l->open ? "true" : "false");
		{
			const struct isolate_info *info = isolate_of(reg, p, i);
			char when[32];

			fputs(", \"name\": ", out);
			json_str(out, info ? info->name : NULL);
			fputs(", \"version\": ", out);
			json_str(out, info ? info->version : NULL);
			fputs(", \"version_full\": ", out);
			json_str(out, info && info->version_full[0] ? info->version_full : NULL);
			fputs(", \"label\": ", out);
			json_str(out, info ? info->label : NULL);
			fputs(", \"created\": ", out);
			json_str(out, info && info->created_ns ? created_str(info, when, sizeof(when)) :
								 NULL);
			if (activity)
				fprintf(out, ", \"recent_samples\": %" PRIu64,
					recent_samples(p->pid, p->logs[i].isolate));
		}
		json_log_scripts(out, views ? &views[i] : NULL);
		fputs(" }", out);
	}
	fputs(p->nr_logs ? "\n    ]" : "]", out);

	json_key(out, in, "listening", &first);
	fputs("[", out);
	for (i = 0; i < p->nr_listening; i++) {
		fputs(i ? ", " : "", out);
		json_str(out, p->listening[i]);
	}
	fputs("]", out);
	json_key(out, in, "inspector", &first);
	json_str(out, p->inspector);
	json_key(out, in, "inspector_flag", &first);
	json_str(out, p->inspector_flag);
	fputs("\n  }", out);
}

static int print_json(FILE *out, const struct discover_list *list, struct isolate_registry *reg)
{
	struct log_view *views;
	size_t i;

	fputs("[", out);
	for (i = 0; i < list->nr; i++) {
		if (read_logs(&list->procs[i], &views))
			return -ENOMEM;
		fputs(i ? ",\n" : "\n", out);
		json_proc(out, &list->procs[i], views, reg);
		free_logs(views, list->procs[i].nr_logs);
	}
	fputs(list->nr ? "\n]\n" : "]\n", out);
	return 0;
}

/* ---- table -------------------------------------------------------------- */

/* The registry's view of the isolate of p's j-th log: name, version id. */
static const struct isolate_info *isolate_of(struct isolate_registry *reg,
					     const struct discover_proc *p, size_t j)
{
	if (isolate_registry__add_log_pid(reg, p->pid, p->logs[j].path) == -ENOMEM)
		return NULL;
	return isolate_registry__find(reg, p->pid, p->logs[j].isolate);
}

static const char *created_str(const struct isolate_info *info, char *buf, size_t len)
{
	time_t t;
	struct tm tm;

	if (!info || !info->created_ns)
		return "unknown";
	t = (time_t)(info->created_ns / 1000000000ull);
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* The user scripts of one isolate, one line each, and how many internal ones. */
static void print_log_scripts(FILE *out, const struct log_view *v)
{
	const struct v8log_script *sc;
	size_t i, n, internal = 0;

	if (!v->log) {
		fprintf(out, "        (log unreadable: %s)\n", log_error(v->err));
		return;
	}
	n = v8log__script_count(v->log);
	for (i = 0; i < n; i++) {
		sc = v8log__script_at(v->log, i);
		if (!sc)
			continue;
		if (script_is_internal(sc->name)) {
			internal++;
			continue;
		}
		fprintf(out, "        script %-40s sha256 %.12s\n", sc->name,
			sc->sha256_hex[0] ? sc->sha256_hex : "-");
	}
	if (internal)
		fprintf(out, "        (and %zu internal script%s)\n", internal,
			internal == 1 ? "" : "s");
}

static int print_table(FILE *out, const struct discover_list *list, struct isolate_registry *reg)
{
	char runtime[96], build_id[BUILD_ID_SHORT + 1], when[32];
	struct log_view *views;
	size_t i, j;

	fprintf(out, "%-8s %-24s %-12s %-8s %-4s %-22s %s\n", "PID", "RUNTIME", "BUILD-ID",
		"PERF-MAP", "LOGS", "INSPECTOR", "COMM");
	for (i = 0; i < list->nr; i++) {
		const struct discover_proc *p = &list->procs[i];

		snprintf(runtime, sizeof(runtime), "%s %s", discover__runtime_name(p->runtime),
			 p->version);
		snprintf(build_id, sizeof(build_id), "%s", *p->build_id ? p->build_id : "-");
		fprintf(out, "%-8d %-24s %-12s %-8s %-4zu %-22s %s\n", p->pid, runtime, build_id,
			p->perf_map_exists ? "yes" : "no", p->nr_logs,
			p->inspector ? p->inspector : "-", p->comm);
		if (read_logs(p, &views))
			return -ENOMEM;
		for (j = 0; j < p->nr_logs; j++) {
			const struct isolate_info *info = isolate_of(reg, p, j);

			fprintf(out, "    isolate 0x%" PRIx64 "  %s  version %s  created %s",
				p->logs[j].isolate, info ? info->name : "?",
				info ? (info->label ? info->label : info->version) : "unknown",
				created_str(info, when, sizeof(when)));
			if (activity)
				fprintf(out, "  samples %" PRIu64 " in %ld ms",
					recent_samples(p->pid, p->logs[j].isolate), activity->ms);
			fputc('\n', out);
			fprintf(out, "        log %s%s\n", p->logs[j].path,
				p->logs[j].open ? "" : "  (closed)");
			print_log_scripts(out, &views[j]);
		}
		free_logs(views, p->nr_logs);
		if (!p->tls.supported)
			fprintf(out, "    current isolate: %s\n", p->tls.why_unsupported);
	}
	return 0;
}

static const char *miss_reason(int err)
{
	switch (err) {
	case -ESRCH:
		return "no such process";
	case -EACCES:
		return "permission denied (run as root)";
	case -EINVAL:
		return "a kernel thread";
	case -ENOEXEC:
		return "not a V8 runtime (no V8 symbols in its executable or libraries)";
	default:
		return strerror(-err);
	}
}

int cmd_targets(int argc, char **argv)
{
	static const struct argp argp = {
		.options = targets_options,
		.parser = targets_parse,
		.doc = "List the V8 runtime processes (workerd, node, other V8 embedders) on "
		       "this host, recognized by the symbols of their binaries: runtime and "
		       "version, build-id, perf map, V8 code logs and their isolates, "
		       "inspector address.",
	};
	struct targets_env env = { 0 };
	struct discover_list *list = NULL;
	struct isolate_registry *reg = NULL;
	size_t i;
	int err, ret = 0;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;

	err = discover__scan(env.npids ? env.pids : NULL, env.npids, &list);
	if (err) {
		fprintf(stderr, "isoprof: targets: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < list->nr_misses; i++) {
		fprintf(stderr, "isoprof: pid %d: %s\n", list->misses[i].pid,
			miss_reason(list->misses[i].err));
		ret = 1;
	}

	if (env.sample_ms && list->nr) {
		static struct activity seen;

		if (sample_activity(list, env.sample_ms, &seen))
			ret = 1;
		else
			activity = &seen;
	}
	reg = isolate_registry__new();
	if (!reg)
		err = -ENOMEM;
	else if (env.json)
		err = print_json(stdout, list, reg);
	else if (list->nr)
		err = print_table(stdout, list, reg);
	else if (!env.npids)
		printf("No V8 runtime found (%zu other processes looked at).\n", list->scanned);

	/* Exited ones (zombies included) are not worth a line; unreadable ones are. */
	if (!env.json && !env.npids && list->skipped_denied)
		printf("%zu processes could not be inspected (permission denied: run as root to "
		       "see them).\n", list->skipped_denied);
	if (err) {
		fprintf(stderr, "isoprof: targets: %s\n", strerror(-err));
		ret = 1;
	}
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "isoprof: targets: writing output: %s\n", strerror(errno));
		ret = 1;
	}
	isolate_registry__free(reg);
	discover__free(list);
	return ret;
}
