// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/serve/privsep (the helper's request and reply
 * formats: every field out of range refused; the helper end to end over a
 * real socketpair with a stand-in program for isoprof; the removal of stale
 * temporary directories) and user/serve/auth_backoff (free failures,
 * doubling delays, per key, success, a full table).  The daemon with real
 * captures and a real drop to nobody is tests/e2e/hostile_serve.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/serve/auth_backoff.h"
#include "user/serve/privsep.h"

static struct privsep_capture good(void)
{
	return (struct privsep_capture){ .script = "alpha.js", .version = "latest",
					 .duration_ms = 2000, .type = API_PROFILE_HEAP,
					 .raw = true };
}

static void test_request_roundtrip(void **state)
{
	struct privsep_capture c = good();
	struct privsep_req_wire w;
	struct privsep_req r;

	(void)state;
	assert_int_equal(privsep__encode_capture(&c, &w), 0);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_int_equal(r.op, PRIVSEP_OP_CAPTURE);
	assert_string_equal(r.script, "alpha.js");
	assert_string_equal(r.version, "latest");
	assert_int_equal(r.duration_ms, 2000);
	assert_int_equal(r.type, API_PROFILE_HEAP);
	assert_true(r.raw);

	assert_string_equal(r.namespace_id, "");
	assert_string_equal(r.actor_id, "");

	/* a Durable Object namespace and its actor (issue 14) */
	c.namespace_id = "counter-ns";
	c.actor_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(privsep__encode_capture(&c, &w), 0);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_string_equal(r.namespace_id, "counter-ns");
	assert_string_equal(r.actor_id, c.actor_id);

	privsep__encode_targets(&w);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_int_equal(r.op, PRIVSEP_OP_TARGETS);
	assert_int_equal(r.pid, 0);
}

/* The pull's targets: a script at any version, a pid alone, or every V8 target. */
static void test_request_targets(void **state)
{
	struct privsep_capture c = good();
	struct privsep_req_wire w;
	struct privsep_req r;

	(void)state;
	c.version = NULL;
	assert_int_equal(privsep__encode_capture(&c, &w), 0);
	assert_int_equal(w.version_len, 0);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_string_equal(r.script, "alpha.js");
	assert_string_equal(r.version, "");
	assert_int_equal(r.pid, 0);

	c = good();
	c.script = c.version = NULL;
	c.pid = 4242;
	assert_int_equal(privsep__encode_capture(&c, &w), 0);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_int_equal(r.op, PRIVSEP_OP_CAPTURE);
	assert_string_equal(r.script, "");
	assert_int_equal(r.pid, 4242);

	c.pid = 0;
	assert_int_equal(privsep__encode_capture(&c, &w), 0);
	assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), 0);
	assert_string_equal(r.script, "");
	assert_string_equal(r.version, "");
	assert_int_equal(r.pid, 0);
	assert_int_equal(r.duration_ms, 2000);
}

