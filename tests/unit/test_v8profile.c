// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for proto/'s V8 formats (cpuprofile, heapprofile, folded,
 * v8json, through v8profile.h): a real node --cpu-prof / --heap-prof
 * output (tests/fixtures/v8/, made by busy.js and heap.js beside them),
 * DevTools structure checks, the pprof conversions both ways and folded
 * stacks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "proto/heap_summary.h"
#include "proto/v8profile.h"

#define FIXTURES "tests/fixtures/v8/"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	assert_true(n > 0);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static struct pprof_profile *to_reader(struct pprof_builder *b)
{
	struct pprof_profile *p;
	uint8_t *data;
	size_t len;
	char err[256];

	assert_int_equal(pprof_builder__serialize(b, true, &data, &len), 0);
	if (pprof_profile__parse(data, len, &p, err, sizeof(err)))
		fail_msg("pprof_profile__parse: %s", err);
	free(data);
	return p;
}

/* Per-function (name + file) self values of one sample type. */
struct fn_total {
	char key[512];
	int64_t value;
};

struct fn_totals {
	struct fn_total t[256];
	size_t n;
};

static void totals_add(struct fn_totals *ft, const char *name, const char *file, int64_t v)
{
	char key[512];

	/* the test's names are short: a longer one is a test bug */
	assert_true(snprintf(key, sizeof(key), "%s\t%s", name, file) < (int)sizeof(key));
	for (size_t i = 0; i < ft->n; i++) {
		if (!strcmp(ft->t[i].key, key)) {
			ft->t[i].value += v;
			return;
		}
	}
	assert_true(ft->n < 256);
	strcpy(ft->t[ft->n].key, key);
	ft->t[ft->n++].value = v;
}

static int64_t totals_get(const struct fn_totals *ft, const char *name, const char *file)
{
	char key[512];

	/* a key that does not fit cannot have been stored either */
	if (snprintf(key, sizeof(key), "%s\t%s", name, file) >= (int)sizeof(key))
		return 0;
	for (size_t i = 0; i < ft->n; i++)
		if (!strcmp(ft->t[i].key, key))
			return ft->t[i].value;
	return 0;
}

static void pprof_self(const struct pprof_profile *p, size_t si, struct fn_totals *ft)
{
	struct pprof_stack st = { 0 };

	ft->n = 0;
	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		assert_int_equal(pprof_profile__stack(p, s, &st), 0);
		if (!st.n)
			continue;
		totals_add(ft, st.frames[0]->name, st.frames[0]->filename,
			   pprof_profile__value(p, s, si));
	}
	pprof_stack__release(&st);
}

/* Self counts of a V8 profile from `samples`, keyed like pprof's functions. */
static void v8_self(const struct v8_cpu_profile *p, struct fn_totals *ft)
{
	ft->n = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct v8_cpu_node *nd = &p->nodes[p->samples[i]];

		if (!p->samples[i])
			continue;
		totals_add(ft, *nd->function_name ? nd->function_name : "(anonymous)", nd->url, 1);
	}
}

static void assert_same_totals(const struct fn_totals *a, const struct fn_totals *b)
{
	size_t nonzero = 0;

	for (size_t i = 0; i < a->n; i++) {
		const char *tab = strchr(a->t[i].key, '\t');
		char name[512];

		snprintf(name, sizeof(name), "%.*s", (int)(tab - a->t[i].key), a->t[i].key);
		if (totals_get(b, name, tab + 1) != a->t[i].value)
			fail_msg("%s: %lld vs %lld", a->t[i].key, (long long)a->t[i].value,
				 (long long)totals_get(b, name, tab + 1));
		nonzero += a->t[i].value != 0;
	}
	for (size_t i = 0; i < b->n; i++)
		nonzero -= b->t[i].value != 0;
	assert_int_equal(nonzero, 0);
}

