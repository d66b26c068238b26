// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz the pprof reader: gzip detection and inflation, protobuf decoding,
 * the validator, the view, and then `isoprof top` itself on whatever
 * parses (through a memfd, with its output sent to /dev/null).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "user/cmd/commands.h"
#include "proto/pprof_reader.h"

static int memfd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* top prints its table; sanitizer reports go to stderr, which stays. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	memfd = memfd_create("fuzz_pprof", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	return 0;
}

static void walk_view(const struct pprof_profile *p)
{
	const char *const names[] = { NULL, "", "0", "1", "cpu", "samples", "inuse_space", "-1" };
	size_t nsamples = pprof_profile__sample_count(p);
	size_t ntypes = pprof_profile__sample_type_count(p);
	struct pprof_stack st = { 0 };
	volatile size_t sink = 0;
	char err[128];
	int64_t num;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		sink += (size_t)pprof_profile__sample_index(p, names[i], err, sizeof(err));
	for (size_t i = 0; i < ntypes; i++) {
		const char *unit;

		sink += strlen(pprof_profile__sample_type(p, i, &unit)) + strlen(unit);
	}
	for (size_t s = 0; s < nsamples; s++) {
		const char *l;

		for (size_t i = 0; i < ntypes; i++)
			sink += (size_t)pprof_profile__value(p, s, i);
		if (pprof_profile__stack(p, s, &st))
			break;
		for (size_t i = 0; i < st.n; i++) {
			const struct pprof_frame *f = st.frames[i];

			if (f->id >= pprof_profile__frame_count(p))
				abort();
			sink += strlen(f->name) + strlen(f->system_name) + strlen(f->filename) +
				strlen(f->mapping_file) + (size_t)f->line;
		}
		l = pprof_profile__label(p, s, "class");
		if (l)
			sink += strlen(l);
		if (pprof_profile__num_label(p, s, "bytes", &num))
			sink += (size_t)num;
	}
	pprof_stack__release(&st);
	(void)sink;
}

static void run_top(const uint8_t *data, size_t size)
{
	static char *const option_sets[][8] = {
		{ NULL },
		{ "--lines", "--sort", "cum", "--nodecount", "5", NULL },
		{ "--focus", "a|b|^$", "--ignore", "^z", "--hide-idle", NULL },
		{ "--sample-index", "0", "--lines", "--focus", "\\.", NULL },
	};
	char path[64], *argv[12];
	int argc = 0;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	argv[argc++] = "top";
	argv[argc++] = path;
	for (char *const *o = option_sets[size % 4]; *o; o++)
		argv[argc++] = *o;
	argv[argc] = NULL;
	if (cmd_top(argc, argv) != 0)
		abort();	/* it parsed here, so top must not fail */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pprof_profile *p;
	char err[256];

	if (pprof_profile__parse(data, size, &p, err, sizeof(err)))
		return 0;
	if (pprof_validate(pprof_profile__proto(p), err, sizeof(err)))
		abort();	/* parse() validated already */
	walk_view(p);
	pprof_profile__free(p);
	run_top(data, size);
	return 0;
}
