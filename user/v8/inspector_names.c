// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* inspector_names: a workerd inspector's targets against the config's services. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/errmsg.h"
#include "lib/netns.h"
#include "user/v8/inspector_names.h"

static void free_strings(char **a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(a[i]);
	free(a);
}

void inspector_names__free(struct inspector_names *names)
{
	if (!names)
		return;
	free(names->address);
	free_strings(names->listed, names->nr_listed);
	free_strings(names->not_listed, names->nr_not_listed);
	free_strings(names->not_in_config, names->nr_not_in_config);
	memset(names, 0, sizeof(*names));
}

/* s appended to the array a of *n (room for cap); 0 or -ENOMEM */
static int push_copy(char ***a, size_t *n, size_t cap, const char *s)
{
	if (!*a) {
		*a = calloc(cap ? cap : 1, sizeof(**a));
		if (!*a)
			return -ENOMEM;
	}
	(*a)[*n] = strdup(s);
	if (!(*a)[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

static bool lists(const struct inspector_target *targets, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (targets[i].id && !strcmp(targets[i].id, name))
			return true;
	return false;
}

static bool is_worker_of(const struct workerd_config *cfg, const char *id)
{
	for (size_t i = 0; i < cfg->nr_services; i++)
		if (cfg->services[i].is_worker && !strcmp(cfg->services[i].name, id))
			return true;
	return false;
}

int inspector_names__compare(const struct inspector_target *targets, size_t n,
			     const struct workerd_config *cfg, struct inspector_names *out)
{
	for (size_t i = 0; i < n; i++) {
		const char *id = targets[i].id ? targets[i].id : "";

		if (push_copy(&out->listed, &out->nr_listed, n, id))
			return -ENOMEM;
		if (cfg && !is_worker_of(cfg, id) &&
		    push_copy(&out->not_in_config, &out->nr_not_in_config, n, id))
			return -ENOMEM;
	}
	for (size_t i = 0; cfg && i < cfg->nr_services; i++) {
		const struct workerd_service *s = &cfg->services[i];

		if (!s->is_worker)
			continue;
		if (lists(targets, n, s->name))
			out->confirmed++;
		else if (push_copy(&out->not_listed, &out->nr_not_listed, cfg->nr_services,
				   s->name))
			return -ENOMEM;
	}
	return 0;
}

int inspector_names__check(pid_t pid, const char *hostport, int timeout_ms,
			   const struct workerd_config *cfg, struct inspector_names *out)
{
	struct inspector_target *targets = NULL;
	size_t n = 0;
	int netns = -1, err;

	memset(out, 0, sizeof(*out));
	out->address = strdup(hostport);
	if (!out->address)
		return -ENOMEM;
	err = netns__open(pid, &netns);
	if (err) {
		out->err = err;
		errmsg__set(out->why, sizeof(out->why), "its network namespace: %s", strerror(-err));
		return 0;
	}
	if (netns >= 0) {
		close(netns);
		out->err = -EPERM;
		errmsg__set(out->why, sizeof(out->why),
			    "not asked: it listens in its own network namespace");
		return 0;
	}
	err = inspector__list(hostport, -1, timeout_ms, &targets, &n, out->why, sizeof(out->why));
	if (err) {
		out->err = err;
		return err == -ENOMEM ? err : 0;
	}
	err = inspector_names__compare(targets, n, cfg, out);
	inspector__free_targets(targets, n);
	return err;
}
