// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* json: writing and reading JSON over json-c; see json.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "lib/json.h"
#include "lib/utf8.h"

#define JSON_FLAGS JSON_C_TO_STRING_NOSLASHESCAPE

/* A part writes straight into the serialization in progress. */
struct json_out {
	struct printbuf *pb;
	int flags;
};

struct part {
	json_part_fn fn;
	const void *ctx;
};

struct json_object *json__text_n(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	struct json_object *o;
	size_t i = 0, o_len = 0, n;
	char *clean;

	if (!s)
		return NULL;
	/* Valid UTF-8 (the usual case) goes in as it is. */
	while (i < len && (n = utf8__seq(p + i, len - i)))
		i += n;
	if (i == len)
		return json_object_new_string_len(s, (int)len);
	/* U+FFFD is 3 bytes: at most 3 per input byte. */
	clean = malloc(len * 3 + 1);
	if (!clean)
		return NULL;
	for (i = 0; i < len;) {
		n = utf8__seq(p + i, len - i);
		if (n) {
			memcpy(clean + o_len, p + i, n);
			o_len += n;
			i += n;
		} else {
			memcpy(clean + o_len, "\xef\xbf\xbd", 3);
			o_len += 3;
			i++;
		}
	}
	o = json_object_new_string_len(clean, (int)o_len);
	free(clean);
	return o;
}

struct json_object *json__text(const char *s)
{
	return s ? json__text_n(s, strlen(s)) : NULL;
}

const char *json__dump(struct json_object *o, bool pretty, size_t *len)
{
	size_t n = 0;
	const char *s = json_object_to_json_string_length(
		o, JSON_FLAGS | (pretty ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN), &n);

	if (len)
		*len = s ? n : 0;
	return s;
}

int json__put(struct json_object *o, const char *key, struct json_object *v)
{
	if (!o || !v) {
		json_object_put(v);
		return -ENOMEM;
	}
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json__append(struct json_object *a, struct json_object *v)
{
	if (!a || !v) {
		json_object_put(v);
		return -ENOMEM;
	}
	if (json_object_array_add(a, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

int json__write(FILE *f, struct json_object *o, bool pretty)
{
	size_t len;
	const char *s = json__dump(o, pretty, &len);

	if (!s)
		return -ENOMEM;
	if (fwrite(s, 1, len, f) != len || fputc('\n', f) == EOF)
		return -(errno ? errno : EIO);
	return 0;
}

struct json_object *json__member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

bool json__int64(struct json_object *o, int64_t *v)
{
	if (!json_object_is_type(o, json_type_int))
		return false;
	errno = 0;
	*v = json_object_get_int64(o);
	return true;
}

const char *json__str(struct json_object *o)
{
	return json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

int json_out__raw(struct json_out *out, const char *s, size_t len)
{
	return len > INT32_MAX || printbuf_memappend(out->pb, s, (int)len) < 0 ? -1 : 0;
}

int json_out__int(struct json_out *out, int64_t v)
{
	char num[24];
	int len = snprintf(num, sizeof(num), "%" PRId64, v);

	return json_out__raw(out, num, (size_t)len);
}

int json_out__text(struct json_out *out, const char *s)
{
	struct json_object *o = json__text(s);
	size_t len = 0;
	const char *text;
	int ret;

	if (!o)
		return s ? -1 : json_out__raw(out, "null", 4);
	text = json_object_to_json_string_length(o, out->flags, &len);
	ret = text ? json_out__raw(out, text, len) : -1;
	json_object_put(o);
	return ret;
}

static int part_to_json(struct json_object *o, struct printbuf *pb, int level, int flags)
{
	const struct part *p = json_object_get_userdata(o);
	struct json_out out = { .pb = pb, .flags = flags & ~JSON_C_TO_STRING_PRETTY };

	(void)level;
	return p->fn(&out, p->ctx);
}

struct json_object *json__part(json_part_fn fn, const void *ctx)
{
	struct json_object *o = json_object_new_array();
	struct part *p = malloc(sizeof(*p));

	if (!o || !p) {
		json_object_put(o);
		free(p);
		return NULL;
	}
	p->fn = fn;
	p->ctx = ctx;
	json_object_set_serializer(o, part_to_json, p, json_object_free_userdata);
	return o;
}
