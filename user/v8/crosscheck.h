/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * crosscheck: how far isoprof's CPU profile agrees with V8's own CPU
 * profiler over the same isolate and window.
 *
 * Inputs are two read pprof profiles: isoprof's (labels class, tid,
 * thread, isolate; synthetic "(program)", "(garbage collector)", "(idle)"
 * frames at the root of stacks) and V8's, converted from a .cpuprofile
 * (one sample per V8 sample, synthetic frames as single-frame stacks).
 * crosscheck__load() reads either kind of file and tells which it is
 * (through proto/profile_file.h).
 *
 * JS self shares.  A sample counts for one JS function: walking its stack
 * from the leaf, V8 code stubs (builtins, bytecode handlers, IC and other
 * tagged stubs) are skipped, and the first JS frame (a non-empty file name,
 * or a perf map "JS:"-style system name; inlined frames count as frames)
 * gets it.  A native C++ or kernel frame before any JS frame, or a class
 * label other than js / v8-builtin, makes it no JS sample.  Shares are
 * over each side's JS samples.  A function is (name, base name of its
 * file with "file://" removed), plus its start line when anonymous, so two
 * scripts with the same base name are merged.
 *
 * The report holds, per side, samples, window, period and effective rate,
 * class shares; the top functions; total variation distance over the self
 * shares; Spearman's rho over the 20 functions with the largest mean
 * share; functions only one side sees (>= 0.5% on it, 0 on the other);
 * isoprof's samples on threads other than the isolate's; and a verdict.
 *
 * Noise.  Two profiles of one steady workload differ by sampling alone,
 * the more the flatter the profile and the fewer its samples.  The report
 * resamples both sides from their pooled counts (CC_NOISE_RESAMPLES times,
 * fixed seed) and takes the 95th percentile of the TVD between the draws
 * as the noise floor.  The verdict is "agree" when the TVD is at most the
 * noise floor plus CROSSCHECK_ALLOWANCE (what the two profilers differ by
 * on a steady workload with few hot functions), and the top functions do
 * not differ beyond noise: a different top counts only when each side has
 * its own top ahead of the other's beyond noise (a one-sided binomial test
 * per side, CROSSCHECK_ALPHA).  Each top-table row gets an interval for its
 * difference in share (Agresti-Caffo, 95% with Bonferroni over the rows)
 * and is "significant" when the interval leaves out 0.
 *
 * Deoptimizations.  V8's profiler records a sample at every deoptimization
 * as well as at its timer's ticks.  When V8's samples outnumber the ticks
 * (CROSSCHECK_TICKS_INFLATED per tick, or a median interval under
 * CROSSCHECK_MIN_TIMER_NS), a verdict other than a plain "agree" says
 * V8's samples are mostly deoptimizations, and a note gives the numbers; isoprof's share of
 * the isolate's thread in the deoptimizer gets a note from 1%.
 *
 * crosscheck.c computes the report, crosscheck_text.c and
 * crosscheck_json.c print it (crosscheck_int.h is what they share).
 *
 * Ownership: the report copies what it keeps; the profiles may be freed
 * after crosscheck__compute().  Errors: -ENOMEM; -ENODATA when a side has
 * no JS samples (err says which); -EINVAL for bad options.  Nothing prints
 * except the print functions, to the stream they are given.
 */
#ifndef ISOPROF_V8_CROSSCHECK_H
#define ISOPROF_V8_CROSSCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proto/pprof_reader.h"

#define CROSSCHECK_DEFAULT_TOP 10
#define CROSSCHECK_ALPHA 0.05		/* the tests' level */
#define CROSSCHECK_ALLOWANCE 0.03	/* TVD allowed beyond the noise floor */
#define CROSSCHECK_TVD_BLIND 0.25	/* a noise floor from here: too few samples, note */
#define CROSSCHECK_ONLY_SHARE 0.005	/* "seen by one side only" from this share */
#define CROSSCHECK_RANK_SET 20		/* functions the rank correlation covers */
#define CROSSCHECK_TICKS_INFLATED 1.5	/* V8 samples per timer tick: deopt samples */
#define CROSSCHECK_MIN_TIMER_NS 50000	/* a median V8 interval below this: the same */
#define CROSSCHECK_DEOPT_SHARE 0.01	/* isoprof thread share in the deoptimizer: note */

enum crosscheck_side {
	CROSSCHECK_ISOPROF = 0,
	CROSSCHECK_V8 = 1,
};

