// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* source_maps: each script's source map, found once; see source_maps.h. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "user/attribute/source_maps.h"
#include "lib/array.h"
#include "lib/textescape.h"
#include "lib/fileio.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/v8json.h"
#include "symbolize/sourcemap.h"
#include "symbolize/v8log.h"
#include "user/attribute/isolates.h"
#include "user/attribute/services.h"

/* A script's file or map read from a target, or from DIR. */
#define SOURCE_MAPS_FILE_MAX SOURCEMAP_MAX_BYTES
/*
 * The maps one capture decodes, in bytes of JSON: each map is kept for the
 * capture (V8's side is mapped after isoprof's), about 20 bytes a segment.
 */
#define SOURCE_MAPS_DECODE_MAX (1ull << 30)

struct sm_script {
	pid_t pid;
	char *service;		/* workerd: the isolate's service; NULL otherwise */
	char *script;
	struct sourcemap *map;	/* NULL: none usable */
	char *where;
	bool checked;
	char *problem;
	size_t mapped, unmapped;
};

struct source_maps {
	struct source_maps_opts o;
	uint64_t decoded;		/* bytes of JSON decoded so far */
	struct sm_script *scripts;
	size_t nr, cap;
	struct index_table by_key;
};

struct sm_key {
	pid_t pid;
	const char *service;
	const char *script;
};

struct source_maps *source_maps__new(const struct source_maps_opts *o)
{
	struct source_maps *sms = calloc(1, sizeof(*sms));

	if (!sms) {
		errno = ENOMEM;
		return NULL;
	}
	if (o)
		sms->o = *o;
	return sms;
}

void source_maps__free(struct source_maps *sms)
{
	if (!sms)
		return;
	for (size_t i = 0; i < sms->nr; i++) {
		struct sm_script *e = &sms->scripts[i];

		free(e->service);
		free(e->script);
		sourcemap__free(e->map);
		free(e->where);
		free(e->problem);
	}
	free(sms->scripts);
	index_table__release(&sms->by_key);
	free(sms);
}

bool source_maps__has_dir(const struct source_maps *sms)
{
	return sms && sms->o.dir;
}

static uint32_t key_hash(const struct sm_key *k)
{
	uint64_t h = hash__word(HASH_SEED, (uint64_t)k->pid);

	h = hash__field(h, k->service ? k->service : "");
	return hash__fold32(hash__field(h, k->script));
}

static bool key_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct sm_script *e = &((const struct source_maps *)ctx)->scripts[idx];
	const struct sm_key *k = key;

	return e->pid == k->pid && !strcmp(e->script, k->script) &&
	       !strcmp(e->service ? e->service : "", k->service ? k->service : "");
}

/* ---- reading ---------------------------------------------------------------- */

