// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pprof builder and reader tests.
 *
 * Run without arguments: the cmocka suite.  Run as `test_pprof --gen DIR`:
 * writes the profiles tests/e2e/top_vs_pprof.sh compares between
 * `isoprof top` and `go tool pprof -top` (see gen_profiles()).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"

/* Deterministic generator, so every run writes the same profiles. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static uint64_t rng_below(uint64_t n)
{
	return rng() % n;
}

/* Skewed pick in [0, n): low indices are much more likely, as in real profiles. */
static uint64_t rng_skewed(uint64_t n)
{
	uint64_t a = rng_below(n), b = rng_below(n), c = rng_below(n);

	a = a < b ? a : b;
	return a < c ? a : c;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Profiles for the e2e comparison with go tool pprof. */

struct gen_opts {
	const char *path;
	bool gzip;
	int nfuncs;
	int nstacks;		/* distinct stacks */
	int nevents;		/* add_sample calls */
	int max_depth;
	bool mappings;
	bool inline_frames;
	bool odd_names;		/* nameless functions, frames without lines, odd paths */
	bool idle;		/* (idle) frames and class=idle labels */
	bool negative;		/* some negative values */
	bool heap;		/* alloc_objects/alloc_space with a default sample type */
	int64_t value_scale;
};

static int gen_profile(const struct gen_opts *o)
{
	struct pprof_builder *b = pprof_builder__new();
	uint64_t *funcs, *locs, *stack_locs;
	int *stack_len, nlocs, err = -ENOMEM;
	uint64_t main_map = 0, lib_map = 0;
	char name[128], file[128];

	if (!b)
		return -ENOMEM;
	funcs = calloc((size_t)o->nfuncs + 2, sizeof(*funcs));
	nlocs = o->nfuncs * 3 + 16;
	locs = calloc((size_t)nlocs, sizeof(*locs));
	stack_locs = calloc((size_t)o->nstacks * (size_t)o->max_depth, sizeof(*stack_locs));
	stack_len = calloc((size_t)o->nstacks, sizeof(*stack_len));
	if (!funcs || !locs || !stack_locs || !stack_len)
		goto out;

	if (o->heap) {
		pprof_builder__add_sample_type(b, "alloc_objects", "count");
		pprof_builder__add_sample_type(b, "alloc_space", "bytes");
		pprof_builder__set_default_sample_type(b, "alloc_space");
		pprof_builder__set_period(b, "space", "bytes", 524288);
	} else {
		pprof_builder__add_sample_type(b, "samples", "count");
		pprof_builder__add_sample_type(b, "cpu", "nanoseconds");
		pprof_builder__set_period(b, "cpu", "nanoseconds", 1000000);
		pprof_builder__set_time(b, 1700000000123456789LL, 10000000000LL);
	}
	pprof_builder__add_comment(b, "isoprof test profile");
	pprof_builder__add_comment(b, "#hidden comment");
	if (o->mappings) {
		struct pprof_mapping_desc m = {
			.memory_start = 0x400000, .memory_limit = 0x800000,
			.filename = "/usr/local/bin/node", .build_id = "abc123",
			.has_functions = true, .has_filenames = true, .has_line_numbers = true,
		};

		main_map = pprof_builder__mapping(b, &m);
		m.memory_start = 0x7f0000000000;
		m.memory_limit = 0x7f0000100000;
		m.filename = "/usr/lib/x86_64-linux-gnu/libc.so.6";
		m.build_id = NULL;
		lib_map = pprof_builder__mapping(b, &m);
	}

	for (int i = 0; i < o->nfuncs; i++) {
		const char *fname = name, *sysname;
		char sys[64];

		snprintf(name, sizeof(name), "%s%03d", i % 7 ? "fn_" : "js::Module.handler_", i);
		snprintf(file, sizeof(file), "/srv/app/src/mod%d.js", i % 13);
		if (o->odd_names) {
			if (i % 11 == 3)
				snprintf(file, sizeof(file), "/proc/self/cwd/./lib/m%d.js", i % 5);
			else if (i % 11 == 4)
				snprintf(file, sizeof(file), "lib//x/../m%d.js", i % 5);
			else if (i % 11 == 5)
				file[0] = '\0';
			if (i % 17 == 9)
				fname = "";	/* nameless: pprof shows the binary */
			/* Names pprof rewrites: demangled; C++-ish ones lose (...), <...>. */
			if (i % 19 == 2)
				snprintf(name, sizeof(name),
					 "v8::internal::Builtin_%d(int, char**)", i % 4);
			else if (i % 19 == 6)
				snprintf(name, sizeof(name),
					 "JS:~<anonymous> /srv/app/x.js:%d", i % 3);
			else if (i % 19 == 8)
				snprintf(name, sizeof(name),
					 "_ZN2v88internal7Isolate4InitEPNS0_%dFooE", i % 3);
			else if (i % 19 == 13)
				snprintf(name, sizeof(name),
					 "std::vector<int>::push_back[clone .%d]", i % 2);
		}
		sysname = fname;
		if (o->odd_names && i % 19 == 11) {
			snprintf(sys, sizeof(sys), "sys_only_%d", i);
			fname = "";	/* pprof shows the system name */
			sysname = sys;
		}
		funcs[i] = pprof_builder__function(b, fname, sysname, file, 10 + i);
		if (!funcs[i])
			goto out;
	}
	if (o->idle)
		funcs[o->nfuncs] = pprof_builder__function(b, "(idle)", NULL, NULL, 0);

	/* Locations: one per function at two lines, plus inlined pairs and bare addresses. */
	for (int i = 0; i < nlocs; i++) {
		struct pprof_line lines[3];
		size_t nl = 1;
		uint64_t map = main_map;
		int f = i % o->nfuncs;

		lines[0] = (struct pprof_line){ funcs[f], 20 + (i / o->nfuncs) * 7, 0 };
		if (o->inline_frames && i % 9 == 4) {
			lines[1] = (struct pprof_line){ funcs[(f + 1) % o->nfuncs], 40 + i % 3, 0 };
			nl = 2;
			if (i % 27 == 4) {
				lines[2] = (struct pprof_line){ funcs[(f + 2) % o->nfuncs], 50, 0 };
				nl = 3;
			}
		}
		if (o->odd_names && i % 23 == 7) {
			nl = 0;
			map = i % 2 ? lib_map : 0;
		}
		locs[i] = pprof_builder__location(b, map, 0x401000 + (uint64_t)i * 16, lines, nl);
		if (!locs[i])
			goto out;
	}

	for (int s = 0; s < o->nstacks; s++) {
		int depth = 1 + (int)rng_below((uint64_t)o->max_depth);
		uint64_t *st = &stack_locs[(size_t)s * (size_t)o->max_depth];

		for (int d = 0; d < depth; d++) {
			/* Leaves skew to few hot locations, roots to a few entry points. */
			if (d && rng_below(8) == 0)
				st[d] = st[d - 1];	/* recursion */
			else if (rng_below(3) == 0)
				st[d] = locs[rng_skewed((uint64_t)nlocs)];
			else	/* a hot set, so some nodes clear pprof's cutoff */
				st[d] = locs[rng_skewed(nlocs < 48 ? (uint64_t)nlocs : 48)];
		}
		stack_len[s] = depth;
	}
	if (o->idle) {
		struct pprof_line l = { funcs[o->nfuncs], 0, 0 };
		uint64_t idle_loc = pprof_builder__location(b, 0, 0, &l, 1);

		/* (idle) as a lone frame, as a leaf under a root, and as a root. */
		for (int s = 0; s < o->nstacks; s += 10) {
			uint64_t *st = &stack_locs[(size_t)s * (size_t)o->max_depth];

			if (s % 30 == 0) {
				st[0] = idle_loc;
				stack_len[s] = 1;
			} else if (s % 30 == 10) {
				st[0] = idle_loc;
			} else {
				st[stack_len[s] - 1] = idle_loc;
			}
		}
	}

	for (int e = 0; e < o->nevents; e++) {
		int s = (int)rng_skewed((uint64_t)o->nstacks);
		int64_t v[2];
		struct pprof_label labels[2];
		size_t nlabels = 0;

		if (o->heap) {
			v[0] = 1 + (int64_t)rng_below(4);
			v[1] = v[0] * (16 + (int64_t)rng_below(4096));
		} else {
			v[0] = 1;
			v[1] = o->value_scale * (1 + (int64_t)rng_below(3));
		}
		if (o->negative && e % 5 == 0) {
			v[0] = -v[0];
			v[1] = -v[1];
		}
		if (e % 4 == 0)
			labels[nlabels++] = (struct pprof_label){ .key = "thread", .str = "main" };
		if (o->idle && s % 10 == 5)
			labels[nlabels++] = (struct pprof_label){ .key = "class", .str = "idle" };
		err = pprof_builder__add_sample(b, &stack_locs[(size_t)s * (size_t)o->max_depth],
						(size_t)stack_len[s], v, 2, labels, nlabels);
		if (err)
			goto out;
	}
	/* A sample with every value zero and one without locations: both count for nothing. */
	{
		int64_t z[2] = { 0, 0 }, v[2] = { 1, o->value_scale };

		err = pprof_builder__add_sample(b, locs, 1, z, 2, NULL, 0);
		if (!err)
			err = pprof_builder__add_sample(b, NULL, 0, v, 2, NULL, 0);
		if (err)
			goto out;
	}
	err = pprof_builder__write_file(b, o->path, o->gzip);
out:
	free(funcs);
	free(locs);
	free(stack_locs);
	free(stack_len);
	pprof_builder__free(b);
	return err;
}

static int gen_profiles(const char *dir)
{
	char path[4096];
	const struct {
		const char *name;
		struct gen_opts o;
	} profiles[] = {
		/* A node-like CPU profile: hundreds of functions, the cutoff drops many. */
		{ "cpu.pb.gz", { .gzip = true, .nfuncs = 400, .nstacks = 3000, .nevents = 20000,
				 .max_depth = 24, .mappings = true, .inline_frames = true,
				 .value_scale = 1000000 } },
		/* Many functions, shallow stacks: most fall under pprof's 0.5% node cutoff. */
		{ "wide.pb.gz", { .gzip = true, .nfuncs = 2000, .nstacks = 6000, .nevents = 30000,
				  .max_depth = 4, .mappings = true, .inline_frames = true,
				  .value_scale = 10000000 } },
		/* Odd names and paths, frames without lines, microsecond-sized values. */
		{ "odd.pb", { .gzip = false, .nfuncs = 60, .nstacks = 400, .nevents = 3000,
			      .max_depth = 12, .mappings = true, .inline_frames = true,
			      .odd_names = true, .value_scale = 1500 } },
		/* Few samples: no cutoff (total < 200), many ties. */
		{ "small.pb.gz", { .gzip = true, .nfuncs = 12, .nstacks = 20, .nevents = 60,
				   .max_depth = 5, .value_scale = 1 } },
		/* Heap-like: two sample types, default_sample_type, bytes. */
		{ "heap.pb.gz", { .gzip = true, .nfuncs = 150, .nstacks = 800, .nevents = 8000,
				  .max_depth = 16, .mappings = true, .heap = true } },
		/* Idle frames and labels for --hide-idle. */
		{ "idle.pb.gz", { .gzip = true, .nfuncs = 50, .nstacks = 300, .nevents = 4000,
				  .max_depth = 10, .idle = true, .value_scale = 10000000 } },
		/* Negative values, as in a diff. */
		{ "negative.pb.gz", { .gzip = true, .nfuncs = 80, .nstacks = 500,
				      .nevents = 5000, .max_depth = 10, .negative = true,
				      .value_scale = 250000 } },
	};

	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		struct gen_opts o = profiles[i].o;
		int err;

		snprintf(path, sizeof(path), "%s/%s", dir, profiles[i].name);
		o.path = path;
		err = gen_profile(&o);
		if (err) {
			fprintf(stderr, "test_pprof: %s: %s\n", path, strerror(-err));
			return 1;
		}
	}
	return 0;
}

