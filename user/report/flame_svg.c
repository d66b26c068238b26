// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The tree is built once over all samples, then walked twice with an
 * explicit stack (profiles can hold stacks deeper than the C stack is
 * comfortable with): the first walk finds the depth of what will be drawn,
 * which sizes the document, the second writes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "user/report/flame_svg.h"
#include "lib/index_table.h"
#include "proto/pprof_reader.h"

#define ROW_H 16
#define FONT_PX 12
#define CHAR_W 7.2		/* monospace advance at FONT_PX, for cutting labels */
#define PAD_X 10
#define TOP_H 56
#define BOTTOM_H 30
#define NO_NODE UINT32_MAX

struct func {
	const char *name;	/* borrowed from the profile, or owned below */
	char *owned;
	const char *file;
	int64_t line;
	const char *kind;
	uint32_t hash;
};

struct fnode {
	uint32_t func;		/* NO_NODE for the root */
	uint32_t parent, child, sibling;
	uint32_t depth;
	double cum, self;
};

struct flame {
	const struct pprof_profile *prof;
	struct func *funcs;
	size_t nfuncs, funcs_cap;
	struct index_table func_tab;
	uint32_t *frame_func;
	struct fnode *nodes;
	size_t nnodes, nodes_cap;
	struct index_table node_tab;
	double total;
	size_t samples;
};

