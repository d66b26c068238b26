/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * index_table: an open-addressing hash index over an array the caller
 * owns.  Each slot holds an array index + 1 (0: empty) and the entry's
 * 32-bit hash; the caller hashes its keys and compares entries itself,
 * walking the probe sequence from index_table__first() with
 * index_table__next() until an empty slot:
 *
 *	if (index_table__reserve(&t))
 *		return -ENOMEM;
 *	for (k = index_table__first(&t, h); t.idx1[k]; k = index_table__next(&t, k))
 *		if (t.hash[k] == h && same(&entries[t.idx1[k] - 1], key))
 *			return t.idx1[k] - 1;
 *	index_table__set(&t, k, h, new_index);
 *
 * index_table__reserve() keeps the load at most one half, so a probe
 * always ends.  A zeroed struct is an empty table.  Errors: -ENOMEM.
 */
#ifndef ISOPROF_USER_INDEX_TABLE_H
#define ISOPROF_USER_INDEX_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct index_table {
	uint32_t *idx1;		/* index + 1 per slot, 0 when empty */
	uint32_t *hash;
	size_t mask, count;
};

/* Room for one more entry: 0, or -ENOMEM (the table is unchanged). */
int index_table__reserve(struct index_table *t);
void index_table__release(struct index_table *t);

static inline size_t index_table__first(const struct index_table *t, uint32_t hash)
{
	return hash & t->mask;
}

static inline size_t index_table__next(const struct index_table *t, size_t slot)
{
	return (slot + 1) & t->mask;
}

/* Fill the empty slot a probe ended at. */
static inline void index_table__set(struct index_table *t, size_t slot, uint32_t hash,
				    uint32_t index)
{
	t->idx1[slot] = index + 1;
	t->hash[slot] = hash;
	t->count++;
}

#endif
