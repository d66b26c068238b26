// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/frames: frames symbolized once and
 * classified, and the cost class of a sample on each stack (docs/isolates-and-classes.md):
 * gc anywhere on the stack, js / builtin / v8 / native / kernel leaves,
 * idle (no isolate, on the way to sleep), V8's deoptimizer, and the
 * functions optimized code inlined.  Samples go through a real
 * sample_store, and frames through the real symbolizer over the files of
 * fake_runtime.h (perf map, ELF symbols of this binary, kallsyms).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "fake_runtime.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/capture/sample_store.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

struct built {
	struct sample_store *store;
	struct symbolizer *sym;
	struct frame_table *ft;
};

/* One sample per stack given, stack ids 0, 1, ... in order (all distinct). */
static void build(struct built *b, struct isolate_registry *reg, const struct isoprof_sample *s,
		  size_t n)
{
	b->store = sample_store__new();
	assert_non_null(b->store);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(sample_store__add(b->store, &s[i]), 0);
	assert_int_equal(sample_store__stack_count(b->store), n);
	b->sym = fake_runtime__symbolizer();
	b->ft = frame_table__build(b->store, b->sym, reg);
	assert_non_null(b->ft);
}

static void release(struct built *b)
{
	frame_table__free(b->ft);
	symbolizer__free(b->sym);
	sample_store__free(b->store);
}

static const struct frame *frame_at(const struct built *b, uint32_t stack, uint32_t i)
{
	const struct stack_view *v = frame_table__stack(b->ft, stack);

	assert_true(i < v->nframes);
	return frame_table__frame(b->ft, v->frames[i]);
}

static void user_stack(struct isoprof_sample *s, uint64_t isolate, const uint64_t *user,
		       size_t nu)
{
	fake_sample(s, 1, isolate, FAKE_PID, "node", NULL, 0, user, nu);
}

static void test_frame_classes(void **state)
{
	const uint64_t natives[] = {
		FN(fake_v8_collect_garbage), FN(fake_v8_concurrent_marking), FN(fake_cppgc_marker),
		FN(fake_v8_runtime), FN(fake_v8_deoptimizer), FN(fake_v8_builtin),
		FN(fake_runtime_loop),
	};
	const uint64_t jit[] = { FAKE_JIT_FIB + 8, FAKE_JIT_PUSH, FAKE_JIT_ANON, FAKE_JIT_UNNAMED };
	const uint64_t kernel[] = { FAKE_K_EP_POLL, FAKE_K_SYSCALL, FAKE_K_UNNAMED };
	struct isoprof_sample s[3];
	const struct frame *f;
	struct built b;

	(void)state;
	user_stack(&s[0], 0x1000, natives, ARRAY_LEN(natives));
	user_stack(&s[1], 0x1000, jit, ARRAY_LEN(jit));
	fake_sample(&s[2], 1, 0, FAKE_PID, "node", kernel, ARRAY_LEN(kernel), natives, 1);
	build(&b, NULL, s, 3);

	/* ELF symbols, demangled */
	f = frame_at(&b, 0, 0);
	assert_string_equal(f->sym.name, "v8::internal::Heap::CollectGarbage");
	assert_int_equal(f->cls, FRAME_GC);
	assert_int_equal(f->addr, FN(fake_v8_collect_garbage));
	assert_int_equal(f->pid, FAKE_PID);
	assert_false(f->kernel);
	assert_false(f->jit);
	assert_int_equal(frame_at(&b, 0, 1)->cls, FRAME_GC);
	assert_string_equal(frame_at(&b, 0, 2)->sym.name, "cppgc::internal::Marker::Mark");
	assert_int_equal(frame_at(&b, 0, 2)->cls, FRAME_GC);
	assert_int_equal(frame_at(&b, 0, 3)->cls, FRAME_V8);
	/* a caller is named at its call: the return address minus one */
	assert_int_equal(frame_at(&b, 0, 3)->addr, FN(fake_v8_runtime));
	assert_int_equal(frame_at(&b, 0, 4)->cls, FRAME_V8);
	assert_string_equal(frame_at(&b, 0, 5)->sym.name, "Builtins_InterpreterEntryTrampoline");
	assert_int_equal(frame_at(&b, 0, 5)->cls, FRAME_BUILTIN);
	assert_int_equal(frame_at(&b, 0, 6)->cls, FRAME_NATIVE);

	/* JIT code: the perf map's kinds, and JIT memory it does not cover */
	f = frame_at(&b, 1, 0);
	assert_int_equal(f->sym.kind, SYM_FRAME_JIT);
	assert_string_equal(f->sym.name, "fib");
	assert_string_equal(f->sym.file, "/srv/w.js");
	assert_true(f->jit);
	assert_int_equal(f->cls, FRAME_JS);
	assert_null(f->inlined);
	assert_int_equal(frame_at(&b, 1, 1)->cls, FRAME_BUILTIN);
	assert_string_equal(frame_at(&b, 1, 2)->sym.name, "(anonymous)");
	assert_int_equal(frame_at(&b, 1, 2)->cls, FRAME_JS);
	f = frame_at(&b, 1, 3);
	assert_null(f->sym.name);
	assert_int_equal(f->sym.miss, SYM_MISS_ANON);
	assert_true(f->jit);
	assert_int_equal(f->cls, FRAME_JS);

	/* kernel frames: a wait, others, and one kallsyms does not name */
	f = frame_at(&b, 2, 0);
	assert_true(f->kernel);
	assert_int_equal(f->pid, 0);
	assert_string_equal(f->sym.name, "ep_poll");
	assert_int_equal(f->cls, FRAME_WAIT);
	assert_int_equal(frame_at(&b, 2, 1)->cls, FRAME_KERNEL);
	assert_null(frame_at(&b, 2, 2)->sym.name);
	assert_int_equal(frame_at(&b, 2, 2)->cls, FRAME_KERNEL);
	/* in a syscall, the user leaf is a return address too */
	assert_int_equal(frame_at(&b, 2, 3)->addr, FN(fake_v8_collect_garbage));
	/*
	 * One frame per (process, address, leaf or return address): the native
	 * frame of stack 2 is a return address, stack 0's the same function as a leaf.
	 */
	assert_int_equal(frame_table__count(b.ft), ARRAY_LEN(natives) + ARRAY_LEN(jit) +
							   ARRAY_LEN(kernel) + 1);
	assert_int_not_equal(frame_table__stack(b.ft, 2)->frames[3],
			     frame_table__stack(b.ft, 0)->frames[0]);
	release(&b);
}

