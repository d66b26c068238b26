/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A fresh directory per test, for cmocka's setup and teardown:
 * cmocka_unit_test_setup_teardown(test, make_dir, remove_dir), the path in
 * *state.  TEMP_DIR_TEMPLATE names the directory (a mkdtemp() template),
 * set before including this header.
 */
#ifndef ISOPROF_TESTS_UNIT_TEMP_DIR_H
#define ISOPROF_TESTS_UNIT_TEMP_DIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef TEMP_DIR_TEMPLATE
#define TEMP_DIR_TEMPLATE "/tmp/isoprof-test-unit.XXXXXX"
#endif

static int make_dir(void **state)
{
	char *dir = strdup(TEMP_DIR_TEMPLATE);

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int remove_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb;
	(void)type;
	(void)ftw;
	return remove(path);
}

static int remove_dir(void **state)
{
	int err = nftw(*state, remove_one, 8, FTW_DEPTH | FTW_PHYS);

	free(*state);
	return err ? -1 : 0;
}

#endif
