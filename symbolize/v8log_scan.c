// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * v8log_scan: a code log's version and scripts in one pass (v8log_scan.h).
 *
 * The file is read through lib/line_tail.h (safe_open, the per-file cap,
 * the read budget, 1 MB reads); each line is looked at by its first
 * bytes and all but the three events used are left at that.  Scripts live
 * in one array found by id through an index_table, sorted by id when
 * listed, as in v8log.c.
 */
#include "symbolize/v8log_scan.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/line_tail.h"
#include "lib/textscan.h"
#include "symbolize/v8log.h"
#include "symbolize/v8log_fields.h"

/* Keep a big scratch buffer between lines, not after a scan. */
#define SCRATCH_KEEP (1024 * 1024)
/* Sources remembered with their hash, across the files of one scan object. */
#define MEMO_MAX 64
#define MEMO_BYTES_MAX (8u << 20)

/*
 * A source already hashed: the runtime's own scripts are the same bytes in
 * every isolate of a process (workerd: five, 80 KB), and comparing is ten
 * times cheaper than hashing again.
 */
struct memo {
	char *name;
	char *src;
	size_t len;
	char hex[SHA256_HEX_LEN];
};

struct scan_memo {
	struct memo m[MEMO_MAX];
	size_t nr, bytes;
};

struct scan_script {
	struct v8log_scan_script pub;
	char *name;
	char *source;
};

struct v8log_scan {
	v8log_scan_keep_fn keep;
	void *ctx;
	bool keep_all;		/* a rescan: every source is kept */
	bool need_rescan;	/* a dropped source's script was renamed into keep() */

	char version[128];
	struct scan_script *scripts;
	size_t nr, cap;
	bool unsorted;
	struct index_table by_id;

	char *scratch;
	size_t scratch_cap;
	struct scan_memo *memo;	/* NULL until a source is hashed */
	bool memo_owned;	/* not v8log_scan__share_memo()'s */
	struct v8log_scan_stats st;
	char why[128];
};

/* Decode a String field into the scratch buffer, NUL-terminated.  NULL: ENOMEM. */
static char *decode(struct v8log_scan *s, const struct fld *f, size_t *len)
{
	if (array_grow(&s->scratch, &s->scratch_cap, f->n + 1))
		return NULL;
	*len = v8log__unescape_string(f->s, f->n, s->scratch);
	s->scratch[*len] = '\0';
	return s->scratch;
}

static char *dup_decoded(struct v8log_scan *s, const struct fld *f, size_t *lenp)
{
	size_t len;
	char *dec = decode(s, f, &len), *copy;

	if (!dec)
		return NULL;
	copy = malloc(len + 1);
	if (copy)
		memcpy(copy, dec, len + 1);
	if (lenp)
		*lenp = len;
	return copy;
}

/* ---- scripts ------------------------------------------------------------ */

static uint32_t id_hash(int id)
{
	return hash__fold32(hash__mix64((uint64_t)(uint32_t)id));
}

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8log_scan *)ctx)->scripts[idx].pub.id == *(const int *)key;
}

static void reindex(struct v8log_scan *s)
{
	size_t i, slot;
	int id;

	index_table__clear(&s->by_id);
	for (i = 0; i < s->nr; i++) {
		id = s->scripts[i].pub.id;
		index_table__lookup(&s->by_id, id_hash(id), id_eq, s, &id, &slot);
		index_table__set(&s->by_id, slot, id_hash(id), (uint32_t)i);
	}
}

/* The script with id, created empty when absent.  NULL: ENOMEM. */
static struct scan_script *script_get(struct v8log_scan *s, int id)
{
	struct scan_script *sc;
	size_t slot;
	long i;

