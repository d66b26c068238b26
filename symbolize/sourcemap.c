// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sourcemap: Source Map revision 3 decoder and lookups; see sourcemap.h. */
#include "symbolize/sourcemap.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/json.h"
#include "lib/utf8.h"

#define SM_NONE UINT32_MAX
/* Positions, indexes and VLQ values are 32-bit signed in the format and in V8. */
#define SM_MAX_POS INT32_MAX
/*
 * json-c keeps a stack of this many levels per tokener.  A map needs 5
 * (root, sections, section, map, sources); vendor extensions nest a few
 * more (x_facebook_sources).
 */
#define SM_JSON_DEPTH 64
/* A VLQ value of 32 bits takes 7 digits (5 bits each). */
#define SM_VLQ_MAX_DIGITS 7
/* Lines from the end of a script searched for its sourceMappingURL comment. */
#define SM_URL_LINES 16
/*
 * Segments sourcemap__function_name() steps over: a name ends at most
 * SOURCEMAP_NAME_SLACK columns before the position, and a bundler puts a
 * segment or two per token there; a map with runs of segments at one
 * column must not make every lookup walk them all.
 */
#define SM_NAME_STEPS 64

struct sm_seg {
	uint32_t gen_line;
	uint32_t gen_col;
	uint32_t src;		/* SM_NONE: a segment of 1 field */
	uint32_t orig_line;
	uint32_t orig_col;
	uint32_t name;		/* SM_NONE: none */
};

/* The first segment of each generated line that has any (sparse: see build_lines()). */
struct sm_line {
	uint32_t line;
	uint32_t first;
};

struct sourcemap {
	struct sm_seg *segs;
	size_t nsegs, segs_cap;
	struct sm_line *lines;	/* nlines entries and one past the end (first: nsegs) */
	size_t nlines;
	/* sources[] and names[] point into strs[], each string kept once */
	const char **sources;
	size_t nsources, sources_cap;
	const char **names;
	size_t nnames, names_cap;
	char **strs;
	size_t nstrs, strs_cap;
	struct index_table str_tab;
	char *file;
};

/* The parse in progress. */
struct sm_parse {
	struct sourcemap *sm;
	char *err;
	size_t errlen;
	long section;		/* sections[] index, -1: not an index map's section */
	bool sorted;		/* segments so far in (gen_line, gen_col) order */
	uint32_t max_line, max_col;	/* the furthest segment so far */
	/* scratch for a source name joined to sourceRoot, and cleaned */
	char *join, *clean;
	size_t scratch_cap;
};

static int fail(struct sm_parse *ps, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct sm_parse *ps, int ret, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->section >= 0)
		errmsg__set(ps->err, ps->errlen, "sections[%ld]: %s", ps->section, msg);
	else
		errmsg__set(ps->err, ps->errlen, "%s", msg);
	return ret;
}

/* An error in the mappings: line and segno count from 0 and 1, the message from 1. */
static int seg_fail(struct sm_parse *ps, int64_t line, size_t segno, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int seg_fail(struct sm_parse *ps, int64_t line, size_t segno, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fail(ps, -EINVAL, "mappings: line %lld, segment %zu: %s", (long long)line + 1,
		    segno, msg);
}

static const char *type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "missing";
}

/* An array element's type: json-c gives NULL for JSON null. */
static const char *elem_type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "null";
}

/* --- strings --- */

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct sourcemap *sm = ctx;
	const struct str_key *k = key;

	return !strncmp(sm->strs[idx], k->s, k->len) && sm->strs[idx][k->len] == '\0';
}

/* s[len] (no NUL in it) kept once in sm; NULL on ENOMEM. */
static const char *intern(struct sourcemap *sm, const char *s, size_t len)
{
	struct str_key key = { s, len };
	uint32_t h = hash__fold32(hash__bytes(HASH_SEED, s, len));
	size_t slot;
	long i;
	char *copy;

	if (sm->nstrs >= SM_NONE - 1 || index_table__reserve(&sm->str_tab) ||
	    array_grow(&sm->strs, &sm->strs_cap, sm->nstrs + 1))
		return NULL;
	i = index_table__lookup(&sm->str_tab, h, str_eq, sm, &key, &slot);
	if (i >= 0)
		return sm->strs[i];
	copy = strndup(s, len);
	if (!copy)
		return NULL;
	index_table__set(&sm->str_tab, slot, h, (uint32_t)sm->nstrs);
	sm->strs[sm->nstrs++] = copy;
	return copy;
}

/* --- source names --- */

static bool scheme_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
		return true;
	return !first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.');
}

/*
 * The cleaned form of s[n] into out, which has room for n + 1 bytes (the
 * result is never longer than s); its length.
 */
