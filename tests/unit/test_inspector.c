// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/inspector: the pure parsers (host:port, HTTP
 * responses, /json/list as node and workerd really send it, CDP replies),
 * and a live session against a real `node --inspect` child: list targets,
 * drive the CPU profiler, get a CDP error back, and see the session end
 * when node is killed.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/v8/inspector.h"
#include "user/v8/websocket.h"

static void test_parse_hostport(void **state)
{
	static const struct {
		const char *in;
		int rc;
		const char *host;
		unsigned int port;
	} v[] = {
		{ "127.0.0.1:9229", 0, "127.0.0.1", 9229 },
		{ "127.0.0.1", 0, "127.0.0.1", 9229 },
		{ "127.3.2.1:1", 0, "127.3.2.1", 1 },
		{ "[::1]:9230", 0, "::1", 9230 },
		{ "[::1]", 0, "::1", 9229 },
		{ "::1", 0, "::1", 9229 },
		{ "localhost:65535", 0, "localhost", 65535 },
		{ "localhost", 0, "localhost", 9229 },
		{ "127.0.0.1:0", -EINVAL, NULL, 0 },
		{ "127.0.0.1:65536", -EINVAL, NULL, 0 },
		{ "127.0.0.1:", -EINVAL, NULL, 0 },
		{ "127.0.0.1:92a9", -EINVAL, NULL, 0 },
		{ "127.0.0.1:+9229", -EINVAL, NULL, 0 },
		{ "[::1]9229", -EINVAL, NULL, 0 },
		{ "[::1", -EINVAL, NULL, 0 },
		{ ":9229", -EINVAL, NULL, 0 },
		{ "", -EINVAL, NULL, 0 },
		{ "10.1.2.3:9229", -EPERM, NULL, 0 },
		{ "example.com:9229", -EPERM, NULL, 0 },
		{ "[::2]:9229", -EPERM, NULL, 0 },
		{ "0.0.0.0:9229", -EPERM, NULL, 0 },
	};
	struct inspector_addr a;
	char err[200];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int rc = inspector__parse_hostport(v[i].in, &a, err, sizeof(err));

		if (rc != v[i].rc)
			fail_msg("\"%s\": %d, want %d (%s)", v[i].in, rc, v[i].rc, err);
		if (rc)
			continue;
		assert_string_equal(a.host, v[i].host);
		assert_int_equal(a.port, v[i].port);
	}
	assert_int_equal(inspector__parse_hostport("10.0.0.1:1", &a, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "not a loopback address"));
	assert_true(inspector__is_loopback("127.0.0.1"));
	assert_false(inspector__is_loopback("192.168.0.1"));
}

/* ---- HTTP ---- */

/* What node v20 answers to GET /json/list (captured). */
static const char node_http[] =
	"HTTP/1.0 200 OK\r\n"
	"Content-Type: application/json; charset=UTF-8\r\n"
	"Cache-Control: no-cache\r\n"
	"Content-Length: 632\r\n"
	"\r\n"
	"[ {\n"
	"  \"description\": \"node.js instance\",\n"
	"  \"devtoolsFrontendUrl\": \"devtools://devtools/bundled/js_app.html?experiments=true&"
	"v8only=true&ws=127.0.0.1:33349/3ba5273a-18ca-46b4-a84c-be003b89b400\",\n"
	"  \"devtoolsFrontendUrlCompat\": \"devtools://devtools/bundled/inspector.html?"
	"experiments=true&v8only=true&ws=127.0.0.1:33349/3ba5273a-18ca-46b4-a84c-be003b89b400\",\n"
	"  \"faviconUrl\": \"https://nodejs.org/static/images/favicons/favicon.ico\",\n"
	"  \"id\": \"3ba5273a-18ca-46b4-a84c-be003b89b400\",\n"
	"  \"title\": \"node[21231]\",\n"
	"  \"type\": \"node\",\n"
	"  \"url\": \"file://\",\n"
	"  \"webSocketDebuggerUrl\": "
	"\"ws://127.0.0.1:33349/3ba5273a-18ca-46b4-a84c-be003b89b400\"\n"
	"} ]\n\n";

