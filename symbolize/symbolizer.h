/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * symbolizer: the one entry point the rest of isoprof uses to turn sampled
 * addresses into names.
 *
 * - User addresses: per tracked process, a snapshot of /proc/PID/maps (kept
 *   after the process exits, so late symbolization still works), PIE and
 *   shared-library load bias from the ELF program headers, ELF .symtab then
 *   .dynsym, C++ names demangled.  ELF symbol tables are cached per build-id
 *   (per path+size+mtime when a file has no build-id), so a binary mapped by
 *   many processes, or re-tracked, is read once.
 * - JIT code (anonymous executable memory, or no mapping at all): the V8
 *   perf map of the process (/tmp/perf-PID.map, found through the process's
 *   own mount and pid namespace), read incrementally; the newest entry for
 *   an address wins.  Its path is fixed when tracking starts, so frames of a
 *   process that has exited still resolve.
 * - Kernel addresses: /proc/kallsyms, loaded on first use.
 *
 * Files a process names are opened through lib/safe_open.h: its perf map
 * only when it owns it (not a FIFO, symlink, or a file of anyone else's,
 * root's included), within SAFE_OPEN_PERFMAP_MAX and the read budget;
 * mapped files only when they are the mapped file (device and inode),
 * found through /proc/PID/map_files/ or inside the process's root, never
 * by the path in our own mount namespace unless the process shares it.
 * A refused file is a note naming it and why.  A perf map found rewritten
 * is reread for missed addresses at most once a second.
 *
 * Ownership: every string and struct pointer handed out stays valid until
 * symbolizer__free().  Not thread-safe: one thread uses a symbolizer.
 * Errors: negative errno.  Nothing here prints; problems with a file
 * (truncated ELF, not an ELF, unreadable) are kept as notes that the caller
 * can report (symbolizer__notes()).
 */
#ifndef ISOPROF_SYMBOLIZE_SYMBOLIZER_H
#define ISOPROF_SYMBOLIZE_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize/v8code.h"

/* Why an address has no name; a user can see what to fix. */
enum sym_miss {
	SYM_OK = 0,
	SYM_MISS_NO_MAPPING,	/* address in no known mapping of the process */
	SYM_MISS_ANON,		/* anonymous executable memory (JIT code) */
	SYM_MISS_NO_SYMBOLS,	/* ELF has neither .symtab nor .dynsym (stripped) */
	SYM_MISS_NOT_COVERED,	/* ELF read, but no symbol covers the address */
	SYM_MISS_BAD_FILE,	/* mapped file missing, unreadable, not ELF, truncated */
	SYM_MISS_NO_KALLSYMS,	/* /proc/kallsyms unreadable or addresses hidden */
	SYM_MISS_NO_PERFMAP,	/* JIT code, and the process has no perf map */
};

enum sym_frame_kind {
	SYM_FRAME_NATIVE = 0,	/* ELF code (or unresolved user address) */
	SYM_FRAME_KERNEL,
	SYM_FRAME_JIT,		/* named by the V8 perf map */
};

/* Where a frame's name came from: one record for every kind of frame. */
enum sym_source {
	SYM_SOURCE_NONE = 0,	/* unresolved */
	SYM_SOURCE_ELF,		/* .symtab / .dynsym */
	SYM_SOURCE_KALLSYMS,
	SYM_SOURCE_PERF_MAP,	/* V8's /tmp/perf-PID.map */
	SYM_SOURCE_CODE_LOG,	/* V8's code log (set by the caller that reads it) */
	SYM_SOURCE_HEAP,	/* V8's heap: the frame's SharedFunctionInfo */
};

const char *sym_miss__str(enum sym_miss miss);
/* "elf", "kallsyms", "perf-map", "code-log", "heap", "" */
const char *sym_source__str(enum sym_source source);

/* One executable mapping of a tracked process. */
struct sym_mapping {
	unsigned int id;	/* >= 1, unique within the symbolizer */
	uint64_t start;		/* memory_start */
	uint64_t limit;		/* memory_limit (exclusive) */
	uint64_t offset;	/* file offset of start */
	const char *path;	/* file path, "[vdso]", "[anon]" ... never NULL */
	const char *build_id;	/* lowercase hex, "" when none or unreadable */
};

struct sym_frame {
	enum sym_frame_kind kind;
	const char *name;	  /* demangled (C++) or plain name; NULL if unresolved;
				   * JS: the function, "(anonymous)" when it has none */
	const char *system_name;  /* symbol as in the ELF (mangled), or the raw perf map
				   * name ("JS:*fib w.js:1:13"); NULL if unresolved */
	const char *file;	  /* source file (JS: the script) when known; NULL otherwise */
	uint32_t line;		  /* 0 when unknown */
	uint32_t column;	  /* 0 when unknown */
	const char *jit_tier;	  /* JIT: "interpreted", "baseline", "maglev", "turbofan", "" */
	int jit_kind;		  /* JIT: enum v8name_kind */
	uint64_t symbol_offset;	  /* ip - symbol start, when resolved */
	const struct sym_mapping *mapping; /* NULL for kernel frames and unmapped ips */
	enum sym_miss miss;
	enum sym_source source;	  /* where name came from */
};

struct read_budget;

struct symbolizer_opts {
	const char *proc_root;	   /* default "/proc" (tests may point elsewhere) */
	const char *kallsyms_path; /* default "/proc/kallsyms" */
	struct read_budget *budget; /* charged for perf map reads; NULL: none (not owned) */
	/*
	 * Read perf maps for the addresses asked for only
	 * (symbolizer__want_jit()), in one pass when the first of them is
	 * resolved; preload and refresh leave them alone.  A capture that
	 * symbolizes after its window sets it: the map of a host holds
	 * everything it ever compiled (hundreds of MB at a thousand isolates).
	 * The map is opened when the process is tracked and that file is the
	 * one read (perfmap__hold()): one descriptor per process.
	 */
	bool lazy_jit;
};

struct symbolizer *symbolizer__new(const struct symbolizer_opts *opts);
void symbolizer__free(struct symbolizer *s);

/*
 * Start tracking a process: snapshot its executable mappings.  -ENOENT/-ESRCH
 * when it does not exist, -EACCES when its maps cannot be read.
 */
int symbolizer__track(struct symbolizer *s, pid_t pid);
/* Forget a process (gone: continuous lets it go); its frames resolve no more. */
void symbolizer__untrack(struct symbolizer *s, pid_t pid);

/*
 * Re-read the maps of a tracked process (new dlopen()s, exec).  Mappings seen
 * before stay known, so samples taken before an unmap still resolve.  A
 * process that has exited keeps its last snapshot; returns -ESRCH then.
 */
int symbolizer__refresh(struct symbolizer *s, pid_t pid);

/*
 * Load the symbol tables of every file the process maps now, so that the
 * first resolve does not pay for it.  Optional; returns 0 or -errno of the
 * first file that failed (the rest are still loaded; see notes).
 */
int symbolizer__preload(struct symbolizer *s, pid_t pid);

/*
 * lazy_jit: the addresses of pid that will be resolved (ip - 1 for return
 * addresses, as resolved), any number of calls before resolving; those
 * that may be JIT code (anonymous memory, or no mapping) are kept for the
 * perf map's one pass.  An address resolved without being named here
 * costs a pass of its own.  0, -ESRCH (untracked pid), -ENOMEM; without
 * lazy_jit, 0 and nothing done.
 */
int symbolizer__want_jit(struct symbolizer *s, pid_t pid, const uint64_t *ips, size_t n);

/*
 * Resolve a user-space instruction address of a tracked process.  For a
 * return address (every frame but the leaf) pass ip - 1, so the call site,
 * not the next instruction, is named.  Always fills *out (mapping and miss
 * reason even when unresolved); returns 0, or -ESRCH for an untracked pid.
 */
int symbolizer__resolve_user(struct symbolizer *s, pid_t pid, uint64_t ip,
			     struct sym_frame *out);

/*
 * The executable mapping of the process's main program (/proc/PID/exe as
 * read when tracking began; the lowest file mapping when that is unknown),
 * or NULL.  pprof readers take the first mapping as the main binary.
 */
const struct sym_mapping *symbolizer__main_mapping(struct symbolizer *s, pid_t pid);

/* Does the process have a perf map (V8 run with --perf-basic-prof)? */
bool symbolizer__has_perfmap(struct symbolizer *s, pid_t pid);

struct v8_layout;

/*
 * Name pid's JS frames from its heap (symbolize/v8heap.h) with layout
 * (copied; NULL: stop).  0, -ESRCH (untracked pid), -ENOMEM.
 */
int symbolizer__set_v8_layout(struct symbolizer *s, pid_t pid, const struct v8_layout *layout);
bool symbolizer__has_v8_layout(struct symbolizer *s, pid_t pid);

/*
 * A JS frame from the SharedFunctionInfo the sampler read at its frame
 * pointer (isoprof_sample.user_function): kind SYM_FRAME_JIT, jit_kind
 * V8NAME_JS, the function, script, line and column of its start, and a
 * system name in the perf map's shape.  interpreted: the frame runs in
 * V8's interpreter (its pc is the interpreter's).  0; -ENOENT without a
 * layout for pid, -ESRCH untracked, -EINVAL/-EFAULT when the address
 * holds no SFI the layout can read, -ENOMEM.
 */
int symbolizer__resolve_v8_function(struct symbolizer *s, pid_t pid, uint64_t sfi,
				    bool interpreted, struct sym_frame *out);

/*
 * Inlined functions from the optimized code objects of pid's runtime
 * (symbolize/v8code.h), with the layout's code fields.
 *
 * note: read the code at pc now (while the process runs; a leaf pc or a
 * return address - 1), so that the stack is known after the window.
 * heap_address: any address in its V8 heap (a frame's SFI), or 0.
 * 0, -ENOENT (no layout with code fields), -ESRCH, -ENOMEM; pcs in no
 * optimized code are not an error.
 */
int symbolizer__note_v8_code(struct symbolizer *s, pid_t pid, uint64_t pc, uint64_t heap_address);
/* Code read before this is checked again at its next note (it may have died). */
void symbolizer__v8_code_epoch(struct symbolizer *s, pid_t pid);

#define SYM_INLINE_MAX 32

struct sym_inline {
	const char *function;	/* "(anonymous)" when it has none */
	const char *script;	/* NULL when unknown */
	uint32_t line, column;	/* where pc is in it (1-based); positioned false:
				 * the function's start */
	uint32_t fn_line, fn_column;	/* where the function starts (1-based) */
	bool positioned;	/* line/column are the pc's position */
	uint64_t sfi;
};

/*
 * The functions optimized code runs at pc, innermost first, the code's own
 * function last (so >= 1), at most max; *tier "turbofan" or "maglev";
 * *placed who placed the pc among them (may be NULL).
 * -ENOENT/-ESRCH as above, -EINVAL when pc is in no optimized code that
 * could be read, -ENOMEM.
 */
int symbolizer__v8_inline_stack(struct symbolizer *s, pid_t pid, uint64_t pc,
				struct sym_inline *frames, size_t max, const char **tier,
				enum v8code_placement *placed);

struct v8code_stats;
void symbolizer__v8_code_stats(struct symbolizer *s, pid_t pid, struct v8code_stats *out);

/* Resolve a kernel address from /proc/kallsyms; always fills *out. */
int symbolizer__resolve_kernel(struct symbolizer *s, uint64_t ip, struct sym_frame *out);

/*
 * Human-readable notes about files that could not be used
 * ("/usr/lib/x.so: truncated ELF (section headers past end of file)").
 * Each distinct note once.  Returns the count; *notes stays owned by s.
 */
size_t symbolizer__notes(const struct symbolizer *s, const char *const **notes);

#endif /* ISOPROF_SYMBOLIZE_SYMBOLIZER_H */