static size_t clean_into(const char *s, size_t n, char *out)
{
	const char *p = s, *end = s + n, *q;
	bool absolute;
	size_t w = 0, base;

	/* "scheme://host/path": the path, relative except for file:// */
	for (q = p; q < end && scheme_char(*q, q == p); q++)
		;
	if (q > p && end - q >= 3 && !memcmp(q, "://", 3)) {
		bool file = q - p == 4 && !strncasecmp(p, "file", 4);

		p = q + 3;
		q = memchr(p, '/', (size_t)(end - p));
		p = q ? q : end;
		if (!file)
			while (p < end && *p == '/')
				p++;
	}
	absolute = p < end && *p == '/';
	if (absolute)
		out[w++] = '/';
	base = w;
	while (p < end) {
		size_t clen;

		q = memchr(p, '/', (size_t)(end - p));
		if (!q)
			q = end;
		clen = (size_t)(q - p);
		if (clen == 2 && p[0] == '.' && p[1] == '.') {
			/*
			 * Up a level, or dropped where there is none: a path
			 * relative to a build directory the reader does not have.
			 */
			while (w > base && out[w - 1] != '/')
				w--;
			if (w > base)
				w--;
		} else if (clen && !(clen == 1 && p[0] == '.')) {
			if (w > base)
				out[w++] = '/';
			memcpy(out + w, p, clen);
			w += clen;
		}
		p = q < end ? q + 1 : end;
	}
	/* nothing left ("./", "webpack://app/"): the name as it was beats none */
	if (w == base) {
		memcpy(out, s, n);
		w = n;
	}
	out[w] = '\0';
	return w;
}

void sourcemap__clean_source(const char *source, char *buf, size_t len)
{
	size_t n, w;
	char *tmp;

	if (!len)
		return;
	n = strlen(source);
	if (n < len) {
		clean_into(source, n, buf);
		return;
	}
	tmp = malloc(n + 1);
	if (!tmp) {
		/* the name uncleaned is still a name */
		memcpy(buf, source, len - 1);
		buf[len - 1] = '\0';
		return;
	}
	w = clean_into(source, n, tmp);
	if (w >= len)
		w = len - 1;
	memcpy(buf, tmp, w);
	buf[w] = '\0';
	free(tmp);
}

static int scratch_grow(struct sm_parse *ps, size_t need)
{
	char *a, *b;

	if (need <= ps->scratch_cap)
		return 0;
	a = realloc(ps->join, need);
	if (!a)
		return -ENOMEM;
	ps->join = a;
	b = realloc(ps->clean, need);
	if (!b)
		return -ENOMEM;
	ps->clean = b;
	ps->scratch_cap = need;
	return 0;
}

/* sources[] of one map, joined to its sourceRoot, cleaned and kept once. */
static int add_sources(struct sm_parse *ps, struct json_object *map)
{
	struct sourcemap *sm = ps->sm;
	struct json_object *v = json__member(map, "sources"), *r = json__member(map, "sourceRoot");
	const char *root = "";
	size_t n, rlen;

	if (!json_object_is_type(v, json_type_array))
		return fail(ps, -EINVAL, "sources is %s, not an array", type_name(v));
	if (r) {
		root = json__str(r);
		if (!root)
			return fail(ps, -EINVAL, "sourceRoot is %s, not a string", type_name(r));
	}
	rlen = strlen(root);
	n = json_object_array_length(v);
	if (n > SM_NONE - 1 - sm->nsources)
		return fail(ps, -E2BIG, "more than %u sources", SM_NONE - 1);
	if (array_grow(&sm->sources, &sm->sources_cap, sm->nsources + n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s, *kept;
		size_t slen, jlen, clen;

		/* null: a source the map does not name */
		if (!e) {
			kept = intern(sm, "", 0);
			if (!kept)
				return -ENOMEM;
			sm->sources[sm->nsources++] = kept;
			continue;
		}
		s = json__str(e);
		if (!s)
			return fail(ps, -EINVAL, "sources[%zu] is %s, not a string", i,
				    elem_type_name(e));
		slen = strlen(s);
		if (scratch_grow(ps, rlen + slen + 2))
			return -ENOMEM;
		jlen = 0;
		if (rlen) {
			memcpy(ps->join, root, rlen);
			jlen = rlen;
			if (root[rlen - 1] != '/')
				ps->join[jlen++] = '/';
		}
		memcpy(ps->join + jlen, s, slen);
		jlen += slen;
		ps->join[jlen] = '\0';
		clen = clean_into(ps->join, jlen, ps->clean);
		kept = intern(sm, ps->clean, clen);
		if (!kept)
			return -ENOMEM;
		sm->sources[sm->nsources++] = kept;
	}
	return 0;
}

static int add_names(struct sm_parse *ps, struct json_object *map)
{
	struct sourcemap *sm = ps->sm;
	struct json_object *v = json__member(map, "names");
	size_t n;

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_array))
		return fail(ps, -EINVAL, "names is %s, not an array", type_name(v));
	n = json_object_array_length(v);
	if (n > SM_NONE - 1 - sm->nnames)
		return fail(ps, -E2BIG, "more than %u names", SM_NONE - 1);
	if (array_grow(&sm->names, &sm->names_cap, sm->nnames + n))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(v, i);
		const char *s = json__str(e), *kept;

		if (!s)
			return fail(ps, -EINVAL, "names[%zu] is %s, not a string", i,
				    elem_type_name(e));
		kept = intern(sm, s, strlen(s));
		if (!kept)
			return -ENOMEM;
		sm->names[sm->nnames++] = kept;
	}
	return 0;
}

/* --- mappings --- */

