// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* protocol: the table of profile store protocols and what they share; see protocol.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/push/protocol.h"

/* A second protocol is one module and one line here. */
static const struct push_protocol *const protocols[] = {
	&push_pyroscope,
};

const struct push_protocol *push_protocol__find(const char *name)
{
	for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
		if (!strcmp(protocols[i]->name, name))
			return protocols[i];
	return NULL;
}

const char *push_protocol__names(void)
{
	static char names[128];

	if (!names[0]) {
		size_t n = 0;

		for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
			n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0,
					      "%s%s", i ? ", " : "", protocols[i]->name);
	}
	return names;
}

void push_request__free(struct push_request *rq)
{
	free(rq->url);
	for (size_t i = 0; i < rq->nheaders; i++) {
		/* a header may hold the bearer token: leave no copy behind */
		explicit_bzero(rq->headers[i], strlen(rq->headers[i]));
		free(rq->headers[i]);
	}
	memset(rq, 0, sizeof(*rq));
}

int push_request__add_header(struct push_request *rq, const char *name, const char *value)
{
	char *h;

	if (rq->nheaders >= PUSH_REQ_MAX_HEADERS)
		return -E2BIG;
	if (asprintf(&h, "%s: %s", name, value) < 0)
		return -ENOMEM;
	rq->headers[rq->nheaders++] = h;
	return 0;
}

enum push_verdict push_protocol__classify_http(long status)
{
	if (status >= 200 && status < 300)
		return PUSH_DONE;
	/*
	 * 401/403: the host's credentials, not the window, are wrong (an
	 * expired token, an auth proxy's hiccup): keep the windows until they
	 * are fixed, within the spool's bound, rather than drop every one.
	 */
	if (status == 408 || status == 429 || status == 401 || status == 403)
		return PUSH_RETRY;
	if (status >= 400 && status < 500)
		return PUSH_REJECT;
	return PUSH_RETRY;
}

static int reserve(char **out, size_t *cap, size_t need)
{
	size_t ncap;
	char *nb;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < need)
		ncap *= 2;
	nb = realloc(*out, ncap);
	if (!nb)
		return -ENOMEM;
	*out = nb;
	*cap = ncap;
	return 0;
}

int push__url_escape(const char *s, char **out, size_t *n, size_t *cap)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (reserve(out, cap, *n + 4))
			return -ENOMEM;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			(*out)[(*n)++] = (char)c;
		} else {
			(*out)[(*n)++] = '%';
			(*out)[(*n)++] = hex[c >> 4];
			(*out)[(*n)++] = hex[c & 15];
		}
		(*out)[*n] = '\0';
	}
	if (reserve(out, cap, *n + 1))
		return -ENOMEM;
	(*out)[*n] = '\0';
	return 0;
}
