// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/attribution: samples grouped by (pid,
 * isolate) in order of first sample, per-class and deoptimizer counts, the
 * newest sample, the group outside any isolate, and what each group is
 * (the registry's name and version: from a code log, from JS frames, a
 * placeholder; a label once loaded).  Samples go through a real
 * sample_store, frame table and registry over fake_runtime.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "fake_runtime.h"
#include "user/attribute/attribution.h"

#define ISO_A 0xa000ull		/* has a code log */
#define ISO_B 0xb000ull		/* known from its JS frames only */
#define OTHER_PID 9999		/* not tracked: its frames stay unnamed */

static const char app_log[] = "v8-version,12,4,254,21,-node.33,0\n"
			      "script-source,3,/srv/app.js,main()\n";

struct sample_spec {
	uint64_t time_ns, isolate;
	uint32_t pid, tid;
	const char *comm;
	uint64_t kernel[2], user[3];
};

#define NR_SAMPLES 9

static const struct sample_spec *specs(void)
{
	static struct sample_spec s[NR_SAMPLES];

	/* function addresses are not constants: fill once at run time */
	const struct sample_spec init[NR_SAMPLES] = {
		{ 10, ISO_A, FAKE_PID, 1, "node", { 0 }, { FAKE_JIT_FIB, FN(fake_runtime_loop) } },
		{ 20, 0, FAKE_PID, 2, "V8 worker", { 0 },
		  { FN(fake_v8_concurrent_marking), FN(fake_runtime_loop) } },
		{ 30, ISO_A, FAKE_PID, 1, "node", { 0 },
		  { FN(fake_v8_collect_garbage), FAKE_JIT_FIB, FN(fake_runtime_loop) } },
		{ 40, ISO_B, FAKE_PID, 3, "worker", { 0 }, { FAKE_JIT_FIB, FN(fake_runtime_loop) } },
		{ 50, 0, FAKE_PID, 1, "node", { FAKE_K_EP_POLL, FAKE_K_SYSCALL },
		  { FN(fake_runtime_loop) } },
		{ 60, ISO_A, FAKE_PID, 1, "node", { FAKE_K_EP_POLL, FAKE_K_SYSCALL },
		  { FN(fake_runtime_loop) } },
		{ 35, ISO_A, FAKE_PID, 1, "node", { 0 }, { FAKE_JIT_DEOPT, FAKE_JIT_FIB } },
		{ 70, ISO_A, OTHER_PID, 5, "other", { 0 }, { FAKE_JIT_FIB } },
		{ 80, ISO_B, FAKE_PID, 3, "worker", { 0 }, { FN(fake_v8_builtin), FAKE_JIT_FIB } },
	};

	memcpy(s, init, sizeof(s));
	return s;
}

static size_t nonzero(const uint64_t *a, size_t max)
{
	size_t n = 0;

	while (n < max && a[n])
		n++;
	return n;
}

static void capture(struct fake_capture *c)
{
	const struct sample_spec *sp = specs();
	struct isoprof_sample s;
	char path[256];

	fake_capture__begin(c);
	fake_runtime__code_log(ISO_A, app_log, path, sizeof(path));
	assert_true(isolate_registry__add_log_pid(c->reg, FAKE_PID, path, NULL) > 0);
	for (size_t i = 0; i < NR_SAMPLES; i++) {
		fake_sample(&s, sp[i].time_ns, sp[i].isolate, sp[i].tid, sp[i].comm, sp[i].kernel,
			    nonzero(sp[i].kernel, 2), sp[i].user, nonzero(sp[i].user, 3));
		s.pid = sp[i].pid;
		assert_int_equal(sample_store__add(c->store, &s), 0);
	}
	fake_capture__finish(c);
}

static void expect_classes(const struct isolate_group *g, const uint64_t want[NR_SAMPLE_CLASSES])
{
	uint64_t sum = 0;

	for (int cls = 0; cls < NR_SAMPLE_CLASSES; cls++) {
		if (g->class_samples[cls] != want[cls])
			fail_msg("%s: %llu samples, expected %llu", sample_class__str(cls),
				 (unsigned long long)g->class_samples[cls],
				 (unsigned long long)want[cls]);
		sum += want[cls];
	}
	assert_int_equal(g->samples, sum);
}

