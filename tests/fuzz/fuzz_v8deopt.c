// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: symbolize/v8deopt over arbitrary input (translations,
 * safepoint tables and code all come from a target's memory).  The first
 * bytes choose a format and the exits; the rest is at once translations,
 * a safepoint table and code.  Invariants: frames stay within the room
 * given, calls name entries that exist, runs are sorted, start at 0 and
 * cover the code, and a lookup inside the code finds one.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8deopt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct v8deopt_safepoint_layout sl = { .length = 4, .config = 8, .header = 16 };
	struct v8deopt_frame fr[8];
	struct v8deopt_format f;
	struct v8deopt_call *calls = NULL;
	struct v8deopt_run *runs = NULL;
	struct v8deopt_exits x;
	long ncalls, nruns;
	uint32_t entries;

	if (size < 8)
		return 0;
	if (v8deopt__format(1 + (data[0] & 1), 42 + data[1] % 11, &f))
		__builtin_trap();
	entries = 1 + data[2] % 64;
	x.eager = data[3] % (entries + 1);
	x.lazy = entries - x.eager;
	x.eager_size = 1 + data[4] % 8;
	x.lazy_size = 1 + data[5] % 8;
	data += 8;
	size -= 8;
	x.start = size ? (uint32_t)(size - size / 4) : 0;
	struct v8deopt_basis cache = { 0 };

	for (size_t i = 0; i < size && i < 64; i++) {
		struct v8deopt_frame again[8];
		int n = v8deopt__frames(&f, data, size, i, fr, 8);
		int m = v8deopt__frames_cached(&f, data, size, i, again, 8, &cache);

		/* the cache changes nothing but the work */
		if (n > 8 || n == 0 || m != n || (n > 0 && memcmp(fr, again, (size_t)n * sizeof(fr[0]))))
			__builtin_trap();
	}
	v8deopt__basis_release(&cache);
	ncalls = v8deopt__maglev_calls(data, size, &sl, entries, &calls, NULL);
	for (long i = 0; i < ncalls; i++)
		if (calls[i].entry >= entries)
			__builtin_trap();
	nruns = v8deopt__place(data, size, &x, calls, ncalls > 0 ? (size_t)ncalls : 0, &runs, NULL);
	if (nruns > 0) {
		if (runs[0].start != 0)
			__builtin_trap();
		for (long i = 1; i < nruns; i++)
			if (runs[i].start <= runs[i - 1].start || runs[i].start >= size)
				__builtin_trap();
		if (size && !v8deopt__lookup(runs, (size_t)nruns, (uint32_t)(size - 1)))
			__builtin_trap();
	}
	free(runs);
	free(calls);
	return 0;
}
