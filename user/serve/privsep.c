// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * privsep: the helper that keeps the daemon's privileges, its protocol,
 * and the drop of the HTTP process; see privsep.h.
 *
 * The helper trusts nothing the HTTP process sends: that process parses
 * the network's bytes and may have been taken over.  Every request is
 * decoded from a fixed layout and checked field by field again, the
 * helper bounds the captures it runs, and a request can only name what
 * `record` and `targets` would accept from a user on the command line.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/monotime.h"
#include "lib/procfs.h"
#include "user/serve/daemon.h"
#include "user/serve/privsep.h"

#define TARGETS_OUT_MAX (16 * 1024 * 1024)
#define TARGETS_TIMEOUT_MS 30000
/* past the window: symbolization, and up to 60 s for V8's heap profile to come back */
#define CAPTURE_GRACE_MS 90000
/* what the HTTP process waits past the helper's own deadlines before giving up on it */
#define REPLY_MARGIN_MS 15000
#define POLL_MS 100

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZER_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZER_BUILD 1
#endif
#endif

/* ---- wire format ---------------------------------------------------------- */

static bool name_ok(const char *s, size_t len)
{
	if (!len || len > API_SEGMENT_MAX)
		return false;
	/* what api__decode_segment() lets through: no NUL, no control character */
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return true;
}

static bool actor_ok(const char *s, size_t len)
{
	if (len != API_ACTOR_ID_LEN)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool zero(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i])
			return false;
	return true;
}

int privsep__encode_capture(const struct privsep_capture *c, struct privsep_req_wire *w)
{
	size_t sl = c->script ? strlen(c->script) : 0, vl = c->version ? strlen(c->version) : 0;
	size_t nl = c->namespace_id ? strlen(c->namespace_id) : 0;
	size_t al = c->actor_id ? strlen(c->actor_id) : 0;

	memset(w, 0, sizeof(*w));
	if (!c->namespace_id != !c->actor_id ||
	    (c->namespace_id && (!c->script || nl > API_NAMESPACE_MAX ||
				 !name_ok(c->namespace_id, nl) || !actor_ok(c->actor_id, al))))
		return -EINVAL;
	/* a script (with a version, or any), a pid alone, or neither: every V8 target */
	if ((c->script && !name_ok(c->script, sl)) ||
	    (c->version && (!c->script || !name_ok(c->version, vl))) ||
	    c->pid < 0 || c->pid > API_PID_MAX || (c->pid && c->script) ||
	    c->duration_ms < API_DURATION_MIN_MS || c->duration_ms > API_DURATION_MAX_MS ||
	    (c->type != API_PROFILE_CPU && c->type != API_PROFILE_HEAP))
		return -EINVAL;
	w->magic = PRIVSEP_MAGIC;
	w->proto = PRIVSEP_PROTO;
	w->op = PRIVSEP_OP_CAPTURE;
	w->duration_ms = (uint32_t)c->duration_ms;
	w->type = (uint8_t)c->type;
	w->raw = c->raw;
	w->script_len = (uint16_t)sl;
	w->version_len = (uint16_t)vl;
	if (sl)
		memcpy(w->script, c->script, sl);
	if (vl)
		memcpy(w->version, c->version, vl);
	w->namespace_len = (uint16_t)nl;
	w->actor_len = (uint16_t)al;
	if (nl) {
		memcpy(w->namespace_id, c->namespace_id, nl);
		memcpy(w->actor_id, c->actor_id, al);
	}
	w->pid = (uint32_t)c->pid;
	return 0;
}

void privsep__encode_targets(struct privsep_req_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->magic = PRIVSEP_MAGIC;
	w->proto = PRIVSEP_PROTO;
	w->op = PRIVSEP_OP_TARGETS;
}

