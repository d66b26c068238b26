// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz the static flamegraph writer on whatever the pprof reader accepts:
 * hostile names (not UTF-8, control characters), deep stacks, zero and
 * extreme values, every sample type.  Output goes to /dev/null.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "user/report/flame_svg.h"
#include "proto/pprof_reader.h"
#include "tests/fuzz/fuzz_devnull.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p = NULL;
	char err[256];

	if (pprof_profile__parse(data, size, &p, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < pprof_profile__sample_type_count(p) && i < 4; i++) {
		struct flame_svg_opts o = { .title = "fuzz", .sample_index = i, .width = 600 };

		flame_svg__write(p, &o, devnull, err, sizeof(err));
	}
	pprof_profile__free(p);
	return 0;
}
