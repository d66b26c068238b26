// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/websocket and user/sha1: FIPS 180-4 SHA-1 vectors,
 * RFC 4648 base64, RFC 6455's accept-key example, the handshake checker,
 * the frame reader's framing and every rule it enforces, and the transport's
 * loopback-only and timeout behaviour.  The live exchange with node is in
 * test_inspector.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/sha1.h"
#include "user/v8/websocket.h"

static void sha1_hex(const void *data, size_t len, char hex[41])
{
	uint8_t d[SHA1_DIGEST_LEN];
	int i;

	sha1__digest(data, len, d);
	for (i = 0; i < SHA1_DIGEST_LEN; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
}

static void test_sha1_fips(void **state)
{
	/* FIPS 180-4 examples (NIST "SHA1.pdf", "SHA_All.pdf"). */
	static const struct {
		const char *msg;
		const char *hex;
	} v[] = {
		{ "", "da39a3ee5e6b4b0d3255bfef95601890afd80709" },
		{ "abc", "a9993e364706816aba3e25717850c26c9cd0d89d" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "84983e441c3bd26ebaae4aa1f95129e5e54670f1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
		  "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "a49b2446a02c645bf419f995b67091253a04a259" },
	};
	char hex[41];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		sha1_hex(v[i].msg, strlen(v[i].msg), hex);
		assert_string_equal(hex, v[i].hex);
	}
}

static void test_sha1_million_a_streamed(void **state)
{
	struct sha1_ctx ctx;
	uint8_t d[SHA1_DIGEST_LEN];
	char chunk[1024], hex[41];
	size_t done = 0;
	int i;

	(void)state;
	/* Odd chunk sizes cross block boundaries at every offset. */
	memset(chunk, 'a', sizeof(chunk));
	sha1__init(&ctx);
	for (i = 1; done < 1000000; i = i % 997 + 7) {
		size_t n = (size_t)i;

		if (n > 1000000 - done)
			n = 1000000 - done;
		sha1__update(&ctx, chunk, n);
		done += n;
	}
	sha1__final(&ctx, d);
	for (i = 0; i < SHA1_DIGEST_LEN; i++)
		sprintf(hex + 2 * i, "%02x", d[i]);
	assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
}

static void test_base64(void **state)
{
	/* RFC 4648 section 10 */
	static const char *const in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const out[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
					   "Zm9vYmFy" };
	char buf[16];
	size_t i;

	(void)state;
	for (i = 0; i < 7; i++) {
		assert_int_equal(ws__base64(in[i], strlen(in[i]), buf, sizeof(buf)),
				 (int)strlen(out[i]));
		assert_string_equal(buf, out[i]);
	}
	assert_int_equal(ws__base64("foobar", 6, buf, 8), -ENOSPC);
	assert_int_equal(ws__base64("foobar", 6, buf, 9), 8);
}

static void test_accept_key(void **state)
{
	char accept[WS_ACCEPT_LEN];

	(void)state;
	/* RFC 6455 section 1.3 (the example's key and its accept value) */
	ws__accept_key("dGhlIHNhbXBsZSBub25jZQ==", accept);
	assert_string_equal(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

/* ---- handshake response ---- */

static const char rfc_key[] = "dGhlIHNhbXBsZSBub25jZQ==";
#define ACCEPT_LINE "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"

static int check(const char *resp, size_t *hl, char *err)
{
	return ws__check_response(resp, strlen(resp), rfc_key, hl, err, 200);
}

static void test_handshake_ok(void **state)
{
	static const char resp[] = "HTTP/1.1 101 Switching Protocols\r\n"
				   "upgrade:   WebSocket \r\n"
				   "Connection: keep-alive, Upgrade\r\n"
				   "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
				   "\r\n"
				   "\x81\x02hi";
	char err[200];
	size_t hl = 0, i;

	(void)state;
	assert_int_equal(check(resp, &hl, err), 0);
	assert_int_equal(hl, strlen(resp) - 4);
	/* Every proper prefix of the header is incomplete, not wrong. */
	for (i = 0; i < hl; i++)
		assert_int_equal(ws__check_response(resp, i, rfc_key, &hl, err, sizeof(err)),
				 -EAGAIN);
}

static void test_handshake_rejects(void **state)
{
	static const struct {
		const char *resp;
		int rc;
		const char *msg;
	} v[] = {
		{ "HTTP/1.1 404 Unknown worker session\r\n\r\n", -ENOENT, "404" },
		{ "HTTP/1.1 400 Bad Request\r\n\r\n", -EPROTO, "HTTP 400" },
		{ "SSH-2.0-OpenSSH\r\n\r\n", -EPROTO, "status line" },
		{ "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
		  ACCEPT_LINE "\r\n", -EPROTO, "Upgrade" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", -EPROTO,
		  "Connection" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "Connection: Upgrade\r\n\r\n", -EPROTO, "no Sec-WebSocket-Accept" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "Connection: Upgrade\r\n"
		  "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n",
		  -EPROTO, "expected" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
		  "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", -EPROTO,
		  "did not offer" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
		  "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
		  ACCEPT_LINE "\r\n", -EPROTO, "several" },
		{ "HTTP/1.1 101 Switching Protocols\r\nUpgrade websocket\r\n\r\n", -EPROTO,
		  "malformed header" },
	};
	char err[200];
	size_t hl, i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		err[0] = '\0';
		assert_int_equal(check(v[i].resp, &hl, err), v[i].rc);
		if (!strstr(err, v[i].msg))
			fail_msg("case %zu: \"%s\" lacks \"%s\"", i, err, v[i].msg);
	}
}

static void test_handshake_too_big(void **state)
{
	char *big = malloc(WS_MAX_HEADER + 100), err[200];
	size_t hl;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', WS_MAX_HEADER + 100);
	memcpy(big, "HTTP/1.1 101 OK\r\n", 17);
	assert_int_equal(ws__check_response(big, WS_MAX_HEADER - 1, rfc_key, &hl, err,
					    sizeof(err)), -EAGAIN);
	assert_int_equal(ws__check_response(big, WS_MAX_HEADER + 100, rfc_key, &hl, err,
					    sizeof(err)), -EMSGSIZE);
	/* A header end past the limit does not count. */
	memcpy(big + WS_MAX_HEADER + 10, "\r\n\r\n", 4);
	assert_int_equal(ws__check_response(big, WS_MAX_HEADER + 100, rfc_key, &hl, err,
					    sizeof(err)), -EMSGSIZE);
	free(big);
}

/* ---- frame reader ---- */

/* An unmasked server frame; lenbytes 0 picks the shortest length encoding. */
static size_t frame(uint8_t *out, int fin, int op, const void *payload, size_t len, int lenbytes)
{
	size_t h = 2;
	int i;

	out[0] = (uint8_t)((fin ? 0x80 : 0) | op);
	if (!lenbytes)
		lenbytes = len < 126 ? 1 : len < 65536 ? 2 : 8;
	if (lenbytes == 1) {
		out[1] = (uint8_t)len;
	} else if (lenbytes == 2) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		h = 4;
	} else {
		out[1] = 127;
		for (i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
		h = 10;
	}
	if (len)
		memcpy(out + h, payload, len);
	return h + len;
}

struct got {
	int op;
	const uint8_t *p;
	size_t len;
};

static int next(struct ws_reader *r, struct got *g, char *err)
{
	return ws_reader__next(r, &g->op, &g->p, &g->len, err, 200);
}

static void test_reader_single_frame_bytewise(void **state)
{
	struct ws_reader *r = ws_reader__new(1024);
	uint8_t buf[64];
	struct got g;
	char err[200];
	size_t n, i;

	(void)state;
	assert_non_null(r);
	n = frame(buf, 1, WS_OP_TEXT, "hello", 5, 0);
	for (i = 0; i < n; i++) {
		assert_int_equal(next(r, &g, err), 0);
		assert_int_equal(ws_reader__feed(r, buf + i, 1), 0);
	}
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_TEXT);
	assert_int_equal(g.len, 5);
	assert_memory_equal(g.p, "hello", 5);
	assert_int_equal(next(r, &g, err), 0);
	ws_reader__free(r);
}

static void test_reader_lengths(void **state)
{
	static const size_t sizes[] = { 0, 125, 126, 300, 65535, 65536, 70000 };
	struct ws_reader *r = ws_reader__new(WS_MAX_MESSAGE);
	uint8_t *payload = malloc(70000), *buf = malloc(70016);
	struct got g;
	char err[200];
	size_t i, j, n, cut;

	(void)state;
	assert_non_null(r);
	assert_non_null(payload);
	assert_non_null(buf);
	for (i = 0; i < 70000; i++)
		payload[i] = (uint8_t)(i * 7);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* Shortest encoding, then 64-bit even when not needed. */
		for (j = 0; j < 2; j++) {
			n = frame(buf, 1, WS_OP_BINARY, payload, sizes[i], j ? 8 : 0);
			assert_int_equal(n, sizes[i] + (j ? 10 : sizes[i] < 126 ? 2 :
							 sizes[i] < 65536 ? 4 : 10));
			/* Two feeds, split inside the header. */
			cut = n > 3 ? 3 : 1;
			assert_int_equal(ws_reader__feed(r, buf, cut), 0);
			assert_int_equal(next(r, &g, err), 0);
			assert_int_equal(ws_reader__feed(r, buf + cut, n - cut), 0);
			assert_int_equal(next(r, &g, err), 1);
			assert_int_equal(g.op, WS_OP_BINARY);
			assert_int_equal(g.len, sizes[i]);
			assert_memory_equal(g.p, payload, sizes[i]);
		}
	}
	free(payload);
	free(buf);
	ws_reader__free(r);
}

