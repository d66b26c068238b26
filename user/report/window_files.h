/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * window_files: the files `isoprof continuous --out-dir DIR` keeps, one per
 * isolate per window, and the retention bound on them; `isoprof serve
 * --out-dir DIR` reads them back by time range (docs/continuous.md).
 *
 * A file's name says what it holds, so that retention and a time range
 * need no file opened:
 *
 *   <from>+<seconds>s+<script>+<version>+<isolate>+cpu.pb.gz
 *   20261203T212500Z+10s+alpha+unknown+0x7f3a00000000+cpu.pb.gz
 *
 * <from> is the window's start in UTC to the second, <seconds> its length
 * rounded to the nearest second (at least 1); script and version are made
 * safe by fileio__name_part(), which never leaves a '+', so the fields
 * split cleanly; isolate is "none" for what ran outside isolates.  Names
 * sort by time.  Anything else in the directory (temporary files of a write
 * in progress included) is no window file and is left alone.
 */
#ifndef ISOPROF_REPORT_WINDOW_FILES_H
#define ISOPROF_REPORT_WINDOW_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WINDOW_FILES_SUFFIX "+cpu.pb.gz"

struct window_file {
	char *name;			/* in the directory */
	uint64_t from_s, until_s;	/* unix seconds */
	char *script;			/* as in the name (made safe) */
	char *version;			/* as in the name (made safe) */
	char *isolate;			/* "0x...", or "none" */
	uint64_t bytes;
};

/*
 * The name of a window's file into buf: 0, or -ENAMETOOLONG.  isolate
 * NULL: outside isolates.
 */
int window_files__name(uint64_t from_ns, uint64_t until_ns, const char *script,
		       const char *version, const char *isolate, char *buf, size_t len);

/* Parse a name: 0, -EINVAL when it is no window file's, or -ENOMEM. */
int window_files__parse(const char *name, struct window_file *out);
void window_file__release(struct window_file *f);

/*
 * The window files in the directory dirfd, oldest first (malloc()ed, with
 * window_files__free()).  0 or -errno.
 */
int window_files__list(int dirfd, struct window_file **out, size_t *nr);
void window_files__free(struct window_file *files, size_t nr);

/*
 * Retention: delete the window files that ended before now_s - max_age_s
 * (0: no age bound), then the oldest until the rest hold at most max_bytes
 * (0: no size bound).  Returns how many were deleted, or -errno.
 */
long window_files__prune(int dirfd, uint64_t now_s, uint64_t max_age_s, uint64_t max_bytes);

#endif /* ISOPROF_REPORT_WINDOW_FILES_H */
