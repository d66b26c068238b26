// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * services: a workerd process's config found, read and matched to its
 * isolates; see services.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/sha256.h"
#include "lib/procfs.h"
#include "lib/utf8.h"
#include "user/attribute/services.h"

#define CMDLINE_MAX (64 * 1024)
#define MAX_ARGS 512

/*
 * A JavaScript user module of a worker and what is known of its content:
 * its size and SHA-256, learnt when a match first needs them.  An embedded
 * file's are kept with its identity (device, inode, size, mtime), checked
 * again at most once per listing (service_map__begin()).
 */
struct svc_module {
	const struct workerd_module *mod;
	bool tried;			/* opened (or tried) in generation gen */
	unsigned int gen;
	int err;			/* why it could not be then (0: it could) */
	bool have_id;			/* dev, ino, size, mtime are the file's */
	dev_t dev;
	ino_t ino;
	uint64_t size;			/* the source's length */
	struct timespec mtime;
	bool digest_known;
	char sha256_hex[SHA256_HEX_LEN];
};

/* A worker service with JavaScript user modules, its modules by name. */
struct svc_entry {
	const struct workerd_service *svc;
	struct svc_module *mods;	/* ascending by name */
	size_t nr_mods;
	uint32_t names_hash;		/* over the names in that order */
	bool dup_names;			/* a name twice: never matched */
	/* the version id its files give (service_map__version_isolates()) */
	bool version_tried;
	unsigned int version_gen;
	char version_full[SHA256_HEX_LEN];	/* "" when none */
	char *version_why;		/* why none, or NULL */
};

/* A config file read (the config, its imports), as it was when read. */
struct svc_file {
	char *path;
	bool import_path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct timespec ctime;
};

/* An isolate matched before: (address, version id) -> entry index or -1. */
struct svc_memo {
	uint64_t isolate;
	char version_full[SHA256_HEX_LEN];
	long entry;
};

struct svc_proc {
	pid_t pid;
	unsigned int seen;		/* the map's generation of the last add */
	/* what the config was found from: kept to read embeds later */
	char *cmdline;			/* NUL-separated words */
	size_t cmdline_len;
	struct services_cmdline cl;	/* pointing into cmdline */
	char cwd[PATH_MAX];
	char root[64];			/* /proc/PID/root */
	uid_t uid;
	int start_err;			/* 0: started at start_ns (to a tick), realtime */
	uint64_t start_ns, tick_ns;
	struct svc_file *files;
	size_t nr_files, cap_files;
	struct workerd_config *cfg;	/* NULL: unknown */
	char *why;			/* why unknown, or NULL */
	struct svc_entry *entries;
	size_t nr_entries;
	struct svc_module *mods;	/* every entry's, one array */
	struct index_table by_names;	/* entries by names_hash */
	struct svc_memo *memo;
	size_t nr_memo, cap_memo;
	struct index_table memo_index;
	char **notes;			/* this listing's: embedded files not read, why */
	size_t nr_notes, cap_notes;
};

struct service_map {
	struct svc_proc **procs;
	size_t nr, cap;
	unsigned int gen;
	struct read_budget *budget;
	struct service_map_stats stats;
};

struct service_map *service_map__new(void)
{
	struct service_map *m = calloc(1, sizeof(*m));

	if (!m)
		errno = ENOMEM;
	return m;
}

static void proc_clear_notes(struct svc_proc *sp)
{
	for (size_t i = 0; i < sp->nr_notes; i++)
		free(sp->notes[i]);
	sp->nr_notes = 0;
}

/* Best effort, once per text: a note lost to ENOMEM loses only itself. */
static void proc_note(struct svc_proc *sp, const char *fmt, ...)
{
	char buf[PATH_MAX + 256], *note;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (size_t i = 0; i < sp->nr_notes; i++)
		if (!strcmp(sp->notes[i], buf))
			return;
	if (array_grow(&sp->notes, &sp->cap_notes, sp->nr_notes + 1))
		return;
	note = strdup(buf);
	if (note)
		sp->notes[sp->nr_notes++] = note;
}

static void proc_free(struct svc_proc *sp)
{
	if (!sp)
		return;
	workerd_config__free(sp->cfg);
	free(sp->why);
	for (size_t i = 0; i < sp->nr_entries; i++)
		free(sp->entries[i].version_why);
	free(sp->entries);
	free(sp->mods);
	index_table__release(&sp->by_names);
	free(sp->memo);
	index_table__release(&sp->memo_index);
	for (size_t i = 0; i < sp->nr_files; i++)
		free(sp->files[i].path);
	free(sp->files);
	free(sp->cmdline);
	proc_clear_notes(sp);
	free(sp->notes);
	free(sp);
}

void service_map__free(struct service_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++)
		proc_free(m->procs[i]);
	free(m->procs);
	free(m);
}

void service_map__set_budget(struct service_map *m, struct read_budget *budget)
{
	m->budget = budget;
}

/* ---- the command line ----------------------------------------------------- */

