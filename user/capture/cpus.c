// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/cpus.h"

/* No machine has more; bounds the work a malformed "0-2000000000" can cause. */
#define MAX_CPU_ID 65535

static int append(struct cpu_set_list *out, size_t *cap, int id)
{
	int *ids;

	if (out->count == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		ids = realloc(out->ids, *cap * sizeof(*ids));
		if (!ids)
			return -ENOMEM;
		out->ids = ids;
	}
	out->ids[out->count++] = id;
	return 0;
}

static int parse_id(const char **p, long *id)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return -EINVAL;
	errno = 0;
	*id = strtol(*p, &end, 10);
	if (errno || *id > MAX_CPU_ID)
		return -EINVAL;
	*p = end;
	return 0;
}

int cpus__parse_list(const char *text, struct cpu_set_list *out)
{
	const char *p = text;
	size_t cap = 0;
	long lo, hi;
	int err;

	out->ids = NULL;
	out->count = 0;
	while (*p && *p != '\n') {
		err = parse_id(&p, &lo);
		if (err)
			goto fail;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_id(&p, &hi);
			if (err || hi < lo) {
				err = -EINVAL;
				goto fail;
			}
		}
		for (long id = lo; id <= hi; id++) {
			/* ranges must ascend and not overlap */
			if (out->count && id <= out->ids[out->count - 1]) {
				err = -EINVAL;
				goto fail;
			}
			err = append(out, &cap, (int)id);
			if (err)
				goto fail;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n') {
			err = -EINVAL;
			goto fail;
		}
	}
	if (!out->count) {
		err = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	cpus__free(out);
	return err;
}

int cpus__online(struct cpu_set_list *out)
{
	char buf[4096];
	size_t n;
	FILE *f;

	f = fopen("/sys/devices/system/cpu/online", "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return cpus__parse_list(buf, out);
}

void cpus__free(struct cpu_set_list *set)
{
	free(set->ids);
	set->ids = NULL;
	set->count = 0;
}
