// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for proto/pprof_merge: stacks matched by content across
 * profiles that number their ids differently (sparse ids included), labels
 * kept apart, values summed, the time range, comments once, the kinds that
 * do not merge, and a result that stays the size of its content however
 * many profiles went in.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pprof_builder.h"
#include "proto/pprof_merge.h"
#include "proto/pprof_reader.h"
#include "profile.pb-c.h"

#define SEC 1000000000LL

/* One sample of a test profile: a stack of function names (leaf first) and a thread label. */
struct tsample {
	const char *stack[4];
	const char *thread;
	int64_t count;
};

struct tprofile {
	int64_t time_ns, duration_ns;
	const char *comments[3];
	bool heap;		/* other sample types */
	bool reverse;		/* functions and locations created in the other order */
	struct tsample samples[4];
};

static struct pprof_profile *build(const struct tprofile *t)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_mapping_desc md = { .memory_start = 0x1000, .memory_limit = 0x9000,
					 .filename = "/usr/bin/workerd", .has_functions = true };
	static const char *const all[] = { "main", "handle", "fibAlpha", "sieveBeta" };
	uint64_t fn[4], loc[4], mapping, ids[4];
	struct pprof_profile *p;
	char err[256];
	uint8_t *data;
	size_t len;

	assert_non_null(b);
	if (t->heap) {
		assert_int_equal(pprof_builder__add_sample_type(b, "alloc_objects", "count"), 0);
		assert_int_equal(pprof_builder__add_sample_type(b, "alloc_space", "bytes"), 0);
	} else {
		assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
		assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
		pprof_builder__set_period(b, "cpu", "nanoseconds", 10101010);
		pprof_builder__set_default_sample_type(b, "cpu");
	}
	pprof_builder__set_time(b, t->time_ns, t->duration_ns);
	for (size_t i = 0; i < 3 && t->comments[i]; i++)
		assert_int_equal(pprof_builder__add_comment(b, t->comments[i]), 0);
	mapping = pprof_builder__mapping(b, &md);
	for (int k = 0; k < 4; k++) {
		int i = t->reverse ? 3 - k : k;
		struct pprof_line line;

		fn[i] = pprof_builder__function(b, all[i], "", "worker.js", 10 * i + 1);
		line = (struct pprof_line){ .function_id = fn[i], .line = 10 * i + 2 };
		loc[i] = pprof_builder__location(b, mapping, 0x2000 + 0x10 * (uint64_t)i, &line, 1);
		assert_true(fn[i] && loc[i]);
	}
	for (size_t s = 0; s < 4 && t->samples[s].count; s++) {
		const struct tsample *ts = &t->samples[s];
		struct pprof_label labels[2] = {
			{ .key = "thread", .str = ts->thread },
			{ .key = "class", .str = "js" },
		};
		int64_t values[2] = { ts->count, ts->count * 10101010 };
		size_t n = 0;

		for (; n < 4 && ts->stack[n]; n++)
			for (int i = 0; i < 4; i++)
				if (!strcmp(ts->stack[n], all[i]))
					ids[n] = loc[i];
		/* label order carries no meaning: the reversed profile lists them the other way */
		if (t->reverse) {
			struct pprof_label x = labels[0];

			labels[0] = labels[1];
			labels[1] = x;
		}
		assert_int_equal(pprof_builder__add_sample(b, ids, n, values, 2, labels, 2), 0);
	}
	assert_int_equal(pprof_builder__serialize(b, true, &data, &len), 0);
	pprof_builder__free(b);
	assert_int_equal(pprof_profile__parse(data, len, &p, err, sizeof(err)), 0);
	free(data);
	return p;
}

static void add(struct pprof_merge *m, const struct tprofile *t)
{
	struct pprof_profile *p = build(t);
	char err[256] = "";

	if (pprof_merge__add(m, p, err, sizeof(err)))
		fail_msg("add: %s", err);
	pprof_profile__free(p);
}

static struct pprof_profile *result(struct pprof_merge *m)
{
	struct pprof_profile *p;
	char err[256];
	uint8_t *data;
	size_t len;

