/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * folded: folded stacks, the text flame graph tools read ("root;caller;leaf
 * 12" per line), to and from pprof.  docs/formats.md says how frames are
 * named.  Builders returned are the caller's; nothing prints.
 */
#ifndef ISOPROF_PROTO_FOLDED_H
#define ISOPROF_PROTO_FOLDED_H

#include <stddef.h>
#include <stdio.h>

#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"

/*
 * One "root;...;leaf N" line per distinct stack, sorted, N the sum of
 * sample_index over its samples (zero sums left out).  Frame names have
 * ';' replaced by ':' and line breaks by spaces.  0, -EINVAL (no such
 * sample type), -ENOMEM, or -EIO when writing fails.
 */
int folded__from_pprof(const struct pprof_profile *p, size_t sample_index, FILE *out);

/*
 * Folded text → pprof with one sample type, samples/count.  Blank lines
 * and '#' comments are skipped.  -EINVAL with err naming the line
 * (a line without a count, a NUL byte, no stack at all), or -ENOMEM.
 */
int folded__to_pprof(const char *text, size_t len, struct pprof_builder **out, char *err,
		     size_t errlen);

#endif /* ISOPROF_PROTO_FOLDED_H */