/* The stacks of test_sample_classes, and the class each gives inside an isolate. */
struct class_case {
	const char *what;
	uint64_t kernel[4], user[6];
	enum sample_class cls;
	bool idle_wait, has_js, deopt, leaf_jit, leaf_jit_named;
};

static const struct class_case *class_cases(size_t *n)
{
	static struct class_case c[] = {
		{ "gc under JS: gc wins wherever it is",
		  .user = { FAKE_JIT_FIB, 1, 2, 3 }, .cls = CLASS_GC, .has_js = true,
		  .leaf_jit = true, .leaf_jit_named = true },
		{ "concurrent marking on a worker thread", .user = { 2, 7 }, .cls = CLASS_GC },
		{ "a JS leaf", .user = { FAKE_JIT_FIB, 7 }, .cls = CLASS_JS, .has_js = true,
		  .leaf_jit = true, .leaf_jit_named = true },
		{ "unnamed JIT code is JS", .user = { FAKE_JIT_UNNAMED, 7 }, .cls = CLASS_JS,
		  .has_js = true, .leaf_jit = true },
		{ "a builtin from the perf map", .user = { FAKE_JIT_PUSH, FAKE_JIT_FIB, 7 },
		  .cls = CLASS_V8_BUILTIN, .has_js = true, .leaf_jit = true, .leaf_jit_named = true },
		{ "an embedded builtin", .user = { 6, FAKE_JIT_FIB }, .cls = CLASS_V8_BUILTIN,
		  .has_js = true },
		{ "V8 C++", .user = { 4, FAKE_JIT_FIB }, .cls = CLASS_V8_RUNTIME, .has_js = true },
		{ "the runtime's own code", .user = { 7 }, .cls = CLASS_RUNTIME_NATIVE },
		{ "a syscall", .kernel = { FAKE_K_SYSCALL }, .user = { FAKE_JIT_FIB, 7 },
		  .cls = CLASS_KERNEL, .has_js = true, .leaf_jit = true, .leaf_jit_named = true },
		{ "the event loop going to sleep", .kernel = { FAKE_K_EP_POLL, FAKE_K_SYSCALL },
		  .user = { 7 }, .cls = CLASS_KERNEL, .idle_wait = true },
		{ "the deoptimizer builtin", .user = { FAKE_JIT_DEOPT, FAKE_JIT_FIB },
		  .cls = CLASS_V8_BUILTIN, .has_js = true, .deopt = true, .leaf_jit = true,
		  .leaf_jit_named = true },
		{ "the deoptimizer in C++, deeper", .user = { 4, 5, FAKE_JIT_FIB },
		  .cls = CLASS_V8_RUNTIME, .has_js = true, .deopt = true },
		{ "a page fault in a builtin", .kernel = { FAKE_K_FAULT }, .user = { 6 },
		  .cls = CLASS_KERNEL },
		{ "no stack at all", .cls = CLASS_RUNTIME_NATIVE },
	};

	*n = ARRAY_LEN(c);
	return c;
}

