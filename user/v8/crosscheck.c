// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * crosscheck: the comparison itself (crosscheck.h has the rules); the
 * reports are crosscheck_text.c and crosscheck_json.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/cpuprofile.h"
#include "proto/profile_file.h"
#include "user/attribute/frames.h"
#include "user/v8/crosscheck_int.h"

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static int add_note(struct crosscheck_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_note(struct crosscheck_report *r, const char *fmt, ...)
{
	char **notes = realloc(r->notes, (r->nnotes + 1) * sizeof(*notes));
	va_list ap;
	int n;

	if (!notes)
		return -ENOMEM;
	r->notes = notes;
	va_start(ap, fmt);
	n = vasprintf(&notes[r->nnotes], fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	r->nnotes++;
	return 0;
}

/* ---- Classifying frames and samples -------------------------------------- */

/* Perf map tags of JS code (v8name.h): these frames are functions even without a script. */
static const char *const js_tags[] = {
	"JS:", "LazyCompile:", "Function:", "InterpretedFunction:", "Script:", "Eval:",
};

static bool has_js_tag(const char *s)
{
	for (size_t i = 0; i < sizeof(js_tags) / sizeof(js_tags[0]); i++)
		if (starts_with(s, js_tags[i]))
			return true;
	return false;
}

/*
 * V8 code that is not a JS function: embedded builtins as ELF symbols
 * (Builtins_*), or anything the perf map names with a tag other than a JS
 * one (Builtin:, BytecodeHandler:, Stub:, Handler:, the IC tags, RegExp).
 * Tags are CamelCase words and one colon, which keeps C++ names
 * ("v8::internal::...", "node::...") out.
 */
static bool is_v8_stub(const struct pprof_frame *f)
{
	const char *s = *f->system_name ? f->system_name : f->name;
	const char *p = s;

	if (starts_with(s, "Builtins_") || starts_with(s, "RegExp"))
		return true;
	if (*s < 'A' || *s > 'Z')
		return false;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
		p++;
	return *p == ':' && p[1] != ':' && !has_js_tag(s);
}

static bool is_js_frame(const struct pprof_frame *f)
{
	return *f->filename || has_js_tag(f->system_name);
}

/*
 * An inlined frame without a script: JS when the location's outermost
 * frame (the code the sample is in) is JS, since only JIT code inlines
 * here.
 */
static bool inlined_into_js(const struct pprof_stack *st, size_t i)
{
	const struct pprof_frame *f = st->frames[i];
	size_t j = i;

	if (!f->inlined)
		return false;
	while (j + 1 < st->n && st->frames[j + 1]->location == f->location)
		j++;
	return j != i && is_js_frame(st->frames[j]);
}

/*
 * The first JS frame above frame i (from the leaf when i is -1), past V8
 * stubs; -1 when a native frame comes first.
 */
static ssize_t js_frame_above(const struct pprof_stack *st, ssize_t i)
{
	for (size_t k = (size_t)(i + 1); k < st->n; k++) {
		if (is_js_frame(st->frames[k]) || inlined_into_js(st, k))
			return (ssize_t)k;
		if (!is_v8_stub(st->frames[k]))
			return -1;
	}
	return -1;
}

/* The frame a sample's self time goes to, or -1 when it is no JS sample. */
static ssize_t js_frame(const struct pprof_stack *st)
{
	return js_frame_above(st, -1);
}

/* The class a label names: isoprof's, V8's "program", else other. */
static enum cc_class class_named(const char *cls)
{
	enum sample_class c;

	if (sample_class__parse(cls, &c))
		return (enum cc_class)c;
	return strcmp(cls, CLASS_NAME_V8_PROGRAM) ? CC_OTHER : CC_PROGRAM;
}

static enum cc_class class_of(const struct pprof_profile *p, size_t s, const struct pprof_stack *st)
{
	const char *cls = pprof_profile__label(p, s, LABEL_CLASS);
	const char *root;

	if (cls)
		return class_named(cls);
	/* A profile from elsewhere: what its frames say, V8's way. */
	if (!st->n)
		return CC_OTHER;
	root = st->frames[st->n - 1]->name;
	if (!strcmp(root, FRAME_NAME_GC))
		return CC_GC;
	if (!strcmp(root, FRAME_NAME_IDLE))
		return CC_IDLE;
	if (!strcmp(root, FRAME_NAME_PROGRAM))
		return CC_PROGRAM;
	if (is_js_frame(st->frames[0]))
		return CC_JS;
	return CC_OTHER;
}

/* ---- Functions ------------------------------------------------------------ */

static const char *base_name(const char *file)
{
	const char *slash;

	if (starts_with(file, "file://"))
		file += strlen("file://");
	slash = strrchr(file, '/');
	return slash ? slash + 1 : file;
}

static char *make_display(const char *name, const char *file, int64_t line)
{
	char *s = NULL;
	int n;

	if (*file && line)
		n = asprintf(&s, "%s (%s:%" PRId64 ")", name, file, line);
	else if (*file)
		n = asprintf(&s, "%s (%s)", name, file);
	else if (line)
		n = asprintf(&s, "%s (:%" PRId64 ")", name, line);
	else
		n = asprintf(&s, "%s", name);
	return n < 0 ? NULL : s;
}

struct fn_key {
	const char *name, *file;
	int64_t line;
};

static bool fn_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct cc_fn *fn = &((const struct crosscheck_report *)ctx)->fns[idx];
	const struct fn_key *k = key;

	return fn->line == k->line && !strcmp(fn->name, k->name) && !strcmp(fn->file, k->file);
}

static int fn_new(struct crosscheck_report *r, const struct fn_key *k)
{
	struct cc_fn *fn;

	if (array_grow(&r->fns, &r->fns_cap, r->nfns + 1))
		return -ENOMEM;
	fn = &r->fns[r->nfns];
	memset(fn, 0, sizeof(*fn));
	fn->line = k->line;
	fn->name = strdup(k->name);
	fn->file = strdup(k->file);
	fn->display = fn->name && fn->file ? make_display(k->name, k->file, k->line) : NULL;
	if (!fn->name || !fn->file || !fn->display) {
		free(fn->name);
		free(fn->file);
		free(fn->display);
		return -ENOMEM;
	}
	r->nfns++;
	return 0;
}

/* Index of the function a JS frame is, created on first sight; negative errno. */
static ssize_t fn_of(struct crosscheck_report *r, const struct pprof_frame *f)
{
	const char *name = *f->name ? f->name : FRAME_NAME_ANONYMOUS;
	struct fn_key k = { name, base_name(f->filename),
			    strcmp(name, FRAME_NAME_ANONYMOUS) ? 0 : f->start_line };
	uint32_t hash;
	size_t slot;
	long idx;

	hash = hash__fold32(hash__word(hash__field(hash__field(HASH_SEED, k.name), k.file),
				       (uint64_t)k.line));
	if (index_table__reserve(&r->fn_tab))
		return -ENOMEM;
	idx = index_table__lookup(&r->fn_tab, hash, fn_eq, r, &k, &slot);
	if (idx >= 0)
		return idx;
	if (r->nfns >= UINT32_MAX || fn_new(r, &k))
		return -ENOMEM;
	index_table__set(&r->fn_tab, slot, hash, (uint32_t)(r->nfns - 1));
	return (ssize_t)(r->nfns - 1);
}

/* ---- Threads -------------------------------------------------------------- */

struct tid_ent {
	int64_t tid;
	const char *name;	/* borrowed from the profile */
	uint64_t samples, isolate, js, gc;
};

struct tid_map {
	struct tid_ent *ents;
	size_t n, cap;
	struct index_table tab;		/* tid -> ents[] */
};

static bool tid_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct tid_map *)ctx)->ents[idx].tid == *(const int64_t *)key;
}

