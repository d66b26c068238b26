/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * gzip: whole-buffer gzip, as pprof files are stored (a gzip header and
 * trailer around deflate).  Both directions take any size: zlib's 32-bit
 * counts are fed in pieces.
 */
#ifndef ISOPROF_LIB_GZIP_H
#define ISOPROF_LIB_GZIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Does data start with the gzip magic? */
static inline bool gzip__is_gzip(const uint8_t *data, size_t len)
{
	return len >= 2 && data[0] == 0x1f && data[1] == 0x8b;
}

/* in[0..len) compressed (level 6, zlib's default) into malloc()ed *out: 0, -ENOMEM, -EIO. */
int gzip__compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len);

/*
 * in[0..len) decompressed into malloc()ed *out.  Members that follow one
 * another concatenate, as in Go's reader; anything else after a member is
 * an error.  Returns 0, -ENOMEM, -EFBIG (more than max bytes out), or
 * -EBADMSG with *why (static text) saying what was wrong with the data.
 */
int gzip__decompress(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len,
		     const char **why);

#endif /* ISOPROF_LIB_GZIP_H */
