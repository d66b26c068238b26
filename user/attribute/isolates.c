// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isolates: the isolate registry (see isolates.h, docs/attribution.md).
 *
 * Layout: one heap block per isolate (its isolate_info first, so the
 * pointer handed out never moves), found through an open-addressing hash
 * on (pid, address).  Every string an isolate_info points to is interned
 * in one registry-wide set and freed only with the registry, so names stay
 * valid across updates; script arrays that are replaced are kept until
 * then too (they are replaced only when an isolate's scripts change).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "user/attribute/isolates.h"
#include "symbolize/v8log.h"

#define LABELS_LINE_MAX 8192
#define LABELS_SCRIPT_MAX 4096

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

struct iso_label {
	const char *script;		/* interned, unescaped */
	char prefix[SHA256_HEX_LEN];	/* lowercase, 12..64 hex */
	size_t plen;
	const char *label;		/* interned */
	size_t line;
};

struct isolate_registry {
	/* isolates: hash of entries, and all of them in the order learnt */
	struct iso_entry **tab;
	size_t tab_cap;
	struct iso_entry **all;
	size_t nr, all_cap;
	const struct isolate_info **sorted;	/* by pid, address; nr_sorted valid */
	size_t nr_sorted;

	/* interned strings */
	char **strs;
	size_t strs_cap, nr_strs;

	/* replaced script arrays, freed with the registry */
	void **graveyard;
	size_t nr_graveyard, graveyard_cap;

	struct iso_label *labels;	/* by script, prefix, line */
	size_t nr_labels;

	const char **names;		/* isolate_registry__names() */
};

static const char *const no_scripts[1];

/* ------------------------------------------------------------------ */
/* small pieces */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a 64 */

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return mix64(h);
}

