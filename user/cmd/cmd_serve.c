// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof serve: the on-demand profiling daemon (SPEC §9, docs/daemon.md).
 *
 * libmicrohttpd with a thread per connection: a capture holds its
 * connection's thread for up to 50 s while the others carry on.  Each
 * capture is a child (`isoprof record`, the same binary) in a private
 * temporary directory; the daemon itself never loads BPF.  Shared state is
 * the admission counters (daemon_admit, locked inside) and the stop flag.
 */
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "user/serve/api.h"
#include "user/cmd/commands.h"
#include "user/serve/daemon.h"
#include "lib/sha256.h"
#include "user/report/web_assets.h"
#include "lib/fileio.h"
#include "lib/monotime.h"
#include "user/record_exit.h"

#define DEFAULT_LISTEN "127.0.0.1:8787"
#define BODY_MAX (16 * 1024)
#define TOKEN_MAX 1024
#define CHILD_ERR_MAX (64 * 1024)
#define TARGETS_OUT_MAX (16 * 1024 * 1024)
#define TARGETS_TIMEOUT_MS 30000
/* past the window: symbolization, and up to 60 s for V8's heap profile to come back */
#define CAPTURE_GRACE_MS 90000
#define CONNECTION_LIMIT 64
#define RAW_TYPE "application/vnd.google.protobuf"

enum { OPT_MAX_CAPTURES = 0x100, OPT_RATE_LIMIT };

struct serve_env {
	const char *listen;
	const char *token_file;
	unsigned int max_captures;
	unsigned int rate_burst;
	unsigned int rate_window_s;
};

struct server {
	bool has_token;
	uint8_t token_digest[SHA256_DIGEST_LEN];
	struct daemon_admit *admit;
	const char *tmp_root;
	atomic_bool stopping;
};

/* Per request, from the first call of the handler to the completion callback. */
struct request {
	uint64_t start_ms;
	char method[16];
	char path[512];			/* escaped for the log */
	char client[INET6_ADDRSTRLEN + 8];
	unsigned int status;
	char note[96];			/* for the log: what a capture did */
	bool responded;
	bool too_large;
	bool is_profile;
	struct api_route route;
	char *body;
	size_t body_len;
};

static const struct argp_option serve_options[] = {
	{ "listen", 'l', "ADDR:PORT", 0,
	  "Address to listen on (default " DEFAULT_LISTEN "; [::1]:PORT for IPv6).  A "
	  "non-loopback address needs --token-file", 0 },
	{ "token-file", 't', "FILE", 0,
	  "Require 'Authorization: Bearer TOKEN' on every API request; TOKEN is the file's "
	  "first line.  The file must not be readable by group or others", 0 },
	{ "max-captures", OPT_MAX_CAPTURES, "N", 0, "Captures running at once (default 4)", 0 },
	{ "rate-limit", OPT_RATE_LIMIT, "N/SECONDS", 0,
	  "At most N captures per SECONDS, as a token bucket (default 60/300)", 0 },
	{ 0 },
};

static bool parse_uint(const char *s, unsigned long max, unsigned int *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || !v || v > max)
		return false;
	*out = (unsigned int)v;
	return true;
}