static void set_problem(struct sm_script *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_problem(struct sm_script *e, const char *fmt, ...)
{
	va_list ap;
	char *s;

	/* the first problem is the one to fix; the later candidates only fell back */
	if (e->problem)
		return;
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		e->problem = s;
	va_end(ap);
}

/* Charge want bytes to the budget: true when they may be read. */
static bool charge(struct source_maps *sms, uint64_t want)
{
	uint64_t take = read_budget__take(sms->o.budget, want);

	if (take < want) {
		read_budget__give_back(sms->o.budget, take);
		return false;
	}
	return true;
}

/*
 * Read path under opts (a target's file, or one in DIR): *data
 * NUL-terminated.  0 or -errno with why.
 */
static int read_safe(struct source_maps *sms, const char *path, const struct safe_open_opts *opts,
		     char **data, size_t *len, char *why, size_t whylen)
{
	struct safe_open_info info;
	uint8_t *buf = NULL;
	int fd, err;

	*data = NULL;
	memset(&info, 0, sizeof(info));
	fd = safe_open__file(path, opts, &info);
	if (fd < 0) {
		snprintf(why, whylen, "%s", fd == -ENOENT ? "not found" :
					    info.why[0] ? info.why : strerror(-fd));
		return fd;
	}
	if (!charge(sms, (uint64_t)info.st.st_size)) {
		close(fd);
		snprintf(why, whylen, "the capture's read budget is spent");
		return -EDQUOT;
	}
	err = fileio__read_fd(fd, SOURCE_MAPS_FILE_MAX, &buf, len);
	close(fd);
	if (err) {
		snprintf(why, whylen, "%s", err == -EFBIG ? "too large" : strerror(-err));
		return err;
	}
	*data = (char *)buf;
	return 0;
}

/* A file of process pid's, by its absolute path there. */
static int read_target_file(struct source_maps *sms, pid_t pid, const char *path, char **data,
			    size_t *len, char *why, size_t whylen)
{
	char root[64];
	struct safe_open_opts o = {
		.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT,
		.root = root,
		.proc_root = sms->o.proc_root,
		.max_bytes = SOURCE_MAPS_FILE_MAX,
	};
	int err;

	/* workerd's files are read as its config's are (import path, notes) */
	if (sms->o.services && service_map__config(sms->o.services, pid))
		return service_map__read_file(sms->o.services, pid, path, data, len, why, whylen);
	err = safe_open__target_uid(sms->o.proc_root, pid, &o.uid);
	if (err) {
		snprintf(why, whylen, "the process is gone");
		return err;
	}
	snprintf(root, sizeof(root), "%s/%d/root", sms->o.proc_root ? sms->o.proc_root : "/proc",
		 pid);
	return read_safe(sms, path, &o, data, len, why, whylen);
}

/* The path in a script name that is one: "/srv/a.js", "file:///srv/a.js"; else NULL. */
static const char *script_path(const char *script)
{
	if (!strncmp(script, "file://", 7))
		script += 7;
	return script[0] == '/' ? script : NULL;
}

/* The last path component of s (up to any '?' or '#'), into buf. */
static void file_name(const char *s, size_t len, char *buf, size_t buflen)
{
	const char *end = s + len, *p;

	for (p = s; p < end; p++)
		if (*p == '?' || *p == '#') {
			end = p;
			break;
		}
	for (p = end; p > s && p[-1] != '/'; p--)
		;
	snprintf(buf, buflen, "%.*s", (int)(end - p), p);
}

/*
 * Try a candidate's JSON: parsed, and checked against the script's text
 * when there is one.  1 used, 0 not (a problem noted), -ENOMEM.
 */
static int try_map(struct source_maps *sms, struct sm_script *e, const char *json, size_t len,
		   const char *where, const char *text, size_t text_len)
{
	struct sourcemap *map = NULL;
	struct sourcemap_check c;
	char err[256] = "";
	int rc;

	if (len > SOURCE_MAPS_DECODE_MAX - sms->decoded) {
		set_problem(e, "%s: not decoded: the capture's source maps reached their cap of "
			    "%llu MiB", where, (unsigned long long)(SOURCE_MAPS_DECODE_MAX >> 20));
		return 0;
	}
	sms->decoded += len;
	rc = sourcemap__parse(json, len, &map, err, sizeof(err));

	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		set_problem(e, "%s: not a usable source map: %s", where,
			    err[0] ? err : strerror(-rc));
		return 0;
	}
	if (text) {
		sourcemap__check_script(map, text, text_len, &c);
		if (!sourcemap_check__matches(&c)) {
			set_problem(e,
				    "%s does not match the script (a map of another build?): "
				    "%zu of %zu positions outside it, %zu of %zu names not on an "
				    "identifier",
				    where, c.outside, c.segments, c.named - c.named_on_identifier,
				    c.named);
			sourcemap__free(map);
			return 0;
		}
	}
	e->where = strdup(where);
	if (!e->where) {
		sourcemap__free(map);
		return -ENOMEM;
	}
	e->map = map;
	e->checked = text != NULL;
	return 1;
}

/* A candidate file: read (target's or DIR's), then tried.  1, 0, -ENOMEM. */
static int try_file(struct source_maps *sms, struct sm_script *e, const char *path, bool in_target,
		    bool quiet_missing, const char *text, size_t text_len)
{
	struct safe_open_opts dir_opts = { .max_bytes = SOURCE_MAPS_FILE_MAX };
	char why[160] = "", *json = NULL;
	size_t len = 0;
	int rc;

	rc = in_target ? read_target_file(sms, e->pid, path, &json, &len, why, sizeof(why)) :
			 read_safe(sms, path, &dir_opts, &json, &len, why, sizeof(why));
	if (rc == -ENOMEM)
		return rc;
	if (rc == -ENOENT && !quiet_missing)
		set_problem(e, "its source map %s was not found", path);
	else if (rc && rc != -ENOENT)
		set_problem(e, "%s: %s", path, why);
	if (rc)
		return 0;
	rc = try_map(sms, e, json, len, path, text, text_len);
	free(json);
	return rc;
}

