// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* push: the sender thread, its retries and its log lines; see push.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "lib/monotime.h"
#include "lib/textescape.h"
#include "user/push/http_post.h"
#include "user/push/protocol.h"
#include "user/push/push.h"
#include "user/push/spool.h"
#include "user/push/spool_record.h"

/* Retries: 0.5 s doubling to 30 s, each wait drawn from [d/2, d] so that
 * many hosts whose store came back do not all knock at once. */
#define BACKOFF_FIRST_MS 500
#define BACKOFF_MAX_MS 30000
/* Log rate limits: a line of a kind at most this often. */
#define LOG_DOWN_EVERY_MS (10 * 60 * 1000)	/* "still unreachable" reminders */
/* Rejected, spool full, corrupt, errors: at most one line per interval, which
 * doubles while lines keep being left out (10 s, 20 s, ... 10 min): a store
 * refusing everything for an hour gets a dozen lines, not hundreds. */
#define LOG_KIND_FIRST_MS (10 * 1000)
#define LOG_KIND_MAX_MS (10 * 60 * 1000)
#define TOKEN_MAX 8192

enum log_kind { LOG_REJECT, LOG_FULL, LOG_CORRUPT, LOG_SPOOL_ERR, LOG_READ_ERR, NR_LOG_KINDS };

struct pusher {
	const struct push_protocol *proto;
	struct push_target target;
	char *url, *token, *tenant;
	struct spool *spool;
	uint64_t max_bytes;
	int timeout_ms;
	FILE *log;
	void *http;
	unsigned int seed;

	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;	/* to the sender: work, or stop */
	pthread_cond_t idle;	/* from the sender: the queue emptied or progress */
	bool stop;
	uint64_t deadline_ms;	/* closing: no request runs past it (0: none) */

	struct push_stats st;
	uint64_t backoff_ms, next_try_ms;
	/* the store's state as the log tells it */
	bool down, down_logged;
	uint64_t down_since_ms, down_reminded_ms, sent_since_back;
	char down_reason[200];
	uint64_t kind_logged_ms[NR_LOG_KINDS], kind_suppressed[NR_LOG_KINDS];
	uint64_t kind_every_ms[NR_LOG_KINDS];
};

