// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* window_files: continuous's files per window, and their retention; see window_files.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/fileio.h"
#include "user/report/window_files.h"

#define STAMP_LEN 16	/* 20261203T212500Z */

int window_files__name(uint64_t from_ns, uint64_t until_ns, const char *script,
		       const char *version, const char *isolate, char *buf, size_t len)
{
	char s[128], v[64], stamp[STAMP_LEN + 1];
	time_t from = (time_t)(from_ns / 1000000000ull);
	uint64_t secs = until_ns > from_ns ? (until_ns - from_ns + 500000000ull) / 1000000000ull : 0;
	struct tm tm;
	int n;

	gmtime_r(&from, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	fileio__name_part(script, s, sizeof(s));
	fileio__name_part(version, v, sizeof(v));
	n = snprintf(buf, len, "%s+%llus+%s+%s+%s%s", stamp, (unsigned long long)(secs ? secs : 1),
		     s, v, isolate ? isolate : "none", WINDOW_FILES_SUFFIX);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int parse_stamp(const char *p, uint64_t *out)
{
	struct tm tm = { 0 };
	const char *end;
	time_t t;

	end = strptime(p, "%Y%m%dT%H%M%SZ", &tm);
	if (!end || end != p + STAMP_LEN)
		return -EINVAL;
	t = timegm(&tm);
	if (t < 0)
		return -EINVAL;
	*out = (uint64_t)t;
	return 0;
}

int window_files__parse(const char *name, struct window_file *out)
{
	const char *fields[6];
	size_t nf = 0, len = strlen(name), slen = strlen(WINDOW_FILES_SUFFIX);
	unsigned long long secs;
	char *end;

	memset(out, 0, sizeof(*out));
	if (len <= slen || strcmp(name + len - slen, WINDOW_FILES_SUFFIX))
		return -EINVAL;
	/* stamp, length, script, version, isolate: five fields before the suffix */
	fields[nf++] = name;
	for (const char *p = name; p < name + len - slen + 1 && nf < 6; p++)
		if (*p == '+')
			fields[nf++] = p + 1;
	if (nf != 6 || fields[1] - fields[0] != STAMP_LEN + 1)
		return -EINVAL;
	if (parse_stamp(name, &out->from_s))
		return -EINVAL;
	errno = 0;
	secs = strtoull(fields[1], &end, 10);
	if (errno || end != fields[2] - 2 || *end != 's' || !secs || secs > 86400)
		return -EINVAL;
	if (fields[3] - fields[2] < 2 || fields[4] - fields[3] < 2 || fields[5] - fields[4] < 2)
		return -EINVAL;
	out->until_s = out->from_s + secs;
	out->script = strndup(fields[2], (size_t)(fields[3] - fields[2] - 1));
	out->version = strndup(fields[3], (size_t)(fields[4] - fields[3] - 1));
	out->isolate = strndup(fields[4], (size_t)(fields[5] - fields[4] - 1));
	out->name = strdup(name);
	if (!out->script || !out->version || !out->isolate || !out->name) {
		window_file__release(out);
		return -ENOMEM;
	}
	return 0;
}

static int cmp_files(const void *a, const void *b)
{
	const struct window_file *x = a, *y = b;

	if (x->from_s != y->from_s)
		return x->from_s < y->from_s ? -1 : 1;
	return strcmp(x->name, y->name);
}

int window_files__list(int dirfd, struct window_file **out, size_t *nr)
{
	struct window_file *files = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd, err = 0;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct window_file f;
		struct stat st;

		if (window_files__parse(de->d_name, &f))
			continue;
		/* a regular file only: anything else is not ours to count or delete */
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode)) {
			window_file__release(&f);
			continue;
		}
		f.bytes = (uint64_t)st.st_size;
		if (array_grow(&files, &cap, n + 1)) {
			window_file__release(&f);
			err = -ENOMEM;
			break;
		}
		files[n++] = f;
	}
	closedir(d);
	if (err) {
		window_files__free(files, n);
		return err;
	}
	if (n)
		qsort(files, n, sizeof(*files), cmp_files);
	*out = files;
	*nr = n;
	return 0;
}

void window_file__release(struct window_file *f)
{
	free(f->name);
	free(f->script);
	free(f->version);
	free(f->isolate);
	memset(f, 0, sizeof(*f));
}

void window_files__free(struct window_file *files, size_t nr)
{
	for (size_t i = 0; files && i < nr; i++)
		window_file__release(&files[i]);
	free(files);
}

long window_files__prune(int dirfd, uint64_t now_s, uint64_t max_age_s, uint64_t max_bytes)
{
	struct window_file *files;
	uint64_t total = 0;
	size_t n, i = 0;
	long deleted = 0;
	int err;

	err = window_files__list(dirfd, &files, &n);
	if (err)
		return err;
	for (size_t k = 0; k < n; k++)
		total += files[k].bytes;
	for (; i < n; i++) {
		bool old = max_age_s && files[i].until_s + max_age_s < now_s;
		bool over = max_bytes && total > max_bytes;

		if (!old && !over)
			break;
		if (!unlinkat(dirfd, files[i].name, 0))
			deleted++;
		total -= files[i].bytes;
	}
	window_files__free(files, n);
	return deleted;
}
