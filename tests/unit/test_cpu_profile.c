// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/cpu_profile: a profile written from a small
 * capture (fake_runtime.h through the real sample_store, frame table,
 * registry and attribution) and read back with proto/pprof_reader, which
 * checks pprof's invariants on the way in: sample types, period, time,
 * comments, the main mapping, labels, synthetic roots, names of frames
 * that have none, inlined functions, merging and the caller's filter.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fake_runtime.h"
#include "proto/pprof_reader.h"
#include "proto/profile_vocab.h"
#include "user/attribute/attribution.h"
#include "user/attribute/cpu_profile.h"

#define ISO 0xa000ull
#define OTHER_PID 9999
#define FILTERED_TID 99
#define PERIOD_NS 10101010ull

static void add(struct fake_capture *c, uint32_t pid, uint32_t tid, uint64_t isolate,
		const uint64_t *kernel, size_t nk, const uint64_t *user, size_t nu)
{
	struct isoprof_sample s;

	fake_sample(&s, 100, isolate, tid, tid == 1 ? "main" : "worker", kernel, nk, user, nu);
	s.pid = pid;
	assert_int_equal(sample_store__add(c->store, &s), 0);
}

#define ADD(c, pid, tid, iso, k, u) \
	add(c, pid, tid, iso, k, sizeof(k) / sizeof(uint64_t), u, sizeof(u) / sizeof(uint64_t))

static const uint64_t no_kernel[0];

static void capture(struct fake_capture *c)
{
	const uint64_t js[] = { FAKE_JIT_FIB + 8, FN(fake_runtime_loop) };
	const uint64_t gc[] = { FN(fake_v8_collect_garbage), FAKE_JIT_FIB, FN(fake_runtime_loop) };
	const uint64_t wait[] = { FAKE_K_EP_POLL, FAKE_K_SYSCALL };
	const uint64_t loop[] = { FN(fake_runtime_loop) };
	const uint64_t v8[] = { FN(fake_v8_runtime), FN(fake_runtime_loop) };
	const uint64_t k_unnamed[] = { FAKE_K_UNNAMED };
	const uint64_t unnamed[] = { FAKE_JIT_UNNAMED, FN(fake_runtime_loop) };
	const uint64_t unmapped[] = { 0x1234 };
	const uint64_t inlined[] = { FAKE_JIT_FIB + 0x28 };
	char path[256];

	fake_capture__begin(c);
	fake_runtime__code_log(ISO, FAKE_INLINE_LOG, path, sizeof(path));
	assert_true(isolate_registry__add_log_pid(c->reg, FAKE_PID, path, NULL) > 0);

	ADD(c, FAKE_PID, 1, ISO, no_kernel, js);		/* twice: one merged sample */
	ADD(c, FAKE_PID, 1, ISO, no_kernel, js);
	ADD(c, FAKE_PID, 1, ISO, no_kernel, gc);
	ADD(c, FAKE_PID, 1, 0, wait, loop);			/* idle */
	ADD(c, FAKE_PID, 2, 0, no_kernel, v8);			/* no JS: (program) */
	ADD(c, FAKE_PID, 1, ISO, k_unnamed, unnamed);
	ADD(c, OTHER_PID, 2, 0, no_kernel, unmapped);
	ADD(c, FAKE_PID, 1, ISO, no_kernel, inlined);
	ADD(c, FAKE_PID, FILTERED_TID, ISO, no_kernel, js);	/* left out by the filter */

	fake_capture__finish(c);
}

static bool keep(const struct stored_sample *s, void *ctx)
{
	(void)ctx;
	return s->tid != FILTERED_TID;
}

static const char *const comments[] = { "isoprof test capture", "a second line" };

static void fill_info(struct cpu_profile_info *info, struct fake_capture *c)
{
	memset(info, 0, sizeof(*info));
	info->time_nanos = 1700000000123456789;
	info->duration_nanos = 5000000000;
	info->period_ns = PERIOD_NS;
	info->comments = comments;
	info->ncomments = 2;
	info->filter = keep;
	info->attr = attribution__sample_attr;
	info->attr_ctx = &c->a;
}

/* The one sample whose leaf frame is named leaf, with its stack. */
static size_t sample_by_leaf(const struct pprof_profile *p, const char *leaf,
			     struct pprof_stack *st)
{
	size_t found = SIZE_MAX;