int privsep__decode_req(const void *buf, size_t len, struct privsep_req *req)
{
	struct privsep_req_wire w;

	memset(req, 0, sizeof(*req));
	if (len != sizeof(w))
		return -EINVAL;
	memcpy(&w, buf, sizeof(w));
	if (w.magic != PRIVSEP_MAGIC || w.proto != PRIVSEP_PROTO || w.reserved)
		return -EINVAL;
	switch (w.op) {
	case PRIVSEP_OP_TARGETS:
		/* nothing else may be set */
		if (w.duration_ms || w.type || w.raw || w.script_len || w.version_len ||
		    !zero(w.script, sizeof(w.script)) || !zero(w.version, sizeof(w.version)) ||
		    w.namespace_len || w.actor_len || !zero(w.namespace_id, sizeof(w.namespace_id)) ||
		    !zero(w.actor_id, sizeof(w.actor_id)) || w.pid)
			return -EINVAL;
		req->op = PRIVSEP_OP_TARGETS;
		return 0;
	case PRIVSEP_OP_CAPTURE:
		break;
	default:
		return -EINVAL;
	}
	if (w.duration_ms < API_DURATION_MIN_MS || w.duration_ms > API_DURATION_MAX_MS ||
	    (w.type != API_PROFILE_CPU && w.type != API_PROFILE_HEAP) || w.raw > 1 ||
	    w.script_len > API_SEGMENT_MAX || w.version_len > API_SEGMENT_MAX ||
	    (w.script_len && !name_ok(w.script, w.script_len)) ||
	    (w.version_len && (!w.script_len || !name_ok(w.version, w.version_len))) ||
	    !zero(w.script + w.script_len, API_SEGMENT_MAX - w.script_len) ||
	    !zero(w.version + w.version_len, API_SEGMENT_MAX - w.version_len))
		return -EINVAL;
	/* a pid stands alone; no script and no pid is every V8 target */
	if (w.pid > API_PID_MAX || (w.pid && w.script_len))
		return -EINVAL;
	/* a namespace and its actor, or neither; only in a script */
	if (w.namespace_len > API_NAMESPACE_MAX || !w.namespace_len != !w.actor_len ||
	    (w.namespace_len && !w.script_len) ||
	    (w.namespace_len && (!name_ok(w.namespace_id, w.namespace_len) ||
				 !actor_ok(w.actor_id, w.actor_len))) ||
	    (!w.actor_len && !zero(w.actor_id, sizeof(w.actor_id))) ||
	    !zero(w.namespace_id + w.namespace_len, API_NAMESPACE_MAX - w.namespace_len))
		return -EINVAL;
	req->op = PRIVSEP_OP_CAPTURE;
	memcpy(req->namespace_id, w.namespace_id, w.namespace_len);
	memcpy(req->actor_id, w.actor_id, w.actor_len);
	memcpy(req->script, w.script, w.script_len);
	memcpy(req->version, w.version, w.version_len);
	req->pid = (pid_t)w.pid;
	req->duration_ms = w.duration_ms;
	req->type = (enum api_profile_type)w.type;
	req->raw = w.raw;
	return 0;
}

int privsep__check_reply(const void *buf, size_t len)
{
	struct privsep_reply_wire w;

	if (len < sizeof(w))
		return -EPROTO;
	memcpy(&w, buf, sizeof(w));
	if (w.magic != PRIVSEP_MAGIC || w.proto != PRIVSEP_PROTO ||
	    (w.kind != PRIVSEP_R_DONE && w.kind != PRIVSEP_R_FAILED) ||
	    w.err_len > PRIVSEP_ERR_MAX || len != sizeof(w) + w.err_len ||
	    (w.flags & ~(PRIVSEP_F_TIMED_OUT | PRIVSEP_F_CANCELLED | PRIVSEP_F_TRUNCATED |
			 PRIVSEP_F_FD)) ||
	    (w.kind == PRIVSEP_R_FAILED && (w.err >= 0 || w.err < -4095)))
		return -EPROTO;
	return 0;
}

/* ---- descriptors over sockets --------------------------------------------- */

