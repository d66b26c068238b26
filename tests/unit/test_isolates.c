// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/isolates and version_labels: the user-script rule on the names real
 * workerd and node log, version ids against sha256sum, duplicates, labels,
 * matching, placeholders, the JS-frame fallback, logs that grow, and a
 * real node run with a worker thread.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "user/attribute/isolates.h"
#include "user/attribute/version_labels.h"
#include "symbolize/v8log.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-isolates.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_str(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, len = 0, n;
	char *buf = malloc(cap + 1);

	assert_non_null(f);
	assert_non_null(buf);
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static bool have(const char *cmd)
{
	char buf[128];

	snprintf(buf, sizeof(buf), "command -v %s >/dev/null 2>&1", cmd);
	return system(buf) == 0;
}

/*
 * The independent computation: sh's printf '%s\0%s\0' over (name, source)
 * pairs, in the order given, into a file, and sha256sum of that file.
 */
static void shell_version(char out[SHA256_HEX_LEN], const char *const *pairs)
{
	char file[128], line[256];
	const char *argv[64];
	int fds[2], status, n = 0;
	ssize_t got;
	size_t len = 0;
	pid_t pid;

	snprintf(file, sizeof(file), "%s/version-input", tmpdir);
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = "f=$1; shift; printf '%s\\0%s\\0' \"$@\" > \"$f\" && sha256sum \"$f\"";
	argv[n++] = "sh";
	argv[n++] = file;
	while (*pairs && n < 62)
		argv[n++] = *pairs++;
	argv[n] = NULL;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execvp("sh", (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while ((got = read(fds[0], line + len, sizeof(line) - 1 - len)) > 0)
		len += (size_t)got;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(len >= 64);
	memcpy(out, line, 64);
	out[64] = '\0';
}

#define SKIP_WITHOUT_SHA256SUM()                                                  \
	do {                                                                      \
		if (!have("sha256sum")) {                                         \
			print_message("sha256sum not found: comparison skipped\n"); \
			skip();                                                   \
		}                                                                 \
	} while (0)

/* ------------------------------------------------------------------ */

/* Every name below was seen in real code logs (docs/attribution.md). */
static void test_user_script_rule(void **state)
{
	static const char *const runtime[] = {
		/* workerd 2026-11 (V8 15.8), demo and nodejs_compat workers */
		"wasm-instantiate-shim.js",
		"workerd:per-isolate/primordials",
		"workerd:per-isolate/main",
		"workerd:per-isolate/serialization",
		"workerd:per-isolate/dom-exception",
		"node:buffer",
		"cloudflare:workers",
		"node-internal:internal_buffer",
		"node-internal:crypto_util",
		/* in workerd's binary */
		"cloudflare-internal:sockets",
		"pyodide-internal:python",
		"internal:unsafe-eval",
		"/workerd/kv.js",
		/* node 20 */
		"node:internal/bootstrap/realm",
		"node:internal/per_context/primordials",
		"node:internal/main/worker_thread",
		"node:worker_threads",
		"node:fs",
		"[eval]-wrapper",
		"[worker eval]-wrapper",
		"<unknown>",
		"",
		/* node < 16 */
		"internal/bootstrap/node.js",
	};
	static const char *const user[] = {
		"alpha.js",
		"beta.js",
		"gamma.js",
		"lib/util.js",
		"/srv/isoreg-node/app/main.js",
		"file:///srv/isoreg-node/app/esm.mjs",
		"[eval]",
		"[worker eval]",
		"evalmachine.<anonymous>",
		"node-compat.js",
		"my-internal.js",
		"x-internal/y.js",
		"src/internal/util.js",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++)
		if (isolate__is_user_script(runtime[i]))
			fail_msg("'%s' taken for a user script", runtime[i]);
	for (i = 0; i < sizeof(user) / sizeof(user[0]); i++)
		if (!isolate__is_user_script(user[i]))
			fail_msg("'%s' taken for a runtime script", user[i]);
	assert_false(isolate__is_user_script(NULL));
}

static void test_script_matches(void **state)
{
	(void)state;
	assert_true(isolate__script_matches("alpha.js", "alpha.js"));
	assert_true(isolate__script_matches("/srv/app/main.js", "main.js"));
	assert_true(isolate__script_matches("/srv/app/main.js", "app/main.js"));
	assert_true(isolate__script_matches("/srv/app/main.js", "/srv/app/main.js"));
	assert_true(isolate__script_matches("file:///srv/app/main.js", "main.js"));
	assert_true(isolate__script_matches("file:///srv/app/main.js", "/srv/app/main.js"));
	assert_true(isolate__script_matches("lib/util.js", "util.js"));
	assert_false(isolate__script_matches("/srv/app/main.js", "ain.js"));
	/* without the extension (issue 14: --script index for index.js) */
	assert_true(isolate__script_matches("/srv/app/main.js", "main"));
	assert_true(isolate__script_matches("index.js", "index"));
	assert_true(isolate__script_matches("file:///srv/app/esm.mjs", "app/esm"));
	assert_false(isolate__script_matches("/srv/app/main.js", "ain"));
	assert_false(isolate__script_matches("/srv/app.d/main", "app"));
	assert_false(isolate__script_matches(".hidden", ""));
	assert_false(isolate__script_matches("lib/.js", "lib/"));
	assert_false(isolate__script_matches("main.js", "/main.js"));
	assert_false(isolate__script_matches("main.js", ""));
	assert_false(isolate__script_matches(NULL, "x"));
}

/* ------------------------------------------------------------------ */

static void test_version_id(void **state)
{
	/* sources with NUL-free oddities: newlines, commas, '%', '\', UTF-8 */
	const char *names[] = { "lib/util.js", "alpha.js", "beta.js" };
	const char *srcs[] = {
		"export function helper(n) { return n * 7; }\n",
		"// Demo worker \"alpha\"\nexport default { fetch() { return 1, 2 } };\n",
		"const s = '%s \\x2C \xc3\xa9';\n",
	};
	size_t lens[3];
	const char *sorted[] = { "alpha.js", srcs[1], "beta.js", srcs[2], "lib/util.js", srcs[0],
				 NULL };
	const char *perm_names[3], *perm_srcs[3];
	size_t perm_lens[3];
	static const int perms[6][3] = { { 0, 1, 2 }, { 0, 2, 1 }, { 1, 0, 2 },
					 { 1, 2, 0 }, { 2, 0, 1 }, { 2, 1, 0 } };
	char expect[SHA256_HEX_LEN], got[SHA256_HEX_LEN];
	int p, i;

	(void)state;
	SKIP_WITHOUT_SHA256SUM();
	for (i = 0; i < 3; i++)
		lens[i] = strlen(srcs[i]);
	shell_version(expect, sorted);
	/* order independence: every permutation gives the same id */
	for (p = 0; p < 6; p++) {
		for (i = 0; i < 3; i++) {
			perm_names[i] = names[perms[p][i]];
			perm_srcs[i] = srcs[perms[p][i]];
			perm_lens[i] = lens[perms[p][i]];
		}
		assert_int_equal(isolate__version_id(perm_names, perm_srcs, perm_lens, 3, got), 0);
		assert_string_equal(got, expect);
	}

	/* one script, NULL source = empty */
	{
		const char *one[] = { "alpha.js", "", NULL };
		const char *n1[] = { "alpha.js" };
		const char *s1[] = { NULL };
		size_t l1[] = { 99 };

		shell_version(expect, one);
		assert_int_equal(isolate__version_id(n1, s1, l1, 1, got), 0);
		assert_string_equal(got, expect);
	}
	/* nothing: SHA-256 of no bytes */
	assert_int_equal(isolate__version_id(NULL, NULL, NULL, 0, got), 0);
	assert_string_equal(got,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	{
		const char *bad[] = { NULL };

		assert_int_equal(isolate__version_id(bad, NULL, NULL, 1, got), -EINVAL);
	}
}

/* Same name and source twice counts once; same name, two sources: both, ordered by source. */
static void test_version_duplicates(void **state)
{
	const char *n[] = { "a.js", "b.js", "a.js" };
	const char *s[] = { "one", "two", "one" };
	const char *s2[] = { "one", "two", "0ne" };
	size_t l[] = { 3, 3, 3 };
	const char *once[] = { "a.js", "one", "b.js", "two", NULL };
	const char *both[] = { "a.js", "0ne", "a.js", "one", "b.js", "two", NULL };
	const char *prefix_src_n[] = { "a.js", "a.js" };
	const char *prefix_src_s[] = { "abc", "ab" };
	size_t prefix_src_l[] = { 3, 2 };
	const char *prefix_order[] = { "a.js", "ab", "a.js", "abc", NULL };
	char expect[SHA256_HEX_LEN], got[SHA256_HEX_LEN];

	(void)state;
	SKIP_WITHOUT_SHA256SUM();
	shell_version(expect, once);
	assert_int_equal(isolate__version_id(n, s, l, 3, got), 0);
	assert_string_equal(got, expect);
	assert_int_equal(isolate__version_id(n, s, l, 2, got), 0);
	assert_string_equal(got, expect);

	shell_version(expect, both);
	assert_int_equal(isolate__version_id(n, s2, l, 3, got), 0);
	assert_string_equal(got, expect);

	/* a source that is a prefix of another sorts first */
	shell_version(expect, prefix_order);
	assert_int_equal(isolate__version_id(prefix_src_n, prefix_src_s, prefix_src_l, 2, got), 0);
	assert_string_equal(got, expect);
}

static int match(struct isolate_registry *reg, const char *script, const char *version,
		 const struct isolate_info **out, size_t max)
{
	return isolate_registry__match(reg, script, version, NULL, NULL, out, max);
}

struct executed_set {
	const struct isolate_info *yes[4];
	int n;
};

static bool executed(const struct isolate_info *info, void *ctx)
{
	const struct executed_set *set = ctx;
	int i;

	for (i = 0; i < set->n; i++)
		if (set->yes[i] == info)
			return true;
	return false;
}

static int match_latest(struct isolate_registry *reg, const char *script,
			struct executed_set *ex, const struct isolate_info **out)
{
	return isolate_registry__match(reg, script, "latest", executed, ex, out, 8);
}

/* ------------------------------------------------------------------ */
/* code log fixtures, in the shape workerd writes them */

#define WD_HEAD                                                                 \
	"v8-version,15,8,62,5,0\n"                                              \
	"v8-platform,linux,linux\n"                                             \
	"script-source,3,wasm-instantiate-shim.js,"                             \
	"// Copyright (c) 2026 Cloudflare\\x2C Inc.\\n(function (r) {})\n"       \
	"script-source,4,workerd:per-isolate/primordials,"                      \
	"\"use strict\";\\n// This is the FIRST script\n"                        \
	"script-source,5,workerd:per-isolate/main,"                             \
	"'use strict';\\nObject.defineProperty(exports)\n"                      \
	"code-creation,Builtin,2,1532,0x55d5c0a1b2c0,2272,ArrayPrototypePush\n"

#define ALPHA_TAIL_LOG "Alpha(n) {\\n  return n < 2 ? n : fibAlpha(n - 1)\\x2C 0;\\n}\\n"
#define ALPHA_SRC_LOG "function fib" ALPHA_TAIL_LOG
#define ALPHA_SRC "function fibAlpha(n) {\n  return n < 2 ? n : fibAlpha(n - 1), 0;\n}\n"
#define FIB_CODE \
	"code-creation,JS,12,98231,0x7f3a1c204c40,420,fibAlpha alpha.js:1:13,0x2d7e0a1b2c81,~\n"
#define UTIL_SRC_LOG "export function helper(n) { return n * 7; }\\n"
#define UTIL_SRC "export function helper(n) { return n * 7; }\n"

static void log_path(char *buf, size_t len, uint64_t isolate, int pid)
{
	snprintf(buf, len, "%s/isolate-0x%llx-%d-v8.log", tmpdir, (unsigned long long)isolate, pid);
}

static void add_fixture(struct isolate_registry *reg, uint64_t isolate, int pid, const char *text,
			char *path, size_t plen)
{
	log_path(path, plen, isolate, pid);
	write_str(path, "w", text);
	assert_true(isolate_registry__add_log(reg, path) >= 0);
}

static void test_code_log(void **state)
{
	const char *expect_pairs[] = { "alpha.js", ALPHA_SRC, "lib/util.js", UTIL_SRC, NULL };
	struct isolate_registry *reg = isolate_registry__new();
	char path[256], expect[SHA256_HEX_LEN];
	const struct isolate_info *info;

	(void)state;
	SKIP_WITHOUT_SHA256SUM();
	assert_non_null(reg);
	add_fixture(reg, 0x738ebfd4c000, 1313,
		    WD_HEAD
		    "script-source,8,alpha.js," ALPHA_SRC_LOG "\n"
		    FIB_CODE
		    "script-source,9,lib/util.js," UTIL_SRC_LOG "\n"
		    /* the same module logged again under another id: counted once */
		    "script-source,10,alpha.js," ALPHA_SRC_LOG "\n"
		    "script-source,11,<unknown>,1+1\n"
		    "script-source,12,node:buffer,export {}\n",
		    path, sizeof(path));
	info = isolate_registry__find(reg, 1313, 0x738ebfd4c000);
	assert_non_null(info);
	assert_int_equal(info->pid, 1313);
	assert_true(info->isolate == 0x738ebfd4c000ULL);
	assert_true(info->has_code_log);
	assert_string_equal(info->code_log_path, path);
	assert_string_equal(info->v8_version, "15.8.62.5");
	assert_int_equal(info->nr_scripts, 2);
	assert_string_equal(info->scripts[0], "alpha.js");
	assert_string_equal(info->scripts[1], "lib/util.js");
	assert_int_equal(info->nr_internal, 5);
	assert_string_equal(info->name, "alpha.js");
	assert_null(info->service_name);
	assert_null(info->label);
	assert_true(info->created_ns > 0);

	shell_version(expect, expect_pairs);
	assert_string_equal(info->version_full, expect);
	assert_memory_equal(info->version, expect, 12);
	assert_int_equal(strlen(info->version), 12);

	/* a containerized runtime: the name has its namespace pid, samples the host's */
	log_path(path, sizeof(path), 0x738ebfd4c000, 7);
	write_str(path, "w", "script-source,8,alpha.js," ALPHA_SRC_LOG "\n");
	assert_true(isolate_registry__add_log_pid(reg, 4242, path, NULL) > 0);
	assert_null(isolate_registry__find(reg, 7, 0x738ebfd4c000));
	info = isolate_registry__find(reg, 4242, 0x738ebfd4c000);
	assert_non_null(info);
	assert_string_equal(info->code_log_path, path);
	assert_string_equal(info->name, "alpha.js");
	assert_true(isolate_registry__refresh(reg) == 0);

	/* a name that is not a per-isolate log */
	snprintf(path, sizeof(path), "%s/v8.log", tmpdir);
	write_str(path, "w", "v8-version,1,2,3,4,0\n");
	assert_int_equal(isolate_registry__add_log(reg, path), -EINVAL);
	log_path(path, sizeof(path), 0x99, 1);
	assert_int_equal(isolate_registry__add_log(reg, path), -ENOENT);
	assert_null(isolate_registry__find(reg, 1, 0x99));
	assert_int_equal(errno, ENOENT);
	isolate_registry__free(reg);
}

/*
 * Without a code log, a version from the scripts' own files: shown,
 * labelled and matched like a code log's; cleared when a later window
 * says it no longer holds; kept by a log with no user script; and a code
 * log with user scripts always wins.
 */
static void test_files_version(void **state)
{
	const char *names[] = { "alpha.js" }, *srcs[] = { ALPHA_SRC };
	size_t lens[] = { strlen(ALPHA_SRC) };
	struct isolate_registry *reg = isolate_registry__new();
	char hex[SHA256_HEX_LEN], upper[SHA256_HEX_LEN], path[256], labels[256], err[128];
	const struct isolate_info *info, *out[2];

	(void)state;
	assert_non_null(reg);
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, hex), 0);
	assert_int_equal(isolate_registry__note_script(reg, 7, 0x1000, "alpha.js"), 0);
	info = isolate_registry__find(reg, 7, 0x1000);
	assert_non_null(info);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_NONE);
	assert_null(isolate_version_from__str(info->version_from));
	assert_null(info->version_why);

	/* none, and why */
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, NULL, "no file"), 0);
	assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
	assert_string_equal(info->version_why, "no file");
	assert_int_equal(isolate_registry__match(reg, "alpha.js", "unknown", NULL, NULL, out, 2),
			 1);

	/* an id, in lowercase as code logs' are */
	for (size_t i = 0; i < SHA256_HEX_LEN; i++)
		upper[i] = (char)toupper((unsigned char)hex[i]);
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, upper, "ignored"), 0);
	assert_string_equal(info->version_full, hex);
	assert_memory_equal(info->version, hex, ISOLATE_VERSION_LEN);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_FILES);
	assert_string_equal(isolate_version_from__str(info->version_from), "files");
	assert_null(info->version_why);
	assert_int_equal(isolate_registry__match(reg, "alpha", "unknown", NULL, NULL, out, 2), 0);
	upper[8] = '\0';
	assert_int_equal(isolate_registry__match(reg, "alpha", upper, NULL, NULL, out, 2), 1);
	snprintf(labels, sizeof(labels), "%s/labels", tmpdir);
	{
		char line[128];

		snprintf(line, sizeof(line), "alpha.js %.12s deploy-7\n", hex);
		write_str(labels, "w", line);
	}
	assert_int_equal(isolate_registry__load_labels(reg, labels, err, sizeof(err)), 1);
	assert_string_equal(info->label, "deploy-7");

	/* malformed ids are refused, the id kept */
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, "abc", NULL), -EINVAL);
	upper[8] = 'x';
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, upper, NULL), -EINVAL);
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0, hex, NULL), -EINVAL);
	assert_string_equal(info->version_full, hex);

	/* a later window: no longer one file */
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, NULL, "two scripts"),
			 0);
	assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_NONE);
	assert_null(info->label);
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, hex, NULL), 0);

	/* node's --perf-basic-prof writes a log with no user script: the id stays */
	add_fixture(reg, 0x1000, 7, "v8-version,11,3,244,8,0\nscript-source,4,node:fs,x\n", path,
		    sizeof(path));
	assert_true(info->has_code_log);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_FILES);
	assert_string_equal(info->version_full, hex);

	/* the log grows a user script: its id, and files can no longer change it */
	write_str(path, "a", "script-source,8,alpha.js," ALPHA_SRC_LOG "\nscript-source,9,b.js,1\n");
	assert_true(isolate_registry__refresh(reg) == 0);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_CODE_LOG);
	assert_string_equal(isolate_version_from__str(info->version_from), "code_log");
	assert_string_not_equal(info->version_full, hex);
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, hex, NULL), 0);
	assert_int_equal(isolate_registry__set_files_version(reg, 7, 0x1000, NULL, "x"), 0);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_CODE_LOG);
	assert_string_not_equal(info->version_full, hex);
	assert_null(info->version_why);
	isolate_registry__free(reg);
}

