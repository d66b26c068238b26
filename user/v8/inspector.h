/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * inspector: a Chrome DevTools Protocol client for the V8 inspectors of
 * node (--inspect) and workerd (--inspector-addr), used to drive V8's own
 * CPU and sampling heap profilers (docs/design/inspector-client.md, docs/formats.md).
 *
 * What it does:
 *   - inspector__list(): HTTP GET /json/list from host:port (a minimal
 *     HTTP/1.1 client: Connection: close, Content-Length, chunked or read to
 *     close; body at most INSPECTOR_MAX_HTTP_BODY) and the targets in it.
 *     workerd lists one target per service (id = service name, ws path
 *     "/<service>"); node lists one (id = a UUID, ws path "/<uuid>").
 *   - inspector__open() / inspector__call() / inspector__close(): one CDP
 *     session over a WebSocket (websocket.h), one request at a time;
 *     inspector__send() and inspector__wait() are the call's two halves, so
 *     that one request can go to many sessions before any reply is awaited.
 *   - Pure parsers for the fuzzer and the tests: parse_hostport,
 *     parse_http, parse_list, parse_reply.
 *
 * Only loopback is ever contacted: hosts are as ws__is_loopback() allows
 * (127.0.0.0/8, ::1, "localhost" without DNS), else -EPERM.  The host
 * named inside a target's webSocketDebuggerUrl is never used; a session
 * always goes to the host:port the caller gave, with only that URL's path.
 *
 * Callers must not send Runtime.evaluate, Runtime.callFunctionOn,
 * Debugger.* or anything else that runs or changes code in the target: a
 * profiler observes.  This module sends exactly the methods its caller asks
 * for and nothing of its own.
 *
 * Errors: negative errno, one line in err[errlen] (if not NULL), nothing
 * printed.  Besides websocket.h's (-EPERM, -ETIMEDOUT, -ECONNREFUSED,
 * -ENOENT, -EPROTO, -EMSGSIZE, -ENOMEM):
 *   -EINVAL      a malformed host:port, method or params
 *   -EREMOTEIO   the inspector answered with a CDP error; err is
 *                "Profiler.start: <message> (code N)"
 *   -EBADMSG     a message that is not a JSON object, or a /json/list that
 *                is not a list of targets; err holds a short excerpt
 *   -ECONNRESET  the inspector closed the connection ("inspector closed the
 *                connection"); the session is dead, only close it
 *
 * Ownership: json_object pointers follow json-c's reference counts: params
 * passed in are not consumed, a result handed out is the caller's to
 * json_object_put().  Targets are the caller's until inspector__free_targets().
 */
#ifndef ISOPROF_V8_INSPECTOR_H
#define ISOPROF_V8_INSPECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "user/v8/websocket.h"

#define INSPECTOR_DEFAULT_PORT 9229
/* A /json/list of a few hundred workerd services is far below this. */
#define INSPECTOR_MAX_HTTP_BODY (4u << 20)
/*
 * JSON nesting accepted in replies.  json-c's default (32) is too shallow: a
 * SamplingHeapProfile is a nested tree two levels per stack frame, and V8's
 * default stackDepth is 128.
 */
#define INSPECTOR_JSON_DEPTH 1024
/*
 * Most bytes inspector__call() reads while waiting for its reply (the
 * reply, events, other ids' replies): four of the largest messages
 * websocket.h takes.  docs/design/inspector-client.md lists every cap.
 */
#define INSPECTOR_MAX_CALL_BYTES (4u * WS_MAX_MESSAGE)

struct inspector_addr {
	char host[64];		/* "127.0.0.1", "::1" (no brackets) or "localhost" */
	uint16_t port;
};

/*
 * "127.0.0.1:9229", "[::1]:9229", "localhost:9229"; without a port
 * ("127.0.0.1", "[::1]", "::1", "localhost") the port is 9229.  -EINVAL for
 * a malformed string or port, -EPERM for a host that is not loopback.
 */
int inspector__parse_hostport(const char *hostport, struct inspector_addr *addr, char *err,
			      size_t errlen);

/* True for 127.0.0.0/8, ::1 and "localhost"; nothing is resolved. */
bool inspector__is_loopback(const char *host);

/* ---- HTTP ---- */

/*
 * An HTTP/1.x response read so far, buf[len]; eof says the peer has closed.
 * Returns 1 with the body in *body (malloc'd, NUL-terminated, the caller's)
 * of *body_len bytes; 0 when more bytes are needed; -EPROTO for a
 * malformed or truncated response or a status other than 200; -EMSGSIZE
 * for a header over 16 KiB or a body over INSPECTOR_MAX_HTTP_BODY.
 */
int inspector__parse_http(const char *buf, size_t len, bool eof, char **body, size_t *body_len,
			  char *err, size_t errlen);

/*
 * GET path from hostport within timeout_ms; body as inspector__parse_http().
 * netns_fd: the network namespace to reach hostport in (lib/netns.h; -1:
 * isoprof's own), as for every function here that connects.
 */
int inspector__http_get(const char *hostport, int netns_fd, const char *path, int timeout_ms,
			char **body, size_t *body_len, char *err, size_t errlen);

/* ---- targets ---- */

struct inspector_target {
	char *id;
	char *title;
	char *type;		/* "node" for both node and workerd */
	char *url;
	/*
	 * The path to open a session on, from webSocketDebuggerUrl, or "/" + id
	 * when that is missing (node drops it while a debugger is attached).
	 * NULL when neither makes a usable request path.
	 */
	char *ws_path;
};

/*
 * Parse a /json/list body: a JSON array of objects each with a string
 * "id".  Other fields may be missing (then ""), except ws_path as above.
 * On success *targets (NULL when *n is 0) is the caller's.  -EBADMSG
 * otherwise.
 */
int inspector__parse_list(const char *json, size_t len, struct inspector_target **targets,
			  size_t *n, char *err, size_t errlen);

void inspector__free_targets(struct inspector_target *targets, size_t n);

/* GET /json/list from hostport and parse it. */
int inspector__list(const char *hostport, int netns_fd, int timeout_ms,
		    struct inspector_target **targets, size_t *n, char *err, size_t errlen);

/* ---- sessions ---- */

struct inspector_session;

/* Open a CDP session on ws://hostport<ws_path>, in network namespace netns_fd. */
int inspector__open(const char *hostport, int netns_fd, const char *ws_path, int timeout_ms,
		    struct inspector_session **session, char *err, size_t errlen);

/*
 * Send {"id":N,"method":method,"params":params} (params omitted when NULL)
 * and wait for the reply with that id; events and replies to other ids
 * that arrive first are discarded, not kept.  timeout_ms bounds the whole
 * call, however busy the peer is: -ETIMEDOUT names the peer and how many
 * other messages it sent meanwhile.  Over INSPECTOR_MAX_CALL_BYTES read
 * without the reply is -EMSGSIZE.  On success, if result is not NULL, *result is the reply's
 * "result" object (an empty object when the reply has none).  After
 * -ETIMEDOUT the session can still be used: the late reply is discarded.
 */
int inspector__call(struct inspector_session *s, const char *method, json_object *params,
		    int timeout_ms, json_object **result, char *err, size_t errlen);

/*
 * The two halves of inspector__call(): send the request (within
 * timeout_ms; *id is its id, for the wait), then wait up to timeout_ms for
 * the reply with that id, as inspector__call() does.  One request at a
 * time per session: a wait discards every other id's reply.  method only
 * names the call in messages.
 */
int inspector__send(struct inspector_session *s, const char *method, json_object *params,
		    int timeout_ms, int64_t *id, char *err, size_t errlen);
int inspector__wait(struct inspector_session *s, const char *method, int64_t id, int timeout_ms,
		    json_object **result, char *err, size_t errlen);

void inspector__close(struct inspector_session *s);

/*
 * One inspector message, text[len], as inspector__call() reads it while
 * waiting for reply id.  Returns 1 when it is that reply and a success
 * (*result as above, if result is not NULL); 0 for an event or another
 * id's reply; -EREMOTEIO for that reply with a CDP error (err
 * "<message> (code N)"); -EBADMSG for anything that is not a JSON object.
 */
int inspector__parse_reply(const char *text, size_t len, int64_t id, json_object **result,
			   char *err, size_t errlen);

#endif /* ISOPROF_V8_INSPECTOR_H */
