/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * isolates: what a (pid, V8 isolate address) is to a platform engineer:
 * which worker or script it runs and which version (docs/attribution.md).
 *
 * Sources, best first:
 *   - the isolate's V8 code log (isolate-0x<addr>-<pid>-v8.log, see v8log.h):
 *     every script V8 compiled, with its source;
 *   - failing that, the script names seen in the isolate's JS frames
 *     (isolate_registry__note_script(), from the perf map): names only,
 *     version "unknown";
 *   - a service name set by the caller (workerd: from the config it runs,
 *     user/attribute/services.h): shown instead of the script name.
 *
 * User scripts are those isolate__is_user_script() accepts: the runtime's
 * own (workerd:*, node:*, node-internal:*, cloudflare:*, internal/..., ...)
 * and unnamed scripts (eval, new Function) are left out.
 *
 * Version id: lowercase hex SHA-256 over the distinct (name, source) pairs
 * of the isolate's user scripts in ascending order (name, then source
 * bytes), each contributing name, NUL, source as V8 logged it (decoded),
 * NUL; shown as its first 12 hex characters.  A pair logged twice (same
 * name, same source, two script ids) counts once; a name logged with two
 * different sources contributes both.  An isolate with no user script in
 * its log has version "unknown".
 *
 * Without a code log the caller may give the isolate the id its scripts'
 * own files hash to (isolate_registry__set_files_version(): workerd's
 * embedded modules, user/attribute/services.h; node's main script,
 * user/attribute/node_script.h), the same pairs hashed the same way, where
 * that is known to be what the log would give; else it stays "unknown".
 * A code log's id always wins over one from files.
 *
 * Labels (isolate_registry__load_labels()): the --version-labels file of
 * version_labels.h, lines "SCRIPT VERSION_ID LABEL".  SCRIPT is matched
 * against the service name and the user scripts as --script matches
 * (isolate__script_matches()); of several lines that fit an isolate, the
 * longest VERSION_ID wins, then the earliest line.
 *
 * Ownership and lifetime: the registry owns everything it hands out.  An
 * isolate_info, and every string and array it points to, stays valid until
 * isolate_registry__free(); the values in it are updated by the calls that
 * change the registry (add_log, refresh, note_script, set_service_name,
 * load_labels), so read them again after those.  Not thread-safe.
 *
 * Errors: actions return 0 or a count, or a negative errno; constructors
 * and lookups return NULL and set errno.  Nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_ISOLATES_H
#define ISOPROF_ATTRIBUTE_ISOLATES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"
#include "lib/sha256.h"
#include "symbolize/v8inline.h"
#include "symbolize/v8log_scan.h"

#define ISOLATE_VERSION_LEN 12		/* hex characters shown */
#define ISOLATE_VERSION_UNKNOWN "unknown"
#define ISOLATE_VERSION_LATEST "latest"	/* --version latest */
#define ISOLATE_MIN_PREFIX 4		/* hex characters for a --version prefix */

/* Where an isolate's version id came from. */
enum isolate_version_from {
	ISOLATE_VERSION_FROM_NONE,	/* "unknown" */
	ISOLATE_VERSION_FROM_CODE_LOG,	/* the sources V8 logged */
	ISOLATE_VERSION_FROM_FILES,	/* the scripts' files, without a code log */
};

/* "code_log", "files"; NULL for none (JSON null). */
const char *isolate_version_from__str(enum isolate_version_from from);

struct isolate_info {
	pid_t pid;
	uint64_t isolate;	/* the isolate's address, as g_current_isolate_ holds it */
	/*
	 * What to show: the service name when set, else the first user script
	 * the code log recorded (the entry point: workerd's main module,
	 * node's main script), else the first user script name in ascending
	 * order (names from JS frames), else "isolate-0x<hex>".
	 */
	const char *name;
	const char *service_name;	/* NULL until set */
	const char *const *scripts;	/* user script names, ascending (strcmp), unique */
	size_t nr_scripts;
	size_t nr_internal;	/* runtime scripts left out (code log: per script id;
				 * frames: distinct names) */
	char version[ISOLATE_VERSION_LEN + 1];	/* 12 hex, or "unknown" */
	char version_full[SHA256_HEX_LEN];	/* 64 hex, or "" */
	enum isolate_version_from version_from;
	/*
	 * Without a code log: why the scripts' files gave no version (NULL
	 * when they did, or nobody tried).
	 */
	const char *version_why;
	const char *label;	/* operator's version label, or NULL */
	bool has_code_log;
	const char *code_log_path;	/* NULL without a code log */
	const char *v8_version;	/* from the log's v8-version line; "" when unknown */
	/*
	 * Wall clock (CLOCK_REALTIME) ns: the code log's birth time (statx
	 * STATX_BTIME), else when the registry first read the log; 0 without
	 * a code log.
	 */
	uint64_t created_ns;
	bool created_is_btime;	/* created_ns is the file's birth time */
};

