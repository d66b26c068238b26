// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the --version-labels file parser, through a memfd so the
 * registry reads it as it reads a user's file, then labelling and matching.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/attribute/isolates.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *out[4];
	char path[64], err[256];
	int fd, n;

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
