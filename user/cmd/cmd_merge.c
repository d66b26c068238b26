// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof merge: many profiles into one, with no backend: the windows
 * `isoprof continuous --out-dir DIR` kept, chosen by script, version and
 * time from their names (user/report/window_merge.h), or the profiles
 * named.  Each file is read, folded in and freed before the next
 * (proto/pprof_merge.h), so an hour of windows takes the memory of the
 * merged profile.  A file that does not read is skipped with a note.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/safe_open.h"
#include "lib/timetext.h"
#include "proto/pprof_merge.h"
#include "user/capture/caps.h"
#include "user/cmd/commands.h"
#include "user/report/window_merge.h"

#define MAX_OPERANDS 65536

enum {
	OPT_SCRIPT = 0x100,
	OPT_VERSION,
	OPT_FROM,
	OPT_UNTIL,
};

struct merge_env {
	const char *out;
	bool raw;
	const char *script, *version, *from, *until;
	char **operands;
	size_t noperands;
	int64_t now;
	struct window_select sel;
};

static const struct argp_option merge_options[] = {
	{ "output", 'o', "FILE", 0,
	  "Write the merged profile to FILE (default: standard output, if not a terminal)", 0 },
	{ "raw", 'r', NULL, 0, "Write it uncompressed (default: gzip)", 0 },
	{ "script", OPT_SCRIPT, "NAME", 0, "With DIR: the windows of this script only", 0 },
	{ "version", OPT_VERSION, "V", 0, "With DIR: the windows of this version only", 0 },
	{ "from", OPT_FROM, "T", 0,
	  "With DIR: windows that end after T: RFC 3339 (2026-12-03T21:25:00Z), unix seconds, "
	  "or before now (-1h, -15m, -90s, -2d)", 0 },
	{ "until", OPT_UNTIL, "T", 0, "With DIR: windows that start before T (same forms)", 0 },
	{ 0 },
};

static int64_t parse_time(struct argp_state *state, const char *opt, const char *arg,
			  int64_t now)
{
	int64_t t;

	if (timetext__parse(arg, now, &t))
		argp_error(state, "%s: '%s' is not a time: give RFC 3339 UTC "
			   "(2026-12-03T21:25:00Z), unix seconds, or a time before now "
			   "(-1h, -15m)", opt, arg);
	return t;
}