/* The entry script (first logged) names the isolate, not the first in order. */
static void test_entry_script_name(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *info;
	char path[256];

	(void)state;
	assert_non_null(reg);
	add_fixture(reg, 0x1000, 2000,
		    "script-source,70,node:internal/main/run_main_module,x\n"
		    "script-source,81,/srv/app/main.js,require('./lib.js')\n"
		    "script-source,108,/srv/app/lib.js,exports.sq = 1\n",
		    path, sizeof(path));
	info = isolate_registry__find(reg, 2000, 0x1000);
	assert_non_null(info);
	assert_string_equal(info->scripts[0], "/srv/app/lib.js");
	assert_string_equal(info->name, "/srv/app/main.js");
	isolate_registry__free(reg);
}

/* A log with only runtime scripts: no version; a service name shows instead. */
static void test_no_user_scripts_and_service(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *info;
	char path[256];

	(void)state;
	assert_non_null(reg);
	add_fixture(reg, 0xabc000, 42, WD_HEAD, path, sizeof(path));
	info = isolate_registry__find(reg, 42, 0xabc000);
	assert_non_null(info);
	assert_string_equal(info->version, "unknown");
	assert_string_equal(info->version_full, "");
	assert_int_equal(info->nr_scripts, 0);
	assert_int_equal(info->nr_internal, 3);
	assert_string_equal(info->name, "isolate-0xabc000");

	assert_int_equal(isolate_registry__set_service_name(reg, 42, 0xabc000, "alpha"), 0);
	assert_string_equal(info->name, "alpha");
	assert_string_equal(info->service_name, "alpha");
	assert_int_equal(isolate_registry__set_service_name(reg, 42, 0xabc000, NULL), 0);
	assert_string_equal(info->name, "isolate-0xabc000");
	assert_null(info->service_name);
	assert_int_equal(isolate_registry__set_service_name(reg, 42, 0, "x"), -EINVAL);
	isolate_registry__free(reg);
}