/* `workerd serve` options that take a value (workerd serve --help, 2026-11-17). */
static const char *const value_opts[] = {
	"--import-path", "--directory-path", "--external-addr", "--inspector-addr",
	"--perfetto-trace", "--async-trace", "--async-trace-stacks",
	"--pyodide-package-disk-cache-dir", "--pyodide-bundle-disk-cache-dir",
	"--python-load-snapshot", "--python-snapshot-dir", "--socket-addr", "--socket-fd",
	"--control-fd", "--cluster-addr", "--cluster-advertise",
};
static const char value_short[] = "IdeisS";

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int services__parse_cmdline(const char *const *argv, size_t argc, struct services_cmdline *out,
			    const char **why)
{
	size_t i = 1, npos = 0;
	bool binary = false, opts_done = false;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (argc < 2 || strcmp(argv[1], "serve")) {
		*why = "no config file on the command line (a `workerd compile` binary?)";
		return -ENOENT;
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		bool takes = false;

		if (!opts_done && !strcmp(a, "--")) {
			opts_done = true;
			continue;
		}
		if (!opts_done && a[0] == '-' && a[1] == '-') {
			const char *eq = strchr(a, '=');
			size_t nl = eq ? (size_t)(eq - a) : strlen(a);

			if (nl == 8 && !strncmp(a, "--binary", 8))
				binary = true;
			for (size_t k = 0; k < sizeof(value_opts) / sizeof(value_opts[0]); k++)
				takes |= strlen(value_opts[k]) == nl && !strncmp(a, value_opts[k], nl);
			if (takes)
				val = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
			if (takes && nl == 13 && !strncmp(a, "--import-path", 13) && val &&
			    out->nr_import_path < SERVICES_MAX_IMPORT_PATHS)
				out->import_path[out->nr_import_path++] = val;
			continue;
		}
		if (!opts_done && a[0] == '-' && a[1]) {
			/* short options, clustered: -bw, -I DIR, -IDIR */
			for (const char *c = a + 1; *c; c++) {
				if (*c == 'b')
					binary = true;
				if (!strchr(value_short, *c))
					continue;
				val = c[1] ? c + 1 : (i + 1 < argc ? argv[++i] : NULL);
				if (*c == 'I' && val && out->nr_import_path < SERVICES_MAX_IMPORT_PATHS)
					out->import_path[out->nr_import_path++] = val;
				break;
			}
			continue;
		}
		if (npos == 0)
			out->config = a;
		else if (npos == 1)
			out->const_name = a;
		npos++;
	}
	if (!out->config) {
		*why = "no config file on the command line";
		return -ENOENT;
	}
	if (binary) {
		*why = "a binary config (--binary)";
		return -ENOTSUP;
	}
	if (ends_with(out->config, ".json") || ends_with(out->config, ".jsonc")) {
		*why = "a wrangler.json config";
		return -ENOTSUP;
	}
	return 0;
}


/* ---- reading the target's files ------------------------------------------- */

static int proc_note_file(struct svc_proc *sp, const char *path, bool import_path,
			  const struct stat *st)
{
	struct svc_file *f;

	if (array_grow(&sp->files, &sp->cap_files, sp->nr_files + 1))
		return -ENOMEM;
	f = &sp->files[sp->nr_files];
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	f->import_path = import_path;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
	sp->nr_files++;
	return 0;
}

/* Open abs (as the target names it) under the target's rules; an fd or -errno, why set. */
static int open_abs(const struct svc_proc *sp, const char *abs, struct safe_open_info *info,
		    char *why, size_t whylen)
{
	struct safe_open_opts o = {
		.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT,
		.uid = sp->uid,
		.root = sp->root,
		.max_bytes = SERVICES_FILE_MAX,
	};
	int fd;

	memset(info, 0, sizeof(*info));
	fd = safe_open__file(abs, &o, info);
	if (fd < 0) {
		snprintf(why, whylen, "%s", info->why[0] ? info->why : strerror(-fd));
		return fd;
	}
	/* root's file that the target's user may not read is not the target's to name */
	if (info->st.st_uid == 0 && o.uid != 0 && !(info->st.st_mode & S_IROTH)) {
		close(fd);
		snprintf(why, whylen, "owned by root and not readable by the target's user");
		return -EPERM;
	}
	return fd;
}

/*
 * Open a file the config names (path as workerd_config gives it; import_path:
 * an absolute name looked up in each --import-path directory, as workerd
 * does).  An fd or -errno, why set.
 */
static int open_named_at(const struct svc_proc *sp, const char *path, bool import_path,
			 struct safe_open_info *info, char *abs, char *why, size_t whylen)
{
	int n, fd = -ENOENT;

	if (import_path) {
		for (size_t i = 0; i < sp->cl.nr_import_path; i++) {
			const char *d = sp->cl.import_path[i];

			if (d[0] == '/')
				n = snprintf(abs, PATH_MAX, "%s%s", d, path);
			else
				n = snprintf(abs, PATH_MAX, "%s/%s%s", sp->cwd, d, path);
			if (n < 0 || (size_t)n >= PATH_MAX)
				return -ENAMETOOLONG;
			fd = open_abs(sp, abs, info, why, whylen);
			if (fd != -ENOENT)
				return fd;
		}
		snprintf(why, whylen, "not found in the import path");
		return -ENOENT;
	}
	if (path[0] == '/')
		n = snprintf(abs, PATH_MAX, "%s", path);
	else
		n = snprintf(abs, PATH_MAX, "%s/%s", sp->cwd, path);
	if (n < 0 || (size_t)n >= PATH_MAX)
		return -ENAMETOOLONG;
	return open_abs(sp, abs, info, why, whylen);
}

static int open_named(const struct svc_proc *sp, const char *path, bool import_path,
		      struct safe_open_info *info, char *why, size_t whylen)
{
	char abs[PATH_MAX];

	return open_named_at(sp, path, import_path, info, abs, why, whylen);
}

struct reader {
	struct service_map *m;
	struct svc_proc *sp;
};

/* workerd_config_read_fn: the config and its imports, read whole and noted. */
static int read_cb(void *ctx, const char *path, bool import_path, char **data, size_t *len,
		   char *why, size_t whylen)
{
	struct reader *r = ctx;
	struct safe_open_info info;
	uint64_t take;
	uint8_t *buf = NULL;
	int fd, err;

	fd = open_named(r->sp, path, import_path, &info, why, whylen);
	if (fd < 0)
		return fd;
	take = read_budget__take(r->m->budget, (uint64_t)info.st.st_size);
	if (take < (uint64_t)info.st.st_size) {
		read_budget__give_back(r->m->budget, take);
		close(fd);
		snprintf(why, whylen, "the capture's read budget is spent");
		return -EDQUOT;
	}
	err = fileio__read_fd(fd, SERVICES_FILE_MAX, &buf, len);
	close(fd);
	if (!err)
		err = proc_note_file(r->sp, path, import_path, &info.st);
	if (err) {
		free(buf);
		snprintf(why, whylen, "%s", err == -EFBIG ? "too large" : strerror(-err));
		return err;
	}
	*data = (char *)buf;
	return 0;
}

