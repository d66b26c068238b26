// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crosscheck's report as one JSON object, written with json-c through
 * lib/json.h; names come from profiles, so they go in through json__text().
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "lib/json.h"
#include "user/v8/crosscheck_int.h"

/* NaN and infinities are not JSON: they become null (a NULL json_object). */
static int put_num(struct json_object *o, const char *key, double v)
{
	if (isnan(v) || isinf(v))
		return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
	return json__put(o, key, json_object_new_double(v));
}

static int put_str(struct json_object *o, const char *key, const char *s)
{
	return json__put(o, key, json__text(s));
}

static int put_u64(struct json_object *o, const char *key, uint64_t v)
{
	return json__put(o, key, json_object_new_uint64(v));
}

static int put_i64(struct json_object *o, const char *key, int64_t v)
{
	return json__put(o, key, json_object_new_int64(v));
}

static int put_bool(struct json_object *o, const char *key, bool v)
{
	return json__put(o, key, json_object_new_boolean(v));
}

/* An object built by fill, or NULL when any step of it failed. */
static struct json_object *built(struct json_object *o, int err)
{
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* A function with both sides' numbers, or only side's (0 or 1; -1: both). */
static struct json_object *json_fn(const struct cc_fn *fn, int side)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	err |= put_str(o, "function", fn->name);
	err |= put_str(o, "file", fn->file);
	if (fn->line)
		err |= put_i64(o, "start_line", fn->line);
	err |= put_str(o, "display", fn->display);
	for (int s = 0; s < 2; s++) {
		if (side >= 0 && s != side)
			continue;
		err |= put_num(o, s == 0 ? "isoprof_share" : "v8_share", fn->share[s]);
		err |= put_u64(o, s == 0 ? "isoprof_samples" : "v8_samples", fn->count[s]);
		if (fn->rank[s])
			err |= put_u64(o, s == 0 ? "isoprof_rank" : "v8_rank", fn->rank[s]);
	}
	return built(o, err);
}

/* A top-table row: the difference in share, its interval, and whether it is beyond noise. */
static struct json_object *json_row(const struct cc_fn *fn)
{
	struct json_object *o = json_fn(fn, -1), *ci;
	int err;

	if (!o)
		return NULL;
	err = put_num(o, "diff_pp", 100.0 * (fn->share[0] - fn->share[1]));
	ci = json_object_new_array();
	err |= json__put(o, "diff_pp_interval", ci);
	if (!err) {
		err |= json__append(ci, json_object_new_double(100.0 * fn->diff_lo));
		err |= json__append(ci, json_object_new_double(100.0 * fn->diff_hi));
	}
	err |= put_bool(o, "significant", fn->significant);
	return built(o, err);
}

static int put_rows(struct json_object *o, const struct crosscheck_report *r)
{
	struct json_object *a = json_object_new_array();
	int err = json__put(o, "functions", a);

	for (size_t i = 0; !err && i < r->ntop_rows; i++)
		err = json__append(a, json_row(&r->fns[r->top_rows[i]]));
	return err;
}

/* The noise of one comparison: its floor, median and each side's own. */
static struct json_object *json_noise(const struct cc_noise *n)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	err |= put_num(o, "floor", n->floor);
	err |= put_num(o, "median", n->median);
	err |= put_num(o, "isoprof_floor", n->side_floor[0]);
	err |= put_num(o, "v8_floor", n->side_floor[1]);
	err |= put_u64(o, "resamples", n->resamples);
	return built(o, err);
}

static struct json_object *json_classes(const uint64_t *cls, uint64_t total)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	for (int c = 0; c < NR_CC; c++)
		err |= put_num(o, cc_class__str(c), total ? (double)cls[c] / (double)total : NAN);
	return built(o, err);
}

/* A list of functions (indexes into r->fns) under key. */
static int put_fns(struct json_object *o, const char *key, const struct crosscheck_report *r,
		   const size_t *fns, size_t n, int side)
{
	struct json_object *a = json_object_new_array();
	int err = json__put(o, key, a);

	for (size_t i = 0; !err && i < n; i++)
		err = json__append(a, json_fn(&r->fns[fns[i]], side));
	return err;
}

