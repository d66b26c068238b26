/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8heap: names of JS functions read from a running V8's heap, with the
 * layout learnt for its binary (symbolize/v8layout.h), for frames that no
 * perf map or code log names (docs/design/js-frames.md).
 *
 * The sampler hands over a frame's SharedFunctionInfo (SFI) address; this
 * reads, from the target's memory (lib/procmem.h, read-only):
 *   SFI -> name, or ScopeInfo -> the function name among its words
 *   SFI -> Script -> name (the script's URL or module name)
 *   ScopeInfo start position + Script source -> line and column (1-based)
 * and checks every object's map (word or instance type) before trusting
 * it: an address that no longer holds an SFI (freed, moved, another
 * build's layout) is refused, never misread.  Only sequential strings are
 * read; a name in another representation is reported as unreadable.
 *
 * One v8heap per process.  Results are cached per SFI (SFIs do not move in
 * old space; docs/design/js-frames.md), and line tables per Script, at most
 * V8HEAP_LINES_MAX lines over all scripts (beyond, no line numbers); every string
 * handed out stays valid until v8heap__free().  Not thread-safe.
 *
 * Errors: negative errno (-EFAULT/-ESRCH: unreadable; -EINVAL: not what
 * the layout expects; -ENOMEM).  Nothing prints.
 */
#ifndef ISOPROF_SYMBOLIZE_V8HEAP_H
#define ISOPROF_SYMBOLIZE_V8HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/v8layout.h"

#define V8HEAP_NAME_MAX 1024		/* characters of a name read (V8 names are short) */
#define V8HEAP_SOURCE_MAX (64u << 20)	/* bytes of a script source read for line numbers */
#define V8HEAP_LINES_MAX (4u << 20)	/* line starts kept over all scripts (16 MiB) */

struct v8heap_function {
	const char *name;	/* UTF-8; "" for an anonymous function */
	const char *script;	/* the Script's name; NULL when it has none or it is unreadable */
	uint32_t line;		/* the function's start, 1-based; 0 when unknown */
	uint32_t column;
};

struct v8heap_stats {
	uint64_t lookups;	/* v8heap__function() calls */
	uint64_t named;		/* distinct SFIs named */
	uint64_t refused;	/* distinct SFIs refused (not an SFI, unreadable) */
	uint64_t reads;		/* field and source reads (strings' own not counted) */
	uint64_t bytes;		/* bytes those read */
};

struct v8heap;

/* Reader of pid's heap; the layout is copied.  NULL with errno (ENOMEM). */
struct v8heap *v8heap__new(pid_t pid, const struct v8_layout *layout);
void v8heap__free(struct v8heap *h);

/* The function of the SFI at sfi (untagged), cached. */
int v8heap__function(struct v8heap *h, uint64_t sfi, struct v8heap_function *out);

/*
 * Line and column (1-based; 0 when unknown) of a position (an offset in
 * the source) in the script of the function at sfi: where optimized code
 * is inside a function (symbolize/v8code.h).  Errors as v8heap__function().
 */
int v8heap__position(struct v8heap *h, uint64_t sfi, int64_t position, uint32_t *line,
		     uint32_t *column);

void v8heap__stats(const struct v8heap *h, struct v8heap_stats *out);

/*
 * Reading primitives, shared with the calibration that learns a layout
 * (user/v8/calibrate.c): they use only the fields they name.
 */

/* The object a tagged field holds, untagged; 0 for a Smi.  base: any
 * address inside the same pointer cage (compressed layouts). */
uint64_t v8heap__decompress(const struct v8_layout *l, uint64_t base, uint64_t word);

/* The tagged_size word at p, a copy of the target's memory (zero-extended). */
uint64_t v8heap__tagged(const struct v8_layout *l, const uint8_t *p);

/* A tagged_size word at addr (zero-extended). */
int v8heap__read_word(pid_t pid, const struct v8_layout *l, uint64_t addr, uint64_t *word);

/* A Smi's value, or false when word is not a Smi. */
bool v8heap__smi(const struct v8_layout *l, uint64_t word, int64_t *value);

/*
 * The sequential string at obj (untagged) into buf as UTF-8, NUL-terminated,
 * at most max characters (-E2BIG beyond); uses string_length, string_chars,
 * map_instance_type and the string type fields.  *one_byte tells which
 * encoding it had (may be NULL).
 */
int v8heap__read_string(pid_t pid, const struct v8_layout *l, uint64_t obj, char *buf,
			size_t buf_len, size_t max, bool *one_byte);

/* The instance type of the object at obj (untagged), through its map. */
int v8heap__instance_type(pid_t pid, const struct v8_layout *l, uint64_t obj, uint32_t *type);

#endif /* ISOPROF_SYMBOLIZE_V8HEAP_H */
