// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* websocket: a synchronous, loopback-only RFC 6455 client; see websocket.h. */
#include "lib/errmsg.h"
#include "user/v8/websocket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/http.h"
#include "lib/monotime.h"
#include "lib/netns.h"
#include "lib/sha1.h"

/* RFC 6455 section 1.3 */
static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/* Bytes per read(): a CPU profile arrives in a few dozen of these. */
#define WS_READ_CHUNK (64u << 10)
/* Longest request path we put in a request line. */
#define WS_MAX_PATH 2048

int ws__base64(const void *in, size_t len, char *out, size_t outlen)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t *p = in;
	size_t need, i, n = 0;

	if (len > (SIZE_MAX / 4 - 1) * 3 - 3)
		return -ENOSPC;
	need = (len + 2) / 3 * 4 + 1;
	if (outlen < need || need > INT_MAX)
		return -ENOSPC;
	for (i = 0; i + 3 <= len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];

		out[n++] = tab[v >> 18];
		out[n++] = tab[(v >> 12) & 63];
		out[n++] = tab[(v >> 6) & 63];
		out[n++] = tab[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)p[i] << 16;

		out[n++] = tab[v >> 18];
		out[n++] = tab[(v >> 12) & 63];
		out[n++] = '=';
		out[n++] = '=';
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;

		out[n++] = tab[v >> 18];
		out[n++] = tab[(v >> 12) & 63];
		out[n++] = tab[(v >> 6) & 63];
		out[n++] = '=';
	}
	out[n] = '\0';
	return (int)n;
}

void ws__accept_key(const char *key, char accept[WS_ACCEPT_LEN])
{
	uint8_t d[SHA1_DIGEST_LEN];
	struct sha1_ctx ctx;

	sha1__init(&ctx);
	sha1__update(&ctx, key, strlen(key));
	sha1__update(&ctx, ws_guid, sizeof(ws_guid) - 1);
	sha1__final(&ctx, d);
	ws__base64(d, sizeof(d), accept, WS_ACCEPT_LEN);
}

/* ---- opening handshake response ---- */

/* The status line: 101, else what the server said instead. */
static int check_status(const struct http_response *h, int parsed, char *err, size_t errlen)
{
	char ex[64];

	if (parsed == -EPROTO) {
		errmsg__excerpt(ex, sizeof(ex), h->status_line, h->status_line_len);
		errmsg__set(err, errlen, "handshake: not an HTTP status line: \"%s\"", ex);
		return -EPROTO;
	}
	if (h->status == 101)
		return 0;
	errmsg__excerpt(ex, sizeof(ex), h->reason, h->reason_len);
	errmsg__set(err, errlen, "handshake: server answered HTTP %d %s, not 101", h->status, ex);
	return h->status == 404 ? -ENOENT : -EPROTO;
}

/* One header field of the answer; *upgrade, *connection, *naccept as seen so far. */
static int check_field(const struct http_field *f, const char *want, bool *upgrade,
		       bool *connection, int *naccept, char *err, size_t errlen)
{
	char ex[64];

	if (http_field__is(f, "Upgrade")) {
		*upgrade = *upgrade || http__has_token(f->value, f->value_len, "websocket");
	} else if (http_field__is(f, "Connection")) {
		*connection = *connection || http__has_token(f->value, f->value_len, "upgrade");
	} else if (http_field__is(f, "Sec-WebSocket-Accept")) {
		if (f->value_len != WS_ACCEPT_LEN - 1 ||
		    memcmp(f->value, want, WS_ACCEPT_LEN - 1) != 0) {
			errmsg__excerpt(ex, sizeof(ex), f->value, f->value_len);
			errmsg__set(err, errlen,
				    "handshake: Sec-WebSocket-Accept \"%s\", expected \"%s\"", ex,
				    want);
			return -EPROTO;
		}
		(*naccept)++;
	} else if (http_field__is(f, "Sec-WebSocket-Extensions") ||
		   http_field__is(f, "Sec-WebSocket-Protocol")) {
		/* RFC 6455 4.1: we asked for none, so any answer fails. */
		errmsg__excerpt(ex, sizeof(ex), f->name, f->name_len);
		errmsg__set(err, errlen, "handshake: server chose %s we did not offer", ex);
		return -EPROTO;
	}
	return 0;
}

