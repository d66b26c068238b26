// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * top: the flat/cum table of a pprof profile, computed the way
 * `go tool pprof -top` computes it, so the two can be compared number for
 * number.  What pprof does, and so what this file does:
 *
 *  - total = sum of |value| over all samples, before any filter; every
 *    percentage is relative to it (no -relative_percentages).
 *  - focus/ignore keep samples with a frame matching focus and none
 *    matching ignore (function name, file name, or the mapping's file).
 *  - Nodes are functions (or function + file:line with lines); cum counts
 *    a sample once per node however often it recurses, flat goes to the
 *    leaf frame.
 *  - Nodes whose |cum| is below 0.5% of the filtered flat sum are dropped
 *    (pprof's nodefraction), and pprof then rebuilds the graph without
 *    them; -top applies no node count unless nodecount is given.
 *  - Order: |flat| desc, name, |cum| desc (cum_sort: |cum|, name, |flat|).
 *  - Values are scaled to one unit chosen from the smallest node and the
 *    total (pprof's "minimum" output unit).
 *  - Names are shown the way pprof's symbolizer leaves them
 *    (top_names__frame()).
 *
 * hide_idle is ours: it filters like --ignore, so percentages stay
 * relative to the unfiltered total.
 *
 * Not reproduced: drop_frames/keep_frames pruning, and symbolizing
 * mappings that have no function information from local binaries.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/pprof_reader.h"
#include "proto/profile_vocab.h"
#include "user/report/top.h"
#include "user/report/top_names.h"
#include "user/report/top_units.h"

/* pprof's defaults for text reports (driver/config.go). */
#define NODE_FRACTION 0.005
#define EDGE_FRACTION 0.001

struct node {
	const char *name;	/* borrowed (profile or frame_name) */
	char *file;		/* cleaned path (--lines only), owned */
	const char *objfile;	/* borrowed; only set for nameless functions */
	int64_t lineno, start_line;
	int64_t flat, cum;
	size_t stamp;		/* last sample (index + 1) that added cum */
	bool in_graph, kept, in_inline, in_noinline;
	char *printable;	/* computed before sorting */
	char *info;		/* pprof's fmt.Sprint(NodeInfo): final tie-break */
};

struct edge {
	uint32_t src, dst;
	int64_t weight;
	size_t stamp;
	bool inline_only;	/* every contribution came from an inlined frame */
};

struct top {
	const struct top_opts *opts;
	const struct pprof_profile *prof;
	int si;
	const char *sample_unit;
	int64_t total;
	size_t *samples;	/* indices of the samples that passed the filters */
	size_t nsamples;
	uint32_t *frame_node;	/* frame id -> node */
	const char **frame_name;	/* frame id -> name as pprof shows it */
	char **frame_name_owned;	/* ... when it differs from the profile's */
	struct node *nodes;
	size_t nnodes, nodes_cap;
	struct index_table node_tab;
	struct edge *edges;
	size_t nedges, edges_cap;
	struct index_table edge_tab;
	bool any_inline;
	bool no_mappings;
	struct pprof_stack st;
	const char *output_unit;	/* pprof's -unit: "minimum" until chosen */
};


/* pprof sums in Go int64, which wraps; wrapping here too keeps UBSan quiet on hostile input. */
static int64_t add_wrap(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? (int64_t)(0 - (uint64_t)v) : v;
}

/* Go converts out-of-range floats without trapping; C must not. */
static int64_t float_to_i64(double v)
{
	if (!(v > -9.2e18))
		return v != v ? 0 : INT64_MIN;
	if (v >= 9.2e18)
		return INT64_MAX;
	return (int64_t)v;
}

static const char *format_value(const struct top *t, int64_t v, char *buf, size_t size)
{
	return top_units__label(v, t->sample_unit, t->output_unit, buf, size);
}

static int name_frames(struct top *t)
{
	size_t n = pprof_profile__frame_count(t->prof);

	t->frame_name = calloc(n ? n : 1, sizeof(*t->frame_name));
	t->frame_name_owned = calloc(n ? n : 1, sizeof(*t->frame_name_owned));
	if (!t->frame_name || !t->frame_name_owned)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct pprof_frame *f = pprof_profile__frame(t->prof, i);
		int err = top_names__frame(f, &t->frame_name_owned[i]);

		if (err)
			return err;
		t->frame_name[i] = t->frame_name_owned[i] ? t->frame_name_owned[i] : f->name;
	}
	return 0;
}

/* Nodes. */

struct node_key {
	const char *name, *file, *objfile;
	int64_t lineno, start_line;
};

static bool node_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct node *n = &((const struct top *)ctx)->nodes[index];
	const struct node_key *k = key;

	return n->lineno == k->lineno && n->start_line == k->start_line &&
	       !strcmp(n->name, k->name) && !strcmp(n->file ? n->file : "", k->file) &&
	       !strcmp(n->objfile, k->objfile);
}

/* The node a frame belongs to: pprof's NodeInfo after its function/line aggregation. */
static int frame_node(struct top *t, const struct pprof_frame *f, uint32_t *out)
{
	struct node_key k = { .name = t->frame_name[f->id], .file = "", .objfile = "" };
	char *file = NULL;
	uint64_t h;
	uint32_t hash;
	struct node *n;
	size_t slot;
	long found;
	int ret = -ENOMEM;

	if (!f->has_function) {
		k.objfile = f->mapping_file;
	} else {
		if (t->opts->lines) {
			const char *trimmed = top_names__trim_path(f->filename);

			k.lineno = f->line;
			if (*trimmed) {
				file = top_names__path_clean(trimmed);
				if (!file)
					return -ENOMEM;
				k.file = file;
			}
		}
		/* pprof keeps the binary and start line only to tell nameless functions apart. */
		if (!*k.name) {
			k.objfile = f->mapping_file;
			k.start_line = f->start_line;
		}
	}
	h = hash__str(HASH_SEED, k.name);
	h = hash__str(h, k.file);
	h = hash__str(h, k.objfile);
	h = hash__word(h, (uint64_t)k.lineno);
	hash = hash__fold32(hash__word(h, (uint64_t)k.start_line));

	if (index_table__reserve(&t->node_tab))
		goto out;
	found = index_table__lookup(&t->node_tab, hash, node_eq, t, &k, &slot);
	if (found >= 0) {
		*out = (uint32_t)found;
		ret = 0;
		goto out;
	}
	if (array_grow(&t->nodes, &t->nodes_cap, t->nnodes + 1))
		goto out;
	n = &t->nodes[t->nnodes];
	*n = (struct node){
		.name = k.name,
		.file = file,
		.objfile = k.objfile,
		.lineno = k.lineno,
		.start_line = k.start_line,
	};
	file = NULL;
	index_table__set(&t->node_tab, slot, hash, (uint32_t)t->nnodes);
	*out = (uint32_t)t->nnodes++;
	ret = 0;
out:
	free(file);
	return ret;
}

static int map_frames(struct top *t)
{
	size_t nframes = pprof_profile__frame_count(t->prof);

	t->frame_node = calloc(nframes ? nframes : 1, sizeof(*t->frame_node));
	if (!t->frame_node)
		return -ENOMEM;
	for (size_t i = 0; i < nframes; i++) {
		const struct pprof_frame *f = pprof_profile__frame(t->prof, i);
		int err = frame_node(t, f, &t->frame_node[i]);

		if (err)
			return err;
		/* Inline edges only exist where a location has several lines. */
		t->any_inline |= f->inlined;
	}
	return 0;
}

/* Filters. */

static bool regex_matches(const regex_t *re, const char *s)
{
	return re && !regexec(re, s, 0, NULL, 0);
}

/*
 * pprof's Location.matchesName, one frame (Line) at a time.  go tool pprof
 * gives a profile without mappings a fake one with an empty file name, so
 * there a pattern matching "" matches every frame.
 */
static bool frame_matches(const struct top *t, const regex_t *re, const struct pprof_frame *f)
{
	if (f->has_function &&
	    (regex_matches(re, t->frame_name[f->id]) || regex_matches(re, f->filename)))
		return true;
	return (f->has_mapping || t->no_mappings) && regex_matches(re, f->mapping_file);
}

static bool is_idle(const struct pprof_stack *st)
{
	return st->n && (!strcmp(st->frames[0]->name, FRAME_NAME_IDLE) ||
			 !strcmp(st->frames[st->n - 1]->name, FRAME_NAME_IDLE));
}

static int select_samples(struct top *t, const regex_t *focus, const regex_t *ignore)
{
	const struct pprof_profile *p = t->prof;
	size_t n = pprof_profile__sample_count(p);
	int64_t total = 0;

	t->no_mappings = !pprof_profile__proto(p)->n_mapping;
	t->samples = calloc(n ? n : 1, sizeof(*t->samples));
	if (!t->samples)
		return -ENOMEM;
	for (size_t s = 0; s < n; s++) {
		bool focused = false, ignored = false;
		const char *class;
		int err;

		total = add_wrap(total, abs64(pprof_profile__value(p, s, (size_t)t->si)));
		err = pprof_profile__stack(p, s, &t->st);
		if (err)
			return err;
		for (size_t i = 0; i < t->st.n && !ignored; i++) {
			const struct pprof_frame *f = t->st.frames[i];

			if (ignore && frame_matches(t, ignore, f))
				ignored = true;
			else if (!focus || frame_matches(t, focus, f))
				focused = true;
		}
		if (ignored || !focused)
			continue;
		if (t->opts->hide_idle) {
			class = pprof_profile__label(p, s, LABEL_CLASS);
			if (is_idle(&t->st) ||
			    (class && !strcmp(class, sample_class__str(CLASS_IDLE))))
				continue;
		}
		t->samples[t->nsamples++] = s;
	}
	t->total = total;
	return 0;
}

/* Graph. */

struct edge_key {
	uint32_t src, dst;
};

static bool edge_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct edge *e = &((const struct top *)ctx)->edges[index];
	const struct edge_key *k = key;

	return e->src == k->src && e->dst == k->dst;
}

