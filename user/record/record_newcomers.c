// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record_newcomers: continuous with no --pid, which processes to look at
 * for runtimes started since the last look; see record.h.
 *
 * Looking at a process costs a read of its binary's symbol table (and its
 * libraries', when the binary is no V8 runtime itself): milliseconds, on a
 * host whose shells, health checks and cron jobs start processes all the
 * time.  So a binary found to be no V8 runtime is remembered by its
 * identity (device, inode) and its next processes cost a stat().  A
 * process at least NOT_V8_AGE_S old teaches that at once; a younger one may
 * be before the dynamic loader mapped libnode (Debian's node), so it is
 * looked at again the next time, and its binary is remembered only once
 * YOUNG_STRIKES young processes of it were no V8 runtime (the compilers
 * and shells a host starts by the hundred live less than a second).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/procfs.h"
#include "user/record/record.h"

#define NOT_V8_AGE_S 2.0
#define YOUNG_STRIKES 3
/* a bound on the memo: past it, it starts again (a host with that many binaries) */
#define NOT_V8_MAX 4096

static bool in_sorted(const pid_t *pids, size_t n, pid_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pids[mid] == pid)
			return true;
		if (pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static bool exe_id(pid_t pid, struct exe_id *out)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if (stat(path, &st))
		return false;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	return true;
}

static struct not_v8 *find_not_v8(const struct newcomer_watch *w, const struct exe_id *id)
{
	for (size_t i = 0; i < w->nnot_v8; i++)
		if (w->not_v8[i].id.dev == id->dev && w->not_v8[i].id.ino == id->ino)
			return &w->not_v8[i];
	return NULL;
}

static bool known_not_v8(const struct newcomer_watch *w, const struct exe_id *id)
{
	const struct not_v8 *e = find_not_v8(w, id);

	return e && e->strikes >= YOUNG_STRIKES;
}

int record_newcomers__candidates(struct newcomer_watch *w, const pid_t *skip, size_t nskip,
				 bool all, pid_t **out, size_t *nr)
{
	pid_t *pids = NULL, *cand;
	size_t npids = 0, n = 0;
	pid_t self = getpid();
	int err;

	err = procfs__pids(&pids, &npids);
	if (err)
		return err;
	cand = malloc((npids ? npids : 1) * sizeof(*cand));
	if (!cand) {
		free(pids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < npids; i++) {
		pid_t pid = pids[i];
		struct exe_id id;

		if (pid == self || in_sorted(skip, nskip, pid))
			continue;
		if (!all && in_sorted(w->seen, w->nseen, pid) &&
		    !in_sorted(w->recheck, w->nrecheck, pid))
			continue;
		/* a kernel thread has no exe; a known binary costs nothing more */
		if (!exe_id(pid, &id) || known_not_v8(w, &id))
			continue;
		cand[n++] = pid;
	}
	free(w->seen);
	w->seen = pids;
	w->nseen = npids;
	w->nrecheck = 0;
	*out = cand;
	*nr = n;
	return 0;
}

/* How long ago pid started, from its start time (clock ticks since boot). */
static double age_s(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ticks;
	struct timespec now;
	const char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (procfs__read(path, buf, sizeof(buf)) <= 0 || !(p = strrchr(buf, ')')))
		return 0;
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1 || clock_gettime(CLOCK_BOOTTIME, &now))
		return 0;
	return now.tv_sec + now.tv_nsec / 1e9 - (double)ticks / (double)sysconf(_SC_CLK_TCK);
}

void record_newcomers__learn(struct newcomer_watch *w, const struct discover_list *list)
{
	struct not_v8 *e;
	struct exe_id id;

	for (size_t i = 0; i < list->nr_misses; i++) {
		pid_t pid = list->misses[i].pid;
		bool young;

		if (list->misses[i].err != -ENOEXEC)
			continue;
		young = age_s(pid) < NOT_V8_AGE_S;
		/* sorted: misses come in the order the pids were given */
		if (young && !array_grow(&w->recheck, &w->recheck_cap, w->nrecheck + 1))
			w->recheck[w->nrecheck++] = pid;
		if (!exe_id(pid, &id))
			continue;
		e = find_not_v8(w, &id);
		if (!e) {
			if (w->nnot_v8 == NOT_V8_MAX)
				w->nnot_v8 = 0;
			if (array_grow(&w->not_v8, &w->not_v8_cap, w->nnot_v8 + 1))
				continue;
			e = &w->not_v8[w->nnot_v8++];
			e->id = id;
			e->strikes = 0;
		}
		e->strikes = young ? e->strikes + 1 : YOUNG_STRIKES;
	}
	/* a binary one of whose processes is a runtime after all: strikes forgotten */
	for (size_t i = 0; i < list->nr; i++)
		if (exe_id(list->procs[i].pid, &id) && (e = find_not_v8(w, &id)))
			e->strikes = 0;
}

void record_newcomers__release(struct newcomer_watch *w)
{
	free(w->seen);
	free(w->recheck);
	free(w->not_v8);
	memset(w, 0, sizeof(*w));
}
