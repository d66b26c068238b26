// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * server: libmicrohttpd handlers for `isoprof serve`; see server.h.
 *
 * Shared state is the admission counters (daemon_admit, locked inside) and
 * the stop flag; everything else belongs to one request, from the first
 * call of the handler to the completion callback.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "lib/fileio.h"
#include "lib/monotime.h"
#include "lib/timetext.h"
#include "proto/pprof_merge.h"
#include "user/record_exit.h"
#include "user/report/web_assets.h"
#include "user/report/window_merge.h"
#include "user/serve/api.h"
#include "user/serve/auth_backoff.h"
#include "user/serve/daemon.h"
#include "user/serve/privsep.h"
#include "user/serve/server.h"

#define BODY_MAX (16 * 1024)
#define CONNECTION_LIMIT 128
#define PER_ADDRESS_LIMIT 8
/* no byte in or out for this long: libmicrohttpd closes the connection */
#define CONNECTION_TIMEOUT_S 30
/* a request's head and body, from the connection (or the previous response) on */
#define REQUEST_DEADLINE_MS 10000
#define REAPER_MS 250
#define BACKOFF_ENTRIES 256
#define MHD_LOG_PER_S 10
#define RAW_TYPE "application/vnd.google.protobuf"

/*
 * The page's policy: its own scripts, styles and API only (the page has no
 * inline script or style; it sets canvas sizes through the CSSOM, which a
 * policy does not govern), no frames, no forms, no plugins.
 */
#define PAGE_CSP "default-src 'none'; script-src 'self'; style-src 'self'; " \
		 "connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; " \
		 "frame-ancestors 'none'"
#define API_CSP "default-src 'none'; frame-ancestors 'none'; sandbox"

/* A connection, for the request deadline (libmicrohttpd's timeout is per byte). */
struct conn_watch {
	struct conn_watch *prev, *next;
	int fd;
	uint64_t since_ms;		/* connected, or the last response completed */
	bool busy;			/* the request is in: it is being answered */
	bool cut;
};

struct server {
	struct MHD_Daemon *mhd;
	bool has_token;
	uint8_t token_digest[SHA256_DIGEST_LEN];
	struct daemon_admit *admit;
	struct auth_backoff *backoff;
	int helper;
	int family;
	FILE *log;
	atomic_bool stopping;

	pthread_mutex_t watch_lock;
	struct conn_watch *watches;
	pthread_t reaper;
	bool reaper_started;
	atomic_bool reaper_stop;

	pthread_mutex_t log_lock;
	uint64_t log_second;
	unsigned int log_lines, log_dropped;

	bool has_windows;
	int windows_dir;
	pthread_mutex_t merge_lock;	/* one merge of kept windows at a time */
};

struct request {
	uint64_t start_ms;
	char method[16];
	char path[512];			/* escaped for the log */
	char client[INET6_ADDRSTRLEN + 16];	/* address, or "uid:N" on a unix socket */
	unsigned int status;
	char note[96];			/* for the log: what a capture did */
	bool responded;
	bool too_large;
	struct api_route route;
	char *body;
	size_t body_len;
};

/* ---- responses ---------------------------------------------------------- */

static enum MHD_Result queue(struct MHD_Connection *conn, struct request *req,
			     unsigned int status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "Content-Security-Policy",
				req->route.kind == API_ROUTE_ASSET && status == 200 ? PAGE_CSP :
										      API_CSP);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	req->status = status;
	req->responded = true;
	return ret;
}

static enum MHD_Result send_error_full(struct MHD_Connection *conn, struct request *req,
				       enum api_code code, const char *message,
				       unsigned int retry_after, const char *allow)
{
	unsigned int status = api__status(code);
	struct MHD_Response *r;
	char *body, num[16];

	body = api__envelope(code, message);
	if (!body)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (retry_after) {
		snprintf(num, sizeof(num), "%u", retry_after);
		MHD_add_response_header(r, "Retry-After", num);
	}
	if (allow)
		MHD_add_response_header(r, "Allow", allow);
	if (status == 401)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"isoprof\"");
	return queue(conn, req, status, r);
}

static enum MHD_Result send_error(struct MHD_Connection *conn, struct request *req,
				  enum api_code code, const char *message)
{
	return send_error_full(conn, req, code, message, 0, NULL);
}

