// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * daemon: capture admission and capture children for `isoprof serve`.
 *
 * Captures run as children of the daemon's helper (its own binary,
 * `record`): a crash, a leak or a stuck inspector in one capture cannot
 * take the daemon down, and concurrency is the kernel's business.  The
 * daemon only keeps counters, pipes and temporary directories.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/serve/daemon.h"
#include "lib/monotime.h"

#define KILL_GRACE_MS 3000
#define POLL_MS 100
#define READ_CHUNK 4096

struct admit_slot {
	bool used;
	char *target;
	uint64_t end_ms;		/* when the capture's window should be over */
};

struct daemon_admit {
	pthread_mutex_t lock;
	unsigned int nslots;
	struct admit_slot *slots;
	double burst;
	double per_ms;			/* tokens added per millisecond */
	double tokens;
	uint64_t last_ms;
	bool started;
};

struct daemon_admit *daemon_admit__new(unsigned int max_captures, unsigned int burst,
				       unsigned int window_s)
{
	struct daemon_admit *a;

	if (!max_captures || !burst || !window_s) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->slots = calloc(max_captures, sizeof(*a->slots));
	if (!a->slots) {
		free(a);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	a->nslots = max_captures;
	a->burst = burst;
	a->tokens = burst;
	a->per_ms = (double)burst / (window_s * 1000.0);
	return a;
}

void daemon_admit__free(struct daemon_admit *a)
{
	if (!a)
		return;
	for (unsigned int i = 0; i < a->nslots; i++)
		free(a->slots[i].target);
	free(a->slots);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

static unsigned int secs_until(uint64_t when_ms, uint64_t now_ms)
{
	uint64_t left = when_ms > now_ms ? when_ms - now_ms : 0;
	uint64_t s = (left + 999) / 1000;

	return s < 1 ? 1 : s > 86400 ? 86400 : (unsigned int)s;
}

int daemon_admit__acquire(struct daemon_admit *a, const char *target, long duration_ms,
			  uint64_t now_ms, unsigned int *retry_after_s)
{
	uint64_t soonest = UINT64_MAX;
	int free_slot = -1, ret;
	char *copy;

	*retry_after_s = 0;
	copy = strdup(target);
	if (!copy)
		return -ENOMEM;
	pthread_mutex_lock(&a->lock);
	for (unsigned int i = 0; i < a->nslots; i++) {
		struct admit_slot *s = &a->slots[i];

		if (!s->used) {
			if (free_slot < 0)
				free_slot = (int)i;
			continue;
		}
		if (!strcmp(s->target, target)) {
			*retry_after_s = secs_until(s->end_ms, now_ms);
			ret = -EBUSY;
			goto out;
		}
		if (s->end_ms < soonest)
			soonest = s->end_ms;
	}
	if (free_slot < 0) {
		*retry_after_s = secs_until(soonest, now_ms);
		ret = -EAGAIN;
		goto out;
	}
	if (a->started && now_ms > a->last_ms) {
		a->tokens += (double)(now_ms - a->last_ms) * a->per_ms;
		if (a->tokens > a->burst)
			a->tokens = a->burst;
	}
	if (!a->started || now_ms > a->last_ms)
		a->last_ms = now_ms;
	a->started = true;
	if (a->tokens < 1.0) {
		*retry_after_s = secs_until(now_ms + (uint64_t)((1.0 - a->tokens) / a->per_ms) + 1,
					    now_ms);
		ret = -EDQUOT;
		goto out;
	}
	a->tokens -= 1.0;
	a->slots[free_slot].used = true;
	a->slots[free_slot].target = copy;
	a->slots[free_slot].end_ms = now_ms + (duration_ms > 0 ? (uint64_t)duration_ms : 0);
	copy = NULL;
	ret = free_slot;
out:
	pthread_mutex_unlock(&a->lock);
	free(copy);
	return ret;
}

void daemon_admit__release(struct daemon_admit *a, int slot)
{
	if (slot < 0 || (unsigned int)slot >= a->nslots)
		return;
	pthread_mutex_lock(&a->lock);
	free(a->slots[slot].target);
	a->slots[slot].target = NULL;
	a->slots[slot].used = false;
	pthread_mutex_unlock(&a->lock);
}

unsigned int daemon_admit__running(struct daemon_admit *a)
{
	unsigned int n = 0;

	pthread_mutex_lock(&a->lock);
	for (unsigned int i = 0; i < a->nslots; i++)
		n += a->slots[i].used;
	pthread_mutex_unlock(&a->lock);
	return n;
}

struct sink {
	int fd;
	char *buf;
	size_t len, cap, max;
	bool tail;			/* keep the last max bytes, not the first */
	bool truncated;
};

static int sink_init(struct sink *s, int fd, size_t max, bool tail)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->max = max;
	s->tail = tail;
	s->cap = tail ? 2 * max + 1 : max + 1;
	s->buf = malloc(s->cap);
	return s->buf ? 0 : -ENOMEM;
}

/* Read what is there; false once the pipe is closed or broken. */
static bool sink_read(struct sink *s)
{
	char chunk[READ_CHUNK];

	for (;;) {
		ssize_t n = read(s->fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return true;
		if (n <= 0)
			return false;
		for (ssize_t off = 0; off < n;) {
			size_t room = s->cap - 1 - s->len, take = (size_t)(n - off);

			if (!s->tail) {
				if (take > s->max - s->len) {
					take = s->max - s->len;
					s->truncated = true;
				}
				memcpy(s->buf + s->len, chunk + off, take);
				s->len += take;
				break;
			}
			if (!room) {
				/* keep the newest max bytes and make room behind them */
				memmove(s->buf, s->buf + s->len - s->max, s->max);
				s->len = s->max;
				s->truncated = true;
				continue;
			}
			if (take > room)
				take = room;
			memcpy(s->buf + s->len, chunk + off, take);
			s->len += take;
			off += (ssize_t)take;
		}
	}
}

static void sink_finish(struct sink *s, char **out, size_t *len)
{
	if (s->tail && s->len > s->max) {
		memmove(s->buf, s->buf + s->len - s->max, s->max);
		s->len = s->max;
	}
	s->buf[s->len] = '\0';
	*out = s->buf;
	*len = s->len;
	s->buf = NULL;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) child_exec(const struct daemon_child_opts *o, int in,
						 int out_w, int err_w, int max_fd, bool pdeathsig)
{
	struct sigaction sa;
	sigset_t none;

	setpgid(0, 0);
	if (pdeathsig)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (o->data_limit) {
		struct rlimit rl = { .rlim_cur = o->data_limit, .rlim_max = o->data_limit };

		if (setrlimit(RLIMIT_DATA, &rl))
			_exit(127);
	}
	if (dup2(in, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
		_exit(127);
	if (syscall(SYS_close_range, 3U, ~0U, 0U))
		for (int fd = 3; fd < max_fd; fd++)
			close(fd);
	execv(o->path, o->argv);
	_exit(127);
}

/* The child's standard streams, from the daemon's side. */
struct child_io {
	int out_p[2], err_p[2], devnull;
	struct sink out, err;
	bool out_open, err_open;
};

static void child_io__close(struct child_io *io)
{
	for (int i = 0; i < 2; i++) {
		if (io->out_p[i] >= 0)
			close(io->out_p[i]);
		if (io->err_p[i] >= 0)
			close(io->err_p[i]);
		io->out_p[i] = io->err_p[i] = -1;
	}
	if (io->devnull >= 0)
		close(io->devnull);
	io->devnull = -1;
	free(io->out.buf);
	free(io->err.buf);
	io->out.buf = io->err.buf = NULL;
}

static int child_io__open(struct child_io *io, const struct daemon_child_opts *o)
{
	memset(io, 0, sizeof(*io));
	io->out_p[0] = io->out_p[1] = io->err_p[0] = io->err_p[1] = io->devnull = -1;
	if (pipe2(io->out_p, O_CLOEXEC) || pipe2(io->err_p, O_CLOEXEC))
		return -errno;
	io->devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (io->devnull < 0)
		return -errno;
	if (sink_init(&io->out, io->out_p[0], o->out_max, false) ||
	    sink_init(&io->err, io->err_p[0], o->err_max, true))
		return -ENOMEM;
	fcntl(io->out_p[0], F_SETFL, O_NONBLOCK);
	fcntl(io->err_p[0], F_SETFL, O_NONBLOCK);
	io->out_open = io->err_open = true;
	return 0;
}

/* What the child wrote since the last call; a closed pipe is not polled again. */
static void child_io__drain(struct child_io *io)
{
	if (io->out_open)
		io->out_open = sink_read(&io->out);
	if (io->err_open)
		io->err_open = sink_read(&io->err);
}

/*
 * Read the pipes until the child is reaped; at the deadline or when
 * cancel() says so, SIGTERM to its group, and SIGKILL KILL_GRACE_MS later.
 */
static int supervise(pid_t pid, const struct daemon_child_opts *o, struct child_io *io,
		     struct daemon_child *res)
{
	uint64_t deadline = monotime_ms() + o->timeout_ms, kill_at = 0, now;
	int status = 0;

	for (;;) {
		struct pollfd pfd[2];
		int n = 0;
		pid_t w;

		if (io->out_open)
			pfd[n++] = (struct pollfd){ .fd = io->out_p[0], .events = POLLIN };
		if (io->err_open)
			pfd[n++] = (struct pollfd){ .fd = io->err_p[0], .events = POLLIN };
		poll(n ? pfd : NULL, (nfds_t)n, POLL_MS);
		child_io__drain(io);

		w = waitpid(pid, &status, WNOHANG);
		if (w == pid || (w < 0 && errno == ECHILD))
			return status;
		now = monotime_ms();
		if (!kill_at) {
			if (now >= deadline)
				res->timed_out = true;
			else if (o->cancel && o->cancel(o->arg))
				res->cancelled = true;
			if (res->timed_out || res->cancelled) {
				kill(-pid, SIGTERM);
				kill_at = now + KILL_GRACE_MS;
			}
		} else if (now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = UINT64_MAX;
		}
	}
}

static int fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < 65536)
		return (int)rl.rlim_cur;
	return 1024;
}

int daemon__run_child(const struct daemon_child_opts *o, struct daemon_child *res)
{
	struct child_io io;
	int max_fd = fd_limit(), ret;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	ret = child_io__open(&io, o);
	if (ret)
		goto fail;
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		goto fail;
	}
	if (pid == 0)
		child_exec(o, io.devnull, io.out_p[1], io.err_p[1], max_fd, true);
	/* also here, so kill(-pid) works whichever of us runs first */
	setpgid(pid, pid);
	close(io.out_p[1]);
	close(io.err_p[1]);
	close(io.devnull);
	io.out_p[1] = io.err_p[1] = io.devnull = -1;

	res->wait_status = supervise(pid, o, &io, res);
	/* what the child wrote before it exited; a grandchild holding the pipe is not waited for */
	child_io__drain(&io);
	res->out_truncated = io.out.truncated;
	sink_finish(&io.out, &res->out, &res->out_len);
	sink_finish(&io.err, &res->err, &res->err_len);
	child_io__close(&io);
	return 0;

fail:
	child_io__close(&io);
	return ret;
}

void daemon_child__free(struct daemon_child *res)
{
	if (!res)
		return;
	free(res->out);
	free(res->err);
	res->out = res->err = NULL;
}

/* ---- workers: children kept between requests ------------------------------ */

struct daemon_worker {
	struct daemon_child_opts o;
	pid_t pid;			/* 0: not running */
	int in_w;			/* the child's stdin */
	struct child_io io;		/* out: the frame being read; err: its stderr tail */
};

static void worker_close(struct daemon_worker *w)
{
	if (w->in_w >= 0)
		close(w->in_w);
	w->in_w = -1;
	child_io__close(&w->io);
	w->pid = 0;
}

/* Stop the child (SIGTERM, SIGKILL later) and reap it; its wait status. */
static int worker_kill(struct daemon_worker *w)
{
	uint64_t kill_at = monotime_ms() + KILL_GRACE_MS;
	bool killed = false;
	int status = 0;
	pid_t r;

	if (!w->pid)
		return 0;
	kill(-w->pid, SIGTERM);
	for (;;) {
		r = waitpid(w->pid, &status, WNOHANG);
		if (r == w->pid || (r < 0 && errno != EINTR))
			break;
		if (!killed && monotime_ms() >= kill_at) {
			kill(-w->pid, SIGKILL);
			killed = true;
		}
		child_io__drain(&w->io);
		poll(NULL, 0, 10);
	}
	child_io__drain(&w->io);
	return status;
}

int daemon_worker__new(const struct daemon_child_opts *o, struct daemon_worker **out)
{
	struct daemon_worker *w;

	*out = NULL;
	if (!o->out_max || o->out_max > SIZE_MAX - sizeof(struct daemon_frame) - 1)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->o = *o;
	w->in_w = -1;
	w->io.out_p[0] = w->io.out_p[1] = w->io.err_p[0] = w->io.err_p[1] = w->io.devnull = -1;
	*out = w;
	return 0;
}

static int worker_start(struct daemon_worker *w)
{
	struct daemon_child_opts o = w->o;
	int in_p[2], ret;
	pid_t pid;

	/* in_p[0]: the child's stdin; in_p[1]: ours */
	/* the frame's header and up to out_max bytes of it */
	o.out_max += sizeof(struct daemon_frame);
	ret = child_io__open(&w->io, &o);
	if (ret)
		goto fail;
	/* a socket, so that a write to a child gone is EPIPE, not SIGPIPE (MSG_NOSIGNAL) */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in_p)) {
		ret = -errno;
		goto fail;
	}
	w->in_w = in_p[1];
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(in_p[0]);
		goto fail;
	}
	/*
	 * Not PR_SET_PDEATHSIG: it fires when the forking thread exits (the
	 * helper's request threads do, at once), not the process.  The end
	 * of its stdin tells it its parent is gone.
	 */
	if (pid == 0)
		child_exec(&w->o, in_p[0], w->io.out_p[1], w->io.err_p[1], fd_limit(), false);
	setpgid(pid, pid);
	close(in_p[0]);
	close(w->io.devnull);
	w->io.devnull = -1;
	close(w->io.out_p[1]);
	close(w->io.err_p[1]);
	w->io.out_p[1] = w->io.err_p[1] = -1;
	w->pid = pid;
	return 0;

