// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: ksyms__parse() over arbitrary text. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/ksyms.h"

/* Keeps reads of every string from being optimized away. */
static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct ksym *k, *found;
	struct ksyms *ks;
	size_t i, n;

	ks = ksyms__parse((const char *)data, size);
	if (!ks)
		return 0;
	n = ksyms__count(ks);
	for (i = 0; i < n; i++) {
		k = ksyms__entry(ks, i);
		if (k->end <= k->addr || !*k->name ||
		    (i && ksyms__entry(ks, i - 1)->addr >= k->addr))
			__builtin_trap();
		if (k->module)
			sink += strlen(k->module);
		if (ksyms__find(ks, k->addr) != k || ksyms__find(ks, k->end - 1) != k)
			__builtin_trap();
		found = ksyms__find(ks, k->end);
		if (found && (found->addr > k->end || k->end >= found->end))
			__builtin_trap();
	}
	ksyms__find(ks, 0);
	ksyms__find(ks, UINT64_MAX);
	ksyms__free(ks);
	return 0;
}
