// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* V8's own profilers over a capture's window, through the inspector (see v8capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/errmsg.h"
#include "lib/json.h"
#include "lib/monotime.h"
#include "lib/netns.h"
#include "user/v8/inspector.h"
#include "user/v8/v8capture.h"

#define DEFAULT_TIMEOUT_MS 5000
/*
 * Teardown of targets that did not answer in time: they are not waited for
 * again beyond this, all of them together.  Closing the session disables
 * what it enabled anyway, in node and workerd, once the thread is back.
 */
#define TEARDOWN_TIMEOUT_MS 1000

struct v8_capture *v8_capture__new(enum v8_capture_type type, uint32_t interval_us)
{
	struct v8_capture *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->type = type;
	c->interval_us = interval_us ? interval_us : 1000;
	c->heap_interval = V8_HEAP_SAMPLING_INTERVAL;
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	return c;
}

static void target_fail(struct v8_target *t, int err, const char *what, const char *why)
{
	if (t->err)
		return;
	t->err = err ? err : -EIO;
	/* the inspector's own messages already name the method they are about */
	if (why && !strncmp(why, what, strlen(what)) && why[strlen(what)] == ':')
		errmsg__set(t->errmsg, sizeof(t->errmsg), "%s", why);
	else
		errmsg__set(t->errmsg, sizeof(t->errmsg), "%s: %s", what,
			    why && *why ? why : strerror(-t->err));
}

static int call(struct v8_capture *c, struct v8_target *t, const char *method,
		struct json_object *params, int timeout_ms, struct json_object **result)
{
	char why[256] = "";
	int err;

	if (!t->session)
		return -ENOTCONN;
	err = inspector__call(t->session, method, params, timeout_ms ? timeout_ms : c->timeout_ms,
			      result, why, sizeof(why));
	if (err) {
		size_t n = strlen(method);

		/* inspector__call()'s message already starts with the method */
		target_fail(t, err, method,
			    !strncmp(why, method, n) && !strncmp(why + n, ": ", 2) ? why + n + 2 : why);
	}
	return err;
}

/* Prepare: enable the profiler and set its interval, which V8 only takes before start. */
static int prepare(struct v8_capture *c, struct v8_target *t)
{
	struct json_object *params;
	int err;

	if (c->type == V8_CAPTURE_HEAP) {
		err = call(c, t, "HeapProfiler.enable", NULL, 0, NULL);
		if (!err)
			t->enabled = true;
		return err;
	}
	err = call(c, t, "Profiler.enable", NULL, 0, NULL);
	if (err)
		return err;
	t->enabled = true;
	params = json_object_new_object();
	if (json__put(params, "interval", json_object_new_int64(c->interval_us))) {
		json_object_put(params);
		return -ENOMEM;
	}
	err = call(c, t, "Profiler.setSamplingInterval", params, 0, NULL);
	json_object_put(params);
	return err;
}

static void free_target(struct v8_target *t)
{
	free(t->id);
	free(t->title);
	free(t->url);
	if (t->profile)
		json_object_put(t->profile);
}

int v8_capture__connect_addr(const char *listen, char *out, size_t len)
{
	struct inspector_addr addr;
	char why[128];
	const char *port = NULL;
	int n, err;

	/* a wildcard listener answers on loopback too */
	if (!strncmp(listen, "0.0.0.0:", 8))
		port = listen + 8;
	else if (!strncmp(listen, "[::]:", 5))
		port = listen + 5;
	else if (!strncmp(listen, "*:", 2))
		port = listen + 2;
	n = port ? snprintf(out, len, "127.0.0.1:%s", port) : snprintf(out, len, "%s", listen);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	err = inspector__parse_hostport(out, &addr, why, sizeof(why));
	return err == -EPERM ? -EPERM : err ? -EINVAL : 0;
}