static int put_threads(struct json_object *o, const struct cc_side *sd)
{
	struct json_object *a = json_object_new_array();
	int err = json__put(o, "other_threads", a);

	for (size_t i = 0; !err && i < sd->nthreads; i++) {
		const struct cc_thread *t = &sd->threads[i];
		struct json_object *th = json_object_new_object();

		err |= put_str(th, "thread", t->name);
		err |= put_u64(th, "tids", t->ntids);
		err |= put_u64(th, "samples", t->samples);
		err |= put_num(th, "share",
			       sd->samples ? (double)t->samples / (double)sd->samples : NAN);
		err |= put_num(th, "gc_share",
			       t->samples ? (double)t->gc / (double)t->samples : NAN);
		err |= json__append(a, built(th, err));
	}
	return err;
}

/* The side's numbers: samples, window, rate, threads, classes. */
static int put_side_numbers(struct json_object *o, const struct cc_side *sd)
{
	int err = 0;

	err |= put_str(o, "file", sd->name);
	err |= put_u64(o, "samples", sd->samples);
	err |= put_u64(o, "pprof_samples", sd->pprof_samples);
	err |= put_i64(o, "window_ns", sd->window_ns);
	err |= put_i64(o, "period", sd->period);
	err |= put_str(o, "period_type", sd->period_type);
	err |= put_str(o, "period_unit", sd->period_unit);
	err |= put_num(o, "rate_hz", sd->rate_hz);
	if (sd->main_tid != NO_TID)
		err |= put_i64(o, "main_tid", sd->main_tid);
	err |= put_str(o, "main_thread", sd->main_thread);
	err |= put_u64(o, "main_thread_samples", sd->main_samples);
	err |= put_u64(o, "js_samples", sd->js);
	err |= put_u64(o, "js_unattributed_samples", sd->js_unattributed);
	err |= put_u64(o, "isolates", sd->nisolates);
	err |= put_num(o, "samples_per_timer_tick", sd->ticks_ratio);
	err |= put_u64(o, "deoptimizer_samples_main_thread", sd->deopt_main);
	if (sd->median_delta_ns > 0)
		err |= put_i64(o, "median_interval_ns", sd->median_delta_ns);
	err |= json__put(o, "class_shares_main_thread",
			 json_classes(sd->cls_main, sd->main_samples));
	err |= json__put(o, "class_shares", json_classes(sd->cls_all, sd->samples));
	err |= put_num(o, "program_root_share_main_thread",
		       sd->main_samples ? (double)sd->program_root_main / (double)sd->main_samples
					: NAN);
	return err;
}

static struct json_object *json_side(const struct crosscheck_report *r, int side)
{
	const struct cc_side *sd = &r->side[side];
	struct json_object *o = json_object_new_object();
	int err;

	err = put_side_numbers(o, sd);
	err |= put_fns(o, "top", r, sd->order, sd->norder < r->top ? sd->norder : r->top, -1);
	err |= put_fns(o, "only_here", r, r->only[side], r->nonly[side], side);
	if (side == CROSSCHECK_ISOPROF)
		err |= put_threads(o, sd);
	return built(o, err);
}

/* The same test under another way of charging samples (enum cc_view). */
static int put_view(struct json_object *o, const char *name, double tvd,
		    const struct cc_noise *noise, const struct cc_fn *const top[2], bool same_top,
		    bool agree)
{
	char key[40];
	int err = 0;

	snprintf(key, sizeof(key), "tvd_%s", name);
	err |= put_num(o, key, tvd);
	snprintf(key, sizeof(key), "noise_floor_%s", name);
	err |= put_num(o, key, noise->floor);
	snprintf(key, sizeof(key), "top_%s_isoprof", name);
	err |= put_str(o, key, top[0] ? top[0]->display : "");
	snprintf(key, sizeof(key), "top_%s_v8", name);
	err |= put_str(o, key, top[1] ? top[1]->display : "");
	snprintf(key, sizeof(key), "same_top_%s", name);
	err |= put_bool(o, key, same_top);
	snprintf(key, sizeof(key), "agree_%s", name);
	err |= put_bool(o, key, agree);
	return err;
}

