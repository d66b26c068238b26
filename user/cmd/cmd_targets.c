// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof targets: the V8 runtime processes on this host (README.md, docs/attribution.md), what
 * each offers a capture (perf map, code logs, inspector), the TLS offset of
 * its current isolate, and, from each isolate's code log, its scripts with
 * their SHA-256.  A table for people, --json for programs (strings that
 * are not UTF-8 in it come out with U+FFFD for the bad bytes).
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
#include <unistd.h>

#include "symbolize/v8layout.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/capture/discover.h"
#include "user/attribute/isolates.h"
#include "user/attribute/listing_cache.h"
#include "user/attribute/services.h"
#include "user/v8/inspector_names.h"
#include "user/capture/sampler.h"
#include "symbolize/v8log_scan.h"
#include "lib/array.h"
#include "lib/json.h"
#include "lib/monotime.h"
#include "lib/textescape.h"
#include "lib/fileio.h"
#include "user/serve/daemon.h"
#include "user/capture/caps.h"

#define BUILD_ID_SHORT 12
/*
 * A code log grows with every compilation; the listing's scan keeps little
 * of it but still reads it all: past this size a listing leaves it unread
 * rather than take most of a second for a few script names.
 */
#define LOG_READ_MAX (256ULL << 20)

enum { OPT_SAMPLE_MS = 0x100 };

struct targets_env {
	bool json;
	long sample_ms;
	pid_t pids[MAX_PIDS];
	size_t npids;
	bool requests;
};

