/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * discover: the V8 runtime processes on this host, recognized by what their
 * binaries contain, not by their names (`isoprof targets`: docs/attribution.md).
 *
 * A process is a V8 runtime when its executable, or failing that one of the
 * objects it maps (libnode.so), defines v8::internal::g_current_isolate_
 * (`_ZN2v88internal18g_current_isolate_E`, a TLS variable in V8 >= 13) or,
 * for older V8, a v8::internal::Isolate member (`_ZN2v88internal7Isolate`).
 * That object is then
 *   workerd  when it defines `_ZN7workerd...` (workerd:: code);
 *   node     when it defines node_module_register or `_ZN4node...`;
 *   v8       otherwise (another embedder).
 * Versions are read from the binary, never by running it: node's from the
 * inspector's "node.js/vX.Y.Z" string in .rodata (the /json/version
 * reply), else from its release URL; workerd's from the RELEASE_VERSION
 * blob it embeds (the date `workerd --version` prints).
 *
 * Each distinct binary, by (device, inode), is opened once per scan, through
 * /proc/PID/exe or /proc/PID/map_files, so processes in other mount
 * namespaces work.  Only /proc/PID/{stat,status,cmdline,maps,fd,net} are
 * read: never environ, which may hold secrets.
 *
 * Paths: exe and the TLS object are as the process sees them.  Perf map
 * and code log paths are openable from here: as the process names them when
 * it shares our mount namespace, else under /proc/PID/root.
 *
 * The inspector's address is found by inspector_addr.h; code logs are
 * named as v8log__parse_filename() reads them.
 *
 * Errors: actions return 0 or a negative errno; nothing prints.  A process
 * that cannot be inspected (permission, or it exited mid-scan) is skipped
 * and counted, never a reason to fail the scan.
 *
 * Ownership: discover__scan() hands out one struct discover_list; every
 * string and array in it belongs to it until discover__free().
 */
#ifndef ISOPROF_CAPTURE_DISCOVER_H
#define ISOPROF_CAPTURE_DISCOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/procfs.h"
#include "lib/safe_open.h"

#define DISCOVER_TLS_SYMBOL "_ZN2v88internal18g_current_isolate_E"

enum discover_runtime {
	DISCOVER_V8,		/* some other V8 embedder */
	DISCOVER_NODE,
	DISCOVER_WORKERD,
};

/* "v8", "node", "workerd" */
const char *discover__runtime_name(enum discover_runtime rt);

struct discover_proc;

/*
 * How to open the files p writes itself (perf map, code logs) through
 * lib/safe_open.h: owned by p's uid, or by nobody when that is unknown
 * (so none is read: whose file it is cannot be told).
 */
void discover_proc__file_opts(const struct discover_proc *p, struct safe_open_opts *o);

/* Where the current isolate lives, for reading it from BPF (docs/design/js-frames.md). */
struct discover_tls {
	bool found;		/* the object defines DISCOVER_TLS_SYMBOL */
	bool in_executable;	/* ... and it is the main executable */
	bool supported;		/* tp_offset is valid (found, in the executable, PT_TLS) */
	char *object;		/* path of the object holding V8, as the process sees it */
	uint64_t load_bias;	/* runtime address minus ELF address of that object */
	bool load_bias_known;
	uint64_t st_value;	/* the symbol's offset in the TLS segment */
	uint64_t tls_memsz, tls_align;
	int64_t tp_offset;	/* &g_current_isolate_ - thread pointer (x86-64, variant II) */
	const char *why_unsupported;	/* static text when !supported */
};

/*
 * What a scan finds out besides what each process is (runtime, version,
 * build-id, uid, where its current isolate lives).  A capture asks for
 * what arming needs and the rest once armed (discover__complete());
 * targets asks for everything.
 */
enum discover_part {
	DISCOVER_LOG_DIRS = 1u << 0,	/* log_dirs, from its open files */
	DISCOVER_FILES = 1u << 1,	/* perf_map*, logs, and log_dirs */
	DISCOVER_SOCKETS = 1u << 2,	/* listening, inspector, inspector_flag */
	DISCOVER_LOAD_BIAS = 1u << 3,	/* tls.load_bias*: reads /proc/PID/maps */
};