static int add_edge(struct top *t, uint32_t src, uint32_t dst, int64_t w, bool inl, size_t stamp)
{
	struct edge_key k = { src, dst };
	uint32_t hash = hash__fold32(hash__word(HASH_SEED, (uint64_t)src << 32 | dst));
	struct edge *e;
	size_t slot;
	long found;

	if (index_table__reserve(&t->edge_tab))
		return -ENOMEM;
	found = index_table__lookup(&t->edge_tab, hash, edge_eq, t, &k, &slot);
	if (found >= 0) {
		e = &t->edges[found];
		/* pprof counts an edge once per sample, like cum. */
		if (e->stamp != stamp) {
			e->stamp = stamp;
			e->weight = add_wrap(e->weight, w);
			if (!inl)
				e->inline_only = false;
		}
		return 0;
	}
	if (array_grow(&t->edges, &t->edges_cap, t->nedges + 1))
		return -ENOMEM;
	t->edges[t->nedges] = (struct edge){ src, dst, w, stamp, inl };
	index_table__set(&t->edge_tab, slot, hash, (uint32_t)t->nedges++);
	return 0;
}

/*
 * pprof's graph.newGraph: with use_kept, frames of nodes not kept are
 * skipped; a sample whose leaf was skipped gives no flat to anyone.
 * *count is the number of nodes in the graph (nonzero flat or cum).
 */