/* ------------------------------------------------------------------ */

static void test_incremental(void **state)
{
	const char *v1_pairs[] = { "alpha.js", ALPHA_SRC, NULL };
	const char *v2_pairs[] = { "alpha.js", ALPHA_SRC, "lib/util.js", UTIL_SRC, NULL };
	struct isolate_registry *reg = isolate_registry__new();
	char path[256], v1[SHA256_HEX_LEN], v2[SHA256_HEX_LEN];
	const struct isolate_info *info;
	const char *const *old_scripts;
	const char *old_name;

	(void)state;
	SKIP_WITHOUT_SHA256SUM();
	shell_version(v1, v1_pairs);
	shell_version(v2, v2_pairs);
	assert_non_null(reg);
	/* bootstrap only, and half a line that must wait */
	add_fixture(reg, 0x5000, 77, WD_HEAD "script-source,8,alpha.js,function fib", path,
		    sizeof(path));
	info = isolate_registry__find(reg, 77, 0x5000);
	assert_non_null(info);
	assert_string_equal(info->version, "unknown");
	assert_int_equal(info->nr_scripts, 0);
	assert_string_equal(info->name, "isolate-0x5000");

	write_str(path, "a", ALPHA_TAIL_LOG "\n");
	assert_int_equal(isolate_registry__refresh(reg), 0);
	assert_ptr_equal(isolate_registry__find(reg, 77, 0x5000), info);
	assert_string_equal(info->version_full, v1);
	assert_string_equal(info->name, "alpha.js");
	assert_int_equal(info->nr_scripts, 1);
	old_scripts = info->scripts;
	old_name = info->name;

	/* code only: nothing changes */
	write_str(path, "a", FIB_CODE);
	assert_true(isolate_registry__add_log(reg, path) >= 1);
	assert_ptr_equal(info->scripts, old_scripts);
	assert_string_equal(info->version_full, v1);
	/* an eval'd script (unnamed): counted as left out, nothing else moves */
	write_str(path, "a", "script-source,20,<unknown>,1+1\n");
	assert_int_equal(isolate_registry__refresh(reg), 0);
	assert_ptr_equal(info->scripts, old_scripts);
	assert_int_equal(info->nr_internal, 4);
	assert_string_equal(info->version_full, v1);

	/* a new module: new version; what was handed out stays readable */
	write_str(path, "a", "script-source,9,lib/util.js," UTIL_SRC_LOG "\n");
	assert_int_equal(isolate_registry__refresh(reg), 0);
	assert_string_equal(info->version_full, v2);
	assert_int_equal(info->nr_scripts, 2);
	assert_string_equal(info->scripts[1], "lib/util.js");
	assert_string_equal(old_scripts[0], "alpha.js");
	assert_string_equal(old_name, "alpha.js");

	/* rewritten from scratch (another run): starts over */
	unlink(path);
	write_str(path, "w", WD_HEAD);
	assert_int_equal(isolate_registry__refresh(reg), 0);
	assert_string_equal(info->version, "unknown");
	assert_int_equal(info->nr_scripts, 0);

	/* file gone: what was read stays, refresh does not fail */
	unlink(path);
	assert_int_equal(isolate_registry__refresh(reg), 0);
	assert_int_equal(isolate_registry__add_log(reg, path), -ENOENT);
	assert_int_equal(info->nr_internal, 3);
	isolate_registry__free(reg);
}