static void plog(struct pusher *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void plog(struct pusher *p, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(p->log, "isoprof: push: %s\n", line);
	fflush(p->log);
}

/*
 * A line of kind at most once per its interval (LOG_KIND_FIRST_MS, doubled
 * each time lines were left out, back to the first when none were); the
 * lines left out meanwhile are counted into the next one.  Under p->mu.
 */
static void plog_kind(struct pusher *p, enum log_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void plog_kind(struct pusher *p, enum log_kind kind, const char *fmt, ...)
{
	uint64_t now = monotime_ms(), *every = &p->kind_every_ms[kind];
	char line[900];
	va_list ap;

	if (!*every)
		*every = LOG_KIND_FIRST_MS;
	if (p->kind_logged_ms[kind] && now - p->kind_logged_ms[kind] < *every) {
		p->kind_suppressed[kind]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (p->kind_suppressed[kind]) {
		plog(p, "%s (and %" PRIu64 " more like it in the last %" PRIu64 " s)", line,
		     p->kind_suppressed[kind], (now - p->kind_logged_ms[kind]) / 1000);
		*every = *every * 2 > LOG_KIND_MAX_MS ? LOG_KIND_MAX_MS : *every * 2;
	} else {
		plog(p, "%s", line);
		*every = LOG_KIND_FIRST_MS;
	}
	p->kind_logged_ms[kind] = now;
	p->kind_suppressed[kind] = 0;
}

/* Where waiting windows are kept, for a log line. */
static const char *where(struct pusher *p, char *buf, size_t len)
{
	if (spool__dir(p->spool))
		snprintf(buf, len, "in the spool %s", spool__dir(p->spool));
	else
		snprintf(buf, len, "in memory (no --spool)");
	return buf;
}

/* "512 B", "25.3 KiB", "1.5 MiB": a struct, so that one printf() may show several */
struct size_text {
	char s[24];
};

static struct size_text sz(uint64_t bytes)
{
	struct size_text t;

	if (bytes < 1024)
		snprintf(t.s, sizeof(t.s), "%" PRIu64 " B", bytes);
	else if (bytes < 1024 * 1024)
		snprintf(t.s, sizeof(t.s), "%.1f KiB", (double)bytes / 1024.0);
	else
		snprintf(t.s, sizeof(t.s), "%.1f MiB", (double)bytes / (1024.0 * 1024.0));
	return t;
}

/* "1970-01-01T00:00:10Z", for log lines about a window. */
static const char *utc(uint64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000ull);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%" PRIu64 " s", (uint64_t)(ns / 1000000000ull));
	return buf;
}

static uint64_t jitter(struct pusher *p, uint64_t d)
{
	return d / 2 + (uint64_t)rand_r(&p->seed) % (d / 2 + 1);
}

/* The store answered (taken or refused): it is up, the next window goes now.  Under p->mu. */
static void store_answered(struct pusher *p)
{
	p->backoff_ms = 0;
	p->next_try_ms = 0;
	if (p->down) {
		p->down = false;
		p->st.store_down = 0;
		p->sent_since_back = 0;
	}
}

/* The store answered 2xx.  Under p->mu. */
static void on_done(struct pusher *p, const struct http_post_result *r)
{
	uint64_t us = (uint64_t)(r->latency_ms * 1000.0);

	p->st.pushed++;
	p->st.last_latency_ms = r->latency_ms;
	if (r->latency_ms > p->st.max_latency_ms)
		p->st.max_latency_ms = r->latency_ms;
	p->st.latency_sum_us += us;
	store_answered(p);
	p->sent_since_back++;
}

/* The queue is empty: a store that was away and logged so is reported back.  Under p->mu. */
static void on_drained(struct pusher *p)
{
	if (p->down_logged && !p->down) {
		plog(p, "store back after %" PRIu64 " s, %" PRIu64 " windows sent",
		     (monotime_ms() - p->down_since_ms + 500) / 1000, p->sent_since_back);
		p->down_logged = false;
	}
}

/* Not taken, to be tried again.  Under p->mu. */
static void on_retry(struct pusher *p, const char *reason)
{
	uint64_t now = monotime_ms(), n, bytes;
	char at[300];

	p->st.retries++;
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_FIRST_MS;
	if (p->backoff_ms > BACKOFF_MAX_MS)
		p->backoff_ms = BACKOFF_MAX_MS;
	p->next_try_ms = now + jitter(p, p->backoff_ms);
	spool__count(p->spool, &n, &bytes);
	if (!p->down) {
		p->down = true;
		p->st.store_down = 1;
		snprintf(p->down_reason, sizeof(p->down_reason), "%s", reason);
		if (!p->down_logged) {
			/* a new outage (not one that began again before the backlog drained) */
			p->down_since_ms = now;
			p->down_reminded_ms = now;
			p->down_logged = true;
			plog(p, "store unreachable (%s): keeping windows %s and retrying; "
			     "%" PRIu64 " queued (%s)", reason, where(p, at, sizeof(at)), n,
			     sz(bytes).s);
		}
	} else if (now - p->down_reminded_ms >= LOG_DOWN_EVERY_MS) {
		p->down_reminded_ms = now;
		plog(p, "store still unreachable after %" PRIu64 " s (%s): %" PRIu64
		     " windows queued (%s of %s)", (now - p->down_since_ms) / 1000, reason, n,
		     sz(bytes).s, sz(p->max_bytes).s);
	}
}

/* Refused for good.  Under p->mu. */
static void on_reject(struct pusher *p, const struct push_window *w,
		      const struct http_post_result *r)
{
	char svc[TEXTESCAPE_SIZE(64)], body[TEXTESCAPE_SIZE(HTTP_POST_REPLY_MAX)], cut[65], t[32];

	p->st.rejected++;
	/* it answered: it is back, even if it does not want this window */
	store_answered(p);
	snprintf(cut, sizeof(cut), "%s", w->service);
	plog_kind(p, LOG_REJECT, "store refused the window of %s until %s: HTTP %ld: %s: dropped",
		  textescape(cut, svc, sizeof(svc)), utc(w->until_ns, t, sizeof(t)), r->status,
		  r->reply_len ? textescape(r->reply, body, sizeof(body)) : "(no body)");
}

/* One window: the oldest.  Returns false when the queue is empty. */
static bool send_one(struct pusher *p)
{
	struct http_post_result r;
	struct push_request rq;
	struct spool_item it;
	struct push_window w;
	enum push_verdict v;
	char reason[200], body[TEXTESCAPE_SIZE(HTTP_POST_REPLY_MAX)];
	const char *why;
	int timeout, err;
	uint64_t now;

	err = spool__take(p->spool, &it);
	if (err == -ENOENT)
		return false;
	if (err) {
		pthread_mutex_lock(&p->mu);
		p->st.corrupt++;
		plog_kind(p, LOG_READ_ERR, "cannot read a spool file: %s: skipped", strerror(-err));
		pthread_mutex_unlock(&p->mu);
		return true;
	}
	if (spool_record__decode(it.data, it.len, &w, &why)) {
		pthread_mutex_lock(&p->mu);
		p->st.corrupt++;
		if (it.name[0])
			plog_kind(p, LOG_CORRUPT, "spool file %s/%s is not a valid window (%s): "
				  "set aside as %s.corrupt, not sent", spool__dir(p->spool), it.name,
				  why, it.name);
		else
			plog_kind(p, LOG_CORRUPT, "a queued window is not valid (%s): dropped", why);
		pthread_mutex_unlock(&p->mu);
		spool__finish(p->spool, &it, SPOOL_CORRUPT);
		return true;
	}
	err = p->proto->build(&p->target, &w, &rq);
	if (err) {
		/* only memory can fail here: the window is fine, try it again */
		snprintf(reason, sizeof(reason), "cannot build the request: %s", strerror(-err));
		spool__finish(p->spool, &it, SPOOL_KEEP);
		pthread_mutex_lock(&p->mu);
		on_retry(p, reason);
		pthread_mutex_unlock(&p->mu);
		return true;
	}
	pthread_mutex_lock(&p->mu);
	timeout = p->timeout_ms;
	now = monotime_ms();
	if (p->deadline_ms) {
		uint64_t left = p->deadline_ms > now ? p->deadline_ms - now : 1;

		if (left < (uint64_t)timeout)
			timeout = (int)left;
	}
	pthread_mutex_unlock(&p->mu);

	err = http_post__send(p->http, &rq, timeout, &r);
	push_request__free(&rq);
	if (err)
		v = PUSH_RETRY;
	else
		v = p->proto->classify(r.status);

	pthread_mutex_lock(&p->mu);
	switch (v) {
	case PUSH_DONE:
		on_done(p, &r);
		break;
	case PUSH_REJECT:
		on_reject(p, &w, &r);
		break;
	case PUSH_RETRY:
		if (err)
			snprintf(reason, sizeof(reason), "%s", r.error);
		else if (r.status >= 300 && r.status < 400)
			snprintf(reason, sizeof(reason),
				 "HTTP %ld: redirects are not followed; is --push the store's own URL?",
				 r.status);
		else if (r.reply_len)
			snprintf(reason, sizeof(reason), "HTTP %ld: %.100s", r.status,
				 textescape(r.reply, body, sizeof(body)));
		else
			snprintf(reason, sizeof(reason), "HTTP %ld", r.status);
		on_retry(p, reason);
		break;
	}
	pthread_mutex_unlock(&p->mu);
	spool__finish(p->spool, &it, v == PUSH_RETRY ? SPOOL_KEEP : SPOOL_DONE);
	pthread_mutex_lock(&p->mu);
	if (v == PUSH_DONE) {
		uint64_t n, bytes;

		/* said here, not when the sender next finds nothing: close() may stop it first */
		spool__count(p->spool, &n, &bytes);
		if (!n)
			on_drained(p);
	}
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->mu);
	return true;
}

static void wait_until(struct pusher *p, uint64_t when_ms)
{
	struct timespec ts;
	uint64_t now = monotime_ms();

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (when_ms > now) {
		uint64_t ns = (uint64_t)ts.tv_nsec + (when_ms - now) * 1000000ull;

		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
	}
	pthread_cond_timedwait(&p->wake, &p->mu, &ts);
}

static void *sender(void *arg)
{
	struct pusher *p = arg;

	pthread_mutex_lock(&p->mu);
	while (!p->stop) {
		uint64_t now = monotime_ms(), n, bytes;

		if (p->next_try_ms > now) {
			wait_until(p, p->next_try_ms);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		if (send_one(p)) {
			pthread_mutex_lock(&p->mu);
			continue;
		}
		pthread_mutex_lock(&p->mu);
		on_drained(p);
		pthread_cond_broadcast(&p->idle);
		/* submit() signals; the timeout only guards against a lost wakeup */
		spool__count(p->spool, &n, &bytes);
		if (!n && !p->stop)
			wait_until(p, monotime_ms() + 1000);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* The token file's first line, checked to be a header value. */
static int read_token(const char *path, char **out, char *err, size_t err_len)
{
	uint8_t *data;
	size_t len;
	int e;

	*out = NULL;
	e = fileio__read_all(path, TOKEN_MAX, &data, &len);
	if (e) {
		errmsg__set(err, err_len, "token file %s: %s", path,
			    e == -EFBIG ? "bigger than a token can be" : strerror(-e));
		return e;
	}
	while (len && (data[len - 1] == '\n' || data[len - 1] == '\r' || data[len - 1] == ' ' ||
		       data[len - 1] == '\t'))
		len--;
	data[len] = '\0';
	for (size_t i = 0; i < len; i++) {
		/* a CR or LF would let the file add headers; say where, never what */
		if (data[i] < 0x21 || data[i] == 0x7f) {
			explicit_bzero(data, len);
			free(data);
			errmsg__set(err, err_len, "token file %s: byte %zu is a blank or control "
				    "character: the file must hold the token alone", path, i + 1);
			return -EINVAL;
		}
	}
	if (!len) {
		free(data);
		errmsg__set(err, err_len, "token file %s is empty", path);
		return -EINVAL;
	}
	*out = (char *)data;
	return 0;
}

static bool header_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static void pusher_free(struct pusher *p)
{
	if (p->token) {
		explicit_bzero(p->token, strlen(p->token));
		free(p->token);
	}
	free(p->url);
	free(p->tenant);
	spool__close(p->spool);
	http_post__free(p->http);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->wake);
	pthread_cond_destroy(&p->idle);
	free(p);
}

struct pusher *push__new(const struct push_opts *o, char *err, size_t err_len)
{
	struct spool_open_info info;
	pthread_condattr_t ca;
	struct pusher *p;
	const char *proto = o->protocol ? o->protocol : "pyroscope";
	size_t ulen;
	int e;

	if (!o->url || (strncmp(o->url, "http://", 7) && strncmp(o->url, "https://", 8)) ||
	    !header_safe(o->url) || strchr(o->url, ' ') || strchr(o->url, '?') ||
	    strchr(o->url, '#')) {
		errmsg__set(err, err_len, "--push needs the store's base URL, http:// or https://, "
			    "without a query");
		errno = EINVAL;
		return NULL;
	}
	if (!push_protocol__find(proto)) {
		errmsg__set(err, err_len, "unknown push protocol '%s' (known: %s)", proto,
			    push_protocol__names());
		errno = EINVAL;
		return NULL;
	}
	if (o->tenant && (!*o->tenant || !header_safe(o->tenant))) {
		errmsg__set(err, err_len, "--tenant: empty or with a control character");
		errno = EINVAL;
		return NULL;
	}
	if (http_post__global_init()) {
		errmsg__set(err, err_len, "libcurl failed to initialize");
		errno = EIO;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		errmsg__set(err, err_len, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->wake, &ca);
	pthread_cond_init(&p->idle, &ca);
	pthread_condattr_destroy(&ca);
	p->proto = push_protocol__find(proto);
	p->log = o->log ? o->log : stderr;
	p->timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : PUSH_TIMEOUT_MS_DEFAULT;
	p->max_bytes = o->spool_max_bytes ? o->spool_max_bytes :
		       o->spool_dir ? PUSH_SPOOL_MAX_DISK : PUSH_SPOOL_MAX_MEMORY;
	if (getrandom(&p->seed, sizeof(p->seed), GRND_NONBLOCK) != sizeof(p->seed))
		p->seed = (unsigned int)(monotime_ns() ^ (uint64_t)getpid());
	p->url = strdup(o->url);
	p->tenant = o->tenant ? strdup(o->tenant) : NULL;
	if (!p->url || (o->tenant && !p->tenant)) {
		errmsg__set(err, err_len, "out of memory");
		e = -ENOMEM;
		goto fail;
	}
	ulen = strlen(p->url);
	while (ulen > 8 && p->url[ulen - 1] == '/')
		p->url[--ulen] = '\0';
	if (o->token_file) {
		e = read_token(o->token_file, &p->token, err, err_len);
		if (e)
			goto fail;
	}
	p->target = (struct push_target){ .url = p->url, .token = p->token, .tenant = p->tenant };
	p->http = http_post__new();
	if (!p->http) {
		e = -errno;
		errmsg__set(err, err_len, "cannot make a libcurl handle");
		goto fail;
	}
	p->spool = spool__open(o->spool_dir, p->max_bytes, &info, err, err_len);
	if (!p->spool) {
		e = -errno;
		goto fail;
	}
	if (info.removed_tmp)
		plog(p, "removed %" PRIu64 " half-written file(s) from the spool %s",
		     info.removed_tmp, o->spool_dir);
	if (info.recovered) {
		p->st.recovered = info.recovered;
		plog(p, "%" PRIu64 " window(s) (%s) left in the spool %s by an earlier run: "
		     "sending them first", info.recovered, sz(info.recovered_bytes).s, o->spool_dir);
	}
	if (info.dropped) {
		p->st.dropped_full += info.dropped;
		plog(p, "spool %s holds more than %s: dropped its %" PRIu64
		     " oldest window(s)", o->spool_dir, sz(p->max_bytes).s, info.dropped);
	}
	e = -pthread_create(&p->thread, NULL, sender, p);
	if (e) {
		errmsg__set(err, err_len, "cannot start the sender thread: %s", strerror(-e));
		goto fail;
	}
	return p;
fail:
	pusher_free(p);
	errno = -e;
	return NULL;
}

int push__submit(struct pusher *p, const struct push_window *w)
{
	uint64_t dropped;
	size_t len;
	uint8_t *rec;
	int err;

	pthread_mutex_lock(&p->mu);
	err = p->stop || p->deadline_ms ? -ESHUTDOWN : 0;
	pthread_mutex_unlock(&p->mu);
	if (err)
		return err;
	err = spool_record__encode(w, &rec, &len);
	if (err)
		return err;
	err = spool__add(p->spool, rec, len, w->until_ns, &dropped);
	pthread_mutex_lock(&p->mu);
	if (dropped) {
		p->st.dropped_full += dropped;
		plog_kind(p, LOG_FULL, "spool full (%s): dropped the %" PRIu64
			  " oldest window(s) to keep the newest", sz(p->max_bytes).s, dropped);
	}
	if (err == -EFBIG) {
		p->st.dropped_full++;
		plog_kind(p, LOG_FULL, "a window of %s is bigger than the whole spool "
			  "(%s): dropped", sz(len).s, sz(p->max_bytes).s);
	} else if (err) {
		p->st.spool_errors++;
		plog_kind(p, LOG_SPOOL_ERR, "cannot write to the spool %s: %s: window dropped",
			  spool__dir(p->spool), strerror(-err));
	} else {
		p->st.submitted++;
		p->st.spooled++;
		pthread_cond_signal(&p->wake);
	}
	pthread_mutex_unlock(&p->mu);
	return err;
}

void push__stats(struct pusher *p, struct push_stats *out)
{
	pthread_mutex_lock(&p->mu);
	*out = p->st;
	spool__count(p->spool, &out->queued, &out->queued_bytes);
	pthread_mutex_unlock(&p->mu);
}

static int flush_locked(struct pusher *p, uint64_t deadline)
{
	for (;;) {
		uint64_t n, bytes, ns, now = monotime_ms();
		struct timespec ts;

		spool__count(p->spool, &n, &bytes);
		if (!n)
			return 0;
		if (now >= deadline)
			return -ETIMEDOUT;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ns = (uint64_t)ts.tv_nsec + (deadline - now) * 1000000ull;

		ts.tv_sec += (time_t)(ns / 1000000000ull);
		ts.tv_nsec = (long)(ns % 1000000000ull);
		pthread_cond_signal(&p->wake);
		pthread_cond_timedwait(&p->idle, &p->mu, &ts);
	}
}

int push__flush(struct pusher *p, int timeout_ms)
{
	int err;

	pthread_mutex_lock(&p->mu);
	err = flush_locked(p, monotime_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0));
	pthread_mutex_unlock(&p->mu);
	return err;
}

int push__close(struct pusher *p, int flush_timeout_ms)
{
	uint64_t n, bytes;
	int err;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->mu);
	p->deadline_ms = monotime_ms() + (uint64_t)(flush_timeout_ms > 0 ? flush_timeout_ms : 0);
	/* a window in its backoff pause gets one more try before the end */
	if (p->next_try_ms > p->deadline_ms)
		p->next_try_ms = p->deadline_ms;
	err = flush_locked(p, p->deadline_ms);
	p->stop = true;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);

	spool__count(p->spool, &n, &bytes);
	if (n && spool__dir(p->spool))
		plog(p, "%" PRIu64 " window(s) (%s) not sent yet: kept in the spool %s for "
		     "the next start", n, sz(bytes).s, spool__dir(p->spool));
	else if (n)
		plog(p, "%" PRIu64 " window(s) (%s) not sent and lost (no --spool)", n,
		     sz(bytes).s);
	pusher_free(p);
	return n ? -ETIMEDOUT : err;
}
