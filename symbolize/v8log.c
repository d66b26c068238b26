// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8log: incremental reader of V8's per-isolate code log; see v8log.h. */
#include "symbolize/v8log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/line_tail.h"
#include "lib/textscan.h"
#include "symbolize/code_index.h"
#include "symbolize/v8inline.h"
#include "symbolize/v8log_fields.h"

/* V8's tag names are short words; anything longer is not a tag. */
#define TAG_MAX 64
/* Keep a big scratch buffer between lines, not between updates. */
#define SCRATCH_KEEP (1024 * 1024)

/*
 * What a code entry keeps besides its range and name.  The name in the
 * code index is "tag\0name": the tag is the first tag_len bytes.
 */
struct vl_code {
	uint64_t sfi;
	int32_t kind;
	uint8_t tag_len;
	char marker[4];		/* "*", "o*'": at most 3 */
};

/* The public view first, so a struct v8log_script * is also a struct vl_script *. */
struct vl_script {
	struct v8log_script pub;
	char *name;
	char *source;
	char *url;
	/* source and its line starts for v8inline, built on first use */
	struct v8inline_script view;
	uint32_t *line_starts;
};

struct v8log {
	struct line_tail tail;
	bool has_file;
	uint64_t isolate;
	pid_t pid;
	char version[128];

	struct code_index *code;

	/*
	 * Sorted by id when scripts_unsorted is false: ids grow as V8
	 * compiles, but a log that lists them backwards must not cost an
	 * insertion per line, so new ones are appended, found through
	 * script_tab, and sorted when someone lists them.
	 */
	struct vl_script **scripts;
	size_t nr_scripts, scripts_cap;
	bool scripts_unsorted;
	struct index_table script_tab;	/* id -> scripts[] */
	struct index_table name_tab;	/* name -> first script (by id) with a source */
	bool names_stale;

	char *scratch;
	size_t scratch_cap;

	uint64_t lines, events;
	size_t malformed, first_malformed, unmatched;
	size_t added;		/* events used by the current call */

