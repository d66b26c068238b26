// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/api (routes with per-segment percent-decoding, the
 * pull's query (defaults, bounds, repeats, script or pid, decoding), the
 * profile body, the envelope, messages from a child's stderr, bearer
 * tokens, Host/Origin) and user/daemon (admission: one capture per
 * target, slots, the token bucket with Retry-After; a real child: output,
 * stderr tail, exit status, timeout).  The HTTP side is in
 * tests/e2e/serve.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <json-c/json.h>

#include "user/serve/api.h"
#include "user/serve/daemon.h"
#include "lib/fileio.h"
#include "lib/sha256.h"
#include "user/record_exit.h"

#define PROFILE(s, v) "/accounts/local/workers/workers/" s "/versions/" v "/profile"

static void test_route_profile(void **state)
{
	struct api_route r;
	char err[256];

	(void)state;
	assert_int_equal(api__route("POST", PROFILE("alpha.js", "latest"), &r, err, sizeof(err)),
			 0);
	assert_int_equal(r.kind, API_ROUTE_PROFILE);
	assert_string_equal(r.account, "local");
	assert_string_equal(r.script, "alpha.js");
	assert_string_equal(r.version, "latest");
	api_route__free(&r);

	/* split on '/' first: an encoded slash stays inside the script name */
	assert_int_equal(api__route("POST", PROFILE("src%2Fapp%20v2.js", "abc%40x"), &r, err,
				    sizeof(err)), 0);
	assert_string_equal(r.script, "src/app v2.js");
	assert_string_equal(r.version, "abc@x");
	api_route__free(&r);
	/* '+' is not a space in a path */
	assert_int_equal(api__route("POST", PROFILE("a+b", "latest"), &r, err, sizeof(err)), 0);
	assert_string_equal(r.script, "a+b");
	api_route__free(&r);
	/* a query string is not part of the route */
	assert_int_equal(api__route("POST", PROFILE("a", "latest") "?x=1", &r, err, sizeof(err)),
			 0);
	assert_string_equal(r.version, "latest");
	api_route__free(&r);
}

