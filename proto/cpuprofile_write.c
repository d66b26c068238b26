// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pprof → .cpuprofile (see cpuprofile.h): the samples' stacks become a
 * call tree with a node per distinct path, written as DevTools writes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/json.h"
#include "lib/saturate.h"
#include "proto/cpuprofile.h"
#include "proto/profile_vocab.h"

#define NO_NODE UINT32_MAX

/* json-c sizes arrays with an int. */
_Static_assert(V8_PROFILE_MAX_SAMPLES <= INT32_MAX, "samples must fit a json-c array");
/* V8's default --cpu-profiler-sampling-interval, when nothing says otherwise. */
#define DEFAULT_INTERVAL_US 1000

/* A callFrame. */
struct out_frame {
	const char *name, *url;
	int64_t line;
};

/* A node of the call tree; children are linked in the order first met. */
struct out_node {
	uint32_t frame, parent;
	uint64_t hits;
	uint32_t first_child, next_sibling, last_child;	/* NO_NODE: none */
};

struct tree {
	const struct pprof_profile *prof;
	struct out_frame *frames;
	size_t nframes, frames_cap;
	char **owned;			/* names made up here */
	size_t nowned, owned_cap;
	struct index_table frame_tab;	/* content -> frames[] */
	uint32_t *frame_of;		/* pprof frame id -> frames[] + 1 */
	struct out_node *nodes;
	size_t nnodes, nodes_cap;
	struct index_table child_tab;	/* (parent, frame) -> nodes[] */
	uint32_t *samples;		/* nodes[], one per sample */
	size_t nsamples, samples_cap;
};

static uint32_t frame_hash(const struct out_frame *f)
{
	uint64_t h = hash__word(HASH_SEED, (uint64_t)f->line);

	return hash__fold32(hash__field(hash__field(h, f->name), f->url));
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct out_frame *a = &((const struct tree *)ctx)->frames[idx];
	const struct out_frame *b = key;

	return a->line == b->line && !strcmp(a->name, b->name) && !strcmp(a->url, b->url);
}

static uint32_t child_hash(uint32_t parent, uint32_t frame)
{
	return hash__fold32(hash__word(hash__word(HASH_SEED, parent), frame));
}

static bool child_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct out_node *n = &((const struct tree *)ctx)->nodes[idx];
	const uint32_t *k = key;

	return n->parent == k[0] && n->frame == k[1];
}

static char *tree_own(struct tree *t, char *s)
{
	if (!s || array_grow(&t->owned, &t->owned_cap, t->nowned + 1)) {
		free(s);
		return NULL;
	}
	t->owned[t->nowned++] = s;
	return s;
}

/* The callFrame of a pprof frame, as V8 would have named it. */
static int frame_key(struct tree *t, const struct pprof_frame *f, struct out_frame *key)
{
	char *s = NULL;

	if (f->has_function) {
		key->name = *f->name ? f->name : f->system_name;
		if (!strcmp(key->name, FRAME_NAME_ANONYMOUS))
			key->name = "";
		key->url = f->filename;
		key->line = f->start_line > 0 && f->start_line <= INT32_MAX ? f->start_line - 1
									   : -1;
		return 0;
	}
	if (asprintf(&s, "0x%" PRIx64, f->address) < 0)
		s = NULL;
	key->name = tree_own(t, s);
	key->url = "";
	key->line = -1;
	return key->name ? 0 : -ENOMEM;
}

/* The callFrame of a pprof frame: deduplicated by content, so a path is by function. */
static int tree_frame(struct tree *t, const struct pprof_frame *f, uint32_t *out)
{
	struct out_frame key;
	uint32_t hash;
	size_t slot;
	long idx;
	int ret;

	if (t->frame_of[f->id]) {
		*out = t->frame_of[f->id] - 1;
		return 0;
	}
	ret = frame_key(t, f, &key);
	if (ret)
		return ret;
	if (index_table__reserve(&t->frame_tab))
		return -ENOMEM;
	hash = frame_hash(&key);
	idx = index_table__lookup(&t->frame_tab, hash, frame_eq, t, &key, &slot);
	if (idx < 0) {
		if (array_grow(&t->frames, &t->frames_cap, t->nframes + 1))
			return -ENOMEM;
		idx = (long)t->nframes;
		t->frames[t->nframes++] = key;
		index_table__set(&t->frame_tab, slot, hash, (uint32_t)idx);
	}
	t->frame_of[f->id] = (uint32_t)idx + 1;
	*out = (uint32_t)idx;
	return 0;
}

