/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * http_post: one POST of a push_request with libcurl, on a handle the
 * caller keeps (connections are reused between windows).
 *
 * What curl is told, and why:
 *  - only http and https, and no redirect is followed (a store that
 *    answers 3xx gets the window again later, never another host);
 *  - TLS peers and host names are verified (curl's default CA bundle);
 *  - a connect timeout and a whole-request timeout (timeout_ms);
 *  - no "Expect: 100-continue" (a body is sent at once);
 *  - no signals (it runs in the pusher's thread);
 *  - proxies: curl's own rules for the environment (http_proxy,
 *    https_proxy, no_proxy; not HTTP_PROXY), nothing more.
 * Nothing is printed, and the request's headers (the bearer token) are
 * never copied into the result.
 */
#ifndef ISOPROF_PUSH_HTTP_POST_H
#define ISOPROF_PUSH_HTTP_POST_H

#include "user/push/protocol.h"

#define HTTP_POST_REPLY_MAX 200

struct http_post_result {
	long status;		/* the HTTP status; 0 when there was no answer */
	char error[160];	/* why there was no answer (curl's words) */
	char reply[HTTP_POST_REPLY_MAX + 1];	/* the start of the answer's body, raw */
	size_t reply_len;
	double latency_ms;
};

/* libcurl's process-wide setup, once, from the main thread: 0 or -EIO. */
int http_post__global_init(void);

/* A handle for http_post__send(); NULL with errno. */
void *http_post__new(void);
void http_post__free(void *h);

/*
 * POST rq on handle h within timeout_ms.  0 with r->status set when the
 * server answered (whatever the status); -EIO with r->error when it did
 * not (connection refused, timeout, TLS failure...).
 */
int http_post__send(void *h, const struct push_request *rq, int timeout_ms,
		    struct http_post_result *r);

#endif /* ISOPROF_PUSH_HTTP_POST_H */
