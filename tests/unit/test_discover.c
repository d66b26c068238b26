// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/capture/discover and inspector_addr: the parsers of
 * /proc text (lib/procfs and v8log's, as discover uses them), command
 * lines and socket tables, the version search, the TLS arithmetic, and a
 * scan of this (non-V8) test process.  Real runtimes are in tests/e2e/targets.sh.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/v8log.h"
#include "lib/procfs.h"
#include "user/capture/discover.h"
#include "user/capture/inspector_addr.h"

static void test_tcp_v4(void **state)
{
	struct net_tcp_sock s;

	(void)state;
	assert_int_equal(inspector_addr__parse_tcp_line("  sl  local_address rem_address   st "
							"tx_queue rx_queue tr tm->when retrnsmt  "
							" uid  timeout inode\n", false, &s),
			 -EINVAL);
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   1: 0100007F:46A1 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
		"     0        0 102621 1 00000000d2842d67 100 0 0 10 0\n", false, &s), 0);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(s.addr, "127.0.0.1");
#endif
	assert_int_equal(s.port, 18081);
	assert_int_equal(s.state, 0x0A);
	assert_int_equal(s.inode, 102621);
	assert_false(s.v6);

	/* An established connection with a large inode. */
	assert_int_equal(inspector_addr__parse_tcp_line(
		"  12: 0F02000A:0016 0202000A:D3C4 01 00000000:00000000 02:000AF0B1 00000000"
		"  1000        0 4294967301 4 0000000000000000 20 4 29 10 -1", false, &s), 0);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(s.addr, "10.0.2.15");
#endif
	assert_int_equal(s.port, 22);
	assert_int_equal(s.state, 1);
	assert_int_equal(s.inode, 4294967301ULL);

	assert_int_equal(inspector_addr__parse_tcp_line("", false, &s), -EINVAL);
	assert_int_equal(inspector_addr__parse_tcp_line("   1: 0100007F:46A1", false, &s),
			 -EINVAL);
	/* A v6 address in the v4 file, and a port out of range. */
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   0: 00000000000000000000000001000000:1F90 00000000000000000000000000000000:0000"
		" 0A 00000000:00000000 00:00000000 00000000     0        0 1 1", false, &s),
		-EINVAL);
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   1: 0100007F:1046A1 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
		"     0        0 1 1", false, &s), -EINVAL);
}

static void test_tcp_v6(void **state)
{
	struct net_tcp_sock s;

	(void)state;
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   0: 00000000000000000000000001000000:2405 00000000000000000000000000000000:0000"
		" 0A 00000000:00000000 00:00000000 00000000     0        0 55123 1"
		" 0000000000000000 100 0 0 10 0\n", true, &s), 0);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(s.addr, "::1");
#endif
	assert_int_equal(s.port, 9221);
	assert_int_equal(s.inode, 55123);
	assert_true(s.v6);

	assert_int_equal(inspector_addr__parse_tcp_line(
		"   1: 00000000000000000000000000000000:0050 00000000000000000000000000000000:0000"
		" 0A 00000000:00000000 00:00000000 00000000     0        0 7 1", true, &s), 0);
	assert_string_equal(s.addr, "::");
	assert_int_equal(s.port, 80);

	/* ::ffff:127.0.0.1, as a dual-stack socket shows an IPv4 peer. */
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   2: 0000000000000000FFFF00000100007F:0050 00000000000000000000000000000000:0000"
		" 0A 00000000:00000000 00:00000000 00000000     0        0 8 1", true, &s), 0);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	assert_string_equal(s.addr, "::ffff:127.0.0.1");
#endif
	/* A v4 address in the v6 file. */
	assert_int_equal(inspector_addr__parse_tcp_line(
		"   1: 0100007F:46A1 00000000:0000 0A 00000000:00000000 00:00000000 00000000"
		"     0        0 102621 1", true, &s), -EINVAL);
}

