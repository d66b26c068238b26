// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * api: routes, the profile body, error codes and the envelope of
 * `isoprof serve`.  Everything here takes untrusted bytes from the network,
 * so it is a fuzz target (tests/fuzz/fuzz_api.c).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/json.h"
#include "lib/sha256.h"
#include "lib/textscan.h"
#include "lib/timetext.h"
#include "lib/utf8.h"
#include "user/record_exit.h"
#include "user/report/web_assets.h"
#include "user/serve/api.h"

#define PROFILE_SEGMENTS 8
#define JSON_DEPTH 16

static const struct {
	enum api_code code;
	unsigned int status;
} statuses[] = {
	{ API_E_BAD_JSON, 400 },
	{ API_E_BAD_TYPE, 400 },
	{ API_E_RANGE, 400 },
	{ API_E_MISSING, 400 },
	{ API_E_ACTOR, 400 },
	{ API_E_BAD_PATH, 400 },
	{ API_E_USAGE, 400 },
	{ API_E_NO_TOKEN, 401 },
	{ API_E_BAD_TOKEN, 403 },
	{ API_E_FORBIDDEN_ORIGIN, 403 },
	{ API_E_NOT_FOUND, 404 },
	{ API_E_NO_ROUTE, 404 },
	{ API_E_NO_WINDOWS, 404 },
	{ API_E_METHOD, 405 },
	{ API_E_NO_SAMPLES, 409 },
	{ API_E_TOO_LARGE, 413 },
	{ API_E_TARGET_BUSY, 429 },
	{ API_E_RATE_LIMIT, 429 },
	{ API_E_TOO_MANY, 429 },
	{ API_E_INTERNAL, 500 },
	{ API_E_NO_BPF, 503 },
	{ API_E_UNAVAILABLE, 503 },
	{ API_E_SHUTTING_DOWN, 503 },
	{ API_E_AUTH_BACKOFF, 429 },
};

unsigned int api__status(enum api_code code)
{
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (statuses[i].code == code)
			return statuses[i].status;
	return 500;
}

enum api_code api__record_exit_code(int status, const char **prefer)
{
	if (prefer)
		*prefer = NULL;
	switch (status) {
	case RECORD_EXIT_USAGE:
		return API_E_USAGE;
	case RECORD_EXIT_NOT_FOUND:
		return API_E_NOT_FOUND;
	case RECORD_EXIT_NO_SAMPLES:
		return API_E_NO_SAMPLES;
	case RECORD_EXIT_NO_BPF:
		return API_E_NO_BPF;
	case RECORD_EXIT_NO_INSPECTOR:
		/* its stderr names the flag that gives the runtime an inspector */
		if (prefer)
			*prefer = "--inspect";
		return API_E_UNAVAILABLE;
	default:
		return API_E_INTERNAL;
	}
}