/* ------------------------------------------------------------------ */

static void test_placeholder(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *info, *again, *const *list;
	size_t nr, i;

	(void)state;
	assert_non_null(reg);
	assert_null(isolate_registry__find(reg, 5, 0x1234));
	assert_int_equal(errno, ENOENT);
	info = isolate_registry__lookup(reg, 5, 0x1234);
	assert_non_null(info);
	assert_string_equal(info->name, "isolate-0x1234");
	assert_string_equal(info->version, "unknown");
	assert_string_equal(info->version_full, "");
	assert_false(info->has_code_log);
	assert_null(info->code_log_path);
	assert_null(info->label);
	assert_int_equal(info->nr_scripts, 0);
	assert_non_null(info->scripts);
	assert_true(info->created_ns == 0);
	again = isolate_registry__lookup(reg, 5, 0x1234);
	assert_ptr_equal(info, again);
	assert_ptr_equal(isolate_registry__find(reg, 5, 0x1234), info);
	assert_null(isolate_registry__lookup(reg, 5, 0));
	assert_int_equal(errno, EINVAL);

	/* many isolates: pointers stay put while the table grows; list is ordered */
	for (i = 0; i < 5000; i++) {
		uint64_t iso = 0x10000 + i * 0x1000;

		assert_non_null(isolate_registry__lookup(reg, (pid_t)(i % 7), iso));
	}
	assert_ptr_equal(isolate_registry__lookup(reg, 5, 0x1234), info);
	assert_string_equal(info->name, "isolate-0x1234");
	list = isolate_registry__list(reg, &nr);
	assert_non_null(list);
	assert_int_equal(nr, 5001);
	for (i = 1; i < nr; i++) {
		const struct isolate_info *x = list[i - 1], *y = list[i];

		assert_true(x->pid < y->pid || (x->pid == y->pid && x->isolate < y->isolate));
	}
	for (i = 0; i < 5000; i += 97) {
		const struct isolate_info *x = isolate_registry__find(reg, (pid_t)(i % 7),
								      0x10000 + i * 0x1000);

		assert_non_null(x);
		assert_true(x->isolate == 0x10000 + i * 0x1000);
	}
	isolate_registry__free(reg);
}

