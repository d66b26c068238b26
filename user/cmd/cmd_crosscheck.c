// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof crosscheck A B: how far isoprof's CPU profile and V8's own CPU
 * profiler agree (crosscheck.h has the rules).  Either input may be a
 * pprof file or a .cpuprofile; which is V8's is told from the content.
 * Exit status: 0 with a report whether or not the two agree, 1 when an
 * input cannot be read or has no JS samples, 2 on a usage error.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/cmd/commands.h"
#include "user/cmd/source_maps_cmd.h"
#include "user/v8/crosscheck.h"

enum {
	OPT_TOP = 0x100,
	OPT_ISOLATE,
	OPT_SOURCE_MAPS,
};

struct crosscheck_env {
	const char *files[2];
	size_t nfiles;
	long top;
	bool json;
	const char *isolate;
	const char *source_maps;
};

static const struct argp_option crosscheck_options[] = {
	{ "top", OPT_TOP, "N", 0, "Functions in the top table of each side (default 10)", 0 },
	{ "json", 'j', NULL, 0, "Print the report as one JSON object", 0 },
	{ "isolate", OPT_ISOLATE, "ADDR", 0,
	  "Compare only this isolate of the isoprof profile (its `isolate` label)", 0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Name both profiles' JS functions from the source maps in DIR first, so that they "
	  "are compared in the same names (docs/source-maps.md)", 0 },
	{ 0 },
};

static error_t crosscheck_parse(int key, char *arg, struct argp_state *state)
{
	struct crosscheck_env *env = state->input;
	char *end;

	switch (key) {
	case OPT_TOP:
		errno = 0;
		env->top = strtol(arg, &end, 10);
		if (errno || end == arg || *end || env->top < 1 || env->top > 100000)
			argp_error(state, "--top must be a positive integer, not '%s'", arg);
		break;
	case 'j':
		env->json = true;
		break;
	case OPT_ISOLATE:
		env->isolate = arg;
		break;
	case OPT_SOURCE_MAPS:
		env->source_maps = arg;
		break;
	case ARGP_KEY_ARG:
		if (env->nfiles == 2)
			argp_error(state, "unexpected argument '%s'", arg);
		env->files[env->nfiles++] = arg;
		break;
	case ARGP_KEY_END:
		if (env->nfiles != 2)
			argp_error(state, "name two profiles, A and B");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

int cmd_crosscheck(int argc, char **argv)
{
	static const struct argp argp = {
		.options = crosscheck_options,
		.parser = crosscheck_parse,
		.args_doc = "A B",
		.doc = "Report how far isoprof's CPU profile and V8's own CPU profile agree: "
		       "samples and rates, top JS functions by self share, total variation "
		       "distance, rank correlation, functions only one side sees, and what only "
		       "isoprof sees (kernel, native, GC threads).\v"
		       "A and B are pprof files or .cpuprofile files, in either order: V8's is "
		       "the .cpuprofile, or the pprof converted from one.",
	};
	struct crosscheck_env env = { 0 };
	struct pprof_profile *prof[2] = { NULL, NULL };
	struct crosscheck_report *report = NULL;
	struct crosscheck_opts opts = { 0 };
	int64_t delta[2] = { 0, 0 };
	bool is_v8[2] = { false, false };
	int isoprof_idx = 0, err, ret = 1;
	char msg[512];

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;

	for (int i = 0; i < 2; i++) {
		err = crosscheck__load(env.files[i], &prof[i], &is_v8[i], &delta[i], msg,
				       sizeof(msg));
		if (err) {
			fprintf(stderr, "isoprof: crosscheck: %s: %s\n", env.files[i], msg);
			goto out;
		}
		if (env.source_maps &&
		    source_maps_cmd__apply_profile(&prof[i], env.source_maps, env.files[i]))
			goto out;
	}
	/* like with like: one side in the authors' names and the other minified is no match */
	if (source_maps_cmd__is_mapped(prof[0]) != source_maps_cmd__is_mapped(prof[1]))
		fprintf(stderr, "isoprof: note: crosscheck: %s has JS functions named from source "
			"maps and %s has none: give --source-maps DIR to compare them in the same "
			"names\n", env.files[source_maps_cmd__is_mapped(prof[0]) ? 0 : 1],
			env.files[source_maps_cmd__is_mapped(prof[0]) ? 1 : 0]);
	if (is_v8[0] && !is_v8[1])
		isoprof_idx = 1;
	opts.roles_guessed = is_v8[0] == is_v8[1];
	opts.top = (size_t)env.top;
	opts.isolate = env.isolate;
	opts.names[CROSSCHECK_ISOPROF] = env.files[isoprof_idx];
	opts.names[CROSSCHECK_V8] = env.files[!isoprof_idx];
	opts.v8_median_delta_ns = delta[!isoprof_idx];

	err = crosscheck__compute(prof[isoprof_idx], prof[!isoprof_idx], &opts, &report, msg,
				  sizeof(msg));
	if (err) {
		fprintf(stderr, "isoprof: crosscheck: %s\n", msg);
		goto out;
	}
	err = env.json ? crosscheck__print_json(report, stdout)
		       : crosscheck__print_text(report, stdout);
	if (!err && fflush(stdout))
		err = -EIO;
	if (err) {
		fprintf(stderr, "isoprof: crosscheck: writing the report: %s\n", strerror(-err));
		goto out;
	}
	ret = 0;
out:
	crosscheck__free(report);
	pprof_profile__free(prof[0]);
	pprof_profile__free(prof[1]);
	return ret;
}