/* One more than each Base64 digit's value, 0 for other bytes. */
static const uint8_t b64_plus1[256] = {
	['A'] = 1,  ['B'] = 2,	['C'] = 3,  ['D'] = 4,	['E'] = 5,  ['F'] = 6,	['G'] = 7,
	['H'] = 8,  ['I'] = 9,	['J'] = 10, ['K'] = 11, ['L'] = 12, ['M'] = 13, ['N'] = 14,
	['O'] = 15, ['P'] = 16, ['Q'] = 17, ['R'] = 18, ['S'] = 19, ['T'] = 20, ['U'] = 21,
	['V'] = 22, ['W'] = 23, ['X'] = 24, ['Y'] = 25, ['Z'] = 26, ['a'] = 27, ['b'] = 28,
	['c'] = 29, ['d'] = 30, ['e'] = 31, ['f'] = 32, ['g'] = 33, ['h'] = 34, ['i'] = 35,
	['j'] = 36, ['k'] = 37, ['l'] = 38, ['m'] = 39, ['n'] = 40, ['o'] = 41, ['p'] = 42,
	['q'] = 43, ['r'] = 44, ['s'] = 45, ['t'] = 46, ['u'] = 47, ['v'] = 48, ['w'] = 49,
	['x'] = 50, ['y'] = 51, ['z'] = 52, ['0'] = 53, ['1'] = 54, ['2'] = 55, ['3'] = 56,
	['4'] = 57, ['5'] = 58, ['6'] = 59, ['7'] = 60, ['8'] = 61, ['9'] = 62, ['+'] = 63,
	['/'] = 64,
};

enum vlq_err {
	VLQ_OK,
	VLQ_BAD_CHAR,
	VLQ_TRUNCATED,
	VLQ_OVERFLOW,
};

/*
 * One Base64 VLQ value at *pp (before end): 5 bits a digit, least
 * significant first, 0x20 for "more digits", the sign in the lowest bit.
 * Values are 32-bit signed: "B" (negative zero) is -2^31, as Closure and
 * the source-map libraries encode it.
 */
static inline enum vlq_err vlq_decode(const char **pp, const char *end, int64_t *out)
{
	const char *p = *pp;
	uint64_t raw = 0;
	unsigned int shift = 0, d;

	for (;;) {
		if (p >= end || *p == ',' || *p == ';')
			return VLQ_TRUNCATED;
		d = b64_plus1[(unsigned char)*p];
		if (!d) {
			*pp = p;
			return VLQ_BAD_CHAR;
		}
		d--;
		p++;
		raw |= (uint64_t)(d & 0x1f) << shift;
		if (!(d & 0x20))
			break;
		shift += 5;
		if (shift >= 5 * SM_VLQ_MAX_DIGITS)
			return VLQ_OVERFLOW;
	}
	if (raw > UINT32_MAX)
		return VLQ_OVERFLOW;
	*pp = p;
	if (raw == 1)
		*out = INT32_MIN;
	else
		*out = raw & 1 ? -(int64_t)(raw >> 1) : (int64_t)(raw >> 1);
	return VLQ_OK;
}

/* Where a mapping's segments go: this map's tables and the section's offset. */
struct sm_scope {
	uint32_t src_base, nsrc;
	uint32_t name_base, nname;
	uint32_t line_off, col_off;
};

static int seg_push(struct sm_parse *ps, const struct sm_seg *seg)
{
	struct sourcemap *sm = ps->sm;

	if (sm->nsegs >= SOURCEMAP_MAX_SEGMENTS)
		return fail(ps, -E2BIG, "mappings: more than %u segments", SOURCEMAP_MAX_SEGMENTS);
	if (sm->nsegs == sm->segs_cap && array_grow(&sm->segs, &sm->segs_cap, sm->nsegs + 1))
		return -ENOMEM;
	if (!sm->nsegs || seg->gen_line > ps->max_line ||
	    (seg->gen_line == ps->max_line && seg->gen_col >= ps->max_col)) {
		ps->max_line = seg->gen_line;
		ps->max_col = seg->gen_col;
	} else {
		ps->sorted = false;
	}
	sm->segs[sm->nsegs++] = *seg;
	return 0;
}

/*
 * The "mappings" string s[n] into segments.  Lines and segments in errors
 * count from 1, as an editor shows them; fields (generated column, source
 * index, original line, original column, name index) are deltas, the
 * generated column's from the previous segment of the line, the others'
 * from the previous segment that had them.
 */
