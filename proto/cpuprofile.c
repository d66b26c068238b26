// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * .cpuprofile → struct v8_cpu_profile → pprof.  See cpuprofile.h for the
 * contract and docs/formats.md for the field mapping; the way back to a
 * .cpuprofile is in cpuprofile_write.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/json.h"
#include "lib/saturate.h"
#include "proto/cpuprofile.h"
#include "proto/profile_vocab.h"

#define NO_PARENT UINT32_MAX
/* V8's default --cpu-profiler-sampling-interval, when nothing says otherwise. */
#define DEFAULT_INTERVAL_US 1000

/* ---- Loading and validating -------------------------------------------- */

/* Node ids → indexes into p->nodes. */
struct id_index {
	struct index_table t;
	const struct v8_cpu_profile *p;
};

static uint32_t id_hash(uint64_t id)
{
	return hash__fold32(hash__mix64(id));
}

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct v8_cpu_profile *)ctx)->nodes[idx].id == *(const uint32_t *)key;
}

/* The index of the node a JSON value names by id, or -1 (not an id, or no such node). */
static long id_index__find(const struct id_index *ids, struct json_object *v)
{
	int64_t num;
	uint32_t id;

	if (!json__int64(v, &num) || num < 1 || num > UINT32_MAX)
		return -1;
	id = (uint32_t)num;
	return index_table__lookup(&ids->t, id_hash(id), id_eq, ids->p, &id, NULL);
}

/* Node i's id, callFrame, hitCount and the number of its children; its id indexed. */
static int load_node(struct v8_cpu_profile *p, size_t i, struct json_object *node,
		     struct id_index *ids, char *err, size_t errlen)
{
	struct v8_cpu_node *nd = &p->nodes[i];
	struct json_object *v, *ch;
	struct v8_call_frame cf;
	char what[64];
	int64_t num;
	size_t slot;
	long other;

	snprintf(what, sizeof(what), "nodes[%zu]", i);
	if (!json_object_is_type(node, json_type_object)) {
		errmsg__set(err, errlen, "%s is not an object", what);
		return -EINVAL;
	}
	if (!json__int64(json__member(node, "id"), &num) || num < 1 || num > UINT32_MAX) {
		errmsg__set(err, errlen, "%s: id is not a positive 32-bit integer", what);
		return -EINVAL;
	}
	nd->id = (uint32_t)num;
	snprintf(what, sizeof(what), "node id %u", nd->id);
	if (v8_call_frame__load(node, what, true, &cf, err, errlen))
		return -EINVAL;
	nd->function_name = cf.function_name;
	nd->script_id = cf.script_id;
	nd->url = cf.url;
	nd->line = (int32_t)cf.line;
	nd->column = (int32_t)cf.column;
	nd->parent = NO_PARENT;
	v = json__member(node, "hitCount");
	if (v) {
		if (!json__int64(v, &num) || num < 0 || num > UINT32_MAX) {
			errmsg__set(err, errlen, "%s: hitCount is not a 32-bit count", what);
			return -EINVAL;
		}
		nd->hit_count = (uint32_t)num;
	}
	ch = json__member(node, "children");
	if (ch) {
		if (!json_object_is_type(ch, json_type_array)) {
			errmsg__set(err, errlen, "%s: children is not an array", what);
			return -EINVAL;
		}
		nd->nchildren = (uint32_t)json_object_array_length(ch);
	}
	if (index_table__reserve(&ids->t))
		return -ENOMEM;
	other = index_table__lookup(&ids->t, id_hash(nd->id), id_eq, p, &nd->id, &slot);
	if (other >= 0) {
		errmsg__set(err, errlen, "nodes[%zu]: id %u repeats nodes[%ld]", i, nd->id, other);
		return -EINVAL;
	}
	index_table__set(&ids->t, slot, id_hash(nd->id), (uint32_t)i);
	return 0;
}