static void test_groups(void **state)
{
	const char *name = "/srv/app.js", *src = "main()";
	size_t len = strlen(src);
	const struct isolate_group *g;
	char version[SHA256_HEX_LEN];
	struct fake_capture c;

	(void)state;
	assert_int_equal(isolate__version_id(&name, &src, &len, 1, version), 0);
	capture(&c);
	assert_int_equal(c.a.ngroups, 4);

	/* (pid, A): by the code log */
	g = &c.a.groups[0];
	assert_int_equal(g->pid, FAKE_PID);
	assert_int_equal(g->isolate, ISO_A);
	assert_string_equal(g->isolate_str, "0xa000");
	expect_classes(g, (const uint64_t[NR_SAMPLE_CLASSES]){
				  [CLASS_JS] = 1, [CLASS_GC] = 1, [CLASS_KERNEL] = 1,
				  [CLASS_V8_BUILTIN] = 1 });
	assert_int_equal(g->deopt_samples, 1);
	assert_int_equal(g->last_sample_ns, 60);
	assert_non_null(g->info);
	assert_true(g->info->has_code_log);
	assert_string_equal(isolate_group__script(g), "/srv/app.js");
	assert_string_equal(g->info->version_full, version);
	assert_memory_equal(isolate_group__version(g), version, ISOLATE_VERSION_LEN);

	/* outside any isolate: GC workers, and idle (the same wait is kernel in A) */
	g = &c.a.groups[1];
	assert_int_equal(g->isolate, 0);
	assert_string_equal(g->isolate_str, "");
	assert_null(g->info);
	assert_null(isolate_group__script(g));
	assert_null(isolate_group__version(g));
	expect_classes(g, (const uint64_t[NR_SAMPLE_CLASSES]){ [CLASS_GC] = 1,
							       [CLASS_IDLE] = 1 });
	assert_int_equal(g->deopt_samples, 0);
	assert_int_equal(g->last_sample_ns, 50);

	/* (pid, B): named after the scripts of its own JS frames */
	g = &c.a.groups[2];
	assert_int_equal(g->isolate, ISO_B);
	expect_classes(g, (const uint64_t[NR_SAMPLE_CLASSES]){ [CLASS_JS] = 1,
							       [CLASS_V8_BUILTIN] = 1 });
	assert_false(g->info->has_code_log);
	assert_string_equal(isolate_group__script(g), "/srv/w.js");
	assert_string_equal(isolate_group__version(g), ISOLATE_VERSION_UNKNOWN);

	/* the same address in another process is another isolate */
	g = &c.a.groups[3];
	assert_int_equal(g->pid, OTHER_PID);
	assert_int_equal(g->isolate, ISO_A);
	expect_classes(g, (const uint64_t[NR_SAMPLE_CLASSES]){ [CLASS_RUNTIME_NATIVE] = 1 });
	assert_string_equal(isolate_group__script(g), "isolate-0xa000");
	fake_capture__release(&c);
}

static void test_sample_groups_and_attr(void **state)
{
	static const size_t group_of[NR_SAMPLES] = { 0, 1, 0, 2, 1, 0, 0, 3, 2 };
	const struct stored_sample *samples;
	struct sample_attr attr;
	struct fake_capture c;

	(void)state;
	capture(&c);
	samples = sample_store__samples(c.store);
	for (size_t i = 0; i < NR_SAMPLES; i++) {
		assert_ptr_equal(attribution__group_of(&c.a, &samples[i]),
				 &c.a.groups[group_of[i]]);
		assert_int_equal(c.a.sample_group[i], group_of[i]);
	}

	memset(&attr, 0, sizeof(attr));
	attribution__sample_attr(&samples[0], &c.a, &attr);
	assert_string_equal(attr.isolate, "0xa000");
	assert_string_equal(attr.script, "/srv/app.js");
	assert_int_equal(strlen(attr.version), ISOLATE_VERSION_LEN);
	/* outside an isolate: nothing to say */
	memset(&attr, 0, sizeof(attr));
	attribution__sample_attr(&samples[1], &c.a, &attr);
	assert_null(attr.isolate);
	assert_null(attr.script);
	assert_null(attr.version);
	fake_capture__release(&c);
}

/* An operator's label replaces the version id. */
static void test_label(void **state)
{
	char path[256], text[128], err[128];
	struct sample_attr attr = { 0 };
	struct fake_capture c;

	(void)state;
	capture(&c);
	snprintf(text, sizeof(text), "app.js %s v7\n", c.a.groups[0].info->version_full);
	snprintf(path, sizeof(path), "%s/labels", fake_tmpdir);
	fake_write(path, text);
	assert_int_equal(isolate_registry__load_labels(c.reg, path, err, sizeof(err)), 1);
	assert_string_equal(isolate_group__version(&c.a.groups[0]), "v7");
	attribution__sample_attr(&sample_store__samples(c.store)[0], &c.a, &attr);
	assert_string_equal(attr.version, "v7");
	assert_string_equal(isolate_group__version(&c.a.groups[2]), ISOLATE_VERSION_UNKNOWN);
	fake_capture__release(&c);
}

static void test_empty(void **state)
{
	struct fake_capture c;

	(void)state;
	fake_capture__begin(&c);
	fake_capture__finish(&c);
	assert_int_equal(c.a.ngroups, 0);
	fake_capture__release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_sample_groups_and_attr),
		cmocka_unit_test(test_label),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, fake_runtime__setup, fake_runtime__teardown);
}
