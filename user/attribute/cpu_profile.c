// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* cpu_profile: stored samples as a pprof CPU profile; see cpu_profile.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/cpu_profile.h"
#include "lib/array.h"
#include "proto/pprof_builder.h"
#include "proto/profile_vocab.h"

#define MAX_LOCATION_LINES 33

enum synthetic_root {
	ROOT_NONE = -1,
	ROOT_GC,
	ROOT_IDLE,
	ROOT_PROGRAM,
	NR_ROOTS,
};

static const char *const root_names[NR_ROOTS] = {
	[ROOT_GC] = FRAME_NAME_GC,
	[ROOT_IDLE] = FRAME_NAME_IDLE,
	[ROOT_PROGRAM] = FRAME_NAME_PROGRAM,
};

struct writer {
	struct pprof_builder *b;
	const struct frame_table *ft;
	uint64_t *loc_ids;	/* per frame index; 0 until made */
	uint64_t root_ids[NR_ROOTS];
	uint64_t *mapping_ids;	/* indexed by sym_mapping.id */
	size_t mapping_ids_cap;
	uint64_t kernel_mapping_id;
	struct cpu_profile_stats *stats;
	struct symbolizer *sym;
};

static uint64_t mapping_id(struct writer *w, const struct sym_mapping *m, bool has_functions)
{
	struct pprof_mapping_desc desc = {
		.memory_start = m->start,
		.memory_limit = m->limit,
		.file_offset = m->offset,
		.filename = m->path,
		.build_id = m->build_id,
		.has_functions = has_functions,
	};
	uint64_t id;

	if (m->id >= w->mapping_ids_cap) {
		size_t old = w->mapping_ids_cap;

		if (array_grow(&w->mapping_ids, &w->mapping_ids_cap, (size_t)m->id + 1))
			return 0;
		memset(w->mapping_ids + old, 0,
		       (w->mapping_ids_cap - old) * sizeof(*w->mapping_ids));
	}
	if (w->mapping_ids[m->id])
		return w->mapping_ids[m->id];
	id = pprof_builder__mapping(w->b, &desc);
	w->mapping_ids[m->id] = id;
	return id;
}

static uint64_t kernel_mapping_id(struct writer *w)
{
	struct pprof_mapping_desc desc = {
		.memory_start = 0xffff800000000000ull,
		.memory_limit = 0xffffffffffffffffull,
		.filename = "[kernel.kallsyms]",
		.has_functions = true,
	};

	if (!w->kernel_mapping_id)
		w->kernel_mapping_id = pprof_builder__mapping(w->b, &desc);
	return w->kernel_mapping_id;
}

/* The name of a frame that has none: says why, grouped by where it is. */
static void unknown_name(const struct frame *f, char *buf, size_t len)
{
	const char *path, *base;

	if (f->kernel) {
		snprintf(buf, len, "[kernel] <unknown>");
		return;
	}
	if (f->jit) {
		snprintf(buf, len, "[jit] <unknown>");
		return;
	}
	if (!f->sym.mapping) {
		snprintf(buf, len, "[unknown]");
		return;
	}
	path = f->sym.mapping->path;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	snprintf(buf, len, "[unknown] %s", base);
}

static void note_no_perfmap(struct cpu_profile_stats *st, uint32_t pid)
{
	for (size_t i = 0; i < st->nr_no_perfmap_pids; i++)
		if (st->no_perfmap_pids[i] == pid)
			return;
	if (st->nr_no_perfmap_pids < CPU_PROFILE_MAX_HINT_PIDS)
		st->no_perfmap_pids[st->nr_no_perfmap_pids++] = pid;
}

