// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* http: reading an HTTP/1.x response header; see http.h. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "lib/http.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* "HTTP/1.x NNN", then the end of the line or a blank and the reason. */
static bool status_line_ok(const char *s, size_t len)
{
	return len >= 12 && !memcmp(s, "HTTP/1.", 7) && s[8] == ' ' && is_digit(s[9]) &&
	       is_digit(s[10]) && is_digit(s[11]) && (len == 12 || s[12] == ' ');
}

int http__parse_response(const char *buf, size_t len, size_t max, struct http_response *r)
{
	const char *end, *eol;

	memset(r, 0, sizeof(*r));
	end = memmem(buf, len < max ? len : max, "\r\n\r\n", 4);
	if (!end)
		return len >= max ? -EMSGSIZE : -EAGAIN;
	eol = memmem(buf, (size_t)(end - buf) + 2, "\r\n", 2);
	r->status_line = buf;
	r->status_line_len = (size_t)(eol - buf);
	if (!status_line_ok(buf, r->status_line_len))
		return -EPROTO;
	r->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
	r->reason = buf + (r->status_line_len > 13 ? 13 : r->status_line_len);
	r->reason_len = r->status_line_len > 13 ? r->status_line_len - 13 : 0;
	r->fields = eol + 2;
	r->fields_len = (size_t)(end + 2 - r->fields);
	r->header_len = (size_t)(end - buf) + 4;
	return 0;
}

int http__next_field(const struct http_response *r, size_t *pos, struct http_field *f)
{
	const char *line = r->fields + *pos, *end = r->fields + r->fields_len, *eol, *colon;
	const char *v, *ve;

	memset(f, 0, sizeof(*f));
	if (line >= end)
		return 0;
	eol = memmem(line, (size_t)(end - line), "\r\n", 2);
	*pos = (size_t)(eol + 2 - r->fields);
	f->line = line;
	f->line_len = (size_t)(eol - line);
	colon = memchr(line, ':', f->line_len);
	if (http__is_ows(*line) || !colon || colon == line)
		return -EPROTO;
	v = colon + 1;
	ve = eol;
	while (v < ve && http__is_ows(*v))
		v++;
	while (ve > v && http__is_ows(ve[-1]))
		ve--;
	f->name = line;
	f->name_len = (size_t)(colon - line);
	f->value = v;
	f->value_len = (size_t)(ve - v);
	return 1;
}

bool http_field__is(const struct http_field *f, const char *name)
{
	return f->name_len == strlen(name) && !strncasecmp(f->name, name, f->name_len);
}

bool http__has_token(const char *value, size_t len, const char *token)
{
	size_t tlen = strlen(token), i = 0;

	while (i < len) {
		size_t s, e;

		while (i < len && (http__is_ows(value[i]) || value[i] == ','))
			i++;
		s = i;
		while (i < len && value[i] != ',')
			i++;
		e = i;
		while (e > s && http__is_ows(value[e - 1]))
			e--;
		if (e - s == tlen && !strncasecmp(value + s, token, tlen))
			return true;
	}
	return false;
}