	i = index_table__lookup(&s->by_id, id_hash(id), id_eq, s, &id, NULL);
	if (i >= 0)
		return &s->scripts[i];
	if (s->nr >= UINT32_MAX - 1 || index_table__reserve(&s->by_id) ||
	    array_grow(&s->scripts, &s->cap, s->nr + 1))
		return NULL;
	if (s->nr && s->scripts[s->nr - 1].pub.id > id)
		s->unsorted = true;
	sc = &s->scripts[s->nr];
	memset(sc, 0, sizeof(*sc));
	sc->pub.id = id;
	sc->pub.name = "";
	index_table__lookup(&s->by_id, id_hash(id), id_eq, s, &id, &slot);
	index_table__set(&s->by_id, slot, id_hash(id), (uint32_t)s->nr);
	s->nr++;
	return sc;
}

static bool wants(struct v8log_scan *s, const char *name)
{
	return s->keep_all || (s->keep && s->keep(name, s->ctx));
}

static void set_name(struct scan_script *sc, char *name)
{
	free(sc->name);
	sc->name = name;
	sc->pub.name = name;
}

/* The hex SHA-256 of src[0..len), from the memo when it holds these bytes. */
static void hash_source(struct v8log_scan *s, const char *name, const char *src, size_t len,
			bool kept, char hex[SHA256_HEX_LEN])
{
	uint8_t digest[SHA256_DIGEST_LEN];
	struct scan_memo *mm;
	struct memo *m;
	size_t i;

	if (!s->memo) {
		s->memo = calloc(1, sizeof(*s->memo));
		s->memo_owned = s->memo != NULL;	/* NULL: hashed without a memo */
	}
	mm = s->memo;
	for (i = 0; mm && i < mm->nr; i++) {
		m = &mm->m[i];
		if (m->len == len && !strcmp(m->name, name) && !memcmp(m->src, src, len)) {
			memcpy(hex, m->hex, SHA256_HEX_LEN);
			s->st.memo_hits++;
			return;
		}
	}
	sha256__digest(src, len, digest);
	sha256__hex(digest, hex);
	/* the user's scripts differ from isolate to isolate: only the others */
	if (!mm || kept || mm->nr == MEMO_MAX || len > MEMO_BYTES_MAX - mm->bytes)
		return;
	m = &mm->m[mm->nr];
	m->name = strdup(name);
	m->src = malloc(len ? len : 1);
	if (!m->name || !m->src) {
		free(m->name);
		free(m->src);
		return;	/* a memo lost, not the hash */
	}
	memcpy(m->src, src, len);
	m->len = len;
	memcpy(m->hex, hex, SHA256_HEX_LEN);
	mm->bytes += len;
	mm->nr++;
}

/* script-source,<id>,<name>,<source> */
static int ev_script_source(struct v8log_scan *s, const char *p, const char *end)
{
	struct scan_script *sc;
	struct fld f[3];
	char *name, *src;
	bool keep;
	size_t len;
	int id;

	if (split(p, end, f, 3) != 3 || !fld_int(&f[0], &id)) {
		s->st.malformed++;
		return 0;
	}
	sc = script_get(s, id);
	name = sc ? dup_decoded(s, &f[1], NULL) : NULL;
	if (!name)
		return -ENOMEM;
	set_name(sc, name);
	free(sc->source);
	sc->source = NULL;
	sc->pub.source = NULL;
	src = decode(s, &f[2], &len);
	if (!src)
		return -ENOMEM;
	keep = wants(s, name);
	hash_source(s, name, src, len, keep, sc->pub.sha256_hex);
	sc->pub.has_source = true;
	sc->pub.source_len = len;
	if (keep) {
		sc->source = malloc(len + 1);
		if (!sc->source)
			return -ENOMEM;
		memcpy(sc->source, src, len + 1);
		sc->pub.source = sc->source;
	}
	return 0;
}

