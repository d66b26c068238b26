// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* inspector_addr: where a V8 runtime's inspector listens; see inspector_addr.h. */
#include "user/capture/inspector_addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/procfs.h"

#define TCP_LISTEN 0x0A
/* A command line longer than this is read only this far. */
#define CMDLINE_MAX (256 * 1024)

/* ---- parsers ------------------------------------------------------------ */

int inspector_addr__parse_tcp_line(const char *line, bool v6, struct net_tcp_sock *out)
{
	unsigned long long inode;
	char local[64], *end;
	unsigned int port, state;
	size_t hexlen = v6 ? 32 : 8, i;
	int n = 0;

	memset(out, 0, sizeof(*out));
	/*
	 * "  0: 0100007F:46A1 00000000:0000 0A 00000000:00000000 00:00000000
	 *  00000000     0        0 102621 1 ..."
	 * sl, local, remote, st, tx:rx, tr:when, retrnsmt, uid, timeout, inode.
	 */
	if (sscanf(line, " %*u: %63[0-9A-Fa-f]:%x %*[0-9A-Fa-f]:%*x %x %*x:%*x %*x:%*x %*x %*u %*u %llu%n",
		   local, &port, &state, &inode, &n) != 4 || !n)
		return -EINVAL;
	if (strlen(local) != hexlen || port > 65535 || state > 0xff)
		return -EINVAL;
	/*
	 * The kernel prints each 32-bit word of the address as a host-order
	 * integer ("%08X"): parsing the words back as integers restores the
	 * bytes on the same host.
	 */
	if (v6) {
		struct in6_addr a;

		for (i = 0; i < 4; i++) {
			char word[9];
			uint32_t w;

			memcpy(word, local + 8 * i, 8);
			word[8] = '\0';
			w = (uint32_t)strtoul(word, &end, 16);
			memcpy(&a.s6_addr[4 * i], &w, 4);
		}
		if (!inet_ntop(AF_INET6, &a, out->addr, sizeof(out->addr)))
			return -EINVAL;
	} else {
		struct in_addr a;

		a.s_addr = (uint32_t)strtoul(local, &end, 16);
		if (!inet_ntop(AF_INET, &a, out->addr, sizeof(out->addr)))
			return -EINVAL;
	}
	out->port = port;
	out->state = state;
	out->inode = inode;
	out->v6 = v6;
	return 0;
}

static bool set_host(char *host, size_t host_len, const char *s, size_t n)
{
	if (n >= host_len)
		return false;
	memcpy(host, s, n);
	host[n] = '\0';
	return true;
}

/*
 * ADDR as node and kj take it: "[v6]:port", "host:port", "port" (node),
 * "host".  The port stays *port when ADDR has none.
 */
static bool parse_addr(const char *addr, bool bare_port, char *host, size_t host_len,
		       unsigned int *port)
{
	const char *colon, *h = addr;
	size_t hl;
	char *end;
	long v;

	if (!*addr)
		return false;
	if (*addr == '[') {
		const char *close = strchr(addr, ']');

		if (!close)
			return false;
		h = addr + 1;
		hl = (size_t)(close - h);
		colon = close[1] == ':' ? close + 1 : NULL;
		if (!colon && close[1])
			return false;
	} else {
		colon = strrchr(addr, ':');
		/* An unbracketed IPv6 address has more than one colon: no port. */
		if (colon && strchr(addr, ':') != colon)
			colon = NULL;
		hl = colon ? (size_t)(colon - addr) : strlen(addr);
	}
	if (colon) {
		errno = 0;
		v = strtol(colon + 1, &end, 10);
		if (errno || end == colon + 1 || *end || v < 0 || v > 65535)
			return false;
		*port = (unsigned int)v;
	} else if (bare_port && strspn(addr, "0123456789") == strlen(addr)) {
		v = strtol(addr, &end, 10);
		if (v > 65535)
			return false;
		*port = (unsigned int)v;
		return true;
	}
	return set_host(host, host_len, h, hl);
}

/* The NUL-separated arguments of a command line, one at a time. */
static const char *next_arg(const char *cmdline, size_t len, size_t *off)
{
	const char *a;

	if (*off >= len)
		return NULL;
	a = cmdline + *off;
	*off += strnlen(a, len - *off) + 1;
	return a;
}

/* node options that take the next argument as their value. */
static bool node_option_takes_value(const char *arg)
{
	static const char *const opts[] = {
		"-e", "--eval", "-p", "--print", "-r", "--require", "--import",
		"--loader", "--experimental-loader", "-C", "--conditions",
		"--input-type", "--title", "--inspect-port", "--debug-port",
		"--env-file", "--stack-trace-limit", "--max-old-space-size", NULL,
	};
	size_t i;

	for (i = 0; opts[i]; i++)
		if (!strcmp(arg, opts[i]))
			return true;
	return false;
}

