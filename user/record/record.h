/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * record: the state of one `isoprof record` capture and the stages that
 * fill it, which the command (cmd_record.c) calls in turn:
 *
 *   record_session.c   the targets, the BPF sampler armed, the window
 *                      (draining the ring, watching the targets), release
 *   record_profiles.c  isoprof's profiles: the isolates' code logs, samples
 *                      attributed to isolates, --script selection, the pprof
 *                      files written with their comments
 *   record_summary.c   the summary printed at the end: a --type cpu
 *                      capture's, or a --type heap capture's per isolate
 *   record_v8.c        V8's side: V8's profilers through the inspector, their
 *                      profiles, the mapping to isolates and the cross-check
 *   record.c           the helpers they share
 *
 * Calls go one way: cmd_record.c -> the stages -> record.c.  The stages do
 * not call one another, except the session, which starts and stops V8's
 * profilers with the window and frees V8's side with the rest.
 *
 * A stage prints its errors and warnings itself, unless its comment says
 * otherwise.  Exit statuses of `isoprof record`, which the daemon turns into
 * HTTP statuses: user/record_exit.h.
 */
#ifndef ISOPROF_RECORD_RECORD_H
#define ISOPROF_RECORD_RECORD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "lib/fileio.h"
#include "lib/safe_open.h"
#include "proto/heap_summary.h"
#include "symbolize/symbolizer.h"
#include "symbolize/v8layout.h"
#include "user/attribute/attribution.h"
#include "user/attribute/cpu_profile.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/attribute/services.h"
#include "user/attribute/source_maps.h"
#include "user/record/capture.h"
#include "user/capture/discover.h"
#include "user/capture/alloc_probes.h"
#include "user/capture/gc_probes.h"
#include "user/capture/sample_store.h"
#include "user/capture/sampler.h"
#include "user/record_exit.h"
#include "user/v8/v8capture.h"

/*
 * Where a capture is, for what a signal does (record_session.c): before
 * the window it stops the capture, in the window it ends the window, while
 * the profiles are written it is noted; a second signal aborts.
 */
enum record_stage {
	RECORD_STAGE_PREPARING,
	RECORD_STAGE_WINDOW,
	RECORD_STAGE_WRITING,
};

struct target_state {
	pid_t pid;
	const struct discover_proc *v8;	/* NULL: not a V8 runtime */
	struct isoprof_target bpf;
	char comm[64];
	/* the process itself, not its pid: a pidfd (+1; 0: none) and its start time */
	int pidfd;
	unsigned long long start_time;
	uint64_t alive_ns;		/* last time it was seen running (CLOCK_MONOTONIC) */
	bool exited;
	bool reused;			/* its pid names another process since */
	bool maps_suspect;		/* it exited while its maps were re-read */
	uint64_t exited_after_ns;	/* into the window, as last seen running */
	uint64_t valid_until_ns;	/* exited: its samples end here */
	uint64_t samples;
	uint64_t dropped;		/* taken after valid_until_ns: not kept */
	int layout;			/* 1 + index into capture.layouts; 0: JS not read from its heap */
	const char *layout_why;		/* static text: why not, when it is a V8 target */
	bool layout_off;		/* the guard rail turned it off (record_session.c) */
	uint64_t js_frames, js_bad;	/* JS frames sampled; not validated or not read */
	bool gc_probed;			/* its GC pauses are measured (gc_probes.h) */
	const char *gc_why;		/* static text: why not, when it is a V8 target */
	int alloc_sites;		/* --type heap: ALLOC_SITES_* probed (alloc_probes.h) */
	const char *alloc_why;		/* static text: why none, when it is a V8 target */
	uint64_t alloc_samples;		/* allocation samples kept */
};

struct pprof_profile;
struct pprof_builder;
struct atomic_file;
struct v8_stall;
struct json_object;

/*
 * What record_v8__finish() made of one V8 target's profile, for the
 * summaries: record_v8.c fills it, record_summary.c reads it.
 */
struct v8_outcome {
	const struct isolate_group *group;	/* its isolate; NULL: none known */
	char *path;			/* the pprof written; NULL: none */
	char *raw_path;			/* V8's profile as returned; NULL: none */
	char *check_path;		/* the cross-check's JSON; NULL: none */
	struct json_object *crosscheck;	/* its key numbers (crosscheck__key_json()); NULL: none */
	char *skipped;			/* --type cpu: why no cross-check; NULL: there is one */
	bool has_heap;			/* --type heap: heap holds the written profile's totals */
	const char *own_path;		/* --type heap: isoprof's own heap profile the totals
					 * are of (c->group_heap_paths); NULL: V8's */
	struct heap_summary heap;
};

