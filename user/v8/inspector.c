// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* inspector: a CDP client over websocket.h, loopback only; see inspector.h. */
#include "lib/errmsg.h"
#include "user/v8/inspector.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/http.h"
#include "lib/json.h"
#include "lib/monotime.h"
#include "user/v8/websocket.h"

#define HTTP_MAX_HEADER (16u << 10)
/* Raw bytes read for one response: the body cap plus chunk framing. */
#define HTTP_MAX_RAW (2 * INSPECTOR_MAX_HTTP_BODY + HTTP_MAX_HEADER)

bool inspector__is_loopback(const char *host)
{
	return ws__is_loopback(host);
}

static int parse_port(const char *s, uint16_t *port)
{
	unsigned long v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
		if (v > 65535)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*port = (uint16_t)v;
	return 0;
}

int inspector__parse_hostport(const char *hostport, struct inspector_addr *addr, char *err,
			      size_t errlen)
{
	const char *host = hostport, *port = NULL, *colon;
	size_t hlen;

	if (!hostport || !*hostport) {
		errmsg__set(err, errlen, "empty inspector address");
		return -EINVAL;
	}
	addr->port = INSPECTOR_DEFAULT_PORT;
	if (hostport[0] == '[') {
		const char *close = strchr(hostport, ']');

		if (!close || (close[1] && close[1] != ':')) {
			errmsg__set(err, errlen, "%s: expected [IPv6]:PORT", hostport);
			return -EINVAL;
		}
		host = hostport + 1;
		hlen = (size_t)(close - host);
		if (close[1] == ':')
			port = close + 2;
	} else {
		colon = strchr(hostport, ':');
		/* A bare IPv6 address (two colons or more) has no port. */
		if (colon && !strchr(colon + 1, ':')) {
			hlen = (size_t)(colon - hostport);
			port = colon + 1;
		} else {
			hlen = strlen(hostport);
		}
	}
	if (!hlen || hlen >= sizeof(addr->host)) {
		errmsg__set(err, errlen, "%s: bad host", hostport);
		return -EINVAL;
	}
	memcpy(addr->host, host, hlen);
	addr->host[hlen] = '\0';
	if (port && parse_port(port, &addr->port) < 0) {
		errmsg__set(err, errlen, "%s: bad port", hostport);
		return -EINVAL;
	}
	if (!ws__is_loopback(addr->host)) {
		errmsg__set(err, errlen, "%s: not a loopback address", addr->host);
		return -EPERM;
	}
	return 0;
}

/* ---- HTTP ---- */

static const char *find_crlf(const char *p, const char *end)
{
	return memmem(p, (size_t)(end - p), "\r\n", 2);
}

/*
 * Walk a chunked body in b[0..len): 1 complete (and, when out is not NULL,
 * the data copied there), 0 incomplete, negative malformed or too big.
 * The first pass only measures, so an incomplete body costs no allocation.
 */
static int dechunk(const char *b, size_t len, char *out, size_t *out_len, char *err,
		   size_t errlen)
{
	const char *p = b, *end = b + len, *eol;
	size_t total = 0;

	for (;;) {
		size_t size = 0;
		const char *q;

		eol = find_crlf(p, end);
		if (!eol)
			return 0;
		for (q = p; q < eol && isxdigit((unsigned char)*q); q++) {
			/* Saturate: anything past the cap fails below either way. */
			if (size <= INSPECTOR_MAX_HTTP_BODY)
				size = size * 16 +
				       (size_t)(isdigit((unsigned char)*q) ? *q - '0' :
						tolower((unsigned char)*q) - 'a' + 10);
		}
		if (q == p || (q < eol && *q != ';' && !http__is_ows(*q))) {
			errmsg__set(err, errlen, "HTTP: malformed chunk size");
			return -EPROTO;
		}
		if (size > INSPECTOR_MAX_HTTP_BODY - total) {
			errmsg__set(err, errlen, "HTTP: body over %u bytes", INSPECTOR_MAX_HTTP_BODY);
			return -EMSGSIZE;
		}
		p = eol + 2;
		if (!size)
			break;
		if ((size_t)(end - p) < size + 2)
			return 0;
		if (p[size] != '\r' || p[size + 1] != '\n') {
			errmsg__set(err, errlen, "HTTP: chunk not followed by CRLF");
			return -EPROTO;
		}
		if (out)
			memcpy(out + total, p, size);
		total += size;
		p += size + 2;
	}
	/* Trailer fields, up to an empty line. */
	for (;;) {
		eol = find_crlf(p, end);
		if (!eol)
			return 0;
		if (eol == p)
			break;
		p = eol + 2;
	}
	*out_len = total;
	return 1;
}

