/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * inspector_addr: where a V8 runtime's inspector listens (docs/v8-profiler.md,
 * `isoprof targets`), for discover.
 *
 * The address the command line asks for (inspector_addr__parse_flag()) is
 * matched against the process's own listening TCP sockets: the rows of
 * /proc/PID/net/tcp{,6} (its network namespace) whose inode is one of the
 * sockets it holds open.  node listens on its default address without a
 * flag too (after SIGUSR1).  Port 0 asks the kernel for a port: then only
 * one matching socket will do.
 *
 * Errors: actions return 0 or a negative errno; nothing prints.
 */
#ifndef ISOPROF_CAPTURE_INSPECTOR_ADDR_H
#define ISOPROF_CAPTURE_INSPECTOR_ADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "user/capture/discover.h"

#define INSPECTOR_DEFAULT_PORT 9229

/* A socket, from a /proc/net/tcp{,6} row. */
struct net_tcp_sock {
	char addr[46];		/* numeric, no brackets: "127.0.0.1", "::1" */
	unsigned int port;
	unsigned int state;	/* 0x0A is LISTEN */
	uint64_t inode;
	bool v6;
};

/*
 * The listening sockets among sock_inodes (sorted here, in place) of
 * process pid, formatted into p->listening, and p->inspector_flag and
 * p->inspector as above.  An unreadable command line or socket table is
 * not an error (the fields stay empty); 0 or -ENOMEM.
 */
int inspector_addr__probe(struct discover_proc *p, pid_t pid, uint64_t *sock_inodes,
			  size_t nr_socks);

/*
 * Pure helpers, exposed for the tests and the fuzzer.
 */

/* One row of /proc/net/tcp (v6 false) or tcp6.  0, or -EINVAL (header, malformed). */
int inspector_addr__parse_tcp_line(const char *line, bool v6, struct net_tcp_sock *out);

/*
 * The inspector address a command line (argc NUL-terminated strings, as in
 * /proc/PID/cmdline) asks for.  workerd: --inspector-addr=ADDR,
 * --inspector-addr ADDR, -i ADDR, -iADDR (port 9229 by default).  node:
 * --inspect[=ADDR], --inspect-brk[=ADDR], --inspect-wait[=ADDR],
 * --inspect-port=ADDR and --debug-port=ADDR, before the script or --;
 * ADDR is [HOST:]PORT or HOST, and 127.0.0.1:9229 the default.
 * 1 when a flag names it, 0 when not (host and port then hold node's
 * default, or "" and 0 for other runtimes); host is numeric or a name,
 * without brackets.  -ENOSPC, -ENOMEM.
 */
int inspector_addr__parse_flag(enum discover_runtime rt, const char *cmdline, size_t len,
			       char *host, size_t host_len, unsigned int *port);

/* "HOST:PORT", with brackets around an IPv6 host, "*" for "".  0 or -ENOSPC. */
int inspector_addr__format(const char *host, unsigned int port, char *buf, size_t len);

/*
 * Whether a listening socket serves host:port: same port (port 0: any),
 * and the same address, or either side a wildcard ("", "*", "0.0.0.0",
 * "::"), or "localhost" against a loopback address.
 */
bool inspector_addr__sock_matches(const struct net_tcp_sock *sock, const char *host,
				  unsigned int port);

#endif /* ISOPROF_CAPTURE_INSPECTOR_ADDR_H */