static int decode_mappings(struct sm_parse *ps, const char *s, size_t n,
			   const struct sm_scope *sc)
{
	static const char *const what[] = { "generated column", "source index", "original line",
					    "original column", "name index" };
	const char *p = s, *end = s + n;
	int64_t line = 0, acc[5] = { 0 };
	size_t segno = 0, want = 0;
	int ret;

	/*
	 * Room for them all at once (a segment per ',' and per line that is
	 * not empty, when the mappings are well-formed): a large map is not
	 * copied by doubling, nor kept at up to twice its size.
	 */
	for (size_t i = 0; i < n; i++)
		want += (s[i] == ',') | ((i ? s[i - 1] == ';' : 1) & (s[i] != ';'));
	if (want > SOURCEMAP_MAX_SEGMENTS - ps->sm->nsegs)
		want = SOURCEMAP_MAX_SEGMENTS - ps->sm->nsegs;
	want += ps->sm->nsegs;
	if (want > ps->sm->segs_cap) {
		struct sm_seg *segs = realloc(ps->sm->segs, want * sizeof(*segs));

		if (!segs)
			return -ENOMEM;
		ps->sm->segs = segs;
		ps->sm->segs_cap = want;
	}

	while (p < end) {
		struct sm_seg seg;
		int64_t f[5];
		int nf = 0;

		if (*p == ';') {
			line++;
			acc[0] = 0;
			segno = 0;
			p++;
			continue;
		}
		segno++;
		if (*p == ',')
			return seg_fail(ps, line, segno, "empty");
		while (p < end && *p != ',' && *p != ';') {
			enum vlq_err e;

			if (nf == 5)
				return seg_fail(ps, line, segno, "more than 5 fields");
			e = vlq_decode(&p, end, &f[nf]);
			if (e == VLQ_BAD_CHAR)
				return seg_fail(ps, line, segno, "not a Base64 digit at offset %zu",
						(size_t)(p - s));
			if (e == VLQ_TRUNCATED)
				return seg_fail(ps, line, segno, "a VLQ value ends early");
			if (e == VLQ_OVERFLOW)
				return seg_fail(ps, line, segno, "a VLQ value over 32 bits");
			nf++;
		}
		if (nf != 1 && nf != 4 && nf != 5)
			return seg_fail(ps, line, segno, "%d fields (1, 4 or 5 expected)", nf);
		for (int i = 0; i < nf; i++) {
			acc[i] += f[i];
			if (acc[i] < 0 || acc[i] > SM_MAX_POS)
				return seg_fail(ps, line, segno, "%s %lld out of range", what[i],
						(long long)acc[i]);
		}
		if (nf >= 4 && acc[1] >= sc->nsrc)
			return seg_fail(ps, line, segno,
					"source index %lld out of range (%u sources)",
					(long long)acc[1], sc->nsrc);
		if (nf == 5 && acc[4] >= sc->nname)
			return seg_fail(ps, line, segno, "name index %lld out of range (%u names)",
					(long long)acc[4], sc->nname);
		/* a section's column offset moves its first line only */
		if (line + sc->line_off > SM_MAX_POS ||
		    acc[0] + (line ? 0 : sc->col_off) > SM_MAX_POS)
			return seg_fail(ps, line, segno,
					"position out of range with the section's offset");
		seg.gen_line = (uint32_t)(line + sc->line_off);
		seg.gen_col = (uint32_t)(acc[0] + (line ? 0 : sc->col_off));
		seg.src = nf >= 4 ? sc->src_base + (uint32_t)acc[1] : SM_NONE;
		seg.orig_line = nf >= 4 ? (uint32_t)acc[2] : 0;
		seg.orig_col = nf >= 4 ? (uint32_t)acc[3] : 0;
		seg.name = nf == 5 ? sc->name_base + (uint32_t)acc[4] : SM_NONE;
		ret = seg_push(ps, &seg);
		if (ret)
			return ret;
		if (p < end && *p == ',') {
			p++;
			if (p == end || *p == ';')
				return seg_fail(ps, line, segno + 1, "empty");
		}
	}
	return 0;
}

/* --- maps --- */

static int check_version(struct sm_parse *ps, struct json_object *map)
{
	struct json_object *v = json__member(map, "version");
	int64_t version;

	if (!json__int64(v, &version))
		return fail(ps, -EINVAL, "version is %s, not 3", type_name(v));
	if (version != 3)
		return fail(ps, -EINVAL, "version %lld, not 3", (long long)version);
	return 0;
}

/* A regular map (the whole map, or an index map's section) at an offset. */
static int parse_regular(struct sm_parse *ps, struct json_object *map, uint32_t line_off,
			 uint32_t col_off)
{
	struct sourcemap *sm = ps->sm;
	struct json_object *m;
	struct sm_scope sc;
	int ret;

	if (!json_object_is_type(map, json_type_object))
		return fail(ps, -EINVAL, "the map is %s, not a JSON object", type_name(map));
	ret = check_version(ps, map);
	if (ret)
		return ret;
	if (json__member(map, "sections"))
		return fail(ps, -EINVAL, "an index map's section holds sections (one level only)");
	m = json__member(map, "mappings");
	if (!json_object_is_type(m, json_type_string))
		return fail(ps, -EINVAL, "mappings is %s, not a string", type_name(m));
	sc.src_base = (uint32_t)sm->nsources;
	sc.name_base = (uint32_t)sm->nnames;
	ret = add_sources(ps, map);
	if (!ret)
		ret = add_names(ps, map);
	if (ret)
		return ret;
	sc.nsrc = (uint32_t)sm->nsources - sc.src_base;
	sc.nname = (uint32_t)sm->nnames - sc.name_base;
	sc.line_off = line_off;
	sc.col_off = col_off;
	return decode_mappings(ps, json_object_get_string(m), (size_t)json_object_get_string_len(m),
			       &sc);
}

static int offset_field(struct sm_parse *ps, struct json_object *off, const char *key,
			uint32_t *out)
{
	struct json_object *v = json__member(off, key);
	int64_t x;

	if (!json__int64(v, &x))
		return fail(ps, -EINVAL, "offset.%s is %s, not an integer", key, type_name(v));
	if (x < 0 || x > SM_MAX_POS)
		return fail(ps, -EINVAL, "offset.%s %lld out of range", key, (long long)x);
	*out = (uint32_t)x;
	return 0;
}

