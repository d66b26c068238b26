// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* discover: V8 runtime processes on this host; see discover.h. */
#include "user/capture/discover.h"

#include <ctype.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/procfs.h"
#include "lib/safe_open.h"
#include "symbolize/elf_symtab.h"
#include "symbolize/proc_maps.h"
#include "symbolize/v8log.h"
#include "user/capture/inspector_addr.h"

/* include/linux/sched.h: the task is a kernel thread. */
#define PF_KTHREAD 0x00200000UL

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
	struct index_table by_file;	/* objs by (dev, inode) */
	struct discover_list *list;
	size_t cap_procs, cap_misses;
	bool mntns_known;
	struct stat self_mntns;
};

/* Everything gathered about one process while inspecting it. */
struct proc_ctx {
	pid_t pid;
	char comm[PROCFS_COMM_LEN + 1];
	char exe[PATH_MAX];		/* /proc/PID/exe's target */
	struct object *exe_obj;
	struct object *v8_obj;		/* the object holding V8: exe_obj or a library */
	char *v8_path;			/* a library's path as the process sees it */
	struct proc_maps *maps;		/* read when needed; may stay NULL */
	char prefix[32];		/* "" or "/proc/PID/root": makes its paths ours */
	unsigned int parts;		/* enum discover_part being looked for */
	uint64_t *sock_inodes;
	size_t nr_socks, cap_socks;
	/* the discover_proc's logs and log_dirs: capacity, and by path */
	size_t cap_logs, cap_log_dirs;
	struct index_table log_index, dir_index;
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

/* ---- pure helpers ------------------------------------------------------- */

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

/* workerd embeds the date `workerd --version` prints as RELEASE_VERSION (at ns). */
static char *workerd_version_from(const struct elf_named_sym *ns, int fd)
{
	char buf[VERSION_MAX];
	ssize_t n;
	size_t i;

	if (ns->file_offset == UINT64_MAX || !ns->size || ns->file_offset > INT64_MAX)
		return NULL;
	n = pread(fd, buf, ns->size < sizeof(buf) ? ns->size : sizeof(buf) - 1,
		  (off_t)ns->file_offset);
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
	/*
	 * One pass over the symbol table, that reads as few names as it
	 * can: workerd's code wins over node's, a TLS symbol or an object
	 * is only looked for among those.
	 */
	enum { Q_TLS, Q_WORKERD, Q_NODE, Q_NODE_REGISTER, Q_RELEASE, Q_NR };
	struct elf_symbol_query q[Q_NR] = {
		[Q_TLS] = { .name = DISCOVER_TLS_SYMBOL, .types = 1u << STT_TLS },
		[Q_WORKERD] = { .name = "_ZN7workerd", .prefix = true },
		[Q_NODE] = { .name = "_ZN4node", .prefix = true, .unless = 1 + Q_WORKERD },
		[Q_NODE_REGISTER] = { .name = "node_module_register", .types = 1u << STT_FUNC,
				      .unless = 1 + Q_WORKERD },
		[Q_RELEASE] = { .name = "RELEASE_VERSION_begin",
				.types = 1u << STT_OBJECT | 1u << STT_NOTYPE },
	};
	/* V8 from before the thread_local current isolate */
	struct elf_symbol_query old_v8 = { .name = "_ZN2v88internal7Isolate", .prefix = true };
	struct elf_symtab *st;

	st = elf_symtab__open_fd(fd, NULL);
	if (!st)
		return errno == ENOMEM ? -ENOMEM : 0;
	if (elf_symtab__find_symbols(st, q, Q_NR)) {
		elf_symtab__free(st);
		return 0;
	}
	if (!q[Q_TLS].err) {
		o->has_tls_sym = true;
		o->tls_value = q[Q_TLS].sym.value;
		o->v8 = true;
	} else if (!elf_symtab__find_symbols(st, &old_v8, 1) && !old_v8.err) {
		o->v8 = true;
	}
	if (!o->v8) {
		elf_symtab__free(st);
		return 0;
	}
	o->st = st;
	if (!q[Q_WORKERD].err)
		o->rt = DISCOVER_WORKERD;
	else if (!q[Q_NODE_REGISTER].err || !q[Q_NODE].err)
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
	else if (o->rt == DISCOVER_WORKERD && !q[Q_RELEASE].err)
		o->version = workerd_version_from(&q[Q_RELEASE].sym, fd);
	if (!o->version)
		o->version = strdup("unknown");
	return o->version ? 0 : -ENOMEM;
}

static uint32_t file_hash(dev_t dev, ino_t ino)
{
	return hash__fold32(hash__word(hash__word(HASH_SEED, (uint64_t)dev), (uint64_t)ino));
}

struct file_key {
	dev_t dev;
	ino_t ino;
};

static bool object_is(const void *ctx, uint32_t index, const void *key)
{
	const struct scan *s = ctx;
	const struct file_key *k = key;

	return s->objs[index]->dev == k->dev && s->objs[index]->ino == k->ino;
}

static struct object *scan__find_object(struct scan *s, dev_t dev, ino_t ino)
{
	struct file_key k = { dev, ino };
	long i = index_table__lookup(&s->by_file, file_hash(dev, ino), object_is, s, &k, NULL);