static uint64_t key_hash(pid_t pid, uint64_t isolate)
{
	return mix64(isolate ^ mix64((uint64_t)(uint32_t)pid + 0x9e3779b97f4a7c15ULL));
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 16;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
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
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

/* ------------------------------------------------------------------ */
/* interned strings: open addressing, never removed */

static const char *intern(struct isolate_registry *reg, const char *s)
{
	size_t mask, i;
	char *copy;

	if (reg->nr_strs + 1 > reg->strs_cap / 2) {
		size_t ncap = reg->strs_cap ? reg->strs_cap * 2 : 256, j;
		char **ntab = calloc(ncap, sizeof(*ntab));

		if (!ntab)
			return NULL;
		for (j = 0; j < reg->strs_cap; j++) {
			if (!reg->strs[j])
				continue;
			i = str_hash(reg->strs[j]) & (ncap - 1);
			while (ntab[i])
				i = (i + 1) & (ncap - 1);
			ntab[i] = reg->strs[j];
		}
		free(reg->strs);
		reg->strs = ntab;
		reg->strs_cap = ncap;
	}
	mask = reg->strs_cap - 1;
	for (i = str_hash(s) & mask; reg->strs[i]; i = (i + 1) & mask)
		if (!strcmp(reg->strs[i], s))
			return reg->strs[i];
	copy = strdup(s);
	if (!copy)
		return NULL;
	reg->strs[i] = copy;
	reg->nr_strs++;
	return copy;
}

/* Keep p until the registry goes: callers may still hold it. */
static int graveyard_reserve(struct isolate_registry *reg)
{
	return grow((void **)&reg->graveyard, &reg->graveyard_cap, reg->nr_graveyard + 1,
		    sizeof(*reg->graveyard));
}

static void graveyard_put(struct isolate_registry *reg, void *p)
{
	reg->graveyard[reg->nr_graveyard++] = p;
}

/* ------------------------------------------------------------------ */
/* isolates */

static struct iso_entry *reg_get(const struct isolate_registry *reg, pid_t pid, uint64_t isolate)
{
	size_t mask, i;

	if (!reg->tab_cap)
		return NULL;
	mask = reg->tab_cap - 1;
	for (i = key_hash(pid, isolate) & mask; reg->tab[i]; i = (i + 1) & mask)
		if (reg->tab[i]->info.pid == pid && reg->tab[i]->info.isolate == isolate)
			return reg->tab[i];
	return NULL;
}

static void tab_insert(struct iso_entry **tab, size_t cap, struct iso_entry *e)
{
	size_t i;

	i = key_hash(e->info.pid, e->info.isolate) & (cap - 1);
	while (tab[i])
		i = (i + 1) & (cap - 1);
	tab[i] = e;
}

static struct iso_entry *reg_get_or_create(struct isolate_registry *reg, pid_t pid,
					   uint64_t isolate)
{
	struct iso_entry *e = reg_get(reg, pid, isolate);
	size_t i;

	if (e)
		return e;
	if (grow((void **)&reg->all, &reg->all_cap, reg->nr + 1, sizeof(*reg->all)))
		return NULL;
	if (reg->nr + 1 > reg->tab_cap / 2) {
		size_t ncap = reg->tab_cap ? reg->tab_cap * 2 : 64;
		struct iso_entry **ntab = calloc(ncap, sizeof(*ntab));

		if (!ntab)
			return NULL;
		for (i = 0; i < reg->nr; i++)
			tab_insert(ntab, ncap, reg->all[i]);
		free(reg->tab);
		reg->tab = ntab;
		reg->tab_cap = ncap;
	}
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
	tab_insert(reg->tab, reg->tab_cap, e);
	reg->all[reg->nr++] = e;
	return e;
}

static void entry_resolve_name(struct iso_entry *e)
{
	if (e->info.service_name)
		e->info.name = e->info.service_name;
	else if (e->log && e->entry_script)
		e->info.name = e->entry_script;
	else if (e->info.nr_scripts)
		e->info.name = e->info.scripts[0];
	else
		e->info.name = e->placeholder;
}

/* ------------------------------------------------------------------ */
/* labels */

static int label_key_cmp(const struct iso_label *l, const char *script, const char *hex12)
{
	int c = strcmp(l->script, script);

	return c ? c : memcmp(l->prefix, hex12, ISOLATE_VERSION_LEN);
}

static int cmp_label(const void *a, const void *b)
{
	const struct iso_label *x = a, *y = b;
	int c = strcmp(x->script, y->script);

	if (c)
		return c;
	c = strcmp(x->prefix, y->prefix);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* The best label under key script for version_full into *best. */
static void label_try(const struct isolate_registry *reg, const char *script, const char *full,
		      const struct iso_label **best)
{
	size_t lo = 0, hi = reg->nr_labels;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (label_key_cmp(&reg->labels[mid], script, full) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < reg->nr_labels && !label_key_cmp(&reg->labels[lo], script, full); lo++) {
		const struct iso_label *l = &reg->labels[lo];

		if (strncmp(full, l->prefix, l->plen))
			continue;
		if (!*best || l->plen > (*best)->plen ||
		    (l->plen == (*best)->plen && l->line < (*best)->line))
			*best = l;
	}
}

/* Every pattern isolate__script_matches() accepts for name: itself and each tail after '/'. */
static void label_try_name(const struct isolate_registry *reg, const char *name, const char *full,
			   const struct iso_label **best)
{
	const char *p;

	label_try(reg, name, full, best);
	for (p = strchr(name, '/'); p; p = strchr(p + 1, '/'))
		if (p[1])
			label_try(reg, p + 1, full, best);
}

static void entry_resolve_label(const struct isolate_registry *reg, struct iso_entry *e)
{
	const struct iso_label *best = NULL;
	const char *full = e->info.version_full;
	size_t i;

	e->info.label = NULL;
	if (!reg->nr_labels || strlen(full) != SHA256_HEX_LEN - 1)
		return;
	if (e->info.service_name)
		label_try_name(reg, e->info.service_name, full, &best);
	for (i = 0; i < e->info.nr_scripts; i++)
		label_try_name(reg, e->info.scripts[i], full, &best);
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

bool isolate__script_matches(const char *name, const char *pattern)
{
	size_t n, m;

	if (!name || !pattern || !*pattern)
		return false;
	if (!strcmp(name, pattern))
		return true;
	n = strlen(name);
	m = strlen(pattern);
	return n > m && name[n - m - 1] == '/' && !strcmp(name + n - m, pattern);
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
	if (!statx(AT_FDCWD, path, 0, STATX_BTIME, &stx) && (stx.stx_mask & STATX_BTIME) &&
	    stx.stx_btime.tv_sec > 0) {
		e->info.created_ns = (uint64_t)stx.stx_btime.tv_sec * 1000000000ULL +
				     stx.stx_btime.tv_nsec;
		e->info.created_is_btime = true;
	}
}

/*
 * Scripts, version and name from the log, when its scripts changed since
 * the last time.  On failure info keeps what it had.
 */
static int entry_recompute(struct isolate_registry *reg, struct iso_entry *e)
{
	size_t count = v8log__script_count(e->log), nuser = 0, nsrc = 0, nr_internal = 0;
	size_t k = 0, nn = 0, i;
	const struct v8log_script *s;
	const char *entry = NULL, **names = NULL;
	struct vpair *p = NULL;
	struct v8log_stats st;
	const char *v8v;
	char hex[SHA256_HEX_LEN];
	bool same;

	v8v = v8log__version(e->log);
	if (strcmp(e->info.v8_version, v8v)) {
		v8v = intern(reg, v8v);
		if (!v8v)
			return -ENOMEM;
		e->info.v8_version = v8v;
	}
	/*
	 * Hash again only when the user scripts changed: apps that eval or
	 * new Function() per request add unnamed scripts all the time, and a
	 * bundle may be tens of MB.
	 */
	v8log__stats(e->log, &st);
	for (i = 0; i < count; i++) {
		s = v8log__script_at(e->log, i);
		if (!s)
			continue;
		if (!isolate__is_user_script(s->name)) {
			nr_internal++;
			continue;
		}
		nuser++;
		if (s->source)
			nsrc++;
	}
	e->info.nr_internal = nr_internal;
	if (!e->stale && nuser == e->seen_scripts && nsrc == e->seen_sources &&
	    st.restarts == e->seen_restarts)
		return 0;
	/* Rewritten from the start: another isolate (pid reuse) or run. */
	if (st.restarts != e->seen_restarts)
		entry_set_created(e, e->info.code_log_path);

	if (nuser) {
		p = calloc(nuser, sizeof(*p));
		names = calloc(nuser, sizeof(*names));
		if (!p || !names)
			goto nomem;
	}
	for (i = 0; i < count && k < nuser; i++) {
		s = v8log__script_at(e->log, i);
		if (!s || !isolate__is_user_script(s->name))
			continue;
		if (!entry)
			entry = s->name;
		p[k].name = s->name;
		p[k].src = s->source ? s->source : "";
		p[k].len = s->source ? s->source_len : 0;
		k++;
	}
	k = vpairs_sort_unique(p, k);
	for (i = 0; i < k; i++) {
		if (nn && !strcmp(names[nn - 1], p[i].name))
			continue;
		names[nn] = intern(reg, p[i].name);
		if (!names[nn])
			goto nomem;
		nn++;
	}
	if (entry && !(entry = intern(reg, entry)))
		goto nomem;
	if (k)
		vpairs_hash(p, k, hex);
	free(p);
	p = NULL;

	same = nn == e->info.nr_scripts;
	for (i = 0; same && i < nn; i++)
		same = names[i] == e->info.scripts[i];
	if (!same) {
		if (e->scripts_cap && graveyard_reserve(reg))
			goto nomem;
		if (e->scripts_cap)
			graveyard_put(reg, e->scripts);
		if (nn) {
			e->scripts = names;
			e->scripts_cap = nn;
			e->info.scripts = names;
		} else {
			free(names);
			e->scripts = NULL;
			e->scripts_cap = 0;
			e->info.scripts = no_scripts;
		}
		e->info.nr_scripts = nn;
	} else {
		free(names);
	}
	names = NULL;

	e->entry_script = entry;
	if (k) {
		memcpy(e->info.version_full, hex, sizeof(hex));
		memcpy(e->info.version, hex, ISOLATE_VERSION_LEN);
		e->info.version[ISOLATE_VERSION_LEN] = '\0';
	} else {
		e->info.version_full[0] = '\0';
		strcpy(e->info.version, ISOLATE_VERSION_UNKNOWN);
	}
	e->seen_scripts = nuser;
	e->seen_sources = nsrc;
	e->seen_restarts = st.restarts;
	e->stale = false;
	entry_resolve_name(e);
	entry_resolve_label(reg, e);
	return 0;

nomem:
	free(p);
	free(names);
	return -ENOMEM;
}

/* Drop what the JS-frame fallback gathered: the log knows better. */
static void entry_drop_fallback(struct iso_entry *e)
{
	free(e->internal);
	e->internal = NULL;
	e->nr_internal_names = e->internal_cap = 0;
	e->info.nr_internal = 0;
}

int isolate_registry__add_log(struct isolate_registry *reg, const char *path)
{
	return isolate_registry__add_log_pid(reg, 0, path);
}

int isolate_registry__add_log_pid(struct isolate_registry *reg, pid_t host_pid, const char *path)
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
		if (rc < 0 && rc != -ENOENT)
			return rc;
		rc2 = entry_recompute(reg, e);
		return rc2 ? rc2 : rc;
	}

	log = v8log__new(path);
	if (!log)
		return -errno;
	rc = v8log__update(log);
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
/* labels file */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = (char)tolower((unsigned char)c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* \\ and \xNN in place; -EINVAL on a bad escape or a NUL. */
static int unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (*s != '\\') {
			*w++ = *s++;
			continue;
		}
		if (s[1] == '\\') {
			*w++ = '\\';
			s += 2;
		} else if (s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
			int v = hexval(s[2]) * 16 + hexval(s[3]);

			if (!v)
				return -EINVAL;
			*w++ = (char)v;
			s += 4;
		} else {
			return -EINVAL;
		}
	}
	*w = '\0';
	return 0;
}

static int __attribute__((format(printf, 4, 5)))
labels_error(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		snprintf(err, errlen, "line %zu: %s", line, msg);
	}
	return -EINVAL;
}

