/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * procfs: reading what /proc says about a process.  The parsers take the
 * text (so tests and fuzzers feed them directly); procfs__read() gets it.
 * Paths are built by the caller, who may read another /proc (a test's, or
 * a container's).  Actions return 0 or a negative errno.
 */
#ifndef ISOPROF_LIB_PROCFS_H
#define ISOPROF_LIB_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* TASK_COMM_LEN: 15 bytes and the NUL. */
#define PROCFS_COMM_LEN 16

/*
 * Up to size - 1 bytes of a small /proc file (status, stat, cmdline, comm)
 * into buf, NUL-terminated.  Returns the byte count or a negative errno.
 */
ssize_t procfs__read(const char *path, char *buf, size_t size);

/*
 * The integer a /proc/sys file holds (kernel.perf_event_paranoid...):
 * 0 with *out, -errno when it cannot be read, -EINVAL when it is not a
 * decimal number.
 */
int procfs__sysctl_int(const char *path, long *out);

/*
 * The pid in the innermost pid namespace: the last number of the
 * "NSpid:" line of status text.  -ENOENT when there is no such line
 * (kernels before 4.1), -EINVAL when it does not parse.
 */
int procfs__parse_nspid(const char *status, pid_t *nspid);

/*
 * From /proc/PID/stat text: the command name (comm, cut to 16 bytes), the
 * state letter and the flags field (PF_*).  comm may contain blanks and
 * parentheses: it is what lies between the first '(' and the last ')'.
 * Any output may be NULL.  -EINVAL when the text does not parse.
 */
int procfs__parse_stat(const char *stat, char comm[PROCFS_COMM_LEN + 1], char *state,
		       unsigned long *flags);

/*
 * The start time of /proc/PID/stat text (field 22): clock ticks
 * (sysconf(_SC_CLK_TCK)) after boot.  -EINVAL when the text does not parse.
 */
int procfs__parse_starttime(const char *stat, unsigned long long *ticks);

/*
 * When pid started, in CLOCK_REALTIME ns (the clock of file times), known
 * to one clock tick: *tick_ns.  0 or -errno (-ESRCH when it is gone).
 */
int procfs__start_realtime(pid_t pid, uint64_t *ns, uint64_t *tick_ns);

/*
 * Was t (a file's ctime) surely later than a process start known to one
 * tick (procfs__start_realtime())?  Two ticks of margin: the start is
 * rounded down to its tick, file times to the kernel's coarse clock.
 */
static inline bool procfs__after_start(const struct timespec *t, uint64_t start_ns,
				       uint64_t tick_ns)
{
	uint64_t ns;

	if (t->tv_sec < 0)
		return false;
	ns = (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;
	return ns > start_ns + 2 * tick_ns;
}

/* /proc/PID/comm without its newline; "" when unreadable.  Returns 0 or -errno. */
int procfs__comm(pid_t pid, char *buf, size_t len);

/*
 * Will pid run again?  false when it is gone or a zombie (which still
 * answers kill(pid, 0)).
 */
bool procfs__alive(pid_t pid);

/*
 * The processes /proc lists now (its numeric entries), in ascending order,
 * malloc()ed into *pids (NULL when none).  0 or -errno.
 */
int procfs__pids(pid_t **pids, size_t *nr);

#endif /* ISOPROF_LIB_PROCFS_H */