	return i < 0 ? NULL : s->objs[i];
}

/* The object for (dev, ino), analysing fd when it is new.  NULL on ENOMEM. */
static struct object *scan__object(struct scan *s, dev_t dev, ino_t ino, int fd)
{
	struct file_key k = { dev, ino };
	uint32_t h = file_hash(dev, ino);
	struct object *o;
	size_t slot;
	long i;

	if (index_table__reserve(&s->by_file) ||
	    array_grow(&s->objs, &s->cap_objs, s->nr_objs + 1))
		return NULL;
	i = index_table__lookup(&s->by_file, h, object_is, s, &k, &slot);
	if (i >= 0)
		return s->objs[i];
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
	index_table__set(&s->by_file, slot, h, (uint32_t)s->nr_objs);
	s->objs[s->nr_objs++] = o;
	return o;
}

void discover_proc__file_opts(const struct discover_proc *p, struct safe_open_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->owner = SAFE_OPEN_OWNER_TARGET;
	o->uid = p->uid_known ? p->uid : (uid_t)-1;
}

/* ---- one process: its files --------------------------------------------- */

/* Map errors on a process's /proc files to what they mean for the scan. */
static int proc_err(int err)
{
	if (err == -ENOENT || err == -ESRCH)
		return -ESRCH;
	if (err == -EPERM)
		return -EACCES;
	return err;
}

/* A path the process names, as we can open it. */
static char *proc__path(const struct proc_ctx *c, const char *path)
{
	char *s;

	return asprintf(&s, "%s%s", c->prefix, path) < 0 ? NULL : s;
}

static int proc__add_socket(struct proc_ctx *c, uint64_t inode)
{
	if (array_grow(&c->sock_inodes, &c->cap_socks, c->nr_socks + 1))
		return -ENOMEM;
	c->sock_inodes[c->nr_socks++] = inode;
	return 0;
}

static uint32_t path_hash(const char *path)
{
	return hash__fold32(hash__str(HASH_SEED, path));
}

static bool log_is(const void *ctx, uint32_t index, const void *key)
{
	const struct discover_proc *p = ctx;

	return !strcmp(p->logs[index].path, key);
}

static bool dir_is(const void *ctx, uint32_t index, const void *key)
{
	const struct discover_proc *p = ctx;

	return !strcmp(p->log_dirs[index], key);
}

/* Is path one of p's logs already?  *slot: where it goes when not. */
static bool proc__has_log(struct proc_ctx *c, const struct discover_proc *p, const char *path,
			  size_t *slot)
{
	return index_table__lookup(&c->log_index, path_hash(path), log_is, p, path, slot) >= 0;
}

/*
 * A code log, once: a process holds a thousand of them open on a host of
 * a thousand isolates, and its directory lists them all again.
 */
static int proc__add_log(struct proc_ctx *c, struct discover_proc *p, const char *path,
			 uint64_t isolate, bool open, const struct stat *sb)
{
	struct discover_code_log *l;
	size_t slot;

	if (index_table__reserve(&c->log_index) ||
	    array_grow(&p->logs, &c->cap_logs, p->nr_logs + 1))
		return -ENOMEM;
	if (proc__has_log(c, p, path, &slot))
		return 0;
	l = &p->logs[p->nr_logs];
	l->path = strdup(path);
	if (!l->path)
		return -ENOMEM;
	l->isolate = isolate;
	l->open = open;
	l->size = sb ? (uint64_t)sb->st_size : 0;
	index_table__set(&c->log_index, slot, path_hash(path), (uint32_t)p->nr_logs);
	p->nr_logs++;
	return 0;
}

/* The directory of a code log at path (as we open it), once. */
static int proc__remember_log_dir(struct proc_ctx *c, struct discover_proc *p, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX + 32];
	size_t len, slot;
	uint32_t h;