/* ---- a module's content ---------------------------------------------------- */

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* Stream fd's size bytes through SHA-256 (the read charged to the budget). */
static int hash_fd(struct service_map *m, int fd, uint64_t size, char hex[SHA256_HEX_LEN])
{
	static uint8_t buf[64 * 1024];
	uint8_t digest[SHA256_DIGEST_LEN];
	struct sha256_ctx ctx;
	uint64_t done = 0, take;
	ssize_t n;

	take = read_budget__take(m->budget, size);
	if (take < size) {
		read_budget__give_back(m->budget, take);
		return -EDQUOT;
	}
	sha256__init(&ctx);
	while (done < size) {
		size_t want = size - done < sizeof(buf) ? (size_t)(size - done) : sizeof(buf);

		n = read(fd, buf, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ESTALE;	/* shorter than its fstat: changed while read */
		sha256__update(&ctx, buf, (size_t)n);
		done += (uint64_t)n;
	}
	sha256__final(&ctx, digest);
	sha256__hex(digest, hex);
	m->stats.embeds_hashed++;
	m->stats.bytes_hashed += size;
	return 0;
}

/*
 * Open md's embedded file and take in its identity: a digest learnt for
 * another file, or before the file changed, is forgotten.  The fd, or
 * -errno (md->err).
 */
static int module_open(struct svc_proc *sp, const struct svc_entry *e, struct svc_module *md)
{
	struct safe_open_info info;
	char why[160];
	const struct stat *st = &info.st;
	int fd = open_named(sp, md->mod->embed, md->mod->embed_import_path, &info, why,
			    sizeof(why));

	md->err = fd < 0 ? fd : 0;
	if (fd < 0) {
		proc_note(sp, "service %s: embedded file %s: %s (not matched by content)",
			  e->svc->name, md->mod->embed, why);
		return fd;
	}
	if (!md->have_id || md->dev != st->st_dev || md->ino != st->st_ino ||
	    md->size != (uint64_t)st->st_size || !same_time(&md->mtime, &st->st_mtim)) {
		md->digest_known = false;
		md->dev = st->st_dev;
		md->ino = st->st_ino;
		md->size = (uint64_t)st->st_size;
		md->mtime = st->st_mtim;
	}
	md->have_id = true;
	return fd;
}

/*
 * Is module md's content len bytes with this SHA-256?  An embedded file
 * is opened (once per generation) for its identity and size; it is read
 * and hashed only when its size is len and its digest is not known for
 * that identity.  1 yes, 0 no (or unreadable), -ENOMEM.
 */
static int module_is(struct service_map *m, struct svc_proc *sp, const struct svc_entry *e,
		     struct svc_module *md, uint64_t len, const char *sha256_hex)
{
	int fd = -1, err;

	if (!md->mod->embed) {
		/* a source in the config itself: hashed when the config was read */
		return md->size == len && !strcmp(md->sha256_hex, sha256_hex);
	}
	if (!md->tried || md->gen != m->gen) {
		fd = module_open(sp, e, md);
		md->tried = true;
		md->gen = m->gen;
	}
	if (md->err)
		goto no;
	if (md->size != len) {
		m->stats.embeds_not_read++;
		goto no;
	}
	if (!md->digest_known) {
		if (fd < 0)
			fd = module_open(sp, e, md);
		if (fd < 0 || md->size != len)
			goto no;
		err = hash_fd(m, fd, md->size, md->sha256_hex);
		if (err == -ENOMEM) {
			close(fd);
			return err;
		}
		md->digest_known = !err;
		if (err)
			goto no;
	}
	if (fd >= 0)
		close(fd);
	return !strcmp(md->sha256_hex, sha256_hex);
no:
	if (fd >= 0)
		close(fd);
	return 0;
}

/* ---- one process ---------------------------------------------------------- */

static int cmp_module(const void *a, const void *b)
{
	const struct svc_module *x = a, *y = b;

	return strcmp(x->mod->name, y->mod->name);
}

/* The hash of a list of names, for an entry's modules and an isolate's scripts alike. */
static uint32_t entry_names_hash(const struct svc_entry *e)
{
	uint64_t h = HASH_SEED;

	for (size_t i = 0; i < e->nr_mods; i++)
		h = hash__field(h, e->mods[i].mod->name);
	return hash__fold32(h);
}

static uint32_t script_names_hash(const struct isolate_script *s, size_t n)
{
	uint64_t h = HASH_SEED;

	for (size_t i = 0; i < n; i++)
		h = hash__field(h, s[i].name);
	return hash__fold32(h);
}

/*
 * The worker services' JavaScript user modules, by name, and the entries
 * indexed by their names: an isolate is compared only with the services
 * whose module names are its user scripts' names.
 */
static int index_entries(struct svc_proc *sp)
{
	struct workerd_config *cfg = sp->cfg;
	size_t nmods = 0, k = 0;

	for (size_t i = 0; i < cfg->nr_services; i++)
		nmods += cfg->services[i].nr_modules;
	sp->entries = calloc(cfg->nr_services ? cfg->nr_services : 1, sizeof(*sp->entries));
	sp->mods = calloc(nmods ? nmods : 1, sizeof(*sp->mods));
	if (!sp->entries || !sp->mods)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nr_services; i++) {
		const struct workerd_service *s = &cfg->services[i];
		struct svc_entry *e = &sp->entries[sp->nr_entries];
		size_t slot;

		e->svc = s;
		e->mods = &sp->mods[k];
		for (size_t j = 0; j < s->nr_modules; j++) {
			const struct workerd_module *mod = &s->modules[j];
			struct svc_module *md = &e->mods[e->nr_mods];

			if (mod->kind == WORKERD_MODULE_OTHER || !isolate__is_user_script(mod->name))
				continue;
			md->mod = mod;
			if (!mod->embed) {
				uint8_t d[SHA256_DIGEST_LEN];

				sha256__digest(mod->source, mod->len, d);
				sha256__hex(d, md->sha256_hex);
				md->size = mod->len;
				md->digest_known = true;
			}
			e->nr_mods++;
		}
		if (!e->nr_mods)
			continue;
		k += e->nr_mods;
		qsort(e->mods, e->nr_mods, sizeof(*e->mods), cmp_module);
		for (size_t j = 1; j < e->nr_mods; j++)
			e->dup_names |= !strcmp(e->mods[j - 1].mod->name, e->mods[j].mod->name);
		e->names_hash = entry_names_hash(e);
		if (index_table__reserve(&sp->by_names))
			return -ENOMEM;
		/* entries may share their names (bundlers: index.js): each its own slot */
		for (slot = index_table__first(&sp->by_names, e->names_hash);
		     sp->by_names.idx1[slot]; slot = index_table__next(&sp->by_names, slot))
			;
		index_table__set(&sp->by_names, slot, e->names_hash, (uint32_t)sp->nr_entries);
		sp->nr_entries++;
	}
	return 0;
}