	assert_int_equal(pprof_merge__serialize(m, true, &data, &len), 0);
	if (pprof_profile__parse(data, len, &p, err, sizeof(err)))
		fail_msg("the merged profile does not read back: %s", err);
	free(data);
	return p;
}

/* The merged count of a stack (leaf first, names joined by ';') with a thread label. */
static int64_t count_of(const struct pprof_profile *p, const char *stack, const char *thread)
{
	struct pprof_stack st = { 0 };
	int64_t total = 0;
	int found = 0;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		char names[256] = "";
		const char *th = pprof_profile__label(p, s, "thread");

		assert_int_equal(pprof_profile__stack(p, s, &st), 0);
		for (size_t i = 0; i < st.n; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
				 i ? ";" : "", st.frames[i]->name);
		if (!strcmp(names, stack) && th && !strcmp(th, thread)) {
			total += pprof_profile__value(p, s, 0);
			/* summed cpu goes with summed samples */
			assert_int_equal(pprof_profile__value(p, s, 1),
					 pprof_profile__value(p, s, 0) * 10101010);
			found++;
		}
	}
	pprof_stack__release(&st);
	/* identical stacks and labels are one sample */
	assert_true(found <= 1);
	return total;
}

static const struct tprofile w1 = {
	.time_ns = 1796333100 * SEC, .duration_ns = 10 * SEC,
	.comments = { "isoprof record --out-dir w", "gc: 3 pauses" },
	.samples = {
		{ { "fibAlpha", "handle", "main" }, "js-main", 5 },
		{ { "handle", "main" }, "js-main", 2 },
		{ { "fibAlpha", "handle", "main" }, "worker", 1 },
	},
};

static const struct tprofile w2 = {
	.time_ns = 1796333110 * SEC, .duration_ns = 10 * SEC,
	.comments = { "isoprof record --out-dir w", "gc: 5 pauses" },
	.reverse = true,
	.samples = {
		{ { "fibAlpha", "handle", "main" }, "js-main", 7 },
		{ { "sieveBeta", "main" }, "js-main", 4 },
	},
};

static void test_sums_by_content(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	const Perftools__Profiles__Profile *msg;
	struct pprof_profile *p;

	(void)state;
	assert_non_null(m);
	add(m, &w1);
	add(m, &w2);
	assert_int_equal(pprof_merge__count(m), 2);
	p = result(m);
	msg = pprof_profile__proto(p);
	assert_int_equal(count_of(p, "fibAlpha;handle;main", "js-main"), 12);
	assert_int_equal(count_of(p, "handle;main", "js-main"), 2);
	assert_int_equal(count_of(p, "fibAlpha;handle;main", "worker"), 1);
	assert_int_equal(count_of(p, "sieveBeta;main", "js-main"), 4);
	assert_int_equal(pprof_profile__sample_count(p), 4);
	/* created in the other order, numbered otherwise: still one of each */
	assert_int_equal(msg->n_function, 4);
	assert_int_equal(msg->n_location, 4);
	assert_int_equal(msg->n_mapping, 1);
	assert_int_equal(msg->period, 10101010);
	assert_string_equal(pprof_profile__string(p, msg->default_sample_type), "cpu");
	assert_string_equal(pprof_profile__sample_type(p, 1, NULL), "cpu");
	pprof_profile__free(p);
	pprof_merge__free(m);
}

