// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* netns: sockets in another process's network namespace; see netns.h. */
#include "lib/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int netns__open(pid_t pid, int *fd)
{
	struct stat self, other;
	char path[64];
	int nfd;

	*fd = -1;
	if (pid <= 0)
		return -EINVAL;
	if (stat("/proc/self/ns/net", &self) < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	nfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nfd < 0)
		return -errno;
	/* The open fd, not the path: the process may exit and its pid be reused. */
	if (fstat(nfd, &other) < 0) {
		int err = -errno;

		close(nfd);
		return err;
	}
	if (other.st_dev == self.st_dev && other.st_ino == self.st_ino) {
		close(nfd);
		return 0;
	}
	*fd = nfd;
	return 0;
}

struct ns_socket {
	int netns_fd, domain, type, protocol;
	int result;		/* the socket, or a negative errno */
};

/*
 * The thread's namespace changes, never the process's: the thread exits
 * right after, and the socket stays in the namespace it was made in.
 */
static void *ns_socket_thread(void *arg)
{
	struct ns_socket *a = arg;

	if (setns(a->netns_fd, CLONE_NEWNET) < 0) {
		a->result = -errno;
		return NULL;
	}
	a->result = socket(a->domain, a->type, a->protocol);
	if (a->result < 0)
		a->result = -errno;
	return NULL;
}

int netns__socket(int netns_fd, int domain, int type, int protocol)
{
	struct ns_socket a = { netns_fd, domain, type, protocol, -EIO };
	pthread_t th;
	int err, fd;

	if (netns_fd < 0) {
		fd = socket(domain, type, protocol);
		return fd < 0 ? -errno : fd;
	}
	err = pthread_create(&th, NULL, ns_socket_thread, &a);
	if (err)
		return -err;
	err = pthread_join(th, NULL);
	return err ? -err : a.result;
}