static int tree_node(struct tree *t, uint32_t parent, uint32_t frame, uint32_t *out)
{
	uint32_t key[2] = { parent, frame }, hash = child_hash(parent, frame);
	struct out_node *nd;
	size_t slot;
	long idx;

	if (index_table__reserve(&t->child_tab))
		return -ENOMEM;
	idx = index_table__lookup(&t->child_tab, hash, child_eq, t, key, &slot);
	if (idx < 0) {
		if (t->nnodes >= NO_NODE - 1 || array_grow(&t->nodes, &t->nodes_cap, t->nnodes + 1))
			return -ENOMEM;
		idx = (long)t->nnodes;
		nd = &t->nodes[t->nnodes++];
		*nd = (struct out_node){ .frame = frame, .parent = parent,
					 .first_child = NO_NODE, .next_sibling = NO_NODE,
					 .last_child = NO_NODE };
		if (t->nodes[parent].last_child == NO_NODE)
			t->nodes[parent].first_child = (uint32_t)idx;
		else
			t->nodes[t->nodes[parent].last_child].next_sibling = (uint32_t)idx;
		t->nodes[parent].last_child = (uint32_t)idx;
		index_table__set(&t->child_tab, slot, hash, (uint32_t)idx);
	}
	*out = (uint32_t)idx;
	return 0;
}

static void tree_release(struct tree *t)
{
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->frames);
	index_table__release(&t->frame_tab);
	free(t->frame_of);
	free(t->nodes);
	index_table__release(&t->child_tab);
	free(t->samples);
}

/* v in unit as µs; -1 when unit is not a time unit. */
static int64_t to_us(int64_t v, const char *unit)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {
		{ UNIT_NANOSECONDS, 1 }, { "ns", 1 }, { "microseconds", 1000 }, { "us", 1000 },
		{ "milliseconds", 1000000 }, { "ms", 1000000 }, { "seconds", 1000000000 },
		{ "s", 1000000000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit))
			return mul_sat(v, units[i].ns) / 1000;
	return -1;
}

/* The root, "(root)", node 0 over frame 0. */
static int tree_init(struct tree *t)
{
	t->frame_of = calloc(pprof_profile__frame_count(t->prof) + 1, sizeof(*t->frame_of));
	if (!t->frame_of || array_grow(&t->frames, &t->frames_cap, 1) ||
	    array_grow(&t->nodes, &t->nodes_cap, 1))
		return -ENOMEM;
	t->frames[t->nframes++] = (struct out_frame){ FRAME_NAME_ROOT, "", -1 };
	t->nodes[t->nnodes++] = (struct out_node){ .frame = 0, .parent = NO_NODE,
						   .first_child = NO_NODE,
						   .next_sibling = NO_NODE,
						   .last_child = NO_NODE };
	return 0;
}

/* Sample s's stack as a path from the root: *node gets its leaf. */
static int tree_path(struct tree *t, size_t s, struct pprof_stack *st, uint32_t *node)
{
	uint32_t cur = 0;
	int ret = pprof_profile__stack(t->prof, s, st);

	for (size_t i = st->n; !ret && i-- > 0;) {
		uint32_t frame;

		ret = tree_frame(t, st->frames[i], &frame);
		if (!ret)
			ret = tree_node(t, cur, frame, &cur);
	}
	*node = cur;
	return ret;
}

static int build_tree(struct tree *t, size_t count_index, char *err, size_t errlen)
{
	const struct pprof_profile *p = t->prof;
	struct pprof_stack st = { 0 };
	int ret = tree_init(t);

	for (size_t s = 0; !ret && s < pprof_profile__sample_count(p); s++) {
		int64_t c = pprof_profile__value(p, s, count_index);
		uint32_t leaf;

		/* A negative count is no number of samples: a diff has no .cpuprofile. */
		if (c <= 0)
			continue;
		if ((uint64_t)c > V8_PROFILE_MAX_SAMPLES - t->nsamples) {
			errmsg__set(err, errlen,
				    "more than %llu samples: too many for a .cpuprofile",
				    V8_PROFILE_MAX_SAMPLES);
			ret = -EFBIG;
			break;
		}
		ret = tree_path(t, s, &st, &leaf);
		if (ret)
			break;
		t->nodes[leaf].hits += (uint64_t)c;
		if (array_grow(&t->samples, &t->samples_cap, t->nsamples + (size_t)c)) {
			ret = -ENOMEM;
			break;
		}
		for (int64_t k = 0; k < c; k++)
			t->samples[t->nsamples++] = leaf;
	}
	pprof_stack__release(&st);
	return ret;
}

/* ---- Writing ------------------------------------------------------------- */

