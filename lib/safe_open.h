/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * safe_open: the one way isoprof opens a file that a target (a process it
 * profiles, hence possibly another local user) can name, create or
 * replace: perf maps, code logs, mapped ELF files, the files of a log
 * directory.  isoprof runs as root; such a file must never block it, make
 * it read a file its user could not read, or feed it another file than
 * the one the target uses.
 *
 * Every open is O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC (a FIFO or a
 * device cannot block open(), a symlink as last component is refused),
 * then fstat() decides:
 *   - regular files only (a FIFO, device, socket or directory is refused);
 *   - the owner, by policy (enum safe_open_owner): the target's uid only
 *     for files the target writes itself (perf map, code log: a file
 *     planted by anyone else, root included, is not the target's), or the
 *     target's uid or root;
 *   - the size: at most max_bytes (a sparse 1 TB file is refused before a
 *     byte is read; readers also stop at the cap if it grows later);
 *   - optionally the identity: st_dev and st_ino both equal to what the
 *     caller expects (a mapping's dev and inode from /proc/PID/maps).
 *
 * Where: a path is resolved inside a root directory, never above it.
 * With root set, or for a path that starts "PROC/N/root/" (PROC is
 * proc_root, "/proc" by default: the target's own view of the file system
 * as isoprof reaches it), the rest of the path is resolved by openat2()
 * with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS on a descriptor of that
 * root, so an absolute symlink or ".." inside it stays inside it.  On a
 * kernel without openat2() (before 5.6) each component is opened with
 * O_NOFOLLOW instead and any symlink on the way is refused.  Other paths
 * are opened as named, but never through a /proc magic link; proc_link
 * says the path IS such a link (/proc/PID/exe, /proc/PID/map_files/...),
 * whose target the kernel itself names: it is followed, and the checks
 * above still apply.
 *
 * Errors: -errno of the open (-ENOENT when missing, -ELOOP for a symlink,
 * -EXDEV for a path that leaves its root) or of a check: -EINVAL (not a
 * regular file), -EPERM (owner), -EFBIG (size), -ESTALE (another file than
 * expected).  With info, info->why gets a short, human reason ("a FIFO, not
 * a regular file", "owned by uid 1000, not the target's uid 65534 or
 * root", "symlink refused", "larger than the 1 GiB cap") for a note; the
 * raw path is the caller's to print with it.  Nothing here prints.
 *
 * read_budget: the bytes one capture may read from target files, over all
 * of them.  Readers charge it before reading; once it is spent they stop
 * and report -EDQUOT, so a capture's reading is bounded whatever the
 * targets write.  Not thread-safe.
 */
#ifndef ISOPROF_LIB_SAFE_OPEN_H
#define ISOPROF_LIB_SAFE_OPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Per-file caps, chosen far above what real targets write and far below
 * what hurts: a perf map of a long-lived workerd reaches hundreds of MB;
 * a code log with --log-source-code carries every script source (bundles
 * of tens of MB, many isolates); ELF files are read only for their headers
 * and symbol tables (workerd is 162 MB with its symbols).
 */
#define SAFE_OPEN_PERFMAP_MAX	(1ull << 30)	/* 1 GiB */
#define SAFE_OPEN_CODE_LOG_MAX	(2ull << 30)	/* 2 GiB */
#define SAFE_OPEN_ELF_MAX	(4ull << 30)	/* 4 GiB */
/* What one capture reads from target files in all (read_budget). */
#define SAFE_OPEN_CAPTURE_MAX	(8ull << 30)	/* 8 GiB */

enum safe_open_owner {
	SAFE_OPEN_ANY_OWNER = 0,	/* identity or type checks only */
	SAFE_OPEN_OWNER_TARGET,		/* owned by uid: files the target writes */
	SAFE_OPEN_OWNER_TARGET_OR_ROOT,	/* by uid or root */
};

struct safe_open_opts {
	enum safe_open_owner owner;
	uid_t uid;		/* the target's uid (safe_open__target_uid()) */
	const char *root;	/* resolve path inside this directory; NULL: see above */
	const char *proc_root;	/* "/proc" when NULL */
	bool proc_link;		/* path is a /proc magic link to follow */
	bool match_file;	/* dev and ino must match */
	uint64_t dev;		/* st_dev as the kernel encodes it (makedev()) */
	uint64_t ino;
	uint64_t max_bytes;	/* 0: no cap */
};

struct safe_open_info {
	struct stat st;		/* of the file opened (or refused, when fstat ran) */
	char why[128];		/* "" on success */
};

/* Open path for reading under opts (NULL: any owner, no cap).  An fd or -errno. */
int safe_open__file(const char *path, const struct safe_open_opts *opts,
		    struct safe_open_info *info);

/*
 * safe_open__file() for name, one path component (no '/', not "." or
 * ".."; -EINVAL otherwise), in the open directory dirfd: a directory
 * opened once and read many times (the window files of a directory) needs
 * no path resolved again.  opts' root, proc_root and proc_link are not
 * used.  An fd or -errno.
 */
int safe_open__file_at(int dirfd, const char *name, const struct safe_open_opts *opts,
		       struct safe_open_info *info);

/*
 * The checks of safe_open__file() on a descriptor opened elsewhere; fd
 * stays open either way.  0 or -errno as above.
 */
int safe_open__check_fd(int fd, const struct safe_open_opts *opts, struct safe_open_info *info);

/*
 * A directory to list (O_DIRECTORY), resolved like safe_open__file()
 * (a symlink as last component refused, inside its root); only opts'
 * root, proc_root and proc_link are used.  An fd or -errno.
 */
int safe_open__dir(const char *path, const struct safe_open_opts *opts,
		   struct safe_open_info *info);

/* Does st's owner pass opts' owner policy (opts NULL: any owner)? */
bool safe_open__owner_ok(const struct stat *st, const struct safe_open_opts *opts);

/*
 * The uid under which pid creates files (the fs uid of PROC/PID/status;
 * proc_root NULL: "/proc").  0 or -errno (-ESRCH when it is gone).
 */
int safe_open__target_uid(const char *proc_root, pid_t pid, uid_t *uid);

/* A sentence part for a cap: "1 GiB", "256 MiB", "4096 bytes". */
void safe_open__size_str(uint64_t bytes, char *buf, size_t len);

struct read_budget {
	uint64_t limit;		/* 0: unlimited */
	uint64_t used;
	bool spent;		/* a reader was refused: say so once */
};

void read_budget__init(struct read_budget *b, uint64_t limit);

/*
 * Up to want bytes of the budget: what may be read now (want when
 * unlimited or b is NULL); 0 marks the budget spent.
 */
uint64_t read_budget__take(struct read_budget *b, uint64_t want);

/* Bytes taken but not read (a short read) go back. */
void read_budget__give_back(struct read_budget *b, uint64_t bytes);

#endif /* ISOPROF_LIB_SAFE_OPEN_H */
