// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof check: what this host offers isoprof (user/capture/host_features.h
 * probes it), a line per feature, or one JSON object.  Exits 0 when record
 * can run, RECORD_EXIT_NO_BPF when it cannot, 1 on an error of its own.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "lib/json.h"
#include "user/capture/caps.h"
#include "user/capture/host_features.h"
#include "user/cmd/commands.h"
#include "user/record_exit.h"

struct check_env {
	bool json;
};

static const struct argp_option check_options[] = {
	{ "json", 'j', NULL, 0, "Print one JSON object instead of a table", 0 },
	{ 0 },
};

static error_t check_parse(int key, char *arg, struct argp_state *state)
{
	struct check_env *env = state->input;

	(void)arg;
	switch (key) {
	case 'j':
		env->json = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "no arguments expected");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static const char *const state_word[] = {
	[HOST_FEATURE_UNKNOWN] = "?",
	[HOST_FEATURE_YES] = "yes",
	[HOST_FEATURE_NO] = "no",
};

static const struct {
	const char *name;
	size_t offset;
	const char *note;
} sysctls[] = {
	{ "kernel.perf_event_paranoid", offsetof(struct host_features, perf_event_paranoid),
	  "unprivileged perf events; record opens its own with CAP_PERFMON" },
	{ "kernel.unprivileged_bpf_disabled",
	  offsetof(struct host_features, unprivileged_bpf_disabled),
	  "unprivileged BPF; record loads with CAP_BPF" },
	{ "kernel.kptr_restrict", offsetof(struct host_features, kptr_restrict),
	  "who sees kernel addresses (kallsyms above)" },
};

static int sysctl_value(const struct host_features *hf, size_t i)
{
	return *(const int *)((const char *)hf + sysctls[i].offset);
}

static void print_text(const struct host_features *hf, FILE *out)
{
	fprintf(out, "isoprof check: Linux %s %s\n", hf->kernel, hf->arch);
	for (int i = 0; i < HOST_FEATURE_COUNT; i++) {
		const struct host_feature *f = &hf->f[i];

		fprintf(out, "  %-36s %-3s  %s", f->name, state_word[f->state], f->needed_for);
		if (f->value[0])
			fprintf(out, " [%s]", f->value);
		if (f->fix)
			fprintf(out, ": %s", f->fix);
		fputc('\n', out);
	}
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		int v = sysctl_value(hf, i);

		if (v == HOST_SYSCTL_UNKNOWN)
			fprintf(out, "  %-36s %-3s  informational: %s\n", sysctls[i].name, "?",
				sysctls[i].note);
		else
			fprintf(out, "  %-36s %-3d  informational: %s\n", sysctls[i].name, v,
				sysctls[i].note);
	}
	fprintf(out, "record can run: %s\n", host_features__record_can_run(hf) ? "yes" : "no");
}

/*
 * v, or null when null is set (v is freed then): a JSON null is a NULL
 * json_object, which json__put() takes for a failed allocation.
 */
static int put_or_null(struct json_object *o, const char *key, bool null, struct json_object *v)
{
	if (null) {
		json_object_put(v);
		return json_object_object_add(o, key, NULL) ? -ENOMEM : 0;
	}
	return json__put(o, key, v);
}

static struct json_object *feature_json(const struct host_feature *f)
{
	struct json_object *o = json_object_new_object();
	int err = 0;

	if (!o)
		return NULL;
	/* null: the host could not be asked */
	err |= put_or_null(o, "ok", f->state == HOST_FEATURE_UNKNOWN,
			   json_object_new_boolean(f->state == HOST_FEATURE_YES));
	err |= put_or_null(o, "value", !f->value[0], json__text(f->value));
	err |= json__put(o, "required", json_object_new_boolean(f->required));
	err |= json__put(o, "needed_for", json__text(f->needed_for));
	err |= put_or_null(o, "fix", !f->fix, json__text(f->fix));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int print_json(const struct host_features *hf, FILE *out)
{
	struct json_object *o = json_object_new_object(), *features = json_object_new_object();
	struct json_object *sys = json_object_new_object();
	int err = 0;

	if (!o || !features || !sys) {
		json_object_put(o);
		json_object_put(features);
		json_object_put(sys);
		return -ENOMEM;
	}
	err |= json__put(o, "kernel", json__text(hf->kernel));
	err |= json__put(o, "arch", json__text(hf->arch));
	err |= json__put(o, "euid", json_object_new_int64(hf->euid));
	for (int i = 0; i < HOST_FEATURE_COUNT; i++)
		err |= json__put(features, hf->f[i].key, feature_json(&hf->f[i]));
	err |= json__put(o, "features", features);
	for (size_t i = 0; i < sizeof(sysctls) / sizeof(sysctls[0]); i++) {
		int v = sysctl_value(hf, i);

		err |= put_or_null(sys, sysctls[i].name, v == HOST_SYSCTL_UNKNOWN,
				   json_object_new_int64(v));
	}
	err |= json__put(o, "sysctl", sys);
	err |= put_or_null(o, "lockdown", !hf->lockdown[0], json__text(hf->lockdown));
	err |= json__put(o, "record_can_run",
			 json_object_new_boolean(host_features__record_can_run(hf)));
	if (!err)
		err = json__write(out, o, true);
	json_object_put(o);
	return err ? -ENOMEM : 0;
}

int cmd_check(int argc, char **argv)
{
	static const struct argp argp = {
		.options = check_options,
		.parser = check_parse,
		.args_doc = NULL,
		.doc = "Say what this host offers isoprof: the kernel's BTF, BPF programs, "
		       "perf events, uprobe_multi links (GC pauses, Linux 6.6), kallsyms, "
		       "lockdown, and the privilege record needs.  Exits 0 when record can "
		       "run, 5 when it cannot.",
	};
	struct check_env env = { 0 };
	struct host_features hf;
	int err;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	/* the privilege as started, then the probes with what record arms with */
	err = host_features__init(&hf);
	if (err) {
		fprintf(stderr, "isoprof: check: %s\n", strerror(-err));
		return 1;
	}
	err = caps__start(CAPS_ARMING, CAPS_NEED_BPF | CAPS_NEED_KSYMS);
	if (err) {
		fprintf(stderr, "isoprof: cannot drop privileges: %s\n", strerror(-err));
		return 1;
	}
	host_features__probe(&hf);
	if (env.json)
		err = print_json(&hf, stdout);
	else
		print_text(&hf, stdout);
	if (err || fflush(stdout) == EOF) {
		fprintf(stderr, "isoprof: check: writing the answer: %s\n",
			strerror(err ? -err : errno));
		return 1;
	}
	return host_features__record_can_run(&hf) ? RECORD_EXIT_OK : RECORD_EXIT_NO_BPF;
}