/* The entry of tid, created (named name) on first sight; NULL on ENOMEM. */
static struct tid_ent *tid_map__get(struct tid_map *m, int64_t tid, const char *name)
{
	uint32_t hash = hash__fold32(hash__mix64((uint64_t)tid));
	size_t slot;
	long idx;

	if (index_table__reserve(&m->tab))
		return NULL;
	idx = index_table__lookup(&m->tab, hash, tid_eq, m, &tid, &slot);
	if (idx >= 0)
		return &m->ents[idx];
	if (m->n >= UINT32_MAX || array_grow(&m->ents, &m->cap, m->n + 1))
		return NULL;
	m->ents[m->n] = (struct tid_ent){ .tid = tid, .name = name ? name : "" };
	index_table__set(&m->tab, slot, hash, (uint32_t)m->n);
	return &m->ents[m->n++];
}

static void tid_map__release(struct tid_map *m)
{
	free(m->ents);
	index_table__release(&m->tab);
}

static int cmp_tid_name(const void *a, const void *b)
{
	const struct tid_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_thread(const void *a, const void *b)
{
	const struct cc_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Group the threads other than the main one by name. */
static int group_threads(struct cc_side *sd, struct tid_map *m)
{
	size_t n = 0;

	qsort(m->ents, m->n, sizeof(*m->ents), cmp_tid_name);
	index_table__clear(&m->tab);	/* the order changed: the table is stale */
	sd->threads = calloc(m->n ? m->n : 1, sizeof(*sd->threads));
	if (!sd->threads)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++) {
		const struct tid_ent *e = &m->ents[i];
		struct cc_thread *t;

		if (e->tid == sd->main_tid || !e->samples)
			continue;
		if (!n || strcmp(sd->threads[n - 1].name, e->name)) {
			sd->threads[n].name = strdup(e->name);
			if (!sd->threads[n].name)
				return -ENOMEM;
			n++;
			sd->nthreads = n;
		}
		t = &sd->threads[n - 1];
		t->ntids++;
		t->samples += e->samples;
		t->gc += e->gc;
	}
	qsort(sd->threads, n, sizeof(*sd->threads), cmp_thread);
	return 0;
}

/* ---- One side ------------------------------------------------------------- */

struct side_ctx {
	const struct pprof_profile *p;
	const char *isolate;		/* filter, or NULL */
	int si;				/* the samples/count type, or -1 */
	double per;			/* value_type: what one weighs (the period); else 1 */
	struct pprof_stack st;
	ssize_t *frame_fn;		/* frame id -> fn index + 1, 0 unknown, -1 no JS */
};

static uint64_t weight_of(const struct side_ctx *c, size_t s)
{
	int64_t v;

	if (c->si < 0)
		return 1;
	v = pprof_profile__value(c->p, s, (size_t)c->si);
	if (c->per != 1.0)
		return v > 0 ? (uint64_t)llround(v / c->per) : 0;
	return v > 0 ? (uint64_t)v : 0;
}

static bool kept(const struct side_ctx *c, size_t s)
{
	const char *iso;

	if (!c->isolate)
		return true;
	iso = pprof_profile__label(c->p, s, LABEL_ISOLATE);
	return !iso || !strcmp(iso, c->isolate);
}

static int64_t tid_of(const struct pprof_profile *p, size_t s)
{
	int64_t tid;

	return pprof_profile__num_label(p, s, LABEL_TID, &tid) ? tid : NO_TID;
}

static int samples_index(const struct pprof_profile *p, const char *type)
{
	for (size_t i = 0; i < pprof_profile__sample_type_count(p); i++)
		if (!strcmp(pprof_profile__sample_type(p, i, NULL), type ? type : SAMPLE_TYPE_SAMPLES))
			return (int)i;
	return -1;
}

/* value_type's weight unit: the profile's period, when it is one. */
static double value_unit(const struct pprof_profile *p, const char *type)
{
	const Perftools__Profiles__Profile *pb = pprof_profile__proto(p);

	if (!type || !pb || pb->period <= 0)
		return 1.0;
	return (double)pb->period;
}

static int count_isolates(struct crosscheck_report *r, struct side_ctx *c, struct cc_side *sd)
{
	const char **seen = NULL;
	size_t n = 0, cap = 0;

	for (size_t s = 0; s < pprof_profile__sample_count(c->p); s++) {
		const char *iso = pprof_profile__label(c->p, s, LABEL_ISOLATE);
		size_t i;

		if (!iso || !kept(c, s))
			continue;
		/* A handful of isolates per process: a linear scan is enough, and capped. */
		for (i = 0; i < n && strcmp(seen[i], iso); i++)
			;
		if (i < n || n == 64)
			continue;
		if (n == cap) {
			const char **g = realloc(seen, (cap ? cap * 2 : 8) * sizeof(*g));

			if (!g) {
				free(seen);
				return -ENOMEM;
			}
			seen = g;
			cap = cap ? cap * 2 : 8;
		}
		seen[n++] = iso;
	}
	free(seen);
	sd->nisolates = n;
	if (n > 1 && !c->isolate)
		return add_note(r, "the %s profile holds %s%zu isolates and V8's profile one: "
				"pick one with --isolate", side_names[sd - r->side],
				n == 64 ? "at least " : "", n);
	return 0;
}

/* The isolate's thread: most samples in an isolate, else most JS, else most samples. */
static const struct tid_ent *main_thread(const struct tid_map *m)
{
	const struct tid_ent *best = NULL;

	for (size_t i = 0; i < m->n; i++) {
		const struct tid_ent *e = &m->ents[i];

		if (!best || e->isolate > best->isolate ||
		    (e->isolate == best->isolate &&
		     (e->js > best->js || (e->js == best->js && e->samples > best->samples))))
			best = e;
	}
	return best;
}

/* V8's perf map marks OSR code "o+" (Maglev) or "o*" (TurboFan) after the tag. */
static bool is_osr_code(const struct pprof_frame *f)
{
	const char *colon = strchr(f->system_name, ':');

	return colon && colon[1] == 'o' && (colon[2] == '+' || colon[2] == '*');
}

/*
 * Is the thread in V8's deoptimizer?  The deoptimization entry builtins
 * and the C++ Deoptimizer they call; a deopt loop shows as a steady share.
 */
static bool in_deoptimizer(const struct pprof_stack *st)
{
	for (size_t i = 0; i < st->n; i++) {
		const char *name = st->frames[i]->name;

		if (frames__is_deoptimizer(name))
			return true;
	}
	return false;
}

/* The function of stack frame i, as an index into r->fns, or a negative errno. */
static ssize_t frame_fn(struct crosscheck_report *r, struct side_ctx *c, ssize_t i)
{
	ssize_t fn = c->frame_fn[c->st.frames[i]->id];

	if (!fn) {
		fn = fn_of(r, c->st.frames[i]);
		if (fn < 0)
			return fn;
		c->frame_fn[c->st.frames[i]->id] = ++fn;
	}
	return fn - 1;
}

/* The outermost frame of frame i's location: the function whose code runs. */
static ssize_t physical_frame(const struct pprof_stack *st, ssize_t i)
{
	while (st->frames[i]->inlined && (size_t)i + 1 < st->n &&
	       st->frames[i + 1]->location == st->frames[i]->location)
		i++;
	return i;
}

static int attribute(struct crosscheck_report *r, struct side_ctx *c, struct cc_side *sd,
		     int side, enum cc_class cls, uint64_t w)
{
	ssize_t i, fn;

	if (cls != CC_JS && cls != CC_BUILTIN)
		return 0;
	i = js_frame(&c->st);
	if (i < 0) {
		sd->js_unattributed += w;
		return 0;
	}
	fn = frame_fn(r, c, i);
	if (fn < 0)
		return (int)fn;
	r->fns[fn].count[side] += w;
	sd->js += w;
	/*
	 * The same sample as V8's profiler sees it when it has no inlining
	 * positions for the code (optimized before it started): charged to
	 * the function whose code it is, the location's outermost frame.
	 */
	i = physical_frame(&c->st, i);
	if (is_osr_code(c->st.frames[i]))
		sd->js_osr += w;
	fn = frame_fn(r, c, i);
	if (fn < 0)
		return (int)fn;
	r->fns[fn].view[VIEW_PHYSICAL][side] += w;
	/*
	 * And when V8's profiler does not know OSR code either (compiled
	 * before it started): its ticks go to the caller's frame.
	 */
	while (i >= 0 && is_osr_code(c->st.frames[i])) {
		i = js_frame_above(&c->st, i);
		if (i >= 0)
			i = physical_frame(&c->st, i);
	}
	if (i < 0)
		return 0;
	fn = frame_fn(r, c, i);
	if (fn < 0)
		return (int)fn;
	r->fns[fn].view[VIEW_NO_OSR][side] += w;
	sd->js_no_osr += w;
	return 0;
}

static int copy_header(struct cc_side *sd, const struct pprof_profile *p, const char *name)
{
	const Perftools__Profiles__Profile *pb = pprof_profile__proto(p);
	const char *type = "", *unit = "";

	if (pb->period_type) {
		type = pprof_profile__string(p, pb->period_type->type);
		unit = pprof_profile__string(p, pb->period_type->unit);
	}
	sd->window_ns = pb->duration_nanos;
	sd->period = pb->period;
	sd->pprof_samples = pprof_profile__sample_count(p);
	sd->name = strdup(name ? name : "");
	sd->period_type = strdup(type);
	sd->period_unit = strdup(unit);
	return sd->name && sd->period_type && sd->period_unit ? 0 : -ENOMEM;
}

/* Samples per thread, and which of them are in an isolate, JS or GC. */
static int count_threads(const struct side_ctx *c, struct tid_map *tids)
{
	const struct pprof_profile *p = c->p;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		const char *label = pprof_profile__label(p, s, LABEL_CLASS);
		enum cc_class cls = label ? class_named(label) : CC_OTHER;
		struct tid_ent *e;
		uint64_t w;

		if (!kept(c, s))
			continue;
		w = weight_of(c, s);
		e = tid_map__get(tids, tid_of(p, s), pprof_profile__label(p, s, LABEL_THREAD));
		if (!e)
			return -ENOMEM;
		e->samples += w;
		if (pprof_profile__label(p, s, LABEL_ISOLATE))
			e->isolate += w;
		if (cls == CC_JS || cls == CC_BUILTIN)
			e->js += w;
		if (cls == CC_GC)
			e->gc += w;
	}
	return 0;
}