int v8_capture__add_process(struct v8_capture *c, pid_t pid, const char *hostport,
			    const char *only_id, char *err, size_t errlen)
{
	struct inspector_target *list = NULL;
	struct v8_target *grown;
	char addr[64];
	size_t n = 0, added = 0;
	bool only_found = false;
	int ret, netns = -1;

	ret = v8_capture__connect_addr(hostport, addr, sizeof(addr));
	if (ret) {
		errmsg__set(err, errlen, "inspector %s: %s", hostport,
			    ret == -EPERM ? "not a loopback address; isoprof only contacts loopback"
					  : "not HOST:PORT");
		return ret;
	}
	/*
	 * Loopback is the target's: in its own network namespace, the host's
	 * 127.0.0.1:9229 is anyone's to listen on.  Sockets are made in its
	 * namespace; the fd is only needed until they exist.
	 */
	ret = netns__open(pid, &netns);
	if (ret) {
		errmsg__set(err, errlen, "inspector %s: pid %d's network namespace: %s", hostport,
			    (int)pid, strerror(-ret));
		return ret;
	}
	ret = inspector__list(addr, netns, c->timeout_ms, &list, &n, err, errlen);
	if (ret)
		goto out;
	for (size_t i = 0; only_id && i < n; i++)
		only_found |= !strcmp(list[i].id, only_id);
	grown = realloc(c->targets, (c->ntargets + n + 1) * sizeof(*grown));
	if (!grown) {
		ret = -ENOMEM;
		goto out;
	}
	c->targets = grown;
	for (size_t i = 0; i < n; i++) {
		struct v8_target *t = &c->targets[c->ntargets];
		char why[256] = "";

		if (only_found && strcmp(list[i].id, only_id))
			continue;
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		snprintf(t->hostport, sizeof(t->hostport), "%s", addr);
		t->id = strdup(list[i].id ? list[i].id : "");
		t->title = strdup(list[i].title ? list[i].title : "");
		t->url = strdup(list[i].url ? list[i].url : "");
		if (!t->id || !t->title || !t->url) {
			free_target(t);
			ret = -ENOMEM;
			goto out;
		}
		c->ntargets++;
		added++;
		ret = inspector__open(addr, netns, list[i].ws_path, c->timeout_ms, &t->session,
				      why, sizeof(why));
		if (ret) {
			t->session = NULL;
			target_fail(t, ret, "connect", why);
			continue;
		}
		prepare(c, t);
	}
	ret = (int)added;
out:
	inspector__free_targets(list, n);
	if (netns >= 0)
		close(netns);
	return ret;
}

static struct json_object *heap_sampling_params(const struct v8_capture *c)
{
	struct json_object *params = json_object_new_object();
	int err = 0;

	err |= json__put(params, "samplingInterval",
			 json_object_new_int64((int64_t)c->heap_interval));
	/* allocations in the window, not only what survives until stop */
	err |= json__put(params, "includeObjectsCollectedByMajorGC", json_object_new_boolean(1));
	err |= json__put(params, "includeObjectsCollectedByMinorGC", json_object_new_boolean(1));
	if (err) {
		json_object_put(params);
		return NULL;
	}
	return params;
}

size_t v8_capture__start(struct v8_capture *c)
{
	struct json_object *params;
	size_t started = 0;

	for (size_t i = 0; i < c->ntargets; i++) {
		struct v8_target *t = &c->targets[i];
		int err;

		if (t->err || !t->enabled)
			continue;
		if (c->type == V8_CAPTURE_HEAP) {
			params = heap_sampling_params(c);
			if (!params) {
				target_fail(t, -ENOMEM, "HeapProfiler.startSampling", NULL);
				continue;
			}
			err = call(c, t, "HeapProfiler.startSampling", params, 0, NULL);
			json_object_put(params);
		} else {
			err = call(c, t, "Profiler.start", NULL, 0, NULL);
		}
		if (err)
			continue;
		t->started = true;
		t->start_ns = monotime_ns();
		started++;
	}
	return started;
}

int v8_capture__stop_timeout_ms(long window_ms)
{
	long ms = window_ms / 4;

	if (ms < V8_STOP_TIMEOUT_MIN_MS)
		ms = V8_STOP_TIMEOUT_MIN_MS;
	if (ms > V8_STOP_TIMEOUT_MAX_MS)
		ms = V8_STOP_TIMEOUT_MAX_MS;
	return (int)ms;
}

static const char *stop_method(const struct v8_capture *c)
{
	return c->type == V8_CAPTURE_HEAP ? "HeapProfiler.stopSampling" : "Profiler.stop";
}

