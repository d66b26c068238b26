/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * probe_sites: the binaries a family of uprobes goes on (the GC probes, the
 * allocation probes), each once by (device, inode) however many targets
 * run it, with the functions to probe found by symbol name and the targets
 * that run it.
 *
 *   probe_binaries__add()      a target and its binary; sites read once per binary
 *   probe_binaries__of()       the binary a target runs
 *   probe_binaries__done()     after attaching: the binaries' descriptors closed
 *   probe_binaries__unlink()   every link closed
 *   probe_binaries__release()  undoes everything
 *
 * Errors are negative errno.  Nothing prints.
 */
#ifndef ISOPROF_CAPTURE_PROBE_SITES_H
#define ISOPROF_CAPTURE_PROBE_SITES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

struct probe_binary {
	dev_t dev;
	ino_t ino;
	int fd;			/* a duplicate of the caller's, until probe_binaries__done() */
	unsigned long *offsets;	/* file offsets of the sites */
	__u64 *cookies;		/* what site_of() said of each */
	size_t n, cap;
	int err;		/* of reading or attaching it */
	unsigned int flags;	/* the owner's: what its check() found */
	pid_t *pids;		/* the targets that run it */
	size_t npids, pids_cap;
	int links[2];		/* the owner's links (+1; 0: none) */
};

struct probe_binaries {
	struct probe_binary *v;
	size_t n, cap;
	/* in: the cookie of a (mangled) symbol name, 0 for none */
	__u64 (*site_of)(const char *name);
	/* in: more matching functions than this: -E2BIG (each is a breakpoint) */
	size_t max_sites;
	/*
	 * in, optional: called once a binary's sites are read; its return is
	 * the binary's error (-ENOENT: not the functions the probes need)
	 */
	int (*check)(struct probe_binary *b);
};

/*
 * Probe pid, running the binary open as exe_fd (the caller keeps its
 * descriptor; a duplicate is held).  The binary's error: 0, -ENOENT for no
 * site (or as check() says), -E2BIG, -ENOEXEC for an unreadable symbol
 * table; -ENOMEM.
 */
int probe_binaries__add(struct probe_binaries *set, pid_t pid, int exe_fd);

/* The binary pid runs, or NULL. */
struct probe_binary *probe_binaries__of(const struct probe_binaries *set, pid_t pid);

/* Whether b has a site with this cookie. */
bool probe_binary__has(const struct probe_binary *b, __u64 cookie);

void probe_binaries__done(struct probe_binaries *set);
void probe_binaries__unlink(struct probe_binaries *set);
void probe_binaries__release(struct probe_binaries *set);

#endif /* ISOPROF_CAPTURE_PROBE_SITES_H */
