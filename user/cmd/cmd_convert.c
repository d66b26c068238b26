// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof convert IN OUT: between pprof, V8's .cpuprofile and heap profile
 * (input only), and folded stacks.  Every conversion goes through pprof:
 * a non-pprof input is built into a pprof profile first, and a non-pprof
 * output is written from the pprof reader's view, so each direction is
 * written once (proto/: cpuprofile, heapprofile, folded) and shared with
 * crosscheck, flame and serve.
 *
 * Formats come from --from/--to, else IN's content (proto/profile_file.h
 * tells: gzip or protobuf: pprof; JSON with "nodes": .cpuprofile; with
 * "head": heap profile; text: folded) and OUT's extension.  "-" reads
 * stdin / writes stdout.  Files are written through a temporary file and
 * renamed (lib/fileio), so a failed conversion leaves no partial output.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/fileio.h"
#include "proto/cpuprofile.h"
#include "proto/folded.h"
#include "proto/profile_file.h"
#include "user/capture/caps.h"
#include "user/cmd/commands.h"
#include "user/cmd/source_maps_cmd.h"

enum {
	OPT_FROM = 0x100,
	OPT_TO,
	OPT_SAMPLE_INDEX,
	OPT_HEAP_INTERVAL,
	OPT_SOURCE_MAPS,
};

struct convert_env {
	const char *in, *out;
	enum profile_format from, to;
	bool raw;
	const char *sample_index;
	uint64_t heap_interval;
	const char *source_maps;
};

static const struct argp_option convert_options[] = {
	{ "from", OPT_FROM, "FORMAT", 0,
	  "Input format: pprof, cpuprofile, heapprofile or folded (default: from the content)",
	  0 },
	{ "to", OPT_TO, "FORMAT", 0,
	  "Output format: pprof, cpuprofile or folded (default: from OUT's extension: "
	  ".pb.gz .pb .pprof, .cpuprofile .json, .folded .txt)",
	  0 },
	{ "raw", 'r', NULL, 0, "Write pprof uncompressed (default: gzip)", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "N|NAME", 0,
	  "Sample type whose values folded output counts (default: the profile's default)", 0 },
	{ "heap-interval", OPT_HEAP_INTERVAL, "BYTES", 0,
	  "Sampling interval the heap profile was taken with, for its pprof period "
	  "(node --heap-prof: 524288; CDP default: 32768)",
	  0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Name the JS functions of a profile taken without source maps from the maps in DIR "
	  "(DIR/<script>.map; docs/source-maps.md)", 0 },
	{ 0 },
};

/* A format named on the command line; "auto" is none. */
static enum profile_format parse_fmt(const char *s)
{
	enum profile_format f;

	return profile_format__parse(s, &f) ? f : PROFILE_AUTO;
}

static error_t convert_parse(int key, char *arg, struct argp_state *state)
{
	struct convert_env *env = state->input;
	char *end;

	switch (key) {
	case OPT_FROM:
		env->from = parse_fmt(arg);
		if (env->from == PROFILE_AUTO)
			argp_error(state, "--from must be pprof, cpuprofile, heapprofile or "
					  "folded, not '%s'",
				   arg);
		break;
	case OPT_TO:
		env->to = parse_fmt(arg);
		if (env->to == PROFILE_AUTO || env->to == PROFILE_HEAPPROFILE)
			argp_error(state, "--to must be pprof, cpuprofile or folded, not '%s'",
				   arg);
		break;
	case 'r':
		env->raw = true;
		break;
	case OPT_SAMPLE_INDEX:
		env->sample_index = arg;
		break;
	case OPT_HEAP_INTERVAL:
		errno = 0;
		env->heap_interval = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || !env->heap_interval)
			argp_error(state, "--heap-interval must be a positive number of bytes, "
					  "not '%s'", arg);
		break;
	case OPT_SOURCE_MAPS:
		env->source_maps = arg;
		break;
	case ARGP_KEY_ARG:
		if (!env->in)
			env->in = arg;
		else if (!env->out)
			env->out = arg;
		else
			argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env->out)
			argp_error(state, "name an input and an output file: IN OUT");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

static enum profile_format fmt_from_name(const char *path)
{
	static const struct {
		const char *ext;
		enum profile_format fmt;
	} exts[] = {
		{ ".pb.gz", PROFILE_PPROF }, { ".pb", PROFILE_PPROF }, { ".pprof", PROFILE_PPROF },
		{ ".cpuprofile", PROFILE_CPUPROFILE }, { ".json", PROFILE_CPUPROFILE },
		{ ".folded", PROFILE_FOLDED }, { ".txt", PROFILE_FOLDED },
	};

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ends_with(path, exts[i].ext))
			return exts[i].fmt;
	return PROFILE_AUTO;
}