int api__decode_segment(const char *seg, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	if (!outlen)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)seg[i];

		if (c == '%') {
			int hi, lo;

			if (len - i < 3)
				return -EINVAL;
			hi = textscan__hex_digit(seg[i + 1]);
			lo = textscan__hex_digit(seg[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		}
		/* names go to argv and to logs: no NUL, no control characters */
		if (c < 0x20 || c == 0x7f)
			return -EINVAL;
		if (n + 1 >= outlen)
			return -ENAMETOOLONG;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

void api_route__free(struct api_route *route)
{
	if (!route)
		return;
	free(route->account);
	free(route->script);
	free(route->version);
	route->account = route->script = route->version = NULL;
}

static bool method_is(const char *method, const char *a, const char *b)
{
	return !strcmp(method, a) || (b && !strcmp(method, b));
}

static int decode_dup(const char *seg, size_t len, char **out, char *err, size_t errlen)
{
	char *buf = malloc(API_SEGMENT_MAX + 1);
	int ret;

	if (!buf)
		return -ENOMEM;
	ret = api__decode_segment(seg, len, buf, API_SEGMENT_MAX + 1);
	if (ret) {
		free(buf);
		if (ret == -ENAMETOOLONG)
			snprintf(err, errlen, "a path segment is longer than %d bytes",
				 API_SEGMENT_MAX);
		else
			snprintf(err, errlen,
				 "bad percent-encoding or a control character in the path");
		return -EINVAL;
	}
	*out = buf;
	return 0;
}

static bool seg_is(const char *seg, size_t len, const char *lit)
{
	return strlen(lit) == len && !memcmp(seg, lit, len);
}

int api__route(const char *method, const char *path, struct api_route *route,
	       char *err, size_t errlen)
{
	const char *segs[PROFILE_SEGMENTS];
	size_t lens[PROFILE_SEGMENTS], plen, nseg = 0;
	const char *p, *end;
	int ret;

	memset(route, 0, sizeof(*route));
	if (err && errlen)
		err[0] = '\0';
	if (!path || path[0] != '/') {
		snprintf(err, errlen, "no such path");
		return -ENOENT;
	}
	plen = strcspn(path, "?#");
	end = path + plen;

	if (plen == strlen("/v1/targets") && !memcmp(path, "/v1/targets", plen)) {
		route->kind = API_ROUTE_TARGETS;
		route->allow = "GET, HEAD";
		return method_is(method, "GET", "HEAD") ? 0 : -EPERM;
	}
	if (plen == strlen("/v1/profiles") && !memcmp(path, "/v1/profiles", plen)) {
		route->kind = API_ROUTE_PROFILES;
		route->allow = "GET, HEAD";
		return method_is(method, "GET", "HEAD") ? 0 : -EPERM;
	}
	if (plen == strlen("/debug/pprof/profile") && !memcmp(path, "/debug/pprof/profile", plen)) {
		route->kind = API_ROUTE_PULL;
		route->allow = "GET";
		return method_is(method, "GET", NULL) ? 0 : -EPERM;
	}
	if (plen == strlen("/favicon.ico") && !memcmp(path, "/favicon.ico", plen)) {
		route->kind = API_ROUTE_NO_CONTENT;
		route->allow = "GET, HEAD";
		return method_is(method, "GET", "HEAD") ? 0 : -EPERM;
	}
	if (plen == strlen(path) && web_assets__find(path)) {
		route->kind = API_ROUTE_ASSET;
		route->allow = "GET, HEAD";
		return method_is(method, "GET", "HEAD") ? 0 : -EPERM;
	}

	/* split first, decode each segment after: an encoded '/' stays in its name */
	p = path + 1;
	for (;;) {
		const char *slash = memchr(p, '/', (size_t)(end - p));
		size_t len = slash ? (size_t)(slash - p) : (size_t)(end - p);

		if (nseg == PROFILE_SEGMENTS || !len)
			goto no_route;
		segs[nseg] = p;
		lens[nseg++] = len;
		if (!slash)
			break;
		p = slash + 1;
	}
	if (nseg != PROFILE_SEGMENTS || !seg_is(segs[0], lens[0], "accounts") ||
	    !seg_is(segs[2], lens[2], "workers") || !seg_is(segs[3], lens[3], "workers") ||
	    !seg_is(segs[5], lens[5], "versions") || !seg_is(segs[7], lens[7], "profile"))
		goto no_route;
	route->kind = API_ROUTE_PROFILE;
	route->allow = "POST";
	if (!method_is(method, "POST", NULL))
		return -EPERM;
	ret = decode_dup(segs[1], lens[1], &route->account, err, errlen);
	if (!ret)
		ret = decode_dup(segs[4], lens[4], &route->script, err, errlen);
	if (!ret)
		ret = decode_dup(segs[6], lens[6], &route->version, err, errlen);
	if (ret) {
		api_route__free(route);
		if (ret == -ENOMEM)
			snprintf(err, errlen, "out of memory");
		return ret;
	}
	return 0;

no_route:
	snprintf(err, errlen, "no such path");
	return -ENOENT;
}

static bool is_hex_string(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (textscan__hex_digit(s[i]) < 0)
			return false;
	return true;
}

/*
 * json-c takes 'single-quoted' strings even in strict mode; JSON does not,
 * and a client that sends them would be surprised elsewhere.
 */
static bool single_quote_outside_strings(const char *s, size_t len)
{
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		if (in_string) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_string = false;
		} else if (s[i] == '"') {
			in_string = true;
		} else if (s[i] == '\'') {
			return true;
		}
	}
	return false;
}