/* A process that exited is forgotten, log and all; the others are found as before. */
static void test_forget(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *const *list;
	char path[256];
	size_t nr, i;

	(void)state;
	assert_non_null(reg);
	add_fixture(reg, 0x738ebfd4c000, 1313,
		    WD_HEAD "script-source,8,alpha.js," ALPHA_SRC_LOG "\n" FIB_CODE,
		    path, sizeof(path));
	assert_non_null(isolate_registry__find(reg, 1313, 0x738ebfd4c000));
	for (i = 0; i < 300; i++)
		assert_non_null(isolate_registry__lookup(reg, (pid_t)(i % 3 + 1312),
							 0x10000 + i * 0x1000));
	assert_non_null(isolate_registry__list(reg, &nr));
	assert_int_equal(nr, 301);

	isolate_registry__forget(reg, 1313);
	assert_null(isolate_registry__find(reg, 1313, 0x738ebfd4c000));
	list = isolate_registry__list(reg, &nr);
	assert_non_null(list);
	assert_int_equal(nr, 200);
	for (i = 0; i < nr; i++)
		assert_int_not_equal(list[i]->pid, 1313);
	for (i = 0; i < 300; i++) {
		pid_t pid = (pid_t)(i % 3 + 1312);
		const struct isolate_info *x = isolate_registry__find(reg, pid, 0x10000 + i * 0x1000);

		if (pid == 1313) {
			assert_null(x);
		} else {
			assert_non_null(x);
			assert_true(x->isolate == 0x10000 + i * 0x1000);
		}
	}
	/* a pid it never knew, twice: nothing changes */
	isolate_registry__forget(reg, 77);
	isolate_registry__forget(reg, 1313);
	assert_non_null(isolate_registry__list(reg, &nr));
	assert_int_equal(nr, 200);
	/* the pid again (reused): a new entry, from nothing */
	assert_non_null(isolate_registry__lookup(reg, 1313, 0x738ebfd4c000));
	assert_string_equal(isolate_registry__find(reg, 1313, 0x738ebfd4c000)->name,
			    "isolate-0x738ebfd4c000");
	isolate_registry__free(reg);
}

/* No code log: script names from JS frames (perf map), version unknown; a log later wins. */
static void test_fallback(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *info;
	char path[256];

	(void)state;
	assert_non_null(reg);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000,
						       "node:internal/modules/cjs/loader"), 0);
	info = isolate_registry__find(reg, 300, 0x7000);
	assert_non_null(info);
	assert_string_equal(info->name, "isolate-0x7000");
	assert_int_equal(info->nr_internal, 1);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "/srv/app/worker.js"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "/srv/app/a.js"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "/srv/app/worker.js"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000,
						       "node:internal/modules/cjs/loader"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "node:fs"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "<unknown>"), 0);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, NULL), -EINVAL);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0, "x.js"), -EINVAL);
	assert_int_equal(info->nr_scripts, 2);
	assert_string_equal(info->scripts[0], "/srv/app/a.js");
	assert_string_equal(info->scripts[1], "/srv/app/worker.js");
	assert_int_equal(info->nr_internal, 3);
	assert_string_equal(info->name, "/srv/app/a.js");
	assert_string_equal(info->version, "unknown");
	assert_false(info->has_code_log);

	{
		const struct isolate_info *out[4];

		assert_int_equal(match(reg, "worker.js", NULL, out, 4), 1);
		assert_ptr_equal(out[0], info);
		assert_int_equal(match(reg, "worker.js", "unknown", out, 4), 1);
		assert_int_equal(match(reg, "worker.js", "latest", out, 4), 1);
	}

	/* many names, in any order: kept sorted */
	{
		char name[64];
		int i;

		for (i = 0; i < 300; i++) {
			snprintf(name, sizeof(name), "/srv/gen/m%03d.js", (i * 37) % 300);
			assert_int_equal(isolate_registry__note_script(reg, 301, 0x7000, name), 0);
		}
		info = isolate_registry__find(reg, 301, 0x7000);
		assert_int_equal(info->nr_scripts, 300);
		for (i = 1; i < 300; i++)
			assert_true(strcmp(info->scripts[i - 1], info->scripts[i]) < 0);
	}

	/* the code log arrives: it replaces what frames said */
	add_fixture(reg, 0x7000, 300,
		    "script-source,81,/srv/app/worker.js,work()\n"
		    "script-source,82,node:fs,x\n",
		    path, sizeof(path));
	info = isolate_registry__find(reg, 300, 0x7000);
	assert_true(info->has_code_log);
	assert_int_equal(info->nr_scripts, 1);
	assert_string_equal(info->scripts[0], "/srv/app/worker.js");
	assert_int_equal(info->nr_internal, 1);
	assert_int_equal(strlen(info->version), 12);
	assert_int_equal(isolate_registry__note_script(reg, 300, 0x7000, "/srv/app/other.js"), 0);
	assert_int_equal(info->nr_scripts, 1);
	isolate_registry__free(reg);
}

