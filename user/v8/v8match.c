// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Mapping inspector targets to isolates by the scripts both report (see v8match.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

static size_t common(const char *const *a, size_t na, const char *const *b, size_t nb,
		     bool script)
{
	size_t n = 0;

	for (size_t i = 0; i < na; i++) {
		const char *x = script ? v8match__script_key(a[i]) : a[i];

		if (!*x)
			continue;
		/* a name listed twice on one side counts once */
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = !strcmp(x, script ? v8match__script_key(a[k]) : a[k]);
		if (dup)
			continue;
		for (size_t j = 0; j < nb; j++) {
			if (!strcmp(x, script ? v8match__script_key(b[j]) : b[j])) {
				n++;
				break;
			}
		}
	}
	return n;
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

int v8match__assign(const struct v8match_side *targets, size_t ntargets,
		    const struct v8match_side *isolates, size_t nisolates, int *assign,
		    enum v8match_result *result)
{
	struct pair *pairs;
	bool *isolate_taken;
	size_t npairs = 0;

	for (size_t t = 0; t < ntargets; t++) {
		assign[t] = -1;
		result[t] = V8MATCH_NO_SCRIPT;
	}
	if (!ntargets || !nisolates)
		return 0;
	pairs = calloc(ntargets * nisolates, sizeof(*pairs));
	isolate_taken = calloc(nisolates, sizeof(*isolate_taken));
	if (!pairs || !isolate_taken) {
		free(pairs);
		free(isolate_taken);
		return -ENOMEM;
	}
	for (size_t t = 0; t < ntargets; t++) {
		for (size_t i = 0; i < nisolates; i++) {
			struct pair p = { .target = t, .isolate = i };

			if (targets[t].pid != isolates[i].pid)
				continue;
			p.scripts = common(targets[t].scripts, targets[t].nscripts,
					   isolates[i].scripts, isolates[i].nscripts, true);
			if (!p.scripts)
				continue;
			p.functions = common(targets[t].functions, targets[t].nfunctions,
					     isolates[i].functions, isolates[i].nfunctions, false);
			pairs[npairs++] = p;
		}
	}
	qsort(pairs, npairs, sizeof(*pairs), better);

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
	free(pairs);
	free(isolate_taken);
	return 0;
}