static uint32_t hash_bytes(uint32_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static uint32_t mix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	h *= 0x846ca68bu;
	h ^= h >> 16;
	return h;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* Same rules as kindOf() in user/report/web/pprof.js. */
const char *flame_svg__kind(const char *name, const char *filename, const char *mapping_file)
{
	static const char *const v8_prefixes[] = {
		"Builtins_", "Builtin:", "BytecodeHandler:", "Stub:", "Handler:", "RegExp",
		"v8::", "Bytecode_", "Bytecodes_",
	};
	size_t n = strlen(name);

	if (!strncmp(mapping_file, "[kernel", 7))
		return "kernel";
	if (!*mapping_file && n >= 2 && name[0] == '(' && name[n - 1] == ')')
		return "synthetic";
	if (!strncmp(name, "[unknown]", 9) || !strncmp(name, "[jit]", 5))
		return "unknown";
	for (size_t i = 0; i < sizeof(v8_prefixes) / sizeof(v8_prefixes[0]); i++)
		if (!strncmp(name, v8_prefixes[i], strlen(v8_prefixes[i])))
			return "v8";
	return *filename ? "js" : "native";
}

/* Functions: frames merged by displayed name and file, as pprof's views merge them. */
static int intern_frames(struct flame *fl)
{
	size_t nframes = pprof_profile__frame_count(fl->prof);

	fl->frame_func = calloc(nframes ? nframes : 1, sizeof(*fl->frame_func));
	if (!fl->frame_func)
		return -ENOMEM;
	for (size_t i = 0; i < nframes; i++) {
		const struct pprof_frame *f = pprof_profile__frame(fl->prof, i);
		const char *name = *f->name ? f->name : f->system_name;
		char *owned = NULL;
		uint32_t h;
		size_t k;

		if (!*name) {
			const char *m = *f->mapping_file ? base_name(f->mapping_file) : "unknown";

			owned = malloc(strlen(m) + 3);
			if (!owned)
				return -ENOMEM;
			sprintf(owned, "[%s]", m);
			name = owned;
		}
		h = mix(hash_bytes(hash_bytes(2166136261u, name) * 31u, f->filename));
		if (index_table__reserve(&fl->func_tab)) {
			free(owned);
			return -ENOMEM;
		}
		for (k = h & fl->func_tab.mask; fl->func_tab.idx1[k]; k = (k + 1) & fl->func_tab.mask) {
			const struct func *g = &fl->funcs[fl->func_tab.idx1[k] - 1];

			if (fl->func_tab.hash[k] == h && !strcmp(g->name, name) &&
			    !strcmp(g->file, f->filename))
				break;
		}
		if (fl->func_tab.idx1[k]) {
			free(owned);
			fl->frame_func[i] = fl->func_tab.idx1[k] - 1;
			continue;
		}
		if (fl->nfuncs == fl->funcs_cap) {
			size_t cap = fl->funcs_cap ? fl->funcs_cap * 2 : 256;
			struct func *nf = realloc(fl->funcs, cap * sizeof(*nf));

			if (!nf) {
				free(owned);
				return -ENOMEM;
			}
			fl->funcs = nf;
			fl->funcs_cap = cap;
		}
		fl->funcs[fl->nfuncs] = (struct func){
			.name = name,
			.owned = owned,
			.file = f->filename,
			.line = f->start_line ? f->start_line : f->line,
			.kind = flame_svg__kind(name, f->filename, f->mapping_file),
			.hash = h,
		};
		fl->func_tab.idx1[k] = (uint32_t)fl->nfuncs + 1;
		fl->func_tab.hash[k] = h;
		fl->func_tab.count++;
		fl->frame_func[i] = (uint32_t)fl->nfuncs++;
	}
	return 0;
}

static int add_node(struct flame *fl, uint32_t parent, uint32_t func, uint32_t *out)
{
	if (fl->nnodes == fl->nodes_cap) {
		size_t cap = fl->nodes_cap ? fl->nodes_cap * 2 : 1024;
		struct fnode *nn;

		if (cap >= UINT32_MAX)
			return -ENOMEM;
		nn = realloc(fl->nodes, cap * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		fl->nodes = nn;
		fl->nodes_cap = cap;
	}
	fl->nodes[fl->nnodes] = (struct fnode){
		.func = func,
		.parent = parent,
		.child = NO_NODE,
		.sibling = parent == NO_NODE ? NO_NODE : fl->nodes[parent].child,
		.depth = parent == NO_NODE ? 0 : fl->nodes[parent].depth + 1,
	};
	if (parent != NO_NODE)
		fl->nodes[parent].child = (uint32_t)fl->nnodes;
	*out = (uint32_t)fl->nnodes++;
	return 0;
}

static int child_of(struct flame *fl, uint32_t parent, uint32_t func, uint32_t *out)
{
	uint32_t h = mix(parent * 0x9e3779b1u ^ mix(func + 1));
	size_t k;
	int err;

	err = index_table__reserve(&fl->node_tab);
	if (err)
		return err;
	for (k = h & fl->node_tab.mask; fl->node_tab.idx1[k]; k = (k + 1) & fl->node_tab.mask) {
		const struct fnode *n = &fl->nodes[fl->node_tab.idx1[k] - 1];

		if (fl->node_tab.hash[k] == h && n->parent == parent && n->func == func) {
			*out = fl->node_tab.idx1[k] - 1;
			return 0;
		}
	}
	err = add_node(fl, parent, func, out);
	if (err)
		return err;
	fl->node_tab.idx1[k] = *out + 1;
	fl->node_tab.hash[k] = h;
	fl->node_tab.count++;
	return 0;
}

static int build_tree(struct flame *fl, size_t si)
{
	struct pprof_stack st = { 0 };
	size_t n = pprof_profile__sample_count(fl->prof);
	uint32_t root;
	int err;

	err = add_node(fl, NO_NODE, NO_NODE, &root);
	for (size_t s = 0; !err && s < n; s++) {
		int64_t raw = pprof_profile__value(fl->prof, s, si);
		double v = fabs((double)raw);
		uint32_t node = root;

		if (!v)
			continue;
		err = pprof_profile__stack(fl->prof, s, &st);
		if (err)
			break;
		fl->total += v;
		fl->samples++;
		fl->nodes[root].cum += v;
		for (size_t i = st.n; i-- > 0;) {
			err = child_of(fl, node, fl->frame_func[st.frames[i]->id], &node);
			if (err)
				break;
			fl->nodes[node].cum += v;
		}
		fl->nodes[node].self += v;
	}
	pprof_stack__release(&st);
	return err;
}

/* ---- text --------------------------------------------------------------- */

/* Next code point of s (advancing *len bytes), U+FFFD for what is not valid UTF-8. */
static uint32_t utf8_next(const unsigned char *s, size_t *len)
{
	uint32_t c = s[0], min;
	size_t n;

	*len = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0xfffd;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0xfffd;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0xfffd;
	*len = n;
	return c;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0, len;

	for (const unsigned char *p = (const unsigned char *)s; *p; p += len, n++)
		utf8_next(p, &len);
	return n;
}

/* XML character data: escaped, valid UTF-8, at most max code points (then ".."). */
static void xml_text(FILE *out, const char *s, size_t max)
{
	size_t total = utf8_chars(s), n = 0, len;
	bool cut = total > max;

	for (const unsigned char *p = (const unsigned char *)s; *p; p += len, n++) {
		uint32_t c = utf8_next(p, &len);

		if (cut && n + 2 >= max)
			break;
		switch (c) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((c < 0x20 && c != '\t') || c == 0xfffe || c == 0xffff || c == 0xfffd)
				fputs("\xef\xbf\xbd", out);
			else
				fwrite(p, 1, len, out);
		}
	}
	if (cut)
		fputs("..", out);
}

/* ---- values and colours ------------------------------------------------- */

static bool unit_is(const char *unit, const char *const *names)
{
	for (; *names; names++)
		if (!strcasecmp(unit, *names))
			return true;
	return false;
}

static void trim_zeros(char *s)
{
	char *dot = strchr(s, '.');
	size_t n;

	if (!dot)
		return;
	n = strlen(s);
	while (n > 0 && s[n - 1] == '0')
		s[--n] = '\0';
	if (n > 0 && s[n - 1] == '.')
		s[--n] = '\0';
}

static const char *fmt_value(double v, const char *unit, char *buf, size_t size)
{
	static const char *const ns[] = { "nanoseconds", "nanosecond", "ns", NULL };
	static const char *const bytes[] = { "bytes", "byte", "b", NULL };
	char num[40];

	if (unit_is(unit, ns)) {
		static const struct { double f; const char *u; } t[] = {
			{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "\xc2\xb5s" }, { 1, "ns" },
		};
		size_t i = 0;

		while (i < 3 && fabs(v) < t[i].f)
			i++;
		snprintf(num, sizeof(num), "%.2f", v / t[i].f);
		trim_zeros(num);
		snprintf(buf, size, "%s %s", num, t[i].u);
	} else if (unit_is(unit, bytes)) {
		static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
		size_t i = 0;

		while (i < 4 && fabs(v) >= 1024) {
			v /= 1024;
			i++;
		}
		snprintf(num, sizeof(num), "%.2f", v);
		trim_zeros(num);
		snprintf(buf, size, "%s %s", num, u[i]);
	} else {
		snprintf(buf, size, "%.0f%s%s", v, strcmp(unit, "count") && *unit ? " " : "",
			 strcmp(unit, "count") ? unit : "");
	}
	return buf;
}

struct hsl {
	const char *kind;
	double h, s, l;
};

/* The page's palette (user/report/web/flame.js PALETTE). */
static const struct hsl palette[] = {
	{ "js", 88, 55, 52 },	   { "v8", 36, 85, 58 },	{ "native", 12, 70, 62 },
	{ "kernel", 205, 60, 62 }, { "synthetic", 0, 0, 72 }, { "unknown", 270, 25, 72 },
	{ "root", 220, 10, 82 },
};

static const struct hsl *palette_of(const char *kind)
{
	for (size_t i = 0; i < sizeof(palette) / sizeof(palette[0]); i++)
		if (!strcmp(palette[i].kind, kind))
			return &palette[i];
	return &palette[2];
}

static double hue_part(double p, double q, double t)
{
	if (t < 0)
		t += 1;
	if (t > 1)
		t -= 1;
	if (t < 1.0 / 6)
		return p + (q - p) * 6 * t;
	if (t < 0.5)
		return q;
	if (t < 2.0 / 3)
		return p + (q - p) * (2.0 / 3 - t) * 6;
	return p;
}

static void color(char *buf, size_t size, const char *kind, uint32_t h)
{
	const struct hsl *c = palette_of(kind);
	double hue = c->h, s = c->s / 100, l = c->l / 100, q, p, r, g, b;

	if (strcmp(kind, "synthetic"))
		hue += ((double)(h & 0xff) / 255 - 0.5) * 16;
	l += ((double)((h >> 8) & 0xff) / 255 - 0.5) * 0.12;
	hue = fmod(hue + 360, 360) / 360;
	q = l < 0.5 ? l * (1 + s) : l + s - l * s;
	p = 2 * l - q;
	r = hue_part(p, q, hue + 1.0 / 3);
	g = hue_part(p, q, hue);
	b = hue_part(p, q, hue - 1.0 / 3);
	snprintf(buf, size, "#%02x%02x%02x", (int)lround(r * 255), (int)lround(g * 255),
		 (int)lround(b * 255));
}

/* ---- layout and output -------------------------------------------------- */

struct item {
	uint32_t node;
	double x;
};

static int cmp_children(const void *a, const void *b, void *arg)
{
	const struct flame *fl = arg;
	const struct fnode *x = &fl->nodes[*(const uint32_t *)a];
	const struct fnode *y = &fl->nodes[*(const uint32_t *)b];

	if (x->cum != y->cum)
		return x->cum > y->cum ? -1 : 1;
	return strcmp(fl->funcs[x->func].name, fl->funcs[y->func].name);
}

static void write_frame(const struct flame *fl, const struct fnode *n, double x, double w,
			const char *unit, FILE *out)
{
	const struct func *f = n->func == NO_NODE ? NULL : &fl->funcs[n->func];
	const char *name = f ? f->name : "all";
	char fill[16], a[128], b[128];
	double y = TOP_H + (double)n->depth * ROW_H;
	size_t fit;

	color(fill, sizeof(fill), f ? f->kind : "root", f ? f->hash : 0);
	fputs("<g><title>", out);
	xml_text(out, name, SIZE_MAX);
	if (f && *f->file) {
		fputs(" (", out);
		xml_text(out, f->file, SIZE_MAX);
		if (f->line)
			fprintf(out, ":%" PRId64, f->line);
		fputc(')', out);
	}
	fprintf(out, "\ncum %s (%.2f%%), flat %s (%.2f%%)%s%s</title>",
		fmt_value(n->cum, unit, a, sizeof(a)), 100 * n->cum / fl->total,
		fmt_value(n->self, unit, b, sizeof(b)), 100 * n->self / fl->total,
		f ? ", " : "", f ? f->kind : "");
	fprintf(out, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"/>",
		x, y, w > 1 ? w - 0.5 : w, ROW_H - 1, fill);
	fit = w > 8 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit >= 3) {
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + ROW_H - 4.5);
		xml_text(out, name, fit);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
}

