// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz proto/pprof_merge: two profiles from one input (the first two bytes
 * say where the second starts), each through the reader first as
 * `isoprof merge` reads files; whatever both parse is merged (the first
 * with itself, then with the second), and the merged profile must read
 * back: the builder may refuse nothing the reader accepted.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/pprof_merge.h"
#include "proto/pprof_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void merge_and_check(struct pprof_profile *a, struct pprof_profile *b, bool gzip)
{
	struct pprof_merge *m = pprof_merge__new();
	struct pprof_profile *back;
	char err[256];
	uint8_t *out;
	size_t len;
	int ret;

	if (!m)
		abort();
	if (pprof_merge__add(m, a, err, sizeof(err)) || pprof_merge__add(m, a, err, sizeof(err)))
		abort();	/* a profile always merges with its own kind */
	if (b) {
		ret = pprof_merge__add(m, b, err, sizeof(err));
		if (ret && ret != -EINVAL)
			abort();
	}
	if (pprof_merge__serialize(m, gzip, &out, &len))
		abort();
	if (pprof_profile__parse(out, len, &back, err, sizeof(err))) {
		fprintf(stderr, "merged profile does not read back: %s\n", err);
		abort();
	}
	pprof_profile__free(back);
	free(out);
	pprof_merge__free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *a = NULL, *b = NULL;
	char err[256];
	size_t split;

	if (size < 2)
		return 0;
	split = (size_t)(data[0] | data[1] << 8);
	data += 2;
	size -= 2;
	if (split > size)
		split = size;
	if (pprof_profile__parse(data, split, &a, err, sizeof(err)))
		return 0;
	if (pprof_profile__parse(data + split, size - split, &b, err, sizeof(err)))
		b = NULL;
	merge_and_check(a, b, split & 1);
	pprof_profile__free(a);
	pprof_profile__free(b);
	return 0;
}