/* Every kept sample: its class, the main thread's shares, its JS function. */
static int scan_samples(struct crosscheck_report *r, struct side_ctx *c, int side)
{
	const struct pprof_profile *p = c->p;
	struct cc_side *sd = &r->side[side];
	int err;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		enum cc_class cls;
		uint64_t w;

		if (!kept(c, s))
			continue;
		err = pprof_profile__stack(p, s, &c->st);
		if (err)
			return err;
		w = weight_of(c, s);
		cls = class_of(p, s, &c->st);
		sd->samples += w;
		sd->cls_all[cls] += w;
		if (tid_of(p, s) == sd->main_tid) {
			sd->main_samples += w;
			sd->cls_main[cls] += w;
			if (c->st.n && !strcmp(c->st.frames[c->st.n - 1]->name, FRAME_NAME_PROGRAM))
				sd->program_root_main += w;
			if (in_deoptimizer(&c->st))
				sd->deopt_main += w;
		}
		err = attribute(r, c, sd, side, cls, w);
		if (err)
			return err;
	}
	return 0;
}

static void side_rates(struct cc_side *sd)
{
	sd->rate_hz = sd->window_ns > 0 ? (double)sd->main_samples * 1e9 / (double)sd->window_ns
					: NAN;
	sd->ticks_ratio = sd->window_ns > 0 && sd->period > 0 &&
				  !strcmp(sd->period_unit, UNIT_NANOSECONDS)
			  ? (double)sd->samples * (double)sd->period / (double)sd->window_ns
			  : NAN;
}