static error_t merge_parse(int key, char *arg, struct argp_state *state)
{
	struct merge_env *env = state->input;

	switch (key) {
	case 'o':
		env->out = arg;
		break;
	case 'r':
		env->raw = true;
		break;
	case OPT_SCRIPT:
		env->sel.script = arg;
		break;
	case OPT_VERSION:
		env->sel.version = arg;
		break;
	case OPT_FROM:
		env->from = arg;
		env->sel.from_s = parse_time(state, "--from", arg, env->now);
		break;
	case OPT_UNTIL:
		env->until = arg;
		env->sel.until_s = parse_time(state, "--until", arg, env->now);
		break;
	case ARGP_KEY_ARG:
		if (env->noperands == MAX_OPERANDS)
			argp_error(state, "more than %d files: give their directory", MAX_OPERANDS);
		env->operands[env->noperands++] = arg;
		break;
	case ARGP_KEY_END:
		if (!env->noperands)
			argp_error(state, "name a directory of windows or the profiles to merge");
		if (env->sel.from_s >= env->sel.until_s)
			argp_error(state, "--from must be before --until");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct note_ctx {
	const char *dir;
	size_t skipped;
};

static void note(void *arg, const char *name, const char *why)
{
	struct note_ctx *c = arg;

	c->skipped++;
	fprintf(stderr, "isoprof: %s%s%s: skipped: %s\n", c->dir ? c->dir : "", c->dir ? "/" : "",
		name, why);
}

/* The windows of DIR that env chooses.  0, or an exit status. */
static int merge_dir(const struct merge_env *env, struct pprof_merge *m, struct note_ctx *nc)
{
	const char *dir = env->operands[0];
	struct safe_open_info info;
	size_t matched, merged;
	char err[600];
	int dirfd, ret;

	dirfd = safe_open__dir(dir, NULL, &info);
	if (dirfd < 0) {
		fprintf(stderr, "isoprof: %s: %s\n", dir, info.why[0] ? info.why : strerror(-dirfd));
		return 1;
	}
	ret = window_merge__dir(m, dirfd, &env->sel, &matched, &merged, note, nc, err,
				sizeof(err));
	close(dirfd);
	if (ret) {
		fprintf(stderr, "isoprof: %s/%s\n", dir, err);
		return 1;
	}
	if (!matched) {
		char from[TIMETEXT_RFC3339_LEN] = "the first", until[TIMETEXT_RFC3339_LEN] = "the last";

		if (env->from)
			timetext__rfc3339(env->sel.from_s, from, sizeof(from));
		if (env->until)
			timetext__rfc3339(env->sel.until_s, until, sizeof(until));
		fprintf(stderr, "isoprof: %s: no window%s%s%s%s from %s to %s\n", dir,
			env->sel.script ? " of script " : "", env->sel.script ? env->sel.script : "",
			env->sel.version ? " version " : "", env->sel.version ? env->sel.version : "",
			from, until);
		return 1;
	}
	return 0;
}

/* The files named.  0, or an exit status. */
static int merge_files(const struct merge_env *env, struct pprof_merge *m, struct note_ctx *nc)
{
	char err[512];

	for (size_t i = 0; i < env->noperands; i++) {
		bool other_kind;
		int ret;

		ret = window_merge__file(m, -1, env->operands[i], &other_kind, err, sizeof(err));
		if (other_kind || ret == -ENOMEM) {
			fprintf(stderr, "isoprof: %s: %s\n", env->operands[i], err);
			return 1;
		}
		if (ret)
			note(nc, env->operands[i], err);
	}
	return 0;
}

static int write_out(const struct merge_env *env, const uint8_t *data, size_t len)
{
	struct fileio_policy policy;
	struct atomic_file af;
	int ret;

	if (!env->out)
		return fileio__write_all(STDOUT_FILENO, data, len);
	/* into another user's directory: as that user (main.c, file_tool_privileges()) */
	caps__output_policy(&policy);
	ret = atomic_file__open_for(&af, env->out, &policy, 0644);
	if (ret)
		return ret;
	if (fwrite(data, 1, len, af.f) != len) {
		atomic_file__abort(&af);
		return -EIO;
	}
	return atomic_file__commit(&af);
}

static int merge(const struct merge_env *env)
{
	struct note_ctx nc = { 0 };
	struct pprof_merge *m;
	struct stat st;
	int64_t from, until;
	uint8_t *data;
	size_t len;
	int ret;

	m = pprof_merge__new();
	if (!m) {
		fprintf(stderr, "isoprof: out of memory\n");
		return 1;
	}
	if (env->noperands == 1 && !stat(env->operands[0], &st) && S_ISDIR(st.st_mode)) {
		nc.dir = env->operands[0];
		ret = merge_dir(env, m, &nc);
	} else if (env->sel.script || env->sel.version || env->from || env->until) {
		fprintf(stderr, "isoprof: merge: --script, --version, --from and --until choose the "
			"windows of a directory: name one directory\n");
		ret = 2;
	} else {
		ret = merge_files(env, m, &nc);
	}
	if (!ret && !pprof_merge__count(m)) {
		fprintf(stderr, "isoprof: nothing merged: no file could be read\n");
		ret = 1;
	}
	if (ret)
		goto out;
	ret = pprof_merge__serialize(m, !env->raw, &data, &len);
	if (!ret) {
		ret = write_out(env, data, len);
		free(data);
	}
	if (ret) {
		fprintf(stderr, "isoprof: %s: %s\n", env->out ? env->out : "standard output",
			strerror(-ret));
		ret = 1;
		goto out;
	}
	if (pprof_merge__range(m, &from, &until)) {
		char f[TIMETEXT_RFC3339_LEN], u[TIMETEXT_RFC3339_LEN];

		timetext__rfc3339(from / 1000000000, f, sizeof(f));
		timetext__rfc3339(until / 1000000000, u, sizeof(u));
		fprintf(stderr, "isoprof: merged %zu profile%s (%s to %s)%s%s", pprof_merge__count(m),
			pprof_merge__count(m) == 1 ? "" : "s", f, u, env->out ? " into " : "",
			env->out ? env->out : "");
	} else {
		fprintf(stderr, "isoprof: merged %zu profile%s%s%s", pprof_merge__count(m),
			pprof_merge__count(m) == 1 ? "" : "s", env->out ? " into " : "",
			env->out ? env->out : "");
	}
	if (nc.skipped)
		fprintf(stderr, "; %zu skipped", nc.skipped);
	fprintf(stderr, "\n");
out:
	pprof_merge__free(m);
	return ret;
}

int cmd_merge(int argc, char **argv)
{
	static const struct argp argp = {
		.options = merge_options,
		.parser = merge_parse,
		.args_doc = "DIR | FILE...",
		.doc = "Merge pprof profiles into one: the windows `isoprof continuous --out-dir DIR` "
		       "keeps (chosen by --script, --version, --from and --until from their names), "
		       "or the profiles named.  Same stacks with the same labels are summed; a "
		       "file that does not read is skipped with a note.\v"
		       "Example: the last hour of script alpha:\n"
		       "  isoprof merge --script alpha --from -1h -o alpha.pb.gz /var/lib/isoprof/windows\n"
		       "Exit status: 0 when something was merged, 1 when nothing was (no window "
		       "chosen, none readable), 2 for bad usage.  See docs/formats.md.",
	};
	struct merge_env env = { .sel = { .from_s = INT64_MIN, .until_s = INT64_MAX } };
	int ret;

	env.now = (int64_t)time(NULL);
	env.operands = calloc((size_t)(argc > 0 ? argc : 1), sizeof(*env.operands));
	if (!env.operands) {
		fprintf(stderr, "isoprof: out of memory\n");
		return 1;
	}
	if (argp_parse(&argp, argc, argv, 0, NULL, &env)) {
		free(env.operands);
		return 2;
	}
	if (!env.out && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "isoprof: merge: standard output is a terminal: give -o FILE or "
			"redirect it\n");
		free(env.operands);
		return 2;
	}
	ret = merge(&env);
	free(env.operands);
	return ret;
}