	if (!slash)
		return 0;
	len = slash == path ? 1 : (size_t)(slash - path);
	if (len >= sizeof(dir))
		return 0;
	memcpy(dir, path, len);
	dir[len] = '\0';
	h = path_hash(dir);
	if (index_table__reserve(&c->dir_index) ||
	    array_grow(&p->log_dirs, &c->cap_log_dirs, p->nr_log_dirs + 1))
		return -ENOMEM;
	if (index_table__lookup(&c->dir_index, h, dir_is, p, dir, &slot) >= 0)
		return 0;
	p->log_dirs[p->nr_log_dirs] = strdup(dir);
	if (!p->log_dirs[p->nr_log_dirs])
		return -ENOMEM;
	index_table__set(&c->dir_index, slot, h, (uint32_t)p->nr_log_dirs);
	p->nr_log_dirs++;
	return 0;
}

/* One open file of the process: a socket, a code log of its own, or its perf map. */
static int proc__note_fd(struct proc_ctx *c, struct discover_proc *p, const char *fdpath,
			 const char *link, const char *perf_name)
{
	char path[PATH_MAX + 32];
	const char *base;
	struct stat sb;
	uint64_t isolate;
	pid_t log_pid;
	int err;

	if (!strncmp(link, "socket:[", 8))
		return c->parts & DISCOVER_SOCKETS ?
		       proc__add_socket(c, strtoull(link + 8, NULL, 10)) : 0;
	if (link[0] != '/')
		return 0;
	base = strrchr(link, '/') + 1;
	if (!v8log__parse_filename(base, &isolate, &log_pid) && log_pid == p->nspid) {
		if (snprintf(path, sizeof(path), "%s%s", c->prefix, link) >= (int)sizeof(path))
			return 0;
		/* its size only for a listing: a capture reads the logs it sampled, later */
		err = c->parts & DISCOVER_FILES ?
		      proc__add_log(c, p, path, isolate, true, stat(fdpath, &sb) ? NULL : &sb) : 0;
		return err ? err : proc__remember_log_dir(c, p, path);
	}
	if (!(c->parts & DISCOVER_FILES))
		return 0;
	if (!strcmp(base, perf_name) && !p->perf_map_open) {
		free(p->perf_map);
		p->perf_map = proc__path(c, link);
		p->perf_map_open = true;
		p->perf_map_exists = true;
		return p->perf_map ? 0 : -ENOMEM;
	}
	return 0;
}

/*
 * Walk /proc/PID/fd: sockets (for the inspector), code logs and the perf
 * map that V8 keeps open.
 */
