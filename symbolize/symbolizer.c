// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * symbolizer: the facade over proc_maps, elf_symtab and ksyms; see
 * symbolizer.h for the contract.
 *
 * Per process, every executable mapping ever seen is kept (history), and a
 * flat, sorted, non-overlapping list of segments says which mapping owns
 * each address now: a refresh paints its mappings over the list, so a newer
 * mapping wins where it overlaps an older one and the older one still
 * answers for the addresses nobody replaced.
 *
 * ELF files are opened when a mapping is first seen (the process may be gone
 * by the time its samples are symbolized) and cached for all processes by
 * file identity (path, device, inode, size, mtime) and by build-id; symbol
 * tables are read on first use or by symbolizer__preload().
 */
#include "symbolize/symbolizer.h"
#include "symbolize/v8code.h"
#include "symbolize/v8heap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/monotime.h"
#include "lib/safe_open.h"
#include "symbolize/elf_symtab.h"
#include "symbolize/ksyms.h"
#include "symbolize/perfmap.h"
#include "symbolize/proc_maps.h"

/* String-keyed map: path interning, notes, the ELF cache.  Keys are copies. */
struct strmap_entry {
	char *key;
	void *val;
};

struct strmap {
	struct strmap_entry *entries;
	size_t nr, cap;
	struct index_table index;
};

struct elf_entry {
	struct elf_symtab *st;
	const char *build_id;	/* interned; "" when none */
	bool noted_empty;	/* "no function symbols" note made */
};

enum umap_kind {
	UMAP_FILE,
	UMAP_ANON,		/* anonymous or memfd: JIT code */
	UMAP_SPECIAL,		/* [vdso], [vsyscall], [uprobes] */
};

struct umap {
	struct sym_mapping pub;	/* handed out; stays put */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	bool deleted;
	enum umap_kind kind;
	bool elf_tried;
	int elf_err;		/* negative errno when the file is unusable */
	struct elf_entry *elf;
	uint64_t last_seen;	/* generation of the last snapshot listing it */
};

struct seg {
	uint64_t start;
	uint64_t end;
	struct umap *map;
};

struct uproc {
	pid_t pid;
	struct perfmap *perfmap; /* NULL when its path could not be found */
	struct v8heap *heap;	/* JS functions read from its heap; NULL: no layout */
	struct v8code *code;	/* inlined functions from its code objects; NULL: none */
	int perfmap_err;	/* last perfmap__update() error; -ENOENT: no map (yet) */
	bool perfmap_read;	/* perfmap__update() ran at least once */
	uint64_t perfmap_read_ns; /* CLOCK_MONOTONIC of the last update */
	size_t perfmap_restarts; /* rewrites seen: a rewriting map is reread less often */
	uid_t uid;		/* owner of the files it writes (its perf map) */
	bool same_mntns;	/* shares our mount namespace: its paths are ours */
	const char *exe;	/* interned /proc/PID/exe target, or NULL */
	uint64_t generation;
	struct umap **hist;	/* every mapping seen, sorted by start */
	size_t nr_hist, cap_hist;
	struct seg *segs;	/* who owns each address now */
	size_t nr_segs, cap_segs;
};

struct symbolizer {
	char *proc_root;
	char *kallsyms_path;
	struct read_budget *budget;
	bool lazy_jit;

	struct uproc **procs;	/* sorted by pid */
	size_t nr_procs, cap_procs;
	unsigned int next_id;

	struct strmap strings;	/* interned paths and build-ids */
	struct strmap elf_cache; /* "f:..." and "b:..." keys -> elf_entry */
	struct elf_entry **elfs;
	size_t nr_elfs, cap_elfs;

	struct strmap note_set;
	char **notes;		/* keys of note_set, in the order made */
	size_t nr_notes, cap_notes;

	struct ksyms *ksyms;
	bool ksyms_tried;

	struct elf_entry vdso;	/* our own vDSO image: the kernel maps the same one into all */
	bool vdso_tried;
};

const char *sym_miss__str(enum sym_miss miss)
{
	switch (miss) {
	case SYM_OK:
		return "resolved";
	case SYM_MISS_NO_MAPPING:
		return "address in no known mapping";
	case SYM_MISS_ANON:
		return "anonymous executable memory (JIT code?)";
	case SYM_MISS_NO_SYMBOLS:
		return "file has no symbols (stripped)";
	case SYM_MISS_NOT_COVERED:
		return "no symbol covers the address";
	case SYM_MISS_BAD_FILE:
		return "mapped file missing, unreadable or not a valid ELF";
	case SYM_MISS_NO_KALLSYMS:
		return "kernel symbols unavailable";
	case SYM_MISS_NO_PERFMAP:
		return "JIT code without a perf map (run V8 with --perf-basic-prof)";
	}
	return "unknown";
}

static uint32_t str_hash(const char *s)
{
	return hash__fold32(hash__str(HASH_SEED, s));
}

static bool strmap_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct strmap *m = ctx;

	return !strcmp(m->entries[index].key, key);
}

static void *strmap_get(const struct strmap *m, const char *key)
{
	long i = index_table__lookup(&m->index, str_hash(key), strmap_eq, m, key, NULL);

	return i < 0 ? NULL : m->entries[i].val;
}

