/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * options: the argument parsing isoprof's subcommands share, for their argp
 * parsers.  Numbers are strict everywhere: an optional '-' and decimal
 * digits, nothing else (no blanks, no '+', no "0x", no trailing text), in
 * the range the option allows.  Functions that take a struct argp_state
 * report a bad argument with argp_error(), which prints the usage hint and
 * exits with status 2.
 */
#ifndef ISOPROF_CMD_OPTIONS_H
#define ISOPROF_CMD_OPTIONS_H

#include <argp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "user/record/capture.h"


struct pprof_profile;

/* arg as a long from min to max: 0, or -EINVAL (*out untouched). */
int options__long(const char *arg, long min, long max, long *out);
/* The same for an unsigned int. */
int options__uint(const char *arg, unsigned int min, unsigned int max, unsigned int *out);

/*
 * --pid PID (repeatable): the pid, for pids[have]; argp_error() when it is
 * not a pid or when have is MAX_PIDS already.
 */
pid_t options__pid(struct argp_state *state, const char *arg, size_t have);

/*
 * The keys a parser leaves to this, from its default case: an operand is
 * an error ("unexpected argument"), any other key is not the parser's.
 */
error_t options__rest(int key, char *arg, struct argp_state *state);

/*
 * The one FILE operand of a command that reads a profile (top, flame),
 * for ARGP_KEY_ARG (a second one is an error) and ARGP_KEY_END (none is an
 * error); other keys are ignored.
 */
void options__profile_file(int key, char *arg, struct argp_state *state, const char **file);

/*
 * --sample-index NAME|N of profile p read from file (pprof's rules,
 * pprof_profile__sample_index()): the index, or -1 after printing why
 * ("isoprof: FILE: ..."; the command exits 2).
 */
int options__sample_index(const struct pprof_profile *p, const char *file, const char *name);

#endif /* ISOPROF_CMD_OPTIONS_H */