static void test_parse_real(void **state)
{
	struct v8_cpu_profile *p;
	size_t len, fib = 0, children = 0;
	char *json = slurp(FIXTURES "node20.cpuprofile", &len), err[256];

	(void)state;
	if (v8_cpu_profile__parse(json, len, &p, err, sizeof(err)))
		fail_msg("parse: %s", err);
	assert_int_equal(v8_cpu_profile__validate_json(json, len, err, sizeof(err)), 0);
	assert_int_equal(p->nnodes, 73);
	assert_int_equal(p->nsamples, 131);
	assert_non_null(p->time_deltas);
	assert_true(p->start_time < p->end_time);
	assert_string_equal(p->nodes[0].function_name, "(root)");
	assert_int_equal(p->nodes[0].parent, UINT32_MAX);
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct v8_cpu_node *nd = &p->nodes[i];

		for (uint32_t k = 0; k < nd->nchildren; k++)
			assert_int_equal(p->nodes[nd->children[k]].parent, i);
		children += nd->nchildren;
		if (!strcmp(nd->function_name, "fib")) {
			assert_true(strstr(nd->url, "busy.js") != NULL);
			assert_int_equal(nd->line, 0);	/* line 1 of busy.js, 0-based */
			assert_true(nd->column > 0);
		}
	}
	assert_int_equal(children, p->nnodes - 1);
	for (size_t i = 0; i < p->nsamples; i++)
		fib += !strcmp(p->nodes[p->samples[i]].function_name, "fib");
	assert_int_equal(fib, 96);
	v8_cpu_profile__free(p);

	/* the same profile inside a CDP reply to Profiler.stop */
	{
		char *wrapped = malloc(len + 64);
		int n;

		assert_non_null(wrapped);
		n = snprintf(wrapped, len + 64, "{\"id\":7,\"result\":{\"profile\":%s}}", json);
		if (v8_cpu_profile__parse(wrapped, (size_t)n, &p, err, sizeof(err)))
			fail_msg("wrapped: %s", err);
		assert_int_equal(p->nsamples, 131);
		v8_cpu_profile__free(p);
		free(wrapped);
	}
	free(json);
}

#define CF(name) "\"callFrame\":{\"functionName\":\"" name "\",\"scriptId\":\"0\",\"url\":\"\"," \
		 "\"lineNumber\":-1,\"columnNumber\":-1}"

static void expect_invalid(const char *json, const char *needle)
{
	char err[256] = "";
	struct v8_cpu_profile *p = (void *)1;

	if (v8_cpu_profile__validate_json(json, strlen(json), err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", json);
	if (!strstr(err, needle))
		fail_msg("error '%s' lacks '%s'", err, needle);
	assert_int_equal(v8_cpu_profile__parse(json, strlen(json), &p, err, sizeof(err)),
			 -EINVAL);
	assert_null(p);
}

static void test_validate(void **state)
{
	const char *ok = "{\"nodes\":[{\"id\":1," CF("(root)") ",\"children\":[2,3]},"
			 "{\"id\":2," CF("a") ",\"children\":[4]},{\"id\":3," CF("b") "},"
			 "{\"id\":4," CF("c") "}],\"startTime\":10,\"endTime\":20,"
			 "\"samples\":[4,3,4],\"timeDeltas\":[1,2,3]}";
	char err[256];

	(void)state;
	if (v8_cpu_profile__validate_json(ok, strlen(ok), err, sizeof(err)))
		fail_msg("valid profile rejected: %s", err);

	expect_invalid("{\"nodes\":[]}", "non-empty");
	expect_invalid("[1,2]", "not a JSON object");
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "}", "truncated");
	/* missing root */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("main") "}],\"startTime\":0,\"endTime\":0}",
		       "(root)");
	/* bad parent: a child id that is no node */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") ",\"children\":[9]}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "children[0] is not a node id");
	/* two parents */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") ",\"children\":[2,3]},"
		       "{\"id\":2," CF("a") ",\"children\":[3]},{\"id\":3," CF("b") "}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "two parents");
	/* cycle away from the root: 2 -> 3 -> 2 */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "},"
		       "{\"id\":2," CF("a") ",\"children\":[3]},"
		       "{\"id\":3," CF("b") ",\"children\":[2]}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "cycle");
	/* cycle through the root */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") ",\"children\":[2]},"
		       "{\"id\":2," CF("a") ",\"children\":[1]}],\"startTime\":0,\"endTime\":0}",
		       "cycle");
	/* unreachable */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "},{\"id\":2," CF("a") "}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "not reachable");
	/* dangling sample */
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "}],\"startTime\":0,\"endTime\":0,"
		       "\"samples\":[1,5]}",
		       "samples[1]");
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "}],\"startTime\":0,\"endTime\":0,"
		       "\"samples\":[1,1],\"timeDeltas\":[5]}",
		       "timeDeltas");
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "},{\"id\":1," CF("a") "}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "repeats");
	expect_invalid("{\"nodes\":[{\"id\":0," CF("(root)") "}],\"startTime\":0,\"endTime\":0}",
		       "positive");
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "}],\"startTime\":9,\"endTime\":1}",
		       "after endTime");
	expect_invalid("{\"nodes\":[{\"id\":1," CF("(root)") "}]}", "startTime");
	expect_invalid("{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\","
		       "\"scriptId\":\"0\",\"url\":\"\",\"lineNumber\":1.5,\"columnNumber\":-1}}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "lineNumber");
	expect_invalid("{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\","
		       "\"url\":\"\",\"lineNumber\":1,\"columnNumber\":-1}}],"
		       "\"startTime\":0,\"endTime\":0}",
		       "scriptId");
	expect_invalid("{\"id\":3,\"error\":{\"code\":-32000,\"message\":\"No recording "
		       "profiles found\"}}",
		       "No recording profiles found");
}

