// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* gzip: whole-buffer gzip both ways; see gzip.h. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

#include "lib/gzip.h"

/* windowBits 15 + 16: deflate with a gzip header and trailer. */
#define GZIP_WINDOW (15 + 16)

int gzip__compress(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = { 0 };
	size_t bound;
	uint8_t *buf;
	int ret;

	if (deflateInit2(&zs, 6, Z_DEFLATED, GZIP_WINDOW, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, len);
	buf = malloc(bound ? bound : 1);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.next_out = buf;
	do {
		size_t in_left = len - (size_t)(zs.next_in - in);
		size_t out_left = bound - (size_t)(zs.next_out - buf);

		zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
		zs.avail_out = out_left > UINT_MAX ? UINT_MAX : (uInt)out_left;
		ret = deflate(&zs, zs.avail_in == in_left ? Z_FINISH : Z_NO_FLUSH);
	} while (ret == Z_OK || (ret == Z_BUF_ERROR && zs.avail_out));
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	*out_len = (size_t)(zs.next_out - buf);
	return 0;
}

int gzip__decompress(const uint8_t *in, size_t len, size_t max, uint8_t **out, size_t *out_len,
		     const char **why)
{
	z_stream zs = { 0 };
	size_t cap = len < 4096 ? 16384 : len * 4, used = 0;
	uint8_t *buf, *nb;
	int zret, ret;

	*why = NULL;
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	if (inflateInit2(&zs, GZIP_WINDOW) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	for (;;) {
		size_t in_left = len - (size_t)(zs.next_in - in);

		if (used == cap) {
			if (cap > max) {
				ret = -EFBIG;
				goto fail;
			}
			cap = cap > max / 2 ? max + 1 : cap * 2;
			nb = realloc(buf, cap);
			if (!nb) {
				ret = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (uInt)in_left;
		zs.next_out = buf + used;
		zs.avail_out = cap - used > UINT_MAX ? UINT_MAX : (uInt)(cap - used);
		zret = inflate(&zs, Z_NO_FLUSH);
		used = (size_t)(zs.next_out - buf);
		if (zret == Z_STREAM_END) {
			in_left = len - (size_t)(zs.next_in - in);
			if (!in_left)
				break;
			if (!gzip__is_gzip(zs.next_in, in_left)) {
				*why = "invalid data after stream";
				ret = -EBADMSG;
				goto fail;
			}
			inflateReset(&zs);
			continue;
		}
		if (zret == Z_BUF_ERROR && !zs.avail_in && zs.avail_out) {
			*why = "unexpected end of data";
			ret = -EBADMSG;
			goto fail;
		}
		if (zret != Z_OK && zret != Z_BUF_ERROR) {
			*why = zs.msg ? zs.msg : "corrupt data";
			ret = -EBADMSG;
			goto fail;
		}
	}
	if (used > max) {
		ret = -EFBIG;
		goto fail;
	}
	inflateEnd(&zs);
	*out = buf;
	*out_len = used;
	return 0;
fail:
	inflateEnd(&zs);
	free(buf);
	return ret;
}
