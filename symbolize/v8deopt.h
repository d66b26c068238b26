/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8deopt: which inlined function a pc of optimized V8 code is in, from the
 * code's deoptimization data, for code that keeps no source positions
 * (workerd's V8 never asks for them; Maglev never wrote them before V8 12).
 *
 * Optimized code can fall back to the interpreter at its deoptimization
 * points, so V8 keeps, for each point, a frame translation: the frames the
 * interpreter would rebuild there, outermost first, inlined functions
 * included, each with its function (a literal: an SFI) and bytecode offset.
 * V8 rebuilds its own inlined frames from them (OptimizedJSFrame::
 * Summarize).  The points are
 *   - lazy: each call that can deoptimize, by its return offset (TurboFan
 *     keeps it in the entry; Maglev in its safepoint table, entry -> deopt
 *     index), which places the return addresses of caller frames exactly;
 *   - eager: each check (overflow, map, bounds...) branches to an exit stub
 *     at the end of the code, one per entry.
 * A leaf pc is placed by the first point control reaches from it: the code
 * is walked from the pc through fall-throughs and jumps to the first eager
 * check or lazy call, as checks follow the operations they check (or,
 * where none follows in the block, the last point before the pc in it).
 * Measured against source positions where V8 kept both (calibration, and
 * every capture with a code log): docs/design/js-frames.md.
 *
 * Translation formats changed between V8 versions (opcode numbering, the
 * MATCH_PREVIOUS_TRANSLATION back-references and their one-byte form, the
 * interpreted frame's bytecode_array_id): a format is a family and an
 * opcode count, learnt per binary by calibration (user/v8/calibrate_code.c).
 *
 * Nothing here reads memory, prints or keeps state: the caller hands the
 * bytes.  Errors: -EINVAL malformed input, -ENOMEM.
 */
#ifndef ISOPROF_SYMBOLIZE_V8DEOPT_H
#define ISOPROF_SYMBOLIZE_V8DEOPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define V8DEOPT_OPCODES_MAX 96
#define V8DEOPT_FRAMES_MAX 64	/* frames of one translation; deeper is refused */
#define V8DEOPT_BASIS_MAX 65536	/* instructions of a translation others refer back to */

/*
 * Translation format families (v8_layout.deopt_format).  0: none learnt.
 *   1: frame opcodes first, interpreted frames with a bytecode_array_id
 *      (6 and 4 operands), the one-byte MATCH_PREVIOUS_TRANSLATION form;
 *      value opcodes up to OPTIMIZED_OUT vary in number (V8 13-15).
 *   2: as 1 without bytecode_array_id (5 and 3 operands; V8 12).
 *   3: opcodes in alphabetical order, one BEGIN, interpreted frames of 5
 *      and 3 operands, the one-byte form (V8 11: node 20).
 */
enum v8deopt_family {
	V8DEOPT_FAMILY_NONE = 0,
	V8DEOPT_FAMILY_ARRAY_ID = 1,
	V8DEOPT_FAMILY_NO_ARRAY_ID = 2,
	V8DEOPT_FAMILY_ALPHABETICAL = 3,
	V8DEOPT_FAMILY_MAX = 3,
};

struct v8deopt_format {
	uint32_t opcodes;		/* kNumTranslationOpcodes */
	uint32_t begin[2];		/* BEGIN_WITHOUT_FEEDBACK, BEGIN_WITH_FEEDBACK (or begin[0] twice) */
	uint32_t match_previous;	/* MATCH_PREVIOUS_TRANSLATION */
	uint8_t operands[V8DEOPT_OPCODES_MAX];
	bool frame[V8DEOPT_OPCODES_MAX];	/* a frame: BEGIN counts it */
	bool interpreted[V8DEOPT_OPCODES_MAX];	/* an interpreted (JS) frame */
};

/* The opcode counts a family has been seen with, for calibration to try. */
void v8deopt__family_range(enum v8deopt_family family, uint32_t *min, uint32_t *max);

/* The format of a family with this many opcodes; -EINVAL when it has no such form. */
int v8deopt__format(enum v8deopt_family family, uint32_t opcodes, struct v8deopt_format *out);

struct v8deopt_frame {
	int32_t literal;	/* index into the deoptimization literals: the function's SFI */
	int32_t bytecode_offset;
};

/*
 * The interpreted frames of the translation at index in tr[len],
 * outermost first, at most max.  Returns their number (>= 1), or -EINVAL
 * (no translation starts there, it runs past the end, or its frames do not
 * add up to what it says).
 */
int v8deopt__frames(const struct v8deopt_format *f, const uint8_t *tr, size_t len, size_t index,
		    struct v8deopt_frame *out, size_t max);

/*
 * The basis translation the last call decoded, for the next call on the
 * same translations: consecutive entries usually refer back to one basis,
 * and decoding it for each would cost entries x basis length.  Zeroed
 * before the first call; v8deopt__basis_release() after the last.
 */
struct v8deopt_basis {
	const struct v8deopt_format *f;	/* read in this format */
	const uint8_t *tr;	/* from these translations (unchanged since) */
	size_t index;		/* where it starts */
	void *insns;
	size_t n;
};

void v8deopt__basis_release(struct v8deopt_basis *b);

/* v8deopt__frames() keeping its basis in *cache. */
int v8deopt__frames_cached(const struct v8deopt_format *f, const uint8_t *tr, size_t len,
			   size_t index, struct v8deopt_frame *out, size_t max,
			   struct v8deopt_basis *cache);

/* ---- Maglev's safepoint table: return offset -> deoptimization index ---- */

/*
 * Where a build keeps the table's header words: the entry count at
 * length, the entry configuration word at config (V8 15.8: 4 and 8, the
 * tagged slot count at 0), the entries from header.  The configuration's
 * bits: has deopt data (bit 0), the register-index bytes (3 bits from 1),
 * the pc bytes (3 bits from 4), the deopt-index bytes (3 bits from 7).
 * An entry: pc, [deopt index + 1, trampoline + 1], pushed registers (a
 * byte), tagged register indexes.
 */
struct v8deopt_safepoint_layout {
	uint32_t length;
	uint32_t config;
	uint32_t header;
};

struct v8deopt_call {
	uint32_t return_offset;	/* of the call, from the instruction start */
	uint32_t entry;		/* its deoptimization entry */
};

/*
 * The table in t[len]: the calls with a deoptimization entry, in *out
 * (malloc'd), entries below nentries.  Returns how many, or -EINVAL (a
 * header or entry that does not fit, pcs going back), -ENOMEM.  *bytes
 * (may be NULL): the table's size as its header gives it, also when len
 * holds the header only (then -EINVAL), so a reader knows what to read.
 */
long v8deopt__maglev_calls(const uint8_t *t, size_t len, const struct v8deopt_safepoint_layout *l,
			   uint32_t nentries, struct v8deopt_call **out, size_t *bytes);

/* ---- Placement -------------------------------------------------------- */

struct v8deopt_exits {
	uint32_t start;		/* offset of the first exit stub: the body ends here */
	uint32_t eager, lazy;	/* counts; eager exits first, entry i is exit i */
	uint32_t eager_size, lazy_size;
};

/* How a run of instructions was placed. */
enum v8deopt_how {
	V8DEOPT_NONE = 0,	/* no point reached: the code's own function */
	V8DEOPT_AHEAD,		/* the first point control reaches */
	V8DEOPT_BEHIND,		/* the last point before it in its block */
	V8DEOPT_EXIT,		/* an exit stub (a patched return address lands there) */
};

struct v8deopt_run {
	uint32_t start;		/* offset of its first instruction */
	int32_t entry;		/* deoptimization entry, -1 none */
	uint32_t how;		/* enum v8deopt_how */
};

struct v8deopt_place_stats {
	uint32_t instructions;
	uint32_t ahead, behind, none;	/* instructions placed so */
	uint32_t undecoded;		/* bytes that decoded to no instruction */
	uint32_t checks, calls;		/* points found in the body */
};

/*
 * Place every instruction of code[size) (instruction bytes of one code
 * object, from its start): *runs (malloc'd, sorted by start, consecutive
 * runs differ in entry or how), covering [0, size).  calls: the lazy points
 * (sorted by return_offset or not).  Returns the number of runs, or
 * -EINVAL (exits outside the code), -ENOMEM.
 */
long v8deopt__place(const uint8_t *code, size_t size, const struct v8deopt_exits *exits,
		    const struct v8deopt_call *calls, size_t ncalls, struct v8deopt_run **runs,
		    struct v8deopt_place_stats *stats);

/* The run holding offset, or NULL (beyond the runs). */
const struct v8deopt_run *v8deopt__lookup(const struct v8deopt_run *runs, size_t n,
					  uint32_t offset);

#endif /* ISOPROF_SYMBOLIZE_V8DEOPT_H */
