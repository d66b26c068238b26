/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * calibrate: learn a V8 build's object layout (symbolize/v8layout.h) from
 * a running process of that build whose JIT frames a perf map names.
 *
 * The input is what the sampler saw with a raw layout: for each JS frame,
 * the JSFunction word at fp-16, and what the perf map calls the frame's
 * code (function, script, line, column).  Every offset is then searched
 * for, not assumed: the tagged size and cage, JSFunction -> SFI, SFI ->
 * name or ScopeInfo, where the ScopeInfo keeps the name for each count of
 * context locals, SFI -> Script -> name and source, the ScopeInfo's start
 * position, string headers, the map's instance type and the map words.
 * Each is the candidate most observations agree on; the layout is then
 * checked by naming every observation with it (symbolize/v8heap.h).
 *
 * The process must stay alive and unchanged while this runs (a calibration
 * run's own child, idle after its load).  Nothing prints.
 */
#ifndef ISOPROF_V8_CALIBRATE_H
#define ISOPROF_V8_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/v8code.h"
#include "symbolize/v8layout.h"

#define CALIB_FUNCTION_BYTES 64

struct calib_observation {
	uint64_t function;	/* the tagged JSFunction word at fp-16 */
	/*
	 * The JSFunction's first bytes, read when the sample arrived: young
	 * JSFunctions move at the next scavenge, their SFIs do not, so the
	 * object is read at once and its fields searched later.
	 */
	uint8_t function_bytes[CALIB_FUNCTION_BYTES];
	bool has_bytes;
	const char *name;	/* perf map: function name ("" anonymous) */
	const char *script;	/* perf map: script; NULL when none */
	uint32_t line, column;	/* perf map: function start, 0 when unknown */
};

struct calib_report {
	size_t observations;	/* distinct (function, name) pairs given */
	size_t named_by_string;	/* of those, whose SFI held the name directly */
	size_t named_by_scope;	/* ... or through a ScopeInfo */
	size_t max_context_locals; /* largest context-local count seen */
	size_t hashed_seen;	/* ScopeInfos with a hashed local-name table seen */
	size_t named_inferred;	/* functions whose inferred name ("obj.method") was found */
	size_t checked;		/* named with the final layout */
	size_t agree_name;	/* ... whose name equals the perf map's */
	size_t agree_script;
	size_t agree_line;	/* ... whose line and column equal the perf map's */
	char why[256];		/* on failure: the step that found no answer */
};

/*
 * Learn *out (every field but build_id and v8_version) from obs[n] of pid.
 * -ENODATA when some step found no consistent answer (report->why says
 * which), -ENOMEM.
 */
int calibrate__learn(pid_t pid, const struct calib_observation *obs, size_t n,
		     struct v8_layout *out, struct calib_report *report);

/*
 * Code objects: learnt from V8's code log of the same run, which describes
 * each optimized code object (start, size, tier, function, the functions
 * it inlined, and its source positions): every field of the read path in
 * symbolize/v8code.h is the candidate that reproduces the log for all of
 * them, then the layout is checked by reading each object's inlining back
 * from a pc inside it.
 */
struct calib_inlining {
	int32_t function;	/* index into inlined */
	int32_t position;	/* call site's script offset */
	int32_t parent;		/* -1: the code's own function */
};

struct calib_code {
	uint64_t start;
	uint32_t size;
	char tier;		/* '*' TurboFan, '+' Maglev, '^' baseline */
	uint64_t sfi;		/* the code's own function */
	uint64_t *inlined;	/* the SFIs it inlined (the log's S list) */
	size_t ninlined;
	struct calib_inlining *inlining;	/* the log's F list */
	size_t ninlining;
	struct v8code_position *positions;	/* the log's C list */
	size_t npositions;
	bool described;		/* a code-source-info line was seen */
};

struct calib_code_report {
	size_t objects;		/* optimized code objects the log described */
	size_t with_inlining;	/* ... that inlined some function */
	size_t checked;		/* read back with the final layout */
	size_t agree;		/* ... whose stacks equal the log's at every position */
	size_t positions;	/* positions compared */
	char why[256];		/* on failure: the step that found no answer */
};

/*
 * Learn the code_ fields of *l (the rest already learnt) from codes[n] of
 * pid.  -ENODATA (report->why says which step), -ENOMEM.  On failure the
 * code fields stay 0: names still work, inlining from memory does not.
 */
int calibrate__learn_code(pid_t pid, const struct calib_code *codes, size_t n,
			  struct v8_layout *l, struct calib_code_report *report);

/*
 * Deoptimization data (symbolize/v8deopt.h): where the exit stubs, entries
 * and frame translations are, the translation format, Maglev's safepoint
 * table; learnt from the same run's optimized code that inlined, and held
 * to the source positions the run's code log made V8 keep.
 */
struct calib_deopt_report {
	size_t objects;		/* optimized code objects with inlined functions read */
	size_t entries;		/* their deoptimization entries, every one decoded */
	size_t lazy_checked;	/* calls whose translation was compared with the positions */
	size_t lazy_agree;	/* ... and listed the same inline stack */
	size_t turbofan_checked, turbofan_agree; /* ... of them in TurboFan code */
	size_t objects_placed;	/* code objects whose logged pcs were placed both ways */
	size_t pcs_checked;	/* logged pcs placed by positions and by deopt data */
	size_t pcs_agree;	/* ... alike */
	const char *maglev_why;	/* Maglev's placement not learnt: why; NULL when learnt */
	char why[256];		/* on failure: the step that found no answer */
};

/*
 * Learn the deopt_ fields of *l (the code fields already learnt) from
 * codes[n] of pid.  -ENODATA (report->why), -ENOMEM.  On failure they stay
 * 0: code without source positions then keeps its samples in its own
 * function.
 */
int calibrate__learn_deopt(pid_t pid, const struct calib_code *codes, size_t n,
			   struct v8_layout *l, struct calib_deopt_report *report);

/*
 * The code objects a V8 code log (--log-code) describes: each JS
 * code-creation of TurboFan ('*'), Maglev ('+') or baseline ('^') code, with
 * the code-source-info line that follows it.  *out is malloc'd
 * (calibrate__free_codes()); malformed lines are skipped.  0 or -ENOMEM.
 */
int calibrate__parse_code_log(const char *text, size_t len, struct calib_code **out, size_t *n);
void calibrate__free_codes(struct calib_code *codes, size_t n);

#endif /* ISOPROF_V8_CALIBRATE_H */
