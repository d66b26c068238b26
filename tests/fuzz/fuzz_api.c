// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target for user/api, which reads what the network sends to
 * `isoprof serve`.  The first byte picks:
 *   0: a route: byte 1 picks the method, the rest is the path.  Decoded
 *      names must be non-empty, free of control characters, bounded, and
 *      percent-encoding them again must route back to the same names.
 *      The same bytes as a pull's query: bounds, one target, and its
 *      values encoded again parse back to them.
 *   1: a profile body: an accepted one keeps its invariants; an error's
 *      message goes into the envelope, which must parse back with it.
 *   2: a child's stderr: the message picked is one clean line that the
 *      envelope carries unchanged.
 *   3: headers: bearer check, Host and Origin checks, the log escaper.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "user/serve/api.h"
#include "lib/sha256.h"

static void check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

static char *cstr(const uint8_t *data, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, data, len);
	s[len] = '\0';
	return s;
}

static bool clean_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > API_SEGMENT_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static void encode(const char *s, char *out)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		*out++ = '%';
		*out++ = hex[(unsigned char)*s >> 4];
		*out++ = hex[(unsigned char)*s & 15];
	}
	*out = '\0';
}

/*
 * The same bytes as GET /debug/pprof/profile's query: an accepted one keeps
 * its bounds and one target, and its values encoded again parse back to them.
 */
static void fuzz_pull_query(const char *query)
{
	struct api_pull_req q, q2;
	enum api_code code;
	char err[256], *again, *p;
	int ret = api__parse_pull_query(query, &q, &code, err, sizeof(err));

	check(ret == 0 || (ret == -EINVAL && api__status(code) == 400 && err[0]));
	if (ret)
		return;
	check(q.seconds >= 1 && q.seconds <= API_PULL_SECONDS_MAX);
	check(q.pid >= 0 && q.pid <= API_PID_MAX);
	check(!(q.pid && q.script[0]) && (!q.version[0] || q.script[0]));
	check(!q.script[0] || clean_name(q.script));
	check(!q.version[0] || clean_name(q.version));
	again = malloc(2 * 3 * (API_SEGMENT_MAX + 1) + 128);
	if (!again)
		return;
	p = again + sprintf(again, "seconds=%ld", q.seconds);
	if (q.pid)
		p += sprintf(p, "&pid=%d", q.pid);
	if (q.script[0]) {
		p += sprintf(p, "&script=");
		encode(q.script, p);
		p += strlen(p);
	}
	if (q.version[0]) {
		p += sprintf(p, "&version=");
		encode(q.version, p);
	}
	check(api__parse_pull_query(again, &q2, &code, err, sizeof(err)) == 0);
	check(q2.seconds == q.seconds && q2.pid == q.pid && !strcmp(q2.script, q.script) &&
	      !strcmp(q2.version, q.version));
	free(again);
}

static void fuzz_route(const uint8_t *data, size_t len)
{
	static const char *const methods[] = { "GET", "POST", "HEAD", "DELETE" };
	const char *method;
	struct api_route r, r2;
	char err[256], *path, *again;
	int ret;

	if (len < 1)
		return;
	method = methods[data[0] & 3];
	path = cstr(data + 1, len - 1);
	if (!path)
		return;
	ret = api__route(method, path, &r, err, sizeof(err));
	check(ret == 0 || ret == -ENOENT || ret == -EPERM || ret == -EINVAL || ret == -ENOMEM);
	/* the same bytes as GET /v1/profiles' query */
	{
		struct api_profiles_req q;
		enum api_code code;
		int qret = api__parse_profiles_query(path, 1796333100, &q, &code, err, sizeof(err));

		check(qret == 0 || (qret == -EINVAL && api__status(code) == 400));
		check(qret || (clean_name(q.script) && (!q.version[0] || clean_name(q.version)) &&
			       q.from_s < q.until_s));
	}
	fuzz_pull_query(path);
	if (ret || r.kind != API_ROUTE_PROFILE) {
		check(!r.script && !r.version && !r.account);
		free(path);
		return;
	}
	check(!strcmp(method, "POST"));
	check(clean_name(r.account) && clean_name(r.script) && clean_name(r.version));
	again = malloc(3 * 3 * (API_SEGMENT_MAX + 1) + 64);
	if (again) {
		char *p = again;

		p += sprintf(p, "/accounts/");
		encode(r.account, p);
		p += strlen(p);
		p += sprintf(p, "/workers/workers/");
		encode(r.script, p);
		p += strlen(p);
		p += sprintf(p, "/versions/");
		encode(r.version, p);
		p += strlen(p);
		sprintf(p, "/profile");
		check(api__route("POST", again, &r2, err, sizeof(err)) == 0);
		check(!strcmp(r.account, r2.account) && !strcmp(r.script, r2.script) &&
		      !strcmp(r.version, r2.version));
		api_route__free(&r2);
		free(again);
	}
	api_route__free(&r);
	free(path);
}

