// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8log: incremental reader of V8's per-isolate code log; see v8log.h. */
#include "lib/textscan.h"
#include "symbolize/v8inline.h"
#include "symbolize/v8log.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/perfmap.h"

/* V8's tag names are short words; anything longer is not a tag. */
#define TAG_MAX 64
/* Keep a big scratch buffer between lines, not between updates. */
#define SCRATCH_KEEP (1024 * 1024)

struct vl_code {
	uint64_t start;
	uint64_t size;
	uint64_t sfi;
	size_t name;		/* offset of "tag\0name\0" in names */
	uint32_t name_len;	/* of the name alone */
	uint8_t tag_len;
	char marker[3];
	int32_t kind;
	bool live;		/* visible after the last index build, and not dropped since */
	bool moved;		/* dropped by a move: the copy took over its name */
};

struct vl_parsed {
	struct v8name name;
	char buf[];
};

struct vl_slot {
	uint64_t key;		/* code start */
	size_t val;		/* index + 1 into code; 0 marks an empty slot */
};

/* The public view first, so a struct v8log_script * is also a struct vl_script *. */
struct vl_script {
	struct v8log_script pub;
	char *name;
	char *source;
	char *url;
};

struct v8log {
	struct perfmap_tail tail;
	bool has_file;
	uint64_t isolate;
	pid_t pid;
	char version[128];

	struct vl_code *code;
	size_t nr, cap;
	size_t nr_indexed;	/* code[0..nr_indexed) went through the last index build */
	size_t nr_live;
	bool dropped;		/* entries were dropped by events since the last build */

	char *names;
	size_t names_len, names_cap;

	struct perfmap_span *segs;
	size_t nr_segs;

	/* Exact start address -> live entry, for code-move and code-delete. */
	struct vl_slot *hash;
	size_t hash_cap, hash_nr;

	struct vl_script **scripts;	/* sorted by id */
	size_t nr_scripts, scripts_cap;

	struct vl_parsed **parsed;
	size_t nr_parsed;

	char *scratch;
	size_t scratch_cap;

	uint64_t lines, events;
	size_t malformed, first_malformed, unmatched;
	size_t added;		/* events used by the current call */

	struct v8inline *inl;	/* inlined frames of optimized code */
};

/* ---- fields and numbers ---------------------------------------------- */

struct fld {
	const char *s;
	size_t n;
};

/* Split [p, end) at ',' into at most max fields, the last taking the rest. */
static size_t split(const char *p, const char *end, struct fld *f, size_t max)
{
	size_t nf = 0;
	const char *c;

	while (nf < max) {
		c = nf + 1 < max ? memchr(p, ',', (size_t)(end - p)) : NULL;
		f[nf].s = p;
		f[nf].n = (size_t)((c ? c : end) - p);
		nf++;
		if (!c)
			break;
		p = c + 1;
	}
	return nf;
}


