// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What V8's CPU and heap profile readers share; see v8json.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errmsg.h"
#include "lib/json.h"
#include "proto/profile_vocab.h"
#include "proto/v8json.h"

struct json_object *v8_json__parse(const char *json, size_t len, char *err, size_t errlen)
{
	const char *nul;
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;

	if (len > V8_PROFILE_MAX_JSON) {
		errmsg__set(err, errlen, "JSON text of %zu bytes is over the %llu MiB limit", len,
			    V8_PROFILE_MAX_JSON >> 20);
		errno = EFBIG;
		return NULL;
	}
	/* json-c stops at a NUL; say so rather than report a truncated document */
	nul = memchr(json, '\0', len);
	if (nul) {
		errmsg__set(err, errlen, "JSON text contains a NUL byte at offset %zu",
			    (size_t)(nul - json));
		errno = EINVAL;
		return NULL;
	}
	tok = json_tokener_new_ex(V8_PROFILE_MAX_DEPTH);
	if (!tok) {
		errmsg__set(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	o = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o && jerr == json_tokener_continue) {
		errmsg__set(err, errlen, "JSON text ends early (truncated file?)");
		goto bad;
	}
	if (!o || jerr != json_tokener_success) {
		errmsg__set(err, errlen, "invalid JSON at offset %zu: %s", end,
			    json_tokener_error_desc(jerr));
		goto bad;
	}
	for (; end < len; end++) {
		if (!strchr(" \t\r\n", json[end])) {
			errmsg__set(err, errlen,
				    "invalid JSON: data after the document at offset %zu", end);
			goto bad;
		}
	}
	json_tokener_free(tok);
	return o;
bad:
	json_object_put(o);
	json_tokener_free(tok);
	errno = EINVAL;
	return NULL;
}

struct json_object *v8_json__unwrap(struct json_object *o, const char *marker, char *err,
				    size_t errlen)
{
	for (int depth = 0; depth < 4; depth++) {
		struct json_object *inner, *e;

		if (!json_object_is_type(o, json_type_object)) {
			errmsg__set(err, errlen, "the profile is not a JSON object");
			return NULL;
		}
		if (json__member(o, marker))
			return o;
		e = json__member(o, "error");
		if (e) {
			const char *msg = json__str(json__member(e, "message"));

			errmsg__set(err, errlen, "a CDP error reply, not a profile: %s",
				    msg ? msg : json_object_to_json_string(e));
			return NULL;
		}
		inner = json__member(o, "result");
		if (!inner)
			inner = json__member(o, "profile");
		if (!inner)
			break;
		o = inner;
	}
	errmsg__set(err, errlen, "no \"%s\" member: not a V8 %s profile", marker,
		    strcmp(marker, "head") ? "CPU" : "heap");
	return NULL;
}

bool v8_json__number(struct json_object *o, int64_t *v)
{
	double d;

	if (json__int64(o, v))
		return true;
	if (!json_object_is_type(o, json_type_double))
		return false;
	d = json_object_get_double(o);
	if (!(d >= -9.2e18 && d <= 9.2e18))
		return false;
	*v = (int64_t)d;
	return true;
}

const char *v8_json__type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "missing";
}

int v8_call_frame__load(struct json_object *node, const char *what, bool strict,
			struct v8_call_frame *cf, char *err, size_t errlen)
{
	struct json_object *c = json__member(node, "callFrame");
	static const char *const str_keys[] = { "functionName", "scriptId", "url" };
	const char **strs[] = { &cf->function_name, &cf->script_id, &cf->url };
	static const char *const int_keys[] = { "lineNumber", "columnNumber" };
	int64_t *ints[] = { &cf->line, &cf->column };

	if (!json_object_is_type(c, json_type_object)) {
		errmsg__set(err, errlen, "%s: no callFrame object", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < 3; i++) {
		struct json_object *v = json__member(c, str_keys[i]);

		*strs[i] = json__str(v);
		if (!*strs[i] && (strict || v)) {
			errmsg__set(err, errlen, "%s: callFrame.%s is %s, not a string", what,
				    str_keys[i], v8_json__type_name(v));
			return -EINVAL;
		}
		if (!*strs[i])
			*strs[i] = "";
	}
	for (size_t i = 0; i < 2; i++) {
		struct json_object *v = json__member(c, int_keys[i]);

		if (!v && !strict) {
			*ints[i] = -1;
			continue;
		}
		if (!json__int64(v, ints[i])) {
			errmsg__set(err, errlen, "%s: callFrame.%s is %s, not an integer", what,
				    int_keys[i], v8_json__type_name(v));
			return -EINVAL;
		}
		if (*ints[i] < -1 || *ints[i] > INT32_MAX) {
			errmsg__set(err, errlen, "%s: callFrame.%s %" PRId64 " out of range", what,
				    int_keys[i], *ints[i]);
			return -EINVAL;
		}
	}
	return 0;
}

uint64_t v8_call_frame__location(struct pprof_builder *b, const struct v8_pprof_opts *o,
				 const char *function_name, const char *url, int64_t line,
				 int64_t column)
{
	struct pprof_line pl = { 0 };
	int64_t start_line = line >= 0 ? line + 1 : 0;
	struct v8_frame_origin orig;

	if (o && o->map_frame && *url && line >= 0 && column >= 0 &&
	    o->map_frame(o->map_ctx, function_name, url, line, column, &orig)) {
		char *system = NULL;

		if (asprintf(&system, "%s %s:%" PRId64 ":%" PRId64, function_name, url, line + 1,
			     column + 1) < 0)
			return 0;
		pl.function_id = pprof_builder__function(b, orig.function, system, orig.file,
							 orig.start_line);
		free(system);
		if (!pl.function_id)
			return 0;
		pl.line = orig.line;
		pl.column = orig.column;
		return pprof_builder__location(b, 0, 0, &pl, 1);
	}

	pl.function_id = pprof_builder__function(
		b, *function_name ? function_name : FRAME_NAME_ANONYMOUS, function_name, url,
		start_line);
	if (!pl.function_id)
		return 0;
	pl.line = start_line;
	pl.column = column >= 0 ? column + 1 : 0;
	return pprof_builder__location(b, 0, 0, &pl, 1);
}