/*
 * The script's text and file.  The text V8 runs is the code log's, when it
 * has it (a file may have changed since the runtime read it); else the
 * file's: workerd's module, as its config names it, or node's path.
 */
static int script_text(struct source_maps *sms, struct sm_script *e,
		       const struct v8log_script *logged, char **owned, const char **text,
		       size_t *len, char **file)
{
	char why[160];
	const char *path;
	size_t file_len;
	int rc;

	*owned = *file = NULL;
	*text = NULL;
	*len = 0;
	if (logged && logged->source) {
		*text = logged->source;
		*len = logged->source_len;
	}
	if (sms->o.services && service_map__config(sms->o.services, e->pid)) {
		rc = service_map__module_text(sms->o.services, e->pid, e->service, e->script, owned,
					      &file_len, file, why, sizeof(why));
		if (rc == -ENOMEM)
			return rc;
		if (!rc && !*text) {
			*text = *owned;
			*len = file_len;
		}
		if (!rc)
			return 0;
	}
	path = script_path(e->script);
	if (path && !*text) {
		rc = read_target_file(sms, e->pid, path, owned, len, why, sizeof(why));
		if (rc == -ENOMEM)
			return rc;
		if (!rc)
			*text = *owned;
	}
	if (path && !*file) {
		*file = strdup(path);
		if (!*file)
			return -ENOMEM;
	}
	return 0;
}

static bool is_data_url(const char *url, size_t len)
{
	return len >= 5 && !strncasecmp(url, "data:", 5);
}

/* A URL with a scheme other than file: (https://...): not a file of the host's. */
static bool is_remote_url(const char *url, size_t len)
{
	const char *colon = memchr(url, ':', len);

	if (!colon || (len >= 7 && !strncmp(url, "file://", 7)))
		return false;
	for (const char *p = url; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '+' ||
		      *p == '-' || *p == '.'))
			return false;
	return colon > url;
}

