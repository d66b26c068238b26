/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * http: the part of an HTTP/1.x response a small client reads before the
 * body: the status line and the header fields, names compared without
 * regard to case.  The inspector's /json/list client and the WebSocket
 * handshake read responses through here.  Pure: no I/O, nothing
 * allocated; everything points into the caller's buffer.
 */
#ifndef ISOPROF_LIB_HTTP_H
#define ISOPROF_LIB_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct http_response {
	int status;			/* the three-digit code */
	const char *status_line;	/* without its CRLF */
	size_t status_line_len;
	const char *reason;		/* after the code and a blank; may be empty */
	size_t reason_len;
	const char *fields;		/* the header field lines, each ending in CRLF */
	size_t fields_len;
	size_t header_len;		/* through the blank line: where the body starts */
};

/*
 * The response header in buf[len], what has arrived so far: 0 with *r;
 * -EAGAIN when the blank line that ends it has not arrived; -EMSGSIZE when
 * there is none within max bytes; -EPROTO when the first line is not
 * "HTTP/1.x NNN[ reason]" (r->status_line and its length are set, for a
 * message).
 */
int http__parse_response(const char *buf, size_t len, size_t max, struct http_response *r);

struct http_field {
	const char *line;	/* the whole line, without CRLF (for messages) */
	size_t line_len;
	const char *name;
	size_t name_len;
	const char *value;	/* without the blanks around it */
	size_t value_len;
};

/* Optional white space, as RFC 9110 calls blanks around a value. */
static inline bool http__is_ows(char c)
{
	return c == ' ' || c == '\t';
}

/*
 * The next header field from *pos (0 to start): 1 and *f, 0 after the
 * last, or -EPROTO with only f->line set for a line that is no field: one
 * folded onto the one before (it starts with a blank, see http__is_ows()),
 * or one without a name before a colon.
 */
int http__next_field(const struct http_response *r, size_t *pos, struct http_field *f);

/* Is the field called name (case-insensitive)? */
bool http_field__is(const struct http_field *f, const char *name);

/* Does the comma-separated list value[len] hold token (case-insensitive)? */
bool http__has_token(const char *value, size_t len, const char *token);

#endif /* ISOPROF_LIB_HTTP_H */
