// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* V8's sampling heap profile → pprof; see heapprofile.h and docs/formats.md. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/json.h"
#include "proto/heapprofile.h"
#include "proto/profile_vocab.h"

/* Sampled allocations of one node id. */
struct node_count {
	int64_t id;
	uint64_t count;
};

struct heap_walk {
	struct pprof_builder *b;
	const struct v8_pprof_opts *o;
	struct node_count *counts;
	size_t ncounts, counts_cap;
	struct index_table count_tab;	/* node id -> counts[] */
	bool have_samples;
	uint64_t *path;			/* locations, root first */
	size_t path_cap;
	uint64_t *stack;		/* the same, leaf first */
	size_t stack_cap;
	struct pending {
		struct json_object *node;
		size_t depth;
	} *pending;			/* nodes still to visit */
	size_t npending, pending_cap;
	uint64_t frames;		/* in the samples' stacks so far */
};

static uint32_t id_hash(int64_t id)
{
	return hash__fold32(hash__mix64((uint64_t)id));
}

static bool count_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct heap_walk *)ctx)->counts[idx].id == *(const int64_t *)key;
}

/* The sampled allocations of node id, created at 0 when add is set; NULL when absent. */
static struct node_count *node_count(struct heap_walk *w, int64_t id, bool add, int *err)
{
	uint32_t hash = id_hash(id);
	size_t slot;
	long idx;

	*err = 0;
	if (add && index_table__reserve(&w->count_tab)) {
		*err = -ENOMEM;
		return NULL;
	}
	idx = index_table__lookup(&w->count_tab, hash, count_eq, w, &id, &slot);
	if (idx >= 0)
		return &w->counts[idx];
	if (!add)
		return NULL;
	if (array_grow(&w->counts, &w->counts_cap, w->ncounts + 1)) {
		*err = -ENOMEM;
		return NULL;
	}
	index_table__set(&w->count_tab, slot, hash, (uint32_t)w->ncounts);
	w->counts[w->ncounts] = (struct node_count){ .id = id };
	return &w->counts[w->ncounts++];
}

static int heap_count_samples(struct heap_walk *w, struct json_object *samples, char *err,
			      size_t errlen)
{
	size_t n;

	if (!samples)
		return 0;
	if (!json_object_is_type(samples, json_type_array)) {
		errmsg__set(err, errlen, "\"samples\" is not an array");
		return -EINVAL;
	}
	w->have_samples = true;
	n = json_object_array_length(samples);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(samples, i);
		struct node_count *c;
		int64_t id;
		int ret;

		if (!json__int64(json__member(s, "nodeId"), &id)) {
			errmsg__set(err, errlen, "samples[%zu]: nodeId is not an integer", i);
			return -EINVAL;
		}
		c = node_count(w, id, true, &ret);
		if (!c)
			return ret;
		c->count++;
	}
	return 0;
}

static int push_pending(struct heap_walk *w, struct json_object *node, size_t depth)
{
	if (array_grow(&w->pending, &w->pending_cap, w->npending + 1))
		return -ENOMEM;
	w->pending[w->npending++] = (struct pending){ node, depth };
	return 0;
}

/* A node with selfSize: one sample on its path. */
static int heap_sample(struct heap_walk *w, int64_t id, int64_t self, size_t depth)
{
	const struct node_count *c;
	int64_t values[2];
	int ret;

	c = node_count(w, id, false, &ret);
	values[0] = c ? (int64_t)c->count : !w->have_samples;
	values[1] = self;
	if (array_grow(&w->stack, &w->stack_cap, depth))
		return -ENOMEM;
	for (size_t i = 0; i < depth; i++)
		w->stack[i] = w->path[depth - 1 - i];
	return pprof_builder__add_sample(w->b, w->stack, depth, values, 2, w->o->labels,
					 w->o->nlabels);
}