static enum MHD_Result send_asset(struct MHD_Connection *conn, struct request *req,
				  const char *path)
{
	const struct web_asset *a = web_assets__find(path);
	struct MHD_Response *r;

	if (!a)
		return send_error(conn, req, API_E_NO_ROUTE, "no such path");
	r = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", a->content_type);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	return queue(conn, req, 200, r);
}

/* ---- the helper's answers ------------------------------------------------- */

struct cancel_ctx {
	struct server *srv;
	int client_fd;
	bool client_gone;
};

/* Stop the child when the daemon stops or the client hangs up (the page's Cancel). */
static bool capture_cancelled(void *arg)
{
	struct cancel_ctx *c = arg;
	struct pollfd p;

	if (atomic_load(&c->srv->stopping))
		return true;
	if (c->client_fd < 0)
		return false;
	p = (struct pollfd){ .fd = c->client_fd, .events = POLLRDHUP };
	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
		c->client_gone = true;
		return true;
	}
	return false;
}

static int client_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	return ci ? ci->connect_fd : -1;
}

/* A failed child as an error response: its status says which, its stderr says why. */
static enum MHD_Result child_error(struct MHD_Connection *conn, struct request *req,
				   const struct privsep_result *ch, const char *what)
{
	char msg[API_MESSAGE_MAX], full[API_MESSAGE_MAX + 64];
	const char *prefer;
	enum api_code code;
	int st = -1;

	if (WIFEXITED(ch->wait_status))
		st = WEXITSTATUS(ch->wait_status);
	code = api__record_exit_code(st, &prefer);
	if (!api__child_message(ch->err, ch->err_len, prefer, msg, sizeof(msg))) {
		if (WIFSIGNALED(ch->wait_status))
			snprintf(msg, sizeof(msg), "%s was killed by signal %d", what,
				 WTERMSIG(ch->wait_status));
		else
			snprintf(msg, sizeof(msg), "%s failed with exit status %d", what, st);
	}
	if (code == API_E_NO_SAMPLES && !strstr(msg, "retry")) {
		snprintf(full, sizeof(full), "%s; send traffic and retry", msg);
		return send_error(conn, req, code, full);
	}
	return send_error(conn, req, code, msg);
}

/* The helper's descriptor as the body: streamed, never read into memory here. */
static struct MHD_Response *fd_response(int *fd)
{
	struct MHD_Response *r;
	struct stat st;

	if (*fd < 0 || fstat(*fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)
		return NULL;
	/* libmicrohttpd closes the descriptor with the response */
	r = MHD_create_response_from_fd((size_t)st.st_size, *fd);
	if (r)
		*fd = -1;
	return r;
}

static enum MHD_Result helper_failed(struct MHD_Connection *conn, struct request *req,
				     const char *what, int err)
{
	char msg[API_MESSAGE_MAX];

	snprintf(req->note, sizeof(req->note), "%s: helper: %s", what, strerror(-err));
	if (err == -EAGAIN)
		return send_error_full(conn, req, API_E_TOO_MANY,
				       "every capture slot is in use; retry later", 1, NULL);
	snprintf(msg, sizeof(msg), "cannot run %s: %s", what, strerror(-err));
	return send_error(conn, req, API_E_INTERNAL, msg);
}

static enum MHD_Result serve_targets(struct server *srv, struct MHD_Connection *conn,
				     struct request *req)
{
	struct cancel_ctx cc = { .srv = srv, .client_fd = -1 };
	struct privsep_result res;
	struct MHD_Response *r;
	enum MHD_Result ret;
	int err;

	err = privsep__targets(srv->helper, capture_cancelled, &cc, &res);
	if (err)
		return helper_failed(conn, req, "isoprof targets", err);
	if (res.fd < 0) {
		if (res.out_truncated)
			ret = send_error(conn, req, API_E_INTERNAL, "the target list is too long");
		else
			ret = child_error(conn, req, &res, "isoprof targets");
		privsep_result__free(&res);
		return ret;
	}
	r = fd_response(&res.fd);
	privsep_result__free(&res);
	if (!r)
		return send_error(conn, req, API_E_INTERNAL, "isoprof targets wrote nothing");
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	return queue(conn, req, 200, r);
}

/* ---- kept windows ------------------------------------------------------- */

#define QUERY_MAX 8192

struct query_buf {
	char s[QUERY_MAX];
	size_t len;
	bool too_long;
};

/*
 * The query as sent, again: libmicrohttpd has split it into arguments (with
 * '+' already a space, and no other decoding: keep_escaped()), which
 * api__parse_profiles_query() and api__parse_pull_query() take joined.
 */
static enum MHD_Result join_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				const char *value)
{
	struct query_buf *q = cls;
	int n;