fail:
	worker_close(w);
	return ret;
}

/* The frame in the out sink, when it is whole: true, and its header in *fr. */
static bool frame_done(const struct sink *s, struct daemon_frame *fr)
{
	if (s->len < sizeof(*fr))
		return false;
	memcpy(fr, s->buf, sizeof(*fr));
	return fr->magic != DAEMON_FRAME_MAGIC || fr->len > s->max - sizeof(*fr) ||
	       s->len - sizeof(*fr) >= fr->len;
}

static int copy_out(const char *p, size_t len, char **out, size_t *out_len)
{
	*out = malloc(len + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, len);
	(*out)[len] = '\0';
	*out_len = len;
	return 0;
}

int daemon_worker__ask(struct daemon_worker *w, struct daemon_child *res)
{
	uint64_t deadline = monotime_ms() + w->o.timeout_ms;
	struct daemon_frame fr;
	bool done = false;
	char one = '\n';
	int ret, status;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	for (int attempt = 0;; attempt++) {
		bool was_running = w->pid != 0;

		if (!w->pid) {
			ret = worker_start(w);
			if (ret)
				return ret;
		}
		w->io.out.len = w->io.err.len = 0;
		w->io.out.truncated = w->io.err.truncated = false;
		do
			n = send(w->in_w, &one, 1, MSG_NOSIGNAL);
		while (n < 0 && errno == EINTR);
		if (n == 1 || !was_running || attempt)
			break;
		/* it exited since the last request (killed, out of memory): a new one */
		worker_kill(w);
		worker_close(w);
	}
	while (n == 1 && !done) {
		struct pollfd pfd[2];
		int k = 0;

		if (w->io.out_open)
			pfd[k++] = (struct pollfd){ .fd = w->io.out_p[0], .events = POLLIN };
		if (w->io.err_open)
			pfd[k++] = (struct pollfd){ .fd = w->io.err_p[0], .events = POLLIN };
		poll(k ? pfd : NULL, (nfds_t)k, POLL_MS);
		child_io__drain(&w->io);
		done = frame_done(&w->io.out, &fr);
		if (done || !w->io.out_open)
			break;
		if (monotime_ms() >= deadline)
			res->timed_out = true;
		else if (w->o.cancel && w->o.cancel(w->o.arg))
			res->cancelled = true;
		if (res->timed_out || res->cancelled)
			break;
	}
	if (done && fr.magic == DAEMON_FRAME_MAGIC && fr.len <= w->io.out.max - sizeof(fr)) {
		/* its messages came before its frame */
		child_io__drain(&w->io);
		res->wait_status = W_EXITCODE(fr.status & 0xff, 0);
		ret = copy_out(w->io.out.buf + sizeof(fr), (size_t)fr.len, &res->out, &res->out_len);
		if (!ret)
			ret = copy_out(w->io.err.buf, w->io.err.len, &res->err, &res->err_len);
		if (ret)
			daemon_child__free(res);
		return ret;
	}
	/* gone, stuck, cancelled, or a frame that is not one (or over out_max): stop it */
	res->out_truncated = done && fr.magic == DAEMON_FRAME_MAGIC;
	status = worker_kill(w);
	res->wait_status = res->out_truncated ? W_EXITCODE(0, 0) : status;
	ret = copy_out("", 0, &res->out, &res->out_len);
	if (!ret) {
		struct sink *e = &w->io.err;
		size_t len = e->len > e->max ? e->max : e->len;

		ret = copy_out(e->buf + e->len - len, len, &res->err, &res->err_len);
	}
	worker_close(w);
	if (ret)
		daemon_child__free(res);
	return ret;
}

pid_t daemon_worker__pid(const struct daemon_worker *w)
{
	return w ? w->pid : 0;
}

void daemon_worker__free(struct daemon_worker *w)
{
	if (!w)
		return;
	if (w->pid) {
		/* the end of its stdin asks it to exit; the rest stops it */
		close(w->in_w);
		w->in_w = -1;
		for (int i = 0; i < 20; i++) {
			pid_t r = waitpid(w->pid, NULL, WNOHANG);

			if (r == w->pid || r < 0) {
				w->pid = 0;
				break;
			}
			poll(NULL, 0, 10);
		}
		worker_kill(w);
	}
	worker_close(w);
	free(w);
}

int daemon__remove_dir(const char *dir)
{
	struct dirent *de;
	DIR *d;
	int dfd, ret = 0;

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		ret = -errno;
		close(dfd);
		return ret;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dfd, de->d_name, 0) && !ret)
			ret = -errno;
	}
	closedir(d);
	if (rmdir(dir) && !ret)
		ret = -errno;
	return ret;
}