/* Small numbers in a case stand for this binary's functions. */
static uint64_t resolve(uint64_t a)
{
	static const uint64_t fns[] = {
		0, FN(fake_v8_collect_garbage), FN(fake_v8_concurrent_marking), FN(fake_cppgc_marker),
		FN(fake_v8_runtime), FN(fake_v8_deoptimizer), FN(fake_v8_builtin),
		FN(fake_runtime_loop),
	};

	return a < ARRAY_LEN(fns) ? fns[a] : a;
}

static size_t count(const uint64_t *a, size_t max)
{
	size_t n = 0;

	while (n < max && a[n])
		n++;
	return n;
}

static void test_sample_classes(void **state)
{
	struct isoprof_sample s[16];
	const struct class_case *c;
	struct built b;
	size_t n;

	(void)state;
	c = class_cases(&n);
	assert_true(n <= ARRAY_LEN(s));
	for (size_t i = 0; i < n; i++) {
		uint64_t k[4], u[6];
		size_t nk = count(c[i].kernel, 4), nu = count(c[i].user, 6);

		for (size_t j = 0; j < nk; j++)
			k[j] = c[i].kernel[j];
		for (size_t j = 0; j < nu; j++)
			u[j] = resolve(c[i].user[j]);
		fake_sample(&s[i], i, 0x1000, FAKE_PID, "node", k, nk, u, nu);
	}
	build(&b, NULL, s, n);
	for (size_t i = 0; i < n; i++) {
		const struct stack_view *v = frame_table__stack(b.ft, (uint32_t)i);

		print_message("%s\n", c[i].what);
		assert_int_equal(v->nframes, count(c[i].kernel, 4) + count(c[i].user, 6));
		assert_string_equal(sample_class__str(v->cls), sample_class__str(c[i].cls));
		assert_int_equal(v->idle_wait, c[i].idle_wait);
		assert_int_equal(v->has_js, c[i].has_js);
		assert_int_equal(v->deopt, c[i].deopt);
		assert_int_equal(v->leaf_jit, c[i].leaf_jit);
		assert_int_equal(v->leaf_jit_named, c[i].leaf_jit_named);
		/* inside an isolate the stack decides; outside, a wait is idle */
		assert_int_equal(stack_view__class(v, true), c[i].cls);
		assert_int_equal(stack_view__class(v, false),
				 c[i].idle_wait ? CLASS_IDLE : c[i].cls);
	}
	release(&b);
}

static void test_classify_native(void **state)
{
	(void)state;
	assert_int_equal(frames__classify_native("v8::internal::Heap::Scavenge()", false),
			 FRAME_GC);
	assert_int_equal(frames__classify_native("v8::internal::ScavengerCollector::Run()", false),
			 FRAME_GC);
	assert_int_equal(frames__classify_native("heap::base::Stack::IteratePointers()", false),
			 FRAME_GC);
	assert_int_equal(frames__classify_native("cppgc::internal::Sweeper::Start()", false),
			 FRAME_GC);
	/* allocation fast paths are not GC */
	assert_int_equal(frames__classify_native("v8::internal::Heap::AllocateRaw()", false),
			 FRAME_V8);
	assert_int_equal(frames__classify_native("cppgc::Visitor::Visit()", false), FRAME_V8);
	assert_int_equal(frames__classify_native("Builtins_ArrayPrototypePush", false),
			 FRAME_BUILTIN);
	assert_int_equal(frames__classify_native("node::Start(int, char**)", false), FRAME_NATIVE);
	/* a V8 name in another namespace is not V8's */
	assert_int_equal(frames__classify_native("myapp::Heap::CollectGarbage()", false),
			 FRAME_NATIVE);
	assert_int_equal(frames__classify_native(NULL, false), FRAME_NATIVE);
	/* kernel: waits, and everything else kernel whatever it is called */
	assert_int_equal(frames__classify_native("futex_wait_queue", true), FRAME_WAIT);
	assert_int_equal(frames__classify_native("do_epoll_wait", true), FRAME_WAIT);
	assert_int_equal(frames__classify_native("futex_wake", true), FRAME_KERNEL);
	assert_int_equal(frames__classify_native("v8::internal::Heap::Scavenge()", true),
			 FRAME_KERNEL);
	assert_int_equal(frames__classify_native(NULL, true), FRAME_KERNEL);
}