int ws__check_response(const char *buf, size_t len, const char *key, size_t *header_len,
		       char *err, size_t errlen)
{
	char want[WS_ACCEPT_LEN], ex[64];
	bool upgrade = false, connection = false;
	struct http_response h;
	struct http_field f;
	int naccept = 0, rc;
	size_t pos = 0;

	rc = http__parse_response(buf, len, WS_MAX_HEADER, &h);
	if (rc == -EAGAIN)
		return rc;
	if (rc == -EMSGSIZE) {
		errmsg__set(err, errlen, "handshake: response header over %u bytes",
			    WS_MAX_HEADER);
		return rc;
	}
	rc = check_status(&h, rc, err, errlen);
	if (rc)
		return rc;
	ws__accept_key(key, want);
	while ((rc = http__next_field(&h, &pos, &f)) > 0) {
		rc = check_field(&f, want, &upgrade, &connection, &naccept, err, errlen);
		if (rc)
			return rc;
	}
	if (rc < 0) {
		if (http__is_ows(f.line[0])) {
			errmsg__set(err, errlen, "handshake: folded header line");
		} else {
			errmsg__excerpt(ex, sizeof(ex), f.line, f.line_len);
			errmsg__set(err, errlen, "handshake: malformed header line \"%s\"", ex);
		}
		return -EPROTO;
	}
	if (!upgrade || !connection || naccept != 1) {
		errmsg__set(err, errlen, "handshake: %s",
			    !upgrade ? "no \"Upgrade: websocket\"" :
			    !connection ? "no \"Connection: Upgrade\"" :
			    naccept ? "several Sec-WebSocket-Accept headers" :
			    "no Sec-WebSocket-Accept");
		return -EPROTO;
	}
	*header_len = h.header_len;
	return 0;
}

/* ---- frame reader ---- */

struct ws_reader {
	uint8_t *buf;		/* fed bytes; buf[pos..len) not yet parsed */
	size_t cap, len, pos;
	uint8_t *msg;		/* fragments of the message being assembled */
	size_t msg_len, msg_cap;
	int msg_op;		/* its opcode, or -1 when none is open */
	bool msg_out;		/* msg was handed out: reset on the next call */
	size_t max_message;
	int error;		/* sticky */
	char errmsg[96];
};

struct ws_reader *ws_reader__new(size_t max_message)
{
	struct ws_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->msg_op = -1;
	/* Keeps max_message + WS_READ_CHUNK + header from overflowing. */
	r->max_message = max_message < SIZE_MAX / 2 ? max_message : SIZE_MAX / 2;
	return r;
}

void ws_reader__free(struct ws_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r->msg);
	free(r);
}

static int reader_fail(struct ws_reader *r, int error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int reader_fail(struct ws_reader *r, int error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->errmsg, sizeof(r->errmsg), fmt, ap);
	va_end(ap);
	r->error = error;
	return error;
}

int ws_reader__feed(struct ws_reader *r, const void *data, size_t len)
{
	size_t unread;

	if (r->error)
		return r->error;
	if (!len)
		return 0;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	unread = r->len;
	if (unread > r->max_message + WS_READ_CHUNK + 14 ||
	    len > r->max_message + WS_READ_CHUNK + 14 - unread)
		return reader_fail(r, -EMSGSIZE, "over %zu bytes fed without draining",
				   r->max_message + WS_READ_CHUNK);
	if (array_grow(&r->buf, &r->cap, unread + len))
		return -ENOMEM;	/* not sticky: nothing was consumed */
	memcpy(r->buf + r->len, data, len);
	r->len += len;
	return 0;
}

static bool is_control(int op)
{
	return op & 0x8;
}

/* A frame's header. */
struct frame {
	bool fin;
	int op;
	size_t hlen;
	uint64_t plen;
};

