/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * md_block: what SHA-1 and SHA-256 share (FIPS 180-4 5.1.1, 5.2.1): the
 * message cut into 64-byte blocks for a compression function, the partial
 * block kept between updates, and the final padding (a 1 bit, zeros to 56
 * mod 64, the length in bits as 64-bit big endian), and big-endian words.
 * sha1.c and sha256.c supply only their compression function and state.
 */
#ifndef ISOPROF_LIB_MD_BLOCK_H
#define ISOPROF_LIB_MD_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#define MD_BLOCK_LEN 64

/* One compression step over a whole block. */
typedef void (*md_compress_fn)(uint32_t *state, const uint8_t *block);

struct md_block {
	uint64_t len;			/* bytes hashed so far */
	uint8_t block[MD_BLOCK_LEN];	/* pending partial block */
	size_t nblock;
};

static inline uint32_t md__load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void md__store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* Feed len bytes: every whole block goes through compress, the rest waits. */
void md_block__update(struct md_block *b, uint32_t *state, md_compress_fn compress,
		      const void *data, size_t len);

/*
 * Pad and compress the last block(s), then write the first nwords words of
 * state big endian to digest.  b is cleared: nothing of the message
 * outlives the hash in it.
 */
void md_block__final(struct md_block *b, uint32_t *state, md_compress_fn compress,
		     uint8_t *digest, size_t nwords);

#endif /* ISOPROF_LIB_MD_BLOCK_H */