/* Walks what is drawn: with out NULL only measures the depth. */
static int walk(const struct flame *fl, unsigned int width, const char *unit, FILE *out,
		uint32_t *max_depth)
{
	struct item *stack = NULL;
	uint32_t *kids = NULL;
	size_t sn = 0, scap = 0, kcap = 0;
	double scale = ((double)width - 2 * PAD_X) / fl->total;
	int err = 0;

	*max_depth = 0;
	stack = malloc(sizeof(*stack) * (scap = 256));
	if (!stack)
		return -ENOMEM;
	stack[sn++] = (struct item){ 0, PAD_X };
	while (sn) {
		struct item it = stack[--sn];
		const struct fnode *n = &fl->nodes[it.node];
		size_t nk = 0;
		double cx = it.x;

		if (n->depth > *max_depth)
			*max_depth = n->depth;
		if (out)
			write_frame(fl, n, it.x, n->cum * scale, unit, out);
		for (uint32_t c = n->child; c != NO_NODE; c = fl->nodes[c].sibling) {
			if (nk == kcap) {
				size_t cap = kcap ? kcap * 2 : 64;
				uint32_t *nkids = realloc(kids, cap * sizeof(*nkids));

				if (!nkids) {
					err = -ENOMEM;
					goto out;
				}
				kids = nkids;
				kcap = cap;
			}
			kids[nk++] = c;
		}
		qsort_r(kids, nk, sizeof(*kids), cmp_children, (void *)fl);
		for (size_t i = 0; i < nk; i++) {
			double w = fl->nodes[kids[i]].cum * scale;

			if (w >= FLAME_SVG_MIN_WIDTH) {
				if (sn == scap) {
					struct item *ns = realloc(stack, 2 * scap * sizeof(*ns));

					if (!ns) {
						err = -ENOMEM;
						goto out;
					}
					stack = ns;
					scap *= 2;
				}
				stack[sn++] = (struct item){ kids[i], cx };
			}
			cx += w;
		}
	}
out:
	free(stack);
	free(kids);
	return err;
}