static int scan_side(struct crosscheck_report *r, const struct pprof_profile *p, int side,
		     const struct crosscheck_opts *o)
{
	struct cc_side *sd = &r->side[side];
	struct side_ctx c = {
		.p = p,
		.isolate = side == CROSSCHECK_ISOPROF ? o->isolate : NULL,
		.si = samples_index(p, o->value_type),
		.per = value_unit(p, o->value_type),
	};
	struct tid_map tids = { 0 };
	const struct tid_ent *main_ent;
	int err;

	err = copy_header(sd, p, o->names[side]);
	if (err)
		return err;
	c.frame_fn = calloc(pprof_profile__frame_count(p) + 1, sizeof(*c.frame_fn));
	if (!c.frame_fn)
		return -ENOMEM;
	err = count_threads(&c, &tids);
	if (err)
		goto out;
	main_ent = main_thread(&tids);
	sd->main_tid = main_ent ? main_ent->tid : NO_TID;
	sd->main_thread = strdup(main_ent ? main_ent->name : "");
	if (!sd->main_thread) {
		err = -ENOMEM;
		goto out;
	}
	err = scan_samples(r, &c, side);
	if (err)
		goto out;
	side_rates(sd);
	err = group_threads(sd, &tids);
	if (!err)
		err = count_isolates(r, &c, sd);
out:
	tid_map__release(&tids);
	pprof_stack__release(&c.st);
	free(c.frame_fn);
	return err;
}

/* ---- Statistics ----------------------------------------------------------- */

struct sort_ctx {
	const struct cc_fn *fns;
	int side;
};

static int cmp_by_side(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	const struct cc_fn *x = &sc->fns[*(const size_t *)a];
	const struct cc_fn *y = &sc->fns[*(const size_t *)b];

	if (x->count[sc->side] != y->count[sc->side])
		return x->count[sc->side] < y->count[sc->side] ? 1 : -1;
	return strcmp(x->display, y->display);
}

static double mean_share(const struct cc_fn *f)
{
	return (f->share[0] + f->share[1]) / 2;
}

static int cmp_by_mean(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	const struct cc_fn *x = &sc->fns[*(const size_t *)a];
	const struct cc_fn *y = &sc->fns[*(const size_t *)b];
	double mx = mean_share(x), my = mean_share(y);

	if (mx != my)
		return mx < my ? 1 : -1;
	return strcmp(x->display, y->display);
}

static int cmp_by_side_share(const void *a, const void *b, void *arg)
{
	const struct sort_ctx *sc = arg;
	const struct cc_fn *x = &sc->fns[*(const size_t *)a];
	const struct cc_fn *y = &sc->fns[*(const size_t *)b];

	if (x->share[sc->side] != y->share[sc->side])
		return x->share[sc->side] < y->share[sc->side] ? 1 : -1;
	return strcmp(x->display, y->display);
}

/* Average ranks (1 = largest) of the set's shares on one side: ties share their mean rank. */
static int side_ranks(const struct crosscheck_report *r, const size_t *set, size_t n, int side,
		      double *rank)
{
	size_t *idx = malloc(n * sizeof(*idx));

	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	/* insertion sort of positions by share: n is at most CROSSCHECK_RANK_SET */
	for (size_t i = 1; i < n; i++) {
		size_t v = idx[i], j = i;

		while (j && r->fns[set[idx[j - 1]]].share[side] < r->fns[set[v]].share[side]) {
			idx[j] = idx[j - 1];
			j--;
		}
		idx[j] = v;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n &&
		       r->fns[set[idx[j + 1]]].share[side] == r->fns[set[idx[i]]].share[side])
			j++;
		for (size_t k = i; k <= j; k++)
			rank[idx[k]] = (double)(i + j) / 2 + 1;
		i = j + 1;
	}
	free(idx);
	return 0;
}

