// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sha1: SHA-1 from FIPS 180-4 section 6.1; see sha1.h. */
#include "lib/md_block.h"
#include "lib/sha1.h"

#include <string.h>

static inline uint32_t rotl(uint32_t x, unsigned int n)
{
	return (x << n) | (x >> (32 - n));
}

/* FIPS 180-4 6.1.2, one 512-bit block. */
static void compress(uint32_t *state, const uint8_t *block)
{
	uint32_t w[80], a, b, c, d, e, f, k, t;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = md__load_be32(block + 4 * i);
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
	memset(&ctx->buf, 0, sizeof(ctx->buf));
}

void sha1__update(struct sha1_ctx *ctx, const void *data, size_t len)
{
	md_block__update(&ctx->buf, ctx->state, compress, data, len);
}

void sha1__final(struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_LEN])
{
	md_block__final(&ctx->buf, ctx->state, compress, digest, 5);
	memset(ctx->state, 0, sizeof(ctx->state));
}

void sha1__digest(const void *data, size_t len, uint8_t digest[SHA1_DIGEST_LEN])
{
	struct sha1_ctx ctx;

	sha1__init(&ctx);
	sha1__update(&ctx, data, len);
	sha1__final(&ctx, digest);
}