static int node_inspector_flag(const char *cmdline, size_t len, char *host, size_t host_len,
			       unsigned int *port)
{
	static const char *const flags[] = {
		"--inspect-brk-node", "--inspect-brk", "--inspect-wait", "--inspect-port",
		"--debug-port", "--inspect", NULL,
	};
	size_t off = 0, i;
	const char *a;
	int named = 0;

	if (!set_host(host, host_len, "127.0.0.1", 9))
		return -ENOSPC;
	*port = INSPECTOR_DEFAULT_PORT;
	next_arg(cmdline, len, &off);	/* argv[0] */
	while ((a = next_arg(cmdline, len, &off))) {
		if (!strcmp(a, "--") || a[0] != '-')
			break;	/* the script: what follows is its own */
		for (i = 0; flags[i]; i++) {
			size_t n = strlen(flags[i]);

			if (strncmp(a, flags[i], n) || (a[n] && a[n] != '='))
				continue;
			if (a[n] == '=') {
				if (!parse_addr(a + n + 1, true, host, host_len, port))
					break;
			} else if (!strcmp(flags[i], "--inspect-port") ||
				   !strcmp(flags[i], "--debug-port")) {
				const char *v = next_arg(cmdline, len, &off);

				if (!v || !parse_addr(v, true, host, host_len, port))
					break;
			}
			named = 1;
			break;
		}
		if (!flags[i] && node_option_takes_value(a))
			next_arg(cmdline, len, &off);
	}
	return named;
}

static int workerd_inspector_flag(const char *cmdline, size_t len, char *host, size_t host_len,
				  unsigned int *port)
{
	const char *a, *v;
	size_t off = 0;
	int named = 0;

	host[0] = '\0';
	*port = 0;
	next_arg(cmdline, len, &off);
	while ((a = next_arg(cmdline, len, &off))) {
		if (!strcmp(a, "--"))
			break;
		if (!strncmp(a, "--inspector-addr=", 17))
			v = a + 17;
		else if (!strcmp(a, "--inspector-addr") || !strcmp(a, "-i"))
			v = next_arg(cmdline, len, &off);
		else if (!strncmp(a, "-i", 2) && a[2] && a[1] != '-')
			v = a + 2;
		else
			continue;
		if (!v)
			break;
		/* kj: a missing port is the inspector's default. */
		*port = INSPECTOR_DEFAULT_PORT;
		if (!parse_addr(v, false, host, host_len, port)) {
			host[0] = '\0';
			*port = 0;
			continue;
		}
		named = 1;	/* the last one wins, as with kj's options */
	}
	return named;
}

int inspector_addr__parse_flag(enum discover_runtime rt, const char *cmdline, size_t len,
			       char *host, size_t host_len, unsigned int *port)
{
	char *copy;
	int named = 0;

	if (!host_len)
		return -ENOSPC;
	host[0] = '\0';
	*port = 0;
	/*
	 * The parsers compare whole arguments; a cmdline cut off in its last
	 * argument has no NUL there, so they work on a terminated copy.
	 */
	copy = malloc(len + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, cmdline, len);
	copy[len] = '\0';
	if (rt == DISCOVER_NODE)
		named = node_inspector_flag(copy, len, host, host_len, port);
	else if (rt == DISCOVER_WORKERD)
		named = workerd_inspector_flag(copy, len, host, host_len, port);
	free(copy);
	return named;
}