/*
 * Insert a copy of key with val unless key is there already (then the old
 * value stays).  *stored, if not NULL, gets the key as kept in the map;
 * *added tells which case it was.
 */
static int strmap_put(struct strmap *m, const char *key, void *val, const char **stored,
		      bool *added)
{
	uint32_t h = str_hash(key);
	size_t slot;
	long i;
	char *copy;

	if (added)
		*added = false;
	/* Room first: the slot a lookup ends at is where the key goes. */
	if (index_table__reserve(&m->index))
		return -ENOMEM;
	i = index_table__lookup(&m->index, h, strmap_eq, m, key, &slot);
	if (i >= 0) {
		if (stored)
			*stored = m->entries[i].key;
		return 0;
	}
	if (array_grow(&m->entries, &m->cap, m->nr + 1))
		return -ENOMEM;
	copy = strdup(key);
	if (!copy)
		return -ENOMEM;
	m->entries[m->nr].key = copy;
	m->entries[m->nr].val = val;
	index_table__set(&m->index, slot, h, (uint32_t)m->nr++);
	if (stored)
		*stored = copy;
	if (added)
		*added = true;
	return 0;
}

static void strmap_free(struct strmap *m)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		free(m->entries[i].key);
	free(m->entries);
	index_table__release(&m->index);
	memset(m, 0, sizeof(*m));
}

static const char *intern(struct symbolizer *s, const char *str)
{
	const char *kept = NULL;

	if (strmap_put(&s->strings, str, NULL, &kept, NULL))
		return NULL;
	return kept;
}