	(void)kind;
	n = snprintf(q->s + q->len, sizeof(q->s) - q->len, "%s%s%s%s", q->len ? "&" : "", key,
		     value ? "=" : "", value ? value : "");
	if (n < 0 || (size_t)n >= sizeof(q->s) - q->len) {
		q->too_long = true;
		return MHD_NO;
	}
	q->len += (size_t)n;
	return MHD_YES;
}

/* The request's query joined again (calloc()ed; too_long when over QUERY_MAX), or NULL. */
static struct query_buf *request_query(struct MHD_Connection *conn)
{
	struct query_buf *qb = calloc(1, sizeof(*qb));

	if (qb)
		MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, join_arg, qb);
	return qb;
}

struct skip_note {
	size_t skipped;
	char first[160];
};

static void skip_note(void *ctx, const char *name, const char *why)
{
	struct skip_note *n = ctx;

	if (!n->skipped++)
		snprintf(n->first, sizeof(n->first), "%s: %s", name, why);
}

static enum MHD_Result serve_windows(struct server *srv, struct MHD_Connection *conn,
				     struct request *req)
{
	struct api_profiles_req q;
	struct window_select sel;
	struct skip_note sn = { 0 };
	struct query_buf *qb;
	struct pprof_merge *m;
	struct MHD_Response *r;
	char msg[API_MESSAGE_MAX], disp[128], part[64], num[24];
	size_t matched = 0, merged = 0, len;
	enum api_code code;
	const char *accept;
	uint8_t *data = NULL;
	bool raw;
	int ret;

	if (!srv->has_windows)
		return send_error(conn, req, API_E_NO_ROUTE,
				  "this daemon keeps no windows: it was started without --out-dir");
	qb = request_query(conn);
	if (!qb)
		return MHD_NO;
	if (qb->too_long) {
		free(qb);
		return send_error(conn, req, API_E_BAD_PATH, "the query is too long");
	}
	ret = api__parse_profiles_query(qb->s, (int64_t)time(NULL), &q, &code, msg, sizeof(msg));
	free(qb);
	if (ret)
		return send_error(conn, req, code, msg);
	accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	raw = accept && strcasestr(accept, RAW_TYPE);
	sel = (struct window_select){ .script = q.script, .version = q.version[0] ? q.version : NULL,
				      .from_s = q.from_s, .until_s = q.until_s };

	m = pprof_merge__new();
	if (!m)
		return MHD_NO;
	pthread_mutex_lock(&srv->merge_lock);
	ret = window_merge__dir(m, srv->windows_dir, &sel, &matched, &merged, skip_note, &sn, msg,
				sizeof(msg));
	if (!ret && merged)
		ret = pprof_merge__serialize(m, !raw, &data, &len);
	pthread_mutex_unlock(&srv->merge_lock);
	pprof_merge__free(m);

	snprintf(req->note, sizeof(req->note), "merged %zu of %zu windows%s%.40s", merged, matched,
		 sn.skipped ? "; skipped " : "", sn.first);
	if (ret == -ENOMEM)
		return send_error(conn, req, API_E_INTERNAL, "out of memory");
	if (ret)
		return send_error(conn, req, API_E_INTERNAL, msg);
	if (!merged) {
		char from[TIMETEXT_RFC3339_LEN], until[TIMETEXT_RFC3339_LEN];

		timetext__rfc3339(q.from_s, from, sizeof(from));
		timetext__rfc3339(q.until_s, until, sizeof(until));
		snprintf(msg, sizeof(msg), "no window of script %.200s%s%.100s from %s to %s%s", q.script,
			 q.version[0] ? " version " : "", q.version, from, until,
			 matched ? " could be read" : "");
		return send_error(conn, req, API_E_NO_WINDOWS, msg);
	}
	r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(data);
		return MHD_NO;
	}
	fileio__name_part(q.script, part, sizeof(part));
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s-cpu%s\"", part,
		 raw ? ".pb" : ".pb.gz");
	snprintf(num, sizeof(num), "%zu", merged);
	MHD_add_response_header(r, "Content-Type", raw ? RAW_TYPE : "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", disp);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Isoprof-Windows", num);
	return queue(conn, req, 200, r);
}

/* ---- captures ----------------------------------------------------------- */

