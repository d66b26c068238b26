// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isolates: the isolate registry (see isolates.h, docs/attribution.md).
 *
 * Layout: one heap block per isolate (its isolate_info first, so the
 * pointer handed out never moves), found through an index_table on (pid,
 * address).  Every string an isolate_info points to is interned in one
 * registry-wide set and freed only with the registry, so names and labels
 * stay valid across updates and label reloads; script arrays that are
 * replaced are kept until then too (they are replaced only when an
 * isolate's scripts change).  The labels file is version_labels.h's.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "user/attribute/isolates.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/safe_open.h"
#include "lib/textscan.h"
#include "symbolize/v8log.h"
#include "symbolize/v8log_scan.h"
#include "user/attribute/version_labels.h"

struct iso_entry {
	struct isolate_info info;	/* first: handed out as the entry */
	struct v8log *log;
	uint64_t seq;			/* order the registry learnt of it */
	/* What info was last computed from (code log): user scripts, with source. */
	size_t seen_scripts, seen_sources, seen_restarts;
	bool stale;			/* recompute on the next update */
	const char *entry_script;	/* first user script of the log, interned */
	const char **scripts;		/* info.scripts when scripts_cap > 0 */
	size_t scripts_cap;
	const char **internal;		/* frames: runtime names seen, ascending */
	size_t nr_internal_names, internal_cap;
	char placeholder[32];		/* "isolate-0x<hex>" */
};

struct isolate_registry {
	/* isolates, in the order learnt, and by (pid, address) */
	struct iso_entry **all;
	size_t nr, all_cap;
	struct index_table by_key;
	const struct isolate_info **sorted;	/* by pid, address; nr_sorted valid */
	size_t nr_sorted;

	/* interned strings, and by text */
	char **strs;
	size_t strs_cap, nr_strs;
	struct index_table by_text;

	/* replaced script arrays, freed with the registry */
	void **graveyard;
	size_t nr_graveyard, graveyard_cap;

	struct version_labels labels;

	const char **names;		/* isolate_registry__names() */

	struct read_budget *budget;	/* not owned */
	char **notes;			/* code logs refused or cut, and why */
	size_t nr_notes, notes_cap;
};

static const char *const no_scripts[1];

/* ------------------------------------------------------------------ */
/* small pieces */

static uint32_t key_hash(pid_t pid, uint64_t isolate)
{
	return hash__fold32(hash__word(hash__word(HASH_SEED, (uint32_t)pid), isolate));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* First index in sorted arr[0..n) whose string is >= s. */
static size_t lower_bound(const char *const *arr, size_t n, const char *s)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(arr[mid], s) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool is_hex(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (textscan__hex_digit(s[i]) < 0)
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* interned strings, never removed */

static bool str_is(const void *ctx, uint32_t index, const void *key)
{
	const struct isolate_registry *reg = ctx;

	return !strcmp(reg->strs[index], key);
}

static const char *intern(struct isolate_registry *reg, const char *s)
{
	uint32_t h = hash__fold32(hash__str(HASH_SEED, s));
	size_t slot;
	char *copy;
	long i;

	if (index_table__reserve(&reg->by_text) ||
	    array_grow(&reg->strs, &reg->strs_cap, reg->nr_strs + 1))
		return NULL;
	i = index_table__lookup(&reg->by_text, h, str_is, reg, s, &slot);
	if (i >= 0)
		return reg->strs[i];
	copy = strdup(s);
	if (!copy)
		return NULL;
	index_table__set(&reg->by_text, slot, h, (uint32_t)reg->nr_strs);
	reg->strs[reg->nr_strs++] = copy;
	return copy;
}

static const char *intern_cb(void *ctx, const char *s)
{
	return intern(ctx, s);
}

/* Keep p until the registry goes: callers may still hold it. */
static int graveyard_reserve(struct isolate_registry *reg)
{
	return array_grow(&reg->graveyard, &reg->graveyard_cap, reg->nr_graveyard + 1);
}

static void graveyard_put(struct isolate_registry *reg, void *p)
{
	reg->graveyard[reg->nr_graveyard++] = p;
}

/* ------------------------------------------------------------------ */
/* isolates */

struct iso_key {
	pid_t pid;
	uint64_t isolate;
};

static bool entry_is(const void *ctx, uint32_t index, const void *key)
{
	const struct isolate_registry *reg = ctx;
	const struct iso_key *k = key;

	return reg->all[index]->info.pid == k->pid && reg->all[index]->info.isolate == k->isolate;
}

static struct iso_entry *reg_get(const struct isolate_registry *reg, pid_t pid, uint64_t isolate)
{
	struct iso_key k = { pid, isolate };
	long i = index_table__lookup(&reg->by_key, key_hash(pid, isolate), entry_is, reg, &k, NULL);

	return i < 0 ? NULL : reg->all[i];
}

static struct iso_entry *reg_get_or_create(struct isolate_registry *reg, pid_t pid,
					   uint64_t isolate)
{
	struct iso_key k = { pid, isolate };
	uint32_t h = key_hash(pid, isolate);
	struct iso_entry *e;
	size_t slot;
	long i;

	if (index_table__reserve(&reg->by_key) || array_grow(&reg->all, &reg->all_cap, reg->nr + 1))
		return NULL;
	i = index_table__lookup(&reg->by_key, h, entry_is, reg, &k, &slot);
	if (i >= 0)
		return reg->all[i];
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->info.pid = pid;
	e->info.isolate = isolate;
	snprintf(e->placeholder, sizeof(e->placeholder), "isolate-0x%" PRIx64, isolate);
	e->info.name = e->placeholder;
	e->info.scripts = no_scripts;
	strcpy(e->info.version, ISOLATE_VERSION_UNKNOWN);
	e->info.v8_version = "";
	e->seq = reg->nr;
	index_table__set(&reg->by_key, slot, h, (uint32_t)reg->nr);
	reg->all[reg->nr++] = e;
	return e;
}

static void entry_resolve_name(struct iso_entry *e)
{
	if (e->info.service_name)
		e->info.name = e->info.service_name;
	else if (e->info.has_code_log && e->entry_script)
		e->info.name = e->entry_script;
	else if (e->info.nr_scripts)
		e->info.name = e->info.scripts[0];
	else
		e->info.name = e->placeholder;
}

/* ------------------------------------------------------------------ */
/* labels */

static void entry_resolve_label(const struct isolate_registry *reg, struct iso_entry *e)
{
	const struct version_label *best = NULL;
	const char *full = e->info.version_full;
	size_t i;

	e->info.label = NULL;
	if (!reg->labels.nr || strlen(full) != SHA256_HEX_LEN - 1)
		return;
	if (e->info.service_name)
		version_labels__best(&reg->labels, e->info.service_name, full, &best);
	for (i = 0; i < e->info.nr_scripts; i++)
		version_labels__best(&reg->labels, e->info.scripts[i], full, &best);
	if (best)
		e->info.label = best->label;
}

/* ------------------------------------------------------------------ */
/* version ids */

struct vpair {
	const char *name;
	const char *src;
	size_t len;
};

static int cmp_vpair(const void *a, const void *b)
{
	const struct vpair *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = n ? memcmp(x->src, y->src, n) : 0;
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Sorts p, drops repeated pairs in place; returns how many are left. */
static size_t vpairs_sort_unique(struct vpair *p, size_t n)
{
	size_t i, k = 0;

	if (!n)
		return 0;
	qsort(p, n, sizeof(*p), cmp_vpair);
	for (i = 1, k = 1; i < n; i++)
		if (cmp_vpair(&p[k - 1], &p[i]))
			p[k++] = p[i];
	return k;
}

/* p sorted and unique. */
static void vpairs_hash(const struct vpair *p, size_t n, char out_hex[SHA256_HEX_LEN])
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct sha256_ctx ctx;
	size_t i;

	sha256__init(&ctx);
	for (i = 0; i < n; i++) {
		sha256__update(&ctx, p[i].name, strlen(p[i].name) + 1);
		sha256__update(&ctx, p[i].src, p[i].len);
		sha256__update(&ctx, "", 1);
	}
	sha256__final(&ctx, digest);
	sha256__hex(digest, out_hex);
}

int isolate__version_id(const char *const names[], const char *const sources[],
			const size_t lens[], size_t n, char out_hex[SHA256_HEX_LEN])
{
	struct vpair *p = NULL;
	size_t i;

	if (n && (!names || (sources && !lens)))
		return -EINVAL;
	if (n) {
		p = calloc(n, sizeof(*p));
		if (!p)
			return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (!names[i]) {
			free(p);
			return -EINVAL;
		}
		p[i].name = names[i];
		p[i].src = sources && sources[i] ? sources[i] : "";
		p[i].len = sources && sources[i] ? lens[i] : 0;
	}
	n = vpairs_sort_unique(p, n);
	vpairs_hash(p, n, out_hex);
	free(p);
	return 0;
}

/* ------------------------------------------------------------------ */
/* the user-script rule */

/* The runtime's own module name spaces and files (docs/attribution.md). */
static const char *const runtime_prefixes[] = {
	"node:",		/* node >= 16 built-ins; workerd's node compat */
	"workerd:",		/* workerd:per-isolate/... bootstrap */
	"cloudflare:",		/* workerd's cloudflare:workers & co. */
	"internal:",		/* workerd internal:unsafe-eval */
	"internal/",		/* node < 16 built-ins (internal/bootstrap/node.js) */
	"/workerd/",		/* workerd: kv.js, d1.js... (binary strings) */
};

static const char *const runtime_names[] = {
	"wasm-instantiate-shim.js",	/* workerd, in every isolate */
};

bool isolate__is_user_script(const char *name)
{
	size_t i, len;
	const char *p;

	if (!name || !*name || !strcmp(name, "<unknown>"))
		return false;
	for (i = 0; i < sizeof(runtime_prefixes) / sizeof(runtime_prefixes[0]); i++)
		if (!strncmp(name, runtime_prefixes[i], strlen(runtime_prefixes[i])))
			return false;
	for (i = 0; i < sizeof(runtime_names) / sizeof(runtime_names[0]); i++)
		if (!strcmp(name, runtime_names[i]))
			return false;
	/* "<word>-internal:": node-internal:, cloudflare-internal:, pyodide-internal: */
	for (p = name; isalnum((unsigned char)*p) || *p == '-' || *p == '_'; p++)
		;
	if (*p == ':' && p - name > 9 && !strncmp(p - 9, "-internal", 9))
		return false;
	/* node's wrappers of -e and eval workers: "[eval]-wrapper", "[worker eval]-wrapper" */
	len = strlen(name);
	if (name[0] == '[' && len > 9 && !strcmp(name + len - 9, "]-wrapper"))
		return false;
	return true;
}

/* name[0..n) is pattern, or ends with '/' and pattern */
static bool tail_matches(const char *name, size_t n, const char *pattern, size_t m)
{
	if (n == m)
		return !memcmp(name, pattern, m);
	return n > m && name[n - m - 1] == '/' && !memcmp(name + n - m, pattern, m);
}

bool isolate__script_matches(const char *name, const char *pattern)
{
	const char *dot, *slash;
	size_t m;

	if (!name || !pattern || !*pattern)
		return false;
	m = strlen(pattern);
	if (tail_matches(name, strlen(name), pattern, m))
		return true;
	/* a module named without its extension: "index" for "index.js" */
	dot = strrchr(name, '.');
	slash = strrchr(name, '/');
	if (!dot || dot == name || (slash && dot < slash) || dot[-1] == '/')
		return false;
	return tail_matches(name, (size_t)(dot - name), pattern, m);
}

/* ------------------------------------------------------------------ */
/* code logs */

static uint64_t now_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * V8 creates the log when the isolate starts logging, right after the
 * isolate is created: its birth time is the isolate's.  Some file systems
 * have none, or report 0: then the time it was first read.
 */
static void entry_set_created(struct iso_entry *e, const char *path)
{
	struct statx stx;

	e->info.created_is_btime = false;
	e->info.created_ns = now_ns();
	if (!statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_BTIME, &stx) && (stx.stx_mask & STATX_BTIME) &&
	    stx.stx_btime.tv_sec > 0) {
		e->info.created_ns = (uint64_t)stx.stx_btime.tv_sec * 1000000000ULL +
				     stx.stx_btime.tv_nsec;
		e->info.created_is_btime = true;
	}
}

static int entry_update_v8_version(struct isolate_registry *reg, struct iso_entry *e)
{
	const char *v8v = v8log__version(e->log);

	if (!strcmp(e->info.v8_version, v8v))
		return 0;
	v8v = intern(reg, v8v);
	if (!v8v)
		return -ENOMEM;
	e->info.v8_version = v8v;
	return 0;
}

/* User scripts in the log, those of them with a source; runtime ones into nr_internal. */
static void entry_count_scripts(struct iso_entry *e, size_t *nuser, size_t *nsrc)
{
	size_t count = v8log__script_count(e->log), i;
	const struct v8log_script *s;

	*nuser = *nsrc = 0;
	e->info.nr_internal = 0;
	for (i = 0; i < count; i++) {
		s = v8log__script_at(e->log, i);
		if (!s)
			continue;
		if (!isolate__is_user_script(s->name)) {
			e->info.nr_internal++;
			continue;
		}
		++*nuser;
		if (s->source)
			++*nsrc;
	}
}

/* An isolate's user scripts, gathered from its log. */
struct user_scripts {
	struct vpair *pairs;	/* sorted, unique */
	size_t nr_pairs;
	const char **names;	/* interned, ascending, unique */
	size_t nr_names;
	const char *entry;	/* the first the log names, interned; NULL when none */
};

static void user_scripts__release(struct user_scripts *us)
{
	free(us->pairs);
	free(us->names);
}

/* us->pairs[0..k) gathered, us->entry set: sort, drop repeats, intern the names. */
static int user_scripts__finish(struct isolate_registry *reg, struct user_scripts *us, size_t k)
{
	size_t i;

	us->nr_pairs = vpairs_sort_unique(us->pairs, k);
	for (i = 0; i < us->nr_pairs; i++) {
		if (us->nr_names && !strcmp(us->names[us->nr_names - 1], us->pairs[i].name))
			continue;
		us->names[us->nr_names] = intern(reg, us->pairs[i].name);
		if (!us->names[us->nr_names])
			return -ENOMEM;
		us->nr_names++;
	}
	if (us->entry && !(us->entry = intern(reg, us->entry)))
		return -ENOMEM;
	return 0;
}

static int user_scripts__collect(struct isolate_registry *reg, struct iso_entry *e, size_t nuser,
				 struct user_scripts *us)
{
	size_t count = v8log__script_count(e->log), k = 0, i;
	const struct v8log_script *s;

	memset(us, 0, sizeof(*us));
	if (!nuser)
		return 0;
	us->pairs = calloc(nuser, sizeof(*us->pairs));
	us->names = calloc(nuser, sizeof(*us->names));
	if (!us->pairs || !us->names)
		return -ENOMEM;
	for (i = 0; i < count && k < nuser; i++) {
		s = v8log__script_at(e->log, i);
		if (!s || !isolate__is_user_script(s->name))
			continue;
		if (!us->entry)
			us->entry = s->name;
		us->pairs[k].name = s->name;
		us->pairs[k].src = s->source ? s->source : "";
		us->pairs[k].len = s->source ? s->source_len : 0;
		k++;
	}
	return user_scripts__finish(reg, us, k);
}

/* The script names, taking us->names when they changed (the old array outlives them). */
static int entry_set_scripts(struct isolate_registry *reg, struct iso_entry *e,
			     struct user_scripts *us)
{
	size_t nn = us->nr_names, i;
	bool same = nn == e->info.nr_scripts;

	for (i = 0; same && i < nn; i++)
		same = us->names[i] == e->info.scripts[i];
	if (same)
		return 0;
	if (e->scripts_cap && graveyard_reserve(reg))
		return -ENOMEM;
	if (e->scripts_cap)
		graveyard_put(reg, e->scripts);
	if (nn) {
		e->scripts = us->names;
		e->scripts_cap = nn;
		e->info.scripts = us->names;
		us->names = NULL;
	} else {
		e->scripts = NULL;
		e->scripts_cap = 0;
		e->info.scripts = no_scripts;
	}
	e->info.nr_scripts = nn;
	return 0;
}

static void entry_put_version(struct iso_entry *e, const char hex[SHA256_HEX_LEN],
			      enum isolate_version_from from)
{
	memcpy(e->info.version_full, hex, SHA256_HEX_LEN);
	memcpy(e->info.version, hex, ISOLATE_VERSION_LEN);
	e->info.version[ISOLATE_VERSION_LEN] = '\0';
	e->info.version_from = from;
}

static void entry_clear_version(struct iso_entry *e)
{
	e->info.version_full[0] = '\0';
	strcpy(e->info.version, ISOLATE_VERSION_UNKNOWN);
	e->info.version_from = ISOLATE_VERSION_FROM_NONE;
}

static void entry_set_version(struct iso_entry *e, const struct user_scripts *us)
{
	char hex[SHA256_HEX_LEN];

	if (!us->nr_pairs) {
		/*
		 * A log with no user script (node's --perf-basic-prof writes one
		 * with none) says nothing against what the files said.
		 */
		if (e->info.version_from != ISOLATE_VERSION_FROM_FILES)
			entry_clear_version(e);
		return;
	}
	vpairs_hash(us->pairs, us->nr_pairs, hex);
	entry_put_version(e, hex, ISOLATE_VERSION_FROM_CODE_LOG);
	e->info.version_why = NULL;
}

/*
 * Scripts, version and name from the log, when its scripts changed since
 * the last time.  On failure info keeps what it had.
 */
static int entry_recompute(struct isolate_registry *reg, struct iso_entry *e)
{
	struct user_scripts us;
	struct v8log_stats st;
	size_t nuser, nsrc;
	int err;

	err = entry_update_v8_version(reg, e);
	if (err)
		return err;
	/*
	 * Hash again only when the user scripts changed: apps that eval or
	 * new Function() per request add unnamed scripts all the time, and a
	 * bundle may be tens of MB.
	 */
	v8log__stats(e->log, &st);
	entry_count_scripts(e, &nuser, &nsrc);
	if (!e->stale && nuser == e->seen_scripts && nsrc == e->seen_sources &&
	    st.restarts == e->seen_restarts)
		return 0;
	/* Rewritten from the start: another isolate (pid reuse) or run. */
	if (st.restarts != e->seen_restarts)
		entry_set_created(e, e->info.code_log_path);

	err = user_scripts__collect(reg, e, nuser, &us);
	if (!err)
		err = entry_set_scripts(reg, e, &us);
	if (err) {
		user_scripts__release(&us);
		return err;
	}
	e->entry_script = us.entry;
	entry_set_version(e, &us);
	user_scripts__release(&us);
	e->seen_scripts = nuser;
	e->seen_sources = nsrc;
	e->seen_restarts = st.restarts;
	e->stale = false;
	entry_resolve_name(e);
	entry_resolve_label(reg, e);
	return 0;
}

/* Drop what the JS-frame fallback gathered: the log knows better. */
static void entry_drop_fallback(struct iso_entry *e)
{
	free(e->internal);
	e->internal = NULL;
	e->nr_internal_names = e->internal_cap = 0;
	e->info.nr_internal = 0;
}

void isolate_registry__set_budget(struct isolate_registry *reg, struct read_budget *budget)
{
	reg->budget = budget;
}

size_t isolate_registry__notes(const struct isolate_registry *reg, const char *const **notes)
{
	*notes = (const char *const *)reg->notes;
	return reg->nr_notes;
}

/* Best effort, once per distinct text: a note lost to ENOMEM loses only itself. */
static void reg_note(struct isolate_registry *reg, const char *path, const char *why)
{
	char *note;

	if (asprintf(&note, "code log %s: %s", path, why) < 0)
		return;
	for (size_t i = 0; i < reg->nr_notes; i++) {
		if (!strcmp(reg->notes[i], note)) {
			free(note);
			return;
		}
	}
	if (array_grow(&reg->notes, &reg->notes_cap, reg->nr_notes + 1)) {
		free(note);
		return;
	}
	reg->notes[reg->nr_notes++] = note;
}

/* A read that failed for a reason a user should see (not "gone", not ENOMEM). */
static void reg_note_read(struct isolate_registry *reg, const char *path,
			  const struct v8log *log, int rc)
{
	const char *why = v8log__why(log);

	if (rc >= 0 || rc == -ENOENT || rc == -ENOMEM)
		return;
	reg_note(reg, path, *why ? why : strerror(-rc));
}

int isolate_registry__add_log(struct isolate_registry *reg, const char *path)
{
	return isolate_registry__add_log_pid(reg, 0, path, NULL);
}

int isolate_registry__add_log_pid(struct isolate_registry *reg, pid_t host_pid, const char *path,
				  const struct safe_open_opts *open)
{
	struct v8log_stats st;
	struct iso_entry *e;
	struct v8log *log;
	const char *ipath;
	uint64_t isolate;
	pid_t pid;
	int rc, rc2;

	if (!reg || !path || v8log__parse_filename(path, &isolate, &pid) || !isolate)
		return -EINVAL;
	if (host_pid > 0)
		pid = host_pid;
	e = reg_get(reg, pid, isolate);
	if (e && e->log && !strcmp(e->info.code_log_path, path)) {
		rc = v8log__update(e->log);
		reg_note_read(reg, path, e->log, rc);
		if (rc < 0 && rc != -ENOENT)
			return rc;
		rc2 = entry_recompute(reg, e);
		return rc2 ? rc2 : rc;
	}

	log = v8log__new(path, open, reg->budget);
	if (!log)
		return -errno;
	rc = v8log__update(log);
	reg_note_read(reg, path, log, rc);
	if (rc < 0)
		goto fail;
	ipath = intern(reg, path);
	if (!ipath || !(e = reg_get_or_create(reg, pid, isolate))) {
		rc = -ENOMEM;
		goto fail;
	}
	v8log__free(e->log);
	e->log = log;
	entry_drop_fallback(e);
	e->info.has_code_log = true;
	e->info.code_log_path = ipath;
	entry_set_created(e, path);
	v8log__stats(log, &st);
	e->seen_restarts = st.restarts;
	e->stale = true;
	rc2 = entry_recompute(reg, e);
	return rc2 ? rc2 : rc;

fail:
	v8log__free(log);
	return rc;
}

/* ------------------------------------------------------------------ */
/* listing: from a scan of the log, without keeping the log */

bool isolate__keep_source(const char *name, void *ctx)
{
	(void)ctx;
	return isolate__is_user_script(name);
}

/*
 * The scan's user scripts into us, as user_scripts__collect() does from a
 * log; *nr_internal counts the others.
 */
static int user_scripts__from_scan(struct isolate_registry *reg, struct v8log_scan *scan,
				   struct user_scripts *us, size_t *nr_internal)
{
	size_t count = v8log_scan__count(scan), k = 0, i;
	const struct v8log_scan_script *s;

	memset(us, 0, sizeof(*us));
	*nr_internal = 0;
	if (!count)
		return 0;
	us->pairs = calloc(count, sizeof(*us->pairs));
	us->names = calloc(count, sizeof(*us->names));
	if (!us->pairs || !us->names)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		s = v8log_scan__at(scan, i);
		if (!s)
			continue;
		if (!isolate__is_user_script(s->name)) {
			++*nr_internal;
			continue;
		}
		/* the version id hashes every user source: one dropped is a wrong id */
		if (s->has_source && !s->source)
			return -EINVAL;
		if (!us->entry)
			us->entry = s->name;
		us->pairs[k].name = s->name;
		us->pairs[k].src = s->source ? s->source : "";
		us->pairs[k].len = s->source ? s->source_len : 0;
		k++;
	}
	return user_scripts__finish(reg, us, k);
}

int isolate_registry__add_scan(struct isolate_registry *reg, pid_t host_pid, const char *path,
			       struct v8log_scan *scan)
{
	struct user_scripts us;
	struct iso_entry *e;
	const char *ipath, *v8v;
	size_t nr_internal;
	uint64_t isolate;
	pid_t pid;
	int err;

	if (!reg || !path || !scan || v8log__parse_filename(path, &isolate, &pid) || !isolate)
		return -EINVAL;
	if (host_pid > 0)
		pid = host_pid;
	ipath = intern(reg, path);
	v8v = intern(reg, v8log_scan__version(scan));
	if (!ipath || !v8v || !(e = reg_get_or_create(reg, pid, isolate)))
		return -ENOMEM;
	err = user_scripts__from_scan(reg, scan, &us, &nr_internal);
	if (!err)
		err = entry_set_scripts(reg, e, &us);
	if (err) {
		user_scripts__release(&us);
		return err;
	}
	/* a log read before is superseded: the listing holds no code index */
	v8log__free(e->log);
	e->log = NULL;
	entry_drop_fallback(e);
	e->info.nr_internal = nr_internal;
	e->info.has_code_log = true;
	e->info.code_log_path = ipath;
	e->info.v8_version = v8v;
	entry_set_created(e, path);
	e->entry_script = us.entry;
	entry_set_version(e, &us);
	user_scripts__release(&us);
	entry_resolve_name(e);
	entry_resolve_label(reg, e);
	return 0;
}

int isolate_registry__refresh(struct isolate_registry *reg)
{
	int first = 0, rc;
	size_t i;

	if (!reg)
		return -EINVAL;
	for (i = 0; i < reg->nr; i++) {
		struct iso_entry *e = reg->all[i];

		if (!e->log)
			continue;
		rc = v8log__update(e->log);
		reg_note_read(reg, e->info.code_log_path, e->log, rc);
		if (rc >= 0 || rc == -ENOENT)
			rc = entry_recompute(reg, e);
		if (rc < 0 && !first)
			first = rc;
	}
	return first;
}

/* ------------------------------------------------------------------ */
/* lookups and the fallback */

const struct isolate_info *isolate_registry__lookup(struct isolate_registry *reg, pid_t pid,
						    uint64_t isolate)
{
	struct iso_entry *e;

	if (!reg || !isolate) {
		errno = EINVAL;
		return NULL;
	}
	e = reg_get_or_create(reg, pid, isolate);
	if (!e) {
		errno = ENOMEM;
		return NULL;
	}
	return &e->info;
}

const struct isolate_info *isolate_registry__find(const struct isolate_registry *reg, pid_t pid,
						  uint64_t isolate)
{
	struct iso_entry *e = reg ? reg_get(reg, pid, isolate) : NULL;

	if (!e) {
		errno = ENOENT;
		return NULL;
	}
	return &e->info;
}

int isolate_registry__user_scripts(const struct isolate_registry *reg, pid_t pid,
				   uint64_t isolate, struct isolate_script **out, size_t *n)
{
	struct iso_entry *e = reg ? reg_get(reg, pid, isolate) : NULL;
	size_t count, k = 0;

	*out = NULL;
	*n = 0;
	if (!e)
		return -ENOENT;
	count = e->log ? v8log__script_count(e->log) : 0;
	if (!count)
		return 0;
	*out = calloc(count, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct v8log_script *s = v8log__script_at(e->log, i);

		if (!s || !isolate__is_user_script(s->name))
			continue;
		(*out)[k].name = s->name;
		(*out)[k].source_len = s->source ? s->source_len : 0;
		(*out)[k].sha256_hex = s->source ? s->sha256_hex : "";
		k++;
	}
	*n = k;
	return 0;
}

const struct v8log_script *isolate_registry__script(const struct isolate_registry *reg, pid_t pid,
						   uint64_t isolate, const char *name)
{
	struct iso_entry *e = reg && name ? reg_get(reg, pid, isolate) : NULL;
	const struct v8log_script *found = NULL;
	size_t count = e && e->log ? v8log__script_count(e->log) : 0;

	/* the newest: a name reused by another script is that script now */
	for (size_t i = 0; i < count; i++) {
		const struct v8log_script *s = v8log__script_at(e->log, i);

		if (s && s->name && !strcmp(s->name, name))
			found = s;
	}
	return found;
}

/* Insert s (interned) at pos of a sorted array; a grown array keeps the old (keep_old). */
static int sorted_insert(struct isolate_registry *reg, const char ***arr, size_t *nr, size_t *cap,
			 size_t pos, const char *s, bool keep_old)
{
	if (*nr + 1 > *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		const char **n = malloc(ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		if (keep_old && *cap && graveyard_reserve(reg)) {
			free(n);
			return -ENOMEM;
		}
		if (*nr)
			memcpy(n, *arr, *nr * sizeof(*n));
		if (keep_old && *cap)
			graveyard_put(reg, (void *)*arr);
		else
			free((void *)*arr);
		*arr = n;
		*cap = ncap;
	}
	memmove(*arr + pos + 1, *arr + pos, (*nr - pos) * sizeof(**arr));
	(*arr)[pos] = s;
	(*nr)++;
	return 0;
}

int isolate_registry__note_script(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
				  const char *script)
{
	struct iso_entry *e;
	const char *s;
	size_t pos, nr;
	int rc;

	if (!reg || !isolate || !script)
		return -EINVAL;
	e = reg_get(reg, pid, isolate);
	/*
	 * A log without scripts does not count: --perf-basic-prof implies --log,
	 * so node writes per-isolate logs with no script events by default.
	 */
	if (e && e->log && v8log__script_count(e->log))
		return 0;
	if (!e && !(e = reg_get_or_create(reg, pid, isolate)))
		return -ENOMEM;

	if (!isolate__is_user_script(script)) {
		pos = lower_bound(e->internal, e->nr_internal_names, script);
		if (pos < e->nr_internal_names && !strcmp(e->internal[pos], script))
			return 0;
		s = intern(reg, script);
		if (!s)
			return -ENOMEM;
		rc = sorted_insert(reg, &e->internal, &e->nr_internal_names, &e->internal_cap, pos,
				   s, false);
		if (rc)
			return rc;
		e->info.nr_internal = e->nr_internal_names;
		return 0;
	}
	nr = e->info.nr_scripts;
	pos = lower_bound(e->info.scripts, nr, script);
	if (pos < nr && !strcmp(e->info.scripts[pos], script))
		return 0;
	s = intern(reg, script);
	if (!s)
		return -ENOMEM;
	rc = sorted_insert(reg, &e->scripts, &nr, &e->scripts_cap, pos, s, true);
	if (rc)
		return rc;
	e->info.scripts = e->scripts;
	e->info.nr_scripts = nr;
	entry_resolve_name(e);
	return 0;
}

const char *isolate_version_from__str(enum isolate_version_from from)
{
	switch (from) {
	case ISOLATE_VERSION_FROM_CODE_LOG:
		return "code_log";
	case ISOLATE_VERSION_FROM_FILES:
		return "files";
	default:
		return NULL;
	}
}

int isolate_registry__set_files_version(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
					const char *version_full, const char *why)
{
	struct iso_entry *e;
	const char *w = NULL;

	if (!reg || !isolate ||
	    (version_full && (strlen(version_full) != SHA256_HEX_LEN - 1 ||
			      !is_hex(version_full, SHA256_HEX_LEN - 1))))
		return -EINVAL;
	e = reg_get_or_create(reg, pid, isolate);
	if (!e)
		return -ENOMEM;
	if (e->info.version_from == ISOLATE_VERSION_FROM_CODE_LOG)
		return 0;
	if (!version_full && why && !(w = intern(reg, why)))
		return -ENOMEM;
	if (version_full) {
		char hex[SHA256_HEX_LEN];

		/* lowercase, as the code log's are: labels and --version compare them */
		for (size_t i = 0; i < SHA256_HEX_LEN - 1; i++)
			hex[i] = (char)tolower((unsigned char)version_full[i]);
		hex[SHA256_HEX_LEN - 1] = '\0';
		entry_put_version(e, hex, ISOLATE_VERSION_FROM_FILES);
	} else {
		entry_clear_version(e);
	}
	e->info.version_why = w;
	entry_resolve_label(reg, e);
	return 0;
}

int isolate_registry__set_service_name(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
				       const char *name)
{
	struct iso_entry *e;
	const char *s = NULL;

	if (!reg || !isolate)
		return -EINVAL;
	if (name && *name && !(s = intern(reg, name)))
		return -ENOMEM;
	e = reg_get_or_create(reg, pid, isolate);
	if (!e)
		return -ENOMEM;
	e->info.service_name = s;
	entry_resolve_name(e);
	entry_resolve_label(reg, e);
	return 0;
}

static int cmp_info(const void *a, const void *b)
{
	const struct isolate_info *x = *(const struct isolate_info *const *)a;
	const struct isolate_info *y = *(const struct isolate_info *const *)b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->isolate != y->isolate)
		return x->isolate < y->isolate ? -1 : 1;
	return 0;
}

static int reg_sort(struct isolate_registry *reg)
{
	const struct isolate_info **s;
	size_t i;

	if (reg->sorted && reg->nr_sorted == reg->nr)
		return 0;
	s = malloc((reg->nr ? reg->nr : 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < reg->nr; i++)
		s[i] = &reg->all[i]->info;
	qsort(s, reg->nr, sizeof(*s), cmp_info);
	free(reg->sorted);
	reg->sorted = s;
	reg->nr_sorted = reg->nr;
	return 0;
}

const struct isolate_info *const *isolate_registry__list(struct isolate_registry *reg, size_t *nr)
{
	int rc;

	if (!reg) {
		errno = EINVAL;
		return NULL;
	}
	rc = reg_sort(reg);
	if (rc) {
		errno = -rc;
		return NULL;
	}
	if (nr)
		*nr = reg->nr;
	return reg->sorted;
}

/* ------------------------------------------------------------------ */
/* labels */

int isolate_registry__load_labels(struct isolate_registry *reg, const char *path, char *err,
				  size_t errlen)
{
	struct version_labels labels;
	size_t i;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (!reg || !path)
		return -EINVAL;
	rc = version_labels__load(path, intern_cb, reg, &labels, err, errlen);
	if (rc)
		return rc;
	version_labels__release(&reg->labels);
	reg->labels = labels;
	for (i = 0; i < reg->nr; i++)
		entry_resolve_label(reg, reg->all[i]);
	return (int)labels.nr;
}

/* ------------------------------------------------------------------ */
/* matching */

static bool entry_name_matches(const struct iso_entry *e, const char *pattern)
{
	size_t i;

	if (e->info.service_name && isolate__script_matches(e->info.service_name, pattern))
		return true;
	if (isolate__script_matches(e->info.name, pattern))
		return true;
	for (i = 0; i < e->info.nr_scripts; i++)
		if (isolate__script_matches(e->info.scripts[i], pattern))
			return true;
	return false;
}

static bool entry_version_matches(const struct iso_entry *e, const char *version, size_t vlen,
				  bool hex)
{
	if (e->info.label && !strcmp(e->info.label, version))
		return true;
	if (!strcmp(version, ISOLATE_VERSION_UNKNOWN))
		return !e->info.version_full[0];
	return hex && vlen >= ISOLATE_MIN_PREFIX && vlen < SHA256_HEX_LEN &&
	       e->info.version_full[0] && !strncasecmp(e->info.version_full, version, vlen);
}

int isolate_registry__match(struct isolate_registry *reg, const char *script, const char *version,
			    isolate_executed_fn executed, void *ctx,
			    const struct isolate_info **out, size_t max)
{
	const struct isolate_info *best = NULL;
	uint64_t best_seq = 0;
	bool latest, hex = false;
	size_t vlen = 0, i;
	int rc, count = 0;

	if (!reg || !script || !*script || (version && !*version) || (max && !out))
		return -EINVAL;
	latest = version && !strcmp(version, ISOLATE_VERSION_LATEST);
	if (version && !latest) {
		vlen = strlen(version);
		hex = is_hex(version, vlen);
		if (hex && vlen < ISOLATE_MIN_PREFIX && !version_labels__has(&reg->labels, version))
			return -EINVAL;
	}
	rc = reg_sort(reg);
	if (rc)
		return rc;
	for (i = 0; i < reg->nr_sorted; i++) {
		const struct isolate_info *info = reg->sorted[i];
		const struct iso_entry *e = (const struct iso_entry *)info;

		if (!entry_name_matches(e, script))
			continue;
		if (latest) {
			if (executed && !executed(info, ctx))
				continue;
			if (!best || info->created_ns > best->created_ns ||
			    (info->created_ns == best->created_ns && e->seq > best_seq)) {
				best = info;
				best_seq = e->seq;
			}
			continue;
		}
		if (version && !entry_version_matches(e, version, vlen, hex))
			continue;
		if ((size_t)count < max)
			out[count] = info;
		if (count < INT32_MAX)
			count++;
	}
	if (latest && best) {
		if (max)
			out[0] = best;
		count = 1;
	}
	return count;
}

const char *const *isolate_registry__names(struct isolate_registry *reg, size_t *nr)
{
	const char **names;
	size_t n = 0, cap = 1, i, j, k;

	if (!reg) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < reg->nr; i++)
		cap += reg->all[i]->info.nr_scripts + 1;
	names = malloc(cap * sizeof(*names));
	if (!names) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < reg->nr; i++) {
		const struct isolate_info *info = &reg->all[i]->info;

		if (info->service_name)
			names[n++] = info->service_name;
		for (j = 0; j < info->nr_scripts; j++)
			names[n++] = info->scripts[j];
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 1, k = n ? 1 : 0; i < n; i++)
		if (strcmp(names[k - 1], names[i]))
			names[k++] = names[i];
	names[k] = NULL;
	free(reg->names);
	reg->names = names;
	if (nr)
		*nr = k;
	return names;
}