/* The whole field as hex, "0x" optional (V8 always writes it for pointers). */
static bool fld_hex(const struct fld *f, uint64_t *out)
{
	const char *p = f->s, *end = f->s + f->n;
	uint64_t v = 0;
	int d;

	if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (p == end)
		return false;
	for (; p < end; p++) {
		d = textscan__hex_digit(*p);
		if (d < 0 || v > (UINT64_MAX >> 4))
			return false;
		v = (v << 4) | (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool fld_u64(const struct fld *f, uint64_t *out)
{
	uint64_t v = 0, d;
	size_t i;

	if (!f->n)
		return false;
	for (i = 0; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
		d = (uint64_t)(f->s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

static bool fld_int(const struct fld *f, int *out)
{
	struct fld digits = *f;
	bool neg = false;
	uint64_t v;

	if (digits.n && digits.s[0] == '-') {
		neg = true;
		digits.s++;
		digits.n--;
	}
	if (!fld_u64(&digits, &v) || v > (uint64_t)INT_MAX + neg)
		return false;
	*out = neg ? (int)(-(int64_t)v) : (int)v;
	return true;
}

/* A decimal V8 printed (a time, possibly negative): checked, not kept. */
static bool fld_is_number(const struct fld *f)
{
	size_t i = f->n && f->s[0] == '-';

	if (i == f->n || f->n > 21)
		return false;
	for (; i < f->n; i++) {
		if (f->s[i] < '0' || f->s[i] > '9')
			return false;
	}
	return true;
}

static bool fld_is(const struct fld *f, const char *s)
{
	return strlen(s) == f->n && !memcmp(f->s, s, f->n);
}

/* ---- escapes ------------------------------------------------------------ */

enum esc_mode {
	ESC_STRING,	/* a V8 String: \xNN >= 0x80 is the code unit U+00NN */
	ESC_CODE_NAME,	/* raw debug name + String script name, see v8log.h */
};

static int hex_n(const char *s, int n)
{
	int v = 0, d;

	while (n--) {
		d = textscan__hex_digit(*s++);
		if (d < 0)
			return -1;
		v = v << 4 | d;
	}
	return v;
}

static size_t put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		/* A lone surrogate too (WTF-8): V8 strings may hold one. */
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* Value of the "\xNN" at s[0..n), or -1. */
static int esc_x(const char *s, size_t n)
{
	if (n < 4 || s[0] != '\\' || s[1] != 'x')
		return -1;
	return hex_n(s + 2, 2);
}

/*
 * How many "\xNN" escapes starting at s spell one well-formed UTF-8
 * sequence (Unicode 3.9, table 3-7); 0 when they do not.
 */
static size_t utf8_escape_run(const char *s, size_t n)
{
	int b0 = esc_x(s, n), b, lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (b0 >= 0xc2 && b0 <= 0xdf)
		need = 1;
	else if (b0 >= 0xe0 && b0 <= 0xef)
		need = 2;
	else if (b0 >= 0xf0 && b0 <= 0xf4)
		need = 3;
	else
		return 0;
	if (b0 == 0xe0)
		lo = 0xa0;
	else if (b0 == 0xed)
		hi = 0x9f;
	else if (b0 == 0xf0)
		lo = 0x90;
	else if (b0 == 0xf4)
		hi = 0x8f;
	for (i = 1; i <= need; i++) {
		if (n < 4 * (i + 1))
			return 0;
		b = esc_x(s + 4 * i, n - 4 * i);
		if (b < lo || b > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return need + 1;
}

/* Decode in[0..n) into out, which needs n bytes: no escape grows. */
static size_t unescape(const char *in, size_t n, char *out, enum esc_mode mode)
{
	size_t i = 0, o = 0, run, k;
	int v, w;

	while (i < n) {
		if (in[i] != '\\' || i + 1 == n) {
			out[o++] = in[i++];
			continue;
		}
		switch (in[i + 1]) {
		case '\\':
			out[o++] = '\\';
			i += 2;
			continue;
		case 'n':
			out[o++] = '\n';
			i += 2;
			continue;
		case 'x':
			v = esc_x(in + i, n - i);
			if (v < 0)
				break;
			if (v < 0x80) {
				out[o++] = (char)v;
				i += 4;
				continue;
			}
			if (mode == ESC_CODE_NAME && (run = utf8_escape_run(in + i, n - i))) {
				for (k = 0; k < run; k++, i += 4)
					out[o++] = (char)hex_n(in + i + 2, 2);
				continue;
			}
			o += put_utf8(out + o, (uint32_t)v);
			i += 4;
			continue;
		case 'u':
			if (n - i < 6 || (v = hex_n(in + i + 2, 4)) < 0)
				break;
			i += 6;
			/* A high surrogate and a low one: one code point. */
			if (v >= 0xd800 && v <= 0xdbff && n - i >= 6 && in[i] == '\\' &&
			    in[i + 1] == 'u' && (w = hex_n(in + i + 2, 4)) >= 0xdc00 &&
			    w <= 0xdfff) {
				v = 0x10000 + ((v - 0xd800) << 10) + (w - 0xdc00);
				i += 6;
			}
			o += put_utf8(out + o, (uint32_t)v);
			continue;
		default:
			break;
		}
		/* Not an escape V8 writes (or a raw backslash in a debug name): keep it. */
		out[o++] = in[i++];
	}
	return o;
}

/* Decode a field into the scratch buffer, NUL-terminated; NULL on ENOMEM. */
static char *decode(struct v8log *log, const struct fld *f, enum esc_mode mode, size_t *len)
{
	if (log->scratch_cap < f->n + 1) {
		size_t cap = log->scratch_cap ? log->scratch_cap : 4096;
		char *s;

		while (cap < f->n + 1)
			cap *= 2;
		s = realloc(log->scratch, cap);
		if (!s)
			return NULL;
		log->scratch = s;
		log->scratch_cap = cap;
	}
	*len = unescape(f->s, f->n, log->scratch, mode);
	log->scratch[*len] = '\0';
	return log->scratch;
}

/* ---- start address hash ------------------------------------------------ */

static size_t home(uint64_t key, size_t cap)
{
	/* Code starts are aligned: multiply so the low bits are mixed in. */
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static size_t hash_get(const struct v8log *log, uint64_t key)
{
	size_t i;

	if (!log->hash_cap)
		return 0;
	for (i = home(key, log->hash_cap); log->hash[i].val; i = (i + 1) & (log->hash_cap - 1)) {
		if (log->hash[i].key == key)
			return log->hash[i].val;
	}
	return 0;
}

static void hash_insert(struct vl_slot *tab, size_t cap, uint64_t key, size_t val)
{
	size_t i;

	for (i = home(key, cap); tab[i].val; i = (i + 1) & (cap - 1)) {
		if (tab[i].key == key)
			break;
	}
	tab[i].key = key;
	tab[i].val = val;
}

/* Room for one more key, so that the hash_put() after it cannot fail. */
static int hash_reserve(struct v8log *log)
{
	if ((log->hash_nr + 1) * 2 > log->hash_cap) {
		size_t cap = log->hash_cap ? log->hash_cap * 2 : 1024, i;
		struct vl_slot *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (i = 0; i < log->hash_cap; i++) {
			if (log->hash[i].val)
				hash_insert(tab, cap, log->hash[i].key, log->hash[i].val);
		}
		free(log->hash);
		log->hash = tab;
		log->hash_cap = cap;
	}
	return 0;
}

static void hash_put(struct v8log *log, uint64_t key, size_t val)
{
	if (!hash_get(log, key))
		log->hash_nr++;
	hash_insert(log->hash, log->hash_cap, key, val);
}

/* Linear probing: shift later members of the cluster back instead of tombstones. */
static void hash_del(struct v8log *log, uint64_t key)
{
	size_t mask = log->hash_cap - 1, i, j, k;

	if (!log->hash_cap)
		return;
	for (i = home(key, log->hash_cap); log->hash[i].val; i = (i + 1) & mask) {
		if (log->hash[i].key == key)
			break;
	}
	if (!log->hash[i].val)
		return;
	for (j = i;;) {
		j = (j + 1) & mask;
		if (!log->hash[j].val)
			break;
		k = home(log->hash[j].key, log->hash_cap);
		/* Slot j may move to i only if its home is not in (i, j] cyclically. */
		if (i <= j ? (k <= i || k > j) : (k <= i && k > j)) {
			log->hash[i] = log->hash[j];
			i = j;
		}
	}
	log->hash[i].val = 0;
	log->hash_nr--;
}

/* ---- code entries ---------------------------------------------------- */

static void drop_parsed(struct v8log *log)
{
	size_t i;

	if (!log->parsed)
		return;
	for (i = 0; i < log->nr_parsed; i++)
		free(log->parsed[i]);
	free(log->parsed);
	log->parsed = NULL;
	log->nr_parsed = 0;
}

static int code_reserve(struct v8log *log, size_t name_bytes)
{
	if (log->nr == log->cap) {
		size_t cap = log->cap ? log->cap * 2 : 1024;
		struct vl_code *code = realloc(log->code, cap * sizeof(*code));

		if (!code)
			return -ENOMEM;
		log->code = code;
		log->cap = cap;
	}
	if (log->names_cap - log->names_len < name_bytes) {
		size_t cap = log->names_cap ? log->names_cap : 64 * 1024;
		char *names;

		while (cap - log->names_len < name_bytes)
			cap *= 2;
		names = realloc(log->names, cap);
		if (!names)
			return -ENOMEM;
		log->names = names;
		log->names_cap = cap;
	}
	return 0;
}

/* The entry at start, if any, is dead: its memory now holds other code. */
static void drop_at(struct v8log *log, uint64_t start)
{
	size_t idx = hash_get(log, start);

	if (!idx)
		return;
	log->code[idx - 1].live = false;
	log->dropped = true;
	hash_del(log, start);
}

static void note_malformed(struct v8log *log)
{
	if (!log->malformed++)
		log->first_malformed = (size_t)log->lines;
}

static bool valid_marker(const char *s, size_t n)
{
	enum v8name_tier tier;
	bool cs;

	return n <= 2 && v8name__marker_tier(s, n, &tier, &cs);
}

static int ev_code_creation(struct v8log *log, const char *p, const char *end)
{
	struct fld f[6], name, sfi_f, marker = { "", 0 };
	uint64_t start, size, sfi = 0;
	const char *c1, *c2;
	struct vl_code *e;
	size_t len, i;
	char *dec;
	int kind;

	/* tag, kind, time, start, size, then the name and its optional tail */
	if (split(p, end, f, 6) != 6 || !f[0].n || f[0].n > TAG_MAX || !fld_int(&f[1], &kind) ||
	    !fld_is_number(&f[2]) || !fld_hex(&f[3], &start) ||
	    !fld_u64(&f[4], &size) || size > UINT64_MAX - start)
		goto bad;
	for (i = 0; i < f[0].n; i++) {
		char c = f[0].s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			goto bad;
	}

	/*
	 * Function names are written raw and may hold commas: take the
	 * ",0x<sfi>,<marker>" tail from the end, the name is what is left.
	 */
	name = f[5];
	c2 = memrchr(name.s, ',', name.n);
	if (c2 && valid_marker(c2 + 1, (size_t)(name.s + name.n - c2 - 1))) {
		c1 = memrchr(name.s, ',', (size_t)(c2 - name.s));
		sfi_f.s = c1 ? c1 + 1 : NULL;
		sfi_f.n = c1 ? (size_t)(c2 - c1 - 1) : 0;
		if (c1 && sfi_f.n > 2 && sfi_f.s[0] == '0' && sfi_f.s[1] == 'x' &&
		    fld_hex(&sfi_f, &sfi)) {
			marker.s = c2 + 1;
			marker.n = (size_t)(name.s + name.n - marker.s);
			name.n = (size_t)(c1 - name.s);
		}
	}

	/* Whatever started here before is gone: code objects do not overlap. */
	if (!size) {
		drop_at(log, start);
		return 1;	/* and this covers nothing */
	}
	dec = decode(log, &name, ESC_CODE_NAME, &len);
	if (!dec || len > UINT32_MAX || code_reserve(log, f[0].n + 1 + len + 1) < 0 ||
	    hash_reserve(log) < 0)
		return -ENOMEM;
	drop_at(log, start);
	hash_put(log, start, log->nr + 1);
	e = &log->code[log->nr];
	e->start = start;
	e->size = size;
	e->sfi = sfi;
	e->kind = kind;
	e->name = log->names_len;
	e->name_len = (uint32_t)len;
	e->tag_len = (uint8_t)f[0].n;
	memcpy(e->marker, marker.s, marker.n);
	e->marker[marker.n] = '\0';
	e->live = true;
	e->moved = false;
	memcpy(log->names + log->names_len, f[0].s, f[0].n);
	log->names[log->names_len + f[0].n] = '\0';
	memcpy(log->names + log->names_len + f[0].n + 1, dec, len);
	log->names[log->names_len + f[0].n + 1 + len] = '\0';
	log->names_len += f[0].n + 1 + len + 1;
	log->nr++;
	if (sfi && f[0].n == 2 && !memcmp(f[0].s, "JS", 2) &&
	    v8inline__function(log->inl, sfi, log->names + e->name + f[0].n + 1, len))
		return -ENOMEM;
	return 1;
bad:
	note_malformed(log);
	return 0;
}

static int ev_code_move(struct v8log *log, const char *p, const char *end)
{
	uint64_t from, to;
	struct vl_code copy;
	struct fld f[2];
	size_t idx;

	if (split(p, end, f, 2) != 2 || !fld_hex(&f[0], &from) || !fld_hex(&f[1], &to))
		goto bad;
	v8inline__move(log->inl, from, to);
	idx = hash_get(log, from);
	if (!idx) {
		/* Code logged before we looked, or while V8 stopped logging. */
		log->unmatched++;
		return 1;
	}
	copy = log->code[idx - 1];
	if (copy.size > UINT64_MAX - to)
		goto bad;
	if (from == to)
		return 1;
	if (code_reserve(log, 0) < 0 || hash_reserve(log) < 0)
		return -ENOMEM;
	drop_at(log, from);
	drop_at(log, to);
	hash_put(log, to, log->nr + 1);
	/* The moved code is the newest at its new place: a new entry, same name. */
	log->code[idx - 1].moved = true;
	copy.start = to;
	copy.live = true;
	copy.moved = false;
	log->code[log->nr++] = copy;
	return 1;
bad:
	note_malformed(log);
	return 0;
}

static int ev_code_delete(struct v8log *log, const char *p, const char *end)
{
	struct fld f[1];
	uint64_t start;

	if (split(p, end, f, 1) != 1 || !fld_hex(&f[0], &start)) {
		note_malformed(log);
		return 0;
	}
	if (!hash_get(log, start))
		log->unmatched++;
	drop_at(log, start);
	return 1;
}

/* ---- scripts ------------------------------------------------------------ */

static void script_free(struct vl_script *s)
{
	free(s->name);
	free(s->source);
	free(s->url);
	free(s);
}

/* The script with id; created (empty) when create and absent.  NULL: ENOMEM or absent. */
static struct vl_script *script_get(struct v8log *log, int id, bool create)
{
	size_t lo = 0, hi = log->nr_scripts;
	struct vl_script *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (log->scripts[mid]->pub.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < log->nr_scripts && log->scripts[lo]->pub.id == id)
		return log->scripts[lo];
	if (!create)
		return NULL;
	if (log->nr_scripts == log->scripts_cap) {
		size_t cap = log->scripts_cap ? log->scripts_cap * 2 : 64;
		struct vl_script **scripts = realloc(log->scripts, cap * sizeof(*scripts));

		if (!scripts)
			return NULL;
		log->scripts = scripts;
		log->scripts_cap = cap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pub.id = id;
	s->pub.name = "";
	s->pub.sha256_hex[0] = '\0';
	/* Ids grow as V8 compiles, so this is an append but for odd logs. */
	memmove(log->scripts + lo + 1, log->scripts + lo,
		(log->nr_scripts - lo) * sizeof(*log->scripts));
	log->scripts[lo] = s;
	log->nr_scripts++;
	return s;
}

/* Replace *slot by a copy of the decoded field; NULL *slot and "" keep nothing. */
static int set_string(struct v8log *log, const struct fld *f, char **slot, size_t *lenp)
{
	size_t len;
	char *dec = decode(log, f, ESC_STRING, &len), *copy;

	if (!dec)
		return -ENOMEM;
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, dec, len + 1);
	free(*slot);
	*slot = copy;
	if (lenp)
		*lenp = len;
	return 0;
}

static int ev_script_source(struct v8log *log, const char *p, const char *end)
{
	struct vl_script *s;
	struct fld f[3];
	int id;

	if (split(p, end, f, 3) != 3 || !fld_int(&f[0], &id)) {
		note_malformed(log);
		return 0;
	}
	s = script_get(log, id, true);
	if (!s || set_string(log, &f[1], &s->name, NULL) < 0 ||
	    set_string(log, &f[2], &s->source, &s->pub.source_len) < 0)
		return -ENOMEM;
	s->pub.name = s->name;
	s->pub.source = s->source;
	sha256__digest(s->source, s->pub.source_len, s->pub.sha256);
	sha256__hex(s->pub.sha256, s->pub.sha256_hex);
	return 1;
}

static int ev_script_details(struct v8log *log, const char *p, const char *end)
{
	struct vl_script *s;
	struct fld f[5];
	int id, line, col;

	if (split(p, end, f, 5) != 5 || !fld_int(&f[0], &id) || !fld_int(&f[2], &line) ||
	    !fld_int(&f[3], &col)) {
		note_malformed(log);
		return 0;
	}
	s = script_get(log, id, true);
	if (!s)
		return -ENOMEM;
	if (f[1].n) {
		if (set_string(log, &f[1], &s->name, NULL) < 0)
			return -ENOMEM;
		s->pub.name = s->name;
	}
	if (f[4].n) {
		if (set_string(log, &f[4], &s->url, NULL) < 0)
			return -ENOMEM;
		s->pub.source_mapping_url = s->url;
	}
	s->pub.line_offset = line;
	s->pub.column_offset = col;
	return 1;
}

static int ev_version(struct v8log *log, const char *p, const char *end)
{
	struct fld f[7];
	size_t nf = split(p, end, f, 7), i;
	uint64_t v;

	/* major, minor, build, patch[, embedder], candidate */
	if (nf < 5 || nf > 6 || !fld_u64(&f[nf - 1], &v))
		goto bad;
	for (i = 0; i < 4; i++) {
		if (!fld_u64(&f[i], &v))
			goto bad;
	}
	snprintf(log->version, sizeof(log->version), "%.*s.%.*s.%.*s.%.*s%.*s", (int)f[0].n,
		 f[0].s, (int)f[1].n, f[1].s, (int)f[2].n, f[2].s, (int)f[3].n, f[3].s,
		 nf == 6 ? (int)(f[4].n > 64 ? 64 : f[4].n) : 0, nf == 6 ? f[4].s : "");
	return 1;
bad:
	note_malformed(log);
	return 0;
}

/* ---- lines ---------------------------------------------------------------- */

static int parse_line(struct v8log *log, const char *line, size_t len)
{
	const char *end = line + len, *comma, *rest;
	struct fld ev;
	int ret;

	log->lines++;
	if (!line) {
		note_malformed(log);
		return 0;
	}
	comma = memchr(line, ',', len);
	ev.s = line;
	ev.n = (size_t)((comma ? comma : end) - line);
	rest = comma ? comma + 1 : end;
	if (!comma) {
		/* A few events have no fields ("shared-library-end"); anything else is junk. */
		for (size_t i = 0; i < len; i++) {
			if (!((line[i] >= 'a' && line[i] <= 'z') || line[i] == '-')) {
				note_malformed(log);
				break;
			}
		}
		return 0;
	}
	if (fld_is(&ev, "code-creation"))
		ret = ev_code_creation(log, rest, end);
	else if (fld_is(&ev, "code-move"))
		ret = ev_code_move(log, rest, end);
	else if (fld_is(&ev, "code-delete"))
		ret = ev_code_delete(log, rest, end);
	else if (fld_is(&ev, "script-source"))
		ret = ev_script_source(log, rest, end);
	else if (fld_is(&ev, "script-details"))
		ret = ev_script_details(log, rest, end);
	else if (fld_is(&ev, "v8-version"))
		ret = ev_version(log, rest, end);
	else if (fld_is(&ev, "code-source-info")) {
		ret = v8inline__source_info(log->inl, rest, (size_t)(end - rest));
		if (!ret)
			note_malformed(log);
	}
	else
		return 0;
	if (ret > 0) {
		log->events++;
		log->added++;
	}
	return ret < 0 ? ret : 0;
}

/* ---- index ------------------------------------------------------------------ */

static int span_cmp(const void *a, const void *b)
{
	const struct perfmap_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

/*
 * Drop dead entries and their names, keep the order (age).  Everything is
 * allocated first: failing leaves all as it was, compaction is only about
 * memory.
 */
static int compact(struct v8log *log, size_t live_names)
{
	size_t *remap, r, w = 0, off = 0, cap = 16;
	struct vl_slot *hash;
	char *names;

	while (cap < log->nr_live * 2)
		cap *= 2;
	remap = malloc(log->nr * sizeof(*remap));
	names = malloc(live_names ? live_names : 1);
	hash = calloc(cap, sizeof(*hash));
	if (!remap || !names || !hash) {
		free(remap);
		free(names);
		free(hash);
		return -ENOMEM;
	}
	for (r = 0; r < log->nr; r++) {
		struct vl_code *e = &log->code[r];
		size_t bytes = (size_t)e->tag_len + 1 + e->name_len + 1;

		if (r < log->nr_parsed && !e->live) {
			free(log->parsed[r]);
			log->parsed[r] = NULL;
		}
		if (!e->live)
			continue;
		if (r < log->nr_parsed) {
			struct vl_parsed *parsed = log->parsed[r];

			log->parsed[r] = NULL;
			log->parsed[w] = parsed;
		}
		memcpy(names + off, log->names + e->name, bytes);
		log->code[w] = *e;
		log->code[w].name = off;
		off += bytes;
		hash_insert(hash, cap, e->start, w + 1);
		remap[r] = w++;
	}
	for (r = 0; r < log->nr_segs; r++)
		log->segs[r].id = remap[log->segs[r].id];
	free(remap);
	free(log->names);
	log->names = names;
	log->names_len = log->names_cap = live_names;
	free(log->hash);
	log->hash = hash;
	log->hash_cap = cap;
	log->hash_nr = w;
	log->nr = log->nr_indexed = w;
	if (log->cap > 1024 && log->cap / 4 > log->nr) {
		size_t ncap = log->nr * 2 > 1024 ? log->nr * 2 : 1024;
		struct vl_code *code = realloc(log->code, ncap * sizeof(*code));

		if (code) {
			log->code = code;
			log->cap = ncap;
		}
	}
	return 0;
}

/*
 * As in perfmap: the visible pieces of the old entries (less those dropped
 * by moves and deletes since) flattened with the new entries.  What a
 * dropped entry hid stays hidden: it was dead code under live code.
 */
static int reindex(struct v8log *log)
{
	size_t k = 0, nr_in = 0, i, j, nr_old = 0, nr_segs;
	size_t dead = 0, dead_names = 0, live_names = 0;
	struct perfmap_span *in, *segs;
	bool sorted = true;
	int err;

	if (log->nr_indexed == log->nr && !log->dropped)
		return 0;
	in = malloc((log->nr_segs + log->nr - log->nr_indexed + 1) * sizeof(*in));
	if (!in)
		return -ENOMEM;
	for (i = 0; i < log->nr_segs; i++) {
		if (log->code[log->segs[i].id].live)
			log->segs[nr_old++] = log->segs[i];
	}
	log->nr_segs = nr_old;
	for (i = log->nr_indexed; i < log->nr; i++) {
		struct perfmap_span *s = &in[nr_old + k];

		if (!log->code[i].live)
			continue;
		s->start = log->code[i].start;
		s->end = log->code[i].start + log->code[i].size;
		s->id = i;
		if (k && s->start < s[-1].start)
			sorted = false;
		k++;
	}
	if (!sorted)
		qsort(in + nr_old, k, sizeof(*in), span_cmp);
	i = 0;
	j = nr_old;
	while (i < nr_old || j < nr_old + k) {
		if (j == nr_old + k || (i < nr_old && log->segs[i].start <= in[j].start))
			in[nr_in++] = log->segs[i++];
		else
			in[nr_in++] = in[j++];
	}
	err = perfmap_spans__flatten(in, nr_in, &segs, &nr_segs);
	free(in);
	if (err < 0)
		return err;
	free(log->segs);
	log->segs = segs;
	log->nr_segs = nr_segs;
	log->nr_indexed = log->nr;
	log->dropped = false;

	/*
	 * Live now means visible somewhere.  Entries hidden by newer code leave
	 * the start hash: a later move of that address is about the new code.
	 */
	for (i = 0; i < log->nr; i++)
		log->code[i].live = false;
	for (i = 0; i < nr_segs; i++)
		log->code[segs[i].id].live = true;
	for (i = 0; i < log->nr; i++) {
		struct vl_code *e = &log->code[i];
		size_t bytes = (size_t)e->tag_len + 1 + e->name_len + 1;

		if (e->live) {
			live_names += bytes;
			continue;
		}
		if (hash_get(log, e->start) == i + 1)
			hash_del(log, e->start);
		dead++;
		if (!e->moved)
			dead_names += bytes;
	}
	log->nr_live = log->nr - dead;
	if (dead * 2 > log->nr || dead_names * 2 > log->names_len)
		compact(log, live_names);
	return 0;
}

/* ---- API ---------------------------------------------------------------------- */

static int tail_restart(void *ctx);

static int tail_line(void *ctx, const char *line, size_t len)
{
	return parse_line(ctx, line, len);
}

static const struct perfmap_tail_ops tail_ops = {
	.restart = tail_restart,
	.line = tail_line,
};

static void clear(struct v8log *log)
{
	size_t i;

	drop_parsed(log);
	for (i = 0; i < log->nr_scripts; i++)
		script_free(log->scripts[i]);
	log->nr_scripts = 0;
	log->nr = log->nr_indexed = log->nr_live = 0;
	log->dropped = false;
	log->names_len = 0;
	free(log->segs);
	log->segs = NULL;
	log->nr_segs = 0;
	free(log->hash);
	log->hash = NULL;
	log->hash_cap = log->hash_nr = 0;
	log->version[0] = '\0';
	log->lines = log->events = 0;
	log->malformed = log->first_malformed = log->unmatched = 0;
	log->added = 0;
	v8inline__clear(log->inl);
}

static int tail_restart(void *ctx)
{
	clear(ctx);
	return 0;
}

struct v8log *v8log__new(const char *path)
{
	struct v8log *log = calloc(1, sizeof(*log));

	if (!log)
		return NULL;
	log->inl = v8inline__new();
	if (!log->inl) {
		free(log);
		errno = ENOMEM;
		return NULL;
	}
	if (path) {
		if (perfmap_tail__init(&log->tail, path, V8LOG_LINE_MAX) < 0) {
			v8inline__free(log->inl);
			free(log);
			errno = ENOMEM;
			return NULL;
		}
		log->has_file = true;
		if (v8log__parse_filename(path, &log->isolate, &log->pid) < 0) {
			log->isolate = 0;
			log->pid = 0;
		}
	}
	return log;
}

void v8log__free(struct v8log *log)
{
	if (!log)
		return;
	clear(log);
	if (log->has_file)
		perfmap_tail__release(&log->tail);
	free(log->scripts);
	free(log->code);
	free(log->names);
	free(log->scratch);
	v8inline__free(log->inl);
	free(log);
}

static const char *source_by_id(void *ctx, int id, size_t *len)
{
	const struct v8log_script *sc = v8log__script(ctx, id);

	*len = sc ? sc->source_len : 0;
	return sc ? sc->source : NULL;
}

static const char *source_by_name(void *ctx, const char *name, size_t *len)
{
	const struct v8log *log = ctx;

	for (size_t i = 0; i < log->nr_scripts; i++) {
		const struct v8log_script *sc = &log->scripts[i]->pub;

		if (sc->source && !strcmp(sc->name, name)) {
			*len = sc->source_len;
			return sc->source;
		}
	}
	*len = 0;
	return NULL;
}

int v8log__inline_stack(struct v8log *log, uint64_t start, uint64_t off,
			struct v8inline_frame *frames, size_t max, struct v8inline_frame *outer)
{
	const struct v8inline_sources src = {
		.by_id = source_by_id,
		.by_name = source_by_name,
		.ctx = log,
	};

	return v8inline__stack(log->inl, start, off, &src, frames, max, outer);
}

static int finish(struct v8log *log, int err)
{
	int ierr = reindex(log);

	if (log->scratch_cap > SCRATCH_KEEP) {
		free(log->scratch);
		log->scratch = NULL;
		log->scratch_cap = 0;
	}
	if (err < 0)
		return err;
	if (ierr < 0)
		return ierr;
	return log->added > INT_MAX ? INT_MAX : (int)log->added;
}

int v8log__update(struct v8log *log)
{
	if (!log->has_file)
		return -EINVAL;
	log->added = 0;
	return finish(log, perfmap_tail__read(&log->tail, &tail_ops, log));
}

int v8log__parse_buf(struct v8log *log, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	int err = 0;

	log->added = 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		err = parse_line(log, p, (size_t)(nl - p));
		if (err < 0)
			break;
		p = nl + 1;
	}
	return finish(log, err);
}

uint64_t v8log__isolate(const struct v8log *log)
{
	return log->isolate;
}

pid_t v8log__pid(const struct v8log *log)
{
	return log->pid;
}

const char *v8log__version(const struct v8log *log)
{
	return log->version;
}

size_t v8log__script_count(const struct v8log *log)
{
	return log->nr_scripts;
}

const struct v8log_script *v8log__script_at(const struct v8log *log, size_t i)
{
	return i < log->nr_scripts ? &log->scripts[i]->pub : NULL;
}

const struct v8log_script *v8log__script(const struct v8log *log, int id)
{
	struct vl_script *s = script_get((struct v8log *)log, id, false);

	return s ? &s->pub : NULL;
}

int v8log__lookup(struct v8log *log, uint64_t addr, struct v8log_sym *out)
{
	ptrdiff_t i = perfmap_spans__find(log->segs, log->nr_segs, addr);
	const struct vl_code *e;
	struct vl_parsed *parsed;
	const char *tag, *name;
	size_t id;

	if (i < 0)
		return -ENOENT;
	id = log->segs[i].id;
	e = &log->code[id];
	tag = log->names + e->name;
	name = tag + e->tag_len + 1;
	if (log->nr_parsed < log->nr) {
		struct vl_parsed **grown = realloc(log->parsed, log->nr * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		memset(grown + log->nr_parsed, 0, (log->nr - log->nr_parsed) * sizeof(*grown));
		log->parsed = grown;
		log->nr_parsed = log->nr;
	}
	parsed = log->parsed[id];
	if (!parsed) {
		size_t size = v8name__buf_size(e->name_len);

		parsed = malloc(sizeof(*parsed) + size);
		if (!parsed)
			return -ENOMEM;
		v8name__parse_log(tag, e->marker, name, e->name_len, &parsed->name, parsed->buf,
				  size);
		log->parsed[id] = parsed;
	}
	out->start = e->start;
	out->size = e->size;
	out->kind = e->kind;
	out->sfi = e->sfi;
	out->raw = name;
	out->name = parsed->name;
	return 0;
}

size_t v8log__count(const struct v8log *log)
{
	return log->nr_live;
}

size_t v8log__malformed(const struct v8log *log)
{
	return log->malformed;
}

size_t v8log__first_malformed_line(const struct v8log *log)
{
	return log->first_malformed;
}

void v8log__stats(const struct v8log *log, struct v8log_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	st->code = log->nr_live;
	st->segments = log->nr_segs;
	st->scripts = log->nr_scripts;
	st->lines = log->lines;
	st->events = log->events;
	st->malformed = log->malformed;
	st->first_malformed_line = log->first_malformed;
	st->unmatched_moves = log->unmatched;
	st->mem_bytes = sizeof(*log) + log->cap * sizeof(*log->code) + log->names_cap +
			log->nr_segs * sizeof(*log->segs) + log->hash_cap * sizeof(*log->hash) +
			log->scripts_cap * sizeof(*log->scripts) + log->scratch_cap;
	for (i = 0; i < log->nr_scripts; i++) {
		const struct vl_script *s = log->scripts[i];

		st->mem_bytes += sizeof(*s) + (s->source ? s->pub.source_len + 1 : 0) +
				 (s->name ? strlen(s->name) + 1 : 0) +
				 (s->url ? strlen(s->url) + 1 : 0);
	}
	if (log->has_file) {
		st->offset = log->tail.offset;
		st->bytes_read = log->tail.bytes_read;
		st->restarts = log->tail.restarts;
		st->mem_bytes += log->tail.cap;
	}
}

/* ---- file names ------------------------------------------------------------ */

int v8log__parse_filename(const char *name, uint64_t *isolate, pid_t *pid)
{
	const char *p = strrchr(name, '/');
	uint64_t addr = 0, v = 0;
	int d, digits = 0;

	p = p ? p + 1 : name;
	if (strncmp(p, "isolate-", 8))
		return -EINVAL;
	/*
	 * V8 streams the isolate pointer with operator<<: glibc and libc++
	 * both write 0x.  Requiring it keeps unrelated files out.
	 */
	p += 8;
	if (strncmp(p, "0x", 2))
		return -EINVAL;
	p += 2;
	for (; (d = textscan__hex_digit(*p)) >= 0; p++) {
		if (++digits > 16)
			return -EINVAL;
		addr = addr << 4 | (uint64_t)d;
	}
	if (!digits || *p++ != '-')
		return -EINVAL;
	for (digits = 0; *p >= '0' && *p <= '9'; p++) {
		if (++digits > 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (!digits || !v || v > INT_MAX || *p++ != '-' || !*p)
		return -EINVAL;
	*isolate = addr;
	*pid = (pid_t)v;
	return 0;
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **v8log__find(const char *dir, pid_t pid)
{
	size_t n = 0, cap = 8;
	char **paths = malloc(cap * sizeof(*paths)), **grown;
	const char *sep;
	struct dirent *de;
	uint64_t isolate;
	pid_t file_pid;
	DIR *d;
	int err;

	if (!paths)
		return NULL;
	d = opendir(dir);
	if (!d) {
		err = errno;
		free(paths);
		errno = err;
		return NULL;
	}
	/* "/" and "dir/" take no second slash: discovery compares these paths */
	sep = *dir && dir[strlen(dir) - 1] == '/' ? "" : "/";
	while ((errno = 0, de = readdir(d))) {
		if (v8log__parse_filename(de->d_name, &isolate, &file_pid) < 0 ||
		    (pid > 0 && file_pid != pid))
			continue;
		if (n + 1 == cap) {
			cap *= 2;
			grown = realloc(paths, cap * sizeof(*paths));
			if (!grown)
				goto nomem;
			paths = grown;
		}
		if (asprintf(&paths[n], "%s%s%s", dir, sep, de->d_name) < 0)
			goto nomem;
		n++;
	}
	err = errno;
	closedir(d);
	if (err) {
		paths[n] = NULL;
		v8log__find_free(paths);
		errno = err;
		return NULL;
	}
	qsort(paths, n, sizeof(*paths), path_cmp);
	paths[n] = NULL;
	return paths;
nomem:
	closedir(d);
	paths[n] = NULL;
	v8log__find_free(paths);
	errno = ENOMEM;
	return NULL;
}

void v8log__find_free(char **paths)
{
	char **p;

	if (!paths)
		return;
	for (p = paths; *p; p++)
		free(*p);
	free(paths);
}