static uint64_t location_for(struct writer *w, uint32_t idx)
{
	const struct frame *f = frame_table__frame(w->ft, idx);
	struct pprof_line line = { 0 };
	uint64_t map_id;
	char unknown[512];

	if (w->loc_ids[idx])
		return w->loc_ids[idx];
	if (f->kernel)
		map_id = kernel_mapping_id(w);
	else if (f->sym.mapping)
		map_id = mapping_id(w, f->sym.mapping, f->sym.name != NULL);
	else
		map_id = 0;
	/* with a V8 layout, JS is named from the heap: the flags are no remedy */
	if (f->sym.miss == SYM_MISS_NO_PERFMAP && !(w->sym && symbolizer__has_v8_layout(w->sym, f->pid)))
		note_no_perfmap(w->stats, f->pid);

	if (f->sym.name) {
		line.function_id = pprof_builder__function(
			w->b, f->sym.name, f->sym.system_name, f->sym.file,
			f->sym.kind == SYM_FRAME_JIT ? (int64_t)f->sym.line : 0);
		/* the line of the sample where V8 kept positions, else the function's */
		line.line = f->at_line ? f->at_line : f->sym.line;
		line.column = f->at_line ? f->at_column : f->sym.column;
	} else {
		unknown_name(f, unknown, sizeof(unknown));
		line.function_id = pprof_builder__function(w->b, unknown, unknown, NULL, 0);
	}
	if (!line.function_id)
		return 0;
	if (f->ninlined) {
		/* profile.proto: line[0] is the innermost inlined function, the last its caller */
		struct pprof_line lines[MAX_LOCATION_LINES];
		uint32_t n = 0;

		for (; n < f->ninlined && n + 1 < MAX_LOCATION_LINES; n++) {
			const struct frame_inline *in = &f->inlined[n];

			lines[n].function_id = pprof_builder__function(
				w->b, in->function, in->system_name ? in->system_name : in->function,
				in->script, in->fn_line);
			if (!lines[n].function_id)
				return 0;
			lines[n].line = in->line;
			lines[n].column = in->column;
		}
		lines[n++] = line;
		w->loc_ids[idx] = pprof_builder__location(w->b, map_id, f->addr, lines, n);
		return w->loc_ids[idx];
	}
	w->loc_ids[idx] = pprof_builder__location(w->b, map_id, f->addr, &line, 1);
	return w->loc_ids[idx];
}

static uint64_t root_location(struct writer *w, enum synthetic_root root)
{
	struct pprof_line line = { 0 };

	if (w->root_ids[root])
		return w->root_ids[root];
	line.function_id = pprof_builder__function(w->b, root_names[root], root_names[root], NULL, 0);
	if (!line.function_id)
		return 0;
	w->root_ids[root] = pprof_builder__location(w->b, 0, 0, &line, 1);
	return w->root_ids[root];
}

/* The allocator's own frames: tcmalloc, and the malloc family it answers for. */
static bool allocator_frame(const struct frame *f)
{
	static const char *const entries[] = {
		"malloc", "calloc", "realloc", "aligned_alloc", "posix_memalign", "memalign",
		"operator new", "__libc_malloc", "__libc_calloc",
	};
	const char *name = f->sym.name;

	if (!name || f->jit || f->kernel)
		return false;
	if (!strncmp(name, "tcmalloc::", 10) || !strncmp(name, "TCMalloc", 8) ||
	    !strncmp(name, "MallocExtension", 15) || !strncmp(name, "absl::", 6))
		return true;
	for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++) {
		size_t n = strlen(entries[i]);

		if (!strncmp(name, entries[i], n) && (!name[n] || name[n] == '('))
			return true;
	}
	return false;
}

/*
 * Where an allocation sample's stack starts: its innermost JS frame (JS
 * heap: what lies above is V8's allocation slow path), or the first frame
 * past the allocator (native heap).  0 when there is none such.
 */
static uint32_t alloc_first_frame(const struct writer *w, const struct stack_view *v, bool native)
{
	for (uint32_t i = 0; i < v->nframes; i++) {
		const struct frame *f = frame_table__frame(w->ft, v->frames[i]);

		if (native ? !allocator_frame(f) : f->cls == FRAME_JS)
			return i;
	}
	return 0;
}

/* [objects, bytes] an allocation sample stands for (cpu_profile.h). */
static void alloc_values(const struct alloc_weights *aw, const struct stored_sample *s,
			 double out[2])
{
	bool native = s->flags & ISOPROF_SAMPLE_ALLOC_NATIVE;
	double interval = (double)(native ? aw->native_interval : aw->js_interval);
	double size = s->alloc_size ? (double)s->alloc_size : 1.0;
	double p = interval > 0 ? -expm1(-size / interval) : 1.0;

	out[0] = p > 0 ? 1.0 / p : 1.0;
	out[1] = out[0] * size;
}