static void test_nspid(void **state)
{
	pid_t pid = 0;

	(void)state;
	assert_int_equal(procfs__parse_nspid("Name:\tnode\nPid:\t4242\nNSpid:\t4242\t17\n"
					     "NStgid:\t4242\t17\n", &pid), 0);
	assert_int_equal(pid, 17);
	assert_int_equal(procfs__parse_nspid("Name:\tx\nNSpid:\t99\n", &pid), 0);
	assert_int_equal(pid, 99);
	/* Three levels, no trailing newline. */
	assert_int_equal(procfs__parse_nspid("NSpid:\t5000\t300\t1", &pid), 0);
	assert_int_equal(pid, 1);
	/* Old kernels have no NSpid line. */
	assert_int_equal(procfs__parse_nspid("Name:\tx\nPid:\t12\n", &pid), -ENOENT);
	assert_int_equal(procfs__parse_nspid("", &pid), -ENOENT);
	assert_int_equal(procfs__parse_nspid("NSpid:\t\n", &pid), -EINVAL);
	assert_int_equal(procfs__parse_nspid("NSpid:\t12 abc\n", &pid), -EINVAL);
	/* "NSpid" must start a line. */
	assert_int_equal(procfs__parse_nspid("Name:\tNSpid:\t3\n", &pid), -ENOENT);
}

/* discover reads comm and PF_KTHREAD with lib/procfs: the cases it relies on. */
static void test_stat(void **state)
{
	char comm[PROCFS_COMM_LEN + 1], st = 0;
	unsigned long flags = 0;

	(void)state;
	assert_int_equal(procfs__parse_stat("12776 (workerd) S 1 12776 12776 0 -1 4194560 "
					    "34458 0 0 0\n", comm, &st, &flags), 0);
	assert_string_equal(comm, "workerd");
	assert_int_equal(st, 'S');
	assert_int_equal(flags, 4194560);
	/* A comm with spaces and parentheses: the last ')' ends it. */
	assert_int_equal(procfs__parse_stat("7 (a) b (c)) R 2 0 0 0 -1 2129984 0", comm, NULL,
					    &flags), 0);
	assert_string_equal(comm, "a) b (c)");
	assert_int_equal(flags, 2129984);	/* PF_KTHREAD set: a kernel thread */
	assert_true(flags & 0x00200000);
	assert_int_equal(procfs__parse_stat("7 (x) R 2 0", comm, NULL, &flags), -EINVAL);
	assert_int_equal(procfs__parse_stat("garbage", comm, NULL, &flags), -EINVAL);
}

/* discover reads code log names with v8log's one parser: the cases it relies on. */
static void test_code_log_name(void **state)
{
	uint64_t isolate = 0;
	pid_t pid = 0;

	(void)state;
	assert_int_equal(v8log__parse_filename("isolate-0x7299bfd1a000-12776-v8.log", &isolate,
					       &pid), 0);
	assert_int_equal(isolate, 0x7299bfd1a000ULL);
	assert_int_equal(pid, 12776);
	assert_int_equal(v8log__parse_filename("/var/log/wd/isolate-0x2faabe80-23498-v8.log",
					       &isolate, &pid), 0);
	assert_int_equal(isolate, 0x2faabe80);
	assert_int_equal(pid, 23498);
	/* --logfile names other than v8.log keep the prefix. */
	assert_int_equal(v8log__parse_filename("isolate-0xABC-5-code.txt", &isolate, &pid), 0);
	assert_int_equal(isolate, 0xabc);

	assert_int_equal(v8log__parse_filename("v8.log", &isolate, &pid), -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-7299bfd1a000-12776-v8.log", &isolate,
					       &pid), -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-0x-12776-v8.log", &isolate, &pid),
			 -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-0x1234-v8.log", &isolate, &pid),
			 -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-0x1234-12-", &isolate, &pid), -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-0x1234-0-v8.log", &isolate, &pid),
			 -EINVAL);
	assert_int_equal(v8log__parse_filename("isolate-0x11112222333344445-1-v8.log", &isolate,
					       &pid), -EINVAL);
	/* A directory named like a log does not make its files logs. */
	assert_int_equal(v8log__parse_filename("isolate-0x1-2-x/perf-2.map", &isolate, &pid),
			 -EINVAL);
}