static int build_graph(struct top *t, bool use_kept, size_t *count)
{
	const struct pprof_profile *p = t->prof;

	for (size_t i = 0; i < t->nnodes; i++) {
		t->nodes[i].flat = t->nodes[i].cum = 0;
		t->nodes[i].stamp = 0;
	}
	t->nedges = 0;
	index_table__release(&t->edge_tab);

	for (size_t k = 0; k < t->nsamples; k++) {
		size_t s = t->samples[k];
		int64_t w = pprof_profile__value(p, s, (size_t)t->si);
		long parent = -1;
		bool residual = false;
		int err;

		if (!w)
			continue;
		err = pprof_profile__stack(p, s, &t->st);
		if (err)
			return err;
		for (size_t i = t->st.n; i-- > 0;) {
			const struct pprof_frame *f = t->st.frames[i];
			uint32_t id = t->frame_node[f->id];
			struct node *n = &t->nodes[id];

			if (use_kept && !n->kept) {
				residual = true;
				continue;
			}
			if (n->stamp != k + 1) {
				n->stamp = k + 1;
				n->cum = add_wrap(n->cum, w);
			}
			if (t->any_inline && parent >= 0 && (uint32_t)parent != id) {
				err = add_edge(t, (uint32_t)parent, id, w, f->inlined, k + 1);
				if (err)
					return err;
			}
			parent = id;
			residual = false;
		}
		if (parent >= 0 && !residual)
			t->nodes[parent].flat = add_wrap(t->nodes[parent].flat, w);
	}
	*count = 0;
	for (size_t i = 0; i < t->nnodes; i++) {
		struct node *n = &t->nodes[i];

		n->in_graph = n->flat || n->cum;
		*count += n->in_graph;
	}
	return 0;
}