static int send_with_fd(int sock, const struct iovec *iov, int iovcnt, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
	struct cmsghdr *cm;

	if (fd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	for (;;) {
		if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

/*
 * One message and the descriptors with it: *fd gets the first, every
 * other one is closed (a peer cannot make us keep what we did not ask
 * for).  Returns the length, 0 at EOF, or a negative errno.
 */
static ssize_t recv_with_fd(int sock, void *buf, size_t len, int *fd, bool *truncated)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		size_t nfd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfd; i++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	*truncated = (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
	return n;
}

/* ---- the HTTP process's side ------------------------------------------------ */

static int request(int sock, const struct privsep_req_wire *w, uint64_t timeout_ms,
		   bool (*cancel)(void *), void *arg, struct privsep_result *res)
{
	struct iovec iov = { .iov_base = (void *)w, .iov_len = sizeof(*w) };
	struct privsep_reply_wire rw;
	uint64_t deadline = monotime_ms() + timeout_ms;
	bool cancelled = false, trunc = false;
	char *buf = NULL;
	int rq[2], fd = -1, ret;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	res->fd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rq))
		return -errno;
	ret = send_with_fd(sock, &iov, 1, rq[1]);
	close(rq[1]);
	if (ret)
		goto out;
	for (;;) {
		struct pollfd p = { .fd = rq[0], .events = POLLIN };
		int pr = poll(&p, 1, POLL_MS);

		if (pr > 0)
			break;
		if (pr < 0 && errno != EINTR) {
			ret = -errno;
			goto out;
		}
		if (monotime_ms() >= deadline) {
			ret = -ETIMEDOUT;
			goto out;
		}
		/* the helper stops the child when our end stops writing */
		if (!cancelled && cancel && cancel(arg)) {
			shutdown(rq[0], SHUT_WR);
			cancelled = true;
		}
	}
	buf = malloc(sizeof(rw) + PRIVSEP_ERR_MAX + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	n = recv_with_fd(rq[0], buf, sizeof(rw) + PRIVSEP_ERR_MAX + 1, &fd, &trunc);
	if (n <= 0) {
		ret = n ? (int)n : -EPIPE;
		goto out;
	}
	if (trunc || privsep__check_reply(buf, (size_t)n)) {
		ret = -EPROTO;
		goto out;
	}
	memcpy(&rw, buf, sizeof(rw));
	if (rw.kind == PRIVSEP_R_FAILED) {
		ret = rw.err;
		goto out;
	}
	if (!(rw.flags & PRIVSEP_F_FD) != (fd < 0)) {
		ret = -EPROTO;
		goto out;
	}
	res->wait_status = rw.wait_status;
	res->timed_out = rw.flags & PRIVSEP_F_TIMED_OUT;
	res->cancelled = rw.flags & PRIVSEP_F_CANCELLED;
	res->out_truncated = rw.flags & PRIVSEP_F_TRUNCATED;
	memmove(buf, buf + sizeof(rw), rw.err_len);
	buf[rw.err_len] = '\0';
	res->err = buf;
	res->err_len = rw.err_len;
	res->fd = fd;
	buf = NULL;
	fd = -1;
	ret = 0;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(rq[0]);
	return ret;
}

int privsep__capture(int sock, const struct privsep_capture *c, bool (*cancel)(void *),
		     void *arg, struct privsep_result *res)
{
	struct privsep_req_wire w;
	int ret;

	memset(res, 0, sizeof(*res));
	res->fd = -1;
	ret = privsep__encode_capture(c, &w);
	if (ret)
		return ret;
	return request(sock, &w, (uint64_t)c->duration_ms + CAPTURE_GRACE_MS + REPLY_MARGIN_MS,
		       cancel, arg, res);
}

int privsep__targets(int sock, bool (*cancel)(void *), void *arg, struct privsep_result *res)
{
	struct privsep_req_wire w;

	privsep__encode_targets(&w);
	/* a caller may wait for the scan another started */
	return request(sock, &w, 2 * TARGETS_TIMEOUT_MS + REPLY_MARGIN_MS, cancel, arg, res);
}

void privsep_result__free(struct privsep_result *res)
{
	if (!res)
		return;
	free(res->err);
	res->err = NULL;
	if (res->fd >= 0)
		close(res->fd);
	res->fd = -1;
}

/* ---- dropping privileges ------------------------------------------------------ */

static int capset_empty(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	memset(data, 0, sizeof(data));
	return syscall(SYS_capset, &hdr, data) ? -errno : 0;
}

int privsep__drop(const char *user, char *err, size_t errlen)
{
	bool root = geteuid() == 0;
	struct passwd pw, *found = NULL;
	char pwbuf[4096];
	int e;

	if (root) {
		e = getpwnam_r(user, &pw, pwbuf, sizeof(pwbuf), &found);
		if (e || !found) {
			snprintf(err, errlen, "--user %s: %s", user,
				 e ? strerror(e) : "no such user");
			return e ? -e : -ENOENT;
		}
		if (!pw.pw_uid) {
			snprintf(err, errlen, "--user %s: uid 0 would keep root in the process "
				 "that parses HTTP; name an unprivileged user", user);
			return -EPERM;
		}
	}
	/* the bounding set needs CAP_SETPCAP, which root still has here */
	for (unsigned long cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) && errno == EINVAL)
			break;
	if (root) {
		if (setgroups(0, NULL) || setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid) ||
		    setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)) {
			e = errno;
			snprintf(err, errlen, "cannot become %s (uid %u): %s", user,
				 (unsigned int)pw.pw_uid, strerror(e));
			return -e;
		}
		if (!setuid(0) || !seteuid(0)) {
			snprintf(err, errlen, "uid 0 could be regained after the drop to %s", user);
			return -EPERM;
		}
		if (chdir("/")) {
			e = errno;
			snprintf(err, errlen, "chdir /: %s", strerror(e));
			return -e;
		}
	}
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	e = capset_empty();
	if (e) {
		snprintf(err, errlen, "cannot drop capabilities: %s", strerror(-e));
		return e;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		e = errno;
		snprintf(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(e));
		return -e;
	}
	return 0;
}

