/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * flame_svg: a static flamegraph of a pprof profile as one SVG document.
 *
 * An icicle (root at the top, callees below), one box per call path,
 * siblings merged by function (name and file, as pprof groups them) and
 * ordered hottest first, width proportional to the cumulative value of one
 * sample type.  Each box carries a <title> the viewer shows on hover:
 * name, file:line, flat, cum and share of the total.  Boxes narrower than
 * FLAME_SVG_MIN_WIDTH pixels are left out with their subtree; labels are
 * cut to fit.  Colours follow the frame's kind, by the same rules as the
 * web page (user/report/web/pprof.js kindOf): JS, V8, native, kernel, synthetic,
 * unknown.
 *
 * flame_svg__write() returns 0, -ENOMEM, or -EIO when writing to out
 * failed (errno says why), with one line in err.  The profile is only
 * read.  Text is escaped for XML, and bytes that are not UTF-8 become
 * U+FFFD, so the output is well-formed whatever the profile's strings hold.
 */
#ifndef ISOPROF_REPORT_FLAME_SVG_H
#define ISOPROF_REPORT_FLAME_SVG_H

#include <stddef.h>
#include <stdio.h>

struct pprof_profile;

#define FLAME_SVG_MIN_WIDTH 0.5

struct flame_svg_opts {
	const char *title;	/* NULL or "": "Flame graph" */
	size_t sample_index;	/* from pprof_profile__sample_index() */
	unsigned int width;	/* pixels; 0: 1200 */
};

int flame_svg__write(const struct pprof_profile *p, const struct flame_svg_opts *opts, FILE *out,
		     char *err, size_t errlen);

/* A frame's colour class: "js", "v8", "native", "kernel", "synthetic", "unknown". */
const char *flame_svg__kind(const char *name, const char *filename, const char *mapping_file);

#endif /* ISOPROF_REPORT_FLAME_SVG_H */
