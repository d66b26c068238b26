// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Folded stacks to and from pprof; see folded.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/folded.h"
#include "proto/profile_vocab.h"

/* ---- pprof → folded ------------------------------------------------------ */

struct folded_line {
	char *stack;
	int64_t value;
};

struct folded {
	struct folded_line *lines;
	size_t n, cap;
	struct index_table tab;		/* stack text -> lines[] */
	char *buf;			/* the stack being built */
	size_t len, buf_cap;
};

static bool folded_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(((const struct folded *)ctx)->lines[idx].stack, key);
}

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

static int buf_append(struct folded *fo, const char *s)
{
	size_t n = strlen(s);

	if (array_grow(&fo->buf, &fo->buf_cap, fo->len + n + 1))
		return -ENOMEM;
	memcpy(fo->buf + fo->len, s, n + 1);
	fo->len += n;
	return 0;
}

/* A frame's name in folded text and flame graphs: ';' and line breaks would split it. */
static int append_name(struct folded *fo, const struct pprof_frame *f)
{
	const char *name = f->name;
	char addr[24];
	size_t start = fo->len;

	if (!f->has_function) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, f->address);
		name = addr;
	} else if (!*name) {
		name = *f->system_name ? f->system_name : "[unknown]";
	}
	if (buf_append(fo, name))
		return -ENOMEM;
	for (size_t i = start; i < fo->len; i++) {
		if (fo->buf[i] == ';')
			fo->buf[i] = ':';
		else if (fo->buf[i] == '\n' || fo->buf[i] == '\r')
			fo->buf[i] = ' ';
	}
	return 0;
}

/* The folded text of a stack, root first, into fo->buf. */
static int stack_text(struct folded *fo, const struct pprof_stack *st)
{
	fo->len = 0;
	if (buf_append(fo, ""))
		return -ENOMEM;
	for (size_t i = st->n; i-- > 0;) {
		if (append_name(fo, st->frames[i]) || (i && buf_append(fo, ";")))
			return -ENOMEM;
	}
	return 0;
}

/* v added to the line of the stack in fo->buf. */
static int add_line(struct folded *fo, int64_t v)
{
	uint32_t hash = hash__fold32(hash__str(HASH_SEED, fo->buf));
	size_t slot;
	long idx;

	if (index_table__reserve(&fo->tab))
		return -ENOMEM;
	idx = index_table__lookup(&fo->tab, hash, folded_eq, fo, fo->buf, &slot);
	if (idx < 0) {
		char *copy = strdup(fo->buf);

		if (!copy || array_grow(&fo->lines, &fo->cap, fo->n + 1)) {
			free(copy);
			return -ENOMEM;
		}
		idx = (long)fo->n;
		fo->lines[fo->n++] = (struct folded_line){ copy, 0 };
		index_table__set(&fo->tab, slot, hash, (uint32_t)idx);
	}
	fo->lines[idx].value = (int64_t)((uint64_t)fo->lines[idx].value + (uint64_t)v);
	return 0;
}

static int write_lines(struct folded *fo, FILE *out)
{
	if (fo->n)
		qsort(fo->lines, fo->n, sizeof(*fo->lines), cmp_folded);
	for (size_t i = 0; i < fo->n; i++) {
		if (!fo->lines[i].value)
			continue;
		if (fprintf(out, "%s %" PRId64 "\n", fo->lines[i].stack, fo->lines[i].value) < 0)
			return -EIO;
	}
	return 0;
}

int folded__from_pprof(const struct pprof_profile *p, size_t sample_index, FILE *out)
{
	struct folded fo = { 0 };
	struct pprof_stack st = { 0 };
	int ret = 0;

	if (sample_index >= pprof_profile__sample_type_count(p))
		return -EINVAL;
	for (size_t s = 0; !ret && s < pprof_profile__sample_count(p); s++) {
		int64_t v = pprof_profile__value(p, s, sample_index);

		if (!v)
			continue;
		ret = pprof_profile__stack(p, s, &st);
		if (!ret)
			ret = stack_text(&fo, &st);
		if (!ret)
			ret = add_line(&fo, v);
	}
	if (!ret)
		ret = write_lines(&fo, out);
	for (size_t i = 0; i < fo.n; i++)
		free(fo.lines[i].stack);
	free(fo.lines);
	index_table__release(&fo.tab);
	pprof_stack__release(&st);
	free(fo.buf);
	return ret;
}