static int node_strings(struct node *n)
{
	char base[4096], bracketed[4100], line[32] = "";
	const char *extra = "";
	int len;

	if (n->lineno) {
		snprintf(line, sizeof(line), ":%" PRId64, n->lineno);
		extra = n->file ? n->file : "";
	} else if (n->file) {
		extra = n->file;
	} else if (!*n->name) {
		if (*n->objfile) {
			snprintf(bracketed, sizeof(bracketed), "[%s]",
				 top_names__path_base(n->objfile, base, sizeof(base)));
			extra = bracketed;
		} else {
			extra = "<unknown>";
		}
	}
	if (*n->name && (*extra || *line))
		len = asprintf(&n->printable, "%s %s%s", n->name, extra, line);
	else
		len = asprintf(&n->printable, "%s%s%s", n->name, extra, line);
	if (len < 0) {
		n->printable = NULL;
		return -ENOMEM;
	}
	/* {Name OrigName Address File StartLine Lineno Objfile}, as Go prints the struct. */
	len = asprintf(&n->info, "{%s  0 %s %" PRId64 " %" PRId64 " %s}", n->name,
		       n->file ? n->file : "", n->start_line, n->lineno, n->objfile);
	if (len < 0) {
		n->info = NULL;
		return -ENOMEM;
	}
	return 0;
}

static int cmp_abs_desc(int64_t a, int64_t b)
{
	a = abs64(a);
	b = abs64(b);
	return a > b ? -1 : a < b;
}

/* pprof's FlatNameOrder and CumNameOrder. */
static int node_cmp(const void *pa, const void *pb, void *arg)
{
	const struct top *t = arg;
	const struct node *a = &t->nodes[*(const uint32_t *)pa];
	const struct node *b = &t->nodes[*(const uint32_t *)pb];
	bool sort_cum = t->opts->cum_sort;
	int c;

	if ((c = sort_cum ? cmp_abs_desc(a->cum, b->cum) : cmp_abs_desc(a->flat, b->flat)))
		return c;
	if ((c = strcmp(a->printable, b->printable)))
		return c;
	if ((c = sort_cum ? cmp_abs_desc(a->flat, b->flat) : cmp_abs_desc(a->cum, b->cum)))
		return c;
	return strcmp(a->info, b->info);
}

static int sorted_graph(struct top *t, uint32_t **list, size_t *n)
{
	uint32_t *l = calloc(t->nnodes ? t->nnodes : 1, sizeof(*l));
	size_t k = 0;

	if (!l)
		return -ENOMEM;
	for (size_t i = 0; i < t->nnodes; i++) {
		struct node *n = &t->nodes[i];

		if (!n->in_graph)
			continue;
		if (!n->printable && node_strings(n)) {
			free(l);
			return -ENOMEM;
		}
		l[k++] = (uint32_t)i;
	}
	qsort_r(l, k, sizeof(*l), node_cmp, t);
	free(*list);
	*list = l;
	*n = k;
	return 0;
}

