// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for lib/http: status lines, header fields, tokens. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "lib/http.h"

static void test_status_line(void **state)
{
	const char ok[] = "HTTP/1.1 404 Not Found\r\nX: y\r\n\r\nbody";
	struct http_response r;

	(void)state;
	assert_int_equal(http__parse_response(ok, strlen(ok), 1024, &r), 0);
	assert_int_equal(r.status, 404);
	assert_int_equal(r.reason_len, 9);
	assert_memory_equal(r.reason, "Not Found", 9);
	assert_int_equal(r.status_line_len, 22);
	assert_string_equal(ok + r.header_len, "body");
	assert_int_equal(r.fields_len, strlen("X: y\r\n"));
	/* no reason, no fields */
	assert_int_equal(http__parse_response("HTTP/1.0 200\r\n\r\n", 16, 1024, &r), 0);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.reason_len, 0);
	assert_int_equal(r.fields_len, 0);
	assert_int_equal(r.header_len, 16);
	/* not there yet, never there, not HTTP */
	assert_int_equal(http__parse_response(ok, 20, 1024, &r), -EAGAIN);
	assert_int_equal(http__parse_response(ok, strlen(ok), 20, &r), -EMSGSIZE);
	assert_int_equal(http__parse_response("SSH-2.0\r\n\r\n", 11, 1024, &r), -EPROTO);
	assert_int_equal(r.status_line_len, 7);
	assert_int_equal(http__parse_response("HTTP/1.1 2x0 OK\r\n\r\n", 19, 1024, &r),
			 -EPROTO);
	assert_int_equal(http__parse_response("HTTP/1.1 2000\r\n\r\n", 17, 1024, &r), -EPROTO);
}

static void test_fields(void **state)
{
	const char resp[] = "HTTP/1.1 101 Switching Protocols\r\n"
			    "upgrade:  WebSocket \r\n"
			    "Connection: keep-alive, Upgrade\r\n"
			    "Empty:\r\n"
			    " folded\r\n"
			    "\r\n";
	struct http_response r;
	struct http_field f;
	size_t pos = 0;

	(void)state;
	assert_int_equal(http__parse_response(resp, strlen(resp), 1024, &r), 0);
	assert_int_equal(http__next_field(&r, &pos, &f), 1);
	assert_true(http_field__is(&f, "Upgrade"));
	assert_false(http_field__is(&f, "Upgrad"));
	assert_int_equal(f.value_len, 9);
	assert_memory_equal(f.value, "WebSocket", 9);
	assert_int_equal(http__next_field(&r, &pos, &f), 1);
	assert_true(http_field__is(&f, "connection"));
	assert_true(http__has_token(f.value, f.value_len, "upgrade"));
	assert_true(http__has_token(f.value, f.value_len, "Keep-Alive"));
	assert_false(http__has_token(f.value, f.value_len, "close"));
	assert_int_equal(http__next_field(&r, &pos, &f), 1);
	assert_int_equal(f.value_len, 0);
	assert_int_equal(http__next_field(&r, &pos, &f), -EPROTO);
	assert_true(http__is_ows(f.line[0]));
	assert_int_equal(http__next_field(&r, &pos, &f), 0);

	pos = 0;
	assert_int_equal(http__parse_response("HTTP/1.1 200 OK\r\n: x\r\n\r\n", 24, 1024, &r), 0);
	assert_int_equal(http__next_field(&r, &pos, &f), -EPROTO);
	assert_int_equal(f.line_len, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_line),
		cmocka_unit_test(test_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