/* ---- folded → pprof ------------------------------------------------------ */

/*
 * Split "frames count" in place: the count into *v and the frames,
 * trailing blanks cut, as *frames_end.  0 for a line to skip (blank,
 * comment, zero count), 1 for a stack, -EINVAL.
 */
static int split_count(char *line, size_t lineno, char **frames_end, long long *v, char *err,
		       size_t errlen)
{
	char *end = line + strlen(line), *count, *numend;

	while (end > line && strchr(" \t\r", end[-1]))
		*--end = '\0';
	if (end == line || line[0] == '#')
		return 0;
	count = end;
	while (count > line && !strchr(" \t", count[-1]))
		count--;
	errno = 0;
	*v = strtoll(count, &numend, 10);
	if (count == line || numend != end || errno) {
		errmsg__set(err, errlen, "line %zu: no sample count at the end of the line",
			    lineno);
		return -EINVAL;
	}
	while (count > line && strchr(" \t", count[-1]))
		*--count = '\0';
	*frames_end = count;
	return *v ? 1 : 0;
}

/*
 * One line: 1 when it added a sample, 0 when it was skipped, or a
 * negative error.  locs is scratch the caller keeps between lines.
 */
static int folded_line(struct pprof_builder *b, char *line, size_t lineno, uint64_t **locs,
		       size_t *cap, char *err, size_t errlen)
{
	char *frames_end;
	size_t n = 0;
	int64_t value;
	long long v;
	int ret;

	ret = split_count(line, lineno, &frames_end, &v, err, errlen);
	if (ret <= 0)
		return ret;
	/* frames come root first; pprof wants the leaf first */
	for (char *f = frames_end; f > line;) {
		char *start = f;
		struct pprof_line pl = { 0 };

		while (start > line && start[-1] != ';')
			start--;
		if (start < f) {
			char saved = *f;

			*f = '\0';
			if (array_grow(locs, cap, n + 1))
				return -ENOMEM;
			pl.function_id = pprof_builder__function(b, start, start, NULL, 0);
			(*locs)[n] = pl.function_id ? pprof_builder__location(b, 0, 0, &pl, 1) : 0;
			*f = saved;
			if (!(*locs)[n++])
				return -ENOMEM;
		}
		f = start > line ? start - 1 : line;
	}
	if (!n) {
		errmsg__set(err, errlen, "line %zu: no frames before the count", lineno);
		return -EINVAL;
	}
	value = v;
	ret = pprof_builder__add_sample(b, *locs, n, &value, 1, NULL, 0);
	return ret ? ret : 1;
}

/* Every line of text into b; the number of stacks added, or a negative error. */
static long folded_lines(struct pprof_builder *b, const char *text, size_t len, char *err,
			 size_t errlen)
{
	uint64_t *locs = NULL;
	size_t cap = 0, lineno = 0;
	long stacks = 0;
	int ret = 0;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text) - pos : len - pos;
		char *line = strndup(text + pos, n);

		lineno++;
		if (!line) {
			ret = -ENOMEM;
			break;
		}
		pos += n + 1;
		ret = folded_line(b, line, lineno, &locs, &cap, err, errlen);
		free(line);
		if (ret < 0)
			break;
		stacks += ret;
		ret = 0;
	}
	free(locs);
	return ret ? ret : stacks;
}

int folded__to_pprof(const char *text, size_t len, struct pprof_builder **out, char *err,
		     size_t errlen)
{
	const char *nul = memchr(text, '\0', len);
	struct pprof_builder *b;
	long stacks;
	int ret = 0;

	*out = NULL;
	if (nul) {
		errmsg__set(err, errlen, "a NUL byte at offset %zu: not folded text",
			    (size_t)(nul - text));
		return -EINVAL;
	}
	b = pprof_builder__new();
	if (!b || pprof_builder__add_sample_type(b, SAMPLE_TYPE_SAMPLES, UNIT_COUNT) ||
	    pprof_builder__add_comment(b, "source: folded stacks")) {
		ret = -ENOMEM;
		goto out;
	}
	stacks = folded_lines(b, text, len, err, errlen);
	if (stacks < 0) {
		ret = (int)stacks;
	} else if (!stacks) {
		errmsg__set(err, errlen, "no \"frame;frame;... count\" lines");
		ret = -EINVAL;
	}
out:
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	if (ret) {
		pprof_builder__free(b);
		return ret;
	}
	*out = b;
	return 0;
}
