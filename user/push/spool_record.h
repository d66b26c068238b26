/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * spool_record: one profile window as the pusher keeps it until the store
 * has taken it, in a spool file or in memory: a small versioned header of
 * metadata, then the body.  Pure: no I/O.
 *
 * Version 1, integers little-endian:
 *
 *   magic "isoprof\x01" (8) | version u32 = 1 | header_len u32
 *   header: from_ns u64 | until_ns u64 | sample_rate_hz u32 | nlabels u32 |
 *           service, profile_type, then nlabels times name and value,
 *           each a string: len u16 | len bytes | a NUL (not counted)
 *   body_len u64 | body | crc32 (zlib's) u32 of every byte before it
 *
 * A record is valid only when all of it checks: the magic, a known
 * version, lengths that add up to the record's size exactly, the
 * checksum, strings without a NUL inside and within SPOOL_STR_MAX,
 * nlabels <= PUSH_MAX_LABELS, a service, from <= until, a body.  A file
 * cut short by a crash or changed on disk fails; nothing half-read is
 * ever sent.
 */
#ifndef ISOPROF_PUSH_SPOOL_RECORD_H
#define ISOPROF_PUSH_SPOOL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "user/push/push.h"

#define SPOOL_RECORD_VERSION 1
#define SPOOL_STR_MAX 4096
/* Everything but the strings and the body. */
#define SPOOL_RECORD_FIXED (8 + 4 + 4 + 8 + 8 + 4 + 4 + 8 + 4)

/*
 * w encoded into a malloc()ed *out.  0, -EINVAL (no service, a string
 * over SPOOL_STR_MAX or a NULL one, nlabels > PUSH_MAX_LABELS, from after
 * until, no body), -ENOMEM.  NULL profile_type is stored as "".
 */
int spool_record__encode(const struct push_window *w, uint8_t **out, size_t *len);

/*
 * The window in data[0..len): *w's strings and body point into data,
 * which must stay alive (each string is NUL-terminated there).  0, or
 * -EBADMSG with *why (static text) saying what is wrong.
 */
int spool_record__decode(const uint8_t *data, size_t len, struct push_window *w,
			 const char **why);

#endif /* ISOPROF_PUSH_SPOOL_RECORD_H */
