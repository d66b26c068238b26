/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * remap_pprof: a profile taken without source maps, its JS functions named
 * through them afterwards (convert, top and flame with --source-maps DIR;
 * docs/source-maps.md).
 *
 * A JS function is one whose system_name ends in its generated position,
 * "SCRIPT:LINE:COLUMN" with SCRIPT its filename (isoprof's frames: "JS:*c
 * worker.js:1:11"), or, for a profile converted from V8's, one with a
 * filename and a start line whose Line gives the column.  Functions already
 * mapped (a filename that is not the script of their system_name) are left
 * alone, as is everything else in the profile.  The mapped function gets
 * the original name, file and start line, its system_name the generated
 * name and position; each Line the original line of its position.
 *
 * in is a raw (not gzip'd) pprof; *out is the caller's (malloc'd).
 * Returns 0 (with *mapped, the Lines renamed), the pprof reader's error
 * with err (-EBADMSG not a protobuf, -EINVAL a broken invariant, or one
 * that protobuf-c cannot write back), -ENOMEM.  Nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_REMAP_PPROF_H
#define ISOPROF_ATTRIBUTE_REMAP_PPROF_H

#include <stddef.h>
#include <stdint.h>

struct source_maps;

int remap_pprof__apply(struct source_maps *sms, const uint8_t *in, size_t len, uint8_t **out,
		       size_t *out_len, size_t *mapped, char *err, size_t errlen);

/*
 * Exposed for tests: the generated position at the end of a system name
 * ("JS:*c worker.js:1:11" -> script "worker.js" (*script_len bytes at
 * *script), line 1, column 11).  false when it has none.
 */
#include <stdbool.h>
bool remap_pprof__position(const char *system_name, const char **script, size_t *script_len,
			   uint32_t *line, uint32_t *column);

#endif /* ISOPROF_ATTRIBUTE_REMAP_PPROF_H */
