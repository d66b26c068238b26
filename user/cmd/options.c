// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* options: argument parsing the subcommands share; see options.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pprof_reader.h"
#include "user/cmd/options.h"

int options__long(const char *arg, long min, long max, long *out)
{
	const char *digits = arg[0] == '-' ? arg + 1 : arg;
	char *end;
	long v;

	/* strtol() alone would take blanks and a '+' */
	if (*digits < '0' || *digits > '9')
		return -EINVAL;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int options__uint(const char *arg, unsigned int min, unsigned int max, unsigned int *out)
{
	long v;

	if (options__long(arg, min, max, &v))
		return -EINVAL;
	*out = (unsigned int)v;
	return 0;
}

pid_t options__pid(struct argp_state *state, const char *arg, size_t have)
{
	long v = 0;

	if (options__long(arg, 1, INT_MAX, &v))
		argp_error(state, "invalid pid '%s'", arg);
	else if (have >= MAX_PIDS)
		argp_error(state, "at most %d --pid", MAX_PIDS);
	return (pid_t)v;
}

error_t options__rest(int key, char *arg, struct argp_state *state)
{
	if (key != ARGP_KEY_ARG)
		return ARGP_ERR_UNKNOWN;
	argp_error(state, "unexpected argument '%s'", arg);
	return 0;
}

void options__profile_file(int key, char *arg, struct argp_state *state, const char **file)
{
	if (key == ARGP_KEY_ARG) {
		if (*file)
			argp_error(state, "unexpected argument '%s'", arg);
		*file = arg;
	} else if (key == ARGP_KEY_END && !*file) {
		argp_error(state, "name a profile FILE");
	}
}

int options__sample_index(const struct pprof_profile *p, const char *file, const char *name)
{
	char msg[512];
	int si = pprof_profile__sample_index(p, name, msg, sizeof(msg));

	if (si < 0) {
		fprintf(stderr, "isoprof: %s: %s\n", file, msg);
		return -1;
	}
	return si;
}
