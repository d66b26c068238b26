/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8code: which functions a piece of optimized V8 code inlined, and where a
 * pc inside it is in each of them, read from the code object itself in the
 * runtime's memory (docs/design/js-frames.md, "Inlined functions").  No flag, no
 * code log: it covers code the log never saw (compiled while V8's own
 * profiler ran, before the log was on, or with no log at all).
 *
 * The read path, with the fields of the binary's layout (v8layout.h):
 *   pc -> the InstructionStream whose instructions hold it (scanning back
 *         in code_alignment steps; map type, back pointer, instruction
 *         start and size all checked)
 *      -> Code: kind (TurboFan or Maglev only: baseline code reuses the
 *         fields for bytecode), deoptimization data, source position table
 *      -> the inlined functions' SFIs, the InliningPositions (function,
 *         call site, parent) and the code's own SFI
 *   the last source position at or before the pc gives an inlining id;
 *   following the parents gives the stack, innermost first, each level's
 *   SFI and script offset (V8's own SourcePosition::InliningStack).
 *
 * V8 records source positions for optimized code only when something
 * needs them: a profiler, a code log, a perf map, --detailed-line-info,
 * or an embedder that asks (node does).  Without them the inlined
 * functions are known, not which one a pc is in: the stack is then the
 * code's own function alone (counted in v8code_stats.no_positions).
 *
 * One v8code per process.  Code objects are decoded once and cached with
 * the pcs that led to them; a cached object is checked again (two small
 * reads) once per epoch (v8code__next_epoch()), since code can die and
 * its address be reused.  Lookups after the window use what was cached
 * while the process ran.  Not thread-safe.
 *
 * Errors: negative errno (-EFAULT/-ESRCH unreadable, -EINVAL not
 * optimized code the layout can read, -ENOMEM).  Nothing prints.
 */
#ifndef ISOPROF_SYMBOLIZE_V8CODE_H
#define ISOPROF_SYMBOLIZE_V8CODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/v8layout.h"

#define V8CODE_SCAN_MAX (64u << 10)	/* bytes scanned back from a pc for its code */
#define V8CODE_TABLE_MAX (1u << 20)	/* bytes of a position table read */
#define V8CODE_INLINED_MAX 4096		/* inlined functions / positions of one code */
#define V8CODE_BODY_MAX (4u << 20)	/* instruction bytes of one code read for placement */
#define V8CODE_ENTRIES_MAX 65536	/* deoptimization entries of one code */

enum v8code_tier {
	V8CODE_TURBOFAN = 1,
	V8CODE_MAGLEV,
};

/* One level of the stack at a pc. */
struct v8code_frame {
	uint64_t sfi;		/* the function's SharedFunctionInfo (untagged) */
	int32_t position;	/* offset in its script's source; -1 when unknown */
	int32_t bytecode_offset; /* placed by deoptimization data: where in its bytecode; else -1 */
};

/* Who placed a pc among the functions its code inlined. */
enum v8code_placement {
	V8CODE_INLINED_NOTHING = 0,	/* the code inlined nothing: its own function */
	V8CODE_BY_POSITIONS,		/* the code's source position table */
	V8CODE_BY_DEOPT,		/* its deoptimization data (symbolize/v8deopt.h) */
	V8CODE_CALLER_ONLY,		/* it inlined functions, nothing says which: its own */
};

struct v8code_where {
	enum v8code_tier tier;
	enum v8code_placement placed;
};

struct v8code_stats {
	uint64_t lookups;	/* v8code__stack() and __note() calls */
	uint64_t pcs;		/* distinct pcs looked up */
	uint64_t decoded;	/* code objects decoded */
	uint64_t no_positions;	/* ... that inlined functions but keep no source positions */
	uint64_t deopt_placed;	/* ... placed by their deoptimization data instead */
	uint64_t deopt_failed;	/* ... whose deoptimization data did not read or check */
	uint64_t deopt_entries;	/* deoptimization entries decoded */
	uint64_t deopt_instructions; /* instructions walked to place pcs */
	/* where both exist (check_deopt): pcs placed alike by positions and by deopt data */
	uint64_t deopt_checked, deopt_agree;
	uint64_t not_optimized;	/* pcs in no optimized code object the layout reads */
	uint64_t revalidated;	/* cached code objects checked again */
	uint64_t replaced;	/* ... found replaced by other code */
	uint64_t reads, bytes;
	uint64_t ns;		/* time spent reading and decoding */
};

struct v8code;

/* Reader of pid's code; layout copied; NULL with errno (EINVAL: no code fields). */
struct v8code *v8code__new(pid_t pid, const struct v8_layout *layout);
void v8code__free(struct v8code *c);

/*
 * Any address in pid's main pointer cage (a JS frame's SFI does): compressed
 * layouts need it to decompress the code's pointers; no lookup works
 * before.  Uncompressed layouts ignore it.
 */
void v8code__set_cage(struct v8code *c, uint64_t heap_address);

/* Cached code objects are checked again at their next use. */
void v8code__next_epoch(struct v8code *c);

/*
 * Read the code at pc (a leaf pc, or a return address - 1) now, while the
 * process runs, so a later v8code__stack() of pc answers from the cache.
 * 0, or what v8code__stack() would return as an error.
 */
int v8code__note(struct v8code *c, uint64_t pc);

/*
 * The functions at pc, innermost first, the code's own function last, at
 * most max; *where which compiler made the code and who placed the pc
 * (may be NULL).  Source positions where V8 kept them, else the code's
 * deoptimization data where the layout has its fields.  Returns how many
 * (>= 1), or a negative errno (-EINVAL: pc is in no optimized code object).
 */
int v8code__stack(struct v8code *c, uint64_t pc, struct v8code_frame *frames, size_t max,
		  struct v8code_where *where);

/*
 * Also decode the deoptimization data of code that has source positions,
 * and count how often both place a pc alike (v8code_stats.deopt_checked,
 * deopt_agree): what calibration checks the layout with.  Off by default.
 */
void v8code__check_deopt(struct v8code *c, bool on);

/*
 * As v8code__stack(), by the deoptimization data alone, also for code that
 * has source positions (check_deopt on when its code was read); -ENODATA
 * when its deoptimization data was not decoded.
 */
int v8code__deopt_stack(struct v8code *c, uint64_t pc, struct v8code_frame *frames, size_t max);

void v8code__stats(const struct v8code *c, struct v8code_stats *out);

/*
 * Decoding primitives, shared with the calibration that learns the layout
 * (user/v8/calibrate.c).
 */

/* One entry of a source position table. */
struct v8code_position {
	int64_t code_offset;
	int32_t position;	/* script offset; -1 when unknown (external) */
	int32_t inlining_id;	/* -1: the code's own function */
};

/*
 * Decode table[len] with encoding (v8_layout.spt_encoding) into *out
 * (malloc'd, the caller's).  Returns the count, or -EINVAL when the table
 * is malformed (offsets going back, a varint past the end), -ENOMEM.
 */
long v8code__decode_positions(const uint8_t *table, size_t len, uint32_t encoding,
			      struct v8code_position **out);

/* A SourcePosition's script offset (-1 external/unknown) and inlining id (-1 none). */
void v8code__source_position(uint64_t raw, int32_t *position, int32_t *inlining_id);

#endif /* ISOPROF_SYMBOLIZE_V8CODE_H */
