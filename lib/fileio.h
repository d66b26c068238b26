/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * fileio: whole-file reads and atomic writes of isoprof's own inputs and
 * outputs (profiles, pages, reports).  Files a target controls are not
 * read through here but through lib/safe_open.h and their parsers' readers.
 *
 * An atomic write goes to a temporary file created next to the destination
 * (".NAME.tmp.XXXXXXXXXX": same directory, so rename() never crosses
 * filesystems, and an unpredictable name) with O_CREAT|O_EXCL|O_NOFOLLOW,
 * so no file or symlink planted at that name is ever followed or
 * truncated; it is fsync()ed, then renamed over the destination, which
 * replaces a symlink there rather than following it: a reader sees the old
 * file or the whole new one, never a part.  The directory is opened once
 * and both names are used relative to it.  On any error the temporary
 * file is removed and the destination is untouched.  "-" as a path means
 * standard output, written directly (not so for the *at() forms, where
 * "-" is a name like any other).
 *
 * Actions return 0 or a negative errno.
 */
#ifndef ISOPROF_LIB_FILEIO_H
#define ISOPROF_LIB_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/*
 * The whole file at path, malloc()ed into *data (NUL-terminated, the NUL
 * not counted in *len).  -EFBIG when it holds more than max bytes (0: no
 * limit), -EISDIR/-EINVAL for a directory or other non-regular file
 * (opened O_NONBLOCK: a FIFO is refused, never waited on).
 */
int fileio__read_all(const char *path, size_t max, uint8_t **data, size_t *len);

/*
 * fileio__read_all() for an input a user names, which may be a stream: a
 * pipe (a shell's <(...)), FIFO or character device is read to its end.
 * Only a directory is refused.
 */
int fileio__read_stream(const char *path, size_t max, uint8_t **data, size_t *len);

/* The same from an open descriptor (standard input), which stays open. */
int fileio__read_fd(int fd, size_t max, uint8_t **data, size_t *len);

/* All of buf to fd, retrying short writes and EINTR. */
int fileio__write_all(int fd, const void *buf, size_t len);

struct atomic_file {
	char *path;	/* destination's name in dirfd; NULL for standard output */
	char *tmp;	/* the temporary file's name in dirfd; NULL for standard output */
	FILE *f;
	mode_t mode;
	int dirfd;	/* the directory of both */
	bool own_dirfd;	/* opened by atomic_file__open(), closed with the struct */
};

/*
 * Start writing path ("-": standard output) with the given permission bits
 * (the temporary file is created 0600; 0644 suits an ordinary output
 * file).  Write to af->f, then atomic_file__commit() or
 * atomic_file__abort().
 */
int atomic_file__open(struct atomic_file *af, const char *path, mode_t mode);

/*
 * The same for name (one path component: -EINVAL for "", ".", ".." or a
 * '/') in the open directory dirfd, which stays the caller's.
 */
int atomic_file__openat(struct atomic_file *af, int dirfd, const char *name, mode_t mode);

/* Flush, fsync and rename into place; the struct is released either way. */
int atomic_file__commit(struct atomic_file *af);

/* Drop the temporary file; the destination is untouched. */
void atomic_file__abort(struct atomic_file *af);

/* data[0..len) to path atomically (see above). */
int fileio__write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* data[0..len) to name in directory dirfd atomically. */
int fileio__write_atomic_at(int dirfd, const char *name, const void *data, size_t len,
			    mode_t mode);

/*
 * Open the directory at path (made 0755 first when create and missing) to
 * write outputs into, once: *dirfd is an O_DIRECTORY descriptor that later
 * writes use with the *at() forms, so a path swapped meanwhile changes
 * nothing.  A directory another user could use against isoprof is
 * refused with -EPERM and a sentence in why: a symlink (path's last
 * component is not followed), one owned by a user other than isoprof's
 * own and root, one its group or others can write to unless it is sticky
 * (like /tmp: nobody else can rename or remove isoprof's files there).
 * Other errors: -errno of mkdir(), open().
 */
int fileio__open_out_dir(const char *path, bool create, int *dirfd, char *why, size_t len);

/*
 * A file name part made from any text (a script name, a URL, an inspector
 * target id): its last '/'-separated component, with every byte outside
 * [A-Za-z0-9._-] and a leading '.' replaced by '_', cut to len - 1 bytes;
 * "unknown" when nothing is left.  NULL in is "".  The result never names
 * a directory, a hidden file or another path.
 */
void fileio__name_part(const char *in, char *out, size_t len);

#endif /* ISOPROF_LIB_FILEIO_H */