static int add_sample(struct writer *w, const struct sample_store *store,
		      const struct stored_sample *s, const struct cpu_profile_info *info)
{
	const struct stack_view *v = frame_table__stack(w->ft, s->stack_id);
	uint64_t loc_ids[2 * ISOPROF_MAX_STACK_DEPTH + 1];
	enum sample_class cls = stack_view__class(v, s->isolate != 0);
	bool native = s->flags & ISOPROF_SAMPLE_ALLOC_NATIVE;
	enum synthetic_root root = ROOT_NONE;
	uint32_t first = 0;
	struct sample_attr attr = { 0 };
	struct pprof_label labels[7] = {
		{ .key = LABEL_PID, .num = s->pid },
		{ .key = LABEL_TID, .num = s->tid },
		{ .key = LABEL_THREAD, .str = sample_store__comm(store, s->comm_id) },
		{ .key = LABEL_CLASS, .str = sample_class__str(cls) },
	};
	int64_t values[2] = { 1, (int64_t)info->period_ns };
	size_t n = 0, nlabels = 4;

	if (info->alloc) {
		double est[2];

		alloc_values(info->alloc, s, est);
		values[0] = llround(est[0]);
		values[1] = llround(est[1]);
		w->stats->alloc_objects[native] += est[0];
		w->stats->alloc_bytes[native] += est[1];
		first = alloc_first_frame(w, v, native);
		if (native)
			cls = CLASS_NATIVE_ALLOC;
		else if (first < v->nframes &&
			 frame_table__frame(w->ft, v->frames[first])->cls == FRAME_JS)
			cls = CLASS_JS;
		labels[3].str = sample_class__str(cls);
	}
	for (uint32_t i = first; i < v->nframes; i++) {
		loc_ids[n] = location_for(w, v->frames[i]);
		if (!loc_ids[n++])
			return -ENOMEM;
		if (!frame_table__frame(w->ft, v->frames[i])->sym.name)
			w->stats->unsymbolized_frames++;
	}
	if (info->alloc)
		root = ROOT_NONE;
	else if (cls == CLASS_GC)
		root = ROOT_GC;
	else if (cls == CLASS_IDLE)
		root = ROOT_IDLE;
	else if (!v->has_js)
		root = ROOT_PROGRAM;
	if (root != ROOT_NONE) {
		loc_ids[n] = root_location(w, root);
		if (!loc_ids[n++])
			return -ENOMEM;
	}
	if (info->attr)
		info->attr(s, info->attr_ctx, &attr);
	if (attr.isolate)
		labels[nlabels++] = (struct pprof_label){ .key = LABEL_ISOLATE, .str = attr.isolate };
	if (attr.script)
		labels[nlabels++] = (struct pprof_label){ .key = LABEL_SCRIPT, .str = attr.script };
	if (attr.version)
		labels[nlabels++] = (struct pprof_label){ .key = LABEL_VERSION, .str = attr.version };

	w->stats->samples++;
	w->stats->frames += v->nframes - first;
	w->stats->class_samples[cls]++;
	if (v->leaf_jit) {
		w->stats->jit_leaf_samples++;
		w->stats->jit_leaf_named += v->leaf_jit_named;
		if (v->leaf_jit_named)
			w->stats->jit_leaf_by[v->leaf_jit_source]++;
		if (v->leaf_inline_source)
			w->stats->jit_leaf_inlined_by[v->leaf_inline_source]++;
		w->stats->jit_leaf_placed_by[v->leaf_placed]++;
	}
	return pprof_builder__add_sample(w->b, loc_ids, n, values, 2, labels, nlabels);
}

void cpu_profile__no_perfmap_hint(uint32_t pid, char *buf, size_t len)
{
	snprintf(buf, len,
		 "pid %u: JIT frames have no names: no V8 perf map; start V8 with "
		 "--perf-basic-prof --interpreted-frames-native-stack (workerd: v8Flags in "
		 "its config; node: on its command line)",
		 pid);
}

