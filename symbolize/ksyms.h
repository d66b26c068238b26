/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * ksyms: kernel text symbols from /proc/kallsyms.
 *
 * Lines look like "ffffffff81000000 T _stext" or, for a module,
 * "ffffffffc0a01000 t foo_init\t[foo]".  Text symbols (types t, T, w, W)
 * are kept, from the kernel image and from modules.  kallsyms gives no
 * sizes, so a symbol covers its address up to the next symbol of any type
 * (data symbols and end markers such as _etext and _einittext bound the
 * text before them).  The last symbol of a module, or of the whole table,
 * covers at most KSYMS_TAIL_MAX bytes: past that the address is more likely
 * in a gap between modules than in a function that long.
 *
 * When kptr_restrict hides addresses every address reads as zero; that is
 * reported as unavailable (errno EPERM), not as a table in which every
 * address resolves to one symbol.
 *
 * Ownership: strings and entries stay valid until ksyms__free().
 * Constructors return NULL and set errno.
 */
#ifndef ISOPROF_SYMBOLIZE_KSYMS_H
#define ISOPROF_SYMBOLIZE_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#define KSYMS_TAIL_MAX (64 * 1024)

struct ksym {
	uint64_t addr;
	uint64_t end;		/* exclusive; see above */
	const char *name;
	const char *module;	/* "foo" for "[foo]"; NULL for the kernel image */
};

struct ksyms;

/*
 * Parse kallsyms text of len bytes (need not be NUL-terminated).  errno:
 * EPERM when every address is zero (kptr_restrict), ENODATA when there is
 * no text symbol (empty input included), ENOMEM.
 */
struct ksyms *ksyms__parse(const char *buf, size_t len);

/* Read and parse path (NULL means "/proc/kallsyms"); errno as above or from open/read. */
struct ksyms *ksyms__load(const char *path);

void ksyms__free(struct ksyms *ks);

size_t ksyms__count(const struct ksyms *ks);

/* The i-th symbol in address order; NULL when out of range. */
const struct ksym *ksyms__entry(const struct ksyms *ks, size_t i);

/* Lines skipped as malformed. */
size_t ksyms__malformed(const struct ksyms *ks);

/* The symbol covering addr, or NULL. */
const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr);

#endif /* ISOPROF_SYMBOLIZE_KSYMS_H */