/* One capture (POST .../profile or a pull), from admission to the response. */
struct capture_req {
	struct api_profile_req p;
	bool raw;			/* the client asked for uncompressed protobuf */
	bool pull;			/* GET /debug/pprof/profile */
	int slot;			/* daemon_admit's, or -1 */
};

static enum MHD_Result serve_profile_file(struct MHD_Connection *conn, struct request *req,
					  const struct capture_req *cr, int *fd)
{
	char disp[128], part[64];
	struct MHD_Response *r;

	r = fd_response(fd);
	if (!r)
		return send_error(conn, req, API_E_INTERNAL,
				  "record exited 0 but wrote no profile");
	if (cr->pull) {
		/* what Go's net/http/pprof names it */
		snprintf(disp, sizeof(disp), "attachment; filename=\"profile\"");
	} else {
		fileio__name_part(req->route.script, part, sizeof(part));
		snprintf(disp, sizeof(disp), "attachment; filename=\"%s-%s%s\"", part,
			 cr->p.type == API_PROFILE_HEAP ? "heap" : "cpu",
			 cr->raw ? ".pb" : ".pb.gz");
	}
	MHD_add_response_header(r, "Content-Type",
				cr->raw ? RAW_TYPE : "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", disp);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	return queue(conn, req, 200, r);
}

/*
 * The target admission counts captures by, and how a 429 names it: a
 * script and version (as sent; a pull without version is its own target),
 * a pid, or every V8 target.  Names hold no control character, so the
 * keys that start with '\n' are no script's.
 */
static int capture_target(const struct privsep_capture *pc, char **key, char *what,
			  size_t whatlen)
{
	int n;

	if (pc->script) {
		n = asprintf(key, "%s\n%s", pc->script, pc->version ? pc->version : "");
		if (pc->version)
			snprintf(what, whatlen, "%s version %s", pc->script, pc->version);
		else
			snprintf(what, whatlen, "%s (any version)", pc->script);
	} else if (pc->pid) {
		n = asprintf(key, "\npid\n%d", (int)pc->pid);
		snprintf(what, whatlen, "pid %d", (int)pc->pid);
	} else {
		n = asprintf(key, "\nall");
		snprintf(what, whatlen, "every V8 target");
	}
	return n < 0 ? -ENOMEM : 0;
}

/* A slot for the capture, or the 429 that says when to retry (MHD_NO: none sent). */
static enum MHD_Result admit(struct server *srv, struct MHD_Connection *conn,
			     struct request *req, struct capture_req *cr,
			     const struct privsep_capture *pc, bool *admitted)
{
	char msg[API_MESSAGE_MAX], what[API_MESSAGE_MAX - 64], *target;
	unsigned int retry;

	*admitted = false;
	if (capture_target(pc, &target, what, sizeof(what)))
		return MHD_NO;
	cr->slot = daemon_admit__acquire(srv->admit, target, cr->p.duration_ms, monotime_ms(),
					 &retry);
	free(target);
	switch (cr->slot) {
	case -EBUSY:
		snprintf(msg, sizeof(msg), "a capture of %s is running; retry after it ends",
			 what);
		return send_error_full(conn, req, API_E_TARGET_BUSY, msg, retry, NULL);
	case -EAGAIN:
		return send_error_full(conn, req, API_E_TOO_MANY,
				       "every capture slot is in use; retry later", retry, NULL);
	case -EDQUOT:
		return send_error_full(conn, req, API_E_RATE_LIMIT,
				       "capture rate limit reached; retry later", retry, NULL);
	default:
		*admitted = cr->slot >= 0;
		return MHD_NO;
	}
}

/* What the finished child means for the client. */
static enum MHD_Result capture_response(struct MHD_Connection *conn, struct request *req,
					const struct capture_req *cr, const struct cancel_ctx *cc,
					struct privsep_result *ch)
{
	int st = WIFEXITED(ch->wait_status) ? WEXITSTATUS(ch->wait_status) :
					      -WTERMSIG(ch->wait_status);

	snprintf(req->note, sizeof(req->note), "record %s %ld ms: %s %d%s",
		 cr->p.type == API_PROFILE_HEAP ? "heap" : "cpu", cr->p.duration_ms,
		 st >= 0 ? "exit" : "signal", st < 0 ? -st : st,
		 ch->cancelled ? (cc->client_gone ? ", client gone" : ", daemon stopping") :
		 ch->timed_out ? ", timed out" : "");
	if (ch->cancelled && !cc->client_gone)
		return send_error(conn, req, API_E_SHUTTING_DOWN,
				  "the daemon is stopping; the capture was cancelled");
	if (ch->cancelled)
		return send_error(conn, req, API_E_INTERNAL,
				  "the capture was cancelled: the client closed the connection");
	if (ch->timed_out)
		return send_error(conn, req, API_E_INTERNAL, "record did not finish in time");
	if (st == RECORD_EXIT_OK)
		return serve_profile_file(conn, req, cr, &ch->fd);
	return child_error(conn, req, ch, "record");
}