/* Coverage and cost split, so a reader can judge the profile. */
static int add_summary_comments(struct pprof_builder *b, const struct cpu_profile_stats *st)
{
	char text[512];
	size_t len = 0;
	int err = 0;

	len += snprintf(text, sizeof(text), "classes:");
	for (int c = 0; c < NR_SAMPLE_CLASSES && len < sizeof(text); c++)
		if (st->class_samples[c] || c != CLASS_NATIVE_ALLOC)
			len += snprintf(text + len, sizeof(text) - len, " %s %llu",
					sample_class__str(c),
					(unsigned long long)st->class_samples[c]);
	err = pprof_builder__add_comment(b, text);
	if (!err && st->jit_leaf_samples) {
		snprintf(text, sizeof(text), "jit: %llu samples with a JIT leaf, %llu named (%.1f%%)",
			 (unsigned long long)st->jit_leaf_samples,
			 (unsigned long long)st->jit_leaf_named,
			 100.0 * st->jit_leaf_named / st->jit_leaf_samples);
		err = pprof_builder__add_comment(b, text);
	}
	for (size_t i = 0; !err && i < st->nr_no_perfmap_pids; i++) {
		char hint[400];

		cpu_profile__no_perfmap_hint(st->no_perfmap_pids[i], hint, sizeof(hint));
		snprintf(text, sizeof(text), "note: %s", hint);
		err = pprof_builder__add_comment(b, text);
	}
	return err;
}

int cpu_profile__build(const struct sample_store *store, const struct frame_table *ft,
		       struct symbolizer *sym, const struct cpu_profile_info *info,
		       struct pprof_builder **out, struct cpu_profile_stats *stats)
{
	const struct stored_sample *samples = sample_store__samples(store);
	size_t nsamples = sample_store__count(store);
	struct cpu_profile_stats local_stats;
	struct writer w = { .ft = ft, .sym = sym };
	int err = 0;

	w.stats = stats ? stats : &local_stats;
	memset(w.stats, 0, sizeof(*w.stats));
	w.b = pprof_builder__new();
	w.loc_ids = calloc(frame_table__count(ft) + 1, sizeof(*w.loc_ids));
	if (!w.b || !w.loc_ids) {
		err = -ENOMEM;
		goto out;
	}
	if (info->alloc) {
		if (pprof_builder__add_sample_type(w.b, SAMPLE_TYPE_ALLOC_OBJECTS, UNIT_COUNT) ||
		    pprof_builder__add_sample_type(w.b, SAMPLE_TYPE_ALLOC_SPACE, UNIT_BYTES)) {
			err = -ENOMEM;
			goto out;
		}
		pprof_builder__set_default_sample_type(w.b, SAMPLE_TYPE_ALLOC_SPACE);
		pprof_builder__set_period(w.b, PERIOD_TYPE_SPACE, UNIT_BYTES,
					  (int64_t)info->alloc->js_interval);
	} else {
		if (pprof_builder__add_sample_type(w.b, SAMPLE_TYPE_SAMPLES, UNIT_COUNT) ||
		    pprof_builder__add_sample_type(w.b, SAMPLE_TYPE_CPU, UNIT_NANOSECONDS)) {
			err = -ENOMEM;
			goto out;
		}
		pprof_builder__set_default_sample_type(w.b, SAMPLE_TYPE_CPU);
		pprof_builder__set_period(w.b, SAMPLE_TYPE_CPU, UNIT_NANOSECONDS,
					  (int64_t)info->period_ns);
	}
	pprof_builder__set_time(w.b, info->time_nanos, info->duration_nanos);
	for (size_t i = 0; i < info->ncomments; i++) {
		err = pprof_builder__add_comment(w.b, info->comments[i]);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < nsamples; i++) {
		if (info->filter && !info->filter(&samples[i], info->filter_ctx))
			continue;
		/* pprof takes mapping[0] as the main binary: make it the program's */
		if (!w.stats->samples) {
			const struct sym_mapping *main_map =
				symbolizer__main_mapping(sym, samples[i].pid);

			if (main_map && !mapping_id(&w, main_map, true)) {
				err = -ENOMEM;
				goto out;
			}
		}
		err = add_sample(&w, store, &samples[i], info);
		if (err)
			goto out;
	}
	err = add_summary_comments(w.b, w.stats);
out:
	free(w.loc_ids);
	free(w.mapping_ids);
	if (err) {
		pprof_builder__free(w.b);
		return err;
	}
	*out = w.b;
	return 0;
}

int cpu_profile__write(const struct sample_store *store, const struct frame_table *ft,
		       struct symbolizer *sym, const struct cpu_profile_info *info,
		       const char *path, bool gzip, struct cpu_profile_stats *stats)
{
	struct pprof_builder *b;
	int err;

	err = cpu_profile__build(store, ft, sym, info, &b, stats);
	if (err)
		return err;
	err = pprof_builder__write_file(b, path, gzip);
	pprof_builder__free(b);
	return err;
}
