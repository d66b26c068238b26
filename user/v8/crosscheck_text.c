// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* crosscheck's report as aligned text for a person; see crosscheck.h. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "user/v8/crosscheck_int.h"

static const char *pct(char *buf, size_t len, uint64_t part, uint64_t whole)
{
	if (!whole)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", 100.0 * (double)part / (double)whole);
	return buf;
}

static const char *share_str(char *buf, size_t len, double share)
{
	snprintf(buf, len, "%.1f%%", 100.0 * share);
	return buf;
}

static const char *thread_str(char *buf, size_t len, const struct cc_side *sd)
{
	if (sd->main_tid == NO_TID)
		snprintf(buf, len, "%" PRIu64, sd->main_samples);
	else
		snprintf(buf, len, "%" PRIu64 " (tid %" PRId64 "%s%s)", sd->main_samples,
			 sd->main_tid, *sd->main_thread ? " " : "", sd->main_thread);
	return buf;
}

static const char *window_str(char *buf, size_t len, const struct cc_side *sd)
{
	if (sd->window_ns > 0)
		snprintf(buf, len, "%.3f s", (double)sd->window_ns / 1e9);
	else
		snprintf(buf, len, "-");
	return buf;
}

static const char *period_str(char *buf, size_t len, const struct cc_side *sd)
{
	if (sd->period <= 0)
		snprintf(buf, len, "-");
	else if (!strcmp(sd->period_unit, "nanoseconds"))
		snprintf(buf, len, "%.3f ms (%.0f Hz)", (double)sd->period / 1e6,
			 1e9 / (double)sd->period);
	else
		snprintf(buf, len, "%" PRId64 " %s", sd->period, sd->period_unit);
	return buf;
}

static const char *rate_str(char *buf, size_t len, const struct cc_side *sd)
{
	if (isnan(sd->rate_hz))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f Hz", sd->rate_hz);
	return buf;
}

/* Heap profiles on both sides: their period is bytes, not time. */
static bool heap_report(const struct crosscheck_report *r)
{
	return r->side[0].period_unit && !strcmp(r->side[0].period_unit, "bytes");
}

static void row(FILE *f, const char *what, const char *a, const char *b)
{
	fprintf(f, "  %-24s %-30s %s\n", what, a, b);
}

static void print_sides(const struct crosscheck_report *r, FILE *f)
{
	const struct cc_side *a = &r->side[0], *b = &r->side[1];
	char x[128], y[128], p1[32], p2[32];

	row(f, "", "isoprof", "V8");
	snprintf(x, sizeof(x), "%" PRIu64, a->samples);
	snprintf(y, sizeof(y), "%" PRIu64, b->samples);
	row(f, "samples", x, y);
	row(f, "on the isolate's thread", thread_str(x, sizeof(x), a), thread_str(y, sizeof(y), b));
	row(f, "window", window_str(x, sizeof(x), a), window_str(y, sizeof(y), b));
	row(f, "period", period_str(x, sizeof(x), a), period_str(y, sizeof(y), b));
	if (!heap_report(r))
		row(f, "effective rate", rate_str(x, sizeof(x), a), rate_str(y, sizeof(y), b));
	if (b->median_delta_ns > 0) {
		snprintf(y, sizeof(y), "%.3f ms", (double)b->median_delta_ns / 1e6);
		row(f, "median sample interval", "-", y);
	}
	snprintf(x, sizeof(x), "%" PRIu64 " (%s)", a->js, pct(p1, sizeof(p1), a->js, a->samples));
	snprintf(y, sizeof(y), "%" PRIu64 " (%s)", b->js, pct(p2, sizeof(p2), b->js, b->samples));
	row(f, "JS samples", x, y);
	if (a->js_unattributed || b->js_unattributed) {
		snprintf(x, sizeof(x), "%" PRIu64, a->js_unattributed);
		snprintf(y, sizeof(y), "%" PRIu64, b->js_unattributed);
		row(f, "JS class, no JS frame", x, y);
	}
}

