// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof serve: the on-demand profiling daemon (docs/daemon.md).
 * Options, the token, the listening socket, the privilege split (the
 * helper forked, then this process dropped to --user; user/serve/privsep.h)
 * and signals; the server itself is user/serve/server.h.
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
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/safe_open.h"
#include "lib/sha256.h"
#include "user/cmd/commands.h"
#include "user/cmd/options.h"
#include "user/serve/privsep.h"
#include "user/report/window_files.h"
#include "user/serve/server.h"

#define DEFAULT_LISTEN "127.0.0.1:8787"
#define TOKEN_MIN 32
#define TOKEN_MAX 1024
#define DEFAULT_USER "nobody"
/*
 * Measured: `record` of the demo (two workers under load, code logs, cpu or
 * heap, 3-5 s) peaks at 25 MiB of data (50 MiB resident); `targets` at
 * less.  1 GiB is 40 times that, for hosts with many runtimes and long code
 * logs, and still keeps a runaway capture from taking the host's memory.
 */
#define DEFAULT_CHILD_MEMORY_MB 1024
#define LISTEN_BACKLOG 128

enum {
	OPT_MAX_CAPTURES = 0x100,
	OPT_RATE_LIMIT,
	OPT_USER,
	OPT_CHILD_MEMORY,
	OPT_NO_GC_PROBES,
	OPT_SOURCE_MAPS,
	OPT_TOKEN_FILE,
};

struct serve_env {
	const char *listen;
	const char *token_file;
	const char *user;
	unsigned int max_captures;
	unsigned int rate_burst;
	unsigned int rate_window_s;
	unsigned int child_memory_mb;
	bool no_gc_probes;
	const char *source_maps;
	const char *out_dir;
};

static const struct argp_option serve_options[] = {
	{ "listen", 'l', "ADDR:PORT", 0,
	  "Address to listen on (default " DEFAULT_LISTEN "; [::1]:PORT for IPv6; unix:PATH "
	  "for a unix socket, mode 0600).  A non-loopback address needs --token-file", 0 },
	{ "token-file", OPT_TOKEN_FILE, "FILE", 0,
	  "Require 'Authorization: Bearer TOKEN' on every API request; TOKEN is the file's "
	  "first line, at least 32 characters.  The file must not be readable by group or "
	  "others", 0 },
	{ "user", OPT_USER, "NAME", 0,
	  "Started as root, the process that parses HTTP runs as NAME (default "
	  DEFAULT_USER "); a helper keeps root's privileges for captures", 0 },
	{ "child-memory-mb", OPT_CHILD_MEMORY, "MB", 0,
	  "Data-size limit of each capture's `record` (default 1024; 0: none)", 0 },
	{ "max-captures", OPT_MAX_CAPTURES, "N", 0, "Captures running at once (default 4)", 0 },
	{ "rate-limit", OPT_RATE_LIMIT, "N/SECONDS", 0,
	  "At most N captures per SECONDS, as a token bucket (default 60/300)", 0 },
	{ "source-maps", OPT_SOURCE_MAPS, "DIR", 0,
	  "Captures also look for scripts' source maps in DIR (record --source-maps; "
	  "docs/source-maps.md)", 0 },
	{ "out-dir", 'O', "DIR", 0,
	  "Answer GET /v1/profiles?script=NAME with the merged windows `isoprof continuous "
	  "--out-dir DIR` keeps there; DIR must be readable by --user", 0 },
	{ "no-gc-probes", OPT_NO_GC_PROBES, NULL, 0,
	  "Captures without uprobes on V8's garbage collector (record --no-gc-probes)", 0 },
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
	case OPT_TOKEN_FILE:
		env->token_file = arg;
		break;
	case OPT_USER:
		if (!*arg)
			argp_error(state, "--user needs a user name");
		env->user = arg;
		break;
	case OPT_CHILD_MEMORY:
		if (options__uint(arg, 0, 1048576, &env->child_memory_mb) ||
		    (env->child_memory_mb && env->child_memory_mb < 64))
			argp_error(state, "--child-memory-mb must be 0 (no limit) or 64 to 1048576, "
				   "not '%s'", arg);
		break;
	case OPT_MAX_CAPTURES:
		if (options__uint(arg, 1, 64, &env->max_captures))
			argp_error(state,
				   "--max-captures must be an integer from 1 to 64, not '%s'", arg);
		break;
	case OPT_SOURCE_MAPS:
		/* captures run elsewhere: the directory by its absolute path */
		env->source_maps = realpath(arg, NULL);
		if (!env->source_maps)
			argp_error(state, "--source-maps %s: %s", arg, strerror(errno));
		break;
	case OPT_NO_GC_PROBES:
		env->no_gc_probes = true;
		break;
	case 'O':
		if (!*arg)
			argp_error(state, "--out-dir needs a directory");
		env->out_dir = arg;
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
		fprintf(stderr, "isoprof: --token-file %s: the first line must be a token of %d to "
			"%d printable characters without spaces\n", path, TOKEN_MIN, TOKEN_MAX);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	/* a short token falls to guessing, backoff or not */
	if (len < TOKEN_MIN) {
		fprintf(stderr, "isoprof: --token-file %s: the token has %zu characters; at least "
			"%d are needed (e.g. head -c 32 /dev/urandom | base64 > %s)\n", path, len,
			TOKEN_MIN, path);
		explicit_bzero(buf, sizeof(buf));
		return -1;
	}
	sha256__digest(buf, len, digest);
	explicit_bzero(buf, sizeof(buf));
	return 0;
}