/* Admission, the helper's capture, its answer: the same for a POST and a pull. */
static enum MHD_Result run_capture(struct server *srv, struct MHD_Connection *conn,
				   struct request *req, struct capture_req *cr,
				   const struct privsep_capture *pc)
{
	struct cancel_ctx cc = { .srv = srv, .client_fd = client_fd(conn) };
	struct privsep_result ch;
	enum MHD_Result ret;
	bool admitted;
	int err;

	ret = admit(srv, conn, req, cr, pc, &admitted);
	if (!admitted)
		return ret;
	err = privsep__capture(srv->helper, pc, capture_cancelled, &cc, &ch);
	if (err) {
		ret = helper_failed(conn, req, "record", err);
	} else {
		ret = capture_response(conn, req, cr, &cc, &ch);
		privsep_result__free(&ch);
	}
	daemon_admit__release(srv->admit, cr->slot);
	return ret;
}

static enum MHD_Result serve_profile(struct server *srv, struct MHD_Connection *conn,
				     struct request *req)
{
	struct capture_req cr = { .slot = -1 };
	struct privsep_capture pc;
	char msg[API_MESSAGE_MAX];
	enum api_code code;
	const char *accept;

	if (req->too_large) {
		snprintf(msg, sizeof(msg), "the body is larger than %d bytes", BODY_MAX);
		return send_error(conn, req, API_E_TOO_LARGE, msg);
	}
	if (api__parse_profile_body(req->body, req->body_len, &cr.p, &code, msg, sizeof(msg)))
		return send_error(conn, req, code, msg);
	accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	cr.raw = accept && strcasestr(accept, RAW_TYPE);
	pc = (struct privsep_capture){
		.script = req->route.script, .version = req->route.version,
		.namespace_id = cr.p.has_actor ? cr.p.namespace_id : NULL,
		.actor_id = cr.p.has_actor ? cr.p.actor_id : NULL,
		.duration_ms = cr.p.duration_ms, .type = cr.p.type, .raw = cr.raw,
	};
	return run_capture(srv, conn, req, &cr, &pc);
}

/* GET /debug/pprof/profile: a CPU profile of the next N seconds, gzip, as Go serves it. */
static enum MHD_Result serve_pull(struct server *srv, struct MHD_Connection *conn,
				  struct request *req)
{
	struct capture_req cr = { .pull = true, .slot = -1 };
	struct privsep_capture pc;
	struct api_pull_req q;
	struct query_buf *qb;
	char msg[API_MESSAGE_MAX];
	enum api_code code;
	int ret;

	qb = request_query(conn);
	if (!qb)
		return MHD_NO;
	if (qb->too_long) {
		free(qb);
		return send_error(conn, req, API_E_BAD_PATH, "the query is too long");
	}
	ret = api__parse_pull_query(qb->s, &q, &code, msg, sizeof(msg));
	free(qb);
	if (ret)
		return send_error(conn, req, code, msg);
	cr.p = (struct api_profile_req){ .duration_ms = q.seconds * 1000, .type = API_PROFILE_CPU };
	pc = (struct privsep_capture){
		.script = q.script[0] ? q.script : NULL, .version = q.version[0] ? q.version : NULL,
		.pid = q.pid, .duration_ms = cr.p.duration_ms, .type = API_PROFILE_CPU,
	};
	return run_capture(srv, conn, req, &cr, &pc);
}

/* ---- requests ----------------------------------------------------------- */

/*
 * Without a token the daemon trusts whoever can reach loopback; a web page
 * in the user's browser can too.  A Host that is not loopback (DNS
 * rebinding) or an Origin other than the daemon's own (a cross-site form)
 * is refused.
 */
static bool browser_forbidden(struct server *srv, struct MHD_Connection *conn)
{
	const char *host, *origin;

	if (srv->has_token)
		return false;
	host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Host");
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (host && !api__host_is_loopback(host))
		return true;
	return origin && !api__origin_matches(origin, host);
}

