// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* discover: V8 runtime processes on this host; see discover.h. */
#include "user/capture/discover.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "symbolize/elf_symtab.h"
#include "symbolize/proc_maps.h"
#include "symbolize/v8log.h"

/* include/linux/sched.h: the task is a kernel thread. */
#define PF_KTHREAD 0x00200000UL

#define TCP_LISTEN 0x0A
#define INSPECTOR_DEFAULT_PORT 9229
/* A command line longer than this is read only this far. */
#define CMDLINE_MAX (256 * 1024)
#define VERSION_MAX 64

/* One distinct ELF object, analysed once per scan. */
struct object {
	dev_t dev;
	ino_t ino;
	bool v8;
	enum discover_runtime rt;
	char *version;
	char *build_id;
	bool has_tls_sym;
	uint64_t tls_value;
	bool has_pt_tls;
	uint64_t tls_memsz, tls_align, tls_vaddr;
	struct elf_symtab *st;	/* kept for V8 objects: load bias */
};

struct scan {
	struct object **objs;	/* pointers: callers hold them across growth */
	size_t nr_objs, cap_objs;
	struct discover_list *list;
	size_t cap_procs, cap_misses;
	bool mntns_known;
	struct stat self_mntns;
};

/* Everything gathered about one process while inspecting it. */
struct proc_ctx {
	pid_t pid;
	char prefix[32];	/* "" or "/proc/PID/root": makes its paths ours */
	uint64_t *sock_inodes;
	size_t nr_socks, cap_socks;
	struct discover_sock *listen;
	size_t nr_listen, cap_listen;
	char **log_dirs;
	size_t nr_log_dirs;
};

const char *discover__runtime_name(enum discover_runtime rt)
{
	switch (rt) {
	case DISCOVER_NODE:
		return "node";
	case DISCOVER_WORKERD:
		return "workerd";
	default:
		return "v8";
	}
}

