// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* perfmap: incremental reader of V8's /tmp/perf-PID.map; see perfmap.h. */
#include "lib/textscan.h"
#include "symbolize/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Reads are sized to what was appended, within these bounds: big reads for
 * the first load of a large file, and no buffer kept between reads (a host
 * tails hundreds of these files).
 */
#define TAIL_CHUNK_MIN (4 * 1024)
#define TAIL_CHUNK_MAX (1024 * 1024)

struct pm_entry {
	uint64_t start;
	uint64_t size;
	size_t name;		/* offset of the NUL-terminated name in names */
	uint32_t name_len;
	bool live;		/* visible at some address after the last index build */
};

/* A name split once, on first lookup, and kept until the map changes. */
struct pm_parsed {
	struct v8name name;
	char buf[];
};

struct perfmap {
	struct perfmap_tail tail;
	bool has_file;

	struct pm_entry *entries;
	size_t nr, cap;
	size_t nr_indexed;	/* entries[0..nr_indexed) are in segs */

	char *names;
	size_t names_len, names_cap;

	struct perfmap_span *segs;
	size_t nr_segs;
	size_t nr_live;

	struct pm_parsed **parsed;	/* per entry, filled on first lookup */
	size_t nr_parsed;		/* entries parsed[] has room for */
	size_t added;			/* entries added by the current call */

	uint64_t lines;
	size_t malformed;
	size_t first_malformed;
};

/* ---- newest-wins flattening ------------------------------------------ */

/* Max-heap of span indexes ordered by id: the newest active span is on top. */
static void heap_push(size_t *heap, size_t *n, const struct perfmap_span *in, size_t v)
{
	size_t i = (*n)++;

	while (i) {
		size_t parent = (i - 1) / 2;

		if (in[heap[parent]].id >= in[v].id)
			break;
		heap[i] = heap[parent];
		i = parent;
	}
	heap[i] = v;
}

static void heap_pop(size_t *heap, size_t *n, const struct perfmap_span *in)
{
	size_t i = 0, v = heap[--(*n)];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *n)
			break;
		if (c + 1 < *n && in[heap[c + 1]].id > in[heap[c]].id)
			c++;
		if (in[heap[c]].id <= in[v].id)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (*n)
		heap[i] = v;
}

int perfmap_spans__flatten(const struct perfmap_span *in, size_t n, struct perfmap_span **outp,
			   size_t *nr_out)
{
	struct perfmap_span *out;
	size_t *heap, nh = 0, p = 0, no = 0;
	uint64_t pos = 0;

	*outp = NULL;
	*nr_out = 0;
	if (!n)
		return 0;
	/* Each piece ends at a span's end or at a span's start: at most 2n of them. */
	out = malloc(2 * n * sizeof(*out));
	heap = malloc(n * sizeof(*heap));
	if (!out || !heap) {
		free(out);
		free(heap);
		return -ENOMEM;
	}

	while (p < n || nh) {
		const struct perfmap_span *top;
		uint64_t end;

		if (!nh)
			pos = in[p].start;
		while (p < n && in[p].start <= pos)
			heap_push(heap, &nh, in, p++);
		/* Spans that ended are dropped when they surface; only the top matters. */
		while (nh && in[heap[0]].end <= pos)
			heap_pop(heap, &nh, in);
		if (!nh)
			continue;
		top = &in[heap[0]];
		end = top->end;
		if (p < n && in[p].start < end)
			end = in[p].start;
		if (no && out[no - 1].id == top->id && out[no - 1].end == pos) {
			out[no - 1].end = end;
		} else {
			out[no].start = pos;
			out[no].end = end;
			out[no].id = top->id;
			no++;
		}
		pos = end;
	}
	free(heap);
	if (no < 2 * n) {
		struct perfmap_span *shrunk = realloc(out, no * sizeof(*out));

		if (shrunk)
			out = shrunk;
	}
	*outp = out;
	*nr_out = no;
	return 0;
}

