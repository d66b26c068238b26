// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof top: the flat/cum table of a pprof profile, computed the way
 * `go tool pprof -top` computes it, so the two can be compared number for
 * number.  What pprof does, and so what this file does:
 *
 *  - total = sum of |value| over all samples, before any filter; every
 *    percentage is relative to it (no -relative_percentages).
 *  - --focus/--ignore keep samples with a frame matching focus and none
 *    matching ignore (function name, file name, or the mapping's file).
 *  - Nodes are functions (or function + file:line with --lines); cum counts
 *    a sample once per node however often it recurses, flat goes to the
 *    leaf frame.
 *  - Nodes whose |cum| is below 0.5% of the filtered flat sum are dropped
 *    (pprof's nodefraction), and pprof then rebuilds the graph without
 *    them; -top applies no node count unless --nodecount is given.
 *  - Order: |flat| desc, name, |cum| desc (--sort cum: |cum|, name, |flat|).
 *  - Values are scaled to one unit chosen from the smallest node and the
 *    total (pprof's "minimum" output unit).
 *  - Names are shown the way pprof's symbolizer leaves them (see
 *    pprof_name()).
 *
 * --hide-idle is ours: it filters like --ignore, so percentages stay
 * relative to the unfiltered total.
 *
 * Not reproduced: drop_frames/keep_frames pruning, and symbolizing
 * mappings that have no function information from local binaries.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <libiberty/demangle.h>

#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "lib/index_table.h"
#include "proto/pprof_reader.h"

/* pprof's defaults for text reports (driver/config.go). */
#define NODE_FRACTION 0.005
#define EDGE_FRACTION 0.001
#define IDLE_FRAME "(idle)"

enum {
	OPT_NODECOUNT = 0x100,
	OPT_SORT,
	OPT_LINES,
	OPT_FOCUS,
	OPT_IGNORE,
	OPT_HIDE_IDLE,
	OPT_SAMPLE_INDEX,
};

struct top_env {
	const char *file;
	long nodecount;		/* 0: no limit */
	bool cum_sort;
	bool lines;
	const char *focus, *ignore;
	bool hide_idle;
	const char *sample_index;
};

struct node {
	const char *name;	/* borrowed (profile or frame_name) */
	char *file;		/* cleaned path (--lines only), owned */
	const char *objfile;	/* borrowed; only set for nameless functions */
	int64_t lineno, start_line;
	uint32_t hash;
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
	const struct top_env *env;
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

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h * 0x100000001b3ULL;
}

static uint32_t hash_fold(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (uint32_t)h;
}

/* Go's filepath.Clean, so --lines keys and prints files exactly like pprof. */
static char *path_clean(const char *path)
{
	size_t n = strlen(path), r = 0, w = 0, dotdot = 0;
	bool rooted = path[0] == '/';
	char *out = malloc(2 * n + 2);

	if (!out)
		return NULL;
	if (rooted) {
		out[w++] = '/';
		r = dotdot = 1;
	}
	while (r < n) {
		if (path[r] == '/') {
			r++;
		} else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
			r++;
		} else if (path[r] == '.' && path[r + 1] == '.' &&
			   (r + 2 == n || path[r + 2] == '/')) {
			r += 2;
			if (w > dotdot) {
				w--;
				while (w > dotdot && out[w] != '/')
					w--;
			} else if (!rooted) {
				if (w > 0)
					out[w++] = '/';
				out[w++] = '.';
				out[w++] = '.';
				dotdot = w;
			}
		} else {
			if ((rooted && w != 1) || (!rooted && w != 0))
				out[w++] = '/';
			for (; r < n && path[r] != '/'; r++)
				out[w++] = path[r];
		}
	}
	if (!w)
		out[w++] = '.';
	out[w] = '\0';
	return out;
}

/* Go's filepath.Base into buf. */
static const char *path_base(const char *path, char *buf, size_t size)
{
	size_t len = strlen(path);
	const char *start;

	if (!len)
		return ".";
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (len == 1 && path[0] == '/')
		return "/";
	start = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			start = path + i + 1;
	len -= (size_t)(start - path);
	snprintf(buf, size, "%.*s", (int)len, start);
	return buf;
}

/* pprof's report.trimPath with no -trim_path/-source_path: the /proc/self/cwd prefixes. */
static const char *trim_path(const char *path)
{
	static const char *const prefixes[] = { "/proc/self/cwd/./", "/proc/self/cwd/" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return path + strlen(prefixes[i]);
	return path;
}

/* Value formatting: a port of pprof's internal/measurement. */

struct unit {
	const char *name;
	const char *aliases[4];
	double factor;
};

struct unit_type {
	const struct unit *units;
	size_t n;
	struct unit def;
};

static const struct unit byte_units[] = {
	{ "B", { "b", "byte" }, 1 },
	{ "kB", { "kb", "kbyte", "kilobyte" }, 1024.0 },
	{ "MB", { "mb", "mbyte", "megabyte" }, 1048576.0 },
	{ "GB", { "gb", "gbyte", "gigabyte" }, 1073741824.0 },
	{ "TB", { "tb", "tbyte", "terabyte" }, 1099511627776.0 },
	{ "PB", { "pb", "pbyte", "petabyte" }, 1125899906842624.0 },
};

static const struct unit time_units[] = {
	{ "ns", { "ns", "nanosecond" }, 1 },
	{ "us", { "\xce\xbcs", "us", "microsecond" }, 1e3 },
	{ "ms", { "ms", "millisecond" }, 1e6 },
	{ "s", { "s", "sec", "second" }, 1e9 },
	{ "hrs", { "hour", "hr" }, 3600e9 },
};

static const struct unit gcu_units[] = {
	{ "n*GCU", { "nanogcu" }, 1e-9 },
	{ "u*GCU", { "microgcu" }, 1e-6 },
	{ "m*GCU", { "milligcu" }, 1e-3 },
	{ "GCU", { "gcu" }, 1 },
	{ "k*GCU", { "kilogcu" }, 1e3 },
	{ "M*GCU", { "megagcu" }, 1e6 },
	{ "G*GCU", { "gigagcu" }, 1e9 },
	{ "T*GCU", { "teragcu" }, 1e12 },
	{ "P*GCU", { "petagcu" }, 1e15 },
};

#ifndef ARRAY_SIZE	/* libiberty.h has one */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

static const struct unit_type unit_types[] = {
	{ byte_units, ARRAY_SIZE(byte_units), { "B", { "b", "byte" }, 1 } },
	{ time_units, ARRAY_SIZE(time_units), { "s", { NULL }, 1e9 } },
	{ gcu_units, ARRAY_SIZE(gcu_units), { "GCU", { NULL }, 1 } },
};

static const struct unit *sniff_unit(const struct unit_type *ut, const char *unit)
{
	char low[64];
	size_t len = strlen(unit);

	if (len >= sizeof(low))
		return NULL;
	for (size_t i = 0; i <= len; i++)
		low[i] = unit[i] >= 'A' && unit[i] <= 'Z' ? (char)(unit[i] - 'A' + 'a') : unit[i];
	if (len > 2 && low[len - 1] == 's')
		low[len - 1] = '\0';
	for (size_t i = 0; i < ut->n; i++) {
		const char *const *alias = ut->units[i].aliases;

		for (size_t j = 0; j < ARRAY_SIZE(ut->units[i].aliases) && alias[j]; j++)
			if (!strcmp(low, alias[j]))
				return &ut->units[i];
	}
	return NULL;
}

static bool convert_unit(const struct unit_type *ut, int64_t value, const char *from,
			 const char *to, double *v, const char **u)
{
	const struct unit *fu = sniff_unit(ut, from), *tu;

	if (!fu)
		return false;
	*v = (double)value * fu->factor;
	if (!strcmp(to, "minimum") || !strcmp(to, "auto")) {
		double f = 0;
		const char *best = NULL;

		for (size_t i = 0; i < ut->n; i++) {
			if (ut->units[i].factor >= f && *v / ut->units[i].factor >= 1.0) {
				f = ut->units[i].factor;
				best = ut->units[i].name;
			}
		}
		if (best) {
			*v /= f;
			*u = best;
			return true;
		}
		*v /= ut->def.factor;
		*u = ut->def.name;
		return true;
	}
	tu = sniff_unit(ut, to);
	if (!tu) {
		*v /= ut->def.factor;
		*u = ut->def.name;
		return true;
	}
	*v /= tu->factor;
	*u = tu->name;
	return true;
}

static double scale(int64_t value, const char *from, const char *to, const char **unit)
{
	static const char *const plain[] = { "count", "sample", "unit", "minimum", "auto" };
	double v;

	if (value < 0 && value != INT64_MIN)
		return -scale(-value, from, to, unit);
	for (size_t i = 0; i < ARRAY_SIZE(unit_types); i++)
		if (convert_unit(&unit_types[i], value, from, to, &v, unit))
			return v;
	*unit = to;
	for (size_t i = 0; i < ARRAY_SIZE(plain); i++)
		if (!strcmp(to, plain[i]))
			*unit = "";
	return (double)value;
}

static const char *scaled_label(int64_t value, const char *from, const char *to, char *buf,
				size_t size)
{
	const char *unit;
	double v = scale(value, from, to, &unit);
	char num[400];
	size_t len;

	snprintf(num, sizeof(num), "%.2f", v);
	len = strlen(num);
	if (len > 3 && !strcmp(num + len - 3, ".00"))
		num[len - 3] = '\0';
	if (!strcmp(num, "0") || !strcmp(num, "-0"))
		unit = "";
	snprintf(buf, size, "%s%s", num, unit);
	return buf;
}

static const char *percentage(int64_t value, int64_t total, char *buf, size_t size)
{
	double ratio = 0;

	if (total)
		ratio = fabs((double)value / (double)total) * 100;
	if (ratio >= 99.95 && ratio <= 100.05)
		snprintf(buf, size, "  100%%");
	else if (ratio >= 1.0)
		snprintf(buf, size, "%5.2f%%", ratio);
	else
		snprintf(buf, size, "%5.2g%%", ratio);
	return buf;
}

static const char *format_value(const struct top *t, int64_t v, char *buf, size_t size)
{
	return scaled_label(v, t->sample_unit, t->output_unit, buf, size);
}

/*
 * Function names as pprof shows them.  go tool pprof "demangles" every
 * function whose name is empty or equal to its system name: a mangled
 * C++ name is demangled without parameters or template arguments, and a
 * name that looks like demangled C++ loses its (...) and <...> groups
 * (symbolizer.demangleSingleFunction).  Mangled names go through
 * libiberty here, Go's demangler there; the two agree on the 45k symbols
 * of libstdc++, libLLVM and node we compared.  Rust names are left alone.
 */

/* Go's symbolizer.removeMatching: drop nested start..end groups; stop at a mismatch. */
static void remove_matching(char *name, char start, char end)
{
	size_t cur = 0, first = 0;
	int nesting = 0;

	while (name[cur]) {
		if (name[cur] == start) {
			if (++nesting == 1)
				first = cur;
		} else if (name[cur] == end) {
			if (--nesting < 0)
				return;
			if (!nesting) {
				memmove(name + first, name + cur + 1, strlen(name + cur + 1) + 1);
				cur = first;
				continue;
			}
		}
		cur++;
	}
}

static bool looks_like_demangled_cpp(const char *s)
{
	if (strstr(s, ".<") || strstr(s, "]).")) /* Java "class.<init>", Go "(*T[...]).M" */
		return false;
	return strpbrk(s, "<>[]") || strstr(s, "::");
}

/* Template argument lists out of a demangled name; operator<, operator<< stay. */
static void strip_templates(char *s)
{
	size_t w = 0, depth = 0;

	for (size_t r = 0; s[r]; r++) {
		if (s[r] == '<' && !depth && r >= 8 && !strncmp(s + r - 8, "operator", 8)) {
			s[w++] = s[r];
			if (s[r + 1] == '<' || s[r + 1] == '=')
				s[w++] = s[++r];
			continue;
		}
		if (s[r] == '<') {
			/* libiberty separates "operator<< <T>" with a space Go does not print */
			if (!depth++ && w && s[w - 1] == ' ')
				w--;
			continue;
		}
		if (s[r] == '>' && depth) {
			depth--;
			continue;
		}
		if (!depth)
			s[w++] = s[r];
	}
	s[w] = '\0';
}

/* NULL when pprof shows the name unchanged; otherwise a malloc()ed name, or -ENOMEM. */
static int pprof_name(const struct pprof_frame *f, char **out)
{
	char *d;

	*out = NULL;
	if (!f->has_function || (*f->name && strcmp(f->name, f->system_name)))
		return 0;
	if (!strncmp(f->system_name, "_Z", 2)) {
		d = cplus_demangle(f->system_name, 0);
		if (d) {
			strip_templates(d);
			if (strcmp(d, f->system_name)) {
				*out = d;
				return 0;
			}
			free(d);
		}
	}
	if (!looks_like_demangled_cpp(f->system_name)) {
		if (!strcmp(f->name, f->system_name))
			return 0;
		*out = strdup(f->system_name);	/* empty name: pprof shows the system name */
		return *out ? 0 : -ENOMEM;
	}
	d = strdup(f->system_name);
	if (!d)
		return -ENOMEM;
	remove_matching(d, '(', ')');
	remove_matching(d, '<', '>');
	if (!strcmp(d, f->name)) {
		free(d);
		return 0;
	}
	*out = d;
	return 0;
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
		int err = pprof_name(f, &t->frame_name_owned[i]);

		if (err)
			return err;
		t->frame_name[i] = t->frame_name_owned[i] ? t->frame_name_owned[i] : f->name;
	}
	return 0;
}

/* Nodes. */

static bool node_eq(const struct node *n, const char *name, const char *file,
		    const char *objfile, int64_t lineno, int64_t start_line)
{
	return n->lineno == lineno && n->start_line == start_line && !strcmp(n->name, name) &&
	       !strcmp(n->file ? n->file : "", file) && !strcmp(n->objfile, objfile);
}

/* The node a frame belongs to: pprof's NodeInfo after its function/line aggregation. */
static int frame_node(struct top *t, const struct pprof_frame *f, uint32_t *out)
{
	const char *name = t->frame_name[f->id], *objfile = "";
	int64_t lineno = 0, start_line = 0;
	char *file = NULL;
	uint64_t h = 0xcbf29ce484222325ULL;
	uint32_t hash;
	struct node *n;
	size_t i;
	int ret = -ENOMEM;

	if (!f->has_function) {
		objfile = f->mapping_file;
	} else {
		if (t->env->lines) {
			const char *trimmed = trim_path(f->filename);

			lineno = f->line;
			if (*trimmed) {
				file = path_clean(trimmed);
				if (!file)
					return -ENOMEM;
			}
		}
		/* pprof keeps the binary and start line only to tell nameless functions apart. */
		if (!*name) {
			objfile = f->mapping_file;
			start_line = f->start_line;
		}
	}
	h = hash_str(h, name);
	h = hash_str(h, file ? file : "");
	h = hash_str(h, objfile);
	h ^= (uint64_t)lineno * 0x9e3779b97f4a7c15ULL;
	h ^= (uint64_t)start_line * 0xc2b2ae3d27d4eb4fULL;
	hash = hash_fold(h);

	if (index_table__reserve(&t->node_tab))
		goto out;
	for (i = hash & t->node_tab.mask; t->node_tab.idx1[i]; i = (i + 1) & t->node_tab.mask) {
		n = &t->nodes[t->node_tab.idx1[i] - 1];
		if (t->node_tab.hash[i] == hash &&
		    node_eq(n, name, file ? file : "", objfile, lineno, start_line)) {
			*out = t->node_tab.idx1[i] - 1;
			ret = 0;
			goto out;
		}
	}
	if (t->nnodes == t->nodes_cap) {
		size_t ncap = t->nodes_cap ? t->nodes_cap * 2 : 256;
		struct node *nn = realloc(t->nodes, ncap * sizeof(*nn));

		if (!nn)
			goto out;
		t->nodes = nn;
		t->nodes_cap = ncap;
	}
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = name;
	n->file = file;
	file = NULL;
	n->objfile = objfile;
	n->lineno = lineno;
	n->start_line = start_line;
	n->hash = hash;
	t->node_tab.idx1[i] = (uint32_t)t->nnodes + 1;
	t->node_tab.hash[i] = hash;
	t->node_tab.count++;
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
	return st->n && (!strcmp(st->frames[0]->name, IDLE_FRAME) ||
			 !strcmp(st->frames[st->n - 1]->name, IDLE_FRAME));
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
		if (t->env->hide_idle) {
			class = pprof_profile__label(p, s, "class");
			if (is_idle(&t->st) || (class && !strcmp(class, "idle")))
				continue;
		}
		t->samples[t->nsamples++] = s;
	}
	t->total = total;
	return 0;
}