static void write_header(const struct flame *fl, const struct flame_svg_opts *o,
			 unsigned int width, unsigned int height, const char *type,
			 const char *unit, FILE *out)
{
	const char *title = o->title && *o->title ? o->title : "Flame graph";
	char tot[128], fill[16];
	double lx = PAD_X;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" "
		     "height=\"%u\" viewBox=\"0 0 %u %u\" font-family=\"ui-monospace, "
		     "'DejaVu Sans Mono', Menlo, Consolas, monospace\" font-size=\"%d\">\n",
		width, height, width, height, FONT_PX);
	fputs("<title>", out);
	xml_text(out, title, SIZE_MAX);
	fputs("</title>\n<style>text{fill:#111;pointer-events:none}"
	      "g:hover rect{stroke:#111;stroke-width:1}.h{font-family:system-ui,sans-serif}"
	      "</style>\n", out);
	fprintf(out, "<rect width=\"%u\" height=\"%u\" fill=\"#fbfbfc\"/>\n", width, height);
	fprintf(out, "<text class=\"h\" x=\"%u\" y=\"22\" text-anchor=\"middle\" "
		     "font-size=\"17\">", width / 2);
	xml_text(out, title, SIZE_MAX);
	fputs("</text>\n", out);
	fprintf(out, "<text class=\"h\" x=\"%u\" y=\"42\" text-anchor=\"middle\" fill=\"#555\">",
		width / 2);
	xml_text(out, type, 64);
	fputs(" (", out);
	xml_text(out, unit, 64);
	fprintf(out, "): total %s in %zu samples; hover a frame for its share</text>\n",
		fmt_value(fl->total, unit, tot, sizeof(tot)), fl->samples);
	for (size_t i = 0; i + 1 < sizeof(palette) / sizeof(palette[0]); i++) {
		color(fill, sizeof(fill), palette[i].kind, 0x8080);
		fprintf(out, "<rect x=\"%.0f\" y=\"%u\" width=\"10\" height=\"10\" fill=\"%s\"/>"
			     "<text class=\"h\" x=\"%.0f\" y=\"%u\">%s</text>\n",
			lx, height - 20, fill, lx + 14, height - 11, palette[i].kind);
		lx += 30 + 8 * strlen(palette[i].kind);
	}
}