/* Continuous with no --pid: what the last look at /proc found (record_newcomers.c). */
struct exe_id {
	dev_t dev;
	ino_t ino;
};

struct newcomer_watch {
	pid_t *seen;			/* what /proc listed at the last look, sorted */
	size_t nseen;
	pid_t *recheck;			/* too young to judge: looked at again, sorted */
	size_t nrecheck, recheck_cap;
	struct not_v8 {
		struct exe_id id;
		unsigned int strikes;	/* its young processes found no V8 runtime */
	} *not_v8;			/* binaries whose processes are no V8 runtime */
	size_t nnot_v8, not_v8_cap;
};

struct capture {
	struct record_env *env;
	struct target_state targets[MAX_PIDS];
	int ntargets;
	struct sample_store *store;
	struct sampler *sampler;
	struct gc_probes *gc;		/* NULL: off (--no-gc-probes) or not loaded */
	struct isoprof_gc_counters gc_counters;	/* read at the end of the window */
	/* --type heap: allocation samples (alloc_probes.h), kept apart from the CPU's */
	struct alloc_probes *alloc;
	struct sample_store *alloc_store;
	struct isoprof_counters alloc_counters;	/* read at the end of the window */
	uint64_t native_interval;		/* the malloc sampler's mean interval, bytes */
	struct frame_table *alloc_ft;		/* the allocation samples' frames */
	struct pprof_profile **group_heap_profiles; /* per group: isoprof's heap profile */
	char **group_heap_paths;		/* per group: its file, or NULL */
	bool heap_written;			/* isoprof wrote a heap profile of its own */
	struct symbolizer *sym;
	struct read_budget read_budget;	/* bytes read from target files (safe_open.h) */
	struct discover_list *discovered;
	struct isolate_registry *isolates;
	struct service_map *services;	/* workerd's configs: service names, namespaces */
	size_t services_by_module;	/* isolates named by module names, not content */
	/* --namespace resolved: the service hosting it, and in which processes */
	const struct workerd_service *ns_service;
	const struct workerd_do_namespace *ns;
	pid_t ns_pids[MAX_PIDS];
	int ns_npids;
	struct frame_table *ft;
	struct source_maps *maps;	/* scripts' source maps (source_maps.h) */
	long mapped_frames;		/* JS frames named from them */
	/* V8 layouts of the targets' binaries (symbolize/v8layout.h), one per build-id */
	struct v8_layout layouts[ISOPROF_V8_LAYOUT_MAX];
	int nlayouts;
	struct attribution attr;
	bool *selected;			/* per attribution group: written? */
	uint64_t *gc_off_thread;	/* per group: gc samples off its own thread */
	struct cpu_profile_stats stats;	/* over every profile written */
	size_t nwritten;
	char first_written[PATH_MAX];
	int store_err;
	struct isoprof_sample *pending;	/* drained, not yet known to be the targets' */
	size_t npending, pending_cap;
	int out_dirfd;			/* +1: the output directory, opened once; 0: none */
	struct fileio_policy out_policy; /* whom isoprof may write for (caps.h) */
	struct fileio_owner out_owner;	/* whose the files written there are */
	const char *out_name;		/* -o FILE: its name in that directory */
	/* CLOCK_MONOTONIC: command start, sampling armed, symbol tables loaded */
	uint64_t launch_ns, armed_ns, symbols_ns;
	double code_logs_ms;		/* reading them after the window (post-processing) */
	bool code_logs_at_end;		/* read as the window ended, not again after */
	uint64_t window_start_ns, window_end_ns;
	struct timespec wall_start;
	int ncpus;
	int exit_status;		/* worst RECORD_EXIT_* so far */
	bool json_written;		/* --json: the summary is on stdout */

	/* continuous (env->window_ms): windows one after another */
	bool rolling;
	unsigned long windows;			/* begun so far */
	uint64_t cut_ns;			/* samples from here on are the next window's */
	struct timespec wall_end;
	struct isoprof_counters cnt_base;	/* the sampler's counters as the window began */
	struct discover_list **later_lists;	/* later scans' lists that targets point into */
	size_t nlater_lists;
	struct newcomer_watch newcomers;	/* record_newcomers.c */
	struct capture_window_stats wstats;	/* of the last window */