static error_t serve_parse(int key, char *arg, struct argp_state *state)
{
	struct serve_env *env = state->input;
	char *slash, buf[64];

	switch (key) {
	case 'l':
		env->listen = arg;
		break;
	case 't':
		env->token_file = arg;
		break;
	case OPT_MAX_CAPTURES:
		if (!parse_uint(arg, 64, &env->max_captures))
			argp_error(state,
				   "--max-captures must be an integer from 1 to 64, not '%s'", arg);
		break;
	case OPT_RATE_LIMIT:
		snprintf(buf, sizeof(buf), "%s", arg);
		slash = strchr(buf, '/');
		if (slash)
			*slash = '\0';
		if (!slash || !parse_uint(buf, 100000, &env->rate_burst) ||
		    !parse_uint(slash + 1, 86400, &env->rate_window_s))
			argp_error(state, "--rate-limit is N/SECONDS (e.g. 60/300), not '%s'", arg);
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/*
 * ADDR:PORT into a socket address.  "localhost" is 127.0.0.1, never a DNS
 * lookup; IPv6 goes in brackets.
 */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *sslen,
			bool *loopback)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon;
	unsigned int port;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		hlen = (size_t)(close - s - 1);
		colon = close + 1;
		s++;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hlen = (size_t)(colon - s);
	}
	if (!hlen || hlen >= sizeof(host) || !parse_uint(colon + 1, 65535, &port))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (!strcasecmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (s[-1] == '[' || strchr(host, ':')) {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
			return -EINVAL;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
		*loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
			return -EINVAL;
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*sslen = sizeof(*a);
		*loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

/* The token is kept only as its digest; the bytes read are wiped. */
static int load_token(const char *path, uint8_t digest[SHA256_DIGEST_LEN])
{
	char buf[TOKEN_MAX + 2];
	struct stat st;
	ssize_t n;
	size_t len;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "isoprof: --token-file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "isoprof: --token-file %s: not a regular file\n", path);
		close(fd);
		return -1;
	}
	/* like ssh with a private key: a secret others can read is not one */
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		fprintf(stderr, "isoprof: --token-file %s: permissions %04o are too open: the "
			"token must not be readable by group or others (chmod 600 %s)\n", path,
			(unsigned int)(st.st_mode & 07777), path);
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "isoprof: --token-file %s: %s\n", path, strerror(errno));
		return -1;
	}
	buf[n] = '\0';
	len = strcspn(buf, "\r\n");
	while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t'))
		len--;
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)buf[i] <= 0x20 || buf[i] == 0x7f) {
			len = 0;
			break;
		}
	}
	if (!len || len > TOKEN_MAX) {
		fprintf(stderr, "isoprof: --token-file %s: the first line must be a token of 1 to "
			"%d printable characters without spaces\n", path, TOKEN_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	sha256__digest(buf, len, digest);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

static void add_common_headers(struct MHD_Response *r)
{
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static enum MHD_Result queue(struct MHD_Connection *conn, struct request *req,
			     unsigned int status, struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	add_common_headers(r);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	req->status = status;
	req->responded = true;
	return ret;
}

static enum MHD_Result send_error(struct MHD_Connection *conn, struct request *req,
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

static enum MHD_Result send_asset(struct MHD_Connection *conn, struct request *req,
				  const char *path)
{
	const struct web_asset *a = web_assets__find(path);
	struct MHD_Response *r;

	if (!a)
		return send_error(conn, req, API_E_NO_ROUTE, "no such path", 0, NULL);
	r = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", a->content_type);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	return queue(conn, req, 200, r);
}

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
				   const struct daemon_child *ch, const char *what)
{
	char msg[API_MESSAGE_MAX], full[API_MESSAGE_MAX + 64];
	enum api_code code = API_E_INTERNAL;
	const char *prefer = NULL;
	int st = -1;

	if (WIFEXITED(ch->wait_status))
		st = WEXITSTATUS(ch->wait_status);
	switch (st) {
	case RECORD_EXIT_USAGE:
		code = API_E_USAGE;
		break;
	case RECORD_EXIT_NOT_FOUND:
		code = API_E_NOT_FOUND;
		break;
	case RECORD_EXIT_NO_SAMPLES:
		code = API_E_NO_SAMPLES;
		break;
	case RECORD_EXIT_NO_BPF:
		code = API_E_NO_BPF;
		break;
	case RECORD_EXIT_NO_INSPECTOR:
		code = API_E_UNAVAILABLE;
		prefer = "--inspect";
		break;
	default:
		break;
	}
	if (!api__child_message(ch->err, ch->err_len, prefer, msg, sizeof(msg))) {
		if (WIFSIGNALED(ch->wait_status))
			snprintf(msg, sizeof(msg), "%s was killed by signal %d", what,
				 WTERMSIG(ch->wait_status));
		else
			snprintf(msg, sizeof(msg), "%s failed with exit status %d", what, st);
	}
	if (code == API_E_NO_SAMPLES && !strstr(msg, "retry")) {
		snprintf(full, sizeof(full), "%s; send traffic and retry", msg);
		return send_error(conn, req, code, full, 0, NULL);
	}
	return send_error(conn, req, code, msg, 0, NULL);
}

static enum MHD_Result serve_targets(struct server *srv, struct MHD_Connection *conn,
				     struct request *req)
{
	char *argv[] = { "isoprof", "targets", "--json", NULL };
	struct cancel_ctx cc = { .srv = srv, .client_fd = -1 };
	struct daemon_child_opts o = {
		.path = "/proc/self/exe", .argv = argv, .timeout_ms = TARGETS_TIMEOUT_MS,
		.out_max = TARGETS_OUT_MAX, .err_max = CHILD_ERR_MAX,
		.cancel = capture_cancelled, .arg = &cc,
	};
	struct daemon_child ch;
	struct MHD_Response *r;
	enum MHD_Result ret;
	int err;

	err = daemon__run_child(&o, &ch);
	if (err) {
		snprintf(req->note, sizeof(req->note), "targets: %s", strerror(-err));
		return send_error(conn, req, API_E_INTERNAL, "cannot run isoprof targets", 0, NULL);
	}
	if (!WIFEXITED(ch.wait_status) || WEXITSTATUS(ch.wait_status) || ch.out_truncated) {
		if (ch.out_truncated)
			ret = send_error(conn, req, API_E_INTERNAL, "the target list is too long",
					 0, NULL);
		else
			ret = child_error(conn, req, &ch, "isoprof targets");
		daemon_child__free(&ch);
		return ret;
	}
	r = MHD_create_response_from_buffer(ch.out_len, ch.out, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		daemon_child__free(&ch);
		return MHD_NO;
	}
	ch.out = NULL;
	daemon_child__free(&ch);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	return queue(conn, req, 200, r);
}

static enum MHD_Result serve_profile_file(struct MHD_Connection *conn, struct request *req,
					  const char *file, bool raw,
					  const struct api_profile_req *p)
{
	char disp[128], part[64];
	struct MHD_Response *r;
	struct stat st;
	int fd;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		if (fd >= 0)
			close(fd);
		return send_error(conn, req, API_E_INTERNAL,
				  "record exited 0 but wrote no profile", 0, NULL);
	}
	/* libmicrohttpd closes fd with the response */
	r = MHD_create_response_from_fd((size_t)st.st_size, fd);
	if (!r) {
		close(fd);
		return MHD_NO;
	}
	fileio__name_part(req->route.script, part, sizeof(part));
	snprintf(disp, sizeof(disp), "attachment; filename=\"%s-%s%s\"", part,
		 p->type == API_PROFILE_HEAP ? "heap" : "cpu", raw ? ".pb" : ".pb.gz");
	MHD_add_response_header(r, "Content-Type", raw ? RAW_TYPE : "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", disp);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	return queue(conn, req, 200, r);
}

static enum MHD_Result serve_profile(struct server *srv, struct MHD_Connection *conn,
				     struct request *req)
{
	struct cancel_ctx cc = { .srv = srv, .client_fd = client_fd(conn) };
	char msg[API_MESSAGE_MAX], dir[PATH_MAX], file[PATH_MAX + 16];
	char *script_arg = NULL, *version_arg = NULL, *target = NULL;
	char dur_arg[32], type_arg[16];
	struct api_profile_req p;
	struct daemon_child ch;
	enum api_code code;
	enum MHD_Result ret;
	const char *accept;
	unsigned int retry;
	bool raw, have_dir = false;
	int slot = -1, err, st;

	if (req->too_large) {
		snprintf(msg, sizeof(msg), "the body is larger than %d bytes", BODY_MAX);
		return send_error(conn, req, API_E_TOO_LARGE, msg, 0, NULL);
	}
	if (api__parse_profile_body(req->body, req->body_len, &p, &code, msg, sizeof(msg)))
		return send_error(conn, req, code, msg, 0, NULL);
	accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Accept");
	raw = accept && strcasestr(accept, RAW_TYPE);

	if (asprintf(&target, "%s\n%s", req->route.script, req->route.version) < 0) {
		target = NULL;
		ret = MHD_NO;
		goto out;
	}
	slot = daemon_admit__acquire(srv->admit, target, p.duration_ms, monotime_ms(), &retry);
	if (slot < 0) {
		switch (slot) {
		case -EBUSY:
			snprintf(msg, sizeof(msg), "a capture of %s version %s is running; retry "
				 "after it ends", req->route.script, req->route.version);
			ret = send_error(conn, req, API_E_TARGET_BUSY, msg, retry, NULL);
			break;
		case -EAGAIN:
			ret = send_error(conn, req, API_E_TOO_MANY,
					 "every capture slot is in use; retry later", retry, NULL);
			break;
		case -EDQUOT:
			ret = send_error(conn, req, API_E_RATE_LIMIT,
					 "capture rate limit reached; retry later", retry, NULL);
			break;
		default:
			ret = MHD_NO;
		}
		goto out;
	}

	snprintf(dir, sizeof(dir), "%s/isoprof-serve.XXXXXX", srv->tmp_root);
	if (!mkdtemp(dir)) {
		snprintf(msg, sizeof(msg), "cannot create a temporary directory in %s: %s",
			 srv->tmp_root, strerror(errno));
		ret = send_error(conn, req, API_E_INTERNAL, msg, 0, NULL);
		goto out;
	}
	have_dir = true;
	snprintf(file, sizeof(file), "%s/profile%s", dir, raw ? ".pb" : ".pb.gz");
	if (asprintf(&script_arg, "--script=%s", req->route.script) < 0 ||
	    asprintf(&version_arg, "--version=%s", req->route.version) < 0) {
		script_arg = version_arg = NULL;
		ret = MHD_NO;
		goto out;
	}
	snprintf(dur_arg, sizeof(dur_arg), "--duration-ms=%ld", p.duration_ms);
	snprintf(type_arg, sizeof(type_arg), "--type=%s",
		 p.type == API_PROFILE_HEAP ? "heap" : "cpu");
	{
		char *argv[] = { "isoprof", "record", script_arg, version_arg, dur_arg, type_arg,
				 "-q", "-o", file, raw ? "--raw" : NULL, NULL };
		struct daemon_child_opts o = {
			.path = "/proc/self/exe", .argv = argv,
			.timeout_ms = (uint64_t)p.duration_ms + CAPTURE_GRACE_MS,
			.out_max = CHILD_ERR_MAX, .err_max = CHILD_ERR_MAX,
			.cancel = capture_cancelled, .arg = &cc,
		};

		err = daemon__run_child(&o, &ch);
	}
	if (err) {
		snprintf(msg, sizeof(msg), "cannot start record: %s", strerror(-err));
		ret = send_error(conn, req, API_E_INTERNAL, msg, 0, NULL);
		goto out;
	}
	st = WIFEXITED(ch.wait_status) ? WEXITSTATUS(ch.wait_status) : -WTERMSIG(ch.wait_status);
	snprintf(req->note, sizeof(req->note), "record %s %ld ms: %s %d%s",
		 p.type == API_PROFILE_HEAP ? "heap" : "cpu", p.duration_ms,
		 st >= 0 ? "exit" : "signal", st < 0 ? -st : st,
		 ch.cancelled ? (cc.client_gone ? ", client gone" : ", daemon stopping") :
		 ch.timed_out ? ", timed out" : "");
	if (ch.cancelled && !cc.client_gone)
		ret = send_error(conn, req, API_E_SHUTTING_DOWN,
				 "the daemon is stopping; the capture was cancelled", 0, NULL);
	else if (ch.cancelled)
		ret = send_error(conn, req, API_E_INTERNAL,
				 "the capture was cancelled: the client closed the connection",
				 0, NULL);
	else if (ch.timed_out)
		ret = send_error(conn, req, API_E_INTERNAL, "record did not finish in time",
				 0, NULL);
	else if (st == RECORD_EXIT_OK)
		ret = serve_profile_file(conn, req, file, raw, &p);
	else
		ret = child_error(conn, req, &ch, "record");
	daemon_child__free(&ch);
out:
	if (slot >= 0)
		daemon_admit__release(srv->admit, slot);
	/* the response holds its own descriptor: the directory can go now */
	if (have_dir)
		daemon__remove_dir(dir);
	free(script_arg);
	free(version_arg);
	free(target);
	return ret;
}

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

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct server *srv = cls;
	struct request *req = *con_cls;
	char err[256];
	const char *auth, *clen;
	bool public;
	int ret;

	(void)version;
	if (!req) {
		const union MHD_ConnectionInfo *ci;

		req = calloc(1, sizeof(*req));
		if (!req)
			return MHD_NO;
		*con_cls = req;
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

		if (atomic_load(&srv->stopping))
			return send_error(conn, req, API_E_SHUTTING_DOWN, "the daemon is stopping",
					  0, NULL);
		if (browser_forbidden(srv, conn))
			return send_error(conn, req, API_E_FORBIDDEN_ORIGIN,
					  "the Host or Origin header is not this loopback daemon",
					  0, NULL);
		ret = api__route(method, url, &req->route, err, sizeof(err));
		/* the page itself is public; everything else needs the token */
		public = ret != -ENOENT && (req->route.kind == API_ROUTE_ASSET ||
					    req->route.kind == API_ROUTE_NO_CONTENT);
		if (srv->has_token && !public) {
			auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
			switch (api__check_bearer(auth, srv->token_digest)) {
			case 0:
				break;
			case -ENOENT:
				return send_error(conn, req, API_E_NO_TOKEN,
						  "missing 'Authorization: Bearer TOKEN'", 0, NULL);
			default:
				return send_error(conn, req, API_E_BAD_TOKEN, "wrong token", 0,
						  NULL);
			}
		}
		switch (ret) {
		case 0:
			break;
		case -EPERM:
			snprintf(err, sizeof(err), "method %s not allowed here; use %s",
				 req->method, req->route.allow);
			return send_error(conn, req, API_E_METHOD, err, 0, req->route.allow);
		case -EINVAL:
			return send_error(conn, req, API_E_BAD_PATH, err, 0, NULL);
		case -ENOENT:
			return send_error(conn, req, API_E_NO_ROUTE, "no such path", 0, NULL);
		default:
			return MHD_NO;
		}
		if (req->route.kind == API_ROUTE_ASSET)
			return send_asset(conn, req, url);
		if (req->route.kind == API_ROUTE_NO_CONTENT)
			return queue(conn, req, 204, MHD_create_response_from_buffer(
					     0, NULL, MHD_RESPMEM_PERSISTENT));
		if (req->route.kind == API_ROUTE_TARGETS)
			return serve_targets(srv, conn, req);
		req->is_profile = true;
		clen = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		/* answered before the body is read, so a huge body is never taken in */
		if (clen && strtoull(clen, NULL, 10) > BODY_MAX) {
			snprintf(err, sizeof(err), "the body is larger than %d bytes", BODY_MAX);
			return send_error(conn, req, API_E_TOO_LARGE, err, 0, NULL);
		}
		return MHD_YES;
	}
	if (req->responded)
		return MHD_YES;
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		if (!req->too_large && req->body_len + n <= BODY_MAX) {
			if (!req->body) {
				req->body = malloc(BODY_MAX + 1);
				if (!req->body)
					return MHD_NO;
			}
			memcpy(req->body + req->body_len, upload_data, n);
			req->body_len += n;
		} else {
			req->too_large = true;
		}
		*upload_data_size = 0;
		return MHD_YES;
	}
	return serve_profile(srv, conn, req);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *req = *con_cls;

	(void)cls;
	(void)conn;
	if (!req)
		return;
	/* one line per request; never a header, so never the token */
	fprintf(stderr, "isoprof serve: %s %s %s %u %llu ms%s%s%s%s\n", req->client, req->method,
		req->path, req->status, (unsigned long long)(monotime_ms() - req->start_ms),
		req->note[0] ? " (" : "", req->note, req->note[0] ? ")" : "",
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

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n && line[n - 1] == '\n')
		line[--n] = '\0';
	fprintf(stderr, "isoprof serve: libmicrohttpd: %s\n", line);
}

