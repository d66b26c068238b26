// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * record's session: the targets, the BPF sampler armed on them, and the
 * window; see record.h.
 *
 * One thread does everything: the ring buffer (half a second to a second of
 * samples, see sampler__ringbuf_bytes()) absorbs the ticks taken while it
 * loads symbol tables or re-reads /proc/PID/maps, so sampling never waits
 * for that work.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/monotime.h"
#include "lib/procfs.h"
#include "lib/procmem.h"
#include "lib/textescape.h"
#include "symbolize/v8deferred.h"
#include "user/capture/caps.h"
#include "user/capture/js_ranges.h"
#include "user/record/record.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

#define PROGRESS_EVERY_NS 200000000ull
#define REFRESH_EVERY_NS 1000000000ull
/*
 * Continuous: every few seconds, and at each window's end.  Reading the
 * maps of a runtime of a thousand isolates (11,000 lines) costs 5 ms: once
 * a second, that alone was half of isoprof's 1% CPU budget.  The maps read
 * are remembered (symbolize/symbolizer.h), so a library is missed only if
 * it is mapped and unmapped between two reads.
 */
#define ROLLING_REFRESH_EVERY_NS 5000000000ull
/* continuous with no --pid: how often /proc is looked at for new runtimes */
#define PICKUP_EVERY_NS 1000000000ull

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t stage;	/* enum record_stage */
/* When the first signal came: a continuous window ends there, not later. */
static struct timespec stop_mono, stop_wall;

/* Async-signal-safe: write(2) of fixed text, _exit(). */
static void say(const char *msg)
{
	ssize_t unused = write(STDERR_FILENO, msg, strlen(msg));

	(void)unused;
}

static void on_signal(int sig)
{
	int saved = errno;

	if (stop_requested) {
		say("\nisoprof: second signal: aborting; what was collected is not written\n");
		_exit(128 + sig);
	}
	/* clock_gettime() is async-signal-safe */
	clock_gettime(CLOCK_MONOTONIC, &stop_mono);
	clock_gettime(CLOCK_REALTIME, &stop_wall);
	stop_requested = 1;
	/* in the window the signal simply ends it, as asked: no message */
	if (stage == RECORD_STAGE_PREPARING)
		say("\nisoprof: signal: stopping before sampling began; nothing was collected\n");
	else if (stage == RECORD_STAGE_WRITING)
		say("\nisoprof: signal: writing what was collected first "
		    "(a second signal aborts without writing it)\n");
	errno = saved;
}

void capture__catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

void record_session__stage(enum record_stage s)
{
	stage = s;
}

bool capture__stop_requested(void)
{
	return stop_requested;
}

/*
 * The start time of pid (clock ticks since boot, field 22 of
 * /proc/PID/stat), or 0 when it cannot be read.  With the pid, it names one
 * process: a pid reused later gets a later start time.
 */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long t;
	const char *p;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = procfs__read(path, buf, sizeof(buf));
	p = n > 0 ? strrchr(buf, ')') : NULL;
	if (!p)
		return 0;
	/* ") S ppid pgrp ...": the state is field 3, the start time field 22 */
	for (int field = 2; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &t) != 1)
		return 0;
	return t;
}

/*
 * Hold on to the process, not the pid: a pidfd (5.3+) names this process
 * until it is gone, whatever later process gets its pid; without pidfds,
 * the start time tells the two apart.  0 or -ESRCH.
 */
static int target_watch(struct target_state *t)
{
	int fd = (int)syscall(SYS_pidfd_open, t->pid, 0);

	t->pidfd = fd >= 0 ? fd + 1 : 0;
	if (fd < 0 && errno == ESRCH)
		return -ESRCH;
	t->start_time = start_time(t->pid);
	return 0;
}

static void target_unwatch(struct target_state *t)
{
	if (t->pidfd)
		close(t->pidfd - 1);
	t->pidfd = 0;
}

/* Is the very process t names still running (a zombie is not)? */
static bool target_running(const struct target_state *t)
{
	struct pollfd pfd = { .fd = t->pidfd - 1, .events = POLLIN };

	/* a pidfd polls readable once the process has exited */
	if (t->pidfd)
		return poll(&pfd, 1, 0) == 0 && procfs__alive(t->pid);
	return procfs__alive(t->pid) && start_time(t->pid) == t->start_time;
}

/*
 * The layout calibrated for the target's binary, when there is one: its
 * JS frames are then named from its heap (docs/v8-frames.md).  A layout
 * that does not load is a reason, not an error: the perf map still names
 * what it covers.
 */
static void find_layout(struct capture *c, struct target_state *t)
{
	const char *build_id = t->v8 ? t->v8->build_id : "";
	char why[256];
	int err, k;

	if (!build_id[0]) {
		t->layout_why = "its binary has no build-id";
		return;
	}
	for (k = 0; k < c->nlayouts; k++)
		if (!strcmp(c->layouts[k].build_id, build_id))
			break;
	if (k == c->nlayouts) {
		if (k == ISOPROF_V8_LAYOUT_MAX) {
			t->layout_why = "more V8 builds than the sampler holds layouts for";
			return;
		}
		err = v8layout__load(c->env->state_dir, build_id, &c->layouts[k], why, sizeof(why));
		if (err) {
			t->layout_why = err == -ENOENT ? "its binary is not calibrated (isoprof calibrate)"
					: err == -ESTALE ? "its layout is from an earlier isoprof (isoprof calibrate)"
							 : "its layout file does not load";
			if (err != -ENOENT && err != -ESTALE)
				fprintf(stderr, "isoprof: pid %d: V8 layout for build-id %s: %s\n", t->pid,
					build_id, why[0] ? why : strerror(-err));
			return;
		}
		c->nlayouts++;
	}
	if (symbolizer__set_v8_layout(c->sym, t->pid, &c->layouts[k])) {
		t->layout_why = "out of memory";
		return;
	}
	t->layout = k + 1;
	t->bpf.v8_layout = (__u32)(k + 1);
	/* no ranges (a layout without builtins, maps unreadable): the walk covers every frame */
	js_ranges__find(t->pid, t->v8->exe, c->layouts[k].builtins_offset,
			c->layouts[k].builtins_size, &t->bpf);
}