static int proc__scan_fds(struct proc_ctx *c, struct discover_proc *p)
{
	char dirpath[64], link[PATH_MAX], fdpath[64 + 256 + 2], perf_name[64];
	struct dirent *de;
	ssize_t n;
	DIR *d;
	int err = 0;

	snprintf(dirpath, sizeof(dirpath), "/proc/%d/fd", c->pid);
	snprintf(perf_name, sizeof(perf_name), "perf-%d.map", p->nspid);
	d = opendir(dirpath);
	if (!d)
		return proc_err(-errno);
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		snprintf(fdpath, sizeof(fdpath), "%s/%s", dirpath, de->d_name);
		err = proc__note_fd(c, p, fdpath, link, perf_name);
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

	struct safe_open_opts o;

	/* A shared log directory: only the process's own files are its logs. */
	discover_proc__file_opts(p, &o);
	for (i = 0; !err && i < p->nr_log_dirs; i++) {
		paths = v8log__find(p->log_dirs[i], p->nspid, &o);
		if (!paths) {
			if (errno == ENOMEM)
				return -ENOMEM;
			continue;
		}
		for (j = 0; !err && paths[j]; j++) {
			/* most are open, known with their size already */
			if (v8log__parse_filename(paths[j], &isolate, &log_pid) ||
			    proc__has_log(c, p, paths[j], NULL) || lstat(paths[j], &sb) ||
			    !S_ISREG(sb.st_mode))
				continue;
			err = proc__add_log(c, p, paths[j], isolate, false, &sb);
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

/* Code logs and the perf map, open or where V8 writes them (after proc__scan_fds()). */
static int proc__find_files(struct proc_ctx *c, struct discover_proc *p)
{
	struct safe_open_opts o;
	char buf[PATH_MAX];
	int err, fd;

	err = proc__scan_log_dirs(c, p);
	if (err)
		return err;
	if (p->nr_logs)
		qsort(p->logs, p->nr_logs, sizeof(*p->logs), cmp_log);
	if (p->perf_map)
		return 0;
	/* Where V8 would write it: its /tmp, named with its own pid. */
	snprintf(buf, sizeof(buf), "%s/tmp/perf-%d.map", c->prefix, p->nspid);
	p->perf_map = strdup(buf);
	if (!p->perf_map)
		return -ENOMEM;
	/* Exists as the symbolizer will read it: its own regular file. */
	discover_proc__file_opts(p, &o);
	fd = safe_open__file(buf, &o, NULL);
	p->perf_map_exists = fd >= 0;
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- one process: what it is -------------------------------------------- */

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

/* comm, and whether it is a kernel thread (-EINVAL). */
static int proc__read_stat(struct proc_ctx *c)
{
	char path[64], buf[4096];
	unsigned long flags;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", c->pid);
	n = procfs__read(path, buf, sizeof(buf));
	if (n < 0)
		return proc_err((int)n);
	if (procfs__parse_stat(buf, c->comm, NULL, &flags))
		return -ESRCH;
	return flags & PF_KTHREAD ? -EINVAL : 0;
}

/* Its executable, analysed: 1, 0 when it is not a regular file, or -errno. */
static int scan__exe(struct scan *s, struct proc_ctx *c)
{
	static const struct safe_open_opts exe_opts = {
		.proc_link = true,
		.max_bytes = SAFE_OPEN_ELF_MAX,
	};
	struct safe_open_info info;
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/exe", c->pid);
	fd = safe_open__file(path, &exe_opts, &info);
	if (fd == -EINVAL || fd == -EFBIG)
		return 0;
	if (fd < 0)
		return proc_err(fd);
	c->exe_obj = scan__object(s, info.st.st_dev, info.st.st_ino, fd);
	close(fd);
	if (!c->exe_obj)
		return -ENOMEM;
	n = readlink(path, c->exe, sizeof(c->exe) - 1);
	if (n <= 0)
		return proc_err(-errno);
	c->exe[n] = '\0';
	return 1;
}

/*
 * An object mapped by the process that holds V8 (libnode.so) into
 * c->v8_obj and c->v8_path, or nothing.  Maps whose path is not a file
 * (anonymous, [vdso]) and objects seen before are skipped quickly.
 */
static int scan__v8_library(struct scan *s, struct proc_ctx *c)
{
	const struct proc_map *m;
	char file[PATH_MAX + 64];
	struct object *o;
	size_t i;
	int fd, n;

	for (i = 0; (m = proc_maps__entry(c->maps, i)); i++) {
		dev_t dev = makedev(m->dev_major, m->dev_minor);

		if (m->offset || !m->inode || m->path[0] != '/' ||
		    (m->inode == (uint64_t)c->exe_obj->ino))
			continue;
		o = scan__find_object(s, dev, (ino_t)m->inode);
		if (!o) {
			struct safe_open_opts so = {
				.proc_link = true,
				.max_bytes = SAFE_OPEN_ELF_MAX,
			};

			/*
			 * map_files reaches the object in any mount namespace, even
			 * deleted; else the path inside the process's root, and only
			 * when it is the mapped file (symbolizer.c says why not the
			 * device for map_files).
			 */
			snprintf(file, sizeof(file), "/proc/%d/map_files/%llx-%llx", c->pid,
				 (unsigned long long)m->start, (unsigned long long)m->end);
			fd = safe_open__file(file, &so, NULL);
			if (fd < 0) {
				n = snprintf(file, sizeof(file), "/proc/%d/root%s", c->pid,
					     m->path);
				if (n < 0 || (size_t)n >= sizeof(file))
					continue;
				so.proc_link = false;
				so.match_file = true;
				so.dev = dev;
				so.ino = m->inode;
				fd = safe_open__file(file, &so, NULL);
			}
			if (fd < 0)
				continue;
			o = scan__object(s, dev, (ino_t)m->inode, fd);
			close(fd);
			if (!o)
				return -ENOMEM;
		}
		if (o->v8) {
			c->v8_obj = o;
			c->v8_path = strdup(m->path);
			return c->v8_path ? 0 : -ENOMEM;
		}
	}
	return 0;
}

/* The object holding V8 into c->v8_obj (NULL: not a V8 runtime).  0 or -errno. */
static int scan__v8_object(struct scan *s, struct proc_ctx *c)
{
	int err = scan__exe(s, c);

	if (err <= 0)
		return err;
	if (c->exe_obj->v8) {
		c->v8_obj = c->exe_obj;
		return 0;
	}
	c->maps = proc_maps__read(NULL, c->pid);
	if (!c->maps)
		return proc_err(-errno);
	return scan__v8_library(s, c);
}

static int proc__init(struct discover_proc *p, struct proc_ctx *c)
{
	const struct object *o = c->v8_obj;

	memset(p, 0, sizeof(*p));
	p->pid = c->pid;
	p->nspid = c->pid;
	memcpy(p->comm, c->comm, sizeof(p->comm));
	p->runtime = o->rt;
	p->exe = strdup(c->exe);
	p->version = strdup(o->version);
	p->build_id = strdup(o->build_id);
	p->tls.object = c->v8_path ? c->v8_path : strdup(c->exe);
	c->v8_path = NULL;
	return p->exe && p->version && p->build_id && p->tls.object ? 0 : -ENOMEM;
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

/* Where the current isolate is, and why BPF cannot read it when it cannot. */
static void proc__set_tls(struct discover_proc *p, struct proc_ctx *c)
{
	const struct object *o = c->v8_obj;

	p->tls.found = o->has_tls_sym;
	p->tls.in_executable = o == c->exe_obj;
	p->tls.st_value = o->tls_value;
	p->tls.tls_memsz = o->tls_memsz;
	p->tls.tls_align = o->tls_align;
	if (!o->has_tls_sym)
		p->tls.why_unsupported = "no " DISCOVER_TLS_SYMBOL
					 " (an older V8 keeps the isolate in a pthread key)";
	else if (o != c->exe_obj)
		p->tls.why_unsupported = "the current isolate is in a shared library's TLS: "
					 "not supported yet";
	else if (!o->has_pt_tls)
		p->tls.why_unsupported = "the executable has no PT_TLS segment";
	else
		p->tls.supported = true;
	if (p->tls.supported)
		p->tls.tp_offset = discover__tp_offset(o->tls_value, o->tls_memsz, o->tls_align,
						       o->tls_vaddr);
	/* for a listing: BPF needs only tp_offset, and a process's maps take long to read */
	if (!(c->parts & DISCOVER_LOAD_BIAS))
		return;
	if (!c->maps)
		c->maps = proc_maps__read(NULL, c->pid);
	proc__load_bias(p, o, c->maps);
}

static void proc__read_nspid(struct discover_proc *p)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	if (procfs__read(path, buf, sizeof(buf)) > 0)
		procfs__parse_nspid(buf, &p->nspid);
	p->uid_known = !safe_open__target_uid(NULL, p->pid, &p->uid);
}

/* The parts c->parts asks for, from the process's open files on.  0 or -errno. */
static int proc__find_parts(struct proc_ctx *c, struct discover_proc *p)
{
	int err = 0;

	if (c->parts & (DISCOVER_LOG_DIRS | DISCOVER_FILES | DISCOVER_SOCKETS))
		err = proc__scan_fds(c, p);
	if (!err && (c->parts & DISCOVER_FILES))
		err = proc__find_files(c, p);
	if (!err && (c->parts & DISCOVER_SOCKETS))
		err = inspector_addr__probe(p, c->pid, c->sock_inodes, c->nr_socks);
	if (!err)
		p->parts |= c->parts;
	return err;
}

/* FILES finds the log directories on the way. */
static unsigned int parts_normalize(unsigned int parts)
{
	parts &= DISCOVER_ALL;
	return parts & DISCOVER_FILES ? parts | DISCOVER_LOG_DIRS : parts;
}

/* Everything discover_proc says about a V8 runtime.  0 or -errno. */
static int proc__describe(struct scan *s, struct proc_ctx *c, struct discover_proc *p)
{
	int err = proc__init(p, c);

	if (err)
		return err;
	proc__set_tls(p, c);
	proc__read_nspid(p);
	proc__set_prefix(s, c);
	return proc__find_parts(c, p);
}

/* Empty what parts of p hold (p->parts keeps the others). */
static void proc__drop_parts(struct discover_proc *p, unsigned int parts)
{
	size_t i;

	/* the logs and their directories go together */
	if (parts & (DISCOVER_FILES | DISCOVER_LOG_DIRS)) {
		free(p->perf_map);
		p->perf_map = NULL;
		p->perf_map_exists = p->perf_map_open = false;
		for (i = 0; i < p->nr_logs; i++)
			free(p->logs[i].path);
		free(p->logs);
		p->logs = NULL;
		p->nr_logs = 0;
		for (i = 0; i < p->nr_log_dirs; i++)
			free(p->log_dirs[i]);
		free(p->log_dirs);
		p->log_dirs = NULL;
		p->nr_log_dirs = 0;
		parts |= DISCOVER_FILES | DISCOVER_LOG_DIRS;
	}
	if (parts & DISCOVER_SOCKETS) {
		for (i = 0; i < p->nr_listening; i++)
			free(p->listening[i]);
		free(p->listening);
		p->listening = NULL;
		p->nr_listening = 0;
		free(p->inspector);
		free(p->inspector_flag);
		p->inspector = p->inspector_flag = NULL;
	}
	p->parts &= ~parts;
}

static void proc__release(struct discover_proc *p)
{
	free(p->exe);
	free(p->version);
	free(p->build_id);
	free(p->tls.object);
	proc__drop_parts(p, DISCOVER_ALL);
}

static void proc_ctx__release(struct proc_ctx *c)
{
	free(c->v8_path);
	proc_maps__free(c->maps);
	free(c->sock_inodes);
	index_table__release(&c->log_index);
	index_table__release(&c->dir_index);
}

/* ---- the scan ----------------------------------------------------------- */

/* 1 when pid is a V8 runtime (added to the list), 0 when not, or -errno. */
static int scan__pid(struct scan *s, pid_t pid, unsigned int parts)
{
	struct proc_ctx c = { .pid = pid, .parts = parts };
	struct discover_proc *p;
	int err;

	err = proc__read_stat(&c);
	if (!err)
		err = scan__v8_object(s, &c);
	if (err || !c.v8_obj)
		goto out;
	err = array_grow(&s->list->procs, &s->cap_procs, s->list->nr + 1);
	if (err)
		goto out;
	p = &s->list->procs[s->list->nr];
	err = proc__describe(s, &c, p);
	if (err) {
		proc__release(p);
		goto out;
	}
	s->list->nr++;
	err = 1;
out:
	proc_ctx__release(&c);
	return err;
}

static int scan__miss(struct scan *s, pid_t pid, int err)
{
	struct discover_list *l = s->list;

	if (array_grow(&l->misses, &s->cap_misses, l->nr_misses + 1))
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

int discover__scan(const pid_t *pids, size_t nr_pids, unsigned int parts,
		   struct discover_list **out)
{
	struct scan s = { 0 };
	struct dirent *de;
	pid_t self = getpid();
	size_t i;
	DIR *d = NULL;
	int err = 0;

	*out = NULL;
	parts = parts_normalize(parts);
	s.list = calloc(1, sizeof(*s.list));
	if (!s.list)
		return -ENOMEM;
	s.mntns_known = !stat("/proc/self/ns/mnt", &s.self_mntns);

	if (pids) {
		for (i = 0; !err && i < nr_pids; i++)
			err = scan__account(&s, pids[i], scan__pid(&s, pids[i], parts), true);
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
			err = scan__account(&s, (pid_t)pid, scan__pid(&s, (pid_t)pid, parts),
					    false);
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
	index_table__release(&s.by_file);
	if (err) {
		discover__free(s.list);
		return err;
	}
	*out = s.list;
	return 0;
}

int discover__complete(struct discover_proc *p, unsigned int parts)
{
	struct proc_ctx c = { .pid = p->pid };
	struct scan s = { 0 };
	size_t i, slot;
	int err = 0;

	if (parts & DISCOVER_LOAD_BIAS & ~p->parts)
		return -EINVAL;
	c.parts = parts_normalize(parts) & ~p->parts & ~DISCOVER_LOAD_BIAS;
	if (!c.parts)
		return 0;
	s.mntns_known = !stat("/proc/self/ns/mnt", &s.self_mntns);
	proc__set_prefix(&s, &c);
	/* what it has already, found again, is not added twice */
	c.cap_logs = p->nr_logs;
	c.cap_log_dirs = p->nr_log_dirs;
	for (i = 0; !err && i < p->nr_logs; i++) {
		err = index_table__reserve(&c.log_index);
		if (!err && !proc__has_log(&c, p, p->logs[i].path, &slot))
			index_table__set(&c.log_index, slot, path_hash(p->logs[i].path),
					 (uint32_t)i);
	}
	for (i = 0; !err && i < p->nr_log_dirs; i++) {
		err = index_table__reserve(&c.dir_index);
		if (!err)
			index_table__lookup(&c.dir_index, path_hash(p->log_dirs[i]), dir_is, p,
					    p->log_dirs[i], &slot);
		if (!err)
			index_table__set(&c.dir_index, slot, path_hash(p->log_dirs[i]),
					 (uint32_t)i);
	}
	if (!err)
		err = proc__find_parts(&c, p);
	if (err)
		proc__drop_parts(p, c.parts);
	proc_ctx__release(&c);
	return err;
}

void discover_proc__drop(struct discover_proc *p, unsigned int parts)
{
	proc__drop_parts(p, parts & ~DISCOVER_LOAD_BIAS);
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
