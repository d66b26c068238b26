/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * top: the flat/cum table of a pprof profile, number for number what
 * `go tool pprof -top` prints for it (with --hide-idle our own filter), so
 * the two can be compared.  top.c says which of pprof's rules it follows.
 *
 * top__print() writes the header (File, Build ID, comments, Type, Time,
 * Duration, Active filters, "Showing nodes ...") and the table to out.
 * The profile is only read.  Returns 0 or -ENOMEM; a failed write is the
 * caller's to see (ferror(), fflush()).
 */
#ifndef ISOPROF_REPORT_TOP_H
#define ISOPROF_REPORT_TOP_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct pprof_profile;

/*
 * A focus or ignore filter: an extended regular expression matched against
 * each frame's function name (as pprof shows it), file name and mapping
 * file.  top_filter__compile() with NULL or "" makes a filter that keeps
 * everything; a bad pattern is -EINVAL with regerror()'s text in err.
 * The pattern is borrowed (the header prints it).
 */
struct top_filter {
	const char *pattern;
	bool compiled;
	regex_t re;
};

int top_filter__compile(struct top_filter *f, const char *pattern, char *err, size_t errlen);
void top_filter__release(struct top_filter *f);

struct top_opts {
	size_t sample_index;		/* from pprof_profile__sample_index() */
	long nodecount;			/* at most this many nodes; 0: all above the cutoff */
	bool cum_sort;			/* by |cum| first instead of |flat| */
	bool lines;			/* a node per function and file:line */
	bool hide_idle;			/* drop samples whose root or leaf is (idle) or class=idle */
	const struct top_filter *focus;	/* keep samples with a matching frame; NULL: all */
	const struct top_filter *ignore;	/* drop samples with a matching frame; NULL: none */
};

int top__print(const struct pprof_profile *p, const struct top_opts *opts, FILE *out);

#endif /* ISOPROF_REPORT_TOP_H */