/* ------------------------------------------------------------------ */

struct isolate_registry *isolate_registry__new(void)
{
	struct isolate_registry *reg = calloc(1, sizeof(*reg));

	if (!reg)
		errno = ENOMEM;
	return reg;
}

static void entry_free(struct iso_entry *e)
{
	v8log__free(e->log);
	if (e->scripts_cap)
		free(e->scripts);
	free(e->internal);
	free(e);
}

void isolate_registry__forget(struct isolate_registry *reg, pid_t pid)
{
	size_t i, k = 0;

	if (!reg)
		return;
	for (i = 0; i < reg->nr; i++) {
		if (reg->all[i]->info.pid == pid)
			entry_free(reg->all[i]);
		else
			reg->all[k++] = reg->all[i];
	}
	if (k == reg->nr)
		return;
	reg->nr = k;
	/* the index names positions in all[]: made again; the table only had more */
	index_table__clear(&reg->by_key);
	for (i = 0; i < reg->nr; i++) {
		struct iso_key key = { reg->all[i]->info.pid, reg->all[i]->info.isolate };
		uint32_t h = key_hash(key.pid, key.isolate);
		size_t slot;

		index_table__lookup(&reg->by_key, h, entry_is, reg, &key, &slot);
		index_table__set(&reg->by_key, slot, h, (uint32_t)i);
	}
	free(reg->sorted);
	reg->sorted = NULL;
	reg->nr_sorted = 0;
}

