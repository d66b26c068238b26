/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * daemon: what `isoprof serve` needs besides HTTP (docs/daemon.md).
 *
 * Admission (struct daemon_admit): bounds the captures.  At most
 * max_captures run at once, at most one per target (a string: script and
 * version), and a token bucket refills burst captures per window_s
 * seconds.  daemon_admit__acquire() takes the caller's monotonic time in
 * milliseconds (so tests can drive it) and returns a slot (>= 0) to give
 * back with daemon_admit__release(), or:
 *   -EBUSY   a capture of this target is running,
 *   -EAGAIN  every slot is taken,
 *   -EDQUOT  the bucket is empty,
 * with *retry_after_s the whole seconds (>= 1) after which it may succeed.
 * Thread-safe (one mutex inside).  The constructor returns NULL and sets
 * errno (EINVAL for zero limits, ENOMEM).
 *
 * Children (daemon__run_child): fork and exec a program (the privileged
 * helper, privsep.h, runs its own binary: "/proc/self/exe record ..."), in
 * its own process group,
 * stdin from /dev/null, stdout and stderr through pipes, every other file
 * descriptor closed, signals unblocked and SIGPIPE at its default.  It
 * returns when the child has exited and been reaped.  Kept: the first
 * out_max bytes of stdout (out_truncated when there was more) and the last
 * err_max bytes of stderr.  When timeout_ms passes or cancel() returns
 * true (polled every 100 ms), the group gets SIGTERM, then SIGKILL 3 s
 * later, so a capture can stop V8's profilers before it exits.  Returns 0
 * and fills *res (free it with daemon_child__free()), or a negative errno
 * when the child could not be started.  With data_limit, the child gets
 * that RLIMIT_DATA (heap and private writable mappings) before exec: a
 * capture that would take the host's memory fails instead (ENOMEM).
 *
 * daemon__remove_dir() removes a directory and the files directly in it;
 * the directory itself is opened without following a symlink.
 */
#ifndef ISOPROF_SERVE_DAEMON_H
#define ISOPROF_SERVE_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct daemon_admit;

struct daemon_admit *daemon_admit__new(unsigned int max_captures, unsigned int burst,
				       unsigned int window_s);
void daemon_admit__free(struct daemon_admit *a);
int daemon_admit__acquire(struct daemon_admit *a, const char *target, long duration_ms,
			  uint64_t now_ms, unsigned int *retry_after_s);
void daemon_admit__release(struct daemon_admit *a, int slot);
/* Captures running now. */
unsigned int daemon_admit__running(struct daemon_admit *a);

struct daemon_child_opts {
	const char *path;		/* program to exec */
	char *const *argv;
	uint64_t timeout_ms;
	size_t out_max;
	size_t err_max;
	bool (*cancel)(void *arg);	/* NULL: never */
	void *arg;
	uint64_t data_limit;		/* RLIMIT_DATA of the child in bytes; 0: none */
};

struct daemon_child {
	int wait_status;		/* from waitpid() */
	bool timed_out;
	bool cancelled;
	bool out_truncated;
	char *out;			/* NUL-terminated, out_len bytes before it */
	size_t out_len;
	char *err;
	size_t err_len;
};

int daemon__run_child(const struct daemon_child_opts *opts, struct daemon_child *res);
void daemon_child__free(struct daemon_child *res);

/*
 * Workers: a child started as daemon__run_child() starts one (opts copied;
 * argv and arg must outlive the worker), but kept between requests, for a
 * program that keeps state from one to the next (`isoprof targets --json
 * --requests`).  Its stdin is a socket: each daemon_worker__ask() writes one
 * byte to it and reads back one frame on its stdout (struct daemon_frame,
 * then len bytes), the child's stderr meanwhile.  The child is started at
 * the first request, and again at the next one after it exited (a crash,
 * RLIMIT_DATA); a request that finds it gone since the last one starts
 * it again once.
 *
 * daemon_worker__ask() fills *res as daemon__run_child() does: out is the
 * frame's payload, err what the child wrote on stderr during the request
 * (its last err_max bytes), wait_status an exit with the frame's status.
 * When the child exits, writes something that is not a frame or a frame
 * over out_max (out_truncated), or timeout_ms passes or cancel() says so
 * (timed_out, cancelled), it is stopped (SIGTERM to its group, SIGKILL
 * KILL_GRACE later), reaped, and wait_status is its own.  Returns 0, or a
 * negative errno when it could not be started (or ENOMEM).  One request
 * at a time: the caller serializes.  daemon_worker__free() closes its
 * stdin (the child's cue to exit), then stops it if it does not.  A
 * worker's child has no parent-death signal (it would come when the thread
 * that started it exits): the end of its stdin, when the process that
 * holds the worker dies, is its cue.
 */
struct daemon_frame {
	uint32_t magic;			/* DAEMON_FRAME_MAGIC */
	int32_t status;			/* the exit status it would have had, 0..255 */
	uint64_t len;			/* payload bytes after the header */
};
_Static_assert(sizeof(struct daemon_frame) == 16, "daemon frame: no padding");
#define DAEMON_FRAME_MAGIC 0x4c545349u	/* "ISTL" */

struct daemon_worker;
int daemon_worker__new(const struct daemon_child_opts *opts, struct daemon_worker **w);
int daemon_worker__ask(struct daemon_worker *w, struct daemon_child *res);
/* The running child's pid; 0 when there is none. */
pid_t daemon_worker__pid(const struct daemon_worker *w);
void daemon_worker__free(struct daemon_worker *w);

int daemon__remove_dir(const char *dir);

#endif /* ISOPROF_SERVE_DAEMON_H */