/* What the sampler needs of a layout (bpf/isoprof.h). */
static void bpf_layout(const struct v8_layout *l, struct isoprof_v8_layout *out)
{
	memset(out, 0, sizeof(*out));
	out->fn_sfi = l->fn_sfi;
	if (l->compressed)
		out->flags |= ISOPROF_V8_COMPRESSED;
	/* one read validates an SFI where the map word is a build constant */
	if (l->compressed && l->sfi_map)
		out->sfi_map = l->sfi_map;
	else
		out->flags |= ISOPROF_V8_SFI_BY_TYPE;
	out->map_instance_type = (__u16)l->map_instance_type;
	out->sfi_type = (__u16)l->sfi_type;
}

static int add_target(struct capture *c, pid_t pid, const struct discover_proc *v8)
{
	struct target_state *t = &c->targets[c->ntargets];
	char comm[TEXTESCAPE_SIZE(sizeof(t->comm))];
	int err;

	for (int j = 0; j < c->ntargets; j++)
		if (c->targets[j].pid == pid)
			return 0;
	if (c->ntargets == MAX_PIDS)
		return -E2BIG;
	/* --pid targets are watched from before discovery on (setup_targets()) */
	if (t->pid != pid || !(t->pidfd || t->start_time)) {
		target_unwatch(t);
		memset(t, 0, sizeof(*t));
		t->pid = pid;
		err = target_watch(t);
		if (err)
			return err;
	}
	err = symbolizer__track(c->sym, pid);
	if (err) {
		target_unwatch(t);
		fprintf(stderr, "isoprof: pid %d: cannot read its memory maps: %s\n", pid,
			strerror(-err));
		return err;
	}
	t->v8 = v8;
	if (v8 && v8->tls.supported) {
		t->bpf.isolate_tls_offset = v8->tls.tp_offset;
		t->bpf.flags |= ISOPROF_TARGET_READ_ISOLATE;
	}
	if (v8)
		find_layout(c, t);
	procfs__comm(pid, t->comm, sizeof(t->comm));
	/* what was read above is this process's only if it still runs now */
	if (!target_running(t)) {
		target_unwatch(t);
		fprintf(stderr, "isoprof: pid %d (%s): exited before sampling began\n", pid,
			textescape(t->comm, comm, sizeof(comm)));
		return -ESRCH;
	}
	t->alive_ns = monotime_ns();
	c->ntargets++;
	return 0;
}

static const struct discover_proc *find_v8(const struct discover_list *list, pid_t pid)
{
	for (size_t i = 0; i < list->nr; i++)
		if (list->procs[i].pid == pid)
			return &list->procs[i];
	return NULL;
}

/*
 * What arming needs to know of a V8 runtime is where its current isolate
 * is; the code logs are read after the window, where V8 writes them is
 * found once armed (find_log_dirs()).  Before the window: every log for
 * --script, the inspector for V8's profilers.
 */
static unsigned int discover_parts(const struct record_env *env)
{
	unsigned int parts = 0;

	if (env->script)
		parts |= DISCOVER_FILES;
	if (env->v8 || env->type == RECORD_HEAP)
		parts |= DISCOVER_SOCKETS;
	return parts;
}

/*
 * --pid names processes (V8 or not: a native process is profiled without
 * isolates); no --pid means every V8 runtime on the host.
 */
static int setup_targets(struct capture *c)
{
	int err;

	for (int i = 0; i < c->env->npids; i++) {
		if (!procfs__alive(c->env->pids[i])) {
			fprintf(stderr, "isoprof: pid %d: no such process\n", c->env->pids[i]);
			record__set_exit(c, RECORD_EXIT_NOT_FOUND);
			return -ESRCH;
		}
	}
	/* hold the processes named before reading anything about them */
	for (int i = 0, n = 0; i < c->env->npids; i++) {
		bool dup = false;

		for (int j = 0; j < n; j++)
			dup |= c->targets[j].pid == c->env->pids[i];
		if (dup)
			continue;
		c->targets[n].pid = c->env->pids[i];
		if (target_watch(&c->targets[n++]) == -ESRCH) {
			fprintf(stderr, "isoprof: pid %d: no such process\n", c->env->pids[i]);
			record__set_exit(c, RECORD_EXIT_NOT_FOUND);
			return -ESRCH;
		}
	}
	if (capture__stop_requested())
		return -EINTR;
	err = discover__scan(c->env->npids ? c->env->pids : NULL, c->env->npids,
			     discover_parts(c->env), &c->discovered);
	if (err) {
		fprintf(stderr, "isoprof: cannot scan for V8 runtimes: %s\n", strerror(-err));
		return err;
	}
	if (!c->env->npids) {
		for (size_t i = 0; i < c->discovered->nr; i++) {
			err = add_target(c, c->discovered->procs[i].pid, &c->discovered->procs[i]);
			if (err && err != -ESRCH && err != -ENOENT)
				return err;
		}
		if (c->ntargets)
			return 0;
		/* continuous runs from boot: the runtimes it is for may start later */
		if (c->rolling) {
			if (!c->env->quiet)
				fprintf(stderr, "isoprof: no V8 runtime on this host yet: each one that "
						"starts is sampled within a second\n");
			return 0;
		}
		fprintf(stderr, "isoprof: no V8 runtime found on this host (isoprof targets "
				"lists them); name a process with --pid\n");
		record__set_exit(c, RECORD_EXIT_NOT_FOUND);
		return -ESRCH;
	}
	for (int i = 0; i < c->env->npids; i++) {
		err = add_target(c, c->env->pids[i], find_v8(c->discovered, c->env->pids[i]));
		if (err == -ESRCH)
			record__set_exit(c, RECORD_EXIT_NOT_FOUND);
		if (err)
			return err;
	}
	return 0;
}