	struct v8inline *inl;	/* inlined frames of optimized code */
};

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
		if (in[i] != '\\') {
			/* a run without escapes (most of a source) in one copy */
			const char *bs = memchr(in + i, '\\', n - i);
			size_t run = bs ? (size_t)(bs - (in + i)) : n - i;

			memcpy(out + o, in + i, run);
			o += run;
			i += run;
			continue;
		}
		if (i + 1 == n) {
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

size_t v8log__unescape_string(const char *in, size_t n, char *out)
{
	return unescape(in, n, out, ESC_STRING);
}

/*
 * Decode a field into the scratch buffer after a copy of prefix[0..plen)
 * (nothing when plen is 0), NUL-terminated; *len counts both.  NULL on
 * ENOMEM.
 */
static char *decode_after(struct v8log *log, const char *prefix, size_t plen,
			  const struct fld *f, enum esc_mode mode, size_t *len)
{
	if (array_grow(&log->scratch, &log->scratch_cap, plen + f->n + 1))
		return NULL;
	if (plen)
		memcpy(log->scratch, prefix, plen);
	*len = plen + unescape(f->s, f->n, log->scratch + plen, mode);
	log->scratch[*len] = '\0';
	return log->scratch;
}

static char *decode(struct v8log *log, const struct fld *f, enum esc_mode mode, size_t *len)
{
	return decode_after(log, NULL, 0, f, mode, len);
}

/* ---- code entries ---------------------------------------------------- */

/*
 * The parsed name must not point into the code index's names, which move:
 * the tag is copied behind what v8name__parse_log() needs (size holds
 * exactly that: v8name__buf_size() of tag, NUL and name).
 */
static void parse_name(const char *name, size_t len, const void *payload, struct v8name *out,
		       char *buf, size_t size)
{
	const struct vl_code *c = payload;
	size_t fn_len = len - c->tag_len - 1, fn_size = v8name__buf_size(fn_len);
	char *tag = buf + fn_size;

	memcpy(tag, name, (size_t)c->tag_len + 1);
	v8name__parse_log(tag, c->marker, name + c->tag_len + 1, fn_len, out, buf,
			  size - c->tag_len - 1);
}

static const struct code_index_opts code_opts = {
	.payload_size = sizeof(struct vl_code),
	.by_start = true,
	.parse = parse_name,
};

/* The code at start, if any, is gone: its memory now holds other code. */
static void drop_at(struct v8log *log, uint64_t start)
{
	long id = code_index__find_start(log->code, start);

	if (id >= 0)
		code_index__drop(log->code, (size_t)id);
	v8inline__drop(log->inl, start);
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

	/* on-stack-replacement code has a leading 'o': "o*", "o+", "o*'" */
	if (n >= 2 && n <= 3 && s[0] == 'o' && (s[1] == '^' || s[1] == '+' || s[1] == '*')) {
		s++;
		n--;
	}
	return n <= 2 && v8name__marker_tier(s, n, &tier, &cs);
}

static bool valid_tag(const struct fld *f)
{
	size_t i;

	if (!f->n || f->n > TAG_MAX)
		return false;
	for (i = 0; i < f->n; i++) {
		char c = f->s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * Function names are written raw and may hold commas: take the
 * ",0x<sfi>,<marker>" tail from the end of *name, the name is what is left.
 */
static void split_name_tail(struct fld *name, uint64_t *sfi, struct fld *marker)
{
	const char *c1, *c2 = memrchr(name->s, ',', name->n);
	struct fld sfi_f;

	if (!c2 || !valid_marker(c2 + 1, (size_t)(name->s + name->n - c2 - 1)))
		return;
	c1 = memrchr(name->s, ',', (size_t)(c2 - name->s));
	if (!c1)
		return;
	sfi_f.s = c1 + 1;
	sfi_f.n = (size_t)(c2 - c1 - 1);
	if (sfi_f.n > 2 && sfi_f.s[0] == '0' && sfi_f.s[1] == 'x' && fld_hex(&sfi_f, sfi)) {
		marker->s = c2 + 1;
		marker->n = (size_t)(name->s + name->n - marker->s);
		name->n = (size_t)(c1 - name->s);
	}
}

static int ev_code_creation(struct v8log *log, const char *p, const char *end)
{
	struct fld f[6], name, marker = { "", 0 };
	uint64_t start, size, sfi = 0;
	struct vl_code c = { 0 };
	size_t len;
	char *dec;
	long id;
	int kind;

	/* tag, kind, time, start, size, then the name and its optional tail */
	if (split(p, end, f, 6) != 6 || !valid_tag(&f[0]) || !fld_int(&f[1], &kind) ||
	    !fld_is_number(&f[2]) || !fld_hex(&f[3], &start) ||
	    !fld_u64(&f[4], &size) || size > UINT64_MAX - start) {
		note_malformed(log);
		return 0;
	}
	name = f[5];
	split_name_tail(&name, &sfi, &marker);

	if (!size) {
		/* Whatever started here before is gone, and this covers nothing. */
		drop_at(log, start);
		return 1;
	}
	dec = decode_after(log, f[0].s, f[0].n + 1, &name, ESC_CODE_NAME, &len);
	if (!dec)
		return -ENOMEM;
	/* The tag's comma becomes the NUL between tag and name. */
	dec[f[0].n] = '\0';
	c.sfi = sfi;
	c.kind = kind;
	c.tag_len = (uint8_t)f[0].n;
	memcpy(c.marker, marker.s, marker.n);
	c.marker[marker.n] = '\0';
	/*
	 * A creation at the start of live code replaces it (code_index.h), and
	 * the old code's inlining with it: new code that inlined nothing logs
	 * no table of its own to replace it.
	 */
	id = code_index__find_start(log->code, start);
	if (id >= 0) {
		struct code_entry old;

		/*
		 * Tiering replaces code at the same start (Maglev's OSR code
		 * freed, TurboFan's logged where it was): samples taken in the
		 * old code still need its inlining.
		 */
		code_index__get(log->code, (size_t)id, &old);
		if (old.size > size && v8inline__retire(log->inl, start, old.size))
			return -ENOMEM;
	}
	v8inline__drop(log->inl, start);
	id = code_index__add(log->code, start, size, dec, len, &c);
	if (id < 0)
		return -ENOMEM;
	if (sfi && f[0].n == 2 && !memcmp(f[0].s, "JS", 2) &&
	    v8inline__function(log->inl, sfi, dec + f[0].n + 1, len - f[0].n - 1))
		return -ENOMEM;
	/* TurboFan '*', Maglev '+', Sparkplug '^': a sample's line is in its table */
	if (f[0].n == 2 && !memcmp(f[0].s, "JS", 2) && marker.n &&
	    memchr("*+^", marker.s[marker.n - 1], 3))
		v8inline__want_positions(log->inl, start);
	return 1;
}

static int ev_code_move(struct v8log *log, const char *p, const char *end)
{
	struct code_entry e;
	uint64_t from, to;
	struct fld f[2];
	long id;

	if (split(p, end, f, 2) != 2 || !fld_hex(&f[0], &from) || !fld_hex(&f[1], &to))
		goto bad;
	v8inline__move(log->inl, from, to);
	id = code_index__find_start(log->code, from);
	if (id < 0) {
		/* Code logged before we looked, or while V8 stopped logging. */
		log->unmatched++;
		return 1;
	}
	code_index__get(log->code, (size_t)id, &e);
	if (e.size > UINT64_MAX - to)
		goto bad;
	if (from == to)
		return 1;
	/* The moved code is the newest at its new place: a new entry, same name. */
	id = code_index__move(log->code, (size_t)id, to);
	return id < 0 ? (int)id : 1;
bad:
	note_malformed(log);
	return 0;
}

/* sfi-move,<from>,<to>: an SFI moved by the GC; inlined frames name it by address. */
static int ev_sfi_move(struct v8log *log, const char *p, const char *end)
{
	uint64_t from, to;
	struct fld f[2];

	if (split(p, end, f, 2) != 2 || !fld_hex(&f[0], &from) || !fld_hex(&f[1], &to)) {
		note_malformed(log);
		return 0;
	}
	return v8inline__sfi_move(log->inl, from, to) < 0 ? -ENOMEM : 1;
}

static int ev_code_delete(struct v8log *log, const char *p, const char *end)
{
	struct fld f[1];
	uint64_t start;

	if (split(p, end, f, 1) != 1 || !fld_hex(&f[0], &start)) {
		note_malformed(log);
		return 0;
	}
	if (code_index__find_start(log->code, start) < 0)
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
	free(s->line_starts);
	free(s);
}

static uint32_t script_hash(int id)
{
	return hash__fold32(hash__mix64((uint64_t)(uint32_t)id));
}

static bool script_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8log *)ctx)->scripts[idx]->pub.id == *(const int *)key;
}

