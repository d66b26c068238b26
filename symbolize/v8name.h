/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8name: split a V8 code name into its parts.
 *
 * V8's CodeEventLogger composes one name per code object; the same string
 * is written to the perf map (/tmp/perf-PID.map) and, without its "Tag:"
 * prefix and with the tier marker in a field of its own, to the v8.log
 * code-creation lines:
 *
 *   JS:*fib /srv/app/index.js:12:14     tag, marker, debug name, script:line:col
 *   JS:~ file.js:3:10                   anonymous function (empty debug name)
 *   JS:+'foo w.js:1:1                   context-specialized Maglev code
 *   JS:o*foo w.js:1:1                   on-stack-replacement code (V8 >= ~13)
 *   JS:~get foo /srv/a.js:9:3           debug names may contain spaces
 *   Script:~ /srv/app.js                top-level code; newer V8 omits line:col
 *   Eval:~ [eval]:1:1                   top-level code of eval / wrapped code
 *   LazyCompile:*fib /a.js:43           old V8 tags: LazyCompile, Function,
 *                                       InterpretedFunction; line without column
 *   Builtin:ArrayPrototypePush          Builtin, BytecodeHandler, Stub,
 *   BytecodeHandler:LdaZero             Handler, Callback: the rest is the name
 *   RegExp:<source>                     older V8
 *   RegExp.> src: 'a+b' flags: 'gi'     newest V8 (no "RegExp:" tag)
 *
 * Splitting function from script, in this order:
 *   - a trailing ":line:column" (or a lone ":line", old V8) is the position;
 *   - a leading blank means an empty debug name: the whole rest is the
 *     script, blanks included;
 *   - otherwise the script starts after a blank followed by '/' (an absolute
 *     path, which may itself contain blanks), else after " symbol(" when the
 *     rest ends with ')' (a Symbol as script name), else after the LAST
 *     blank.  Script names may contain ':' (file:///a/b.js, node:internal/x,
 *     workerd:internal).
 * Without a position a blank is taken as the split only when what follows
 * looks like a script (contains '/', '.', ':', '[' or '<', or is empty), so
 * "JS:~get foo" stays one function name.  In v8.log, newer V8 writes a
 * top-level script as its bare name ("/srv/app.js", no blank): for the
 * Script and Eval tags that whole name is the script.
 *
 * Names are at most 4096 bytes in V8 and may be cut anywhere: parsing never
 * fails on content, it returns what can be recognized (a cut ":12:" is not
 * a position; the text stays in the script).
 *
 * Strings: every string field points into the caller's buffer (copied and
 * NUL-terminated there) or to a static string; they live as long as that
 * buffer.  The buffer needs v8name__buf_size(len) bytes.
 */
#ifndef ISOPROF_SYMBOLIZE_V8NAME_H
#define ISOPROF_SYMBOLIZE_V8NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum v8name_kind {
	V8NAME_UNKNOWN = 0,	 /* no tag: not composed by V8, or unrecognizable */
	V8NAME_JS,		 /* JS function: JS, LazyCompile, Function, InterpretedFunction */
	V8NAME_SCRIPT,		 /* top-level code of a script or eval: Script, Eval */
	V8NAME_BUILTIN,		 /* Builtin */
	V8NAME_BYTECODE_HANDLER, /* BytecodeHandler */
	V8NAME_REGEXP,		 /* RegExp (both forms) */
	V8NAME_OTHER,		 /* Stub, Handler, Callback, IC tags, any other tag */
};

/* What the marker says about the code; see docs/formats.md. */
enum v8name_tier {
	V8NAME_TIER_NONE = 0,	  /* "": builtins, stubs, optimization-disabled code */
	V8NAME_TIER_INTERPRETED,  /* "~": Ignition (or its per-function trampoline) */
	V8NAME_TIER_BASELINE,	  /* "^": Sparkplug */
	V8NAME_TIER_MAGLEV,	  /* "+", "+'" (Turboprop in V8 8.x-9.x) */
	V8NAME_TIER_TURBOFAN,	  /* "*", "*'" */
	V8NAME_TIER_NCI,	  /* "-": native-context-independent (~2020 only) */
};

struct v8name {
	enum v8name_kind kind;
	enum v8name_tier tier;
	bool context_specialized;  /* the marker ends with ' */
	bool osr;		   /* on-stack replacement code: newer V8 writes "o+", "o*" */
	const char *tag;	   /* "JS", "Builtin", "LazyCompile"...; "" when none */
	const char *marker;	   /* "", "~", "^", "+", "+'", "*", "*'", "-", or "o" + a tier */
	const char *function;	   /* debug name, builtin name, regexp source; "" when anonymous */
	const char *script;	   /* script name; NULL when none */
	const char *regexp_flags;  /* flags of a newest-form RegExp; "" otherwise */
	uint32_t line;		   /* 1-based; 0 when unknown */
	uint32_t column;	   /* 1-based; 0 when unknown */
};

/* Room the parse needs for a name of len bytes. */
#define V8NAME_BUF_EXTRA 8
static inline size_t v8name__buf_size(size_t len)
{
	return len + V8NAME_BUF_EXTRA;
}

/*
 * Parse raw[0..len) (need not be NUL-terminated; a NUL inside ends the
 * fields that contain it) as perf-map style "Tag:<marker><rest>".  buf must
 * hold v8name__buf_size(len) bytes.  Returns 0, or -ENOSPC when buf is too
 * small (out is then a valid, empty V8NAME_UNKNOWN name).
 */
int v8name__parse(const char *raw, size_t len, struct v8name *out, char *buf, size_t size);

/*
 * Parse a v8.log code-creation name, whose tag and marker are fields of
 * their own: tag (e.g. "JS", "Builtin"), marker ("" or NULL when the line
 * has none; an unknown marker reads as "") and the name without either.
 * out->tag points to the caller's tag.  Same buffer rule and errors as
 * v8name__parse().
 */
int v8name__parse_log(const char *tag, const char *marker, const char *name, size_t len,
		      struct v8name *out, char *buf, size_t size);

/* The kind a tag stands for ("JS" -> V8NAME_JS); V8NAME_UNKNOWN for "". */
enum v8name_kind v8name__tag_kind(const char *tag, size_t len);

/* The tier a marker stands for; false when marker is not one V8 writes. */
bool v8name__marker_tier(const char *marker, size_t len, enum v8name_tier *tier,
			 bool *context_specialized);

/* "js", "script", "builtin", "bytecode-handler", "regexp", "other", "unknown". */
const char *v8name_kind__str(enum v8name_kind kind);
/* "", "interpreted", "baseline", "maglev", "turbofan", "nci". */
const char *v8name_tier__str(enum v8name_tier tier);

#endif /* ISOPROF_SYMBOLIZE_V8NAME_H */
