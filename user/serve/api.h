/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * api: the pure part of `isoprof serve`'s HTTP API (docs/daemon.md,
 * docs/design/daemon.md): routes, the profile request body, the error codes (and
 * the one for each exit status of `isoprof record`) and the JSON failure
 * envelope, and the small checks the daemon makes on headers (bearer
 * token, loopback Host/Origin).  server.c does the I/O.  No I/O, no globals, no
 * threads: every function may be called from any thread.
 *
 * Routes (api__route):
 *   POST /accounts/{account}/workers/workers/{script}/versions/{version}/profile
 *   GET|HEAD /v1/targets
 *   GET|HEAD /v1/profiles (the query: api__parse_profiles_query())
 *   GET /debug/pprof/profile (Go's pull; the query: api__parse_pull_query())
 *   GET|HEAD any path web_assets__find() knows ("/" is the page)
 *   GET|HEAD /favicon.ico (204: browsers ask for it, the page has none)
 *   The path is split on '/' first, then each segment is percent-decoded,
 *   so a script name may hold an encoded '/'.  A decoded segment may not
 *   hold NUL or control characters (-EINVAL, API_E_BAD_PATH).  A path
 *   that matches no route is -ENOENT; a known path with another method is
 *   -EPERM with route->allow naming the methods ("POST", "GET, HEAD").
 *   The decoded names are malloc()ed; api_route__free() releases them.
 *
 * Body (api__parse_profile_body): a JSON object; duration_ms (required
 * integer, 1000..50000), profile_type ("cpu" default, "heap"), namespace_id
 * and actor_id (both or neither; actor_id is 64 hex digits).  A null
 * optional field counts as absent; unknown fields are ignored.  Returns 0,
 * or -EINVAL with *code set and a one-line message in err.
 *
 * Query (api__parse_profiles_query): the windows serve --out-dir keeps,
 * "script=NAME[&version=V][&from=T][&until=T]" as a form encodes it
 * ('+' is a space, %XX a byte; no control characters), T as
 * lib/timetext.h reads it against now_s; from defaults to an hour before
 * now_s, until to now_s, and from must be before until.  Unknown
 * parameters are ignored; one given twice is an error.  Returns 0, or
 * -EINVAL with *code set and a one-line message in err.
 *
 * Query (api__parse_pull_query): Go's net/http/pprof convention,
 * "seconds=N[&script=NAME[&version=V]|&pid=PID]", decoded as above.
 * seconds defaults to API_PULL_SECONDS_DEFAULT, 1..API_PULL_SECONDS_MAX
 * (API_E_BAD_TYPE when not a decimal integer, API_E_RANGE out of range;
 * pid the same, 1..API_PID_MAX); version only with script; script and pid
 * exclude each other; neither is every V8 target.  A key given twice with
 * the same decoded value counts once (Go clients repeat what they are
 * given), with another is an error; unknown keys are ignored, and so are
 * their values.  Returns 0, or -EINVAL with *code set (API_E_BAD_PATH for
 * what is not about a number) and a one-line message in err.
 *
 * Errors: each kind has a stable code (>= 10000, enum api_code) and an HTTP
 * status (api__status()).  api__envelope() returns the malloc()ed failure
 * envelope {"success":false,"errors":[{"code":N,"message":"..."}],
 * "messages":[],"result":null} or NULL (ENOMEM); bytes of the message that
 * are not well-formed UTF-8 (a script name from the path may be anything)
 * become U+FFFD.
 */
#ifndef ISOPROF_SERVE_API_H
#define ISOPROF_SERVE_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define API_DURATION_MIN_MS 1000
#define API_DURATION_MAX_MS 50000
#define API_ACTOR_ID_LEN 64
#define API_NAMESPACE_MAX 256
#define API_SEGMENT_MAX 1024		/* decoded bytes per path segment */
#define API_MESSAGE_MAX 512		/* a message taken from a child's stderr */
#define API_PULL_SECONDS_DEFAULT 30	/* Go's net/http/pprof default */
#define API_PULL_SECONDS_MAX (API_DURATION_MAX_MS / 1000)
#define API_PID_MAX 4194304		/* the kernel's PID_MAX_LIMIT */

enum api_code {
	API_E_BAD_JSON = 10001,		/* 400: body is not a JSON object */
	API_E_BAD_TYPE = 10002,		/* 400: a field has the wrong type */
	API_E_RANGE = 10003,		/* 400: a value out of range */
	API_E_MISSING = 10004,		/* 400: duration_ms (or the query's script) missing */
	API_E_ACTOR = 10005,		/* 400: namespace_id/actor_id */
	API_E_BAD_PATH = 10006,		/* 400: bad percent-encoding in the path */
	API_E_USAGE = 10007,		/* 400: record refused its arguments */
	API_E_NO_TOKEN = 10010,		/* 401 */
	API_E_BAD_TOKEN = 10011,	/* 403 */
	API_E_FORBIDDEN_ORIGIN = 10012,	/* 403: Host/Origin not loopback (no token) */
	API_E_NOT_FOUND = 10020,	/* 404: unknown script or version */
	API_E_NO_ROUTE = 10021,		/* 404: no such path */
	API_E_NO_WINDOWS = 10023,	/* 404: no kept window of that script in that time */
	API_E_METHOD = 10022,		/* 405 */
	API_E_NO_SAMPLES = 10030,	/* 409: no isolate or no executions */
	API_E_TOO_LARGE = 10040,	/* 413 */
	API_E_TARGET_BUSY = 10050,	/* 429: a capture of this target is running */
	API_E_RATE_LIMIT = 10051,	/* 429: the token bucket is empty */
	API_E_TOO_MANY = 10052,		/* 429: all capture slots are taken */
	API_E_INTERNAL = 10060,		/* 500 */
	API_E_NO_BPF = 10070,		/* 503: BPF cannot be loaded */
	API_E_UNAVAILABLE = 10071,	/* 503: no inspector for a V8 profile */
	API_E_SHUTTING_DOWN = 10072,	/* 503 */
	API_E_AUTH_BACKOFF = 10053,	/* 429: too many wrong tokens from this client */
};

enum api_route_kind {
	API_ROUTE_PROFILE,
	API_ROUTE_TARGETS,
	API_ROUTE_PROFILES,		/* GET /v1/profiles: kept windows, merged */
	API_ROUTE_ASSET,
	API_ROUTE_NO_CONTENT,		/* /favicon.ico: the page has none */
	API_ROUTE_PULL,			/* GET /debug/pprof/profile */
};

struct api_route {
	enum api_route_kind kind;
	const char *allow;		/* methods this path takes */
	char *account;			/* API_ROUTE_PROFILE: decoded, malloc()ed */
	char *script;
	char *version;
};

enum api_profile_type {
	API_PROFILE_CPU,
	API_PROFILE_HEAP,
};

struct api_profile_req {
	long duration_ms;
	enum api_profile_type type;
	bool has_actor;
	char namespace_id[API_NAMESPACE_MAX + 1];
	char actor_id[API_ACTOR_ID_LEN + 1];
};

#define API_DEFAULT_SPAN_S 3600	/* GET /v1/profiles without from: the last hour */

struct api_profiles_req {
	char script[API_SEGMENT_MAX + 1];
	char version[API_SEGMENT_MAX + 1];	/* "" when not given */
	int64_t from_s, until_s;		/* unix seconds, from_s < until_s */
};

struct api_pull_req {
	long seconds;
	char script[API_SEGMENT_MAX + 1];	/* "" when not given */
	char version[API_SEGMENT_MAX + 1];	/* "" when not given (any) */
	int pid;				/* 0 when not given */
};

/* HTTP status of an error kind; 500 for an unknown code. */
unsigned int api__status(enum api_code code);

/*
 * The error kind of a capture that `isoprof record` ended with this exit
 * status (enum record_exit, user/record_exit.h; -1 for a signal):
 * API_E_INTERNAL for a status without a kind of its own.  *prefer (may be
 * NULL) gets the word that picks the line of the child's stderr worth
 * sending (for api__child_message()), or NULL.
 */
enum api_code api__record_exit_code(int status, const char **prefer);

int api__route(const char *method, const char *path, struct api_route *route,
	       char *err, size_t errlen);
void api_route__free(struct api_route *route);

/* Decode one path segment (len bytes) into out[outlen]; -EINVAL or -ENAMETOOLONG. */
int api__decode_segment(const char *seg, size_t len, char *out, size_t outlen);

int api__parse_profile_body(const char *body, size_t len, struct api_profile_req *req,
			    enum api_code *code, char *err, size_t errlen);

int api__parse_profiles_query(const char *query, int64_t now_s, struct api_profiles_req *req,
			       enum api_code *code, char *err, size_t errlen);
int api__parse_pull_query(const char *query, struct api_pull_req *req, enum api_code *code,
			  char *err, size_t errlen);

char *api__envelope(enum api_code code, const char *message);

/*
 * The message for an error from a child's captured stderr (len bytes, not
 * NUL-terminated): the last line starting "isoprof: " that contains
 * prefer (when prefer is not NULL and one does), else the last such line,
 * else the last non-empty line; without the "isoprof: " prefix, trimmed,
 * control characters and invalid UTF-8 replaced by '?', at most
 * outlen - 1 bytes.  Returns false (and out = "") when there is none.
 */
bool api__child_message(const char *text, size_t len, const char *prefer, char *out,
			size_t outlen);

/*
 * Authorization header against the daemon's token: 0 when it is
 * "Bearer <token>", -ENOENT when missing or not a bearer credential (401),
 * -EACCES when the token differs (403).  The comparison takes the same time
 * whatever the header holds (it compares SHA-256 digests).
 */
int api__check_bearer(const char *header, const uint8_t token_digest[32]);

/* Whether a Host header names a loopback host (127.0.0.0/8, [::1], localhost). */
bool api__host_is_loopback(const char *host);
/* Whether an Origin header ("scheme://host[:port]") names exactly host. */
bool api__origin_matches(const char *origin, const char *host);

/* Escape the path for the log: printable ASCII kept, the rest as %XX, cut to outlen - 1. */
void api__log_path(const char *path, char *out, size_t outlen);

#endif /* ISOPROF_SERVE_API_H */