static int set_why(struct svc_proc *sp, const char *fmt, const char *what)
{
	char buf[1024];

	snprintf(buf, sizeof(buf), fmt, what);
	sp->why = strdup(buf);
	return sp->why ? 0 : -ENOMEM;
}

/* The process's command line (NUL-separated words) and working directory; else why. */
static int read_identity(const struct discover_proc *p, char *cmdline, size_t *cmdline_len,
			 char *cwd, const char **why)
{
	char path[64];
	ssize_t n, len;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	len = procfs__read(path, cmdline, CMDLINE_MAX);
	if (len <= 0) {
		*why = "its command line cannot be read";
		return -ENOENT;
	}
	*cmdline_len = (size_t)len;
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)p->pid);
	n = readlink(path, cwd, PATH_MAX - 1);
	if (n <= 0 || cwd[0] != '/') {
		*why = "its working directory cannot be read";
		return -ENOENT;
	}
	cwd[n] = '\0';
	if (ends_with(cwd, " (deleted)")) {
		*why = "its working directory was removed";
		return -ENOENT;
	}
	return 0;
}

static int load(struct service_map *m, struct svc_proc *sp, const struct discover_proc *p)
{
	static char buf[CMDLINE_MAX];
	char err[512];
	const char *argv[MAX_ARGS], *why;
	struct reader r = { .m = m, .sp = sp };
	size_t argc = 0, len;
	int ret;

	sp->uid = p->uid_known ? p->uid : (uid_t)-1;
	snprintf(sp->root, sizeof(sp->root), "/proc/%d/root", (int)p->pid);
	if (read_identity(p, buf, &len, sp->cwd, &why))
		return set_why(sp, SERVICES_UNKNOWN ": %s", why);
	/* kept, with a NUL after the last word (a process may rewrite its argv) */
	sp->cmdline = malloc(len + 1);
	if (!sp->cmdline)
		return -ENOMEM;
	memcpy(sp->cmdline, buf, len);
	sp->cmdline[len] = '\0';
	sp->cmdline_len = len;
	for (size_t i = 0; i < len && argc < MAX_ARGS; i += strlen(sp->cmdline + i) + 1)
		argv[argc++] = sp->cmdline + i;
	ret = services__parse_cmdline(argv, argc, &sp->cl, &why);
	if (ret)
		return set_why(sp, SERVICES_UNKNOWN ": %s", why);
	m->stats.loads++;
	ret = workerd_config__parse(sp->cl.config, sp->cl.const_name, read_cb, &r, &sp->cfg, err,
				    sizeof(err));
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return set_why(sp, SERVICES_UNKNOWN ": config %s", err);
	return index_entries(sp);
}

/*
 * Is sp still what p runs: the same command line and working directory,
 * and every config file it read the same file, unchanged?
 */
static bool proc_unchanged(const struct svc_proc *sp, const struct discover_proc *p)
{
	static char buf[CMDLINE_MAX];
	char cwd[PATH_MAX], why[160];
	const char *w;
	size_t len;

	if (read_identity(p, buf, &len, cwd, &w))
		return !sp->cmdline && sp->why;	/* still unknown, for the same reason */
	if (!sp->cmdline || len != sp->cmdline_len || memcmp(buf, sp->cmdline, len) ||
	    strcmp(cwd, sp->cwd))
		return false;
	if (!sp->cfg && sp->nr_files == 0)
		return false;	/* failed before any file was read: try again */
	for (size_t i = 0; i < sp->nr_files; i++) {
		const struct svc_file *f = &sp->files[i];
		struct safe_open_info info;
		int fd = open_named(sp, f->path, f->import_path, &info, why, sizeof(why));

		if (fd < 0)
			return false;
		close(fd);
		if (info.st.st_dev != f->dev || info.st.st_ino != f->ino ||
		    info.st.st_size != f->size || !same_time(&info.st.st_mtim, &f->mtime))
			return false;
	}
	return true;
}

static struct svc_proc *find_proc_at(const struct service_map *m, pid_t pid, size_t *at)
{
	for (size_t i = 0; m && i < m->nr; i++) {
		if (m->procs[i]->pid == pid) {
			if (at)
				*at = i;
			return m->procs[i];
		}
	}
	return NULL;
}

static const struct svc_proc *find_proc(const struct service_map *m, pid_t pid)
{
	return find_proc_at(m, pid, NULL);
}

