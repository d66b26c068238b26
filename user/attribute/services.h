/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * services: workerd's service names and Durable Object namespaces for
 * isolates, from the config each workerd process runs
 * (docs/attribution.md "Services and Durable Objects").
 *
 * The config is found from the process's command line
 * (`workerd serve [OPTIONS] CONFIG [CONST]`, /proc/PID/cmdline) and its
 * working directory (/proc/PID/cwd), and read, with every file it embeds
 * or imports, through lib/safe_open.h: inside the target's root, regular
 * files only, owned by the target's user or root (a root-owned file the
 * target's user could not read is refused too), at most
 * SERVICES_FILE_MAX bytes each, charged to the capture's read budget.
 * Binary configs (--binary), wrangler.json configs and `workerd compile`
 * binaries (no config on the command line) leave the names unknown, with
 * the reason; nothing is guessed.
 *
 * A service is matched to an isolate by content (service_map__match()):
 * its worker's JavaScript modules that are user scripts are, as (name,
 * SHA-256 of the source) pairs, exactly the isolate's distinct user
 * scripts from its code log, which is what makes their version ids equal
 * (isolates.h).  Only the services whose module names are the isolate's
 * script names are compared; an embedded file is opened for its size, and
 * read and hashed (streamed, never kept) only when its size is that of the
 * script's source.  An isolate whose code two services share stays
 * unnamed.  The parsed config never holds an embedded file's bytes.
 *
 * Kept between listings (isoprof serve's lister: service_map__begin(),
 * add every process, match, service_map__end()): a process's config is
 * parsed again only when its command line, working directory or one of
 * the config files read (device, inode, size, mtime) changed; an embedded
 * file's digest is kept with its device, inode, size and mtime, checked
 * again at most once per listing when a match needs it; an isolate
 * matched before with the same version id is not compared again while its
 * process's config is kept.  A process not added during a listing is
 * forgotten at its end.
 *
 * Ownership: a service_map owns every config and string it hands out until
 * service_map__free().  Not thread-safe.  Actions return 0 or a negative
 * errno; nothing prints (reasons come back as text).
 */
#ifndef ISOPROF_ATTRIBUTE_SERVICES_H
#define ISOPROF_ATTRIBUTE_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"
#include "symbolize/workerd_config.h"
#include "user/attribute/isolates.h"
#include "user/capture/discover.h"

#define SERVICES_FILE_MAX (64ull << 20)	/* a config or one embedded file */
#define SERVICES_UNKNOWN "service names unknown"

struct service_map;

/* A namespace found by service_map__find_namespace(). */
struct service_ns_match {
	pid_t pid;
	const struct workerd_service *service;
	const struct workerd_do_namespace *ns;
};

/* An empty map; NULL and errno ENOMEM. */
struct service_map *service_map__new(void);
void service_map__free(struct service_map *m);

/* Charge the config files' reads to budget (not owned; NULL: none). */
void service_map__set_budget(struct service_map *m, struct read_budget *budget);

/* What the map did since service_map__begin() (or since it was made). */
struct service_map_stats {
	size_t loads;		/* configs parsed */
	size_t kept;		/* configs kept from the listing before, unchanged */
	size_t embeds_hashed;	/* embedded files read and hashed */
	uint64_t bytes_hashed;
	size_t embeds_not_read;	/* compared by size alone: not the script's */
	size_t memo_hits;	/* isolates matched before, not compared again */
};

/* A listing starts: processes added from here on are kept at its end; stats count from here. */
void service_map__begin(struct service_map *m);

/* The listing is over: forget the processes it did not add. */
void service_map__end(struct service_map *m);

void service_map__stats(const struct service_map *m, struct service_map_stats *st);

/*
 * Learn the services of process p (a workerd; other runtimes are left
 * alone), once per pid.  0, -ENOMEM; a config that cannot be read or
 * parsed is not an error: service_map__why_unknown() says why.
 */
int service_map__add_process(struct service_map *m, const struct discover_proc *p);

/*
 * NULL when the services of pid are known; else the reason, starting with
 * SERVICES_UNKNOWN ("service names unknown: a binary config (--binary)").
 * NULL as well for a pid that is no workerd the map was given.
 */
const char *service_map__why_unknown(const struct service_map *m, pid_t pid);

/*
 * Notes on pid's matching since service_map__begin(): the embedded files
 * a match needed that could not be read, and why ("service alpha:
 * embedded file alpha/index.js: symlink refused (not matched by
 * content)").  Valid until the next call that changes the map.
 */
size_t service_map__notes(const struct service_map *m, pid_t pid, const char *const **notes);

/* The config of pid, or NULL when unknown (or no workerd the map was given). */
const struct workerd_config *service_map__config(const struct service_map *m, pid_t pid);

