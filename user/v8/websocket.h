/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * websocket: a small, synchronous RFC 6455 client for talking to a V8
 * inspector (node, workerd) on this host.  One connection, one caller, no
 * event loop, no TLS, no extensions, no subprotocols; text messages are what
 * it is for.  docs/design/inspector-client.md says why it is not libwebsockets.
 *
 * Loopback only: ws__connect() and ws__tcp_connect() accept a numeric
 * address in 127.0.0.0/8, "::1", or "localhost" (taken as 127.0.0.1, never
 * resolved); anything else fails with -EPERM ("not a loopback address")
 * before a socket exists.
 *
 * Three layers, each usable alone:
 *   - the frame reader (struct ws_reader): a pure state machine over bytes
 *     the caller feeds it, which is what the fuzzer drives;
 *   - the handshake checker ws__check_response(), also pure;
 *   - the connection (struct ws_conn): TCP connect with a timeout, the
 *     opening handshake, masked text frames out, pings answered, close
 *     answered.
 *
 * Timeouts are in milliseconds and bound the whole call: negative waits
 * forever, 0 does not wait at all.  The deadline is strict: once it has
 * passed no call waits or reads from the socket again, however busy the
 * peer is (bytes already read are still handed out).  Besides time, one
 * message is capped at WS_MAX_MESSAGE bytes and the bytes one
 * ws__recv_text() reads at WS_MAX_CALL_BYTES.
 *
 * Errors: functions return 0 (or a count) or a negative errno, and fill
 * err[errlen] with one line of context when err is not NULL.  Nothing prints.
 *   -EPERM        the host is not a loopback address
 *   -ETIMEDOUT    the deadline passed
 *   -ECONNREFUSED nothing listens there
 *   -ECONNRESET   the peer closed (close frame, EOF or reset); err names the
 *                 close code and reason when there was a close frame
 *   -ENOENT       the handshake got 404 (workerd: unknown worker session)
 *   -EPROTO       the peer broke RFC 6455 (err says which rule)
 *   -EMSGSIZE     a message over the reader's cap (WS_MAX_MESSAGE)
 *   -ENOMEM       allocation failed
 *
 * UTF-8: text payloads are passed through without validating them as UTF-8
 * (RFC 6455 section 8.1 asks a client to fail the connection instead).  V8's
 * inspector only sends valid UTF-8, and the JSON parser that reads them
 * rejects what it cannot read, so checking twice buys nothing.
 */
#ifndef ISOPROF_V8_WEBSOCKET_H
#define ISOPROF_V8_WEBSOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A 50 s CPU profile from a busy isolate is a few MB of JSON. */
#define WS_MAX_MESSAGE (64u << 20)
/*
 * Most bytes one ws__recv_text() reads from the socket: its message plus
 * what a peer may send around it (pings, binary messages, which are
 * skipped).  V8 sends neither, so this only stops a peer that never
 * finishes a text message.
 */
#define WS_MAX_CALL_BYTES (2u * WS_MAX_MESSAGE)
/* Largest opening-handshake response header accepted. */
#define WS_MAX_HEADER (16u << 10)

enum ws_opcode {
	WS_OP_CONT = 0x0,
	WS_OP_TEXT = 0x1,
	WS_OP_BINARY = 0x2,
	WS_OP_CLOSE = 0x8,
	WS_OP_PING = 0x9,
	WS_OP_PONG = 0xa,
};

/* Close status codes used here (RFC 6455 section 7.4.1). */
#define WS_CLOSE_NORMAL 1000
#define WS_CLOSE_PROTOCOL 1002
#define WS_CLOSE_TOO_BIG 1009

/* ---- pieces, exposed for tests and the fuzzer ---- */

/*
 * Base64 (RFC 4648, with padding) of in[len] into out[outlen], NUL-
 * terminated.  Returns the length written, or -ENOSPC when outlen is below
 * 4 * ceil(len / 3) + 1.
 */
int ws__base64(const void *in, size_t len, char *out, size_t outlen);

/* Sec-WebSocket-Accept for a key: base64(SHA-1(key + RFC 6455's GUID)). */
#define WS_ACCEPT_LEN 29	/* 28 characters and the NUL */
void ws__accept_key(const char *key, char accept[WS_ACCEPT_LEN]);

/*
 * Check the server's answer to the opening handshake: buf[len] is what has
 * arrived so far.  Returns
 *   0        a complete, valid 101 response; *header_len is its length with
 *            the blank line, and bytes after it are the first frames;
 *   -EAGAIN  no complete header yet (keep reading);
 *   -EMSGSIZE no header end within WS_MAX_HEADER bytes;
 *   -ENOENT  status 404;
 *   -EPROTO  any other status, or a missing or wrong Upgrade, Connection or
 *            Sec-WebSocket-Accept, or an extension or subprotocol we did
 *            not ask for.
 */