static int load_nodes(struct json_object *nodes, struct v8_cpu_profile *p, struct id_index *ids,
		      char *err, size_t errlen)
{
	size_t n;
	int ret;

	if (!json_object_is_type(nodes, json_type_array) || !json_object_array_length(nodes)) {
		errmsg__set(err, errlen, "\"nodes\" is not a non-empty array");
		return -EINVAL;
	}
	n = json_object_array_length(nodes);
	if (n >= NO_PARENT) {
		errmsg__set(err, errlen, "%zu nodes: too many", n);
		return -EFBIG;
	}
	p->nodes = calloc(n, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	p->nnodes = n;
	for (size_t i = 0; i < n; i++) {
		ret = load_node(p, i, json_object_array_get_idx(nodes, i), ids, err, errlen);
		if (ret)
			return ret;
	}
	if (strcmp(p->nodes[0].function_name, FRAME_NAME_ROOT)) {
		errmsg__set(err, errlen, "nodes[0] (id %u) is \"%s\", not the \"%s\" node",
			    p->nodes[0].id, p->nodes[0].function_name, FRAME_NAME_ROOT);
		return -EINVAL;
	}
	return 0;
}

/* Children ids → indexes, and each child's parent: one parent each, never the root. */
static int link_children(struct json_object *nodes, struct v8_cpu_profile *p,
			 const struct id_index *ids, char *err, size_t errlen)
{
	size_t total = 0, used = 0;

	for (size_t i = 0; i < p->nnodes; i++)
		total += p->nodes[i].nchildren;
	p->child_store = malloc((total ? total : 1) * sizeof(uint32_t));
	if (!p->child_store)
		return -ENOMEM;
	for (size_t i = 0; i < p->nnodes; i++) {
		struct json_object *ch = json__member(json_object_array_get_idx(nodes, i),
						      "children");
		struct v8_cpu_node *nd = &p->nodes[i];

		nd->children = p->child_store + used;
		for (uint32_t k = 0; k < nd->nchildren; k++) {
			long j = id_index__find(ids, json_object_array_get_idx(ch, k));

			if (j < 0) {
				errmsg__set(err, errlen, "node id %u: children[%u] is not a node id",
					    nd->id, k);
				return -EINVAL;
			}
			if (j == 0) {
				errmsg__set(err, errlen, "node id %u: the root is its child (a cycle)",
					    nd->id);
				return -EINVAL;
			}
			if (p->nodes[j].parent != NO_PARENT) {
				errmsg__set(err, errlen,
					    "node id %u has two parents (node ids %u and %u)",
					    p->nodes[j].id, p->nodes[p->nodes[j].parent].id,
					    nd->id);
				return -EINVAL;
			}
			p->nodes[j].parent = (uint32_t)i;
			nd->children[k] = (uint32_t)j;
		}
		used += nd->nchildren;
	}
	return 0;
}

/* Name the first node a walk from the root left out, and say whether it hangs in a loop. */
static int name_unreachable(const struct v8_cpu_profile *p, const uint32_t *reached_list,
			    size_t nreached, char *err, size_t errlen)
{
	bool *reached = calloc(p->nnodes, sizeof(*reached));
	size_t k, steps;
	uint32_t up;

	if (!reached)
		return -ENOMEM;
	for (k = 0; k < nreached; k++)
		reached[reached_list[k]] = true;
	for (k = 0; reached[k]; k++)
		;
	up = (uint32_t)k;
	for (steps = 0; steps <= p->nnodes && p->nodes[up].parent != NO_PARENT; steps++)
		up = p->nodes[up].parent;
	free(reached);
	if (p->nodes[up].parent == NO_PARENT)
		errmsg__set(err, errlen, "node id %u is not reachable from the root",
			    p->nodes[k].id);
	else
		errmsg__set(err, errlen, "node id %u is in a cycle", p->nodes[k].id);
	return -EINVAL;
}

/*
 * With one parent each, a walk from the root meets every node at most once;
 * it sets each node's depth on the way (parents come first).
 */
static int check_reachable(struct v8_cpu_profile *p, char *err, size_t errlen)
{
	uint32_t *queue = malloc(p->nnodes * sizeof(*queue));
	size_t head = 0, tail = 0;
	int ret = 0;

	if (!queue)
		return -ENOMEM;
	queue[tail++] = 0;
	p->nodes[0].depth = 0;
	while (head < tail) {
		const struct v8_cpu_node *nd = &p->nodes[queue[head++]];

		for (uint32_t k = 0; k < nd->nchildren; k++) {
			p->nodes[nd->children[k]].depth = nd->depth + 1;
			queue[tail++] = nd->children[k];
		}
	}
	if (tail < p->nnodes)
		ret = name_unreachable(p, queue, tail, err, errlen);
	free(queue);
	return ret;
}

static int load_samples(struct json_object *prof, struct v8_cpu_profile *p,
			const struct id_index *ids, char *err, size_t errlen)
{
	struct json_object *samples = json__member(prof, "samples");

	if (!samples)
		return 0;
	if (!json_object_is_type(samples, json_type_array)) {
		errmsg__set(err, errlen, "\"samples\" is not an array");
		return -EINVAL;
	}
	p->nsamples = json_object_array_length(samples);
	p->samples = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*p->samples));
	if (!p->samples)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++) {
		long j = id_index__find(ids, json_object_array_get_idx(samples, i));

		if (j < 0) {
			errmsg__set(err, errlen, "samples[%zu] is not a node id", i);
			return -EINVAL;
		}
		p->samples[i] = (uint32_t)j;
	}
	return 0;
}