static double pearson(const double *x, const double *y, size_t n)
{
	double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;

	for (size_t i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (size_t i = 0; i < n; i++) {
		sxy += (x[i] - mx) * (y[i] - my);
		sxx += (x[i] - mx) * (x[i] - mx);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx <= 0 || syy <= 0)
		return NAN;
	return sxy / sqrt(sxx * syy);
}

static int spearman(struct crosscheck_report *r)
{
	size_t n = r->nfns < CROSSCHECK_RANK_SET ? r->nfns : CROSSCHECK_RANK_SET;
	double rx[CROSSCHECK_RANK_SET], ry[CROSSCHECK_RANK_SET];
	size_t *all;
	int err;

	r->rho = NAN;
	r->rho_n = n;
	r->rank_set = calloc(n ? n : 1, sizeof(*r->rank_set));
	all = malloc((r->nfns ? r->nfns : 1) * sizeof(*all));
	if (!r->rank_set || !all) {
		free(all);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->nfns; i++)
		all[i] = i;
	qsort_r(all, r->nfns, sizeof(*all), cmp_by_mean, &(struct sort_ctx){ .fns = r->fns });
	memcpy(r->rank_set, all, n * sizeof(*all));
	free(all);
	if (n < 3)
		return 0;
	err = side_ranks(r, r->rank_set, n, 0, rx);
	if (!err)
		err = side_ranks(r, r->rank_set, n, 1, ry);
	if (!err)
		r->rho = pearson(rx, ry, n);
	return err;
}

static int order_sides(struct crosscheck_report *r)
{
	for (int side = 0; side < 2; side++) {
		struct cc_side *sd = &r->side[side];
		struct sort_ctx sc = { .fns = r->fns, .side = side };

		sd->order = malloc((r->nfns ? r->nfns : 1) * sizeof(*sd->order));
		if (!sd->order)
			return -ENOMEM;
		for (size_t i = 0; i < r->nfns; i++)
			if (r->fns[i].count[side])
				sd->order[sd->norder++] = i;
		qsort_r(sd->order, sd->norder, sizeof(*sd->order), cmp_by_side, &sc);
		for (size_t i = 0; i < sd->norder; i++)
			r->fns[sd->order[i]].rank[side] = i + 1;
	}
	return 0;
}

static int top_rows(struct crosscheck_report *r)
{
	double z;

	r->top_rows = malloc((r->nfns ? r->nfns : 1) * sizeof(*r->top_rows));
	if (!r->top_rows)
		return -ENOMEM;
	for (size_t i = 0; i < r->nfns; i++) {
		const struct cc_fn *f = &r->fns[i];

		if ((f->rank[0] && f->rank[0] <= r->top) || (f->rank[1] && f->rank[1] <= r->top))
			r->top_rows[r->ntop_rows++] = i;
	}
	qsort_r(r->top_rows, r->ntop_rows, sizeof(*r->top_rows), cmp_by_mean,
		&(struct sort_ctx){ .fns = r->fns });
	/* the rows shown are the comparisons made: Bonferroni over them */
	z = cc_noise__z(r->ntop_rows);
	for (size_t i = 0; i < r->ntop_rows; i++) {
		struct cc_fn *f = &r->fns[r->top_rows[i]];

		cc_noise__diff_interval(f->count[0], r->side[0].js, f->count[1], r->side[1].js, z,
					&f->diff_lo, &f->diff_hi);
		f->significant = f->diff_lo > 0 || f->diff_hi < 0;
	}
	return 0;
}

static int only_one_side(struct crosscheck_report *r)
{
	for (int side = 0; side < 2; side++) {
		struct sort_ctx sc = { .fns = r->fns, .side = side };

		r->only[side] = malloc((r->nfns ? r->nfns : 1) * sizeof(*r->only[side]));
		if (!r->only[side])
			return -ENOMEM;
		for (size_t i = 0; i < r->nfns; i++)
			if (r->fns[i].share[side] >= CROSSCHECK_ONLY_SHARE &&
			    !r->fns[i].count[!side])
				r->only[side][r->nonly[side]++] = i;
		qsort_r(r->only[side], r->nonly[side], sizeof(size_t), cmp_by_side_share, &sc);
	}
	return 0;
}

/* "TVD ... > threshold (noise floor ... + allowance)", or "" when within. */
static void tvd_reason(char *buf, size_t len, double tvd, const struct cc_noise *noise)
{
	if (tvd <= noise->floor + CROSSCHECK_ALLOWANCE)
		*buf = '\0';
	else
		snprintf(buf, len, "TVD %.3f > %.3f (noise floor %.3f + %.2f)", tvd,
			 noise->floor + CROSSCHECK_ALLOWANCE, noise->floor, CROSSCHECK_ALLOWANCE);
}

static int verdict(struct crosscheck_report *r)
{
	const struct cc_fn *a = &r->fns[r->side[0].order[0]];
	const struct cc_fn *b = &r->fns[r->side[1].order[0]];
	char why[160];
	int n;

	r->same_top = a == b;
	r->top_beyond_noise = !r->same_top && cc_noise__ahead(a->count[0], b->count[0]) &&
			      cc_noise__ahead(b->count[1], a->count[1]);
	r->threshold = r->noise.floor + CROSSCHECK_ALLOWANCE;
	r->agree = r->tvd <= r->threshold && !r->top_beyond_noise;
	tvd_reason(why, sizeof(why), r->tvd, &r->noise);
	if (r->agree)
		n = asprintf(&r->verdict, "agree");
	else if (crosscheck_report__agree_physical(r))
		n = asprintf(&r->verdict,
			     "agree once isoprof's inlined functions are charged to the code they "
			     "were inlined into (TVD %.3f, top %s), as V8 does for code optimized "
			     "before its profiler started; by function: TVD %.3f, top %s vs %s",
			     r->tvd_physical, r->top_physical[0]->display, r->tvd, a->display,
			     b->display);
	else if (crosscheck_report__agree_no_osr(r))
		n = asprintf(&r->verdict,
			     "agree once isoprof's samples in on-stack-replacement code are charged "
			     "to the caller (TVD %.3f, top %s), as V8 does for OSR code compiled "
			     "before its profiler started; by function: TVD %.3f, top %s vs %s",
			     r->tvd_no_osr, r->top_no_osr[0]->display, r->tvd, a->display,
			     b->display);
	else if (r->top_beyond_noise)
		n = asprintf(&r->verdict,
			     "disagree: %s%sthe top JS function differs beyond noise (isoprof: %s, "
			     "V8: %s)", why, *why ? ", and " : "", a->display, b->display);
	else
		n = asprintf(&r->verdict, "disagree: %s", why);
	if (n < 0) {
		r->verdict = NULL;
		return -ENOMEM;
	}
	if (!r->agree && r->v8_deopt_inflated) {
		char *longer;

		if (asprintf(&longer, "%s; V8's samples are mostly deoptimizations, not "
			     "timer ticks (see the notes)", r->verdict) < 0)
			return -ENOMEM;
		free(r->verdict);
		r->verdict = longer;
	}
	return 0;
}

/*
 * V8's profiler adds a sample at every deoptimization besides its timer's
 * (ProfilerEventsProcessor::AddDeoptStack), at the deoptimizing code or,
 * when it does not know that code, its caller.  In a deopt loop these
 * outnumber the timer's ticks and V8's shares count deoptimizations.
 */
static void check_v8_inflation(struct crosscheck_report *r)
{
	const struct cc_side *v8 = &r->side[CROSSCHECK_V8];

	r->v8_deopt_inflated = v8->ticks_ratio > CROSSCHECK_TICKS_INFLATED ||
			       (v8->median_delta_ns > 0 &&
				v8->median_delta_ns < CROSSCHECK_MIN_TIMER_NS);
}

static int deopt_notes(struct crosscheck_report *r)
{
	const struct cc_side *iso = &r->side[CROSSCHECK_ISOPROF], *v8 = &r->side[CROSSCHECK_V8];
	double deopt = iso->main_samples ? (double)iso->deopt_main / (double)iso->main_samples
					 : 0;
	int ret = 0;

	if (r->v8_deopt_inflated && !isnan(v8->ticks_ratio) && v8->ticks_ratio > 1)
		ret = add_note(r, "V8's profile holds %" PRIu64 " samples over %.3f s, %.1fx the "
			       "ticks of its %.3f ms timer: V8 also records a sample at every "
			       "deoptimization, charged to the deoptimizing code or, when it does "
			       "not know that code, to its caller, so its shares count "
			       "deoptimizations rather than time", v8->samples,
			       (double)v8->window_ns / 1e9, v8->ticks_ratio, (double)v8->period / 1e6);
	else if (r->v8_deopt_inflated)
		ret = add_note(r, "V8's median interval between samples is %.1f us, far below "
			       "a timer's (DevTools' finest is 100 us): V8 also records a sample at every "
			       "deoptimization, so its shares count deoptimizations rather than time",
			       (double)v8->median_delta_ns / 1e3);
	if (!ret && deopt >= CROSSCHECK_DEOPT_SHARE)
		ret = add_note(r, "%.1f%% of isoprof's samples on the isolate's thread are in V8's "
			       "deoptimizer: code is being deoptimized over and over (a deopt "
			       "loop; V8's --trace-deopt says which function and why)",
			       100.0 * deopt);
	return ret;
}

/* Is there a sample of the isolate?  When not, err names the isolates there are. */
static bool has_isolate(const struct pprof_profile *p, const char *isolate, char *err,
			size_t errlen)
{
	char seen[256] = "";
	size_t len = 0, n = 0;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		const char *iso = pprof_profile__label(p, s, LABEL_ISOLATE);

		if (!iso)
			continue;
		if (!strcmp(iso, isolate))
			return true;
		if (n < 4 && !strstr(seen, iso) && len < sizeof(seen)) {
			len += (size_t)snprintf(seen + len, sizeof(seen) - len, "%s%s",
						n ? ", " : "", iso);
			n++;
		}
	}
	errmsg__set(err, errlen, "isoprof profile: no samples of isolate %s (%s%s)", isolate,
		n ? "it has " : "it has no isolate labels", seen);
	return false;
}

