// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Open-addressing hash index over a caller's array (see index_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/index_table.h"

#define INITIAL_SLOTS 256

int index_table__reserve(struct index_table *t)
{
	size_t nsize = t->mask ? (t->mask + 1) * 2 : INITIAL_SLOTS;
	uint32_t *ni, *nh;

	if (t->mask && (t->count + 1) * 2 <= t->mask + 1)
		return 0;
	/* indices are 32-bit: more slots than that could never fill */
	if (nsize > UINT32_MAX)
		return -ENOMEM;
	ni = calloc(nsize, sizeof(*ni));
	nh = calloc(nsize, sizeof(*nh));
	if (!ni || !nh) {
		free(ni);
		free(nh);
		return -ENOMEM;
	}
	for (size_t i = 0; t->mask && i <= t->mask; i++) {
		size_t j;

		if (!t->idx1[i])
			continue;
		for (j = t->hash[i] & (nsize - 1); ni[j]; j = (j + 1) & (nsize - 1))
			;
		ni[j] = t->idx1[i];
		nh[j] = t->hash[i];
	}
	free(t->idx1);
	free(t->hash);
	t->idx1 = ni;
	t->hash = nh;
	t->mask = nsize - 1;
	return 0;
}

void index_table__release(struct index_table *t)
{
	free(t->idx1);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}
