/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * version_labels: the --version-labels file, an operator's names for the
 * version ids of docs/attribution.md ("Labels").
 *
 * Text lines
 *   SCRIPT VERSION_ID LABEL
 * separated by blanks; blank lines and fields from one starting with '#'
 * to the end of the line are ignored.  SCRIPT is matched like --script
 * (isolate__script_matches()) and may use \\ and \xNN escapes (for blanks
 * in names; \x00 is refused); VERSION_ID is 12 to 64 hex digits, a prefix
 * of the full version id (kept lowercase); LABEL is 1..128 printable ASCII
 * characters other than blanks, and not "latest" or "unknown".  Lines are
 * at most 8192 bytes, and hold no NUL.  The same SCRIPT and VERSION_ID
 * twice is kept once when the labels agree, and an error when they do not.
 *
 * Of several labels that fit an isolate (version_labels__best()), the
 * longest VERSION_ID wins, then the earliest line.
 *
 * Strings: script names and labels come from the caller's intern function,
 * which keeps them as long as it likes (the isolate registry hands labels
 * out until it is freed, across reloads).
 *
 * Errors: -EINVAL with "line N: what is wrong" in err (a NULL or empty err
 * is fine), -ENOMEM, -EIO, or the errno of opening the file with its text
 * in err.  Nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_VERSION_LABELS_H
#define ISOPROF_ATTRIBUTE_VERSION_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/sha256.h"

#define VERSION_LABEL_MAX 128		/* characters of a label */
#define VERSION_LABEL_MIN_ID 12		/* hex digits of a VERSION_ID */

struct version_label {
	const char *script;		/* unescaped */
	char prefix[SHA256_HEX_LEN];	/* lowercase, 12..64 hex digits */
	size_t plen;
	const char *label;
	size_t line;			/* 1-based */
};

struct version_labels {
	struct version_label *v;	/* by script, then prefix; one per pair */
	size_t nr;
};

/* A copy of s that lives as long as the caller needs it; NULL on ENOMEM. */
typedef const char *(*version_labels_intern_fn)(void *ctx, const char *s);

/* Parse the lines of f into *out (a zeroed set on error). */
int version_labels__read(FILE *f, version_labels_intern_fn intern, void *ctx,
			 struct version_labels *out, char *err, size_t errlen);

/* A labels file is a few lines per deployed version: 64 MiB is far beyond any. */
#define VERSION_LABELS_MAX_BYTES (64ull << 20)

/*
 * The same for the file at path: a regular file (symlinks followed: the
 * operator names it) of at most VERSION_LABELS_MAX_BYTES; a FIFO or
 * device is refused, never waited on (err says why).
 */
int version_labels__load(const char *path, version_labels_intern_fn intern, void *ctx,
			 struct version_labels *out, char *err, size_t errlen);

void version_labels__release(struct version_labels *vl);

/*
 * The labels whose SCRIPT a script called name answers to (name itself, or
 * a tail of it after a '/') and whose VERSION_ID starts full (64 lowercase
 * hex): *best becomes the best of them and *best as it was (start from
 * NULL, call for each of an isolate's names).
 */
void version_labels__best(const struct version_labels *vl, const char *name, const char *full,
			  const struct version_label **best);

/* Is some line's LABEL label? */
bool version_labels__has(const struct version_labels *vl, const char *label);

#endif /* ISOPROF_ATTRIBUTE_VERSION_LABELS_H */