static void test_to_pprof_real(void **state)
{
	struct v8_cpu_profile *v8;
	struct pprof_builder *b;
	struct pprof_profile *p;
	struct fn_totals want, got;
	struct pprof_label lab = { .key = "isolate", .str = "0xabc" };
	struct v8_pprof_opts o = { .time_nanos = 1700000000000000000LL, .labels = &lab,
				   .nlabels = 1 };
	const Perftools__Profiles__Profile *msg;
	size_t len, classes[5] = { 0 };
	static const char *const class_names[] = { "js", "gc", "idle", "program", "v8-builtin" };
	char *json = slurp(FIXTURES "node20.cpuprofile", &len), err[256];
	const char *unit;
	int64_t total = 0, cpu = 0;
	bool comment = false;

	(void)state;
	assert_int_equal(v8_cpu_profile__parse(json, len, &v8, err, sizeof(err)), 0);
	assert_int_equal(v8_cpu_profile__to_pprof(v8, &o, &b), 0);
	p = to_reader(b);
	msg = pprof_profile__proto(p);

	assert_int_equal(pprof_profile__sample_type_count(p), 2);
	assert_string_equal(pprof_profile__sample_type(p, 0, &unit), "samples");
	assert_string_equal(unit, "count");
	assert_string_equal(pprof_profile__sample_type(p, 1, &unit), "cpu");
	assert_string_equal(unit, "nanoseconds");
	assert_string_equal(pprof_profile__string(p, msg->period_type->type), "cpu");
	assert_true(msg->period >= 900000 && msg->period <= 1200000);	/* --cpu-prof: 1 ms */
	assert_int_equal(msg->time_nanos, o.time_nanos);
	assert_int_equal(msg->duration_nanos, (v8->end_time - v8->start_time) * 1000);
	for (size_t i = 0; i < msg->n_comment; i++)
		comment |= strstr(pprof_profile__string(p, msg->comment[i]),
				  "source: V8 CPU profiler (.cpuprofile), 131 samples") != NULL;
	assert_true(comment);

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		const char *cls = pprof_profile__label(p, s, "class");
		size_t k;

		assert_non_null(cls);
		assert_string_equal(pprof_profile__label(p, s, "isolate"), "0xabc");
		for (k = 0; k < 5 && strcmp(cls, class_names[k]); k++)
			;
		assert_true(k < 5);
		classes[k] += (size_t)pprof_profile__value(p, s, 0);
		total += pprof_profile__value(p, s, 0);
		cpu += pprof_profile__value(p, s, 1);
	}
	assert_int_equal(total, 131);
	assert_int_equal(cpu, 131 * msg->period);
	assert_int_equal(classes[1], 4);	/* (garbage collector) */
	assert_int_equal(classes[2], 1);	/* (idle) */
	assert_int_equal(classes[3], 1);	/* (program) */
	assert_int_equal(classes[0] + classes[4], 125);

	v8_self(v8, &want);
	pprof_self(p, 0, &got);
	assert_same_totals(&want, &got);
	assert_true(totals_get(&got, "fib", "") == 0);
	for (size_t i = 0; i < got.n; i++)
		if (!strncmp(got.t[i].key, "fib\t", 4))
			assert_int_equal(got.t[i].value, 96);

	/* start_line = lineNumber + 1, 1-based */
	{
		struct pprof_stack st = { 0 };
		bool seen = false;

		for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
			assert_int_equal(pprof_profile__stack(p, s, &st), 0);
			for (size_t i = 0; i < st.n; i++) {
				if (strcmp(st.frames[i]->name, "fib"))
					continue;
				assert_int_equal(st.frames[i]->start_line, 1);
				assert_int_equal(st.frames[i]->line, 1);
				seen = true;
			}
			assert_string_not_equal(st.n ? st.frames[st.n - 1]->name : "x", "(root)");
		}
		pprof_stack__release(&st);
		assert_true(seen);
	}
	pprof_profile__free(p);
	pprof_builder__free(b);
	v8_cpu_profile__free(v8);
	free(json);
}