static int status_error(const char *line, size_t len, char *err, size_t errlen)
{
	char ex[80];

	errmsg__excerpt(ex, sizeof(ex), line, len);
	errmsg__set(err, errlen, "HTTP: %s", ex);
	return -EPROTO;
}

/* How the body is framed. */
struct framing {
	bool chunked;
	bool have_clen;
	size_t clen;
};

static int parse_content_length(const struct http_field *f, struct framing *fr, char *err,
				 size_t errlen)
{
	size_t n = 0;

	if (!f->value_len)
		goto bad;
	for (size_t i = 0; i < f->value_len; i++) {
		if (f->value[i] < '0' || f->value[i] > '9')
			goto bad;
		n = n * 10 + (size_t)(f->value[i] - '0');
		if (n > INSPECTOR_MAX_HTTP_BODY) {
			errmsg__set(err, errlen, "HTTP: body over %u bytes", INSPECTOR_MAX_HTTP_BODY);
			return -EMSGSIZE;
		}
	}
	if (fr->have_clen && n != fr->clen)
		goto bad;
	fr->clen = n;
	fr->have_clen = true;
	return 0;
bad:
	errmsg__set(err, errlen, "HTTP: bad Content-Length");
	return -EPROTO;
}

/* Content-Length and Transfer-Encoding from the header. */
static int parse_framing(const struct http_response *h, struct framing *fr, char *err,
			 size_t errlen)
{
	struct http_field f;
	size_t pos = 0;
	int rc;

	while ((rc = http__next_field(h, &pos, &f)) > 0) {
		if (http_field__is(&f, "Content-Length")) {
			rc = parse_content_length(&f, fr, err, errlen);
			if (rc)
				return rc;
		} else if (http_field__is(&f, "Transfer-Encoding")) {
			/* We sent no TE: chunked is the only coding a server may use. */
			if (f.value_len != 7 || strncasecmp(f.value, "chunked", 7) != 0) {
				errmsg__set(err, errlen, "HTTP: unsupported Transfer-Encoding");
				return -EPROTO;
			}
			fr->chunked = true;
		}
	}
	if (rc < 0) {
		errmsg__set(err, errlen, "HTTP: malformed header line");
		return -EPROTO;
	}
	return 0;
}

/*
 * The body's length once it has all arrived: 1 and *out_len, 0 for more,
 * or an error (a body cut short at eof, or over the cap).
 */
static int body_length(const struct framing *fr, const char *b, size_t blen, bool eof,
		       size_t *out_len, char *err, size_t errlen)
{
	int rc;

	if (fr->chunked) {
		rc = dechunk(b, blen, NULL, out_len, err, errlen);
		if (rc || !eof)
			return rc;
		errmsg__set(err, errlen, "HTTP: chunked body cut short");
		return -EPROTO;
	}
	if (fr->have_clen) {
		if (blen >= fr->clen) {
			*out_len = fr->clen;
			return 1;
		}
		if (!eof)
			return 0;
		errmsg__set(err, errlen, "HTTP: body cut short at %zu of %zu bytes", blen,
			    fr->clen);
		return -EPROTO;
	}
	if (blen > INSPECTOR_MAX_HTTP_BODY) {
		errmsg__set(err, errlen, "HTTP: body over %u bytes", INSPECTOR_MAX_HTTP_BODY);
		return -EMSGSIZE;
	}
	*out_len = blen;
	return eof;
}

int inspector__parse_http(const char *buf, size_t len, bool eof, char **body, size_t *body_len,
			  char *err, size_t errlen)
{
	struct framing fr = { 0 };
	struct http_response h;
	size_t blen, out_len = 0;
	const char *b;
	int rc;

	*body = NULL;
	*body_len = 0;
	rc = http__parse_response(buf, len, HTTP_MAX_HEADER, &h);
	if (rc == -EMSGSIZE) {
		errmsg__set(err, errlen, "HTTP: header over %u bytes", HTTP_MAX_HEADER);
		return rc;
	}
	if (rc == -EAGAIN) {
		if (!eof)
			return 0;
		errmsg__set(err, errlen, "HTTP: connection closed before the end of the header");
		return -EPROTO;
	}
	if (rc || h.status != 200)
		return status_error(h.status_line, h.status_line_len, err, errlen);
	rc = parse_framing(&h, &fr, err, errlen);
	if (rc)
		return rc;
	b = buf + h.header_len;
	blen = len - h.header_len;
	rc = body_length(&fr, b, blen, eof, &out_len, err, errlen);
	if (rc <= 0)
		return rc;
	*body = malloc(out_len + 1);
	if (!*body) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if (fr.chunked)
		dechunk(b, blen, *body, &out_len, NULL, 0);
	else
		memcpy(*body, b, out_len);
	(*body)[out_len] = '\0';
	*body_len = out_len;
	return 1;
}