static int find_map(struct source_maps *sms, struct sm_script *e, uint64_t isolate)
{
	const struct v8log_script *logged =
		sms->o.reg && e->pid ? isolate_registry__script(sms->o.reg, e->pid, isolate, e->script) :
				       NULL;
	const char *text = NULL, *url = NULL;
	char *owned = NULL, *file = NULL, *json = NULL, path[PATH_MAX], name[NAME_MAX + 1];
	size_t len = 0, url_len = 0, json_len;
	int rc = 0;

	if (e->pid) {
		rc = script_text(sms, e, logged, &owned, &text, &len, &file);
		if (rc)
			goto out;
	}
	if (!(text && sourcemap__url_in_script(text, len, &url, &url_len)) && logged &&
	    logged->source_mapping_url && *logged->source_mapping_url) {
		url = logged->source_mapping_url;
		url_len = strlen(url);
	}
	/* 1. inline */
	if (url && is_data_url(url, url_len)) {
		rc = sourcemap__decode_data_url(url, url_len, &json, &json_len);
		if (rc == -ENOMEM)
			goto out;
		if (rc) {
			set_problem(e, "inline source map: not a readable data: URL");
			rc = 0;
		} else {
			rc = try_map(sms, e, json, json_len, "inline", text, len);
			if (rc)
				goto out;
		}
	}
	/* 2. next to the script's file */
	if (url && !is_data_url(url, url_len) && !is_remote_url(url, url_len) && file) {
		const char *u = url;
		size_t ulen = url_len;
		const char *slash = strrchr(file, '/');
		int n;

		if (ulen >= 7 && !strncmp(u, "file://", 7)) {
			u += 7;
			ulen -= 7;
		}
		/* "worker.js.map?v=3": a query or fragment names no file */
		for (size_t i = 0; i < ulen; i++)
			if (u[i] == '?' || u[i] == '#') {
				ulen = i;
				break;
			}
		if (u[0] == '/')
			n = snprintf(path, sizeof(path), "%.*s", (int)ulen, u);
		else
			n = snprintf(path, sizeof(path), "%.*s/%.*s",
				     (int)(slash ? slash - file : 0), file, (int)ulen, u);
		if (n > 0 && (size_t)n < sizeof(path) && !memchr(u, '\n', ulen)) {
			rc = try_file(sms, e, path, true, sms->o.dir != NULL, text, len);
			if (rc)
				goto out;
		}
	}
	/* 3. the user's directory */
	if (sms->o.dir) {
		file_name(e->script, strlen(e->script), name, sizeof(name));
		if (*name && snprintf(path, sizeof(path), "%s/%s.map", sms->o.dir, name) <
				     (int)sizeof(path)) {
			rc = try_file(sms, e, path, false, true, text, len);
			if (rc)
				goto out;
		}
		if (url && !is_data_url(url, url_len)) {
			file_name(url, url_len, name, sizeof(name));
			if (*name && snprintf(path, sizeof(path), "%s/%s", sms->o.dir, name) <
					     (int)sizeof(path)) {
				rc = try_file(sms, e, path, false, true, text, len);
				if (rc)
					goto out;
			}
		}
		if (!e->map)
			set_problem(e, "no source map for it in %s", sms->o.dir);
	} else if (url && !e->map && !e->problem) {
		int n = url_len > 200 ? 200 : (int)url_len;

		if (!file && !is_data_url(url, url_len))
			set_problem(e, "its source map %.*s%s: the script's own file is not known "
				    "(several services have a module of its name, or no path), so "
				    "nothing beside it was looked at; give --source-maps DIR", n, url,
				    url_len > 200 ? "..." : "");
		else
			set_problem(e, "its source map %.*s%s was not found", n, url,
				    url_len > 200 ? "..." : "");
	}
out:
	free(json);
	free(owned);
	free(file);
	return rc < 0 ? rc : 0;
}

static struct sm_script *script_for(struct source_maps *sms, pid_t pid, uint64_t isolate,
				    const char *script, int *err)
{
	const struct isolate_info *info =
		sms->o.reg && pid ? isolate_registry__find(sms->o.reg, pid, isolate) : NULL;
	struct sm_key k = { pid, info ? info->service_name : NULL, script };
	uint32_t h = key_hash(&k);
	struct sm_script *e;
	size_t slot;
	long i;

	*err = 0;
	if (index_table__reserve(&sms->by_key)) {
		*err = -ENOMEM;
		return NULL;
	}
	i = index_table__lookup(&sms->by_key, h, key_is, sms, &k, &slot);
	if (i >= 0)
		return &sms->scripts[i];
	if (array_grow(&sms->scripts, &sms->cap, sms->nr + 1)) {
		*err = -ENOMEM;
		return NULL;
	}
	e = &sms->scripts[sms->nr];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->script = strdup(script);
	e->service = k.service ? strdup(k.service) : NULL;
	if (!e->script || (k.service && !e->service)) {
		free(e->script);
		free(e->service);
		*err = -ENOMEM;
		return NULL;
	}
	index_table__set(&sms->by_key, slot, h, (uint32_t)sms->nr);
	sms->nr++;
	*err = find_map(sms, e, isolate);
	return e;
}

int source_maps__map(struct source_maps *sms, pid_t pid, uint64_t isolate, const char *script,
		     const struct source_frame *frame, struct source_origin *out)
{
	struct sourcemap_pos fn, at;
	struct sm_script *e;
	const char *gen = frame->function ? frame->function : "", *last, *name = NULL;
	int err;

	if (!sms || !script || !*script || !isolate__is_user_script(script) || !frame->fn_line ||
	    !frame->fn_column)
		return 0;
	e = script_for(sms, pid, isolate, script, &err);
	if (!e)
		return err;
	if (err)
		return err;
	if (!e->map)
		return 0;
	if (sourcemap__lookup(e->map, frame->fn_line - 1, frame->fn_column - 1, &fn) ||
	    !fn.source) {
		e->unmapped++;
		return 0;
	}
	last = strrchr(gen, '.');
	last = last ? last + 1 : gen;
	if (*last && strcmp(gen, "(anonymous)"))
		name = sourcemap__function_name(e->map, frame->fn_line - 1, frame->fn_column - 1,
						strlen(last));
	out->function = name ? name : gen;
	out->file = fn.source;
	out->start_line = fn.line + 1;
	out->line = fn.line + 1;
	out->column = fn.column + 1;
	if (frame->at_line && frame->at_column &&
	    !sourcemap__lookup(e->map, frame->at_line - 1, frame->at_column - 1, &at) && at.source &&
	    !strcmp(at.source, fn.source)) {
		out->line = at.line + 1;
		out->column = at.column + 1;
	}
	e->mapped++;
	return 1;
}