/*
 * An index map: each section's map at its offset.  Sections come in order
 * and do not overlap (the format says so; a map where they do describes no
 * one script): sorting the segments afterwards moves none across sections.
 */
static int parse_index(struct sm_parse *ps, struct json_object *root, struct json_object *sections)
{
	struct sourcemap *sm = ps->sm;
	uint32_t prev_line = 0, prev_col = 0;
	size_t n;
	int ret;

	if (!json_object_is_type(sections, json_type_array))
		return fail(ps, -EINVAL, "sections is %s, not an array", type_name(sections));
	if (json__member(root, "mappings"))
		return fail(ps, -EINVAL, "an index map with mappings of its own");
	n = json_object_array_length(sections);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(sections, i), *off;
		uint32_t line, col;

		ps->section = (long)i;
		if (!json_object_is_type(s, json_type_object))
			return fail(ps, -EINVAL, "the section is %s, not a JSON object",
				    type_name(s));
		if (json__member(s, "url"))
			return fail(ps, -EINVAL, "a section by \"url\" (isoprof never fetches)");
		off = json__member(s, "offset");
		if (!json_object_is_type(off, json_type_object))
			return fail(ps, -EINVAL, "offset is %s, not a JSON object", type_name(off));
		ret = offset_field(ps, off, "line", &line);
		if (!ret)
			ret = offset_field(ps, off, "column", &col);
		if (ret)
			return ret;
		if (i && (line < prev_line || (line == prev_line && col < prev_col)))
			return fail(ps, -EINVAL,
				    "offset (line %u, column %u) before the previous section's (line %u, column %u)",
				    line, col, prev_line, prev_col);
		if (sm->nsegs &&
		    (ps->max_line > line || (ps->max_line == line && ps->max_col >= col)))
			return fail(ps, -EINVAL,
				    "offset (line %u, column %u) overlaps the previous section (a segment at line %u, column %u)",
				    line, col, ps->max_line, ps->max_col);
		ret = parse_regular(ps, json__member(s, "map"), line, col);
		if (ret)
			return ret;
		prev_line = line;
		prev_col = col;
	}
	ps->section = -1;
	return 0;
}

static inline bool seg_before(const struct sm_seg *a, const struct sm_seg *b)
{
	return a->gen_line < b->gen_line || (a->gen_line == b->gen_line && a->gen_col < b->gen_col);
}

#define SM_SORT_RUN 32

/*
 * Stable (a map that gives two segments one position keeps their order):
 * runs of SM_SORT_RUN by insertion, then merged between a and tmp.  The
 * result is in a.
 */
static void sort_segments(struct sm_seg *a, struct sm_seg *tmp, size_t n)
{
	struct sm_seg *from = a, *to = tmp, *t;

	for (size_t lo = 0; lo < n; lo += SM_SORT_RUN) {
		size_t hi = lo + SM_SORT_RUN < n ? lo + SM_SORT_RUN : n;

		for (size_t i = lo + 1; i < hi; i++) {
			struct sm_seg x = a[i];
			size_t j = i;

			for (; j > lo && seg_before(&x, &a[j - 1]); j--)
				a[j] = a[j - 1];
			a[j] = x;
		}
	}
	for (size_t width = SM_SORT_RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = lo + width < n ? lo + width : n;
			size_t hi = mid + width < n ? mid + width : n;
			size_t i = lo, j = mid, k = lo;

			while (i < mid && j < hi)
				to[k++] = seg_before(&from[j], &from[i]) ? from[j++] : from[i++];
			while (i < mid)
				to[k++] = from[i++];
			while (j < hi)
				to[k++] = from[j++];
		}
		t = from;
		from = to;
		to = t;
	}
	if (from != a)
		memcpy(a, from, n * sizeof(*a));
}

/*
 * The line index covers only lines with segments: a map's lines can be
 * many more than its segments (";;;;" is a byte a line, and a section's
 * offset can be 2^31 lines), and a dense index would be theirs to size.
 */
static int build_lines(struct sourcemap *sm)
{
	size_t n = 0;

	for (size_t i = 0; i < sm->nsegs; i++)
		n += !i || sm->segs[i].gen_line != sm->segs[i - 1].gen_line;
	sm->lines = calloc(n + 1, sizeof(*sm->lines));
	if (!sm->lines)
		return -ENOMEM;
	for (size_t i = 0; i < sm->nsegs; i++) {
		if (!i || sm->segs[i].gen_line != sm->segs[i - 1].gen_line) {
			sm->lines[sm->nlines].line = sm->segs[i].gen_line;
			sm->lines[sm->nlines].first = (uint32_t)i;
			sm->nlines++;
		}
	}
	sm->lines[n].line = SM_NONE;
	sm->lines[n].first = (uint32_t)sm->nsegs;
	return 0;
}

