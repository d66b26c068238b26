// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* window_merge: window files chosen by name and merged; see window_merge.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/safe_open.h"
#include "proto/pprof_merge.h"
#include "proto/pprof_reader.h"
#include "user/report/window_merge.h"

/* text made safe as window_files__name() makes a name's fields */
static bool same_part(const char *want, const char *have, size_t cap)
{
	char buf[128];

	fileio__name_part(want, buf, cap < sizeof(buf) ? cap : sizeof(buf));
	return !strcmp(buf, have);
}

bool window_select__match(const struct window_select *sel, const struct window_file *f)
{
	/* the sizes window_files__name() cuts script and version to */
	if (sel->script && !same_part(sel->script, f->script, 128))
		return false;
	if (sel->version && !same_part(sel->version, f->version, 64))
		return false;
	/* [from_s, until_s) of the window against [from_s, until_s) of the selection */
	if (sel->until_s != INT64_MAX && (int64_t)f->from_s >= sel->until_s)
		return false;
	return sel->from_s == INT64_MIN || (int64_t)f->until_s > sel->from_s;
}

int window_merge__file(struct pprof_merge *m, int dirfd, const char *name, bool *other_kind,
		       char *err, size_t errlen)
{
	struct safe_open_opts opts = { .max_bytes = WINDOW_MERGE_FILE_MAX };
	struct pprof_profile *p;
	struct safe_open_info info;
	uint8_t *data;
	size_t len;
	int fd, ret;

	*other_kind = false;
	fd = dirfd < 0 ? safe_open__file(name, &opts, &info) :
			 safe_open__file_at(dirfd, name, &opts, &info);
	if (fd < 0) {
		snprintf(err, errlen, "%s", info.why[0] ? info.why : strerror(-fd));
		return fd;
	}
	ret = fileio__read_fd(fd, WINDOW_MERGE_FILE_MAX, &data, &len);
	close(fd);
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (!len) {
		free(data);
		snprintf(err, errlen, "empty file");
		return -EBADMSG;
	}
	ret = pprof_profile__parse(data, len, &p, err, errlen);
	free(data);
	if (ret)
		return ret;
	ret = pprof_merge__add(m, p, err, errlen);
	*other_kind = ret == -EINVAL;
	pprof_profile__free(p);
	return ret;
}

int window_merge__dir(struct pprof_merge *m, int dirfd, const struct window_select *sel,
		      size_t *matched, size_t *merged, window_merge_note_fn note, void *ctx,
		      char *err, size_t errlen)
{
	struct window_file *files;
	char why[512];
	size_t n;
	int ret;

	*matched = *merged = 0;
	ret = window_files__list(dirfd, &files, &n);
	if (ret) {
		snprintf(err, errlen, "cannot list the directory: %s", strerror(-ret));
		return ret;
	}
	for (size_t i = 0; i < n; i++) {
		bool other_kind;

		if (!window_select__match(sel, &files[i]))
			continue;
		(*matched)++;
		ret = window_merge__file(m, dirfd, files[i].name, &other_kind, why, sizeof(why));
		if (!ret) {
			(*merged)++;
			continue;
		}
		if (other_kind || ret == -ENOMEM) {
			snprintf(err, errlen, "%s: %s", files[i].name, why);
			break;
		}
		if (note)
			note(ctx, files[i].name, why);
		ret = 0;
	}
	window_files__free(files, n);
	return ret;
}
