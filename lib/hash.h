/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * hash: the hash functions every table in isoprof uses.  None of them is
 * cryptographic (see sha1.h, sha256.h for digests); their values only
 * place entries in tables and never reach an output.
 *
 *   hash__bytes/hash__str   FNV-1a 64 over bytes: names, paths, keys
 *                           made of text.  Chain calls from HASH_SEED;
 *                           hash__field for one string of several.
 *   hash__word              one 64-bit word into a running hash, for ids,
 *                           addresses and stacks (FNV per byte is too slow
 *                           there).  Chain calls from HASH_SEED.
 *   hash__mix64             a finalizer (murmur3 fmix64): spreads any
 *                           64-bit value, e.g. an aligned address, over all
 *                           bits before a table takes the low ones.
 */
#ifndef ISOPROF_LIB_HASH_H
#define ISOPROF_LIB_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_SEED 0xcbf29ce484222325ULL	/* FNV-1a 64 offset basis */

static inline uint64_t hash__mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline uint64_t hash__bytes(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static inline uint64_t hash__str(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * hash__str() and the string's terminator, for keys of several strings:
 * ("ab", "c") and ("a", "bc") then hash apart.
 */
static inline uint64_t hash__field(uint64_t h, const char *s)
{
	return hash__bytes(hash__str(h, s), "", 1);
}

static inline uint64_t hash__word(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

/* The 32 bits a table keeps, from any of the above. */
static inline uint32_t hash__fold32(uint64_t h)
{
	return (uint32_t)hash__mix64(h);
}

#endif /* ISOPROF_LIB_HASH_H */
