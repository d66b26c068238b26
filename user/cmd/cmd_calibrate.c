// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof calibrate BINARY: learn how BINARY's V8 lays out its objects
 * (user/v8/calibration.h) and keep it under the state directory, keyed by
 * the binary's build-id, so that record names its JS frames with no V8
 * flags (docs/v8-frames.md).  Exit status: 0 stored, 1 the run or the
 * learning failed (the message says which step), 2 usage.
 */
#include <argp.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "symbolize/v8layout.h"
#include "user/cmd/commands.h"
#include "user/v8/calibration.h"

enum {
	OPT_STATE_DIR = 0x100,
	OPT_RUN_MS,
};

struct calibrate_env {
	const char *binary;
	const char *state_dir;
	unsigned int run_ms;
	bool json;
};

static const struct argp_option calibrate_options[] = {
	{ "state-dir", OPT_STATE_DIR, "DIR", 0,
	  "Where layouts are kept (default $" V8LAYOUT_STATE_DIR_ENV ", else " V8LAYOUT_DEFAULT_STATE_DIR "): DIR/" V8LAYOUT_SUBDIR
	  "/BUILD-ID", 0 },
	{ "run-ms", OPT_RUN_MS, "MS", 0, "How long the workload runs while sampled (default 3000)",
	  0 },
	{ "json", 'j', NULL, 0, "Print the result as one JSON object", 0 },
	{ 0 },
};

