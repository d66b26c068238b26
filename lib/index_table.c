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

long index_table__lookup(const struct index_table *t, uint32_t hash, index_table_eq_fn eq,
			 const void *ctx, const void *key, size_t *slot)
{
	size_t k;

	if (!t->mask) {
		if (slot)
			*slot = 0;
		return -1;
	}
	for (k = index_table__first(t, hash); t->idx1[k]; k = index_table__next(t, k)) {
		if (t->hash[k] == hash && (!eq || eq(ctx, t->idx1[k] - 1, key))) {
			if (slot)
				*slot = k;
			return (long)(t->idx1[k] - 1);
		}
	}
	if (slot)
		*slot = k;
	return -1;
}

/* Linear probing: move later members of the cluster back instead of leaving a tombstone. */
void index_table__remove(struct index_table *t, size_t slot)
{
	size_t i = slot, j = slot, home;

	if (!t->mask || !t->idx1[slot])
		return;
	for (;;) {
		j = (j + 1) & t->mask;
		if (!t->idx1[j])
			break;
		home = t->hash[j] & t->mask;
		/* Slot j may move to i only if its home is not in (i, j] cyclically. */
		if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
			t->idx1[i] = t->idx1[j];
			t->hash[i] = t->hash[j];
			i = j;
		}
	}
	t->idx1[i] = 0;
	t->hash[i] = 0;
	t->count--;
}

void index_table__clear(struct index_table *t)
{
	if (!t->mask)
		return;
	memset(t->idx1, 0, (t->mask + 1) * sizeof(*t->idx1));
	memset(t->hash, 0, (t->mask + 1) * sizeof(*t->hash));
	t->count = 0;
}