/* One error for the client: *code = c, the message in err; -EINVAL. */
static int __attribute__((format(printf, 5, 6)))
fail(enum api_code *code, enum api_code c, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	*code = c;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* The body as one strict JSON object (UTF-8, double quotes, nothing after it). */
static int parse_object(const char *body, size_t len, struct json_object **root,
			enum api_code *code, char *err, size_t errlen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	int ret = 0;

	*root = NULL;
	if (!body || !len)
		return fail(code, API_E_BAD_JSON, err, errlen,
			    "the body must be a JSON object with duration_ms");
	if (memchr(body, '\0', len))
		return fail(code, API_E_BAD_JSON, err, errlen, "malformed JSON body: a NUL byte");
	if (single_quote_outside_strings(body, len))
		return fail(code, API_E_BAD_JSON, err, errlen,
			    "malformed JSON body: strings take double quotes");
	if (len > 65536)
		return fail(code, API_E_BAD_JSON, err, errlen, "malformed JSON body: too long");
	tok = json_tokener_new_ex(JSON_DEPTH);
	if (!tok) {
		*code = API_E_INTERNAL;
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	*root = json_tokener_parse_ex(tok, body, (int)len);
	jerr = json_tokener_get_error(tok);
	if (!*root || jerr != json_tokener_success) {
		ret = fail(code, API_E_BAD_JSON, err, errlen, "malformed JSON body: %s",
			   json_tokener_error_desc(jerr == json_tokener_success ?
						   json_tokener_continue : jerr));
	} else {
		for (size_t end = json_tokener_get_parse_end(tok); end < len && !ret; end++)
			if (!strchr(" \t\r\n", body[end]))
				ret = fail(code, API_E_BAD_JSON, err, errlen,
					   "malformed JSON body: data after the object");
	}
	if (!ret && !json_object_is_type(*root, json_type_object))
		ret = fail(code, API_E_BAD_JSON, err, errlen,
			   "the body must be a JSON object, not %s",
			   json_type_to_name(json_object_get_type(*root)));
	json_tokener_free(tok);
	return ret;
}

static int parse_capture(struct json_object *root, struct api_profile_req *req,
			 enum api_code *code, char *err, size_t errlen)
{
	struct json_object *v = json__member(root, "duration_ms");
	const char *s;
	int64_t d;

	if (!v)
		return fail(code, API_E_MISSING, err, errlen,
			    "duration_ms is required (an integer from %d to %d)",
			    API_DURATION_MIN_MS, API_DURATION_MAX_MS);
	if (!json_object_is_type(v, json_type_int))
		return fail(code, API_E_BAD_TYPE, err, errlen,
			    "duration_ms must be an integer, not %s",
			    json_type_to_name(json_object_get_type(v)));
	d = json_object_get_int64(v);
	if (d < API_DURATION_MIN_MS || d > API_DURATION_MAX_MS)
		return fail(code, API_E_RANGE, err, errlen, "duration_ms must be from %d to %d",
			    API_DURATION_MIN_MS, API_DURATION_MAX_MS);
	req->duration_ms = (long)d;

	v = json__member(root, "profile_type");
	if (!v)
		return 0;
	s = json__str(v);
	if (!s)
		return fail(code, API_E_BAD_TYPE, err, errlen,
			    "profile_type must be a string, \"cpu\" or \"heap\"");
	if (!strcmp(s, "cpu"))
		req->type = API_PROFILE_CPU;
	else if (!strcmp(s, "heap"))
		req->type = API_PROFILE_HEAP;
	else
		return fail(code, API_E_RANGE, err, errlen,
			    "profile_type must be \"cpu\" or \"heap\"");
	return 0;
}

/* namespace_id and actor_id: both or neither. */
static int parse_actor(struct json_object *root, struct api_profile_req *req,
		       enum api_code *code, char *err, size_t errlen)
{
	struct json_object *ns = json__member(root, "namespace_id");
	struct json_object *actor = json__member(root, "actor_id");
	const char *s;
	size_t slen;

	if (!ns != !actor)
		return fail(code, API_E_ACTOR, err, errlen,
			    "namespace_id and actor_id go together: give both or neither");
	if (!ns)
		return 0;
	if (!json__str(ns) || !json__str(actor))
		return fail(code, API_E_BAD_TYPE, err, errlen,
			    "namespace_id and actor_id must be strings");
	s = json_object_get_string(ns);
	slen = (size_t)json_object_get_string_len(ns);
	if (!slen || slen > API_NAMESPACE_MAX || strlen(s) != slen)
		return fail(code, API_E_ACTOR, err, errlen,
			    "namespace_id must be 1 to %d characters", API_NAMESPACE_MAX);
	for (size_t i = 0; i < slen; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return fail(code, API_E_ACTOR, err, errlen,
				    "namespace_id holds a control character");
	memcpy(req->namespace_id, s, slen + 1);
	s = json_object_get_string(actor);
	slen = (size_t)json_object_get_string_len(actor);
	if (slen != API_ACTOR_ID_LEN || strlen(s) != slen || !is_hex_string(s, slen))
		return fail(code, API_E_ACTOR, err, errlen,
			    "actor_id must be %d hexadecimal digits", API_ACTOR_ID_LEN);
	for (size_t i = 0; i < slen; i++)
		req->actor_id[i] = (char)(s[i] >= 'A' && s[i] <= 'F' ? s[i] + 32 : s[i]);
	req->actor_id[slen] = '\0';
	req->has_actor = true;
	return 0;
}

int api__parse_profile_body(const char *body, size_t len, struct api_profile_req *req,
			    enum api_code *code, char *err, size_t errlen)
{
	struct json_object *root;
	int ret;

	memset(req, 0, sizeof(*req));
	req->type = API_PROFILE_CPU;
	*code = API_E_BAD_JSON;
	if (err && errlen)
		err[0] = '\0';
	ret = parse_object(body, len, &root, code, err, errlen);
	if (!ret)
		ret = parse_capture(root, req, code, err, errlen);
	if (!ret)
		ret = parse_actor(root, req, code, err, errlen);
	json_object_put(root);
	return ret;
}

/* One form-encoded query value: '+' is a space; otherwise as a path segment. */
static int decode_form(const char *s, size_t len, char *out, size_t outlen)
{
	char buf[3 * API_SEGMENT_MAX + 1];

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, s, len);
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '+')
			buf[i] = ' ';
	return api__decode_segment(buf, len, out, outlen);
}

static int parse_time_param(const char *name, const char *value, int64_t now_s, int64_t *out,
			    enum api_code *code, char *err, size_t errlen)
{
	if (!timetext__parse(value, now_s, out))
		return 0;
	return fail(code, API_E_BAD_TYPE, err, errlen,
		    "%s must be RFC 3339 UTC (2026-12-03T21:25:00Z), unix seconds, or a time "
		    "before now (-1h, -15m)", name);
}

/*
 * The next parameter of the form-encoded query at *pp that is one of
 * names[0..n): 1 with *which its index and its value decoded into value,
 * 0 at the end, or fail()'s -EINVAL for a value that does not decode.
 * Other parameters (a key that does not decode, or too long to be one of
 * ours, is someone else's) are skipped.
 */
static int next_param(const char **pp, const char *const *names, int n, char *value,
		      size_t value_size, int *which, enum api_code *code, char *err, size_t errlen)
{
	char key[16];

	while (**pp) {
		const char *p = *pp;
		size_t len = strcspn(p, "&"), klen = strcspn(p, "=");
		size_t vlen = klen < len ? len - klen - 1 : 0;
		int ret;

		*pp += len;
		if (**pp == '&')
			(*pp)++;
		if (klen > len)
			klen = len;
		*which = -1;
		if (len && decode_form(p, klen, key, sizeof(key)) == 0)
			for (int i = 0; i < n; i++)
				if (!strcmp(key, names[i]))
					*which = i;
		if (*which < 0)
			continue;
		ret = decode_form(klen < len ? p + klen + 1 : "", vlen, value, value_size);
		if (ret == -ENAMETOOLONG)
			return fail(code, API_E_BAD_PATH, err, errlen, "%s is longer than %d bytes",
				    names[*which], API_SEGMENT_MAX);
		if (ret)
			return fail(code, API_E_BAD_PATH, err, errlen,
				    "bad percent-encoding or a control character in %s",
				    names[*which]);
		return 1;
	}
	return 0;
}

int api__parse_profiles_query(const char *query, int64_t now_s, struct api_profiles_req *req,
			       enum api_code *code, char *err, size_t errlen)
{
	static const char *const names[] = { "script", "version", "from", "until" };
	char value[API_SEGMENT_MAX + 1];
	bool seen[4] = { false };
	const char *p = query ? query : "";
	int ret, which;

	memset(req, 0, sizeof(*req));
	*code = API_E_BAD_PATH;
	if (err && errlen)
		err[0] = '\0';
	req->until_s = now_s;
	req->from_s = now_s - API_DEFAULT_SPAN_S;
	while ((ret = next_param(&p, names, 4, value, sizeof(value), &which, code, err,
				 errlen)) > 0) {
		if (seen[which])
			return fail(code, API_E_BAD_PATH, err, errlen, "%s is given twice",
				    names[which]);
		seen[which] = true;
		switch (which) {
		case 0:
			memcpy(req->script, value, strlen(value) + 1);
			break;
		case 1:
			memcpy(req->version, value, strlen(value) + 1);
			break;
		default:
			ret = parse_time_param(names[which], value, now_s,
					       which == 2 ? &req->from_s : &req->until_s, code, err,
					       errlen);
			if (ret)
				return ret;
			break;
		}
	}
	if (ret)
		return ret;
	if (!req->script[0])
		return fail(code, API_E_MISSING, err, errlen,
			    "script is required: GET /v1/profiles?script=NAME[&version=V]"
			    "[&from=T][&until=T]");
	if (req->from_s >= req->until_s)
		return fail(code, API_E_RANGE, err, errlen, "from must be before until");
	return 0;
}

/* A decimal integer in lo..hi: 0, -EINVAL (not one: no sign, no space) or -ERANGE. */
static int parse_uint(const char *s, long lo, long hi, long *out)
{
	long v = 0;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	for (; *s; s++) {
		v = v * 10 + (*s - '0');
		if (v > hi)
			return -ERANGE;
	}
	if (v < lo)
		return -ERANGE;
	*out = v;
	return 0;
}

enum { PULL_SECONDS, PULL_SCRIPT, PULL_VERSION, PULL_PID, PULL_KEYS };

int api__parse_pull_query(const char *query, struct api_pull_req *req, enum api_code *code,
			  char *err, size_t errlen)
{
	static const char *const names[PULL_KEYS] = { "seconds", "script", "version", "pid" };
	char value[API_SEGMENT_MAX + 1], seconds[API_SEGMENT_MAX + 1] = "";
	char pid[API_SEGMENT_MAX + 1] = "";
	char *const dest[PULL_KEYS] = { seconds, req->script, req->version, pid };
	bool seen[PULL_KEYS] = { false };
	const char *p = query ? query : "";
	long v;
	int ret, which;

	memset(req, 0, sizeof(*req));
	*code = API_E_BAD_PATH;
	if (err && errlen)
		err[0] = '\0';
	while ((ret = next_param(&p, names, PULL_KEYS, value, sizeof(value), &which, code, err,
				 errlen)) > 0) {
		/* Go clients may repeat what they were given; two answers to one question are not */
		if (seen[which] && strcmp(dest[which], value))
			return fail(code, API_E_BAD_PATH, err, errlen,
				    "%s is given twice with different values", names[which]);
		if (!value[0])
			return fail(code, API_E_BAD_PATH, err, errlen, "%s needs a value",
				    names[which]);
		seen[which] = true;
		memcpy(dest[which], value, strlen(value) + 1);
	}
	if (ret)
		return ret;
	req->seconds = API_PULL_SECONDS_DEFAULT;
	if (seen[PULL_SECONDS]) {
		ret = parse_uint(seconds, 1, API_PULL_SECONDS_MAX, &req->seconds);
		if (ret)
			return fail(code, ret == -ERANGE ? API_E_RANGE : API_E_BAD_TYPE, err, errlen,
				    "seconds must be an integer from 1 to %d", API_PULL_SECONDS_MAX);
	}
	if (seen[PULL_PID]) {
		ret = parse_uint(pid, 1, API_PID_MAX, &v);
		if (ret)
			return fail(code, ret == -ERANGE ? API_E_RANGE : API_E_BAD_TYPE, err, errlen,
				    "pid must be a process id from 1 to %d", API_PID_MAX);
		req->pid = (int)v;
	}
	if (seen[PULL_SCRIPT] && seen[PULL_PID])
		return fail(code, API_E_BAD_PATH, err, errlen, "give script or pid, not both");
	if (seen[PULL_VERSION] && !seen[PULL_SCRIPT])
		return fail(code, API_E_BAD_PATH, err, errlen, "version goes with script");
	return 0;
}

/* Add v (owned from here on, NULL is an allocation that failed) under key. */
static bool add_owned(struct json_object *obj, const char *key, struct json_object *v)
{
	if (!v)
		return false;
	if (json_object_object_add(obj, key, v)) {
		json_object_put(v);
		return false;
	}
	return true;
}

char *api__envelope(enum api_code code, const char *message)
{
	struct json_object *root, *errors, *e;
	const char *s;
	char *out = NULL;
	bool ok;

	root = json_object_new_object();
	if (!root)
		goto out;
	errors = json_object_new_array();
	if (!add_owned(root, "success", json_object_new_boolean(0))) {
		json_object_put(errors);
		goto put;
	}
	ok = add_owned(root, "errors", errors);
	e = ok ? json_object_new_object() : NULL;
	if (e && json_object_array_add(errors, e)) {
		json_object_put(e);
		e = NULL;
	}
	ok = ok && e && add_owned(e, "code", json_object_new_int((int)code)) &&
	     add_owned(e, "message", json__text(message ? message : "")) &&
	     add_owned(root, "messages", json_object_new_array()) &&
	     !json_object_object_add(root, "result", NULL);
	if (ok) {
		s = json__dump(root, false, NULL);
		if (s)
			out = strdup(s);
	}
put:
	json_object_put(root);
out:
	if (!out)
		errno = ENOMEM;
	return out;
}

/* Copy a line into out, trimmed, with what JSON or a log should not hold replaced. */
static void clean_line(const char *s, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	while (len && (*s == ' ' || *s == '\t'))
		s++, len--;
	while (len && strchr(" \t\r", s[len - 1]))
		len--;
	for (size_t i = 0; i < len && n + 1 < outlen;) {
		const unsigned char *u = (const unsigned char *)s + i;
		size_t k = utf8__seq(u, len - i);

		if (k == 1 && (u[0] < 0x20 || u[0] == 0x7f))
			k = 0;
		if (!k) {
			out[n++] = '?';
			i++;
			continue;
		}
		if (n + k >= outlen)
			break;
		memcpy(out + n, u, k);
		n += k;
		i += k;
	}
	/* a cut may have ended on a space */
	while (n && out[n - 1] == ' ')
		n--;
	out[n] = '\0';
}

bool api__child_message(const char *text, size_t len, const char *prefer, char *out,
			size_t outlen)
{
	static const char tag[] = "isoprof: ";
	const char *best = NULL, *pref = NULL, *any = NULL;
	size_t best_len = 0, pref_len = 0, any_len = 0;
	size_t i = 0;

	if (!outlen)
		return false;
	out[0] = '\0';
	while (text && i < len) {
		const char *line = text + i, *nl = memchr(line, '\n', len - i);
		size_t ll = nl ? (size_t)(nl - line) : len - i;
		bool blank = true;

		for (size_t k = 0; k < ll; k++)
			if (!strchr(" \t\r", line[k]))
				blank = false;
		if (!blank) {
			any = line, any_len = ll;
			if (ll > sizeof(tag) - 1 && !memcmp(line, tag, sizeof(tag) - 1)) {
				best = line, best_len = ll;
				if (prefer && *prefer && memmem(line, ll, prefer, strlen(prefer)))
					pref = line, pref_len = ll;
			}
		}
		i += ll + 1;
	}
	if (pref)
		best = pref, best_len = pref_len;
	if (best) {
		best += sizeof(tag) - 1;
		best_len -= sizeof(tag) - 1;
	} else {
		best = any, best_len = any_len;
	}
	if (!best)
		return false;
	clean_line(best, best_len, out, outlen);
	return out[0] != '\0';
}

int api__check_bearer(const char *header, const uint8_t token_digest[32])
{
	uint8_t digest[SHA256_DIGEST_LEN];
	volatile uint8_t diff = 0;
	const char *p;

	if (!header || strncasecmp(header, "Bearer", 6) || (header[6] != ' ' && header[6] != '\t'))
		return -ENOENT;
	p = header + 6;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return -ENOENT;
	/* digests have one length whatever the token's, so the time says nothing of it */
	sha256__digest(p, strlen(p), digest);
	for (size_t i = 0; i < SHA256_DIGEST_LEN; i++)
		diff |= digest[i] ^ token_digest[i];
	return diff ? -EACCES : 0;
}

static bool ipv4_loopback(const char *s, size_t len)
{
	char buf[INET_ADDRSTRLEN];
	struct in_addr a;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	return inet_pton(AF_INET, buf, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

static bool port_ok(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n >= 1 && n <= 5 && !s[n];
}

bool api__host_is_loopback(const char *host)
{
	const char *colon, *close;
	size_t len;

	if (!host || !*host)
		return false;
	if (host[0] == '[') {
		close = strchr(host, ']');
		if (!close || (size_t)(close - host) != 4 || strncmp(host, "[::1]", 5))
			return false;
		return !close[1] || (close[1] == ':' && port_ok(close + 2));
	}
	colon = strchr(host, ':');
	if (colon && !port_ok(colon + 1))
		return false;
	len = colon ? (size_t)(colon - host) : strlen(host);
	if (len == 9 && !strncasecmp(host, "localhost", 9))
		return true;
	return ipv4_loopback(host, len);
}

bool api__origin_matches(const char *origin, const char *host)
{
	const char *rest;

	if (!origin || !host)
		return false;
	if (!strncasecmp(origin, "http://", 7))
		rest = origin + 7;
	else if (!strncasecmp(origin, "https://", 8))
		rest = origin + 8;
	else
		return false;
	return *rest && !strcasecmp(rest, host);
}

void api__log_path(const char *path, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	if (!outlen)
		return;
	for (const unsigned char *p = (const unsigned char *)(path ? path : ""); *p; p++) {
		if (*p > 0x20 && *p < 0x7f) {
			if (n + 1 >= outlen)
				break;
			out[n++] = (char)*p;
		} else {
			if (n + 3 >= outlen)
				break;
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
}
