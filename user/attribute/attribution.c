// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* attribution: samples grouped by (pid, isolate); see attribution.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/attribution.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"

const char *isolate_group__version(const struct isolate_group *g)
{
	if (!g->info)
		return NULL;
	return g->info->label ? g->info->label : g->info->version;
}

const char *isolate_group__script(const struct isolate_group *g)
{
	return g->info ? g->info->name : NULL;
}

/* Groups by (pid, isolate) while building. */
struct group_map {
	struct index_table index;
	size_t cap;		/* of a->groups */
};

struct group_key {
	uint32_t pid;
	uint64_t isolate;
};

static bool group_is(const void *ctx, uint32_t index, const void *key)
{
	const struct attribution *a = ctx;
	const struct group_key *k = key;

	return a->groups[index].pid == k->pid && a->groups[index].isolate == k->isolate;
}

static int group_index(struct attribution *a, struct group_map *m, uint32_t pid,
		       uint64_t isolate, uint32_t *out)
{
	struct group_key k = { pid, isolate };
	uint32_t h = hash__fold32(hash__word(hash__word(HASH_SEED, pid), isolate));
	struct isolate_group *g;
	size_t slot;
	long i;

	if (index_table__reserve(&m->index))
		return -ENOMEM;
	i = index_table__lookup(&m->index, h, group_is, a, &k, &slot);
	if (i >= 0) {
		*out = (uint32_t)i;
		return 0;
	}
	if (array_grow(&a->groups, &m->cap, a->ngroups + 1))
		return -ENOMEM;
	g = &a->groups[a->ngroups];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->isolate = isolate;
	if (isolate)
		snprintf(g->isolate_str, sizeof(g->isolate_str), "0x%" PRIx64, isolate);
	index_table__set(&m->index, slot, h, (uint32_t)a->ngroups);
	*out = a->ngroups++;
	return 0;
}

/* Script names of an isolate's own JS frames, for isolates without a code log. */
static int note_js_scripts(struct isolate_registry *reg, const struct frame_table *ft,
			   const struct stack_view *v, uint32_t pid, uint64_t isolate)
{
	for (uint32_t i = 0; i < v->nframes; i++) {
		const struct frame *f = frame_table__frame(ft, v->frames[i]);
		int err;

		if (f->cls != FRAME_JS || !f->sym.file)
			continue;
		err = isolate_registry__note_script(reg, pid, isolate, f->sym.file);
		if (err)
			return err;
	}
	return 0;
}

int attribution__build(struct attribution *a, const struct sample_store *store,
		       const struct frame_table *ft, struct isolate_registry *reg)
{
	const struct stored_sample *samples = sample_store__samples(store);
	size_t n = sample_store__count(store);
	struct group_map map = { 0 };
	uint8_t *noted_stack = NULL;
	int err = 0;

	memset(a, 0, sizeof(*a));
	a->store = store;
	a->sample_group = malloc((n ? n : 1) * sizeof(*a->sample_group));
	noted_stack = calloc(sample_store__stack_count(store) + 1, 1);
	if (!a->sample_group || !noted_stack) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct stored_sample *s = &samples[i];
		const struct stack_view *v = frame_table__stack(ft, s->stack_id);
		struct isolate_group *g;
		enum sample_class cls;
		uint32_t gi;

		err = group_index(a, &map, s->pid, s->isolate, &gi);
		if (err)
			goto out;
		a->sample_group[i] = gi;
		g = &a->groups[gi];
		g->samples++;
		cls = stack_view__class(v, s->isolate != 0);
		g->class_samples[cls]++;
		if (s->flags & ISOPROF_SAMPLE_ISOLATE_FROM_JOB) {
			g->job_samples++;
			g->job_gc_samples += cls == CLASS_GC;
		}
		g->deopt_samples += v->deopt;
		if (v->leaf_jit)
			g->placed_samples[v->leaf_placed]++;
		if (s->time_ns > g->last_sample_ns)
			g->last_sample_ns = s->time_ns;
		/* a stack belongs to one process; noting it once is enough */
		if (s->isolate && !noted_stack[s->stack_id]) {
			noted_stack[s->stack_id] = 1;
			err = note_js_scripts(reg, ft, v, s->pid, s->isolate);
			if (err)
				goto out;
		}
	}
	for (size_t g = 0; g < a->ngroups; g++) {
		if (!a->groups[g].isolate)
			continue;
		a->groups[g].info =
			isolate_registry__lookup(reg, a->groups[g].pid, a->groups[g].isolate);
		if (!a->groups[g].info) {
			err = -ENOMEM;
			goto out;
		}
	}
out:
	index_table__release(&map.index);
	free(noted_stack);
	if (err)
		attribution__release(a);
	return err;
}

void attribution__release(struct attribution *a)
{
	free(a->groups);
	free(a->sample_group);
	memset(a, 0, sizeof(*a));
}

const struct isolate_group *attribution__group_of(const struct attribution *a,
						  const struct stored_sample *s)
{
	size_t i = s - sample_store__samples(a->store);

	return &a->groups[a->sample_group[i]];
}

void attribution__sample_attr(const struct stored_sample *s, void *ctx, struct sample_attr *out)
{
	const struct isolate_group *g = attribution__group_of(ctx, s);

	if (!g->isolate)
		return;
	out->isolate = g->isolate_str;
	out->script = isolate_group__script(g);
	out->version = isolate_group__version(g);
}
