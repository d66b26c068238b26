/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * netns: sockets in another process's network namespace.
 *
 * A process in its own network namespace (a container, `unshare -n`) has
 * its own loopback: its 127.0.0.1:9229 is not the host's, where any local
 * user may listen.  A socket belongs to the namespace it was created in,
 * whichever namespace later uses it, so netns__socket() creates it in a
 * short-lived thread that setns()es into the target's namespace first;
 * the calling thread (and the rest of isoprof) never changes namespace.
 *
 * setns(CLONE_NEWNET) needs CAP_SYS_ADMIN: call these before privileges
 * are dropped (record opens inspector sessions before the window).
 *
 * Errors: negative errno; nothing prints.
 */
#ifndef ISOPROF_LIB_NETNS_H
#define ISOPROF_LIB_NETNS_H

#include <sys/types.h>

/*
 * Process pid's network namespace: 0 with *fd = -1 when it is isoprof's
 * own (same device and inode of /proc/PID/ns/net), 0 with *fd an O_CLOEXEC
 * descriptor (the caller's to close) when it is another, or -ENOENT (no
 * such process), -EACCES, ...
 */
int netns__open(pid_t pid, int *fd);

/*
 * socket(domain, type, protocol) created in the network namespace
 * netns_fd (from netns__open(); negative: isoprof's own).  The fd, or a
 * negative errno (-EPERM without CAP_SYS_ADMIN, from setns()).
 */
int netns__socket(int netns_fd, int domain, int type, int protocol);

#endif /* ISOPROF_LIB_NETNS_H */