/*
 * The one service of process pid that the isolate (its address and
 * version id, 64 hex) runs, from the isolate's user scripts (its code
 * log's, repeats allowed): *out, or NULL (none, several running the same
 * code, a process whose config is unknown).  0 or -ENOMEM.
 */
int service_map__match(struct service_map *m, pid_t pid, uint64_t isolate,
		       const char *version_full, const struct isolate_script *scripts, size_t n,
		       const struct workerd_service **out);

/*
 * Set the service name of every isolate in reg (with a code log) that a
 * service of its process runs (service_map__match(), the scripts from
 * isolate_registry__user_scripts()).  Returns how many isolates are
 * named, or -ENOMEM.
 */
int service_map__name_isolates(struct service_map *m, struct isolate_registry *reg);

/*
 * The same for isolates with no script sources (no code log, or one
 * without code events, as --perf-basic-prof alone leaves): by the script names read from
 * their JS frames (the perf map, or V8's heap: docs/v8-frames.md).  An
 * isolate is named when exactly one worker service of its process has a
 * module of each of those names; module names shared by several services
 * (every main module called index.js) name nothing.  Weaker than content:
 * the summary says which way each isolate was named.  Returns how many
 * isolates are named, or -ENOMEM.
 */
int service_map__name_isolates_by_module(struct service_map *m, struct isolate_registry *reg);

/*
 * Version ids without a code log: every isolate of a workerd in the map
 * whose version did not come from a code log and that is named after a
 * service (service_map__name_isolates_by_module()) gets the id that
 * service's JavaScript user modules give, as pairs (module name, the
 * file's bytes) hashed as its code log's sources would be
 * (isolate__version_id(); a service worker script under the service's
 * name): what V8 logs for them (docs/attribution.md, "Versions without a
 * code log").  The files are read as the config's own are, at most once
 * per listing per service.  No id, and the reason in the isolate's
 * version_why and the process's notes, when a module cannot be read, is
 * not UTF-8, or it or a config file changed since the process started
 * (its ctime), or when the isolate has no service.  Returns how many
 * isolates got an id, or -ENOMEM.
 */
int service_map__version_isolates(struct service_map *m, struct isolate_registry *reg);

/* The service whose name the isolate has (service_map__name_isolates()), or NULL. */
const struct workerd_service *service_map__service_of(const struct service_map *m,
						      const struct isolate_info *info);

/*
 * The text of the JavaScript module named module of a worker service of
 * process pid (service: that service's; NULL: the one service that has
 * such a module), read as the config's own files are (inside the
 * target's root, its owner or root, SERVICES_FILE_MAX, the budget):
 * *text (malloc'd, NUL-terminated, *len bytes without the NUL) and, for an
 * embedded file, *file (malloc'd: the absolute path it was read from, as
 * the target sees it; NULL for a module given in the config's text).
 * Both are the caller's.  0, -ENOENT (no such module, or several
 * services have one), -ENOMEM, or the read's error; why says which.
 */
int service_map__module_text(struct service_map *m, pid_t pid, const char *service,
			     const char *module, char **text, size_t *len, char **file, char *why,
			     size_t whylen);

/*
 * Another file of process pid's (an absolute path as the target sees it:
 * a source map beside an embedded module), under the same rules.  0 and
 * *data (malloc'd, NUL-terminated, the caller's), or -errno with why.
 */
int service_map__read_file(struct service_map *m, pid_t pid, const char *path, char **data,
			   size_t *len, char *why, size_t whylen);

/*
 * The namespaces NS names: its uniqueKey, its className, or
 * "SERVICE:CLASSNAME", in every process of the map.  Up to max go to out;
 * returns how many matched.
 */
size_t service_map__find_namespace(const struct service_map *m, const char *ns,
				   struct service_ns_match *out, size_t max);

/*
 * Every namespace known, for an error message: "service:className
 * (uniqueKey)" joined by ", " into buf (cut to len); "none" when there
 * is none.
 */
void service_map__list_namespaces(const struct service_map *m, char *buf, size_t len);

/*
 * Pure helper, exposed for the tests: from a workerd command line (argc
 * NUL-separated words), the config file and const name (NULL when none),
 * the import path directories (-I), or -ENOENT (no config file: a compiled
 * binary, or not `serve`), -ENOTSUP (--binary, a wrangler.json config)
 * with why set.  Pointers point into argv.
 */
#define SERVICES_MAX_IMPORT_PATHS 16
struct services_cmdline {
	const char *config;
	const char *const_name;
	const char *import_path[SERVICES_MAX_IMPORT_PATHS];
	size_t nr_import_path;
};
int services__parse_cmdline(const char *const *argv, size_t argc, struct services_cmdline *out,
			    const char **why);

#endif /* ISOPROF_ATTRIBUTE_SERVICES_H */