static int load_times(struct json_object *prof, struct v8_cpu_profile *p, char *err,
		      size_t errlen)
{
	struct json_object *deltas = json__member(prof, "timeDeltas");

	if (deltas) {
		if (!json_object_is_type(deltas, json_type_array) ||
		    json_object_array_length(deltas) != p->nsamples) {
			errmsg__set(err, errlen,
				    "\"timeDeltas\" is not an array of %zu (as \"samples\")",
				    p->nsamples);
			return -EINVAL;
		}
		p->time_deltas = malloc((p->nsamples ? p->nsamples : 1) * sizeof(int64_t));
		if (!p->time_deltas)
			return -ENOMEM;
		for (size_t i = 0; i < p->nsamples; i++) {
			if (!json__int64(json_object_array_get_idx(deltas, i),
					 &p->time_deltas[i])) {
				errmsg__set(err, errlen, "timeDeltas[%zu] is not an integer", i);
				return -EINVAL;
			}
		}
	}
	if (!v8_json__number(json__member(prof, "startTime"), &p->start_time) ||
	    !v8_json__number(json__member(prof, "endTime"), &p->end_time)) {
		errmsg__set(err, errlen, "\"startTime\" and \"endTime\" must be numbers (µs)");
		return -EINVAL;
	}
	if (p->start_time > p->end_time) {
		errmsg__set(err, errlen, "startTime %" PRId64 " is after endTime %" PRId64,
			    p->start_time, p->end_time);
		return -EINVAL;
	}
	return 0;
}

static uint32_t stack_len(const struct v8_cpu_node *nd)
{
	return nd->depth < V8_CPU_PROFILE_MAX_DEPTH ? nd->depth : V8_CPU_PROFILE_MAX_DEPTH;
}

/*
 * What the conversion to pprof will write, bounded before any of it is:
 * the frames of one stack per node with samples.  Linear in nodes and
 * samples.
 */
static int check_stack_frames(const struct v8_cpu_profile *p, char *err, size_t errlen)
{
	uint64_t total = 0, counted = 0;
	bool *seen = NULL;

	if (p->samples) {
		seen = calloc(p->nnodes, sizeof(*seen));
		if (!seen)
			return -ENOMEM;
		for (size_t i = 0; i < p->nsamples; i++) {
			if (seen[p->samples[i]])
				continue;
			seen[p->samples[i]] = true;
			total += stack_len(&p->nodes[p->samples[i]]);
			counted++;
		}
		free(seen);
	} else {
		for (size_t i = 0; i < p->nnodes; i++) {
			if (!p->nodes[i].hit_count)
				continue;
			total += stack_len(&p->nodes[i]);
			counted++;
		}
	}
	if (total <= V8_PROFILE_MAX_STACK_FRAMES)
		return 0;
	errmsg__set(err, errlen,
		    "the stacks of its %" PRIu64 " nodes with samples hold %" PRIu64
		    " frames in all, over the limit of %llu (V8 writes no such tree)", counted,
		    total, V8_PROFILE_MAX_STACK_FRAMES);
	return -EFBIG;
}

static int cpu_load(struct json_object *prof, struct v8_cpu_profile *p, char *err,
		    size_t errlen)
{
	struct json_object *nodes = json__member(prof, "nodes");
	struct id_index ids = { .p = p };
	int ret;

	ret = load_nodes(nodes, p, &ids, err, errlen);
	if (!ret)
		ret = link_children(nodes, p, &ids, err, errlen);
	if (!ret)
		ret = check_reachable(p, err, errlen);
	if (!ret)
		ret = load_samples(prof, p, &ids, err, errlen);
	if (!ret)
		ret = load_times(prof, p, err, errlen);
	if (!ret)
		ret = check_stack_frames(p, err, errlen);
	index_table__release(&ids.t);
	return ret;
}

void v8_cpu_profile__free(struct v8_cpu_profile *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->child_store);
	free(p->samples);
	free(p->time_deltas);
	json_object_put(p->json);
	free(p);
}

int v8_cpu_profile__from_json(struct json_object *profile, struct v8_cpu_profile **out,
			      char *err, size_t errlen)
{
	struct v8_cpu_profile *p;
	struct json_object *prof;
	int ret;

	*out = NULL;
	prof = v8_json__unwrap(profile, "nodes", err, errlen);
	if (!prof)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->json = json_object_get(prof);
	ret = cpu_load(prof, p, err, errlen);
	if (ret) {
		if (ret == -ENOMEM)
			errmsg__set(err, errlen, "out of memory");
		v8_cpu_profile__free(p);
		return ret;
	}
	*out = p;
	return 0;
}

