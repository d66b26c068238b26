/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * node_script: a node isolate's version id without a code log, from its
 * main script's file (docs/attribution.md, "Versions without a code log").
 *
 * The code log's id hashes every user script the isolate compiled
 * (isolates.h).  Without the log, what the isolate compiled is known only
 * where it can be shown to be one file: the script on node's command
 * line, which
 *   - is the one user script the isolate's JS frames name (its path, or
 *     its file:// URL for an ES module, as V8 names it), and is what the
 *     command line runs: `node [OPTIONS] SCRIPT`, resolved against the
 *     process's working directory, with no option that loads other code
 *     (-r/--require, --import, --loader, -e, -p, --test, --watch, ...), on
 *     the command line or in NODE_OPTIONS;
 *   - loads no other user code: its text, scanned as words (comments and
 *     strings too), requires or imports only node's built-in modules by a
 *     literal name (node_script__self_contained());
 *   - is UTF-8 without a byte order mark, and has not changed (ctime)
 *     since the process started.
 * Its version id is then isolate__version_id() of the one pair (the name
 * V8 gives it, the file's bytes): node 20 compiles a CommonJS module's
 * text with no wrapper and an ES module's as read, so its code log gives
 * the same pair.  Anything else (several files, a preload, eval'd code
 * only) leaves the version "unknown", with the reason in the isolate's
 * version_why: never an id that differs from the code log's.
 *
 * Files: the script is opened through lib/safe_open.h inside the target's
 * root (/proc/PID/root), regular, non-blocking, owned by the target's user
 * or root, at most NODE_SCRIPT_MAX bytes, charged to the capture's read
 * budget.  /proc/PID/cmdline, /proc/PID/cwd and, from /proc/PID/environ,
 * only NODE_OPTIONS (scanned for options, never kept) are read.
 *
 * Errors: actions return a count or a negative errno; nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_NODE_SCRIPT_H
#define ISOPROF_ATTRIBUTE_NODE_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/safe_open.h"
#include "user/attribute/isolates.h"
#include "user/capture/discover.h"

#define NODE_SCRIPT_MAX (64ull << 20)

/*
 * Give every isolate of p (a node process; others are left alone) whose
 * version did not come from a code log the version id of its main script
 * (above), or the reason it has none.  Returns how many isolates got an
 * id, or -ENOMEM.
 */
int node_script__version_isolates(struct isolate_registry *reg, const struct discover_proc *p,
				  struct read_budget *budget);

/*
 * Pure helpers, exposed for the tests and the fuzzer.
 */

/*
 * The script of node's command line (argc words, argv[0] the binary): 0
 * and *script (pointing into argv), or -ENOENT (no script: the REPL, -e,
 * -p, stdin) or -EXDEV (an option that loads other code or runs other
 * files) with *why, a static sentence.
 */
int node_script__parse_cmdline(const char *const *argv, size_t argc, const char **script,
			       const char **why);

/*
 * Does a NODE_OPTIONS value (len bytes) hold an option that loads code
 * (as node_script__parse_cmdline() refuses)?  0, or -EXDEV with *why.
 */
int node_script__check_options(const char *opts, size_t len, const char **why);

/*
 * Does the text of a script load only node's built-in modules?  0, or
 * -EXDEV with the first reason in why ("requires './lib'", "import()").
 * Linear in len.
 */
int node_script__self_contained(const char *text, size_t len, char *why, size_t whylen);

/*
 * The file a V8 script name names: an absolute path as is, a file:///
 * URL percent-decoded (%2F and %00 refused).  0, or -EINVAL (another
 * name, a malformed URL), -ENAMETOOLONG.
 */
int node_script__name_path(const char *name, char *out, size_t outlen);

/*
 * path joined to dir when relative, "." and ".." and repeated slashes
 * resolved as node's path.resolve() does (lexically).  0 or -ENAMETOOLONG,
 * -EINVAL (dir not absolute for a relative path).
 */
int node_script__resolve(const char *dir, const char *path, char *out, size_t outlen);

#endif /* ISOPROF_ATTRIBUTE_NODE_SCRIPT_H */
