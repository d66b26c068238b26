/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * server: the HTTP side of `isoprof serve` (docs/daemon.md) over
 * libmicrohttpd: routing (api.h), the token and browser checks, the page's
 * files (web_assets.h), and captures and the target list, which it asks
 * the privileged helper for (privsep.h) and streams from the descriptor
 * the helper sends back; a capture's exit status becomes the response
 * (api__record_exit_code()).  The server never loads BPF, never runs a
 * child and needs no privilege: when the daemon starts as root, it runs
 * as an unprivileged user.
 *
 * GET /v1/profiles merges kept windows here, in this process (no helper,
 * no child: the files are read as the unprivileged user), one merge at a
 * time so that memory holds one merged profile whatever the clients do.
 *
 * A thread per connection: a capture holds its connection's thread for up
 * to the window plus a grace period while the others carry on.  The
 * threads inherit the caller's signal mask: block the signals the program
 * waits for (SIGINT, SIGTERM) and ignore SIGPIPE before server__start().
 *
 * Bounds on clients: CONNECTION_LIMIT connections, PER_ADDRESS_LIMIT per
 * address (TCP only), a request must arrive whole within
 * REQUEST_DEADLINE_MS of its connection (or of the previous response), a
 * connection silent for CONNECTION_TIMEOUT_S is closed, and wrong tokens
 * are backed off per client (auth_backoff.h).
 *
 * server__start() serves listen_fd (bound and listening; the server owns
 * it from then on) and returns, or returns NULL with errno set (0 when
 * libmicrohttpd did not say why) and nothing running.  server__stop()
 * refuses new requests (503), cancels the running captures (the helper
 * stops their children), waits for every connection thread, and frees the
 * server.
 *
 * The server writes its log to opts->log: one line per request
 * ("isoprof serve: CLIENT METHOD PATH STATUS N ms (what a capture did)"),
 * never a header (so never the token), and libmicrohttpd's own errors (at
 * most MHD_LOG_PER_S lines a second).
 */
#ifndef ISOPROF_SERVE_SERVER_H
#define ISOPROF_SERVE_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "lib/sha256.h"

struct server_opts {
	int listen_fd;			/* bound and listening */
	int family;			/* AF_INET, AF_INET6 or AF_UNIX */
	/*
	 * SHA-256 of the bearer token every API request must carry, or NULL:
	 * no token, and requests whose Host or Origin is not this loopback
	 * daemon are refused (a web page could reach it otherwise).
	 */
	const uint8_t *token_digest;
	unsigned int max_captures;	/* daemon_admit__new()'s limits */
	unsigned int rate_burst;
	unsigned int rate_window_s;
	int helper;			/* the control socket (privsep__start()) */
	FILE *log;
	/*
	 * serve --out-dir: the directory of kept windows (window_files.h),
	 * opened by this unprivileged process; GET /v1/profiles merges them.
	 * The server closes it (also when server__start() fails).  has_windows false: that route answers 404.
	 */
	bool has_windows;
	int windows_dir;
};

struct server;

struct server *server__start(const struct server_opts *opts);
/* Captures running now. */
unsigned int server__running(struct server *srv);
void server__stop(struct server *srv);

#endif /* ISOPROF_SERVE_SERVER_H */