static void test_route_errors(void **state)
{
	static const char *const not_found[] = {
		"/", "/accounts", "/accounts/local/workers/workers/a/versions/latest",
		"/accounts/local/workers/workers/a/versions/latest/profile/",
		"/accounts/local/workers/workers//versions/latest/profile",
		"/accounts//workers/workers/a/versions/latest/profile",
		"/accounts/local/workers/scripts/a/versions/latest/profile",
		"/accounts/local/workers/workers/a/versions/latest/profiles",
		"//accounts/local/workers/workers/a/versions/latest/profile",
		"/v1/targets/", "/v1", "/index.htm", "relative", "",
	};
	struct api_route r;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(not_found) / sizeof(not_found[0]); i++) {
		if (!strcmp(not_found[i], "/"))
			continue;	/* the page */
		assert_int_equal(api__route("POST", not_found[i], &r, err, sizeof(err)), -ENOENT);
		assert_null(r.script);
	}
	assert_int_equal(api__route("GET", NULL, &r, err, sizeof(err)), -ENOENT);

	/* known paths, other methods: 405 with Allow */
	assert_int_equal(api__route("GET", PROFILE("a", "latest"), &r, err, sizeof(err)), -EPERM);
	assert_string_equal(r.allow, "POST");
	assert_null(r.script);
	assert_int_equal(api__route("POST", "/v1/targets", &r, err, sizeof(err)), -EPERM);
	assert_string_equal(r.allow, "GET, HEAD");
	assert_int_equal(api__route("DELETE", "/", &r, err, sizeof(err)), -EPERM);
	assert_int_equal(r.kind, API_ROUTE_ASSET);

	/* bad encodings and control characters: 400 */
	assert_int_equal(api__route("POST", PROFILE("a%zz", "latest"), &r, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "percent"));
	assert_int_equal(api__route("POST", PROFILE("a%2", "latest"), &r, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(api__route("POST", PROFILE("a%", "latest"), &r, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(api__route("POST", PROFILE("a%00b", "latest"), &r, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(api__route("POST", PROFILE("a", "l%0Atest"), &r, err, sizeof(err)),
			 -EINVAL);
	assert_null(r.script);
	assert_null(r.version);
}

static void test_route_long_segment(void **state)
{
	static const char head[] = "/accounts/local/workers/workers/";
	static const char tail[] = "/versions/latest/profile";
	char path[4 * API_SEGMENT_MAX], err[256];
	struct api_route r;
	size_t n;

	(void)state;
	n = sizeof(head) - 1;
	memcpy(path, head, n);
	memset(path + n, 'a', API_SEGMENT_MAX);
	strcpy(path + n + API_SEGMENT_MAX, tail);
	assert_int_equal(api__route("POST", path, &r, err, sizeof(err)), 0);
	assert_int_equal(strlen(r.script), API_SEGMENT_MAX);
	api_route__free(&r);
	memset(path + n, 'a', API_SEGMENT_MAX + 1);
	strcpy(path + n + API_SEGMENT_MAX + 1, tail);
	assert_int_equal(api__route("POST", path, &r, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "longer"));
}

static void test_routes_other(void **state)
{
	struct api_route r;
	char err[64];

	(void)state;
	assert_int_equal(api__route("GET", "/v1/targets", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_TARGETS);
	assert_int_equal(api__route("HEAD", "/v1/targets", &r, err, sizeof(err)), 0);
	assert_int_equal(api__route("GET", "/", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_ASSET);
	assert_int_equal(api__route("GET", "/app.js", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_ASSET);
	assert_int_equal(api__route("GET", "/favicon.ico", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_NO_CONTENT);
	assert_int_equal(api__route("PUT", "/favicon.ico", &r, err, sizeof(err)), -EPERM);
	assert_int_equal(api__route("GET", "/v1/profiles", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_PROFILES);
	assert_int_equal(api__route("GET", "/v1/profiles?script=alpha", &r, err, sizeof(err)), 0);
	assert_int_equal(r.kind, API_ROUTE_PROFILES);
	assert_int_equal(api__route("HEAD", "/v1/profiles", &r, err, sizeof(err)), 0);
	assert_int_equal(api__route("POST", "/v1/profiles", &r, err, sizeof(err)), -EPERM);
	assert_string_equal(r.allow, "GET, HEAD");
	assert_int_equal(api__route("GET", "/v1/profiles/x", &r, err, sizeof(err)), -ENOENT);
}

#define NOW 1796333100LL	/* 2026-12-03T21:25:00Z */

static void test_profiles_query(void **state)
{
	static const struct {
		const char *query;
		int code;		/* 0: accepted */
		const char *script, *version;
		int64_t from, until;
	} cases[] = {
		{ "script=alpha", 0, "alpha", "", NOW - 3600, NOW },
		{ "script=alpha&version=f6adb5d816f5&from=-15m", 0, "alpha", "f6adb5d816f5",
		  NOW - 900, NOW },
		{ "from=2026-12-03T20%3A25%3A00Z&until=1796330000&script=al%2Fpha", 0, "al/pha", "",
		  NOW - 3600, 1796330000 },
		/* form encoding: '+' is a space; an offset's '+' travels as %2B */
		{ "script=my+worker&from=2026-12-03T21:25:00%2B01:00", 0, "my worker", "",
		  NOW - 3600 /* 20:25Z */, NOW },
		{ "script=alpha&x=1&&flag&from=now&until=now", API_E_RANGE, NULL, NULL, 0, 0 },
		{ "script=alpha&unknown=%zz", 0, "alpha", "", NOW - 3600, NOW },
		{ "", API_E_MISSING, NULL, NULL, 0, 0 },
		{ "script", API_E_MISSING, NULL, NULL, 0, 0 },
		{ "script=&version=1", API_E_MISSING, NULL, NULL, 0, 0 },
		{ "version=1&from=-1h", API_E_MISSING, NULL, NULL, 0, 0 },
		{ "script=a&script=b", API_E_BAD_PATH, NULL, NULL, 0, 0 },
		{ "script=a%0ab", API_E_BAD_PATH, NULL, NULL, 0, 0 },
		{ "script=a%2", API_E_BAD_PATH, NULL, NULL, 0, 0 },
		{ "script=alpha&from=yesterday", API_E_BAD_TYPE, NULL, NULL, 0, 0 },
		{ "script=alpha&until=2026-12-03T21:25:00+01:00", API_E_BAD_TYPE, NULL, NULL, 0, 0 },
		{ "script=alpha&from=-1h&until=-2h", API_E_RANGE, NULL, NULL, 0, 0 },
	};
	struct api_profiles_req req;
	enum api_code code;
	char err[256], big[3200];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = api__parse_profiles_query(cases[i].query, NOW, &req, &code, err,
						    sizeof(err));

		if (!cases[i].code) {
			if (ret)
				fail_msg("'%s' refused: %s", cases[i].query, err);
			assert_string_equal(req.script, cases[i].script);
			assert_string_equal(req.version, cases[i].version);
			assert_int_equal(req.from_s, cases[i].from);
			assert_int_equal(req.until_s, cases[i].until);
			continue;
		}
		if (ret != -EINVAL || (int)code != cases[i].code)
			fail_msg("'%s': %d code %d, want code %d", cases[i].query, ret, (int)code,
				 cases[i].code);
		assert_true(err[0] != '\0');
	}
	assert_int_equal(api__parse_profiles_query(NULL, NOW, &req, &code, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(code, API_E_MISSING);
	/* a name longer than a path segment may be */
	memcpy(big, "script=", 7);
	memset(big + 7, 'a', API_SEGMENT_MAX + 1);
	big[7 + API_SEGMENT_MAX + 1] = '\0';
	assert_int_equal(api__parse_profiles_query(big, NOW, &req, &code, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "longer than"));
	big[7 + API_SEGMENT_MAX] = '\0';
	assert_int_equal(api__parse_profiles_query(big, NOW, &req, &code, err, sizeof(err)), 0);
	assert_int_equal(strlen(req.script), API_SEGMENT_MAX);
	assert_int_equal(api__status(API_E_NO_WINDOWS), 404);
}

/* q (GET /debug/pprof/profile's query): 0 with *r filled, or the -EINVAL's code */
static int pull(const char *q, struct api_pull_req *r)
{
	char err[256];
	enum api_code code;
	int ret = api__parse_pull_query(q, r, &code, err, sizeof(err));

	if (ret) {
		assert_int_equal(ret, -EINVAL);
		assert_true(err[0] != '\0' && !strchr(err, '\n'));
		assert_int_equal(api__status(code), 400);
		return (int)code;
	}
	assert_true(r->seconds >= 1 && r->seconds <= API_PULL_SECONDS_MAX);
	return 0;
}

static void test_pull_query(void **state)
{
	struct api_pull_req r;
	struct api_route rt;
	char err[64];

	(void)state;
	assert_int_equal(api__route("GET", "/debug/pprof/profile", &rt, err, sizeof(err)), 0);
	assert_int_equal(rt.kind, API_ROUTE_PULL);
	/* no query: 30 s (Go's default) of every V8 target */
	assert_int_equal(pull(NULL, &r), 0);
	assert_int_equal(r.seconds, API_PULL_SECONDS_DEFAULT);
	assert_int_equal(r.seconds, 30);
	assert_string_equal(r.script, "");
	assert_string_equal(r.version, "");
	assert_int_equal(r.pid, 0);
	assert_int_equal(pull("", &r), 0);
	assert_int_equal(r.seconds, 30);
	assert_int_equal(pull("seconds=3&script=alpha.js", &r), 0);
	assert_int_equal(r.seconds, 3);
	assert_string_equal(r.script, "alpha.js");
	assert_string_equal(r.version, "");
	assert_int_equal(pull("script=alpha&version=latest&seconds=50", &r), 0);
	assert_int_equal(r.seconds, 50);
	assert_string_equal(r.script, "alpha");
	assert_string_equal(r.version, "latest");
	assert_int_equal(pull("pid=4242&seconds=1", &r), 0);
	assert_int_equal(r.pid, 4242);
	assert_int_equal(r.seconds, 1);
	assert_string_equal(r.script, "");
	/* leading zeros are still the number (Go's strconv.ParseInt) */
	assert_int_equal(pull("seconds=007", &r), 0);
	assert_int_equal(r.seconds, 7);

	/* decoding: %XX, '+' is a space, as in a form; an encoded '&' or '=' stays */
	assert_int_equal(pull("script=src%2Fapp+v2%26x%3Dy.js&seconds=2", &r), 0);
	assert_string_equal(r.script, "src/app v2&x=y.js");
	assert_int_equal(pull("script=a%2Bb", &r), 0);
	assert_string_equal(r.script, "a+b");
	/* keys are decoded too */
	assert_int_equal(pull("sec%6Fnds=4", &r), 0);
	assert_int_equal(r.seconds, 4);

	/* unknown keys and their values, even malformed, are someone else's; so are empty pieces */
	assert_int_equal(pull("debug=1&gc=%zz&x&&seconds=5&%00=1&verylongkeyname=2", &r), 0);
	assert_int_equal(r.seconds, 5);

	/* repeated: the same decoded value counts once, another is a 400 */
	assert_int_equal(pull("seconds=3&script=a&seconds=3&script=%61", &r), 0);
	assert_int_equal(r.seconds, 3);
	assert_string_equal(r.script, "a");
	assert_int_equal(pull("seconds=3&seconds=4", &r), API_E_BAD_PATH);
	assert_int_equal(pull("seconds=3&seconds=03", &r), API_E_BAD_PATH);
	assert_int_equal(pull("script=a&script=b", &r), API_E_BAD_PATH);
	assert_int_equal(pull("pid=1&pid=2", &r), API_E_BAD_PATH);
}

static void test_pull_query_errors(void **state)
{
	static const struct {
		const char *query;
		enum api_code code;
		const char *says;
	} bad[] = {
		{ "seconds=0", API_E_RANGE, "1 to 50" },
		{ "seconds=51", API_E_RANGE, "1 to 50" },
		{ "seconds=99999999999999999999999", API_E_RANGE, NULL },
		{ "seconds=abc", API_E_BAD_TYPE, "integer" },
		{ "seconds=", API_E_BAD_PATH, "value" },
		{ "seconds", API_E_BAD_PATH, "value" },
		{ "seconds=-1", API_E_BAD_TYPE, NULL },
		{ "seconds=+3", API_E_BAD_TYPE, NULL },
		{ "seconds=%2B3", API_E_BAD_TYPE, NULL },
		{ "seconds=3.0", API_E_BAD_TYPE, NULL },
		{ "seconds=3+", API_E_BAD_TYPE, NULL },
		{ "seconds=0x10", API_E_BAD_TYPE, NULL },
		{ "pid=0", API_E_RANGE, "pid" },
		{ "pid=4194305", API_E_RANGE, "pid" },
		{ "pid=12ab", API_E_BAD_TYPE, "pid" },
		{ "script=a&pid=1", API_E_BAD_PATH, "not both" },
		{ "pid=1&script=a&version=v", API_E_BAD_PATH, "not both" },
		{ "version=latest", API_E_BAD_PATH, "goes with script" },
		{ "pid=1&version=latest", API_E_BAD_PATH, "goes with script" },
		{ "script=", API_E_BAD_PATH, "value" },
		{ "script", API_E_BAD_PATH, "value" },
		{ "script=a&version=", API_E_BAD_PATH, "value" },
		{ "script=a%zz", API_E_BAD_PATH, "percent" },
		{ "script=a%2", API_E_BAD_PATH, "percent" },
		{ "script=a%0Ab", API_E_BAD_PATH, "control" },
		{ "script=a%00b", API_E_BAD_PATH, NULL },
		{ "script=a&version=%7F", API_E_BAD_PATH, NULL },
	};
	char q[4 * API_SEGMENT_MAX], err[256];
	struct api_pull_req r;
	struct api_route rt;
	enum api_code code;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(api__parse_pull_query(bad[i].query, &r, &code, err, sizeof(err)),
				 -EINVAL);
		assert_int_equal(code, bad[i].code);
		if (bad[i].says)
			assert_non_null(strstr(err, bad[i].says));
	}

	/* a script of API_SEGMENT_MAX bytes, and one more */
	strcpy(q, "script=");
	memset(q + 7, 'a', API_SEGMENT_MAX);
	q[7 + API_SEGMENT_MAX] = '\0';
	assert_int_equal(pull(q, &r), 0);
	assert_int_equal(strlen(r.script), API_SEGMENT_MAX);
	strcat(q, "a");
	assert_int_equal(pull(q, &r), API_E_BAD_PATH);

	/* GET only: HEAD and the rest are 405 with Allow: GET; only the exact path */
	assert_int_equal(api__route("HEAD", "/debug/pprof/profile", &rt, err, sizeof(err)), -EPERM);
	assert_string_equal(rt.allow, "GET");
	assert_int_equal(api__route("POST", "/debug/pprof/profile", &rt, err, sizeof(err)), -EPERM);
	assert_int_equal(api__route("GET", "/debug/pprof/profile?seconds=3", &rt, err, sizeof(err)),
			 0);
	assert_int_equal(api__route("GET", "/debug/pprof/profile/", &rt, err, sizeof(err)), -ENOENT);
	assert_int_equal(api__route("GET", "/debug/pprof/heap", &rt, err, sizeof(err)), -ENOENT);
	assert_int_equal(api__route("GET", "/debug/pprof/profilex", &rt, err, sizeof(err)), -ENOENT);
}

struct body_case {
	const char *body;
	int code;		/* 0: accepted */
	long duration;
	enum api_profile_type type;
	bool actor;
};

#define OK(b, d, t, a) { b, 0, d, t, a }
#define BAD(b, c) { b, c, 0, API_PROFILE_CPU, false }
#define ID64 "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

static void test_body(void **state)
{
	static const struct body_case cases[] = {
		OK("{\"duration_ms\": 2000}", 2000, API_PROFILE_CPU, false),
		OK(" {\"duration_ms\":1000,\"profile_type\":\"heap\"} \n", 1000, API_PROFILE_HEAP,
		   false),
		OK("{\"duration_ms\":50000,\"profile_type\":\"cpu\",\"extra\":[1,{}]}", 50000,
		   API_PROFILE_CPU, false),
		OK("{\"duration_ms\":1000,\"profile_type\":null}", 1000, API_PROFILE_CPU, false),
		OK("{\"duration_ms\":3000,\"namespace_id\":null,\"actor_id\":null}", 3000,
		   API_PROFILE_CPU, false),
		{ "{\"duration_ms\":3000,\"namespace_id\":\"Counter\",\"actor_id\":"
		  "\"00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff\"}", 0, 3000,
		  API_PROFILE_CPU, true },
		BAD("", API_E_BAD_JSON),
		BAD("{", API_E_BAD_JSON),
		BAD("{\"duration_ms\": 2000", API_E_BAD_JSON),
		BAD("{\"duration_ms\": 2000}}", API_E_BAD_JSON),
		BAD("{\"duration_ms\": 2000} x", API_E_BAD_JSON),
		BAD("{'duration_ms': 2000}", API_E_BAD_JSON),
		BAD("[2000]", API_E_BAD_JSON),
		BAD("2000", API_E_BAD_JSON),
		BAD("null", API_E_BAD_JSON),
		BAD("{\"duration_ms\": \"\xff\xfe\"}", API_E_BAD_JSON),
		BAD("{}", API_E_MISSING),
		BAD("{\"duration_ms\": null}", API_E_MISSING),
		BAD("{\"duration_ms\": \"2000\"}", API_E_BAD_TYPE),
		BAD("{\"duration_ms\": 2000.0}", API_E_BAD_TYPE),
		BAD("{\"duration_ms\": 2e3}", API_E_BAD_TYPE),
		BAD("{\"duration_ms\": true}", API_E_BAD_TYPE),
		BAD("{\"duration_ms\": 999}", API_E_RANGE),
		BAD("{\"duration_ms\": 50001}", API_E_RANGE),
		BAD("{\"duration_ms\": -2000}", API_E_RANGE),
		BAD("{\"duration_ms\": 99999999999999999999999}", API_E_RANGE),
		BAD("{\"duration_ms\": 2000, \"profile_type\": 1}", API_E_BAD_TYPE),
		BAD("{\"duration_ms\": 2000, \"profile_type\": \"CPU\"}", API_E_RANGE),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": \"N\"}", API_E_ACTOR),
		BAD("{\"duration_ms\": 2000, \"actor_id\": \"N\"}", API_E_ACTOR),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": 1, \"actor_id\": \"a\"}",
		    API_E_BAD_TYPE),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": \"\", \"actor_id\":"
		    "\"" ID64 "\"}", API_E_ACTOR),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": \"N\", \"actor_id\":"
		    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeef\"}",
		    API_E_ACTOR),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": \"N\", \"actor_id\":"
		    "\"00112233445566778899aabbccddeeff00112233445566778899aabbccddeefg\"}",
		    API_E_ACTOR),
		BAD("{\"duration_ms\": 2000, \"namespace_id\": \"a\\u0001b\", \"actor_id\":"
		    "\"" ID64 "\"}", API_E_ACTOR),
	};
	struct api_profile_req req;
	enum api_code code;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct body_case *c = &cases[i];
		int ret = api__parse_profile_body(c->body, strlen(c->body), &req, &code, err,
						  sizeof(err));

		if (!c->code) {
			if (ret)
				fail_msg("case %zu '%s': %s", i, c->body, err);
			assert_int_equal(req.duration_ms, c->duration);
			assert_int_equal(req.type, c->type);
			assert_int_equal(req.has_actor, c->actor);
			continue;
		}
		if (ret != -EINVAL)
			fail_msg("case %zu '%s': accepted", i, c->body);
		if ((int)code != c->code)
			fail_msg("case %zu '%s': code %d, want %d (%s)", i, c->body, code, c->code,
				 err);
		assert_int_equal(api__status(code), 400);
		assert_true(err[0] != '\0');
		assert_null(strchr(err, '\n'));
	}
	/* actor ids come back lower-case; a NUL inside the body is refused */
	assert_int_equal(api__parse_profile_body(cases[5].body, strlen(cases[5].body), &req, &code,
						 err, sizeof(err)), 0);
	assert_string_equal(req.actor_id,
			    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	assert_string_equal(req.namespace_id, "Counter");
	assert_int_equal(api__parse_profile_body("{\"duration_ms\":2000}\0", 21, &req, &code, err,
						 sizeof(err)), -EINVAL);
	/* a body that is not NUL-terminated is read only up to its length */
	assert_int_equal(api__parse_profile_body("{\"duration_ms\":2000}garbage", 20, &req, &code,
						 err, sizeof(err)), 0);
}

static void test_body_depth(void **state)
{
	char body[4096];
	struct api_profile_req req;
	enum api_code code;
	char err[256];
	size_t n = 0;

	(void)state;
	n += (size_t)sprintf(body, "{\"duration_ms\":2000,\"x\":");
	for (int i = 0; i < 1000; i++)
		body[n++] = '[';
	for (int i = 0; i < 1000; i++)
		body[n++] = ']';
	body[n++] = '}';
	assert_int_equal(api__parse_profile_body(body, n, &req, &code, err, sizeof(err)), -EINVAL);
	assert_int_equal(code, API_E_BAD_JSON);
}

static void test_envelope(void **state)
{
	struct json_object *root, *errors, *e, *v;
	char *s;

	(void)state;
	s = api__envelope(API_E_TARGET_BUSY, "quote \" backslash \\ newline \n \xc3\xa9");
	assert_non_null(s);
	root = json_tokener_parse(s);
	assert_non_null(root);
	assert_int_equal(json_object_object_length(root), 4);
	assert_true(json_object_object_get_ex(root, "success", &v));
	assert_true(json_object_is_type(v, json_type_boolean));
	assert_false(json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(root, "result", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(root, "messages", &v));
	assert_int_equal(json_object_array_length(v), 0);
	assert_true(json_object_object_get_ex(root, "errors", &errors));
	assert_int_equal(json_object_array_length(errors), 1);
	e = json_object_array_get_idx(errors, 0);
	assert_true(json_object_object_get_ex(e, "code", &v));
	assert_int_equal(json_object_get_int(v), 10050);
	assert_true(json_object_object_get_ex(e, "message", &v));
	assert_string_equal(json_object_get_string(v),
			    "quote \" backslash \\ newline \n \xc3\xa9");
	json_object_put(root);
	assert_non_null(strstr(s, "\"success\":false"));
	free(s);
	/* a script name from the path may be any bytes: the envelope stays UTF-8 */
	s = api__envelope(API_E_NOT_FOUND, "no script a\xff" "b");
	assert_non_null(s);
	assert_non_null(strstr(s, "\"no script a\xef\xbf\xbd" "b\""));
	free(s);
}

static void test_statuses(void **state)
{
	(void)state;
	assert_int_equal(api__status(API_E_BAD_JSON), 400);
	assert_int_equal(api__status(API_E_NO_TOKEN), 401);
	assert_int_equal(api__status(API_E_BAD_TOKEN), 403);
	assert_int_equal(api__status(API_E_NOT_FOUND), 404);
	assert_int_equal(api__status(API_E_METHOD), 405);
	assert_int_equal(api__status(API_E_NO_SAMPLES), 409);
	assert_int_equal(api__status(API_E_TOO_LARGE), 413);
	assert_int_equal(api__status(API_E_TARGET_BUSY), 429);
	assert_int_equal(api__status(API_E_RATE_LIMIT), 429);
	assert_int_equal(api__status(API_E_TOO_MANY), 429);
	assert_int_equal(api__status(API_E_AUTH_BACKOFF), 429);
	assert_int_equal(API_E_AUTH_BACKOFF, 10053);
	assert_int_equal(api__status(API_E_INTERNAL), 500);
	assert_int_equal(api__status(API_E_NO_BPF), 503);
	assert_int_equal(api__status(API_E_UNAVAILABLE), 503);
	assert_int_equal(api__status((enum api_code)12345), 500);
}

/* docs/daemon.md's table: record's exit status -> code -> HTTP status. */
static void test_record_exit(void **state)
{
	static const struct {
		int exit_status;
		enum api_code code;
		unsigned int http;
	} cases[] = {
		{ RECORD_EXIT_FAILED, API_E_INTERNAL, 500 },
		{ RECORD_EXIT_USAGE, API_E_USAGE, 400 },
		{ RECORD_EXIT_NOT_FOUND, API_E_NOT_FOUND, 404 },
		{ RECORD_EXIT_NO_SAMPLES, API_E_NO_SAMPLES, 409 },
		{ RECORD_EXIT_NO_BPF, API_E_NO_BPF, 503 },
		{ RECORD_EXIT_NO_INSPECTOR, API_E_UNAVAILABLE, 503 },
		{ -1, API_E_INTERNAL, 500 },	/* a signal */
		{ 77, API_E_INTERNAL, 500 },
	};
	const char *prefer;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum api_code code = api__record_exit_code(cases[i].exit_status, &prefer);

		assert_int_equal(code, cases[i].code);
		assert_int_equal(api__status(code), cases[i].http);
		if (cases[i].exit_status == RECORD_EXIT_NO_INSPECTOR)
			assert_string_equal(prefer, "--inspect");
		else
			assert_null(prefer);
	}
	assert_int_equal(api__record_exit_code(RECORD_EXIT_USAGE, NULL), API_E_USAGE);
}

/* The download's name (Content-Disposition) and record's per-isolate files use it. */
static void test_name_part(void **state)
{
	static const char *const cases[][2] = {
		{ "alpha.js", "alpha.js" },
		{ "src/app.js", "app.js" },
		{ "file:///srv/w/index.mjs", "index.mjs" },
		{ "a/b/", "a_b_" },
		{ ".hidden", "_hidden" },
		{ "..", "_." },
		{ "sp ace\"q\xff", "sp_ace_q_" },
		{ "", "unknown" },
	};
	char out[16];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fileio__name_part(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
	fileio__name_part(NULL, out, sizeof(out));
	assert_string_equal(out, "unknown");
	fileio__name_part("a-very-long-script-name.js", out, sizeof(out));
	assert_string_equal(out, "a-very-long-scr");
}

static void test_child_message(void **state)
{
	static const char text[] =
		"progress 1\n"
		"isoprof: pid 7: no V8 heap profile: no inspector; start workerd with "
		"--inspector-addr=127.0.0.1:9229\n"
		"  pid 7 workerd  12 samples\n"
		"isoprof: no inspector target could take a heap profile; nothing to record  \r\n"
		"\n";
	static const char last[] =
		"no inspector target could take a heap profile; nothing to record";
	static const char bad[] = "isoprof: a\x01\tb \xff\xc3\xa9 \xe2\x82\n";
	char out[API_MESSAGE_MAX];

	(void)state;
	assert_true(api__child_message(text, sizeof(text) - 1, NULL, out, sizeof(out)));
	assert_string_equal(out, last);
	assert_true(api__child_message(text, sizeof(text) - 1, "--inspect", out, sizeof(out)));
	assert_non_null(strstr(out, "--inspector-addr=127.0.0.1:9229"));
	assert_true(api__child_message(text, sizeof(text) - 1, "absent", out, sizeof(out)));
	assert_string_equal(out, last);
	/* no "isoprof: " line: the last non-empty one */
	assert_true(api__child_message("a\nlast one\n\n", 12, NULL, out, sizeof(out)));
	assert_string_equal(out, "last one");
	assert_false(api__child_message("\n \n", 3, NULL, out, sizeof(out)));
	assert_string_equal(out, "");
	assert_false(api__child_message(NULL, 0, NULL, out, sizeof(out)));
	/* control characters and broken UTF-8 become '?', valid UTF-8 stays */
	assert_true(api__child_message(bad, sizeof(bad) - 1, NULL, out, sizeof(out)));
	assert_string_equal(out, "a??b ?\xc3\xa9 ??");
	/* cut to the buffer, never inside a character */
	assert_true(api__child_message("isoprof: ab\xc3\xa9", 13, NULL, out, 4));
	assert_string_equal(out, "ab");
}

static void test_bearer(void **state)
{
	uint8_t digest[SHA256_DIGEST_LEN];

	(void)state;
	sha256__digest("s3cret", 6, digest);
	assert_int_equal(api__check_bearer("Bearer s3cret", digest), 0);
	assert_int_equal(api__check_bearer("bearer   s3cret", digest), 0);
	assert_int_equal(api__check_bearer("Bearer s3cre", digest), -EACCES);
	assert_int_equal(api__check_bearer("Bearer s3cretx", digest), -EACCES);
	assert_int_equal(api__check_bearer("Bearer S3cret", digest), -EACCES);
	assert_int_equal(api__check_bearer(NULL, digest), -ENOENT);
	assert_int_equal(api__check_bearer("", digest), -ENOENT);
	assert_int_equal(api__check_bearer("Bearer", digest), -ENOENT);
	assert_int_equal(api__check_bearer("Bearer ", digest), -ENOENT);
	assert_int_equal(api__check_bearer("Basic s3cret", digest), -ENOENT);
	assert_int_equal(api__check_bearer("Bearers3cret", digest), -ENOENT);
}

static void test_host_origin(void **state)
{
	(void)state;
	assert_true(api__host_is_loopback("127.0.0.1:8787"));
	assert_true(api__host_is_loopback("127.1.2.3"));
	assert_true(api__host_is_loopback("localhost:1"));
	assert_true(api__host_is_loopback("LocalHost"));
	assert_true(api__host_is_loopback("[::1]:8787"));
	assert_true(api__host_is_loopback("[::1]"));
	assert_false(api__host_is_loopback("128.0.0.1:8787"));
	assert_false(api__host_is_loopback("evil.example"));
	assert_false(api__host_is_loopback("localhost.evil.example:80"));
	assert_false(api__host_is_loopback("127.0.0.1.evil.example"));
	assert_false(api__host_is_loopback("127.0.0.1:80x"));
	assert_false(api__host_is_loopback("127.0.0.1:"));
	assert_false(api__host_is_loopback("[::2]:80"));
	assert_false(api__host_is_loopback("[::1]x"));
	assert_false(api__host_is_loopback(""));
	assert_false(api__host_is_loopback(NULL));

	assert_true(api__origin_matches("http://127.0.0.1:8787", "127.0.0.1:8787"));
	assert_true(api__origin_matches("https://LOCALHOST:1", "localhost:1"));
	assert_false(api__origin_matches("http://127.0.0.1:8788", "127.0.0.1:8787"));
	assert_false(api__origin_matches("http://evil.example", "127.0.0.1:8787"));
	assert_false(api__origin_matches("null", "127.0.0.1:8787"));
	assert_false(api__origin_matches("http://", ""));
	assert_false(api__origin_matches("http://a", NULL));
}

static void test_log_path(void **state)
{
	char out[16];

	(void)state;
	api__log_path("/a%2Fb c\x01", out, sizeof(out));
	assert_string_equal(out, "/a%2Fb%20c%01");
	api__log_path("/\x01\x7f\xff", out, sizeof(out));
	assert_string_equal(out, "/%01%7F%FF");
	api__log_path("/abcdefghijklmnopqrstuvwxyz", out, sizeof(out));
	assert_int_equal(strlen(out), sizeof(out) - 1);
	api__log_path("/abcdefghijklm\x01", out, sizeof(out));
	assert_string_equal(out, "/abcdefghijklm");
}

static void test_admit_target_and_slots(void **state)
{
	struct daemon_admit *a;
	unsigned int ra;
	int s1, s2, s3;

	(void)state;
	assert_null(daemon_admit__new(0, 1, 1));
	assert_int_equal(errno, EINVAL);
	a = daemon_admit__new(2, 100, 300);
	assert_non_null(a);
	s1 = daemon_admit__acquire(a, "alpha\nlatest", 10000, 1000, &ra);
	assert_true(s1 >= 0);
	/* the same target: busy, retry when its window is over */
	assert_int_equal(daemon_admit__acquire(a, "alpha\nlatest", 2000, 3500, &ra), -EBUSY);
	assert_int_equal(ra, 8);
	/* past its expected end but not released yet: still busy, retry in 1 s */
	assert_int_equal(daemon_admit__acquire(a, "alpha\nlatest", 2000, 20000, &ra), -EBUSY);
	assert_int_equal(ra, 1);
	/* another version is another target */
	s2 = daemon_admit__acquire(a, "alpha\nabc123", 4000, 4000, &ra);
	assert_true(s2 >= 0 && s2 != s1);
	assert_int_equal(daemon_admit__running(a), 2);
	/* slots full: retry when the first running capture should end */
	assert_int_equal(daemon_admit__acquire(a, "beta\nlatest", 1000, 5000, &ra), -EAGAIN);
	assert_int_equal(ra, 3);
	daemon_admit__release(a, s2);
	s3 = daemon_admit__acquire(a, "beta\nlatest", 1000, 5000, &ra);
	assert_int_equal(s3, s2);
	daemon_admit__release(a, s1);
	daemon_admit__release(a, s3);
	daemon_admit__release(a, -1);
	daemon_admit__release(a, 99);
	assert_int_equal(daemon_admit__running(a), 0);
	assert_true(daemon_admit__acquire(a, "alpha\nlatest", 1000, 6000, &ra) >= 0);
	daemon_admit__free(a);
}

static void test_admit_bucket(void **state)
{
	struct daemon_admit *a;
	unsigned int ra;
	int s;

	(void)state;
	a = daemon_admit__new(4, 3, 300);	/* one token per 100 s */
	assert_non_null(a);
	for (int i = 0; i < 3; i++) {
		s = daemon_admit__acquire(a, "t", 1000, 1000 + (uint64_t)i, &ra);
		assert_true(s >= 0);
		daemon_admit__release(a, s);
	}
	assert_int_equal(daemon_admit__acquire(a, "t", 1000, 1003, &ra), -EDQUOT);
	assert_true(ra >= 99 && ra <= 100);
	/* a refusal costs nothing; 50 s later half a token is there */
	assert_int_equal(daemon_admit__acquire(a, "t", 1000, 51003, &ra), -EDQUOT);
	assert_true(ra >= 49 && ra <= 51);
	s = daemon_admit__acquire(a, "t", 1000, 101100, &ra);
	assert_true(s >= 0);
	daemon_admit__release(a, s);
	/* the bucket never holds more than its burst */
	for (int i = 0; i < 3; i++) {
		s = daemon_admit__acquire(a, "t", 1000, 10000000 + (uint64_t)i, &ra);
		assert_true(s >= 0);
		daemon_admit__release(a, s);
	}
	assert_int_equal(daemon_admit__acquire(a, "t", 1000, 10000010, &ra), -EDQUOT);
	/* a clock that goes back does not mint tokens */
	assert_int_equal(daemon_admit__acquire(a, "t", 1000, 5, &ra), -EDQUOT);
	daemon_admit__free(a);
}

static void test_child(void **state)
{
	char *argv[] = { "sh", "-c",
			 "printf 'out-%s-more' \"$0\"; i=0; while [ $i -lt 3000 ]; do "
			 "echo \"noise line $i\" >&2; i=$((i+1)); done; "
			 "echo 'isoprof: the last word' >&2; exit 4", "x", NULL };
	struct daemon_child_opts o = {
		.path = "/bin/sh", .argv = argv, .timeout_ms = 10000, .out_max = 5,
		.err_max = 1024,
	};
	struct daemon_child ch;
	char msg[API_MESSAGE_MAX];

	(void)state;
	assert_int_equal(daemon__run_child(&o, &ch), 0);
	assert_true(WIFEXITED(ch.wait_status));
	assert_int_equal(WEXITSTATUS(ch.wait_status), 4);
	assert_false(ch.timed_out);
	assert_true(ch.out_truncated);
	assert_int_equal(ch.out_len, 5);
	assert_string_equal(ch.out, "out-x");
	assert_int_equal(ch.err_len, 1024);
	assert_true(api__child_message(ch.err, ch.err_len, NULL, msg, sizeof(msg)));
	assert_string_equal(msg, "the last word");
	daemon_child__free(&ch);
}

static bool cancel_now(void *arg)
{
	return ++*(int *)arg > 2;
}

static void test_child_timeout_and_cancel(void **state)
{
	/* TERM is ignored: the group gets KILL after the grace period */
	char *ignores_term[] = { "sh", "-c", "trap '' TERM; sleep 30 & wait; sleep 30", NULL };
	char *polite[] = { "sh", "-c", "sleep 30", NULL };
	struct daemon_child_opts o = { .path = "/bin/sh", .argv = polite, .timeout_ms = 200,
				       .out_max = 64, .err_max = 64 };
	struct daemon_child ch;
	int calls = 0;

	(void)state;
	assert_int_equal(daemon__run_child(&o, &ch), 0);
	assert_true(ch.timed_out);
	assert_true(WIFSIGNALED(ch.wait_status));
	assert_int_equal(WTERMSIG(ch.wait_status), SIGTERM);
	daemon_child__free(&ch);

	o.argv = ignores_term;
	o.timeout_ms = 60000;
	o.cancel = cancel_now;
	o.arg = &calls;
	assert_int_equal(daemon__run_child(&o, &ch), 0);
	assert_true(ch.cancelled);
	assert_true(WIFSIGNALED(ch.wait_status));
	assert_int_equal(WTERMSIG(ch.wait_status), SIGKILL);
	daemon_child__free(&ch);

	o.path = "/nonexistent/program";
	o.cancel = NULL;
	assert_int_equal(daemon__run_child(&o, &ch), 0);
	assert_true(WIFEXITED(ch.wait_status));
	assert_int_equal(WEXITSTATUS(ch.wait_status), 127);
	daemon_child__free(&ch);
}

/*
 * A worker: one frame per byte on stdin, from one process kept between
 * requests (its pid in the payload); started again after it exits; stopped
 * when it answers with what is not a frame, or not in time.
 */
static void test_worker(void **state)
{
	char *lister[] = { "sh", "-c",
			   "while read -r cmd; do\n"
			   "  case $cmd in\n"
			   "  '') echo note >&2; printf 'ISTL\\001\\000\\000\\000\\005\\000\\000\\000"
			   "\\000\\000\\000\\000'; printf '%05d' $$;;\n"
			   "  esac\n"
			   "done", NULL };
	char *garbage[] = { "sh", "-c", "read -r x; echo 'not a frame, longer than a header'; "
			    "sleep 30", NULL };
	char *silent[] = { "sh", "-c", "read -r x; sleep 30", NULL };
	struct daemon_child_opts o = { .path = "/bin/sh", .argv = lister, .timeout_ms = 5000,
				       .out_max = 64, .err_max = 64 };
	struct daemon_worker *w;
	struct daemon_child ch;
	char first[8];
	pid_t pid;

	(void)state;
	assert_int_equal(daemon_worker__new(&o, &w), 0);
	assert_int_equal(daemon_worker__pid(w), 0);
	assert_int_equal(daemon_worker__ask(w, &ch), 0);
	pid = daemon_worker__pid(w);
	assert_true(pid > 0);
	assert_true(WIFEXITED(ch.wait_status));
	assert_int_equal(WEXITSTATUS(ch.wait_status), 1);
	assert_int_equal(ch.out_len, 5);
	snprintf(first, sizeof(first), "%s", ch.out);
	assert_string_equal(ch.err, "note\n");
	daemon_child__free(&ch);
	/* the same process answers again */
	assert_int_equal(daemon_worker__ask(w, &ch), 0);
	assert_string_equal(ch.out, first);
	assert_int_equal(daemon_worker__pid(w), pid);
	daemon_child__free(&ch);
	/* killed between requests: the next one starts another */
	kill(pid, SIGKILL);
	usleep(100 * 1000);
	assert_int_equal(daemon_worker__ask(w, &ch), 0);
	assert_int_equal(ch.out_len, 5);
	assert_string_not_equal(ch.out, first);
	assert_true(daemon_worker__pid(w) != pid && daemon_worker__pid(w) > 0);
	daemon_child__free(&ch);
	pid = daemon_worker__pid(w);
	daemon_worker__free(w);
	/* the end of its stdin ended it */
	assert_int_equal(kill(pid, 0), -1);

	o.argv = garbage;
	assert_int_equal(daemon_worker__new(&o, &w), 0);
	assert_int_equal(daemon_worker__ask(w, &ch), 0);
	assert_false(ch.out_truncated);
	assert_true(WIFSIGNALED(ch.wait_status));
	assert_int_equal(ch.out_len, 0);
	assert_int_equal(daemon_worker__pid(w), 0);
	daemon_child__free(&ch);
	daemon_worker__free(w);

	o.argv = silent;
	o.timeout_ms = 200;
	assert_int_equal(daemon_worker__new(&o, &w), 0);
	assert_int_equal(daemon_worker__ask(w, &ch), 0);
	assert_true(ch.timed_out);
	assert_true(WIFSIGNALED(ch.wait_status));
	assert_int_equal(daemon_worker__pid(w), 0);
	daemon_child__free(&ch);
	daemon_worker__free(w);
}

static void test_remove_dir(void **state)
{
	char dir[] = "/tmp/test_api.XXXXXX", path[64];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/profile.pb.gz", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	assert_int_equal(daemon__remove_dir(dir), 0);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(daemon__remove_dir(dir), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_route_profile),
		cmocka_unit_test(test_route_errors),
		cmocka_unit_test(test_route_long_segment),
		cmocka_unit_test(test_routes_other),
		cmocka_unit_test(test_pull_query),
		cmocka_unit_test(test_pull_query_errors),
		cmocka_unit_test(test_profiles_query),
		cmocka_unit_test(test_body),
		cmocka_unit_test(test_body_depth),
		cmocka_unit_test(test_envelope),
		cmocka_unit_test(test_statuses),
		cmocka_unit_test(test_record_exit),
		cmocka_unit_test(test_name_part),
		cmocka_unit_test(test_child_message),
		cmocka_unit_test(test_bearer),
		cmocka_unit_test(test_host_origin),
		cmocka_unit_test(test_log_path),
		cmocka_unit_test(test_admit_target_and_slots),
		cmocka_unit_test(test_admit_bucket),
		cmocka_unit_test(test_child),
		cmocka_unit_test(test_child_timeout_and_cancel),
		cmocka_unit_test(test_worker),
		cmocka_unit_test(test_remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