/* Notes are best effort: running out of memory for one loses only it. */
static void add_note(struct symbolizer *s, const char *what, const char *why)
{
	const char *kept;
	bool added;
	char *note;

	if (asprintf(&note, "%s: %s", what, why) < 0)
		return;
	if (!strmap_put(&s->note_set, note, NULL, &kept, &added) && added &&
	    !array_grow(&s->notes, &s->cap_notes, s->nr_notes + 1))
		s->notes[s->nr_notes++] = (char *)kept;
	free(note);
}

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts)
{
	struct symbolizer *s;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->next_id = 1;
	s->budget = opts ? opts->budget : NULL;
	s->lazy_jit = opts && opts->lazy_jit;
	s->proc_root = strdup(opts && opts->proc_root ? opts->proc_root : "/proc");
	s->kallsyms_path = strdup(opts && opts->kallsyms_path ? opts->kallsyms_path :
				  "/proc/kallsyms");
	if (!s->proc_root || !s->kallsyms_path) {
		symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

static void uproc_free(struct uproc *p)
{
	size_t i;

	perfmap__free(p->perfmap);
	v8heap__free(p->heap);
	v8code__free(p->code);
	for (i = 0; i < p->nr_hist; i++)
		free(p->hist[i]);
	free(p->hist);
	free(p->segs);
	free(p);
}

void symbolizer__free(struct symbolizer *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nr_procs; i++)
		uproc_free(s->procs[i]);
	free(s->procs);
	for (i = 0; i < s->nr_elfs; i++) {
		elf_symtab__free(s->elfs[i]->st);
		free(s->elfs[i]);
	}
	free(s->elfs);
	strmap_free(&s->elf_cache);
	strmap_free(&s->strings);
	free(s->notes);
	strmap_free(&s->note_set);
	ksyms__free(s->ksyms);
	elf_symtab__free(s->vdso.st);
	free(s->proc_root);
	free(s->kallsyms_path);
	free(s);
}

/* Index of pid in s->procs, or where it would go. */
static size_t proc_pos(const struct symbolizer *s, pid_t pid)
{
	size_t lo = 0, hi = s->nr_procs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->procs[mid]->pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct uproc *find_proc(const struct symbolizer *s, pid_t pid)
{
	size_t i = proc_pos(s, pid);

	return i < s->nr_procs && s->procs[i]->pid == pid ? s->procs[i] : NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static enum umap_kind classify(const char *path)
{
	if (!*path || starts_with(path, "[anon") || starts_with(path, "[heap]") ||
	    starts_with(path, "[stack"))
		return UMAP_ANON;
	/* Shared anonymous memory and memfds have file-like names. */
	if (starts_with(path, "//anon") || starts_with(path, "/memfd:") ||
	    starts_with(path, "/dev/zero") || starts_with(path, "/SYSV") ||
	    starts_with(path, "/anon_hugepage") || starts_with(path, "/[aio]"))
		return UMAP_ANON;
	if (path[0] == '/')
		return UMAP_FILE;
	return UMAP_SPECIAL;
}

/*
 * Open the file behind a mapping, never another one (safe_open.h).
 * map_files/ is the mapped file itself, even deleted or in another mount
 * namespace (it needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN); its
 * inode is compared, not its device, which btrfs subvolumes and overlayfs
 * report differently from /proc/PID/maps.  Then the path as the process
 * names it, resolved inside its root (root/ with RESOLVE_IN_ROOT), and
 * only when it shares our mount namespace, the path as it is here: both
 * must have the mapping's device and inode.  A path naming /dev/watchdog
 * in the process's own namespace so never opens the host's device.
 */
static int open_mapped_file(const struct symbolizer *s, const struct uproc *p,
			    const struct umap *m, struct stat *stb, char *why, size_t why_len)
{
	struct safe_open_opts o = {
		.proc_root = s->proc_root,
		.match_file = m->inode != 0,
		.dev = makedev(m->dev_major, m->dev_minor),
		.ino = m->inode,
		.max_bytes = SAFE_OPEN_ELF_MAX,
	};
	struct safe_open_info info;
	char buf[PATH_MAX + 64];
	int fd, err = -ENOENT;

	snprintf(why, why_len, "file not found (in the process's mount namespace)");
	if (snprintf(buf, sizeof(buf), "%s/%d/map_files/%" PRIx64 "-%" PRIx64, s->proc_root,
		     (int)p->pid, m->pub.start, m->pub.limit) < (int)sizeof(buf)) {
		o.proc_link = true;
		o.match_file = false;
		fd = safe_open__file(buf, &o, &info);
		o.proc_link = false;
		o.match_file = m->inode != 0;
		if (fd >= 0 && m->inode && (uint64_t)info.st.st_ino != m->inode) {
			close(fd);
			fd = -ESTALE;
			snprintf(info.why, sizeof(info.why), "not the mapped file (inode differs)");
		}
		if (fd >= 0) {
			*stb = info.st;
			return fd;
		}
		/* Without the capability map_files/ says EPERM: not worth a note. */
		if (fd != -EPERM && fd != -EACCES && fd != -ENOENT) {
			err = fd;
			snprintf(why, why_len, "%s", info.why);
		}
	}
	if (m->deleted)
		return err;
	if (snprintf(buf, sizeof(buf), "%s/%d/root%s", s->proc_root, (int)p->pid, m->pub.path) <
	    (int)sizeof(buf)) {
		fd = safe_open__file(buf, &o, &info);
		if (fd >= 0) {
			*stb = info.st;
			return fd;
		}
		if (fd != -ENOENT) {
			err = fd;
			snprintf(why, why_len, "%s", info.why);
		}
	}
	/* The process is gone (no root/ any more) but saw our file system. */
	if (p->same_mntns) {
		fd = safe_open__file(m->pub.path, &o, &info);
		if (fd >= 0) {
			*stb = info.st;
			return fd;
		}
		if (err == -ENOENT && fd != -ENOENT) {
			err = fd;
			snprintf(why, why_len, "%s", info.why);
		}
	}
	return err;
}

static int cache_elf(struct symbolizer *s, struct elf_entry *e)
{
	if (array_grow(&s->elfs, &s->cap_elfs, s->nr_elfs + 1))
		return -ENOMEM;
	s->elfs[s->nr_elfs++] = e;
	return 0;
}

/* Find or open the ELF of a file mapping; 0 or -errno (then noted). */
static int umap_open_elf(struct symbolizer *s, struct uproc *p, struct umap *m)
{
	char key[PATH_MAX + 128], bkey[160], why_open[128];
	struct elf_symtab *st;
	struct elf_entry *e;
	const char *why = NULL;
	struct stat stb;
	int fd, err;

	if (m->elf_tried)
		return m->elf_err;
	m->elf_tried = true;

	fd = open_mapped_file(s, p, m, &stb, why_open, sizeof(why_open));
	if (fd < 0) {
		m->elf_err = fd;
		add_note(s, m->pub.path, why_open);
		return fd;
	}
	snprintf(key, sizeof(key), "f:%" PRIu64 ":%" PRIu64 ":%" PRIu64 ":%lld.%09ld:%s",
		 (uint64_t)stb.st_dev, (uint64_t)stb.st_ino, (uint64_t)stb.st_size,
		 (long long)stb.st_mtim.tv_sec, stb.st_mtim.tv_nsec, m->pub.path);
	e = strmap_get(&s->elf_cache, key);
	if (e)
		goto found;

	st = elf_symtab__open_fd(fd, &why);
	if (!st) {
		err = -errno;
		close(fd);
		m->elf_err = err;
		add_note(s, m->pub.path, why ? why : strerror(-err));
		return err;
	}
	/* Same build-id elsewhere (another container's copy): read it once. */
	snprintf(bkey, sizeof(bkey), "b:%s", elf_symtab__build_id(st));
	e = bkey[2] ? strmap_get(&s->elf_cache, bkey) : NULL;
	if (e) {
		elf_symtab__free(st);
	} else {
		e = calloc(1, sizeof(*e));
		if (!e || cache_elf(s, e)) {
			free(e);
			elf_symtab__free(st);
			close(fd);
			return m->elf_err = -ENOMEM;
		}
		e->st = st;
		e->build_id = intern(s, elf_symtab__build_id(st));
		if (!e->build_id)
			e->build_id = "";
		if (bkey[2] && strmap_put(&s->elf_cache, bkey, e, NULL, NULL)) {
			close(fd);
			return m->elf_err = -ENOMEM;
		}
	}
	/* Without the identity key, the next process would reopen the file. */
	if (strmap_put(&s->elf_cache, key, e, NULL, NULL)) {
		close(fd);
		return m->elf_err = -ENOMEM;
	}
found:
	close(fd);
	m->elf = e;
	m->pub.build_id = e->build_id;
	m->elf_err = 0;
	return 0;
}

/* Index of the first segment whose end is above addr. */
static size_t seg_pos(const struct uproc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_segs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->segs[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Make m the owner of [m->start, m->limit), trimming what it overlaps. */
static int paint(struct uproc *p, struct umap *m)
{
	uint64_t s = m->pub.start, e = m->pub.limit;
	size_t i = seg_pos(p, s), k = i, add, nr;
	struct seg left, right, *segs;
	bool has_left = false, has_right = false;

	if (i < p->nr_segs && p->segs[i].start == s && p->segs[i].end == e &&
	    p->segs[i].map == m)
		return 0;
	while (k < p->nr_segs && p->segs[k].start < e)
		k++;
	if (i < k && p->segs[i].start < s) {
		left = (struct seg){ p->segs[i].start, s, p->segs[i].map };
		has_left = true;
	}
	if (i < k && p->segs[k - 1].end > e) {
		right = (struct seg){ e, p->segs[k - 1].end, p->segs[k - 1].map };
		has_right = true;
	}
	add = 1 + has_left + has_right;
	nr = p->nr_segs - (k - i) + add;
	if (array_grow(&p->segs, &p->cap_segs, nr))
		return -ENOMEM;
	segs = p->segs;
	memmove(&segs[i + add], &segs[k], (p->nr_segs - k) * sizeof(*segs));
	if (has_left)
		segs[i++] = left;
	segs[i++] = (struct seg){ s, e, m };
	if (has_right)
		segs[i] = right;
	p->nr_segs = nr;
	return 0;
}

static bool umap_same(const struct umap *m, const struct proc_map *pm, const char *path)
{
	return m->pub.start == pm->start && m->pub.limit == pm->end &&
	       m->pub.offset == pm->offset && m->inode == pm->inode &&
	       m->dev_major == pm->dev_major && m->dev_minor == pm->dev_minor &&
	       m->deleted == pm->deleted && m->pub.path == path;
}

/* The mapping seen before that equals pm, or NULL; *pos is where it goes. */
static struct umap *hist_find(const struct uproc *p, const struct proc_map *pm,
			      const char *path, size_t *pos)
{
	size_t lo = 0, hi = p->nr_hist, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->hist[mid]->pub.start < pm->start)
			lo = mid + 1;
		else
			hi = mid;
	}
	*pos = lo;
	for (i = lo; i < p->nr_hist && p->hist[i]->pub.start == pm->start; i++)
		if (umap_same(p->hist[i], pm, path))
			return p->hist[i];
	return NULL;
}

static int add_mapping(struct symbolizer *s, struct uproc *p, const struct proc_map *pm)
{
	const char *path;
	enum umap_kind kind;
	struct umap *m;
	size_t pos;

	kind = classify(pm->path);
	path = intern(s, kind == UMAP_ANON && !*pm->path ? "[anon]" : pm->path);
	if (!path)
		return -ENOMEM;
	m = hist_find(p, pm, path, &pos);
	if (!m) {
		if (array_grow(&p->hist, &p->cap_hist, p->nr_hist + 1))
			return -ENOMEM;
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->pub.id = s->next_id++;
		m->pub.start = pm->start;
		m->pub.limit = pm->end;
		m->pub.offset = pm->offset;
		m->pub.path = path;
		m->pub.build_id = "";
		m->inode = pm->inode;
		m->dev_major = pm->dev_major;
		m->dev_minor = pm->dev_minor;
		m->deleted = pm->deleted;
		m->kind = kind;
		memmove(&p->hist[pos + 1], &p->hist[pos],
			(p->nr_hist - pos) * sizeof(*p->hist));
		p->hist[pos] = m;
		p->nr_hist++;
		/* Now, while the process and its map_files/ still exist. */
		if (kind == UMAP_FILE)
			umap_open_elf(s, p, m);
	}
	m->last_seen = p->generation;
	return paint(p, m);
}

static int read_snapshot(struct symbolizer *s, struct uproc *p, bool first)
{
	struct proc_maps *maps;
	size_t i, n, nr_exec = 0;
	int err = 0;

	maps = proc_maps__read(s->proc_root, p->pid);
	if (!maps)
		return errno == ENOENT ? -ESRCH : -errno;
	n = proc_maps__count(maps);
	p->generation++;
	for (i = 0; i < n && !err; i++) {
		const struct proc_map *pm = proc_maps__entry(maps, i);

		if (!proc_map__is_exec(pm))
			continue;
		nr_exec++;
		err = add_mapping(s, p, pm);
	}
	proc_maps__free(maps);
	if (err)
		return err;
	/* Empty maps: a zombie or a kernel thread; for a refresh, it exited. */
	if (!n && !first)
		return -ESRCH;
	return 0;
}

/*
 * The path is fixed now, while /proc/PID/root and NSpid can still be read;
 * the file itself is read later (preload, refresh, or a JIT lookup), and
 * with lazy_jit opened now.
 */
static void open_perfmap(struct symbolizer *s, struct uproc *p, bool uid_known)
{
	struct safe_open_opts o = {
		.owner = SAFE_OPEN_OWNER_TARGET,
		.uid = p->uid,
		.proc_root = s->proc_root,
	};
	char path[PATH_MAX];

	/* Without its uid, whose map it is cannot be told: none is read. */
	if (!uid_known || perfmap__path_for_pid(s->proc_root, p->pid, path, sizeof(path)))
		return;
	p->perfmap = perfmap__new(path, &o, s->budget);
	p->perfmap_err = -ENOENT;
	if (!p->perfmap || !s->lazy_jit)
		return;
	/* nothing wanted yet: nothing kept */
	if (perfmap__want(p->perfmap, NULL, 0)) {
		perfmap__free(p->perfmap);
		p->perfmap = NULL;
		return;
	}
	/*
	 * Read after the window, but the file of now: deleted or replaced
	 * meanwhile, it still names what ran.  A refusal is noted when the
	 * read opens the path again.
	 */
	perfmap__hold(p->perfmap);
}

/*
 * A missed address rereads the map at most this often; once the map was
 * found rewritten (a target that truncates and rewrites it, each reread
 * then reads it whole), at most once a second.
 */
#define PERFMAP_REREAD_NS 20000000ull		/* 20 ms */
#define PERFMAP_REWRITTEN_REREAD_NS 1000000000ull /* 1 s */

static void update_perfmap(struct symbolizer *s, struct uproc *p)
{
	struct perfmap_stats st;
	int n;

	if (!p->perfmap)
		return;
	n = perfmap__update(p->perfmap);
	p->perfmap_read = true;
	p->perfmap_read_ns = monotime_ns();
	perfmap__stats(p->perfmap, &st);
	p->perfmap_restarts = st.restarts;
	/* A map that existed and vanished keeps what was read: only note errors. */
	if (n < 0 && n != -ENOENT) {
		char what[PATH_MAX + 64];
		const char *why = perfmap__why(p->perfmap);

		snprintf(what, sizeof(what), "pid %d: perf map %s", p->pid,
			 perfmap__path(p->perfmap));
		add_note(s, what, *why ? why : strerror(-n));
	}
	if (n >= 0 || !perfmap__count(p->perfmap))
		p->perfmap_err = n < 0 ? n : 0;
}

static const char *read_exe(struct symbolizer *s, pid_t pid)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *suffix = " (deleted)";
	ssize_t n;
	size_t len;

	snprintf(link, sizeof(link), "%s/%d/exe", s->proc_root, pid);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	len = strlen(suffix);
	if ((size_t)n > len && !strcmp(target + n - len, suffix))
		target[n - len] = '\0';
	return intern(s, target);
}

const struct sym_mapping *symbolizer__main_mapping(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);

	if (!p)
		return NULL;
	for (size_t i = 0; i < p->nr_hist; i++)
		if (p->hist[i]->kind == UMAP_FILE && (!p->exe || p->hist[i]->pub.path == p->exe))
			return &p->hist[i]->pub;
	return NULL;
}

/* Does pid see the file system through our mount namespace? */
static bool same_mntns(const struct symbolizer *s, pid_t pid)
{
	char path[PATH_MAX];
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/self/ns/mnt", s->proc_root);
	if (stat(path, &a))
		return false;
	snprintf(path, sizeof(path), "%s/%d/ns/mnt", s->proc_root, (int)pid);
	if (stat(path, &b))
		return false;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int symbolizer__track(struct symbolizer *s, pid_t pid)
{
	struct uproc *p;
	bool uid_known;
	size_t pos;
	int err;

	if (pid <= 0)
		return -ESRCH;
	if (find_proc(s, pid))
		return symbolizer__refresh(s, pid);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->pid = pid;
	p->exe = read_exe(s, pid);
	uid_known = !safe_open__target_uid(s->proc_root, pid, &p->uid);
	p->same_mntns = same_mntns(s, pid);
	err = read_snapshot(s, p, true);
	if (!err)
		open_perfmap(s, p, uid_known);
	if (!err && array_grow(&s->procs, &s->cap_procs, s->nr_procs + 1))
		err = -ENOMEM;
	if (err) {
		uproc_free(p);
		return err;
	}
	pos = proc_pos(s, pid);
	memmove(&s->procs[pos + 1], &s->procs[pos], (s->nr_procs - pos) * sizeof(*s->procs));
	s->procs[pos] = p;
	s->nr_procs++;
	return 0;
}

void symbolizer__untrack(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);
	size_t pos;

	if (!p)
		return;
	pos = proc_pos(s, pid);
	uproc_free(p);
	memmove(&s->procs[pos], &s->procs[pos + 1], (s->nr_procs - pos - 1) * sizeof(*s->procs));
	s->nr_procs--;
}

int symbolizer__refresh(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);

	if (!p)
		return -ESRCH;
	/* A map found rewritten is read whole each time: not more than once a second. */
	if (!s->lazy_jit && (!p->perfmap_restarts || monotime_ns() - p->perfmap_read_ns >= PERFMAP_REWRITTEN_REREAD_NS))
		update_perfmap(s, p);
	return read_snapshot(s, p, false);
}