/* The header at p[avail]: 1 and *fr, 0 when more bytes are needed, or the reader's error. */
static int frame_header(struct ws_reader *r, const uint8_t *p, size_t avail, struct frame *fr)
{
	fr->fin = p[0] & 0x80;
	fr->op = p[0] & 0x0f;
	fr->hlen = 2;
	if (p[0] & 0x70)
		return reader_fail(r, -EPROTO, "frame with reserved bits 0x%x set",
				   (p[0] & 0x70) >> 4);
	if (fr->op != WS_OP_CONT && fr->op != WS_OP_TEXT && fr->op != WS_OP_BINARY &&
	    fr->op != WS_OP_CLOSE && fr->op != WS_OP_PING && fr->op != WS_OP_PONG)
		return reader_fail(r, -EPROTO, "frame with unknown opcode 0x%x", fr->op);
	if (p[1] & 0x80)
		return reader_fail(r, -EPROTO, "masked frame from the server");
	fr->plen = p[1] & 0x7f;
	if (fr->plen == 126)
		fr->hlen = 4;
	else if (fr->plen == 127)
		fr->hlen = 10;
	if (avail < fr->hlen)
		return 0;
	/* Non-minimal length encodings are accepted: harmless, and seen in the wild. */
	if (fr->plen == 126) {
		fr->plen = (uint64_t)p[2] << 8 | p[3];
	} else if (fr->plen == 127) {
		fr->plen = 0;
		for (int i = 2; i < 10; i++)
			fr->plen = fr->plen << 8 | p[i];
		if (fr->plen >> 63)
			return reader_fail(r, -EPROTO, "64-bit frame length with the top bit set");
	}
	return 1;
}

/* RFC 6455's rules for a frame in the reader's state: 0, or the reader's error. */
static int check_frame(struct ws_reader *r, const struct frame *fr)
{
	if (is_control(fr->op)) {
		if (!fr->fin)
			return reader_fail(r, -EPROTO, "fragmented control frame (opcode 0x%x)",
					   fr->op);
		if (fr->plen > 125)
			return reader_fail(r, -EPROTO, "control frame of %llu bytes (at most 125)",
					   (unsigned long long)fr->plen);
		if (fr->op == WS_OP_CLOSE && fr->plen == 1)
			return reader_fail(r, -EPROTO, "close frame with a 1-byte payload");
	} else if (fr->op == WS_OP_CONT && r->msg_op < 0) {
		return reader_fail(r, -EPROTO, "continuation frame without a message to continue");
	} else if (fr->op != WS_OP_CONT && r->msg_op >= 0) {
		return reader_fail(r, -EPROTO, "new data frame inside a fragmented message");
	} else if (fr->plen > r->max_message - (fr->op == WS_OP_CONT ? r->msg_len : 0)) {
		return reader_fail(r, -EMSGSIZE, "message over %zu bytes", r->max_message);
	}
	return 0;
}

/* A fragment of a message: 1 when it completes the message (handed out), else 0 or the error. */
static int add_fragment(struct ws_reader *r, const struct frame *fr, const uint8_t *data,
			int *opcode, const uint8_t **payload, size_t *len)
{
	if (array_grow(&r->msg, &r->msg_cap, r->msg_len + (size_t)fr->plen))
		return reader_fail(r, -ENOMEM, "out of memory for a %zu-byte message",
				   r->msg_len + (size_t)fr->plen);
	if (fr->plen)
		memcpy(r->msg + r->msg_len, data, (size_t)fr->plen);
	r->msg_len += (size_t)fr->plen;
	if (fr->op != WS_OP_CONT)
		r->msg_op = fr->op;
	if (!fr->fin)
		return 0;
	*opcode = r->msg_op;
	*payload = r->msg ? r->msg : (const uint8_t *)"";
	*len = r->msg_len;
	r->msg_op = -1;
	r->msg_out = true;
	return 1;
}