static void test_hitcount_fallback(void **state)
{
	const char *json = "{\"nodes\":[{\"id\":1," CF("(root)") ",\"children\":[2]},"
			   "{\"id\":2,\"callFrame\":{\"functionName\":\"\",\"scriptId\":\"5\","
			   "\"url\":\"file:///a.js\",\"lineNumber\":9,\"columnNumber\":3},"
			   "\"hitCount\":7}],\"startTime\":0,\"endTime\":7000}";
	struct v8_cpu_profile *v8;
	struct pprof_builder *b;
	struct pprof_profile *p;
	struct pprof_stack st = { 0 };
	char err[256];

	(void)state;
	if (v8_cpu_profile__parse(json, strlen(json), &v8, err, sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(v8_cpu_profile__to_pprof(v8, NULL, &b), 0);
	p = to_reader(b);
	assert_int_equal(pprof_profile__sample_count(p), 1);
	assert_int_equal(pprof_profile__value(p, 0, 0), 7);
	assert_int_equal(pprof_profile__value(p, 0, 1), 7 * 1000000LL);
	assert_string_equal(pprof_profile__label(p, 0, "class"), "js");
	assert_int_equal(pprof_profile__stack(p, 0, &st), 0);
	assert_int_equal(st.n, 1);
	assert_string_equal(st.frames[0]->name, "(anonymous)");
	assert_string_equal(st.frames[0]->system_name, "");
	assert_string_equal(st.frames[0]->filename, "file:///a.js");
	assert_int_equal(st.frames[0]->start_line, 10);
	pprof_stack__release(&st);
	pprof_profile__free(p);
	pprof_builder__free(b);
	v8_cpu_profile__free(v8);
}

/* A pprof profile as isoprof writes them, with an inlined frame and native frames. */
static struct pprof_builder *made_profile(void)
{
	struct pprof_builder *b = pprof_builder__new();
	uint64_t f_main, f_hot, f_inl, f_gc, f_native, f_anon, l_main, l_hot, l_inl, l_gc, l_nat,
		l_anon;
	struct pprof_line two[2];
	struct pprof_line one;
	struct pprof_label js = { .key = "class", .str = "js" };
	struct pprof_label gc = { .key = "class", .str = "gc" };

	assert_non_null(b);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	pprof_builder__set_period(b, "cpu", "nanoseconds", 10000000);
	pprof_builder__set_time(b, 1700000000123456789LL, 2000000000);
	f_main = pprof_builder__function(b, "main", "JS:~main", "/srv/app.js", 3);
	f_hot = pprof_builder__function(b, "hot", "JS:*hot", "/srv/app.js", 20);
	f_inl = pprof_builder__function(b, "inlined", "JS:inlined", "/srv/lib.js", 7);
	f_gc = pprof_builder__function(b, "(garbage collector)", "(garbage collector)", NULL, 0);
	f_native = pprof_builder__function(b, "v8::internal::Heap::Scavenge()",
					   "_ZN2v88internal4Heap8ScavengeEv", NULL, 0);
	f_anon = pprof_builder__function(b, "(anonymous)", "", "/srv/app.js", 40);
	one = (struct pprof_line){ f_main, 4, 0 };
	l_main = pprof_builder__location(b, 0, 0x1000, &one, 1);
	one = (struct pprof_line){ f_hot, 22, 0 };
	l_hot = pprof_builder__location(b, 0, 0x2000, &one, 1);
	two[0] = (struct pprof_line){ f_inl, 8, 0 };
	two[1] = (struct pprof_line){ f_hot, 25, 0 };
	l_inl = pprof_builder__location(b, 0, 0x2100, two, 2);
	one = (struct pprof_line){ f_gc, 0, 0 };
	l_gc = pprof_builder__location(b, 0, 0, &one, 1);
	one = (struct pprof_line){ f_native, 0, 0 };
	l_nat = pprof_builder__location(b, 0, 0x7000, &one, 1);
	one = (struct pprof_line){ f_anon, 41, 0 };
	l_anon = pprof_builder__location(b, 0, 0x3000, &one, 1);
	assert_true(l_main && l_hot && l_inl && l_gc && l_nat && l_anon);

	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_hot, l_main }, 2,
						   (int64_t[]){ 5, 50000000 }, 2, &js, 1), 0);
	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_inl, l_main }, 2,
						   (int64_t[]){ 3, 30000000 }, 2, &js, 1), 0);
	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_main }, 1,
						   (int64_t[]){ 1, 10000000 }, 2, &js, 1), 0);
	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_nat, l_gc }, 2,
						   (int64_t[]){ 2, 20000000 }, 2, &gc, 1), 0);
	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_anon, l_main }, 2,
						   (int64_t[]){ 4, 40000000 }, 2, &js, 1), 0);
	/* a zero count adds nothing */
	assert_int_equal(pprof_builder__add_sample(b, (uint64_t[]){ l_hot }, 1,
						   (int64_t[]){ 0, 0 }, 2, &js, 1), 0);
	return b;
}

