// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* json: writing and reading JSON over json-c; see json.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/utf8.h"

#define JSON_FLAGS JSON_C_TO_STRING_NOSLASHESCAPE

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