bool source_maps__v8_frame(void *ctx, const char *function_name, const char *url, int64_t line,
			   int64_t column, struct v8_frame_origin *out)
{
	const struct source_maps_v8 *t = ctx;
	struct source_frame sf = {
		.function = function_name,
		.fn_line = line >= 0 && line < UINT32_MAX ? (uint32_t)line + 1 : 0,
		.fn_column = column >= 0 && column < UINT32_MAX ? (uint32_t)column + 1 : 0,
	};
	struct source_origin o;

	/* an error (ENOMEM) leaves the frame as V8 named it */
	if (source_maps__map(t->sms, t->pid, t->isolate, url, &sf, &o) <= 0)
		return false;
	out->function = o.function;
	out->file = o.file;
	out->start_line = o.start_line;
	out->line = o.line;
	out->column = 0;
	return true;
}

size_t source_maps__count(const struct source_maps *sms)
{
	return sms ? sms->nr : 0;
}

void source_maps__status(const struct source_maps *sms, size_t i, struct source_map_status *out)
{
	const struct sm_script *e = &sms->scripts[i];

	memset(out, 0, sizeof(*out));
	out->pid = e->pid;
	out->script = e->script;
	out->where = e->where;
	out->checked = e->checked;
	out->sources = e->map ? sourcemap__source_count(e->map) : 0;
	out->problem = e->problem;
	out->mapped = e->mapped;
	out->unmapped = e->unmapped;
}

/* Notes past this many are counted, not printed: a host of a thousand scripts. */
#define SOURCE_MAPS_NOTES_SHOWN 20

void source_maps__print_notes(const struct source_maps *sms)
{
	char a[TEXTESCAPE_SIZE(256)], b[TEXTESCAPE_SIZE(512)];
	size_t shown = 0, more = 0, used = 0, more_used = 0;

	for (size_t i = 0; i < source_maps__count(sms); i++) {
		struct source_map_status st;
		char pid[32] = "";

		source_maps__status(sms, i, &st);
		if (st.pid)
			snprintf(pid, sizeof(pid), "pid %d: ", st.pid);
		if (st.where && used == SOURCE_MAPS_NOTES_SHOWN)
			more_used++;
		else if (st.where && ++used)
			fprintf(stderr, "isoprof: source map: %s%s: %s (%zu source%s): %zu "
				"frame%s named from it%s%s\n", pid, textescape(st.script, a, sizeof(a)),
				textescape(st.where, b, sizeof(b)), st.sources, st.sources == 1 ? "" : "s",
				st.mapped, st.mapped == 1 ? "" : "s",
				st.unmapped ? ", some positions outside it" : "",
				st.checked || !st.pid ? "" : " (not checked against the script: its "
							     "text could not be read)");
		if (st.problem && shown == SOURCE_MAPS_NOTES_SHOWN) {
			more++;
		} else if (st.problem) {
			shown++;
			fprintf(stderr, "isoprof: note: source map: %s%s: %s%s\n", pid,
				textescape(st.script, a, sizeof(a)), textescape(st.problem, b, sizeof(b)),
				st.where ? "" : "; its frames keep their generated names");
		}
	}
	if (more_used)
		fprintf(stderr, "isoprof: source maps: %zu more script%s named from their maps\n",
			more_used, more_used == 1 ? "" : "s");
	if (more)
		fprintf(stderr, "isoprof: note: source maps: %zu more script%s with a note (record "
			"--json lists them all)\n", more, more == 1 ? "" : "s");
}