/* pprof's Report.selectOutputUnit with the "minimum" unit. */
static void select_output_unit(struct top *t, const uint32_t *list, size_t n)
{
	int64_t min = 0, max = t->total;
	const char *min_unit, *max_unit, *unit;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct node *nd = &t->nodes[list[i]];
		int64_t v = abs64(nd->flat);

		if (!v)
			v = abs64(nd->cum);
		if (v > 0 && (!min || v < min))
			min = v;
	}
	if (!min)
		min = max;
	top_units__scale(min, t->sample_unit, "minimum", &min_unit);
	top_units__scale(max, t->sample_unit, "minimum", &max_unit);
	unit = min_unit;
	/* Scaling the minimum by 100 lets it print as 0.01 of a larger unit. */
	if (strcmp(min_unit, max_unit) && (int64_t)((uint64_t)min * 100) < max)
		top_units__scale((int64_t)((uint64_t)min * 100), t->sample_unit, "minimum", &unit);
	t->output_unit = *unit ? unit : t->sample_unit;
}

static void print_time(FILE *out, int64_t nanos)
{
	time_t secs = (time_t)(nanos / 1000000000);
	struct tm tm;
	char buf[128];

	if (nanos % 1000000000 < 0)
		secs--;
	if (!localtime_r(&secs, &tm) ||
	    !strftime(buf, sizeof(buf), "%b %-d, %Y at %-I:%M%P (%Z)", &tm))
		return;
	fprintf(out, "Time: %s\n", buf);
}

/* pprof merges the profile before showing it, which drops repeated comments. */
static bool comment_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct top *t = ctx;
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(t->prof);

	return !strcmp(pprof_profile__string(t->prof, msg->comment[index]), key);
}

static int print_comments(const struct top *t, FILE *out)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(t->prof);
	struct index_table seen = { 0 };

	for (size_t i = 0; i < msg->n_comment; i++) {
		const char *cm = pprof_profile__string(t->prof, msg->comment[i]);
		uint32_t hash = hash__fold32(hash__str(HASH_SEED, cm));
		size_t slot;

		if (index_table__reserve(&seen)) {
			index_table__release(&seen);
			return -ENOMEM;
		}
		if (index_table__lookup(&seen, hash, comment_eq, t, cm, &slot) >= 0)
			continue;
		index_table__set(&seen, slot, hash, (uint32_t)i);
		if (cm[0] != '#')
			fprintf(out, "%s\n", cm);
	}
	index_table__release(&seen);
	return 0;
}