static void test_request_refused(void **state)
{
	struct privsep_capture c;
	struct privsep_req_wire w, base;
	struct privsep_req r;
	char big[API_SEGMENT_MAX + 2];

	(void)state;
	/* the encoder refuses what the helper would */
	c = good();
	c.duration_ms = 999;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c = good();
	c.script = "";
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c = good();
	c.version = "a\nb";
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	c = good();
	c.script = big;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);

	/* the decoder refuses any byte out of place */
	c = good();
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	assert_int_equal(privsep__decode_req(&base, sizeof(base) - 1, &r), -EINVAL);
#define BAD(stmt)                                                               \
	do {                                                                    \
		w = base;                                                       \
		stmt;                                                           \
		assert_int_equal(privsep__decode_req(&w, sizeof(w), &r), -EINVAL); \
	} while (0)
	BAD(w.magic ^= 1);
	BAD(w.proto = 1);
	BAD(w.op = 3);
	BAD(w.reserved = 1);
	BAD(w.duration_ms = 50001);
	BAD(w.duration_ms = 0);
	BAD(w.type = 2);
	BAD(w.raw = 2);
	BAD(w.script_len = 0);
	BAD(w.script_len = API_SEGMENT_MAX + 1);
	BAD(w.script[1] = '\0');
	BAD(w.script[0] = 0x7f);
	BAD(w.version[6] = 'x');	/* past version_len: must be zero */
	BAD(w.script[API_SEGMENT_MAX - 1] = 'x');
	BAD(w.namespace_len = 1);		/* a namespace without an actor */
	BAD(w.actor_len = API_ACTOR_ID_LEN);	/* an actor without a namespace */
	BAD(w.actor_id[0] = 'a');
	BAD(w.namespace_id[3] = 'x');
	c = good();
	c.namespace_id = "ns";
	c.actor_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	BAD(w.actor_id[5] = 'A');		/* lowercase hex only */
	BAD(w.actor_len = 63);
	BAD(w.namespace_id[0] = '\n');
	BAD(w.namespace_len = API_NAMESPACE_MAX + 1);
	c.actor_id = "abc";
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c.actor_id = NULL;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);

	/* a pid stands alone; a version or a namespace needs a script */
	c = good();
	c.pid = 1;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c.script = NULL;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);	/* version, no script */
	c.version = NULL;
	c.pid = API_PID_MAX + 1;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c.pid = -1;
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c = good();
	c.script = c.version = NULL;
	c.namespace_id = "ns";
	c.actor_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(privsep__encode_capture(&c, &w), -EINVAL);
	c = good();
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	BAD(w.pid = 1);				/* with a script */
	BAD(w.script_len = 0; memset(w.script, 0, sizeof(w.script)));	/* a version alone */
	c.version = NULL;
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	BAD(w.script_len = 0; memset(w.script, 0, sizeof(w.script)); w.version_len = 1;
	    w.version[0] = 'v');
	c.namespace_id = "ns";
	c.actor_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	BAD(w.script_len = 0; memset(w.script, 0, sizeof(w.script)));	/* a namespace alone */
	c = good();
	c.script = c.version = NULL;
	c.pid = 7;
	assert_int_equal(privsep__encode_capture(&c, &base), 0);
	BAD(w.pid = API_PID_MAX + 1);
	BAD(w.pid = UINT32_MAX);
	BAD(w.script_len = 1; w.script[0] = 'a');
	BAD(w.version_len = 1; w.version[0] = 'v');
	BAD(w.namespace_len = 2; memcpy(w.namespace_id, "ns", 2); w.actor_len = API_ACTOR_ID_LEN;
	    memset(w.actor_id, 'a', API_ACTOR_ID_LEN));
	/* a targets request carries nothing else */
	privsep__encode_targets(&base);
	BAD(w.duration_ms = 1000);
	BAD(w.script[5] = 'a');
	BAD(w.namespace_id[0] = 'a');
	BAD(w.actor_len = 1);
	BAD(w.pid = 1);
#undef BAD
}

static void test_reply_check(void **state)
{
	struct privsep_reply_wire w = { .magic = PRIVSEP_MAGIC, .proto = PRIVSEP_PROTO,
					.kind = PRIVSEP_R_DONE, .err_len = 3 };
	char buf[sizeof(w) + 3];

	(void)state;
	memcpy(buf, &w, sizeof(w));
	memcpy(buf + sizeof(w), "abc", 3);
	assert_int_equal(privsep__check_reply(buf, sizeof(buf)), 0);
	assert_int_equal(privsep__check_reply(buf, sizeof(buf) - 1), -EPROTO);
	w.flags = 0x100;
	memcpy(buf, &w, sizeof(w));
	assert_int_equal(privsep__check_reply(buf, sizeof(buf)), -EPROTO);
	w.flags = 0;
	w.kind = PRIVSEP_R_FAILED;
	w.err = 5;
	memcpy(buf, &w, sizeof(w));
	assert_int_equal(privsep__check_reply(buf, sizeof(buf)), -EPROTO);
	w.err = -EAGAIN;
	memcpy(buf, &w, sizeof(w));
	assert_int_equal(privsep__check_reply(buf, sizeof(buf)), 0);
}

/*
 * The helper for real: a shell script stands in for isoprof, writes the
 * profile record would (-o FILE) or fails like record does.
 */
