// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz the .cpuprofile reader and both CPU conversions: parse (and the
 * standalone validator, which must agree with it), V8 → pprof, pprof →
 * .cpuprofile, which must then parse again, and folded output.  The same
 * bytes also go through the folded-stacks reader.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/v8profile.h"
#include "tests/fuzz/fuzz_devnull.h"

/* from_pprof writes one `samples` entry per count: keep iterations fast. */
#define MAX_ROUND_TRIP_SAMPLES 100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct pprof_profile *reread(struct pprof_builder *b)
{
	struct pprof_profile *p;
	uint8_t *buf;
	size_t len;
	char err[256];

	if (pprof_builder__serialize(b, false, &buf, &len))
		abort();
	/* what the builder writes, the reader must take */
	if (pprof_profile__parse(buf, len, &p, err, sizeof(err))) {
		fprintf(stderr, "builder output rejected: %s\n", err);
		abort();
	}
	free(buf);
	return p;
}

static void round_trip(const struct pprof_profile *p)
{
	struct v8_cpu_profile *back;
	uint64_t total = 0;
	char *json, err[256];
	size_t len;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		int64_t v = pprof_profile__value(p, s, 0);

		total += v > 0 ? (uint64_t)v : 0;
	}
	if (total > MAX_ROUND_TRIP_SAMPLES)
		return;
	if (v8_cpu_profile__from_pprof(p, &json, &len, err, sizeof(err)))
		abort();
	if (v8_cpu_profile__parse(json, len, &back, err, sizeof(err))) {
		fprintf(stderr, "our .cpuprofile does not parse: %s\n", err);
		abort();
	}
	if (back->nsamples != total)
		abort();
	v8_cpu_profile__free(back);
	free(json);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	struct v8_cpu_profile *p;
	struct pprof_builder *b;
	struct pprof_profile *pp;
	struct pprof_label lab = { .key = "isolate", .str = "0x1" };
	const char *comment = "fuzz";
	struct v8_pprof_opts o = { .time_nanos = 1, .interval_ns = size % 3 ? 0 : 1000000,
				   .comments = &comment, .ncomments = 1, .labels = &lab,
				   .nlabels = 1 };
	char err[256];
	int r1, r2;

	if (!folded__to_pprof(text, size, &b, err, sizeof(err))) {
		pp = reread(b);
		if (folded__from_pprof(pp, 0, devnull))
			abort();
		pprof_profile__free(pp);
		pprof_builder__free(b);
	}

	r1 = v8_cpu_profile__validate_json(text, size, err, sizeof(err));
	r2 = v8_cpu_profile__parse(text, size, &p, err, sizeof(err));
	if ((r1 == 0) != (r2 == 0))
		abort();
	if (r2)
		return 0;
	if (v8_cpu_profile__to_pprof(p, &o, &b))
		abort();
	pp = reread(b);
	round_trip(pp);
	if (folded__from_pprof(pp, 1, devnull))
		abort();
	pprof_profile__free(pp);
	pprof_builder__free(b);
	v8_cpu_profile__free(p);
	return 0;
}