/* A TCP listening socket on the parsed address. */
static int listen_tcp(const struct sockaddr_storage *ss, socklen_t len)
{
	int fd, one = 1, e;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, LISTEN_BACKLOG)) {
		e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/*
 * A unix listening socket at path, mode 0600: who may connect is the socket
 * file's business (chgrp/chmod it).  A stale socket of ours is replaced;
 * anything else there (a file, a live socket, another user's) is refused,
 * as is a directory others may write to without the sticky bit (they could
 * swap the name between our look and our unlink).
 */
static int listen_unix(const char *path, struct stat *out, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char dir[sizeof(a.sun_path)], *slash;
	struct stat st;
	mode_t old;
	int fd, e;

	if (!*path || strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "the path must be 1 to %zu bytes", sizeof(a.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st)) {
		e = errno;
		snprintf(err, errlen, "%s: %s", dir, strerror(e));
		return -e;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		snprintf(err, errlen, "its directory %s is writable by others: use one only its "
			 "owner can write (e.g. /run/isoprof)", dir);
		return -EPERM;
	}
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode) || st.st_uid != geteuid()) {
			snprintf(err, errlen, "%s exists and is not a socket of this user: not "
				 "replaced", path);
			return -EEXIST;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, (struct sockaddr *)&a, sizeof(a))) {
			close(fd);
			snprintf(err, errlen, "a daemon already listens on %s", path);
			return -EADDRINUSE;
		}
		if (fd >= 0)
			close(fd);
		/* a socket nobody listens on: left by a daemon that was killed */
		if (unlink(path)) {
			e = errno;
			snprintf(err, errlen, "cannot remove the stale socket %s: %s", path,
				 strerror(e));
			return -e;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	/* created 0600, never wider for a moment */
	old = umask(0177);
	e = bind(fd, (struct sockaddr *)&a, sizeof(a)) ? errno : 0;
	umask(old);
	if (!e && listen(fd, LISTEN_BACKLOG))
		e = errno;
	if (!e && lstat(path, out))
		e = errno;
	if (e) {
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		close(fd);
		return -e;
	}
	return fd;
}

/*
 * --out-dir, opened as the unprivileged server reads it from now on: a
 * directory it cannot list, or whose newest window it cannot open, would
 * answer every GET /v1/profiles with an error, so the daemon does not
 * start.  An fd, or -1 after saying why.
 */