static void test_time_and_comments(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	const Perftools__Profiles__Profile *msg;
	struct tprofile early = w1;
	struct pprof_profile *p;
	int64_t from, until;

	(void)state;
	/* given out of order: the range is still earliest start to latest end */
	add(m, &w2);
	early.time_ns -= 3600 * SEC;
	early.duration_ns = 5 * SEC;
	add(m, &early);
	assert_true(pprof_merge__range(m, &from, &until));
	assert_int_equal(from, 1796329500 * SEC);
	assert_int_equal(until, 1796333120 * SEC);
	p = result(m);
	msg = pprof_profile__proto(p);
	assert_int_equal(msg->time_nanos, 1796329500 * SEC);
	assert_int_equal(msg->duration_nanos, 3620 * SEC);
	assert_int_equal(msg->n_comment, 4);
	assert_string_equal(pprof_profile__string(p, msg->comment[0]), "isoprof record --out-dir w");
	assert_string_equal(pprof_profile__string(p, msg->comment[1]), "gc: 5 pauses");
	assert_string_equal(pprof_profile__string(p, msg->comment[2]), "gc: 3 pauses");
	assert_string_equal(pprof_profile__string(p, msg->comment[3]),
			    "merged 2 profiles: 2026-12-03T20:25:00Z to 2026-12-03T21:25:20Z");
	pprof_profile__free(p);
	pprof_merge__free(m);
}

static void test_other_kind_refused(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	struct tprofile heap = w2;
	struct pprof_profile *p, *h;
	char err[256] = "";

	(void)state;
	add(m, &w1);
	heap.heap = true;
	h = build(&heap);
	assert_int_equal(pprof_merge__add(m, h, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sample types [alloc_objects/count, alloc_space/bytes] differ "
				    "from [samples/count, cpu/nanoseconds]"));
	pprof_profile__free(h);
	/* the merge goes on without it */
	add(m, &w2);
	assert_int_equal(pprof_merge__count(m), 2);
	p = result(m);
	assert_int_equal(count_of(p, "fibAlpha;handle;main", "js-main"), 12);
	pprof_profile__free(p);
	pprof_merge__free(m);

	/* the first profile sets the kind */
	m = pprof_merge__new();
	add(m, &heap);
	h = build(&w1);
	assert_int_equal(pprof_merge__add(m, h, err, sizeof(err)), -EINVAL);
	pprof_profile__free(h);
	pprof_merge__free(m);
}

static void test_nothing_merged(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	uint8_t *data;
	size_t len;

	(void)state;
	assert_int_equal(pprof_merge__serialize(m, true, &data, &len), -EINVAL);
	assert_null(data);
	pprof_merge__free(m);
}

/* An hour of identical windows merges into what one window holds, values times 360. */
static void test_bounded_by_content(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	const Perftools__Profiles__Profile *msg;
	struct pprof_profile *p;
	struct tprofile w = w1;

	(void)state;
	for (int i = 0; i < 360; i++) {
		w.time_ns = w1.time_ns + i * 10 * SEC;
		add(m, &w);
	}
	p = result(m);
	msg = pprof_profile__proto(p);
	assert_int_equal(pprof_profile__sample_count(p), 3);
	assert_int_equal(msg->n_location, 4);
	assert_int_equal(msg->n_comment, 3);
	assert_int_equal(count_of(p, "fibAlpha;handle;main", "js-main"), 5 * 360);
	assert_int_equal(msg->duration_nanos, 3600 * SEC);
	pprof_profile__free(p);
	pprof_merge__free(m);
}

/*
 * A profile another writer made: ids out of order and far from their
 * index, a location without a mapping, a numeric label, a label pprof
 * drops, no time.
 */
static struct pprof_profile *sparse_profile(void)
{
	static char *strs[] = { "", "samples", "count", "cpu", "nanoseconds", "fibAlpha",
				"worker.js", "bytes", "size", "thread", "main" };
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType st[2] = { PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
						 PERFTOOLS__PROFILES__VALUE_TYPE__INIT };
	Perftools__Profiles__ValueType *stp[2] = { &st[0], &st[1] };
	Perftools__Profiles__Function f[2] = { PERFTOOLS__PROFILES__FUNCTION__INIT,
					       PERFTOOLS__PROFILES__FUNCTION__INIT };
	Perftools__Profiles__Function *fp[2] = { &f[0], &f[1] };
	Perftools__Profiles__Line ln[2] = { PERFTOOLS__PROFILES__LINE__INIT,
					    PERFTOOLS__PROFILES__LINE__INIT };
	Perftools__Profiles__Line *lnp0[1] = { &ln[0] }, *lnp1[1] = { &ln[1] };
	Perftools__Profiles__Location l[2] = { PERFTOOLS__PROFILES__LOCATION__INIT,
					       PERFTOOLS__PROFILES__LOCATION__INIT };
	Perftools__Profiles__Location *lp[2] = { &l[0], &l[1] };
	Perftools__Profiles__Label lb[2] = { PERFTOOLS__PROFILES__LABEL__INIT,
					     PERFTOOLS__PROFILES__LABEL__INIT };
	Perftools__Profiles__Label *lbp[2] = { &lb[0], &lb[1] };
	Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
	Perftools__Profiles__Sample *sp[1] = { &s };
	uint64_t locids[2] = { 900, 17 };
	int64_t values[2] = { 3, 30303030 };
	struct pprof_profile *p;
	char err[256];
	uint8_t buf[4096];
	size_t len;