int flame_svg__write(const struct pprof_profile *p, const struct flame_svg_opts *opts, FILE *out,
		     char *err, size_t errlen)
{
	struct flame fl = { .prof = p };
	unsigned int width = opts->width ? opts->width : 1200, height;
	const char *type, *unit;
	uint32_t depth = 0;
	int ret;

	if (width < 200)
		width = 200;
	type = pprof_profile__sample_type(p, opts->sample_index, &unit);
	ret = intern_frames(&fl);
	if (!ret)
		ret = build_tree(&fl, opts->sample_index);
	if (!ret && fl.total > 0)
		ret = walk(&fl, width, unit, NULL, &depth);
	if (ret)
		goto out;
	height = TOP_H + (fl.total > 0 ? (depth + 1) * ROW_H : 0) + BOTTOM_H;
	write_header(&fl, opts, width, height, type, unit, out);
	if (fl.total > 0) {
		ret = walk(&fl, width, unit, out, &depth);
		if (ret)
			goto out;
	} else {
		fprintf(out, "<text class=\"h\" x=\"%u\" y=\"%d\" text-anchor=\"middle\">"
			     "no samples with a nonzero value</text>\n", width / 2, TOP_H + 12);
	}
	fputs("</svg>\n", out);
	if (ferror(out)) {
		ret = -EIO;
		snprintf(err, errlen, "writing SVG: %s", strerror(errno));
	}
out:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	for (size_t i = 0; i < fl.nfuncs; i++)
		free(fl.funcs[i].owned);
	free(fl.funcs);
	free(fl.frame_func);
	free(fl.nodes);
	index_table__release(&fl.func_tab);
	index_table__release(&fl.node_tab);
	return ret;
}