static struct request *new_request(struct MHD_Connection *conn, const char *url,
				   const char *method)
{
	const union MHD_ConnectionInfo *ci;
	struct request *req = calloc(1, sizeof(*req));

	if (!req)
		return NULL;
	req->start_ms = monotime_ms();
	snprintf(req->method, sizeof(req->method), "%s", method);
	api__log_path(url, req->path, sizeof(req->path));
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)ci->client_addr)->sin_addr,
			  req->client, sizeof(req->client));
	else if (ci && ci->client_addr && ci->client_addr->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)ci->client_addr)->sin6_addr,
			  req->client, sizeof(req->client));
	if (!req->client[0]) {
		/* a unix socket: the peer's uid names the client (and its failed tokens) */
		struct ucred cred;
		socklen_t len = sizeof(cred);
		int fd = client_fd(conn);

		if (fd >= 0 && !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len))
			snprintf(req->client, sizeof(req->client), "uid:%u", (unsigned int)cred.uid);
		else
			snprintf(req->client, sizeof(req->client), "unix");
	}
	return req;
}

/*
 * The first call for a request, with its headers: refuse it, answer it (the
 * page, targets), or take its body (a profile request: MHD_YES, nothing
 * queued).
 */
static enum MHD_Result start_request(struct server *srv, struct MHD_Connection *conn,
				     struct request *req, const char *url, const char *method)
{
	char err[256];
	const char *auth, *clen;
	bool public;
	int ret;

	if (atomic_load(&srv->stopping))
		return send_error(conn, req, API_E_SHUTTING_DOWN, "the daemon is stopping");
	if (browser_forbidden(srv, conn))
		return send_error(conn, req, API_E_FORBIDDEN_ORIGIN,
				  "the Host or Origin header is not this loopback daemon");
	ret = api__route(method, url, &req->route, err, sizeof(err));
	/* the page itself is public; everything else needs the token */
	public = ret != -ENOENT && (req->route.kind == API_ROUTE_ASSET ||
				    req->route.kind == API_ROUTE_NO_CONTENT);
	if (srv->has_token && !public) {
		uint64_t now = monotime_ms();
		unsigned int wait = auth_backoff__check(srv->backoff, req->client, now);

		/* a client that keeps guessing learns nothing more until its delay is over */
		if (wait) {
			snprintf(req->note, sizeof(req->note), "auth backoff %u s", wait);
			return send_error_full(conn, req, API_E_AUTH_BACKOFF,
					       "too many wrong tokens from this client; retry later",
					       wait, NULL);
		}
		auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
		switch (api__check_bearer(auth, srv->token_digest)) {
		case 0:
			auth_backoff__success(srv->backoff, req->client);
			break;
		case -ENOENT:
			return send_error(conn, req, API_E_NO_TOKEN,
					  "missing 'Authorization: Bearer TOKEN'");
		default:
			auth_backoff__fail(srv->backoff, req->client, now);
			return send_error(conn, req, API_E_BAD_TOKEN, "wrong token");
		}
	}
	switch (ret) {
	case 0:
		break;
	case -EPERM:
		snprintf(err, sizeof(err), "method %s not allowed here; use %s", req->method,
			 req->route.allow);
		return send_error_full(conn, req, API_E_METHOD, err, 0, req->route.allow);
	case -EINVAL:
		return send_error(conn, req, API_E_BAD_PATH, err);
	case -ENOENT:
		return send_error(conn, req, API_E_NO_ROUTE, "no such path");
	default:
		return MHD_NO;
	}
	switch (req->route.kind) {
	case API_ROUTE_ASSET:
		return send_asset(conn, req, url);
	case API_ROUTE_NO_CONTENT:
		return queue(conn, req, 204,
			     MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT));
	case API_ROUTE_TARGETS:
		return serve_targets(srv, conn, req);
	case API_ROUTE_PULL:
		return serve_pull(srv, conn, req);
	case API_ROUTE_PROFILES:
		return serve_windows(srv, conn, req);
	default:
		break;
	}
	clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
	/* answered before the body is read, so a huge body is never taken in */
	if (clen && strtoull(clen, NULL, 10) > BODY_MAX) {
		snprintf(err, sizeof(err), "the body is larger than %d bytes", BODY_MAX);
		return send_error(conn, req, API_E_TOO_LARGE, err);
	}
	return MHD_YES;
}

