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
 * or, with a comparison callback, index_table__lookup().  Hashes come
 * from lib/hash.h (hash__fold32() makes a 32-bit one).
 *
 * index_table__reserve() keeps the load at most one half, so a probe
 * always ends.  index_table__remove() shifts the rest of a cluster back
 * (no tombstones), so a table that sees many deletions stays as fast.
 * Indexes are 32-bit.  A zeroed struct is an empty table.  Errors:
 * -ENOMEM.
 */
#ifndef ISOPROF_LIB_INDEX_TABLE_H
#define ISOPROF_LIB_INDEX_TABLE_H

#include <stdbool.h>
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

/* Does entry index match key?  ctx is the lookup's. */
typedef bool (*index_table_eq_fn)(const void *ctx, uint32_t index, const void *key);

/*
 * The index of the entry with this hash that eq accepts, or -1.  *slot
 * (when not NULL) gets the slot it was found in, or the empty slot where
 * it belongs, for index_table__set() after an index_table__reserve() that
 * came before the lookup.  eq NULL accepts the first entry of that hash
 * (for tables whose hash is the whole key).
 */
long index_table__lookup(const struct index_table *t, uint32_t hash, index_table_eq_fn eq,
			 const void *ctx, const void *key, size_t *slot);

/* Empty the slot a probe found an entry in; the entry itself is the caller's. */
void index_table__remove(struct index_table *t, size_t slot);

/* Forget every entry, keep the memory. */
void index_table__clear(struct index_table *t);

/* Heap bytes the table holds. */
static inline size_t index_table__bytes(const struct index_table *t)
{
	return t->mask ? (t->mask + 1) * (sizeof(*t->idx1) + sizeof(*t->hash)) : 0;
}

#endif /* ISOPROF_LIB_INDEX_TABLE_H */
