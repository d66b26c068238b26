// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* frames: every distinct stack symbolized once and classified; see frames.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/frames.h"
#include "lib/array.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "symbolize/v8log.h"
#include "symbolize/v8name.h"
#include "user/attribute/source_maps.h"

/* What a frame is found by while the table is built: one per frame. */
struct frame_key {
	uint64_t ip;
	uint64_t function;	/* the SFI the sampler read at the frame (user frames), or 0 */
	uint32_t pid;
	uint32_t flags;		/* FRAME_KEY_* */
};

#define FRAME_KEY_KERNEL 1u
#define FRAME_KEY_RETURN 2u

struct frame_table {
	struct frame *frames;
	size_t nframes, frames_cap;
	struct frame_key *keys;		/* per frame; dropped once built */
	size_t keys_cap;
	struct index_table by_key;	/* frames by key; dropped once built */
	uint32_t *indices;	/* all stacks' frame indices, back to back */
	struct frame_inline **inlined;	/* arrays handed out, freed with the table */
	size_t ninlined, inlined_cap;
	char **strings;
	size_t nstrings, strings_cap;
	struct stack_view *stacks;
	size_t nstacks;
	size_t heap_named, heap_refused, heap_checked, heap_agree;
	size_t inline_by_log, inline_by_code, inline_checked, inline_agree;
};

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/*
 * V8's collectors by the C++ classes that do the work: the main-thread
 * entry points (Heap::CollectGarbage & co.), the collectors, and what runs
 * on platform worker threads (concurrent marking, sweeping, evacuation);
 * cppgc and heap::base for Oilpan and conservative stack scanning.
 * Allocation fast paths (Heap::AllocateRaw) are not GC.
 */
static const char *const gc_markers[] = {
	"Heap::CollectGarbage",	  "Heap::CollectAllGarbage", "Heap::CollectAllAvailableGarbage",
	"Heap::PerformGarbageCollection", "Heap::MarkCompact", "Heap::Scavenge",
	"Heap::MinorMarkSweep",	  "Heap::StartIncrementalMarking",
	"Heap::FinalizeIncrementalMarking", "Collector::", "Scavenger", "ConcurrentMarking",
	"IncrementalMarking",	  "Sweeper",		     "MarkingVisitor",
	"Evacuat",		  "MarkingWorklist",	     "PointersUpdating",
	"GCTracer",		  "MarkingBarrier",	     "cppgc::internal::Marker",
	"cppgc::internal::Sweeper", "heap::base::",
};

/* Kernel functions a thread passes through on its way to sleep. */
static const char *const wait_functions[] = {
	"ep_poll", "do_epoll_wait", "do_sys_poll", "do_select", "core_sys_select",
	"futex_wait", "__futex_wait", "futex_wait_queue", "futex_wait_queue_me",
};

bool frames__is_deoptimizer(const char *name)
{
	return name && (strstr(name, "DeoptimizationEntry_") || strstr(name, "NotifyDeoptimized") ||
			starts_with(name, "v8::internal::Deoptimizer::"));
}

enum frame_class frames__classify_native(const char *name, bool kernel)
{
	if (!name)
		return kernel ? FRAME_KERNEL : FRAME_NATIVE;
	if (kernel) {
		for (size_t i = 0; i < sizeof(wait_functions) / sizeof(wait_functions[0]); i++)
			if (!strcmp(name, wait_functions[i]))
				return FRAME_WAIT;
		return FRAME_KERNEL;
	}
	if (starts_with(name, "Builtins_"))
		return FRAME_BUILTIN;
	if (starts_with(name, "v8::") || starts_with(name, "cppgc::") ||
	    starts_with(name, "heap::base::")) {
		for (size_t i = 0; i < sizeof(gc_markers) / sizeof(gc_markers[0]); i++)
			if (strstr(name, gc_markers[i]))
				return FRAME_GC;
		return FRAME_V8;
	}
	return FRAME_NATIVE;
}

