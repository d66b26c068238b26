/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * top_names: function names and file paths as `go tool pprof` prints
 * them, so `isoprof top` keys and prints nodes exactly as pprof does.
 */
#ifndef ISOPROF_REPORT_TOP_NAMES_H
#define ISOPROF_REPORT_TOP_NAMES_H

#include <stddef.h>

struct pprof_frame;

/* Go's filepath.Clean: a malloc()ed path, or NULL (ENOMEM). */
char *top_names__path_clean(const char *path);
/* Go's filepath.Base, into buf (or a constant: ".", "/"). */
const char *top_names__path_base(const char *path, char *buf, size_t size);
/* pprof's report.trimPath without -trim_path: path past a /proc/self/cwd/ prefix. */
const char *top_names__trim_path(const char *path);

/*
 * The name pprof shows for frame f: 0 and *out NULL when it is f->name
 * unchanged, 0 and a malloc()ed name, or -ENOMEM.  pprof "demangles" a
 * function whose name is empty or equal to its system name: a mangled C++
 * name (libiberty here, Go's demangler there) loses its parameters and
 * template arguments, a name that looks like demangled C++ its (...) and
 * <...> groups; an empty name becomes the system name.
 */
int top_names__frame(const struct pprof_frame *f, char **out);

#endif /* ISOPROF_REPORT_TOP_NAMES_H */