/* Unit tests. */

static char tmpdir[4096];

static const char *tmp_path(const char *name)
{
	static char path[8192];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

static void test_string_interning(void **state)
{
	struct pprof_builder *b = pprof_builder__new();
	char buf[32];
	int64_t idx[2000];

	(void)state;
	assert_non_null(b);
	assert_int_equal(pprof_builder__string(b, ""), 0);
	assert_int_equal(pprof_builder__string(b, NULL), 0);
	assert_int_equal(pprof_builder__string(b, "cpu"), 1);
	assert_int_equal(pprof_builder__string(b, "nanoseconds"), 2);
	assert_int_equal(pprof_builder__string(b, "cpu"), 1);
	for (int i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		idx[i] = pprof_builder__string(b, buf);
		assert_true(idx[i] > 2);
	}
	/* Across table growth, the same string keeps its index. */
	for (int i = 0; i < 2000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		assert_int_equal(pprof_builder__string(b, buf), idx[i]);
		if (i)
			assert_int_not_equal(idx[i], idx[i - 1]);
	}
	assert_int_equal(pprof_builder__string(b, ""), 0);
	pprof_builder__free(b);
}

static void test_dedup(void **state)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_mapping_desc m = { 0x1000, 0x2000, 0, "/bin/node", "id1", true, true, true };
	uint64_t m1, m2, m3, f1, f2, f3, l1, l2, l3, l4;
	struct pprof_line lines[2];

	(void)state;
	assert_non_null(b);
	m1 = pprof_builder__mapping(b, &m);
	m2 = pprof_builder__mapping(b, &m);
	m.file_offset = 0x100;
	m3 = pprof_builder__mapping(b, &m);
	assert_int_equal(m1, 1);
	assert_int_equal(m2, m1);
	assert_int_equal(m3, 2);

	f1 = pprof_builder__function(b, "main", "main", "main.c", 1);
	f2 = pprof_builder__function(b, "main", "main", "main.c", 1);
	f3 = pprof_builder__function(b, "main", "main", "other.c", 1);
	assert_int_equal(f1, 1);
	assert_int_equal(f2, f1);
	assert_int_equal(f3, 2);

	lines[0] = (struct pprof_line){ f1, 10, 0 };
	lines[1] = (struct pprof_line){ f3, 20, 3 };
	l1 = pprof_builder__location(b, m1, 0x1234, lines, 2);
	l2 = pprof_builder__location(b, m1, 0x1234, lines, 2);
	l3 = pprof_builder__location(b, m1, 0x1234, lines, 1);
	l4 = pprof_builder__location(b, 0, 0x1234, NULL, 0);
	assert_int_equal(l1, 1);
	assert_int_equal(l2, l1);
	assert_int_equal(l3, 2);
	assert_int_equal(l4, 3);

	/* References to things that do not exist are refused, not written. */
	errno = 0;
	assert_int_equal(pprof_builder__location(b, 7, 0, NULL, 0), 0);
	assert_int_equal(errno, EINVAL);
	lines[0].function_id = 99;
	errno = 0;
	assert_int_equal(pprof_builder__location(b, 0, 0, lines, 1), 0);
	assert_int_equal(errno, EINVAL);
	lines[0].function_id = 0;
	assert_int_equal(pprof_builder__location(b, 0, 0, lines, 1), 0);
	pprof_builder__free(b);
}

