/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * protocol: how a window becomes one HTTP request to a kind of profile
 * store, and what the store's answer means.  A protocol is one small
 * module (user/push/pyroscope.c) with one entry in the table of
 * protocol.c.  Pure: no I/O; the pusher sends the request
 * (user/push/http_post.h).
 */
#ifndef ISOPROF_PUSH_PROTOCOL_H
#define ISOPROF_PUSH_PROTOCOL_H

#include <stddef.h>

#include "user/push/push.h"

#define PUSH_REQ_MAX_HEADERS 8

/* Where requests go and as whom: from struct push_opts. */
struct push_target {
	const char *url;	/* base URL, http:// or https://, no trailing '/' */
	const char *token;	/* bearer token or NULL */
	const char *tenant;	/* X-Scope-OrgID or NULL */
};

/* One POST: everything malloc()ed but body, which points into the window. */
struct push_request {
	char *url;
	char *headers[PUSH_REQ_MAX_HEADERS];	/* "Name: value" */
	size_t nheaders;
	const void *body;
	size_t len;
};

enum push_verdict {
	PUSH_DONE,	/* the store took it */
	PUSH_RETRY,	/* try again later, before any newer window */
	PUSH_REJECT,	/* refused for good: drop it */
};

struct push_protocol {
	const char *name;
	/* The request for w to t: 0, -EINVAL, -ENOMEM.  push_request__free() it. */
	int (*build)(const struct push_target *t, const struct push_window *w,
		     struct push_request *rq);
	/* What HTTP status means for the window. */
	enum push_verdict (*classify)(long status);
};

/* The protocol called name, or NULL; the names, ", "-separated, for a message. */
const struct push_protocol *push_protocol__find(const char *name);
const char *push_protocol__names(void);

void push_request__free(struct push_request *rq);

/* Add "name: value" to rq: 0, -E2BIG (too many), -ENOMEM. */
int push_request__add_header(struct push_request *rq, const char *name, const char *value);

/*
 * The usual meaning of an HTTP status for a write: 2xx done; 408, 429 and
 * 5xx retried; other 4xx rejected; 1xx and 3xx (redirects are not
 * followed) retried, as the window is not at fault.
 */
enum push_verdict push_protocol__classify_http(long status);

/* Append s percent-encoded (all but RFC 3986's unreserved bytes) to out[*n..cap). */
int push__url_escape(const char *s, char **out, size_t *n, size_t *cap);

/* Pyroscope's /ingest (user/push/pyroscope.c) */
extern const struct push_protocol push_pyroscope;

/*
 * Pyroscope's "name" parameter for w, as its /ingest parses it:
 * service{name=value,...}, malloc()ed into *out; what had to be changed
 * to fit Pyroscope's rules is explained in pyroscope.c.  0, -EINVAL (no
 * service), -ENOMEM.
 */
int pyroscope__name_param(const struct push_window *w, char **out);

#endif /* ISOPROF_PUSH_PROTOCOL_H */
