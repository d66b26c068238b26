// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* version_labels: the --version-labels file; see version_labels.h. */
#include "user/attribute/version_labels.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/safe_open.h"
#include "lib/textscan.h"
#include "user/attribute/isolates.h"

#define LABELS_LINE_MAX 8192
#define LABELS_SCRIPT_MAX 4096

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' || c == '\n';
}

/* \\ and \xNN in place; -EINVAL on a bad escape or a NUL. */
static int unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (*s != '\\') {
			*w++ = *s++;
			continue;
		}
		if (s[1] == '\\') {
			*w++ = '\\';
			s += 2;
		} else if (s[1] == 'x' && textscan__hex_digit(s[2]) >= 0 &&
			   textscan__hex_digit(s[3]) >= 0) {
			int v = textscan__hex_digit(s[2]) * 16 + textscan__hex_digit(s[3]);

			if (!v)
				return -EINVAL;
			*w++ = (char)v;
			s += 4;
		} else {
			return -EINVAL;
		}
	}
	*w = '\0';
	return 0;
}

static int __attribute__((format(printf, 4, 5)))
labels_error(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
	char msg[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	errmsg__set(err, errlen, "line %zu: %s", line, msg);
	return -EINVAL;
}

/* Up to 4 blank-separated fields of buf, cut in place, up to a '#'; how many. */
static size_t split_fields(char *buf, char *f[4])
{
	char *p = buf;
	size_t nf = 0;

	while (nf < 4) {
		while (is_blank(*p))
			p++;
		if (!*p || *p == '#')
			break;
		f[nf++] = p;
		while (*p && !is_blank(*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
	return nf;
}

static int check_version_id(const char *id, struct version_label *l, size_t line, char *err,
			    size_t errlen)
{
	size_t len = strlen(id), i;

	if (len < VERSION_LABEL_MIN_ID || len > SHA256_HEX_LEN - 1)
		goto bad;
	for (i = 0; i < len; i++) {
		if (textscan__hex_digit(id[i]) < 0)
			goto bad;
		l->prefix[i] = (char)tolower((unsigned char)id[i]);
	}
	l->prefix[len] = '\0';
	l->plen = len;
	return 0;
bad:
	return labels_error(err, errlen, line, "version id '%.80s' is not 12 to 64 hex digits", id);
}

static int check_label(const char *label, size_t line, char *err, size_t errlen)
{
	size_t len = strlen(label), i;

	if (len > VERSION_LABEL_MAX)
		return labels_error(err, errlen, line, "label longer than %d characters",
				    VERSION_LABEL_MAX);
	for (i = 0; i < len; i++)
		if ((unsigned char)label[i] < 0x21 || (unsigned char)label[i] > 0x7e)
			return labels_error(err, errlen, line,
					    "label '%.80s' has a non-printable or non-ASCII byte",
					    label);
	if (!strcmp(label, ISOLATE_VERSION_LATEST) || !strcmp(label, ISOLATE_VERSION_UNKNOWN))
		return labels_error(err, errlen, line, "label '%s' is reserved", label);
	return 0;
}

/* One line into l (0), nothing to use (1), or an error. */
static int parse_line(char *buf, size_t line, version_labels_intern_fn intern, void *ctx,
		      struct version_label *l, char *err, size_t errlen)
{
	size_t nf;
	char *f[4];
	int rc;

	nf = split_fields(buf, f);
	if (!nf)
		return 1;
	if (nf != 3)
		return labels_error(err, errlen, line, "expected SCRIPT VERSION_ID LABEL, found %s",
				    nf < 3 ? "fewer fields" : "more fields");
	if (strlen(f[0]) > LABELS_SCRIPT_MAX)
		return labels_error(err, errlen, line, "script name longer than %d bytes",
				    LABELS_SCRIPT_MAX);
	if (unescape(f[0]))
		return labels_error(err, errlen, line,
				    "bad escape in script name '%.200s' (\\\\ or \\xNN)", f[0]);
	rc = check_version_id(f[1], l, line, err, errlen);
	if (!rc)
		rc = check_label(f[2], line, err, errlen);
	if (rc)
		return rc;
	l->script = intern(ctx, f[0]);
	l->label = intern(ctx, f[2]);
	if (!l->script || !l->label)
		return -ENOMEM;
	l->line = line;
	return 0;
}

static int cmp_label(const void *a, const void *b)
{
	const struct version_label *x = a, *y = b;
	int c = strcmp(x->script, y->script);

	if (c)
		return c;
	c = strcmp(x->prefix, y->prefix);
	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * Sort, and keep one of each (script, prefix): fine when the labels agree,
 * else the later line of the first such pair is the error.
 */
static int sort_unique(struct version_labels *vl, char *err, size_t errlen)
{
	struct version_label dup = { 0 }, dup_first = { 0 };
	size_t i, k;

	if (!vl->nr)
		return 0;
	qsort(vl->v, vl->nr, sizeof(*vl->v), cmp_label);
	for (i = 1, k = 1; i < vl->nr; i++) {
		const struct version_label *a = &vl->v[k - 1], *b = &vl->v[i];

		if (strcmp(a->script, b->script) || strcmp(a->prefix, b->prefix)) {
			vl->v[k++] = *b;
			continue;
		}
		if (strcmp(a->label, b->label) && (!dup.line || b->line < dup.line)) {
			dup = *b;
			dup_first = *a;
		}
	}
	if (dup.line)
		return labels_error(err, errlen, dup.line,
				    "%.200s %s: label '%s' but line %zu says '%s'", dup.script,
				    dup.prefix, dup.label, dup_first.line, dup_first.label);
	vl->nr = k;
	return 0;
}

/* The lines of f into vl, unsorted; the count of lines read in *line. */
static int read_lines(FILE *f, version_labels_intern_fn intern, void *ctx,
		      struct version_labels *vl, size_t *line, char *err, size_t errlen)
{
	size_t cap = 0, bufcap = 0;
	char *buf = NULL;
	ssize_t len;
	int rc = 0, used;

	for (;;) {
		errno = 0;
		len = getline(&buf, &bufcap, f);
		if (len < 0) {
			if (errno == ENOMEM)
				rc = -ENOMEM;
			break;
		}
		++*line;
		if (len > LABELS_LINE_MAX) {
			rc = labels_error(err, errlen, *line, "longer than %d bytes",
					  LABELS_LINE_MAX);
			break;
		}
		if ((size_t)len != strlen(buf)) {
			rc = labels_error(err, errlen, *line, "NUL byte");
			break;
		}
		if (array_grow(&vl->v, &cap, vl->nr + 1)) {
			rc = -ENOMEM;
			break;
		}
		used = parse_line(buf, *line, intern, ctx, &vl->v[vl->nr], err, errlen);
		if (used < 0) {
			rc = used;
			break;
		}
		if (!used)
			vl->nr++;
	}
	free(buf);
	return rc;
}

int version_labels__read(FILE *f, version_labels_intern_fn intern, void *ctx,
			 struct version_labels *out, char *err, size_t errlen)
{
	size_t line = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	rc = read_lines(f, intern, ctx, out, &line, err, errlen);
	if (!rc && ferror(f)) {
		rc = -EIO;
		errmsg__set(err, errlen, "line %zu: read error", line + 1);
	}
	if (!rc)
		rc = sort_unique(out, err, errlen);
	if (rc)
		version_labels__release(out);
	return rc;
}

int version_labels__load(const char *path, version_labels_intern_fn intern, void *ctx,
			 struct version_labels *out, char *err, size_t errlen)
{
	/*
	 * The operator names this file (a symlink to it is fine), but it may
	 * sit where others write: a FIFO or device must not block us, and a
	 * huge file is refused before it is read.
	 */
	static const struct safe_open_opts opts = { .max_bytes = VERSION_LABELS_MAX_BYTES };
	struct safe_open_info info;
	FILE *f;
	int fd, rc;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		errmsg__set(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = safe_open__check_fd(fd, &opts, &info);
	if (rc) {
		close(fd);
		errmsg__set(err, errlen, "%s", info.why);
		return rc;
	}
	f = fdopen(fd, "r");
	if (!f) {
		rc = -errno;
		close(fd);
		errmsg__set(err, errlen, "%s", strerror(-rc));
		return rc;
	}
	rc = version_labels__read(f, intern, ctx, out, err, errlen);
	fclose(f);
	return rc;
}

void version_labels__release(struct version_labels *vl)
{
	free(vl->v);
	memset(vl, 0, sizeof(*vl));
}

static int key_cmp(const struct version_label *l, const char *script, const char *full)
{
	int c = strcmp(l->script, script);

	return c ? c : memcmp(l->prefix, full, VERSION_LABEL_MIN_ID);
}

/* The best label under key script for full into *best. */
static void best_for(const struct version_labels *vl, const char *script, const char *full,
		     const struct version_label **best)
{
	size_t lo = 0, hi = vl->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (key_cmp(&vl->v[mid], script, full) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < vl->nr && !key_cmp(&vl->v[lo], script, full); lo++) {
		const struct version_label *l = &vl->v[lo];

		if (strncmp(full, l->prefix, l->plen))
			continue;
		if (!*best || l->plen > (*best)->plen ||
		    (l->plen == (*best)->plen && l->line < (*best)->line))
			*best = l;
	}
}

void version_labels__best(const struct version_labels *vl, const char *name, const char *full,
			  const struct version_label **best)
{
	const char *p;

	best_for(vl, name, full, best);
	for (p = strchr(name, '/'); p; p = strchr(p + 1, '/'))
		if (p[1])
			best_for(vl, p + 1, full, best);
}

bool version_labels__has(const struct version_labels *vl, const char *label)
{
	size_t i;

	for (i = 0; i < vl->nr; i++)
		if (!strcmp(vl->v[i].label, label))
			return true;
	return false;
}