static void test_merge(void **state)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_label la[2] = { { .key = "thread", .str = "main" },
				     { .key = "bytes", .num = 64, .num_unit = "bytes" } };
	struct pprof_label lb[2] = { la[1], la[0] };	/* same set, other order */
	struct pprof_label lc[1] = { { .key = "thread", .str = "worker" } };
	struct pprof_profile *p;
	uint64_t f, l1, l2, stack[2];
	int64_t v[2] = { 1, 100 };
	uint8_t *data;
	size_t len;
	char err[256];

	(void)state;
	assert_non_null(b);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	f = pprof_builder__function(b, "f", NULL, NULL, 0);
	l1 = pprof_builder__location(b, 0, 1, &(struct pprof_line){ f, 1, 0 }, 1);
	l2 = pprof_builder__location(b, 0, 2, &(struct pprof_line){ f, 2, 0 }, 1);
	stack[0] = l1;
	stack[1] = l2;

	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, la, 2), 0);
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, lb, 2), 0);
	assert_int_equal(pprof_builder__sample_count(b), 1);
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, lc, 1), 0);
	assert_int_equal(pprof_builder__add_sample(b, stack, 1, v, 2, la, 2), 0);
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, NULL, 0), 0);
	assert_int_equal(pprof_builder__sample_count(b), 4);
	v[1] = 5;
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, la, 2), 0);
	assert_int_equal(pprof_builder__sample_count(b), 4);

	assert_int_equal(pprof_builder__serialize(b, false, &data, &len), 0);
	assert_int_equal(pprof_profile__parse(data, len, &p, err, sizeof(err)), 0);
	assert_int_equal(pprof_profile__sample_count(p), 4);
	assert_int_equal(pprof_profile__value(p, 0, 0), 3);
	assert_int_equal(pprof_profile__value(p, 0, 1), 205);
	assert_int_equal(pprof_profile__value(p, 1, 1), 100);
	pprof_profile__free(p);
	free(data);
	pprof_builder__free(b);
}

