/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8match: which isolate a V8 inspector target's profile belongs to
 * (docs/v8-profiler.md, "Mapping inspector targets to isolates").
 *
 * The inspector names its targets (workerd: after services; node: its main
 * thread) but never gives an isolate address, and isoprof knows isolates by
 * address.  Both sides report scripts, so the mapping goes by them:
 *   - a target can only map to an isolate of the process whose inspector
 *     it came from;
 *   - the score of (target, isolate) is the number of user scripts both
 *     report (compared by the name's last path component, "file://"
 *     stripped), then, to break ties, the number of JS function names both
 *     report;
 *   - a pair needs at least one common script;
 *   - pairs are taken best first, each target and isolate at most once;
 *   - a target whose best score is shared by two free isolates is left
 *     unmapped (ambiguous): a guess would make a wrong cross-check.
 *
 * Pure: no I/O, nothing prints.  Names are borrowed for the call.
 */
#ifndef ISOPROF_V8_V8MATCH_H
#define ISOPROF_V8_V8MATCH_H

#include <stddef.h>
#include <sys/types.h>

struct v8match_side {
	pid_t pid;
	const char *const *scripts;	/* user script names or URLs */
	size_t nscripts;
	const char *const *functions;	/* JS function names */
	size_t nfunctions;
};

enum v8match_result {
	V8MATCH_MAPPED = 0,
	V8MATCH_NO_SCRIPT,	/* no isolate of its process shares a script */
	V8MATCH_AMBIGUOUS,	/* two isolates fit equally well */
	V8MATCH_TAKEN,		/* its isolate went to a target that fits better */
};

/*
 * For each target t, assign[t] is the index of its isolate or -1, and
 * result[t] says why.  0, or -ENOMEM.
 */
int v8match__assign(const struct v8match_side *targets, size_t ntargets,
		    const struct v8match_side *isolates, size_t nisolates, int *assign,
		    enum v8match_result *result);

/* The part of a script name or URL that is compared: after the last '/'. */
const char *v8match__script_key(const char *name);

#endif