/* ------------------------------------------------------------------ */

static int load_labels_text(struct isolate_registry *reg, const char *text, char *err, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/labels", tmpdir);
	write_str(path, "w", text);
	return isolate_registry__load_labels(reg, path, err, len);
}

static void expect_label_error(struct isolate_registry *reg, const char *text, const char *msg)
{
	char err[256];

	err[0] = 'x';
	assert_int_equal(load_labels_text(reg, text, err, sizeof(err)), -EINVAL);
	if (!strstr(err, msg))
		fail_msg("labels error '%s', expected '%s'", err, msg);
}

static void test_labels(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *a, *b, *c;
	char path[256], err[256], upper[65], text[2048];
	size_t i;

	(void)state;
	assert_non_null(reg);
	add_fixture(reg, 0xa000, 10, WD_HEAD "script-source,8,alpha.js," ALPHA_SRC_LOG "\n", path,
		    sizeof(path));
	add_fixture(reg, 0xb000, 10, WD_HEAD "script-source,8,beta.js,let beta = 1;\n", path,
		    sizeof(path));
	add_fixture(reg, 0xc000, 11, "script-source,9,/srv/my app/main.js,main()\n", path,
		    sizeof(path));
	a = isolate_registry__find(reg, 10, 0xa000);
	b = isolate_registry__find(reg, 10, 0xb000);
	c = isolate_registry__find(reg, 11, 0xc000);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	for (i = 0; i < 64; i++)
		upper[i] = (char)toupper((unsigned char)a->version_full[i]);
	upper[64] = '\0';

	snprintf(text, sizeof(text),
		 "# deployment versions\n"
		 "\n"
		 "alpha.js %.12s v41\n"
		 "   alpha.js\t%.20s   2026-11-30T10:00Z   # longer prefix wins\n"
		 "beta  %.12s beta-7\n"		/* the service name */
		 "main.js %.12s should-not-match\n"
		 "my\\x20app/main.js %s app@3\n"
		 "beta %.12s beta-7\n",		/* the same again: fine */
		 upper, a->version_full, b->version_full, a->version_full, c->version_full,
		 b->version_full);
	assert_int_equal(load_labels_text(reg, text, err, sizeof(err)), 5);
	assert_string_equal(a->label, "2026-11-30T10:00Z");
	assert_null(b->label);	/* "beta" is no script of it, yet */
	assert_int_equal(isolate_registry__set_service_name(reg, 10, 0xb000, "beta"), 0);
	assert_string_equal(b->label, "beta-7");
	assert_string_equal(c->label, "app@3");

	/* bad files: line numbers, and the labels before stay */
	expect_label_error(reg, "alpha.js 0123456789ab\n",
			   "line 1: expected SCRIPT VERSION_ID LABEL");
	expect_label_error(reg, "# c\n\nalpha.js 0123456789ab v1 extra\n", "line 3: expected");
	expect_label_error(reg, "alpha.js 0123456789a v1\n",
			   "line 1: version id '0123456789a' is not");
	expect_label_error(reg, "alpha.js 0123456789ag v1\n", "line 1: version id");
	expect_label_error(reg, "alpha.js 0123456789ab latest\n",
			   "line 1: label 'latest' is reserved");
	expect_label_error(reg, "alpha.js 0123456789ab unknown\n", "reserved");
	expect_label_error(reg, "a\\q.js 0123456789ab v1\n", "line 1: bad escape");
	expect_label_error(reg, "a\\x00.js 0123456789ab v1\n", "line 1: bad escape");
	expect_label_error(reg, "x 0123456789ab v1\nx 0123456789AB v2\n",
			   "line 2: x 0123456789ab: label 'v2' but line 1 says 'v1'");
	memset(text, 'a', 200);
	memcpy(text, "x 0123456789ab ", 15);
	text[200] = '\n';
	text[201] = '\0';
	expect_label_error(reg, text, "line 1: label longer than 128");
	assert_string_equal(a->label, "2026-11-30T10:00Z");
	assert_string_equal(c->label, "app@3");

	snprintf(path, sizeof(path), "%s/no-such-labels", tmpdir);
	assert_int_equal(isolate_registry__load_labels(reg, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "No such file"));

	/* an empty file drops every label */
	assert_int_equal(load_labels_text(reg, "# nothing\n", err, sizeof(err)), 0);
	assert_null(a->label);
	assert_null(b->label);
	isolate_registry__free(reg);
}

/* The parser on its own: sorted by script then id, repeats merged, the best fit. */
static const char *strdup_intern(void *ctx, const char *s)
{
	char **pool = ctx;
	size_t i;

	for (i = 0; pool[i]; i++)
		;
	assert_true(i < 15);
	pool[i] = strdup(s);
	return pool[i];
}

static void test_version_labels(void **state)
{
	static const char text[] =
		"b.js 0123456789abcdef v2\n"
		"a.js 0123456789AB v1   # a comment\n"
		"\n"
		"b.js 0123456789ab v3\n"
		"b.js 0123456789abcdef v2\n"
		"app/b.js 0123456789abcdef00 v4\n";
	const char full[] = "0123456789abcdef000000000000000000000000000000000000000000000000";
	const struct version_label *best = NULL;
	struct version_labels vl;
	char *pool[16] = { 0 }, err[128];
	FILE *f;
	size_t i;

	(void)state;
	f = fmemopen((void *)text, sizeof(text) - 1, "r");
	assert_non_null(f);
	assert_int_equal(version_labels__read(f, strdup_intern, pool, &vl, err, sizeof(err)), 0);
	fclose(f);
	assert_int_equal(vl.nr, 4);
	assert_string_equal(vl.v[0].script, "a.js");
	assert_string_equal(vl.v[0].prefix, "0123456789ab");
	assert_int_equal(vl.v[0].line, 2);
	assert_string_equal(vl.v[1].script, "app/b.js");
	assert_string_equal(vl.v[2].label, "v3");
	assert_string_equal(vl.v[3].label, "v2");
	assert_int_equal(vl.v[3].line, 1);
	assert_true(version_labels__has(&vl, "v4"));
	assert_false(version_labels__has(&vl, "v5"));

	/* /srv/app/b.js answers to b.js and app/b.js: the longest id wins */
	version_labels__best(&vl, "/srv/app/b.js", full, &best);
	assert_non_null(best);
	assert_string_equal(best->label, "v4");
	best = NULL;
	version_labels__best(&vl, "b.js", full, &best);
	assert_string_equal(best->label, "v2");
	best = NULL;
	version_labels__best(&vl, "c.js", full, &best);
	assert_null(best);
	version_labels__release(&vl);
	assert_null(vl.v);
	for (i = 0; pool[i]; i++)
		free(pool[i]);
}