/*
 * What the writer needs besides the tree: node order and ids, and script
 * ids.  The nodes and the per-sample arrays are streamed (json__part):
 * as json-c objects, a profile of 100k nodes and a
 * million samples took ten times the memory and four times the time.
 */
struct writer {
	const struct tree *t;
	uint32_t *order;		/* nodes in pre-order, as V8 writes them */
	uint32_t *id;			/* per node: its id (pre-order position + 1) */
	uint32_t *script_no;		/* per frame: its url's script id, 0 for none */
	uint32_t nscripts;
	struct index_table scripts;	/* url -> the first frame naming it */
	int64_t delta_us;		/* every sample's timeDelta */
};

static void writer_release(struct writer *w)
{
	free(w->id);
	free(w->order);
	free(w->script_no);
	index_table__release(&w->scripts);
}

/* V8 writes nodes in pre-order, ids in that order: children before siblings. */
static int number_nodes(struct writer *w)
{
	const struct tree *t = w->t;
	uint32_t *stack = malloc(t->nnodes * sizeof(*stack));
	size_t norder = 0, sp = 0;

	w->order = malloc(t->nnodes * sizeof(*w->order));
	w->id = calloc(t->nnodes, sizeof(*w->id));
	if (!stack || !w->order || !w->id) {
		free(stack);
		return -ENOMEM;
	}
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		size_t first = sp;

		w->id[i] = (uint32_t)norder + 1;
		w->order[norder++] = i;
		for (uint32_t c = t->nodes[i].first_child; c != NO_NODE;
		     c = t->nodes[c].next_sibling)
			stack[sp++] = c;
		/* children were pushed in order: reverse so the first is visited first */
		for (size_t a = first, z = sp; a + 1 < z; a++, z--) {
			uint32_t tmp = stack[a];

			stack[a] = stack[z - 1];
			stack[z - 1] = tmp;
		}
	}
	free(stack);
	return 0;
}

static bool url_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct tree *)ctx)->frames[idx].url, key);
}

/* The scriptId of a frame: urls numbered from 1 in the order nodes first name them. */
static int script_id(struct writer *w, uint32_t frame, uint32_t *id)
{
	const char *url = w->t->frames[frame].url;
	uint32_t hash;
	size_t slot;
	long first;

	*id = 0;
	if (!*url)
		return 0;
	if (index_table__reserve(&w->scripts))
		return -ENOMEM;
	hash = hash__fold32(hash__str(HASH_SEED, url));
	first = index_table__lookup(&w->scripts, hash, url_eq, w->t, url, &slot);
	if (first < 0) {
		index_table__set(&w->scripts, slot, hash, frame);
		w->script_no[frame] = ++w->nscripts;
		first = frame;
	}
	*id = w->script_no[first];
	return 0;
}

#define OUT(s) json_out__raw(out, s, sizeof(s) - 1)

/* {"functionName":..,"scriptId":"N","url":..,"lineNumber":N,"columnNumber":-1} */
static int call_frame_out(struct json_out *out, const struct out_frame *f, uint32_t script)
{
	int err = 0;

	err |= OUT("{\"functionName\":");
	err |= json_out__text(out, f->name);
	err |= OUT(",\"scriptId\":\"");
	err |= json_out__int(out, script);
	err |= OUT("\",\"url\":");
	err |= json_out__text(out, f->url);
	err |= OUT(",\"lineNumber\":");
	err |= json_out__int(out, f->line);
	err |= OUT(",\"columnNumber\":-1}");
	return err;
}

static int node_out(struct json_out *out, struct writer *w, uint32_t i)
{
	const struct out_node *nd = &w->t->nodes[i];
	uint32_t script;
	int err = 0;

	if (script_id(w, nd->frame, &script))
		return -1;
	err |= OUT("{\"id\":");
	err |= json_out__int(out, w->id[i]);
	err |= OUT(",\"callFrame\":");
	err |= call_frame_out(out, &w->t->frames[nd->frame], script);
	err |= OUT(",\"hitCount\":");
	err |= json_out__int(out, (int64_t)nd->hits);
	if (nd->first_child != NO_NODE) {
		err |= OUT(",\"children\":[");
		for (uint32_t c = nd->first_child; !err && c != NO_NODE;
		     c = w->t->nodes[c].next_sibling) {
			if (c != nd->first_child)
				err |= OUT(",");
			err |= json_out__int(out, w->id[c]);
		}
		err |= OUT("]");
	}
	return err | OUT("}");
}

