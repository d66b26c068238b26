// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof serve: the on-demand profiling daemon (SPEC §9, docs/daemon.md).
 * Options, the token, signals; the server itself is user/serve/server.h.
 */
#include <argp.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/sha256.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/serve/server.h"

#define DEFAULT_LISTEN "127.0.0.1:8787"
#define TOKEN_MAX 1024

enum { OPT_MAX_CAPTURES = 0x100, OPT_RATE_LIMIT };

struct serve_env {
	const char *listen;
	const char *token_file;
	unsigned int max_captures;
	unsigned int rate_burst;
	unsigned int rate_window_s;
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
		if (options__uint(arg, 1, 64, &env->max_captures))
			argp_error(state,
				   "--max-captures must be an integer from 1 to 64, not '%s'", arg);
		break;
	case OPT_RATE_LIMIT:
		snprintf(buf, sizeof(buf), "%s", arg);
		slash = strchr(buf, '/');
		if (slash)
			*slash = '\0';
		if (!slash || options__uint(buf, 1, 100000, &env->rate_burst) ||
		    options__uint(slash + 1, 1, 86400, &env->rate_window_s))
			argp_error(state, "--rate-limit is N/SECONDS (e.g. 60/300), not '%s'", arg);
		break;
	default:
		return options__rest(key, arg, state);
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
	if (!hlen || hlen >= sizeof(host) || options__uint(colon + 1, 1, 65535, &port))
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
	uint8_t token_digest[SHA256_DIGEST_LEN];
	struct server_opts so = { .log = stderr, .self = "/proc/self/exe" };
	struct sockaddr_storage ss;
	struct server *srv;
	socklen_t sslen;
	bool loopback = false;
	unsigned int running;
	sigset_t set;
	int sig;

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
		if (load_token(env.token_file, token_digest))
			return 2;
		so.token_digest = token_digest;
	}
	so.addr = (struct sockaddr *)&ss;
	so.addrlen = sslen;
	so.max_captures = env.max_captures;
	so.rate_burst = env.rate_burst;
	so.rate_window_s = env.rate_window_s;
	so.tmp_root = getenv("TMPDIR");
	if (!so.tmp_root || !*so.tmp_root)
		so.tmp_root = "/tmp";

	/* every thread the server starts inherits this mask: only sigwait() below sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	srv = server__start(&so);
	if (!srv) {
		fprintf(stderr, "isoprof: cannot listen on %s: %s\n", env.listen,
			errno ? strerror(errno) : "libmicrohttpd failed to start");
		return 1;
	}
	explicit_bzero(token_digest, sizeof(token_digest));
	fprintf(stderr, "isoprof serve: listening on http://%s/ (%s; %u captures at once, "
		"%u per %u s)\n", env.listen,
		so.token_digest ? "bearer token required" : "loopback only, no token",
		env.max_captures, env.rate_burst, env.rate_window_s);

	do {
		sig = 0;
		if (sigwait(&set, &sig))
			break;
	} while (sig != SIGINT && sig != SIGTERM);
	running = server__running(srv);
	fprintf(stderr, "isoprof serve: stopping (signal %d): cancelling %u running capture%s\n",
		sig, running, running == 1 ? "" : "s");
	server__stop(srv);
	return 0;
}