static void test_helper(void **state)
{
	char dir[] = "/tmp/isoprof-test-privsep.XXXXXX", prog[64 + sizeof(dir)];
	struct privsep_helper_opts o = { .max_captures = 1, .log = stderr };
	struct privsep_capture c = good();
	struct privsep_result res;
	char buf[64], path[sizeof(prog)], args[8192];
	struct stat st;
	pid_t pid;
	FILE *f;
	int sock, status;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(prog, sizeof(prog), "%s/fake-isoprof", dir);
	f = fopen(prog, "w");
	assert_non_null(f);
	fputs("#!/bin/sh\n"
	      "[ \"$1\" = targets ] && { while read -r _; do echo x >> \"${0%/*}/scans\"; "
	      "printf 'ISTL\\000\\000\\000\\000\\014\\000\\000\\000\\000\\000\\000\\000'; "
	      "echo '[{\"pid\":1}]'; done; exit 0; }\n"
	      "echo \"$*\" >> \"${0%/*}/args\"\n"
	      "case \"$2\" in --script=missing.js) echo 'isoprof: no script missing.js' >&2; exit 3;; esac\n"
	      "for a; do [ \"$prev\" = -o ] && printf 'PROFILE' > \"$a\"; prev=$a; done\n"
	      "exit 0\n", f);
	fclose(f);
	chmod(prog, 0755);
	o.self = prog;
	o.tmp_root = dir;
	assert_int_equal(privsep__start(&o, &sock, &pid), 0);

	c.raw = false;
	assert_int_equal(privsep__capture(sock, &c, NULL, NULL, &res), 0);
	assert_true(WIFEXITED(res.wait_status) && !WEXITSTATUS(res.wait_status));
	assert_true(res.fd >= 0);
	n = read(res.fd, buf, sizeof(buf));
	assert_int_equal(n, 7);
	assert_memory_equal(buf, "PROFILE", 7);
	privsep_result__free(&res);

	c.script = "missing.js";
	assert_int_equal(privsep__capture(sock, &c, NULL, NULL, &res), 0);
	assert_int_equal(WEXITSTATUS(res.wait_status), 3);
	assert_int_equal(res.fd, -1);
	assert_non_null(strstr(res.err, "no script missing.js"));
	privsep_result__free(&res);

	/* the pull's targets: any version, a pid, every V8 target */
	c = good();
	c.raw = false;
	c.type = API_PROFILE_CPU;
	c.version = NULL;
	assert_int_equal(privsep__capture(sock, &c, NULL, NULL, &res), 0);
	assert_true(res.fd >= 0);
	privsep_result__free(&res);
	c.script = NULL;
	c.pid = 4242;
	assert_int_equal(privsep__capture(sock, &c, NULL, NULL, &res), 0);
	assert_true(res.fd >= 0);
	privsep_result__free(&res);
	c.pid = 0;
	assert_int_equal(privsep__capture(sock, &c, NULL, NULL, &res), 0);
	assert_true(res.fd >= 0);
	privsep_result__free(&res);
	snprintf(path, sizeof(path), "%s/args", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	n = (ssize_t)fread(args, 1, sizeof(args) - 1, f);
	fclose(f);
	args[n > 0 ? n : 0] = '\0';
	/* the first two lines are the captures above */
	assert_non_null(strstr(args, "\nrecord --script=alpha.js --duration-ms=2000 --type=cpu -q -o "));
	assert_non_null(strstr(args, "\nrecord --pid=4242 --duration-ms=2000 --type=cpu -q -o "));
	assert_non_null(strstr(args, "\nrecord --duration-ms=2000 --type=cpu -q -o "));
	unlink(path);

	assert_int_equal(privsep__targets(sock, NULL, NULL, &res), 0);
	assert_true(res.fd >= 0);
	n = read(res.fd, buf, sizeof(buf));
	assert_int_equal(n, 12);
	assert_memory_equal(buf, "[{\"pid\":1}]\n", 12);
	privsep_result__free(&res);
	/* within PRIVSEP_TARGETS_TTL_MS the same scan answers: the program ran once */
	assert_int_equal(privsep__targets(sock, NULL, NULL, &res), 0);
	assert_true(res.fd >= 0);
	privsep_result__free(&res);
	snprintf(path, sizeof(path), "%s/scans", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 2);
	unlink(path);

	/* the helper removed the capture directories; closing the socket stops it */
	close(sock);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && !WEXITSTATUS(status));
	unlink(prog);
	assert_int_equal(rmdir(dir), 0);
}

