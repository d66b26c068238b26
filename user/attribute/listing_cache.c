// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * listing_cache: per-code-log listing state kept between listings
 * (listing_cache.h).
 *
 * The logs live in one array of pointers sorted by path (a listing visits
 * them in discovery's order, sorted by path per process); logs new in a
 * listing are appended and the array sorted again at its end, when the
 * logs it did not visit are freed.  The isolate's name and version id come
 * from a registry made for the occasion (isolate_registry__add_scan()):
 * the same code computes them for record and for a one-shot listing.
 */
#include "user/attribute/listing_cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/array.h"
#include "lib/line_tail.h"
#include "symbolize/v8log.h"

struct entry {
	char *path;
	struct listing_log log;
	char *name;
	struct line_tail tail;
	struct safe_open_opts open;
	bool seen;		/* read during this listing */
	bool valid;		/* the stat below is of a file read without error */
	struct stat st;
	bool has_sig;
	uint8_t sig[SHA256_DIGEST_LEN];	/* of the user scripts the ids are from */
};

struct listing_cache {
	struct entry **e;
	size_t nr, cap;
	size_t nr_sorted;		/* e[0..nr_sorted) sorted by path */
	struct v8log_scan *memo;	/* owns the memo every log's scan shares */
	struct listing_cache_stats st;
};

static void entry_free(struct entry *e)
{
	if (!e)
		return;
	line_tail__release(&e->tail);
	v8log_scan__free(e->log.scan);
	free(e->name);
	free(e->path);
	free(e);
}

static struct entry *entry_new(struct listing_cache *c, const char *path,
			       const struct safe_open_opts *o)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->tail.fd = -1;	/* released below even when never initialized */
	e->open = *o;
	e->path = strdup(path);
	e->log.scan = v8log_scan__new(isolate__keep_source, NULL);
	if (!e->path || !e->log.scan || v8log_scan__share_memo(e->log.scan, c->memo) ||
	    line_tail__init(&e->tail, path, V8LOG_LINE_MAX, &e->open, NULL)) {
		entry_free(e);
		return NULL;
	}
	return e;
}

/* Forget what was read: the next read is of the whole file. */
static void entry_reset(struct entry *e)
{
	line_tail__rewind(&e->tail);
	v8log_scan__restart(e->log.scan);
	v8log_scan__drop_sources(e->log.scan);
	e->valid = false;
	e->has_sig = false;
	e->log.known = false;
}

struct listing_cache *listing_cache__new(void)
{
	struct listing_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->memo = v8log_scan__new(NULL, NULL);
	if (!c->memo) {
		free(c);
		return NULL;
	}
	return c;
}

void listing_cache__free(struct listing_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++)
		entry_free(c->e[i]);
	free(c->e);
	v8log_scan__free(c->memo);
	free(c);
}

void listing_cache__begin(struct listing_cache *c)
{
	for (size_t i = 0; i < c->nr; i++)
		c->e[i]->seen = false;
	memset(&c->st, 0, sizeof(c->st));
}

static long find(const struct listing_cache *c, const char *path)
{
	size_t lo = 0, hi = c->nr_sorted, mid;
	int cmp;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		cmp = strcmp(c->e[mid]->path, path);
		if (!cmp)
			return (long)mid;
		if (cmp < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = c->nr_sorted; i < c->nr; i++)
		if (!strcmp(c->e[i]->path, path))
			return (long)i;
	return -1;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

static bool same_rule(const struct safe_open_opts *a, const struct safe_open_opts *b)
{
	return a->owner == b->owner && a->uid == b->uid && a->max_bytes == b->max_bytes &&
	       a->root == b->root && a->proc_root == b->proc_root &&
	       a->proc_link == b->proc_link && a->match_file == b->match_file &&
	       a->dev == b->dev && a->ino == b->ino;
}

/* What the isolate's name and version id are computed from: its user scripts. */
static void user_sig(struct v8log_scan *scan, uint8_t sig[SHA256_DIGEST_LEN])
{
	const struct v8log_scan_script *s;
	struct sha256_ctx h;
	size_t n = v8log_scan__count(scan);

	sha256__init(&h);
	for (size_t i = 0; i < n; i++) {
		s = v8log_scan__at(scan, i);
		if (!s || !isolate__is_user_script(s->name))
			continue;
		sha256__update(&h, &s->id, sizeof(s->id));
		sha256__update(&h, s->name, strlen(s->name) + 1);
		sha256__update(&h, &s->has_source, sizeof(s->has_source));
		sha256__update(&h, &s->source_len, sizeof(s->source_len));
		sha256__update(&h, s->sha256_hex, sizeof(s->sha256_hex));
	}
	sha256__final(&h, sig);
}

/* Whether a user script's source was dropped (by an earlier read). */
static bool user_source_missing(struct v8log_scan *scan)
{
	const struct v8log_scan_script *s;
	size_t n = v8log_scan__count(scan);

	for (size_t i = 0; i < n; i++) {
		s = v8log_scan__at(scan, i);
		if (s && s->has_source && !s->source && isolate__is_user_script(s->name))
			return true;
	}
	return false;
}

/* The isolate's name, version id and creation time, from the scan (sources kept). */
static int entry_identify(struct entry *e, pid_t host_pid)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *const *list;
	const struct isolate_info *info;
	size_t nr = 0;
	int err;

	if (!reg)
		return -ENOMEM;
	e->log.known = false;
	err = isolate_registry__add_scan(reg, host_pid, e->path, e->log.scan);
	if (err) {
		isolate_registry__free(reg);
		return err == -ENOMEM ? err : 0;	/* shown without its isolate */
	}
	list = isolate_registry__list(reg, &nr);
	if (nr != 1) {
		isolate_registry__free(reg);
		return 0;
	}
	info = list[0];
	free(e->name);
	e->name = strdup(info->name);
	if (!e->name) {
		isolate_registry__free(reg);
		return -ENOMEM;
	}
	e->log.name = e->name;
	memcpy(e->log.version, info->version, sizeof(e->log.version));
	memcpy(e->log.version_full, info->version_full, sizeof(e->log.version_full));
	e->log.created_ns = info->created_ns;
	e->log.created_is_btime = info->created_is_btime;
	e->log.known = true;
	isolate_registry__free(reg);
	return 0;
}