static const struct argp_option targets_options[] = {
	{ "json", 'j', NULL, 0, "Print a JSON array of objects instead of a table", 0 },
	{ "requests", 'R', NULL, OPTION_HIDDEN,
	  "List once per byte read on stdin, in frames (isoprof serve's helper)", 0 },
	{ "pid", 'p', "PID", 0, "Only this process; repeatable", 0 },
	{ "sample-ms", OPT_SAMPLE_MS, "MS", 0,
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
	case 'R':
		env->requests = true;
		break;
	case OPT_SAMPLE_MS:
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

/*
 * Text a target controls, safe for a terminal (lib/textescape.h): one of 8
 * buffers used in turn, up to 8 per line.
 */
static const char *esc(const char *s)
{
	static char bufs[8][TEXTESCAPE_SIZE(512)];
	static unsigned int next;

	return textescape(s, bufs[next++ % 8], sizeof(bufs[0]));
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
	if (array_grow(&a->counts, &a->cap, a->nr + 1))
		return 0; /* a count lost, not the listing */
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
	err = caps__enter(CAPS_ARMING);
	if (err) {
		fprintf(stderr, "isoprof: targets: cannot change capabilities: %s\n", strerror(-err));
		return err;
	}
	s = sampler__new(&opts, count_sample, a);
	if (!s) {
		err = -errno;
		caps__enter(CAPS_READING);
		fprintf(stderr, "isoprof: targets: --sample-ms: %s\n", why[0] ? why : strerror(-err));
		return err;
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
	/* attached (or failed): the BPF capabilities are not needed again */
	if (caps__enter(CAPS_READING) && !err)
		err = -EPERM;
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

/* ---- services, from workerd's config (services.h) ------------------------- */

/* The processes' configs, kept between listings like the code logs' state. */
static struct service_map *services;

/*
 * An open inspector's word on the names (inspector_names.h): one GET of
 * /json/list, bounded so that a stuck inspector costs a listing at most this.
 */
#define INSPECTOR_LIST_TIMEOUT_MS 500

/* 1 with *names filled (the caller frees) for a workerd with an inspector, 0 if none, -ENOMEM */
static int ask_inspector(const struct discover_proc *p, struct inspector_names *names)
{
	int err;

	if (p->runtime != DISCOVER_WORKERD || !p->inspector)
		return 0;
	err = inspector_names__check(p->pid, p->inspector, INSPECTOR_LIST_TIMEOUT_MS,
				     service_map__config(services, p->pid), names);
	if (err) {
		inspector_names__free(names);
		return err;
	}
	return 1;
}

/* The name a listing shows: the service's when known (services.h), else the isolate's. */
static const char *shown_name(const struct listing_log *info,
			      const struct workerd_service *service)
{
	return service ? service->name : info->name;
}

/* ---- scripts, from the code logs ------------------------------------------ */

struct log_view;
static int name_service(const struct discover_proc *p, size_t i, struct log_view *v);

/*
 * One code log, as the listing cache has it (listing_cache.h: its scripts
 * without their sources, the isolate's name and version id).  A one-shot
 * listing fills a cache once; a listing served on stdin (isoprof serve's
 * helper) keeps it, and reads only what changed since the call before.
 */
struct log_view {
	const struct listing_log *log;	/* NULL when the log was not read */
	int err;			/* why not; -EFBIG: larger than LOG_READ_MAX */
	const struct workerd_service *service;	/* NULL when unknown */
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

/* p's i-th code log into v.  -ENOMEM only: other errors are v->err. */
static int read_log(struct listing_cache *cache, const struct discover_proc *p, size_t i,
		    struct log_view *v)
{
	struct safe_open_opts own;
	int err;

	memset(v, 0, sizeof(*v));
	if (p->logs[i].size > LOG_READ_MAX) {
		v->err = -EFBIG;
		return 0;
	}
	discover_proc__file_opts(p, &own);
	err = listing_cache__read(cache, p->pid, p->logs[i].path, &own, &v->log, NULL);
	if (err) {
		v->log = NULL;
		v->err = err;
		return err == -ENOMEM ? err : 0;
	}
	if (v->log->known && v->log->version_full[0])
		return name_service(p, i, v);
	return 0;
}

/*
 * The workerd service that p's i-th isolate runs (services.h: its user
 * scripts' names and SHA-256, as the scan has them, against the config's
 * modules).  -ENOMEM only.
 */
static int name_service(const struct discover_proc *p, size_t i, struct log_view *v)
{
	struct v8log_scan *scan = v->log->scan;
	size_t n = scan ? v8log_scan__count(scan) : 0, k = 0;
	struct isolate_script *s;
	int err;

	if (!n || !service_map__config(services, p->pid))
		return 0;
	s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++) {
		const struct v8log_scan_script *sc = v8log_scan__at(scan, j);

		if (!sc || !isolate__is_user_script(sc->name))
			continue;
		s[k].name = sc->name;
		s[k].source_len = sc->has_source ? sc->source_len : 0;
		s[k].sha256_hex = sc->has_source ? sc->sha256_hex : "";
		k++;
	}
	err = service_map__match(services, p->pid, p->logs[i].isolate, v->log->version_full, s, k,
				 &v->service);
	free(s);
	return err;
}

/* ---- JSON --------------------------------------------------------------- */

/*
 * The JSON is built as a json-c tree and written once (lib/json.h).  Every
 * string a target supplies (paths, names, scripts) goes in through
 * json__text(): bytes that are not UTF-8 become U+FFFD, so the output
 * always parses.  err is sticky: the first allocation that fails makes
 * the listing fail with -ENOMEM.
 */
struct json_writer {
	int err;
};

/*
 * Add v under key; v NULL is JSON null when null_ok, a failed allocation
 * otherwise.  o NULL (its allocation failed) takes nothing.
 */
static void put(struct json_writer *w, struct json_object *o, const char *key,
		struct json_object *v, bool null_ok)
{
	if (!o || (!v && !null_ok) || json_object_object_add(o, key, v)) {
		json_object_put(v);
		w->err = -ENOMEM;
	}
}

static void put_text(struct json_writer *w, struct json_object *o, const char *key,
		     const char *s)
{
	put(w, o, key, json__text(s), !s);
}

static void put_bool(struct json_writer *w, struct json_object *o, const char *key, bool v)
{
	put(w, o, key, json_object_new_boolean(v), false);
}

static void put_u64(struct json_writer *w, struct json_object *o, const char *key, uint64_t v)
{
	put(w, o, key, json_object_new_uint64(v), false);
}

static void put_hex(struct json_writer *w, struct json_object *o, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	put(w, o, key, json_object_new_string(buf), false);
}

static void push(struct json_writer *w, struct json_object *a, struct json_object *v)
{
	if (!a || !v || json_object_array_add(a, v)) {
		json_object_put(v);
		w->err = -ENOMEM;
	}
}

static struct json_object *json_tls(struct json_writer *w, const struct discover_tls *t)
{
	struct json_object *o = json_object_new_object();

	put_text(w, o, "symbol", DISCOVER_TLS_SYMBOL);
	put_bool(w, o, "found", t->found);
	put_text(w, o, "object", t->object);
	put_bool(w, o, "in_executable", t->in_executable);
	if (t->load_bias_known)
		put_hex(w, o, "load_bias", t->load_bias);
	else
		put(w, o, "load_bias", NULL, true);
	put_bool(w, o, "supported", t->supported);
	if (t->found) {
		put_hex(w, o, "st_value", t->st_value);
		put_u64(w, o, "tls_memsz", t->tls_memsz);
		put_u64(w, o, "tls_align", t->tls_align);
	}
	put(w, o, "tp_offset", t->supported ? json_object_new_int64(t->tp_offset) : NULL,
	    !t->supported);
	put_text(w, o, "why_unsupported", t->supported ? NULL : t->why_unsupported);
	return o;
}

/* The scripts of one code log, or why it was not read. */
static void json_log_scripts(struct json_writer *w, struct json_object *o,
			     const struct log_view *v)
{
	struct json_object *scripts;
	size_t n;

	struct v8log_scan *scan = v->log ? v->log->scan : NULL;

	if (!scan) {
		put(w, o, "scripts", NULL, true);
		put_text(w, o, "error", log_error(v->err));
		return;
	}
	put_text(w, o, "v8_version", *v8log_scan__version(scan) ? v8log_scan__version(scan) : NULL);
	scripts = json_object_new_array();
	put(w, o, "scripts", scripts, false);
	n = v8log_scan__count(scan);
	for (size_t i = 0; scripts && i < n; i++) {
		const struct v8log_scan_script *sc = v8log_scan__at(scan, i);
		struct json_object *so;

		if (!sc)
			continue;
		so = json_object_new_object();
		put(w, so, "id", json_object_new_int(sc->id), false);
		put_text(w, so, "name", sc->name);
		put_text(w, so, "sha256", sc->sha256_hex[0] ? sc->sha256_hex : NULL);
		put_u64(w, so, "source_bytes", sc->source_len);
		put_bool(w, so, "internal", script_is_internal(sc->name));
		push(w, scripts, so);
	}
}

static const char *created_str(const struct listing_log *info, char *buf, size_t len);

/* The isolate of a log, or NULL when it is not known. */
static const struct listing_log *view_isolate(const struct log_view *v)
{
	return v->log && v->log->known ? v->log : NULL;
}

/* [{"class_name": ..., "unique_key": ... or null}] */
static struct json_object *json_namespaces(struct json_writer *w, const struct workerd_service *s)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; a && i < s->nr_namespaces; i++) {
		struct json_object *ns = json_object_new_object();

		put_text(w, ns, "class_name", s->namespaces[i].class_name);
		put_text(w, ns, "unique_key", s->namespaces[i].unique_key);
		push(w, a, ns);
	}
	return a;
}

static struct json_object *json_strings(struct json_writer *w, char *const *a, size_t n)
{
	struct json_object *arr = json_object_new_array();

	for (size_t i = 0; arr && i < n; i++)
		push(w, arr, json__text(a[i]));
	return arr;
}

/*
 * {"address", "listed", "confirmed", "not_listed", "not_in_config"} (the
 * last three with a config), or {"address", "error"}
 */
static struct json_object *json_inspector(struct json_writer *w, const struct inspector_names *in,
					  bool known)
{
	struct json_object *o = json_object_new_object();

	put_text(w, o, "address", in->address);
	if (in->err) {
		put_text(w, o, "error", in->why);
		return o;
	}
	put(w, o, "listed", json_strings(w, in->listed, in->nr_listed), false);
	if (!known)
		return o;
	put_u64(w, o, "confirmed", in->confirmed);
	put(w, o, "not_listed", json_strings(w, in->not_listed, in->nr_not_listed), false);
	put(w, o, "not_in_config", json_strings(w, in->not_in_config, in->nr_not_in_config),
	    false);
	return o;
}

/*
 * {"known": true, "services": [...], "inspector": ...} or {"known": false,
 * "why": "...", "inspector": ...}; inspector null without one (in NULL)
 */
static struct json_object *json_services(struct json_writer *w, const struct discover_proc *p,
					 const struct workerd_config *cfg,
					 const struct inspector_names *in)
{
	struct json_object *o = json_object_new_object(), *names;
	const char *why = service_map__why_unknown(services, p->pid);

	put_bool(w, o, "known", !why);
	put(w, o, "inspector", in ? json_inspector(w, in, !why) : NULL, !in);
	if (why) {
		put_text(w, o, "why", why);
		return o;
	}
	names = json_object_new_array();
	put(w, o, "services", names, false);
	for (size_t i = 0; cfg && names && i < cfg->nr_services; i++) {
		struct json_object *so = json_object_new_object();

		put_text(w, so, "name", cfg->services[i].name);
		put_bool(w, so, "worker", cfg->services[i].is_worker);
		put(w, so, "namespaces", json_namespaces(w, &cfg->services[i]), false);
		push(w, names, so);
	}
	return o;
}

static struct json_object *json_code_log(struct json_writer *w, const struct discover_proc *p,
					 size_t i, const struct log_view *view)
{
	const struct discover_code_log *l = &p->logs[i];
	const struct listing_log *info = view_isolate(view);
	struct json_object *o = json_object_new_object();
	char when[32];

	put_text(w, o, "path", l->path);
	put_hex(w, o, "isolate", l->isolate);
	put_u64(w, o, "size", l->size);
	put_bool(w, o, "open", l->open);
	put_text(w, o, "name", info ? shown_name(info, view->service) : NULL);
	put_text(w, o, "service", view->service ? view->service->name : NULL);
	put(w, o, "namespaces", view->service ? json_namespaces(w, view->service) : NULL, true);
	put_text(w, o, "version", info ? info->version : NULL);
	put_text(w, o, "version_full", info && info->version_full[0] ? info->version_full : NULL);
	/* a listing loads no labels (--version-labels is record's) */
	put_text(w, o, "label", NULL);
	put_text(w, o, "created",
		 info && info->created_ns ? created_str(info, when, sizeof(when)) : NULL);
	if (activity)
		put_u64(w, o, "recent_samples", recent_samples(p->pid, l->isolate));
	json_log_scripts(w, o, view);
	return o;
}

static struct json_object *json_proc(struct json_writer *w, const struct discover_proc *p,
				     struct listing_cache *cache)
{
	struct json_object *o = json_object_new_object(), *perf_map, *logs, *listening, *svc = NULL;
	struct log_view view;

	put(w, o, "pid", json_object_new_int(p->pid), false);
	put(w, o, "nspid", json_object_new_int(p->nspid), false);
	put_text(w, o, "comm", p->comm);
	put_text(w, o, "exe", p->exe);
	put_text(w, o, "runtime", discover__runtime_name(p->runtime));
	put_text(w, o, "version", p->version);
	put_text(w, o, "build_id", p->build_id);
	put(w, o, "tls", json_tls(w, &p->tls), false);
	if (p->runtime == DISCOVER_WORKERD) {
		struct inspector_names in;
		int asked = ask_inspector(p, &in);

		if (asked < 0)
			w->err = asked;
		svc = json_services(w, p, service_map__config(services, p->pid),
				    asked > 0 ? &in : NULL);
		put(w, o, "services", svc, false);
		if (asked > 0)
			inspector_names__free(&in);
	}

	{
		struct json_object *lay = json_object_new_object();
		struct v8_layout l;
		bool known = p->build_id[0] &&
			     !v8layout__load(v8layout__state_dir(), p->build_id, &l, NULL, 0);

		put(w, o, "v8_layout", lay, false);
		put_bool(w, lay, "calibrated", known);
		put_text(w, lay, "state_dir", v8layout__state_dir());
	}
	perf_map = json_object_new_object();
	put(w, o, "perf_map", perf_map, false);
	put_text(w, perf_map, "path", p->perf_map);
	put_bool(w, perf_map, "exists", p->perf_map_exists);
	put_bool(w, perf_map, "open", p->perf_map_open);

	logs = json_object_new_array();
	put(w, o, "code_logs", logs, false);
	for (size_t i = 0; logs && i < p->nr_logs && !w->err; i++) {
		if (read_log(cache, p, i, &view)) {
			w->err = -ENOMEM;
			break;
		}
		push(w, logs, json_code_log(w, p, i, &view));
	}

	/* what matching the logs' isolates to services could not read */
	if (svc && !w->err) {
		const char *const *notes;
		size_t n = service_map__notes(services, p->pid, &notes);
		struct json_object *a = json_object_new_array();

		for (size_t i = 0; a && i < n; i++)
			push(w, a, json__text(notes[i]));
		put(w, svc, "notes", a, false);
	}

	listening = json_object_new_array();
	put(w, o, "listening", listening, false);
	for (size_t i = 0; listening && i < p->nr_listening; i++)
		push(w, listening, json__text(p->listening[i]));
	put_text(w, o, "inspector", p->inspector);
	put_text(w, o, "inspector_flag", p->inspector_flag);
	return o;
}

static int print_json(FILE *out, const struct discover_list *list, struct listing_cache *cache)
{
	struct json_writer w = { 0 };
	struct json_object *all = json_object_new_array();

	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < list->nr && !w.err; i++)
		push(&w, all, json_proc(&w, &list->procs[i], cache));
	if (!w.err)
		w.err = json__write(out, all, true);
	json_object_put(all);
	return w.err;
}

/* ---- table -------------------------------------------------------------- */

static const char *created_str(const struct listing_log *info, char *buf, size_t len)
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
	struct v8log_scan *scan = v->log ? v->log->scan : NULL;
	const struct v8log_scan_script *sc;
	size_t i, n, internal = 0;

	if (!scan) {
		fprintf(out, "        (log unreadable: %s)\n", log_error(v->err));
		return;
	}
	n = v8log_scan__count(scan);
	for (i = 0; i < n; i++) {
		sc = v8log_scan__at(scan, i);
		if (!sc)
			continue;
		if (script_is_internal(sc->name)) {
			internal++;
			continue;
		}
		fprintf(out, "        script %-40s sha256 %.12s\n", esc(sc->name),
			sc->sha256_hex[0] ? sc->sha256_hex : "-");
	}
	if (internal)
		fprintf(out, "        (and %zu internal script%s)\n", internal,
			internal == 1 ? "" : "s");
}