struct isolate_registry;

/* An empty registry; NULL and errno ENOMEM. */
struct isolate_registry *isolate_registry__new(void);
void isolate_registry__free(struct isolate_registry *reg);

/*
 * Read a per-isolate code log (pid and isolate from its file name), or,
 * for a log already added, what was appended since.  A different path for
 * an isolate that already has a log replaces that log (pid reuse).
 * Returns the number of log events read (>= 0), or -EINVAL (not a
 * per-isolate log name, not a regular file), -ENOENT (file gone: what was
 * read stays), -ENOMEM, or the errno of open/read.
 */
int isolate_registry__add_log(struct isolate_registry *reg, const char *path);

/*
 * The same, for the process host_pid (as BPF and /proc see it): V8 names
 * the file after the pid in the process's own pid namespace, which differs
 * for a containerized runtime (discover_proc.nspid != .pid).  host_pid <= 0:
 * the pid in the file name.  The file is opened through lib/safe_open.h
 * with open (NULL: any owner): for a target's log, owner
 * SAFE_OPEN_OWNER_TARGET and its uid, so that a file planted in a shared
 * log directory by anyone else is refused.  A refused file (-EPERM,
 * -ELOOP, -EINVAL, -EFBIG) is kept as a note (isolate_registry__notes()).
 * The options are kept for later reads (see line_tail__init()).
 */
int isolate_registry__add_log_pid(struct isolate_registry *reg, pid_t host_pid, const char *path,
				  const struct safe_open_opts *open);

/*
 * For a listing (isoprof targets): the isolate of the per-isolate code log
 * at path (pid and isolate from its name; host_pid as above) from a
 * v8log_scan of that file, which must keep the user scripts' sources
 * (isolate__keep_source() as its keep_source): scripts, version id, V8
 * version and name as isolate_registry__add_log_pid() gives them, without
 * a code index.  The registry does not keep the log: such an isolate is
 * not read again by isolate_registry__refresh() and has no inline stacks.
 * 0, or -EINVAL (not a per-isolate log name; a user source not kept),
 * -ENOMEM.
 */
int isolate_registry__add_scan(struct isolate_registry *reg, pid_t host_pid, const char *path,
			       struct v8log_scan *scan);

/* v8log_scan_keep_fn for isolate_registry__add_scan(): the user scripts (ctx unused). */
bool isolate__keep_source(const char *name, void *ctx);

/* Charge code-log reads to budget (the capture's; not owned). */
void isolate_registry__set_budget(struct isolate_registry *reg, struct read_budget *budget);

/*
 * Code logs refused or cut short, and why ("code log PATH: symlink
 * refused"), each once, with the raw path.  Returns the count; *notes
 * stays owned by reg.
 */
size_t isolate_registry__notes(const struct isolate_registry *reg, const char *const **notes);

/*
 * Everything known of pid's isolates let go (their code logs, names,
 * scripts): a process that exited, in a run that outlives it.  Pointers
 * to its isolate_info are invalid after this.
 */
void isolate_registry__forget(struct isolate_registry *reg, pid_t pid);

/*
 * isolate_registry__add_log() again for every log.  0, or the first error
 * other than -ENOENT (logs of exited processes keep what was read).
 */
int isolate_registry__refresh(struct isolate_registry *reg);

/*
 * The isolate's info, created as a placeholder (name "isolate-0x<hex>",
 * version "unknown", no scripts) when the registry does not know it.
 * NULL with errno EINVAL (isolate 0: no isolate) or ENOMEM.
 */
const struct isolate_info *isolate_registry__lookup(struct isolate_registry *reg, pid_t pid,
						    uint64_t isolate);

/* The isolate's info if known; NULL with errno ENOENT otherwise. */
const struct isolate_info *isolate_registry__find(const struct isolate_registry *reg, pid_t pid,
						  uint64_t isolate);

/*
 * The fallback: a script name seen in one of the isolate's JS frames.
 * Used only while the isolate has no code log (ignored otherwise).  O(log
 * n) for a name already noted, so it may be called per frame.  0, or
 * -EINVAL (isolate 0, NULL script), -ENOMEM.
 */
int isolate_registry__note_script(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
				  const char *script);

/*
 * The name to show for the isolate (workerd: its service), over any script
 * name; NULL or "" clears it.  Creates the isolate like lookup.  0,
 * -EINVAL, -ENOMEM.
 */
int isolate_registry__set_service_name(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
				       const char *name);

/*
 * The version id its scripts' files give an isolate that has none from a
 * code log (version_full: 64 hex), or, with version_full NULL, why they
 * give none (the isolate's version is then unknown again: a later window
 * may show the file version no longer holds).  Ignored (0) for an isolate
 * whose version came from its code log.  Creates the isolate like lookup.
 * 0, -EINVAL (isolate 0, version_full not 64 hex), -ENOMEM.
 */
int isolate_registry__set_files_version(struct isolate_registry *reg, pid_t pid, uint64_t isolate,
					const char *version_full, const char *why);