int ws__check_response(const char *buf, size_t len, const char *key, size_t *header_len,
		       char *err, size_t errlen);

/* ---- frame reader ---- */

/*
 * Reassembles the server's frames into messages.  It enforces, failing with
 * -EPROTO: no reserved bits (no extension was negotiated), known opcodes
 * only, server frames unmasked, control frames unfragmented and at most 125
 * bytes, a close payload of 0 or >= 2 bytes, no continuation without a
 * start, no new data frame inside a fragmented message, and 64-bit lengths
 * with the top bit clear.  A message (all fragments) larger than the cap
 * fails with -EMSGSIZE, checked from frame headers before the payload is
 * buffered.  Errors are sticky: every later call returns the same one.
 */
struct ws_reader;

/* A reader whose messages may be up to max_message bytes; NULL + errno. */
struct ws_reader *ws_reader__new(size_t max_message);
void ws_reader__free(struct ws_reader *r);

/*
 * Append len bytes from the server.  The reader buffers at most one frame
 * plus what was fed since the last drain; a caller should drain with
 * ws_reader__next() between feeds.  -ENOMEM, -EMSGSIZE (more than
 * max_message + 64 KiB undrained), or the sticky error.
 */
int ws_reader__feed(struct ws_reader *r, const void *data, size_t len);

/*
 * The next complete message or control frame: returns 1 and sets *opcode
 * (WS_OP_TEXT or WS_OP_BINARY for a whole message, else WS_OP_CLOSE, _PING,
 * _PONG) and payload[len].  The payload belongs to the reader and stays
 * valid until the next call on it.  Control frames come out as soon as they
 * arrive, also between the fragments of a message.  Returns 0 when more
 * bytes are needed, or a negative error (err says which rule broke).
 */
int ws_reader__next(struct ws_reader *r, int *opcode, const uint8_t **payload, size_t *len,
		    char *err, size_t errlen);

/* ---- transport, shared with the inspector's HTTP client ---- */

/* True for 127.0.0.0/8, ::1 and "localhost"; no name is ever resolved. */
bool ws__is_loopback(const char *host);

/*
 * A connected, non-blocking, close-on-exec TCP socket to host:port, within
 * timeout_ms, made in the network namespace netns_fd (lib/netns.h; -1:
 * isoprof's own), so loopback is that namespace's.  Returns the fd, or
 * -EPERM, -ECONNREFUSED, -ETIMEDOUT, ...
 */
int ws__tcp_connect(const char *host, uint16_t port, int netns_fd, int timeout_ms, char *err,
		    size_t errlen);

/*
 * Write all of buf[len] to a non-blocking socket before the CLOCK_MONOTONIC
 * deadline (ms; negative: none).  -ETIMEDOUT, -ECONNRESET (peer gone), or
 * another negative errno.
 */
int ws__write_all(int fd, const void *buf, size_t len, int64_t deadline_ms);

/* The CLOCK_MONOTONIC deadline, in ms, for a timeout (negative: none). */
int64_t ws__deadline(int timeout_ms);

/*
 * Wait until fd is readable or the deadline passes: 0 readable, -ETIMEDOUT
 * (also when the deadline has passed and fd is readable), or another
 * negative errno.
 */
int ws__wait_readable(int fd, int64_t deadline_ms);

/* ---- connection ---- */

struct ws_conn;

/*
 * Connect to ws://host:port/path (in network namespace netns_fd, as
 * ws__tcp_connect()) and complete the opening handshake, all within
 * timeout_ms.  host is as ws__is_loopback() takes it; path starts
 * with '/' and holds only printable ASCII without spaces (-EINVAL else).
 * On success *conn is the caller's until ws__close().
 */
int ws__connect(const char *host, uint16_t port, int netns_fd, const char *path, int timeout_ms,
		struct ws_conn **conn, char *err, size_t errlen);

/* Send msg[len] as one masked text frame. */
int ws__send_text(struct ws_conn *conn, const char *msg, size_t len, int timeout_ms,
		  char *err, size_t errlen);

/*
 * The next text message: 0 and *msg (malloc'd, NUL-terminated, the
 * caller's to free) of *len bytes.  Pings are answered with pongs and pongs
 * and binary messages skipped on the way.  A close frame is answered with a
 * close and gives -ECONNRESET; so do EOF and a reset.  After any error but
 * -ETIMEDOUT the connection is dead and every call fails.  -EMSGSIZE when
 * over WS_MAX_CALL_BYTES arrive without completing a text message.
 */
int ws__recv_text(struct ws_conn *conn, int timeout_ms, char **msg, size_t *len,
		  char *err, size_t errlen);

/* Bytes read from the socket so far (frames after the handshake), for per-call budgets. */
uint64_t ws__received(const struct ws_conn *conn);

/* Send a close frame (best effort, without waiting), close and free. */
void ws__close(struct ws_conn *conn);

#endif /* ISOPROF_V8_WEBSOCKET_H */