static enum frame_class classify(const struct frame *f)
{
	if (f->sym.kind == SYM_FRAME_JIT) {
		switch (f->sym.jit_kind) {
		case V8NAME_BUILTIN:
		case V8NAME_BYTECODE_HANDLER:
		case V8NAME_REGEXP:
		case V8NAME_OTHER:
			return FRAME_BUILTIN;
		default:
			return FRAME_JS;
		}
	}
	if (f->jit)
		return FRAME_JS;
	return frames__classify_native(f->sym.name, f->kernel);
}

static uint32_t key_hash(const struct frame_key *k)
{
	return hash__fold32(hash__word(hash__word(hash__word(HASH_SEED, k->ip), k->function),
				       (uint64_t)k->pid << 32 | k->flags));
}

static bool key_is(const void *ctx, uint32_t index, const void *key)
{
	const struct frame_table *ft = ctx;

	return !memcmp(&ft->keys[index], key, sizeof(struct frame_key));
}

static const char *own_string(struct frame_table *ft, const char *s)
{
	char *copy;

	if (array_grow(&ft->strings, &ft->strings_cap, ft->nstrings + 1))
		return NULL;
	copy = strdup(s);
	if (copy)
		ft->strings[ft->nstrings++] = copy;
	return copy;
}

#define MAX_INLINED 32

const char *frame_placement__str(enum frame_placement p)
{
	static const char *const names[NR_FRAME_PLACEMENTS] = {
		[FRAME_PLACED_NONE] = "",
		[FRAME_PLACED_CODE_LOG] = "code log",
		[FRAME_PLACED_POSITIONS] = "source positions",
		[FRAME_PLACED_DEOPT] = "deopt data",
		[FRAME_PLACED_CALLER_ONLY] = "caller only",
	};

	return (unsigned int)p < NR_FRAME_PLACEMENTS ? names[p] : "";
}

const char *frame_placement__key(enum frame_placement p)
{
	static const char *const keys[NR_FRAME_PLACEMENTS] = {
		[FRAME_PLACED_NONE] = "not_inlined",
		[FRAME_PLACED_CODE_LOG] = "code_log",
		[FRAME_PLACED_POSITIONS] = "source_positions",
		[FRAME_PLACED_DEOPT] = "deopt_data",
		[FRAME_PLACED_CALLER_ONLY] = "caller_only",
	};

	return (unsigned int)p < NR_FRAME_PLACEMENTS ? keys[p] : "";
}

static int set_inlined(struct frame_table *ft, struct frame *f, const struct v8inline_frame *in,
		       int n, enum sym_source source)
{
	struct frame_inline *out;

	if (array_grow(&ft->inlined, &ft->inlined_cap, ft->ninlined + 1))
		return -ENOMEM;
	out = calloc(n, sizeof(*out));
	if (!out)
		return -ENOMEM;
	ft->inlined[ft->ninlined++] = out;
	for (int i = 0; i < n; i++) {
		char system[4200];

		out[i].function = own_string(ft, *in[i].function ? in[i].function : "(anonymous)");
		out[i].script = in[i].script ? own_string(ft, in[i].script) : NULL;
		if (!out[i].function || (in[i].script && !out[i].script))
			return -ENOMEM;
		/* the generated name and position, as a perf map has them: enough to map later */
		if (in[i].script && in[i].fn_line) {
			snprintf(system, sizeof(system), "%s %s:%u:%u", out[i].function, in[i].script,
				 in[i].fn_line, in[i].fn_column);
			out[i].system_name = own_string(ft, system);
			if (!out[i].system_name)
				return -ENOMEM;
		}
		out[i].line = in[i].line;
		out[i].column = in[i].column;
		out[i].fn_line = in[i].fn_line;
		out[i].fn_column = in[i].fn_column;
	}
	f->inlined = out;
	f->ninlined = n;
	f->inline_source = source;
	return 0;
}

/*
 * The stack at the frame's pc as the code object in the runtime's memory
 * gives it (read while the window ran: symbolize/v8code.h), innermost
 * first, without the code's own function, which goes to *outer.  -1 when
 * the code was not read or is not optimized.
 */
