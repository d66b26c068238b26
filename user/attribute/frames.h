/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * frames: every distinct stack of a capture, symbolized once and classified.
 *
 * Each distinct (process, address) becomes one frame (symbolized through
 * the symbolizer, with a frame class), and each stored stack a list of
 * frame indices, leaf first, with the cost class of a sample taken on it
 * (docs/isolates-and-classes.md).  Every profile written from the capture (one per isolate, the
 * whole capture) reuses this work.
 *
 * Cost classes of a sample:
 *   gc              a V8 garbage collector function is on the stack
 *   js              the leaf is JIT code of a JS function (named or not)
 *   v8-builtin      the leaf is a V8 builtin, bytecode handler, stub, regexp
 *   v8-runtime      the leaf is other V8 C++ (v8::, cppgc::)
 *   kernel          the leaf is in the kernel (a syscall, a fault, an IRQ)
 *   idle            no isolate entered, and the thread is in the kernel on
 *                   its way to sleep in the event loop (epoll_wait & co.)
 *   runtime-native  anything else: workerd, kj, node, libuv, allocator, libc
 *
 * Errors: NULL with errno (ENOMEM).  Pointers stay valid until
 * frame_table__free(); the symbolizer must outlive the table.
 */
#ifndef ISOPROF_ATTRIBUTE_FRAMES_H
#define ISOPROF_ATTRIBUTE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/profile_vocab.h"
#include "user/attribute/isolates.h"
#include "user/capture/sample_store.h"
#include "symbolize/symbolizer.h"

enum frame_class {
	FRAME_NATIVE = 0,	/* runtime or library code */
	FRAME_KERNEL,
	FRAME_JS,		/* JIT code of a JS function (or unnamed JIT code) */
	FRAME_BUILTIN,		/* V8 builtin, bytecode handler, stub, regexp */
	FRAME_V8,		/* V8 C++ */
	FRAME_GC,		/* V8 garbage collector */
	FRAME_WAIT,		/* a blocking wait: epoll_wait, poll, futex wait ... */
};


/* A JS function that optimized code inlined, from the V8 code log. */
struct frame_inline {
	const char *function;	/* "(anonymous)" when it has no name */
	const char *script;	/* NULL when unknown; with a source map, the original file */
	uint32_t line;		/* where the pc is in it (else its start) */
	uint32_t column;
	uint32_t fn_line;	/* where it starts; 0 when unknown */
	uint32_t fn_column;
	/*
	 * The generated name and position in the perf map's shape
	 * ("c worker.js:1:11"), pprof's system_name; NULL when the script or
	 * the start is unknown
	 */
	const char *system_name;
};

/* Who placed a JIT frame's pc among the functions its code inlined. */
enum frame_placement {
	FRAME_PLACED_NONE = 0,		/* not optimized code, or it inlined nothing */
	FRAME_PLACED_CODE_LOG,		/* the code log's source positions */
	FRAME_PLACED_POSITIONS,		/* the code object's source positions, from memory */
	FRAME_PLACED_DEOPT,		/* its deoptimization data, from memory */
	FRAME_PLACED_CALLER_ONLY,	/* it inlined functions, nothing said which: the caller */
	NR_FRAME_PLACEMENTS,
};

/* "code log", "source positions", "deopt data", "caller only"; "" for NONE */
const char *frame_placement__str(enum frame_placement p);
/* The same as a JSON key: "code_log", ..., "not_inlined" for NONE */
const char *frame_placement__key(enum frame_placement p);

