// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof flame: a pprof profile as an interactive flamegraph page (.html:
 * the web page of `isoprof serve` with the profile embedded, which opens
 * offline) or a static flamegraph (.svg).  The output's extension chooses.
 *
 * The HTML embeds the file's exact bytes, so the page's "Download pprof"
 * gives back what was read; the profile is still parsed and validated
 * here first, so a broken file fails now and not later in a browser.
 * Output goes to a temporary file renamed into place: an error never
 * leaves half a document under the requested name.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/cmd/commands.h"
#include "user/report/flame_svg.h"
#include "proto/pprof_reader.h"
#include "user/report/web_assets.h"

enum {
	OPT_SAMPLE_INDEX = 0x100,
	OPT_TITLE,
	OPT_WIDTH,
};

enum flame_format { FLAME_HTML, FLAME_SVG };

struct flame_env {
	const char *file;
	const char *out;
	const char *sample_index;
	const char *title;
	unsigned int width;
	enum flame_format format;
};

static const struct argp_option flame_options[] = {
	{ "output", 'o', "OUT", 0, "Write OUT.html (interactive page) or OUT.svg (static)", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "N|NAME", 0,
	  "Sample type to draw, by index or name (default: the profile's default, else the last)",
	  0 },
	{ "title", OPT_TITLE, "T", 0, "Title (default: the profile file's name)", 0 },
	{ "width", OPT_WIDTH, "PX", 0, "SVG width in pixels (default 1200)", 0 },
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
	char *end;
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
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 200 || v > 100000)
			argp_error(state, "--width must be 200..100000, not '%s'", arg);
		env->width = (unsigned int)v;
		break;
	case ARGP_KEY_ARG:
		if (env->file)
			argp_error(state, "unexpected argument '%s'", arg);
		env->file = arg;
		break;
	case ARGP_KEY_END:
		if (!env->file)
			argp_error(state, "name a profile FILE");
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

/* The whole file, for embedding byte for byte.  0 or -errno. */
static int slurp(const char *path, uint8_t **data, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf;
	struct stat sb;
	int fd, err = 0;

	*data = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(sb.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (S_ISREG(sb.st_mode) && sb.st_size > 0)
		cap = (size_t)sb.st_size + 1;
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			uint8_t *nb = cap > PPROF_MAX_DECOMPRESSED ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				err = cap > PPROF_MAX_DECOMPRESSED ? -EFBIG : -ENOMEM;
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			free(buf);
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	*data = buf;
	*len = n;
out:
	close(fd);
	return err;
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
	struct pprof_profile *prof = NULL;
	uint8_t *data = NULL;
	size_t len = 0;
	char msg[512] = "", *tmp = NULL;
	FILE *out = NULL;
	int err, si, ret = 1;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;

	err = slurp(env.file, &data, &len);
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, strerror(-err));
		goto done;
	}
	err = pprof_profile__parse(data, len, &prof, msg, sizeof(msg));
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, msg[0] ? msg : strerror(-err));
		goto done;
	}
	si = pprof_profile__sample_index(prof, env.sample_index, msg, sizeof(msg));
	if (si < 0) {
		fprintf(stderr, "isoprof: %s: %s\n", env.file, msg);
		ret = 2;
		goto done;
	}

	if (asprintf(&tmp, "%s.tmp.%d", env.out, (int)getpid()) < 0) {
		tmp = NULL;
		fprintf(stderr, "isoprof: flame: out of memory\n");
		goto done;
	}
	out = fopen(tmp, "we");
	if (!out) {
		fprintf(stderr, "isoprof: %s: %s\n", env.out, strerror(errno));
		goto done;
	}
	msg[0] = '\0';
	if (env.format == FLAME_SVG) {
		struct flame_svg_opts o = {
			.title = env.title ? env.title : base_name(env.file),
			.sample_index = (size_t)si,
			.width = env.width,
		};

		err = flame_svg__write(prof, &o, out, msg, sizeof(msg));
	} else {
		err = write_html(&env, data, len, env.sample_index ? si : -1, out, msg,
				 sizeof(msg));
	}
	if (fclose(out) && !err) {
		err = -errno;
		snprintf(msg, sizeof(msg), "%s", strerror(errno));
	}
	out = NULL;
	if (err) {
		fprintf(stderr, "isoprof: %s: %s\n", env.out, msg[0] ? msg : strerror(-err));
		unlink(tmp);
		goto done;
	}
	if (rename(tmp, env.out)) {
		fprintf(stderr, "isoprof: %s: %s\n", env.out, strerror(errno));
		unlink(tmp);
		goto done;
	}
	ret = 0;
done:
	free(tmp);
	free(data);
	pprof_profile__free(prof);
	return ret;
}
