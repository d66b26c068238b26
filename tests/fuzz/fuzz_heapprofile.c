// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz the V8 sampling heap profile conversion: JSON parsing, the nested
 * tree walk, the samples table, and the pprof it builds, which the pprof
 * reader must accept and folded output must walk.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/v8profile.h"
#include "tests/fuzz/fuzz_devnull.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_builder *b;
	struct pprof_profile *p;
	struct pprof_label lab = { .key = "isolate", .str = "0x1" };
	struct v8_pprof_opts o = { .labels = &lab, .nlabels = size & 1 };
	uint8_t *buf;
	size_t len;
	char err[256];

	if (v8_heap_profile__to_pprof((const char *)data, size, &o, size % 5 ? 524288 : 0, &b,
				      err, sizeof(err)))
		return 0;
	if (pprof_builder__serialize(b, false, &buf, &len))
		abort();
	if (pprof_profile__parse(buf, len, &p, err, sizeof(err))) {
		fprintf(stderr, "builder output rejected: %s\n", err);
		abort();
	}
	if (folded__from_pprof(p, 1, devnull) || folded__from_pprof(p, 0, devnull))
		abort();
	pprof_profile__free(p);
	free(buf);
	pprof_builder__free(b);
	return 0;
}
