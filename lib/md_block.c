// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* md_block: block buffering and padding for SHA-1 and SHA-256; see md_block.h. */
#include <string.h>

#include "lib/md_block.h"

void md_block__update(struct md_block *b, uint32_t *state, md_compress_fn compress,
		      const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;

	b->len += len;
	if (b->nblock) {
		n = MD_BLOCK_LEN - b->nblock;
		if (n > len)
			n = len;
		memcpy(b->block + b->nblock, p, n);
		b->nblock += n;
		p += n;
		len -= n;
		if (b->nblock < MD_BLOCK_LEN)
			return;
		compress(state, b->block);
		b->nblock = 0;
	}
	for (; len >= MD_BLOCK_LEN; p += MD_BLOCK_LEN, len -= MD_BLOCK_LEN)
		compress(state, p);
	if (len) {
		memcpy(b->block, p, len);
		b->nblock = len;
	}
}

void md_block__final(struct md_block *b, uint32_t *state, md_compress_fn compress,
		     uint8_t *digest, size_t nwords)
{
	uint64_t bits = b->len * 8;
	size_t i;

	b->block[b->nblock++] = 0x80;
	if (b->nblock > MD_BLOCK_LEN - 8) {
		memset(b->block + b->nblock, 0, MD_BLOCK_LEN - b->nblock);
		compress(state, b->block);
		b->nblock = 0;
	}
	memset(b->block + b->nblock, 0, MD_BLOCK_LEN - 8 - b->nblock);
	md__store_be32(b->block + 56, (uint32_t)(bits >> 32));
	md__store_be32(b->block + 60, (uint32_t)bits);
	compress(state, b->block);
	for (i = 0; i < nwords; i++)
		md__store_be32(digest + 4 * i, state[i]);
	memset(b, 0, sizeof(*b));
}