int record_session__open(struct capture *c)
{
	const char *labels = c->env->version_labels;
	int err;

	read_budget__init(&c->read_budget, SAFE_OPEN_CAPTURE_MAX);
	c->store = sample_store__new();
	/* tcmalloc's default, which workerd keeps (docs/heap.md): not read from the target */
	c->native_interval = ALLOC_NATIVE_DEFAULT_INTERVAL;
	if (c->env->type == RECORD_HEAP && !(c->alloc_store = sample_store__new())) {
		fprintf(stderr, "isoprof: out of memory\n");
		return -ENOMEM;
	}
	c->sym = symbolizer__new(&(struct symbolizer_opts){ .budget = &c->read_budget,
							   .lazy_jit = true });
	c->isolates = isolate_registry__new();
	c->services = service_map__new();
	if (!c->store || !c->sym || !c->isolates || !c->services) {
		fprintf(stderr, "isoprof: out of memory\n");
		return -ENOMEM;
	}
	isolate_registry__set_budget(c->isolates, &c->read_budget);
	service_map__set_budget(c->services, &c->read_budget);
	if (labels) {
		char why[256] = "";

		/* returns how many labels it loaded */
		err = isolate_registry__load_labels(c->isolates, labels, why, sizeof(why));
		if (err < 0) {
			fprintf(stderr, "isoprof: %s: %s\n", labels, why[0] ? why : strerror(-err));
			return err;
		}
	}
	return setup_targets(c);
}

/*
 * A sample waits in c->pending until its process is known to have been
 * running when it was taken (the next liveness check), so that a process
 * that takes an exited target's pid is never counted as the target.
 */
bool record_session__foreign_netns(const struct capture *c)
{
	struct stat self, st;
	char path[64];

	if (stat("/proc/self/ns/net", &self))
		return false;
	for (int i = 0; i < c->ntargets; i++) {
		if (!c->targets[i].v8)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/ns/net", c->targets[i].pid);
		if (!stat(path, &st) && (st.st_dev != self.st_dev || st.st_ino != self.st_ino))
			return true;
	}
	return false;
}

static int on_sample(void *ctx, const struct isoprof_sample *s)
{
	struct capture *c = ctx;

	if (c->store_err)
		return 0;
	if (array_grow(&c->pending, &c->pending_cap, c->npending + 1)) {
		c->store_err = -ENOMEM;
		return 0;
	}
	memcpy(&c->pending[c->npending++], s, sizeof(*s));
	return 0;
}

static struct target_state *target_of(struct capture *c, pid_t pid)
{
	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].pid == pid)
			return &c->targets[i];
	return NULL;
}

/*
 * The JS functions a sample's frames ran, named from the heap now rather
 * than after the window: an SFI freed meanwhile, or a process that exits
 * before the window ends, would take the name with it.  Each SFI is read
 * once (the symbolizer keeps what it read, and what it refused).
 *
 * The guard rail: a layout that does not fit the process (another build's,
 * a V8 that changed underneath) shows as JS frames whose SFI does not
 * validate in BPF or does not read here.  Past a few hundred JS frames,
 * when more than one in ten fails, naming is turned off for the process,
 * for the whole capture: no name rather than a wrong one.
 */
#define GUARD_MIN_FRAMES 200
#define GUARD_MAX_BAD_PERMILLE 100

static void read_functions(struct capture *c, struct target_state *t,
			   const struct isoprof_sample *s)
{
	size_t nuser = s->user_stack_bytes > 0 ? (size_t)s->user_stack_bytes / sizeof(__u64) : 0;
	struct sym_frame f;

	for (__u32 i = 0; i < s->user_walked && i < ISOPROF_MAX_JS_WALK; i++) {
		__u64 sfi = s->user_function[i];

		if (!sfi)
			continue;
		t->js_frames++;
		if (sfi == ISOPROF_JS_UNNAMED ||
		    symbolizer__resolve_v8_function(c->sym, (pid_t)s->pid, sfi, false, &f))
			t->js_bad++;
		/*
		 * What the frame's code inlined, read while the code lives: the
		 * pc as frames.c resolves it (a return address less one).
		 */
		if (i < nuser && sfi != ISOPROF_JS_UNNAMED &&
		    symbolizer__note_v8_code(c->sym, (pid_t)s->pid,
					     s->user_stack[i] - (i > 0 || s->kernel_stack_bytes > 0),
					     sfi) == -ENOMEM)
			c->store_err = -ENOMEM;
	}
	if (t->js_frames >= GUARD_MIN_FRAMES &&
	    t->js_bad * 1000 > t->js_frames * GUARD_MAX_BAD_PERMILLE) {
		symbolizer__set_v8_layout(c->sym, t->pid, NULL);
		t->layout = 0;
		t->layout_off = true;
		t->layout_why = "its layout did not fit: naming from the heap turned off";
	}
}

