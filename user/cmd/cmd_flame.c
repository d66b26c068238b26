// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof flame: a pprof profile as an interactive flamegraph page (.html:
 * the web page of `isoprof serve` with the profile embedded, which opens
 * offline) or a static flamegraph (.svg).  The output's extension chooses.
 *
 * The HTML embeds the file's exact bytes, so the page's "Download pprof"
 * gives back what was read; the profile is still parsed and validated
 * here first, so a broken file fails now and not later in a browser.
 * The file is read through proto/profile_file.h (pprof only) and the
 * output goes to a temporary file renamed into place (lib/fileio): an
 * error never leaves half a document under the requested name.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/fileio.h"
#include "proto/profile_file.h"
#include "user/capture/caps.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/cmd/source_maps_cmd.h"
#include "user/report/flame_svg.h"
#include "user/report/web_assets.h"

enum {
	OPT_SAMPLE_INDEX = 0x100,
	OPT_TITLE,
	OPT_WIDTH,
	OPT_SOURCE_MAPS,
};

enum flame_format { FLAME_HTML, FLAME_SVG };

struct flame_env {
	const char *file;
	const char *out;
	const char *sample_index;
	const char *title;
	unsigned int width;
	enum flame_format format;
	const char *source_maps;
};

static const struct argp_option flame_options[] = {
	{ "output", 'o', "OUT", 0, "Write OUT.html (interactive page) or OUT.svg (static)", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "N|NAME", 0,
	  "Sample type to draw, by index or name (default: the profile's default, else the last)",
	  0 },
	{ "title", OPT_TITLE, "T", 0, "Title (default: the profile file's name)", 0 },
	{ "width", OPT_WIDTH, "PX", 0, "SVG width in pixels (default 1200)", 0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Name the JS functions of a profile taken without source maps from the maps in DIR "
	  "(DIR/<script>.map; docs/source-maps.md)", 0 },
	{ 0 },
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n > m && !strcasecmp(s + n - m, suffix);
}

static error_t flame_parse(int key, char *arg, struct argp_state *state)
{
	struct flame_env *env = state->input;
	long v;

	switch (key) {
	case 'o':
		env->out = arg;
		break;
	case OPT_SAMPLE_INDEX:
		env->sample_index = arg;
		break;
	case OPT_TITLE:
		env->title = arg;
		break;
	case OPT_WIDTH:
		if (options__long(arg, 200, 100000, &v))
			argp_error(state, "--width must be 200..100000, not '%s'", arg);
		env->width = (unsigned int)v;
		break;
	case OPT_SOURCE_MAPS:
		env->source_maps = arg;
		break;
	case ARGP_KEY_ARG:
		options__profile_file(key, arg, state, &env->file);
		break;
	case ARGP_KEY_END:
		options__profile_file(key, arg, state, &env->file);
		if (!env->out)
			argp_error(state, "name the output with -o OUT.html or -o OUT.svg");
		if (ends_with(env->out, ".html") || ends_with(env->out, ".htm"))
			env->format = FLAME_HTML;
		else if (ends_with(env->out, ".svg"))
			env->format = FLAME_SVG;
		else
			argp_error(state, "-o %s: the name must end in .html or .svg", env->out);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int write_html(const struct flame_env *env, const uint8_t *data, size_t len, int si,
		      FILE *out, char *msg, size_t msglen)
{
	struct web_page_opts o = {
		.title = env->title ? env->title : base_name(env->file),
		.filename = base_name(env->file),
		.sample_index = si,
	};
	size_t n;
	char *page;
	int err;

	err = web_assets__standalone_page(data, len, &o, &page, &n, msg, msglen);
	if (err)
		return err;
	if (fwrite(page, 1, n, out) != n) {
		err = -errno;
		snprintf(msg, msglen, "%s", strerror(errno));
	}
	free(page);
	return err;
}

static int draw(const struct flame_env *env, const struct profile_file *pf, int si, FILE *out,
		char *msg, size_t msglen)
{
	struct flame_svg_opts o = {
		.title = env->title ? env->title : base_name(env->file),
		.sample_index = (size_t)si,
		.width = env->width,
	};

	if (env->format == FLAME_SVG)
		return flame_svg__write(pf->prof, &o, out, msg, msglen);
	return write_html(env, pf->data, pf->len, env->sample_index ? si : -1, out, msg, msglen);
}

int cmd_flame(int argc, char **argv)
{
	static const struct argp argp = {
		.options = flame_options,
		.parser = flame_parse,
		.args_doc = "FILE",
		.doc = "Draw a pprof profile as a flamegraph: -o OUT.html writes a self-contained "
		       "interactive page (click to zoom, hover, search, sortable table; opens "
		       "offline), -o OUT.svg a static SVG with hover titles.",
	};
	struct flame_env env = { 0 };
	struct profile_file pf = { 0 };
	struct fileio_policy policy;
	struct atomic_file af;
	char msg[512] = "";
	int err, si, ret = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;

	err = profile_file__read(&pf, env.file, msg, sizeof(msg));
	if (!err)
		err = profile_file__parse(&pf, PROFILE_FORMAT_BIT(PROFILE_PPROF), msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, msg[0] ? msg : strerror(-err));
		goto done;
	}
	if (env.source_maps && source_maps_cmd__apply(&pf, env.source_maps, env.file))
		goto done;
	si = options__sample_index(pf.prof, env.file, env.sample_index);
	if (si < 0) {
		ret = 2;
		goto done;
	}

	/* into another user's directory: as that user (main.c, file_tool_privileges()) */
	caps__output_policy(&policy);
	err = atomic_file__open_for(&af, env.out, &policy, 0644);
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.out, strerror(-err));
		goto done;
	}
	msg[0] = '\0';
	err = draw(&env, &pf, si, af.f, msg, sizeof(msg));
	if (err) {
		atomic_file__abort(&af);
		fprintf(stderr, "isoprof: %s: %s\n", env.out, msg[0] ? msg : strerror(-err));
		goto done;
	}
	err = atomic_file__commit(&af);
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.out, strerror(-err));
		goto done;
	}
	ret = 0;
done:
	profile_file__release(&pf);
	return ret;
}
