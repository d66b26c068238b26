// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sha256: SHA-256 from FIPS 180-4; see sha256.h. */
#include "lib/md_block.h"
#include "lib/sha256.h"

#include <stdbool.h>
#include <string.h>

#if defined(__x86_64__) && !defined(ISOPROF_FUZZ)
#include <cpuid.h>
#include <immintrin.h>
#define HAVE_SHA_NI 1
#endif

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

/* FIPS 180-4 6.2.2, one 512-bit block. */
static void compress(uint32_t *state, const uint8_t *block)
{
	uint32_t w[64], a, b, c, d, e, f, g, h, t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = md__load_be32(block + 4 * i);
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

#ifdef HAVE_SHA_NI
/*
 * The same block with the x86 SHA extensions (sha256rnds2 does two rounds,
 * sha256msg1/2 the message schedule): about 8x the portable code, which
 * matters where every script source of a thousand isolates is hashed.  The
 * instructions keep the state as ABEF and CDGH (lane 3 first).
 */
__attribute__((target("sha,sse4.1,ssse3")))
static void compress_shani(uint32_t *state, const uint8_t *block)
{
	const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
	__m128i abef, cdgh, abef0, cdgh0, t, m, w[4];
	int g;

	t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xb1);  /* BADC */
	cdgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1b); /* HGFE */
	abef = _mm_alignr_epi8(t, cdgh, 8);
	cdgh = _mm_blend_epi16(cdgh, t, 0xf0);
	abef0 = abef;
	cdgh0 = cdgh;
	for (g = 0; g < 16; g++) {
		if (g < 4) {
			w[g] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(block + 16 * g)),
						bswap);
		} else {
			/* W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16], four at a time */
			t = _mm_sha256msg1_epu32(w[g & 3], w[(g - 3) & 3]);
			t = _mm_add_epi32(t, _mm_alignr_epi8(w[(g - 1) & 3], w[(g - 2) & 3], 4));
			w[g & 3] = _mm_sha256msg2_epu32(t, w[(g - 1) & 3]);
		}
		m = _mm_add_epi32(w[g & 3], _mm_loadu_si128((const __m128i *)&k[4 * g]));
		cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
		abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0e));
	}
	abef = _mm_add_epi32(abef, abef0);
	cdgh = _mm_add_epi32(cdgh, cdgh0);
	t = _mm_shuffle_epi32(abef, 0x1b);	/* FEBA */
	cdgh = _mm_shuffle_epi32(cdgh, 0xb1);	/* DCHG */
	_mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(t, cdgh, 0xf0));	/* DCBA */
	_mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(cdgh, t, 8));	/* HGFE */
}

/* The SHA extensions and the SSE4.1/SSSE3 the code above also uses. */
static bool cpu_has_shani(void)
{
	unsigned int a, b, c, d;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3))
		return false;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
}
#endif

/* The block function for this CPU, chosen on first use (any thread picks the same). */
static md_compress_fn pick(void)
{
	static md_compress_fn chosen;
	md_compress_fn fn = __atomic_load_n(&chosen, __ATOMIC_RELAXED);

	if (!fn) {
		fn = compress;
#ifdef HAVE_SHA_NI
		if (cpu_has_shani())
			fn = compress_shani;
#endif
		__atomic_store_n(&chosen, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

void sha256__init(struct sha256_ctx *ctx)
{
	/* FIPS 180-4 5.3.3 */
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memcpy(ctx->state, h0, sizeof(h0));
	memset(&ctx->buf, 0, sizeof(ctx->buf));
}

void sha256__update(struct sha256_ctx *ctx, const void *data, size_t len)
{
	md_block__update(&ctx->buf, ctx->state, pick(), data, len);
}

void sha256__final(struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_LEN])
{
	md_block__final(&ctx->buf, ctx->state, pick(), digest, 8);
	memset(ctx->state, 0, sizeof(ctx->state));
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