static void test_from_pprof_round_trip(void **state)
{
	struct pprof_builder *b = made_profile(), *b2;
	struct pprof_profile *p = to_reader(b), *p2;
	struct v8_cpu_profile *v8;
	struct fn_totals orig, mid, back;
	char *json, err[256];
	size_t len, inl_nodes = 0;

	(void)state;
	if (v8_cpu_profile__from_pprof(p, &json, &len, err, sizeof(err)))
		fail_msg("from_pprof: %s", err);
	assert_int_equal(strlen(json), len);
	if (v8_cpu_profile__parse(json, len, &v8, err, sizeof(err)))
		fail_msg("our .cpuprofile does not validate: %s\n%s", err, json);
	assert_int_equal(v8->nodes[0].id, 1);
	assert_int_equal(v8->nsamples, 15);
	assert_int_equal(v8->start_time, 1700000000123456LL);
	assert_int_equal(v8->end_time, v8->start_time + 2000000);	/* duration > 15 x 10 ms */
	for (size_t i = 0; i < v8->nsamples; i++)
		assert_int_equal(v8->time_deltas[i], 10000);
	for (size_t i = 0; i < v8->nnodes; i++) {
		const struct v8_cpu_node *nd = &v8->nodes[i];
		uint32_t hits = 0;

		for (size_t s = 0; s < v8->nsamples; s++)
			hits += v8->samples[s] == i;
		assert_int_equal(nd->hit_count, hits);
		assert_int_equal(nd->column, -1);
		/* ids follow V8's pre-order: a child comes after its parent */
		if (i)
			assert_true(nd->id > v8->nodes[nd->parent].id);
		if (!strcmp(nd->function_name, "inlined")) {
			/* expanded: hot (the caller, last Line) is its parent */
			assert_string_equal(v8->nodes[nd->parent].function_name, "hot");
			assert_string_equal(nd->url, "/srv/lib.js");
			assert_int_equal(nd->line, 6);
			inl_nodes++;
		}
		if (!strcmp(nd->url, "/srv/app.js"))
			assert_string_equal(nd->script_id, "1");
		if (!strcmp(nd->url, "/srv/lib.js"))
			assert_string_equal(nd->script_id, "2");
		if (!*nd->url)
			assert_string_equal(nd->script_id, "0");
	}
	assert_int_equal(inl_nodes, 1);
	/* "(anonymous)" goes back to V8's empty name */
	assert_null(strstr(json, "\"(anonymous)\""));
	/* the two paths through hot (alone, and hosting the inlined frame) share one node */
	{
		size_t hot = 0;

		for (size_t i = 0; i < v8->nnodes; i++)
			hot += !strcmp(v8->nodes[i].function_name, "hot");
		assert_int_equal(hot, 1);
	}

	pprof_self(p, 0, &orig);
	v8_self(v8, &mid);
	assert_same_totals(&orig, &mid);
	assert_int_equal(v8_cpu_profile__to_pprof(v8, NULL, &b2), 0);
	p2 = to_reader(b2);
	pprof_self(p2, 0, &back);
	assert_same_totals(&orig, &back);
	assert_int_equal(pprof_profile__proto(p2)->period, 10000000);
	assert_int_equal(totals_get(&back, "inlined", "/srv/lib.js"), 3);
	assert_int_equal(totals_get(&back, "(anonymous)", "/srv/app.js"), 4);

	pprof_profile__free(p2);
	pprof_builder__free(b2);
	v8_cpu_profile__free(v8);
	free(json);
	pprof_profile__free(p);
	pprof_builder__free(b);
}