/* ------------------------------------------------------------------ */


static void test_match(void **state)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *v1, *v2, *v2b, *beta, *out[8];
	const char *const *names;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	struct executed_set ex = { { NULL }, 0 };
	char path[256], err[256], text[512], pfx[8];
	size_t nr;

	(void)state;
	assert_non_null(reg);
	/*
	 * Created in this order: alpha v2 in pid 21 first, then alpha v1 in
	 * pid 20, then alpha v2 again in pid 22; added in another order.
	 */
	log_path(path, sizeof(path), 0x2000, 21);
	write_str(path, "w", "script-source,8,alpha.js,v2()\n");
	nanosleep(&pause, NULL);
	log_path(path, sizeof(path), 0x1000, 20);
	write_str(path, "w", "script-source,8,alpha.js,v1()\nscript-source,9,lib/util.js,u()\n");
	nanosleep(&pause, NULL);
	log_path(path, sizeof(path), 0x3000, 22);
	write_str(path, "w", "script-source,8,alpha.js,v2()\n");
	add_fixture(reg, 0x4000, 20, "script-source,8,beta.js,b()\n", path, sizeof(path));
	log_path(path, sizeof(path), 0x3000, 22);
	assert_true(isolate_registry__add_log(reg, path) >= 0);
	log_path(path, sizeof(path), 0x1000, 20);
	assert_true(isolate_registry__add_log(reg, path) >= 0);
	log_path(path, sizeof(path), 0x2000, 21);
	assert_true(isolate_registry__add_log(reg, path) >= 0);
	v1 = isolate_registry__find(reg, 20, 0x1000);
	v2 = isolate_registry__find(reg, 21, 0x2000);
	v2b = isolate_registry__find(reg, 22, 0x3000);
	beta = isolate_registry__find(reg, 20, 0x4000);
	assert_string_equal(v2->version_full, v2b->version_full);
	assert_string_not_equal(v1->version_full, v2->version_full);

	/* names: exact, trailing path, service name */
	assert_int_equal(match(reg, "alpha.js", NULL, out, 8), 3);
	assert_ptr_equal(out[0], v1);
	assert_ptr_equal(out[1], v2);
	assert_ptr_equal(out[2], v2b);
	assert_int_equal(match(reg, "util.js", NULL, out, 8), 1);
	assert_ptr_equal(out[0], v1);
	assert_int_equal(match(reg, "lib/util.js", NULL, out, 8), 1);
	assert_int_equal(match(reg, "ib/util.js", NULL, out, 8), 0);
	assert_int_equal(match(reg, "gamma.js", NULL, out, 8), 0);
	assert_int_equal(isolate_registry__set_service_name(reg, 20, 0x4000, "beta"), 0);
	assert_int_equal(match(reg, "beta", NULL, out, 8), 1);
	assert_ptr_equal(out[0], beta);
	assert_int_equal(match(reg, "beta.js", NULL, out, 8), 1);
	/* more than max: the count, and only max written */
	out[1] = NULL;
	assert_int_equal(match(reg, "alpha.js", NULL, out, 1), 3);
	assert_ptr_equal(out[0], v1);
	assert_null(out[1]);
	assert_int_equal(match(reg, "alpha.js", NULL, NULL, 0), 3);

	/* version prefixes: 4+ hex, any case */
	memcpy(pfx, v2->version_full, 4);
	pfx[4] = '\0';
	if (strncmp(v1->version_full, pfx, 4)) {
		assert_int_equal(match(reg, "alpha.js", pfx, out, 8), 2);
		assert_ptr_equal(out[0], v2);
		assert_ptr_equal(out[1], v2b);
	}
	assert_int_equal(match(reg, "alpha.js", v1->version, out, 8), 1);
	assert_ptr_equal(out[0], v1);
	assert_int_equal(match(reg, "alpha.js", v1->version_full, out, 8), 1);
	snprintf(text, sizeof(text), "%.10s", v1->version_full);
	for (nr = 0; text[nr]; nr++)
		if (text[nr] >= 'a')
			text[nr] = (char)(text[nr] - 32);
	assert_int_equal(match(reg, "alpha.js", text, out, 8), 1);
	assert_int_equal(match(reg, "alpha.js", "abc", out, 8), -EINVAL);
	assert_int_equal(match(reg, "alpha.js", "", out, 8), -EINVAL);
	assert_int_equal(match(reg, "", NULL, out, 8), -EINVAL);
	assert_int_equal(match(reg, "alpha.js", "unknown", out, 8), 0);
	assert_int_equal(match(reg, "alpha.js", "v9", out, 8), 0);
	assert_int_equal(match(reg, "beta.js", v1->version, out, 8), 0);

	/* labels */
	snprintf(text, sizeof(text), "alpha.js %s v1\nalpha.js %.12s v2\nalpha.js %.16s ab\n",
		 v1->version_full, v2->version_full, v1->version_full);
	assert_int_equal(load_labels_text(reg, text, err, sizeof(err)), 3);
	assert_string_equal(v1->label, "v1");
	assert_string_equal(v2->label, "v2");
	assert_string_equal(v2b->label, "v2");
	assert_int_equal(match(reg, "alpha.js", "v2", out, 8), 2);
	assert_ptr_equal(out[0], v2);
	assert_int_equal(match(reg, "util.js", "v1", out, 8), 1);
	/* a short hex string that is a label is no error */
	assert_int_equal(match(reg, "alpha.js", "ab", out, 8), 0);

	/* latest: the most recently created among those that executed */
	assert_int_equal(match(reg, "alpha.js", "latest", out, 8), 1);
	if (v1->created_is_btime && v2->created_is_btime && v2b->created_is_btime) {
		assert_true(v2->created_ns < v1->created_ns);
		assert_true(v1->created_ns < v2b->created_ns);
		assert_ptr_equal(out[0], v2b);
		ex.yes[ex.n++] = v1;
		ex.yes[ex.n++] = v2;
		assert_int_equal(match_latest(reg, "alpha.js", &ex, out), 1);
		assert_ptr_equal(out[0], v1);
		ex.n = 0;
		ex.yes[ex.n++] = v2;
		assert_int_equal(match_latest(reg, "alpha.js", &ex, out), 1);
		assert_ptr_equal(out[0], v2);
	} else {
		print_message("no file birth times here: latest follows first-read order\n");
		assert_ptr_equal(out[0], v2);
	}
	ex.n = 0;
	ex.yes[ex.n++] = beta;
	assert_int_equal(match_latest(reg, "alpha.js", &ex, out), 0);
	assert_int_equal(match_latest(reg, "beta", &ex, out), 1);
	assert_ptr_equal(out[0], beta);

	/* names for an error message: placeholders left out */
	assert_non_null(isolate_registry__lookup(reg, 99, 0x9999));
	names = isolate_registry__names(reg, &nr);
	assert_non_null(names);
	assert_int_equal(nr, 4);
	assert_string_equal(names[0], "alpha.js");
	assert_string_equal(names[1], "beta");
	assert_string_equal(names[2], "beta.js");
	assert_string_equal(names[3], "lib/util.js");
	assert_null(names[4]);
	isolate_registry__free(reg);
}