static void test_reader_fragmented_with_control(void **state)
{
	struct ws_reader *r = ws_reader__new(1024);
	uint8_t buf[256];
	struct got g;
	char err[200];
	size_t n = 0;

	(void)state;
	assert_non_null(r);
	n += frame(buf + n, 0, WS_OP_TEXT, "Hel", 3, 0);
	n += frame(buf + n, 1, WS_OP_PING, "p1", 2, 0);
	n += frame(buf + n, 0, WS_OP_CONT, "lo ", 3, 2);
	n += frame(buf + n, 1, WS_OP_PONG, "", 0, 0);
	n += frame(buf + n, 1, WS_OP_CONT, "world", 5, 8);
	n += frame(buf + n, 1, WS_OP_TEXT, "next", 4, 0);
	/* Fragmented message of empty fragments. */
	n += frame(buf + n, 0, WS_OP_TEXT, "", 0, 0);
	n += frame(buf + n, 1, WS_OP_CONT, "", 0, 0);
	assert_int_equal(ws_reader__feed(r, buf, n), 0);

	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_PING);
	assert_int_equal(g.len, 2);
	assert_memory_equal(g.p, "p1", 2);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_PONG);
	assert_int_equal(g.len, 0);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_TEXT);
	assert_int_equal(g.len, 11);
	assert_memory_equal(g.p, "Hello world", 11);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_TEXT);
	assert_int_equal(g.len, 4);
	assert_memory_equal(g.p, "next", 4);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_TEXT);
	assert_int_equal(g.len, 0);
	assert_int_equal(next(r, &g, err), 0);
	ws_reader__free(r);
}