static void test_is_deoptimizer(void **state)
{
	(void)state;
	assert_true(frames__is_deoptimizer("Builtins_DeoptimizationEntry_Eager"));
	assert_true(frames__is_deoptimizer("Builtin:DeoptimizationEntry_Lazy"));
	assert_true(frames__is_deoptimizer("Runtime_NotifyDeoptimized"));
	assert_true(frames__is_deoptimizer("v8::internal::Deoptimizer::New(long)"));
	assert_false(frames__is_deoptimizer("v8::internal::DeoptimizerData::~DeoptimizerData()"));
	assert_false(frames__is_deoptimizer("v8::internal::Heap::Scavenge()"));
	assert_false(frames__is_deoptimizer("fib"));
	assert_false(frames__is_deoptimizer(NULL));
}

/* fib's code inlined inner(): a pc 0x28 into it is in inner, called at fib's line 5. */
static void test_inlined(void **state)
{
	const uint64_t in_inner[] = { FAKE_JIT_FIB + 0x28, FN(fake_runtime_loop) };
	const uint64_t in_fib[] = { FAKE_JIT_FIB + 0x48, FN(fake_runtime_loop) };
	struct isolate_registry *reg = isolate_registry__new();
	struct isoprof_sample s[2];
	const struct frame *f;
	char path[256];
	struct built b;

	(void)state;
	assert_non_null(reg);
	fake_runtime__code_log(0x1000, FAKE_INLINE_LOG, path, sizeof(path));
	assert_true(isolate_registry__add_log_pid(reg, FAKE_PID, path, NULL) > 0);
	/* the JIT frames are callers here: return addresses */
	fake_sample(&s[0], 1, 0x1000, FAKE_PID, "node", (const uint64_t[]){ FAKE_K_SYSCALL }, 1,
		    in_inner, 2);
	fake_sample(&s[1], 2, 0x1000, FAKE_PID, "node", (const uint64_t[]){ FAKE_K_SYSCALL }, 1,
		    in_fib, 2);
	build(&b, reg, s, 2);

	f = frame_at(&b, 0, 1);
	assert_string_equal(f->sym.name, "fib");
	assert_int_equal(f->sym.symbol_offset, 0x28);
	assert_int_equal(f->ninlined, 1);
	assert_non_null(f->inlined);
	assert_string_equal(f->inlined[0].function, "inner");
	assert_string_equal(f->inlined[0].script, "/srv/w.js");
	assert_int_equal(f->inlined[0].line, 2);
	assert_int_equal(f->inlined[0].column, 10);
	/* the sample is at the call site in fib; fib's start stays its own */
	assert_int_equal(f->at_line, 5);
	assert_int_equal(f->at_column, 10);
	assert_int_equal(f->sym.line, 3);
	assert_int_equal(frame_table__stack(b.ft, 0)->cls, CLASS_KERNEL);

	/* past the inlined part: fib's own code */
	f = frame_at(&b, 1, 1);
	assert_int_equal(f->ninlined, 0);
	assert_null(f->inlined);
	assert_int_equal(f->sym.line, 3);
	/* optimized code keeps its positions: the sample's line, not only the start */
	assert_int_equal(f->at_line, 5);
	assert_int_equal(f->at_column, 10);
	release(&b);
	isolate_registry__free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frame_classes),
		cmocka_unit_test(test_sample_classes),
		cmocka_unit_test(test_classify_native),
		cmocka_unit_test(test_is_deoptimizer),
		cmocka_unit_test(test_inlined),
	};

	return cmocka_run_group_tests(tests, fake_runtime__setup, fake_runtime__teardown);
}
