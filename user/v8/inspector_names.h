/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * inspector_names: what a workerd's open inspector says about its service
 * names, set beside the names isoprof read from the config (services.h).
 *
 * workerd's inspector lists one target per worker service, its id the
 * service's name (inspector.h).  isoprof never needs it to name isolates
 * (that is by content, from the config); when one is open, its list
 * confirms the names, or shows that the config read is not the one
 * running (edited since start, another const) or, with a binary config,
 * which services run at all.
 *
 * Only /json/list is read (one GET, no session).  A process in another
 * network namespace is not consulted: reaching its loopback takes
 * CAP_SYS_ADMIN, which a listing does not keep (caps.h).
 *
 * Ownership: an inspector_names owns its strings until
 * inspector_names__free().  Nothing prints.
 */
#ifndef ISOPROF_V8_INSPECTOR_NAMES_H
#define ISOPROF_V8_INSPECTOR_NAMES_H

#include <stddef.h>
#include <sys/types.h>

#include "symbolize/workerd_config.h"
#include "user/v8/inspector.h"

struct inspector_names {
	char *address;		/* HOST:PORT asked */
	/* 0, or why the list was not had: the text in why ("timed out ...") */
	int err;
	char why[200];
	char **listed;		/* the inspector's target ids, in its order */
	size_t nr_listed;
	/* with a config: its worker services the inspector lists, and not */
	size_t confirmed;
	char **not_listed;
	size_t nr_not_listed;
	/* target ids no worker service of the config has */
	char **not_in_config;
	size_t nr_not_in_config;
};

/*
 * Ask the inspector at hostport of process pid for its targets within
 * timeout_ms and compare them with cfg's worker services (cfg NULL: the
 * names unknown, only listed).  0 with *out filled, also when the
 * inspector could not be asked (out->err, out->why); -ENOMEM.
 */
int inspector_names__check(pid_t pid, const char *hostport, int timeout_ms,
			   const struct workerd_config *cfg, struct inspector_names *out);

/* The comparison alone (pure, for the tests): targets against cfg. */
int inspector_names__compare(const struct inspector_target *targets, size_t n,
			     const struct workerd_config *cfg, struct inspector_names *out);

void inspector_names__free(struct inspector_names *names);

#endif /* ISOPROF_V8_INSPECTOR_NAMES_H */
