/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * crosscheck_int: the report as crosscheck.c computes it and the text
 * (crosscheck_text.c) and JSON (crosscheck_json.c) reports print it.
 * Private to those three files; everyone else goes through crosscheck.h.
 */
#ifndef ISOPROF_V8_CROSSCHECK_INT_H
#define ISOPROF_V8_CROSSCHECK_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/index_table.h"
#include "proto/profile_vocab.h"
#include "user/v8/crosscheck.h"

#define NO_TID INT64_MIN

/*
 * Where a sample's time goes: isoprof's classes (profile_vocab.h), then
 * two of crosscheck's own: V8's "(program)", and anything else.
 */
enum cc_class {
	CC_JS = CLASS_JS,
	CC_BUILTIN = CLASS_V8_BUILTIN,
	CC_GC = CLASS_GC,
	CC_V8_RUNTIME = CLASS_V8_RUNTIME,
	CC_NATIVE = CLASS_RUNTIME_NATIVE,
	CC_KERNEL = CLASS_KERNEL,
	CC_IDLE = CLASS_IDLE,
	CC_PROGRAM = NR_SAMPLE_CLASSES,	/* CLASS_NAME_V8_PROGRAM */
	CC_OTHER,			/* another class label, or none */
	NR_CC,
};

/* "js" ... "idle" as profile_vocab.h spells them, "program", "other". */
static inline const char *cc_class__str(enum cc_class c)
{
	if (c < (enum cc_class)NR_SAMPLE_CLASSES)
		return sample_class__str((enum sample_class)c);
	return c == CC_PROGRAM ? CLASS_NAME_V8_PROGRAM : "other";
}

/*
 * Ways V8's profiler may charge a sample that isoprof charges by function:
 * with isoprof's inlined functions charged to the code they were inlined
 * into; and, besides, samples in OSR code charged to the caller.
 */
enum cc_view {
	VIEW_PHYSICAL,
	VIEW_NO_OSR,
	NR_VIEWS,
};

/*
 * What sampling alone does to the distance (crosscheck_noise.c): the TVD
 * between the two sides when their samples are pooled and dealt out again
 * at random at the sides' sizes (a permutation test of "one distribution").
 * NaN when a side has no samples.
 */
struct cc_noise {
	double floor;			/* its CC_NOISE_QUANTILE: above it, beyond noise */
	double median;
	double side_floor[2];		/* the same for one side's draw vs the pooled shares */
	size_t resamples;
};

#define CC_NOISE_RESAMPLES 400
#define CC_NOISE_QUANTILE 0.95
#define CC_NOISE_SEED 0x6e6f697365ULL	/* fixed: a pair of profiles gets one report */
#define CC_NOISE_MAX_POOL (4u << 20)	/* samples a shuffle holds (16 MiB) */

/*
 * The noise of counts[0][0..k) against counts[1][0..k) (function i's
 * samples on each side).  0 or -ENOMEM.
 */
int cc_noise__estimate(const uint64_t *const counts[2], size_t k, struct cc_noise *out);

/*
 * The same by a given way of dealing: shuffling the pooled samples (the
 * faster while the smaller side has up to 4 samples a function; -E2BIG
 * past CC_NOISE_MAX_POOL), or function by function (hypergeometric
 * draws, O(functions) a resample).  The two agree in distribution.
 */
enum cc_noise_method {
	CC_NOISE_AUTO,
	CC_NOISE_SHUFFLE,
	CC_NOISE_BY_FUNCTION,
};

int cc_noise__estimate_by(const uint64_t *const counts[2], size_t k, enum cc_noise_method how,
			  struct cc_noise *out);
/*
 * Is a function with a samples ahead of one with b on the same side beyond
 * noise?  A one-sided exact binomial test of a against a tie, at
 * CROSSCHECK_ALPHA.
 */