/*
 * Every 64-bit process on this kernel maps the same vDSO image, so ours
 * names the target's frames (clock_gettime() & co.) without reading its
 * memory.
 */
static struct elf_entry *own_vdso(struct symbolizer *s)
{
	const char *why = NULL;
	const Elf64_Ehdr *eh;
	size_t len;

	if (s->vdso_tried)
		return s->vdso.st ? &s->vdso : NULL;
	s->vdso_tried = true;
	eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	len = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	s->vdso.st = elf_symtab__from_memory(eh, len, &why);
	if (s->vdso.st && elf_symtab__load_symbols(s->vdso.st, &why)) {
		elf_symtab__free(s->vdso.st);
		s->vdso.st = NULL;
	}
	s->vdso.build_id = "";
	return s->vdso.st ? &s->vdso : NULL;
}

/* The mapping's symbols, loaded; 0 or a miss reason. */
static enum sym_miss umap_symbols(struct symbolizer *s, struct uproc *p, struct umap *m)
{
	const char *why = NULL;
	int err;

	switch (m->kind) {
	case UMAP_ANON:
		return SYM_MISS_ANON;
	case UMAP_SPECIAL:
		if (strcmp(m->pub.path, "[vdso]") || !own_vdso(s))
			return SYM_MISS_NOT_COVERED;
		m->elf = &s->vdso;
		return SYM_OK;
	case UMAP_FILE:
		break;
	}
	if (umap_open_elf(s, p, m))
		return SYM_MISS_BAD_FILE;
	err = elf_symtab__load_symbols(m->elf->st, &why);
	if (err) {
		add_note(s, m->pub.path, why ? why : strerror(-err));
		return SYM_MISS_BAD_FILE;
	}
	if (!elf_symtab__count(m->elf->st)) {
		if (!m->elf->noted_empty) {
			m->elf->noted_empty = true;
			add_note(s, m->pub.path, "no function symbols (stripped)");
		}
		return SYM_MISS_NO_SYMBOLS;
	}
	return SYM_OK;
}

