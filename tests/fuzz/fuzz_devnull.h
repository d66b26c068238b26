/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * For fuzz targets that exercise writers too: a /dev/null stream opened
 * once, in libFuzzer's initialization hook, that the target writes to.
 * Include it once, in the target's .c file.
 */
#ifndef ISOPROF_TESTS_FUZZ_DEVNULL_H
#define ISOPROF_TESTS_FUZZ_DEVNULL_H

#include <stdio.h>
#include <stdlib.h>

static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
}

#endif /* ISOPROF_TESTS_FUZZ_DEVNULL_H */
