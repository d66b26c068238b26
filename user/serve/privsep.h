/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * privsep: the privilege split of `isoprof serve` (docs/daemon.md,
 * "Privilege split"), built the way OpenSSH's monitor is.
 *
 * The daemon is two processes.  The HTTP process accepts connections and
 * parses everything that comes from the network; started as root, it runs
 * as an unprivileged user (privsep__drop()).  The helper, forked before the
 * drop (privsep__start()), keeps the privileges and does only two things
 * for it: run a capture (`isoprof record` in a private temporary
 * directory) and list the targets (`isoprof targets --json`, one scan
 * serving every request for PRIVSEP_TARGETS_TTL_MS).  It never parses HTTP.
 *
 * The protocol.  Each request gets its own SOCK_SEQPACKET socketpair: the
 * HTTP process sends one end over the control socket (SCM_RIGHTS) with
 * one fixed-size binary request (struct privsep_req_wire): an operation
 * and, for a capture, its target: a decoded script (1..API_SEGMENT_MAX
 * bytes, no NUL or control character, zero padding) with a version (the
 * same rules) or none (any version), and a Durable Object namespace
 * (1..API_NAMESPACE_MAX such bytes) with its actor id (64 lowercase hex
 * digits) or neither; or a pid (1..API_PID_MAX) and nothing else; or
 * nothing (every V8 target of the host).  Then the duration
 * (API_DURATION_MIN_MS..API_DURATION_MAX_MS), the type (cpu, heap) and
 * the raw flag.  The helper checks every byte again (privsep__decode_req)
 * and answers on the request's socket with one reply (struct
 * privsep_reply_wire, then the last bytes of the child's stderr) and, when
 * there is one, the result as a descriptor: the profile file, or a sealed
 * memfd with the target list.  The HTTP process streams it.  Cancel: the
 * HTTP process shuts its end down for writing (or closes it); the helper
 * stops the child (SIGTERM, SIGKILL 3 s later) and still replies.
 *
 * The helper refuses more than max_captures captures at once (besides the
 * HTTP process's own admission), runs children with a data-size limit
 * (RLIMIT_DATA, child_memory bytes; not in sanitizer builds, whose shadow
 * memory needs terabytes of address space), removes at start the
 * temporary directories of helpers that died without removing theirs,
 * and exits when the control socket closes, after stopping its children.
 *
 * Functions return 0 or a negative errno; nothing here prints but the
 * helper, which writes one line to opts->log for what it could not do.
 */
#ifndef ISOPROF_SERVE_PRIVSEP_H
#define ISOPROF_SERVE_PRIVSEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "user/serve/api.h"

#define PRIVSEP_MAGIC 0x49535053u	/* "ISPS" */
#define PRIVSEP_PROTO 3
#define PRIVSEP_ERR_MAX (64 * 1024)	/* stderr tail carried in a reply */
#define PRIVSEP_TARGETS_TTL_MS 1500
#define PRIVSEP_HELPER_COMM "isoprof-priv"
#define PRIVSEP_DIR_PREFIX "isoprof-serve."

enum privsep_op {
	PRIVSEP_OP_CAPTURE = 1,
	PRIVSEP_OP_TARGETS = 2,
};

struct privsep_req_wire {
	uint32_t magic;
	uint16_t proto;
	uint16_t op;
	uint32_t duration_ms;
	uint8_t type;			/* enum api_profile_type */
	uint8_t raw;			/* 0 or 1 */
	uint16_t script_len;		/* 0: no script */
	uint16_t version_len;		/* 0: any version (always 0 without a script) */
	uint16_t reserved;		/* 0 */
	char script[API_SEGMENT_MAX];	/* not NUL-terminated; zero after len */
	char version[API_SEGMENT_MAX];
	uint16_t namespace_len;		/* 0: no Durable Object namespace (nor actor) */
	uint16_t actor_len;		/* 0, or API_ACTOR_ID_LEN with a namespace */
	char namespace_id[API_NAMESPACE_MAX];	/* no control character; zero after len */
	char actor_id[API_ACTOR_ID_LEN];	/* lowercase hex */
	uint32_t pid;			/* 0, or the process, alone */
};
_Static_assert(sizeof(struct privsep_req_wire) ==
		       28 + 2 * API_SEGMENT_MAX + API_NAMESPACE_MAX + API_ACTOR_ID_LEN,
	       "privsep request: no implicit padding");

enum privsep_reply_kind {
	PRIVSEP_R_DONE = 1,		/* the child ran: wait_status, flags */
	PRIVSEP_R_FAILED = 2,		/* refused or not started: err */
};

#define PRIVSEP_F_TIMED_OUT 1u
#define PRIVSEP_F_CANCELLED 2u
#define PRIVSEP_F_TRUNCATED 4u
#define PRIVSEP_F_FD 8u			/* the result descriptor comes with it */

struct privsep_reply_wire {
	uint32_t magic;
	uint16_t proto;
	uint16_t kind;
	int32_t wait_status;
	int32_t err;			/* PRIVSEP_R_FAILED: a negative errno */
	uint32_t flags;
	uint32_t err_len;		/* stderr bytes after the header */
};
_Static_assert(sizeof(struct privsep_reply_wire) == 24, "privsep reply: no padding");

/*
 * A capture as the HTTP process asks for it (validated by api.c first):
 * script (version NULL: any), or pid, or neither (every V8 target).
 */
struct privsep_capture {
	const char *script;		/* NULL: none */
	const char *version;		/* NULL: any (or no script) */
	const char *namespace_id;	/* NULL, or with actor_id and a script */
	const char *actor_id;
	pid_t pid;			/* 0: none; never with a script */
	long duration_ms;
	enum api_profile_type type;
	bool raw;
};

/* A decoded, checked request (the helper's view). */
struct privsep_req {
	enum privsep_op op;
	char script[API_SEGMENT_MAX + 1];	/* "" when none */
	char version[API_SEGMENT_MAX + 1];	/* "" when any */
	char namespace_id[API_NAMESPACE_MAX + 1];	/* "" when none */
	char actor_id[API_ACTOR_ID_LEN + 1];
	pid_t pid;				/* 0 when none */
	long duration_ms;
	enum api_profile_type type;
	bool raw;
};

struct privsep_result {
	int wait_status;		/* waitpid()'s */
	bool timed_out;
	bool cancelled;
	bool out_truncated;		/* targets: the list was over its cap */
	char *err;			/* the child's stderr tail, NUL-terminated */
	size_t err_len;
	int fd;				/* the profile or the target list, or -1 */
};

struct privsep_helper_opts {
	const char *self;		/* the isoprof executable children run */
	const char *tmp_root;		/* where captures get their directories */
	unsigned int max_captures;
	uint64_t child_memory;		/* RLIMIT_DATA of children in bytes; 0: none */
	bool no_gc_probes;		/* captures run `record --no-gc-probes` */
	const char *source_maps;	/* ... `record --source-maps DIR`; NULL: none */
	FILE *log;
	/* a unix socket the daemon listens on: removed at exit if it is still that file */
	const char *unix_path;
	dev_t unix_dev;
	ino_t unix_ino;
};

/* Encode a capture or targets request; -EINVAL for a field out of range. */
int privsep__encode_capture(const struct privsep_capture *c, struct privsep_req_wire *w);
void privsep__encode_targets(struct privsep_req_wire *w);
/* Check and decode len bytes from the HTTP process: -EINVAL on any deviation. */
int privsep__decode_req(const void *buf, size_t len, struct privsep_req *req);
/* Check a reply header and its length (len bytes in all): -EPROTO when it is not one. */
int privsep__check_reply(const void *buf, size_t len);

/*
 * Fork the helper: it serves the control socket until it closes, then
 * exits (status 0, or 1 when it could not run at all).  *sock gets the
 * HTTP process's end, *pid the helper's.  Call before any thread exists.
 * The helper closes every descriptor but its socket and stderr, and
 * ignores SIGINT and SIGTERM (its parent stops it by closing the socket).
 */
int privsep__start(const struct privsep_helper_opts *opts, int *sock, pid_t *pid);

/*
 * Make the calling (HTTP) process unprivileged for good: when it runs as
 * root, the supplementary groups, gid and uid of user (uid 0 refused);
 * in any case every capability (bounding set when allowed, permitted,
 * effective, inheritable, ambient) and PR_SET_NO_NEW_PRIVS.  Checks that
 * uid 0 cannot be regained.  On failure err says what failed.
 */
int privsep__drop(const char *user, char *err, size_t errlen);

/*
 * Ask the helper (control socket sock).  Blocks until the reply comes;
 * cancel(arg) is polled every 100 ms and once it returns true the helper is
 * told to stop the child (the reply then says cancelled).  Returns 0 with
 * *res filled (free with privsep_result__free()), or a negative errno: the
 * helper's refusal (-EAGAIN: its capture slots are full), -EPIPE when it
 * is gone, -EPROTO for a reply that is not one.
 */
int privsep__capture(int sock, const struct privsep_capture *c, bool (*cancel)(void *),
		     void *arg, struct privsep_result *res);
int privsep__targets(int sock, bool (*cancel)(void *), void *arg, struct privsep_result *res);
void privsep_result__free(struct privsep_result *res);

/*
 * Remove, in root, the directories named PRIVSEP_DIR_PREFIX "PID.XXXXXX"
 * that the caller's uid owns (never a symlink, never another user's),
 * whose helper PID is gone (or is now another program, or the caller).
 * Returns how many were removed, or a negative errno when root cannot be
 * read.
 */
int privsep__remove_stale_dirs(const char *root);

#endif /* ISOPROF_SERVE_PRIVSEP_H */