/* Grow *arr (of *cap elements of size) to hold at least need. */
static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **p = arr, *n;
	size_t c = *cap ? *cap : 8;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = reallocarray(*p, c, size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

static char *str_concat(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = malloc(la + lb + 1);

	if (!s)
		return NULL;
	memcpy(s, a, la);
	memcpy(s + la, b, lb + 1);
	return s;
}

/* ---- pure helpers ------------------------------------------------------- */

int discover__parse_tcp_line(const char *line, bool v6, struct discover_sock *out)
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

int discover__parse_nspid(const char *status, pid_t *nspid)
{
	const char *p = status, *eol;
	long last = -1, v;
	char *end;

	while (p && *p) {
		if (!strncmp(p, "NSpid:", 6)) {
			p += 6;
			eol = strchr(p, '\n');
			if (!eol)
				eol = p + strlen(p);
			while (p < eol) {
				while (p < eol && (*p == ' ' || *p == '\t'))
					p++;
				if (p == eol)
					break;
				errno = 0;
				v = strtol(p, &end, 10);
				if (end == p || errno || v <= 0 || v > INT_MAX)
					return -EINVAL;
				last = v;
				p = end;
			}
			if (last < 0)
				return -EINVAL;
			*nspid = (pid_t)last;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

int discover__parse_stat(const char *stat, char comm[17], unsigned long *flags)
{
	const char *open = strchr(stat, '('), *close = strrchr(stat, ')'), *p;
	size_t len;
	int field;

	if (!open || !close || close < open)
		return -EINVAL;
	len = (size_t)(close - open - 1);
	if (len > 16)
		len = 16;
	memcpy(comm, open + 1, len);
	comm[len] = '\0';
	/* After ") ": state (3), ppid, pgrp, session, tty_nr, tpgid, flags (9). */
	p = close + 1;
	for (field = 3; field < 9; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -EINVAL;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	*flags = strtoul(p, NULL, 10);
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

int discover__parse_inspector_flag(enum discover_runtime rt, const char *cmdline, size_t len,
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

int discover__format_hostport(const char *host, unsigned int port, char *buf, size_t len)
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

bool discover__sock_matches(const struct discover_sock *sock, const char *host,
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

/* "vMAJOR.MINOR.PATCH[-suffix]" ending at term; its length, or 0. */
static size_t version_len(const char *p, const char *end, char term)
{
	const char *q = p;
	int dots = 0;

	if (q >= end || *q++ != 'v')
		return 0;
	while (q < end && (isdigit((unsigned char)*q) || *q == '.')) {
		if (*q == '.') {
			if (!isdigit((unsigned char)q[-1]))
				return 0;
			dots++;
		}
		q++;
	}
	if (dots != 2 || !isdigit((unsigned char)q[-1]))
		return 0;
	/* "-pre", "-rc.1", "-nightly20240101abcdef" */
	if (q < end && (*q == '-' || *q == '+'))
		while (q < end && (isalnum((unsigned char)*q) || *q == '-' || *q == '+' ||
				   *q == '.'))
			q++;
	if (q >= end || *q != term || (size_t)(q - p) >= VERSION_MAX)
		return 0;
	return (size_t)(q - p);
}

static int find_version(const char *buf, size_t len, const char *needle, char before,
			char term, char *out, size_t out_len)
{
	size_t nlen = strlen(needle), vl;
	const char *p = buf, *end = buf + len;

	while (p < end && (p = memmem(p, (size_t)(end - p), needle, nlen))) {
		const char *v = p + nlen - 1;	/* the needle ends with the 'v' */

		if ((before < 0 || p == buf || p[-1] == before) &&
		    (vl = version_len(v, end, term)) && vl < out_len) {
			memcpy(out, v, vl);
			out[vl] = '\0';
			return 0;
		}
		p++;
	}
	return -ENOENT;
}

int discover__node_version(const char *buf, size_t len, char *out, size_t out_len)
{
	/*
	 * The inspector's /json/version reply names the browser
	 * "node.js/" NODE_VERSION (src/inspector_socket_server.cc), a C string
	 * of its own in every build with the inspector.  Release builds also
	 * carry process.release's URLs ".../release/vX.Y.Z/node-vX.Y.Z...".
	 */
	if (!find_version(buf, len, "node.js/v", '\0', '\0', out, out_len))
		return 0;
	return find_version(buf, len, "/download/release/v", -1, '/', out, out_len);
}

int64_t discover__tp_offset(uint64_t st_value, uint64_t memsz, uint64_t align, uint64_t vaddr)
{
	uint64_t firstbyte, off;

	if (align < 2)
		return (int64_t)(st_value - memsz);
	/* glibc _dl_determine_tlsoffset(), TLS_TCB_AT_TP, for the first module. */
	firstbyte = (0 - (vaddr & (align - 1))) & (align - 1);
	off = (memsz - firstbyte + align - 1) / align * align + firstbyte;
	return (int64_t)(st_value - off);
}

/* ---- objects ------------------------------------------------------------ */

static void object__release(struct object *o)
{
	free(o->version);
	free(o->build_id);
	elf_symtab__free(o->st);
}

/* node's version from the .rodata of the open file fd; NULL when not found. */
static char *node_version_from_fd(int fd)
{
	char version[VERSION_MAX];
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf_Data *data;
	GElf_Shdr sh;
	const char *name;
	bool found = false;
	Elf *elf;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return NULL;
	if (elf_kind(elf) != ELF_K_ELF || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while (!found && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".rodata"))
			continue;
		/* libelf checks that the section lies inside the file. */
		data = elf_getdata(scn, NULL);
		if (data && data->d_buf &&
		    !discover__node_version(data->d_buf, data->d_size, version, sizeof(version)))
			found = true;
	}
out:
	elf_end(elf);
	return found ? strdup(version) : NULL;
}

/* workerd embeds the date `workerd --version` prints as RELEASE_VERSION. */
static char *workerd_version_from(struct elf_symtab *st, int fd)
{
	struct elf_named_sym ns;
	char buf[VERSION_MAX];
	ssize_t n;
	size_t i;

	if (elf_symtab__find_symbol(st, "RELEASE_VERSION_begin", &ns) ||
	    ns.file_offset == UINT64_MAX || !ns.size || ns.file_offset > INT64_MAX)
		return NULL;
	n = pread(fd, buf, ns.size < sizeof(buf) ? ns.size : sizeof(buf) - 1,
		  (off_t)ns.file_offset);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n\r")] = '\0';
	for (i = 0; buf[i]; i++)
		if (!isgraph((unsigned char)buf[i]))
			return NULL;
	return i ? strdup(buf) : NULL;
}

/*
 * Analyse the ELF file open at fd.  0 (o->v8 says whether it is V8), or
 * -ENOMEM.  A file that is not a readable ELF is simply not V8.
 */
static int object__analyse(struct object *o, int fd)
{
	struct elf_named_sym ns;
	struct elf_symtab *st;

	st = elf_symtab__open_fd(fd, NULL);
	if (!st)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (!elf_symtab__find_symbol(st, DISCOVER_TLS_SYMBOL, &ns) && ns.type == STT_TLS) {
		o->has_tls_sym = true;
		o->tls_value = ns.value;
		o->v8 = true;
	} else if (!elf_symtab__find_symbol_prefix(st, "_ZN2v88internal7Isolate", &ns)) {
		/* V8 from before the thread_local current isolate. */
		o->v8 = true;
	}
	if (!o->v8) {
		elf_symtab__free(st);
		return 0;
	}
	o->st = st;
	if (!elf_symtab__find_symbol_prefix(st, "_ZN7workerd", &ns))
		o->rt = DISCOVER_WORKERD;
	else if (!elf_symtab__find_symbol(st, "node_module_register", &ns) ||
		 !elf_symtab__find_symbol_prefix(st, "_ZN4node", &ns))
		o->rt = DISCOVER_NODE;
	else
		o->rt = DISCOVER_V8;
	o->has_pt_tls = !elf_symtab__tls_segment(st, &o->tls_memsz, &o->tls_align,
						 &o->tls_vaddr);
	o->build_id = strdup(elf_symtab__build_id(st));
	if (!o->build_id)
		return -ENOMEM;
	if (o->rt == DISCOVER_NODE)
		o->version = node_version_from_fd(fd);
	else if (o->rt == DISCOVER_WORKERD)
		o->version = workerd_version_from(st, fd);
	if (!o->version)
		o->version = strdup("unknown");
	return o->version ? 0 : -ENOMEM;
}

static struct object *scan__find_object(struct scan *s, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < s->nr_objs; i++)
		if (s->objs[i]->dev == dev && s->objs[i]->ino == ino)
			return s->objs[i];
	return NULL;
}

/* The object for (dev, ino), analysing fd when it is new.  NULL on ENOMEM. */
static struct object *scan__object(struct scan *s, dev_t dev, ino_t ino, int fd)
{
	struct object *o = scan__find_object(s, dev, ino);

	if (o)
		return o;
	if (grow(&s->objs, &s->cap_objs, s->nr_objs + 1, sizeof(*s->objs)))
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->dev = dev;
	o->ino = ino;
	s->list->binaries++;
	if (object__analyse(o, fd)) {
		object__release(o);
		free(o);
		return NULL;
	}
	s->objs[s->nr_objs++] = o;
	return o;
}

/* ---- one process -------------------------------------------------------- */

/* Read a small /proc file into buf (NUL-terminated).  Its length, or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

/* Map errors on a process's /proc files to what they mean for the scan. */
static int proc_err(int err)
{
	if (err == -ENOENT || err == -ESRCH)
		return -ESRCH;
	if (err == -EPERM)
		return -EACCES;
	return err;
}

static int proc__add_socket(struct proc_ctx *c, uint64_t inode)
{
	if (grow(&c->sock_inodes, &c->cap_socks, c->nr_socks + 1, sizeof(*c->sock_inodes)))
		return -ENOMEM;
	c->sock_inodes[c->nr_socks++] = inode;
	return 0;
}

static int add_log(struct discover_proc *p, const char *path, uint64_t isolate, bool open,
		   const struct stat *sb)
{
	struct discover_code_log *l;
	void *n;
	size_t i;

	for (i = 0; i < p->nr_logs; i++)
		if (!strcmp(p->logs[i].path, path))
			return 0;
	n = reallocarray(p->logs, p->nr_logs + 1, sizeof(*p->logs));
	if (!n)
		return -ENOMEM;
	p->logs = n;
	l = &p->logs[p->nr_logs];
	l->path = strdup(path);
	if (!l->path)
		return -ENOMEM;
	l->isolate = isolate;
	l->open = open;
	l->size = sb ? (uint64_t)sb->st_size : 0;
	p->nr_logs++;
	return 0;
}

static int remember_log_dir(struct proc_ctx *c, const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir, **n;
	size_t i;

	if (!slash)
		return 0;
	dir = strndup(path, slash == path ? 1 : (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	for (i = 0; i < c->nr_log_dirs; i++) {
		if (!strcmp(c->log_dirs[i], dir)) {
			free(dir);
			return 0;
		}
	}
	n = reallocarray(c->log_dirs, c->nr_log_dirs + 1, sizeof(*n));
	if (!n) {
		free(dir);
		return -ENOMEM;
	}
	c->log_dirs = n;
	c->log_dirs[c->nr_log_dirs++] = dir;
	return 0;
}

/*
 * Walk /proc/PID/fd: sockets (for the inspector), code logs and the perf
 * map that V8 keeps open.
 */
static int proc__scan_fds(struct proc_ctx *c, struct discover_proc *p)
{
	char dirpath[64], link[PATH_MAX], fdpath[64 + 256 + 2], *path, perf_name[64];
	struct dirent *de;
	struct stat sb;
	uint64_t isolate;
	pid_t log_pid;
	ssize_t n;
	DIR *d;
	int err = 0;

	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fd", c->pid);
	snprintf(perf_name, sizeof(perf_name), "perf-%d.map", p->nspid);
	d = opendir(dirpath);
	if (!d)
		return proc_err(-errno);
	while (!err && (de = readdir(d))) {
		const char *base;

		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (!strncmp(link, "socket:[", 8)) {
			err = proc__add_socket(c, strtoull(link + 8, NULL, 10));
			continue;
		}
		if (link[0] != '/')
			continue;
		base = strrchr(link, '/') + 1;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", dirpath, de->d_name);
		if (!v8log__parse_filename(base, &isolate, &log_pid) &&
		    log_pid == p->nspid) {
			path = str_concat(c->prefix, link);
			if (!path) {
				err = -ENOMEM;
				break;
			}
			err = add_log(p, path, isolate, true, stat(fdpath, &sb) ? NULL : &sb);
			if (!err)
				err = remember_log_dir(c, path);
			free(path);
		} else if (!strcmp(base, perf_name) && !p->perf_map_open) {
			free(p->perf_map);
			p->perf_map = str_concat(c->prefix, link);
			if (!p->perf_map)
				err = -ENOMEM;
			p->perf_map_open = true;
			p->perf_map_exists = true;
		}
	}
	closedir(d);
	return err;
}

/* Logs of this process in the directories of its open logs: isolates V8 closed. */
static int proc__scan_log_dirs(struct proc_ctx *c, struct discover_proc *p)
{
	struct stat sb;
	uint64_t isolate;
	pid_t log_pid;
	char **paths;
	size_t i, j;
	int err = 0;

	for (i = 0; !err && i < c->nr_log_dirs; i++) {
		paths = v8log__find(c->log_dirs[i], p->nspid);
		if (!paths) {
			if (errno == ENOMEM)
				return -ENOMEM;
			continue;
		}
		for (j = 0; !err && paths[j]; j++) {
			if (v8log__parse_filename(paths[j], &isolate, &log_pid) ||
			    stat(paths[j], &sb) || !S_ISREG(sb.st_mode))
				continue;
			err = add_log(p, paths[j], isolate, false, &sb);
		}
		v8log__find_free(paths);
	}
	return err;
}

static int cmp_log(const void *a, const void *b)
{
	const struct discover_code_log *x = a, *y = b;

	return strcmp(x->path, y->path);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The listening TCP sockets among the process's sockets. */
static int proc__read_listening(struct proc_ctx *c)
{
	static const char *const files[] = { "tcp", "tcp6" };
	struct discover_sock sock;
	char path[64], *line = NULL;
	size_t cap = 0, i;
	int err = 0;
	FILE *f;

	if (!c->nr_socks)
		return 0;
	qsort(c->sock_inodes, c->nr_socks, sizeof(*c->sock_inodes), cmp_u64);
	for (i = 0; !err && i < 2; i++) {
		/* The process's network namespace, whichever it is. */
		snprintf(path, sizeof(path), "/proc/%d/net/%s", c->pid, files[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (!err && getline(&line, &cap, f) > 0) {
			if (discover__parse_tcp_line(line, i == 1, &sock) ||
			    sock.state != TCP_LISTEN ||
			    !bsearch(&sock.inode, c->sock_inodes, c->nr_socks,
				     sizeof(*c->sock_inodes), cmp_u64))
				continue;
			err = grow(&c->listen, &c->cap_listen, c->nr_listen + 1,
				   sizeof(*c->listen));
			if (!err)
				c->listen[c->nr_listen++] = sock;
		}
		fclose(f);
	}
	free(line);
	return err;
}

static int proc__inspector(struct proc_ctx *c, struct discover_proc *p)
{
	char *cmdline, host[256], buf[300];
	const struct discover_sock *match = NULL;
	unsigned int port;
	size_t i, nr_match = 0;
	ssize_t len;
	int named, err;

	for (i = 0; i < c->nr_listen; i++) {
		err = discover__format_hostport(c->listen[i].addr, c->listen[i].port, buf,
						sizeof(buf));
		if (err)
			return err;
		p->listening[p->nr_listening] = strdup(buf);
		if (!p->listening[p->nr_listening])
			return -ENOMEM;
		p->nr_listening++;
	}

	cmdline = malloc(CMDLINE_MAX);
	if (!cmdline)
		return -ENOMEM;
	snprintf(buf, sizeof(buf), "/proc/%d/cmdline", c->pid);
	len = read_small(buf, cmdline, CMDLINE_MAX);
	if (len < 0) {
		free(cmdline);
		return 0;
	}
	named = discover__parse_inspector_flag(p->runtime, cmdline, (size_t)len, host,
					       sizeof(host), &port);
	free(cmdline);
	if (named < 0)
		return 0;
	if (named) {
		if (discover__format_hostport(host, port, buf, sizeof(buf)))
			return 0;
		p->inspector_flag = strdup(buf);
		if (!p->inspector_flag)
			return -ENOMEM;
	}
	/* node listens on its default address after SIGUSR1 too. */
	if (!named && p->runtime != DISCOVER_NODE)
		return 0;
	for (i = 0; i < c->nr_listen; i++) {
		if (discover__sock_matches(&c->listen[i], host, port)) {
			if (!match)
				match = &c->listen[i];
			nr_match++;
		}
	}
	/* Port 0 asks the kernel for one: only an unambiguous socket will do. */
	if (!match || (!port && nr_match != 1))
		return 0;
	if (discover__format_hostport(match->addr, match->port, buf, sizeof(buf)))
		return 0;
	p->inspector = strdup(buf);
	return p->inspector ? 0 : -ENOMEM;
}

static void proc__set_prefix(struct scan *s, struct proc_ctx *c)
{
	char path[64];
	struct stat sb;

	c->prefix[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", c->pid);
	if (!s->mntns_known || stat(path, &sb))
		return;
	if (sb.st_ino != s->self_mntns.st_ino || sb.st_dev != s->self_mntns.st_dev)
		snprintf(c->prefix, sizeof(c->prefix), "/proc/%d/root", c->pid);
}

static void proc__load_bias(struct discover_proc *p, const struct object *o,
			    const struct proc_maps *maps)
{
	const struct proc_map *m;
	uint64_t vaddr;
	size_t i;

	for (i = 0; maps && (m = proc_maps__entry(maps, i)); i++) {
		if (m->inode != (uint64_t)o->ino ||
		    (makedev(m->dev_major, m->dev_minor) != o->dev &&
		     strcmp(m->path, p->tls.object)))
			continue;
		if (!elf_symtab__offset_to_vaddr(o->st, m->offset, &vaddr)) {
			p->tls.load_bias = m->start - vaddr;
			p->tls.load_bias_known = true;
			return;
		}
	}
}

static void proc__release(struct discover_proc *p)
{
	size_t i;

	free(p->exe);
	free(p->version);
	free(p->build_id);
	free(p->tls.object);
	free(p->perf_map);
	for (i = 0; i < p->nr_logs; i++)
		free(p->logs[i].path);
	free(p->logs);
	for (i = 0; i < p->nr_listening; i++)
		free(p->listening[i]);
	free(p->listening);
	free(p->inspector);
	free(p->inspector_flag);
}

static void proc_ctx__release(struct proc_ctx *c)
{
	size_t i;

	free(c->sock_inodes);
	free(c->listen);
	for (i = 0; i < c->nr_log_dirs; i++)
		free(c->log_dirs[i]);
	free(c->log_dirs);
}

/*
 * An object mapped by the process that holds V8 (libnode.so), or NULL;
 * *path is its path as the process sees it.  Maps whose path is not a
 * file (anonymous, [vdso]) and objects seen before are skipped quickly.
 */
static int find_v8_library(struct scan *s, pid_t pid, const struct proc_maps *maps,
			   const struct object *exe, struct object **out, char **path)
{
	const struct proc_map *m;
	char file[PATH_MAX + 64];
	struct object *o;
	struct stat sb;
	size_t i;
	int fd, n;

	*out = NULL;
	for (i = 0; (m = proc_maps__entry(maps, i)); i++) {
		dev_t dev = makedev(m->dev_major, m->dev_minor);

		if (m->offset || !m->inode || m->path[0] != '/' ||
		    (m->inode == (uint64_t)exe->ino))
			continue;
		o = scan__find_object(s, dev, (ino_t)m->inode);
		if (!o) {
			/* map_files reaches the object in any mount namespace, even deleted. */
			snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
			fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0) {
				n = snprintf(file, sizeof(file), "/proc/%d/root%s", pid, m->path);
				if (n < 0 || (size_t)n >= sizeof(file))
					continue;
				fd = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			}
			if (fd < 0)
				continue;
			if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
				close(fd);
				continue;
			}
			o = scan__object(s, dev, (ino_t)m->inode, fd);
			close(fd);
			if (!o)
				return -ENOMEM;
		}
		if (o->v8) {
			*out = o;
			*path = strdup(m->path);
			return *path ? 0 : -ENOMEM;
		}
	}
	return 0;
}

/* 1 when pid is a V8 runtime (added to the list), 0 when not, or -errno. */
static int scan__pid(struct scan *s, pid_t pid)
{
	char path[64], buf[4096], comm[17], link[PATH_MAX];
	struct proc_maps *maps = NULL;
	struct object *exe_obj, *o;
	struct discover_proc *p;
	struct proc_ctx c = { .pid = pid };
	unsigned long flags;
	char *lib_path = NULL;
	struct stat sb;
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return proc_err((int)n);
	if (discover__parse_stat(buf, comm, &flags))
		return -ESRCH;
	if (flags & PF_KTHREAD)
		return -EINVAL;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return proc_err(-errno);
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode)) {
		close(fd);
		return 0;
	}
	exe_obj = scan__object(s, sb.st_dev, sb.st_ino, fd);
	close(fd);
	if (!exe_obj)
		return -ENOMEM;
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return proc_err(-errno);
	link[n] = '\0';

	o = exe_obj;
	if (!exe_obj->v8) {
		maps = proc_maps__read(NULL, pid);
		if (!maps)
			return proc_err(-errno);
		err = find_v8_library(s, pid, maps, exe_obj, &o, &lib_path);
		if (err || !o) {
			proc_maps__free(maps);
			return err;
		}
	}

	err = grow(&s->list->procs, &s->cap_procs, s->list->nr + 1, sizeof(*s->list->procs));
	if (err)
		goto out;
	p = &s->list->procs[s->list->nr];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->nspid = pid;
	memcpy(p->comm, comm, sizeof(p->comm));
	p->runtime = o->rt;
	p->exe = strdup(link);
	p->version = strdup(o->version);
	p->build_id = strdup(o->build_id);
	p->tls.object = lib_path ? lib_path : strdup(link);
	lib_path = NULL;
	err = -ENOMEM;
	if (!p->exe || !p->version || !p->build_id || !p->tls.object)
		goto drop;

	p->tls.found = o->has_tls_sym;
	p->tls.in_executable = o == exe_obj;
	p->tls.st_value = o->tls_value;
	p->tls.tls_memsz = o->tls_memsz;
	p->tls.tls_align = o->tls_align;
	if (!o->has_tls_sym)
		p->tls.why_unsupported = "no " DISCOVER_TLS_SYMBOL
					 " (an older V8 keeps the isolate in a pthread key)";
	else if (o != exe_obj)
		p->tls.why_unsupported = "the current isolate is in a shared library's TLS: "
					 "not supported yet";
	else if (!o->has_pt_tls)
		p->tls.why_unsupported = "the executable has no PT_TLS segment";
	else
		p->tls.supported = true;
	if (p->tls.supported)
		p->tls.tp_offset = discover__tp_offset(o->tls_value, o->tls_memsz, o->tls_align,
						       o->tls_vaddr);
	if (!maps)
		maps = proc_maps__read(NULL, pid);
	proc__load_bias(p, o, maps);

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) > 0)
		discover__parse_nspid(buf, &p->nspid);
	proc__set_prefix(s, &c);

	err = proc__scan_fds(&c, p);
	if (!err)
		err = proc__scan_log_dirs(&c, p);
	if (err)
		goto drop;
	if (p->nr_logs)
		qsort(p->logs, p->nr_logs, sizeof(*p->logs), cmp_log);
	if (!p->perf_map) {
		/* Where V8 would write it: its /tmp, named with its own pid. */
		snprintf(buf, sizeof(buf), "%s/tmp/perf-%d.map", c.prefix, p->nspid);
		p->perf_map = strdup(buf);
		err = -ENOMEM;
		if (!p->perf_map)
			goto drop;
		p->perf_map_exists = !stat(buf, &sb) && S_ISREG(sb.st_mode);
	}

	err = proc__read_listening(&c);
	if (!err && c.nr_listen) {
		p->listening = calloc(c.nr_listen, sizeof(*p->listening));
		if (!p->listening)
			err = -ENOMEM;
	}
	if (!err)
		err = proc__inspector(&c, p);
	if (err)
		goto drop;
	s->list->nr++;
	err = 1;
	goto out;
drop:
	proc__release(p);
out:
	free(lib_path);
	proc_ctx__release(&c);
	proc_maps__free(maps);
	return err;
}

static int scan__miss(struct scan *s, pid_t pid, int err)
{
	struct discover_list *l = s->list;

	if (grow(&l->misses, &s->cap_misses, l->nr_misses + 1, sizeof(*l->misses)))
		return -ENOMEM;
	l->misses[l->nr_misses].pid = pid;
	l->misses[l->nr_misses].err = err;
	l->nr_misses++;
	return 0;
}

/* Count what the scan of one pid came to; -ENOMEM ends the scan. */
static int scan__account(struct scan *s, pid_t pid, int ret, bool asked)
{
	s->list->scanned++;
	if (ret == -ENOMEM)
		return ret;
	if (ret == -ESRCH)
		s->list->skipped_exited++;
	else if (ret < 0 && ret != -EINVAL)
		s->list->skipped_denied++;
	if (asked && ret <= 0)
		return scan__miss(s, pid, ret ? ret : -ENOEXEC);
	return 0;
}

static int cmp_proc(const void *a, const void *b)
{
	const struct discover_proc *x = a, *y = b;

	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int discover__scan(const pid_t *pids, size_t nr_pids, struct discover_list **out)
{
	struct scan s = { 0 };
	struct dirent *de;
	pid_t self = getpid();
	size_t i;
	DIR *d = NULL;
	int err = 0;

	*out = NULL;
	s.list = calloc(1, sizeof(*s.list));
	if (!s.list)
		return -ENOMEM;
	s.mntns_known = !stat("/proc/self/ns/mnt", &s.self_mntns);

	if (pids) {
		for (i = 0; !err && i < nr_pids; i++)
			err = scan__account(&s, pids[i], scan__pid(&s, pids[i]), true);
	} else {
		d = opendir("/proc");
		if (!d) {
			err = -errno;
			goto out;
		}
		while (!err && (de = readdir(d))) {
			char *end;
			long pid = strtol(de->d_name, &end, 10);

			if (*end || pid <= 0 || pid > INT_MAX || pid == self)
				continue;
			err = scan__account(&s, (pid_t)pid, scan__pid(&s, (pid_t)pid), false);
		}
		closedir(d);
	}
	if (s.list->nr)
		qsort(s.list->procs, s.list->nr, sizeof(*s.list->procs), cmp_proc);
out:
	for (i = 0; i < s.nr_objs; i++) {
		object__release(s.objs[i]);
		free(s.objs[i]);
	}
	free(s.objs);
	if (err) {
		discover__free(s.list);
		return err;
	}
	*out = s.list;
	return 0;
}

void discover__free(struct discover_list *list)
{
	size_t i;

	if (!list)
		return;
	for (i = 0; i < list->nr; i++)
		proc__release(&list->procs[i]);
	free(list->procs);
	free(list->misses);
	free(list);
}
