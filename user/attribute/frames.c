// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/frames.h"
#include "symbolize/v8name.h"

struct frame_slot {
	uint64_t ip;
	uint32_t pid;
	uint32_t flags;		/* FRAME_KEY_* */
	uint32_t idx_plus1;	/* 0 = empty */
};

#define FRAME_KEY_KERNEL 1u
#define FRAME_KEY_RETURN 2u

struct frame_table {
	struct frame *frames;
	size_t nframes, frames_cap;
	struct frame_slot *slots;
	size_t slots_cap;	/* power of two */
	uint32_t *indices;	/* all stacks' frame indices, back to back */
	struct frame_inline **inlined;	/* arrays handed out, freed with the table */
	size_t ninlined, inlined_cap;
	char **strings;
	size_t nstrings, strings_cap;
	struct stack_view *stacks;
	size_t nstacks;
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

static uint64_t slot_hash(uint32_t pid, uint32_t flags, uint64_t ip)
{
	uint64_t h = ip ^ ((uint64_t)pid << 29) ^ ((uint64_t)flags << 61);

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static int grow_slots(struct frame_table *ft)
{
	size_t cap = ft->slots_cap ? ft->slots_cap * 2 : 4096;
	struct frame_slot *slots = calloc(cap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < ft->slots_cap; i++) {
		const struct frame_slot *old = &ft->slots[i];
		size_t j;

		if (!old->idx_plus1)
			continue;
		j = slot_hash(old->pid, old->flags, old->ip) & (cap - 1);
		while (slots[j].idx_plus1)
			j = (j + 1) & (cap - 1);
		slots[j] = *old;
	}
	free(ft->slots);
	ft->slots = slots;
	ft->slots_cap = cap;
	return 0;
}

static const char *own_string(struct frame_table *ft, const char *s)
{
	char *copy;

	if (ft->nstrings == ft->strings_cap) {
		size_t cap = ft->strings_cap ? ft->strings_cap * 2 : 64;
		char **strings = realloc(ft->strings, cap * sizeof(*strings));

		if (!strings)
			return NULL;
		ft->strings = strings;
		ft->strings_cap = cap;
	}
	copy = strdup(s);
	if (copy)
		ft->strings[ft->nstrings++] = copy;
	return copy;
}

#define MAX_INLINED 32

/*
 * Optimized JS code folds the functions it inlined into one code object:
 * the V8 code log says which, at this pc, so they come back as frames.
 */
static int add_inlined(struct frame_table *ft, struct isolate_registry *reg, struct frame *f)
{
	struct v8inline_frame in[MAX_INLINED], outer;
	struct frame_inline *out;
	int n;

	if (!reg || f->sym.kind != SYM_FRAME_JIT || f->sym.jit_kind != V8NAME_JS)
		return 0;
	n = isolate_registry__inline_stack(reg, f->pid, f->addr - f->sym.symbol_offset,
					   f->sym.symbol_offset, in, MAX_INLINED, &outer);
	if (n <= 0)
		return 0;
	if (ft->ninlined == ft->inlined_cap) {
		size_t cap = ft->inlined_cap ? ft->inlined_cap * 2 : 64;
		struct frame_inline **arr = realloc(ft->inlined, cap * sizeof(*arr));

		if (!arr)
			return -ENOMEM;
		ft->inlined = arr;
		ft->inlined_cap = cap;
	}
	out = calloc(n, sizeof(*out));
	if (!out)
		return -ENOMEM;
	ft->inlined[ft->ninlined++] = out;
	for (int i = 0; i < n; i++) {
		out[i].function = own_string(ft, *in[i].function ? in[i].function : "(anonymous)");
		out[i].script = in[i].script ? own_string(ft, in[i].script) : NULL;
		if (!out[i].function || (in[i].script && !out[i].script))
			return -ENOMEM;
		out[i].line = in[i].line;
		out[i].column = in[i].column;
	}
	f->inlined = out;
	f->ninlined = n;
	if (outer.line) {
		f->sym.line = outer.line;
		f->sym.column = outer.column;
	}
	return 0;
}

/* The frame for (pid, ip), symbolized on first sight.  -ENOMEM. */
static int frame_for(struct frame_table *ft, struct symbolizer *sym,
		     struct isolate_registry *reg, uint32_t pid, bool kernel, bool return_address,
		     uint64_t ip, uint32_t *idx)
{
	uint32_t flags = (kernel ? FRAME_KEY_KERNEL : 0) | (return_address ? FRAME_KEY_RETURN : 0);
	struct frame_slot *slot;
	struct frame *f;
	size_t mask, i;
	int err;

	if (kernel)
		pid = 0;
	if ((ft->nframes + 1) * 2 > ft->slots_cap && grow_slots(ft))
		return -ENOMEM;
	mask = ft->slots_cap - 1;
	for (i = slot_hash(pid, flags, ip) & mask; ft->slots[i].idx_plus1; i = (i + 1) & mask) {
		slot = &ft->slots[i];
		if (slot->ip == ip && slot->pid == pid && slot->flags == flags) {
			*idx = slot->idx_plus1 - 1;
			return 0;
		}
	}
	if (ft->nframes == ft->frames_cap) {
		size_t cap = ft->frames_cap ? ft->frames_cap * 2 : 1024;
		struct frame *frames = realloc(ft->frames, cap * sizeof(*frames));

		if (!frames)
			return -ENOMEM;
		ft->frames = frames;
		ft->frames_cap = cap;
	}
	f = &ft->frames[ft->nframes];
	memset(f, 0, sizeof(*f));
	f->addr = return_address ? ip - 1 : ip;
	f->pid = pid;
	f->kernel = kernel;
	err = kernel ? symbolizer__resolve_kernel(sym, f->addr, &f->sym) :
		       symbolizer__resolve_user(sym, pid, f->addr, &f->sym);
	if (err) {
		memset(&f->sym, 0, sizeof(f->sym));
		f->sym.miss = SYM_MISS_NO_MAPPING;
	}
	f->jit = f->sym.kind == SYM_FRAME_JIT || f->sym.miss == SYM_MISS_ANON ||
		 f->sym.miss == SYM_MISS_NO_PERFMAP;
	f->cls = classify(f);
	if (add_inlined(ft, reg, f))
		return -ENOMEM;
	slot = &ft->slots[i];
	slot->ip = ip;
	slot->pid = pid;
	slot->flags = flags;
	slot->idx_plus1 = ft->nframes + 1;
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
	for (size_t id = 0; id < nstacks; id++) {
		struct stack_view *v = &ft->stacks[id];
		uint32_t *out = ft->indices + pos;

		sample_store__stack(store, id, &st);
		for (size_t i = 0; i < st.nkernel; i++)
			if (frame_for(ft, sym, reg, st.pid, true, i > 0, st.ips[i], &out[i]))
				goto fail;
		for (size_t i = 0; i < st.nuser; i++) {
			/* In a syscall, the user "leaf" is the return address after it. */
			bool ret = i > 0 || st.nkernel > 0;

			if (frame_for(ft, sym, reg, st.pid, false, ret, st.ips[st.nkernel + i],
				      &out[st.nkernel + i]))
				goto fail;
		}
		v->frames = out;
		v->nframes = st.nkernel + st.nuser;
		pos += v->nframes;
		summarize(ft, v, st.nkernel);
	}
	free(ft->slots);
	ft->slots = NULL;
	return ft;
fail:
	frame_table__free(ft);
	errno = ENOMEM;
	return NULL;
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
	free(ft->slots);
	free(ft->indices);
	free(ft->stacks);
	free(ft);
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