static int heap_node(struct heap_walk *w, struct json_object *node, size_t depth, char *err,
		     size_t errlen)
{
	struct json_object *children = json__member(node, "children");
	struct v8_call_frame cf;
	int64_t self = 0, id = 0;
	char what[64];

	if (!json_object_is_type(node, json_type_object)) {
		errmsg__set(err, errlen, "a heap profile node at depth %zu is not an object", depth);
		return -EINVAL;
	}
	if (!json__int64(json__member(node, "id"), &id)) {
		errmsg__set(err, errlen, "a heap profile node at depth %zu has no integer id",
			    depth);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "heap node id %" PRId64, id);
	if (!v8_json__number(json__member(node, "selfSize"), &self) || self < 0) {
		errmsg__set(err, errlen, "%s: selfSize is not a non-negative number", what);
		return -EINVAL;
	}
	if (children && !json_object_is_type(children, json_type_array)) {
		errmsg__set(err, errlen, "%s: children is not an array", what);
		return -EINVAL;
	}
	/* The head is V8's "(root)": no frame of its own. */
	if (depth) {
		if (v8_call_frame__load(node, what, false, &cf, err, errlen))
			return -EINVAL;
		if (array_grow(&w->path, &w->path_cap, depth))
			return -ENOMEM;
		w->path[depth - 1] = v8_call_frame__location(w->b, w->o, cf.function_name, cf.url,
							     cf.line, cf.column);
		if (!w->path[depth - 1])
			return -ENOMEM;
	}
	for (size_t i = children ? json_object_array_length(children) : 0; i-- > 0;)
		if (push_pending(w, json_object_array_get_idx(children, i), depth + 1))
			return -ENOMEM;
	if (!self || !depth)
		return 0;
	/* A wide tree under a deep chain would write frames quadratic in its size. */
	w->frames += depth;
	if (w->frames > V8_PROFILE_MAX_STACK_FRAMES) {
		errmsg__set(err, errlen,
			    "the stacks of its samples hold over %llu frames in all (V8 writes no "
			    "such tree)", V8_PROFILE_MAX_STACK_FRAMES);
		return -EFBIG;
	}
	return heap_sample(w, id, self, depth);
}

/* Sample types, period, time and comments. */
static int heap_header(struct heap_walk *w, uint64_t sampling_interval)
{
	char comment[200], interval[48];
	int ret;

	ret = pprof_builder__add_sample_type(w->b, SAMPLE_TYPE_ALLOC_OBJECTS, UNIT_COUNT);
	if (!ret)
		ret = pprof_builder__add_sample_type(w->b, SAMPLE_TYPE_ALLOC_SPACE, UNIT_BYTES);
	if (ret)
		return ret;
	pprof_builder__set_default_sample_type(w->b, SAMPLE_TYPE_ALLOC_SPACE);
	pprof_builder__set_period(w->b, PERIOD_TYPE_SPACE, UNIT_BYTES,
				  sampling_interval > INT64_MAX ? INT64_MAX
								: (int64_t)sampling_interval);
	pprof_builder__set_time(w->b, w->o->time_nanos, 0);
	for (size_t i = 0; i < w->o->ncomments; i++) {
		ret = pprof_builder__add_comment(w->b, w->o->comments[i]);
		if (ret)
			return ret;
	}
	if (sampling_interval)
		snprintf(interval, sizeof(interval), "interval %" PRIu64 " bytes",
			 sampling_interval);
	else
		snprintf(interval, sizeof(interval), "interval unknown");
	snprintf(comment, sizeof(comment),
		 "heap: allocations sampled during the window (V8 sampling heap profiler, %s); "
		 "this is not retained memory",
		 interval);
	return pprof_builder__add_comment(w->b, comment);
}

/* Iterative: the tree is as deep as the deepest stack V8 kept. */
static int heap_walk_tree(struct heap_walk *w, struct json_object *head, char *err,
			  size_t errlen)
{
	int ret = push_pending(w, head, 0);

	while (!ret && w->npending) {
		struct pending next = w->pending[--w->npending];

		ret = heap_node(w, next.node, next.depth, err, errlen);
	}
	return ret;
}

int v8_heap_profile__to_pprof_json(struct json_object *profile, const struct v8_pprof_opts *o,
				   uint64_t sampling_interval, struct pprof_builder **out,
				   char *err, size_t errlen)
{
	static const struct v8_pprof_opts no_opts;
	struct heap_walk w = { .o = o ? o : &no_opts };
	struct json_object *prof;
	int ret;

	*out = NULL;
	prof = v8_json__unwrap(profile, "head", err, errlen);
	if (!prof)
		return -EINVAL;
	w.b = pprof_builder__new();
	ret = w.b ? 0 : -ENOMEM;
	if (!ret)
		ret = heap_count_samples(&w, json__member(prof, "samples"), err, errlen);
	if (!ret)
		ret = heap_header(&w, sampling_interval);
	if (!ret)
		ret = heap_walk_tree(&w, json__member(prof, "head"), err, errlen);
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	index_table__release(&w.count_tab);
	free(w.counts);
	free(w.path);
	free(w.stack);
	free(w.pending);
	if (ret) {
		pprof_builder__free(w.b);
		return ret;
	}
	*out = w.b;
	return 0;
}

int v8_heap_profile__to_pprof(const char *json, size_t len, const struct v8_pprof_opts *o,
			      uint64_t sampling_interval, struct pprof_builder **out, char *err,
			      size_t errlen)
{
	struct json_object *obj = v8_json__parse(json, len, err, errlen);
	int ret;

	*out = NULL;
	if (!obj)
		return -errno;
	ret = v8_heap_profile__to_pprof_json(obj, o, sampling_interval, out, err, errlen);
	json_object_put(obj);
	return ret;
}