/*
 * A JS heap sample taken in Maglev code: the JS frame called V8's
 * allocation builtin from deferred code with no source position
 * (symbolize/v8deferred.h).  The frame gets the address the block goes
 * back to, right after the allocation in the main body, where the
 * positions say which inlined function allocated; as a return address
 * (+1), like the one it replaces.  Only when the callee is the allocation
 * builtin, and read now, while the code lives.  TurboFan logs its slow
 * paths' positions: its samples are left as they are.
 */
static void maglev_allocation_site(struct capture *c, struct isoprof_sample *s)
{
	size_t nuser = s->user_stack_bytes > 0 ? (size_t)s->user_stack_bytes / sizeof(__u64) : 0;
	uint8_t code[V8DEFERRED_READ];
	bool from_allocate = false;
	struct sym_frame f;
	uint64_t to;

	for (size_t i = 1; i < nuser && i < ISOPROF_MAX_JS_WALK; i++) {
		if (symbolizer__resolve_user(c->sym, (pid_t)s->pid, s->user_stack[i] - 1, &f))
			return;
		if (f.kind != SYM_FRAME_JIT) {
			/* the innermost builtin below the JS frame: the one it called */
			from_allocate = f.name && (!strncmp(f.name, "Builtins_Allocate", 17) ||
						   !strncmp(f.name, "Builtins_CEntry", 15));
			continue;
		}
		/* the innermost JS frame only: the one that called into the runtime */
		if (!from_allocate || !f.jit_tier || strcmp(f.jit_tier, "maglev") ||
		    procmem__read((pid_t)s->pid, s->user_stack[i], code, sizeof(code)))
			return;
		to = v8deferred__continuation(code, sizeof(code), s->user_stack[i]);
		if (to)
			s->user_stack[i] = to + 1;
		return;
	}
}

/* The pending samples of processes checked since they were taken, to the store. */
static void commit_pending(struct capture *c)
{
	/* code read in an earlier batch may have died since */
	for (int i = 0; i < c->ntargets; i++)
		if (c->targets[i].layout)
			symbolizer__v8_code_epoch(c->sym, c->targets[i].pid);
	size_t kept = 0;

	for (size_t i = 0; i < c->npending; i++) {
		const struct isoprof_sample *s = &c->pending[i];
		struct target_state *t = target_of(c, (pid_t)s->pid);
		int err;

		if (!t)
			continue;
		/* continuous: the next window's, from the cut on */
		if (c->cut_ns && s->time_ns >= c->cut_ns) {
			if (kept != i)
				memcpy(&c->pending[kept], s, sizeof(*s));
			kept++;
			continue;
		}
		/* after the exit: the exiting process, or whoever has its pid now */
		if (t->exited && s->time_ns > t->valid_until_ns) {
			t->dropped++;
			continue;
		}
		if (c->store_err)
			continue;
		if (s->flags & ISOPROF_SAMPLE_ALLOC_JS)
			maglev_allocation_site(c, &c->pending[i]);
		if (s->flags & ISOPROF_SAMPLE_ALLOC) {
			/* a heap capture's allocations, never mixed with its CPU ticks */
			err = c->alloc_store ? sample_store__add(c->alloc_store, s) : 0;
			t->alloc_samples += c->alloc_store && !err;
		} else {
			err = sample_store__add(c->store, s);
			t->samples += !err;
		}
		if (err)
			c->store_err = err;
		if (t->layout)
			read_functions(c, t, s);
	}
	c->npending = kept;
}

/* The binary pid runs, as the kernel names it (safe_open.h), for probing: an fd or -errno. */
static int open_exe(pid_t pid)
{
	static const struct safe_open_opts exe_opts = {
		.proc_link = true,
		.max_bytes = SAFE_OPEN_ELF_MAX,
	};
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	return safe_open__file(path, &exe_opts, NULL);
}

/*
 * GC probes on each V8 target whose isolates BPF can read (pauses are
 * charged to the isolate current on the thread).  Not being able to probe
 * costs the GC figures only: the summary and the comments say why.
 */
static void arm_gc_probes(struct capture *c)
{
	struct gc_probes_opts gopts = {
		.targets_fd = sampler__targets_fd(c->sampler),
		.thread_tags_fd = sampler__thread_tags_fd(c->sampler),
		.every_process = c->rolling,
	};
	char err_buf[256] = "";
	int err, fd;

	if (c->env->no_gc_probes)
		return;
	gopts.err_buf = err_buf;
	gopts.err_len = sizeof(err_buf);
	c->gc = gc_probes__new(&gopts);
	if (!c->gc && !c->env->quiet)
		fprintf(stderr, "isoprof: warning: no GC pauses: %s\n",
			err_buf[0] ? err_buf : strerror(errno));
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (!t->v8)
			continue;
		if (!c->gc) {
			t->gc_why = "the GC probes could not be loaded";
			continue;
		}
		if (!t->v8->tls.supported) {
			t->gc_why = "isolates not readable in this process";
			continue;
		}
		/* the binary the process runs, as the kernel names it (safe_open.h) */
		fd = open_exe(t->pid);
		if (fd < 0) {
			t->gc_why = "its executable could not be opened";
			continue;
		}
		err = gc_probes__add(c->gc, t->pid, fd);
		close(fd);
		if (err == -ENOENT)
			t->gc_why = "no Heap::CollectGarbage symbol in its executable";
		else if (err == -E2BIG)
			t->gc_why = "too many functions to probe in its executable";
		else if (err)
			t->gc_why = "its executable's symbols could not be read";
	}
	if (!c->gc)
		return;
	err = gc_probes__attach(c->gc);
	if (err && err != -ENOENT && !c->env->quiet)
		fprintf(stderr, "isoprof: warning: no GC pauses: cannot attach uprobes: %s%s\n",
			strerror(-err), err == -EOPNOTSUPP ? " (uprobe_multi needs Linux 6.6)" : "");
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (!t->v8 || t->gc_why)
			continue;
		err = gc_probes__probed(c->gc, t->pid);
		t->gc_probed = !err;
		if (err)
			t->gc_why = err == -EOPNOTSUPP ? "uprobe_multi needs Linux 6.6"
						 : "the uprobes could not be attached";
	}
}