static void test_parse_http_content_length(void **state)
{
	size_t len = strlen(node_http), blen, i;
	char err[200], *body;

	(void)state;
	for (i = 0; i < len; i++) {
		assert_int_equal(inspector__parse_http(node_http, i, false, &body, &blen, err,
						       sizeof(err)), 0);
		assert_null(body);
	}
	assert_int_equal(inspector__parse_http(node_http, len, false, &body, &blen, err,
					       sizeof(err)), 1);
	assert_int_equal(blen, 632);
	assert_int_equal(body[0], '[');
	assert_int_equal(body[blen], '\0');
	free(body);
	/* Cut short by EOF. */
	assert_int_equal(inspector__parse_http(node_http, len - 1, true, &body, &blen, err,
					       sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "cut short"));
}

static void test_parse_http_chunked_and_close(void **state)
{
	static const char chunked[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n"
				      "5\r\nhello\r\n1;ext=1\r\n \r\nB\r\nworld, 0123\r\n"
				      "0\r\nX-Trailer: 1\r\n\r\n";
	static const char to_close[] = "HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\nuntil eof";
	size_t len = strlen(chunked), blen, i;
	char err[200], *body;

	(void)state;
	for (i = 0; i < len; i++)
		assert_int_equal(inspector__parse_http(chunked, i, false, &body, &blen, err,
						       sizeof(err)), 0);
	assert_int_equal(inspector__parse_http(chunked, len, false, &body, &blen, err,
					       sizeof(err)), 1);
	assert_string_equal(body, "hello world, 0123");
	assert_int_equal(blen, 17);
	free(body);
	assert_int_equal(inspector__parse_http(chunked, len - 3, true, &body, &blen, err,
					       sizeof(err)), -EPROTO);

	assert_int_equal(inspector__parse_http(to_close, strlen(to_close), false, &body, &blen,
					       err, sizeof(err)), 0);
	assert_int_equal(inspector__parse_http(to_close, strlen(to_close), true, &body, &blen,
					       err, sizeof(err)), 1);
	assert_string_equal(body, "until eof");
	free(body);
}

static void test_parse_http_rejects(void **state)
{
	static const struct {
		const char *resp;
		int rc;
		const char *msg;
	} v[] = {
		{ "HTTP/1.1 500 Internal Server Error\r\n\r\nNot yet implemented", -EPROTO, "500" },
		{ "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", -EPROTO, "400" },
		{ "FTP 200\r\n\r\n", -EPROTO, "FTP" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n", -EPROTO, "Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", -EPROTO,
		  "Content-Length" },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", -EMSGSIZE,
		  "body over" },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", -EPROTO,
		  "Transfer-Encoding" },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", -EPROTO,
		  "chunk size" },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n", -EPROTO,
		  "CRLF" },
		{ "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n",
		  -EMSGSIZE, "body over" },
		{ "HTTP/1.1 200 OK\r\nbad header\r\n\r\n", -EPROTO, "malformed header" },
	};
	char err[200], *body;
	size_t blen, i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		int rc = inspector__parse_http(v[i].resp, strlen(v[i].resp), true, &body, &blen,
					       err, sizeof(err));

		if (rc != v[i].rc || !strstr(err, v[i].msg))
			fail_msg("case %zu: %d \"%s\", want %d \"%s\"", i, rc, err, v[i].rc,
				 v[i].msg);
		assert_null(body);
	}
}

/* ---- /json/list ---- */

/* What workerd answers for a config with services "front" and "idle" (captured). */
static const char workerd_list[] =
	"[{\"id\":\"front\",\"title\":\"workerd: worker front\",\"type\":\"node\","
	"\"description\":\"workerd worker\","
	"\"webSocketDebuggerUrl\":\"ws://127.0.0.1:39229/front\","
	"\"devtoolsFrontendUrl\":\"devtools://devtools/bundled/js_app.html?experiments=true&"
	"v8only=true&ws=127.0.0.1:39229/\","
	"\"devtoolsFrontendUrlCompat\":\"devtools://devtools/bundled/inspector.html?"
	"experiments=true&v8only=true&ws=127.0.0.1:39229/\","
	"\"faviconUrl\":\"https://workers.cloudflare.com/favicon.ico\","
	"\"url\":\"https://workers.dev\"},"
	"{\"id\":\"idle\",\"title\":\"workerd: worker idle\",\"type\":\"node\","
	"\"description\":\"workerd worker\","
	"\"webSocketDebuggerUrl\":\"ws://127.0.0.1:39229/idle\","
	"\"devtoolsFrontendUrl\":\"devtools://devtools/bundled/js_app.html?experiments=true&"
	"v8only=true&ws=127.0.0.1:39229/\","
	"\"devtoolsFrontendUrlCompat\":\"devtools://devtools/bundled/inspector.html?"
	"experiments=true&v8only=true&ws=127.0.0.1:39229/\","
	"\"faviconUrl\":\"https://workers.cloudflare.com/favicon.ico\","
	"\"url\":\"https://workers.dev\"}]";

