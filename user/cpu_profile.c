// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_profile.h"
#include "pprof_builder.h"

/* (pid, address) -> pprof location id; kernel frames use pid 0. */
enum jit_state {
	NOT_JIT = 0,
	JIT_UNNAMED,
	JIT_NAMED,
};

struct loc_slot {
	uint64_t ip;
	uint32_t pid;
	uint16_t kernel;
	uint16_t jit;		/* enum jit_state */
	uint64_t location_id;	/* 0 = empty slot */
};

struct loc_cache {
	struct loc_slot *slots;
	size_t cap;		/* power of two */
	size_t used;
};

struct writer {
	struct pprof_builder *b;
	struct symbolizer *sym;
	struct loc_cache locs;
	uint64_t *mapping_ids;	/* indexed by sym_mapping.id */
	size_t mapping_ids_cap;
	uint64_t kernel_mapping_id;
	struct cpu_profile_stats *stats;
};

static uint64_t loc_hash(uint32_t pid, uint32_t kernel, uint64_t ip)
{
	uint64_t h = ip ^ ((uint64_t)pid << 32) ^ ((uint64_t)kernel << 63);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static int loc_cache_grow(struct loc_cache *c)
{
	size_t cap = c->cap ? c->cap * 2 : 4096;
	struct loc_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < c->cap; i++) {
		struct loc_slot *old = &c->slots[i];
		size_t j;

		if (!old->location_id)
			continue;
		j = loc_hash(old->pid, old->kernel, old->ip) & (cap - 1);
		while (slots[j].location_id)
			j = (j + 1) & (cap - 1);
		slots[j] = *old;
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

/* Returns the slot for the key: filled when found, empty otherwise. */
static struct loc_slot *loc_cache_slot(struct loc_cache *c, uint32_t pid, uint32_t kernel,
				       uint64_t ip)
{
	size_t mask = c->cap - 1;
	size_t i = loc_hash(pid, kernel, ip) & mask;

	for (; c->slots[i].location_id; i = (i + 1) & mask) {
		struct loc_slot *s = &c->slots[i];

		if (s->ip == ip && s->pid == pid && s->kernel == kernel)
			return s;
	}
	return &c->slots[i];
}

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
		size_t cap = w->mapping_ids_cap ? w->mapping_ids_cap : 64;
		uint64_t *ids;

		while (cap <= m->id)
			cap *= 2;
		ids = realloc(w->mapping_ids, cap * sizeof(*ids));
		if (!ids)
			return 0;
		memset(ids + w->mapping_ids_cap, 0, (cap - w->mapping_ids_cap) * sizeof(*ids));
		w->mapping_ids = ids;
		w->mapping_ids_cap = cap;
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
static void unknown_name(const struct sym_frame *f, bool kernel, char *buf, size_t len)
{
	const char *path;
	const char *base;

	if (kernel) {
		snprintf(buf, len, "[kernel] <unknown>");
		return;
	}
	if (f->miss == SYM_MISS_ANON || f->miss == SYM_MISS_NO_PERFMAP) {
		snprintf(buf, len, "[jit] <unknown>");
		return;
	}
	if (!f->mapping) {
		snprintf(buf, len, "[unknown]");
		return;
	}
	path = f->mapping->path;
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

static uint64_t location_for(struct writer *w, uint32_t pid, bool kernel, uint64_t ip,
			     bool return_address, enum jit_state *jit)
{
	struct sym_frame f;
	struct pprof_line line = { 0 };
	struct loc_slot *slot;
	uint64_t map_id, addr = return_address ? ip - 1 : ip;
	char unknown[512];
	int err;

	if ((w->locs.used + 1) * 2 > w->locs.cap && loc_cache_grow(&w->locs))
		return 0;
	slot = loc_cache_slot(&w->locs, kernel ? 0 : pid, kernel, ip);
	if (slot->location_id) {
		*jit = slot->jit;
		return slot->location_id;
	}

	if (kernel)
		err = symbolizer__resolve_kernel(w->sym, addr, &f);
	else
		err = symbolizer__resolve_user(w->sym, pid, addr, &f);
	if (err) {
		memset(&f, 0, sizeof(f));
		f.miss = SYM_MISS_NO_MAPPING;
	}

	if (kernel)
		map_id = kernel_mapping_id(w);
	else if (f.mapping)
		map_id = mapping_id(w, f.mapping, f.name != NULL);
	else
		map_id = 0;

	if (f.kind == SYM_FRAME_JIT)
		*jit = JIT_NAMED;
	else if (f.miss == SYM_MISS_ANON || f.miss == SYM_MISS_NO_PERFMAP)
		*jit = JIT_UNNAMED;
	else
		*jit = NOT_JIT;
	if (f.miss == SYM_MISS_NO_PERFMAP)
		note_no_perfmap(w->stats, pid);

	if (f.name) {
		line.function_id = pprof_builder__function(
			w->b, f.name, f.system_name, f.file,
			f.kind == SYM_FRAME_JIT ? (int64_t)f.line : 0);
		line.line = f.line;
		line.column = f.column;
	} else {
		unknown_name(&f, kernel, unknown, sizeof(unknown));
		line.function_id = pprof_builder__function(w->b, unknown, unknown, NULL, 0);
	}
	if (!line.function_id)
		return 0;
	slot->location_id = pprof_builder__location(w->b, map_id, addr, &line, 1);
	if (!slot->location_id)
		return 0;
	slot->ip = ip;
	slot->pid = kernel ? 0 : pid;
	slot->kernel = kernel;
	slot->jit = *jit;
	w->locs.used++;
	if (!f.name)
		w->stats->unsymbolized_frames++;
	return slot->location_id;
}

static int add_sample(struct writer *w, const struct sample_store *store,
		      const struct stored_sample *s, uint64_t period_ns)
{
	uint64_t loc_ids[2 * ISOPROF_MAX_STACK_DEPTH];
	struct stored_stack stack;
	struct pprof_label labels[3] = {
		{ .key = "pid", .num = s->pid },
		{ .key = "tid", .num = s->tid },
		{ .key = "thread", .str = sample_store__comm(store, s->comm_id) },
	};
	int64_t values[2] = { 1, (int64_t)period_ns };
	enum jit_state jit, leaf_jit = NOT_JIT;
	size_t n = 0;

	sample_store__stack(store, s->stack_id, &stack);
	for (size_t i = 0; i < stack.nkernel; i++) {
		loc_ids[n] = location_for(w, stack.pid, true, stack.ips[i], i > 0, &jit);
		if (!loc_ids[n++])
			return -ENOMEM;
	}
	for (size_t i = 0; i < stack.nuser; i++) {
		/* In a syscall, the user "leaf" is the return address after it. */
		bool ret = i > 0 || stack.nkernel > 0;

		loc_ids[n] = location_for(w, stack.pid, false, stack.ips[stack.nkernel + i], ret,
					  &jit);
		if (!loc_ids[n++])
			return -ENOMEM;
		if (!i)
			leaf_jit = jit;
	}
	if (leaf_jit != NOT_JIT) {
		w->stats->jit_leaf_samples++;
		w->stats->jit_leaf_named += leaf_jit == JIT_NAMED;
	}
	w->stats->samples++;
	w->stats->frames += n;
	return pprof_builder__add_sample(w->b, loc_ids, n, values, 2, labels, 3);
}

void cpu_profile__no_perfmap_hint(uint32_t pid, char *buf, size_t len)
{
	snprintf(buf, len,
		 "pid %u: JIT frames have no names: no V8 perf map; start V8 with "
		 "--perf-basic-prof --interpreted-frames-native-stack (workerd: v8Flags in "
		 "its config; node: on its command line)",
		 pid);
}

/* Coverage of JIT frames, so a reader can judge the JS part of the profile. */
static int add_jit_comments(struct pprof_builder *b, const struct cpu_profile_stats *st)
{
	char text[512];
	int err;

	if (!st->jit_leaf_samples)
		return 0;
	snprintf(text, sizeof(text), "jit: %llu samples with a JIT leaf, %llu named (%.1f%%)",
		 (unsigned long long)st->jit_leaf_samples, (unsigned long long)st->jit_leaf_named,
		 100.0 * st->jit_leaf_named / st->jit_leaf_samples);
	err = pprof_builder__add_comment(b, text);
	for (size_t i = 0; !err && i < st->nr_no_perfmap_pids; i++) {
		char hint[400];

		cpu_profile__no_perfmap_hint(st->no_perfmap_pids[i], hint, sizeof(hint));
		snprintf(text, sizeof(text), "note: %s", hint);
		err = pprof_builder__add_comment(b, text);
	}
	return err;
}

int cpu_profile__write(const struct sample_store *store, struct symbolizer *sym,
		       const struct cpu_profile_info *info, cpu_profile_filter_fn filter,
		       void *filter_ctx, const char *path, bool gzip,
		       struct cpu_profile_stats *stats)
{
	const struct stored_sample *samples = sample_store__samples(store);
	size_t nsamples = sample_store__count(store);
	struct cpu_profile_stats local_stats;
	struct writer w = { .sym = sym };
	int err = 0;

	w.stats = stats ? stats : &local_stats;
	memset(w.stats, 0, sizeof(*w.stats));
	w.b = pprof_builder__new();
	if (!w.b)
		return -ENOMEM;
	if (pprof_builder__add_sample_type(w.b, "samples", "count") ||
	    pprof_builder__add_sample_type(w.b, "cpu", "nanoseconds")) {
		err = -ENOMEM;
		goto out;
	}
	pprof_builder__set_default_sample_type(w.b, "cpu");
	pprof_builder__set_period(w.b, "cpu", "nanoseconds", (int64_t)info->period_ns);
	pprof_builder__set_time(w.b, info->time_nanos, info->duration_nanos);
	for (size_t i = 0; i < info->ncomments; i++) {
		err = pprof_builder__add_comment(w.b, info->comments[i]);
		if (err)
			goto out;
	}
	for (size_t i = 0; i < nsamples; i++) {
		if (filter && !filter(&samples[i], filter_ctx))
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
		err = add_sample(&w, store, &samples[i], info->period_ns);
		if (err)
			goto out;
	}
	err = add_jit_comments(w.b, w.stats);
	if (!err)
		err = pprof_builder__write_file(w.b, path, gzip);
out:
	pprof_builder__free(w.b);
	free(w.locs.slots);
	free(w.mapping_ids);
	return err;
}
