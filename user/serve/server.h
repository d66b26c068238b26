/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * server: the HTTP side of `isoprof serve` (SPEC §9, docs/daemon.md) over
 * libmicrohttpd: routing (api.h), the token and browser checks, the page's
 * files (web_assets.h), and captures, each a child `isoprof record` in a
 * private temporary directory (daemon.h) whose exit status becomes the
 * response (api__record_exit_code()).  The server itself never loads BPF.
 *
 * A thread per connection: a capture holds its connection's thread for up
 * to the window plus a grace period while the others carry on.  The
 * threads inherit the caller's signal mask: block the signals the program
 * waits for (SIGINT, SIGTERM) and ignore SIGPIPE before server__start().
 *
 * server__start() listens and returns, or returns NULL with errno set (0
 * when libmicrohttpd did not say why) and nothing running.  server__stop() refuses new requests (503), cancels
 * the running captures (their children get SIGTERM, then SIGKILL), waits
 * for every connection thread, and frees the server.
 *
 * The server writes its log to opts->log: one line per request
 * ("isoprof serve: CLIENT METHOD PATH STATUS N ms (what a capture did)"),
 * never a header (so never the token), and libmicrohttpd's own errors.
 */
#ifndef ISOPROF_SERVE_SERVER_H
#define ISOPROF_SERVE_SERVER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include "lib/sha256.h"

struct server_opts {
	const struct sockaddr *addr;	/* where to listen: AF_INET or AF_INET6 */
	socklen_t addrlen;
	/*
	 * SHA-256 of the bearer token every API request must carry, or NULL:
	 * no token, and requests whose Host or Origin is not this loopback
	 * daemon are refused (a web page could reach it otherwise).
	 */
	const uint8_t *token_digest;
	unsigned int max_captures;	/* daemon_admit__new()'s limits */
	unsigned int rate_burst;
	unsigned int rate_window_s;
	const char *tmp_root;		/* where captures get their directories */
	const char *self;		/* the isoprof executable the children run */
	FILE *log;
};

struct server;

struct server *server__start(const struct server_opts *opts);
/* Captures running now. */
unsigned int server__running(struct server *srv);
void server__stop(struct server *srv);

#endif /* ISOPROF_SERVE_SERVER_H */
