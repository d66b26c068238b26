// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sha256: SHA-256 from FIPS 180-4; see sha256.h. */
#include "lib/sha256.h"

#include <string.h>

/*
 * FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube
 * roots of the first 64 primes.
 */
static const uint32_t k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t rotr(uint32_t x, unsigned int n)
{
	return (x >> n) | (x << (32 - n));
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

/* FIPS 180-4 6.2.2, one 512-bit block. */
static void compress(uint32_t state[8], const uint8_t *block)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = load_be32(block + 4 * i);
	for (i = 16; i < 64; i++) {
		uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}

	a = state[0];
	b = state[1];
	c = state[2];
	d = state[3];
	e = state[4];
	f = state[5];
	g = state[6];
	h = state[7];
	for (i = 0; i < 64; i++) {
		t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] +
		     w[i];
		t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
		h = g;
		g = f;
		f = e;
		e = d + t1;
		d = c;
		c = b;
		b = a;
		a = t1 + t2;
	}
	state[0] += a;
	state[1] += b;
	state[2] += c;
	state[3] += d;
	state[4] += e;
	state[5] += f;
	state[6] += g;
	state[7] += h;
}

void sha256__init(struct sha256_ctx *ctx)
{
	/* FIPS 180-4 5.3.3 */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, h0, sizeof(h0));
	ctx->len = 0;
	ctx->nblock = 0;
}

void sha256__update(struct sha256_ctx *ctx, const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t n;

	ctx->len += len;
	if (ctx->nblock) {
		n = sizeof(ctx->block) - ctx->nblock;
		if (n > len)
			n = len;
		memcpy(ctx->block + ctx->nblock, p, n);
		ctx->nblock += n;
		p += n;
		len -= n;
		if (ctx->nblock < sizeof(ctx->block))
			return;
		compress(ctx->state, ctx->block);
		ctx->nblock = 0;
	}
	for (; len >= sizeof(ctx->block); p += sizeof(ctx->block), len -= sizeof(ctx->block))
		compress(ctx->state, p);
	if (len) {
		memcpy(ctx->block, p, len);
		ctx->nblock = len;
	}
}

void sha256__final(struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_LEN])
{
	uint64_t bits = ctx->len * 8;
	int i;

	/* FIPS 180-4 5.1.1: a 1 bit, zeros, then the length in bits as 64-bit big endian. */
	ctx->block[ctx->nblock++] = 0x80;
	if (ctx->nblock > 56) {
		memset(ctx->block + ctx->nblock, 0, sizeof(ctx->block) - ctx->nblock);
		compress(ctx->state, ctx->block);
		ctx->nblock = 0;
	}
	memset(ctx->block + ctx->nblock, 0, 56 - ctx->nblock);
	store_be32(ctx->block + 56, (uint32_t)(bits >> 32));
	store_be32(ctx->block + 60, (uint32_t)bits);
	compress(ctx->state, ctx->block);

	for (i = 0; i < 8; i++)
		store_be32(digest + 4 * i, ctx->state[i]);
	/* Nothing of the message should outlive the hash in this context. */
	memset(ctx, 0, sizeof(*ctx));
}

void sha256__digest(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_LEN])
{
	struct sha256_ctx ctx;

	sha256__init(&ctx);
	sha256__update(&ctx, data, len);
	sha256__final(&ctx, digest);
}

void sha256__hex(const uint8_t digest[SHA256_DIGEST_LEN], char hex[SHA256_HEX_LEN])
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < SHA256_DIGEST_LEN; i++) {
		hex[2 * i] = digits[digest[i] >> 4];
		hex[2 * i + 1] = digits[digest[i] & 0xf];
	}
	hex[2 * SHA256_DIGEST_LEN] = '\0';
}