int inspector__http_get(const char *hostport, int netns_fd, const char *path, int timeout_ms,
			char **body, size_t *body_len, char *err, size_t errlen)
{
	int64_t deadline = ws__deadline(timeout_ms);
	struct inspector_addr a;
	char req[512], *buf = NULL, *nb;
	size_t len = 0, cap = 0;
	bool eof = false;
	int fd, rc, n;
	bool v6;

	*body = NULL;
	*body_len = 0;
	rc = inspector__parse_hostport(hostport, &a, err, errlen);
	if (rc < 0)
		return rc;
	v6 = strchr(a.host, ':') != NULL;
	n = snprintf(req, sizeof(req),
		     "GET %s HTTP/1.1\r\nHost: %s%s%s:%u\r\nAccept: application/json\r\n"
		     "Connection: close\r\n\r\n",
		     path, v6 ? "[" : "", a.host, v6 ? "]" : "", a.port);
	if (n < 0 || (size_t)n >= sizeof(req) || path[0] != '/' || strpbrk(path, " \r\n")) {
		errmsg__set(err, errlen, "bad HTTP path");
		return -EINVAL;
	}
	fd = ws__tcp_connect(a.host, a.port, netns_fd, timeout_ms, err, errlen);
	if (fd < 0)
		return fd;
	rc = ws__write_all(fd, req, (size_t)n, deadline);
	if (rc < 0) {
		errmsg__set(err, errlen, "%s: GET %s: send: %s", hostport, path, strerror(-rc));
		goto out;
	}
	for (;;) {
		char perr[160];
		ssize_t got;

		rc = inspector__parse_http(buf ? buf : "", len, eof, body, body_len, perr,
					   sizeof(perr));
		if (rc) {
			if (rc < 0)
				errmsg__set(err, errlen, "%s: GET %s: %s", hostport, path, perr);
			break;
		}
		if (len == cap) {
			if (cap >= HTTP_MAX_RAW) {
				rc = -EMSGSIZE;
				errmsg__set(err, errlen, "%s: GET %s: response over %u bytes", hostport,
				       path, HTTP_MAX_RAW);
				break;
			}
			cap = cap ? 2 * cap : 16384;
			nb = realloc(buf, cap);
			if (!nb) {
				rc = -ENOMEM;
				errmsg__set(err, errlen, "out of memory");
				break;
			}
			buf = nb;
		}
		rc = ws__wait_readable(fd, deadline);
		if (rc < 0) {
			if (rc == -ETIMEDOUT)
				errmsg__set(err, errlen,
					    "%s: GET %s: no complete answer within %d ms (%zu bytes "
					    "came)", hostport, path, timeout_ms, len);
			else
				errmsg__set(err, errlen, "%s: GET %s: %s", hostport, path,
					    strerror(-rc));
			break;
		}
		got = recv(fd, buf + len, cap - len, 0);
		if (got < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (got < 0 && errno != ECONNRESET) {
			rc = -errno;
			errmsg__set(err, errlen, "%s: GET %s: recv: %s", hostport, path,
			       strerror(errno));
			break;
		}
		if (got <= 0)
			eof = true;
		else
			len += (size_t)got;
	}
out:
	free(buf);
	close(fd);
	return rc < 0 ? rc : 0;
}

/* ---- targets ---- */

static const char *str_field(json_object *o, const char *key)
{
	return json__str(json__member(o, key));
}

/* A request path we are willing to put on the wire. */
static bool path_ok(const char *p)
{
	size_t i, n = strlen(p);

	if (p[0] != '/' || n > 2048)
		return false;
	for (i = 0; i < n; i++) {
		if ((unsigned char)p[i] <= 0x20 || (unsigned char)p[i] >= 0x7f)
			return false;
	}
	return true;
}

/* The path of ws://authority/path (or "/" if none); NULL if not a ws:// URL. */
static const char *ws_url_path(const char *url)
{
	const char *slash;

	if (!url || strncasecmp(url, "ws://", 5) != 0)
		return NULL;
	slash = strchr(url + 5, '/');
	return slash ? slash : "/";
}

static char *target_path(const char *url, const char *id)
{
	const char *p = ws_url_path(url);
	char *s;

	if (p && path_ok(p))
		return strdup(p);
	if (strlen(id) > 2046 || strchr(id, '/'))
		return NULL;
	if (asprintf(&s, "/%s", id) < 0)
		return NULL;
	if (!path_ok(s)) {
		free(s);
		return NULL;
	}
	return s;
}

static void free_target(struct inspector_target *t)
{
	free(t->id);
	free(t->title);
	free(t->type);
	free(t->url);
	free(t->ws_path);
}

void inspector__free_targets(struct inspector_target *targets, size_t n)
{
	size_t i;

	if (!targets)
		return;
	for (i = 0; i < n; i++)
		free_target(&targets[i]);
	free(targets);
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

/*
 * Parse all of text[len] as one JSON value, up to INSPECTOR_JSON_DEPTH deep;
 * NULL (and err) when it is not exactly one value.
 */
static json_object *parse_json(const char *text, size_t len, int *rc, char *err, size_t errlen)
{
	struct json_tokener *tok;
	json_object *o;
	size_t end;
	char ex[48];

	if (len > INT_MAX) {
		*rc = -EMSGSIZE;
		errmsg__set(err, errlen, "JSON text of %zu bytes", len);
		return NULL;
	}
	tok = json_tokener_new_ex(INSPECTOR_JSON_DEPTH);
	if (!tok) {
		*rc = -ENOMEM;
		errmsg__set(err, errlen, "out of memory");
		return NULL;
	}
	o = json_tokener_parse_ex(tok, text, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (o) {
		while (end < len && isspace((unsigned char)text[end]))
			end++;
		if (end < len) {
			json_object_put(o);
			o = NULL;
		}
	}
	json_tokener_free(tok);
	if (!o) {
		*rc = -EBADMSG;
		errmsg__excerpt(ex, sizeof(ex), text, len);
		errmsg__set(err, errlen, "not JSON: \"%s\"", ex);
	}
	return o;
}

int inspector__parse_list(const char *json, size_t len, struct inspector_target **targets,
			  size_t *n, char *err, size_t errlen)
{
	struct inspector_target *t = NULL;
	json_object *root;
	size_t i, count;
	int rc = 0;

	*targets = NULL;
	*n = 0;
	root = parse_json(json, len, &rc, err, errlen);
	if (!root)
		return rc;
	if (!json_object_is_type(root, json_type_array)) {
		errmsg__set(err, errlen, "target list is not a JSON array");
		rc = -EBADMSG;
		goto out;
	}
	count = json_object_array_length(root);
	if (count) {
		t = calloc(count, sizeof(*t));
		if (!t) {
			errmsg__set(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < count; i++) {
		json_object *e = json_object_array_get_idx(root, i);
		const char *id;

		if (!json_object_is_type(e, json_type_object)) {
			errmsg__set(err, errlen, "target %zu is not a JSON object", i);
			rc = -EBADMSG;
			goto out;
		}
		id = str_field(e, "id");
		if (!id || !*id) {
			errmsg__set(err, errlen, "target %zu has no \"id\"", i);
			rc = -EBADMSG;
			goto out;
		}
		t[i].id = strdup(id);
		t[i].title = dup_or_empty(str_field(e, "title"));
		t[i].type = dup_or_empty(str_field(e, "type"));
		t[i].url = dup_or_empty(str_field(e, "url"));
		t[i].ws_path = target_path(str_field(e, "webSocketDebuggerUrl"), id);
		if (!t[i].id || !t[i].title || !t[i].type || !t[i].url) {
			errmsg__set(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
	}
	*targets = t;
	*n = count;
	t = NULL;
out:
	if (t)
		inspector__free_targets(t, count);
	json_object_put(root);
	return rc;
}

int inspector__list(const char *hostport, int netns_fd, int timeout_ms,
		    struct inspector_target **targets, size_t *n, char *err, size_t errlen)
{
	char perr[160], *body;
	size_t blen;
	int rc;

	*targets = NULL;
	*n = 0;
	rc = inspector__http_get(hostport, netns_fd, "/json/list", timeout_ms, &body, &blen, err,
				 errlen);
	if (rc < 0)
		return rc;
	rc = inspector__parse_list(body, blen, targets, n, perr, sizeof(perr));
	if (rc < 0)
		errmsg__set(err, errlen, "%s: /json/list: %s", hostport, perr);
	free(body);
	return rc;
}

/* ---- sessions ---- */

struct inspector_session {
	struct ws_conn *ws;
	int64_t next_id;
	char peer[96];		/* host:port/path, for messages */
};

int inspector__open(const char *hostport, int netns_fd, const char *ws_path, int timeout_ms,
		    struct inspector_session **session, char *err, size_t errlen)
{
	struct inspector_session *s;
	struct inspector_addr a;
	char werr[200];
	int rc;

	*session = NULL;
	rc = inspector__parse_hostport(hostport, &a, err, errlen);
	if (rc < 0)
		return rc;
	if (!ws_path) {
		errmsg__set(err, errlen, "%s: target has no usable WebSocket path", hostport);
		return -EINVAL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = ws__connect(a.host, a.port, netns_fd, ws_path, timeout_ms, &s->ws, werr,
			 sizeof(werr));
	if (rc < 0) {
		errmsg__set(err, errlen, "%s%s: %s", hostport, ws_path, werr);
		free(s);
		return rc;
	}
	errmsg__excerpt(s->peer, sizeof(s->peer), hostport, strlen(hostport));
	if (strlen(s->peer) + strlen(ws_path) < sizeof(s->peer))
		strcat(s->peer, ws_path);
	*session = s;
	return 0;
}

void inspector__close(struct inspector_session *s)
{
	if (!s)
		return;
	ws__close(s->ws);
	free(s);
}

int inspector__parse_reply(const char *text, size_t len, int64_t id, json_object **result,
			   char *err, size_t errlen)
{
	json_object *root, *jid, *e, *r;
	char ex[48], msg[160];
	int rc = 0;

	if (result)
		*result = NULL;
	root = parse_json(text, len, &rc, err, errlen);
	if (!root)
		return rc;
	if (!json_object_is_type(root, json_type_object)) {
		errmsg__excerpt(ex, sizeof(ex), text, len);
		errmsg__set(err, errlen, "not a JSON object: \"%s\"", ex);
		rc = -EBADMSG;
		goto out;
	}
	/* Events have no id; replies to other ids are someone else's. */
	if (!json_object_object_get_ex(root, "id", &jid) ||
	    !json_object_is_type(jid, json_type_int) || json_object_get_int64(jid) != id)
		goto out;
	if (json_object_object_get_ex(root, "error", &e)) {
		json_object *m = NULL, *c = NULL;

		if (json_object_is_type(e, json_type_object) &&
		    json_object_object_get_ex(e, "message", &m) &&
		    json_object_is_type(m, json_type_string)) {
			errmsg__excerpt(msg, sizeof(msg), json_object_get_string(m),
				(size_t)json_object_get_string_len(m));
			if (json_object_object_get_ex(e, "code", &c) &&
			    json_object_is_type(c, json_type_int))
				errmsg__set(err, errlen, "%s (code %lld)", msg,
				       (long long)json_object_get_int64(c));
			else
				errmsg__set(err, errlen, "%s", msg);
		} else {
			errmsg__set(err, errlen, "error reply without a message");
		}
		rc = -EREMOTEIO;
		goto out;
	}
	if (json_object_object_get_ex(root, "result", &r)) {
		if (!json_object_is_type(r, json_type_object)) {
			errmsg__set(err, errlen, "reply %lld: \"result\" is not an object",
			       (long long)id);
			rc = -EBADMSG;
			goto out;
		}
		if (result)
			*result = json_object_get(r);
	} else if (result) {
		/*
		 * workerd answers the Profiler methods it implements itself by
		 * echoing the request ({"id":1,"method":"Profiler.enable",
		 * "params":{}}), and Profiler.stop before start with no result.
		 */
		*result = json_object_new_object();
		if (!*result) {
			errmsg__set(err, errlen, "out of memory");
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = 1;
out:
	json_object_put(root);
	return rc;
}

/* The one line for a failed send or wait: what the peer did, or did not do. */
static void fail_message(int rc, const char *method, const char *werr, const char *peer,
			 int timeout_ms, uint64_t others, char *err, size_t errlen)
{
	if (rc == -ECONNRESET) {
		const char *detail = strstr(werr, " (code");

		errmsg__set(err, errlen, "%s: inspector closed the connection%s", method,
			    detail ? detail : "");
	} else if (rc == -ETIMEDOUT && others) {
		errmsg__set(err, errlen,
			    "%s: no reply within %d ms from %s, which sent %" PRIu64
			    " other messages meanwhile", method, timeout_ms, peer, others);
	} else if (rc == -ETIMEDOUT) {
		errmsg__set(err, errlen, "%s: no reply within %d ms from %s", method, timeout_ms,
			    peer);
	} else {
		errmsg__set(err, errlen, "%s: %s", method, werr);
	}
}

int inspector__send(struct inspector_session *s, const char *method, json_object *params,
		    int timeout_ms, int64_t *id, char *err, size_t errlen)
{
	json_object *req;
	char werr[200];
	const char *text;
	size_t text_len;
	int rc;

	*id = 0;
	if (!method || !*method || (params && !json_object_is_type(params, json_type_object))) {
		errmsg__set(err, errlen, "%s: bad method or params", method ? method : "(null)");
		return -EINVAL;
	}
	req = json_object_new_object();
	if (json__put(req, "id", json_object_new_int64(s->next_id + 1)) ||
	    json__put(req, "method", json_object_new_string(method)) ||
	    (params && json__put(req, "params", json_object_get(params))) ||
	    !(text = json__dump(req, false, &text_len))) {
		json_object_put(req);
		errmsg__set(err, errlen, "%s: out of memory", method);
		return -ENOMEM;
	}
	rc = ws__send_text(s->ws, text, text_len, timeout_ms, werr, sizeof(werr));
	json_object_put(req);
	if (rc < 0) {
		fail_message(rc, method, werr, s->peer, timeout_ms, 0, err, errlen);
		return rc;
	}
	*id = ++s->next_id;
	return 0;
}

/* Wait until deadline (monotime_ms(); negative: forever) for reply id; messages name timeout_ms. */
static int wait_reply(struct inspector_session *s, const char *method, int64_t id,
		      int64_t deadline, int timeout_ms, json_object **result, char *err,
		      size_t errlen)
{
	uint64_t first = ws__received(s->ws), others = 0;
	char werr[200] = "";
	int rc;

	if (result)
		*result = NULL;
	for (;;) {
		int64_t left = deadline < 0 ? -1 : deadline - (int64_t)monotime_ms();
		char *msg;
		size_t len;

		/*
		 * One deadline for the whole call, checked whatever arrives: a
		 * peer that streams events never lets a read wait, so a
		 * per-read timeout alone would never fire.
		 */
		if (deadline >= 0 && left <= 0 && others) {
			rc = -ETIMEDOUT;
			break;
		}
		if (ws__received(s->ws) - first > INSPECTOR_MAX_CALL_BYTES) {
			errmsg__set(err, errlen,
				    "%s: %s sent over %u MiB (%" PRIu64 " messages) and no reply",
				    method, s->peer, INSPECTOR_MAX_CALL_BYTES >> 20, others);
			return -EMSGSIZE;
		}
		if (deadline >= 0 && left < 0)
			left = 0;
		rc = ws__recv_text(s->ws, (int)(left > INT_MAX ? INT_MAX : left), &msg, &len,
				   werr, sizeof(werr));
		if (rc < 0)
			break;
		rc = inspector__parse_reply(msg, len, id, result, werr, sizeof(werr));
		free(msg);
		if (rc == 1)
			return 0;
		if (rc < 0) {
			errmsg__set(err, errlen, "%s: %s", method, werr);
			return rc;
		}
		others++;
	}
	fail_message(rc, method, werr, s->peer, timeout_ms, others, err, errlen);
	return rc;
}

int inspector__wait(struct inspector_session *s, const char *method, int64_t id, int timeout_ms,
		    json_object **result, char *err, size_t errlen)
{
	return wait_reply(s, method, id, ws__deadline(timeout_ms), timeout_ms, result, err, errlen);
}

int inspector__call(struct inspector_session *s, const char *method, json_object *params,
		    int timeout_ms, json_object **result, char *err, size_t errlen)
{
	/* one deadline for the send and the wait */
	int64_t deadline = ws__deadline(timeout_ms), id;
	int rc;

	if (result)
		*result = NULL;
	rc = inspector__send(s, method, params, timeout_ms, &id, err, errlen);
	if (rc < 0)
		return rc;
	return wait_reply(s, method, id, deadline, timeout_ms, result, err, errlen);
}