static void test_heap_real(void **state)
{
	struct pprof_builder *b;
	struct pprof_profile *p;
	struct fn_totals space, objects;
	struct json_object *root, *samples;
	const Perftools__Profiles__Profile *msg;
	size_t len;
	char *json = slurp(FIXTURES "node20.heapprofile", &len), err[256];
	int64_t total = 0, want_total = 0, big = 0;
	size_t nsamples;
	bool comment = false;

	(void)state;
	if (v8_heap_profile__to_pprof(json, len, NULL, 524288, &b, err, sizeof(err)))
		fail_msg("%s", err);
	p = to_reader(b);
	msg = pprof_profile__proto(p);
	assert_string_equal(pprof_profile__sample_type(p, 0, NULL), "alloc_objects");
	assert_string_equal(pprof_profile__sample_type(p, 1, NULL), "alloc_space");
	assert_int_equal(pprof_profile__sample_index(p, NULL, err, sizeof(err)), 1);
	assert_int_equal(msg->period, 524288);
	assert_string_equal(pprof_profile__string(p, msg->period_type->type), "space");
	assert_string_equal(pprof_profile__string(p, msg->period_type->unit), "bytes");
	for (size_t i = 0; i < msg->n_comment; i++)
		comment |= !strcmp(pprof_profile__string(p, msg->comment[i]),
				   "heap: allocations sampled during the window (V8 sampling heap "
				   "profiler, interval 524288 bytes); this is not retained memory");
	assert_true(comment);

	pprof_self(p, 1, &space);
	pprof_self(p, 0, &objects);
	for (size_t i = 0; i < space.n; i++)
		total += space.t[i].value;
	/* independent sum of selfSize over the tree */
	root = v8_json__parse(json, len, err, sizeof(err));
	assert_non_null(root);
	{
		struct json_object *pending[4096];
		size_t n = 0;

		assert_true(json_object_object_get_ex(root, "head", &pending[n++]));
		while (n) {
			struct json_object *node = pending[--n], *v, *ch;

			assert_true(json_object_object_get_ex(node, "selfSize", &v));
			want_total += json_object_get_int64(v);
			if (json_object_object_get_ex(node, "children", &ch))
				for (size_t i = 0; i < json_object_array_length(ch); i++) {
					assert_true(n < 4096);
					pending[n++] = json_object_array_get_idx(ch, i);
				}
		}
	}
	assert_int_equal(total, want_total);
	/* heap.js: bigAlloc allocates nearly everything */
	big = totals_get(&space, "bigAlloc", "");
	assert_true(big * 100 / total >= 90);
	assert_true(json_object_object_get_ex(root, "samples", &samples));
	nsamples = json_object_array_length(samples);
	{
		int64_t objs = 0;

		for (size_t i = 0; i < objects.n; i++)
			objs += objects.t[i].value;
		assert_int_equal(objs, nsamples);
		assert_true(totals_get(&objects, "bigAlloc", "") >= (int64_t)nsamples - 5);
	}
	/* the summary: the same totals, bigAlloc on top with its flat bytes */
	{
		struct heap_summary hs;

		assert_int_equal(heap_summary__compute(p, &hs), 0);
		assert_int_equal(hs.bytes, want_total);
		assert_int_equal(hs.objects, nsamples);
		assert_int_equal(hs.interval, 524288);
		assert_string_equal(hs.top_name, "bigAlloc");
		assert_string_equal(hs.top_file, "");
		assert_int_equal(hs.top_bytes, big);
		for (size_t i = 0; i < space.n; i++)
			assert_true(space.t[i].value <= hs.top_bytes);
		heap_summary__release(&hs);
		assert_null(hs.top_name);
	}
	json_object_put(root);
	pprof_profile__free(p);
	pprof_builder__free(b);
	free(json);
}