static void test_invalid_values(void **state)
{
	struct pprof_builder *b = pprof_builder__new();
	int64_t v[3] = { 1, 2, 3 };
	uint64_t f, l;
	uint8_t *data;
	size_t len;

	(void)state;
	assert_non_null(b);
	f = pprof_builder__function(b, "f", NULL, NULL, 0);
	l = pprof_builder__location(b, 0, 0, &(struct pprof_line){ f, 0, 0 }, 1);
	/* No sample type yet: no sample can be valid, and nothing can be written. */
	assert_int_equal(pprof_builder__add_sample(b, &l, 1, v, 0, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder__serialize(b, false, &data, &len), -EINVAL);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	assert_int_equal(pprof_builder__add_sample(b, &l, 1, v, 1, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder__add_sample(b, &l, 1, v, 3, NULL, 0), -EINVAL);
	assert_int_equal(pprof_builder__add_sample(b, &(uint64_t){ 0 }, 1, v, 2, NULL, 0),
			 -EINVAL);
	assert_int_equal(pprof_builder__add_sample(b, &(uint64_t){ 5 }, 1, v, 2, NULL, 0),
			 -EINVAL);
	assert_int_equal(pprof_builder__add_sample(b, &l, 1, v, 2,
						   &(struct pprof_label){ .key = NULL }, 1),
			 -EINVAL);
	assert_int_equal(pprof_builder__sample_count(b), 0);
	assert_int_equal(pprof_builder__add_sample(b, &l, 1, v, 2, NULL, 0), 0);
	/* Sample types are fixed once samples exist. */
	assert_int_equal(pprof_builder__add_sample_type(b, "wall", "nanoseconds"), -EINVAL);
	pprof_builder__free(b);
}

/* A profile exercising every feature the reader exposes. */
static struct pprof_builder *round_trip_builder(void)
{
	struct pprof_builder *b = pprof_builder__new();
	struct pprof_mapping_desc m = { 0x400000, 0x500000, 0, "/usr/bin/node", "beef", true, true,
					true };
	struct pprof_label labels[2] = { { .key = "thread", .str = "worker 1" },
					 { .key = "bytes", .num = 4096, .num_unit = "bytes" } };
	uint64_t map, fmain, finner, fouter, lmain, linl, lbare, stack[3];
	struct pprof_line inl[2];
	int64_t v[2];

	assert_non_null(b);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	pprof_builder__set_default_sample_type(b, "samples");
	pprof_builder__set_period(b, "cpu", "nanoseconds", 1000000);
	pprof_builder__set_time(b, 1700000000000000000LL, 5000000000LL);
	assert_int_equal(pprof_builder__add_comment(b, "made by test_pprof"), 0);
	map = pprof_builder__mapping(b, &m);
	fmain = pprof_builder__function(b, "main", "_main", "/src/main.c", 3);
	finner = pprof_builder__function(b, "inner", NULL, "/src/lib.js", 40);
	fouter = pprof_builder__function(b, "outer", NULL, "/src/lib.js", 30);
	assert_true(map && fmain && finner && fouter);
	lmain = pprof_builder__location(b, map, 0x401000, &(struct pprof_line){ fmain, 7, 2 }, 1);
	inl[0] = (struct pprof_line){ finner, 41, 0 };
	inl[1] = (struct pprof_line){ fouter, 33, 0 };
	linl = pprof_builder__location(b, map, 0x402000, inl, 2);
	lbare = pprof_builder__location(b, map, 0x403000, NULL, 0);
	assert_true(lmain && linl && lbare);

	stack[0] = linl;
	stack[1] = lmain;
	v[0] = 2;
	v[1] = 2000000;
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, labels, 2), 0);
	stack[0] = lbare;
	stack[1] = lmain;
	v[0] = 1;
	v[1] = 1000000;
	assert_int_equal(pprof_builder__add_sample(b, stack, 2, v, 2, NULL, 0), 0);
	return b;
}

static void check_round_trip(bool gzip)
{
	struct pprof_builder *b = round_trip_builder();
	const Perftools__Profiles__Profile *msg;
	struct pprof_stack st = { 0 };
	struct pprof_profile *p;
	const char *unit;
	uint8_t *data;
	size_t len;
	int64_t num;
	char err[256] = "";

	assert_int_equal(pprof_builder__serialize(b, gzip, &data, &len), 0);
	assert_true(len > 2);
	assert_int_equal(data[0] == 0x1f && data[1] == 0x8b, gzip);
	assert_int_equal(pprof_profile__parse(data, len, &p, err, sizeof(err)), 0);
	msg = pprof_profile__proto(p);
	assert_int_equal(pprof_validate(msg, err, sizeof(err)), 0);
	assert_string_equal(msg->string_table[0], "");
	assert_int_equal(msg->time_nanos, 1700000000000000000LL);
	assert_int_equal(msg->duration_nanos, 5000000000LL);
	assert_int_equal(msg->period, 1000000);
	assert_string_equal(pprof_profile__string(p, msg->period_type->type), "cpu");
	assert_int_equal(msg->n_comment, 1);
	assert_string_equal(pprof_profile__string(p, msg->comment[0]), "made by test_pprof");
	assert_int_equal(msg->n_mapping, 1);
	assert_true(msg->mapping[0]->has_inline_frames);
	assert_string_equal(pprof_profile__string(p, msg->mapping[0]->build_id), "beef");

	assert_int_equal(pprof_profile__sample_type_count(p), 2);
	assert_string_equal(pprof_profile__sample_type(p, 1, &unit), "cpu");
	assert_string_equal(unit, "nanoseconds");
	assert_int_equal(pprof_profile__sample_index(p, NULL, err, sizeof(err)), 0);
	assert_int_equal(pprof_profile__sample_index(p, "cpu", err, sizeof(err)), 1);
	assert_int_equal(pprof_profile__sample_index(p, "1", err, sizeof(err)), 1);
	assert_int_equal(pprof_profile__sample_index(p, "2", err, sizeof(err)), -EINVAL);
	assert_int_equal(pprof_profile__sample_index(p, "wall", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "samples cpu"));

	assert_int_equal(pprof_profile__sample_count(p), 2);
	assert_int_equal(pprof_profile__value(p, 0, 0), 2);
	assert_int_equal(pprof_profile__value(p, 0, 1), 2000000);
	assert_int_equal(pprof_profile__value(p, 1, 1), 1000000);

	/* Inline lines expand leaf first: inner (inlined into) outer, then main. */
	assert_int_equal(pprof_profile__stack(p, 0, &st), 0);
	assert_int_equal(st.n, 3);
	assert_string_equal(st.frames[0]->name, "inner");
	assert_true(st.frames[0]->inlined);
	assert_int_equal(st.frames[0]->line, 41);
	assert_string_equal(st.frames[1]->name, "outer");
	assert_false(st.frames[1]->inlined);
	assert_int_equal(st.frames[0]->location, st.frames[1]->location);
	assert_string_equal(st.frames[2]->name, "main");
	assert_string_equal(st.frames[2]->system_name, "_main");
	assert_string_equal(st.frames[2]->filename, "/src/main.c");
	assert_string_equal(st.frames[2]->mapping_file, "/usr/bin/node");
	assert_int_equal(st.frames[2]->line, 7);
	assert_int_equal(st.frames[2]->start_line, 3);
	assert_int_equal(st.frames[2]->address, 0x401000);
	assert_true(st.frames[0]->id < pprof_profile__frame_count(p));
	assert_ptr_equal(pprof_profile__frame(p, st.frames[2]->id), st.frames[2]);

	assert_int_equal(pprof_profile__stack(p, 1, &st), 0);
	assert_int_equal(st.n, 2);
	assert_false(st.frames[0]->has_function);
	assert_true(st.frames[0]->has_mapping);
	assert_string_equal(st.frames[0]->name, "");

	assert_string_equal(pprof_profile__label(p, 0, "thread"), "worker 1");
	assert_null(pprof_profile__label(p, 0, "bytes"));
	assert_null(pprof_profile__label(p, 1, "thread"));
	assert_true(pprof_profile__num_label(p, 0, "bytes", &num));
	assert_int_equal(num, 4096);
	assert_false(pprof_profile__num_label(p, 0, "thread", &num));

	pprof_stack__release(&st);
	pprof_profile__free(p);
	free(data);
	pprof_builder__free(b);
}