ptrdiff_t perfmap_spans__find(const struct perfmap_span *spans, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	/* First span with start > addr; the one before it is the candidate. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (spans[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= spans[lo - 1].end)
		return -1;
	return (ptrdiff_t)(lo - 1);
}

/* ---- incremental line reader ----------------------------------------- */

int perfmap_tail__init(struct perfmap_tail *t, const char *path, size_t max_line)
{
	memset(t, 0, sizeof(*t));
	t->path = strdup(path);
	if (!t->path)
		return -ENOMEM;
	t->max_line = max_line ? max_line : PERFMAP_LINE_MAX;
	return 0;
}

void perfmap_tail__release(struct perfmap_tail *t)
{
	free(t->path);
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

static ssize_t pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			break;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/*
 * Was the file rewritten under us?  V8 opens the map with "w": a new
 * process that reuses the pid truncates the same inode and writes again,
 * possibly past our offset before we look.  The bytes just before the
 * offset then differ from what was read.
 */
static bool tail_rewritten(struct perfmap_tail *t, int fd, const struct stat *st)
{
	uint8_t now[sizeof(t->check)];

	if (!t->known)
		return false;
	if ((uint64_t)st->st_dev != t->dev || (uint64_t)st->st_ino != t->ino)
		return true;
	if ((uint64_t)st->st_size < t->offset)
		return true;
	if (!t->check_len)
		return false;
	if (pread_full(fd, now, t->check_len, t->offset - t->check_len) != (ssize_t)t->check_len)
		return true;
	return memcmp(now, t->check, t->check_len) != 0;
}

/*
 * First call: a buffer for the new bytes.  Later: a full buffer holding part
 * of one line (never more than max_line bytes: longer lines are skipped),
 * so doubling is bounded.
 */
static int tail_grow(struct perfmap_tail *t, uint64_t pending)
{
	size_t cap = t->cap * 2;
	char *buf;

	if (!t->cap) {
		cap = pending + 1 < TAIL_CHUNK_MAX ? (size_t)pending + 1 : TAIL_CHUNK_MAX;
		if (cap < TAIL_CHUNK_MIN)
			cap = TAIL_CHUNK_MIN;
	}
	buf = realloc(t->buf, cap);
	if (!buf)
		return -ENOMEM;
	t->buf = buf;
	t->cap = cap;
	return 0;
}

int perfmap_tail__read(struct perfmap_tail *t, const struct perfmap_tail_ops *ops, void *ctx)
{
	size_t have = 0, scan, start, nlines = 0;
	bool same_file = false;
	struct stat st;
	int fd, err = 0;
	ssize_t n;

	fd = open(t->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (tail_rewritten(t, fd, &st)) {
		t->offset = 0;
		t->skipping = false;
		t->check_len = 0;
		t->restarts++;
		err = ops->restart(ctx);
		if (err < 0)
			goto out;
	}
	t->known = true;
	t->dev = (uint64_t)st.st_dev;
	t->ino = (uint64_t)st.st_ino;
	same_file = true;

	for (;;) {
		if (have == t->cap) {
			uint64_t size = (uint64_t)st.st_size;

			err = tail_grow(t, size > t->offset ? size - t->offset : 0);
			if (err < 0)
				goto out;
		}
		n = pread(fd, t->buf + have, t->cap - have, (off_t)(t->offset + have));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		t->bytes_read += (uint64_t)n;
		scan = have;
		have += (size_t)n;
		start = 0;
		for (;;) {
			char *nl = memchr(t->buf + scan, '\n', have - scan);
			size_t e;

			if (!nl)
				break;
			e = (size_t)(nl - t->buf);
			if (t->skipping) {
				t->skipping = false;
			} else {
				if (e - start > t->max_line)
					err = ops->line(ctx, NULL, e - start);
				else
					err = ops->line(ctx, t->buf + start, e - start);
				if (err < 0) {
					t->offset += start;
					goto out;
				}
				nlines++;
			}
			start = scan = e + 1;
		}
		/* No newline in sight for too long: skip the line, do not buffer it. */
		if (!t->skipping && have - start > t->max_line) {
			err = ops->line(ctx, NULL, have - start);
			if (err < 0) {
				t->offset += start;
				goto out;
			}
			nlines++;
			t->skipping = true;
		}
		if (t->skipping)
			start = have;
		t->offset += start;
		memmove(t->buf, t->buf + start, have - start);
		have -= start;
	}

	err = nlines > INT_MAX ? INT_MAX : (int)nlines;
out:
	/* Also after an error part-way: the offset may have moved. */
	if (same_file) {
		t->check_len = t->offset < sizeof(t->check) ? (size_t)t->offset : sizeof(t->check);
		if (t->check_len && pread_full(fd, t->check, t->check_len,
					       t->offset - t->check_len) != (ssize_t)t->check_len)
			t->check_len = 0;
	}
	free(t->buf);
	t->buf = NULL;
	t->cap = 0;
	close(fd);
	return err;
}

/* ---- the map ----------------------------------------------------------- */


/* Hex with an optional "0x"; own parser, since lines are not NUL-terminated. */
static bool parse_hex(const char **pp, const char *end, uint64_t *out)
{
	if (end - *pp > 2 && (*pp)[0] == '0' && ((*pp)[1] == 'x' || (*pp)[1] == 'X'))
		*pp += 2;
	return textscan__hex(pp, end, out);
}

static void drop_parsed(struct perfmap *pm)
{
	size_t i;

	if (!pm->parsed)
		return;
	for (i = 0; i < pm->nr_parsed; i++)
		free(pm->parsed[i]);
	free(pm->parsed);
	pm->parsed = NULL;
	pm->nr_parsed = 0;
}

static void note_malformed(struct perfmap *pm)
{
	if (!pm->malformed++)
		pm->first_malformed = (size_t)pm->lines;
}

static int add_line(struct perfmap *pm, const char *line, size_t len)
{
	const char *p = line, *end = line + len;
	uint64_t start, size;
	struct pm_entry *e;
	size_t n;

	pm->lines++;
	if (line && !len)
		return 0;
	if (!line || memchr(line, '\0', len) || !parse_hex(&p, end, &start) || p >= end ||
	    *p++ != ' ' || !parse_hex(&p, end, &size) || p >= end || *p++ != ' ' || p == end ||
	    size > UINT64_MAX - start) {
		note_malformed(pm);
		return 0;
	}
	if (!size)
		return 0;
	n = (size_t)(end - p);

	if (pm->nr == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 1024;
		struct pm_entry *entries = realloc(pm->entries, cap * sizeof(*entries));

		if (!entries)
			return -ENOMEM;
		pm->entries = entries;
		pm->cap = cap;
	}
	if (pm->names_cap - pm->names_len < n + 1) {
		size_t cap = pm->names_cap ? pm->names_cap : 64 * 1024;
		char *names;

		while (cap - pm->names_len < n + 1)
			cap *= 2;
		names = realloc(pm->names, cap);
		if (!names)
			return -ENOMEM;
		pm->names = names;
		pm->names_cap = cap;
	}
	e = &pm->entries[pm->nr++];
	e->start = start;
	e->size = size;
	e->name = pm->names_len;
	e->name_len = (uint32_t)n;
	e->live = true;
	memcpy(pm->names + pm->names_len, p, n);
	pm->names[pm->names_len + n] = '\0';
	pm->names_len += n + 1;
	pm->added++;
	return 0;
}

static int span_cmp(const void *a, const void *b)
{
	const struct perfmap_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

/*
 * Drop dead entries and their names; entry order (age) is kept.  Failing
 * leaves everything as it was: compaction is only about memory.
 */
static int compact(struct perfmap *pm, size_t live_names)
{
	size_t *remap, r, w = 0, off = 0;
	char *names;

	remap = malloc(pm->nr * sizeof(*remap));
	names = malloc(live_names ? live_names : 1);
	if (!remap || !names) {
		free(remap);
		free(names);
		return -ENOMEM;
	}
	for (r = 0; r < pm->nr; r++) {
		struct pm_entry *e = &pm->entries[r];

		if (!e->live) {
			if (r < pm->nr_parsed) {
				free(pm->parsed[r]);
				pm->parsed[r] = NULL;
			}
			continue;
		}
		memcpy(names + off, pm->names + e->name, (size_t)e->name_len + 1);
		if (r < pm->nr_parsed) {
			struct pm_parsed *parsed = pm->parsed[r];

			pm->parsed[r] = NULL;
			pm->parsed[w] = parsed;
		}
		pm->entries[w] = *e;
		pm->entries[w].name = off;
		off += (size_t)e->name_len + 1;
		remap[r] = w++;
	}
	for (r = 0; r < pm->nr_segs; r++)
		pm->segs[r].id = remap[pm->segs[r].id];
	free(remap);
	free(pm->names);
	pm->names = names;
	pm->names_len = pm->names_cap = live_names;
	pm->nr = pm->nr_indexed = w;
	if (pm->cap > 1024 && pm->cap / 4 > pm->nr) {
		size_t cap = pm->nr * 2 > 1024 ? pm->nr * 2 : 1024;
		struct pm_entry *entries = realloc(pm->entries, cap * sizeof(*entries));

		if (entries) {
			pm->entries = entries;
			pm->cap = cap;
		}
	}
	return 0;
}

/*
 * Fold entries[nr_indexed..nr) into the index.  The old pieces stand for
 * the old entries (whatever they hid is hidden for good), so flattening
 * them with the new entries gives the same index as flattening everything.
 */
static int reindex(struct perfmap *pm)
{
	struct perfmap_span *in, *segs;
	size_t k = pm->nr - pm->nr_indexed, nr_in = 0, i, j, nr_segs;
	size_t dead = 0, dead_names = 0, live_names = 0;
	bool sorted = true;
	int err;

	if (!k)
		return 0;
	in = malloc((pm->nr_segs + k) * sizeof(*in));
	if (!in)
		return -ENOMEM;
	/* New spans at the tail of in, then merged with the old pieces in place. */
	for (i = 0; i < k; i++) {
		struct perfmap_span *s = &in[pm->nr_segs + i];
		const struct pm_entry *e = &pm->entries[pm->nr_indexed + i];

		s->start = e->start;
		s->end = e->start + e->size;
		s->id = pm->nr_indexed + i;
		if (i && s->start < s[-1].start)
			sorted = false;
	}
	if (!sorted)
		qsort(in + pm->nr_segs, k, sizeof(*in), span_cmp);
	i = 0;
	j = pm->nr_segs;
	while (i < pm->nr_segs || j < pm->nr_segs + k) {
		if (j == pm->nr_segs + k || (i < pm->nr_segs && pm->segs[i].start <= in[j].start))
			in[nr_in++] = pm->segs[i++];
		else
			in[nr_in++] = in[j++];
	}
	err = perfmap_spans__flatten(in, nr_in, &segs, &nr_segs);
	free(in);
	if (err < 0)
		return err;
	free(pm->segs);
	pm->segs = segs;
	pm->nr_segs = nr_segs;
	pm->nr_indexed = pm->nr;

	for (i = 0; i < pm->nr; i++)
		pm->entries[i].live = false;
	for (i = 0; i < nr_segs; i++)
		pm->entries[segs[i].id].live = true;
	for (i = 0; i < pm->nr; i++) {
		size_t bytes = (size_t)pm->entries[i].name_len + 1;

		if (pm->entries[i].live) {
			live_names += bytes;
		} else {
			dead++;
			dead_names += bytes;
		}
	}
	pm->nr_live = pm->nr - dead;
	if (dead * 2 > pm->nr || dead_names * 2 > pm->names_len)
		compact(pm, live_names);
	return 0;
}

static void clear(struct perfmap *pm)
{
	drop_parsed(pm);
	pm->nr = pm->nr_indexed = pm->nr_live = 0;
	pm->names_len = 0;
	free(pm->segs);
	pm->segs = NULL;
	pm->nr_segs = 0;
	pm->lines = 0;
	pm->malformed = 0;
	pm->first_malformed = 0;
	pm->added = 0;
}

static int tail_restart(void *ctx)
{
	clear(ctx);
	return 0;
}

static int tail_line(void *ctx, const char *line, size_t len)
{
	return add_line(ctx, line, len);
}

static const struct perfmap_tail_ops tail_ops = {
	.restart = tail_restart,
	.line = tail_line,
};

struct perfmap *perfmap__new(const char *path)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	if (path) {
		if (perfmap_tail__init(&pm->tail, path, PERFMAP_LINE_MAX) < 0) {
			free(pm);
			errno = ENOMEM;
			return NULL;
		}
		pm->has_file = true;
	}
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	drop_parsed(pm);
	if (pm->has_file)
		perfmap_tail__release(&pm->tail);
	free(pm->entries);
	free(pm->names);
	free(pm->segs);
	free(pm);
}

static int added(const struct perfmap *pm)
{
	return pm->added > INT_MAX ? INT_MAX : (int)pm->added;
}

int perfmap__update(struct perfmap *pm)
{
	int err, ierr;

	if (!pm->has_file)
		return -EINVAL;
	pm->added = 0;
	err = perfmap_tail__read(&pm->tail, &tail_ops, pm);
	/* Lines read before an error are kept: index them anyway. */
	ierr = reindex(pm);
	if (err < 0)
		return err;
	if (ierr < 0)
		return ierr;
	return added(pm);
}

int perfmap__parse_buf(struct perfmap *pm, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	int err = 0;

	pm->added = 0;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if ((size_t)(nl - p) > PERFMAP_LINE_MAX)
			err = add_line(pm, NULL, 0);
		else
			err = add_line(pm, p, (size_t)(nl - p));
		if (err < 0)
			break;
		p = nl + 1;
	}
	if (reindex(pm) < 0 || err < 0)
		return -ENOMEM;
	return added(pm);
}

int perfmap__lookup(struct perfmap *pm, uint64_t addr, struct perfmap_sym *out)
{
	ptrdiff_t i = perfmap_spans__find(pm->segs, pm->nr_segs, addr);
	const struct pm_entry *e;
	struct pm_parsed *parsed;
	size_t id;

	if (i < 0)
		return -ENOENT;
	id = pm->segs[i].id;
	e = &pm->entries[id];
	if (pm->nr_parsed < pm->nr) {
		struct pm_parsed **grown = realloc(pm->parsed, pm->nr * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		memset(grown + pm->nr_parsed, 0, (pm->nr - pm->nr_parsed) * sizeof(*grown));
		pm->parsed = grown;
		pm->nr_parsed = pm->nr;
	}
	parsed = pm->parsed[id];
	if (!parsed) {
		size_t size = v8name__buf_size(e->name_len);

		parsed = malloc(sizeof(*parsed) + size);
		if (!parsed)
			return -ENOMEM;
		v8name__parse(pm->names + e->name, e->name_len, &parsed->name, parsed->buf, size);
		pm->parsed[id] = parsed;
	}
	out->start = e->start;
	out->size = e->size;
	out->raw = pm->names + e->name;
	out->name = parsed->name;
	return 0;
}

size_t perfmap__count(const struct perfmap *pm)
{
	return pm->nr_live;
}

size_t perfmap__malformed(const struct perfmap *pm)
{
	return pm->malformed;
}

size_t perfmap__first_malformed_line(const struct perfmap *pm)
{
	return pm->first_malformed;
}

void perfmap__stats(const struct perfmap *pm, struct perfmap_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->entries = pm->nr_live;
	st->segments = pm->nr_segs;
	st->lines = pm->lines;
	st->malformed = pm->malformed;
	st->first_malformed_line = pm->first_malformed;
	st->mem_bytes = pm->cap * sizeof(*pm->entries) + pm->names_cap +
			pm->nr_segs * sizeof(*pm->segs) + sizeof(*pm);
	if (pm->has_file) {
		st->offset = pm->tail.offset;
		st->bytes_read = pm->tail.bytes_read;
		st->restarts = pm->tail.restarts;
		st->mem_bytes += pm->tail.cap;
	}
}

/* ---- where the map is ---------------------------------------------------- */

static int read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			return (int)n;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (int)len;
}

/* The last value of "NSpid:\t4781\t12\n": the pid in the innermost namespace. */
static long nspid_of(const char *status, long pid)
{
	const char *p = strstr(status, "\nNSpid:");
	long v = pid, cur;
	char *end;

	if (!p)
		return pid;	/* kernels before 4.1 have no NSpid */
	p += 7;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		errno = 0;
		cur = strtol(p, &end, 10);
		if (errno || cur <= 0)
			return pid;
		v = cur;
		p = end;
	}
	return v;
}

int perfmap__path_for_pid(const char *proc_root, pid_t pid, char *buf, size_t size)
{
	char path[PATH_MAX], status[4096], self_ns[64], ns[64];
	ssize_t a, b;
	bool other_ns;
	long nspid;
	int n;

	if (!proc_root)
		proc_root = "/proc";
	if (pid <= 0)
		return -ESRCH;
	if (snprintf(path, sizeof(path), "%s/%d/status", proc_root, (int)pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* NSpid is in the first 4 KiB of status on every kernel seen. */
	if (read_small(path, status + 1, sizeof(status) - 1) < 0)
		return -ESRCH;
	status[0] = '\n';
	nspid = nspid_of(status, pid);

	/* Unreadable namespace links: assume ours (then /proc/PID/root would fail too). */
	snprintf(path, sizeof(path), "%s/self/ns/mnt", proc_root);
	a = readlink(path, self_ns, sizeof(self_ns));
	snprintf(path, sizeof(path), "%s/%d/ns/mnt", proc_root, (int)pid);
	b = readlink(path, ns, sizeof(ns));
	other_ns = a > 0 && b > 0 && (a != b || memcmp(self_ns, ns, (size_t)a));

	if (nspid != pid || other_ns)
		n = snprintf(buf, size, "%s/%d/root/tmp/perf-%ld.map", proc_root, (int)pid, nspid);
	else
		n = snprintf(buf, size, "/tmp/perf-%d.map", (int)pid);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}
