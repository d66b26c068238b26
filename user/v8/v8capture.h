/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8capture: V8's own profilers, driven through the runtimes' inspectors
 * over the window of a capture (docs/v8-profiler.md, docs/crosscheck.md).
 *
 * For each runtime process the caller adds, every inspector target (workerd:
 * one per service; node: its main thread) gets a session, and the profiler
 * of the capture's type is prepared before the window:
 *   cpu   Profiler.enable, Profiler.setSamplingInterval (before start, as V8
 *         requires), then at the window's start Profiler.start, at its end
 *         Profiler.stop (sent to every target first, the replies awaited
 *         together within a bound: v8_capture__stop_timeout_ms()), then
 *         Profiler.disable;
 *   heap  HeapProfiler.enable, then HeapProfiler.startSampling (interval
 *         524288 bytes, objects collected by GC included, so the profile
 *         shows what was allocated in the window), HeapProfiler.stopSampling,
 *         HeapProfiler.disable.
 * Nothing else is sent: no code is evaluated, and what was enabled is
 * disabled again, so the runtime is left as it was.  Sessions are closed
 * when the capture is freed.
 *
 * Failures are per target and never stop the others: each target keeps its
 * error text, and the caller reports it (the BPF capture goes on).  A
 * target that did not answer the stop in time is marked late; teardown
 * then waits for all such targets together at most a second, and never
 * again for their profile.
 *
 * Only loopback inspector addresses are contacted; a process whose
 * inspector listens on another address is refused.  Loopback is the
 * target's: for a process in its own network namespace, its sockets are
 * made in that namespace (lib/netns.h), never on the host's loopback.
 *
 * Ownership: the capture owns its targets and their JSON results until
 * v8_capture__free().  Errors: negative errno.  Nothing prints.
 */
#ifndef ISOPROF_V8_V8CAPTURE_H
#define ISOPROF_V8_V8CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct json_object;
struct inspector_session;

enum v8_capture_type {
	V8_CAPTURE_CPU,
	V8_CAPTURE_HEAP,
};

#define V8_HEAP_SAMPLING_INTERVAL 524288

struct v8_target {
	pid_t pid;
	char hostport[64];
	char *id;			/* workerd: the service name */
	char *title;
	char *url;
	struct inspector_session *session;
	bool enabled, started, stopped;
	int err;			/* first error, 0 when none */
	char errmsg[320];		/* what went wrong, for the user */
	struct json_object *profile;	/* result.profile of the stop call */
	/* CLOCK_MONOTONIC: after start, before the stop request, when its wait ended */
	uint64_t start_ns, stop_ns, reply_ns;
	int64_t stop_id;		/* the stop request's id, once sent */
	int64_t teardown_id;		/* the last request teardown sent */
	bool late;			/* no reply to the stop within the bound (err: -ETIMEDOUT) */
	char late_why[512];		/* the caller's finding on why, "" when it has none */
};

struct v8_capture {
	enum v8_capture_type type;
	uint32_t interval_us;		/* cpu: sampling interval */
	uint64_t heap_interval;		/* heap: bytes between samples */
	int timeout_ms;			/* per inspector call */
	struct v8_target *targets;
	size_t ntargets;
};

struct v8_capture *v8_capture__new(enum v8_capture_type type, uint32_t interval_us);
void v8_capture__free(struct v8_capture *c);

/*
 * Open a session to each inspector target of process pid at hostport
 * ("127.0.0.1:9229"; a wildcard host means loopback) and prepare the
 * profiler.  only_id, when non-NULL, keeps only the target with that id
 * (and all of them when none has it).  Returns the number of targets
 * added (0: the inspector lists none), or a negative errno with err set
 * when the inspector cannot be listed at all.
 */
int v8_capture__add_process(struct v8_capture *c, pid_t pid, const char *hostport,
			    const char *only_id, char *err, size_t errlen);

/* Start every prepared target; how many started. */
size_t v8_capture__start(struct v8_capture *c);

/*
 * The bound on waiting for V8's profile once the window is over, for a
 * window of window_ms: a quarter of it, at least 2 s and at most 10 s.  A
 * healthy isolate answers within a few hundred milliseconds even after a
 * 50 s window (docs/v8-profiler.md); one that has not answered by then is
 * blocked or busy, and waiting longer only delays isoprof's own profile.
 */
#define V8_STOP_TIMEOUT_MIN_MS 2000
#define V8_STOP_TIMEOUT_MAX_MS 10000
int v8_capture__stop_timeout_ms(long window_ms);

/*
 * Send the stop request to every started target (it only sends: each
 * send is bounded by the per-call timeout, and a local socket takes the
 * bytes at once); how many were sent.
 */
size_t v8_capture__request_stop(struct v8_capture *c);
/*
 * Wait up to timeout_ms in all for the replies to the stop requests, and
 * keep each profile; how many came.  A target without a reply by then is
 * late, with -ETIMEDOUT as its error.
 */
size_t v8_capture__collect(struct v8_capture *c, int timeout_ms);

/*
 * The host:port to connect to for a listening address: wildcards become
 * loopback.  -EPERM when the address is not loopback, -EINVAL when it is
 * not HOST:PORT.
 */
int v8_capture__connect_addr(const char *listen, char *out, size_t len);

#endif