/*
 * IN read, its format told (or taken from --from) and made pprof: what
 * each output needs, pf->prof for all but pprof output, which serializes
 * the conversion (or packs the input again).  *si gets the folded sample
 * index.
 */
static int read_input(const struct convert_env *env, struct profile_file *pf, int *si,
		      char *err, size_t errlen)
{
	char comment[600];
	const char *comments[] = { comment };
	struct v8_pprof_opts opts = { .comments = comments, .ncomments = 1 };
	unsigned int formats = env->from == PROFILE_AUTO ? PROFILE_FORMATS_ALL
							 : PROFILE_FORMAT_BIT(env->from);
	int ret;

	ret = profile_file__read(pf, env->in, err, errlen);
	if (!ret)
		ret = profile_file__parse(pf, formats, err, errlen);
	if (ret)
		return ret;
	snprintf(comment, sizeof(comment), "converted from %s (%s) by isoprof convert", env->in,
		 profile_format__str(pf->format));
	ret = profile_file__convert(pf, &opts, env->heap_interval, err, errlen);
	if (!ret && env->source_maps) {
		ret = source_maps_cmd__apply(pf, env->source_maps, env->in);
		if (ret)
			return ret;
	}
	if (!ret && env->to != PROFILE_PPROF)
		ret = profile_file__profile(pf, err, errlen);
	if (!ret && env->to == PROFILE_FOLDED) {
		*si = pprof_profile__sample_index(pf->prof, env->sample_index, err, errlen);
		ret = *si < 0 ? *si : 0;
	}
	/* the bytes are parsed: no need to hold them while writing */
	free(pf->data);
	pf->data = NULL;
	return ret;
}

static int fwrite_all(const void *data, size_t len, FILE *f)
{
	return fwrite(data, 1, len, f) == len ? 0 : -EIO;
}

static int write_output(const struct convert_env *env, struct profile_file *pf, int si, FILE *f,
			char *err, size_t errlen)
{
	uint8_t *data = NULL;
	char *json = NULL;
	size_t len;
	int ret;

	switch (env->to) {
	case PROFILE_PPROF:
		ret = profile_file__pprof_bytes(pf, !env->raw, &data, &len, err, errlen);
		if (!ret)
			ret = fwrite_all(data, len, f);
		free(data);
		return ret;
	case PROFILE_CPUPROFILE:
		ret = v8_cpu_profile__from_pprof(pf->prof, &json, &len, err, errlen);
		if (!ret)
			ret = fwrite_all(json, len, f);
		free(json);
		return ret;
	case PROFILE_FOLDED:
		return folded__from_pprof(pf->prof, (size_t)si, f);
	default:
		return -EINVAL;
	}
}

static int convert(const struct convert_env *env)
{
	struct profile_file pf = { 0 };
	struct fileio_policy policy;
	struct atomic_file af;
	char err[512] = "";
	const char *bad = env->in;
	int ret, si = 0;

	ret = read_input(env, &pf, &si, err, sizeof(err));
	if (ret)
		goto out;
	bad = env->out;
	/* into another user's directory: as that user (main.c, file_tool_privileges()) */
	caps__output_policy(&policy);
	ret = atomic_file__open_for(&af, env->out, &policy, 0644);
	if (ret)
		goto out;
	ret = write_output(env, &pf, si, af.f, err, sizeof(err));
	if (ret) {
		atomic_file__abort(&af);
		goto out;
	}
	ret = atomic_file__commit(&af);
	if (ret)
		err[0] = '\0';
out:
	if (ret)
		fprintf(stderr, "isoprof: %s: %s\n", strcmp(bad, "-") ? bad : "<stdin/stdout>",
			err[0] ? err : strerror(-ret));
	profile_file__release(&pf);
	return ret ? 1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	static const struct argp argp = {
		.options = convert_options,
		.parser = convert_parse,
		.args_doc = "IN OUT",
		.doc = "Convert a profile between pprof, V8's .cpuprofile (and, as input, V8's "
		       "heap profile) and folded stacks.  IN or OUT may be - for stdin/stdout.",
	};
	struct convert_env env = { 0 };

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (env.to == PROFILE_AUTO)
		env.to = fmt_from_name(env.out);
	if (env.to == PROFILE_AUTO) {
		fprintf(stderr,
			"isoprof: %s: cannot tell the output format from the name; "
			"use --to pprof|cpuprofile|folded\n",
			env.out);
		return 2;
	}
	if (env.sample_index && env.to != PROFILE_FOLDED) {
		fprintf(stderr, "isoprof: convert: --sample-index applies to folded output only\n");
		return 2;
	}
	if (env.raw && env.to != PROFILE_PPROF) {
		fprintf(stderr, "isoprof: convert: --raw applies to pprof output only\n");
		return 2;
	}
	return convert(&env);
}