static int script_cmp(const void *a, const void *b)
{
	const struct vl_script *x = *(const struct vl_script *const *)a;
	const struct vl_script *y = *(const struct vl_script *const *)b;

	return (x->pub.id > y->pub.id) - (x->pub.id < y->pub.id);
}

/* Sort the scripts by id again and re-index them (after a log listed them out of order). */
static void scripts_sort(struct v8log *log)
{
	if (!log->scripts_unsorted)
		return;
	qsort(log->scripts, log->nr_scripts, sizeof(*log->scripts), script_cmp);
	index_table__clear(&log->script_tab);
	for (size_t i = 0; i < log->nr_scripts; i++) {
		size_t slot;
		int id = log->scripts[i]->pub.id;

		/* the table held them all before: no reserve needed */
		index_table__lookup(&log->script_tab, script_hash(id), script_eq, log, &id, &slot);
		index_table__set(&log->script_tab, slot, script_hash(id), (uint32_t)i);
	}
	log->scripts_unsorted = false;
	log->names_stale = true;
}

/* The script with id; created (empty) when create and absent.  NULL: ENOMEM or absent. */
static struct vl_script *script_get(struct v8log *log, int id, bool create)
{
	struct vl_script *s;
	size_t slot;
	long i;

	i = index_table__lookup(&log->script_tab, script_hash(id), script_eq, log, &id, NULL);
	if (i >= 0)
		return log->scripts[i];
	if (!create)
		return NULL;
	if (log->nr_scripts >= UINT32_MAX - 1 || index_table__reserve(&log->script_tab) ||
	    array_grow(&log->scripts, &log->scripts_cap, log->nr_scripts + 1))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->pub.id = id;
	s->pub.name = "";
	s->pub.sha256_hex[0] = '\0';
	if (log->nr_scripts && log->scripts[log->nr_scripts - 1]->pub.id > id)
		log->scripts_unsorted = true;
	index_table__lookup(&log->script_tab, script_hash(id), script_eq, log, &id, &slot);
	index_table__set(&log->script_tab, slot, script_hash(id), (uint32_t)log->nr_scripts);
	log->scripts[log->nr_scripts++] = s;
	log->names_stale = true;
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
	free(s->line_starts);
	s->line_starts = NULL;
	log->names_stale = true;
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
		log->names_stale = true;
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

/* major, minor, build, patch[, embedder], candidate */
static int ev_version(struct v8log *log, const char *p, const char *end)
{
	if (!v8log_fields__version(p, end, log->version, sizeof(log->version))) {
		note_malformed(log);
		return 0;
	}
	return 1;
}

/* ---- lines ---------------------------------------------------------------- */

static int parse_line(struct v8log *log, const char *line, size_t len)
{
	const char *end, *comma, *rest;
	struct fld ev;
	int ret;

	log->lines++;
	if (!line) {
		note_malformed(log);
		return 0;
	}
	end = line + len;
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
	else if (fld_is(&ev, "sfi-move"))
		ret = ev_sfi_move(log, rest, end);
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

/* ---- API ---------------------------------------------------------------------- */

static int tail_restart(void *ctx);

static int tail_line(void *ctx, const char *line, size_t len)
{
	return parse_line(ctx, line, len);
}

static const struct line_tail_ops tail_ops = {
	.restart = tail_restart,
	.line = tail_line,
};

static void clear(struct v8log *log)
{
	size_t i;

	code_index__clear(log->code);
	for (i = 0; i < log->nr_scripts; i++)
		script_free(log->scripts[i]);
	log->nr_scripts = 0;
	log->scripts_unsorted = false;
	index_table__clear(&log->script_tab);
	index_table__clear(&log->name_tab);
	log->names_stale = false;
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

struct v8log *v8log__new(const char *path, const struct safe_open_opts *open,
			 struct read_budget *budget)
{
	struct v8log *log = calloc(1, sizeof(*log));
	struct safe_open_opts o = { 0 };

	if (!log)
		return NULL;
	log->inl = v8inline__new();
	log->code = code_index__new(&code_opts);
	if (!log->inl || !log->code)
		goto nomem;
	if (path) {
		if (open)
			o = *open;
		if (!o.max_bytes)
			o.max_bytes = SAFE_OPEN_CODE_LOG_MAX;
		if (line_tail__init(&log->tail, path, V8LOG_LINE_MAX, &o, budget) < 0)
			goto nomem;
		log->has_file = true;
		if (v8log__parse_filename(path, &log->isolate, &log->pid) < 0) {
			log->isolate = 0;
			log->pid = 0;
		}
	}
	return log;
nomem:
	code_index__free(log->code);
	v8inline__free(log->inl);
	free(log);
	errno = ENOMEM;
	return NULL;
}

void v8log__free(struct v8log *log)
{
	if (!log)
		return;
	clear(log);
	if (log->has_file)
		line_tail__release(&log->tail);
	free(log->scripts);
	index_table__release(&log->script_tab);
	index_table__release(&log->name_tab);
	code_index__free(log->code);
	free(log->scratch);
	v8inline__free(log->inl);
	free(log);
}

/* The script as v8inline reads it: its line starts are counted once, on first use. */
static const struct v8inline_script *script_view(struct vl_script *s)
{
	if (!s || !s->source)
		return NULL;
	if (!s->line_starts) {
		s->line_starts = v8inline__line_starts(s->source, s->pub.source_len,
						       &s->view.nlines);
		if (!s->line_starts)
			return NULL;
	}
	s->view.source = s->source;
	s->view.len = s->pub.source_len;
	s->view.line_starts = s->line_starts;
	return &s->view;
}

static const struct v8inline_script *source_by_id(void *ctx, int id)
{
	return script_view(script_get(ctx, id, false));
}

static uint32_t name_hash(const char *name)
{
	return hash__fold32(hash__str(HASH_SEED, name));
}

static bool name_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct v8log *)ctx)->scripts[idx]->pub.name, key);
}