/* ---- stale directories ---------------------------------------------------------- */

/* "PID.XXXXXX" after the prefix: the pid, or 0 when the name is not ours. */
static pid_t dir_pid(const char *name)
{
	const char *p = name + strlen(PRIVSEP_DIR_PREFIX), *dot;
	char *end;
	long v;

	if (strncmp(name, PRIVSEP_DIR_PREFIX, strlen(PRIVSEP_DIR_PREFIX)))
		return 0;
	dot = strchr(p, '.');
	if (!dot || dot == p || strlen(dot + 1) != 6)
		return 0;
	errno = 0;
	v = strtol(p, &end, 10);
	if (errno || end != dot || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

/* Whether the helper that made a directory may still be using it. */
static bool helper_alive(pid_t pid)
{
	char comm[64];

	if (pid == getpid() || !procfs__alive(pid))
		return false;
	/* a live pid that is not a helper: the helper died and the pid was reused */
	return !procfs__comm(pid, comm, sizeof(comm)) && !strcmp(comm, PRIVSEP_HELPER_COMM);
}

int privsep__remove_stale_dirs(const char *root)
{
	struct dirent *de;
	int rfd, removed = 0;
	DIR *d;

	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	d = fdopendir(rfd);
	if (!d) {
		close(rfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct dirent *e;
		struct stat st;
		pid_t pid = dir_pid(de->d_name);
		bool clean = true;
		int dfd;
		DIR *sub;

		if (!pid || helper_alive(pid))
			continue;
		/* never through a symlink, never another user's directory */
		dfd = openat(rfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (fstat(dfd, &st) || st.st_uid != geteuid() || !S_ISDIR(st.st_mode)) {
			close(dfd);
			continue;
		}
		sub = fdopendir(dfd);
		if (!sub) {
			close(dfd);
			continue;
		}
		while ((e = readdir(sub)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    unlinkat(dfd, e->d_name, 0))
				clean = false;
		closedir(sub);
		if (clean && !unlinkat(rfd, de->d_name, AT_REMOVEDIR))
			removed++;
	}
	closedir(d);
	return removed;
}

/* ---- the helper ------------------------------------------------------------------- */

struct targets_cache {
	bool running, valid;
	uint64_t gen;
	uint64_t done_ms;
	int wait_status;
	bool timed_out, truncated;
	char *out, *err;
	size_t out_len, err_len;
};

struct helper {
	const struct privsep_helper_opts *o;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int active;		/* worker threads */
	unsigned int captures;
	atomic_bool stopping;
	struct targets_cache tc;
	/* `isoprof targets --requests`, kept: it reads only the code logs that changed */
	struct daemon_worker *lister;
};

struct job {
	struct helper *h;
	struct privsep_req req;
	int fd;				/* the request's socket */
	bool slot;			/* holds one of the helper's capture slots */
};

/*
 * Give the capture slot back before the reply goes out: the HTTP process
 * frees its own slot when the reply comes, and may send the next capture
 * at once.
 */
static void job_release_slot(struct job *j)
{
	if (!j->slot)
		return;
	pthread_mutex_lock(&j->h->lock);
	j->h->captures--;
	j->slot = false;
	pthread_mutex_unlock(&j->h->lock);
}

static void hlog(struct helper *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hlog(struct helper *h, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("isoprof serve: helper: ", h->o->log);
	vfprintf(h->o->log, fmt, ap);
	fputc('\n', h->o->log);
	va_end(ap);
}

static void reply_failed(int fd, int err)
{
	struct privsep_reply_wire w = {
		.magic = PRIVSEP_MAGIC, .proto = PRIVSEP_PROTO, .kind = PRIVSEP_R_FAILED,
		.err = err < 0 && err >= -4095 ? err : -EIO,
	};
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };

	send_with_fd(fd, &iov, 1, -1);
}

static void reply_done(int fd, int wait_status, uint32_t flags, const char *err,
		       size_t err_len, int result_fd)
{
	struct privsep_reply_wire w = {
		.magic = PRIVSEP_MAGIC, .proto = PRIVSEP_PROTO, .kind = PRIVSEP_R_DONE,
		.wait_status = wait_status, .flags = flags | (result_fd >= 0 ? PRIVSEP_F_FD : 0),
	};
	struct iovec iov[2];

	/* the tail: the message worth sending is the last one */
	if (err_len > PRIVSEP_ERR_MAX) {
		err += err_len - PRIVSEP_ERR_MAX;
		err_len = PRIVSEP_ERR_MAX;
	}
	w.err_len = (uint32_t)err_len;
	iov[0] = (struct iovec){ .iov_base = &w, .iov_len = sizeof(w) };
	iov[1] = (struct iovec){ .iov_base = (void *)err, .iov_len = err_len };
	send_with_fd(fd, iov, err_len ? 2 : 1, result_fd);
}

/* Stop the child when the helper stops or the HTTP process gives up the request. */
static bool job_cancelled(void *arg)
{
	struct job *j = arg;
	struct pollfd p = { .fd = j->fd, .events = POLLIN | POLLRDHUP };

	if (atomic_load(&j->h->stopping))
		return true;
	return poll(&p, 1, 0) > 0 && p.revents;
}

static bool helper_stopping(void *arg)
{
	struct helper *h = arg;

	return atomic_load(&h->stopping);
}

static uint64_t data_limit(const struct helper *h)
{
#ifdef SANITIZER_BUILD
	(void)h;
	return 0;
#else
	return h->o->child_memory;
#endif
}

static void run_capture(struct job *j)
{
	const struct privsep_req *r = &j->req;
	char dir[PATH_MAX], file[PATH_MAX + 16], dur[32], type[16], pid[32];
	char *script_arg = NULL, *version_arg = NULL, *ns_arg = NULL, *actor_arg = NULL;
	char *maps_arg = NULL;
	struct daemon_child ch;
	struct stat st;
	uint32_t flags;
	int err, fd = -1;

	snprintf(dir, sizeof(dir), "%s/" PRIVSEP_DIR_PREFIX "%d.XXXXXX", j->h->o->tmp_root,
		 (int)getpid());
	if (!mkdtemp(dir)) {
		err = -errno;
		hlog(j->h, "cannot create a temporary directory in %s: %s", j->h->o->tmp_root,
		     strerror(-err));
		job_release_slot(j);
		reply_failed(j->fd, err);
		return;
	}
	snprintf(file, sizeof(file), "%s/profile%s", dir, r->raw ? ".pb" : ".pb.gz");
	snprintf(dur, sizeof(dur), "--duration-ms=%ld", r->duration_ms);
	snprintf(type, sizeof(type), "--type=%s", r->type == API_PROFILE_HEAP ? "heap" : "cpu");
	snprintf(pid, sizeof(pid), "--pid=%d", (int)r->pid);
	/* --opt=value: a script name starting with '-' is not an option */
	if (r->script[0] && asprintf(&script_arg, "--script=%s", r->script) < 0)
		script_arg = NULL;
	if (r->version[0] && asprintf(&version_arg, "--version=%s", r->version) < 0)
		version_arg = NULL;
	if (r->namespace_id[0]) {
		if (asprintf(&ns_arg, "--namespace=%s", r->namespace_id) < 0)
			ns_arg = NULL;
		if (asprintf(&actor_arg, "--actor=%s", r->actor_id) < 0)
			actor_arg = NULL;
	}
	if (j->h->o->source_maps && asprintf(&maps_arg, "--source-maps=%s", j->h->o->source_maps) < 0)
		maps_arg = NULL;
	if ((r->script[0] && !script_arg) || (r->version[0] && !version_arg) ||
	    (r->namespace_id[0] && (!ns_arg || !actor_arg)) ||
	    (j->h->o->source_maps && !maps_arg)) {
		job_release_slot(j);
		reply_failed(j->fd, -ENOMEM);
		goto out;
	}
	{
		/* no script and no pid: every V8 target, one profile with isolate labels */
		char *argv[20] = { "isoprof", "record" };
		int argc = 2;

		if (script_arg)
			argv[argc++] = script_arg;
		if (version_arg)
			argv[argc++] = version_arg;
		if (r->pid)
			argv[argc++] = pid;
		argv[argc++] = dur;
		argv[argc++] = type;
		argv[argc++] = "-q";
		argv[argc++] = "-o";
		argv[argc++] = file;
		if (j->h->o->no_gc_probes)
			argv[argc++] = "--no-gc-probes";
		if (r->raw)
			argv[argc++] = "--raw";
		if (maps_arg)
			argv[argc++] = maps_arg;
		if (ns_arg) {
			argv[argc++] = ns_arg;
			argv[argc++] = actor_arg;
		}
		argv[argc] = NULL;
		struct daemon_child_opts o = {
			.path = j->h->o->self, .argv = argv,
			.timeout_ms = (uint64_t)r->duration_ms + CAPTURE_GRACE_MS,
			.out_max = PRIVSEP_ERR_MAX, .err_max = PRIVSEP_ERR_MAX,
			.cancel = job_cancelled, .arg = j, .data_limit = data_limit(j->h),
		};

		err = daemon__run_child(&o, &ch);
	}
	job_release_slot(j);
	if (err) {
		reply_failed(j->fd, err);
		goto out;
	}
	flags = (ch.timed_out ? PRIVSEP_F_TIMED_OUT : 0) | (ch.cancelled ? PRIVSEP_F_CANCELLED : 0);
	if (!ch.timed_out && !ch.cancelled && WIFEXITED(ch.wait_status) &&
	    !WEXITSTATUS(ch.wait_status)) {
		fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size)) {
			close(fd);
			fd = -1;
		}
	}
	reply_done(j->fd, ch.wait_status, flags, ch.err, ch.err_len, fd);
	daemon_child__free(&ch);
out:
	if (fd >= 0)
		close(fd);
	free(script_arg);
	free(version_arg);
	free(ns_arg);
	free(actor_arg);
	free(maps_arg);
	/* the HTTP process holds the file open: the directory can go now */
	daemon__remove_dir(dir);
}

/* A sealed memfd holding data, for the HTTP process to stream. */
static int memfd_of(const char *data, size_t len)
{
	int fd = memfd_create("isoprof-targets", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (fileio__write_all(fd, data, len) || lseek(fd, 0, SEEK_SET) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
		close(fd);
		return -EIO;
	}
	return fd;
}

static char *lister_argv[] = { "isoprof", "targets", "--json", "--requests", NULL };

/*
 * The lister, made at the first request (it is started by the first ask):
 * a child with the capture children's limits, which keeps per-log state
 * between listings (listing_cache.h).
 */
static int lister_ask(struct helper *h, struct daemon_child *ch)
{
	struct daemon_child_opts o = {
		.path = h->o->self, .argv = lister_argv, .timeout_ms = TARGETS_TIMEOUT_MS,
		.out_max = TARGETS_OUT_MAX, .err_max = PRIVSEP_ERR_MAX,
		.cancel = helper_stopping, .arg = h, .data_limit = data_limit(h),
	};
	int err;

	if (!h->lister) {
		err = daemon_worker__new(&o, &h->lister);
		if (err)
			return err;
	}
	return daemon_worker__ask(h->lister, ch);
}

/* A scan, or the one that is running or just ran: the cache answers for its TTL. */
static void run_targets(struct job *j)
{
	struct helper *h = j->h;
	struct targets_cache *c = &h->tc;
	struct daemon_child ch;
	uint32_t flags;
	int err, fd = -1;

	pthread_mutex_lock(&h->lock);
	if (c->running) {
		uint64_t gen = c->gen;

		while (c->gen == gen)
			pthread_cond_wait(&h->cond, &h->lock);
	} else if (!c->valid || monotime_ms() - c->done_ms >= PRIVSEP_TARGETS_TTL_MS) {
		c->running = true;
		pthread_mutex_unlock(&h->lock);
		err = lister_ask(h, &ch);
		pthread_mutex_lock(&h->lock);
		free(c->out);
		free(c->err);
		c->out = c->err = NULL;
		c->valid = !err;
		if (!err) {
			c->wait_status = ch.wait_status;
			c->timed_out = ch.timed_out;
			c->truncated = ch.out_truncated;
			c->out = ch.out;
			c->out_len = ch.out_len;
			c->err = ch.err;
			c->err_len = ch.err_len;
		}
		c->done_ms = monotime_ms();
		c->running = false;
		c->gen++;
		pthread_cond_broadcast(&h->cond);
	}
	if (!c->valid) {
		pthread_mutex_unlock(&h->lock);
		reply_failed(j->fd, -ECHILD);
		return;
	}
	flags = (c->timed_out ? PRIVSEP_F_TIMED_OUT : 0) | (c->truncated ? PRIVSEP_F_TRUNCATED : 0);
	if (!c->timed_out && !c->truncated && WIFEXITED(c->wait_status) &&
	    !WEXITSTATUS(c->wait_status))
		fd = memfd_of(c->out, c->out_len);
	if (fd < -1) {
		pthread_mutex_unlock(&h->lock);
		reply_failed(j->fd, fd);
		return;
	}
	reply_done(j->fd, c->wait_status, flags, c->err, c->err_len, fd);
	pthread_mutex_unlock(&h->lock);
	if (fd >= 0)
		close(fd);
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct helper *h = j->h;

	if (j->req.op == PRIVSEP_OP_CAPTURE)
		run_capture(j);
	else
		run_targets(j);
	close(j->fd);
	job_release_slot(j);
	pthread_mutex_lock(&h->lock);
	h->active--;
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	free(j);
	return NULL;
}

/* One request from the control socket: checked, then a thread of its own. */
static void accept_request(struct helper *h, const char *buf, ssize_t n, bool trunc, int fd)
{
	pthread_attr_t at;
	struct job *j;
	struct stat st;
	pthread_t t;
	int err;

	if (fd < 0) {
		hlog(h, "a request without its socket: ignored");
		return;
	}
	if (fstat(fd, &st) || !S_ISSOCK(st.st_mode)) {
		hlog(h, "a request whose descriptor is not a socket: ignored");
		close(fd);
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		reply_failed(fd, -ENOMEM);
		close(fd);
		return;
	}
	j->h = h;
	j->fd = fd;
	if (trunc || privsep__decode_req(buf, (size_t)n, &j->req)) {
		hlog(h, "refused a malformed request (%zd bytes)", n);
		err = -EINVAL;
		goto refuse;
	}
	pthread_mutex_lock(&h->lock);
	if (j->req.op == PRIVSEP_OP_CAPTURE && h->captures >= h->o->max_captures) {
		pthread_mutex_unlock(&h->lock);
		err = -EAGAIN;
		goto refuse;
	}
	if (j->req.op == PRIVSEP_OP_CAPTURE) {
		h->captures++;
		j->slot = true;
	}
	h->active++;
	pthread_mutex_unlock(&h->lock);

	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	err = -pthread_create(&t, &at, job_main, j);
	pthread_attr_destroy(&at);
	if (!err)
		return;
	job_release_slot(j);
	pthread_mutex_lock(&h->lock);
	h->active--;
	pthread_mutex_unlock(&h->lock);
refuse:
	reply_failed(fd, err);
	close(fd);
	free(j);
}

static int helper_run(int ctl, const struct privsep_helper_opts *o)
{
	struct helper h = { .o = o };
	char buf[sizeof(struct privsep_req_wire) + 1];
	int removed;

	pthread_mutex_init(&h.lock, NULL);
	pthread_cond_init(&h.cond, NULL);
	atomic_init(&h.stopping, false);
	removed = privsep__remove_stale_dirs(o->tmp_root);
	if (removed > 0)
		hlog(&h, "removed %d stale temporary director%s in %s (from a daemon that was "
		     "killed)", removed, removed == 1 ? "y" : "ies", o->tmp_root);
	if (o->child_memory && !data_limit(&h))
		hlog(&h, "sanitizer build: children run without --child-memory-mb's limit "
		     "(the sanitizer reserves terabytes of address space)");

	for (;;) {
		bool trunc = false;
		int fd;
		ssize_t n = recv_with_fd(ctl, buf, sizeof(buf), &fd, &trunc);

		if (n <= 0) {
			if (fd >= 0)
				close(fd);
			if (n < 0)
				hlog(&h, "control socket: %s", strerror((int)-n));
			break;
		}
		accept_request(&h, buf, n, trunc, fd);
	}

	/* the HTTP process is gone or stopping: stop the children, wait for the workers */
	atomic_store(&h.stopping, true);
	pthread_mutex_lock(&h.lock);
	while (h.active)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);
	daemon_worker__free(h.lister);
	free(h.tc.out);
	free(h.tc.err);
	pthread_cond_destroy(&h.cond);
	pthread_mutex_destroy(&h.lock);
	close(ctl);
	if (o->unix_path) {
		struct stat st;

		/* the socket file the daemon made, not one put there since */
		if (!lstat(o->unix_path, &st) && S_ISSOCK(st.st_mode) &&
		    st.st_dev == o->unix_dev && st.st_ino == o->unix_ino)
			unlink(o->unix_path);
	}
	return 0;
}

int privsep__start(const struct privsep_helper_opts *o, int *sock, pid_t *pid)
{
	struct sigaction sa;
	int sv[2], ctl;
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(NULL);
	p = fork();
	if (p < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return -e;
	}
	if (p > 0) {
		close(sv[1]);
		*sock = sv[0];
		*pid = p;
		return 0;
	}

	/* the helper: nothing of the HTTP side (the listening socket, the token) */
	close(sv[0]);
	ctl = sv[1];
	if (ctl != 3) {
		if (dup3(ctl, 3, O_CLOEXEC) < 0)
			_exit(1);
		close(ctl);
		ctl = 3;
	}
	if (syscall(SYS_close_range, 4U, ~0U, 0U))
		for (int fd = 4; fd < 1024; fd++)
			close(fd);
	prctl(PR_SET_NAME, PRIVSEP_HELPER_COMM, 0, 0, 0);
	/* Ctrl-C and SIGTERM are for the daemon, which stops the helper by closing the socket */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	exit(helper_run(ctl, o));
}