static int print_header(struct top *t, FILE *out, const uint32_t *list, size_t n,
			size_t orig_count, size_t dropped)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(t->prof);
	const struct pprof_profile *p = t->prof;
	char a[512], b[512], c[600], base[4096];
	int64_t flat_sum = 0;
	const char *type, *focus, *ignore;
	int err;

	if (msg->n_mapping) {
		const char *file = pprof_profile__string(p, msg->mapping[0]->filename);
		const char *build_id = pprof_profile__string(p, msg->mapping[0]->build_id);

		if (*file)
			fprintf(out, "File: %s\n", top_names__path_base(file, base, sizeof(base)));
		if (*build_id)
			fprintf(out, "Build ID: %s\n", build_id);
	}
	err = print_comments(t, out);
	if (err)
		return err;
	type = pprof_profile__sample_type(p, (size_t)t->si, NULL);
	if (*type)
		fprintf(out, "Type: %s\n", type);
	if (msg->time_nanos)
		print_time(out, msg->time_nanos);
	if (msg->duration_nanos) {
		const char *tu;
		double total_ns = top_units__scale(t->total, t->sample_unit, "nanoseconds", &tu);

		c[0] = '\0';
		if (!strcmp(tu, "ns") && total_ns != 0) {
			c[0] = '(';
			top_units__percentage(float_to_i64(total_ns), msg->duration_nanos, c + 1,
				   sizeof(c) - 2);
			strcat(c, ")");
		}
		fprintf(out, "Duration: %s, Total samples = %s %s\n",
			top_units__label(msg->duration_nanos, "nanoseconds", "auto", a, sizeof(a)),
			format_value(t, t->total, b, sizeof(b)), c);
	}
	focus = t->opts->focus ? t->opts->focus->pattern : NULL;
	ignore = t->opts->ignore ? t->opts->ignore->pattern : NULL;
	if (focus || ignore || t->opts->hide_idle) {
		const char *filters[3][2] = {
			{ "focus", focus },
			{ "ignore", ignore },
			{ "hide_idle", t->opts->hide_idle ? "true" : NULL },
		};

		fprintf(out, "Active filters:\n");
		for (size_t i = 0; i < 3; i++) {
			if (!filters[i][1] || !*filters[i][1])
				continue;
			snprintf(base, sizeof(base), "%s=%s", filters[i][0], filters[i][1]);
			/* pprof cuts long filters at 80 bytes. */
			if (strlen(base) > 80)
				strcpy(base + 80, "\xe2\x80\xa6");
			fprintf(out, "   %s\n", base);
		}
	}
	for (size_t i = 0; i < n; i++)
		flat_sum = add_wrap(flat_sum, t->nodes[list[i]].flat);
	top_units__percentage(flat_sum, t->total, c, sizeof(c));
	fprintf(out, "Showing nodes accounting for %s, %s of %s total\n",
		format_value(t, flat_sum, a, sizeof(a)), c + strspn(c, " "),
		format_value(t, t->total, b, sizeof(b)));
	if (!t->total)
		return 0;
	if (dropped)
		fprintf(out, "Dropped %zu node%s (cum <= %s)\n", dropped, dropped > 1 ? "s" : "",
			format_value(t, abs64((int64_t)((double)t->total * NODE_FRACTION)), a,
				     sizeof(a)));
	if (n && n < orig_count)
		fprintf(out, "Showing top %zu nodes out of %zu\n", n, orig_count);
	return 0;
}

/* pprof labels a node "(inline)" when its kept incoming edges all come from inlining. */
static void mark_inline(struct top *t, int64_t edge_cutoff)
{
	for (size_t i = 0; i < t->nnodes; i++)
		t->nodes[i].in_inline = t->nodes[i].in_noinline = false;
	for (size_t i = 0; i < t->nedges; i++) {
		const struct edge *e = &t->edges[i];

		/* Graph.TrimLowFrequencyEdges */
		if (abs64(e->weight) < edge_cutoff)
			continue;
		if (e->inline_only)
			t->nodes[e->dst].in_inline = true;
		else
			t->nodes[e->dst].in_noinline = true;
	}
}

static void print_table(struct top *t, FILE *out, const uint32_t *list, size_t n)
{
	char fv[512], cv[512], fp[400], sp[400], cp[400];
	int64_t sum = 0;

	fprintf(out, "%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum");
	for (size_t i = 0; i < n; i++) {
		const struct node *nd = &t->nodes[list[i]];
		const char *inl = "";

		if (nd->in_inline)
			inl = nd->in_noinline ? " (partial-inline)" : " (inline)";
		sum = add_wrap(sum, nd->flat);
		fprintf(out, "%10s %s %s %10s %s  %s%s\n",
			format_value(t, nd->flat, fv, sizeof(fv)),
			top_units__percentage(nd->flat, t->total, fp, sizeof(fp)),
			top_units__percentage(sum, t->total, sp, sizeof(sp)),
			format_value(t, nd->cum, cv, sizeof(cv)),
			top_units__percentage(nd->cum, t->total, cp, sizeof(cp)), nd->printable, inl);
	}
}

