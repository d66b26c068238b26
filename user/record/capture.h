/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * capture: the capture pipeline every command that samples shares (record,
 * continuous; serve runs record).  A capture is opened once over its
 * targets, armed once (the BPF side stays loaded), then runs windows: each
 * window's samples are attributed to isolates and written as profiles.
 *
 *   c = capture__new(&env);
 *   if (!capture__open(c) && !capture__arm(c))
 *           while (!capture__run_window(c) && !capture__write(c) && more)
 *                   capture__next_window(c);
 *   status = capture__close(c);
 *
 * Each call prints its own errors ("isoprof: pid 412: ...") and keeps the
 * exit status (user/record_exit.h) that capture__close() returns.
 */
#ifndef ISOPROF_RECORD_CAPTURE_H
#define ISOPROF_RECORD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How many processes a capture samples (--pid, or V8 runtimes found). */
#define MAX_PIDS 256

enum record_type {
	RECORD_CPU,
	RECORD_HEAP,
};

struct record_env {
	pid_t pids[MAX_PIDS];
	int npids;
	long duration_ms;
	long frequency_hz;
	const char *output;
	bool raw;
	bool quiet;
	bool bpf_stats;
	const char *out_dir;
	const char *script;
	const char *version;
	const char *version_labels;
	const char *namespace_id;	/* --namespace: a Durable Object namespace */
	const char *actor_id;		/* --actor: 64 hex, with --namespace */
	enum record_type type;
	bool v8;			/* --v8: V8's CPU profiler alongside */
	const char *inspector;		/* --inspector HOST:PORT */
	bool no_gc_probes;		/* --no-gc-probes */
	bool no_alloc_probes;		/* --no-alloc-probes (--type heap: V8's profile only) */
	bool json;			/* --json: the summary as JSON on stdout */
	const char *state_dir;		/* --state-dir: where calibrated V8 layouts are */
	bool no_calibrate;		/* --no-calibrate: never run a calibration */
	const char *source_maps;	/* --source-maps DIR */
	const char *command_line;	/* the whole command, for the profiles' comments */
	/*
	 * Continuous: windows of window_ms follow one another with no gap
	 * (duration_ms is unused), runtimes that start later are picked up
	 * at each window's end (no --pid), and each profile goes to sink
	 * instead of a file.  CPU only, no V8 profilers.
	 */
	long window_ms;
	struct capture_sink *sink;
};

struct capture;

/* One profile of a window: one isolate's, or what ran outside any isolate. */
struct capture_profile {
	const char *script;		/* worker / service / script name; "no-isolate" outside */
	const char *version;		/* version id or label, "unknown" if none */
	const char *isolate;		/* "0x..."; NULL outside isolates */
	pid_t pid;			/* its process; 0 outside isolates (several) */
	uint64_t from_ns, until_ns;	/* the window, CLOCK_REALTIME */
	uint64_t samples;
	const void *data;		/* the pprof, gzipped */
	size_t len;
};

struct capture_sink {
	/* 0, or -errno: the window is still written, the error counted */
	int (*profile)(void *ctx, const struct capture_profile *p);
	void *ctx;
};

/* What a window was, for continuous's log line and metrics. */
struct capture_window_stats {
	uint64_t from_ns, until_ns;	/* CLOCK_REALTIME */
	uint64_t samples, lost;		/* kept; lost in the ring buffer */
	size_t profiles, sink_errors;
	int targets, new_targets, exited_targets;
	double process_ms;		/* from the window's end to its profiles made */
};

/*
 * SIGINT and SIGTERM handlers, installed first thing: before the window a
 * signal stops the capture, in the window it ends the window (what was
 * sampled is written), while profiles are written it is noted; a second
 * signal aborts.
 */
void capture__catch_signals(void);
bool capture__stop_requested(void);

/* A capture over env (kept, not copied); NULL on ENOMEM. */
struct capture *capture__new(struct record_env *env);
/*
 * Before any BPF: a runtime binary seen for the first time calibrated,
 * privileges dropped to the capture's plan (user/capture/caps.h), the
 * output checked, the targets found and held, the code logs and checks
 * --script needs, V8's profilers prepared.  0 or -errno.
 */
int capture__open(struct capture *c);
/* Load and attach the sampler (and the GC probes); start V8's profilers.  0 or -errno. */
int capture__arm(struct capture *c);
/*
 * Sample until the duration ends, every target exits or a signal.
 * 0 or -errno.
 */
int capture__run_window(struct capture *c);
/* The window's profiles, the summary, V8's side.  0 or -errno. */
int capture__write(struct capture *c);
/*
 * Continuous, after capture__write(): the next window starts where the last
 * ended; the sampler stays attached.  Exited targets are let go; with no
 * --pid, runtimes that started since are added.  0 or -errno.
 */
int capture__next_window(struct capture *c);
void capture__window_stats(const struct capture *c, struct capture_window_stats *out);
/* Release everything; prints --json's outcome when no summary was printed.  The exit status. */
int capture__close(struct capture *c);

#endif /* ISOPROF_RECORD_CAPTURE_H */
