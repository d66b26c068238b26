// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target for user/inspector's pure parsers.  The first byte
 * picks one (modulo 4) for the rest:
 *   0  inspector__parse_list (a /json/list body)
 *   1  inspector__parse_reply, the id being byte 1
 *   2  inspector__parse_http (a /json/list response), then parse_list on
 *      the body; a response complete before EOF must read the same at EOF
 *   3  inspector__parse_hostport
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/v8/inspector.h"

static void check_err(const char *err, size_t errlen)
{
	if (strnlen(err, errlen) >= errlen)
		__builtin_trap();
}

static bool printable_path(const char *p)
{
	if (p[0] != '/')
		return false;
	for (; *p; p++) {
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return false;
	}
	return true;
}

static void list(const char *text, size_t len)
{
	struct inspector_target *t;
	char err[160] = "";
	size_t n, i;
	int rc;

	rc = inspector__parse_list(text, len, &t, &n, err, sizeof(err));
	check_err(err, sizeof(err));
	if (rc < 0) {
		if ((rc != -EBADMSG && rc != -ENOMEM) || t || n)
			__builtin_trap();
		return;
	}
	for (i = 0; i < n; i++) {
		if (!t[i].id[0] || !t[i].title || !t[i].type || !t[i].url)
			__builtin_trap();
		if (t[i].ws_path && !printable_path(t[i].ws_path))
			__builtin_trap();
	}
	inspector__free_targets(t, n);
}

static void reply(const char *text, size_t len, int64_t id)
{
	json_object *res = (json_object *)1;
	char err[160] = "";
	int rc;

	rc = inspector__parse_reply(text, len, id, &res, err, sizeof(err));
	check_err(err, sizeof(err));
	if (rc == 1) {
		if (!json_object_is_type(res, json_type_object))
			__builtin_trap();
		json_object_put(res);
		return;
	}
	if (res || (rc != 0 && rc != -EREMOTEIO && rc != -EBADMSG && rc != -ENOMEM))
		__builtin_trap();
	/* Without a result pointer the verdict is the same. */
	if (inspector__parse_reply(text, len, id, NULL, err, sizeof(err)) != rc)
		__builtin_trap();
}

static void http(const char *buf, size_t len)
{
	char err[160] = "", *body = NULL, *body2 = NULL;
	size_t blen = 0, blen2 = 0;
	int rc, rc2;

	rc = inspector__parse_http(buf, len, false, &body, &blen, err, sizeof(err));
	check_err(err, sizeof(err));
	rc2 = inspector__parse_http(buf, len, true, &body2, &blen2, err, sizeof(err));
	check_err(err, sizeof(err));
	if ((rc < 0 && rc2 != rc) || (rc == 1 && (rc2 != 1 || blen != blen2 ||
						  memcmp(body, body2, blen) != 0)))
		__builtin_trap();
	if (rc2 == 1) {
		if (blen2 > INSPECTOR_MAX_HTTP_BODY || body2[blen2] != '\0')
			__builtin_trap();
		list(body2, blen2);
	} else if (body2 || rc2 == 0) {
		__builtin_trap();	/* at EOF a response is complete or wrong */
	}
	free(body);
	free(body2);
}

static void hostport(const uint8_t *data, size_t size)
{
	struct inspector_addr a;
	char s[128], err[160];
	int rc;

	if (size >= sizeof(s))
		size = sizeof(s) - 1;
	memcpy(s, data, size);
	s[size] = '\0';
	rc = inspector__parse_hostport(s, &a, err, sizeof(err));
	if (rc == 0 && (!a.port || !inspector__is_loopback(a.host)))
		__builtin_trap();
	if (rc != 0 && rc != -EINVAL && rc != -EPERM)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	switch (data[0] % 4) {
	case 0:
		list((const char *)data + 1, size - 1);
		break;
	case 1:
		reply((const char *)data + 2, size - 2, data[1]);
		break;
	case 2:
		http((const char *)data + 1, size - 1);
		break;
	default:
		hostport(data + 1, size - 1);
		break;
	}
	return 0;
}