int v8_cpu_profile__parse(const char *json, size_t len, struct v8_cpu_profile **out, char *err,
			  size_t errlen)
{
	struct json_object *o = v8_json__parse(json, len, err, errlen);
	int ret;

	*out = NULL;
	if (!o)
		return -errno;
	ret = v8_cpu_profile__from_json(o, out, err, errlen);
	json_object_put(o);
	return ret;
}

int v8_cpu_profile__validate_json(const char *json, size_t len, char *err, size_t errlen)
{
	struct v8_cpu_profile *p;
	int ret = v8_cpu_profile__parse(json, len, &p, err, errlen);

	v8_cpu_profile__free(p);
	return ret;
}

/* ---- To pprof ------------------------------------------------------------ */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int64_t v8_cpu_profile__median_delta_us(const struct v8_cpu_profile *p)
{
	int64_t *d, med;

	if (!p->time_deltas || !p->nsamples)
		return 0;
	d = malloc(p->nsamples * sizeof(*d));
	if (!d)
		return 0;
	memcpy(d, p->time_deltas, p->nsamples * sizeof(*d));
	qsort(d, p->nsamples, sizeof(*d), cmp_i64);
	med = d[p->nsamples / 2];
	free(d);
	return med;
}

/* The nominal interval in µs: the median delta, else the mean over the window. */
static int64_t interval_us(const struct v8_cpu_profile *p)
{
	int64_t med = v8_cpu_profile__median_delta_us(p);

	if (med <= 0 && p->nsamples)
		med = sub_sat(p->end_time, p->start_time) / (int64_t)p->nsamples;
	return med > 0 ? med : DEFAULT_INTERVAL_US;
}

static const char *node_class(const struct v8_cpu_profile *p, uint32_t idx)
{
	const struct v8_cpu_node *nd = &p->nodes[idx];

	if (!strcmp(nd->function_name, FRAME_NAME_GC))
		return sample_class__str(CLASS_GC);
	if (!strcmp(nd->function_name, FRAME_NAME_IDLE))
		return sample_class__str(CLASS_IDLE);
	if (!strcmp(nd->function_name, FRAME_NAME_PROGRAM) || idx == 0)
		return CLASS_NAME_V8_PROGRAM;
	if (*nd->url)
		return sample_class__str(CLASS_JS);
	return sample_class__str(CLASS_V8_BUILTIN);
}

/*
 * One pprof sample per node with samples: its stack, leaf first, without
 * the root, cut to V8_CPU_PROFILE_MAX_DEPTH frames (*cut counts those).
 * The load bounded the frames written in all (check_stack_frames()).
 */
static int cpu_add_samples(struct pprof_builder *b, const struct v8_cpu_profile *p,
			   const struct v8_pprof_opts *o, const uint64_t *counts,
			   int64_t interval_ns, size_t *cut)
{
	uint64_t *locs = NULL, *stack = NULL;
	struct pprof_label *labels = NULL;
	int ret = 0;

	*cut = 0;
	locs = calloc(p->nnodes, sizeof(*locs));
	stack = malloc(V8_CPU_PROFILE_MAX_DEPTH * sizeof(*stack));
	labels = calloc(o->nlabels + 1, sizeof(*labels));
	if (!locs || !stack || !labels) {
		ret = -ENOMEM;
		goto out;
	}
	if (o->nlabels)
		memcpy(labels + 1, o->labels, o->nlabels * sizeof(*labels));
	labels[0].key = LABEL_CLASS;
	for (size_t i = 0; i < p->nnodes; i++) {
		int64_t values[2];
		size_t depth = 0;

		if (!counts[i])
			continue;
		*cut += p->nodes[i].depth > V8_CPU_PROFILE_MAX_DEPTH;
		for (uint32_t up = (uint32_t)i; up != 0 && depth < V8_CPU_PROFILE_MAX_DEPTH;
		     up = p->nodes[up].parent) {
			const struct v8_cpu_node *nd = &p->nodes[up];

			if (!locs[up]) {
				locs[up] = v8_call_frame__location(b, o, nd->function_name, nd->url,
								   nd->line, nd->column);
				if (!locs[up]) {
					ret = -ENOMEM;
					goto out;
				}
			}
			stack[depth++] = locs[up];
		}
		values[0] = counts[i] > INT64_MAX ? INT64_MAX : (int64_t)counts[i];
		values[1] = mul_sat(values[0], interval_ns);
		labels[0].str = node_class(p, (uint32_t)i);
		ret = pprof_builder__add_sample(b, stack, depth, values, 2, labels,
						o->nlabels + 1);
		if (ret)
			goto out;
	}
out:
	free(locs);
	free(stack);
	free(labels);
	return ret;
}