void service_map__begin(struct service_map *m)
{
	for (size_t i = 0; i < m->nr; i++)
		proc_clear_notes(m->procs[i]);
	m->gen++;
	memset(&m->stats, 0, sizeof(m->stats));
}

void service_map__end(struct service_map *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->nr; i++) {
		if (m->procs[i]->seen == m->gen)
			m->procs[k++] = m->procs[i];
		else
			proc_free(m->procs[i]);
	}
	m->nr = k;
}

void service_map__stats(const struct service_map *m, struct service_map_stats *st)
{
	*st = m->stats;
}

int service_map__add_process(struct service_map *m, const struct discover_proc *p)
{
	struct svc_proc *sp;
	size_t at;
	int err;

	if (p->runtime != DISCOVER_WORKERD)
		return 0;
	sp = find_proc_at(m, p->pid, &at);
	if (sp && sp->seen == m->gen)
		return 0;
	if (sp && proc_unchanged(sp, p)) {
		sp->seen = m->gen;
		m->stats.kept++;
		/* the same files, perhaps another process under the pid */
		sp->start_err = procfs__start_realtime(p->pid, &sp->start_ns, &sp->tick_ns);
		return 0;
	}
	if (sp) {
		/* another process under that pid, or its config changed */
		proc_free(sp);
		m->procs[at] = m->procs[--m->nr];
	}
	if (array_grow(&m->procs, &m->cap, m->nr + 1))
		return -ENOMEM;
	sp = calloc(1, sizeof(*sp));
	if (!sp)
		return -ENOMEM;
	sp->pid = p->pid;
	sp->seen = m->gen;
	/* before the config is read: a file changed after this is not what it runs */
	sp->start_err = procfs__start_realtime(p->pid, &sp->start_ns, &sp->tick_ns);
	err = load(m, sp, p);
	if (err == -ENOMEM && !sp->why) {
		proc_free(sp);
		return err;
	}
	m->procs[m->nr++] = sp;
	return err;
}

const char *service_map__why_unknown(const struct service_map *m, pid_t pid)
{
	const struct svc_proc *sp = find_proc(m, pid);

	return sp ? sp->why : NULL;
}

size_t service_map__notes(const struct service_map *m, pid_t pid, const char *const **notes)
{
	const struct svc_proc *sp = find_proc(m, pid);

	*notes = sp ? (const char *const *)sp->notes : NULL;
	return sp ? sp->nr_notes : 0;
}

const struct workerd_config *service_map__config(const struct service_map *m, pid_t pid)
{
	const struct svc_proc *sp = find_proc(m, pid);

	return sp ? sp->cfg : NULL;
}

/* ---- matching ------------------------------------------------------------- */

static int cmp_script(const void *a, const void *b)
{
	const struct isolate_script *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = strcmp(x->sha256_hex, y->sha256_hex);
	if (c)
		return c;
	return x->source_len < y->source_len ? -1 : x->source_len > y->source_len;
}

static uint32_t memo_hash(uint64_t isolate, const char *version_full)
{
	return hash__fold32(hash__str(hash__word(HASH_SEED, isolate), version_full));
}

struct memo_key {
	uint64_t isolate;
	const char *version_full;
};

static bool memo_is(const void *ctx, uint32_t i, const void *key)
{
	const struct svc_proc *sp = ctx;
	const struct memo_key *k = key;

	return sp->memo[i].isolate == k->isolate && !strcmp(sp->memo[i].version_full,
							      k->version_full);
}

static int memo_put(struct svc_proc *sp, uint64_t isolate, const char *version_full, long entry)
{
	struct memo_key k = { isolate, version_full };
	uint32_t h = memo_hash(isolate, version_full);
	size_t slot;
	long i;

	if (index_table__reserve(&sp->memo_index) ||
	    array_grow(&sp->memo, &sp->cap_memo, sp->nr_memo + 1))
		return -ENOMEM;
	i = index_table__lookup(&sp->memo_index, h, memo_is, sp, &k, &slot);
	if (i >= 0) {
		sp->memo[i].entry = entry;
		return 0;
	}
	sp->memo[sp->nr_memo].isolate = isolate;
	snprintf(sp->memo[sp->nr_memo].version_full, SHA256_HEX_LEN, "%s", version_full);
	sp->memo[sp->nr_memo].entry = entry;
	index_table__set(&sp->memo_index, slot, h, (uint32_t)sp->nr_memo);
	sp->nr_memo++;
	return 0;
}

/* Entry e's modules are the distinct scripts s[0..n) (sorted, unique): 1, 0, -ENOMEM. */
static int entry_is(struct service_map *m, struct svc_proc *sp, struct svc_entry *e,
		    const struct isolate_script *s, size_t n, bool *unsure)
{
	if (e->dup_names || e->nr_mods != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(e->mods[i].mod->name, s[i].name))
			return 0;
	for (size_t i = 0; i < n; i++) {
		int r = module_is(m, sp, e, &e->mods[i], s[i].source_len, s[i].sha256_hex);

		/* a file that could not be read decides nothing for good */
		if (e->mods[i].err || (!r && e->mods[i].size == s[i].source_len &&
				       !e->mods[i].digest_known))
			*unsure = true;
		if (r <= 0)
			return r;
	}
	return 1;
}