/*
 * The first script (by id) with a source and that name, through an index
 * rebuilt when names or sources changed since: a frame costs a lookup, not
 * a walk over every script.
 */
static const struct v8inline_script *source_by_name(void *ctx, const char *name)
{
	struct v8log *log = ctx;
	long i;

	scripts_sort(log);
	if (log->names_stale) {
		index_table__clear(&log->name_tab);
		for (size_t k = 0; k < log->nr_scripts; k++) {
			const struct v8log_script *sc = &log->scripts[k]->pub;
			size_t slot;

			if (!sc->source)
				continue;
			if (index_table__reserve(&log->name_tab))
				return NULL;	/* stays stale: tried again next time */
			if (index_table__lookup(&log->name_tab, name_hash(sc->name), name_eq, log,
						sc->name, &slot) < 0)
				index_table__set(&log->name_tab, slot, name_hash(sc->name),
						 (uint32_t)k);
		}
		log->names_stale = false;
	}
	i = index_table__lookup(&log->name_tab, name_hash(name), name_eq, log, name, NULL);
	return i >= 0 ? script_view(log->scripts[i]) : NULL;
}

int v8log__inline_stack(struct v8log *log, uint64_t start, uint64_t off,
			struct v8inline_frame *frames, size_t max, struct v8inline_frame *outer)
{
	const struct v8inline_sources src = {
		.by_id = source_by_id,
		.by_name = source_by_name,
		.ctx = log,
	};