/*
 * TVD over another way of charging the samples, over totals n0 and n1,
 * and each side's top function under it; NaN when a side has nothing.
 */
static double view_distance(const struct crosscheck_report *r, enum cc_view view, uint64_t n0,
			    uint64_t n1, const struct cc_fn *top[2])
{
	double d = 0;

	top[0] = top[1] = NULL;
	if (!n0 || !n1)
		return NAN;
	for (size_t i = 0; i < r->nfns; i++) {
		const struct cc_fn *f = &r->fns[i];
		const uint64_t *v = f->view[view];

		d += fabs((double)v[0] / (double)n0 - (double)v[1] / (double)n1);
		for (int side = 0; side < 2; side++) {
			const struct cc_fn *t = top[side];

			if (v[side] && (!t || v[side] > t->view[view][side] ||
					(v[side] == t->view[view][side] &&
					 strcmp(f->display, t->display) < 0)))
				top[side] = f;
		}
	}
	return d / 2;
}

/* Both sides need JS samples: shares are over them.  -ENODATA names the side without. */
static int check_js_samples(const struct crosscheck_report *r, char *err, size_t errlen)
{
	for (int side = 0; side < 2; side++) {
		const struct cc_side *sd = &r->side[side];

		if (sd->js)
			continue;
		errmsg__set(err, errlen,
			    "%s profile%s%s%s: no JS samples among its %" PRIu64 " samples%s",
			    side_names[side], *sd->name ? " (" : "", sd->name, *sd->name ? ")" : "",
			    sd->samples,
			    side == CROSSCHECK_ISOPROF && sd->js_unattributed ?
			    " (JS frames without names: was V8 run with --perf-basic-prof?)" : "");
		return -ENODATA;
	}
	return 0;
}

