// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * services: a workerd process's config found, read and matched to its
 * isolates; see services.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/procfs.h"
#include "user/attribute/services.h"

#define CMDLINE_MAX (64 * 1024)
#define MAX_ARGS 512

struct svc_entry {
	const struct workerd_service *svc;
	char version_full[SHA256_HEX_LEN];	/* "" when it has no user script */
};

struct svc_proc {
	pid_t pid;
	struct workerd_config *cfg;	/* NULL: unknown */
	char *why;			/* why unknown, or NULL */
	struct svc_entry *entries;
	size_t nr_entries;
};

struct service_map {
	struct svc_proc *procs;
	size_t nr, cap;
	struct read_budget *budget;
};

struct service_map *service_map__new(void)
{
	struct service_map *m = calloc(1, sizeof(*m));

	if (!m)
		errno = ENOMEM;
	return m;
}

void service_map__free(struct service_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++) {
		workerd_config__free(m->procs[i].cfg);
		free(m->procs[i].why);
		free(m->procs[i].entries);
	}
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

struct reader {
	struct service_map *m;
	const struct discover_proc *p;
	char root[64];		/* /proc/PID/root */
	char cwd[PATH_MAX];	/* as the process sees it */
	const struct services_cmdline *cl;
};

static int read_one(struct reader *r, const char *abs, char **data, size_t *len, char *why,
		    size_t whylen)
{
	struct safe_open_opts o = {
		.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT,
		.uid = r->p->uid_known ? r->p->uid : (uid_t)-1,
		.root = r->root,
		.max_bytes = SERVICES_FILE_MAX,
	};
	struct safe_open_info info = { 0 };
	uint64_t take;
	uint8_t *buf = NULL;
	int fd, err;

	fd = safe_open__file(abs, &o, &info);
	if (fd < 0) {
		snprintf(why, whylen, "%s", info.why[0] ? info.why : strerror(-fd));
		return fd;
	}
	/* root's file that the target's user may not read is not the target's to name */
	if (info.st.st_uid == 0 && o.uid != 0 && !(info.st.st_mode & S_IROTH)) {
		close(fd);
		snprintf(why, whylen, "owned by root and not readable by the target's user");
		return -EPERM;
	}
	take = read_budget__take(r->m->budget, (uint64_t)info.st.st_size);
	if (take < (uint64_t)info.st.st_size) {
		read_budget__give_back(r->m->budget, take);
		close(fd);
		snprintf(why, whylen, "the capture's read budget is spent");
		return -EDQUOT;
	}
	err = fileio__read_fd(fd, SERVICES_FILE_MAX, &buf, len);
	close(fd);
	if (err) {
		snprintf(why, whylen, "%s", err == -EFBIG ? "too large" : strerror(-err));
		return err;
	}
	*data = (char *)buf;
	return 0;
}

static int read_cb(void *ctx, const char *path, bool import_path, char **data, size_t *len,
		   char *why, size_t whylen)
{
	struct reader *r = ctx;
	char abs[PATH_MAX];
	int err = -ENOENT;

	if (import_path) {
		/* workerd looks absolute names up in each --import-path directory */
		for (size_t i = 0; i < r->cl->nr_import_path; i++) {
			const char *d = r->cl->import_path[i];

			if (d[0] == '/')
				err = snprintf(abs, sizeof(abs), "%s%s", d, path);
			else
				err = snprintf(abs, sizeof(abs), "%s/%s%s", r->cwd, d, path);
			if (err < 0 || (size_t)err >= sizeof(abs))
				return -ENAMETOOLONG;
			err = read_one(r, abs, data, len, why, whylen);
			if (err != -ENOENT)
				return err;
		}
		snprintf(why, whylen, "not found in the import path");
		return -ENOENT;
	}
	if (path[0] == '/')
		err = snprintf(abs, sizeof(abs), "%s", path);
	else
		err = snprintf(abs, sizeof(abs), "%s/%s", r->cwd, path);
	if (err < 0 || (size_t)err >= sizeof(abs))
		return -ENAMETOOLONG;
	return read_one(r, abs, data, len, why, whylen);
}

/* ---- one process ---------------------------------------------------------- */