static int put_notes(struct json_object *o, const struct crosscheck_report *r)
{
	struct json_object *a = json_object_new_array();
	int err = json__put(o, "notes", a);

	for (size_t i = 0; !err && i < r->nnotes; i++)
		err = json__append(a, json__text(r->notes[i]));
	return err;
}

static struct json_object *json_report(const struct crosscheck_report *r)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	err |= json__put(o, "isoprof", json_side(r, 0));
	err |= json__put(o, "v8", json_side(r, 1));
	err |= put_num(o, "tvd", r->tvd);
	err |= put_num(o, "spearman", r->rho);
	err |= put_u64(o, "spearman_n", r->rho_n);
	err |= put_num(o, "noise_floor", r->noise.floor);
	err |= put_num(o, "tvd_threshold", r->threshold);
	err |= put_num(o, "systematic_allowance", CROSSCHECK_ALLOWANCE);
	err |= json__put(o, "noise", json_noise(&r->noise));
	err |= put_rows(o, r);
	err |= put_str(o, "top_isoprof", crosscheck_report__top_function(r, 0));
	err |= put_str(o, "top_v8", crosscheck_report__top_function(r, 1));
	err |= put_bool(o, "same_top", r->side[0].order[0] == r->side[1].order[0]);
	err |= put_bool(o, "top_differs_beyond_noise", r->top_beyond_noise);
	err |= put_bool(o, "agree", r->agree);
	err |= put_view(o, "physical", r->tvd_physical, &r->noise_view[VIEW_PHYSICAL],
			r->top_physical, r->same_top_physical,
			crosscheck_report__agree_physical(r));
	err |= put_view(o, "no_osr", r->tvd_no_osr, &r->noise_view[VIEW_NO_OSR], r->top_no_osr,
			r->same_top_no_osr, crosscheck_report__agree_no_osr(r));
	err |= put_bool(o, "v8_deopt_inflated", r->v8_deopt_inflated);
	err |= put_str(o, "verdict", r->verdict);
	err |= put_bool(o, "roles_guessed", r->roles_guessed);
	err |= put_notes(o, r);
	return built(o, err);
}

int crosscheck__print_json(const struct crosscheck_report *r, FILE *f)
{
	struct json_object *o = json_report(r);
	int err;

	if (!o)
		return -ENOMEM;
	err = json__write(f, o, true);
	json_object_put(o);
	return err == -ENOMEM ? err : err ? -EIO : 0;
}

struct json_object *crosscheck__key_json(const struct crosscheck_report *r)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= put_str(o, "verdict", r->verdict);
	err |= put_bool(o, "agree", r->agree);
	err |= put_bool(o, "agree_physical", crosscheck_report__agree_physical(r));
	err |= put_bool(o, "agree_no_osr", crosscheck_report__agree_no_osr(r));
	err |= put_num(o, "tvd", r->tvd);
	err |= put_num(o, "noise_floor", r->noise.floor);
	err |= put_num(o, "tvd_threshold", r->threshold);
	err |= put_num(o, "spearman", r->rho);
	err |= put_str(o, "top_isoprof", crosscheck_report__top_function(r, CROSSCHECK_ISOPROF));
	err |= put_str(o, "top_v8", crosscheck_report__top_function(r, CROSSCHECK_V8));
	err |= put_bool(o, "same_top", r->side[0].order[0] == r->side[1].order[0]);
	err |= put_bool(o, "v8_deopt_inflated", r->v8_deopt_inflated);
	err |= put_u64(o, "isoprof_js_samples", r->side[CROSSCHECK_ISOPROF].js);
	err |= put_u64(o, "v8_js_samples", r->side[CROSSCHECK_V8].js);
	return built(o, err);
}