static void test_stale_dirs(void **state)
{
	char root[] = "/tmp/isoprof-test-stale.XXXXXX", p[256], target[256];
	pid_t dead;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(root));
	dead = fork();
	if (!dead)
		_exit(0);
	waitpid(dead, NULL, 0);
	/* a dead helper's directory with a file in it: removed */
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.abcdef", root, (int)dead);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.abcdef/profile.pb.gz", root, (int)dead);
	fclose(fopen(p, "w"));
	/* a live process that is not a helper (ourselves): stale too */
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.ghijkl", root, (int)getpid());
	assert_int_equal(mkdir(p, 0700), 0);
	/* a symlink under a helper's name, to a directory with a file: kept, and its file */
	snprintf(target, sizeof(target), "%s/victim", root);
	assert_int_equal(mkdir(target, 0700), 0);
	snprintf(p, sizeof(p), "%s/victim/keep", root);
	fclose(fopen(p, "w"));
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.mnopqr", root, (int)dead);
	assert_int_equal(symlink(target, p), 0);
	/* names that are not "PID.XXXXXX": kept */
	snprintf(p, sizeof(p), "%s/isoprof-serve.XXXXXX", root);
	assert_int_equal(mkdir(p, 0700), 0);

	assert_int_equal(privsep__remove_stale_dirs(root), 2);
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.abcdef", root, (int)dead);
	assert_int_equal(lstat(p, &st), -1);
	snprintf(p, sizeof(p), "%s/victim/keep", root);
	assert_int_equal(lstat(p, &st), 0);
	snprintf(p, sizeof(p), "%s/isoprof-serve.%d.mnopqr", root, (int)dead);
	assert_int_equal(lstat(p, &st), 0);
	unlink(p);
	snprintf(p, sizeof(p), "%s/victim/keep", root);
	unlink(p);
	rmdir(target);
	snprintf(p, sizeof(p), "%s/isoprof-serve.XXXXXX", root);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(rmdir(root), 0);
}

static void test_backoff(void **state)
{
	struct auth_backoff *b = auth_backoff__new(2);
	uint64_t t = 1000;

	(void)state;
	assert_non_null(b);
	assert_null(auth_backoff__new(0));
	for (int i = 0; i < AUTH_BACKOFF_FREE - 1; i++) {
		auth_backoff__fail(b, "10.0.0.1", t);
		assert_int_equal(auth_backoff__check(b, "10.0.0.1", t), 0);
	}
	auth_backoff__fail(b, "10.0.0.1", t);
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t), 1);
	assert_int_equal(auth_backoff__check(b, "10.0.0.2", t), 0);
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t + 1000), 0);
	/* each further failure doubles the delay, up to the cap */
	auth_backoff__fail(b, "10.0.0.1", t + 1000);
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t + 1000), 2);
	auth_backoff__fail(b, "10.0.0.1", t + 3000);
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t + 3000), 4);
	for (int i = 0; i < 20; i++)
		auth_backoff__fail(b, "10.0.0.1", t + 7000);
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t + 7000), AUTH_BACKOFF_MAX_S);
	/* a success clears the key */
	auth_backoff__success(b, "10.0.0.1");
	assert_int_equal(auth_backoff__check(b, "10.0.0.1", t + 7000), 0);
	/* a full table: the oldest key gives way */
	for (int i = 0; i < AUTH_BACKOFF_FREE; i++)
		auth_backoff__fail(b, "a", t);
	for (int i = 0; i < AUTH_BACKOFF_FREE; i++)
		auth_backoff__fail(b, "b", t + 10);
	for (int i = 0; i < AUTH_BACKOFF_FREE; i++)
		auth_backoff__fail(b, "c", t + 20);
	assert_int_equal(auth_backoff__check(b, "a", t + 20), 0);
	assert_int_equal(auth_backoff__check(b, "c", t + 20), 1);
	/* forgotten after AUTH_BACKOFF_FORGET_S without a failure */
	assert_int_equal(auth_backoff__check(b, "b", t + 10 + AUTH_BACKOFF_FORGET_S * 1000ULL + 1), 0);
	auth_backoff__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_roundtrip),
		cmocka_unit_test(test_request_targets),
		cmocka_unit_test(test_request_refused),
		cmocka_unit_test(test_reply_check),
		cmocka_unit_test(test_helper),
		cmocka_unit_test(test_stale_dirs),
		cmocka_unit_test(test_backoff),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