static int inlined_from_code(struct symbolizer *sym, struct frame *f,
			     struct v8inline_frame *in, struct v8inline_frame *outer,
			     enum v8code_placement *placed)
{
	struct sym_inline code[MAX_INLINED];
	const char *tier = NULL;
	int n = symbolizer__v8_inline_stack(sym, f->pid, f->addr, code, MAX_INLINED, &tier,
					    placed);

	if (n <= 0)
		return -1;
	/* the heap names a function, not its code: the code object knows the tier */
	if (tier && (!f->sym.jit_tier || !*f->sym.jit_tier))
		f->sym.jit_tier = tier;
	for (int i = 0; i < n; i++) {
		struct v8inline_frame *to = i == n - 1 ? outer : &in[i];

		to->function = code[i].function;
		to->script = code[i].script;
		to->line = code[i].line;
		to->column = code[i].column;
		to->fn_line = code[i].fn_line;
		to->fn_column = code[i].fn_column;
	}
	/* the outermost position is the pc's, or none */
	if (!code[n - 1].positioned)
		outer->line = outer->column = 0;
	return n - 1;
}

static bool same_stack(const struct v8inline_frame *a, int na, const struct v8inline_frame *b,
		       int nb)
{
	if (na != nb)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(*a[i].function ? a[i].function : "(anonymous)", b[i].function))
			return false;
	return true;
}

/*
 * Optimized JS code folds the functions it inlined into one code object:
 * they come back as frames.  The V8 code log says which at this pc when it
 * describes the code; else the code object itself, read from memory,
 * does (code compiled while the log was off, or with no log at all).
 * Where both answer, they are compared, and where they differ the code
 * object is used.
 */
static int add_inlined(struct frame_table *ft, struct symbolizer *sym,
		       struct isolate_registry *reg, struct frame *f)
{
	struct v8inline_frame in[MAX_INLINED], outer = { 0 }, mem[MAX_INLINED], mem_outer = { 0 };
	enum v8code_placement placed = V8CODE_INLINED_NOTHING;
	int n = 0, nmem;

	if (f->kernel || f->sym.kind != SYM_FRAME_JIT || f->sym.jit_kind != V8NAME_JS)
		return 0;
	if (reg)
		n = isolate_registry__inline_stack(reg, f->pid, f->addr - f->sym.symbol_offset,
						   f->sym.symbol_offset, in, MAX_INLINED, &outer);
	nmem = inlined_from_code(sym, f, mem, &mem_outer, &placed);
	if (n > 0 && nmem >= 0) {
		bool same = same_stack(in, n, mem, nmem);

		ft->inline_checked++;
		ft->inline_agree += same;
		/*
		 * The code object was read while it ran; the log's table for its
		 * address can be older code's (a code-creation V8 did not log,
		 * as during its own profiler's window): the code object wins.
		 */
		if (!same) {
			n = 0;
			outer.line = outer.column = 0;
		}
	}
	if (nmem >= 0)
		f->placed = placed == V8CODE_BY_POSITIONS ? FRAME_PLACED_POSITIONS
			    : placed == V8CODE_BY_DEOPT	    ? FRAME_PLACED_DEOPT
			    : placed == V8CODE_CALLER_ONLY  ? FRAME_PLACED_CALLER_ONLY
							    : FRAME_PLACED_NONE;
	if (n > 0) {
		ft->inline_by_log++;
		f->placed = FRAME_PLACED_CODE_LOG;
		if (set_inlined(ft, f, in, n, SYM_SOURCE_CODE_LOG))
			return -ENOMEM;
	} else if (nmem > 0) {
		ft->inline_by_code++;
		if (set_inlined(ft, f, mem, nmem, SYM_SOURCE_HEAP))
			return -ENOMEM;
		outer = mem_outer;
	} else if (nmem == 0 && mem_outer.line) {
		/* nothing inlined: the code object's position wins, as above */
		outer = mem_outer;
	}
	/* the line of the sample, where V8 kept source positions (docs/source-maps.md) */
	if (outer.line) {
		f->at_line = outer.line;
		f->at_column = outer.column;
	}
	return 0;
}

/*
 * JIT code the perf map does not name (V8 run without --perf-basic-prof,
 * or code compiled after its last read): the code log's code-creation
 * lines carry the same names, so the frame is named from them.
 */