int service_map__match(struct service_map *m, pid_t pid, uint64_t isolate,
		       const char *version_full, const struct isolate_script *scripts, size_t n,
		       const struct workerd_service **out)
{
	struct svc_proc *sp = find_proc_at(m, pid, NULL);
	struct memo_key k = { isolate, version_full };
	struct isolate_script *s;
	size_t u = 0, slot;
	long hit = -1, i;
	bool unsure = false;
	int err = 0;

	*out = NULL;
	if (!sp || !sp->cfg || !version_full || !version_full[0] || !n)
		return 0;
	i = index_table__lookup(&sp->memo_index, memo_hash(isolate, version_full), memo_is, sp, &k,
				NULL);
	if (i >= 0) {
		m->stats.memo_hits++;
		*out = sp->memo[i].entry >= 0 ? sp->entries[sp->memo[i].entry].svc : NULL;
		return 0;
	}
	/* the distinct (name, content) pairs, as the version id counts them */
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, scripts, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_script);
	for (size_t j = 0; j < n; j++)
		if (!u || cmp_script(&s[u - 1], &s[j]))
			s[u++] = s[j];
	/* a name with two sources is no service's: its module names are unique */
	for (size_t j = 1; j < u; j++) {
		if (!strcmp(s[j - 1].name, s[j].name)) {
			free(s);
			return memo_put(sp, isolate, version_full, -1);
		}
	}
	{
		uint32_t h = script_names_hash(s, u);

		slot = index_table__first(&sp->by_names, h);
		for (; sp->by_names.mask && sp->by_names.idx1[slot];
		     slot = index_table__next(&sp->by_names, slot)) {
			long e = (long)sp->by_names.idx1[slot] - 1;
			int r;

			if (sp->by_names.hash[slot] != h)
				continue;
			r = entry_is(m, sp, &sp->entries[e], s, u, &unsure);
			if (r < 0) {
				err = r;
				break;
			}
			if (!r)
				continue;
			/* two services running the same code cannot be told apart */
			if (hit >= 0) {
				hit = -1;
				break;
			}
			hit = e;
		}
	}
	free(s);
	if (err)
		return err;
	if (hit >= 0)
		*out = sp->entries[hit].svc;
	/* an answer that an unreadable file took part in is found again next time */
	return unsure ? 0 : memo_put(sp, isolate, version_full, hit);
}

/* An isolate to name: found while walking the registry's list, set after it. */
struct name_hit {
	pid_t pid;
	uint64_t isolate;
	const char *name;
};

/* Set the names found (the list walked is the registry's own); count or -ENOMEM. */
static int set_names(struct isolate_registry *reg, struct name_hit *hits, size_t nhits, int err)
{
	for (size_t i = 0; !err && i < nhits; i++)
		err = isolate_registry__set_service_name(reg, hits[i].pid, hits[i].isolate,
							 hits[i].name);
	free(hits);
	return err ? err : (int)nhits;
}

int service_map__name_isolates(struct service_map *m, struct isolate_registry *reg)
{
	const struct isolate_info *const *all;
	struct name_hit *hits;
	size_t nr, nhits = 0;
	int err = 0;

	all = isolate_registry__list(reg, &nr);
	if (!all)
		return -ENOMEM;
	hits = calloc(nr ? nr : 1, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++) {
		const struct workerd_service *svc = NULL;
		struct isolate_script *scripts;
		size_t n;

		if (!find_proc(m, all[i]->pid) || !all[i]->version_full[0])
			continue;
		err = isolate_registry__user_scripts(reg, all[i]->pid, all[i]->isolate, &scripts,
						     &n);
		if (err == -ENOENT)
			err = 0;
		if (!err)
			err = service_map__match(m, all[i]->pid, all[i]->isolate,
						 all[i]->version_full, scripts, n, &svc);
		free(scripts);
		if (svc)
			hits[nhits++] = (struct name_hit){ all[i]->pid, all[i]->isolate, svc->name };
	}
	return set_names(reg, hits, nhits, err);
}

/* Does the service have a module called name? */
static bool has_module(const struct workerd_service *svc, const char *name)
{
	for (size_t i = 0; i < svc->nr_modules; i++)
		if (!strcmp(svc->modules[i].name, name))
			return true;
	return false;
}

int service_map__name_isolates_by_module(struct service_map *m, struct isolate_registry *reg)
{
	const struct isolate_info *const *all;
	struct name_hit *hits;
	size_t nr, nhits = 0;

	all = isolate_registry__list(reg, &nr);
	if (!all)
		return -ENOMEM;
	hits = calloc(nr ? nr : 1, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct workerd_config *cfg = service_map__config(m, all[i]->pid);
		const struct workerd_service *found = NULL;
		size_t nfound = 0;

		/* content decides where there is content: a code log with sources */
		if (!cfg || all[i]->version_full[0] || all[i]->service_name || !all[i]->nr_scripts)
			continue;
		for (size_t k = 0; k < cfg->nr_services; k++) {
			const struct workerd_service *svc = &cfg->services[k];
			bool all_in = svc->is_worker;

			for (size_t j = 0; all_in && j < all[i]->nr_scripts; j++)
				all_in = has_module(svc, all[i]->scripts[j]);
			if (all_in) {
				found = svc;
				nfound++;
			}
		}
		if (nfound == 1)
			hits[nhits++] = (struct name_hit){ all[i]->pid, all[i]->isolate, found->name };
	}
	return set_names(reg, hits, nhits, 0);
}

const struct workerd_service *service_map__service_of(const struct service_map *m,
						      const struct isolate_info *info)
{
	const struct workerd_config *cfg = info ? service_map__config(m, info->pid) : NULL;

	if (!cfg || !info->service_name)
		return NULL;
	for (size_t i = 0; i < cfg->nr_services; i++)
		if (!strcmp(cfg->services[i].name, info->service_name))
			return &cfg->services[i];
	return NULL;
}

/* ---- a module's text, and the files beside it ---------------------------- */

/* Read fd whole (st_size bytes at most SERVICES_FILE_MAX), charged to the budget. */
static int read_fd_charged(struct service_map *m, int fd, uint64_t size, char **data, size_t *len,
			   char *why, size_t whylen)
{
	uint64_t take = read_budget__take(m->budget, size);
	uint8_t *buf = NULL;
	int err;

	if (take < size) {
		read_budget__give_back(m->budget, take);
		snprintf(why, whylen, "the capture's read budget is spent");
		return -EDQUOT;
	}
	err = fileio__read_fd(fd, SERVICES_FILE_MAX, &buf, len);
	if (err) {
		snprintf(why, whylen, "%s", err == -EFBIG ? "too large" : strerror(-err));
		return err;
	}
	*data = (char *)buf;
	return 0;
}