static void test_heap_small(void **state)
{
	/* CDP reply shape, no samples array, a non-JS bucket */
	const char *json =
		"{\"id\":4,\"result\":{\"profile\":{\"head\":{"
		"\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\",\"url\":\"\","
		"\"lineNumber\":-1,\"columnNumber\":-1},\"selfSize\":0,\"id\":1,\"children\":["
		"{\"callFrame\":{\"functionName\":\"(V8 API)\",\"scriptId\":\"0\",\"url\":\"\","
		"\"lineNumber\":-1,\"columnNumber\":-1},\"selfSize\":4096,\"id\":2,"
		"\"children\":[]},"
		"{\"callFrame\":{\"functionName\":\"outer\",\"scriptId\":\"3\",\"url\":\"w.js\","
		"\"lineNumber\":0,\"columnNumber\":0},\"selfSize\":0,\"id\":3,\"children\":["
		"{\"callFrame\":{\"functionName\":\"\",\"scriptId\":\"3\",\"url\":\"w.js\","
		"\"lineNumber\":4,\"columnNumber\":2},\"selfSize\":65536,\"id\":4,"
		"\"children\":[]}]}]}}}}";
	struct pprof_builder *b;
	struct pprof_profile *p;
	struct pprof_stack st = { 0 };
	char err[256];
	int64_t seen = 0;

	(void)state;
	if (v8_heap_profile__to_pprof(json, strlen(json), NULL, 32768, &b, err, sizeof(err)))
		fail_msg("%s", err);
	p = to_reader(b);
	assert_int_equal(pprof_profile__sample_count(p), 2);
	for (size_t s = 0; s < 2; s++) {
		assert_int_equal(pprof_profile__stack(p, s, &st), 0);
		assert_int_equal(pprof_profile__value(p, s, 0), 1);
		if (!strcmp(st.frames[0]->name, "(V8 API)")) {
			assert_int_equal(st.n, 1);
			assert_int_equal(pprof_profile__value(p, s, 1), 4096);
			seen |= 1;
		} else {
			assert_int_equal(st.n, 2);
			assert_string_equal(st.frames[0]->name, "(anonymous)");
			assert_int_equal(st.frames[0]->line, 5);
			assert_string_equal(st.frames[1]->name, "outer");
			assert_int_equal(pprof_profile__value(p, s, 1), 65536);
			seen |= 2;
		}
	}
	assert_int_equal(seen, 3);
	pprof_stack__release(&st);
	{
		struct heap_summary hs;

		/* the anonymous function's own bytes win; its line is its start line */
		assert_int_equal(heap_summary__compute(p, &hs), 0);
		assert_int_equal(hs.bytes, 4096 + 65536);
		assert_int_equal(hs.objects, 2);
		assert_int_equal(hs.interval, 32768);
		assert_string_equal(hs.top_name, "(anonymous)");
		assert_string_equal(hs.top_file, "w.js");
		assert_int_equal(hs.top_line, 5);
		assert_int_equal(hs.top_bytes, 65536);
		heap_summary__release(&hs);
	}
	pprof_profile__free(p);
	pprof_builder__free(b);

	assert_int_equal(v8_heap_profile__to_pprof("{\"nodes\":[]}", 12, NULL, 0, &b, err,
						   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "head"));
	assert_int_equal(v8_heap_profile__to_pprof("{\"head\":{\"id\":1,\"selfSize\":-4}}", 31,
						   NULL, 0, &b, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "selfSize"));
}