	long id = code_index__find_start(log->code, start);

	if (id >= 0) {
		struct code_entry live;
		int n;

		/* past the end of the code now at start: in code that was there before */
		code_index__get(log->code, (size_t)id, &live);
		if (off >= live.size) {
			n = v8inline__stack_retired(log->inl, start, off, &src, frames, max, outer);
			if (n != -ENOENT)
				return n;
		}
	}
	return v8inline__stack(log->inl, start, off, &src, frames, max, outer);
}

static int finish(struct v8log *log, int err)
{
	int ierr = code_index__reindex(log->code);

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
	return finish(log, line_tail__read(&log->tail, &tail_ops, log));
}

int v8log__parse_buf(struct v8log *log, const char *buf, size_t len)
{
	log->added = 0;
	return finish(log, line_tail__feed(buf, len, SIZE_MAX, &tail_ops, log));
}

const char *v8log__why(const struct v8log *log)
{
	return log->has_file ? line_tail__why(&log->tail) : "";
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
	/* sorting reorders, never changes, what the log holds */
	scripts_sort((struct v8log *)log);
	return i < log->nr_scripts ? &log->scripts[i]->pub : NULL;
}

const struct v8log_script *v8log__script(const struct v8log *log, int id)
{
	struct vl_script *s = script_get((struct v8log *)log, id, false);

	return s ? &s->pub : NULL;
}

int v8log__lookup(struct v8log *log, uint64_t addr, struct v8log_sym *out)
{
	const struct vl_code *c;
	struct code_entry e;
	int err;

	err = code_index__lookup(log->code, addr, &e);
	if (err < 0)
		return err;
	c = e.payload;
	out->start = e.start;
	out->size = e.size;
	out->kind = c->kind;
	out->sfi = c->sfi;
	out->raw = e.name + c->tag_len + 1;
	out->name = *e.parsed;
	return 0;
}

size_t v8log__count(const struct v8log *log)
{
	return code_index__count(log->code);
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
	st->code = code_index__count(log->code);
	st->segments = code_index__segments(log->code);
	st->scripts = log->nr_scripts;
	st->lines = log->lines;
	st->events = log->events;
	st->malformed = log->malformed;
	st->first_malformed_line = log->first_malformed;
	st->unmatched_moves = log->unmatched;
	st->mem_bytes = sizeof(*log) + code_index__mem_bytes(log->code) +
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

char **v8log__find(const char *dir, pid_t pid, const struct safe_open_opts *opts)
{
	size_t n = 0, cap = 8;
	char **paths = malloc(cap * sizeof(*paths)), **grown;
	const char *sep;
	struct dirent *de;
	uint64_t isolate;
	struct stat st;
	pid_t file_pid;
	DIR *d;
	int fd, err;

	if (!paths)
		return NULL;
	/* The directory is the target's: resolved in its root, never through a symlink. */
	fd = safe_open__dir(dir, opts, NULL);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		err = fd < 0 ? -fd : errno;
		if (fd >= 0)
			close(fd);
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
		/*
		 * In a shared directory anyone can plant a name: only the
		 * target's own regular files count (opening checks again).
		 */
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || !safe_open__owner_ok(&st, opts))
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