/* One user script of an isolate's code log, as content: for matching by content. */
struct isolate_script {
	const char *name;
	size_t source_len;	/* decoded bytes; 0 without source */
	const char *sha256_hex;	/* of the decoded source; "" without source */
};

/*
 * The user scripts of the isolate's code log (isolate__is_user_script()),
 * in log order, repeats included, into *out (malloc()ed, the caller frees
 * the array; the strings are the registry's, valid until its next update
 * of that log).  0 with *n 0 when the isolate has no code log kept (names
 * from frames, or a listing's scan); -ENOENT (no such isolate), -ENOMEM.
 */
int isolate_registry__user_scripts(const struct isolate_registry *reg, pid_t pid,
				   uint64_t isolate, struct isolate_script **out, size_t *n);

/*
 * The isolate's script named name in its code log (the newest of that
 * name: its source when the log carries it, its sourceMappingURL from
 * script-details), or NULL.  Valid until the registry's next update.
 */
struct v8log_script;
const struct v8log_script *isolate_registry__script(const struct isolate_registry *reg, pid_t pid,
						   uint64_t isolate, const char *name);

/*
 * Load a labels file (format above), replacing the labels loaded before,
 * and label every isolate.  Returns the number of labels, or -EINVAL with
 * "line N: ..." in err (a bad line; the labels before stay), -ENOMEM, or
 * the errno of open/read with its text in err.
 */
int isolate_registry__load_labels(struct isolate_registry *reg, const char *path, char *err,
				  size_t errlen);

/* Every isolate, by pid then address; valid until the next call that adds one. */
const struct isolate_info *const *isolate_registry__list(struct isolate_registry *reg, size_t *nr);

/*
 * Whether the isolate ran JS during the window of interest (the caller
 * knows: it had samples); `latest` picks among these.
 */
typedef bool (*isolate_executed_fn)(const struct isolate_info *info, void *ctx);

/*
 * The isolates `--script NAME [--version VERSION]` selects.  NAME matches
 * the service name, the shown name or any user script
 * (isolate__script_matches()).  VERSION:
 *   NULL       any version;
 *   "latest"   the most recently created matching isolate (created_ns, then
 *              the order the registry learnt of them) among those executed
 *              accepts (executed NULL: all);
 *   "unknown"  isolates whose version is unknown;
 *   otherwise  the isolate's label equals VERSION, or VERSION is 4..64 hex
 *              digits (any case) starting version_full.
 * executed is only used for "latest".  Up to max matches go to out, by
 * pid then address; returns how many matched (may exceed max), or -EINVAL
 * (empty NAME or VERSION, or hex shorter than 4 that is no known label).
 */
int isolate_registry__match(struct isolate_registry *reg, const char *script, const char *version,
			    isolate_executed_fn executed, void *ctx,
			    const struct isolate_info **out, size_t max);

/*
 * The names --script accepts, for an error message: every service name and
 * user script name, ascending, unique (placeholders left out).  Valid until
 * the next call of this function; NULL with errno ENOMEM.
 */
const char *const *isolate_registry__names(struct isolate_registry *reg, size_t *nr);

/*
 * The JS functions that optimized code of process pid inlined at pc offset
 * off of the code starting at start, innermost first (v8log__inline_stack()
 * over the process's code logs).  0 when none.
 */
int isolate_registry__inline_stack(struct isolate_registry *reg, pid_t pid, uint64_t start,
				   uint64_t off, struct v8inline_frame *frames, size_t max,
				   struct v8inline_frame *outer);

/*
 * The newest code covering addr in the code logs of process pid
 * (v8log__lookup(), first log that knows wins): a JS frame's name without
 * a perf map.  0, or -ENOENT.  out's strings live until the next update.
 */
struct v8log_sym;
int isolate_registry__code_at(struct isolate_registry *reg, pid_t pid, uint64_t addr,
			      struct v8log_sym *out);

/*
 * Pure helpers, exposed for the tests.
 */

/* The rule of docs/attribution.md: false for runtime and unnamed scripts. */
bool isolate__is_user_script(const char *name);

/*
 * name is pattern, or ends with '/' followed by pattern ("main.js" and
 * "app/main.js" match "/srv/app/main.js" and "file:///srv/app/main.js"),
 * or name without its extension does ("main", "app/main" match them too;
 * the extension is what follows the last '.' of the last component).
 */
bool isolate__script_matches(const char *name, const char *pattern);

/*
 * The version id of n scripts (all of them, in any order: sorted here;
 * equal pairs counted once).  sources[i] NULL is an empty source.  0, or
 * -EINVAL, -ENOMEM.  n == 0 gives the SHA-256 of nothing.
 */
int isolate__version_id(const char *const names[], const char *const sources[],
			const size_t lens[], size_t n, char out_hex[SHA256_HEX_LEN]);

#endif /* ISOPROF_ATTRIBUTE_ISOLATES_H */