/* script-details,<id>,<name>,<line offset>,<column offset>,<sourceMappingURL> */
static int ev_script_details(struct v8log_scan *s, const char *p, const char *end)
{
	struct scan_script *sc;
	struct fld f[5];
	int id, line, col;
	bool renamed;
	char *name;

	if (split(p, end, f, 5) != 5 || !fld_int(&f[0], &id) || !fld_int(&f[2], &line) ||
	    !fld_int(&f[3], &col)) {
		s->st.malformed++;
		return 0;
	}
	sc = script_get(s, id);
	if (!sc)
		return -ENOMEM;
	if (!f[1].n)
		return 0;
	name = dup_decoded(s, &f[1], NULL);
	if (!name)
		return -ENOMEM;
	/* the same name again: what was decided for the source stands */
	renamed = !sc->name || strcmp(sc->name, name);
	set_name(sc, name);
	if (renamed && sc->pub.has_source && !sc->source && wants(s, name))
		s->need_rescan = true;
	return 0;
}

/* v8-version,<major>,<minor>,<build>,<patch>[,<embedder>],<candidate> */
static int ev_version(struct v8log_scan *s, const char *p, const char *end)
{
	if (!v8log_fields__version(p, end, s->version, sizeof(s->version)))
		s->st.malformed++;
	return 0;
}

/* ---- lines -------------------------------------------------------------- */

static bool starts(const char *line, size_t len, const char *prefix, size_t plen)
{
	return len >= plen && !memcmp(line, prefix, plen);
}

#define PREFIX(lit) lit, sizeof(lit) - 1

static int scan_line(void *ctx, const char *line, size_t len)
{
	struct v8log_scan *s = ctx;

	s->st.lines++;
	if (!line) {
		s->st.malformed++;
		return 0;
	}
	/* code-creation, code-source-info, tick...: one byte decides */
	if (!len || (line[0] != 's' && line[0] != 'v'))
		return 0;
	if (starts(line, len, PREFIX("script-source,")))
		return ev_script_source(s, line + 14, line + len);
	if (starts(line, len, PREFIX("script-details,")))
		return ev_script_details(s, line + 15, line + len);
	if (starts(line, len, PREFIX("v8-version,")))
		return ev_version(s, line + 11, line + len);
	return 0;
}

static void clear(struct v8log_scan *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		free(s->scripts[i].name);
		free(s->scripts[i].source);
	}
	s->nr = 0;
	s->unsorted = false;
	index_table__clear(&s->by_id);
	s->version[0] = '\0';
	s->need_rescan = false;
	s->st.lines = 0;
	s->st.malformed = 0;
}

static int scan_restart(void *ctx)
{
	clear(ctx);
	return 0;
}

static const struct line_tail_ops scan_ops = {
	.restart = scan_restart,
	.line = scan_line,
};

static void drop_scratch(struct v8log_scan *s)
{
	if (s->scratch_cap > SCRATCH_KEEP) {
		free(s->scratch);
		s->scratch = NULL;
		s->scratch_cap = 0;
	}
}

/* ---- API ---------------------------------------------------------------- */

struct v8log_scan *v8log_scan__new(v8log_scan_keep_fn keep_source, void *ctx)
{
	struct v8log_scan *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->keep = keep_source;
	s->ctx = ctx;
	return s;
}

void v8log_scan__free(struct v8log_scan *s)
{
	if (!s)
		return;
	clear(s);
	if (s->memo_owned && s->memo) {
		for (size_t i = 0; i < s->memo->nr; i++) {
			free(s->memo->m[i].name);
			free(s->memo->m[i].src);
		}
		free(s->memo);
	}
	free(s->scripts);
	index_table__release(&s->by_id);
	free(s->scratch);
	free(s);
}

static int read_file(struct v8log_scan *s, const char *path, const struct safe_open_opts *o,
		     struct read_budget *budget)
{
	struct line_tail tail;
	int rc;

	clear(s);
	s->why[0] = '\0';
	if (line_tail__init(&tail, path, V8LOG_LINE_MAX, o, budget) < 0)
		return -ENOMEM;
	rc = line_tail__read(&tail, &scan_ops, s);
	s->st.bytes += tail.bytes_read;
	if (rc < 0)
		snprintf(s->why, sizeof(s->why), "%s", line_tail__why(&tail));
	line_tail__release(&tail);
	drop_scratch(s);
	return rc < 0 ? rc : 0;
}

