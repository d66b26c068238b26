// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: what isoprof decodes of V8's optimized code.  The
 * bytes as a source position table in both encodings (read from a target's
 * memory: symbolize/v8code.h), and as a V8 code log (read by calibration:
 * user/v8/calibrate.h).  Decoded offsets never go back; every position
 * and inlining id is in range; the log's code objects own what they hold.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8code.h"
#include "user/v8/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	struct calib_code *codes = NULL;
	size_t ncodes = 0;

	if (!copy)
		return 0;
	/* an exact-size copy: ASan sees a read past the end */
	memcpy(copy, data, size);
	for (uint32_t enc = 0; enc <= 3; enc++) {
		struct v8code_position *pos = NULL;
		long n = v8code__decode_positions(copy, size, enc, &pos);

		if ((enc < 1 || enc > 2) && n != -EINVAL)
			__builtin_trap();
		if (n < 0) {
			if ((n != -EINVAL && n != -ENOMEM) || pos)
				__builtin_trap();
			continue;
		}
		for (long i = 0; i < n; i++) {
			if (pos[i].code_offset < -1 || (i && pos[i].code_offset < pos[i - 1].code_offset) ||
			    pos[i].position < -1 || pos[i].inlining_id < -1 ||
			    pos[i].inlining_id > 0xfffe)
				__builtin_trap();
		}
		free(pos);
	}
	if (!calibrate__parse_code_log((const char *)copy, size, &codes, &ncodes)) {
		for (size_t i = 0; i < ncodes; i++) {
			const struct calib_code *k = &codes[i];

			if (!k->size || (k->tier != '*' && k->tier != '+' && k->tier != '^') ||
			    (!k->described && (k->ninlined || k->ninlining || k->npositions)))
				__builtin_trap();
			for (size_t j = 0; j < k->npositions; j++)
				(void)k->positions[j].code_offset;
			for (size_t j = 0; j < k->ninlined; j++)
				(void)k->inlined[j];
			for (size_t j = 0; j < k->ninlining; j++)
				(void)k->inlining[j].parent;
		}
		calibrate__free_codes(codes, ncodes);
	}
	free(copy);
	return 0;
}