static int name_from_code_log(struct frame_table *ft, struct isolate_registry *reg,
			      struct frame *f)
{
	struct v8log_sym code;
	const struct v8name *n = &code.name;
	char system[4200];	/* V8 cuts names at 4096 bytes */

	if (!reg || f->kernel || !f->jit || f->sym.kind == SYM_FRAME_JIT ||
	    isolate_registry__code_at(reg, f->pid, f->addr, &code))
		return 0;
	snprintf(system, sizeof(system), "%s%s%s%s", n->tag, *n->tag ? ":" : "", n->marker,
		 code.raw);
	f->sym.system_name = own_string(ft, system);
	if (n->kind == V8NAME_JS || n->kind == V8NAME_SCRIPT)
		f->sym.name = own_string(ft, *n->function ? n->function : "(anonymous)");
	else
		f->sym.name = f->sym.system_name;
	f->sym.file = n->script && *n->script ? own_string(ft, n->script) : NULL;
	if (!f->sym.system_name || !f->sym.name || (n->script && *n->script && !f->sym.file))
		return -ENOMEM;
	f->sym.kind = SYM_FRAME_JIT;
	f->sym.line = n->line;
	f->sym.column = n->column;
	f->sym.jit_tier = v8name_tier__str(n->tier);
	f->sym.jit_kind = n->kind;
	f->sym.symbol_offset = f->addr - code.start;
	f->sym.miss = SYM_OK;
	f->sym.source = SYM_SOURCE_CODE_LOG;
	return 0;
}

/*
 * The pc of V8's interpreter: an interpreted function's frame runs there
 * (without --interpreted-frames-native-stack, which copies it per function
 * into JIT memory), so the function comes from the frame, not the pc.
 */
static bool is_interpreter(const struct frame *f)
{
	return f->sym.name && !f->kernel &&
	       (starts_with(f->sym.name, "Builtins_InterpreterEntryTrampoline") ||
		starts_with(f->sym.name, "Builtins_InterpreterEnterAtBytecode"));
}

/*
 * JIT code no perf map or code log names, and interpreted frames: named
 * from the SharedFunctionInfo the sampler read at the frame pointer.  Where
 * the perf map names the frame too, it wins and the two are compared.
 */
static int name_from_heap(struct frame_table *ft, struct symbolizer *sym, struct frame *f,
			  uint64_t sfi)
{
	struct sym_frame heap;
	bool interp = is_interpreter(f);
	int err;

	if (!sfi || sfi == ISOPROF_JS_UNNAMED || f->kernel || !(f->jit || interp))
		return 0;
	err = symbolizer__resolve_v8_function(sym, f->pid, sfi, interp, &heap);
	if (err == -ENOMEM)
		return err;
	/* no layout, or the guard rail took it away: nothing to count */
	if (err == -ENOENT || err == -ESRCH)
		return 0;
	if (err) {
		ft->heap_refused++;
		return 0;
	}
	if (f->sym.kind == SYM_FRAME_JIT && f->sym.jit_kind == V8NAME_JS) {
		ft->heap_checked++;
		ft->heap_agree += f->sym.name && !strcmp(f->sym.name, heap.name);
		return 0;
	}
	if (f->sym.kind == SYM_FRAME_JIT)
		return 0;
	heap.mapping = f->sym.mapping;
	heap.symbol_offset = f->sym.symbol_offset;
	f->sym = heap;
	f->jit = true;
	ft->heap_named++;
	return 0;
}

