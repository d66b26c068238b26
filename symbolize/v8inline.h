/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8inline: which JS functions an optimized code object inlined, and where
 * a pc inside it is in each of them, from a V8 code log (v8log feeds it).
 *
 * V8 logs, with --log-source-position (implied by --log-code):
 *   code-creation,JS,<kind>,<time>,0x<start>,<size>,<name>,0x<sfi>,<marker>
 *   code-source-info,0x<start>,<script>,<start-pos>,<end-pos>,
 *       C<pc-offset>O<source-pos>[I<inlining-id>]...,
 *       F<function-index>O<call-pos>[I<parent-inlining-id>]...,
 *       S0x<sfi>...
 * A pc's last C entry at or before its offset gives a source position and,
 * when inlined, the inlining id: function S[F[id].fn] at that position,
 * called from F[id].parent (or the code's own function) at F[id].pos, and
 * so on outwards.  Source positions are offsets in the script's source.
 *
 * Lines and columns are computed from the script sources the log carries;
 * a function whose script is unknown gets line 0.
 *
 * Ownership: frames handed out point into the v8inline and stay valid until
 * the next update or free.  Errors: -ENOMEM; malformed lines are ignored
 * (counted by the caller).
 */
#ifndef ISOPROF_SYMBOLIZE_V8INLINE_H
#define ISOPROF_SYMBOLIZE_V8INLINE_H

#include <stddef.h>
#include <stdint.h>

struct v8inline;

struct v8inline_frame {
	const char *function;	/* "" when anonymous */
	const char *script;	/* NULL when unknown */
	uint32_t line;		/* where the pc is in it, 1-based; 0 when unknown */
	uint32_t column;
	uint32_t fn_line;	/* where the function starts (its name's position), 1-based */
	uint32_t fn_column;
};

/*
 * A script's source and where its lines start (v8inline__line_starts()),
 * so a source position's line is a binary search, not a scan of the
 * script for every frame.
 */
struct v8inline_script {
	const char *source;
	size_t len;
	const uint32_t *line_starts;	/* offset of each line's first byte; [0] is 0 */
	size_t nlines;
};

/* Looks up a script by id or by name; NULL when unknown or without source. */
struct v8inline_sources {
	const struct v8inline_script *(*by_id)(void *ctx, int id);
	const struct v8inline_script *(*by_name)(void *ctx, const char *name);
	void *ctx;
};

/*
 * The line starts of source[len] for struct v8inline_script: malloc'd, the
 * caller's, *nlines of them.  Source positions are 31-bit, so only the first
 * 2 GiB are indexed.  NULL on ENOMEM.
 */
uint32_t *v8inline__line_starts(const char *source, size_t len, size_t *nlines);

struct v8inline *v8inline__new(void);
void v8inline__free(struct v8inline *vi);
void v8inline__clear(struct v8inline *vi);

/*
 * A code-creation of a JS function: its SFI's name ("fib a.js:1:13"), from
 * now on.  An SFI address is reused by other functions over a log's life:
 * code-source-info lines read their S entries against the names logged
 * before them, so older code keeps the names it was logged with.
 */
int v8inline__function(struct v8inline *vi, uint64_t sfi, const char *name, size_t len);

/* sfi-move: the SFI at from is at to now, under the same name.  0 or -ENOMEM. */
int v8inline__sfi_move(struct v8inline *vi, uint64_t from, uint64_t to);

/*
 * The fields of a code-source-info line (after "code-source-info,"): the
 * inlining of the code logged just before it.  1 used, 0 malformed.
 */
int v8inline__source_info(struct v8inline *vi, const char *p, size_t len);

/*
 * The code at start is gone: a code-delete, or a code-creation at start
 * (new code, whose own code-source-info follows it; code that inlined
 * nothing has no table, and must not inherit its predecessor's).
 */
void v8inline__drop(struct v8inline *vi, uint64_t start);

/*
 * New code is created at start, where live code of size bytes was: that
 * code's table is kept aside (one per start, the latest) for the samples
 * taken in it before, and the start has no table until the new code's
 * own comes.  0 or -ENOMEM.
 */
int v8inline__retire(struct v8inline *vi, uint64_t start, uint64_t size);

/*
 * The code just created at start is optimized (or baseline): keep its
 * source positions even if it inlined nothing, so a sample in it has a
 * line (v8inline__stack()'s outer).
 */
void v8inline__want_positions(struct v8inline *vi, uint64_t start);

/* code-move of a code object. */
void v8inline__move(struct v8inline *vi, uint64_t from, uint64_t to);

/*
 * The inlined frames at pc offset off of the code that starts at start,
 * innermost first, NOT including the code's own (outermost) function, and
 * in *outer the position in the outermost function (line 0 when unknown;
 * set whether or not anything is inlined there).  Returns the number of
 * frames (0: not inlined there, or nothing known), at most max.
 */
int v8inline__stack(struct v8inline *vi, uint64_t start, uint64_t off,
		    const struct v8inline_sources *src, struct v8inline_frame *frames, size_t max,
		    struct v8inline_frame *outer);

/*
 * As v8inline__stack(), in the code retired at start, when off lies inside
 * it; -ENOENT when there is none such.
 */
int v8inline__stack_retired(struct v8inline *vi, uint64_t start, uint64_t off,
			    const struct v8inline_sources *src, struct v8inline_frame *frames,
			    size_t max, struct v8inline_frame *outer);

#endif
