// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A heap profile's totals and top allocating function; see heap_summary.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proto/heap_summary.h"
#include "proto/pprof_reader.h"
#include "proto/profile_vocab.h"

/* Frames by function: name, then file. */
static int frame_cmp(const void *pa, const void *pb, void *arg)
{
	const struct pprof_profile *p = arg;
	const struct pprof_frame *a = pprof_profile__frame(p, *(const uint32_t *)pa);
	const struct pprof_frame *b = pprof_profile__frame(p, *(const uint32_t *)pb);
	int c = strcmp(a->name, b->name);

	return c ? c : strcmp(a->filename, b->filename);
}

static bool same_function(const struct pprof_frame *a, const struct pprof_frame *b)
{
	return !strcmp(a->name, b->name) && !strcmp(a->filename, b->filename);
}

/* Flat bytes per frame, then per function; the largest one into s. */
static int top_function(const struct pprof_profile *p, const int64_t *flat, struct heap_summary *s)
{
	size_t nframes = pprof_profile__frame_count(p), n = 0;
	uint32_t *order = calloc(nframes + 1, sizeof(*order));
	const struct pprof_frame *best = NULL;
	int64_t best_bytes = 0;

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < nframes; i++)
		if (flat[i])
			order[n++] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), frame_cmp, (void *)p);
	for (size_t i = 0; i < n;) {
		const struct pprof_frame *f = pprof_profile__frame(p, order[i]);
		int64_t bytes = 0, line = 0;

		/* a function's frames differ by line: its start line is theirs */
		for (; i < n && same_function(f, pprof_profile__frame(p, order[i])); i++) {
			const struct pprof_frame *g = pprof_profile__frame(p, order[i]);

			bytes += flat[order[i]];
			if (!line)
				line = g->start_line;
		}
		if (!best || bytes > best_bytes) {
			best = f;
			best_bytes = bytes;
			s->top_line = line;
		}
	}
	free(order);
	if (!best)
		return 0;
	s->top_name = strdup(best->name);
	s->top_file = strdup(best->filename);
	s->top_bytes = best_bytes;
	return s->top_name && s->top_file ? 0 : -ENOMEM;
}

int heap_summary__compute(const struct pprof_profile *p, struct heap_summary *out)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(p);
	int space = pprof_profile__sample_index(p, SAMPLE_TYPE_ALLOC_SPACE, NULL, 0);
	int objects = pprof_profile__sample_index(p, SAMPLE_TYPE_ALLOC_OBJECTS, NULL, 0);
	struct pprof_stack st = { 0 };
	int64_t *flat;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (space < 0 || objects < 0)
		return -EINVAL;
	if (msg->period_type &&
	    !strcmp(pprof_profile__string(p, msg->period_type->type), PERIOD_TYPE_SPACE) &&
	    msg->period > 0)
		out->interval = msg->period;
	flat = calloc(pprof_profile__frame_count(p) + 1, sizeof(*flat));
	if (!flat)
		return -ENOMEM;
	for (size_t i = 0; i < pprof_profile__sample_count(p) && !err; i++) {
		int64_t v = pprof_profile__value(p, i, (size_t)space);

		out->bytes += v;
		out->objects += pprof_profile__value(p, i, (size_t)objects);
		err = pprof_profile__stack(p, i, &st);
		if (!err && st.n)
			flat[st.frames[0]->id] += v;
	}
	if (!err)
		err = top_function(p, flat, out);
	pprof_stack__release(&st);
	free(flat);
	if (err)
		heap_summary__release(out);
	return err;
}

void heap_summary__release(struct heap_summary *s)
{
	free(s->top_name);
	free(s->top_file);
	s->top_name = s->top_file = NULL;
}