struct crosscheck_opts {
	size_t top;			/* rows of the top table per side; 0: default */
	const char *isolate;		/* drop isoprof samples labelled with another isolate */
	const char *names[2];		/* input names for the report (files); may be NULL */
	bool roles_guessed;		/* the caller could not tell which input is V8's */
	int64_t v8_median_delta_ns;	/* V8's median time between samples; 0 unknown */
	/*
	 * NULL: a sample weighs its samples/count value (1 without one).
	 * Else that sample type's value in units of the profile's period
	 * (heap profiles: alloc_space in sampling intervals, so that the
	 * noise floor counts samples, not bytes).
	 */
	const char *value_type;
};

struct crosscheck_report;
struct json_object;

int crosscheck__compute(const struct pprof_profile *isoprof, const struct pprof_profile *v8,
			const struct crosscheck_opts *o, struct crosscheck_report **out,
			char *err, size_t errlen);
void crosscheck__free(struct crosscheck_report *r);

/* Aligned text for a person; 0 or -EIO when the stream fails. */
int crosscheck__print_text(const struct crosscheck_report *r, FILE *f);
/* One JSON object (and a newline); 0, -ENOMEM or -EIO. */
int crosscheck__print_json(const struct crosscheck_report *r, FILE *f);
/*
 * The report's key numbers, under the names the full JSON gives them, as
 * an object for a caller's own document (record --json): verdict, agree,
 * agree_physical, agree_no_osr, tvd, noise_floor, tvd_threshold, spearman,
 * top_isoprof, top_v8, same_top, v8_deopt_inflated, and each side's
 * js_samples as isoprof_js_samples and v8_js_samples.  The caller owns it
 * (json_object_put()); NULL on ENOMEM.
 */
struct json_object *crosscheck__key_json(const struct crosscheck_report *r);

double crosscheck_report__tvd(const struct crosscheck_report *r);
/* The noise floor: the 95th percentile of the TVD sampling alone gives. */
double crosscheck_report__noise_floor(const struct crosscheck_report *r);
/* NaN when undefined (fewer than 3 functions, or no spread in a side's ranks). */
double crosscheck_report__spearman(const struct crosscheck_report *r);
bool crosscheck_report__agree(const struct crosscheck_report *r);
/*
 * The same test with isoprof's inlined JS functions charged to the code
 * they were inlined into, which is what V8's profiler reports for code
 * optimized before it started (it records inlining positions only while
 * profiling).  tvd_physical, same_top_physical in the JSON.
 */
bool crosscheck_report__agree_physical(const struct crosscheck_report *r);
/*
 * The same again with, besides, isoprof's samples in on-stack-replacement
 * code charged to the caller's frame, which is what V8's profiler does
 * with OSR code compiled before it started (it never logged that code).
 * False when isoprof saw no OSR code.  tvd_no_osr, same_top_no_osr.
 */
bool crosscheck_report__agree_no_osr(const struct crosscheck_report *r);
/* "agree" or "disagree: <why>"; lives as long as the report. */
const char *crosscheck_report__verdict(const struct crosscheck_report *r);
/* The side's top JS function as "name (file)", or "name (file:line)" when anonymous. */
const char *crosscheck_report__top_function(const struct crosscheck_report *r,
					    enum crosscheck_side side);

/* Does the profile say it came from V8's profiler?  (v8_cpu_profile__converted()) */
bool crosscheck__is_v8_profile(const struct pprof_profile *p);

/*
 * Read a profile from memory: a .cpuprofile (JSON, first non-blank byte
 * '{'), converted to pprof, or a pprof profile (gzip or raw).  *is_v8 says
 * whether it is V8's (a .cpuprofile, or a pprof crosscheck__is_v8_profile()
 * accepts).  median_delta_ns, when non-NULL, gets the median of a
 * .cpuprofile's timeDeltas (0 otherwise).  0 or a negative errno with err
 * filled; the profile is the caller's (pprof_profile__free()).
 */
int crosscheck__load_buffer(const uint8_t *data, size_t len, struct pprof_profile **out,
			    bool *is_v8, int64_t *median_delta_ns, char *err, size_t errlen);
/* The same from a file (at most PPROF_MAX_DECOMPRESSED bytes). */
int crosscheck__load(const char *path, struct pprof_profile **out, bool *is_v8,
		     int64_t *median_delta_ns, char *err, size_t errlen);

#endif /* ISOPROF_V8_CROSSCHECK_H */