/* Graph. */

static int add_edge(struct top *t, uint32_t src, uint32_t dst, int64_t w, bool inl, size_t stamp)
{
	uint32_t hash = hash_fold(((uint64_t)src << 32 | dst) * 0x9e3779b97f4a7c15ULL);
	struct edge *e;
	size_t i;

	if (index_table__reserve(&t->edge_tab))
		return -ENOMEM;
	for (i = hash & t->edge_tab.mask; t->edge_tab.idx1[i]; i = (i + 1) & t->edge_tab.mask) {
		e = &t->edges[t->edge_tab.idx1[i] - 1];
		if (e->src == src && e->dst == dst) {
			/* pprof counts an edge once per sample, like cum. */
			if (e->stamp != stamp) {
				e->stamp = stamp;
				e->weight = add_wrap(e->weight, w);
				if (!inl)
					e->inline_only = false;
			}
			return 0;
		}
	}
	if (t->nedges == t->edges_cap) {
		size_t ncap = t->edges_cap ? t->edges_cap * 2 : 256;
		struct edge *ne = realloc(t->edges, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		t->edges = ne;
		t->edges_cap = ncap;
	}
	t->edges[t->nedges] = (struct edge){ src, dst, w, stamp, inl };
	t->edge_tab.idx1[i] = (uint32_t)t->nedges + 1;
	t->edge_tab.hash[i] = hash;
	t->edge_tab.count++;
	t->nedges++;
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
				 path_base(n->objfile, base, sizeof(base)));
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
	bool sort_cum = t->env->cum_sort;
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
	scale(min, t->sample_unit, "minimum", &min_unit);
	scale(max, t->sample_unit, "minimum", &max_unit);
	unit = min_unit;
	/* Scaling the minimum by 100 lets it print as 0.01 of a larger unit. */
	if (strcmp(min_unit, max_unit) && (int64_t)((uint64_t)min * 100) < max)
		scale((int64_t)((uint64_t)min * 100), t->sample_unit, "minimum", &unit);
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
static int print_comments(const struct top *t, FILE *out)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(t->prof);
	struct index_table seen = { 0 };

	for (size_t i = 0; i < msg->n_comment; i++) {
		const char *cm = pprof_profile__string(t->prof, msg->comment[i]);
		uint32_t hash = hash_fold(hash_str(0xcbf29ce484222325ULL, cm));
		size_t k;

		if (index_table__reserve(&seen)) {
			index_table__release(&seen);
			return -ENOMEM;
		}
		for (k = hash & seen.mask; seen.idx1[k]; k = (k + 1) & seen.mask) {
			int64_t other = msg->comment[seen.idx1[k] - 1];

			if (seen.hash[k] == hash &&
			    !strcmp(pprof_profile__string(t->prof, other), cm))
				break;
		}
		if (seen.idx1[k])
			continue;
		seen.idx1[k] = (uint32_t)i + 1;
		seen.hash[k] = hash;
		seen.count++;
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
	const char *type;
	int err;

	if (msg->n_mapping) {
		const char *file = pprof_profile__string(p, msg->mapping[0]->filename);
		const char *build_id = pprof_profile__string(p, msg->mapping[0]->build_id);

		if (*file)
			fprintf(out, "File: %s\n", path_base(file, base, sizeof(base)));
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
		double total_ns = scale(t->total, t->sample_unit, "nanoseconds", &tu);

		c[0] = '\0';
		if (!strcmp(tu, "ns") && total_ns != 0) {
			c[0] = '(';
			percentage(float_to_i64(total_ns), msg->duration_nanos, c + 1,
				   sizeof(c) - 2);
			strcat(c, ")");
		}
		fprintf(out, "Duration: %s, Total samples = %s %s\n",
			scaled_label(msg->duration_nanos, "nanoseconds", "auto", a, sizeof(a)),
			format_value(t, t->total, b, sizeof(b)), c);
	}
	if (t->env->focus || t->env->ignore || t->env->hide_idle) {
		const char *filters[3][2] = {
			{ "focus", t->env->focus },
			{ "ignore", t->env->ignore },
			{ "hide_idle", t->env->hide_idle ? "true" : NULL },
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
	percentage(flat_sum, t->total, c, sizeof(c));
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
			percentage(nd->flat, t->total, fp, sizeof(fp)),
			percentage(sum, t->total, sp, sizeof(sp)),
			format_value(t, nd->cum, cv, sizeof(cv)),
			percentage(nd->cum, t->total, cp, sizeof(cp)), nd->printable, inl);
	}
}

/* pprof's Report.newTrimmedGraph followed by TextItems/printText. */
static int top__run(struct top *t, FILE *out)
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
	if (t->env->nodecount > 0 && (size_t)t->env->nodecount < n) {
		for (size_t i = 0; i < t->nnodes; i++)
			t->nodes[i].kept = false;
		for (size_t i = 0; i < (size_t)t->env->nodecount; i++)
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

static void top__release(struct top *t)
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

/* Command line. */

static const struct argp_option top_options[] = {
	{ "nodecount", OPT_NODECOUNT, "N", 0,
	  "Show at most N nodes (default: all above the cutoff)", 0 },
	{ "sort", OPT_SORT, "flat|cum", 0, "Sort by flat (default) or cumulative value", 0 },
	{ "lines", OPT_LINES, NULL, 0, "One node per source line instead of per function", 0 },
	{ "focus", OPT_FOCUS, "RE", 0,
	  "Keep samples with a frame matching RE (extended regex)", 0 },
	{ "ignore", OPT_IGNORE, "RE", 0, "Drop samples with a frame matching RE", 0 },
	{ "hide-idle", OPT_HIDE_IDLE, NULL, 0,
	  "Drop samples whose root or leaf frame is " IDLE_FRAME " or labelled class=idle", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "NAME", 0,
	  "Sample type to show, by name or index (default: the profile's default, else the last)",
	  0 },
	{ 0 },
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_env *env = state->input;

	switch (key) {
	case OPT_NODECOUNT:
		if (options__long(arg, 0, LONG_MAX, &env->nodecount))
			argp_error(state, "--nodecount must be a non-negative integer, not '%s'",
				   arg);
		break;
	case OPT_SORT:
		if (!strcmp(arg, "cum"))
			env->cum_sort = true;
		else if (!strcmp(arg, "flat"))
			env->cum_sort = false;
		else
			argp_error(state, "--sort must be flat or cum, not '%s'", arg);
		break;
	case OPT_LINES:
		env->lines = true;
		break;
	case OPT_FOCUS:
		env->focus = arg;
		break;
	case OPT_IGNORE:
		env->ignore = arg;
		break;
	case OPT_HIDE_IDLE:
		env->hide_idle = true;
		break;
	case OPT_SAMPLE_INDEX:
		env->sample_index = arg;
		break;
	case ARGP_KEY_ARG:
	case ARGP_KEY_END:
		options__profile_file(key, arg, state, &env->file);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int compile_re(regex_t *re, const char *pattern, const char *what)
{
	char msg[256];
	int rc;

	if (!pattern || !*pattern)
		return 0;
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (!rc)
		return 1;
	regerror(rc, re, msg, sizeof(msg));
	fprintf(stderr, "isoprof: top: bad --%s regex '%s': %s\n", what, pattern, msg);
	return -1;
}

int cmd_top(int argc, char **argv)
{
	static const struct argp argp = {
		.options = top_options,
		.parser = top_parse,
		.args_doc = "FILE",
		.doc = "Print the functions of a pprof profile by flat (self) and cumulative "
		       "value, like `go tool pprof -top`.",
	};
	struct top_env env = { 0 };
	struct top t = { .env = &env };
	struct pprof_profile *prof = NULL;
	regex_t focus, ignore;
	int have_focus = 0, have_ignore = 0, err, ret = 1;
	char msg[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	have_focus = compile_re(&focus, env.focus, "focus");
	if (have_focus >= 0)
		have_ignore = compile_re(&ignore, env.ignore, "ignore");
	if (have_focus < 0 || have_ignore < 0) {
		ret = 2;
		goto out;
	}

	err = pprof_profile__read_file(env.file, &prof, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, msg);
		goto out;
	}
	t.prof = prof;
	t.si = pprof_profile__sample_index(prof, env.sample_index, msg, sizeof(msg));
	if (t.si < 0) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, msg);
		ret = 2;
		goto out;
	}
	pprof_profile__sample_type(prof, (size_t)t.si, &t.sample_unit);
	t.output_unit = "minimum";

	err = name_frames(&t);
	if (!err)
		err = select_samples(&t, have_focus > 0 ? &focus : NULL,
				     have_ignore > 0 ? &ignore : NULL);
	if (!err)
		err = top__run(&t, stdout);
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, strerror(-err));
		goto out;
	}
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "isoprof: top: writing output: %s\n", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	top__release(&t);
	pprof_profile__free(prof);
	if (have_focus > 0)
		regfree(&focus);
	if (have_ignore > 0)
		regfree(&ignore);
	return ret;
}