/*
 * The noise of one way of charging samples: view -1 is by function.
 * Functions neither side has under it are left out (they add nothing).
 */
static int view_noise(const struct crosscheck_report *r, int view, struct cc_noise *out)
{
	uint64_t *c = malloc(2 * (r->nfns ? r->nfns : 1) * sizeof(*c));
	const uint64_t *counts[2];
	size_t k = 0;
	int err;

	if (!c)
		return -ENOMEM;
	for (size_t i = 0; i < r->nfns; i++) {
		const uint64_t *v = view < 0 ? r->fns[i].count : r->fns[i].view[view];

		if (!v[0] && !v[1])
			continue;
		c[k] = v[0];
		c[r->nfns + k] = v[1];
		k++;
	}
	counts[0] = c;
	counts[1] = c + r->nfns;
	err = cc_noise__estimate(counts, k, out);
	free(c);
	return err;
}

/* Is each side's top ahead of the other's beyond noise, under a way of charging? */
static bool tops_differ(const struct cc_fn *const top[2], enum cc_view view)
{
	return top[0] && top[1] && top[0] != top[1] &&
	       cc_noise__ahead(top[0]->view[view][0], top[1]->view[view][0]) &&
	       cc_noise__ahead(top[1]->view[view][1], top[0]->view[view][1]);
}

/* What sampling alone does to each distance. */
static int noise(struct crosscheck_report *r)
{
	int err = view_noise(r, -1, &r->noise);

	for (int v = 0; !err && v < NR_VIEWS; v++)
		err = view_noise(r, v, &r->noise_view[v]);
	r->top_beyond_noise_view[VIEW_PHYSICAL] = tops_differ(r->top_physical, VIEW_PHYSICAL);
	r->top_beyond_noise_view[VIEW_NO_OSR] = tops_differ(r->top_no_osr, VIEW_NO_OSR);
	return err;
}

/* Self shares and the distance between the sides, by function and as V8 may charge. */
static void distances(struct crosscheck_report *r)
{
	r->tvd = 0;
	for (size_t i = 0; i < r->nfns; i++) {
		struct cc_fn *f = &r->fns[i];

		f->share[0] = (double)f->count[0] / (double)r->side[0].js;
		f->share[1] = (double)f->count[1] / (double)r->side[1].js;
		r->tvd += fabs(f->share[0] - f->share[1]);
	}
	r->tvd /= 2;
	r->tvd_physical = view_distance(r, VIEW_PHYSICAL, r->side[0].js,
					r->side[1].js, r->top_physical);
	r->same_top_physical = r->top_physical[0] && r->top_physical[0] == r->top_physical[1];
	r->tvd_no_osr = view_distance(r, VIEW_NO_OSR, r->side[0].js_no_osr,
				      r->side[1].js_no_osr, r->top_no_osr);
	r->same_top_no_osr = r->top_no_osr[0] && r->top_no_osr[0] == r->top_no_osr[1];
}

/* Rankings, the verdict and the notes that explain it. */
static int conclude(struct crosscheck_report *r)
{
	const struct cc_side *iso = &r->side[CROSSCHECK_ISOPROF];
	int ret;

	ret = order_sides(r);
	if (!ret)
		ret = spearman(r);
	if (!ret)
		ret = top_rows(r);
	if (!ret)
		ret = only_one_side(r);
	check_v8_inflation(r);
	if (!ret)
		ret = verdict(r);
	if (!ret)
		ret = deopt_notes(r);
	if (!ret && iso->js_osr * 20 > iso->js)
		ret = add_note(r, "%.1f%% of isoprof's JS samples ran in on-stack-replacement "
			       "code, which V8's profiler may not resolve when it was compiled "
			       "before the profiler started (it then charges the ticks to a caller)",
			       100.0 * (double)iso->js_osr / (double)iso->js);
	if (!ret && !r->same_top && !r->top_beyond_noise)
		ret = add_note(r, "the top JS function differs (isoprof: %s, V8: %s), within "
			       "sampling noise: the two sides do not both have their own ahead of "
			       "the other's beyond it", crosscheck_report__top_function(r, 0),
			       crosscheck_report__top_function(r, 1));
	if (!ret && r->threshold >= CROSSCHECK_TVD_BLIND)
		ret = add_note(r, "with %" PRIu64 " and %" PRIu64 " JS samples, sampling noise "
			       "alone reaches a TVD of %.3f: smaller differences cannot be told "
			       "from it (a longer window lowers it)", iso->js,
			       r->side[CROSSCHECK_V8].js, r->noise.floor);
	if (!ret && r->roles_guessed)
		ret = add_note(r, "could not tell which input is V8's: took A as isoprof's, "
			       "B as V8's");
	return ret;
}

