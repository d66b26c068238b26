// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* fileio: whole-file reads and atomic writes; see fileio.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fileio.h"

/* fd to its end into a malloc()ed buffer; size_hint (0: unknown) sizes the first read. */
static int read_fd(int fd, size_t max, size_t size_hint, uint8_t **data, size_t *len)
{
	size_t cap = size_hint ? size_hint + 1 : 65536, n = 0;
	uint8_t *buf;
	ssize_t r;

	*data = NULL;
	*len = 0;
	if (max && cap > max + 1)
		cap = max + 1;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n + 1 == cap) {
			size_t ncap = cap * 2;
			uint8_t *nb;

			if (max && n >= max) {
				free(buf);
				return -EFBIG;
			}
			nb = ncap > cap ? realloc(buf, ncap) : NULL;
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap = ncap;
		}
		r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			free(buf);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (max && n > max) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

/* Open path and read it whole; streams: pipes and other non-regular files too. */
static int read_path(const char *path, size_t max, bool streams, uint8_t **data, size_t *len)
{
	struct stat st;
	int fd, err;

	*data = NULL;
	*len = 0;
	/* A FIFO refused for a regular-file read must not block open() first. */
	fd = open(path, streams ? O_RDONLY | O_CLOEXEC : O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode) && !streams) {
		err = -EINVAL;
		goto out;
	}
	if (S_ISREG(st.st_mode) && max && (uint64_t)st.st_size > max) {
		err = -EFBIG;
		goto out;
	}
	/* The size is a hint: the file may grow or shrink while it is read. */
	err = read_fd(fd, max, S_ISREG(st.st_mode) ? (size_t)st.st_size : 0, data, len);
out:
	close(fd);
	return err;
}

int fileio__read_all(const char *path, size_t max, uint8_t **data, size_t *len)
{
	return read_path(path, max, false, data, len);
}

int fileio__read_stream(const char *path, size_t max, uint8_t **data, size_t *len)
{
	return read_path(path, max, true, data, len);
}

int fileio__read_fd(int fd, size_t max, uint8_t **data, size_t *len)
{
	return read_fd(fd, max, 0, data, len);
}

int fileio__write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void atomic_file__release(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp);
	memset(af, 0, sizeof(*af));
}

int atomic_file__open(struct atomic_file *af, const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	int fd, err;

	memset(af, 0, sizeof(*af));
	if (!*path || (slash && !slash[1]))
		return -EINVAL;
	af->mode = mode;
	if (!strcmp(path, "-")) {
		af->f = stdout;
		return 0;
	}
	af->path = strdup(path);
	af->tmp = malloc(strlen(path) + sizeof("/..tmp.XXXXXX"));
	if (!af->path || !af->tmp) {
		atomic_file__release(af);
		return -ENOMEM;
	}
	memcpy(af->tmp, path, dirlen);
	strcpy(af->tmp + dirlen, ".");
	strcat(af->tmp + dirlen, path + dirlen);
	strcat(af->tmp + dirlen, ".tmp.XXXXXX");
	fd = mkstemp(af->tmp);
	if (fd < 0) {
		err = -errno;
		atomic_file__release(af);
		return err;
	}
	af->f = fdopen(fd, "w");
	if (!af->f) {
		err = -errno;
		close(fd);
		unlink(af->tmp);
		atomic_file__release(af);
		return err;
	}
	return 0;
}

int atomic_file__commit(struct atomic_file *af)
{
	int err = 0;

	if (!af->f)
		return -EINVAL;
	errno = 0;
	if (fflush(af->f) == EOF || ferror(af->f))
		err = -(errno ? errno : EIO);
	if (!af->tmp) {		/* standard output */
		atomic_file__release(af);
		return err;
	}
	if (!err && (fchmod(fileno(af->f), af->mode) < 0 || fsync(fileno(af->f)) < 0))
		err = -errno;
	if (fclose(af->f) && !err)
		err = -errno;
	af->f = NULL;
	if (!err && rename(af->tmp, af->path) < 0)
		err = -errno;
	if (err)
		unlink(af->tmp);
	atomic_file__release(af);
	return err;
}

void atomic_file__abort(struct atomic_file *af)
{
	if (af->f && af->tmp) {
		fclose(af->f);
		unlink(af->tmp);
	}
	atomic_file__release(af);
}

int fileio__write_atomic(const char *path, const void *data, size_t len, mode_t mode)
{
	struct atomic_file af;
	int err = atomic_file__open(&af, path, mode);

	if (err)
		return err;
	if (len && fwrite(data, 1, len, af.f) != len) {
		err = -(errno ? errno : EIO);
		atomic_file__abort(&af);
		return err;
	}
	return atomic_file__commit(&af);
}

void fileio__name_part(const char *in, char *out, size_t len)
{
	const char *base = in ? strrchr(in, '/') : NULL;
	size_t n = 0;

	if (!len)
		return;
	if (!in)
		in = "";
	/* a script path or URL: its last component names it well enough */
	if (base && base[1])
		in = base + 1;
	for (; *in && n + 1 < len; in++) {
		char ch = *in;

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_'))
			ch = '_';
		if (!n && ch == '.')
			ch = '_';
		out[n++] = ch;
	}
	out[n] = '\0';
	if (!n)
		snprintf(out, len, "unknown");
}