/* A new frame for key, symbolized and classified. */
static int frame_new(struct frame_table *ft, struct symbolizer *sym, struct isolate_registry *reg,
		     const struct frame_key *key)
{
	bool kernel = key->flags & FRAME_KEY_KERNEL;
	struct frame *f;
	int err;

	if (array_grow(&ft->frames, &ft->frames_cap, ft->nframes + 1) ||
	    array_grow(&ft->keys, &ft->keys_cap, ft->nframes + 1))
		return -ENOMEM;
	f = &ft->frames[ft->nframes];
	memset(f, 0, sizeof(*f));
	f->addr = key->flags & FRAME_KEY_RETURN ? key->ip - 1 : key->ip;
	f->pid = key->pid;
	f->kernel = kernel;
	err = kernel ? symbolizer__resolve_kernel(sym, f->addr, &f->sym) :
		       symbolizer__resolve_user(sym, key->pid, f->addr, &f->sym);
	if (err) {
		memset(&f->sym, 0, sizeof(f->sym));
		f->sym.miss = SYM_MISS_NO_MAPPING;
	}
	f->jit = f->sym.kind == SYM_FRAME_JIT || f->sym.miss == SYM_MISS_ANON ||
		 f->sym.miss == SYM_MISS_NO_PERFMAP;
	if (name_from_code_log(ft, reg, f))
		return -ENOMEM;
	if (name_from_heap(ft, sym, f, key->function))
		return -ENOMEM;
	f->cls = classify(f);
	if (add_inlined(ft, sym, reg, f))
		return -ENOMEM;
	ft->keys[ft->nframes] = *key;
	return 0;
}

/* The frame for (pid, ip), symbolized on first sight.  -ENOMEM. */
static int frame_for(struct frame_table *ft, struct symbolizer *sym,
		     struct isolate_registry *reg, uint32_t pid, bool kernel, bool return_address,
		     uint64_t ip, uint64_t function, uint32_t *idx)
{
	struct frame_key key = {
		.ip = ip,
		.function = function,
		.pid = kernel ? 0 : pid,
		.flags = (kernel ? FRAME_KEY_KERNEL : 0) | (return_address ? FRAME_KEY_RETURN : 0),
	};
	uint32_t h = key_hash(&key);
	size_t slot;
	long i;

	if (index_table__reserve(&ft->by_key))
		return -ENOMEM;
	i = index_table__lookup(&ft->by_key, h, key_is, ft, &key, &slot);
	if (i >= 0) {
		*idx = (uint32_t)i;
		return 0;
	}
	if (frame_new(ft, sym, reg, &key))
		return -ENOMEM;
	index_table__set(&ft->by_key, slot, h, (uint32_t)ft->nframes);
	*idx = ft->nframes++;
	return 0;
}

static void summarize(struct frame_table *ft, struct stack_view *v, size_t nkernel)
{
	const struct frame *leaf = v->nframes ? &ft->frames[v->frames[0]] : NULL;
	bool gc = false;

	for (uint32_t i = 0; i < v->nframes; i++) {
		const struct frame *f = &ft->frames[v->frames[i]];

		gc |= f->cls == FRAME_GC;
		v->has_js |= f->cls == FRAME_JS;
		v->idle_wait |= f->cls == FRAME_WAIT;
		v->deopt |= !f->kernel && frames__is_deoptimizer(f->sym.name);
		if (i == nkernel) {
			v->leaf_jit = f->jit;
			v->leaf_jit_named = f->sym.kind == SYM_FRAME_JIT;
			v->leaf_jit_source = f->sym.source;
			v->leaf_inline_source = f->ninlined ? f->inline_source : SYM_SOURCE_NONE;
			v->leaf_placed = f->placed;
		}
	}
	if (gc)
		v->cls = CLASS_GC;
	else if (!leaf)
		v->cls = CLASS_RUNTIME_NATIVE;
	else if (leaf->kernel)
		v->cls = CLASS_KERNEL;
	else if (leaf->cls == FRAME_JS)
		v->cls = CLASS_JS;
	else if (leaf->cls == FRAME_BUILTIN)
		v->cls = CLASS_V8_BUILTIN;
	else if (leaf->cls == FRAME_V8)
		v->cls = CLASS_V8_RUNTIME;
	else
		v->cls = CLASS_RUNTIME_NATIVE;
}

struct pid_addr {
	uint32_t pid;
	uint64_t addr;
};