/*
 * Continuous: a runtime picked up after arming.  Its binary's probes, when
 * attached for every process that runs it, cover it from now on; a binary
 * first seen now is not probed (attaching needs the privileges given up).
 */
static void gc_probe_newcomer(struct capture *c, struct target_state *t)
{
	int fd, err;

	if (!t->v8)
		return;
	if (!c->gc || !t->v8->tls.supported) {
		t->gc_why = !c->gc ? "the GC probes could not be loaded"
				   : "isolates not readable in this process";
		return;
	}
	fd = open_exe(t->pid);
	if (fd < 0) {
		t->gc_why = "its executable could not be opened";
		return;
	}
	err = gc_probes__add(c->gc, t->pid, fd);
	close(fd);
	if (!err)
		err = gc_probes__probed(c->gc, t->pid);
	t->gc_probed = !err;
	if (err)
		t->gc_why = "its binary was first seen after the start: not probed";
}

/*
 * --type heap: allocation probes on each V8 target, attached before V8's
 * sampling heap profiler starts so that both see the same allocations.
 * Not being able to probe leaves V8's own heap profile: the summary and
 * the comments say why.
 */
static void arm_alloc_probes(struct capture *c)
{
	struct alloc_probes_opts aopts = {
		.samples_fd = sampler__samples_fd(c->sampler),
		.targets_fd = sampler__targets_fd(c->sampler),
		.thread_tags_fd = sampler__thread_tags_fd(c->sampler),
		.v8_layouts_fd = sampler__v8_layouts_fd(c->sampler),
		.thread_tags = !c->env->no_gc_probes,
		.ringbuf_bytes = sampler__ring_bytes(c->sampler),
	};
	char err_buf[256] = "";
	int err, fd;

	aopts.err_buf = err_buf;
	aopts.err_len = sizeof(err_buf);
	c->alloc = alloc_probes__new(&aopts);
	if (!c->alloc)
		fprintf(stderr, "isoprof: warning: no allocation probes, only V8's heap profile: %s\n",
			err_buf[0] ? err_buf : strerror(errno));
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (!t->v8)
			continue;
		if (!c->alloc) {
			t->alloc_why = "the allocation probes could not be loaded";
			continue;
		}
		fd = open_exe(t->pid);
		if (fd < 0) {
			t->alloc_why = "its executable could not be opened";
			continue;
		}
		err = alloc_probes__add(c->alloc, t->pid, fd);
		close(fd);
		if (err == -ENOENT)
			t->alloc_why = "no allocation sampler's symbol in its executable";
		else if (err)
			t->alloc_why = "its executable's symbols could not be read";
	}
	if (!c->alloc)
		return;
	err = alloc_probes__attach(c->alloc);
	if (err && err != -ENOENT)
		fprintf(stderr, "isoprof: warning: no allocation probes: cannot attach uprobes: %s%s\n",
			strerror(-err), err == -EOPNOTSUPP ? " (uprobe_multi needs Linux 6.6)" : "");
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (!t->v8 || t->alloc_why)
			continue;
		err = alloc_probes__sites(c->alloc, t->pid);
		if (err > 0)
			t->alloc_sites = err;
		else
			t->alloc_why = err == -EOPNOTSUPP ? "uprobe_multi needs Linux 6.6"
						  : "the uprobes could not be attached";
	}
}

