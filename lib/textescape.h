/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * textescape: text a target controls (script names from its code logs,
 * function names, paths, comm) made safe to print on a terminal or in a
 * log line.  A name with an ESC byte could otherwise move the cursor,
 * rewrite earlier lines or retitle the terminal; one with a newline could
 * forge a line of isoprof's own output.
 *
 * Rendered as \xNN, one escape per byte: control bytes (below 0x20 and
 * 0x7f), bytes that are not well-formed UTF-8, and the code points a
 * terminal may act on or that reorder text (C1 controls U+0080..U+009F,
 * the bidirectional overrides and isolates U+202A..U+202E and
 * U+2066..U+2069).  A backslash is doubled, so the rendering is
 * unambiguous.  Everything else, printable UTF-8 included, is kept.
 *
 * JSON output needs none of this: json-c escapes what it writes.
 */
#ifndef ISOPROF_LIB_TEXTESCAPE_H
#define ISOPROF_LIB_TEXTESCAPE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * in (NULL: "") rendered into out[0..len), NUL-terminated, cut at a whole
 * byte or escape when it does not fit.  Returns out, so that a call can
 * be an argument of printf().
 */
const char *textescape(const char *in, char *out, size_t len);

/* Would textescape() change in? */
bool textescape__needed(const char *in);

/* Room for a rendering of n bytes that is never cut: 4 per byte and the NUL. */
#define TEXTESCAPE_SIZE(n) (4 * (n) + 1)

#endif
