// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* procfs: small /proc files and their parsers; see procfs.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/procfs.h"

ssize_t procfs__read(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!size)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		n = read(fd, buf + len, size - 1 - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			close(fd);
			buf[len] = '\0';
			return n;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return (ssize_t)len;
}

int procfs__parse_nspid(const char *status, pid_t *nspid)
{
	const char *p = status, *eol;
	long last = -1, v;
	char *end;

	while (p && *p) {
		if (!strncmp(p, "NSpid:", 6)) {
			p += 6;
			eol = strchr(p, '\n');
			if (!eol)
				eol = p + strlen(p);
			while (p < eol) {
				while (p < eol && (*p == ' ' || *p == '\t'))
					p++;
				if (p == eol)
					break;
				errno = 0;
				v = strtol(p, &end, 10);
				if (end == p || errno || v <= 0 || v > INT_MAX)
					return -EINVAL;
				last = v;
				p = end;
			}
			if (last < 0)
				return -EINVAL;
			*nspid = (pid_t)last;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -ENOENT;
}

/*
 * In a stat line after the comm's ')', at field `at`: the start of field `want`,
 * which must be a number, or NULL.
 */
static const char *stat_field(const char *p, int at, int want)
{
	for (; at < want; at++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return NULL;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	return isdigit((unsigned char)*p) ? p : NULL;
}

int procfs__parse_stat(const char *stat, char comm[PROCFS_COMM_LEN + 1], char *state,
		       unsigned long *flags)
{
	const char *open = strchr(stat, '('), *close = strrchr(stat, ')'), *p;
	size_t len;

	if (!open || !close || close < open)
		return -EINVAL;
	if (comm) {
		len = (size_t)(close - open - 1);
		if (len > PROCFS_COMM_LEN)
			len = PROCFS_COMM_LEN;
		memcpy(comm, open + 1, len);
		comm[len] = '\0';
	}
	p = close + 1;
	while (*p == ' ')
		p++;
	if (!*p)
		return -EINVAL;
	if (state)
		*state = *p;
	if (!flags)
		return 0;
	/* From the state (field 3): ppid, pgrp, session, tty_nr, tpgid, flags (9). */
	p = stat_field(p, 3, 9);
	if (!p)
		return -EINVAL;
	*flags = strtoul(p, NULL, 10);
	return 0;
}

int procfs__comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	if (!len)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	n = procfs__read(path, buf, len);
	if (n < 0) {
		buf[0] = '\0';
		return (int)n;
	}
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

bool procfs__alive(pid_t pid)
{
	char path[64], buf[512], state;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (procfs__read(path, buf, sizeof(buf)) < 0)
		return false;
	/* A stat line cut inside a long comm: the process exists, that is enough. */
	if (procfs__parse_stat(buf, NULL, &state, NULL) < 0)
		return true;
	return state != 'Z' && state != 'X';
}

int procfs__parse_starttime(const char *stat, unsigned long long *ticks)
{
	const char *close = strrchr(stat, ')'), *p;
	char *end;

	if (!close || !strchr(stat, '('))
		return -EINVAL;
	p = close + 1;
	/* from the state (field 3) to starttime (22) */
	p = stat_field(p, 3, 22);
	if (!p)
		return -EINVAL;
	errno = 0;
	*ticks = strtoull(p, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	return 0;
}

int procfs__start_realtime(pid_t pid, uint64_t *ns, uint64_t *tick_ns)
{
	char path[64], buf[1024];
	struct timespec real, boot;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t since_boot, real_ns, boot_ns;
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = procfs__read(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	err = procfs__parse_starttime(buf, &ticks);
	if (err)
		return err;
	if (hz <= 0 || ticks > UINT64_MAX / 1000000000ull)
		return -EINVAL;
	/* the kernel counts starttime on CLOCK_BOOTTIME: the two clocks read back to back */
	if (clock_gettime(CLOCK_REALTIME, &real) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return -errno;
	since_boot = (uint64_t)ticks * 1000000000ull / (uint64_t)hz;
	real_ns = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec;
	boot_ns = (uint64_t)boot.tv_sec * 1000000000ull + (uint64_t)boot.tv_nsec;
	if (since_boot > boot_ns || boot_ns > real_ns)
		return -EINVAL;
	*ns = real_ns - boot_ns + since_boot;
	*tick_ns = 1000000000ull / (uint64_t)hz;
	return 0;
}

int procfs__sysctl_int(const char *path, long *out)
{
	char buf[32], *end;
	ssize_t n = procfs__read(path, buf, sizeof(buf));
	long v;

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	*out = v;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int procfs__pids(pid_t **pids, size_t *nr)
{
	pid_t *out = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT_MAX)
			continue;
		if (array_grow(&out, &cap, n + 1)) {
			closedir(d);
			free(out);
			return -ENOMEM;
		}
		out[n++] = (pid_t)pid;
	}
	closedir(d);
	if (n)
		qsort(out, n, sizeof(*out), cmp_pid);
	*pids = out;
	*nr = n;
	return 0;
}