static void test_round_trip_raw(void **state)
{
	(void)state;
	check_round_trip(false);
}

static void test_round_trip_gzip(void **state)
{
	(void)state;
	check_round_trip(true);
}

/* A valid profile made by hand, to break one invariant at a time. */
struct fixture {
	Perftools__Profiles__Profile p;
	Perftools__Profiles__ValueType st[2], *stp[2];
	Perftools__Profiles__Mapping m[2], *mp[2];
	Perftools__Profiles__Function f[2], *fp[2];
	Perftools__Profiles__Location l[2], *lp[2];
	Perftools__Profiles__Line ln[2], *lnp[2];
	Perftools__Profiles__Sample s[1], *sp[1];
	Perftools__Profiles__Label lb[1], *lbp[1];
	uint64_t locids[2];
	int64_t values[2];
	char *strs[7];
};

static void fixture_init(struct fixture *x)
{
	static const char *const strs[] = { "", "samples", "count", "main", "main.c", "/bin/x",
					    "helper" };

	memset(x, 0, sizeof(*x));
	perftools__profiles__profile__init(&x->p);
	for (size_t i = 0; i < 7; i++)
		x->strs[i] = (char *)strs[i];
	x->p.string_table = x->strs;
	x->p.n_string_table = 7;
	perftools__profiles__value_type__init(&x->st[0]);
	x->st[0].type = 1;
	x->st[0].unit = 2;
	x->stp[0] = &x->st[0];
	x->p.sample_type = x->stp;
	x->p.n_sample_type = 1;
	for (int i = 0; i < 2; i++) {
		perftools__profiles__mapping__init(&x->m[i]);
		x->m[i].id = (uint64_t)i + 1;
		x->m[i].filename = 5;
		x->mp[i] = &x->m[i];
		perftools__profiles__function__init(&x->f[i]);
		x->f[i].id = (uint64_t)i + 1;
		x->f[i].name = i ? 6 : 3;
		x->f[i].filename = 4;
		x->fp[i] = &x->f[i];
		perftools__profiles__line__init(&x->ln[i]);
		x->ln[i].function_id = (uint64_t)i + 1;
		x->ln[i].line = 10 + i;
		x->lnp[i] = &x->ln[i];
		perftools__profiles__location__init(&x->l[i]);
		x->l[i].id = (uint64_t)i + 1;
		x->l[i].mapping_id = (uint64_t)i + 1;
		x->l[i].n_line = 1;
		x->l[i].line = &x->lnp[i];
		x->lp[i] = &x->l[i];
		x->locids[i] = (uint64_t)i + 1;
	}
	x->p.mapping = x->mp;
	x->p.n_mapping = 2;
	x->p.function = x->fp;
	x->p.n_function = 2;
	x->p.location = x->lp;
	x->p.n_location = 2;
	perftools__profiles__label__init(&x->lb[0]);
	x->lb[0].key = 3;
	x->lb[0].str = 6;
	x->lbp[0] = &x->lb[0];
	perftools__profiles__sample__init(&x->s[0]);
	x->values[0] = 5;
	x->s[0].value = x->values;
	x->s[0].n_value = 1;
	x->s[0].location_id = x->locids;
	x->s[0].n_location_id = 2;
	x->s[0].label = x->lbp;
	x->s[0].n_label = 1;
	x->sp[0] = &x->s[0];
	x->p.sample = x->sp;
	x->p.n_sample = 1;
}

static void break_string0(struct fixture *x) { x->strs[0] = (char *)"x"; }
static void break_no_strings(struct fixture *x) { x->p.n_string_table = 0; }
static void break_no_types(struct fixture *x) { x->p.n_sample_type = 0; }
static void break_values(struct fixture *x) { x->s[0].n_value = 2; }
static void break_mapping_id0(struct fixture *x) { x->m[1].id = 0; }
static void break_mapping_dup(struct fixture *x) { x->m[1].id = 1; }
static void break_function_id0(struct fixture *x) { x->f[0].id = 0; }
static void break_function_dup(struct fixture *x) { x->f[1].id = 1; }
static void break_location_id0(struct fixture *x) { x->l[1].id = 0; }
static void break_location_dup(struct fixture *x) { x->l[1].id = 1; }
static void break_location_mapping(struct fixture *x) { x->l[1].mapping_id = 9; }
static void break_line_function(struct fixture *x) { x->ln[1].function_id = 7; }
static void break_line_function0(struct fixture *x) { x->ln[0].function_id = 0; }
static void break_sample_location(struct fixture *x) { x->locids[1] = 3; }
static void break_function_name(struct fixture *x) { x->f[1].name = 7; }
static void break_function_file(struct fixture *x) { x->f[0].filename = -1; }
static void break_mapping_file(struct fixture *x) { x->m[0].filename = 70; }
static void break_type_unit(struct fixture *x) { x->st[0].unit = 8; }
static void break_label_key(struct fixture *x) { x->lb[0].key = 7; }
static void break_label_str(struct fixture *x) { x->lb[0].str = 100; }
static void break_label_unit(struct fixture *x) { x->lb[0].num_unit = -3; }
static void break_comment(struct fixture *x)
{
	static int64_t c[] = { 1, 9 };

	x->p.comment = c;
	x->p.n_comment = 2;
}
static void break_default_type(struct fixture *x) { x->p.default_sample_type = 12; }

