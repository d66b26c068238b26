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

#endif /* ISOPROF_V8_CALIBRATE_H */
