// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* cpus: the kernel's CPU list format; see cpus.h. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/capture/cpus.h"
#include "lib/array.h"
#include "lib/procfs.h"

/* No machine has more; bounds the work a malformed "0-2000000000" can cause. */
#define MAX_CPU_ID 65535

static int append(struct cpu_set_list *out, size_t *cap, int id)
{
	if (array_grow(&out->ids, cap, out->count + 1))
		return -ENOMEM;
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
	ssize_t n;

	/* a small kernel file, read as procfs reads /proc's */
	n = procfs__read("/sys/devices/system/cpu/online", buf, sizeof(buf));
	if (n < 0)
		return (int)n;
	return cpus__parse_list(buf, out);
}

void cpus__free(struct cpu_set_list *set)
{
	free(set->ids);
	set->ids = NULL;
	set->count = 0;
}