int cmd_serve(int argc, char **argv)
{
	struct serve_env env = {
		.listen = DEFAULT_LISTEN, .max_captures = 4, .rate_burst = 60, .rate_window_s = 300,
	};
	struct argp argp = {
		.options = serve_options,
		.parser = serve_parse,
		.doc = "Serve the on-demand profiling API (SPEC §9) and the capture page.\v"
		       "POST /accounts/ACCOUNT/workers/workers/SCRIPT/versions/VERSION/profile "
		       "with {\"duration_ms\": N, \"profile_type\": \"cpu\"|\"heap\"} runs "
		       "`isoprof record` on that script and returns its pprof; GET /v1/targets is "
		       "`isoprof targets --json`; GET / is the web page.  See docs/daemon.md.",
	};
	struct server srv = { 0 };
	struct sockaddr_storage ss;
	struct MHD_Daemon *d;
	socklen_t sslen;
	bool loopback = false;
	sigset_t set;
	int sig, flags;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (parse_listen(env.listen, &ss, &sslen, &loopback)) {
		fprintf(stderr, "isoprof: --listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:8787 or "
			"[::1]:8787)\n", env.listen);
		return 2;
	}
	if (!loopback && !env.token_file) {
		fprintf(stderr, "isoprof: --listen %s is not a loopback address: anyone who can "
			"reach it could profile this host; give --token-file FILE\n", env.listen);
		return 2;
	}
	if (env.token_file) {
		if (load_token(env.token_file, srv.token_digest))
			return 2;
		srv.has_token = true;
	}
	srv.tmp_root = getenv("TMPDIR");
	if (!srv.tmp_root || !*srv.tmp_root)
		srv.tmp_root = "/tmp";
	atomic_init(&srv.stopping, false);
	srv.admit = daemon_admit__new(env.max_captures, env.rate_burst, env.rate_window_s);
	if (!srv.admit) {
		fprintf(stderr, "isoprof: %s\n", strerror(errno));
		return 1;
	}

	/* every thread libmicrohttpd starts inherits this mask: only sigwait() below sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
		MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	d = MHD_start_daemon((unsigned int)flags, 0, NULL, NULL, handle, &srv,
			     MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
			     MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL,
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned int)CONNECTION_LIMIT,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)120,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "isoprof: cannot listen on %s: %s\n", env.listen,
			errno ? strerror(errno) : "libmicrohttpd failed to start");
		daemon_admit__free(srv.admit);
		return 1;
	}
	fprintf(stderr, "isoprof serve: listening on http://%s/ (%s; %u captures at once, "
		"%u per %u s)\n", env.listen,
		srv.has_token ? "bearer token required" : "loopback only, no token",
		env.max_captures, env.rate_burst, env.rate_window_s);

	do {
		sig = 0;
		if (sigwait(&set, &sig))
			break;
	} while (sig != SIGINT && sig != SIGTERM);
	fprintf(stderr, "isoprof serve: stopping (signal %d): cancelling %u running capture%s\n",
		sig, daemon_admit__running(srv.admit),
		daemon_admit__running(srv.admit) == 1 ? "" : "s");
	atomic_store(&srv.stopping, true);
	/* joins the connection threads, which stop their children and clean up first */
	MHD_stop_daemon(d);
	daemon_admit__free(srv.admit);
	return 0;
}