int record_session__arm(struct capture *c)
{
	struct sampler_opts sopts = {
		.frequency_hz = c->env->frequency_hz,
		.run_time_stats = c->env->bpf_stats,
		.thread_tags = !c->env->no_gc_probes,
	};
	char err_buf[256] = "";
	int err;

	/*
	 * A heap capture's allocation probes write into the same ring, a few
	 * thousand records a second on top of the ticks (15,000 in 3 s on the
	 * heap fixture): four times the ring the ticks alone need, or an ASan
	 * build on two busy CPUs lost up to 4% of them.
	 */
	if (c->env->type == RECORD_HEAP)
		sopts.ringbuf_scale = 4;
	err = caps__enter(CAPS_ARMING);
	if (err) {
		fprintf(stderr, "isoprof: cannot change capabilities: %s\n", strerror(-err));
		return err;
	}
	sopts.err_buf = err_buf;
	sopts.err_len = sizeof(err_buf);
	c->sampler = sampler__new(&sopts, on_sample, c);
	if (!c->sampler) {
		err = errno ? -errno : -EINVAL;
		fprintf(stderr, "isoprof: %s\n", err_buf[0] ? err_buf : strerror(-err));
		record__set_exit(c, RECORD_EXIT_NO_BPF);
		return err;
	}
	for (int k = 0; k < c->nlayouts; k++) {
		struct isoprof_v8_layout bl;

		bpf_layout(&c->layouts[k], &bl);
		err = sampler__set_v8_layout(c->sampler, (unsigned int)k, &bl);
		if (err) {
			fprintf(stderr, "isoprof: cannot load V8 layout %s: %s\n",
				c->layouts[k].build_id, strerror(-err));
			return err;
		}
	}
	for (int i = 0; i < c->ntargets; i++) {
		err = sampler__add_target(c->sampler, c->targets[i].pid, &c->targets[i].bpf);
		if (err) {
			fprintf(stderr, "isoprof: pid %d: cannot add target: %s\n",
				c->targets[i].pid, strerror(-err));
			return err;
		}
	}
	c->ncpus = sampler__start(c->sampler);
	c->armed_ns = monotime_ns();
	if (c->ncpus < 0) {
		fprintf(stderr,
			"isoprof: cannot attach to the CPUs' cpu-clock events: %s ('isoprof check' "
			"says why)\n", strerror(-c->ncpus));
		record__set_exit(c, RECORD_EXIT_NO_BPF);
		return c->ncpus;
	}
	if (c->env->type == RECORD_HEAP && !c->env->no_alloc_probes)
		arm_alloc_probes(c);
	/* V8's window starts once isoprof's is armed, and ends before it */
	record_v8__start(c);
	/*
	 * After sampling is on: finding the probe sites walks the runtime's
	 * whole symbol table (~50 ms for workerd), and only pauses inside
	 * the window count anyway.
	 */
	arm_gc_probes(c);
	/* BPF is loaded and attached: what is left only reads /proc and writes the files. */
	err = caps__enter(CAPS_READING);
	if (err) {
		fprintf(stderr, "isoprof: cannot drop capabilities: %s\n", strerror(-err));
		return err;
	}
	return 0;
}

static void progress(const struct capture *c, uint64_t now, bool final)
{
	double elapsed = (now - c->window_start_ns) / 1e9;

	if (c->env->quiet || !isatty(STDERR_FILENO))
		return;
	fprintf(stderr, "\rrecording: %5.1f / %.1f s, %zu samples%s", elapsed,
		c->env->duration_ms / 1000.0, sample_store__count(c->store), final ? "\n" : "");
}

/*
 * Which targets still run (checked at check_ns, after the samples drained
 * so far were taken), then their pending samples to the store; refresh:
 * re-read the maps of those that run.
 */
static void check_targets(struct capture *c, uint64_t check_ns, bool refresh_maps)
{
	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];
		unsigned long long now_start;

		if (t->exited)
			continue;
		if (target_running(t)) {
			t->alive_ns = check_ns;
			continue;
		}
		t->exited = true;
		t->exited_after_ns = t->alive_ns > c->window_start_ns
					     ? t->alive_ns - c->window_start_ns
					     : 0;
		sampler__remove_target(c->sampler, t->pid);
		/*
		 * A pid runs another process once the exited one is reaped:
		 * then whatever came after the last check that saw the target
		 * running may be the newcomer's.  Otherwise what came before
		 * this check is the target's last breath.
		 */
		now_start = start_time(t->pid);
		t->reused = now_start && now_start != t->start_time;
		t->valid_until_ns = t->reused ? t->alive_ns : check_ns;
	}
	commit_pending(c);
	for (int i = 0; refresh_maps && i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (t->exited)
			continue;
		symbolizer__refresh(c->sym, t->pid);
		/* the maps just read are the target's only if it still runs */
		if (!target_running(t))
			t->maps_suspect = true;
	}
}

/*
 * Once armed: where each V8 target writes its code logs, from its open
 * files (a thousand of them on a host of a thousand isolates), unless
 * known from before the window.  The samples wait in the ring buffer.
 */
static void find_log_dirs_in(struct capture *c, struct discover_list *list)
{
	for (size_t i = 0; list && i < list->nr; i++) {
		struct discover_proc *p = &list->procs[i];
		struct target_state *t = target_of(c, p->pid);
		int err;

		if (!t || t->v8 != p || (p->parts & DISCOVER_LOG_DIRS))
			continue;
		err = discover__complete(p, DISCOVER_LOG_DIRS);
		if (err && err != -ESRCH)
			fprintf(stderr, "isoprof: pid %d: cannot find its code logs: %s\n", p->pid,
				strerror(-err));
		/* what was read above is this process's only if it still runs now */
		if (!target_running(t))
			discover_proc__drop(p, DISCOVER_LOG_DIRS);
	}
}

static void find_log_dirs(struct capture *c)
{
	find_log_dirs_in(c, c->discovered);
}