/*
 * Samples per node: one per entry of `samples` (the builder would merge
 * them anyway), else each node's hitCount.  *total gets their sum,
 * *deltas the time they cover in µs.
 */
static void count_samples(const struct v8_cpu_profile *p, uint64_t *counts, size_t *total,
			  int64_t *deltas)
{
	int64_t span = sub_sat(p->end_time, p->start_time);

	*total = 0;
	*deltas = span;
	if (!p->samples) {
		for (size_t i = 0; i < p->nnodes; i++) {
			counts[i] = p->nodes[i].hit_count;
			*total += p->nodes[i].hit_count;
		}
		return;
	}
	for (size_t i = 0; i < p->nsamples; i++)
		counts[p->samples[i]]++;
	*total = p->nsamples;
	if (p->time_deltas) {
		*deltas = 0;
		for (size_t i = 0; i < p->nsamples; i++)
			*deltas = add_sat(*deltas, p->time_deltas[i]);
	}
}

/* Sample types, period, time and comments: everything but the samples. */
static int cpu_header(struct pprof_builder *b, const struct v8_cpu_profile *p,
		      const struct v8_pprof_opts *o, int64_t interval_ns, size_t total,
		      int64_t deltas)
{
	char comment[200];
	int ret;

	ret = pprof_builder__add_sample_type(b, SAMPLE_TYPE_SAMPLES, UNIT_COUNT);
	if (!ret)
		ret = pprof_builder__add_sample_type(b, SAMPLE_TYPE_CPU, UNIT_NANOSECONDS);
	if (ret)
		return ret;
	pprof_builder__set_default_sample_type(b, SAMPLE_TYPE_CPU);
	pprof_builder__set_period(b, SAMPLE_TYPE_CPU, UNIT_NANOSECONDS, interval_ns);
	pprof_builder__set_time(b, o->time_nanos,
				mul_sat(sub_sat(p->end_time, p->start_time), 1000));
	for (size_t i = 0; i < o->ncomments; i++) {
		ret = pprof_builder__add_comment(b, o->comments[i]);
		if (ret)
			return ret;
	}
	snprintf(comment, sizeof(comment),
		 V8_CPU_PROFILE_SOURCE " (.cpuprofile), %zu samples, mean interval %.1f µs",
		 total, total ? (double)deltas / (double)total : 0.0);
	return pprof_builder__add_comment(b, comment);
}

int v8_cpu_profile__to_pprof(const struct v8_cpu_profile *p, const struct v8_pprof_opts *o,
			     struct pprof_builder **out)
{
	static const struct v8_pprof_opts no_opts;
	struct pprof_builder *b;
	uint64_t *counts = NULL;
	int64_t interval_ns, deltas;
	size_t total, cut = 0;
	char note[160];
	int ret;

	*out = NULL;
	if (!o)
		o = &no_opts;
	interval_ns = o->interval_ns ? (int64_t)(o->interval_ns > INT64_MAX ? INT64_MAX
								  : o->interval_ns)
				     : mul_sat(interval_us(p), 1000);
	counts = calloc(p->nnodes, sizeof(*counts));
	b = pprof_builder__new();
	if (!counts || !b) {
		ret = -ENOMEM;
		goto out;
	}
	count_samples(p, counts, &total, &deltas);
	ret = cpu_header(b, p, o, interval_ns, total, deltas);
	if (!ret)
		ret = cpu_add_samples(b, p, o, counts, interval_ns, &cut);
	if (!ret && cut) {
		snprintf(note, sizeof(note),
			 "%zu stacks deeper than %d frames keep their %d leaf-most frames", cut,
			 V8_CPU_PROFILE_MAX_DEPTH, V8_CPU_PROFILE_MAX_DEPTH);
		ret = pprof_builder__add_comment(b, note);
	}
out:
	free(counts);
	if (ret) {
		pprof_builder__free(b);
		return ret;
	}
	*out = b;
	return 0;
}

bool v8_cpu_profile__converted(const struct pprof_profile *p)
{
	const Perftools__Profiles__Profile *pb = pprof_profile__proto(p);

	for (size_t i = 0; i < pb->n_comment; i++)
		if (strstr(pprof_profile__string(p, pb->comment[i]), V8_CPU_PROFILE_SOURCE))
			return true;
	return false;
}
