/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * window_merge: window files (window_files.h) chosen by what their names
 * say, read and merged into one profile (proto/pprof_merge.h): what
 * `isoprof merge DIR` and serve's GET /v1/profiles answer with.
 *
 * Selection: a window is chosen when its script and version (when given)
 * are those of the selection, made safe the way the names were
 * (fileio__name_part()), and its time [from_s, until_s) overlaps the
 * selection's [from_s, until_s).
 *
 * Reading: every file is opened through lib/safe_open (a regular file, no
 * symlink followed, never blocking, at most WINDOW_MERGE_FILE_MAX bytes)
 * and read whole, parsed, folded into the merge and freed before the next
 * one is read: memory holds one input and the merged result.
 *
 * Errors: a file that cannot be opened, read or parsed is skipped and
 * reported through note (with its name and why, for the caller to print or
 * log once); a profile of another kind than the first merged (other
 * sample types) stops the merge with -EINVAL and err naming the file; a
 * directory that cannot be listed is -errno; -ENOMEM.  Nothing prints.
 */
#ifndef ISOPROF_REPORT_WINDOW_MERGE_H
#define ISOPROF_REPORT_WINDOW_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/report/window_files.h"

/* A window of a busy isolate is 5-20 KiB; a file 1000 times that is no window. */
#define WINDOW_MERGE_FILE_MAX (64ull << 20)

struct pprof_merge;

struct window_select {
	const char *script;	/* NULL: any */
	const char *version;	/* NULL: any */
	int64_t from_s;		/* unix seconds; INT64_MIN: no bound */
	int64_t until_s;	/* INT64_MAX: no bound */
};

bool window_select__match(const struct window_select *sel, const struct window_file *f);

/* Called for each file skipped: its name (as given or in the directory) and why. */
typedef void (*window_merge_note_fn)(void *ctx, const char *name, const char *why);

/*
 * Read name and fold it into m.  dirfd < 0: name is a path; otherwise a
 * name in the directory dirfd.  0; a negative errno with why in err when
 * the file is not merged: -EINVAL from pprof_merge__add() (another kind)
 * is told apart by *other_kind.
 */
int window_merge__file(struct pprof_merge *m, int dirfd, const char *name, bool *other_kind,
		       char *err, size_t errlen);

/*
 * The windows of the directory dirfd that sel chooses, merged into m, oldest
 * first.  *matched gets how many were chosen, *merged how many went in
 * (the others went to note).  0 (also when none matched), or -EINVAL
 * (another kind: err says which file), -ENOMEM, -errno of listing.
 */
int window_merge__dir(struct pprof_merge *m, int dirfd, const struct window_select *sel,
		      size_t *matched, size_t *merged, window_merge_note_fn note, void *ctx,
		      char *err, size_t errlen);

#endif /* ISOPROF_REPORT_WINDOW_MERGE_H */