bool cc_noise__ahead(uint64_t a, uint64_t b);
/* The normal quantile for a two-sided CROSSCHECK_ALPHA interval, Bonferroni over m. */
double cc_noise__z(size_t m);
/*
 * An interval for share c0/n0 minus share c1/n1 (Agresti-Caffo, z from
 * cc_noise__z()), as fractions.
 */
void cc_noise__diff_interval(uint64_t c0, uint64_t n0, uint64_t c1, uint64_t n1, double z,
			     double *lo, double *hi);

struct cc_fn {
	char *name;
	char *file;		/* base name, "" when unknown */
	int64_t line;		/* start line, anonymous functions only */
	char *display;
	uint64_t count[2];
	uint64_t view[NR_VIEWS][2];	/* the counts charged as V8's profiler may */
	double share[2];
	size_t rank[2];		/* position on the side's list, from 1; 0 when absent */
	/* top-table rows only: share[0] - share[1]'s interval, and is 0 outside it */
	double diff_lo, diff_hi;
	bool significant;
};

struct cc_thread {
	char *name;
	size_t ntids;
	uint64_t samples, gc;
};

struct cc_side {
	char *name;			/* the input's name, "" when not given */
	uint64_t samples;		/* samples/count over kept samples */
	uint64_t pprof_samples;		/* pprof Sample messages */
	int64_t window_ns;
	int64_t period;
	char *period_type, *period_unit;
	int64_t main_tid;		/* NO_TID when the profile has no tid labels */
	char *main_thread;		/* its thread label, "" when none */
	uint64_t main_samples;
	double rate_hz;			/* main-thread samples per second of window; NaN */
	uint64_t js;			/* samples attributed to a JS function */
	uint64_t js_osr;		/* ... whose code is on-stack-replacement code */
	uint64_t js_no_osr;		/* JS samples with a JS frame outside OSR code */
	uint64_t js_unattributed;	/* class js / v8-builtin, no JS frame found */
	uint64_t cls_main[NR_CC], cls_all[NR_CC];
	uint64_t program_root_main;	/* main-thread samples rooted at "(program)" */
	uint64_t deopt_main;		/* main-thread samples in V8's deoptimizer */
	double ticks_ratio;		/* samples per tick of the nominal timer; NaN */
	size_t nisolates;
	int64_t median_delta_ns;	/* V8: median time between samples; 0 unknown */
	size_t *order;			/* functions with samples, by share */
	size_t norder;
	struct cc_thread *threads;	/* other threads, by samples */
	size_t nthreads;
};

struct crosscheck_report {
	struct cc_side side[2];
	struct cc_fn *fns;
	size_t nfns, fns_cap;
	struct index_table fn_tab;	/* (name, file, line) -> fns[] */
	size_t top;
	bool roles_guessed;
	double tvd;
	double tvd_physical;		/* with isoprof's inlining folded into callers */
	bool same_top, same_top_physical;
	const struct cc_fn *top_physical[2];
	double tvd_no_osr;		/* ... and OSR code charged to its caller */
	bool same_top_no_osr;
	const struct cc_fn *top_no_osr[2];
	struct cc_noise noise;		/* by function */
	struct cc_noise noise_view[NR_VIEWS];
	double threshold;		/* agree up to: noise.floor + CROSSCHECK_ALLOWANCE */
	bool top_beyond_noise;		/* the tops differ and both sides are sure of it */
	bool top_beyond_noise_view[NR_VIEWS];
	double rho;
	size_t rho_n;
	size_t *rank_set;		/* the functions rho is computed over */
	size_t *top_rows;		/* union of both top lists, by mean share */
	size_t ntop_rows;
	size_t *only[2];		/* seen by one side only, by share */
	size_t nonly[2];
	bool agree;
	bool v8_deopt_inflated;		/* V8's samples outnumber its timer's ticks */
	char *verdict;
	char **notes;
	size_t nnotes;
};

static const char *const side_names[2] = { "isoprof", "V8" };

#endif /* ISOPROF_V8_CROSSCHECK_INT_H */