static void test_parse_list_real(void **state)
{
	struct inspector_target *t;
	char err[200], *body;
	size_t n, blen;

	(void)state;
	assert_int_equal(inspector__parse_http(node_http, strlen(node_http), false, &body, &blen,
					       err, sizeof(err)), 1);
	assert_int_equal(inspector__parse_list(body, blen, &t, &n, err, sizeof(err)), 0);
	free(body);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].id, "3ba5273a-18ca-46b4-a84c-be003b89b400");
	assert_string_equal(t[0].title, "node[21231]");
	assert_string_equal(t[0].type, "node");
	assert_string_equal(t[0].url, "file://");
	assert_string_equal(t[0].ws_path, "/3ba5273a-18ca-46b4-a84c-be003b89b400");
	inspector__free_targets(t, n);

	assert_int_equal(inspector__parse_list(workerd_list, strlen(workerd_list), &t, &n, err,
					       sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(t[0].id, "front");
	assert_string_equal(t[0].title, "workerd: worker front");
	assert_string_equal(t[0].ws_path, "/front");
	assert_string_equal(t[1].id, "idle");
	assert_string_equal(t[1].ws_path, "/idle");
	assert_string_equal(t[1].url, "https://workers.dev");
	inspector__free_targets(t, n);
}

static void test_parse_list_edges(void **state)
{
	/* The URL's host is never used, only its path; no URL: "/" + id. */
	static const char list[] =
		"[{\"id\":\"a\",\"webSocketDebuggerUrl\":\"ws://evil.example:80/a?x=1\"},"
		"{\"id\":\"b\"},"
		"{\"id\":\"c\",\"webSocketDebuggerUrl\":\"ws://host-without-path\"},"
		"{\"id\":\"d\",\"webSocketDebuggerUrl\":\"http://x/not-ws\",\"title\":7},"
		"{\"id\":\"has space\"},"
		"{\"id\":\"e\",\"webSocketDebuggerUrl\":\"ws://h/bad path\"}]";
	static const struct {
		const char *json;
		const char *msg;
	} bad[] = {
		{ "{\"id\":\"x\"}", "not a JSON array" },
		{ "[1]", "not a JSON object" },
		{ "[{\"title\":\"no id\"}]", "no \"id\"" },
		{ "[{\"id\":\"\"}]", "no \"id\"" },
		{ "[{\"id\":\"x\"}] trailing", "not JSON" },
		{ "[{\"id\":", "not JSON" },
		{ "", "not JSON" },
	};
	struct inspector_target *t;
	char err[200];
	size_t n, i;

	(void)state;
	assert_int_equal(inspector__parse_list(list, strlen(list), &t, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 6);
	assert_string_equal(t[0].ws_path, "/a?x=1");
	assert_string_equal(t[1].ws_path, "/b");
	assert_string_equal(t[2].ws_path, "/");
	assert_string_equal(t[3].ws_path, "/d");
	assert_string_equal(t[3].title, "");
	assert_null(t[4].ws_path);
	assert_string_equal(t[5].ws_path, "/e");
	inspector__free_targets(t, n);

	assert_int_equal(inspector__parse_list("[]", 2, &t, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	inspector__free_targets(t, n);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = inspector__parse_list(bad[i].json, strlen(bad[i].json), &t, &n, err,
					       sizeof(err));

		if (rc != -EBADMSG || !strstr(err, bad[i].msg))
			fail_msg("case %zu: %d \"%s\", want \"%s\"", i, rc, err, bad[i].msg);
		assert_null(t);
		assert_int_equal(n, 0);
	}
}

/* ---- replies ---- */

static int reply(const char *text, int64_t id, json_object **res, char *err)
{
	return inspector__parse_reply(text, strlen(text), id, res, err, 200);
}

static void test_parse_reply(void **state)
{
	json_object *res, *p;
	char err[200], *deep;
	int i;

	(void)state;
	assert_int_equal(reply("{\"id\":4,\"result\":{\"profile\":{\"nodes\":[]}}}", 4, &res, err),
			 1);
	assert_true(json_object_object_get_ex(res, "profile", &p));
	json_object_put(res);
	assert_int_equal(reply("{\"id\":1,\"result\":{}}", 1, NULL, err), 1);
	/* workerd's own Profiler.enable echoes the request (captured): success. */
	assert_int_equal(reply("{\"id\":1,\"method\":\"Profiler.enable\",\"params\":{}}", 1, &res,
			       err), 1);
	assert_int_equal(json_object_object_length(res), 0);
	json_object_put(res);
	/* No result at all (workerd's Profiler.stop before start): an empty object. */
	assert_int_equal(reply("{\"id\":2}", 2, &res, err), 1);
	assert_true(json_object_is_type(res, json_type_object));
	assert_int_equal(json_object_object_length(res), 0);
	json_object_put(res);

	/* Events and other ids' replies are not ours. */
	assert_int_equal(reply("{\"method\":\"Runtime.executionContextCreated\",\"params\":{}}",
			       1, &res, err), 0);
	assert_null(res);
	assert_int_equal(reply("{\"id\":3,\"result\":{}}", 4, &res, err), 0);
	assert_int_equal(reply("{\"id\":\"4\",\"result\":{}}", 4, &res, err), 0);

	assert_int_equal(reply("{\"id\":5,\"error\":{\"code\":-32601,"
			       "\"message\":\"'Profiler.nope' wasn't found\"}}", 5, &res, err),
			 -EREMOTEIO);
	assert_string_equal(err, "'Profiler.nope' wasn't found (code -32601)");
	assert_null(res);
	assert_int_equal(reply("{\"id\":5,\"error\":\"x\"}", 5, &res, err), -EREMOTEIO);
	assert_int_equal(reply("{\"id\":5,\"result\":[]}", 5, &res, err), -EBADMSG);

	assert_int_equal(reply("[1,2]", 1, &res, err), -EBADMSG);
	assert_non_null(strstr(err, "not a JSON object: \"[1,2]\""));
	assert_int_equal(reply("Hello, not JSON at all, and a rather long line of it too", 1,
			       &res, err), -EBADMSG);
	assert_non_null(strstr(err, "not JSON: \"Hello"));
	assert_int_equal(reply("{\"id\":1}{\"id\":1}", 1, &res, err), -EBADMSG);
	assert_int_equal(inspector__parse_reply("{\"id\":1}\0", 9, 1, &res, err, 200), -EBADMSG);
	assert_int_equal(reply("{\"id\":1} \n", 1, &res, err), 1);
	json_object_put(res);

	/* A heap profile's nesting: far past json-c's default depth of 32. */
	deep = malloc(20000);
	assert_non_null(deep);
	strcpy(deep, "{\"id\":9,\"result\":{\"head\":");
	for (i = 0; i < 300; i++)
		strcat(deep, "{\"children\":[");
	strcat(deep, "{}");
	for (i = 0; i < 300; i++)
		strcat(deep, "]}");
	strcat(deep, "}}");
	assert_int_equal(reply(deep, 9, &res, err), 1);
	json_object_put(res);
	free(deep);
}

/* ---- live: a real node ---- */

struct node_child {
	pid_t pid;
	int errfd;		/* node's stderr, kept open so its writes never fail */
	char hostport[64];
	char uuid[80];
};

static void node_start(struct node_child *n)
{
	char buf[4096], *p;
	size_t len = 0;
	int pfd[2];
	time_t t0 = time(NULL);
	unsigned int port;

	memset(n, 0, sizeof(*n));
	assert_int_equal(pipe2(pfd, O_CLOEXEC), 0);
	n->pid = fork();
	assert_true(n->pid >= 0);
	if (!n->pid) {
		dup2(pfd[1], 2);
		execlp("node", "node", "--inspect=127.0.0.1:0", "-e", "setInterval(()=>{},1000)",
		       (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	n->errfd = pfd[0];
	/* "Debugger listening on ws://127.0.0.1:PORT/UUID" */
	for (;;) {
		struct pollfd pl = { .fd = n->errfd, .events = POLLIN };
		ssize_t got;

		buf[len] = '\0';
		p = strstr(buf, "Debugger listening on ws://127.0.0.1:");
		if (p && strchr(p, '\n') &&
		    sscanf(p, "Debugger listening on ws://127.0.0.1:%u/%79[0-9a-f-]", &port,
			   n->uuid) == 2)
			break;
		if (time(NULL) - t0 > 15 || len + 1 >= sizeof(buf))
			fail_msg("node --inspect did not report its port: \"%s\"", buf);
		if (poll(&pl, 1, 1000) <= 0)
			continue;
		got = read(n->errfd, buf + len, sizeof(buf) - 1 - len);
		if (got <= 0)
			fail_msg("node exited before listening (is node on PATH?): \"%s\"", buf);
		len += (size_t)got;
	}
	snprintf(n->hostport, sizeof(n->hostport), "127.0.0.1:%u", port);
}

static void node_kill(struct node_child *n)
{
	if (n->pid > 0) {
		kill(n->pid, SIGKILL);
		waitpid(n->pid, NULL, 0);
		n->pid = 0;
	}
	if (n->errfd > 0) {
		close(n->errfd);
		n->errfd = 0;
	}
}

static json_object *params_int(const char *key, int v)
{
	json_object *o = json_object_new_object();

	assert_non_null(o);
	json_object_object_add(o, key, json_object_new_int(v));
	return o;
}

static void test_live_node_profile(void **state)
{
	struct inspector_session *s;
	struct inspector_target *t;
	struct node_child node;
	json_object *res, *params, *profile, *nodes, *root, *cf, *fn;
	char err[256], path[100];
	size_t n;
	int rc;

	(void)state;
	node_start(&node);

	rc = inspector__list(node.hostport, -1, 5000, &t, &n, err, sizeof(err));
	if (rc)
		fail_msg("list: %s", err);
	assert_int_equal(n, 1);
	assert_string_equal(t[0].id, node.uuid);
	assert_string_equal(t[0].type, "node");
	snprintf(path, sizeof(path), "/%s", node.uuid);
	assert_string_equal(t[0].ws_path, path);

	rc = inspector__open(node.hostport, -1, t[0].ws_path, 5000, &s, err, sizeof(err));
	if (rc)
		fail_msg("open: %s", err);
	inspector__free_targets(t, n);

	/* Runtime.enable's reply comes after an event, which must be skipped. */
	rc = inspector__call(s, "Runtime.enable", NULL, 5000, &res, err, sizeof(err));
	if (rc)
		fail_msg("Runtime.enable: %s", err);
	json_object_put(res);
	assert_int_equal(inspector__call(s, "Runtime.disable", NULL, 5000, NULL, err,
					 sizeof(err)), 0);

	assert_int_equal(inspector__call(s, "Profiler.enable", NULL, 5000, NULL, err,
					 sizeof(err)), 0);
	params = params_int("interval", 1000);
	rc = inspector__call(s, "Profiler.setSamplingInterval", params, 5000, NULL, err,
			     sizeof(err));
	/* params are not consumed. */
	assert_int_equal(json_object_object_length(params), 1);
	json_object_put(params);
	if (rc)
		fail_msg("setSamplingInterval: %s", err);
	assert_int_equal(inspector__call(s, "Profiler.start", NULL, 5000, NULL, err,
					 sizeof(err)), 0);
	usleep(200 * 1000);
	rc = inspector__call(s, "Profiler.stop", NULL, 5000, &res, err, sizeof(err));
	if (rc)
		fail_msg("Profiler.stop: %s", err);
	assert_true(json_object_object_get_ex(res, "profile", &profile));
	assert_true(json_object_object_get_ex(profile, "nodes", &nodes));
	assert_true(json_object_is_type(nodes, json_type_array));
	assert_true(json_object_array_length(nodes) >= 1);
	root = json_object_array_get_idx(nodes, 0);
	assert_true(json_object_object_get_ex(root, "callFrame", &cf));
	assert_true(json_object_object_get_ex(cf, "functionName", &fn));
	assert_string_equal(json_object_get_string(fn), "(root)");
	json_object_put(res);
	assert_int_equal(inspector__call(s, "Profiler.disable", NULL, 5000, NULL, err,
					 sizeof(err)), 0);

	/* V8's answer to an unknown method. */
	rc = inspector__call(s, "Profiler.nope", NULL, 5000, &res, err, sizeof(err));
	assert_int_equal(rc, -EREMOTEIO);
	assert_null(res);
	assert_string_equal(err, "Profiler.nope: 'Profiler.nope' wasn't found (code -32601)");
	/* V8's answer to start without enable. */
	rc = inspector__call(s, "Profiler.start", NULL, 5000, NULL, err, sizeof(err));
	assert_int_equal(rc, -EREMOTEIO);
	assert_non_null(strstr(err, "Profiler.start: Profiler is not enabled"));

	/* A call that can't wait leaves the session usable: its reply is discarded later. */
	rc = inspector__call(s, "Profiler.enable", NULL, 0, NULL, err, sizeof(err));
	assert_true(rc == -ETIMEDOUT || rc == 0);
	if (rc)
		assert_non_null(strstr(err, "Profiler.enable: no reply within 0 ms"));
	assert_int_equal(inspector__call(s, "Profiler.disable", NULL, 5000, NULL, err,
					 sizeof(err)), 0);

	/*
	 * The call's two halves: two requests out before any wait; waiting for
	 * the second discards the first's reply, which then never comes.
	 */
	{
		int64_t first, second;

		assert_int_equal(inspector__send(s, "Profiler.enable", NULL, 5000, &first, err,
						 sizeof(err)), 0);
		assert_int_equal(inspector__send(s, "Profiler.disable", NULL, 5000, &second, err,
						 sizeof(err)), 0);
		assert_true(second > first);
		rc = inspector__wait(s, "Profiler.disable", second, 5000, &res, err, sizeof(err));
		if (rc)
			fail_msg("wait: %s", err);
		json_object_put(res);
		rc = inspector__wait(s, "Profiler.enable", first, 200, NULL, err, sizeof(err));
		assert_int_equal(rc, -ETIMEDOUT);
		assert_non_null(strstr(err, "Profiler.enable: no reply within 200 ms"));
	}

	/* Node dies mid-session. */
	node_kill(&node);
	rc = inspector__call(s, "Profiler.enable", NULL, 5000, NULL, err, sizeof(err));
	assert_int_equal(rc, -ECONNRESET);
	assert_non_null(strstr(err, "Profiler.enable: inspector closed the connection"));
	rc = inspector__call(s, "Profiler.enable", NULL, 5000, NULL, err, sizeof(err));
	assert_int_equal(rc, -ECONNRESET);
	inspector__close(s);
}

static void test_live_node_errors(void **state)
{
	struct inspector_session *s;
	struct inspector_target *t;
	struct node_child node;
	char err[256], *body;
	size_t n, blen;
	int rc;

	(void)state;
	node_start(&node);

	/* /json/version through the same HTTP client. */
	rc = inspector__http_get(node.hostport, -1, "/json/version", 5000, &body, &blen, err,
				 sizeof(err));
	if (rc)
		fail_msg("/json/version: %s", err);
	assert_non_null(strstr(body, "\"Protocol-Version\""));
	free(body);

	/* A WebSocket path node doesn't know. */
	rc = inspector__open(node.hostport, -1, "/no-such-target", 5000, &s, err, sizeof(err));
	assert_true(rc < 0);
	assert_null(s);
	assert_non_null(strstr(err, "handshake"));

	/* Two sessions at once, each with its own ids. */
	{
		struct inspector_session *a, *b;
		char path[100];

		snprintf(path, sizeof(path), "/%s", node.uuid);
		assert_int_equal(inspector__open(node.hostport, -1, path, 5000, &a, err, sizeof(err)),
				 0);
		assert_int_equal(inspector__open(node.hostport, -1, path, 5000, &b, err, sizeof(err)),
				 0);
		assert_int_equal(inspector__call(a, "Profiler.enable", NULL, 5000, NULL, err,
						 sizeof(err)), 0);
		assert_int_equal(inspector__call(b, "Profiler.enable", NULL, 5000, NULL, err,
						 sizeof(err)), 0);
		inspector__close(a);
		inspector__close(b);
	}
	node_kill(&node);

	/* Nothing listens there any more. */
	rc = inspector__list(node.hostport, -1, 2000, &t, &n, err, sizeof(err));
	assert_int_equal(rc, -ECONNREFUSED);
	assert_null(t);
	assert_int_equal(inspector__list("10.0.0.1:9229", -1, 2000, &t, &n, err, sizeof(err)),
			 -EPERM);
	assert_int_equal(inspector__open("192.168.1.1:9229", -1, "/x", 2000, &s, err, sizeof(err)),
			 -EPERM);
	assert_non_null(strstr(err, "not a loopback address"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_hostport),
		cmocka_unit_test(test_parse_http_content_length),
		cmocka_unit_test(test_parse_http_chunked_and_close),
		cmocka_unit_test(test_parse_http_rejects),
		cmocka_unit_test(test_parse_list_real),
		cmocka_unit_test(test_parse_list_edges),
		cmocka_unit_test(test_parse_reply),
		cmocka_unit_test(test_live_node_profile),
		cmocka_unit_test(test_live_node_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