/* "a, b, c", each escaped */
static void print_names(FILE *out, char *const *a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%s%s", i ? ", " : "", esc(a[i]));
}

/* What p's open inspector says of the names, under p's line; 0 or -ENOMEM. */
static int print_inspector(FILE *out, const struct discover_proc *p)
{
	struct inspector_names in;
	int asked = ask_inspector(p, &in);

	if (asked <= 0)
		return asked;
	if (in.err) {
		fprintf(out, "    note: inspector at %s: %s\n", esc(in.address), esc(in.why));
	} else if (service_map__why_unknown(services, p->pid)) {
		fprintf(out, "    the inspector at %s lists the services: ", esc(in.address));
		print_names(out, in.listed, in.nr_listed);
		fputs(in.nr_listed ? " (isolates not matched to them)\n" : "none\n", out);
	} else {
		if (!in.nr_not_listed && !in.nr_not_in_config)
			fprintf(out, "    service names confirmed by the inspector at %s (%zu of %zu)\n",
				esc(in.address), in.confirmed, in.confirmed);
		if (in.nr_not_listed) {
			fprintf(out, "    note: the inspector at %s does not list the config's "
				"services ", esc(in.address));
			print_names(out, in.not_listed, in.nr_not_listed);
			fputc('\n', out);
		}
		if (in.nr_not_in_config) {
			fprintf(out, "    note: the inspector at %s lists services the config does "
				"not name: ", esc(in.address));
			print_names(out, in.not_in_config, in.nr_not_in_config);
			fputs(" (the config read may not be the one running)\n", out);
		}
	}
	inspector_names__free(&in);
	return 0;
}

