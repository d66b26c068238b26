// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target for user/websocket's pure parts.  The first byte picks:
 *   bit 0 set: the opening-handshake checker on the rest (RFC 6455's
 *              example key), which must agree with itself on the header it
 *              accepted;
 *   else:      the frame reader, fed the rest (from byte 2) once whole and
 *              once in chunks whose sizes byte 1 seeds; both runs must give
 *              the same messages and end the same way.  Bit 1 uses a 4 KiB
 *              message cap, bit 2 chunks of 1..7 bytes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/v8/websocket.h"

static const char key[] = "dGhlIHNhbXBsZSBub25jZQ==";

struct outcome {
	uint64_t hash;		/* FNV-1a over every message's opcode, length, payload */
	size_t messages;
	int end;		/* 0 or the error that stopped the reader */
};

static void mix(uint64_t *h, const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

/* Drain r; false once it has failed. */
static bool drain(struct ws_reader *r, size_t max, struct outcome *o)
{
	const uint8_t *p;
	char err[128];
	size_t len;
	int op, rc;

	while ((rc = ws_reader__next(r, &op, &p, &len, err, sizeof(err))) == 1) {
		bool control = op == WS_OP_CLOSE || op == WS_OP_PING || op == WS_OP_PONG;

		if (op != WS_OP_TEXT && op != WS_OP_BINARY && !control)
			__builtin_trap();
		if (len > max || (control && len > 125) || (op == WS_OP_CLOSE && len == 1))
			__builtin_trap();
		mix(&o->hash, &op, sizeof(op));
		mix(&o->hash, &len, sizeof(len));
		mix(&o->hash, p, len);
		o->messages++;
	}
	if (rc < 0) {
		if (rc != -EPROTO && rc != -EMSGSIZE && rc != -ENOMEM)
			__builtin_trap();
		if (!err[0] || strlen(err) >= sizeof(err))
			__builtin_trap();
		/* Sticky. */
		if (ws_reader__next(r, &op, &p, &len, NULL, 0) != rc ||
		    ws_reader__feed(r, "\x81\x00", 2) != rc)
			__builtin_trap();
		o->end = rc;
		return false;
	}
	return true;
}

static void run(const uint8_t *data, size_t size, size_t max, size_t max_chunk, uint8_t seed,
		struct outcome *o)
{
	struct ws_reader *r = ws_reader__new(max);
	uint32_t lcg = seed;
	size_t off = 0;

	memset(o, 0, sizeof(*o));
	o->hash = 0xcbf29ce484222325ull;
	if (!r)
		return;
	while (off < size) {
		size_t n = size - off;

		if (max_chunk) {
			lcg = lcg * 1103515245u + 12345u;
			if (n > 1 + (lcg >> 8) % max_chunk)
				n = 1 + (lcg >> 8) % max_chunk;
		}
		if (ws_reader__feed(r, data + off, n) < 0)
			break;
		off += n;
		if (!drain(r, max, o))
			break;
	}
	if (!o->end)
		drain(r, max, o);
	ws_reader__free(r);
}

static void handshake(const uint8_t *data, size_t size)
{
	char err[160];
	size_t hl = 0, hl2 = 0;
	int rc;

	rc = ws__check_response((const char *)data, size, key, &hl, err, sizeof(err));
	if (rc == -EAGAIN || rc == -EMSGSIZE || rc == -ENOENT || rc == -EPROTO) {
		if (rc != -EAGAIN && strlen(err) >= sizeof(err))
			__builtin_trap();
		return;
	}
	if (rc != 0 || hl < 4 || hl > size || hl > WS_MAX_HEADER ||
	    memcmp(data + hl - 4, "\r\n\r\n", 4) != 0)
		__builtin_trap();
	/* The accepted header alone is the same verdict. */
	if (ws__check_response((const char *)data, hl, key, &hl2, err, sizeof(err)) != 0 ||
	    hl2 != hl)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome whole, chunked;
	size_t max;
	uint8_t mode;

	if (size < 2)
		return 0;
	mode = data[0];
	if (mode & 1) {
		handshake(data + 1, size - 1);
		return 0;
	}
	max = mode & 2 ? 4096 : WS_MAX_MESSAGE;
	run(data + 2, size - 2, max, 0, 0, &whole);
	run(data + 2, size - 2, max, mode & 4 ? 7 : 4096, data[1], &chunked);
	if (whole.hash != chunked.hash || whole.messages != chunked.messages ||
	    whole.end != chunked.end)
		__builtin_trap();
	return 0;
}
