// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the --version-labels parser (user/attribute/
 * version_labels), on its own with checks of what it promises, then
 * through a memfd as the registry reads a user's file, labelling and
 * matching.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/attribute/isolates.h"
#include "user/attribute/version_labels.h"

/* Strings live until the input is done. */
struct pool {
	char *s[4096];
	size_t nr;
};

static const char *pool_intern(void *ctx, const char *s)
{
	struct pool *p = ctx;

	if (p->nr == sizeof(p->s) / sizeof(p->s[0]))
		return NULL;
	p->s[p->nr] = strdup(s);
	return p->s[p->nr] ? p->s[p->nr++] : NULL;
}

static void check_labels(const uint8_t *data, size_t size)
{
	struct version_labels vl;
	struct pool pool = { .nr = 0 };
	const struct version_label *best = NULL;
	char err[256];
	FILE *f;

	f = fmemopen((void *)data, size, "r");
	if (!f)
		return;
	if (version_labels__read(f, pool_intern, &pool, &vl, err, sizeof(err))) {
		if (vl.nr || vl.v)
			__builtin_trap();
	}
	for (size_t i = 0; i < vl.nr; i++) {
		const struct version_label *l = &vl.v[i];

		if (l->plen < VERSION_LABEL_MIN_ID || l->plen >= SHA256_HEX_LEN ||
		    strlen(l->prefix) != l->plen || !l->label[0] ||
		    strlen(l->label) > VERSION_LABEL_MAX)
			__builtin_trap();
		if (i && strcmp(vl.v[i - 1].script, l->script) > 0)
			__builtin_trap();
		version_labels__best(&vl, l->script, "0123456789abcdef0123456789abcdef"
						     "0123456789abcdef0123456789abcdef", &best);
		if (!version_labels__has(&vl, l->label))
			__builtin_trap();
	}
	version_labels__release(&vl);
	fclose(f);
	for (size_t i = 0; i < pool.nr; i++)
		free(pool.s[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct isolate_registry *reg;
	const struct isolate_info *out[4];
	char path[64], err[256];
	int fd, n;

	if (size)
		check_labels(data, size);
	reg = isolate_registry__new();
	if (!reg)
		return 0;
	fd = memfd_create("labels", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	/* an isolate known only from its frames, so labels have something to match */
	isolate_registry__note_script(reg, 42, 0x1000, "app.js");
	n = isolate_registry__load_labels(reg, path, err, sizeof(err));
	if (n < 0 && !err[0])
		__builtin_trap();
	isolate_registry__match(reg, "app.js", NULL, NULL, NULL, out, 4);
	isolate_registry__match(reg, "app.js", "latest", NULL, NULL, out, 4);
	if (size > 4)
		isolate_registry__match(reg, "app.js", "deploy", NULL, NULL, out, 4);
out:
	if (fd >= 0)
		close(fd);
	isolate_registry__free(reg);
	return 0;
}
