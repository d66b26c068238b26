// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz proto/profile_file: telling the format of any bytes among all the
 * formats (and among pprof and .cpuprofile only, as crosscheck does),
 * converting to pprof, reading the conversion back, packing it again, and
 * writing it as folded stacks.  Whatever parses must come back as a
 * profile the reader takes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "proto/folded.h"
#include "proto/profile_file.h"
#include "tests/fuzz/fuzz_devnull.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void run(const uint8_t *data, size_t size, unsigned int formats)
{
	struct pprof_label lab = { .key = "isolate", .str = "0x1" };
	struct v8_pprof_opts o = { .labels = &lab, .nlabels = size & 1 };
	struct profile_file pf = { 0 };
	uint8_t *bytes;
	size_t len;
	char err[256];

	if (profile_file__set_data(&pf, data, size, err, sizeof(err)) ||
	    profile_file__parse(&pf, formats, err, sizeof(err))) {
		profile_file__release(&pf);
		return;
	}
	if (pf.format == PROFILE_AUTO)
		abort();	/* parsed, so it is some format */
	if (profile_file__convert(&pf, &o, size % 3 ? 32768 : 0, err, sizeof(err))) {
		profile_file__release(&pf);
		return;
	}
	/* what parsed and converted must read back as pprof */
	if (profile_file__profile(&pf, err, sizeof(err))) {
		fprintf(stderr, "conversion rejected: %s\n", err);
		abort();
	}
	if (profile_file__pprof_bytes(&pf, size & 2, &bytes, &len, err, sizeof(err)))
		abort();
	free(bytes);
	if (folded__from_pprof(pf.prof, pprof_profile__sample_type_count(pf.prof) - 1, devnull))
		abort();
	profile_file__release(&pf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size, PROFILE_FORMATS_ALL);
	run(data, size, PROFILE_FORMAT_BIT(PROFILE_PPROF) | PROFILE_FORMAT_BIT(PROFILE_CPUPROFILE));
	return 0;
}