static int compute_versions(struct svc_proc *sp)
{
	struct workerd_config *cfg = sp->cfg;

	sp->entries = calloc(cfg->nr_services ? cfg->nr_services : 1, sizeof(*sp->entries));
	if (!sp->entries)
		return -ENOMEM;
	for (size_t i = 0; i < cfg->nr_services; i++) {
		const struct workerd_service *s = &cfg->services[i];
		const char **names = calloc(s->nr_modules + 1, sizeof(*names));
		const char **srcs = calloc(s->nr_modules + 1, sizeof(*srcs));
		size_t *lens = calloc(s->nr_modules + 1, sizeof(*lens)), n = 0;
		int err = 0;

		if (!names || !srcs || !lens)
			err = -ENOMEM;
		for (size_t j = 0; !err && j < s->nr_modules; j++) {
			const struct workerd_module *mod = &s->modules[j];

			if (mod->kind == WORKERD_MODULE_OTHER || !isolate__is_user_script(mod->name))
				continue;
			names[n] = mod->name;
			srcs[n] = mod->source;
			lens[n++] = mod->len;
		}
		sp->entries[i].svc = s;
		if (!err && n)
			err = isolate__version_id(names, srcs, lens, n, sp->entries[i].version_full);
		free(names);
		free(srcs);
		free(lens);
		if (err == -ENOMEM)
			return err;
		sp->nr_entries = i + 1;
	}
	/* only the ids are needed from here on: a big host's config embeds tens of MB */
	for (size_t i = 0; i < cfg->nr_services; i++) {
		for (size_t j = 0; j < cfg->services[i].nr_modules; j++) {
			free(cfg->services[i].modules[j].source);
			cfg->services[i].modules[j].source = NULL;
			cfg->services[i].modules[j].len = 0;
		}
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

static int load(struct service_map *m, struct svc_proc *sp, const struct discover_proc *p)
{
	char path[64], buf[CMDLINE_MAX], err[512];
	const char *argv[MAX_ARGS], *why;
	struct services_cmdline cl;
	struct reader r = { .m = m, .p = p, .cl = &cl };
	size_t argc = 0;
	ssize_t n, len;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	len = procfs__read(path, buf, sizeof(buf));
	if (len <= 0)
		return set_why(sp, SERVICES_UNKNOWN ": %s", "its command line cannot be read");
	for (ssize_t i = 0; i < len && argc < MAX_ARGS; i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	ret = services__parse_cmdline(argv, argc, &cl, &why);
	if (ret)
		return set_why(sp, SERVICES_UNKNOWN ": %s", why);
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)p->pid);
	n = readlink(path, r.cwd, sizeof(r.cwd) - 1);
	if (n <= 0 || r.cwd[0] != '/')
		return set_why(sp, SERVICES_UNKNOWN ": %s", "its working directory cannot be read");
	r.cwd[n] = '\0';
	if (ends_with(r.cwd, " (deleted)"))
		return set_why(sp, SERVICES_UNKNOWN ": %s", "its working directory was removed");
	snprintf(r.root, sizeof(r.root), "/proc/%d/root", (int)p->pid);
	ret = workerd_config__parse(cl.config, cl.const_name, read_cb, &r, &sp->cfg, err,
				    sizeof(err));
	if (ret == -ENOMEM)
		return ret;
	if (ret)
		return set_why(sp, SERVICES_UNKNOWN ": config %s", err);
	return compute_versions(sp);
}

int service_map__add_process(struct service_map *m, const struct discover_proc *p)
{
	struct svc_proc *sp;
	int err;

	if (p->runtime != DISCOVER_WORKERD)
		return 0;
	for (size_t i = 0; i < m->nr; i++)
		if (m->procs[i].pid == p->pid)
			return 0;
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 8;
		struct svc_proc *np = realloc(m->procs, cap * sizeof(*np));

		if (!np)
			return -ENOMEM;
		m->procs = np;
		m->cap = cap;
	}
	sp = &m->procs[m->nr++];
	memset(sp, 0, sizeof(*sp));
	sp->pid = p->pid;
	err = load(m, sp, p);
	if (err == -ENOMEM && !sp->why) {
		workerd_config__free(sp->cfg);
		sp->cfg = NULL;
		free(sp->entries);
		sp->entries = NULL;
		m->nr--;
	}
	return err;
}

static const struct svc_proc *find_proc(const struct service_map *m, pid_t pid)
{
	for (size_t i = 0; i < m->nr; i++)
		if (m->procs[i].pid == pid)
			return &m->procs[i];
	return NULL;
}

const char *service_map__why_unknown(const struct service_map *m, pid_t pid)
{
	const struct svc_proc *sp = find_proc(m, pid);

	return sp ? sp->why : NULL;
}

const struct workerd_config *service_map__config(const struct service_map *m, pid_t pid)
{
	const struct svc_proc *sp = m ? find_proc(m, pid) : NULL;

	return sp ? sp->cfg : NULL;
}

const struct workerd_service *service_map__lookup(const struct service_map *m, pid_t pid,
						  const char *version_full)
{
	const struct svc_proc *sp = m ? find_proc(m, pid) : NULL;
	const struct workerd_service *hit = NULL;

	if (!sp || !sp->cfg || !version_full || !version_full[0])
		return NULL;
	for (size_t j = 0; j < sp->nr_entries; j++) {
		if (strcmp(sp->entries[j].version_full, version_full))
			continue;
		/* two services running the same code cannot be told apart */
		if (hit)
			return NULL;
		hit = sp->entries[j].svc;
	}
	return hit;
}

const struct workerd_service *service_map__service_of(const struct service_map *m,
						      const struct isolate_info *info)
{
	return info ? service_map__lookup(m, info->pid, info->version_full) : NULL;
}

int service_map__name_isolates(struct service_map *m, struct isolate_registry *reg)
{
	const struct isolate_info *const *all;
	struct {
		pid_t pid;
		uint64_t isolate;
		const char *name;
	} *hits;
	size_t nr, nhits = 0;
	int err = 0;

	all = isolate_registry__list(reg, &nr);
	if (!all)
		return -ENOMEM;
	hits = calloc(nr ? nr : 1, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	for (size_t i = 0; i < nr; i++) {
		const struct workerd_service *s = service_map__service_of(m, all[i]);

		if (!s)
			continue;
		hits[nhits].pid = all[i]->pid;
		hits[nhits].isolate = all[i]->isolate;
		hits[nhits++].name = s->name;
	}
	/* set after the walk: the list is the registry's own */
	for (size_t i = 0; !err && i < nhits; i++)
		err = isolate_registry__set_service_name(reg, hits[i].pid, hits[i].isolate,
							 hits[i].name);
	free(hits);
	return err ? err : (int)nhits;
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
		const struct workerd_config *cfg = m->procs[i].cfg;

		for (size_t j = 0; cfg && j < cfg->nr_services; j++) {
			const struct workerd_service *s = &cfg->services[j];

			for (size_t k = 0; k < s->nr_namespaces; k++) {
				if (!ns_matches(s, &s->namespaces[k], want))
					continue;
				if (n < max) {
					out[n].pid = m->procs[i].pid;
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
		const struct workerd_config *cfg = m->procs[i].cfg;

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
