// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the workerd config parser (symbolize/workerd_config).
 * The input is the config; every file it imports reads as the same bytes
 * (so imports recurse into fuzzed text, bounded by the file limit), except
 * names ending ".missing", which fail.  Whatever it parses must hold what
 * the header promises: services with names, modules with names, a
 * JavaScript module's source or embedded file name (never both), other
 * modules with neither, errors with a message.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/workerd_config.h"

struct input {
	const uint8_t *data;
	size_t size;
};

static int read_same(void *ctx, const char *path, bool import_path, char **data, size_t *len,
		     char *why, size_t whylen)
{
	const struct input *in = ctx;
	size_t n = strlen(path);

	(void)import_path;
	(void)why;
	(void)whylen;
	if (n >= 8 && !strcmp(path + n - 8, ".missing"))
		return -ENOENT;
	*data = malloc(in->size + 1);
	if (!*data)
		return -ENOMEM;
	memcpy(*data, in->data, in->size);
	(*data)[in->size] = '\0';
	*len = in->size;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct workerd_config *cfg = NULL;
	char err[256];
	int ret;

	ret = workerd_config__parse_text("dir/config.capnp", (const char *)data, size, NULL,
					 read_same, &in, &cfg, err, sizeof(err));
	if (ret) {
		if (cfg || (ret != -ENOMEM && !err[0]))
			__builtin_trap();
		return 0;
	}
	for (size_t i = 0; i < cfg->nr_services; i++) {
		const struct workerd_service *s = &cfg->services[i];

		if (!s->name)
			__builtin_trap();
		for (size_t j = 0; j < s->nr_modules; j++) {
			const struct workerd_module *m = &s->modules[j];
			bool js = m->kind != WORKERD_MODULE_OTHER;

			if (!m->name || (js && !m->source == !m->embed) ||
			    (!js && (m->source || m->embed)) || (m->embed && !m->embed[0]))
				__builtin_trap();
		}
		for (size_t j = 0; j < s->nr_namespaces; j++)
			if (!s->namespaces[j].class_name)
				__builtin_trap();
	}
	workerd_config__free(cfg);
	return 0;
}