static const struct workerd_module *find_module(const struct workerd_service *svc, const char *name)
{
	for (size_t i = 0; svc->is_worker && i < svc->nr_modules; i++)
		if (svc->modules[i].kind != WORKERD_MODULE_OTHER && !strcmp(svc->modules[i].name, name))
			return &svc->modules[i];
	return NULL;
}

int service_map__module_text(struct service_map *m, pid_t pid, const char *service,
			     const char *module, char **text, size_t *len, char **file, char *why,
			     size_t whylen)
{
	const struct svc_proc *sp = find_proc(m, pid);
	const struct workerd_module *mod = NULL;
	struct safe_open_info info;
	char abs[PATH_MAX];
	int fd, err;

	*text = *file = NULL;
	*len = 0;
	snprintf(why, whylen, "no module of that name in the config");
	if (!sp || !sp->cfg)
		return -ENOENT;
	for (size_t i = 0; i < sp->cfg->nr_services; i++) {
		const struct workerd_service *svc = &sp->cfg->services[i];
		const struct workerd_module *md;

		if (service && strcmp(svc->name, service))
			continue;
		md = find_module(svc, module);
		if (!md)
			continue;
		if (mod) {
			snprintf(why, whylen, "several services have a module of that name");
			return -ENOENT;
		}
		mod = md;
	}
	if (!mod)
		return -ENOENT;
	if (mod->source) {
		*text = malloc(mod->len + 1);
		if (!*text)
			return -ENOMEM;
		memcpy(*text, mod->source, mod->len);
		(*text)[mod->len] = 0;
		*len = mod->len;
		return 0;
	}
	if (!mod->embed)
		return -ENOENT;
	fd = open_named_at(sp, mod->embed, mod->embed_import_path, &info, abs, why, whylen);
	if (fd < 0)
		return fd;
	err = read_fd_charged(m, fd, (uint64_t)info.st.st_size, text, len, why, whylen);
	close(fd);
	if (err)
		return err;
	*file = strdup(abs);
	if (!*file) {
		free(*text);
		*text = NULL;
		return -ENOMEM;
	}
	return 0;
}

int service_map__read_file(struct service_map *m, pid_t pid, const char *path, char **data,
			   size_t *len, char *why, size_t whylen)
{
	const struct svc_proc *sp = find_proc(m, pid);
	struct safe_open_info info;
	int fd, err;

	*data = NULL;
	*len = 0;
	if (!sp) {
		snprintf(why, whylen, "not a workerd of this capture");
		return -ENOENT;
	}
	fd = open_abs(sp, path, &info, why, whylen);
	if (fd < 0)
		return fd;
	err = read_fd_charged(m, fd, (uint64_t)info.st.st_size, data, len, why, whylen);
	close(fd);
	return err;
}

/* ---- version ids from the embedded files ---------------------------------- */

/* Best effort: a reason lost to ENOMEM is only a shorter note. */
static void entry_set_version_why(struct svc_entry *e, const char *fmt, ...)
{
	char buf[PATH_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	free(e->version_why);
	e->version_why = strdup(buf);
}

/*
 * One module's text as V8 compiles it, into *text (malloc'd, the caller's;
 * NULL for a module in the config's own text, whose bytes are mod->source).
 * 0, or -errno with why.
 */
static int module_files_text(struct service_map *m, const struct svc_proc *sp,
			     const struct workerd_module *mod, char **text, size_t *len,
			     char *why, size_t whylen)
{
	struct safe_open_info info;
	char abs[PATH_MAX];
	int fd, err;

	*text = NULL;
	if (!mod->embed) {
		*len = mod->len;
		return 0;
	}
	fd = open_named_at(sp, mod->embed, mod->embed_import_path, &info, abs, why, whylen);
	if (fd < 0)
		return fd;
	if (procfs__after_start(&info.st.st_ctim, sp->start_ns, sp->tick_ns)) {
		close(fd);
		snprintf(why, whylen, "changed since workerd started (it runs what it read then)");
		return -ESTALE;
	}
	err = read_fd_charged(m, fd, (uint64_t)info.st.st_size, text, len, why, whylen);
	close(fd);
	return err;
}

/*
 * The version id of entry e from its modules' files: the pairs (module
 * name, file bytes) that its code log would give, hashed as
 * isolate__version_id() does.  workerd compiles every JavaScript module of
 * a worker when it starts it, imported or not, and V8 logs each under its
 * name in the config (a service worker script under the service's name)
 * with the file's bytes as its source, BOM and CRLF kept (workerd
 * 2026-11-17, docs/attribution.md).  Bytes that are not UTF-8 reach V8
 * as U+FFFD: such a file gives no id.  Once per generation.
 */
static int entry_files_version(struct service_map *m, struct svc_proc *sp, struct svc_entry *e)
{
	const char **names = NULL, **srcs = NULL;
	char **texts = NULL, why[PATH_MAX + 160];
	size_t *lens = NULL, n = e->nr_mods;
	int err = 0;

	if (e->version_tried && e->version_gen == m->gen)
		return 0;
	e->version_tried = true;
	e->version_gen = m->gen;
	e->version_full[0] = '\0';
	free(e->version_why);
	e->version_why = NULL;
	if (sp->start_err) {
		entry_set_version_why(e, "when workerd started is unknown (%s): its files "
				      "may not be what it runs", strerror(-sp->start_err));
		return 0;
	}
	for (size_t i = 0; i < sp->nr_files; i++) {
		if (procfs__after_start(&sp->files[i].ctime, sp->start_ns, sp->tick_ns)) {
			entry_set_version_why(e, "config file %s changed since workerd started",
					      sp->files[i].path);
			return 0;
		}
	}
	if (e->dup_names) {
		entry_set_version_why(e, "two modules of one name");
		return 0;
	}
	names = calloc(n, sizeof(*names));
	srcs = calloc(n, sizeof(*srcs));
	texts = calloc(n, sizeof(*texts));
	lens = calloc(n, sizeof(*lens));
	if (!names || !srcs || !texts || !lens) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct workerd_module *mod = e->mods[i].mod;
		int rc = module_files_text(m, sp, mod, &texts[i], &lens[i], why, sizeof(why));

		if (rc == -ENOMEM) {
			err = rc;
			goto out;
		}
		if (rc) {
			entry_set_version_why(e, "module %s (%s): %s", mod->name,
					      mod->embed ? mod->embed : "in the config", why);
			goto out;
		}
		names[i] = mod->name;
		srcs[i] = texts[i] ? texts[i] : mod->source;
		if (!utf8__valid(srcs[i], lens[i])) {
			entry_set_version_why(e, "module %s: not UTF-8 (V8 compiles U+FFFD in "
					      "its place)", mod->name);
			goto out;
		}
	}
	err = isolate__version_id(names, srcs, lens, n, e->version_full);
	if (err)
		e->version_full[0] = '\0';
out:
	for (size_t i = 0; texts && i < n; i++)
		free(texts[i]);
	free(names);
	free(srcs);
	free(texts);
	free(lens);
	/* ENOMEM decides nothing: tried again next time */
	if (err)
		e->version_tried = false;
	return err;
}

