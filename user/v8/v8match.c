// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Mapping inspector targets to isolates by the scripts both report (see v8match.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/index_table.h"
#include "user/v8/v8match.h"

struct pair {
	size_t target, isolate;
	size_t scripts, functions;
};

const char *v8match__script_key(const char *name)
{
	const char *slash;

	if (!name)
		return "";
	slash = strrchr(name, '/');
	return slash ? slash + 1 : name;
}

/* A list of names as a set: each name is compared by its key. */
struct name_set {
	struct index_table t;
	const char *const *names;
	bool script;		/* compare v8match__script_key()s */
};

static const char *key_of(const struct name_set *set, size_t i)
{
	return set->script ? v8match__script_key(set->names[i]) : set->names[i];
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(key_of(ctx, idx), key);
}

static uint32_t key_hash(const char *key)
{
	return hash__fold32(hash__str(HASH_SEED, key));
}

static bool name_set__contains(const struct name_set *set, const char *key)
{
	return index_table__lookup(&set->t, key_hash(key), key_eq, set, key, NULL) >= 0;
}

/* Add name i's key: 1 when it is new, 0 when it was there, or -ENOMEM. */
static int name_set__add(struct name_set *set, size_t i)
{
	const char *key = key_of(set, i);
	uint32_t hash = key_hash(key);
	size_t slot;

	if (index_table__reserve(&set->t))
		return -ENOMEM;
	if (index_table__lookup(&set->t, hash, key_eq, set, key, &slot) >= 0)
		return 0;
	index_table__set(&set->t, slot, hash, (uint32_t)i);
	return 1;
}

/* How many distinct non-empty keys a and b share, or -ENOMEM. */
static long common(const char *const *a, size_t na, const char *const *b, size_t nb, bool script)
{
	struct name_set in_b = { .names = b, .script = script };
	struct name_set seen = { .names = a, .script = script };
	long n = 0;
	int ret = 0;

	for (size_t j = 0; ret >= 0 && j < nb; j++)
		ret = name_set__add(&in_b, j);
	for (size_t i = 0; ret >= 0 && i < na; i++) {
		if (!*key_of(&seen, i))
			continue;
		/* a name listed twice on one side counts once */
		ret = name_set__add(&seen, i);
		if (ret > 0 && name_set__contains(&in_b, key_of(&seen, i)))
			n++;
	}
	index_table__release(&in_b.t);
	index_table__release(&seen.t);
	return ret < 0 ? ret : n;
}

static int better(const void *pa, const void *pb)
{
	const struct pair *a = pa, *b = pb;

	if (a->scripts != b->scripts)
		return a->scripts < b->scripts ? 1 : -1;
	if (a->functions != b->functions)
		return a->functions < b->functions ? 1 : -1;
	if (a->target != b->target)
		return a->target < b->target ? -1 : 1;
	return a->isolate < b->isolate ? -1 : a->isolate > b->isolate;
}

static bool same_score(const struct pair *a, const struct pair *b)
{
	return a->scripts == b->scripts && a->functions == b->functions;
}

/* Every (target, isolate) pair of one process that shares a script, with its score. */
static int score_pairs(const struct v8match_side *targets, size_t ntargets,
		       const struct v8match_side *isolates, size_t nisolates, struct pair *pairs,
		       size_t *npairs)
{
	for (size_t t = 0; t < ntargets; t++) {
		for (size_t i = 0; i < nisolates; i++) {
			long scripts, functions;

			if (targets[t].pid != isolates[i].pid)
				continue;
			scripts = common(targets[t].scripts, targets[t].nscripts,
					 isolates[i].scripts, isolates[i].nscripts, true);
			if (scripts <= 0) {
				if (scripts < 0)
					return (int)scripts;
				continue;
			}
			functions = common(targets[t].functions, targets[t].nfunctions,
					   isolates[i].functions, isolates[i].nfunctions, false);
			if (functions < 0)
				return (int)functions;
			pairs[(*npairs)++] = (struct pair){ .target = t, .isolate = i,
							    .scripts = (size_t)scripts,
							    .functions = (size_t)functions };
		}
	}
	return 0;
}

/* Pairs best first: each target and isolate at most once, a tie left unmapped. */
static void take_pairs(const struct pair *pairs, size_t npairs, bool *isolate_taken,
		       int *assign, enum v8match_result *result)
{
	for (size_t k = 0; k < npairs; k++) {
		const struct pair *p = &pairs[k];
		bool tie = false;

		if (assign[p->target] >= 0 || result[p->target] == V8MATCH_AMBIGUOUS)
			continue;
		if (isolate_taken[p->isolate]) {
			result[p->target] = V8MATCH_TAKEN;
			continue;
		}
		/* the target's next free candidate with the same score makes it a guess */
		for (size_t j = k + 1; j < npairs && !tie; j++) {
			if (pairs[j].target != p->target)
				continue;
			if (!same_score(&pairs[j], p))
				break;
			tie = !isolate_taken[pairs[j].isolate];
		}
		if (tie) {
			result[p->target] = V8MATCH_AMBIGUOUS;
			continue;
		}
		assign[p->target] = (int)p->isolate;
		result[p->target] = V8MATCH_MAPPED;
		isolate_taken[p->isolate] = true;
	}
}

int v8match__assign(const struct v8match_side *targets, size_t ntargets,
		    const struct v8match_side *isolates, size_t nisolates, int *assign,
		    enum v8match_result *result)
{
	struct pair *pairs;
	bool *isolate_taken;
	size_t npairs = 0;
	int ret;

	for (size_t t = 0; t < ntargets; t++) {
		assign[t] = -1;
		result[t] = V8MATCH_NO_SCRIPT;
	}
	if (!ntargets || !nisolates)
		return 0;
	pairs = calloc(ntargets * nisolates, sizeof(*pairs));
	isolate_taken = calloc(nisolates, sizeof(*isolate_taken));
	ret = pairs && isolate_taken ? 0 : -ENOMEM;
	if (!ret)
		ret = score_pairs(targets, ntargets, isolates, nisolates, pairs, &npairs);
	if (!ret) {
		qsort(pairs, npairs, sizeof(*pairs), better);
		take_pairs(pairs, npairs, isolate_taken, assign, result);
	}
	free(pairs);
	free(isolate_taken);
	return ret;
}
