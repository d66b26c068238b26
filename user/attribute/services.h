/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * services: workerd's service names and Durable Object namespaces for
 * isolates, from the config each workerd process runs (SPEC §12,
 * docs/attribution.md "Services and Durable Objects").
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
 * A service is matched to an isolate by content: the version id of its
 * worker's JavaScript modules that are user scripts (isolate__version_id()
 * over their names and sources) equals the isolate's version id from its
 * code log.  An isolate whose code two services share stays unnamed.
 * The modules' sources are dropped once hashed: the configs a map hands
 * out (service_map__config()) have names and namespaces, no sources.
 *
 * Ownership: a service_map owns every config and string it hands out until
 * service_map__free().  Not thread-safe.  Actions return 0 or a negative
 * errno; nothing prints (reasons come back as text).
 */
#ifndef ISOPROF_ATTRIBUTE_SERVICES_H
#define ISOPROF_ATTRIBUTE_SERVICES_H

#include <stdbool.h>
#include <stddef.h>
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

/* The config of pid, or NULL when unknown (or no workerd the map was given). */
const struct workerd_config *service_map__config(const struct service_map *m, pid_t pid);

/*
 * Set the service name of every isolate in reg whose version id a service
 * of its process has (isolate_registry__set_service_name()).  Returns how
 * many isolates are named, or -ENOMEM.
 */
int service_map__name_isolates(struct service_map *m, struct isolate_registry *reg);

/*
 * The one service of process pid whose modules have this version id (64
 * hex), or NULL (none, or several running the same code).
 */
const struct workerd_service *service_map__lookup(const struct service_map *m, pid_t pid,
						  const char *version_full);

/* The service an isolate matches (service_map__lookup()), or NULL. */
const struct workerd_service *service_map__service_of(const struct service_map *m,
						      const struct isolate_info *info);

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