bool record_session__all_exited(const struct capture *c)
{
	for (int i = 0; i < c->ntargets; i++)
		if (!c->targets[i].exited)
			return false;
	return true;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

/* How long ago the process started (its start time is in clock ticks since boot). */
static double seconds_since_start(const struct target_state *t)
{
	struct timespec now;
	double started = (double)t->start_time / (double)sysconf(_SC_CLK_TCK);

	if (!t->start_time || clock_gettime(CLOCK_BOOTTIME, &now))
		return 0;
	return now.tv_sec + now.tv_nsec / 1e9 - started;
}

/*
 * Runtimes started since, added to the sampler's targets map: sampled
 * from now on, with the BPF program as it is.  all: every process not a
 * target yet is looked at (a window's end; it also finds a runtime whose
 * pid an earlier process had); otherwise only the pids /proc did not list
 * the last time (every PICKUP_EVERY_NS in a window: a directory read).
 */
static int add_newcomers(struct capture *c, bool all)
{
	struct discover_list *list = NULL, **grown;
	int first = c->ntargets, first_layout = c->nlayouts, err;
	pid_t skip[MAX_PIDS], *cand = NULL;
	size_t nskip = 0, ncand = 0;

	for (int i = 0; i < c->ntargets; i++)
		skip[nskip++] = c->targets[i].pid;
	qsort(skip, nskip, sizeof(skip[0]), cmp_pid);
	err = record_newcomers__candidates(&c->newcomers, skip, nskip, all, &cand, &ncand);
	if (err)
		return err;
	if (!ncand) {
		free(cand);
		return 0;
	}
	err = discover__scan(cand, ncand, discover_parts(c->env), &list);
	free(cand);
	if (err)
		return err;
	record_newcomers__learn(&c->newcomers, list);
	for (size_t i = 0; i < list->nr && c->ntargets < MAX_PIDS; i++) {
		err = add_target(c, list->procs[i].pid, &list->procs[i]);
		if (err == -ENOMEM)
			break;
	}
	for (int k = first_layout; k < c->nlayouts; k++) {
		struct isoprof_v8_layout bl;

		bpf_layout(&c->layouts[k], &bl);
		sampler__set_v8_layout(c->sampler, (unsigned int)k, &bl);
	}
	for (int i = first; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];
		char comm[TEXTESCAPE_SIZE(sizeof(t->comm))];

		if (sampler__add_target(c->sampler, t->pid, &t->bpf)) {
			t->exited = true;
			continue;
		}
		symbolizer__preload(c->sym, t->pid);
		gc_probe_newcomer(c, t);
		if (!c->env->quiet)
			fprintf(stderr, "isoprof: pid %d (%s): %s runtime started %.1f s ago: sampled "
				"from now on\n", t->pid, textescape(t->comm, comm, sizeof(comm)),
				discover__runtime_name(t->v8->runtime), seconds_since_start(t));
	}
	c->wstats.new_targets += c->ntargets - first;
	if (c->ntargets == first) {
		discover__free(list);
		return err == -ENOMEM ? err : 0;
	}
	grown = realloc(c->later_lists, (c->nlater_lists + 1) * sizeof(*grown));
	if (!grown) {
		discover__free(list);
		return -ENOMEM;
	}
	c->later_lists = grown;
	c->later_lists[c->nlater_lists++] = list;
	find_log_dirs_in(c, list);
	return 0;
}

/* The first window: what arming left for after sampling began. */
static void first_window(struct capture *c)
{
	c->window_start_ns = monotime_ns();
	clock_gettime(CLOCK_REALTIME, &c->wall_start);
	if (c->gc)
		gc_probes__window_start(c->gc, c->window_start_ns);
	/* Sampling is already armed; the ring buffer holds what arrives meanwhile. */
	for (int i = 0; i < c->ntargets; i++)
		symbolizer__preload(c->sym, c->targets[i].pid);
	c->symbols_ns = monotime_ns();
	find_log_dirs(c);
	/* continuous: what runs now was looked at by the scan before arming */
	if (c->rolling && !c->env->npids) {
		pid_t *unused;
		size_t n;

		if (!record_newcomers__candidates(&c->newcomers, NULL, 0, false, &unused, &n))
			free(unused);
	}
}

/*
 * Continuous: the window ends in user space, the sampler runs on.  What
 * the ring buffer holds is drained; a sample taken from cut_ns on waits in
 * c->pending for the next window.
 */
static int cut_window(struct capture *c)
{
	struct isoprof_counters now;
	int n;

	c->window_end_ns = c->cut_ns = monotime_ns();
	clock_gettime(CLOCK_REALTIME, &c->wall_end);
	/*
	 * A signal that came while the last window was being written ends
	 * this one where it came: what was sampled after it is left out.
	 */
	if (stop_requested) {
		uint64_t at = (uint64_t)stop_mono.tv_sec * 1000000000ull + (uint64_t)stop_mono.tv_nsec;

		if (at > c->window_start_ns && at < c->cut_ns) {
			c->window_end_ns = c->cut_ns = at;
			c->wall_end = stop_wall;
		}
	}
	n = sampler__poll(c->sampler, 0);
	if (n < 0)
		return n;
	check_targets(c, monotime_ns(), true);
	if (c->gc)
		gc_probes__counters(c->gc, &c->gc_counters);
	sampler__counters(c->sampler, &now);
	c->wstats.lost = now.lost_ringbuf_full - c->cnt_base.lost_ringbuf_full;
	return 0;
}