/* Read what changed; the ids again when the user scripts changed.  0 or -errno. */
static int entry_update(struct listing_cache *c, struct entry *e, pid_t host_pid)
{
	uint64_t start = e->tail.offset, before = e->tail.bytes_read;
	size_t restarts = e->tail.restarts;
	uint8_t sig[SHA256_DIGEST_LEN];
	bool whole;
	int err;

	err = v8log_scan__tail(e->log.scan, &e->tail);
	if (err)
		goto out;
	whole = !start || e->tail.restarts != restarts;
	if (whole)
		c->st.whole++;
	else
		c->st.appended++;
	user_sig(e->log.scan, sig);
	if (e->has_sig && e->log.known && !memcmp(sig, e->sig, sizeof(sig)))
		goto out;
	if (user_source_missing(e->log.scan)) {
		/* the version id hashes every user source: read them again */
		line_tail__rewind(&e->tail);
		v8log_scan__restart(e->log.scan);
		c->st.reread++;
		err = v8log_scan__tail(e->log.scan, &e->tail);
		if (err)
			goto out;
		user_sig(e->log.scan, sig);
	}
	err = entry_identify(e, host_pid);
	if (!err) {
		memcpy(e->sig, sig, sizeof(sig));
		e->has_sig = true;
	}
out:
	c->st.bytes += e->tail.bytes_read - before;
	v8log_scan__drop_sources(e->log.scan);
	return err;
}

int listing_cache__read(struct listing_cache *c, pid_t host_pid, const char *path,
			const struct safe_open_opts *open, const struct listing_log **out,
			const char **why)
{
	struct safe_open_opts o = { 0 };
	struct entry *e;
	struct stat st;
	uint64_t isolate;
	pid_t pid;
	long i;
	int err;

	*out = NULL;
	if (why)
		*why = "";
	if (!path || v8log__parse_filename(path, &isolate, &pid) || !isolate)
		return -EINVAL;
	if (open)
		o = *open;
	if (!o.max_bytes)
		o.max_bytes = SAFE_OPEN_CODE_LOG_MAX;
	i = find(c, path);
	e = i >= 0 ? c->e[i] : NULL;
	if (lstat(path, &st))
		err = -errno;
	else
		err = 0;
	if (err) {
		if (e)
			entry_reset(e);
		return err;
	}
	if (!e) {
		if (array_grow(&c->e, &c->cap, c->nr + 1))
			return -ENOMEM;
		e = entry_new(c, path, &o);
		if (!e)
			return -ENOMEM;
		c->e[c->nr++] = e;
	} else if (!same_rule(&e->open, &o)) {
		/* another owner rule (pid reuse): nothing read under the old one stands */
		entry_reset(e);
		e->open = o;
		e->tail.open = o;
	}
	e->seen = true;
	if (e->valid && same_file(&e->st, &st)) {
		c->st.unchanged++;
		*out = &e->log;
		return 0;
	}
	if (e->valid && (e->st.st_dev != st.st_dev || e->st.st_ino != st.st_ino))
		entry_reset(e);
	err = entry_update(c, e, host_pid);
	if (err) {
		if (why)
			*why = v8log_scan__why(e->log.scan);
		entry_reset(e);
		return err;
	}
	/* the stat from before the read: a write during it is read next time */
	e->st = st;
	e->valid = true;
	*out = &e->log;
	return 0;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp((*(struct entry *const *)a)->path, (*(struct entry *const *)b)->path);
}

void listing_cache__end(struct listing_cache *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nr; i++) {
		if (c->e[i]->seen) {
			c->e[k++] = c->e[i];
		} else {
			entry_free(c->e[i]);
			c->st.forgotten++;
		}
	}
	c->nr = k;
	if (c->nr > 1)
		qsort(c->e, c->nr, sizeof(*c->e), cmp_path);
	c->nr_sorted = c->nr;
}

void listing_cache__stats(const struct listing_cache *c, struct listing_cache_stats *st)
{
	*st = c->st;
	st->logs = c->nr;
}