void isolate_registry__free(struct isolate_registry *reg)
{
	size_t i;

	if (!reg)
		return;
	for (i = 0; i < reg->nr; i++)
		entry_free(reg->all[i]);
	for (i = 0; i < reg->nr_notes; i++)
		free(reg->notes[i]);
	free(reg->notes);
	for (i = 0; i < reg->nr_graveyard; i++)
		free(reg->graveyard[i]);
	for (i = 0; i < reg->nr_strs; i++)
		free(reg->strs[i]);
	free(reg->strs);
	index_table__release(&reg->by_text);
	free(reg->graveyard);
	index_table__release(&reg->by_key);
	free(reg->all);
	free(reg->sorted);
	version_labels__release(&reg->labels);
	free(reg->names);
	free(reg);
}

int isolate_registry__code_at(struct isolate_registry *reg, pid_t pid, uint64_t addr,
			      struct v8log_sym *out)
{
	for (size_t i = 0; reg && i < reg->nr; i++) {
		struct iso_entry *e = reg->all[i];

		if (e->info.pid == pid && e->log && !v8log__lookup(e->log, addr, out))
			return 0;
	}
	return -ENOENT;
}

int isolate_registry__inline_stack(struct isolate_registry *reg, pid_t pid, uint64_t start,
				   uint64_t off, struct v8inline_frame *frames, size_t max,
				   struct v8inline_frame *outer)
{
	struct v8inline_frame at = { 0 };

	memset(outer, 0, sizeof(*outer));
	/* code addresses are per process: the first of its logs that knows wins */
	for (size_t i = 0; reg && i < reg->nr; i++) {
		struct iso_entry *e = reg->all[i];
		int n;

		if (e->info.pid != pid || !e->log)
			continue;
		n = v8log__inline_stack(e->log, start, off, frames, max, &at);
		if (n > 0) {
			*outer = at;
			return n;
		}
		/* not inlined there, but the log knows the position */
		if (at.line && !outer->line)
			*outer = at;
	}
	return 0;
}