int ws_reader__next(struct ws_reader *r, int *opcode, const uint8_t **payload, size_t *len,
		    char *err, size_t errlen)
{
	int rc;

	if (r->msg_out) {
		r->msg_len = 0;
		r->msg_out = false;
	}
	while (!r->error) {
		const uint8_t *p = r->buf + r->pos;
		size_t avail = r->len - r->pos;
		struct frame fr = { 0 };

		if (avail < 2)
			return 0;
		rc = frame_header(r, p, avail, &fr);
		if (!rc)
			return 0;
		if (rc < 0 || check_frame(r, &fr))
			break;
		if (avail - fr.hlen < fr.plen)
			return 0;
		r->pos += fr.hlen + (size_t)fr.plen;
		if (is_control(fr.op) || (fr.op != WS_OP_CONT && fr.fin)) {
			*opcode = fr.op;
			*payload = p + fr.hlen;
			*len = (size_t)fr.plen;
			return 1;
		}
		rc = add_fragment(r, &fr, p + fr.hlen, opcode, payload, len);
		if (rc > 0)
			return rc;
	}
	errmsg__set(err, errlen, "websocket: %s", r->errmsg);
	return r->error;
}

/* ---- transport ---- */

int64_t ws__deadline(int timeout_ms)
{
	return timeout_ms < 0 ? -1 : (int64_t)monotime_ms() + timeout_ms;
}

/* poll()'s timeout for a deadline: -1 none, else what is left, at least 0. */
static int poll_timeout(int64_t deadline_ms)
{
	int64_t left;

	if (deadline_ms < 0)
		return -1;
	left = deadline_ms - (int64_t)monotime_ms();
	if (left < 0)
		return 0;
	return left > INT_MAX ? INT_MAX : (int)left;
}

/*
 * Strict: once the deadline has passed, nothing waits, not even for bytes
 * already in the socket.  A peer that keeps sending (events, pings, one byte
 * at a time) would otherwise keep every loop that reads "until a message is
 * complete" going past its deadline forever.
 */
static int wait_for(int fd, short events, int64_t deadline_ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };

	for (;;) {
		int t = poll_timeout(deadline_ms);
		int n;

		if (t == 0)
			return -ETIMEDOUT;
		n = poll(&pfd, 1, t);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* POLLHUP/POLLERR count: the read or write that follows reports them. */
		if (n > 0)
			return 0;
	}
}

int ws__wait_readable(int fd, int64_t deadline_ms)
{
	return wait_for(fd, POLLIN, deadline_ms);
}

bool ws__is_loopback(const char *host)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (!host)
		return false;
	if (!strcasecmp(host, "localhost"))
		return true;
	if (inet_pton(AF_INET, host, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, host, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6);
	return false;
}

