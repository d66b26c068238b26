/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * auth_backoff: slows down whoever keeps guessing the daemon's bearer
 * token (docs/daemon.md, "Security").
 *
 * Failures are counted per client key (an address, or "uid:N" for a unix
 * socket peer).  The first AUTH_BACKOFF_FREE failures cost nothing; from
 * then on each failure blocks the key for twice as long as the one before
 * (1 s, 2 s, 4 s, ... at most AUTH_BACKOFF_MAX_S).  While blocked, a key
 * gets no answer about any token: auth_backoff__check() returns the
 * seconds left (>= 1), which the daemon sends as a 429 with Retry-After.
 * A success clears the key; a key without a failure for
 * AUTH_BACKOFF_FORGET_S is forgotten.  The table holds a fixed number of
 * keys; when it is full, the one whose last failure is oldest gives way.
 *
 * Times are the caller's monotonic milliseconds (so tests can drive it).
 * Thread-safe.  The constructor returns NULL and sets errno.
 */
#ifndef ISOPROF_SERVE_AUTH_BACKOFF_H
#define ISOPROF_SERVE_AUTH_BACKOFF_H

#include <stdint.h>

#define AUTH_BACKOFF_FREE 5
#define AUTH_BACKOFF_MAX_S 300
#define AUTH_BACKOFF_FORGET_S 900
#define AUTH_BACKOFF_KEY_MAX 63

struct auth_backoff;

struct auth_backoff *auth_backoff__new(unsigned int entries);
void auth_backoff__free(struct auth_backoff *b);
/* 0: key may try now; otherwise the whole seconds until it may. */
unsigned int auth_backoff__check(struct auth_backoff *b, const char *key, uint64_t now_ms);
void auth_backoff__fail(struct auth_backoff *b, const char *key, uint64_t now_ms);
void auth_backoff__success(struct auth_backoff *b, const char *key);

#endif /* ISOPROF_SERVE_AUTH_BACKOFF_H */