/* pprof's Report.newTrimmedGraph followed by TextItems/printText. */
static int print_report(struct top *t, FILE *out)
{
	size_t count, orig_count, dropped = 0, n = 0;
	int64_t flat_sum = 0, node_cutoff, edge_cutoff;
	uint32_t *list = NULL;
	int err;

	err = map_frames(t);
	if (!err)
		err = build_graph(t, false, &count);
	if (err)
		goto out;
	for (size_t i = 0; i < t->nnodes; i++)
		flat_sum = add_wrap(flat_sum, t->nodes[i].flat);
	/* The cutoffs come from the filtered flat sum; the "Dropped" line from the total. */
	node_cutoff = abs64((int64_t)((double)flat_sum * NODE_FRACTION));
	edge_cutoff = abs64((int64_t)((double)flat_sum * EDGE_FRACTION));

	if (node_cutoff > 0) {
		size_t kept = 0;

		for (size_t i = 0; i < t->nnodes; i++) {
			struct node *nd = &t->nodes[i];

			nd->kept = nd->in_graph && abs64(nd->cum) >= node_cutoff;
			kept += nd->kept;
		}
		if (kept != count) {
			dropped = count - kept;
			err = build_graph(t, true, &count);
			if (err)
				goto out;
		}
	}
	orig_count = count;
	err = sorted_graph(t, &list, &n);
	if (err)
		goto out;
	if (t->opts->nodecount > 0 && (size_t)t->opts->nodecount < n) {
		for (size_t i = 0; i < t->nnodes; i++)
			t->nodes[i].kept = false;
		for (size_t i = 0; i < (size_t)t->opts->nodecount; i++)
			t->nodes[list[i]].kept = true;
		err = build_graph(t, true, &count);
		if (!err)
			err = sorted_graph(t, &list, &n);
		if (err)
			goto out;
	}
	mark_inline(t, edge_cutoff);
	select_output_unit(t, list, n);
	err = print_header(t, out, list, n, orig_count, dropped);
	if (!err)
		print_table(t, out, list, n);
out:
	free(list);
	return err;
}

static void top_release(struct top *t)
{
	for (size_t i = 0; i < t->nnodes; i++) {
		free(t->nodes[i].file);
		free(t->nodes[i].printable);
		free(t->nodes[i].info);
	}
	free(t->nodes);
	index_table__release(&t->node_tab);
	free(t->edges);
	index_table__release(&t->edge_tab);
	free(t->samples);
	free(t->frame_node);
	for (size_t i = 0; t->frame_name_owned && i < pprof_profile__frame_count(t->prof); i++)
		free(t->frame_name_owned[i]);
	free(t->frame_name_owned);
	free(t->frame_name);
	pprof_stack__release(&t->st);
}

/* ---- filters and the whole report ----------------------------------------- */

int top_filter__compile(struct top_filter *f, const char *pattern, char *err, size_t errlen)
{
	int rc;

	memset(f, 0, sizeof(*f));
	f->pattern = pattern;
	if (!pattern || !*pattern)
		return 0;
	rc = regcomp(&f->re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, &f->re, err, errlen);
		return -EINVAL;
	}
	f->compiled = true;
	return 0;
}

void top_filter__release(struct top_filter *f)
{
	if (f->compiled)
		regfree(&f->re);
	f->compiled = false;
}

static const regex_t *filter_re(const struct top_filter *f)
{
	return f && f->compiled ? &f->re : NULL;
}

int top__print(const struct pprof_profile *p, const struct top_opts *opts, FILE *out)
{
	struct top t = {
		.opts = opts,
		.prof = p,
		.si = (int)opts->sample_index,
		.output_unit = "minimum",
	};
	int err;

	pprof_profile__sample_type(p, opts->sample_index, &t.sample_unit);
	err = name_frames(&t);
	if (!err)
		err = select_samples(&t, filter_re(opts->focus), filter_re(opts->ignore));
	if (!err)
		err = print_report(&t, out);
	top_release(&t);
	return err;
}
