/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sourcemap: Source Map revision 3 (https://tc39.es/source-map/), decoded
 * once into a table of segments, and looked up by generated position.
 *
 * Read: "version" (3), "sources", "sourceRoot", "names", "mappings" (Base64
 * VLQ), "file", and index maps ("sections": [{"offset": {"line", "column"},
 * "map": {...}}], one level; a section with "url" is refused: isoprof never
 * fetches).  "sourcesContent" is not kept.  A map is a file another user
 * controls: every field is checked (types, index ranges, VLQ overflow,
 * segments of 1, 4 or 5 fields only), sizes are capped (SOURCEMAP_MAX_BYTES
 * of JSON, SOURCEMAP_MAX_VALUES values in it, SOURCEMAP_MAX_SEGMENTS
 * segments), and an error says where
 * ("mappings: line 3, segment 12: source index 9 out of range (4 sources)").
 *
 * Positions are 0-based lines and columns, columns in UTF-16 code units, as
 * the format (and V8) counts them.  Source names are as the map gives them,
 * joined to sourceRoot (with one '/' between them when sourceRoot does not
 * end in one) and then made readable for a profile (sourcemap__clean_source());
 * a null entry of "sources" is "".
 *
 * Ownership: a struct sourcemap owns its strings; pointers handed out live
 * until sourcemap__free().  Nothing prints.  Errors: -EINVAL (malformed,
 * with err set), -E2BIG (a cap), -ENOMEM.
 */
#ifndef ISOPROF_SYMBOLIZE_SOURCEMAP_H
#define ISOPROF_SYMBOLIZE_SOURCEMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOURCEMAP_MAX_BYTES (256u << 20)	/* JSON text of one map */
#define SOURCEMAP_MAX_SEGMENTS (32u << 20)
/* JSON values (names, sources, sections...): what json-c's tree may hold */
#define SOURCEMAP_MAX_VALUES (2u << 20)

/*
 * How far before a function's position (V8's: the '(' of its parameters)
 * the end of its name may be, in columns: "f (" or "f = (" or "f: function ("
 * in code that is not minified.
 */
#define SOURCEMAP_NAME_SLACK 12

struct sourcemap;

/* A mapped position. */
struct sourcemap_pos {
	const char *source;	/* original file (cleaned; see above) */
	uint32_t line;		/* 0-based, in source */
	uint32_t column;	/* 0-based */
	const char *name;	/* the segment's names[] entry; NULL when it has none */
	uint32_t gen_line;	/* the segment's generated line and column */
	uint32_t gen_column;
};

int sourcemap__parse(const char *json, size_t len, struct sourcemap **out, char *err,
		     size_t errlen);
void sourcemap__free(struct sourcemap *sm);

/* The map's "file" (for index maps the outer one), or NULL when it has none. */
const char *sourcemap__file(const struct sourcemap *sm);
size_t sourcemap__segment_count(const struct sourcemap *sm);
/* Original files the map names ("sources"; all sections' for an index map). */
size_t sourcemap__source_count(const struct sourcemap *sm);
/* Generated lines the map covers: the last segment's line + 1 (0: empty map). */
uint32_t sourcemap__line_count(const struct sourcemap *sm);

/*
 * The original position of generated (line, column): the last segment of
 * that line at or before column that maps to a source.  A segment of one
 * field (generated column only) ends the mapping before it: a column at or
 * after it, before the next mapped segment, is unmapped.  0 and *out, or
 * -ENOENT (nothing mapped there).
 */
int sourcemap__lookup(const struct sourcemap *sm, uint32_t line, uint32_t column,
		      struct sourcemap_pos *out);

/*
 * The original name of a function V8 places at (line, column) (the '(' of
 * its parameters, or of an arrow's single parameter) under a generated
 * name of gen_name_len characters (its last part: "c" of "s.c"): the
 * nearest segment on that line at or before column that has a name and
 * whose generated identifier, gen_name_len columns long, ends at most
 * SOURCEMAP_NAME_SLACK columns before column and not after it, with no
 * other segment starting inside it (an identifier is one token).  Segments
 * in between without a name are stepped over (`f=(` has one at `=`);
 * a named one whose identifier would end after column (a parameter) too,
 * and one followed by another segment within gen_name_len columns (a
 * shorter identifier: `t` in `this.b=t}method(` when the method kept its
 * name, which then has no named segment of its own).  NULL when none is
 * found (gen_name_len 0: anonymous, always NULL).
 */
const char *sourcemap__function_name(const struct sourcemap *sm, uint32_t line,
				     uint32_t column, size_t gen_name_len);

/*
 * Does the map describe this generated script text (len bytes)?  Checked:
 * every segment's generated line exists in text and its column is within
 * that line (columns counted in UTF-16 code units); and the named segments
 * (those with a names[] entry) start an identifier in text (an
 * identifier character [A-Za-z0-9_$] or a non-ASCII one, not preceded by
 * one), since bundlers name identifiers.  A map of another build of the
 * script fails both (positions land anywhere).
 */
struct sourcemap_check {
	size_t segments;	/* checked */
	size_t outside;		/* beyond the last line, or past the end of its line */
	size_t named;		/* named segments */
	size_t named_on_identifier;	/* ... starting an identifier */
};
void sourcemap__check_script(const struct sourcemap *sm, const char *text, size_t len,
			     struct sourcemap_check *out);
/*
 * The verdict on a check: matches when no segment is outside and at least
 * 90% of the named segments (when there are 8 or more) start an identifier.
 */
bool sourcemap_check__matches(const struct sourcemap_check *c);

/*
 * The URL of a script's source map: the value of the last
 * "//# sourceMappingURL=" (or the old "//@ sourceMappingURL=") comment on
 * a line of its own among the script's last lines (trailing whitespace
 * allowed after it), as V8 and DevTools take it.  true and *url and
 * *url_len (pointing into text), or false.
 */
bool sourcemap__url_in_script(const char *text, size_t len, const char **url, size_t *url_len);

/*
 * A data: URL's payload, as for an inline map
 * ("data:application/json;base64,..." or ";charset=utf-8;base64,", or
 * not base64: percent-encoded): malloc'd into *out (NUL-terminated, *out_len
 * bytes without the NUL).  0, -EINVAL (not a data: URL, bad base64 or
 * percent escape, not JSON's media type), -E2BIG (over
 * SOURCEMAP_MAX_BYTES), -ENOMEM.
 */
int sourcemap__decode_data_url(const char *url, size_t len, char **out, size_t *out_len);

/*
 * A source name made readable for a profile, into buf (cut to len):
 * "webpack://app/./src/x.ts" -> "src/x.ts" (a scheme and its host
 * dropped; "file://" keeps the path), "../../src/x.ts" -> "src/x.ts"
 * (leading "./" and "../" dropped: relative to a build directory the
 * profile's reader does not have), "a/./b/../c.ts" -> "a/c.ts".
 */
void sourcemap__clean_source(const char *source, char *buf, size_t len);

#endif /* ISOPROF_SYMBOLIZE_SOURCEMAP_H */
