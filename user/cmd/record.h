/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * record: the state of one `isoprof record` capture, shared by the command
 * (cmd_record.c: targets, the BPF window, isoprof's own profiles) and its
 * V8 side (record_v8.c: V8's profilers through the inspector, their
 * profiles, the mapping to isolates and the cross-check), and the helpers
 * both use (record.c).  Calls go one way: cmd_record.c -> record_v8.c ->
 * record.c.
 *
 * Exit statuses of `isoprof record`, which the daemon turns into HTTP
 * statuses: user/record_exit.h.
 */
#ifndef ISOPROF_CMD_RECORD_H
#define ISOPROF_CMD_RECORD_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "user/attribute/attribution.h"
#include "user/attribute/cpu_profile.h"
#include "user/capture/discover.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/capture/sample_store.h"
#include "user/capture/sampler.h"
#include "symbolize/symbolizer.h"
#include "user/cmd/options.h"
#include "user/v8/v8capture.h"
#include "user/record_exit.h"

enum record_type {
	RECORD_CPU,
	RECORD_HEAP,
};

struct target_state {
	pid_t pid;
	const struct discover_proc *v8;	/* NULL: not a V8 runtime */
	struct isoprof_target bpf;
	char comm[64];
	bool exited;
	uint64_t exited_after_ns;
	uint64_t samples;
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
	enum record_type type;
	bool v8;			/* --v8: V8's CPU profiler alongside */
	const char *inspector;		/* --inspector HOST:PORT */
};

struct pprof_profile;

struct capture {
	struct record_env *env;
	struct target_state targets[MAX_PIDS];
	int ntargets;
	struct sample_store *store;
	struct sampler *sampler;
	struct symbolizer *sym;
	struct discover_list *discovered;
	struct isolate_registry *isolates;
	struct frame_table *ft;
	struct attribution attr;
	bool *selected;			/* per attribution group: written? */
	struct cpu_profile_stats stats;	/* over every profile written */
	size_t nwritten;
	char first_written[PATH_MAX];
	int store_err;
	/* CLOCK_MONOTONIC: command start, sampling armed, symbol tables loaded */
	uint64_t launch_ns, armed_ns, symbols_ns;
	uint64_t window_start_ns, window_end_ns;
	struct timespec wall_start;
	int ncpus;
	int exit_status;		/* worst RECORD_EXIT_* so far */

	/* V8's side (record_v8.c) */
	struct v8_capture *v8;
	size_t v8_missing_inspector;		/* V8 runtimes in scope without one */
	struct pprof_profile **group_profiles;	/* per group: isoprof's, when kept */
	char **group_paths;			/* per group: the file written, or NULL */
	bool keep_group_profiles;
};

/* record.c: what both sides use. */

/* A malloc()ed string, or NULL. */
char *record__asprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The path of a file in the output directory for group g:
 * DIR/script-version-isolate-SUFFIX, script and version made safe with
 * fileio__name_part().  0 or -ENAMETOOLONG.
 */
int record__group_path(const struct capture *c, const struct isolate_group *g, const char *suffix,
		       char *path, size_t len);
/* Record why the capture failed: the first specific reason wins over a generic one. */
void record__set_exit(struct capture *c, enum record_exit status);

/* V8's side, in the order cmd_record calls them. */
int record_v8__prepare(struct capture *c);
void record_v8__start(struct capture *c);
void record_v8__stop(struct capture *c);
int record_v8__finish(struct capture *c);
void record_v8__free(struct capture *c);

#endif