static void rank_str(char *buf, size_t len, const struct cc_fn *fn, int side)
{
	if (fn->rank[side])
		snprintf(buf, len, "%5.1f%% %3zu", 100.0 * fn->share[side], fn->rank[side]);
	else
		snprintf(buf, len, "%6s %3s", "-", "-");
}

/* Percentage points to one decimal, without the "-0.0" of a value that rounds away. */
static double pp(double share)
{
	double v = 100.0 * share;

	return fabs(v) < 0.05 ? 0.0 : v;
}

static void print_top(const struct crosscheck_report *r, FILE *f)
{
	char a[32], b[32], ci[48];

	fprintf(f, "\nTop %zu JS functions by self share on either side (share of JS samples, "
		"rank;\ndifference in percentage points, its 95%% interval over the %zu rows, "
		"* beyond noise)\n", r->top, r->ntop_rows);
	fprintf(f, "  %-10s  %-10s  %7s %-15s %s\n", "isoprof", "V8", "diff", "interval",
		"function");
	for (size_t i = 0; i < r->ntop_rows; i++) {
		const struct cc_fn *fn = &r->fns[r->top_rows[i]];

		rank_str(a, sizeof(a), fn, 0);
		rank_str(b, sizeof(b), fn, 1);
		snprintf(ci, sizeof(ci), "[%+.1f, %+.1f]", pp(fn->diff_lo), pp(fn->diff_hi));
		fprintf(f, "  %-10s  %-10s  %+6.1f%c %-15s %s\n", a, b,
			pp(fn->share[0] - fn->share[1]), fn->significant ? '*' : ' ', ci,
			fn->display);
	}
}

static void print_noise(const struct crosscheck_report *r, FILE *f)
{
	const struct cc_noise *n = &r->noise;
	uint64_t a = r->side[0].js, b = r->side[1].js;

	fprintf(f, "Noise floor: TVD %.3f (95th percentile of the TVD over %zu random splits of the "
		"%" PRIu64 " pooled\n  JS samples into %" PRIu64 " and %" PRIu64 "; median %.3f); "
		"agree up to %.3f (floor + %.2f)\n", n->floor, n->resamples, a + b, a, b, n->median,
		r->threshold, CROSSCHECK_ALLOWANCE);
}

static void print_only(const struct crosscheck_report *r, FILE *f)
{
	char s[32];

	for (int side = 0; side < 2; side++) {
		fprintf(f, "\nSeen by %s only (>= %.1f%% there, none on the other side):%s\n",
			side_names[side], 100 * CROSSCHECK_ONLY_SHARE,
			r->nonly[side] ? "" : " none");
		for (size_t i = 0; i < r->nonly[side]; i++) {
			const struct cc_fn *fn = &r->fns[r->only[side][i]];

			fprintf(f, "  %7s  %s\n", share_str(s, sizeof(s), fn->share[side]),
				fn->display);
		}
	}
}

static void print_classes(const struct crosscheck_report *r, FILE *f)
{
	static const enum cc_class rows[] = {
		CC_JS, CC_BUILTIN, CC_GC, CC_V8_RUNTIME, CC_NATIVE, CC_KERNEL, CC_IDLE,
	};
	const struct cc_side *a = &r->side[0], *b = &r->side[1];
	char x[32], y[32], z[32];

	fprintf(f, "\nWhere the time goes (share of each side's samples)\n");
	fprintf(f, "  %-26s %14s %12s %8s\n", "class", "isoprof thread", "isoprof all",
		"V8");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		enum cc_class c = rows[i];

		fprintf(f, "  %-26s %14s %12s %8s\n", cc_class__str(c),
			pct(x, sizeof(x), a->cls_main[c], a->main_samples),
			pct(y, sizeof(y), a->cls_all[c], a->samples),
			pct(z, sizeof(z), b->cls_all[c], b->samples));
	}
	if (a->cls_all[CC_OTHER] || b->cls_all[CC_OTHER])
		fprintf(f, "  %-26s %14s %12s %8s\n", "other / unlabelled",
			pct(x, sizeof(x), a->cls_main[CC_OTHER], a->main_samples),
			pct(y, sizeof(y), a->cls_all[CC_OTHER], a->samples),
			pct(z, sizeof(z), b->cls_all[CC_OTHER], b->samples));
	fprintf(f, "  %-26s %14s %12s %8s\n", "rooted at " FRAME_NAME_PROGRAM,
		pct(x, sizeof(x), a->program_root_main, a->main_samples), "",
		pct(z, sizeof(z), b->program_root_main, b->main_samples));
	fprintf(f, "  (V8 calls gc \"" FRAME_NAME_GC "\" and idle \"" FRAME_NAME_IDLE "\"; its \""
		FRAME_NAME_PROGRAM "\" "
		"is time\n   outside JS, which isoprof splits into builtin, runtime, native and "
		"kernel)\n");
}

