// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/attribution.h"

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

/* Few isolates per capture: a hash over (pid, isolate) into group indices. */
struct group_map {
	uint32_t *slots;	/* group index + 1; 0 empty */
	size_t cap;
};

static uint64_t key_hash(uint32_t pid, uint64_t isolate)
{
	uint64_t h = isolate ^ ((uint64_t)pid * 0x9e3779b97f4a7c15ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static int group_index(struct attribution *a, struct group_map *m, uint32_t pid,
		       uint64_t isolate, uint32_t *out)
{
	size_t i;

	if ((a->ngroups + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint32_t *slots = calloc(cap, sizeof(*slots));

		if (!slots)
			return -ENOMEM;
		for (size_t g = 0; g < a->ngroups; g++) {
			i = key_hash(a->groups[g].pid, a->groups[g].isolate) & (cap - 1);
			while (slots[i])
				i = (i + 1) & (cap - 1);
			slots[i] = g + 1;
		}
		free(m->slots);
		m->slots = slots;
		m->cap = cap;
	}
	for (i = key_hash(pid, isolate) & (m->cap - 1); m->slots[i]; i = (i + 1) & (m->cap - 1)) {
		const struct isolate_group *g = &a->groups[m->slots[i] - 1];

		if (g->pid == pid && g->isolate == isolate) {
			*out = m->slots[i] - 1;
			return 0;
		}
	}
	if (!(a->ngroups & (a->ngroups + 1))) {
		/* capacity doubles at 1, 3, 7, 15 ... groups */
		struct isolate_group *groups =
			realloc(a->groups, (a->ngroups * 2 + 2) * sizeof(*groups));

		if (!groups)
			return -ENOMEM;
		a->groups = groups;
	}
	memset(&a->groups[a->ngroups], 0, sizeof(a->groups[0]));
	a->groups[a->ngroups].pid = pid;
	a->groups[a->ngroups].isolate = isolate;
	if (isolate)
		snprintf(a->groups[a->ngroups].isolate_str,
			 sizeof(a->groups[a->ngroups].isolate_str), "0x%" PRIx64, isolate);
	m->slots[i] = a->ngroups + 1;
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
		uint32_t gi;

		err = group_index(a, &map, s->pid, s->isolate, &gi);
		if (err)
			goto out;
		a->sample_group[i] = gi;
		g = &a->groups[gi];
		g->samples++;
		g->class_samples[stack_view__class(v, s->isolate != 0)]++;
		g->deopt_samples += v->deopt;
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
	free(map.slots);
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