/* Up to BODY_MAX bytes of the body; past that only the fact that there was more. */
static enum MHD_Result take_body(struct request *req, const char *data, size_t n)
{
	if (!req->too_large && req->body_len + n <= BODY_MAX) {
		if (!req->body) {
			req->body = malloc(BODY_MAX + 1);
			if (!req->body)
				return MHD_NO;
		}
		memcpy(req->body + req->body_len, data, n);
		req->body_len += n;
	} else {
		req->too_large = true;
	}
	return MHD_YES;
}

static struct conn_watch *watch_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci;

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* The request is in: its answer may take as long as a capture does. */
static void watch_busy(struct server *srv, struct MHD_Connection *conn, bool busy)
{
	struct conn_watch *w = watch_of(conn);

	if (!w)
		return;
	pthread_mutex_lock(&srv->watch_lock);
	w->busy = busy;
	w->since_ms = monotime_ms();
	pthread_mutex_unlock(&srv->watch_lock);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *srv = cls;
	struct request *req = *con_cls;
	enum MHD_Result ret;

	(void)version;
	if (!req) {
		req = new_request(conn, url, method);
		if (!req)
			return MHD_NO;
		*con_cls = req;
		/* a GET is in once its head is; a POST once its body is (below) */
		if (strcmp(method, "POST"))
			watch_busy(srv, conn, true);
		ret = start_request(srv, conn, req, url, method);
		if (req->responded)
			watch_busy(srv, conn, true);
		return ret;
	}
	if (req->responded)
		return MHD_YES;
	if (*upload_data_size) {
		ret = take_body(req, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return ret;
	}
	watch_busy(srv, conn, true);
	return serve_profile(srv, conn, req);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct server *srv = cls;
	struct request *req = *con_cls;

	/* the next request on this connection has its own deadline */
	watch_busy(srv, conn, false);
	if (!req)
		return;
	/* one line per request; never a header, so never the token */
	fprintf(srv->log, "isoprof serve: %s %s %s %u %llu ms%s%s%s%s\n", req->client,
		req->method, req->path, req->status,
		(unsigned long long)(monotime_ms() - req->start_ms), req->note[0] ? " (" : "",
		req->note, req->note[0] ? ")" : "",
		toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? "" : " [connection closed early]");
	api_route__free(&req->route);
	free(req->body);
	free(req);
	*con_cls = NULL;
}

/* libmicrohttpd would decode %2F before routing: keep the path as sent. */
static size_t keep_escaped(void *cls, struct MHD_Connection *conn, char *s)
{
	(void)cls;
	(void)conn;
	return strlen(s);
}

/* libmicrohttpd logs a line per refused connection: a flood must not flood the log */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct server *srv = cls;
	uint64_t sec = monotime_ms() / 1000;
	unsigned int dropped = 0;
	char line[512];
	size_t n;

	pthread_mutex_lock(&srv->log_lock);
	if (sec != srv->log_second) {
		dropped = srv->log_dropped;
		srv->log_second = sec;
		srv->log_lines = srv->log_dropped = 0;
	}
	if (srv->log_lines >= MHD_LOG_PER_S) {
		srv->log_dropped++;
		pthread_mutex_unlock(&srv->log_lock);
		return;
	}
	srv->log_lines++;
	pthread_mutex_unlock(&srv->log_lock);
	if (dropped)
		fprintf(srv->log, "isoprof serve: libmicrohttpd: (%u lines left out)\n", dropped);
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	fprintf(srv->log, "isoprof serve: libmicrohttpd: %s\n", line);
}

/* ---- the request deadline ----------------------------------------------- */

static void notify_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe)
{
	struct server *srv = cls;
	struct conn_watch *w;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		w = calloc(1, sizeof(*w));
		*socket_context = w;
		if (!w)
			return;
		w->fd = client_fd(conn);
		w->since_ms = monotime_ms();
		pthread_mutex_lock(&srv->watch_lock);
		w->next = srv->watches;
		if (w->next)
			w->next->prev = w;
		srv->watches = w;
		pthread_mutex_unlock(&srv->watch_lock);
		return;
	}
	/* libmicrohttpd closes the descriptor after this: the reaper never sees it again */
	w = *socket_context;
	if (!w)
		return;
	pthread_mutex_lock(&srv->watch_lock);
	if (w->prev)
		w->prev->next = w->next;
	else
		srv->watches = w->next;
	if (w->next)
		w->next->prev = w->prev;
	pthread_mutex_unlock(&srv->watch_lock);
	free(w);
	*socket_context = NULL;
}