int record_session__run_window(struct capture *c)
{
	uint64_t deadline, now, last_progress, last_refresh, last_pickup;
	long length_ms = c->rolling ? c->env->window_ms : c->env->duration_ms;
	bool refresh;
	int n;

	if (!c->windows++)
		first_window(c);
	deadline = c->window_start_ns + (uint64_t)length_ms * 1000000ull;
	last_progress = last_refresh = last_pickup = monotime_ns();
	while (!stop_requested) {
		n = sampler__poll(c->sampler, 50);
		if (n < 0)
			return n;
		/* every round: a sample waits one round at most before it is kept */
		now = monotime_ns();
		refresh = now - last_refresh >= (c->rolling ? ROLLING_REFRESH_EVERY_NS :
								 REFRESH_EVERY_NS);
		check_targets(c, now, refresh);
		if (refresh)
			last_refresh = now;
		if (c->rolling && !c->env->npids && now - last_pickup >= PICKUP_EVERY_NS) {
			last_pickup = now;
			add_newcomers(c, false);
		}
		if (now >= deadline || (!c->rolling && record_session__all_exited(c)))
			break;
		if (!c->rolling && now - last_progress >= PROGRESS_EVERY_NS) {
			last_progress = now;
			progress(c, now, false);
		}
	}
	if (c->rolling)
		return cut_window(c);
	/*
	 * The window is isoprof's whatever V8 does: V8 is asked for its
	 * profile, sampling stops, and only then is V8 waited for.  A V8 that
	 * answers late (a busy or blocked main thread) neither stretches the
	 * window nor puts its own profile-building into isoprof's profile.
	 */
	record_v8__request_stop(c);
	c->window_end_ns = monotime_ns();
	/* before the sampler, which drains the ring they share */
	if (c->alloc) {
		alloc_probes__detach(c->alloc);
		alloc_probes__counters(c->alloc, &c->alloc_counters);
	}
	sampler__stop(c->sampler);
	/* after the sampler: a platform thread's tag outlives no sample */
	if (c->gc) {
		gc_probes__detach(c->gc);
		gc_probes__counters(c->gc, &c->gc_counters);
	}
	check_targets(c, monotime_ns(), true);
	progress(c, c->window_end_ns, true);
	/*
	 * The code logs now, as they are at the window's end: once it is over
	 * V8 reuses the addresses of code it collects, and a creation logged
	 * later at the same start would lend the sampled code its inlining
	 * (seen on workerd: fetch's OSR code, sampled, freed 0.6 s after the
	 * window; its start was logged again for leakyInstrumentation).
	 */
	if (sample_store__count(c->store)) {
		record_profiles__find_new_code_logs(c);
		c->code_logs_at_end = true;
	}
	record_v8__collect(c);
	return 0;
}

static bool list_in_use(const struct capture *c, const struct discover_list *list)
{
	for (int i = 0; i < c->ntargets; i++) {
		const struct discover_proc *p = c->targets[i].v8;

		if (p && p >= list->procs && p < list->procs + list->nr)
			return true;
	}
	return false;
}

/* Later scans' lists whose runtimes have all gone: a host that starts runtimes all day. */
static void free_unused_lists(struct capture *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nlater_lists; i++) {
		if (list_in_use(c, c->later_lists[i]))
			c->later_lists[k++] = c->later_lists[i];
		else
			discover__free(c->later_lists[i]);
	}
	c->nlater_lists = k;
}

/* The window's exited targets let go: their slots are for newcomers. */
static void drop_exited(struct capture *c)
{
	int k = 0;

	for (int i = 0; i < c->ntargets; i++) {
		struct target_state *t = &c->targets[i];

		if (t->exited) {
			c->wstats.exited_targets++;
			target_unwatch(t);
			symbolizer__untrack(c->sym, t->pid);
			/* its code logs: a host that starts runtimes all day */
			isolate_registry__forget(c->isolates, t->pid);
			memset(t, 0, sizeof(*t));
			continue;
		}
		t->samples = t->dropped = 0;
		if (k != i) {
			c->targets[k] = *t;
			memset(t, 0, sizeof(*t));
		}
		k++;
	}
	c->ntargets = k;
	free_unused_lists(c);
}

int record_session__next_window(struct capture *c)
{
	sampler__counters(c->sampler, &c->cnt_base);
	attribution__release(&c->attr);
	memset(&c->attr, 0, sizeof(c->attr));
	frame_table__free(c->ft);
	c->ft = NULL;
	free(c->selected);
	c->selected = NULL;
	free(c->gc_off_thread);
	c->gc_off_thread = NULL;
	free(c->group_profiles);
	c->group_profiles = NULL;
	free(c->group_paths);
	c->group_paths = NULL;
	memset(&c->stats, 0, sizeof(c->stats));
	c->nwritten = 0;
	c->first_written[0] = 0;
	c->mapped_frames = 0;
	sample_store__free(c->store);
	c->store = sample_store__new();
	if (!c->store)
		return -ENOMEM;
	c->store_err = 0;
	/* the bound on what a capture reads from target files holds per window */
	read_budget__init(&c->read_budget, SAFE_OPEN_CAPTURE_MAX);
	c->wstats.new_targets = c->wstats.exited_targets = 0;
	drop_exited(c);
	if (c->gc)
		gc_probes__next_window(c->gc, c->window_end_ns);
	c->window_start_ns = c->window_end_ns;
	c->wall_start = c->wall_end;
	/* the samples of the new window that waited since the cut count now */
	c->cut_ns = 0;
	if (!c->env->npids)
		return add_newcomers(c, true);
	return 0;
}

void record_session__release(struct capture *c)
{
	for (int i = 0; i < MAX_PIDS; i++)
		target_unwatch(&c->targets[i]);
	if (c->out_dirfd)
		close(c->out_dirfd - 1);
	record_v8__free(c);
	gc_probes__free(c->gc);
	alloc_probes__free(c->alloc);
	/* a running sampler (continuous) hands what its ring holds to on_sample() */
	sampler__free(c->sampler);
	free(c->pending);
	attribution__release(&c->attr);
	frame_table__free(c->ft);
	source_maps__free(c->maps);
	free(c->selected);
	free(c->gc_off_thread);
	isolate_registry__free(c->isolates);
	service_map__free(c->services);
	discover__free(c->discovered);
	for (size_t i = 0; i < c->nlater_lists; i++)
		discover__free(c->later_lists[i]);
	free(c->later_lists);
	record_newcomers__release(&c->newcomers);
	symbolizer__free(c->sym);
	sample_store__free(c->store);
	sample_store__free(c->alloc_store);
}