int crosscheck__compute(const struct pprof_profile *isoprof, const struct pprof_profile *v8,
			const struct crosscheck_opts *o, struct crosscheck_report **out,
			char *err, size_t errlen)
{
	static const struct crosscheck_opts no_opts;
	struct crosscheck_report *r;
	int ret;

	*out = NULL;
	if (!o)
		o = &no_opts;
	r = calloc(1, sizeof(*r));
	if (!r) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	r->top = o->top ? o->top : CROSSCHECK_DEFAULT_TOP;
	r->roles_guessed = o->roles_guessed;
	r->side[CROSSCHECK_V8].median_delta_ns = o->v8_median_delta_ns;
	if (o->isolate && !has_isolate(isoprof, o->isolate, err, errlen)) {
		ret = -ENODATA;
		goto fail;
	}
	ret = scan_side(r, isoprof, CROSSCHECK_ISOPROF, o);
	if (!ret)
		ret = scan_side(r, v8, CROSSCHECK_V8, o);
	if (ret)
		goto fail_nomem;
	ret = check_js_samples(r, err, errlen);
	if (ret)
		goto fail;
	distances(r);
	ret = noise(r);
	if (!ret)
		ret = conclude(r);
	if (ret)
		goto fail_nomem;
	*out = r;
	return 0;

fail_nomem:
	errmsg__set(err, errlen, "%s", ret == -ENOMEM ? "out of memory" : strerror(-ret));
fail:
	crosscheck__free(r);
	return ret;
}

void crosscheck__free(struct crosscheck_report *r)
{
	if (!r)
		return;
	for (int side = 0; side < 2; side++) {
		struct cc_side *sd = &r->side[side];

		free(sd->name);
		free(sd->period_type);
		free(sd->period_unit);
		free(sd->main_thread);
		free(sd->order);
		for (size_t i = 0; i < sd->nthreads; i++)
			free(sd->threads[i].name);
		free(sd->threads);
		free(r->only[side]);
	}
	for (size_t i = 0; i < r->nfns; i++) {
		free(r->fns[i].name);
		free(r->fns[i].file);
		free(r->fns[i].display);
	}
	for (size_t i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	free(r->fns);
	index_table__release(&r->fn_tab);
	free(r->rank_set);
	free(r->top_rows);
	free(r->verdict);
	free(r);
}

double crosscheck_report__tvd(const struct crosscheck_report *r)
{
	return r->tvd;
}

double crosscheck_report__spearman(const struct crosscheck_report *r)
{
	return r->rho;
}

double crosscheck_report__noise_floor(const struct crosscheck_report *r)
{
	return r->noise.floor;
}

/* The test of crosscheck_report__agree() on another way of charging samples. */
static bool view_agrees(const struct crosscheck_report *r, enum cc_view view, double tvd)
{
	return !isnan(tvd) && tvd <= r->noise_view[view].floor + CROSSCHECK_ALLOWANCE &&
	       !r->top_beyond_noise_view[view];
}

bool crosscheck_report__agree_physical(const struct crosscheck_report *r)
{
	return view_agrees(r, VIEW_PHYSICAL, r->tvd_physical);
}

bool crosscheck_report__agree_no_osr(const struct crosscheck_report *r)
{
	return r->side[CROSSCHECK_ISOPROF].js_osr && view_agrees(r, VIEW_NO_OSR, r->tvd_no_osr);
}

bool crosscheck_report__agree(const struct crosscheck_report *r)
{
	return r->agree;
}

const char *crosscheck_report__verdict(const struct crosscheck_report *r)
{
	return r->verdict;
}

const char *crosscheck_report__top_function(const struct crosscheck_report *r,
					    enum crosscheck_side side)
{
	return r->fns[r->side[side].order[0]].display;
}

/* ---- Loading -------------------------------------------------------------- */

bool crosscheck__is_v8_profile(const struct pprof_profile *p)
{
	return v8_cpu_profile__converted(p);
}

/* Either input: a pprof file, or V8's .cpuprofile. */
#define INPUT_FORMATS (PROFILE_FORMAT_BIT(PROFILE_PPROF) | PROFILE_FORMAT_BIT(PROFILE_CPUPROFILE))

/* The profile in pf's bytes (taken from pf) and what the V8 side needs to know of it. */
static int load(struct profile_file *pf, struct pprof_profile **out, bool *is_v8,
		int64_t *median_delta_ns, char *err, size_t errlen)
{
	int ret = profile_file__parse(pf, INPUT_FORMATS, err, errlen);

	if (!ret)
		ret = profile_file__profile(pf, err, errlen);
	if (ret)
		return ret;
	*is_v8 = profile_file__is_v8_cpu(pf);
	if (median_delta_ns && pf->cpu) {
		int64_t m = v8_cpu_profile__median_delta_us(pf->cpu);

		*median_delta_ns = m > 0 && m <= INT64_MAX / 1000 ? m * 1000 : 0;
	}
	*out = pf->prof;
	pf->prof = NULL;
	return 0;
}

int crosscheck__load_buffer(const uint8_t *data, size_t len, struct pprof_profile **out,
			    bool *is_v8, int64_t *median_delta_ns, char *err, size_t errlen)
{
	struct profile_file pf = { 0 };
	int ret;

	*out = NULL;
	*is_v8 = false;
	if (median_delta_ns)
		*median_delta_ns = 0;
	ret = profile_file__set_data(&pf, data, len, err, errlen);
	if (!ret)
		ret = load(&pf, out, is_v8, median_delta_ns, err, errlen);
	profile_file__release(&pf);
	return ret;
}

int crosscheck__load(const char *path, struct pprof_profile **out, bool *is_v8,
		     int64_t *median_delta_ns, char *err, size_t errlen)
{
	struct profile_file pf = { 0 };
	int ret;

	*out = NULL;
	*is_v8 = false;
	if (median_delta_ns)
		*median_delta_ns = 0;
	ret = profile_file__read(&pf, path, err, errlen);
	if (!ret)
		ret = load(&pf, out, is_v8, median_delta_ns, err, errlen);
	profile_file__release(&pf);
	return ret;
}
