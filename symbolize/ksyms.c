// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* ksyms: parse /proc/kallsyms; see ksyms.h for the contract. */
#include "symbolize/ksyms.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fileio.h"
#include "lib/textscan.h"

struct ksyms {
	struct ksym *syms;
	size_t nr;
	size_t nr_malformed;
	char *text;		/* the input, cut into NUL-terminated names */
};

/* A parsed line; data symbols are kept until the text ends are known. */
struct kline {
	uint64_t addr;
	const char *name;
	const char *module;
	uint32_t order;		/* line index, for a stable sort */
	uint8_t rank;		/* 0: boundary only; higher is a better name */
	uint8_t underscores;
};

static bool is_end_marker(const char *name)
{
	/* Linker-script symbols typed T that mark where text stops. */
	return !strcmp(name, "_etext") || !strcmp(name, "_einittext") ||
	       !strcmp(name, "_end");
}

static uint8_t type_rank(char type)
{
	switch (type) {
	case 'T':
		return 3;
	case 'W':
	case 'w':
		return 2;
	case 't':
		return 1;
	default:
		return 0;
	}
}

/*
 * Parse line [p, end), which parse_text() may modify: names are cut in
 * place.  Returns false for a malformed line.
 */
static bool parse_line(char *p, char *end, struct kline *kl)
{
	const char *digits = p;
	uint64_t addr;
	char *name, *q;
	char type;

	if (memchr(p, '\0', (size_t)(end - p)) || !textscan__hex(&digits, end, &addr))
		return false;
	p += digits - p;
	/* The last byte of the address space cannot start a symbol that covers it. */
	if (addr == UINT64_MAX || end - p < 4 || p[0] != ' ' || p[2] != ' ')
		return false;
	type = p[1];
	name = p + 3;
	for (q = name; q < end && *q != '\t' && *q != ' '; q++)
		;
	if (q == name)
		return false;

	kl->module = NULL;
	if (q < end) {
		char *mod = q + 1, *close;

		/* "\t[mod]", possibly followed by more we do not need */
		if (mod >= end || *mod != '[')
			return false;
		close = memchr(mod, ']', (size_t)(end - mod));
		if (!close || close == mod + 1)
			return false;
		*close = '\0';
		kl->module = mod + 1;
	}
	*q = '\0';

	kl->addr = addr;
	kl->name = name;
	kl->rank = is_end_marker(name) ? 0 : type_rank(type);
	kl->underscores = 0;
	while (name[kl->underscores] == '_' && kl->underscores < 255)
		kl->underscores++;
	return true;
}

static int kline_cmp(const void *a, const void *b)
{
	const struct kline *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Best name at an address first: "T foo" over "t __pi_foo". */
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	if (x->underscores != y->underscores)
		return x->underscores < y->underscores ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return 0;
}

static bool same_group(const struct kline *a, const struct kline *b)
{
	if (!a->module || !b->module)
		return !a->module && !b->module;
	return !strcmp(a->module, b->module);
}

/* Takes ownership of text (len bytes plus a NUL) in every case. */
static struct ksyms *parse_text(char *text, size_t len)
{
	char *p, *end = text + len, *eol;
	struct kline *lines = NULL;
	size_t nlines = 1, nr = 0, i, j;
	bool all_zero = true;
	struct ksyms *ks;

	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	ks->text = text;

	for (p = text; (eol = memchr(p, '\n', (size_t)(end - p))); p = eol + 1)
		nlines++;
	if (nlines > UINT32_MAX)
		goto nodata;
	lines = calloc(nlines, sizeof(*lines));
	if (!lines)
		goto nomem;

	for (p = text; p < end; p = eol + 1) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (!eol)
			eol = end;
		if (eol == p)
			continue;
		if (!parse_line(p, eol, &lines[nr])) {
			ks->nr_malformed++;
			continue;
		}
		lines[nr].order = (uint32_t)nr;
		if (lines[nr].addr)
			all_zero = false;
		nr++;
	}
	if (nr && all_zero) {
		free(lines);
		ksyms__free(ks);
		errno = EPERM;
		return NULL;
	}

	qsort(lines, nr, sizeof(*lines), kline_cmp);

	ks->syms = calloc(nr ? nr : 1, sizeof(*ks->syms));
	if (!ks->syms)
		goto nomem;
	for (i = 0; i < nr; i = j) {
		const struct kline *kl = &lines[i];
		struct ksym *s;

		/* lines[i] is the best of its address; skip the aliases. */
		for (j = i + 1; j < nr && lines[j].addr == kl->addr; j++)
			;
		if (!kl->rank)
			continue;
		s = &ks->syms[ks->nr++];
		s->addr = kl->addr;
		s->name = kl->name;
		s->module = kl->module;
		if (j < nr && same_group(kl, &lines[j]))
			s->end = lines[j].addr;
		else if (j < nr && lines[j].addr - kl->addr < KSYMS_TAIL_MAX)
			s->end = lines[j].addr;
		else if (kl->addr > UINT64_MAX - KSYMS_TAIL_MAX)
			s->end = UINT64_MAX;
		else
			s->end = kl->addr + KSYMS_TAIL_MAX;
	}
	free(lines);
	if (!ks->nr) {
		ksyms__free(ks);
		errno = ENODATA;
		return NULL;
	}
	return ks;

nodata:
	free(lines);
	ksyms__free(ks);
	errno = ENODATA;
	return NULL;
nomem:
	free(lines);
	ksyms__free(ks);
	errno = ENOMEM;
	return NULL;
}

struct ksyms *ksyms__parse(const char *buf, size_t len)
{
	char *text;

	if (len == SIZE_MAX) {
		errno = ENOMEM;
		return NULL;
	}
	text = malloc(len + 1);
	if (!text)
		return NULL;
	if (len)
		memcpy(text, buf, len);
	text[len] = '\0';
	return parse_text(text, len);
}

struct ksyms *ksyms__load(const char *path)
{
	uint8_t *text;
	size_t len;
	int err;

	/* kallsyms reports size 0: the size is no limit, read to EOF. */
	err = fileio__read_all(path ? path : "/proc/kallsyms", 0, &text, &len);
	if (err < 0) {
		errno = -err;
		return NULL;
	}
	return parse_text((char *)text, len);
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->text);
	free(ks);
}

size_t ksyms__count(const struct ksyms *ks)
{
	return ks->nr;
}

const struct ksym *ksyms__entry(const struct ksyms *ks, size_t i)
{
	return i < ks->nr ? &ks->syms[i] : NULL;
}

size_t ksyms__malformed(const struct ksyms *ks)
{
	return ks->nr_malformed;
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= ks->syms[lo - 1].end)
		return NULL;
	return &ks->syms[lo - 1];
}