	/* V8's side (record_v8.c) */
	struct v8_capture *v8;
	size_t v8_missing_inspector;		/* V8 runtimes in scope without one */
	struct v8_stall *v8_stalls;		/* per V8 target, once its stop was asked for */
	struct v8_outcome *v8_outcomes;		/* per V8 target, once record_v8__finish() ran */
	struct pprof_profile **group_profiles;	/* per group: isoprof's, when kept */
	char **group_paths;			/* per group: the file written, or NULL */
	bool keep_group_profiles;
};

/* record.c: what the stages share. */

/* A malloc()ed string, or NULL. */
char *record__asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The path of a file in the output directory for group g:
 * DIR/script-version-isolate-SUFFIX, script and version made safe with
 * fileio__name_part().  0 or -ENAMETOOLONG.
 */
int record__group_path(const struct capture *c, const struct isolate_group *g, const char *suffix,
		       char *path, size_t len);
/*
 * Write data to path, an output of the capture: its last component, in the
 * output directory (c->out_dirfd), atomically (lib/fileio.h).  0 or -errno.
 */
int record__write_file(const struct capture *c, const char *path, const void *data, size_t len);
/* The same for a profile, gzipped unless --raw. */
int record__write_profile(const struct capture *c, const char *path, struct pprof_builder *b);
/* Open an output file to stream into (af->f), in the output directory. */
int record__open_file(const struct capture *c, const char *path, struct atomic_file *af);
/*
 * Text a target controls (comm, script names, inspector target ids), made
 * safe to print (lib/textescape.h), cut at 512 bytes; the result is one
 * of 8 buffers used in turn: up to 8 per message.
 */
const char *record__esc(const char *s);
/* Record why the capture failed: the first specific reason wins over a generic one. */
void record__set_exit(struct capture *c, enum record_exit status);
/*
 * An isolate in a deopt loop: from 1% of its samples in V8's deoptimizer
 * (the summary and the profiles' comments name it).
 */
bool record__is_deopt_loop(const struct isolate_group *g);
/*
 * Group g's GC pauses as the profile comment spells them (COMMENT_GC_*
 * in proto/profile_vocab.h), into buf: V8's observable pauses, "gc: N
 * pauses, X ms total, Y ms max", or why they were not measured.  false
 * when g is no isolate.
 */
bool record__gc_pauses(const struct capture *c, const struct isolate_group *g, char *buf,
		       size_t len);
/*
 * Group g's whole Heap::CollectGarbage calls, into buf: "gc stop: X ms
 * total, Y ms max".  false when g is no isolate or they were not measured.
 */
bool record__gc_stop(const struct capture *c, const struct isolate_group *g, char *buf,
		     size_t len);
/*
 * Group g's samples classed gc, and how many of them ran off the isolate's
 * own thread: on a platform thread charged by a job tag, or on another
 * thread than the one its pauses ran on (V8 13+ enters the isolate on the
 * threads of some GC jobs itself).
 */
void record__gc_share(const struct capture *c, const struct isolate_group *g, uint64_t *gc,
		      uint64_t *off_thread);
/* Count what record__gc_share() says, for every group in one pass.  0 or -ENOMEM. */
int record__gc_tally(struct capture *c);

/* record_session.c: targets and the window. */

/* Where the capture is, for what a signal does (enum record_stage). */
void record_session__stage(enum record_stage stage);
/*
 * The capture's state (sample store, symbolizer, isolate registry with
 * --version-labels) and its targets: the --pid processes, or every V8
 * runtime on the host.  0 or -errno; the exit status says when no target
 * was found.
 */
int record_session__open(struct capture *c);
/* Does a V8 target live in a network namespace other than isoprof's? */
bool record_session__foreign_netns(const struct capture *c);
/*
 * Load and attach the sampler, start V8's profilers, drop capabilities;
 * from here on the window's clock runs.  0 or -errno.
 */
int record_session__arm(struct capture *c);
/*
 * Sample until the duration ends, every target exits or SIGINT/SIGTERM;
 * asks V8's profilers to stop, ends the window and stops the sampler, then
 * waits (bounded) for V8's profiles: however late V8 answers, the window is
 * isoprof's own.  0 or -errno of reading the ring buffer (not printed).
 */
int record_session__run_window(struct capture *c);
bool record_session__all_exited(const struct capture *c);
/*
 * record_newcomers.c: the processes worth looking at for a V8 runtime, into
 * *out (malloc()ed, ascending): with all, every process; otherwise those
 * /proc did not list the last time, and those too young to judge then;
 * never those in skip (sorted: the targets) or those running a binary
 * known to be no V8 runtime.  0 or -errno.
 */