/*
 * The directory scan discover shares with record: a log's path is spelled
 * as the fd walk spells it (one slash, also under "dir/"), so the two meet.
 */
static void test_code_log_scan(void **state)
{
	char dir[] = "/tmp/test_discover.XXXXXX", path[128], slashed[64], cmd[96];
	char **found;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/isolate-0x1000-77-v8.log", dir);
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(slashed, sizeof(slashed), "%s/", dir);
	found = v8log__find(slashed, 77, NULL);
	assert_non_null(found);
	assert_non_null(found[0]);
	assert_string_equal(found[0], path);
	assert_null(found[1]);
	v8log__find_free(found);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* argv as /proc/PID/cmdline has it: NUL-separated, NUL-terminated. */
static size_t cmdline(char *buf, size_t size, ...)
{
	const char *a;
	size_t len = 0, n;
	va_list ap;

	va_start(ap, size);
	while ((a = va_arg(ap, const char *))) {
		n = strlen(a) + 1;
		assert_true(len + n <= size);
		memcpy(buf + len, a, n);
		len += n;
	}
	va_end(ap);
	return len;
}

static void expect_flag(enum discover_runtime rt, const char *buf, size_t len, int named,
			const char *host, unsigned int port)
{
	char h[128] = "junk";
	unsigned int p = 12345;

	assert_int_equal(inspector_addr__parse_flag(rt, buf, len, h, sizeof(h), &p), named);
	assert_string_equal(h, host);
	assert_int_equal(p, port);
}

static void test_inspector_flag_node(void **state)
{
	char b[512];
	size_t n;

	(void)state;
	n = cmdline(b, sizeof(b), "node", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 0, "127.0.0.1", 9229);
	n = cmdline(b, sizeof(b), "node", "--inspect", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "127.0.0.1", 9229);
	n = cmdline(b, sizeof(b), "node", "--perf-basic-prof", "--inspect=127.0.0.1:19333", "-e",
		    "setInterval(()=>{},1000)", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "127.0.0.1", 19333);
	n = cmdline(b, sizeof(b), "node", "--inspect=9230", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "127.0.0.1", 9230);
	n = cmdline(b, sizeof(b), "node", "--inspect=0.0.0.0", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "0.0.0.0", 9229);
	n = cmdline(b, sizeof(b), "node", "--inspect-brk=[::1]:9231", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "::1", 9231);
	n = cmdline(b, sizeof(b), "node", "--inspect-wait=0.0.0.0:0", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "0.0.0.0", 0);
	/* --inspect-port takes its value as the next argument too. */
	n = cmdline(b, sizeof(b), "node", "--inspect-port", "9232", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "127.0.0.1", 9232);
	n = cmdline(b, sizeof(b), "node", "-r", "./hook.js", "--inspect=9233", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 1, "127.0.0.1", 9233);
	/* The script's own arguments are not node's. */
	n = cmdline(b, sizeof(b), "node", "app.js", "--inspect=9234", NULL);
	expect_flag(DISCOVER_NODE, b, n, 0, "127.0.0.1", 9229);
	n = cmdline(b, sizeof(b), "node", "--", "--inspect=9234", NULL);
	expect_flag(DISCOVER_NODE, b, n, 0, "127.0.0.1", 9229);
	/* Look-alikes and bad values. */
	n = cmdline(b, sizeof(b), "node", "--inspect-publish-uid=http", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 0, "127.0.0.1", 9229);
	n = cmdline(b, sizeof(b), "node", "--inspect=host:99999", "app.js", NULL);
	expect_flag(DISCOVER_NODE, b, n, 0, "127.0.0.1", 9229);
	/* An empty or truncated command line (a zombie, a kernel thread). */
	expect_flag(DISCOVER_NODE, "", 0, 0, "127.0.0.1", 9229);
	expect_flag(DISCOVER_NODE, "node\0--inspect=92", 17, 1, "127.0.0.1", 92);
}

static void test_inspector_flag_workerd(void **state)
{
	char b[512];
	size_t n;

	(void)state;
	n = cmdline(b, sizeof(b), "workerd", "serve", "config.capnp",
		    "--inspector-addr=127.0.0.1:19229", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 1, "127.0.0.1", 19229);
	n = cmdline(b, sizeof(b), "workerd", "serve", "-i", "0.0.0.0:9300", "config.capnp", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 1, "0.0.0.0", 9300);
	n = cmdline(b, sizeof(b), "workerd", "serve", "-i*:9301", "config.capnp", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 1, "*", 9301);
	n = cmdline(b, sizeof(b), "workerd", "serve", "--inspector-addr", "localhost",
		    "config.capnp", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 1, "localhost", 9229);
	n = cmdline(b, sizeof(b), "workerd", "serve", "--inspector-addr=[::1]:9302", "c.capnp",
		    NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 1, "::1", 9302);
	n = cmdline(b, sizeof(b), "workerd", "serve", "config.capnp", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 0, "", 0);
	/* A flag with its value missing at the end. */
	n = cmdline(b, sizeof(b), "workerd", "serve", "config.capnp", "-i", NULL);
	expect_flag(DISCOVER_WORKERD, b, n, 0, "", 0);
	/* Other embedders: no known flag. */
	n = cmdline(b, sizeof(b), "d8", "--inspect=1", NULL);
	expect_flag(DISCOVER_V8, b, n, 0, "", 0);
}

static void test_hostport(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(inspector_addr__format("127.0.0.1", 9229, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "127.0.0.1:9229");
	assert_int_equal(inspector_addr__format("::1", 9229, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "[::1]:9229");
	assert_int_equal(inspector_addr__format("", 80, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "*:80");
	assert_int_equal(inspector_addr__format("127.0.0.1", 9229, buf, 14), -ENOSPC);
	assert_int_equal(inspector_addr__format("127.0.0.1", 9229, buf, 15), 0);
}

static void test_sock_matches(void **state)
{
	struct net_tcp_sock lo = { .addr = "127.0.0.1", .port = 9229, .state = 0x0A };
	struct net_tcp_sock any = { .addr = "0.0.0.0", .port = 9229, .state = 0x0A };
	struct net_tcp_sock lo6 = { .addr = "::1", .port = 9229, .state = 0x0A, .v6 = true };
	struct net_tcp_sock mapped = { .addr = "::ffff:10.1.2.3", .port = 9229, .v6 = true };

	(void)state;
	assert_true(inspector_addr__sock_matches(&lo, "127.0.0.1", 9229));
	assert_false(inspector_addr__sock_matches(&lo, "127.0.0.1", 9230));
	assert_false(inspector_addr__sock_matches(&lo, "10.0.0.1", 9229));
	assert_true(inspector_addr__sock_matches(&lo, "0.0.0.0", 9229));
	assert_true(inspector_addr__sock_matches(&lo, "*", 9229));
	assert_true(inspector_addr__sock_matches(&lo, "localhost", 9229));
	assert_true(inspector_addr__sock_matches(&any, "10.0.0.1", 9229));
	assert_true(inspector_addr__sock_matches(&lo6, "::1", 9229));
	assert_true(inspector_addr__sock_matches(&lo6, "0:0:0:0:0:0:0:1", 9229));
	assert_true(inspector_addr__sock_matches(&lo6, "localhost", 9229));
	assert_false(inspector_addr__sock_matches(&lo6, "127.0.0.1", 9229));
	assert_true(inspector_addr__sock_matches(&mapped, "10.1.2.3", 9229));
	/* Port 0: any port. */
	assert_true(inspector_addr__sock_matches(&lo, "127.0.0.1", 0));
}

static void test_node_version(void **state)
{
	static const char rodata[] = "json\0/json\0node.js instance\0node.js/v20.20.2\0(x) != y";
	static const char url[] = "xx https://nodejs.org/download/release/v22.1.0/node-v22.1.0"
				  ".tar.gz\0";
	static const char pre[] = "\0node.js/v23.0.0-pre\0";
	static const char bad[] = "xnode.js/v1.2.3\0node.js/v20\0node.js/v1.2.3x\0"
				  "node.js/v.1.2\0node.js/v1.2.3";
	char out[64];

	(void)state;
	assert_int_equal(discover__node_version(rodata, sizeof(rodata) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "v20.20.2");
	assert_int_equal(discover__node_version(url, sizeof(url) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "v22.1.0");
	assert_int_equal(discover__node_version(pre, sizeof(pre) - 1, out, sizeof(out)), 0);
	assert_string_equal(out, "v23.0.0-pre");
	/* Mid-string, two parts, trailing junk, a leading dot, no terminating NUL. */
	assert_int_equal(discover__node_version(bad, sizeof(bad) - 1, out, sizeof(out)), -ENOENT);
	assert_int_equal(discover__node_version("", 0, out, sizeof(out)), -ENOENT);
	/* Too small a buffer is not found, never truncated. */
	assert_int_equal(discover__node_version(rodata, sizeof(rodata) - 1, out, 8), -ENOENT);
}

static void test_tp_offset(void **state)
{
	(void)state;
	/* workerd 2026-11-17: st_value 0x1720, PT_TLS memsz 0x2900 align 0x40. */
	assert_int_equal(discover__tp_offset(0x1720, 0x2900, 0x40, 0x6cfd240), -0x11e0);
	/* node v20.20.2: st_value 0xb0, memsz 0x100 align 8. */
	assert_int_equal(discover__tp_offset(0xb0, 0x100, 8, 0x563aec8), -80);
	/* tlsfix: memsz 0xa8 rounds up to 0xc0. */
	assert_int_equal(discover__tp_offset(0, 0xa8, 0x40, 0x3d00), -0xc0);
	assert_int_equal(discover__tp_offset(0xa4, 0xa8, 0x40, 0x3d00), -28);
	/* A segment whose vaddr is 8 past a 16 boundary: glibc's firstbyte. */
	assert_int_equal(discover__tp_offset(0, 0x28, 16, 0x1008), -0x28);
	assert_int_equal(discover__tp_offset(0, 0x30, 16, 0x1008), -0x38);
	/* Alignment 0 or 1 means none. */
	assert_int_equal(discover__tp_offset(4, 0x13, 0, 0), 4 - 0x13);
	assert_int_equal(discover__tp_offset(4, 0x13, 1, 0), 4 - 0x13);
}

static void test_runtime_name(void **state)
{
	(void)state;
	assert_string_equal(discover__runtime_name(DISCOVER_NODE), "node");
	assert_string_equal(discover__runtime_name(DISCOVER_WORKERD), "workerd");
	assert_string_equal(discover__runtime_name(DISCOVER_V8), "v8");
}

/* This test is not a V8 runtime; a pid that does not exist is gone. */
static void test_scan_pids(void **state)
{
	pid_t pids[] = { getpid(), 999999999 };
	struct discover_list *list = NULL;

	(void)state;
	assert_int_equal(discover__scan(pids, 2, DISCOVER_ALL, &list), 0);
	assert_non_null(list);
	assert_int_equal(list->nr, 0);
	assert_int_equal(list->scanned, 2);
	assert_int_equal(list->nr_misses, 2);
	assert_int_equal(list->misses[0].pid, getpid());
	assert_int_equal(list->misses[0].err, -ENOEXEC);
	assert_int_equal(list->misses[1].pid, 999999999);
	assert_int_equal(list->misses[1].err, -ESRCH);
	assert_true(list->binaries >= 1);
	discover__free(list);
	discover__free(NULL);

	/* The whole host: whatever runs, the scan succeeds and skips this test. */
	assert_int_equal(discover__scan(NULL, 0, DISCOVER_ALL, &list), 0);
	for (size_t i = 0; i < list->nr; i++)
		assert_int_not_equal(list->procs[i].pid, getpid());
	assert_int_equal(list->nr_misses, 0);
	discover__free(list);
}

/*
 * A process's code logs, found again once a capture is armed: this test
 * holds one open; the directory holds it and a closed one.  Each is listed
 * once, the open one as open, and the directory once.
 */
static void test_complete(void **state)
{
	char dir[] = "/tmp/isoprof-test-discover.XXXXXX", open_log[256], closed_log[256];
	struct discover_proc p = { 0 };
	int fd, fd2;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(open_log, sizeof(open_log), "%s/isolate-0x1a2b-%d-v8.log", dir, getpid());
	snprintf(closed_log, sizeof(closed_log), "%s/isolate-0x3c4d-%d-v8.log", dir, getpid());
	fd = open(open_log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	/* the same log held twice is one log */
	fd2 = dup(fd);
	assert_true(fd2 >= 0);
	assert_int_equal(write(fd, "x\n", 2), 2);
	close(open(closed_log, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	p.pid = p.nspid = getpid();
	p.uid = getuid();
	p.uid_known = true;

	/* where the logs are, and nothing else */
	assert_int_equal(discover__complete(&p, DISCOVER_LOG_DIRS), 0);
	assert_int_equal(p.parts, DISCOVER_LOG_DIRS);
	assert_int_equal(p.nr_log_dirs, 1);
	assert_string_equal(p.log_dirs[0], dir);
	assert_int_equal(p.nr_logs, 0);
	assert_null(p.perf_map);
	/* then the logs: the directory is not added again */
	assert_int_equal(discover__complete(&p, DISCOVER_FILES), 0);
	assert_int_equal(p.parts, DISCOVER_LOG_DIRS | DISCOVER_FILES);
	assert_int_equal(p.nr_log_dirs, 1);
	assert_int_equal(p.nr_logs, 2);
	assert_string_equal(p.logs[0].path, open_log);
	assert_true(p.logs[0].open);
	assert_int_equal(p.logs[0].size, 2);
	assert_int_equal(p.logs[0].isolate, 0x1a2b);
	assert_string_equal(p.logs[1].path, closed_log);
	assert_false(p.logs[1].open);
	assert_non_null(p.perf_map);
	/* what is known is not looked for again; the load bias takes a scan */
	assert_int_equal(discover__complete(&p, DISCOVER_FILES), 0);
	assert_int_equal(p.nr_logs, 2);
	assert_int_equal(discover__complete(&p, DISCOVER_LOAD_BIAS), -EINVAL);
	/* sockets too: this test listens on none, has no inspector */
	assert_int_equal(discover__complete(&p, DISCOVER_SOCKETS), 0);
	assert_null(p.inspector);
	discover_proc__drop(&p, DISCOVER_LOG_DIRS);
	assert_int_equal(p.parts, DISCOVER_SOCKETS);
	assert_int_equal(p.nr_logs, 0);
	assert_int_equal(p.nr_log_dirs, 0);
	assert_null(p.perf_map);
	discover_proc__drop(&p, DISCOVER_ALL);
	assert_int_equal(p.parts, 0);

	close(fd);
	close(fd2);
	unlink(open_log);
	unlink(closed_log);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tcp_v4),
		cmocka_unit_test(test_tcp_v6),
		cmocka_unit_test(test_nspid),
		cmocka_unit_test(test_stat),
		cmocka_unit_test(test_code_log_name),
		cmocka_unit_test(test_code_log_scan),
		cmocka_unit_test(test_inspector_flag_node),
		cmocka_unit_test(test_inspector_flag_workerd),
		cmocka_unit_test(test_hostport),
		cmocka_unit_test(test_sock_matches),
		cmocka_unit_test(test_node_version),
		cmocka_unit_test(test_tp_offset),
		cmocka_unit_test(test_runtime_name),
		cmocka_unit_test(test_scan_pids),
		cmocka_unit_test(test_complete),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