static void test_reader_close_frame(void **state)
{
	struct ws_reader *r = ws_reader__new(1024);
	uint8_t buf[64];
	struct got g;
	char err[200];
	size_t n;

	(void)state;
	n = frame(buf, 1, WS_OP_CLOSE, "\x03\xe8" "bye", 5, 0);
	assert_int_equal(ws_reader__feed(r, buf, n), 0);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.op, WS_OP_CLOSE);
	assert_int_equal(g.len, 5);
	assert_memory_equal(g.p, "\x03\xe8" "bye", 5);
	ws_reader__free(r);
}

/* Feed raw bytes to a fresh reader: the error and its message. */
static void expect_reject(const uint8_t *bytes, size_t len, size_t max, int rc, const char *msg)
{
	struct ws_reader *r = ws_reader__new(max);
	struct got g;
	char err[200] = "";
	int got;

	assert_non_null(r);
	assert_int_equal(ws_reader__feed(r, bytes, len), 0);
	do {
		got = next(r, &g, err);
	} while (got == 1);
	if (got != rc || !strstr(err, msg))
		fail_msg("want %d \"%s\", got %d \"%s\"", rc, msg, got, err);
	/* Sticky: feeding and reading again report the same error. */
	assert_int_equal(ws_reader__feed(r, "\x81\x00", 2), rc);
	assert_int_equal(next(r, &g, err), rc);
	ws_reader__free(r);
}