int ws__tcp_connect(const char *host, uint16_t port, int netns_fd, int timeout_ms, char *err,
		    size_t errlen)
{
	int64_t deadline = ws__deadline(timeout_ms);
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t slen;
	int fd, rc, soerr = 0, one = 1;
	socklen_t olen = sizeof(soerr);

	if (!ws__is_loopback(host)) {
		errmsg__set(err, errlen, "%s: not a loopback address", host ? host : "(null)");
		return -EPERM;
	}
	/* "localhost" is never resolved: /etc/hosts could point it anywhere. */
	if (!strcasecmp(host, "localhost") || inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		if (!strcasecmp(host, "localhost"))
			s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		slen = sizeof(*s4);
	} else {
		inet_pton(AF_INET6, host, &s6->sin6_addr);
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		slen = sizeof(*s6);
	}
	fd = netns__socket(netns_fd, ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		errmsg__set(err, errlen, "socket%s: %s",
			    netns_fd >= 0 ? " in the target's network namespace" : "",
			    strerror(-fd));
		return fd;
	}
	/* Requests are small and each waits for its reply: don't let Nagle hold them. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, slen) < 0) {
		if (errno != EINPROGRESS) {
			rc = -errno;
			goto fail;
		}
		rc = wait_for(fd, POLLOUT, deadline);
		if (rc < 0)
			goto fail;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &olen) < 0) {
			rc = -errno;
			goto fail;
		}
		if (soerr) {
			rc = -soerr;
			goto fail;
		}
	}
	return fd;
fail:
	if (rc == -ETIMEDOUT)
		errmsg__set(err, errlen, "connect %s port %u: no answer within %d ms", host, port,
		       timeout_ms);
	else
		errmsg__set(err, errlen, "connect %s port %u: %s", host, port, strerror(-rc));
	close(fd);
	return rc;
}

int ws__write_all(int fd, const void *buf, size_t len, int64_t deadline_ms)
{
	const uint8_t *p = buf;
	int rc;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			rc = wait_for(fd, POLLOUT, deadline_ms);
			if (rc < 0)
				return rc;
			continue;
		}
		if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
			return -ECONNRESET;
		return n < 0 ? -errno : -EIO;
	}
	return 0;
}

/* ---- connection ---- */

struct ws_conn {
	int fd;
	struct ws_reader *reader;
	uint64_t received;	/* bytes read from the socket since the handshake */
	int dead;		/* 0, or the error every call now returns */
	bool close_sent;
	char dead_msg[160];
	uint8_t rbuf[WS_READ_CHUNK];
};

static int fill_random(void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(struct ws_conn *c, int op, const void *payload, size_t len,
		      int64_t deadline_ms)
{
	const uint8_t *src = payload;
	uint8_t mask[4], *frame;
	size_t hlen = 2, i;
	int rc;

	if (len >= 65536)
		hlen = 10;
	else if (len >= 126)
		hlen = 4;
	if (len > SIZE_MAX - hlen - 4)
		return -EMSGSIZE;
	rc = fill_random(mask, sizeof(mask));
	if (rc < 0)
		return rc;
	frame = malloc(hlen + 4 + len);
	if (!frame)
		return -ENOMEM;
	frame[0] = (uint8_t)(0x80 | op);
	if (hlen == 2) {
		frame[1] = (uint8_t)(0x80 | len);
	} else if (hlen == 4) {
		frame[1] = 0x80 | 126;
		frame[2] = (uint8_t)(len >> 8);
		frame[3] = (uint8_t)len;
	} else {
		frame[1] = 0x80 | 127;
		for (i = 0; i < 8; i++)
			frame[2 + i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
	}
	memcpy(frame + hlen, mask, 4);
	for (i = 0; i < len; i++)
		frame[hlen + 4 + i] = src[i] ^ mask[i & 3];
	rc = ws__write_all(c->fd, frame, hlen + 4 + len, deadline_ms);
	free(frame);
	return rc;
}

static void send_close(struct ws_conn *c, int code)
{
	uint8_t p[2] = { (uint8_t)(code >> 8), (uint8_t)code };

	if (c->close_sent || c->fd < 0)
		return;
	c->close_sent = true;
	/* Best effort and without waiting: a close frame fits any socket buffer. */
	send_frame(c, WS_OP_CLOSE, p, code ? 2 : 0, ws__deadline(0));
}

/* The connection is done: remember why, so every later call says so. */
static int conn_die(struct ws_conn *c, int error, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int conn_die(struct ws_conn *c, int error, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->dead_msg, sizeof(c->dead_msg), fmt, ap);
	va_end(ap);
	c->dead = error;
	errmsg__set(err, errlen, "%s", c->dead_msg);
	return error;
}

static bool path_ok(const char *path)
{
	size_t i, n = strlen(path);

	if (path[0] != '/' || n > WS_MAX_PATH)
		return false;
	for (i = 0; i < n; i++) {
		if (path[i] <= 0x20 || path[i] >= 0x7f)
			return false;
	}
	return true;
}

/* The opening handshake's request, with a fresh key (into key[25]). */
static int send_request(struct ws_conn *c, const char *host, uint16_t port, const char *path,
			char key[25], int64_t deadline, char *err, size_t errlen)
{
	bool v6 = strchr(host, ':') != NULL;
	char req[WS_MAX_PATH + 512];
	uint8_t nonce[16];
	int rc, n;

	rc = fill_random(nonce, sizeof(nonce));
	if (rc < 0) {
		errmsg__set(err, errlen, "getrandom: %s", strerror(-rc));
		return rc;
	}
	ws__base64(nonce, sizeof(nonce), key, 25);
	/* workerd builds webSocketDebuggerUrl from Host; node checks it against DNS rebinding. */
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s%s%s:%u\r\nUpgrade: websocket\r\n"
		     "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
		     "Sec-WebSocket-Version: 13\r\n\r\n",
		     path, v6 ? "[" : "", host, v6 ? "]" : "", port, key);
	if (n < 0 || (size_t)n >= sizeof(req)) {
		errmsg__set(err, errlen, "websocket request too long");
		return -EINVAL;
	}
	rc = ws__write_all(c->fd, req, (size_t)n, deadline);
	if (rc < 0)
		errmsg__set(err, errlen, "handshake: send: %s", strerror(-rc));
	return rc;
}

/* The server's answer, checked; the frames that came with it go to the reader. */
static int read_response(struct ws_conn *c, const char *key, int64_t deadline, char *err,
			 size_t errlen)
{
	char *resp = malloc(WS_MAX_HEADER);
	size_t rlen = 0, hdr = 0;
	ssize_t got;
	int rc;

	if (!resp) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	while ((rc = ws__check_response(resp, rlen, key, &hdr, err, errlen)) == -EAGAIN) {
		rc = ws__wait_readable(c->fd, deadline);
		if (rc < 0) {
			errmsg__set(err, errlen, rc == -ETIMEDOUT ?
				    "handshake: no answer within the timeout" : "handshake: %s",
				    strerror(-rc));
			break;
		}
		got = recv(c->fd, resp + rlen, WS_MAX_HEADER - rlen, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : -ECONNRESET;
			errmsg__set(err, errlen, "handshake: %s", got < 0 ? strerror(errno) :
				    "connection closed before the response");
			if (rc == -EPIPE)
				rc = -ECONNRESET;
			break;
		}
		rlen += (size_t)got;
	}
	if (!rc)
		rc = ws_reader__feed(c->reader, resp + hdr, rlen - hdr);
	free(resp);
	return rc;
}

int ws__connect(const char *host, uint16_t port, int netns_fd, const char *path, int timeout_ms,
		struct ws_conn **conn, char *err, size_t errlen)
{
	int64_t deadline = ws__deadline(timeout_ms);
	struct ws_conn *c;
	char key[25];
	int rc;

	*conn = NULL;
	if (!path || !path_ok(path)) {
		errmsg__set(err, errlen, "websocket path must start with '/' and be printable ASCII");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = -1;
	c->reader = ws_reader__new(WS_MAX_MESSAGE);
	if (!c->reader) {
		rc = -ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		goto fail;
	}
	rc = ws__tcp_connect(host, port, netns_fd, timeout_ms, err, errlen);
	if (rc < 0)
		goto fail;
	c->fd = rc;
	rc = send_request(c, host, port, path, key, deadline, err, errlen);
	if (!rc)
		rc = read_response(c, key, deadline, err, errlen);
	if (rc < 0)
		goto fail;
	*conn = c;
	return 0;
fail:
	c->close_sent = true;
	ws__close(c);
	return rc;
}

int ws__send_text(struct ws_conn *c, const char *msg, size_t len, int timeout_ms,
		  char *err, size_t errlen)
{
	int rc;

	if (c->dead) {
		errmsg__set(err, errlen, "%s", c->dead_msg);
		return c->dead;
	}
	rc = send_frame(c, WS_OP_TEXT, msg, len, ws__deadline(timeout_ms));
	if (rc == -ETIMEDOUT) {
		/* Part of a frame may be on the wire: the stream can't be resumed. */
		return conn_die(c, rc, err, errlen, "websocket: send timed out");
	}
	if (rc == -ECONNRESET)
		return conn_die(c, rc, err, errlen, "websocket: peer closed the connection");
	if (rc < 0)
		return conn_die(c, rc, err, errlen, "websocket: send: %s", strerror(-rc));
	return 0;
}

static int on_close_frame(struct ws_conn *c, const uint8_t *p, size_t len, char *err,
			  size_t errlen)
{
	char reason[100];
	int code;

	if (len < 2) {
		send_close(c, 0);
		return conn_die(c, -ECONNRESET, err, errlen,
				"websocket: peer closed the connection (no status code)");
	}
	code = p[0] << 8 | p[1];
	errmsg__excerpt(reason, sizeof(reason), p + 2, len - 2);
	send_close(c, code);
	return conn_die(c, -ECONNRESET, err, errlen,
			"websocket: peer closed the connection (code %d%s%s)", code,
			reason[0] ? ": " : "", reason);
}

int ws__recv_text(struct ws_conn *c, int timeout_ms, char **msg, size_t *len, char *err,
		  size_t errlen)
{
	int64_t deadline = ws__deadline(timeout_ms);
	uint64_t first = c->received;
	char rerr[128];
	int rc;

	*msg = NULL;
	*len = 0;
	if (c->dead) {
		errmsg__set(err, errlen, "%s", c->dead_msg);
		return c->dead;
	}
	for (;;) {
		const uint8_t *payload;
		size_t plen;
		ssize_t got;
		int op;

		rc = ws_reader__next(c->reader, &op, &payload, &plen, rerr, sizeof(rerr));
		if (rc < 0) {
			send_close(c, rc == -EMSGSIZE ? WS_CLOSE_TOO_BIG : WS_CLOSE_PROTOCOL);
			return conn_die(c, rc, err, errlen, "%s", rerr);
		}
		if (rc > 0) {
			switch (op) {
			case WS_OP_TEXT:
				*msg = malloc(plen + 1);
				if (!*msg) {
					errmsg__set(err, errlen, "out of memory for a %zu-byte message",
					       plen);
					return -ENOMEM;
				}
				memcpy(*msg, payload, plen);
				(*msg)[plen] = '\0';
				*len = plen;
				return 0;
			case WS_OP_PING:
				rc = send_frame(c, WS_OP_PONG, payload, plen, deadline);
				if (rc < 0)
					return conn_die(c, rc == -ETIMEDOUT ? -ETIMEDOUT : rc, err,
							errlen, "websocket: pong: %s",
							strerror(-rc));
				break;
			case WS_OP_CLOSE:
				return on_close_frame(c, payload, plen, err, errlen);
			default:	/* pongs and binary messages: not ours */
				break;
			}
			continue;
		}
		rc = ws__wait_readable(c->fd, deadline);
		if (rc == -ETIMEDOUT) {
			errmsg__set(err, errlen, "websocket: no message within %d ms", timeout_ms);
			return rc;
		}
		if (c->received - first > WS_MAX_CALL_BYTES) {
			send_close(c, WS_CLOSE_TOO_BIG);
			return conn_die(c, -EMSGSIZE, err, errlen,
					"websocket: over %u MiB read without a text message",
					WS_MAX_CALL_BYTES >> 20);
		}
		if (rc < 0)
			return conn_die(c, rc, err, errlen, "websocket: poll: %s", strerror(-rc));
		got = recv(c->fd, c->rbuf, sizeof(c->rbuf), 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (got == 0 || (got < 0 && errno == ECONNRESET)) {
			c->close_sent = true;
			return conn_die(c, -ECONNRESET, err, errlen,
					"websocket: peer closed the connection");
		}
		if (got < 0)
			return conn_die(c, -errno, err, errlen, "websocket: recv: %s",
					strerror(errno));
		c->received += (uint64_t)got;
		rc = ws_reader__feed(c->reader, c->rbuf, (size_t)got);
		if (rc == -ENOMEM)	/* the bytes are gone: so is the stream */
			return conn_die(c, rc, err, errlen, "websocket: out of memory");
		/* Other feed errors are sticky: the next ws_reader__next() reports them. */
	}
}

uint64_t ws__received(const struct ws_conn *c)
{
	return c->received;
}

void ws__close(struct ws_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0) {
		send_close(c, WS_CLOSE_NORMAL);
		close(c->fd);
	}
	ws_reader__free(c->reader);
	free(c);
}