int symbolizer__preload(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);
	int first = 0;
	size_t i;

	if (!p)
		return -ESRCH;
	if (!s->lazy_jit)
		update_perfmap(s, p);
	for (i = 0; i < p->nr_hist; i++) {
		struct umap *m = p->hist[i];

		if (m->last_seen != p->generation || m->kind != UMAP_FILE)
			continue;
		if (umap_symbols(s, p, m) == SYM_MISS_BAD_FILE && !first)
			first = m->elf_err ? m->elf_err : -ENOEXEC;
	}
	return first;
}

/*
 * Name an address from the perf map; leaves out->miss as it was when the map
 * does not cover ip, or SYM_MISS_NO_PERFMAP when there is no map at all.
 * perfmap strings live until the next update: keep interned copies.
 */
static void resolve_jit(struct symbolizer *s, struct uproc *p, uint64_t ip, bool in_anon,
			struct sym_frame *out)
{
	struct perfmap_sym sym;
	const struct v8name *n = &sym.name;
	int err;

	if (!p->perfmap) {
		if (in_anon)
			out->miss = SYM_MISS_NO_PERFMAP;
		return;
	}
	/* lazy_jit: an address nobody asked for costs a pass of its own */
	if (!perfmap__wants(p->perfmap, ip)) {
		if (in_anon ? perfmap__want(p->perfmap, &ip, 1) : perfmap__want_tail(p->perfmap, &ip, 1))
			return;
		p->perfmap_read = false;
	}
	if (!p->perfmap_read)
		update_perfmap(s, p);
	err = perfmap__lookup(p->perfmap, ip, &sym);
	/*
	 * Code compiled since the last read: the map only grows.  A burst of
	 * misses (unnamed addresses symbolized one after the other) rereads it
	 * once, not once per address.
	 */
	if (err == -ENOENT &&
	    monotime_ns() - p->perfmap_read_ns >= (p->perfmap_restarts ? PERFMAP_REWRITTEN_REREAD_NS :
						    PERFMAP_REREAD_NS)) {
		update_perfmap(s, p);
		err = perfmap__lookup(p->perfmap, ip, &sym);
	}
	if (err) {
		if (in_anon && !perfmap__count(p->perfmap) && p->perfmap_err == -ENOENT)
			out->miss = SYM_MISS_NO_PERFMAP;
		return;
	}
	out->kind = SYM_FRAME_JIT;
	out->source = SYM_SOURCE_PERF_MAP;
	out->system_name = intern(s, sym.raw);
	if (n->kind == V8NAME_JS || n->kind == V8NAME_SCRIPT)
		out->name = intern(s, *n->function ? n->function : "(anonymous)");
	else
		out->name = out->system_name;
	out->file = n->script && *n->script ? intern(s, n->script) : NULL;
	out->line = n->line;
	out->column = n->column;
	out->jit_tier = v8name_tier__str(n->tier);
	out->jit_kind = n->kind;
	out->symbol_offset = ip - sym.start;
	if (!out->name || !out->system_name) {
		out->name = out->system_name = NULL;
		return;
	}
	out->miss = SYM_OK;
}

bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);

	if (!p || !p->perfmap)
		return false;
	if (!p->perfmap_read)
		update_perfmap(s, p);
	return perfmap__count(p->perfmap) > 0 || p->perfmap_err != -ENOENT;
}

int symbolizer__want_jit(struct symbolizer *s, pid_t pid, const uint64_t *ips, size_t n)
{
	struct uproc *p = find_proc(s, pid);
	uint64_t *jit;
	size_t k = 0, nanon;
	int err;

	if (!p)
		return -ESRCH;
	if (!s->lazy_jit || !p->perfmap || !n)
		return 0;
	jit = malloc(n * sizeof(*jit));
	if (!jit)
		return -ENOMEM;
	/*
	 * What resolve_user() sends to the perf map: addresses in anonymous
	 * mappings first, then those in no mapping at all (JIT code mapped
	 * since the maps were read, or a frame-pointer walk's garbage: new
	 * ones every window, which must not make a map of hundreds of MB be
	 * read again from its start each time).
	 */
	for (size_t j = 0; j < n; j++) {
		size_t i = seg_pos(p, ips[j]);

		if (i < p->nr_segs && ips[j] >= p->segs[i].start &&
		    p->segs[i].map->kind == UMAP_ANON)
			jit[k++] = ips[j];
	}
	nanon = k;
	for (size_t j = 0; j < n; j++) {
		size_t i = seg_pos(p, ips[j]);

		if (i >= p->nr_segs || ips[j] < p->segs[i].start)
			jit[k++] = ips[j];
	}
	err = perfmap__want(p->perfmap, jit, nanon);
	if (!err)
		err = perfmap__want_tail(p->perfmap, jit + nanon, k - nanon);
	free(jit);
	/* the next resolve reads: from the start when the filter grew */
	if (!err && k)
		p->perfmap_read = false;
	return err;
}

