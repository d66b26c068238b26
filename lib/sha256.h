/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sha256: SHA-256 (FIPS 180-4), used to fingerprint the script sources a V8
 * code log carries, so a profile can name the exact code it measured.
 *
 * Streaming (sha256__init/update/final) and one-shot (sha256__digest).
 * No allocation, no failure: every function always succeeds.  A context
 * may be reused after sha256__final() only through sha256__init().
 */
#ifndef ISOPROF_LIB_SHA256_H
#define ISOPROF_LIB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "lib/md_block.h"

#define SHA256_DIGEST_LEN 32
#define SHA256_HEX_LEN (2 * SHA256_DIGEST_LEN + 1)	/* with the NUL */

struct sha256_ctx {
	uint32_t state[8];
	struct md_block buf;
};

void sha256__init(struct sha256_ctx *ctx);
void sha256__update(struct sha256_ctx *ctx, const void *data, size_t len);
void sha256__final(struct sha256_ctx *ctx, uint8_t digest[SHA256_DIGEST_LEN]);

/* Hash len bytes of data in one call. */
void sha256__digest(const void *data, size_t len, uint8_t digest[SHA256_DIGEST_LEN]);

/* Lowercase hex of a digest into hex[SHA256_HEX_LEN], NUL-terminated. */
void sha256__hex(const uint8_t digest[SHA256_DIGEST_LEN], char hex[SHA256_HEX_LEN]);

#endif /* ISOPROF_LIB_SHA256_H */