static const struct {
	void (*breaker)(struct fixture *x);
	const char *msg;
} broken[] = {
	{ break_string0, "string_table[0] must be \"\"" },
	{ break_no_strings, "string_table is empty" },
	{ break_no_types, "missing sample type information" },
	{ break_values, "sample 0: 2 values, 1 sample types" },
	{ break_mapping_id0, "mapping 1: reserved id 0" },
	{ break_mapping_dup, "multiple mappings with id 1" },
	{ break_function_id0, "function 0: reserved id 0" },
	{ break_function_dup, "multiple functions with id 1" },
	{ break_location_id0, "location 1: reserved id 0" },
	{ break_location_dup, "multiple locations with id 1" },
	{ break_location_mapping, "location id 2: mapping id 9 does not exist" },
	{ break_line_function, "location id 2: line 0: function id 7 does not exist" },
	{ break_line_function0, "location id 1: line 0: function id 0 does not exist" },
	{ break_sample_location, "sample 0: location id 3 does not exist" },
	{ break_function_name, "function id 2: name string 7 out of range (7 strings)" },
	{ break_function_file, "function id 1: filename string -1 out of range" },
	{ break_mapping_file, "mapping id 1: filename string 70 out of range" },
	{ break_type_unit, "sample_type 0: unit string 8 out of range" },
	{ break_label_key, "sample 0: label 0: key string 7 out of range" },
	{ break_label_str, "sample 0: label 0: str string 100 out of range" },
	{ break_label_unit, "sample 0: label 0: num_unit string -3 out of range" },
	{ break_comment, "comment 1: string 9 out of range" },
	{ break_default_type, "default_sample_type string 12 out of range" },
};

static void test_validator(void **state)
{
	struct fixture x;
	char err[256];

	(void)state;
	fixture_init(&x);
	assert_int_equal(pprof_validate(&x.p, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		err[0] = '\0';
		fixture_init(&x);
		broken[i].breaker(&x);
		if (pprof_validate(&x.p, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, broken[i].msg)) {
			print_error("case %zu: want \"%s\", got \"%s\"\n", i, broken[i].msg, err);
			fail();
		}
	}
}

/* The same checks through the wire format, where protobuf-c did the decoding. */
static void test_validator_parse(void **state)
{
	struct pprof_profile *p;
	struct fixture x;
	uint8_t buf[4096];
	size_t len;
	char err[256];

	(void)state;
	fixture_init(&x);
	len = perftools__profiles__profile__pack(&x.p, buf);
	assert_int_equal(pprof_profile__parse(buf, len, &p, err, sizeof(err)), 0);
	pprof_profile__free(p);
	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		/* Packing drops what the wire cannot say (no strings at all stays "no strings"). */
		fixture_init(&x);
		broken[i].breaker(&x);
		assert_true(perftools__profiles__profile__get_packed_size(&x.p) < sizeof(buf));
		len = perftools__profiles__profile__pack(&x.p, buf);
		err[0] = '\0';
		if (pprof_profile__parse(buf, len, &p, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, broken[i].msg)) {
			print_error("case %zu: want \"%s\", got \"%s\"\n", i, broken[i].msg, err);
			fail();
		}
	}
}

/*
 * Ids in any order, not 1, 2, 3: the reader's index takes them by value
 * (dense ids are looked up by position), and a duplicate among them is
 * still found.
 */
static void test_sparse_ids(void **state)
{
	struct pprof_stack st = { 0 };
	struct pprof_profile *p;
	struct fixture x;
	uint8_t buf[4096];
	size_t len;
	char err[256];

	(void)state;
	fixture_init(&x);
	x.m[0].id = 1ULL << 40;
	x.m[1].id = 3;
	x.f[0].id = 20;
	x.f[1].id = 10;
	x.ln[0].function_id = 20;
	x.ln[1].function_id = 10;
	x.l[0].id = 9;
	x.l[0].mapping_id = 1ULL << 40;
	x.l[1].id = 4;
	x.l[1].mapping_id = 3;
	x.locids[0] = 4;
	x.locids[1] = 9;
	len = perftools__profiles__profile__pack(&x.p, buf);
	if (pprof_profile__parse(buf, len, &p, err, sizeof(err)))
		fail_msg("parse: %s", err);
	assert_int_equal(pprof_profile__stack(p, 0, &st), 0);
	assert_int_equal(st.n, 2);
	assert_string_equal(st.frames[0]->name, "helper");
	assert_int_equal(st.frames[0]->line, 11);
	assert_string_equal(st.frames[1]->name, "main");
	assert_string_equal(st.frames[1]->mapping_file, "/bin/x");
	pprof_stack__release(&st);
	pprof_profile__free(p);

	x.l[1].id = 9;
	len = perftools__profiles__profile__pack(&x.p, buf);
	assert_int_equal(pprof_profile__parse(buf, len, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "multiple locations with id 9"));
	x.l[1].id = 4;
	x.locids[1] = 5;
	len = perftools__profiles__profile__pack(&x.p, buf);
	assert_int_equal(pprof_profile__parse(buf, len, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "sample 0: location id 5 does not exist"));
}