static struct svc_entry *entry_of(const struct svc_proc *sp, const char *service)
{
	for (size_t i = 0; i < sp->nr_entries; i++)
		if (!strcmp(sp->entries[i].svc->name, service))
			return &sp->entries[i];
	return NULL;
}

/* An isolate to give a version: found while walking the list, set after it. */
struct version_hit {
	pid_t pid;
	uint64_t isolate;
	const char *version_full;	/* NULL: none, why says why */
	const char *why;
};

int service_map__version_isolates(struct service_map *m, struct isolate_registry *reg)
{
	const struct isolate_info *const *all;
	struct version_hit *hits;
	size_t nr, nhits = 0;
	int err = 0, given = 0;

	all = isolate_registry__list(reg, &nr);
	if (!all)
		return -ENOMEM;
	hits = calloc(nr ? nr : 1, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	for (size_t i = 0; !err && i < nr; i++) {
		const struct isolate_info *info = all[i];
		struct svc_proc *sp = find_proc_at(m, info->pid, NULL);
		struct version_hit *h = &hits[nhits];
		struct svc_entry *e;

		if (!sp || !sp->cfg || info->version_from == ISOLATE_VERSION_FROM_CODE_LOG)
			continue;
		*h = (struct version_hit){ info->pid, info->isolate, NULL, NULL };
		nhits++;
		if (!info->service_name) {
			h->why = "no workerd service has all the modules its JS frames name";
			continue;
		}
		e = entry_of(sp, info->service_name);
		if (!e) {
			h->why = "its service has no JavaScript module";
			continue;
		}
		err = entry_files_version(m, sp, e);
		if (e->version_full[0])
			h->version_full = e->version_full;
		else
			h->why = e->version_why ? e->version_why : "its modules could not be read";
		if (e->version_why)
			proc_note(sp, "service %s: no version id without a code log: %s",
				  e->svc->name, e->version_why);
	}
	for (size_t i = 0; !err && i < nhits; i++) {
		err = isolate_registry__set_files_version(reg, hits[i].pid, hits[i].isolate,
							  hits[i].version_full, hits[i].why);
		given += hits[i].version_full != NULL;
	}
	free(hits);
	return err ? err : given;
}

static bool ns_matches(const struct workerd_service *s, const struct workerd_do_namespace *ns,
		       const char *want)
{
	size_t sl = strlen(s->name);

	if (ns->unique_key && !strcmp(ns->unique_key, want))
		return true;
	if (!strcmp(ns->class_name, want))
		return true;
	return !strncmp(want, s->name, sl) && want[sl] == ':' && !strcmp(want + sl + 1,
									 ns->class_name);
}

size_t service_map__find_namespace(const struct service_map *m, const char *want,
				   struct service_ns_match *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; m && i < m->nr; i++) {
		const struct workerd_config *cfg = m->procs[i]->cfg;

		for (size_t j = 0; cfg && j < cfg->nr_services; j++) {
			const struct workerd_service *s = &cfg->services[j];

			for (size_t k = 0; k < s->nr_namespaces; k++) {
				if (!ns_matches(s, &s->namespaces[k], want))
					continue;
				if (n < max) {
					out[n].pid = m->procs[i]->pid;
					out[n].service = s;
					out[n].ns = &s->namespaces[k];
				}
				n++;
			}
		}
	}
	return n;
}

void service_map__list_namespaces(const struct service_map *m, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (size_t i = 0; m && i < m->nr; i++) {
		const struct workerd_config *cfg = m->procs[i]->cfg;

		for (size_t j = 0; cfg && j < cfg->nr_services; j++) {
			const struct workerd_service *s = &cfg->services[j];

			for (size_t k = 0; k < s->nr_namespaces && off < len; k++) {
				const struct workerd_do_namespace *ns = &s->namespaces[k];
				int w = snprintf(buf + off, len - off, "%s%s:%s (%s)", off ? ", " : "",
						 s->name, ns->class_name,
						 ns->unique_key ? ns->unique_key : "ephemeral");

				if (w < 0)
					return;
				off += (size_t)w;
			}
		}
	}
	if (!off)
		snprintf(buf, len, "none");
}
