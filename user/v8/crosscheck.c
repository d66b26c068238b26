// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/errmsg.h"
#include "user/v8/crosscheck.h"
#include "user/attribute/frames.h"
#include "proto/pprof_builder.h"
#include "proto/v8profile.h"

#define V8_SOURCE_COMMENT "source: V8 CPU profiler"
#define NO_TID INT64_MIN

enum cc_class {
	CC_JS = 0,
	CC_BUILTIN,
	CC_GC,
	CC_V8_RUNTIME,
	CC_NATIVE,
	CC_KERNEL,
	CC_IDLE,
	CC_PROGRAM,
	CC_OTHER,
	NR_CC,
};

static const char *const cc_names[NR_CC] = {
	[CC_JS] = "js",
	[CC_BUILTIN] = "v8-builtin",
	[CC_GC] = "gc",
	[CC_V8_RUNTIME] = "v8-runtime",
	[CC_NATIVE] = "runtime-native",
	[CC_KERNEL] = "kernel",
	[CC_IDLE] = "idle",
	[CC_PROGRAM] = "program",
	[CC_OTHER] = "other",
};

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

struct cc_fn {
	char *name;
	char *file;		/* base name, "" when unknown */
	int64_t line;		/* start line, anonymous functions only */
	char *display;
	uint64_t hash;
	uint64_t count[2];
	uint64_t view[NR_VIEWS][2];	/* the counts charged as V8's profiler may */
	double share[2];
	size_t rank[2];		/* position on the side's list, from 1; 0 when absent */
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
	uint32_t *fn_tab;		/* open addressing: index + 1 */
	size_t fn_tab_mask;
	size_t top;
	bool roles_guessed;
	double tvd;
	double tvd_physical;		/* with isoprof's inlining folded into callers */
	bool same_top, same_top_physical;
	const struct cc_fn *top_physical[2];
	double tvd_no_osr;		/* ... and OSR code charged to its caller */
	bool same_top_no_osr;
	const struct cc_fn *top_no_osr[2];
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

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static uint64_t hash_bytes(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h * 0x100000001b3ULL;
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

static enum cc_class class_of(const struct pprof_profile *p, size_t s, const struct pprof_stack *st)
{
	const char *cls = pprof_profile__label(p, s, "class");
	const char *root;

	if (cls) {
		for (int c = 0; c < NR_CC; c++)
			if (!strcmp(cls, cc_names[c]))
				return c;
		return CC_OTHER;
	}
	/* A profile from elsewhere: what its frames say, V8's way. */
	if (!st->n)
		return CC_OTHER;
	root = st->frames[st->n - 1]->name;
	if (!strcmp(root, "(garbage collector)"))
		return CC_GC;
	if (!strcmp(root, "(idle)"))
		return CC_IDLE;
	if (!strcmp(root, "(program)"))
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

static int grow_fn_tab(struct crosscheck_report *r)
{
	size_t cap = r->fn_tab ? (r->fn_tab_mask + 1) * 2 : 256;
	uint32_t *tab;

	if (cap > UINT32_MAX)
		return -ENOMEM;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < r->nfns; i++) {
		size_t slot = r->fns[i].hash & (cap - 1);

		while (tab[slot])
			slot = (slot + 1) & (cap - 1);
		tab[slot] = (uint32_t)(i + 1);
	}
	free(r->fn_tab);
	r->fn_tab = tab;
	r->fn_tab_mask = cap - 1;
	return 0;
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

/* Index of the function a JS frame is, created on first sight; negative errno. */
static ssize_t fn_of(struct crosscheck_report *r, const struct pprof_frame *f)
{
	const char *name = *f->name ? f->name : "(anonymous)";
	const char *file = base_name(f->filename);
	int64_t line = strcmp(name, "(anonymous)") ? 0 : f->start_line;
	uint64_t h = hash_bytes(hash_bytes(0xcbf29ce484222325ULL, name), file) ^
		     (uint64_t)line * 0x9e3779b97f4a7c15ULL;
	struct cc_fn *fn;
	size_t slot;

	if ((r->nfns + 1) * 2 > (r->fn_tab ? r->fn_tab_mask + 1 : 0) && grow_fn_tab(r))
		return -ENOMEM;
	for (slot = h & r->fn_tab_mask; r->fn_tab[slot]; slot = (slot + 1) & r->fn_tab_mask) {
		fn = &r->fns[r->fn_tab[slot] - 1];
		if (fn->hash == h && fn->line == line && !strcmp(fn->name, name) &&
		    !strcmp(fn->file, file))
			return (ssize_t)(r->fn_tab[slot] - 1);
	}
	if (r->nfns == r->fns_cap) {
		size_t cap = r->fns_cap ? r->fns_cap * 2 : 64;
		struct cc_fn *fns = realloc(r->fns, cap * sizeof(*fns));

		if (!fns)
			return -ENOMEM;
		r->fns = fns;
		r->fns_cap = cap;
	}
	fn = &r->fns[r->nfns];
	memset(fn, 0, sizeof(*fn));
	fn->hash = h;
	fn->line = line;
	fn->name = strdup(name);
	fn->file = strdup(file);
	fn->display = fn->name && fn->file ? make_display(name, file, line) : NULL;
	if (!fn->name || !fn->file || !fn->display) {
		free(fn->name);
		free(fn->file);
		free(fn->display);
		return -ENOMEM;
	}
	r->fn_tab[slot] = (uint32_t)(r->nfns + 1);
	return (ssize_t)r->nfns++;
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
	uint32_t *tab;
	size_t mask;
};

static uint64_t hash_tid(int64_t tid)
{
	uint64_t h = (uint64_t)tid * 0xff51afd7ed558ccdULL;

	return h ^ (h >> 29);
}

static struct tid_ent *tid_map__get(struct tid_map *m, int64_t tid, const char *name)
{
	size_t slot;

	if ((m->n + 1) * 2 > (m->tab ? m->mask + 1 : 0)) {
		size_t cap = m->tab ? (m->mask + 1) * 2 : 64;
		uint32_t *tab = cap <= UINT32_MAX ? calloc(cap, sizeof(*tab)) : NULL;

		if (!tab)
			return NULL;
		for (size_t i = 0; i < m->n; i++) {
			slot = hash_tid(m->ents[i].tid) & (cap - 1);
			while (tab[slot])
				slot = (slot + 1) & (cap - 1);
			tab[slot] = (uint32_t)(i + 1);
		}
		free(m->tab);
		m->tab = tab;
		m->mask = cap - 1;
	}
	for (slot = hash_tid(tid) & m->mask; m->tab[slot]; slot = (slot + 1) & m->mask)
		if (m->ents[m->tab[slot] - 1].tid == tid)
			return &m->ents[m->tab[slot] - 1];
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 32;
		struct tid_ent *ents = realloc(m->ents, cap * sizeof(*ents));

		if (!ents)
			return NULL;
		m->ents = ents;
		m->cap = cap;
	}
	m->ents[m->n] = (struct tid_ent){ .tid = tid, .name = name ? name : "" };
	m->tab[slot] = (uint32_t)(m->n + 1);
	return &m->ents[m->n++];
}

static void tid_map__release(struct tid_map *m)
{
	free(m->ents);
	free(m->tab);
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
	free(m->tab);	/* the order changed: the table is stale */
	m->tab = NULL;
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
	struct pprof_stack st;
	ssize_t *frame_fn;		/* frame id -> fn index + 1, 0 unknown, -1 no JS */
};

static uint64_t weight_of(const struct side_ctx *c, size_t s)
{
	int64_t v;

	if (c->si < 0)
		return 1;
	v = pprof_profile__value(c->p, s, (size_t)c->si);
	return v > 0 ? (uint64_t)v : 0;
}

static bool kept(const struct side_ctx *c, size_t s)
{
	const char *iso;

	if (!c->isolate)
		return true;
	iso = pprof_profile__label(c->p, s, "isolate");
	return !iso || !strcmp(iso, c->isolate);
}

static int64_t tid_of(const struct pprof_profile *p, size_t s)
{
	int64_t tid;

	return pprof_profile__num_label(p, s, "tid", &tid) ? tid : NO_TID;
}

static int samples_index(const struct pprof_profile *p)
{
	for (size_t i = 0; i < pprof_profile__sample_type_count(p); i++)
		if (!strcmp(pprof_profile__sample_type(p, i, NULL), "samples"))
			return (int)i;
	return -1;
}

static int count_isolates(struct crosscheck_report *r, struct side_ctx *c, struct cc_side *sd)
{
	const char **seen = NULL;
	size_t n = 0, cap = 0;

	for (size_t s = 0; s < pprof_profile__sample_count(c->p); s++) {
		const char *iso = pprof_profile__label(c->p, s, "isolate");
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

static int scan_side(struct crosscheck_report *r, const struct pprof_profile *p, int side,
		     const struct crosscheck_opts *o)
{
	struct cc_side *sd = &r->side[side];
	struct side_ctx c = {
		.p = p,
		.isolate = side == CROSSCHECK_ISOPROF ? o->isolate : NULL,
		.si = samples_index(p),
	};
	struct tid_map tids = { 0 };
	const struct tid_ent *main_ent;
	size_t n = pprof_profile__sample_count(p);
	int err;

	err = copy_header(sd, p, o->names[side]);
	if (err)
		return err;
	c.frame_fn = calloc(pprof_profile__frame_count(p) + 1, sizeof(*c.frame_fn));
	if (!c.frame_fn)
		return -ENOMEM;

	for (size_t s = 0; s < n; s++) {
		const char *cls = pprof_profile__label(p, s, "class");
		struct tid_ent *e;
		uint64_t w;

		if (!kept(&c, s))
			continue;
		w = weight_of(&c, s);
		e = tid_map__get(&tids, tid_of(p, s), pprof_profile__label(p, s, "thread"));
		if (!e) {
			err = -ENOMEM;
			goto out;
		}
		e->samples += w;
		if (pprof_profile__label(p, s, "isolate"))
			e->isolate += w;
		if (cls && (!strcmp(cls, "js") || !strcmp(cls, "v8-builtin")))
			e->js += w;
		if (cls && !strcmp(cls, "gc"))
			e->gc += w;
	}
	main_ent = main_thread(&tids);
	sd->main_tid = main_ent ? main_ent->tid : NO_TID;
	sd->main_thread = strdup(main_ent ? main_ent->name : "");
	if (!sd->main_thread) {
		err = -ENOMEM;
		goto out;
	}

	for (size_t s = 0; s < n; s++) {
		enum cc_class cls;
		uint64_t w;

		if (!kept(&c, s))
			continue;
		err = pprof_profile__stack(p, s, &c.st);
		if (err)
			goto out;
		w = weight_of(&c, s);
		cls = class_of(p, s, &c.st);
		sd->samples += w;
		sd->cls_all[cls] += w;
		if (tid_of(p, s) == sd->main_tid) {
			sd->main_samples += w;
			sd->cls_main[cls] += w;
			if (c.st.n && !strcmp(c.st.frames[c.st.n - 1]->name, "(program)"))
				sd->program_root_main += w;
			if (in_deoptimizer(&c.st))
				sd->deopt_main += w;
		}
		err = attribute(r, &c, sd, side, cls, w);
		if (err)
			goto out;
	}
	sd->rate_hz = sd->window_ns > 0 ? (double)sd->main_samples * 1e9 / (double)sd->window_ns
					: NAN;
	sd->ticks_ratio = sd->window_ns > 0 && sd->period > 0 &&
				  !strcmp(sd->period_unit, "nanoseconds")
			  ? (double)sd->samples * (double)sd->period / (double)sd->window_ns
			  : NAN;
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

static int verdict(struct crosscheck_report *r)
{
	const struct cc_fn *a = &r->fns[r->side[0].order[0]];
	const struct cc_fn *b = &r->fns[r->side[1].order[0]];
	bool same_top = a == b;
	int n;

	r->same_top = same_top;
	r->agree = r->tvd < CROSSCHECK_TVD_AGREE && same_top;
	if (r->agree)
		n = asprintf(&r->verdict, "agree");
	else if (r->tvd_physical < CROSSCHECK_TVD_AGREE && r->same_top_physical)
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
	else if (!same_top && r->tvd >= CROSSCHECK_TVD_AGREE)
		n = asprintf(&r->verdict,
			     "disagree: TVD %.3f >= %.2f, and the top JS function differs "
			     "(isoprof: %s, V8: %s)", r->tvd, CROSSCHECK_TVD_AGREE, a->display,
			     b->display);
	else if (!same_top)
		n = asprintf(&r->verdict,
			     "disagree: the top JS function differs (isoprof: %s, V8: %s)",
			     a->display, b->display);
	else
		n = asprintf(&r->verdict, "disagree: TVD %.3f >= %.2f", r->tvd,
			     CROSSCHECK_TVD_AGREE);
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
		const char *iso = pprof_profile__label(p, s, "isolate");

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
	for (int side = 0; side < 2; side++) {
		const struct cc_side *sd = &r->side[side];

		if (sd->js)
			continue;
		errmsg__set(err, errlen,
			"%s profile%s%s%s: no JS samples among its %" PRIu64 " samples%s",
			side_names[side], *sd->name ? " (" : "", sd->name, *sd->name ? ")" : "",
			sd->samples,
			side == CROSSCHECK_ISOPROF && sd->js_unattributed
				? " (JS frames without names: was V8 run with --perf-basic-prof?)"
				: "");
		ret = -ENODATA;
		goto fail;
	}
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
	if (!ret && r->side[CROSSCHECK_ISOPROF].js_osr * 20 > r->side[CROSSCHECK_ISOPROF].js)
		ret = add_note(r, "%.1f%% of isoprof's JS samples ran in on-stack-replacement "
			       "code, which V8's profiler may not resolve when it was compiled "
			       "before the profiler started (it then charges the ticks to a caller)",
			       100.0 * (double)r->side[CROSSCHECK_ISOPROF].js_osr /
				       (double)r->side[CROSSCHECK_ISOPROF].js);
	if (!ret && r->roles_guessed)
		ret = add_note(r, "could not tell which input is V8's: took A as isoprof's, "
			       "B as V8's");
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
	free(r->fn_tab);
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

bool crosscheck_report__agree_physical(const struct crosscheck_report *r)
{
	return r->tvd_physical < CROSSCHECK_TVD_AGREE && r->same_top_physical;
}

bool crosscheck_report__agree_no_osr(const struct crosscheck_report *r)
{
	return r->side[CROSSCHECK_ISOPROF].js_osr && r->tvd_no_osr < CROSSCHECK_TVD_AGREE &&
	       r->same_top_no_osr;
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

/* ---- Text ----------------------------------------------------------------- */

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

static void print_top(const struct crosscheck_report *r, FILE *f)
{
	char a[32], b[32];
	double diff;

	fprintf(f, "\nTop %zu JS functions by self share on either side (share of JS samples, "
		"rank)\n", r->top);
	fprintf(f, "  %-10s  %-10s  %7s  %s\n", "isoprof", "V8", "diff", "function");
	for (size_t i = 0; i < r->ntop_rows; i++) {
		const struct cc_fn *fn = &r->fns[r->top_rows[i]];

		rank_str(a, sizeof(a), fn, 0);
		rank_str(b, sizeof(b), fn, 1);
		diff = 100.0 * (fn->share[0] - fn->share[1]);
		/* no "-0.0" for a difference that rounds away */
		fprintf(f, "  %-10s  %-10s  %+6.1f  %s\n", a, b, fabs(diff) < 0.05 ? 0.0 : diff,
			fn->display);
	}
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

		fprintf(f, "  %-26s %14s %12s %8s\n", cc_names[c],
			pct(x, sizeof(x), a->cls_main[c], a->main_samples),
			pct(y, sizeof(y), a->cls_all[c], a->samples),
			pct(z, sizeof(z), b->cls_all[c], b->samples));
	}
	if (a->cls_all[CC_OTHER] || b->cls_all[CC_OTHER])
		fprintf(f, "  %-26s %14s %12s %8s\n", "other / unlabelled",
			pct(x, sizeof(x), a->cls_main[CC_OTHER], a->main_samples),
			pct(y, sizeof(y), a->cls_all[CC_OTHER], a->samples),
			pct(z, sizeof(z), b->cls_all[CC_OTHER], b->samples));
	fprintf(f, "  %-26s %14s %12s %8s\n", "rooted at (program)",
		pct(x, sizeof(x), a->program_root_main, a->main_samples), "",
		pct(z, sizeof(z), b->program_root_main, b->main_samples));
	fprintf(f, "  (V8 calls gc \"(garbage collector)\" and idle \"(idle)\"; its \"(program)\" "
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

/* ---- JSON ----------------------------------------------------------------- */

static int put(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static int append(struct json_object *a, struct json_object *v)
{
	if (!a || !v)
		return -ENOMEM;
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

/* NaN and infinities are not JSON: they become null (a NULL json_object). */
static int put_num(struct json_object *o, const char *key, double v)
{
	if (isnan(v) || isinf(v))
		return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
	return put(o, key, json_object_new_double(v));
}

static struct json_object *json_fn(const struct cc_fn *fn, int side)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	err |= put(o, "function", json_object_new_string(fn->name));
	err |= put(o, "file", json_object_new_string(fn->file));
	if (fn->line)
		err |= put(o, "start_line", json_object_new_int64(fn->line));
	err |= put(o, "display", json_object_new_string(fn->display));
	for (int s = 0; s < 2; s++) {
		if (side >= 0 && s != side)
			continue;
		err |= put_num(o, s == 0 ? "isoprof_share" : "v8_share", fn->share[s]);
		err |= put(o, s == 0 ? "isoprof_samples" : "v8_samples",
			   json_object_new_uint64(fn->count[s]));
		if (fn->rank[s])
			err |= put(o, s == 0 ? "isoprof_rank" : "v8_rank",
				   json_object_new_uint64(fn->rank[s]));
	}
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *json_classes(const uint64_t *cls, uint64_t total)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	for (int c = 0; c < NR_CC; c++)
		err |= put_num(o, cc_names[c], total ? (double)cls[c] / (double)total : NAN);
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *json_side(const struct crosscheck_report *r, int side)
{
	const struct cc_side *sd = &r->side[side];
	struct json_object *o = json_object_new_object(), *a;
	int err = 0;

	if (!o)
		return NULL;
	err |= put(o, "file", json_object_new_string(sd->name));
	err |= put(o, "samples", json_object_new_uint64(sd->samples));
	err |= put(o, "pprof_samples", json_object_new_uint64(sd->pprof_samples));
	err |= put(o, "window_ns", json_object_new_int64(sd->window_ns));
	err |= put(o, "period", json_object_new_int64(sd->period));
	err |= put(o, "period_type", json_object_new_string(sd->period_type));
	err |= put(o, "period_unit", json_object_new_string(sd->period_unit));
	err |= put_num(o, "rate_hz", sd->rate_hz);
	if (sd->main_tid != NO_TID)
		err |= put(o, "main_tid", json_object_new_int64(sd->main_tid));
	err |= put(o, "main_thread", json_object_new_string(sd->main_thread));
	err |= put(o, "main_thread_samples", json_object_new_uint64(sd->main_samples));
	err |= put(o, "js_samples", json_object_new_uint64(sd->js));
	err |= put(o, "js_unattributed_samples", json_object_new_uint64(sd->js_unattributed));
	err |= put(o, "isolates", json_object_new_uint64(sd->nisolates));
	err |= put_num(o, "samples_per_timer_tick", sd->ticks_ratio);
	err |= put(o, "deoptimizer_samples_main_thread", json_object_new_uint64(sd->deopt_main));
	if (sd->median_delta_ns > 0)
		err |= put(o, "median_interval_ns", json_object_new_int64(sd->median_delta_ns));
	err |= put(o, "class_shares_main_thread", json_classes(sd->cls_main, sd->main_samples));
	err |= put(o, "class_shares", json_classes(sd->cls_all, sd->samples));
	err |= put_num(o, "program_root_share_main_thread",
		       sd->main_samples ? (double)sd->program_root_main / (double)sd->main_samples
					: NAN);
	a = json_object_new_array();
	err |= put(o, "top", a);
	for (size_t i = 0; a && i < sd->norder && i < r->top; i++)
		err |= append(a, json_fn(&r->fns[sd->order[i]], -1));
	a = json_object_new_array();
	err |= put(o, "only_here", a);
	for (size_t i = 0; a && i < r->nonly[side]; i++)
		err |= append(a, json_fn(&r->fns[r->only[side][i]], side));
	if (side == CROSSCHECK_ISOPROF) {
		a = json_object_new_array();
		err |= put(o, "other_threads", a);
		for (size_t i = 0; a && i < sd->nthreads; i++) {
			const struct cc_thread *t = &sd->threads[i];
			struct json_object *th = json_object_new_object();

			if (append(a, th)) {
				err = -ENOMEM;
				break;
			}
			err |= put(th, "thread", json_object_new_string(t->name));
			err |= put(th, "tids", json_object_new_uint64(t->ntids));
			err |= put(th, "samples", json_object_new_uint64(t->samples));
			err |= put_num(th, "share", sd->samples ? (double)t->samples /
								  (double)sd->samples : NAN);
			err |= put_num(th, "gc_share", t->samples ? (double)t->gc /
								    (double)t->samples : NAN);
		}
	}
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int crosscheck__print_json(const struct crosscheck_report *r, FILE *f)
{
	struct json_object *o = json_object_new_object(), *a;
	int err = 0;

	if (!o)
		return -ENOMEM;
	err |= put(o, "isoprof", json_side(r, 0));
	err |= put(o, "v8", json_side(r, 1));
	err |= put_num(o, "tvd", r->tvd);
	err |= put_num(o, "spearman", r->rho);
	err |= put(o, "spearman_n", json_object_new_uint64(r->rho_n));
	a = json_object_new_array();
	err |= put(o, "functions", a);
	for (size_t i = 0; a && i < r->ntop_rows; i++)
		err |= append(a, json_fn(&r->fns[r->top_rows[i]], -1));
	err |= put(o, "top_isoprof", json_object_new_string(crosscheck_report__top_function(r, 0)));
	err |= put(o, "top_v8", json_object_new_string(crosscheck_report__top_function(r, 1)));
	err |= put(o, "same_top", json_object_new_boolean(r->side[0].order[0] ==
							  r->side[1].order[0]));
	err |= put(o, "agree", json_object_new_boolean(r->agree));
	err |= put_num(o, "tvd_physical", r->tvd_physical);
	err |= put(o, "top_physical_isoprof",
		   json_object_new_string(r->top_physical[0] ? r->top_physical[0]->display : ""));
	err |= put(o, "top_physical_v8",
		   json_object_new_string(r->top_physical[1] ? r->top_physical[1]->display : ""));
	err |= put(o, "same_top_physical", json_object_new_boolean(r->same_top_physical));
	err |= put(o, "agree_physical",
		   json_object_new_boolean(crosscheck_report__agree_physical(r)));
	err |= put_num(o, "tvd_no_osr", r->tvd_no_osr);
	err |= put(o, "top_no_osr_isoprof",
		   json_object_new_string(r->top_no_osr[0] ? r->top_no_osr[0]->display : ""));
	err |= put(o, "top_no_osr_v8",
		   json_object_new_string(r->top_no_osr[1] ? r->top_no_osr[1]->display : ""));
	err |= put(o, "same_top_no_osr", json_object_new_boolean(r->same_top_no_osr));
	err |= put(o, "agree_no_osr", json_object_new_boolean(crosscheck_report__agree_no_osr(r)));
	err |= put(o, "v8_deopt_inflated", json_object_new_boolean(r->v8_deopt_inflated));
	err |= put(o, "verdict", json_object_new_string(r->verdict));
	err |= put(o, "roles_guessed", json_object_new_boolean(r->roles_guessed));
	a = json_object_new_array();
	err |= put(o, "notes", a);
	for (size_t i = 0; a && i < r->nnotes; i++)
		err |= append(a, json_object_new_string(r->notes[i]));
	if (!err) {
		const char *s = json_object_to_json_string_ext(
			o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);

		if (!s)
			err = -ENOMEM;
		else if (fprintf(f, "%s\n", s) < 0)
			err = -EIO;
	}
	json_object_put(o);
	return err ? (err == -EIO ? -EIO : -ENOMEM) : 0;
}

/* ---- Loading -------------------------------------------------------------- */

bool crosscheck__is_v8_profile(const struct pprof_profile *p)
{
	const Perftools__Profiles__Profile *pb = pprof_profile__proto(p);

	for (size_t i = 0; i < pb->n_comment; i++)
		if (strstr(pprof_profile__string(p, pb->comment[i]), V8_SOURCE_COMMENT))
			return true;
	return false;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Median of the time deltas in ns, 0 when there are none (or no memory to sort them). */
static int64_t median_delta(const struct v8_cpu_profile *cp)
{
	int64_t *d, m;

	if (!cp->time_deltas || !cp->nsamples)
		return 0;
	d = malloc(cp->nsamples * sizeof(*d));
	if (!d)
		return 0;
	memcpy(d, cp->time_deltas, cp->nsamples * sizeof(*d));
	qsort(d, cp->nsamples, sizeof(*d), cmp_i64);
	m = d[cp->nsamples / 2];
	free(d);
	if (m <= 0 || m > INT64_MAX / 1000)
		return 0;
	return m * 1000;
}

static int load_cpuprofile(const uint8_t *data, size_t len, struct pprof_profile **out,
			   int64_t *median_delta_ns, char *err, size_t errlen)
{
	struct v8_pprof_opts opts = { 0 };
	struct v8_cpu_profile *cp = NULL;
	struct pprof_builder *b = NULL;
	uint8_t *buf = NULL;
	size_t blen = 0;
	int ret;

	ret = v8_cpu_profile__parse((const char *)data, len, &cp, err, errlen);
	if (ret)
		return ret;
	if (median_delta_ns)
		*median_delta_ns = median_delta(cp);
	ret = v8_cpu_profile__to_pprof(cp, &opts, &b);
	if (!ret)
		ret = pprof_builder__serialize(b, false, &buf, &blen);
	if (ret)
		errmsg__set(err, errlen, "converting the .cpuprofile to pprof: %s", strerror(-ret));
	else
		ret = pprof_profile__parse(buf, blen, out, err, errlen);
	free(buf);
	pprof_builder__free(b);
	v8_cpu_profile__free(cp);
	return ret;
}

int crosscheck__load_buffer(const uint8_t *data, size_t len, struct pprof_profile **out,
			    bool *is_v8, int64_t *median_delta_ns, char *err, size_t errlen)
{
	size_t i = 0;
	int ret;

	*out = NULL;
	*is_v8 = false;
	if (median_delta_ns)
		*median_delta_ns = 0;
	if (!len) {
		errmsg__set(err, errlen, "empty file");
		return -EINVAL;
	}
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	if (i < len && data[i] == '{') {
		ret = load_cpuprofile(data, len, out, median_delta_ns, err, errlen);
		*is_v8 = !ret;
		return ret;
	}
	ret = pprof_profile__parse(data, len, out, err, errlen);
	if (!ret)
		*is_v8 = crosscheck__is_v8_profile(*out);
	return ret;
}

static int read_all(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0 || !buf) {
		ret = fd < 0 ? -errno : -ENOMEM;
		goto fail;
	}
	for (;;) {
		ssize_t got;

		if (n == cap) {
			uint8_t *g;

			if (cap >= PPROF_MAX_DECOMPRESSED) {
				ret = -EFBIG;
				goto fail;
			}
			g = realloc(buf, cap * 2);
			if (!g) {
				ret = -ENOMEM;
				goto fail;
			}
			buf = g;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			ret = -errno;
			goto fail;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	*out = buf;
	*len = n;
	return 0;
fail:
	errmsg__set(err, errlen, "%s", ret == -EFBIG ? "file larger than 1 GiB" : strerror(-ret));
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

int crosscheck__load(const char *path, struct pprof_profile **out, bool *is_v8,
		     int64_t *median_delta_ns, char *err, size_t errlen)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int ret;

	*out = NULL;
	*is_v8 = false;
	ret = read_all(path, &data, &len, err, errlen);
	if (ret)
		return ret;
	ret = crosscheck__load_buffer(data, len, out, is_v8, median_delta_ns, err, errlen);
	free(data);
	return ret;
}