static void test_reader_errors(void **state)
{
	struct pprof_builder *b = round_trip_builder();
	struct pprof_profile *p;
	uint8_t *raw, *gz, *twice;
	size_t raw_len, gz_len;
	char err[256];

	(void)state;
	assert_int_equal(pprof_builder__serialize(b, false, &raw, &raw_len), 0);
	assert_int_equal(pprof_builder__serialize(b, true, &gz, &gz_len), 0);
	twice = malloc(2 * (raw_len > gz_len ? raw_len : gz_len));
	assert_non_null(twice);

	/* Concatenated profiles: raw, and as two gzip members. */
	memcpy(twice, raw, raw_len);
	memcpy(twice + raw_len, raw, raw_len);
	assert_int_equal(pprof_profile__parse(twice, 2 * raw_len, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "concatenated"));
	memcpy(twice, gz, gz_len);
	memcpy(twice + gz_len, gz, gz_len);
	assert_int_equal(pprof_profile__parse(twice, 2 * gz_len, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "concatenated"));

	/* Truncated and corrupt gzip, trailing junk, not a protobuf, empty. */
	assert_int_equal(pprof_profile__parse(gz, gz_len - 9, &p, err, sizeof(err)), -EBADMSG);
	assert_non_null(strstr(err, "gzip"));
	memcpy(twice, gz, gz_len);
	twice[gz_len / 2] ^= 0x55;
	assert_true(pprof_profile__parse(twice, gz_len, &p, err, sizeof(err)) < 0);
	memcpy(twice, gz, gz_len);
	memcpy(twice + gz_len, "junk", 4);
	assert_int_equal(pprof_profile__parse(twice, gz_len + 4, &p, err, sizeof(err)), -EBADMSG);
	assert_int_equal(pprof_profile__parse((const uint8_t *)"\xff\xff\xff", 3, &p, err,
					      sizeof(err)),
			 -EBADMSG);
	assert_int_equal(pprof_profile__parse(raw, 0, &p, err, sizeof(err)), -EINVAL);
	assert_null(p);

	assert_int_equal(pprof_profile__read_file(tmp_path("does-not-exist"), &p, err,
						  sizeof(err)),
			 -ENOENT);
	assert_int_equal(pprof_profile__read_file(tmpdir, &p, err, sizeof(err)), -EISDIR);

	free(twice);
	free(raw);
	free(gz);
	pprof_builder__free(b);
}

/* What protobuf-c would accept but pprof's decoder rejects. */
static void test_reader_wire_checks(void **state)
{
	/* string_table ["", "s"], sample_type {1, 1}: the valid base every case extends. */
	static const uint8_t base[] = { 0x32, 0x00, 0x32, 0x01, 's',
					0x0a, 0x04, 0x08, 0x01, 0x10, 0x01 };
	static const struct {
		uint8_t extra[16];
		size_t len;
		int err;
		const char *msg;
	} cases[] = {
		/* Location { is_folded (field 5) as length-delimited } */
		{ { 0x22, 0x04, 0x08, 0x01, 0x2a, 0x00 }, 6, -EBADMSG,
		  "Location: field 5 has wire type 2" },
		/* time_nanos as fixed64 */
		{ { 0x49, 1, 0, 0, 0, 0, 0, 0, 0 }, 9, -EBADMSG,
		  "Profile: field 9 has wire type 1" },
		/* a string with a NUL byte */
		{ { 0x32, 0x02, 'a', 0x00 }, 4, -EINVAL, "string_table[2] contains a NUL byte" },
		/* time_nanos twice, the first nonzero: two profiles concatenated */
		{ { 0x48, 0x05, 0x48, 0x06 }, 4, -EINVAL, "concatenated" },
		/* an 11-byte varint */
		{ { 0x50, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 12,
		  -EBADMSG, "truncated" },
		/* wire type 3 (group) */
		{ { 0x7b }, 1, -EBADMSG, "unknown wire type 3" },
		/* a sample_type message cut short */
		{ { 0x0a, 0x05, 0x08 }, 3, -EBADMSG, "truncated" },
		/* a packed value list with a cut varint */
		{ { 0x12, 0x03, 0x12, 0x01, 0x80 }, 5, -EBADMSG, "bad packed varint" },
	};
	/* Accepted: unknown fields of any wire type, time_nanos 0 then set. */
	static const uint8_t ok_extra[] = { 0x48, 0x00, 0x48, 0x07, 0xf9, 0x01, 1, 2, 3, 4, 5, 6, 7,
					    8, 0xa2, 0x06, 0x01, 0x00 };
	struct pprof_profile *p;
	uint8_t buf[64];
	char err[256];

	(void)state;
	memcpy(buf, base, sizeof(base));
	memcpy(buf + sizeof(base), ok_extra, sizeof(ok_extra));
	assert_int_equal(pprof_profile__parse(buf, sizeof(base) + sizeof(ok_extra), &p, err,
					      sizeof(err)),
			 0);
	assert_int_equal(pprof_profile__proto(p)->time_nanos, 7);
	pprof_profile__free(p);
	/* string_table[0] not empty on the wire */
	buf[1] = 0x01;
	buf[2] = 'x';
	assert_int_equal(pprof_profile__parse(buf, 3, &p, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "string_table[0]"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret;

		memcpy(buf, base, sizeof(base));
		memcpy(buf + sizeof(base), cases[i].extra, cases[i].len);
		err[0] = '\0';
		ret = pprof_profile__parse(buf, sizeof(base) + cases[i].len, &p, err, sizeof(err));
		if (ret != cases[i].err || !strstr(err, cases[i].msg)) {
			print_error("case %zu: want %d \"%s\", got %d \"%s\"\n", i, cases[i].err,
				    cases[i].msg, ret, err);
			fail();
		}
	}
}

static bool dir_has_temp_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strstr(e->d_name, ".tmp."))
			found = true;
	closedir(d);
	return found;
}