int inspector_addr__format(const char *host, unsigned int port, char *buf, size_t len)
{
	int n;

	if (strchr(host, ':'))
		n = snprintf(buf, len, "[%s]:%u", host, port);
	else
		n = snprintf(buf, len, "%s:%u", *host ? host : "*", port);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

static bool is_wildcard(const char *host)
{
	return !*host || !strcmp(host, "*") || !strcmp(host, "0.0.0.0") || !strcmp(host, "::");
}

static bool same_addr(const char *a, const char *b)
{
	unsigned char x[16], y[16];

	if (!strcmp(a, b))
		return true;
	/* Different spellings of one IPv6 address. */
	return inet_pton(AF_INET6, a, x) == 1 && inet_pton(AF_INET6, b, y) == 1 &&
	       !memcmp(x, y, sizeof(x));
}

bool inspector_addr__sock_matches(const struct net_tcp_sock *sock, const char *host,
				  unsigned int port)
{
	if (port && sock->port != port)
		return false;
	if (is_wildcard(host) || is_wildcard(sock->addr) || same_addr(host, sock->addr))
		return true;
	if (!strcmp(host, "localhost"))
		return !strncmp(sock->addr, "127.", 4) || !strcmp(sock->addr, "::1");
	if (!strncmp(sock->addr, "::ffff:", 7))
		return !strcmp(sock->addr + 7, host);
	return false;
}

/* ---- one process -------------------------------------------------------- */

/* The process's listening TCP sockets. */
struct listening {
	struct net_tcp_sock *socks;
	size_t nr, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The rows of its network namespace's socket tables that are its own listening sockets. */
static int read_listening(pid_t pid, uint64_t *inodes, size_t nr_inodes, struct listening *out)
{
	static const char *const files[] = { "tcp", "tcp6" };
	struct net_tcp_sock sock;
	char path[64], *line = NULL;
	size_t cap = 0, i;
	int err = 0;
	FILE *f;

	if (!nr_inodes)
		return 0;
	qsort(inodes, nr_inodes, sizeof(*inodes), cmp_u64);
	for (i = 0; !err && i < 2; i++) {
		snprintf(path, sizeof(path), "/proc/%d/net/%s", pid, files[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (!err && getline(&line, &cap, f) > 0) {
			if (inspector_addr__parse_tcp_line(line, i == 1, &sock) ||
			    sock.state != TCP_LISTEN ||
			    !bsearch(&sock.inode, inodes, nr_inodes, sizeof(*inodes), cmp_u64))
				continue;
			err = array_grow(&out->socks, &out->cap, out->nr + 1);
			if (!err)
				out->socks[out->nr++] = sock;
		}
		fclose(f);
	}
	free(line);
	return err;
}

static int set_listening(struct discover_proc *p, const struct listening *l)
{
	char buf[300];
	size_t i;

	if (!l->nr)
		return 0;
	p->listening = calloc(l->nr, sizeof(*p->listening));
	if (!p->listening)
		return -ENOMEM;
	for (i = 0; i < l->nr; i++) {
		if (inspector_addr__format(l->socks[i].addr, l->socks[i].port, buf, sizeof(buf)))
			return -ENOSPC;
		p->listening[p->nr_listening] = strdup(buf);
		if (!p->listening[p->nr_listening])
			return -ENOMEM;
		p->nr_listening++;
	}
	return 0;
}

/* What the command line asks for: 1 named, 0 not (host, port: the default), < 0 unknown. */
static int read_flag(struct discover_proc *p, pid_t pid, char *host, size_t host_len,
		     unsigned int *port)
{
	char path[64], *cmdline;
	ssize_t len;
	int named;

	cmdline = malloc(CMDLINE_MAX);
	if (!cmdline)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	len = procfs__read(path, cmdline, CMDLINE_MAX);
	named = len < 0 ? -ENOENT :
		inspector_addr__parse_flag(p->runtime, cmdline, (size_t)len, host, host_len, port);
	free(cmdline);
	return named;
}

int inspector_addr__probe(struct discover_proc *p, pid_t pid, uint64_t *sock_inodes,
			  size_t nr_socks)
{
	const struct net_tcp_sock *match = NULL;
	struct listening l = { 0 };
	char host[256], buf[300];
	size_t i, nr_match = 0;
	unsigned int port;
	int named, err;

	err = read_listening(pid, sock_inodes, nr_socks, &l);
	if (!err)
		err = set_listening(p, &l);
	if (err)
		goto out;
	named = read_flag(p, pid, host, sizeof(host), &port);
	if (named == -ENOMEM)
		err = named;
	if (named < 0)
		goto out;
	if (named) {
		if (inspector_addr__format(host, port, buf, sizeof(buf)))
			goto out;
		p->inspector_flag = strdup(buf);
		if (!p->inspector_flag) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* node listens on its default address after SIGUSR1 too. */
	if (!named && p->runtime != DISCOVER_NODE)
		goto out;
	for (i = 0; i < l.nr; i++) {
		if (inspector_addr__sock_matches(&l.socks[i], host, port)) {
			if (!match)
				match = &l.socks[i];
			nr_match++;
		}
	}
	/* Port 0 asks the kernel for one: only an unambiguous socket will do. */
	if (!match || (!port && nr_match != 1) ||
	    inspector_addr__format(match->addr, match->port, buf, sizeof(buf)))
		goto out;
	p->inspector = strdup(buf);
	if (!p->inspector)
		err = -ENOMEM;
out:
	free(l.socks);
	return err;
}