int symbolizer__resolve_user(struct symbolizer *s, pid_t pid, uint64_t ip,
			     struct sym_frame *out)
{
	struct uproc *p = find_proc(s, pid);
	struct elf_sym sym;
	uint64_t vaddr;
	struct umap *m;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->miss = SYM_MISS_NO_MAPPING;
	if (!p)
		return -ESRCH;
	i = seg_pos(p, ip);
	if (i >= p->nr_segs || ip < p->segs[i].start) {
		/* JIT code mapped after the last maps snapshot */
		resolve_jit(s, p, ip, false, out);
		return 0;
	}
	m = p->segs[i].map;
	out->mapping = &m->pub;
	out->miss = umap_symbols(s, p, m);
	if (out->miss == SYM_MISS_ANON) {
		resolve_jit(s, p, ip, true, out);
		return 0;
	}
	if (out->miss != SYM_OK)
		return 0;

	out->miss = SYM_MISS_NOT_COVERED;
	if (elf_symtab__offset_to_vaddr(m->elf->st, ip - m->pub.start + m->pub.offset, &vaddr) ||
	    elf_symtab__lookup(m->elf->st, vaddr, &sym))
		return 0;
	out->name = sym.demangled;
	out->system_name = sym.name;
	out->symbol_offset = vaddr - sym.addr;
	out->miss = SYM_OK;
	out->source = SYM_SOURCE_ELF;
	return 0;
}

const char *sym_source__str(enum sym_source source)
{
	static const char *const names[] = {
		[SYM_SOURCE_NONE] = "",		[SYM_SOURCE_ELF] = "elf",
		[SYM_SOURCE_KALLSYMS] = "kallsyms", [SYM_SOURCE_PERF_MAP] = "perf-map",
		[SYM_SOURCE_CODE_LOG] = "code-log", [SYM_SOURCE_HEAP] = "heap",
	};

	return (unsigned int)source < sizeof(names) / sizeof(names[0]) ? names[source] : "";
}

int symbolizer__set_v8_layout(struct symbolizer *s, pid_t pid, const struct v8_layout *layout)
{
	struct uproc *p = find_proc(s, pid);

	if (!p)
		return -ESRCH;
	v8heap__free(p->heap);
	v8code__free(p->code);
	p->heap = layout ? v8heap__new(pid, layout) : NULL;
	p->code = NULL;
	if (layout && !p->heap)
		return -ENOMEM;
	/* a layout without code fields names functions, not what they inlined */
	if (layout && layout->code_alignment) {
		p->code = v8code__new(pid, layout);
		if (!p->code)
			return -ENOMEM;
		/*
		 * Where V8 kept positions, place pcs by the deoptimization data too
		 * and count where the two differ: every flagged capture checks
		 * what an unflagged one relies on.
		 */
		v8code__check_deopt(p->code, true);
	}
	return 0;
}

int symbolizer__note_v8_code(struct symbolizer *s, pid_t pid, uint64_t pc, uint64_t heap_address)
{
	struct uproc *p = find_proc(s, pid);
	int err;

	if (!p || !p->code)
		return p ? -ENOENT : -ESRCH;
	if (heap_address)
		v8code__set_cage(p->code, heap_address);
	err = v8code__note(p->code, pc);
	return err == -ENOMEM ? err : 0;
}

void symbolizer__v8_code_epoch(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);

	if (p && p->code)
		v8code__next_epoch(p->code);
}