static int cmp_pid_addr(const void *a, const void *b)
{
	const struct pid_addr *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/*
 * Every user address the stacks will resolve, to the symbolizer first: a
 * perf map is then read once for all of them (symbolizer__want_jit()).
 */
static int want_user_addresses(const struct sample_store *store, struct symbolizer *sym,
			       size_t total)
{
	size_t nstacks = sample_store__stack_count(store), n = 0;
	struct pid_addr *all = malloc((total ? total : 1) * sizeof(*all));
	uint64_t *addrs = malloc((total ? total : 1) * sizeof(*addrs));
	struct stored_stack st;
	int err = 0;

	if (!all || !addrs) {
		free(all);
		free(addrs);
		return -ENOMEM;
	}
	for (size_t id = 0; id < nstacks; id++) {
		sample_store__stack(store, id, &st);
		for (size_t i = 0; i < st.nuser; i++) {
			bool ret = i > 0 || st.nkernel > 0;

			all[n].pid = st.pid;
			all[n++].addr = st.ips[st.nkernel + i] - (ret ? 1 : 0);
		}
	}
	qsort(all, n, sizeof(*all), cmp_pid_addr);
	for (size_t i = 0; i < n && !err;) {
		size_t k = 0, j = i;

		for (; j < n && all[j].pid == all[i].pid; j++)
			if (!k || addrs[k - 1] != all[j].addr)
				addrs[k++] = all[j].addr;
		err = symbolizer__want_jit(sym, (pid_t)all[i].pid, addrs, k);
		if (err == -ESRCH)
			err = 0;
		i = j;
	}
	free(all);
	free(addrs);
	return err;
}

struct frame_table *frame_table__build(const struct sample_store *store, struct symbolizer *sym,
				       struct isolate_registry *reg)
{
	size_t nstacks = sample_store__stack_count(store), total = 0, pos = 0;
	struct frame_table *ft = calloc(1, sizeof(*ft));
	struct stored_stack st;

	if (!ft)
		return NULL;
	for (size_t id = 0; id < nstacks; id++) {
		sample_store__stack(store, id, &st);
		total += st.nkernel + st.nuser;
	}
	ft->indices = malloc((total ? total : 1) * sizeof(*ft->indices));
	ft->stacks = calloc(nstacks ? nstacks : 1, sizeof(*ft->stacks));
	if (!ft->indices || !ft->stacks)
		goto fail;
	ft->nstacks = nstacks;
	if (want_user_addresses(store, sym, total))
		goto fail;
	for (size_t id = 0; id < nstacks; id++) {
		struct stack_view *v = &ft->stacks[id];
		uint32_t *out = ft->indices + pos;

		sample_store__stack(store, id, &st);
		for (size_t i = 0; i < st.nkernel; i++)
			if (frame_for(ft, sym, reg, st.pid, true, i > 0, st.ips[i], 0, &out[i]))
				goto fail;
		for (size_t i = 0; i < st.nuser; i++) {
			/* In a syscall, the user "leaf" is the return address after it. */
			bool ret = i > 0 || st.nkernel > 0;

			if (frame_for(ft, sym, reg, st.pid, false, ret, st.ips[st.nkernel + i],
				      st.functions ? st.functions[i] : 0, &out[st.nkernel + i]))
				goto fail;
		}
		v->frames = out;
		v->nframes = st.nkernel + st.nuser;
		pos += v->nframes;
		summarize(ft, v, st.nkernel);
	}
	index_table__release(&ft->by_key);
	free(ft->keys);
	ft->keys = NULL;
	return ft;
fail:
	frame_table__free(ft);
	errno = ENOMEM;
	return NULL;
}

/* An inlined function through its script's map; 1 mapped, 0 not, -ENOMEM. */
static int map_inlined(struct frame_table *ft, struct source_maps *maps, const struct frame *f,
		       struct frame_inline *in)
{
	struct source_frame sf = {
		.function = in->function,
		.fn_line = in->fn_line,
		.fn_column = in->fn_column,
		.at_line = in->line,
		.at_column = in->column,
	};
	struct source_origin o;
	char system[4200];
	int rc;

	if (!in->script || !in->fn_line)
		return 0;
	rc = source_maps__map(maps, (pid_t)f->pid, f->isolate, in->script, &sf, &o);
	if (rc <= 0)
		return rc;
	if (!in->system_name) {
		snprintf(system, sizeof(system), "%s %s:%u:%u", in->function, in->script,
			 in->fn_line, in->fn_column);
		in->system_name = own_string(ft, system);
	}
	in->function = own_string(ft, o.function);
	in->script = own_string(ft, o.file);
	if (!in->system_name || !in->function || !in->script)
		return -ENOMEM;
	in->fn_line = o.start_line;
	in->fn_column = 0;
	in->line = o.line;
	in->column = o.column;
	return 1;
}

static int map_frame(struct frame_table *ft, struct source_maps *maps, struct frame *f)
{
	struct source_frame sf = {
		.function = f->sym.name,
		.fn_line = f->sym.line,
		.fn_column = f->sym.column,
		.at_line = f->at_line,
		.at_column = f->at_column,
	};
	struct source_origin o;
	int rc, mapped = 0;

	/* inner first: their positions are the generated ones until mapped */
	for (uint32_t i = 0; i < f->ninlined; i++) {
		rc = map_inlined(ft, maps, f, (struct frame_inline *)&f->inlined[i]);
		if (rc < 0)
			return rc;
	}
	rc = source_maps__map(maps, (pid_t)f->pid, f->isolate, f->sym.file, &sf, &o);
	if (rc <= 0)
		return rc;
	f->sym.name = own_string(ft, o.function);
	f->sym.file = own_string(ft, o.file);
	if (!f->sym.name || !f->sym.file)
		return -ENOMEM;
	f->sym.line = o.start_line;
	f->sym.column = 0;
	if (f->at_line) {
		f->at_line = o.line;
		f->at_column = o.column;
	}
	f->source_mapped = true;
	mapped++;
	return mapped;
}

long frame_table__map_sources(struct frame_table *ft, const struct sample_store *store,
			      struct source_maps *maps)
{
	const struct stored_sample *samples = sample_store__samples(store);
	size_t n = sample_store__count(store);
	long mapped = 0;

	if (!maps)
		return 0;
	/* JIT code belongs to one isolate: any sample on a frame tells which */
	for (size_t i = 0; i < n; i++) {
		const struct stack_view *v;

		if (!samples[i].isolate || samples[i].stack_id >= ft->nstacks)
			continue;
		v = &ft->stacks[samples[i].stack_id];
		if (!v->has_js)
			continue;
		for (uint32_t k = 0; k < v->nframes; k++) {
			struct frame *f = &ft->frames[v->frames[k]];

			if (f->cls == FRAME_JS && !f->isolate)
				f->isolate = samples[i].isolate;
		}
	}
	for (size_t i = 0; i < ft->nframes; i++) {
		struct frame *f = &ft->frames[i];
		int rc;

		if (f->kernel || f->source_mapped || f->sym.kind != SYM_FRAME_JIT ||
		    f->sym.jit_kind != V8NAME_JS || !f->sym.file)
			continue;
		rc = map_frame(ft, maps, f);
		if (rc < 0)
			return rc;
		mapped += rc;
	}
	return mapped;
}

void frame_table__free(struct frame_table *ft)
{
	if (!ft)
		return;
	for (size_t i = 0; i < ft->ninlined; i++)
		free(ft->inlined[i]);
	free(ft->inlined);
	for (size_t i = 0; i < ft->nstrings; i++)
		free(ft->strings[i]);
	free(ft->strings);
	free(ft->frames);
	free(ft->keys);
	index_table__release(&ft->by_key);
	free(ft->indices);
	free(ft->stacks);
	free(ft);
}

void frame_table__heap_stats(const struct frame_table *ft, struct frame_heap_stats *out)
{
	out->named = ft->heap_named;
	out->refused = ft->heap_refused;
	out->checked = ft->heap_checked;
	out->agree = ft->heap_agree;
	out->inline_by_log = ft->inline_by_log;
	out->inline_by_code = ft->inline_by_code;
	out->inline_checked = ft->inline_checked;
	out->inline_agree = ft->inline_agree;
}

size_t frame_table__count(const struct frame_table *ft)
{
	return ft->nframes;
}

const struct frame *frame_table__frame(const struct frame_table *ft, uint32_t idx)
{
	return &ft->frames[idx];
}

const struct stack_view *frame_table__stack(const struct frame_table *ft, uint32_t stack_id)
{
	return &ft->stacks[stack_id];
}