/* One line into l (0), nothing to use (1), or an error. */
static int labels_parse_line(struct isolate_registry *reg, char *buf, size_t line,
			     struct iso_label *l, char *err, size_t errlen)
{
	char *f[4], *p = buf;
	size_t nf = 0, len, i;

	while (nf < 4) {
		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			break;
		f[nf++] = p;
		while (*p && !is_blank(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	if (!nf)
		return 1;
	if (nf != 3)
		return labels_error(err, errlen, line, "expected SCRIPT VERSION_ID LABEL, found %s",
				    nf < 3 ? "fewer fields" : "more fields");

	if (strlen(f[0]) > LABELS_SCRIPT_MAX)
		return labels_error(err, errlen, line, "script name longer than %d bytes",
				    LABELS_SCRIPT_MAX);
	if (unescape(f[0]))
		return labels_error(err, errlen, line,
				    "bad escape in script name '%.200s' (\\\\ or \\xNN)", f[0]);

	len = strlen(f[1]);
	if (len < ISOLATE_VERSION_LEN || len > SHA256_HEX_LEN - 1 || !is_hex(f[1], len))
		return labels_error(err, errlen, line,
				    "version id '%.80s' is not 12 to 64 hex digits", f[1]);
	for (i = 0; i < len; i++)
		l->prefix[i] = (char)tolower((unsigned char)f[1][i]);
	l->prefix[len] = '\0';
	l->plen = len;

	len = strlen(f[2]);
	if (len > ISOLATE_LABEL_MAX)
		return labels_error(err, errlen, line, "label longer than %d characters",
				    ISOLATE_LABEL_MAX);
	for (i = 0; i < len; i++)
		if ((unsigned char)f[2][i] < 0x21 || (unsigned char)f[2][i] > 0x7e)
			return labels_error(err, errlen, line,
					    "label '%.80s' has a non-printable or non-ASCII byte",
					    f[2]);
	if (!strcmp(f[2], "latest") || !strcmp(f[2], ISOLATE_VERSION_UNKNOWN))
		return labels_error(err, errlen, line, "label '%s' is reserved", f[2]);

	l->script = intern(reg, f[0]);
	l->label = intern(reg, f[2]);
	if (!l->script || !l->label)
		return -ENOMEM;
	l->line = line;
	return 0;
}

int isolate_registry__load_labels(struct isolate_registry *reg, const char *path, char *err,
				  size_t errlen)
{
	struct iso_label *labels = NULL, dup = { 0 }, dup_first = { 0 };
	size_t nr = 0, cap = 0, line = 0, bufcap = 0, i, k;
	char *buf = NULL;
	ssize_t len;
	int rc = 0, used;
	FILE *f;

	if (err && errlen)
		err[0] = '\0';
	if (!reg || !path)
		return -EINVAL;
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	for (;;) {
		errno = 0;
		len = getline(&buf, &bufcap, f);
		if (len < 0) {
			if (errno == ENOMEM) {
				rc = -ENOMEM;
				goto out;
			}
			break;
		}
		line++;
		if (len > LABELS_LINE_MAX) {
			rc = labels_error(err, errlen, line, "longer than %d bytes",
					  LABELS_LINE_MAX);
			goto out;
		}
		if ((size_t)len != strlen(buf)) {
			rc = labels_error(err, errlen, line, "NUL byte");
			goto out;
		}
		if (grow((void **)&labels, &cap, nr + 1, sizeof(*labels))) {
			rc = -ENOMEM;
			goto out;
		}
		used = labels_parse_line(reg, buf, line, &labels[nr], err, errlen);
		if (used < 0) {
			rc = used;
			goto out;
		}
		if (!used)
			nr++;
	}
	if (ferror(f)) {
		rc = -EIO;
		if (err && errlen)
			snprintf(err, errlen, "line %zu: read error", line + 1);
		goto out;
	}

	if (nr)
		qsort(labels, nr, sizeof(*labels), cmp_label);
	/*
	 * The same script and version id twice: fine when the labels agree
	 * (kept once), else the later of the first such pair is the error.
	 */
	for (i = 1, k = nr ? 1 : 0; i < nr; i++) {
		const struct iso_label *a = &labels[k - 1], *b = &labels[i];

		if (strcmp(a->script, b->script) || strcmp(a->prefix, b->prefix)) {
			labels[k++] = *b;
			continue;
		}
		if (a->label != b->label && (!dup.line || b->line < dup.line)) {
			dup = *b;
			dup_first = *a;
		}
	}
	if (dup.line) {
		rc = labels_error(err, errlen, dup.line,
				  "%.200s %s: label '%s' but line %zu says '%s'", dup.script,
				  dup.prefix, dup.label, dup_first.line, dup_first.label);
		goto out;
	}
	nr = k;

	free(reg->labels);
	reg->labels = labels;
	reg->nr_labels = nr;
	labels = NULL;
	for (i = 0; i < reg->nr; i++)
		entry_resolve_label(reg, reg->all[i]);
	rc = (int)nr;
out:
	free(buf);
	free(labels);
	fclose(f);
	return rc;
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

static bool label_known(const struct isolate_registry *reg, const char *label)
{
	size_t i;

	for (i = 0; i < reg->nr_labels; i++)
		if (!strcmp(reg->labels[i].label, label))
			return true;
	return false;
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
	latest = version && !strcmp(version, "latest");
	if (version && !latest) {
		vlen = strlen(version);
		hex = is_hex(version, vlen);
		if (hex && vlen < ISOLATE_MIN_PREFIX && !label_known(reg, version))
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

void isolate_registry__free(struct isolate_registry *reg)
{
	size_t i;

	if (!reg)
		return;
	for (i = 0; i < reg->nr; i++) {
		struct iso_entry *e = reg->all[i];

		v8log__free(e->log);
		if (e->scripts_cap)
			free(e->scripts);
		free(e->internal);
		free(e);
	}
	for (i = 0; i < reg->nr_graveyard; i++)
		free(reg->graveyard[i]);
	for (i = 0; i < reg->strs_cap; i++)
		free(reg->strs[i]);
	free(reg->strs);
	free(reg->graveyard);
	free(reg->tab);
	free(reg->all);
	free(reg->sorted);
	free(reg->labels);
	free(reg->names);
	free(reg);
}

int isolate_registry__inline_stack(struct isolate_registry *reg, pid_t pid, uint64_t start,
				   uint64_t off, struct v8inline_frame *frames, size_t max,
				   struct v8inline_frame *outer)
{
	/* code addresses are per process: the first of its logs that knows wins */
	for (size_t i = 0; reg && i < reg->nr; i++) {
		struct iso_entry *e = reg->all[i];
		int n;

		if (e->info.pid != pid || !e->log)
			continue;
		n = v8log__inline_stack(e->log, start, off, frames, max, outer);
		if (n > 0)
			return n;
	}
	return 0;
}