	prof.n_string_table = sizeof(strs) / sizeof(strs[0]);
	prof.string_table = strs;
	st[0].type = 1, st[0].unit = 2, st[1].type = 3, st[1].unit = 4;
	prof.n_sample_type = 2, prof.sample_type = stp;
	f[0].id = 44, f[0].name = 5, f[0].filename = 6;
	f[1].id = 3, f[1].name = 10;
	prof.n_function = 2, prof.function = fp;
	ln[0].function_id = 44, ln[0].line = 2;
	ln[1].function_id = 3;
	l[0].id = 900, l[0].address = 0x2000, l[0].n_line = 1, l[0].line = lnp0;
	l[1].id = 17, l[1].address = 0x2000, l[1].n_line = 1, l[1].line = lnp1;
	prof.n_location = 2, prof.location = lp;
	lb[0].key = 8, lb[0].num = 64, lb[0].num_unit = 7;
	lb[1].key = 9;		/* neither str nor num: pprof drops it */
	s.n_location_id = 2, s.location_id = locids;
	s.n_value = 2, s.value = values;
	s.n_label = 2, s.label = lbp;
	prof.n_sample = 1, prof.sample = sp;
	len = perftools__profiles__profile__get_packed_size(&prof);
	assert_true(len <= sizeof(buf));
	perftools__profiles__profile__pack(&prof, buf);
	if (pprof_profile__parse(buf, len, &p, err, sizeof(err)))
		fail_msg("sparse profile: %s", err);
	return p;
}

static void test_sparse_ids(void **state)
{
	struct pprof_merge *m = pprof_merge__new();
	struct pprof_profile *in, *p;
	struct pprof_stack st = { 0 };
	int64_t num = 0;
	char err[256];

	(void)state;
	in = sparse_profile();
	for (int i = 0; i < 2; i++)
		assert_int_equal(pprof_merge__add(m, in, err, sizeof(err)), 0);
	pprof_profile__free(in);
	p = result(m);
	assert_int_equal(pprof_profile__sample_count(p), 1);
	assert_int_equal(pprof_profile__value(p, 0, 0), 6);
	assert_int_equal(pprof_profile__stack(p, 0, &st), 0);
	assert_int_equal(st.n, 2);
	assert_string_equal(st.frames[0]->name, "fibAlpha");
	assert_string_equal(st.frames[0]->filename, "worker.js");
	assert_int_equal(st.frames[0]->line, 2);
	assert_false(st.frames[0]->has_mapping);
	assert_string_equal(st.frames[1]->name, "main");
	assert_true(pprof_profile__num_label(p, 0, "size", &num));
	assert_int_equal(num, 64);
	assert_int_equal(pprof_profile__proto(p)->sample[0]->n_label, 1);
	assert_int_equal(pprof_profile__proto(p)->time_nanos, 0);
	assert_string_equal(pprof_profile__string(p, pprof_profile__proto(p)->comment[0]),
			    "merged 2 profiles");
	pprof_stack__release(&st);
	pprof_profile__free(p);
	pprof_merge__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sums_by_content),
		cmocka_unit_test(test_time_and_comments),
		cmocka_unit_test(test_other_kind_refused),
		cmocka_unit_test(test_nothing_merged),
		cmocka_unit_test(test_bounded_by_content),
		cmocka_unit_test(test_sparse_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