static void print_threads(const struct crosscheck_report *r, FILE *f)
{
	const struct cc_side *a = &r->side[0];
	char x[32], y[32];

	fprintf(f, "\nisoprof samples on other threads than the isolate's:%s\n",
		a->nthreads ? "" : " none");
	if (!a->nthreads)
		return;
	fprintf(f, "  %-24s %6s %9s %8s %8s\n", "thread", "tids", "samples", "share", "gc");
	for (size_t i = 0; i < a->nthreads; i++) {
		const struct cc_thread *t = &a->threads[i];

		fprintf(f, "  %-24s %6zu %9" PRIu64 " %8s %8s\n", *t->name ? t->name : "?",
			t->ntids, t->samples, pct(x, sizeof(x), t->samples, a->samples),
			pct(y, sizeof(y), t->gc, t->samples));
	}
}

int crosscheck__print_text(const struct crosscheck_report *r, FILE *f)
{
	char rho[32];

	if (heap_report(r))
		fprintf(f, "isoprof crosscheck: isoprof's heap profile vs V8's sampling heap "
			   "profiler (samples: bytes allocated, in sampling intervals)\n");
	else
		fprintf(f, "isoprof crosscheck: isoprof's profile vs V8's CPU profiler\n");
	for (int side = 0; side < 2; side++)
		if (*r->side[side].name)
			fprintf(f, "  %-8s %s\n", side == 0 ? "isoprof:" : "V8:",
				r->side[side].name);
	for (size_t i = 0; i < r->nnotes; i++)
		fprintf(f, "  note: %s\n", r->notes[i]);
	fputc('\n', f);
	print_sides(r, f);
	print_top(r, f);
	if (isnan(r->rho))
		snprintf(rho, sizeof(rho), "n/a");
	else
		snprintf(rho, sizeof(rho), "%.3f", r->rho);
	fprintf(f, "\nTotal variation distance over JS self shares: %.3f "
		"(0 = same, 1 = disjoint)\n", r->tvd);
	print_noise(r, f);
	if (fabs(r->tvd_physical - r->tvd) >= 0.0005 ||
	    r->same_top_physical != r->same_top)
		fprintf(f, "  ... with isoprof's inlined functions charged to their caller: %.3f, "
			"top %s vs %s\n", r->tvd_physical,
			r->top_physical[0] ? r->top_physical[0]->display : "-",
			r->top_physical[1] ? r->top_physical[1]->display : "-");
	if (r->side[CROSSCHECK_ISOPROF].js_osr && !isnan(r->tvd_no_osr))
		fprintf(f, "  ... and with isoprof's samples in OSR code charged to the caller: %.3f, "
			"top %s vs %s\n", r->tvd_no_osr,
			r->top_no_osr[0] ? r->top_no_osr[0]->display : "-",
			r->top_no_osr[1] ? r->top_no_osr[1]->display : "-");
	fprintf(f, "Spearman rank correlation over the top %zu by mean share: %s\n", r->rho_n,
		rho);
	print_only(r, f);
	print_classes(r, f);
	print_threads(r, f);
	fprintf(f, "\nVerdict: %s\n", r->verdict);
	return ferror(f) ? -EIO : 0;
}