static void test_reader_rejects(void **state)
{
	uint8_t buf[512], big[130];
	size_t n;

	(void)state;
	memset(big, 'x', sizeof(big));
	expect_reject((const uint8_t *)"\xc1\x00", 2, 1024, -EPROTO, "reserved bits");
	expect_reject((const uint8_t *)"\x91\x00", 2, 1024, -EPROTO, "reserved bits");
	expect_reject((const uint8_t *)"\xa1\x00", 2, 1024, -EPROTO, "reserved bits");
	expect_reject((const uint8_t *)"\x83\x00", 2, 1024, -EPROTO, "unknown opcode 0x3");
	expect_reject((const uint8_t *)"\x8b\x00", 2, 1024, -EPROTO, "unknown opcode 0xb");
	expect_reject((const uint8_t *)"\x81\x85\x01\x02\x03\x04hello", 11, 1024, -EPROTO,
		      "masked");
	expect_reject((const uint8_t *)"\x09\x00", 2, 1024, -EPROTO, "fragmented control");
	n = frame(buf, 1, WS_OP_PING, big, 126, 0);
	expect_reject(buf, n, 1024, -EPROTO, "control frame of 126 bytes");
	expect_reject((const uint8_t *)"\x88\x01\x03", 3, 1024, -EPROTO, "1-byte");
	expect_reject((const uint8_t *)"\x80\x01x", 3, 1024, -EPROTO, "continuation frame without");
	expect_reject((const uint8_t *)"\x01\x01x\x81\x01y", 6, 1024, -EPROTO,
		      "new data frame inside");
	expect_reject((const uint8_t *)"\x01\x01x\x02\x01y", 6, 1024, -EPROTO,
		      "new data frame inside");
	expect_reject((const uint8_t *)"\x81\x7f\x80\x00\x00\x00\x00\x00\x00\x01", 10, 1024,
		      -EPROTO, "top bit");
	/* The cap holds from the header alone, before the payload arrives. */
	expect_reject((const uint8_t *)"\x81\x7e\x00\x65", 4, 100, -EMSGSIZE, "over 100 bytes");
	expect_reject((const uint8_t *)"\x81\x7f\x00\x00\x00\x01\x00\x00\x00\x00", 10,
		      WS_MAX_MESSAGE, -EMSGSIZE, "message over");
	/* ... and across fragments. */
	n = frame(buf, 0, WS_OP_TEXT, big, 60, 0);
	n += frame(buf + n, 0, WS_OP_CONT, big, 40, 0);
	n += frame(buf + n, 1, WS_OP_CONT, big, 1, 0);
	expect_reject(buf, n, 100, -EMSGSIZE, "over 100 bytes");
}

static void test_reader_exact_cap(void **state)
{
	struct ws_reader *r = ws_reader__new(100);
	uint8_t buf[256], x[100];
	struct got g;
	char err[200];
	size_t n;

	(void)state;
	memset(x, 'x', sizeof(x));
	n = frame(buf, 0, WS_OP_TEXT, x, 60, 0);
	n += frame(buf + n, 1, WS_OP_CONT, x, 40, 0);
	assert_int_equal(ws_reader__feed(r, buf, n), 0);
	assert_int_equal(next(r, &g, err), 1);
	assert_int_equal(g.len, 100);
	ws_reader__free(r);
}

/* ---- transport ---- */

static void test_loopback_only(void **state)
{
	static const char *const ok[] = { "127.0.0.1", "127.255.0.9", "::1", "localhost",
					  "LOCALHOST" };
	static const char *const bad[] = { "10.0.0.1", "0.0.0.0", "128.0.0.1", "::", "::2",
					   "::ffff:127.0.0.1", "example.com", "127.1", "",
					   "localhost.", "127.0.0.1 " };
	struct ws_conn *c = (struct ws_conn *)&c;
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		assert_true(ws__is_loopback(ok[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_false(ws__is_loopback(bad[i]));
		assert_int_equal(ws__connect(bad[i], 9229, -1, "/", 100, &c, err, sizeof(err)),
				 -EPERM);
		assert_null(c);
		assert_non_null(strstr(err, "not a loopback address"));
	}
}

/* A loopback TCP listener on a kernel-chosen port. */
static int listener(uint16_t *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	*port = ntohs(sa.sin_port);
	return fd;
}

static void test_connect_refused_and_timeout(void **state)
{
	struct ws_conn *c;
	char err[200];
	uint16_t port;
	int fd, rc;

	(void)state;
	/* Nothing listens on a port just released. */
	fd = listener(&port);
	close(fd);
	rc = ws__connect("127.0.0.1", port, -1, "/x", 1000, &c, err, sizeof(err));
	assert_int_equal(rc, -ECONNREFUSED);
	assert_null(c);

	/* A listener that never answers the handshake: the deadline holds. */
	fd = listener(&port);
	rc = ws__connect("localhost", port, -1, "/x", 200, &c, err, sizeof(err));
	assert_int_equal(rc, -ETIMEDOUT);
	assert_non_null(strstr(err, "handshake"));
	close(fd);

	/* A path that can't go in a request line. */
	assert_int_equal(ws__connect("127.0.0.1", port, -1, "/a b", 100, &c, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(ws__connect("127.0.0.1", port, -1, "x", 100, &c, err, sizeof(err)),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sha1_fips),
		cmocka_unit_test(test_sha1_million_a_streamed),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_accept_key),
		cmocka_unit_test(test_handshake_ok),
		cmocka_unit_test(test_handshake_rejects),
		cmocka_unit_test(test_handshake_too_big),
		cmocka_unit_test(test_reader_single_frame_bytewise),
		cmocka_unit_test(test_reader_lengths),
		cmocka_unit_test(test_reader_fragmented_with_control),
		cmocka_unit_test(test_reader_close_frame),
		cmocka_unit_test(test_reader_rejects),
		cmocka_unit_test(test_reader_exact_cap),
		cmocka_unit_test(test_loopback_only),
		cmocka_unit_test(test_connect_refused_and_timeout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
