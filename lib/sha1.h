/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * sha1: SHA-1 (FIPS 180-4), for the one place isoprof needs it: checking a
 * WebSocket server's Sec-WebSocket-Accept (RFC 6455 section 4.2.2).  Not for
 * anything that needs collision resistance.
 *
 * Streaming (sha1__init/update/final) and one-shot (sha1__digest).  No
 * allocation, no failure.  A context may be reused after sha1__final() only
 * through sha1__init().
 */
#ifndef ISOPROF_LIB_SHA1_H
#define ISOPROF_LIB_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "lib/md_block.h"

#define SHA1_DIGEST_LEN 20

struct sha1_ctx {
	uint32_t state[5];
	struct md_block buf;
};

void sha1__init(struct sha1_ctx *ctx);
void sha1__update(struct sha1_ctx *ctx, const void *data, size_t len);
void sha1__final(struct sha1_ctx *ctx, uint8_t digest[SHA1_DIGEST_LEN]);

/* Hash len bytes of data in one call. */
void sha1__digest(const void *data, size_t len, uint8_t digest[SHA1_DIGEST_LEN]);

#endif /* ISOPROF_LIB_SHA1_H */