/* The envelope parses back with this code and message. */
static void check_envelope(enum api_code code, const char *msg)
{
	struct json_object *root, *errors, *e, *v;
	char *s = api__envelope(code, msg);

	if (!s)
		return;
	root = json_tokener_parse(s);
	check(root != NULL);
	check(json_object_object_get_ex(root, "errors", &errors));
	e = json_object_array_get_idx(errors, 0);
	check(e && json_object_object_get_ex(e, "code", &v) && json_object_get_int(v) == (int)code);
	check(json_object_object_get_ex(e, "message", &v) &&
	      !strcmp(json_object_get_string(v), msg));
	json_object_put(root);
	free(s);
}

static void fuzz_body(const uint8_t *data, size_t len)
{
	struct api_profile_req req;
	enum api_code code;
	char err[256];
	int ret;

	ret = api__parse_profile_body((const char *)data, len, &req, &code, err, sizeof(err));
	if (!ret) {
		check(req.duration_ms >= API_DURATION_MIN_MS &&
		      req.duration_ms <= API_DURATION_MAX_MS);
		check(req.type == API_PROFILE_CPU || req.type == API_PROFILE_HEAP);
		if (req.has_actor) {
			check(strlen(req.actor_id) == API_ACTOR_ID_LEN);
			check(strspn(req.actor_id, "0123456789abcdef") == API_ACTOR_ID_LEN);
			check(clean_name(req.namespace_id));
		}
		return;
	}
	check(ret == -EINVAL || ret == -ENOMEM);
	if (ret == -EINVAL) {
		check(api__status(code) == 400);
		check(err[0] && !strchr(err, '\n'));
	}
}

static void fuzz_child_message(const uint8_t *data, size_t len)
{
	char out[API_MESSAGE_MAX];
	struct json_tokener *tok;
	struct json_object *o;
	char quoted[3 * API_MESSAGE_MAX];
	size_t n;

	if (!api__child_message((const char *)data, len, len > 4 ? "isoprof" : NULL, out,
				sizeof(out))) {
		check(out[0] == '\0');
		return;
	}
	n = strlen(out);
	check(n > 0 && n < sizeof(out));
	check(out[0] != ' ' && out[n - 1] != ' ');
	for (size_t i = 0; i < n; i++)
		check((unsigned char)out[i] >= 0x20 && out[i] != 0x7f);
	/* valid UTF-8: json-c's validating tokener takes it as a string */
	snprintf(quoted, sizeof(quoted), "\"%s\"", out);
	if (!strchr(out, '"') && !strchr(out, '\\')) {
		tok = json_tokener_new();
		if (tok) {
			json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
			o = json_tokener_parse_ex(tok, quoted, (int)strlen(quoted));
			check(o != NULL);
			json_object_put(o);
			json_tokener_free(tok);
		}
	}
	check_envelope(API_E_INTERNAL, out);
}

static void fuzz_headers(const uint8_t *data, size_t len)
{
	uint8_t digest[SHA256_DIGEST_LEN];
	char *s = cstr(data, len), log[128];
	int ret;

	if (!s)
		return;
	sha256__digest("token", 5, digest);
	ret = api__check_bearer(s, digest);
	check(ret == 0 || ret == -ENOENT || ret == -EACCES);
	if (api__host_is_loopback(s))
		check(strlen(s) > 0);
	(void)api__origin_matches(s, "127.0.0.1:8787");
	api__log_path(s, log, sizeof(log));
	for (const char *p = log; *p; p++)
		check(*p > 0x20 && *p < 0x7f);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] & 3) {
	case 0:
		fuzz_route(data + 1, size - 1);
		break;
	case 1:
		fuzz_body(data + 1, size - 1);
		break;
	case 2:
		fuzz_child_message(data + 1, size - 1);
		break;
	default:
		fuzz_headers(data + 1, size - 1);
		break;
	}
	return 0;
}