static int print_table(FILE *out, const struct discover_list *list, struct listing_cache *cache)
{
	char runtime[96], build_id[BUILD_ID_SHORT + 1], when[32];
	struct log_view view;
	size_t i, j;

	fprintf(out, "%-8s %-24s %-12s %-8s %-4s %-22s %s\n", "PID", "RUNTIME", "BUILD-ID",
		"PERF-MAP", "LOGS", "INSPECTOR", "COMM");
	for (i = 0; i < list->nr; i++) {
		const struct discover_proc *p = &list->procs[i];

		snprintf(runtime, sizeof(runtime), "%s %s", discover__runtime_name(p->runtime),
			 esc(p->version));
		snprintf(build_id, sizeof(build_id), "%s", *p->build_id ? esc(p->build_id) : "-");
		fprintf(out, "%-8d %-24s %-12s %-8s %-4zu %-22s %s\n", p->pid, runtime, build_id,
			p->perf_map_exists ? "yes" : "no", p->nr_logs,
			p->inspector ? esc(p->inspector) : "-", esc(p->comm));
		if (service_map__why_unknown(services, p->pid))
			fprintf(out, "    %s\n", esc(service_map__why_unknown(services, p->pid)));
		if (!p->perf_map_exists && p->build_id[0]) {
			struct v8_layout l;

			if (!v8layout__load(v8layout__state_dir(), p->build_id, &l, NULL, 0))
				fprintf(out, "    JS named from V8's heap: its binary is calibrated\n");
			else
				fprintf(out, "    JS not named: no perf map, and its binary is not "
					"calibrated (isoprof calibrate /proc/%d/exe)\n", p->pid);
		}
		if (print_inspector(out, p))
			return -ENOMEM;
		for (j = 0; j < p->nr_logs; j++) {
			const struct listing_log *info;

			if (read_log(cache, p, j, &view))
				return -ENOMEM;
			info = view_isolate(&view);

			fprintf(out, "    isolate 0x%" PRIx64 "  %s  version %s  created %s",
				p->logs[j].isolate, info ? esc(shown_name(info, view.service)) : "?",
				info ? esc(info->version) : "unknown",
				created_str(info, when, sizeof(when)));
			if (activity)
				fprintf(out, "  samples %" PRIu64 " in %ld ms",
					recent_samples(p->pid, p->logs[j].isolate), activity->ms);
			fputc('\n', out);
			for (size_t k = 0; view.service && k < view.service->nr_namespaces; k++)
				fprintf(out, "        durable object namespace %s (uniqueKey %s)\n",
					esc(view.service->namespaces[k].class_name),
					view.service->namespaces[k].unique_key
						? esc(view.service->namespaces[k].unique_key)
						: "none: ephemeral");
			fprintf(out, "        log %s%s\n", esc(p->logs[j].path),
				p->logs[j].open ? "" : "  (closed)");
			print_log_scripts(out, &view);
		}
		{
			const char *const *notes;
			size_t n = service_map__notes(services, p->pid, &notes);

			for (size_t k = 0; k < n; k++)
				fprintf(out, "    note: %s\n", esc(notes[k]));
		}
		if (!p->tls.supported)
			fprintf(out, "    current isolate: %s\n", esc(p->tls.why_unsupported));
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

/*
 * One listing to out: discovery, then every code log through cache.  The
 * command's exit status (0, 1).
 */
static int list_once(FILE *out, const struct targets_env *env, struct listing_cache *cache)
{
	struct discover_list *list = NULL;
	size_t i;
	int err, ret = 0;

	err = discover__scan(env->npids ? env->pids : NULL, env->npids, DISCOVER_ALL, &list);
	if (err) {
		fprintf(stderr, "isoprof: targets: %s\n", strerror(-err));
		return 1;
	}
	for (i = 0; i < list->nr_misses; i++) {
		fprintf(stderr, "isoprof: pid %d: %s\n", list->misses[i].pid,
			miss_reason(list->misses[i].err));
		ret = 1;
	}

	if (env->sample_ms && list->nr) {
		static struct activity seen;

		if (sample_activity(list, env->sample_ms, &seen))
			ret = 1;
		else
			activity = &seen;
	}
	/* workerd's configs: service names and Durable Object namespaces */
	service_map__begin(services);
	for (i = 0; i < list->nr && !err; i++)
		err = service_map__add_process(services, &list->procs[i]);
	listing_cache__begin(cache);
	if (err)
		err = -ENOMEM;
	else if (env->json)
		err = print_json(out, list, cache);
	else if (list->nr)
		err = print_table(out, list, cache);
	else if (!env->npids)
		fprintf(out, "No V8 runtime found (%zu other processes looked at).\n",
			list->scanned);
	listing_cache__end(cache);
	service_map__end(services);

	/* Exited ones (zombies included) are not worth a line; unreadable ones are. */
	if (!env->json && !env->npids && list->skipped_denied)
		fprintf(out, "%zu processes could not be inspected (permission denied: run as root "
			"to see them).\n", list->skipped_denied);
	if (err) {
		fprintf(stderr, "isoprof: targets: %s\n", strerror(-err));
		ret = 1;
	}
	discover__free(list);
	return ret;
}

/*
 * --requests (isoprof serve's helper, privsep.h): one listing per byte read
 * on stdin, each written to stdout as one frame (struct
 * daemon_frame, then the JSON), with one cache for all of them:
 * a call reads only the code logs that changed since the one before.
 * Ends at the end of stdin.
 */
static int serve_requests(const struct targets_env *env, struct listing_cache *cache)
{
	struct daemon_frame fr = { .magic = DAEMON_FRAME_MAGIC };
	char *buf = NULL, c;
	size_t len = 0;
	ssize_t n;
	FILE *out;

	for (;;) {
		n = read(STDIN_FILENO, &c, 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? 1 : 0;
		out = open_memstream(&buf, &len);
		if (!out) {
			fprintf(stderr, "isoprof: targets: %s\n", strerror(errno));
			return 1;
		}
		fr.status = list_once(out, env, cache);
		if (fclose(out)) {
			fprintf(stderr, "isoprof: targets: %s\n", strerror(errno));
			fr.status = 1;
			len = 0;
		}
		fr.len = len;
		/* the messages of this listing before its frame (the helper reads them after) */
		fflush(stderr);
		if (fileio__write_all(STDOUT_FILENO, &fr, sizeof(fr)) ||
		    fileio__write_all(STDOUT_FILENO, buf, len)) {
			free(buf);
			return 1;
		}
		free(buf);
		buf = NULL;
		len = 0;
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
	struct listing_cache *cache;
	int err, ret;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	/* reading /proc and the targets' files; BPF only for --sample-ms (caps.h) */
	err = caps__start(CAPS_DISCOVERY, env.sample_ms ? CAPS_NEED_BPF : 0);
	if (err) {
		fprintf(stderr, "isoprof: targets: cannot drop privileges: %s\n", strerror(-err));
		return 1;
	}
	/* kept between listings, with the service map (--requests) */
	cache = listing_cache__new();
	services = service_map__new();
	if (!cache || !services) {
		fprintf(stderr, "isoprof: targets: %s\n", strerror(errno));
		listing_cache__free(cache);
		service_map__free(services);
		return 1;
	}
	if (env.requests)
		ret = serve_requests(&env, cache);
	else
		ret = list_once(stdout, &env, cache);
	listing_cache__free(cache);
	service_map__free(services);
	if (env.requests)
		return ret;
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "isoprof: targets: writing output: %s\n", strerror(errno));
		ret = 1;
	}
	return ret;
}