static int open_windows(const char *dir, const char *user, bool root)
{
	struct safe_open_info info;
	struct window_file *files;
	char who[96];
	size_t n;
	int fd, err, probe;

	if (root)
		snprintf(who, sizeof(who), "the server runs as %s (uid %u), which", user,
			 (unsigned int)getuid());
	else
		snprintf(who, sizeof(who), "uid %u", (unsigned int)getuid());
	fd = safe_open__dir(dir, NULL, &info);
	if (fd < 0) {
		fprintf(stderr, "isoprof: --out-dir %s: %s cannot open it: %s%s\n", dir, who,
			info.why[0] ? info.why : strerror(-fd),
			fd == -EACCES ? " (make it readable: chmod o+rx, or chgrp to a group of "
					"--user and chmod g+rx)" : "");
		return -1;
	}
	/* without search (x) permission a listing shows names but no file */
	err = faccessat(fd, ".", R_OK | X_OK, 0) ? -errno : window_files__list(fd, &files, &n);
	if (err) {
		fprintf(stderr, "isoprof: --out-dir %s: %s cannot list it: %s%s\n", dir, who,
			strerror(-err), err == -EACCES ? " (make it readable: chmod o+rx, or chgrp "
			"to a group of --user and chmod g+rx)" : "");
		close(fd);
		return -1;
	}
	if (n) {
		probe = safe_open__file_at(fd, files[n - 1].name, NULL, &info);
		if (probe == -EACCES) {
			fprintf(stderr, "isoprof: --out-dir %s: %s cannot read its windows (%s: %s)\n",
				dir, who, files[n - 1].name, strerror(EACCES));
			window_files__free(files, n);
			close(fd);
			return -1;
		}
		if (probe >= 0)
			close(probe);
	}
	window_files__free(files, n);
	return fd;
}