static void test_write_file(void **state)
{
	struct pprof_builder *b = round_trip_builder();
	struct pprof_profile *p;
	struct stat st;
	char err[256], path[8192];
	int err_code;

	(void)state;
	snprintf(path, sizeof(path), "%s", tmp_path("out.pb.gz"));
	assert_int_equal(pprof_builder__write_file(b, path, true), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(pprof_profile__read_file(path, &p, err, sizeof(err)), 0);
	assert_int_equal(pprof_profile__sample_count(p), 2);
	pprof_profile__free(p);
	/* Overwrite in place: the rename replaces the old file. */
	assert_int_equal(pprof_builder__write_file(b, path, false), 0);
	assert_false(dir_has_temp_files(tmpdir));

	assert_int_equal(pprof_builder__write_file(b, tmp_path("no/such/dir/x.pb.gz"), true),
			 -ENOENT);
	/* A parent that is a file. */
	snprintf(path, sizeof(path), "%s", tmp_path("out.pb.gz/x.pb.gz"));
	assert_int_equal(pprof_builder__write_file(b, path, true), -ENOTDIR);
	/* The temp file is written, then rename() fails: it must not be left behind. */
	assert_int_equal(mkdir(tmp_path("a-directory"), 0755), 0);
	assert_int_equal(pprof_builder__write_file(b, tmp_path("a-directory"), true), -EISDIR);
	assert_false(dir_has_temp_files(tmpdir));
	/* A directory nobody may write to (root may: then /proc, where nobody may create files). */
	assert_int_equal(mkdir(tmp_path("ro"), 0555), 0);
	snprintf(path, sizeof(path), "%s", tmp_path("ro/x.pb.gz"));
	if (geteuid() == 0)
		snprintf(path, sizeof(path), "/proc/isoprof-test-%d.pb.gz", (int)getpid());
	err_code = pprof_builder__write_file(b, path, true);
	assert_true(err_code == -EACCES || err_code == -ENOENT || err_code == -EROFS);
	assert_int_equal(access(path, F_OK), -1);
	pprof_builder__free(b);
}

/* 50k distinct samples from 500k add_sample calls, then gzip: the scale `record` works at. */
static void test_builder_speed(void **state)
{
	enum { NFUNCS = 5000, NSTACKS = 50000, NCALLS = 500000, DEPTH = 16 };
	struct pprof_builder *b = pprof_builder__new();
	uint64_t *locs = calloc(NFUNCS, sizeof(*locs));
	uint64_t *stacks = calloc((size_t)NSTACKS * DEPTH, sizeof(*stacks));
	struct pprof_label label = { .key = "thread", .str = "main" };
	double t0, t_add, t_ser;
	uint8_t *data;
	size_t len;
	char name[64];
	double limit = 1.0;

	(void)state;
	assert_true(b && locs && stacks);
	assert_int_equal(pprof_builder__add_sample_type(b, "samples", "count"), 0);
	assert_int_equal(pprof_builder__add_sample_type(b, "cpu", "nanoseconds"), 0);
	for (int i = 0; i < NFUNCS; i++) {
		uint64_t f;

		snprintf(name, sizeof(name), "LazyCompile:*handler_%d /srv/app.js:%d", i, i);
		f = pprof_builder__function(b, name, name, "/srv/app.js", i);
		locs[i] = pprof_builder__location(b, 0, 0x1000 + (uint64_t)i,
						  &(struct pprof_line){ f, i, 0 }, 1);
		assert_true(f && locs[i]);
	}
	for (size_t i = 0; i < (size_t)NSTACKS * DEPTH; i++)
		stacks[i] = locs[rng_below(NFUNCS)];

	t0 = now_s();
	for (int i = 0; i < NCALLS; i++) {
		int s = (int)((uint64_t)i * 7919 % NSTACKS);
		int64_t v[2] = { 1, 1000000 };

		const uint64_t *stack = &stacks[(size_t)s * DEPTH];

		assert_int_equal(pprof_builder__add_sample(b, stack, DEPTH, v, 2, &label, 1), 0);
	}
	t_add = now_s() - t0;
	assert_int_equal(pprof_builder__sample_count(b), NSTACKS);
	t0 = now_s();
	assert_int_equal(pprof_builder__serialize(b, true, &data, &len), 0);
	t_ser = now_s() - t0;
	print_message("builder: %d add_sample (%d distinct, depth %d) in %.3f s, "
		      "serialize+gzip %zu bytes in %.3f s\n",
		      NCALLS, NSTACKS, DEPTH, t_add, len, t_ser);
#if defined(__SANITIZE_ADDRESS__)
	limit = 3.0;	/* sanitizers slow everything a few times */
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	limit = 3.0;
#endif
#endif
	assert_true(t_add < limit);
	assert_true(t_ser < limit);
	free(data);
	free(locs);
	free(stacks);
	pprof_builder__free(b);
}

static int setup_tmpdir(void **state)
{
	const char *base = getenv("TEST_TMP");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_pprof.XXXXXX", base && *base ? base : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmpdir(void **state)
{
	char cmd[8300];

	(void)state;
	chmod(tmp_path("ro"), 0755);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Small seeds for tests/fuzz/corpus/fuzz_pprof. */
static int gen_seeds(const char *dir)
{
	struct pprof_builder *b = round_trip_builder();
	struct gen_opts o = { .nfuncs = 8, .nstacks = 10, .nevents = 30, .max_depth = 5,
			      .mappings = true, .inline_frames = true, .odd_names = true,
			      .idle = true, .value_scale = 1000 };
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/roundtrip.pb", dir);
	err = pprof_builder__write_file(b, path, false);
	pprof_builder__free(b);
	snprintf(path, sizeof(path), "%s/mixed.pb", dir);
	o.path = path;
	if (!err)
		err = gen_profile(&o);
	snprintf(path, sizeof(path), "%s/mixed.pb.gz", dir);
	o.gzip = true;
	o.heap = true;
	o.idle = false;
	if (!err)
		err = gen_profile(&o);
	if (err)
		fprintf(stderr, "test_pprof: %s: %s\n", path, strerror(-err));
	return !!err;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_string_interning),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_invalid_values),
		cmocka_unit_test(test_round_trip_raw),
		cmocka_unit_test(test_round_trip_gzip),
		cmocka_unit_test(test_validator),
		cmocka_unit_test(test_validator_parse),
		cmocka_unit_test(test_sparse_ids),
		cmocka_unit_test(test_reader_errors),
		cmocka_unit_test(test_reader_wire_checks),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_builder_speed),
	};

	if (argc == 3 && !strcmp(argv[1], "--gen"))
		return gen_profiles(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return gen_seeds(argv[2]);
	return cmocka_run_group_tests(tests, setup_tmpdir, teardown_tmpdir);
}