int v8log_scan__file(struct v8log_scan *s, const char *path, const struct safe_open_opts *open,
		     struct read_budget *budget)
{
	struct safe_open_opts o = { 0 };
	int rc;

	if (!path)
		return -EINVAL;
	if (open)
		o = *open;
	if (!o.max_bytes)
		o.max_bytes = SAFE_OPEN_CODE_LOG_MAX;
	s->keep_all = false;
	s->st.bytes = 0;
	s->st.rescans = 0;
	s->st.memo_hits = 0;
	rc = read_file(s, path, &o, budget);
	if (!rc && s->need_rescan) {
		s->keep_all = true;
		s->st.rescans++;
		rc = read_file(s, path, &o, budget);
	}
	return rc;
}

int v8log_scan__tail(struct v8log_scan *s, struct line_tail *t)
{
	uint64_t before = t->bytes_read;
	int rc;

	s->keep_all = false;
	s->why[0] = '\0';
	rc = line_tail__read(t, &scan_ops, s);
	if (rc >= 0 && s->need_rescan) {
		/* a dropped source is wanted after all: the whole file again */
		line_tail__rewind(t);
		clear(s);
		s->keep_all = true;
		s->st.rescans++;
		rc = line_tail__read(t, &scan_ops, s);
		s->keep_all = false;
	}
	s->st.bytes += t->bytes_read - before;
	if (rc < 0)
		snprintf(s->why, sizeof(s->why), "%s", line_tail__why(t));
	drop_scratch(s);
	return rc < 0 ? rc : 0;
}

void v8log_scan__restart(struct v8log_scan *s)
{
	clear(s);
}

void v8log_scan__drop_sources(struct v8log_scan *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		free(s->scripts[i].source);
		s->scripts[i].source = NULL;
		s->scripts[i].pub.source = NULL;
	}
	free(s->scratch);
	s->scratch = NULL;
	s->scratch_cap = 0;
}

int v8log_scan__share_memo(struct v8log_scan *s, struct v8log_scan *owner)
{
	if (s->memo || s == owner)
		return -EINVAL;
	if (!owner->memo) {
		owner->memo = calloc(1, sizeof(*owner->memo));
		if (!owner->memo)
			return -ENOMEM;
		owner->memo_owned = true;
	}
	s->memo = owner->memo;
	s->memo_owned = false;
	return 0;
}

int v8log_scan__buf(struct v8log_scan *s, const char *buf, size_t len)
{
	int rc;

	clear(s);
	s->keep_all = false;
	rc = line_tail__feed(buf, len, V8LOG_LINE_MAX, &scan_ops, s);
	if (!rc && s->need_rescan) {
		/* the text is at hand: keep everything and read it again */
		clear(s);
		s->keep_all = true;
		s->st.rescans++;
		rc = line_tail__feed(buf, len, V8LOG_LINE_MAX, &scan_ops, s);
	}
	drop_scratch(s);
	return rc < 0 ? rc : 0;
}

const char *v8log_scan__why(const struct v8log_scan *s)
{
	return s->why;
}

const char *v8log_scan__version(const struct v8log_scan *s)
{
	return s->version;
}

size_t v8log_scan__count(const struct v8log_scan *s)
{
	return s->nr;
}

static int cmp_id(const void *a, const void *b)
{
	const struct scan_script *x = a, *y = b;

	return (x->pub.id > y->pub.id) - (x->pub.id < y->pub.id);
}

const struct v8log_scan_script *v8log_scan__at(struct v8log_scan *s, size_t i)
{
	if (s->unsorted) {
		qsort(s->scripts, s->nr, sizeof(*s->scripts), cmp_id);
		reindex(s);
		s->unsorted = false;
	}
	return i < s->nr ? &s->scripts[i].pub : NULL;
}

void v8log_scan__stats(const struct v8log_scan *s, struct v8log_scan_stats *st)
{
	*st = s->st;
}
