// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* http_post: one POST with libcurl, locked down; see http_post.h. */
#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "lib/monotime.h"
#include "user/push/http_post.h"

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

int http_post__global_init(void)
{
	pthread_once(&global_once, global_init);
	return global_rc == CURLE_OK ? 0 : -EIO;
}

void *http_post__new(void)
{
	CURL *h;

	if (http_post__global_init()) {
		errno = EIO;
		return NULL;
	}
	h = curl_easy_init();
	if (!h)
		errno = ENOMEM;
	return h;
}

void http_post__free(void *h)
{
	if (h)
		curl_easy_cleanup(h);
}

/* Keep the first bytes of the answer, for a log line; read the rest away. */
static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct http_post_result *r = arg;
	size_t n = size * nmemb, room = HTTP_POST_REPLY_MAX - r->reply_len;

	if (room) {
		size_t k = n < room ? n : room;

		memcpy(r->reply + r->reply_len, data, k);
		r->reply_len += k;
		r->reply[r->reply_len] = '\0';
	}
	return n;
}

int http_post__send(void *h, const struct push_request *rq, int timeout_ms,
		    struct http_post_result *r)
{
	struct curl_slist *headers = NULL, *nh;
	char errbuf[CURL_ERROR_SIZE];
	uint64_t t0;
	CURLcode rc;
	int err = 0;

	memset(r, 0, sizeof(*r));
	errbuf[0] = '\0';
	curl_easy_reset(h);
	for (size_t i = 0; i < rq->nheaders; i++) {
		nh = curl_slist_append(headers, rq->headers[i]);
		if (!nh) {
			curl_slist_free_all(headers);
			snprintf(r->error, sizeof(r->error), "out of memory");
			return -ENOMEM;
		}
		headers = nh;
	}
	/* curl adds "Expect: 100-continue" to big bodies and waits for it: not here */
	nh = curl_slist_append(headers, "Expect:");
	if (!nh) {
		curl_slist_free_all(headers);
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -ENOMEM;
	}
	headers = nh;

	curl_easy_setopt(h, CURLOPT_URL, rq->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->len);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "isoprof");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);

	t0 = monotime_ns();
	rc = curl_easy_perform(h);
	r->latency_ms = (double)(monotime_ns() - t0) / 1e6;
	if (rc == CURLE_OK) {
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
	} else {
		snprintf(r->error, sizeof(r->error), "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		err = -EIO;
	}
	/* the handle keeps no pointer to what is freed now */
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_slist_free_all(headers);
	return err;
}
