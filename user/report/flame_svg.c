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

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/utf8.h"
#include "proto/pprof_reader.h"
#include "user/report/flame_svg.h"

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

struct func_key {
	const char *name, *file;
};

static bool func_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct func *g = &((const struct flame *)ctx)->funcs[index];
	const struct func_key *k = key;

	return !strcmp(g->name, k->name) && !strcmp(g->file, k->file);
}

/* The name a frame is drawn with: "[mapping]" for one without a name. */
static int frame_name(const struct pprof_frame *f, const char **name, char **owned)
{
	const char *m;

	*name = *f->name ? f->name : f->system_name;
	*owned = NULL;
	if (**name)
		return 0;
	m = *f->mapping_file ? base_name(f->mapping_file) : "unknown";
	if (asprintf(owned, "[%s]", m) < 0) {
		*owned = NULL;
		return -ENOMEM;
	}
	*name = *owned;
	return 0;
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
		struct func_key k = { .file = f->filename };
		char *owned;
		uint32_t h;
		size_t slot;
		long found;

		if (frame_name(f, &k.name, &owned))
			return -ENOMEM;
		h = hash__fold32(hash__str(hash__str(HASH_SEED, k.name), f->filename));
		if (index_table__reserve(&fl->func_tab) ||
		    array_grow(&fl->funcs, &fl->funcs_cap, fl->nfuncs + 1)) {
			free(owned);
			return -ENOMEM;
		}
		found = index_table__lookup(&fl->func_tab, h, func_eq, fl, &k, &slot);
		if (found >= 0) {
			free(owned);
			fl->frame_func[i] = (uint32_t)found;
			continue;
		}
		fl->funcs[fl->nfuncs] = (struct func){
			.name = k.name,
			.owned = owned,
			.file = f->filename,
			.line = f->start_line ? f->start_line : f->line,
			.kind = flame_svg__kind(k.name, f->filename, f->mapping_file),
			.hash = h,
		};
		index_table__set(&fl->func_tab, slot, h, (uint32_t)fl->nfuncs);
		fl->frame_func[i] = (uint32_t)fl->nfuncs++;
	}
	return 0;
}

static int add_node(struct flame *fl, uint32_t parent, uint32_t func, uint32_t *out)
{
	/* node indexes are 32-bit, and NO_NODE is taken */
	if (fl->nnodes >= NO_NODE - 1 || array_grow(&fl->nodes, &fl->nodes_cap, fl->nnodes + 1))
		return -ENOMEM;
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

struct child_key {
	uint32_t parent, func;
};

static bool child_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct fnode *n = &((const struct flame *)ctx)->nodes[index];
	const struct child_key *k = key;

	return n->parent == k->parent && n->func == k->func;
}

static int child_of(struct flame *fl, uint32_t parent, uint32_t func, uint32_t *out)
{
	struct child_key k = { parent, func };
	uint32_t h = hash__fold32(hash__word(hash__word(HASH_SEED, parent), func));
	size_t slot;
	long found;
	int err;

	err = index_table__reserve(&fl->node_tab);
	if (err)
		return err;
	found = index_table__lookup(&fl->node_tab, h, child_eq, fl, &k, &slot);
	if (found >= 0) {
		*out = (uint32_t)found;
		return 0;
	}
	err = add_node(fl, parent, func, out);
	if (!err)
		index_table__set(&fl->node_tab, slot, h, *out);
	return err;
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

/* Bytes of the next character of s: a UTF-8 sequence, or 1 for a byte that is not one. */
static size_t utf8_step(const unsigned char *s, bool *valid)
{
	size_t n = utf8__seq(s, 4);

	*valid = n != 0;
	return n ? n : 1;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	bool valid;

	for (const unsigned char *p = (const unsigned char *)s; *p; n++)
		p += utf8_step(p, &valid);
	return n;
}

/* U+FFFD, U+FFFE and U+FFFF: the replacement character, and two non-characters XML refuses. */
static bool is_fffx(const unsigned char *p, size_t len)
{
	return len == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbd;
}

/* XML character data: escaped, valid UTF-8, at most max code points (then ".."). */
static void xml_text(FILE *out, const char *s, size_t max)
{
	size_t total = utf8_chars(s), n = 0, len;
	bool cut = total > max, valid;

	for (const unsigned char *p = (const unsigned char *)s; *p; p += len, n++) {
		len = utf8_step(p, &valid);
		if (cut && n + 2 >= max)
			break;
		switch (*p) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if (!valid || (*p < 0x20 && *p != '\t') || is_fffx(p, len))
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
	if (array_grow(&stack, &scap, 1))
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
			if (array_grow(&kids, &kcap, nk + 1)) {
				err = -ENOMEM;
				goto out;
			}
			kids[nk++] = c;
		}
		qsort_r(kids, nk, sizeof(*kids), cmp_children, (void *)fl);
		for (size_t i = 0; i < nk; i++) {
			double w = fl->nodes[kids[i]].cum * scale;

			if (w >= FLAME_SVG_MIN_WIDTH) {
				if (array_grow(&stack, &scap, sn + 1)) {
					err = -ENOMEM;
					goto out;
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