/* ------------------------------------------------------------------ */
/* a real node: main script + module + worker thread, one log per isolate */

static const char node_main[] =
	"const { Worker } = require('worker_threads');\n"
	"const lib = require('./lib.js');\n"
	"function hot(n) { let s = 0; for (let i = 0; i < n; i++) s += lib.sq(i); return s; }\n"
	"console.log('main', hot(100000), new Function('a', 'return a * 2')(3));\n"
	"new Worker(__dirname + '/worker.js');\n";
static const char node_lib[] = "exports.sq = function sq(x) { return x * x; };\n";
static const char node_worker[] =
	"function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i % 7; return s; }\n"
	"console.log('worker', work(200000));\n";

static pid_t run_node(const char *dir, const char *script)
{
	char logfile[320];
	int status, devnull;
	pid_t pid;

	snprintf(logfile, sizeof(logfile), "--logfile=%s/v8.log", dir);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		if (chdir(dir) < 0)
			_exit(126);
		execlp("node", "node", "--log-code", "--log-source-code", "--logfile-per-isolate",
		       logfile, script, (char *)NULL);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return pid;
}

static void test_node_real(void **state)
{
	struct isolate_registry *reg;
	char dir[256], main_js[320], lib_js[320], worker_js[320];
	char main_v[SHA256_HEX_LEN], worker_v[SHA256_HEX_LEN];
	const struct isolate_info *const *list, *m = NULL, *w = NULL, *out[4];
	char **paths, *src;
	size_t nr, i;
	pid_t pid;

	(void)state;
	if (!have("node")) {
		print_message("node not found on PATH: real V8 output not checked\n");
		skip();
	}
	SKIP_WITHOUT_SHA256SUM();
	snprintf(dir, sizeof(dir), "%s/node", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(main_js, sizeof(main_js), "%s/main.js", dir);
	snprintf(lib_js, sizeof(lib_js), "%s/lib.js", dir);
	snprintf(worker_js, sizeof(worker_js), "%s/worker.js", dir);
	write_str(main_js, "w", node_main);
	write_str(lib_js, "w", node_lib);
	write_str(worker_js, "w", node_worker);
	pid = run_node(dir, main_js);

	paths = v8log__find(dir, pid, NULL);
	assert_non_null(paths);
	reg = isolate_registry__new();
	assert_non_null(reg);
	for (i = 0; paths[i]; i++)
		assert_true(isolate_registry__add_log(reg, paths[i]) > 0);
	v8log__find_free(paths);
	assert_int_equal(i, 2);

	list = isolate_registry__list(reg, &nr);
	assert_int_equal(nr, 2);
	for (i = 0; i < nr; i++) {
		assert_int_equal(list[i]->pid, pid);
		assert_true(list[i]->has_code_log);
		/* node's own scripts, dozens of them, are all left out */
		assert_true(list[i]->nr_internal > 20);
		if (list[i]->nr_scripts == 2)
			m = list[i];
		else if (list[i]->nr_scripts == 1)
			w = list[i];
	}
	assert_non_null(m);
	assert_non_null(w);
	assert_string_equal(m->scripts[0], lib_js);
	assert_string_equal(m->scripts[1], main_js);
	/* the entry point names it, though lib.js sorts first */
	assert_string_equal(m->name, main_js);
	assert_string_equal(w->scripts[0], worker_js);
	assert_string_equal(w->name, worker_js);
	assert_true(m->v8_version[0] != '\0');

	/* node logs CommonJS sources as the files: the id is over the files */
	{
		const char *mp[] = { lib_js, node_lib, main_js, node_main, NULL };
		const char *wp[] = { worker_js, node_worker, NULL };

		shell_version(main_v, mp);
		shell_version(worker_v, wp);
	}
	assert_string_equal(m->version_full, main_v);
	assert_string_equal(w->version_full, worker_v);
	src = read_all(main_js);
	assert_string_equal(src, node_main);
	free(src);

	assert_int_equal(match(reg, "main.js", NULL, out, 4), 1);
	assert_ptr_equal(out[0], m);
	assert_int_equal(match(reg, "lib.js", m->version, out, 4), 1);
	assert_int_equal(match(reg, "worker.js", "latest", out, 4), 1);
	assert_ptr_equal(out[0], w);
	assert_int_equal(match(reg, worker_js, m->version, out, 4), 0);
	isolate_registry__free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_script_rule),
		cmocka_unit_test(test_script_matches),
		cmocka_unit_test(test_version_id),
		cmocka_unit_test(test_version_duplicates),
		cmocka_unit_test(test_code_log),
		cmocka_unit_test(test_entry_script_name),
		cmocka_unit_test(test_files_version),
		cmocka_unit_test(test_no_user_scripts_and_service),
		cmocka_unit_test(test_incremental),
		cmocka_unit_test(test_placeholder),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_version_labels),
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_forget),
		cmocka_unit_test(test_node_real),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