	for (size_t i = 0; i < pprof_profile__sample_count(p); i++) {
		assert_int_equal(pprof_profile__stack(p, i, st), 0);
		if (st->n && !strcmp(st->frames[0]->name, leaf)) {
			if (found != SIZE_MAX)
				fail_msg("two samples with leaf %s", leaf);
			found = i;
		}
	}
	if (found == SIZE_MAX)
		fail_msg("no sample with leaf %s", leaf);
	assert_int_equal(pprof_profile__stack(p, found, st), 0);
	return found;
}

static void expect_root(const struct pprof_stack *st, const char *root)
{
	const struct pprof_frame *f = st->frames[st->n - 1];

	if (root) {
		assert_string_equal(f->name, root);
		assert_false(f->has_mapping);
		return;
	}
	for (size_t i = 0; i < st->n; i++)
		assert_true(st->frames[i]->name[0] != '(' || !strcmp(st->frames[i]->name,
								    "(anonymous)"));
}

static void expect_labels(const struct pprof_profile *p, size_t i, int64_t pid, int64_t tid,
			  const char *thread, const char *cls, bool in_isolate)
{
	int64_t num;

	assert_true(pprof_profile__num_label(p, i, LABEL_PID, &num));
	assert_int_equal(num, pid);
	assert_true(pprof_profile__num_label(p, i, LABEL_TID, &num));
	assert_int_equal(num, tid);
	assert_string_equal(pprof_profile__label(p, i, LABEL_THREAD), thread);
	assert_string_equal(pprof_profile__label(p, i, LABEL_CLASS), cls);
	if (!in_isolate) {
		assert_null(pprof_profile__label(p, i, LABEL_ISOLATE));
		assert_null(pprof_profile__label(p, i, LABEL_SCRIPT));
		assert_null(pprof_profile__label(p, i, LABEL_VERSION));
		return;
	}
	assert_string_equal(pprof_profile__label(p, i, LABEL_ISOLATE), "0xa000");
	assert_string_equal(pprof_profile__label(p, i, LABEL_SCRIPT), "/srv/w.js");
	assert_int_equal(strlen(pprof_profile__label(p, i, LABEL_VERSION)), ISOLATE_VERSION_LEN);
}

static void check_header(const struct pprof_profile *p, const char *exe)
{
	const Perftools__Profiles__Profile *pb = pprof_profile__proto(p);
	const char *unit;

	assert_int_equal(pprof_profile__sample_type_count(p), 2);
	assert_string_equal(pprof_profile__sample_type(p, 0, &unit), SAMPLE_TYPE_SAMPLES);
	assert_string_equal(unit, UNIT_COUNT);
	assert_string_equal(pprof_profile__sample_type(p, 1, &unit), SAMPLE_TYPE_CPU);
	assert_string_equal(unit, UNIT_NANOSECONDS);
	assert_string_equal(pprof_profile__string(p, pb->default_sample_type), SAMPLE_TYPE_CPU);
	assert_non_null(pb->period_type);
	assert_string_equal(pprof_profile__string(p, pb->period_type->type), SAMPLE_TYPE_CPU);
	assert_string_equal(pprof_profile__string(p, pb->period_type->unit), UNIT_NANOSECONDS);
	assert_int_equal(pb->period, PERIOD_NS);
	assert_int_equal(pb->time_nanos, 1700000000123456789);
	assert_int_equal(pb->duration_nanos, 5000000000);
	/* the caller's comments in order, then the class split */
	assert_true(pb->n_comment >= 3);
	assert_string_equal(pprof_profile__string(p, pb->comment[0]), comments[0]);
	assert_string_equal(pprof_profile__string(p, pb->comment[1]), comments[1]);
	assert_string_equal(pprof_profile__string(p, pb->comment[2]),
			    "classes: js 3 v8-builtin 0 gc 1 v8-runtime 1 runtime-native 1 "
			    "kernel 1 idle 1");
	/* pprof takes the first mapping as the main binary */
	assert_true(pb->n_mapping >= 1);
	assert_string_equal(pprof_profile__string(p, pb->mapping[0]->filename), exe);
}

