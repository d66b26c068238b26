/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * array: growing a malloc()ed array by doubling.
 *
 *	if (array_grow(&list->items, &list->cap, list->nr + 1))
 *		return -ENOMEM;
 *	list->items[list->nr++] = item;
 *
 * array__grow() makes room for need elements of elem bytes in *arr (cap
 * counts elements): nothing when there is room already, else the capacity
 * doubles from ARRAY_MIN_CAP until need fits.  Returns 0, or -ENOMEM when
 * the allocation fails or the size would overflow; *arr and *cap are then
 * unchanged.
 */
#ifndef ISOPROF_LIB_ARRAY_H
#define ISOPROF_LIB_ARRAY_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define ARRAY_MIN_CAP 16

static inline int array__grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : ARRAY_MIN_CAP;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

/* array__grow() for a typed pointer: array_grow(&p, &cap, need). */
#define array_grow(arrp, capp, need) \
	array__grow((void **)(arrp), (capp), (need), sizeof(**(arrp)))

#endif /* ISOPROF_LIB_ARRAY_H */
