/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * push: delivers profile windows (one gzipped pprof per isolate per
 * window, from `isoprof continuous`) to a profile store, oldest first,
 * with nothing lost while the store is away.  It knows nothing of how a
 * window was captured: it takes bytes and metadata.
 *
 * push__submit() queues a copy of the window and returns; a sender thread
 * does the HTTP.  With a spool directory every window is written there
 * atomically first (user/push/spool.h) and deleted once the store has
 * taken it, so windows survive the store being down and isoprof being
 * restarted (a predecessor's windows are sent first); without one, the
 * same queue lives in memory.  Either way the queue is capped at
 * spool_max_bytes: adding a window that would exceed it drops the oldest
 * first (counted in dropped_full).
 *
 * What the store answers decides a window's fate (the protocol classifies
 * it, user/push/protocol.h): taken (2xx) is done; refused for good (4xx
 * but 401, 403, 408 and 429) is logged, dropped and counted as rejected;
 * anything else (5xx, 401 and 403: the host's credentials, 408, 429, a
 * redirect, a connection error or timeout) keeps the window and retries
 * it, with exponential backoff and jitter, before any newer one.
 *
 * The pusher writes its own log lines ("isoprof: push: ...", to o->log or
 * stderr), one per kind of event and rate-limited: a store down for an
 * hour gets one line when it goes and one when it is back.  The bearer
 * token is read once from token_file and never written anywhere but the
 * Authorization header.
 *
 * Thread-safety: push__submit() and push__stats() may be called from any
 * thread; push__new() from the main thread before others use libcurl.
 * Errors are negative errno values; push__new() returns NULL with a
 * sentence in err.
 */
#ifndef ISOPROF_PUSH_PUSH_H
#define ISOPROF_PUSH_PUSH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PUSH_MAX_LABELS 16
/* Defaults of spool_max_bytes: on disk, and in memory (no spool_dir) */
#define PUSH_SPOOL_MAX_DISK (256ull << 20)
#define PUSH_SPOOL_MAX_MEMORY (64ull << 20)
#define PUSH_TIMEOUT_MS_DEFAULT 10000

struct push_label {
	const char *name, *value;
};

struct push_window {
	const char *service;		/* application name, e.g. the worker's service */
	const char *profile_type;	/* "cpu" (later "alloc") */
	struct push_label labels[PUSH_MAX_LABELS];	/* script, version, isolate, pid, host... */
	size_t nlabels;
	uint64_t from_ns, until_ns;	/* CLOCK_REALTIME, the window */
	unsigned int sample_rate_hz;
	const void *body;		/* the pprof, gzipped */
	size_t len;
};

struct push_opts {
	const char *url;		/* --push URL: http:// or https:// base of the store */
	const char *protocol;		/* NULL: "pyroscope"; see push_protocol__find() */
	const char *token_file;		/* bearer token, read once, never logged; NULL: none */
	const char *tenant;		/* X-Scope-OrgID; NULL: none */
	const char *spool_dir;		/* --spool DIR; NULL: a bounded in-memory queue */
	uint64_t spool_max_bytes;	/* 0: PUSH_SPOOL_MAX_DISK or PUSH_SPOOL_MAX_MEMORY */
	int timeout_ms;			/* per request; 0: PUSH_TIMEOUT_MS_DEFAULT */
	FILE *log;			/* where the pusher's log lines go; NULL: stderr */
};

struct push_stats {
	uint64_t submitted;	/* windows given to push__submit() and queued */
	uint64_t pushed;	/* taken by the store */
	uint64_t spooled;	/* written to the spool directory (or the memory queue) */
	uint64_t dropped_full;	/* the oldest, dropped to stay within spool_max_bytes */
	uint64_t rejected;	/* refused by the store for good (4xx), dropped */
	uint64_t retries;	/* attempts that failed and will be retried */
	uint64_t corrupt;	/* spool files that failed validation, set aside unsent */
	uint64_t spool_errors;	/* windows that could not be written to the spool */
	uint64_t recovered;	/* a predecessor's windows found in the spool at start */
	uint64_t queued;	/* windows waiting now (the spool's or memory's) */
	uint64_t queued_bytes;	/* their size (spool file sizes) */
	int store_down;		/* 1 while the last attempt failed and will be retried */
	double last_latency_ms, max_latency_ms;	/* of successful requests */
	uint64_t latency_sum_us;	/* over the pushed ones: mean = sum / pushed */
};

struct pusher;

/*
 * A pusher for o (copied; the strings need not outlive the call), its
 * sender thread started.  With a spool directory (created 0700 if
 * missing), the temporary files a predecessor left half-written are
 * removed and its windows are queued to go first.  NULL with errno and a
 * sentence in err: a URL that is not http:// or https://, an unknown
 * protocol, an unreadable or empty token file, a spool directory that
 * cannot be used or that another isoprof is using.
 */
struct pusher *push__new(const struct push_opts *o, char *err, size_t err_len);

/*
 * Queue a copy of w (the caller keeps w and its strings).  Never waits
 * for the network; with a spool it writes and fsyncs one file.  0, or
 * -EINVAL (no service, an empty body, nlabels > PUSH_MAX_LABELS, from
 * after until, a string too long for the spool format), -EFBIG (the
 * window alone is bigger than spool_max_bytes: dropped and counted),
 * -ESHUTDOWN after push__close() began, -errno of the spool write.
 */
int push__submit(struct pusher *p, const struct push_window *w);

/* A snapshot of the counters. */
void push__stats(struct pusher *p, struct push_stats *out);

/*
 * Wait up to timeout_ms for the queue to empty (the sender keeps sending
 * and retrying meanwhile; new windows may still be submitted).  0 when it
 * is empty, -ETIMEDOUT otherwise.
 */
int push__flush(struct pusher *p, int timeout_ms);

/*
 * Send what is queued within flush_timeout_ms, then stop the sender and
 * free p.  Whatever is not sent stays in the spool for the next start
 * (or, without one, is lost): one log line says how many.  0 when
 * everything was sent, -ETIMEDOUT otherwise.  NULL p is a no-op.
 */
int push__close(struct pusher *p, int flush_timeout_ms);

#endif /* ISOPROF_PUSH_PUSH_H */