static error_t calibrate_parse(int key, char *arg, struct argp_state *state)
{
	struct calibrate_env *env = state->input;
	char *end;
	long v;

	switch (key) {
	case OPT_STATE_DIR:
		env->state_dir = arg;
		break;
	case OPT_RUN_MS:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 500 || v > 60000)
			argp_error(state, "--run-ms must be 500..60000, not '%s'", arg);
		env->run_ms = (unsigned int)v;
		break;
	case 'j':
		env->json = true;
		break;
	case ARGP_KEY_ARG:
		if (env->binary)
			argp_error(state, "unexpected argument '%s'", arg);
		env->binary = arg;
		break;
	case ARGP_KEY_END:
		if (!env->binary)
			argp_error(state, "name the runtime binary to calibrate (workerd or node)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int print_json(const struct calibrate_env *env, const struct calibration_result *r,
		      const char *path)
{
	const struct calib_report *c = &r->report;
	struct json_object *o = json_object_new_object();
	int err;

	if (!o)
		return -ENOMEM;
	err = json__put(o, "binary", json__text(env->binary));
	err = err ?: json__put(o, "runtime", json__text(r->runtime));
	err = err ?: json__put(o, "build_id", json__text(r->layout.build_id));
	err = err ?: json__put(o, "version", json__text(r->layout.v8_version));
	err = err ?: json__put(o, "layout", json__text(path));
	err = err ?: json__put(o, "samples", json_object_new_int64((int64_t)r->samples));
	err = err ?: json__put(o, "js_frames", json_object_new_int64((int64_t)r->js_frames));
	err = err ?: json__put(o, "functions", json_object_new_int64((int64_t)c->observations));
	err = err ?: json__put(o, "checked", json_object_new_int64((int64_t)c->checked));
	err = err ?: json__put(o, "agree_name", json_object_new_int64((int64_t)c->agree_name));
	err = err ?: json__put(o, "agree_script", json_object_new_int64((int64_t)c->agree_script));
	err = err ?: json__put(o, "agree_line", json_object_new_int64((int64_t)c->agree_line));
	err = err ?: json__put(o, "compressed", json_object_new_boolean(r->layout.compressed));
	err = err ?: json__put(o, "max_context_locals",
			       json_object_new_int64((int64_t)c->max_context_locals));
	err = err ?: json__put(o, "v8dbg_compared", json_object_new_int64((int64_t)r->v8dbg_compared));
	err = err ?: json__put(o, "v8dbg_agreed", json_object_new_int64((int64_t)r->v8dbg_agreed));
	err = err ?: json__put(o, "inferred_names",
			       json_object_new_boolean(r->layout.scope_info_inferred_delta != 0));
	err = err ?: json__put(o, "code_objects_learnt",
			       json_object_new_boolean(r->layout.code_alignment != 0));
	err = err ?: json__put(o, "code_objects_checked",
			       json_object_new_int64((int64_t)r->code.checked));
	err = err ?: json__put(o, "code_objects_agreed", json_object_new_int64((int64_t)r->code.agree));
	if (!r->layout.code_alignment)
		err = err ?: json__put(o, "code_objects_why", json_object_new_string(r->code.why));
	err = err ?: json__put(o, "deopt_learnt", json_object_new_boolean(r->layout.deopt_format != 0));
	err = err ?: json__put(o, "deopt_objects", json_object_new_int64((int64_t)r->deopt.objects));
	err = err ?: json__put(o, "deopt_entries", json_object_new_int64((int64_t)r->deopt.entries));
	err = err ?: json__put(o, "deopt_calls_checked",
			       json_object_new_int64((int64_t)r->deopt.lazy_checked));
	err = err ?: json__put(o, "deopt_calls_agreed",
			       json_object_new_int64((int64_t)r->deopt.lazy_agree));
	err = err ?: json__put(o, "deopt_turbofan_calls_checked",
			       json_object_new_int64((int64_t)r->deopt.turbofan_checked));
	err = err ?: json__put(o, "deopt_turbofan_calls_agreed",
			       json_object_new_int64((int64_t)r->deopt.turbofan_agree));
	err = err ?: json__put(o, "deopt_pcs_checked",
			       json_object_new_int64((int64_t)r->deopt.pcs_checked));
	err = err ?: json__put(o, "deopt_pcs_agreed", json_object_new_int64((int64_t)r->deopt.pcs_agree));
	err = err ?: json__put(o, "deopt_maglev", json_object_new_boolean(
						  r->layout.maglev_safepoint_header != 0));
	if (!r->layout.deopt_format)
		err = err ?: json__put(o, "deopt_why", json_object_new_string(r->deopt.why));
	err = err ?: json__write(stdout, o, false);
	json_object_put(o);
	return err;
}

int cmd_calibrate(int argc, char **argv)
{
	static const struct argp argp = {
		.options = calibrate_options,
		.parser = calibrate_parse,
		.args_doc = "BINARY",
		.doc = "Learn how BINARY's V8 (workerd or node) lays out functions, scripts and "
		       "names in its heap, by running it once with V8's perf map on a bundled "
		       "workload, and store that layout by the binary's build-id, so that "
		       "record names JS frames of runtimes started with no V8 flags.",
	};
	struct calibrate_env env = { 0 };
	struct calibration_result r;
	struct calibration_opts o = { 0 };
	char err[512] = "", path[4096];
	int ret;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	if (!env.state_dir)
		env.state_dir = v8layout__state_dir();
	o.binary = env.binary;
	o.run_ms = env.run_ms;
	o.err = err;
	o.err_len = sizeof(err);
	if (!env.json)
		fprintf(stderr, "isoprof: calibrating %s: running it for %u ms with V8's perf map...\n",
			env.binary, env.run_ms ? env.run_ms : CALIBRATION_DEFAULT_MS);
	ret = calibration__run(&o, &r);
	if (ret) {
		fprintf(stderr, "isoprof: calibrate %s: %s\n", env.binary, err);
		return 1;
	}
	ret = v8layout__store(env.state_dir, &r.layout);
	if (!ret)
		ret = v8layout__path(env.state_dir, r.layout.build_id, path, sizeof(path));
	if (ret) {
		fprintf(stderr, "isoprof: calibrate %s: cannot store the layout under %s: %s\n",
			env.binary, env.state_dir, strerror(-ret));
		return 1;
	}
	if (env.json) {
		ret = print_json(&env, &r, path);
		if (ret)
			fprintf(stderr, "isoprof: calibrate: cannot print JSON: %s\n", strerror(-ret));
		return ret ? 1 : 0;
	}
	printf("%s %s (build-id %s): layout stored in %s\n", r.runtime, r.layout.v8_version,
	       r.layout.build_id, path);
	printf("  %zu samples, %zu JS frames, %zu functions; the layout names %zu of %zu as the "
	       "perf map does (scripts %zu, lines %zu)\n",
	       r.samples, r.js_frames, r.report.observations, r.report.agree_name, r.report.checked,
	       r.report.agree_script, r.report.agree_line);
	printf("  inferred names (obj.method = function ...): %s\n",
	       r.layout.scope_info_inferred_delta ? "read from the ScopeInfo" : "not found");
	if (r.v8dbg_compared)
		printf("  agrees with the binary's v8dbg_ symbols on %zu of %zu fields\n",
		       r.v8dbg_agreed, r.v8dbg_compared);
	if (r.layout.code_alignment)
		printf("  inlined functions read from code objects: %zu of %zu optimized code "
		       "objects read back as the code log describes them (%zu positions)\n",
		       r.code.agree, r.code.checked, r.code.positions);
	else
		printf("  inlined functions not read from code objects: %s\n", r.code.why);
	if (r.layout.deopt_format)
		printf("  code without source positions placed by its deoptimization data: %zu "
		       "code objects, %zu entries; calls: %zu of %zu translations are the positions' "
		       "inline stack; pcs: %zu of %zu placed as the positions place them (%.1f%%)%s%s\n",
		       r.deopt.objects, r.deopt.entries, r.deopt.lazy_agree, r.deopt.lazy_checked,
		       r.deopt.pcs_agree, r.deopt.pcs_checked,
		       r.deopt.pcs_checked ? 100.0 * r.deopt.pcs_agree / r.deopt.pcs_checked : 0.0,
		       r.deopt.maglev_why ? "; Maglev code not placed: " : "",
		       r.deopt.maglev_why ? r.deopt.maglev_why : "");
	else
		printf("  code without source positions not placed by deoptimization data: %s\n",
		       r.deopt.why);
	return 0;
}