static int parse_root(struct sm_parse *ps, struct json_object *root)
{
	struct sourcemap *sm = ps->sm;
	struct json_object *file, *sections;
	int ret;

	if (!json_object_is_type(root, json_type_object))
		return fail(ps, -EINVAL, "the map is %s, not a JSON object", type_name(root));
	ret = check_version(ps, root);
	if (ret)
		return ret;
	file = json__member(root, "file");
	if (file) {
		if (!json__str(file))
			return fail(ps, -EINVAL, "file is %s, not a string", type_name(file));
		sm->file = strdup(json__str(file));
		if (!sm->file)
			return -ENOMEM;
	}
	sections = json__member(root, "sections");
	if (sections)
		ret = parse_index(ps, root, sections);
	else
		ret = parse_regular(ps, root, 0, 0);
	if (ret)
		return ret;
	if (!ps->sorted) {
		struct sm_seg *tmp = malloc(sm->nsegs * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		sort_segments(sm->segs, tmp, sm->nsegs);
		free(tmp);
	}
	return build_lines(sm);
}

/*
 * JSON values outside strings, counted on the text: json-c builds an
 * object of some 80 bytes for each, so a map of 256 MiB of "names":
 * ["a","a",...] would take gigabytes before any check could see it.
 */
static size_t count_values(const char *json, size_t len)
{
	size_t n = 1;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = json[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == ',' || c == '[' || c == '{') {
			n++;
		}
	}
	return n;
}

static struct json_object *parse_json(const char *json, size_t len, int *ret, char *err,
				      size_t errlen)
{
	size_t values;
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	const char *nul;
	size_t end;

	*ret = -EINVAL;
	/* json-c stops at a NUL: say so rather than report a cut document */
	nul = memchr(json, '\0', len);
	if (nul) {
		errmsg__set(err, errlen, "JSON text contains a NUL byte at offset %zu",
			    (size_t)(nul - json));
		return NULL;
	}
	values = count_values(json, len);
	if (values > SOURCEMAP_MAX_VALUES) {
		*ret = -E2BIG;
		errmsg__set(err, errlen, "more than %u JSON values (%zu)", SOURCEMAP_MAX_VALUES,
			    values);
		return NULL;
	}
	tok = json_tokener_new_ex(SM_JSON_DEPTH);
	if (!tok) {
		*ret = -ENOMEM;
		return NULL;
	}
	o = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o && jerr == json_tokener_continue) {
		errmsg__set(err, errlen, "JSON text ends early (truncated file?)");
		goto bad;
	}
	if (!o || jerr != json_tokener_success) {
		errmsg__set(err, errlen, "invalid JSON at offset %zu: %s", end,
			    json_tokener_error_desc(jerr));
		goto bad;
	}
	for (; end < len; end++) {
		if (!strchr(" \t\r\n", json[end])) {
			errmsg__set(err, errlen,
				    "invalid JSON: data after the document at offset %zu", end);
			goto bad;
		}
	}
	json_tokener_free(tok);
	*ret = 0;
	return o;
bad:
	json_object_put(o);
	json_tokener_free(tok);
	return NULL;
}

int sourcemap__parse(const char *json, size_t len, struct sourcemap **out, char *err,
		     size_t errlen)
{
	struct sm_parse ps = { .err = err, .errlen = errlen, .section = -1, .sorted = true };
	struct json_object *root;
	int ret;

	*out = NULL;
	if (len > SOURCEMAP_MAX_BYTES) {
		errmsg__set(err, errlen, "JSON text of %zu bytes is over the %u MiB limit", len,
			    SOURCEMAP_MAX_BYTES >> 20);
		return -E2BIG;
	}
	root = parse_json(json, len, &ret, err, errlen);
	if (!root) {
		if (ret == -ENOMEM)
			errmsg__set(err, errlen, "out of memory");
		return ret;
	}
	ps.sm = calloc(1, sizeof(*ps.sm));
	if (!ps.sm) {
		json_object_put(root);
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ret = parse_root(&ps, root);
	json_object_put(root);
	free(ps.join);
	free(ps.clean);
	if (ret) {
		if (ret == -ENOMEM)
			errmsg__set(err, errlen, "out of memory");
		sourcemap__free(ps.sm);
		return ret;
	}
	/* the strings are all in: the table that kept them once is not needed */
	index_table__release(&ps.sm->str_tab);
	*out = ps.sm;
	return 0;
}

void sourcemap__free(struct sourcemap *sm)
{
	if (!sm)
		return;
	for (size_t i = 0; i < sm->nstrs; i++)
		free(sm->strs[i]);
	free(sm->strs);
	index_table__release(&sm->str_tab);
	free(sm->sources);
	free(sm->names);
	free(sm->segs);
	free(sm->lines);
	free(sm->file);
	free(sm);
}

const char *sourcemap__file(const struct sourcemap *sm)
{
	return sm->file;
}

size_t sourcemap__segment_count(const struct sourcemap *sm)
{
	return sm->nsegs;
}

uint32_t sourcemap__line_count(const struct sourcemap *sm)
{
	return sm->nsegs ? sm->segs[sm->nsegs - 1].gen_line + 1 : 0;
}

/* --- lookups --- */

/*
 * The last segment of line at or before column: true and *i, with
 * *first the line's first segment.
 */
static bool find_at(const struct sourcemap *sm, uint32_t line, uint32_t column, size_t *i,
		    size_t *first)
{
	size_t lo = 0, hi = sm->nlines, l;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sm->lines[mid].line <= line)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || sm->lines[lo - 1].line != line)
		return false;
	l = lo - 1;
	lo = sm->lines[l].first;
	hi = sm->lines[l + 1].first;
	*first = lo;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sm->segs[mid].gen_col <= column)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == *first)
		return false;
	*i = lo - 1;
	return true;
}