/* Closing the control socket stops the helper, which stops its children first. */
static void stop_helper(int ctl, pid_t pid)
{
	close(ctl);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int cmd_serve(int argc, char **argv)
{
	struct serve_env env = {
		.listen = DEFAULT_LISTEN, .max_captures = 4, .rate_burst = 60, .rate_window_s = 300,
		.user = DEFAULT_USER, .child_memory_mb = DEFAULT_CHILD_MEMORY_MB,
	};
	struct argp argp = {
		.options = serve_options,
		.parser = serve_parse,
		.doc = "Serve the on-demand profiling API (docs/daemon.md) and the capture page.\v"
		       "POST /accounts/ACCOUNT/workers/workers/SCRIPT/versions/VERSION/profile "
		       "with {\"duration_ms\": N, \"profile_type\": \"cpu\"|\"heap\"} runs "
		       "`isoprof record` on that script and returns its pprof; with --out-dir, GET "
		       "/v1/profiles?script=NAME&from=-1h merges the windows kept there; "
		       "GET /debug/pprof/profile?seconds=N[&script=NAME|&pid=PID] is a CPU "
		       "capture of the next N seconds, answered as Go's net/http/pprof does "
		       "(go tool pprof, Parca); GET /v1/targets is "
		       "`isoprof targets --json`; GET / is the web page.  See docs/daemon.md.",
	};
	uint8_t token_digest[SHA256_DIGEST_LEN];
	struct server_opts so = { .log = stderr };
	struct privsep_helper_opts ho = { .log = stderr, .self = "/proc/self/exe" };
	const char *unix_path = NULL;
	struct sockaddr_storage ss;
	struct stat unix_st;
	struct server *srv;
	socklen_t sslen = 0;
	bool loopback = false, root;
	unsigned int running;
	char err[256];
	pid_t helper;
	sigset_t set;
	int sig, lfd, ctl, ret;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (!strncmp(env.listen, "unix:", 5)) {
		unix_path = env.listen + 5;
		loopback = true;
	} else if (parse_listen(env.listen, &ss, &sslen, &loopback)) {
		fprintf(stderr, "isoprof: --listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:8787 or "
			"[::1]:8787) or unix:PATH\n", env.listen);
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
	so.max_captures = env.max_captures;
	so.rate_burst = env.rate_burst;
	so.rate_window_s = env.rate_window_s;
	ho.tmp_root = getenv("TMPDIR");
	if (!ho.tmp_root || !*ho.tmp_root)
		ho.tmp_root = "/tmp";
	ho.max_captures = env.max_captures;
	ho.child_memory = (uint64_t)env.child_memory_mb << 20;
	ho.no_gc_probes = env.no_gc_probes;
	ho.source_maps = env.source_maps;

	/* every thread and the helper inherit this mask: only sigwait() below sees them */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* the helper is our only child: its end is the daemon's */
	sigaddset(&set, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);

	/* bound before the drop: a low port or a root-only directory still works */
	if (unix_path) {
		lfd = listen_unix(unix_path, &unix_st, err, sizeof(err));
		if (lfd < 0) {
			fprintf(stderr, "isoprof: --listen unix:%s: %s\n", unix_path, err);
			return lfd == -EADDRINUSE || lfd == -EEXIST || lfd == -EPERM ? 2 : 1;
		}
		ho.unix_path = unix_path;
		ho.unix_dev = unix_st.st_dev;
		ho.unix_ino = unix_st.st_ino;
		so.family = AF_UNIX;
	} else {
		lfd = listen_tcp(&ss, sslen);
		if (lfd < 0) {
			fprintf(stderr, "isoprof: cannot listen on %s: %s\n", env.listen,
				strerror(-lfd));
			return 1;
		}
		so.family = ss.ss_family;
	}
	so.listen_fd = lfd;

	ret = privsep__start(&ho, &ctl, &helper);
	if (ret) {
		fprintf(stderr, "isoprof: cannot start the privileged helper: %s\n", strerror(-ret));
		close(lfd);
		return 1;
	}
	root = geteuid() == 0;
	ret = privsep__drop(root ? env.user : NULL, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "isoprof: %s\n", err);
		close(lfd);
		stop_helper(ctl, helper);
		return ret == -ENOENT || ret == -EPERM ? 2 : 1;
	}
	so.helper = ctl;
	if (env.out_dir) {
		so.windows_dir = open_windows(env.out_dir, env.user, root);
		if (so.windows_dir < 0) {
			close(lfd);
			stop_helper(ctl, helper);
			return 2;
		}
		so.has_windows = true;
	}

	srv = server__start(&so);
	if (!srv) {
		fprintf(stderr, "isoprof: cannot listen on %s: %s\n", env.listen,
			errno ? strerror(errno) : "libmicrohttpd failed to start");
		close(lfd);
		stop_helper(ctl, helper);
		return 1;
	}
	explicit_bzero(token_digest, sizeof(token_digest));
	if (unix_path)
		fprintf(stderr, "isoprof serve: listening on unix:%s (%s; %u captures at once, "
			"%u per %u s)\n", unix_path,
			so.token_digest ? "bearer token required" : "mode 0600, no token",
			env.max_captures, env.rate_burst, env.rate_window_s);
	else
		fprintf(stderr, "isoprof serve: listening on http://%s/ (%s; %u captures at once, "
			"%u per %u s)\n", env.listen,
			so.token_digest ? "bearer token required" : "loopback only, no token",
			env.max_captures, env.rate_burst, env.rate_window_s);
	if (root)
		fprintf(stderr, "isoprof serve: privilege split: HTTP is parsed as %s (uid %u, no "
			"capabilities); helper pid %d keeps root for captures\n", env.user,
			(unsigned int)getuid(), (int)helper);
	else
		fprintf(stderr, "isoprof serve: not started as root: no privilege split (HTTP is "
			"parsed as uid %u, without capabilities; helper pid %d runs the captures)\n",
			(unsigned int)getuid(), (int)helper);

	for (;;) {
		int status;

		sig = 0;
		if (sigwait(&set, &sig) || sig == SIGINT || sig == SIGTERM)
			break;
		/* without its helper the daemon can capture nothing: stop rather than answer 500s */
		if (sig == SIGCHLD && waitpid(helper, &status, WNOHANG) == helper) {
			fprintf(stderr, "isoprof: the privileged helper (pid %d) %s %d: stopping\n",
				(int)helper, WIFSIGNALED(status) ? "was killed by signal" :
				"exited with status", WIFSIGNALED(status) ? WTERMSIG(status) :
				WEXITSTATUS(status));
			server__stop(srv);
			close(ctl);
			return 1;
		}
	}
	running = server__running(srv);
	fprintf(stderr, "isoprof serve: stopping (signal %d): cancelling %u running capture%s\n",
		sig, running, running == 1 ? "" : "s");
	server__stop(srv);
	stop_helper(ctl, helper);
	return 0;
}