int record_newcomers__candidates(struct newcomer_watch *w, const pid_t *skip, size_t nskip,
				 bool all, pid_t **out, size_t *nr);
/* What a scan of the candidates found not to be V8 runtimes, remembered. */
void record_newcomers__learn(struct newcomer_watch *w, const struct discover_list *list);
void record_newcomers__release(struct newcomer_watch *w);

/* Continuous: the per-window state reset, targets let go and found.  0 or -errno. */
int record_session__next_window(struct capture *c);
/* Undo everything every stage did; c may be at any stage. */
void record_session__release(struct capture *c);

/* record_profiles.c: isoprof's profiles. */

/*
 * Open the output directory once (--out-dir, or -o FILE's directory),
 * refusing one another user could use against isoprof (exit status
 * RECORD_EXIT_USAGE), learn whose the files written there are
 * (c->out_policy, lib/fileio.h), give up the output capabilities that
 * owner does not need, and check a file can be created in it: fail
 * before the window, not after it.
 */
int record_profiles__open_output(struct capture *c);
/*
 * Before the window, the targets' V8 code logs that the checks before it
 * need, in the isolate registry: all of them with --script or --namespace,
 * else none; and the workerd targets' configs (service names, namespaces).
 */
int record_profiles__load_code_logs(struct capture *c);
/*
 * Before the window: --namespace resolved to the service that hosts it
 * (-ENOENT, exit status NOT_FOUND, when no config declares it); -ENOENT
 * when --script names nothing the code logs know of (without code logs,
 * the check waits for the samples); -EINVAL (exit status USAGE) when it
 * names isolates of several workers (the candidates are listed).
 */
int record_profiles__precheck_script(struct capture *c);
/*
 * After the window: the code logs of the isolates it sampled (those known
 * before it and those created during it), and only those.  Its time goes
 * into post-processing.
 */
void record_profiles__find_new_code_logs(struct capture *c);
/*
 * Attribute the samples to isolates, keep the groups --script/--version
 * select, write the profile(s) (and keep the groups' profiles for the V8
 * side).  *process_ms: how long it took.  0 or -errno; an -ENOMEM is not
 * always printed: the caller reports it.
 */
int record_profiles__write(struct capture *c, const struct isoprof_counters *cnt,
			   double *process_ms);

/*
 * record_summary.c: the end of a capture.  Text goes to stderr; with
 * --json, stdout carries one JSON document and nothing else, printed once
 * V8's side has finished (record_v8__finish()), since it carries V8's
 * outcomes.
 */

void record_summary__print(const struct capture *c, const struct isoprof_counters *cnt,
			   double process_ms);
/*
 * --json: the summary as one JSON object on stdout (docs/attribution.md,
 * "GC" has the gc member), with V8's side when --v8.  0 or -ENOMEM /
 * -errno of writing.
 */
int record_summary__print_json(const struct capture *c, const struct isoprof_counters *cnt);
/*
 * --type heap: per isolate, the heap profile written, largest first: what
 * V8 counted as allocated, the allocations it sampled and the function that
 * allocated most itself; then the totals.  On stderr.
 */
void record_summary__print_heap(const struct capture *c);
/* --type heap --json: the same as one JSON object on stdout.  0, -ENOMEM or -EIO. */
int record_summary__print_heap_json(const struct capture *c);
/* --bpf-stats: the BPF program's run time. */
void record_summary__print_bpf_stats(const struct capture *c, const struct isoprof_counters *cnt);

/* V8's side, in the order cmd_record calls them. */
int record_v8__prepare(struct capture *c);
void record_v8__start(struct capture *c);
/*
 * At the window's end: ask every V8 target for its profile, and look at
 * each one's runtime thread.  Then, once isoprof's sampling has stopped,
 * collect the replies within v8_capture__stop_timeout_ms() of the window;
 * a target that did not answer is late, with what its thread shows of why.
 */
void record_v8__request_stop(struct capture *c);
void record_v8__collect(struct capture *c);
/*
 * --json: per V8 target, how its profiler answered ("answered", "late",
 * "failed"), the error, why it was late, its isolate, the files written
 * and, with --type cpu, its cross-check's key numbers or why it was
 * skipped.  NULL on ENOMEM.
 */
struct json_object *record_v8__json(const struct capture *c);
/*
 * V8's profiles converted, mapped to isolates, written, cross-checked
 * (--type cpu) or summed up (--type heap), into c->v8_outcomes.  The
 * cross-check's text goes to stdout, or with --json to stderr.
 */
int record_v8__finish(struct capture *c);
void record_v8__free(struct capture *c);

#endif