static void check_samples(const struct pprof_profile *p)
{
	struct pprof_stack st = { 0 };
	size_t i;

	/* 9 added, 1 filtered, 2 merged */
	assert_int_equal(pprof_profile__sample_count(p), 7);

	i = sample_by_leaf(p, "fib", &st);
	assert_int_equal(pprof_profile__value(p, i, 0), 2);
	assert_int_equal(pprof_profile__value(p, i, 1), 2 * PERIOD_NS);
	assert_int_equal(st.n, 2);
	assert_string_equal(st.frames[0]->filename, "/srv/w.js");
	assert_string_equal(st.frames[1]->name, "fake_runtime_event_loop");
	expect_root(&st, NULL);
	expect_labels(p, i, FAKE_PID, 1, "main", "js", true);

	i = sample_by_leaf(p, "v8::internal::Heap::CollectGarbage", &st);
	assert_int_equal(pprof_profile__value(p, i, 0), 1);
	assert_int_equal(st.n, 4);
	expect_root(&st, FRAME_NAME_GC);
	expect_labels(p, i, FAKE_PID, 1, "main", "gc", true);

	i = sample_by_leaf(p, "ep_poll", &st);
	assert_int_equal(st.n, 4);
	expect_root(&st, FRAME_NAME_IDLE);
	expect_labels(p, i, FAKE_PID, 1, "main", "idle", false);

	i = sample_by_leaf(p, "v8::internal::Runtime::GetProperty", &st);
	expect_root(&st, FRAME_NAME_PROGRAM);
	expect_labels(p, i, FAKE_PID, 2, "worker", "v8-runtime", false);

	/* frames without a name say why, and where */
	i = sample_by_leaf(p, "[kernel] <unknown>", &st);
	assert_string_equal(st.frames[1]->name, "[jit] <unknown>");
	assert_true(st.frames[1]->has_mapping);
	expect_root(&st, NULL);
	expect_labels(p, i, FAKE_PID, 1, "main", "kernel", true);
	i = sample_by_leaf(p, "[unknown]", &st);
	assert_int_equal(st.frames[0]->address, 0x1234);
	expect_root(&st, FRAME_NAME_PROGRAM);
	expect_labels(p, i, OTHER_PID, 2, "worker", "runtime-native", false);

	/* optimized code: the inlined function, then fib at the call, in one location */
	i = sample_by_leaf(p, "inner", &st);
	assert_true(st.frames[0]->inlined);
	assert_int_equal(st.frames[0]->line, 2);
	assert_string_equal(st.frames[1]->name, "fib");
	assert_false(st.frames[1]->inlined);
	assert_int_equal(st.frames[1]->line, 5);
	assert_int_equal(st.frames[0]->location, st.frames[1]->location);
	pprof_stack__release(&st);
}

static void test_write_and_read(void **state)
{
	struct cpu_profile_stats stats;
	struct cpu_profile_info info;
	struct pprof_profile *p;
	char path[256], err[256], exe[PATH_MAX];
	struct fake_capture c;
	ssize_t n;

	(void)state;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	capture(&c);
	fill_info(&info, &c);
	for (int gzip = 0; gzip < 2; gzip++) {
		snprintf(path, sizeof(path), "%s/cpu%d.pb%s", fake_tmpdir, gzip, gzip ? ".gz" : "");
		assert_int_equal(cpu_profile__write(c.store, c.ft, c.sym, &info, path, gzip, &stats),
				 0);
		if (pprof_profile__read_file(path, &p, err, sizeof(err)))
			fail_msg("%s: %s", path, err);
		check_header(p, exe);
		check_samples(p);
		pprof_profile__free(p);

		assert_int_equal(stats.samples, 8);
		assert_int_equal(stats.class_samples[CLASS_JS], 3);
		assert_int_equal(stats.class_samples[CLASS_GC], 1);
		assert_int_equal(stats.class_samples[CLASS_IDLE], 1);
		assert_int_equal(stats.class_samples[CLASS_KERNEL], 1);
		assert_int_equal(stats.class_samples[CLASS_V8_RUNTIME], 1);
		assert_int_equal(stats.class_samples[CLASS_RUNTIME_NATIVE], 1);
		/* the JS samples, and the unnamed JIT leaf under the kernel frame */
		assert_int_equal(stats.jit_leaf_samples, 4);
		assert_int_equal(stats.jit_leaf_named, 3);
		assert_int_equal(stats.unsymbolized_frames, 3);
		assert_int_equal(stats.nr_no_perfmap_pids, 0);
	}
	fake_capture__release(&c);
}

static void test_hint(void **state)
{
	char buf[400];

	(void)state;
	cpu_profile__no_perfmap_hint(4781, buf, sizeof(buf));
	assert_non_null(strstr(buf, "pid 4781"));
	assert_non_null(strstr(buf, "--perf-basic-prof"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_and_read),
		cmocka_unit_test(test_hint),
	};

	return cmocka_run_group_tests(tests, fake_runtime__setup, fake_runtime__teardown);
}