/*
 * libmicrohttpd's timeout restarts with every byte, so a client that sends
 * a byte every few seconds would hold its connection (and its thread)
 * forever.  A request gets REQUEST_DEADLINE_MS to arrive whole; then its
 * socket is shut down, which wakes its thread to close it.
 */
static void *reaper_main(void *arg)
{
	struct server *srv = arg;

	while (!atomic_load(&srv->reaper_stop)) {
		uint64_t now = monotime_ms();
		unsigned int cut = 0;

		pthread_mutex_lock(&srv->watch_lock);
		for (struct conn_watch *w = srv->watches; w; w = w->next) {
			if (w->busy || w->cut || w->fd < 0 || now < w->since_ms ||
			    now - w->since_ms < REQUEST_DEADLINE_MS)
				continue;
			shutdown(w->fd, SHUT_RDWR);
			w->cut = true;
			cut++;
		}
		pthread_mutex_unlock(&srv->watch_lock);
		if (cut)
			fprintf(srv->log, "isoprof serve: closed %u connection%s that sent no whole "
				"request in %d s\n", cut, cut == 1 ? "" : "s",
				REQUEST_DEADLINE_MS / 1000);
		usleep(REAPER_MS * 1000);
	}
	return NULL;
}

/* ---- the server --------------------------------------------------------- */

static void server__free(struct server *srv)
{
	if (srv->reaper_started) {
		atomic_store(&srv->reaper_stop, true);
		pthread_join(srv->reaper, NULL);
	}
	daemon_admit__free(srv->admit);
	auth_backoff__free(srv->backoff);
	pthread_mutex_destroy(&srv->watch_lock);
	pthread_mutex_destroy(&srv->log_lock);
	pthread_mutex_destroy(&srv->merge_lock);
	if (srv->has_windows)
		close(srv->windows_dir);
	free(srv);
}

struct server *server__start(const struct server_opts *o)
{
	struct server *srv = calloc(1, sizeof(*srv));
	unsigned int flags;
	int err;

	if (!srv)
		return NULL;
	if (o->token_digest) {
		srv->has_token = true;
		memcpy(srv->token_digest, o->token_digest, SHA256_DIGEST_LEN);
	}
	srv->helper = o->helper;
	srv->family = o->family;
	srv->log = o->log ? o->log : stderr;
	atomic_init(&srv->stopping, false);
	atomic_init(&srv->reaper_stop, false);
	pthread_mutex_init(&srv->watch_lock, NULL);
	pthread_mutex_init(&srv->log_lock, NULL);
	pthread_mutex_init(&srv->merge_lock, NULL);
	srv->has_windows = o->has_windows;
	srv->windows_dir = o->windows_dir;
	srv->admit = daemon_admit__new(o->max_captures, o->rate_burst, o->rate_window_s);
	srv->backoff = auth_backoff__new(BACKOFF_ENTRIES);
	if (!srv->admit || !srv->backoff)
		goto fail;
	err = pthread_create(&srv->reaper, NULL, reaper_main, srv);
	if (err) {
		errno = err;
		goto fail;
	}
	srv->reaper_started = true;
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
		MHD_USE_ERROR_LOG;
	if (o->family == AF_INET6)
		flags |= MHD_USE_IPv6;
	errno = 0;
	/*
	 * The per-address limit does not apply to a unix socket (no address):
	 * there the socket file's permissions say who may connect.
	 */
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, srv,
				    MHD_OPTION_EXTERNAL_LOGGER, mhd_log, srv,
				    MHD_OPTION_LISTEN_SOCKET, o->listen_fd,
				    MHD_OPTION_NOTIFY_COMPLETED, completed, srv,
				    MHD_OPTION_NOTIFY_CONNECTION, notify_connection, srv,
				    MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNECTION_LIMIT,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)PER_ADDRESS_LIMIT,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)CONNECTION_TIMEOUT_S,
				    MHD_OPTION_END);
	if (!srv->mhd)
		goto fail;
	return srv;
fail:
	err = errno;
	server__free(srv);
	errno = err;
	return NULL;
}

unsigned int server__running(struct server *srv)
{
	return daemon_admit__running(srv->admit);
}

void server__stop(struct server *srv)
{
	if (!srv)
		return;
	atomic_store(&srv->stopping, true);
	/* joins the connection threads, which have the helper stop their children first */
	MHD_stop_daemon(srv->mhd);
	server__free(srv);
}