int sourcemap__lookup(const struct sourcemap *sm, uint32_t line, uint32_t column,
		      struct sourcemap_pos *out)
{
	const struct sm_seg *seg;
	size_t i, first;

	if (!find_at(sm, line, column, &i, &first))
		return -ENOENT;
	seg = &sm->segs[i];
	if (seg->src == SM_NONE)
		return -ENOENT;
	out->source = sm->sources[seg->src];
	out->line = seg->orig_line;
	out->column = seg->orig_col;
	out->name = seg->name == SM_NONE ? NULL : sm->names[seg->name];
	out->gen_line = seg->gen_line;
	out->gen_column = seg->gen_col;
	return 0;
}

const char *sourcemap__function_name(const struct sourcemap *sm, uint32_t line,
				     uint32_t column, size_t gen_name_len)
{
	size_t i, first, steps = 0;
	uint64_t next_col = UINT64_MAX, here;

	if (!gen_name_len || gen_name_len > SM_MAX_POS || !find_at(sm, line, column, &i, &first))
		return NULL;
	here = sm->segs[i].gen_col;
	for (;; i--) {
		const struct sm_seg *seg = &sm->segs[i];
		uint64_t name_end = (uint64_t)seg->gen_col + gen_name_len;

		if (name_end + SOURCEMAP_NAME_SLACK < column || ++steps > SM_NAME_STEPS)
			return NULL;
		/* where the next token after this segment's starts */
		if (seg->gen_col != here) {
			next_col = here;
			here = seg->gen_col;
		}
		if (seg->name != SM_NONE && name_end <= column && name_end <= next_col)
			return sm->names[seg->name];
		/*
		 * Stepped over: no name (`=` of `f=(`); a parameter (its name
		 * ends after column); a shorter identifier than the function's
		 * (`t` of `this.b=t}m(` where the method m kept its name).
		 */
		if (i == first)
			return NULL;
	}
}

/* --- the generated script --- */

/* Bytes of the line terminator at p (ECMAScript's, as V8 counts lines), or 0. */
static size_t terminator(const char *p, const char *end)
{
	const unsigned char *u = (const unsigned char *)p;

	if (*u == '\n')
		return 1;
	if (*u == '\r')
		return end - p > 1 && u[1] == '\n' ? 2 : 1;
	/* U+2028, U+2029 */
	if (*u == 0xe2 && end - p > 2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9))
		return 3;
	return 0;
}

static bool ident_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$' || c >= 0x80;
}

/*
 * A cursor over the script: segments come sorted by line and column, so
 * one pass over the text places them all.
 */
struct text_cursor {
	const char *text, *end;
	const char *line_start;	/* of line `line`; NULL: past the last line */
	uint32_t line;
	const char *p;		/* at UTF-16 column col of the line */
	uint64_t col;
};

/* Move to the start of line; false when the text has no such line. */
static bool cursor_line(struct text_cursor *c, uint32_t line)
{
	const char *p = c->p;

	if (!c->line_start)
		return false;
	while (c->line < line) {
		size_t t = 0;

		while (p < c->end && !(t = terminator(p, c->end)))
			p++;
		if (p == c->end) {
			c->line_start = NULL;
			return false;
		}
		p += t;
		c->line++;
		c->line_start = p;
	}
	c->p = p;
	c->col = 0;
	return true;
}

/*
 * Move to UTF-16 column col of the current line (at or after the cursor):
 * false when the line ends before it.  *boundary: a character starts
 * there (not the second half of a surrogate pair).
 */
static bool cursor_col(struct text_cursor *c, uint64_t col, bool *boundary)
{
	while (c->col < col) {
		size_t n;

		if (c->p == c->end || terminator(c->p, c->end))
			return false;
		n = utf8__seq((const unsigned char *)c->p, (size_t)(c->end - c->p));
		/* a byte that is not UTF-8 reads as one U+FFFD */
		c->col += n == 4 ? 2 : 1;
		c->p += n ? n : 1;
	}
	*boundary = c->col == col;
	return true;
}

void sourcemap__check_script(const struct sourcemap *sm, const char *text, size_t len,
			     struct sourcemap_check *out)
{
	struct text_cursor c = { .text = text, .end = text + len, .line_start = text, .p = text };
	bool on_line = true;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < sm->nsegs; i++) {
		const struct sm_seg *seg = &sm->segs[i];
		bool boundary;

		out->segments++;
		if (seg->name != SM_NONE)
			out->named++;
		if (i == 0 || seg->gen_line != sm->segs[i - 1].gen_line)
			on_line = cursor_line(&c, seg->gen_line);
		if (!on_line || !cursor_col(&c, seg->gen_col, &boundary)) {
			out->outside++;
			continue;
		}
		if (seg->name == SM_NONE || !boundary || c.p == c.end || terminator(c.p, c.end))
			continue;
		if (ident_byte((unsigned char)*c.p) &&
		    (c.p == c.line_start || !ident_byte((unsigned char)c.p[-1])))
			out->named_on_identifier++;
	}
}

bool sourcemap_check__matches(const struct sourcemap_check *c)
{
	if (c->outside)
		return false;
	return c->named < 8 || c->named_on_identifier * 10 >= c->named * 9;
}

/* --- sourceMappingURL --- */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

/*
 * "//# sourceMappingURL=<url>" alone on the line s[n], as V8's scanner
 * takes a magic comment: blanks after "#" (at least one) and around the
 * value, which has none inside.
 */