int symbolizer__v8_inline_stack(struct symbolizer *s, pid_t pid, uint64_t pc,
				struct sym_inline *frames, size_t max, const char **tier,
				enum v8code_placement *placed)
{
	struct uproc *p = find_proc(s, pid);
	struct v8code_frame code[SYM_INLINE_MAX];
	struct v8code_where where = { 0 };
	int n;

	if (!p || !p->code || !p->heap)
		return p ? -ENOENT : -ESRCH;
	if (max > SYM_INLINE_MAX)
		max = SYM_INLINE_MAX;
	n = v8code__stack(p->code, pc, code, max, &where);
	if (n < 0)
		return n;
	if (placed)
		*placed = where.placed;
	for (int i = 0; i < n; i++) {
		struct v8heap_function fn;
		int err = v8heap__function(p->heap, code[i].sfi, &fn);

		if (err == -ENOMEM)
			return err;
		memset(&frames[i], 0, sizeof(frames[i]));
		frames[i].sfi = code[i].sfi;
		if (err) {
			/* an SFI the layout cannot read: the stack is not to be trusted */
			return -EINVAL;
		}
		frames[i].function = intern(s, *fn.name ? fn.name : "(anonymous)");
		frames[i].script = fn.script ? intern(s, fn.script) : NULL;
		if (!frames[i].function || (fn.script && !frames[i].script))
			return -ENOMEM;
		frames[i].fn_line = fn.line;
		frames[i].fn_column = fn.column;
		if (code[i].position >= 0 &&
		    !v8heap__position(p->heap, code[i].sfi, code[i].position, &frames[i].line,
				      &frames[i].column) && frames[i].line) {
			frames[i].positioned = true;
		} else {
			frames[i].line = fn.line;
			frames[i].column = fn.column;
		}
	}
	if (tier)
		*tier = v8name_tier__str(where.tier == V8CODE_MAGLEV ? V8NAME_TIER_MAGLEV :
									 V8NAME_TIER_TURBOFAN);
	return n;
}

void symbolizer__v8_code_stats(struct symbolizer *s, pid_t pid, struct v8code_stats *out)
{
	struct uproc *p = find_proc(s, pid);

	memset(out, 0, sizeof(*out));
	if (p && p->code)
		v8code__stats(p->code, out);
}

bool symbolizer__has_v8_layout(struct symbolizer *s, pid_t pid)
{
	struct uproc *p = find_proc(s, pid);

	return p && p->heap;
}

int symbolizer__resolve_v8_function(struct symbolizer *s, pid_t pid, uint64_t sfi,
				    bool interpreted, struct sym_frame *out)
{
	struct uproc *p = find_proc(s, pid);
	struct v8heap_function fn;
	char system[V8HEAP_NAME_MAX * 8 + 64];
	int err;

	memset(out, 0, sizeof(*out));
	out->miss = SYM_MISS_ANON;
	if (!p || !p->heap)
		return p ? -ENOENT : -ESRCH;
	err = v8heap__function(p->heap, sfi, &fn);
	if (err)
		return err;
	/*
	 * The perf map's shape, tier marker included, so that every reader
	 * of system names (cross-check, SVG, convert) takes it as it is: "~"
	 * for the interpreter; JIT code's tier is not read from the heap.
	 */
	snprintf(system, sizeof(system), "JS:%s%s %s:%u:%u", interpreted ? "~" : "", fn.name,
		 fn.script ? fn.script : "", fn.line, fn.column);
	out->kind = SYM_FRAME_JIT;
	out->jit_kind = V8NAME_JS;
	out->system_name = intern(s, system);
	out->name = intern(s, *fn.name ? fn.name : "(anonymous)");
	out->file = fn.script ? intern(s, fn.script) : NULL;
	if (!out->system_name || !out->name || (fn.script && !out->file))
		return -ENOMEM;
	out->line = fn.line;
	out->column = fn.column;
	out->jit_tier = interpreted ? v8name_tier__str(V8NAME_TIER_INTERPRETED) : "";
	out->miss = SYM_OK;
	out->source = SYM_SOURCE_HEAP;
	return 0;
}

int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out)
{
	const struct ksym *k;

	memset(out, 0, sizeof(*out));
	out->kind = SYM_FRAME_KERNEL;
	if (!s->ksyms_tried) {
		s->ksyms_tried = true;
		s->ksyms = ksyms__load(s->kallsyms_path);
		if (!s->ksyms) {
			int err = errno;

			add_note(s, s->kallsyms_path,
				 err == EPERM ? "addresses hidden (kernel.kptr_restrict)" :
				 err == ENODATA ? "no text symbols" : strerror(err));
		}
	}
	if (!s->ksyms) {
		out->miss = SYM_MISS_NO_KALLSYMS;
		return 0;
	}
	k = ksyms__find(s->ksyms, ip);
	if (!k) {
		out->miss = SYM_MISS_NOT_COVERED;
		return 0;
	}
	out->name = k->name;
	out->system_name = k->name;
	out->symbol_offset = ip - k->addr;
	out->miss = SYM_OK;
	out->source = SYM_SOURCE_KALLSYMS;
	return 0;
}

size_t symbolizer__notes(const struct symbolizer *s, const char *const **notes)
{
	if (notes)
		*notes = (const char *const *)s->notes;
	return s->nr_notes;
}