size_t v8_capture__request_stop(struct v8_capture *c)
{
	size_t sent = 0;

	for (size_t i = 0; i < c->ntargets; i++) {
		struct v8_target *t = &c->targets[i];
		char why[256] = "";
		int err;

		if (!t->started || t->stopped || t->stop_id || t->err)
			continue;
		t->stop_ns = monotime_ns();
		err = inspector__send(t->session, stop_method(c), NULL, c->timeout_ms, &t->stop_id,
				      why, sizeof(why));
		if (err) {
			target_fail(t, err, stop_method(c), why);
			continue;
		}
		sent++;
	}
	return sent;
}

/* A reply to the stop request: keep its profile. */
static void keep_profile(struct v8_capture *c, struct v8_target *t, struct json_object *result)
{
	struct json_object *profile = json__member(result, "profile");

	t->stopped = true;
	if (!json_object_is_type(profile, json_type_object))
		target_fail(t, -EBADMSG, stop_method(c), "the reply holds no profile");
	else
		t->profile = json_object_get(profile);
}

size_t v8_capture__collect(struct v8_capture *c, int timeout_ms)
{
	size_t got = 0;

	/*
	 * Each target's bound runs from its request, sent to all of them
	 * together: the replies are awaited in parallel, and whatever the
	 * caller did in between counts.
	 */
	for (size_t i = 0; i < c->ntargets; i++) {
		struct v8_target *t = &c->targets[i];
		uint64_t deadline = t->stop_ns + (uint64_t)timeout_ms * 1000000ull;
		struct json_object *result = NULL;
		uint64_t now = monotime_ns();
		char why[320] = "";
		int err, left_ms;

		if (!t->stop_id || t->stopped || t->err)
			continue;
		left_ms = now < deadline ? (int)((deadline - now + 999999) / 1000000) : 0;
		err = inspector__wait(t->session, stop_method(c), t->stop_id, left_ms, &result, why,
				      sizeof(why));
		t->reply_ns = monotime_ns();
		if (err == -ETIMEDOUT) {
			t->late = true;
			errmsg__set(why, sizeof(why), "no reply within %.1f s of the request",
				    (t->reply_ns - t->stop_ns) / 1e9);
		}
		if (err) {
			target_fail(t, err, stop_method(c), why);
			continue;
		}
		keep_profile(c, t, result);
		got += t->profile != NULL;
		json_object_put(result);
	}
	return got;
}

/*
 * Leave the runtime as it was: nothing left running or enabled.  Every
 * request goes out first and the replies are awaited together, so that
 * targets that stopped answering cost TEARDOWN_TIMEOUT_MS in all, once.
 */
static void teardown(struct v8_capture *c)
{
	const char *disable = c->type == V8_CAPTURE_HEAP ? "HeapProfiler.disable"
							 : "Profiler.disable";
	bool late = false;
	uint64_t deadline;
	char why[64];

	for (size_t i = 0; i < c->ntargets; i++) {
		struct v8_target *t = &c->targets[i];

		late |= t->late;
		t->teardown_id = 0;
		if (!t->session)
			continue;
		/* a stop already sent (late or not) needs no other */
		if (t->started && !t->stopped && !t->stop_id)
			inspector__send(t->session, stop_method(c), NULL, c->timeout_ms,
					&t->teardown_id, why, sizeof(why));
		if (t->enabled)
			inspector__send(t->session, disable, NULL, c->timeout_ms, &t->teardown_id, why,
					sizeof(why));
	}
	deadline = monotime_ns() +
		   (uint64_t)(late ? TEARDOWN_TIMEOUT_MS : c->timeout_ms) * 1000000ull;
	for (size_t i = 0; i < c->ntargets; i++) {
		struct v8_target *t = &c->targets[i];
		uint64_t now = monotime_ns();
		struct json_object *result = NULL;

		if (!t->teardown_id || now >= deadline)
			continue;
		/* the last request sent; replies to the ones before it come first */
		inspector__wait(t->session, disable, t->teardown_id,
				(int)((deadline - now + 999999) / 1000000), &result, why, sizeof(why));
		if (result)
			json_object_put(result);
	}
}

void v8_capture__free(struct v8_capture *c)
{
	if (!c)
		return;
	teardown(c);
	for (size_t i = 0; i < c->ntargets; i++) {
		inspector__close(c->targets[i].session);
		free_target(&c->targets[i]);
	}
	free(c->targets);
	free(c);
}
