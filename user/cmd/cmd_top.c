// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof top: the flat/cum table of a pprof profile, like
 * `go tool pprof -top` (user/report/top.h computes and prints it).
 */
#include <argp.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pprof_reader.h"
#include "proto/profile_file.h"
#include "proto/profile_vocab.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/cmd/source_maps_cmd.h"
#include "user/report/top.h"

enum {
	OPT_NODECOUNT = 0x100,
	OPT_SORT,
	OPT_LINES,
	OPT_FOCUS,
	OPT_IGNORE,
	OPT_HIDE_IDLE,
	OPT_SAMPLE_INDEX,
	OPT_SOURCE_MAPS,
};

struct top_env {
	const char *file;
	long nodecount;		/* 0: no limit */
	bool cum_sort;
	bool lines;
	const char *focus, *ignore;
	bool hide_idle;
	const char *sample_index;
	const char *source_maps;
};

static const struct argp_option top_options[] = {
	{ "nodecount", OPT_NODECOUNT, "N", 0,
	  "Show at most N nodes (default: all above the cutoff)", 0 },
	{ "sort", OPT_SORT, "flat|cum", 0, "Sort by flat (default) or cumulative value", 0 },
	{ "lines", OPT_LINES, NULL, 0, "One node per source line instead of per function", 0 },
	{ "focus", OPT_FOCUS, "RE", 0,
	  "Keep samples with a frame matching RE (extended regex)", 0 },
	{ "ignore", OPT_IGNORE, "RE", 0, "Drop samples with a frame matching RE", 0 },
	{ "hide-idle", OPT_HIDE_IDLE, NULL, 0,
	  "Drop samples whose root or leaf frame is " FRAME_NAME_IDLE " or labelled class=idle", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "NAME", 0,
	  "Sample type to show, by name or index (default: the profile's default, else the last)",
	  0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Name the JS functions of a profile taken without source maps from the maps in DIR "
	  "(DIR/<script>.map; docs/source-maps.md)", 0 },
	{ 0 },
};

static error_t top_parse(int key, char *arg, struct argp_state *state)
{
	struct top_env *env = state->input;

	switch (key) {
	case OPT_NODECOUNT:
		if (options__long(arg, 0, LONG_MAX, &env->nodecount))
			argp_error(state, "--nodecount must be a non-negative integer, not '%s'",
				   arg);
		break;
	case OPT_SORT:
		if (!strcmp(arg, "cum"))
			env->cum_sort = true;
		else if (!strcmp(arg, "flat"))
			env->cum_sort = false;
		else
			argp_error(state, "--sort must be flat or cum, not '%s'", arg);
		break;
	case OPT_LINES:
		env->lines = true;
		break;
	case OPT_FOCUS:
		env->focus = arg;
		break;
	case OPT_IGNORE:
		env->ignore = arg;
		break;
	case OPT_HIDE_IDLE:
		env->hide_idle = true;
		break;
	case OPT_SAMPLE_INDEX:
		env->sample_index = arg;
		break;
	case OPT_SOURCE_MAPS:
		env->source_maps = arg;
		break;
	case ARGP_KEY_ARG:
	case ARGP_KEY_END:
		options__profile_file(key, arg, state, &env->file);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int compile_filter(struct top_filter *f, const char *pattern, const char *what)
{
	char msg[256];

	if (!top_filter__compile(f, pattern, msg, sizeof(msg)))
		return 0;
	fprintf(stderr, "isoprof: top: bad --%s regex '%s': %s\n", what, pattern, msg);
	return -EINVAL;
}

int cmd_top(int argc, char **argv)
{
	static const struct argp argp = {
		.options = top_options,
		.parser = top_parse,
		.args_doc = "FILE",
		.doc = "Print the functions of a pprof profile by flat (self) and cumulative "
		       "value, like `go tool pprof -top`.",
	};
	struct top_env env = { 0 };
	struct top_filter focus = { 0 }, ignore = { 0 };
	struct top_opts opts = { .focus = &focus, .ignore = &ignore };
	struct pprof_profile *prof = NULL;
	struct profile_file pf = { 0 };
	int si, err, ret = 1;
	char msg[512] = "";

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (compile_filter(&focus, env.focus, "focus") ||
	    compile_filter(&ignore, env.ignore, "ignore")) {
		ret = 2;
		goto out;
	}
	if (env.source_maps) {
		/* read as flame and convert do, then renamed */
		err = profile_file__read(&pf, env.file, msg, sizeof(msg));
		if (!err)
			err = profile_file__parse(&pf, PROFILE_FORMAT_BIT(PROFILE_PPROF), msg,
						  sizeof(msg));
		if (err) {
			fprintf(stderr, "isoprof: %s: %s\n", env.file, msg[0] ? msg : strerror(-err));
			goto out;
		}
		if (source_maps_cmd__apply(&pf, env.source_maps, env.file))
			goto out;
		prof = pf.prof;
		pf.prof = NULL;
	} else {
		err = pprof_profile__read_file(env.file, &prof, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "isoprof: %s: %s\n", env.file, msg);
			goto out;
		}
	}
	si = options__sample_index(prof, env.file, env.sample_index);
	if (si < 0) {
		ret = 2;
		goto out;
	}
	opts.sample_index = (size_t)si;
	opts.nodecount = env.nodecount;
	opts.cum_sort = env.cum_sort;
	opts.lines = env.lines;
	opts.hide_idle = env.hide_idle;
	err = top__print(prof, &opts, stdout);
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, strerror(-err));
		goto out;
	}
	if (fflush(stdout) == EOF) {
		fprintf(stderr, "isoprof: top: writing output: %s\n", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	pprof_profile__free(prof);
	profile_file__release(&pf);
	top_filter__release(&focus);
	top_filter__release(&ignore);
	return ret;
}