#define DISCOVER_ALL (DISCOVER_LOG_DIRS | DISCOVER_FILES | DISCOVER_SOCKETS | DISCOVER_LOAD_BIAS)

struct discover_code_log {
	char *path;		/* openable from here */
	uint64_t isolate;	/* from the file name (v8log__parse_filename()) */
	uint64_t size;		/* bytes, when stat succeeded */
	bool open;		/* held open by the process (V8 is writing it) */
};

struct discover_proc {
	pid_t pid;
	pid_t nspid;		/* the pid in its own namespace (last of NSpid:) */
	uid_t uid;		/* the uid its files are created with (safe_open.h) */
	bool uid_known;
	char comm[PROCFS_COMM_LEN + 1];
	char *exe;		/* /proc/PID/exe's target */
	enum discover_runtime runtime;
	char *version;		/* "v20.20.2", "2026-11-17", or "unknown" */
	char *build_id;		/* of the object holding V8; "" when it has none */
	struct discover_tls tls;
	unsigned int parts;	/* enum discover_part: what below was looked for */

	char *perf_map;		/* where V8 writes (or would write) its perf map */
	bool perf_map_exists;
	bool perf_map_open;	/* the process holds it open */

	struct discover_code_log *logs;	/* sorted by path */
	size_t nr_logs;
	char **log_dirs;	/* where its open code logs are (openable from here):
				 * where V8 writes those of new isolates */
	size_t nr_log_dirs;

	char **listening;	/* HOST:PORT of its listening TCP sockets */
	size_t nr_listening;
	char *inspector;	/* HOST:PORT of its inspector, or NULL */
	char *inspector_flag;	/* HOST:PORT its command line asks for, or NULL */
};

/* A pid that was asked for and is not in the list. */
struct discover_miss {
	pid_t pid;
	int err;	/* -ESRCH gone, -EACCES/-EPERM denied, -ENOEXEC not a V8 runtime,
			 * -EINVAL kernel thread */
};

struct discover_list {
	struct discover_proc *procs;	/* sorted by pid */
	size_t nr;
	size_t scanned;			/* processes looked at */
	size_t skipped_denied;		/* not readable by us */
	size_t skipped_exited;		/* gone during the scan */
	size_t binaries;		/* distinct objects opened */
	struct discover_miss *misses;	/* only when pids were given */
	size_t nr_misses;
};

/*
 * Scan every process (pids NULL) or the nr_pids given, finding out parts
 * (enum discover_part) of each V8 runtime.  0 and *out set, or -ENOMEM,
 * or the errno of opening /proc.
 */
int discover__scan(const pid_t *pids, size_t nr_pids, unsigned int parts,
		   struct discover_list **out);

/*
 * Find out the parts of p its scan left out (DISCOVER_LOAD_BIAS aside:
 * only a scan has the binary at hand), from /proc/PID again: what is read
 * is p's only if the caller finds the process still running afterwards
 * (a pidfd), and drops it otherwise.  0, -ESRCH, -EINVAL, or -ENOMEM; on
 * error the parts asked for are left empty.
 */
int discover__complete(struct discover_proc *p, unsigned int parts);

/* Empty parts of p (the log parts go together): they were another process's. */
void discover_proc__drop(struct discover_proc *p, unsigned int parts);

void discover__free(struct discover_list *list);

/*
 * Pure helpers, exposed for the tests.
 */

/*
 * node's version in the bytes of its .rodata: "v20.20.2".  0, or -ENOENT.
 */
int discover__node_version(const char *buf, size_t len, char *out, size_t out_len);

/*
 * &var - thread pointer for a TLS variable of the main executable on
 * x86-64 (variant II, glibc's layout): st_value - round_up(memsz, align),
 * with glibc's correction for a segment whose vaddr is not aligned.
 */
int64_t discover__tp_offset(uint64_t st_value, uint64_t memsz, uint64_t align,
			    uint64_t vaddr);

#endif /* ISOPROF_CAPTURE_DISCOVER_H */
