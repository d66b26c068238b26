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
 * A file may be written for another user (struct fileio_owner): in a
 * directory that user alone can write, every step as that user; in a
 * directory of root's, given to them by descriptor before the rename.
 *
 * Actions return 0 or a negative errno.
 */
#ifndef ISOPROF_LIB_FILEIO_H
#define ISOPROF_LIB_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
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

/*
 * Whose the files written into a directory are, and how they get there.
 * Ownership is never applied by path: either every step on the directory
 * (create, fchmod, rename, unlink) runs with the owner's identity
 * (setfsuid()/setfsgid() of the calling thread, undone before returning),
 * so the kernel checks the owner's own permissions and isoprof can do
 * there nothing the owner could not; or isoprof creates the file itself
 * and fchown()s its descriptor before the rename.
 */
enum fileio_owner_how {
	FILEIO_OWNER_SELF,	/* isoprof's own identity: nothing to do */
	FILEIO_OWNER_AS,	/* as uid:gid (needs CAP_SETUID and CAP_SETGID) */
	FILEIO_OWNER_GIVE,	/* created by isoprof, then given to uid:gid (CAP_CHOWN) */
};

struct fileio_owner {
	enum fileio_owner_how how;
	uid_t uid;
	gid_t gid;
	/*
	 * Called with true right before the step that needs a capability
	 * (the identity switch, the fchown()) and with false once it is
	 * undone, so that a capability plan holds it effective for that
	 * step only; 0 or -errno.  NULL: nothing to raise.
	 */
	int (*privilege)(bool raise);
};

/*
 * Who isoprof may write for; see fileio__out_dir_owner().  All false:
 * only for itself, as before owners existed.
 */
struct fileio_policy {
	/* a directory another user alone can write: write there as that user */
	bool for_others;
	/* a directory of root or of isoprof's euid: give the files to give_uid:give_gid */
	bool give;
	uid_t give_uid;
	gid_t give_gid;
	int (*privilege)(bool raise);	/* copied into the owners it decides */
};

struct atomic_file {
	char *path;	/* destination's name in dirfd; NULL for standard output */
	char *tmp;	/* the temporary file's name in dirfd; NULL for standard output */
	FILE *f;
	mode_t mode;
	int dirfd;	/* the directory of both */
	bool own_dirfd;	/* opened by atomic_file__open(), closed with the struct */
	struct fileio_owner owner;	/* whose the file will be */
};

/*
 * Start writing path ("-": standard output) with the given permission bits
 * (the temporary file is created 0600; 0644 suits an ordinary output
 * file).  Write to af->f, then atomic_file__commit() or
 * atomic_file__abort().
 */
int atomic_file__open(struct atomic_file *af, const char *path, mode_t mode);

/*
 * atomic_file__open() for an output a user names (file tools): the file
 * belongs to whom policy says for path's directory (see
 * fileio__out_dir_owner(); a directory it would refuse is written as
 * isoprof, as by atomic_file__open()).  NULL policy: isoprof.
 */
int atomic_file__open_for(struct atomic_file *af, const char *path, const struct fileio_policy *p,
			  mode_t mode);

/*
 * The same for name (one path component: -EINVAL for "", ".", ".." or a
 * '/') in the open directory dirfd, which stays the caller's; the file
 * will be owner's (NULL: isoprof's own).
 */
int atomic_file__openat(struct atomic_file *af, int dirfd, const struct fileio_owner *owner,
			const char *name, mode_t mode);

/* Flush, fsync and rename into place; the struct is released either way. */
int atomic_file__commit(struct atomic_file *af);

/* Drop the temporary file; the destination is untouched. */
void atomic_file__abort(struct atomic_file *af);

/* data[0..len) to path atomically (see above). */
int fileio__write_atomic(const char *path, const void *data, size_t len, mode_t mode);

/* data[0..len) to name in directory dirfd atomically, owner's (NULL: isoprof's). */
int fileio__write_atomic_at(int dirfd, const struct fileio_owner *owner, const char *name,
			    const void *data, size_t len, mode_t mode);

/*
 * Whose files in a directory (st: its fstat()) are, under policy p (NULL:
 * all false), into *o: a directory owned by another user than root and
 * isoprof's euid, that only this user can write (not writable by group
 * or others, or sticky), is written as that user (FILEIO_OWNER_AS, with
 * the directory's gid) when p->for_others, and refused otherwise; one of
 * root or isoprof's euid gives its files to p->give_uid:give_gid when
 * p->give (FILEIO_OWNER_GIVE), else they are isoprof's.  A directory its
 * group or others can write to and that is not sticky (anyone there
 * could replace the files) is refused whoever owns it.  0, or -EPERM and
 * a sentence in why (NULL: none).
 */
int fileio__out_dir_owner(const struct stat *st, const struct fileio_policy *p,
			  struct fileio_owner *o, char *why, size_t len);

/*
 * Open the directory at path to write outputs into, once: *dirfd is an
 * O_DIRECTORY descriptor that later writes use with the *at() forms, so a
 * path swapped meanwhile changes nothing, and *owner says whose the files
 * written there are (fileio__out_dir_owner()).  With create, a missing
 * directory is made first, 0755, by the rules of its parent: as the
 * parent's owner, or given to p->give_uid:give_gid.  A directory another
 * user could use against isoprof is refused with -EPERM and a sentence in
 * why: a symlink (path's last component is not followed), and what
 * fileio__out_dir_owner() refuses.  Other errors: -errno of mkdir(),
 * open(), the identity switch or fchown().
 */
int fileio__open_out_dir(const char *path, bool create, const struct fileio_policy *p,
			 int *dirfd, struct fileio_owner *owner, char *why, size_t len);

/*
 * A file name part made from any text (a script name, a URL, an inspector
 * target id): its last '/'-separated component, with every byte outside
 * [A-Za-z0-9._-] and a leading '.' replaced by '_', cut to len - 1 bytes;
 * "unknown" when nothing is left.  NULL in is "".  The result never names
 * a directory, a hidden file or another path.
 */
void fileio__name_part(const char *in, char *out, size_t len);

#endif /* ISOPROF_LIB_FILEIO_H */
