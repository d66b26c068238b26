// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sha1: SHA-1 from FIPS 180-4 section 6.1; see sha1.h. */
#include "lib/sha1.h"

#include <string.h>

static inline uint32_t rotl(uint32_t x, unsigned int n)
{
	return (x << n) | (x >> (32 - n));
}

static inline uint32_t load_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void store_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* FIPS 180-4 6.1.2, one 512-bit block. */
static void compress(uint32_t state[5], const uint8_t *block)
{
	uint32_t w[80], a, b, c, d, e, f, k, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(block + 4 * i);
	for (i = 16; i < 80; i++)
		w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);

	a = state[0];
	b = state[1];
	c = state[2];
	d = state[3];
	e = state[4];
	for (i = 0; i < 80; i++) {
		/* FIPS 180-4 4.1.1 and 4.2.1: Ch, Parity, Maj, Parity. */
		if (i < 20) {
			f = (b & c) ^ (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) ^ (b & d) ^ (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = rotl(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rotl(b, 30);
		b = a;
		a = t;
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
}

void sha1__init(struct sha1_ctx *ctx)
{
	/* FIPS 180-4 5.3.1 */
	ctx->state[0] = 0x67452301;
	ctx->state[1] = 0xefcdab89;
	ctx->state[2] = 0x98badcfe;
	ctx->state[3] = 0x10325476;
	ctx->state[4] = 0xc3d2e1f0;
	ctx->len = 0;
	ctx->nblock = 0;
}

void sha1__update(struct sha1_ctx *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;

	ctx->len += len;
	if (ctx->nblock) {
		size_t take = 64 - ctx->nblock;

		if (take > len)
			take = len;
		memcpy(ctx->block + ctx->nblock, p, take);
		ctx->nblock += take;
		p += take;
		len -= take;
		if (ctx->nblock < 64)
			return;
		compress(ctx->state, ctx->block);
		ctx->nblock = 0;
	}
	for (; len >= 64; p += 64, len -= 64)
		compress(ctx->state, p);
	if (len) {
		memcpy(ctx->block, p, len);
		ctx->nblock = len;
	}
}

void sha1__final(struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_LEN])
{
	uint64_t bits = ctx->len * 8;
	int i;

	/* FIPS 180-4 5.1.1: a 1 bit, zeros to 56 mod 64, the bit length. */
	ctx->block[ctx->nblock++] = 0x80;
	if (ctx->nblock > 56) {
		memset(ctx->block + ctx->nblock, 0, 64 - ctx->nblock);
		compress(ctx->state, ctx->block);
		ctx->nblock = 0;
	}
	memset(ctx->block + ctx->nblock, 0, 56 - ctx->nblock);
	store_be32(ctx->block + 56, (uint32_t)(bits >> 32));
	store_be32(ctx->block + 60, (uint32_t)bits);
	compress(ctx->state, ctx->block);
	for (i = 0; i < 5; i++)
		store_be32(digest + 4 * i, ctx->state[i]);
}

void sha1__digest(const void *data, size_t len, uint8_t digest[SHA1_DIGEST_LEN])
{
	struct sha1_ctx ctx;

	sha1__init(&ctx);
	sha1__update(&ctx, data, len);
	sha1__final(&ctx, digest);
}