struct frame {
	struct sym_frame sym;	/* strings owned by the symbolizer (or the table, when
				 * sym.source is the code log); sym.source says who
				 * named it: JIT code the perf map did not name is named
				 * by the code log, else from V8's heap (the frame's
				 * SFI); for JIT code with inlined frames,
				 * line/column are the call site */
	const struct frame_inline *inlined; /* innermost first; NULL when none */
	uint32_t ninlined;
	enum sym_source inline_source;	/* inlined frames from the code log, or the
					 * code object in memory (SYM_SOURCE_HEAP) */
	enum frame_placement placed;	/* JIT code: who placed its pc */
	/*
	 * JS: where the pc is in the function (optimized code with source
	 * positions: the code log's or the code object's), 1-based; 0 when
	 * unknown.  sym.line/column stay the function's start.
	 */
	uint32_t at_line;
	uint32_t at_column;
	bool source_mapped;	/* names, files and lines are from a source map
				 * (frame_table__map_sources()); sym.system_name keeps
				 * the generated ones */
	uint64_t isolate;	/* JS: the isolate of a sample it was on (code is per isolate) */
	uint64_t addr;		/* address named: a return address minus one */
	uint32_t pid;		/* 0 for kernel frames */
	bool kernel;
	bool jit;		/* JIT code, named or not */
	enum frame_class cls;
};

struct stack_view {
	const uint32_t *frames;	/* frame indices, leaf first (kernel, then user) */
	uint32_t nframes;
	enum sample_class cls;	/* the class when an isolate is entered */
	bool idle_wait;		/* class is idle when no isolate is entered */
	bool has_js;		/* some frame is JS */
	bool deopt;		/* some frame is V8's deoptimizer */
	bool leaf_jit;		/* the user leaf is JIT code */
	bool leaf_jit_named;
	enum sym_source leaf_jit_source; /* who named the JIT leaf */
	enum sym_source leaf_inline_source; /* who gave its inlined frames; NONE: none */
	enum frame_placement leaf_placed;   /* who placed the JIT leaf's pc */
};

struct frame_table;

/*
 * reg may be NULL; with it, JIT frames of optimized code get the functions
 * it inlined at the sampled pc (isolate_registry__inline_stack()), and JIT
 * code the perf map does not name (no --perf-basic-prof) is named from the
 * code logs (isolate_registry__code_at()).
 */
struct frame_table *frame_table__build(const struct sample_store *store, struct symbolizer *sym,
				       struct isolate_registry *reg);
void frame_table__free(struct frame_table *ft);

struct source_maps;

/*
 * Name the JS frames (and the functions they inlined) from their scripts'
 * source maps (source_maps.h): the original function, file and lines; the
 * generated name and position stay in sym.system_name (and
 * frame_inline.system_name).  Each JS frame's isolate is learnt from the
 * samples on it.  Returns the frames mapped, or -ENOMEM.
 */
long frame_table__map_sources(struct frame_table *ft, const struct sample_store *store,
			      struct source_maps *maps);

/* Frames named from V8's heap, and how those the perf map named compare. */
struct frame_heap_stats {
	size_t named;		/* distinct frames named from the heap */
	size_t refused;		/* distinct frames whose SFI did not read as one */
	size_t checked;		/* distinct frames the perf map and the heap both named */
	size_t agree;		/* ... with the same function name */
	size_t inline_by_log;	/* distinct frames whose inlined functions the code log gave */
	size_t inline_by_code;	/* ... that the code object in memory gave */
	size_t inline_checked;	/* frames both described */
	size_t inline_agree;	/* ... with the same functions */
};

void frame_table__heap_stats(const struct frame_table *ft, struct frame_heap_stats *out);

size_t frame_table__count(const struct frame_table *ft);
const struct frame *frame_table__frame(const struct frame_table *ft, uint32_t idx);
const struct stack_view *frame_table__stack(const struct frame_table *ft, uint32_t stack_id);

/* The class of a sample on this stack, with or without an isolate entered. */
static inline enum sample_class stack_view__class(const struct stack_view *v, bool in_isolate)
{
	return !in_isolate && v->idle_wait ? CLASS_IDLE : v->cls;
}

/*
 * Is this function part of V8's deoptimizer: the deoptimization entry
 * builtins, NotifyDeoptimized, or the C++ Deoptimizer?  A steady share of
 * samples in it is a deopt loop.
 */
bool frames__is_deoptimizer(const char *name);

/* Exposed for tests: the class of a native (ELF or kernel) function name. */
enum frame_class frames__classify_native(const char *name, bool kernel);

#endif /* ISOPROF_ATTRIBUTE_FRAMES_H */