static bool url_comment(const char *s, size_t n, const char **url, size_t *url_len)
{
	static const char key[] = "sourceMappingURL=";
	const char *p = s, *end = s + n, *v;

	while (p < end && blank(*p))
		p++;
	if (end - p < 4 || p[0] != '/' || p[1] != '/' || (p[2] != '#' && p[2] != '@') ||
	    !blank(p[3]))
		return false;
	p += 3;
	while (p < end && blank(*p))
		p++;
	if ((size_t)(end - p) < sizeof(key) - 1 || memcmp(p, key, sizeof(key) - 1))
		return false;
	p += sizeof(key) - 1;
	while (p < end && blank(*p))
		p++;
	while (end > p && blank(end[-1]))
		end--;
	if (p == end)
		return false;
	for (v = p; v < end; v++)
		if (blank(*v))
			return false;
	*url = p;
	*url_len = (size_t)(end - p);
	return true;
}

bool sourcemap__url_in_script(const char *text, size_t len, const char **url, size_t *url_len)
{
	size_t end = len;

	/*
	 * From the end back, a line at a time: an inline map's line may be
	 * megabytes, but each byte is looked at once.
	 */
	for (int n = 0; n < SM_URL_LINES; n++) {
		size_t start = end;

		while (start > 0 && text[start - 1] != '\n' && text[start - 1] != '\r')
			start--;
		if (url_comment(text + start, end - start, url, url_len))
			return true;
		if (!start)
			break;
		end = start - 1;
		if (text[end] == '\n' && end && text[end - 1] == '\r')
			end--;
	}
	return false;
}

/* --- data: URLs --- */

static bool token_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !strncasecmp(s, word, n);
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int decode_base64(const char *s, size_t n, char **out, size_t *out_len)
{
	size_t pad = 0, olen, w = 0;
	uint32_t acc = 0;
	char *buf;

	while (n && s[n - 1] == '=' && pad < 2) {
		n--;
		pad++;
	}
	if (n % 4 == 1 || (pad && (n + pad) % 4))
		return -EINVAL;
	olen = n / 4 * 3 + (n % 4 ? n % 4 - 1 : 0);
	if (olen > SOURCEMAP_MAX_BYTES)
		return -E2BIG;
	for (size_t i = 0; i < n; i++)
		if (!b64_plus1[(unsigned char)s[i]])
			return -EINVAL;
	buf = malloc(olen + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		acc = acc << 6 | (uint32_t)(b64_plus1[(unsigned char)s[i]] - 1);
		if (i % 4 == 3) {
			buf[w++] = (char)(acc >> 16);
			buf[w++] = (char)(acc >> 8);
			buf[w++] = (char)acc;
			acc = 0;
		}
	}
	if (n % 4 == 2) {
		buf[w++] = (char)(acc >> 4);
	} else if (n % 4 == 3) {
		buf[w++] = (char)(acc >> 10);
		buf[w++] = (char)(acc >> 2);
	}
	buf[w] = '\0';
	*out = buf;
	*out_len = w;
	return 0;
}

static int decode_percent(const char *s, size_t n, char **out, size_t *out_len)
{
	size_t olen = 0, w = 0;
	char *buf;

	for (size_t i = 0; i < n; i++, olen++) {
		if (s[i] != '%')
			continue;
		if (n - i < 3 || hex_val(s[i + 1]) < 0 || hex_val(s[i + 2]) < 0)
			return -EINVAL;
		i += 2;
	}
	if (olen > SOURCEMAP_MAX_BYTES)
		return -E2BIG;
	buf = malloc(olen + 1);
	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%') {
			buf[w++] = (char)(hex_val(s[i + 1]) << 4 | hex_val(s[i + 2]));
			i += 2;
		} else {
			buf[w++] = s[i];
		}
	}
	buf[w] = '\0';
	*out = buf;
	*out_len = w;
	return 0;
}

int sourcemap__decode_data_url(const char *url, size_t len, char **out, size_t *out_len)
{
	const char *p, *end = url + len, *comma;
	bool base64 = false, first = true;

	if (len < 5 || strncasecmp(url, "data:", 5))
		return -EINVAL;
	comma = memchr(url + 5, ',', len - 5);
	if (!comma)
		return -EINVAL;
	/* media type, then ;-separated parameters in any order */
	for (p = url + 5; p <= comma; first = false) {
		const char *q = memchr(p, ';', (size_t)(comma - p));
		size_t n;

		if (!q)
			q = comma;
		n = (size_t)(q - p);
		if (first) {
			if (!token_is(p, n, "application/json"))
				return -EINVAL;
		} else if (token_is(p, n, "base64")) {
			base64 = true;
		} else if (n > 8 && !strncasecmp(p, "charset=", 8)) {
			/* JSON is UTF-8 (RFC 8259); a map in another charset is not read */
			if (!token_is(p + 8, n - 8, "utf-8") && !token_is(p + 8, n - 8, "utf8"))
				return -EINVAL;
		}
		p = q + 1;
	}
	p = comma + 1;
	if (base64)
		return decode_base64(p, (size_t)(end - p), out, out_len);
	return decode_percent(p, (size_t)(end - p), out, out_len);
}

size_t sourcemap__source_count(const struct sourcemap *sm)
{
	return sm->nsources;
}