/* The "nodes" array, in pre-order. */
static int nodes_out(struct json_out *out, const void *ctx)
{
	struct writer *w = (struct writer *)ctx;
	int err = OUT("[");

	for (size_t k = 0; !err && k < w->t->nnodes; k++) {
		if (k)
			err |= OUT(",");
		err |= node_out(out, w, w->order[k]);
	}
	return err | OUT("]");
}

/* "samples": the id of each sample's node. */
static int samples_out(struct json_out *out, const void *ctx)
{
	const struct writer *w = ctx;
	int err = OUT("[");

	for (size_t i = 0; !err && i < w->t->nsamples; i++) {
		if (i)
			err |= OUT(",");
		err |= json_out__int(out, w->id[w->t->samples[i]]);
	}
	return err | OUT("]");
}

/* "timeDeltas": the same delta for every sample, its text made once. */
static int deltas_out(struct json_out *out, const void *ctx)
{
	const struct writer *w = ctx;
	char delta[24];
	int len = snprintf(delta, sizeof(delta), ",%" PRId64, w->delta_us), err = OUT("[");

	for (size_t i = 0; !err && i < w->t->nsamples; i++)
		err |= json_out__raw(out, delta + !i, (size_t)len - !i);
	return err | OUT("]");
}

static struct json_object *profile_json(struct writer *w, int64_t delta_us)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(w->t->prof);
	int64_t start = msg->time_nanos / 1000, duration_us = msg->duration_nanos / 1000, end;
	struct json_object *o = json_object_new_object();
	int err;

	err = json__put(o, "nodes", json__part(nodes_out, w));
	end = add_sat(start, mul_sat(delta_us, (int64_t)w->t->nsamples));
	if (duration_us > 0 && add_sat(start, duration_us) > end)
		end = add_sat(start, duration_us);
	err |= json__put(o, "startTime", json_object_new_int64(start));
	err |= json__put(o, "endTime", json_object_new_int64(end));
	w->delta_us = delta_us;
	err |= json__put(o, "samples", json__part(samples_out, w));
	err |= json__put(o, "timeDeltas", json__part(deltas_out, w));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int write_cpuprofile(const struct tree *t, int64_t delta_us, char **json, size_t *len,
			    char *err, size_t errlen)
{
	struct writer w = { .t = t };
	struct json_object *o = NULL;
	const char *text;
	size_t n;
	int ret = -ENOMEM;

	w.script_no = calloc(t->nframes, sizeof(*w.script_no));
	if (!w.script_no || number_nodes(&w))
		goto out;
	o = profile_json(&w, delta_us);
	text = o ? json__dump(o, false, &n) : NULL;
	if (!text)
		goto out;
	if (n > V8_PROFILE_MAX_JSON) {
		errmsg__set(err, errlen, ".cpuprofile would be %zu MiB, over the %llu MiB limit",
			    n >> 20, V8_PROFILE_MAX_JSON >> 20);
		ret = -EFBIG;
		goto out;
	}
	*json = malloc(n + 2);
	if (!*json)
		goto out;
	memcpy(*json, text, n);
	memcpy(*json + n, "\n", 2);
	*len = n + 1;
	ret = 0;
out:
	json_object_put(o);
	writer_release(&w);
	return ret;
}

/* The time between samples in µs: the period, else the window over the samples. */
static int64_t delta_us_of(const struct pprof_profile *p, size_t nsamples)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(p);
	int64_t delta_us = -1;

	if (msg->period > 0 && msg->period_type)
		delta_us = to_us(msg->period, pprof_profile__string(p, msg->period_type->unit));
	if (delta_us < 0 && msg->duration_nanos > 0 && nsamples)
		delta_us = msg->duration_nanos / 1000 / (int64_t)nsamples;
	if (delta_us < 0)
		delta_us = DEFAULT_INTERVAL_US;
	/* timeDeltas are whole µs: a sub-µs period still advances the clock */
	return delta_us ? delta_us : 1;
}

int v8_cpu_profile__from_pprof(const struct pprof_profile *p, char **json, size_t *len,
			       char *err, size_t errlen)
{
	struct tree t = { .prof = p };
	size_t count_index = 0;
	int ret;

	*json = NULL;
	*len = 0;
	for (size_t i = 0; i < pprof_profile__sample_type_count(p); i++) {
		const char *unit, *type = pprof_profile__sample_type(p, i, &unit);

		if (!strcmp(type, SAMPLE_TYPE_SAMPLES) && !strcmp(unit, UNIT_COUNT)) {
			count_index = i;
			break;
		}
	}
	ret = build_tree(&t, count_index, err, errlen);
	if (!ret)
		ret = write_cpuprofile(&t, delta_us_of(p, t.nsamples), json, len, err, errlen);
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	tree_release(&t);
	return ret;
}