static char *folded_of(const struct pprof_profile *p, size_t si)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(folded__from_pprof(p, si, f), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_folded(void **state)
{
	const char *text = "main;hot;inlined 3\n"
			   "(garbage collector);v8::internal::Heap::Scavenge() 2\r\n"
			   "\n# a comment\n"
			   "main 1\n"
			   "main;hot 5\n"
			   "main;hot 2\n"
			   "main;(anonymous) 4\n";
	const char *want = "(garbage collector);v8::internal::Heap::Scavenge() 2\n"
			   "main 1\n"
			   "main;(anonymous) 4\n"
			   "main;hot 7\n"
			   "main;hot;inlined 3\n";
	struct pprof_builder *b = made_profile(), *fb;
	struct pprof_profile *p = to_reader(b), *fp;
	char *out, err[256];

	(void)state;
	/* not a heap profile: no summary of one */
	{
		struct heap_summary hs;

		assert_int_equal(heap_summary__compute(p, &hs), -EINVAL);
		assert_null(hs.top_name);
	}
	/* pprof → folded: inline frames expanded, root first, sorted */
	out = folded_of(p, 0);
	assert_string_equal(out, "(garbage collector);v8::internal::Heap::Scavenge() 2\n"
				 "main 1\n"
				 "main;(anonymous) 4\n"
				 "main;hot 5\n"
				 "main;hot;inlined 3\n");
	free(out);
	out = folded_of(p, 1);
	assert_non_null(strstr(out, "main;hot 50000000\n"));
	free(out);

	/* folded → pprof → folded */
	if (folded__to_pprof(text, strlen(text), &fb, err, sizeof(err)))
		fail_msg("%s", err);
	fp = to_reader(fb);
	assert_int_equal(pprof_profile__sample_type_count(fp), 1);
	assert_string_equal(pprof_profile__sample_type(fp, 0, NULL), "samples");
	out = folded_of(fp, 0);
	assert_string_equal(out, want);
	free(out);
	pprof_profile__free(fp);
	pprof_builder__free(fb);

	assert_int_equal(folded__to_pprof("a;b\n", 4, &fb, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 1"));
	assert_int_equal(folded__to_pprof("a 1\nb;c x2\n", 11, &fb, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));
	assert_int_equal(folded__to_pprof("\n\n", 2, &fb, err, sizeof(err)), -EINVAL);
	assert_int_equal(folded__to_pprof("a\0 1", 4, &fb, err, sizeof(err)), -EINVAL);

	/* names with ';' stay one frame */
	{
		struct pprof_builder *sb = pprof_builder__new();
		struct pprof_profile *sp;
		uint64_t fn, loc;
		struct pprof_line l = { 0 };

		assert_int_equal(pprof_builder__add_sample_type(sb, "samples", "count"), 0);
		fn = pprof_builder__function(sb, "a;b\nc", "a;b\nc", NULL, 0);
		l.function_id = fn;
		loc = pprof_builder__location(sb, 0, 0, &l, 1);
		assert_int_equal(pprof_builder__add_sample(sb, &loc, 1, (int64_t[]){ 9 }, 1, NULL,
							   0), 0);
		sp = to_reader(sb);
		out = folded_of(sp, 0);
		assert_string_equal(out, "a:b c 9\n");
		free(out);
		pprof_profile__free(sp);
		pprof_builder__free(sb);
	}
	pprof_profile__free(p);
	pprof_builder__free(b);
}

static void test_json_escaping(void **state)
{
	/* names that need escaping and bytes that are not UTF-8 survive as valid JSON */
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_profile *p;
	struct v8_cpu_profile *v8;
	struct pprof_line l = { 0 };
	uint64_t loc;
	char *json, err[256];
	size_t len;

	(void)state;
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	l.function_id = pprof_builder__function(b, "q\"b\\s\x01\xff\xc3\xa9", "", "u\n", 0);
	loc = pprof_builder__location(b, 0, 0, &l, 1);
	assert_int_equal(pprof_builder__add_sample(b, &loc, 1, (int64_t[]){ 2 }, 1, NULL, 0), 0);
	p = to_reader(b);
	assert_int_equal(v8_cpu_profile__from_pprof(p, &json, &len, err, sizeof(err)), 0);
	if (v8_cpu_profile__parse(json, len, &v8, err, sizeof(err)))
		fail_msg("%s\n%s", err, json);
	assert_string_equal(v8->nodes[1].function_name, "q\"b\\s\x01\xef\xbf\xbd\xc3\xa9");
	assert_string_equal(v8->nodes[1].url, "u\n");
	assert_int_equal(v8->nodes[1].hit_count, 2);
	/* no period, no duration: V8's default 1 ms */
	assert_int_equal(v8->time_deltas[0], 1000);
	v8_cpu_profile__free(v8);
	free(json);
	pprof_profile__free(p);
	pprof_builder__free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_real),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_to_pprof_real),
		cmocka_unit_test(test_hitcount_fallback),
		cmocka_unit_test(test_from_pprof_round_trip),
		cmocka_unit_test(test_heap_real),
		cmocka_unit_test(test_heap_small),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_json_escaping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
