// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/node_script: node's command line and
 * NODE_OPTIONS, the scan that tells a single-file script, V8's script
 * names as files, and a process started as `node main.js` (this test
 * binary, re-executed under that command line in a temporary directory)
 * whose isolates get the version id of main.js, or the reason they do not.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/attribute/node_script.h"

#define CHILD_ENV "ISOPROF_TEST_NODE_SCRIPT_CHILD"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-node-script.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static int cmdline(const char *const *argv, const char **script)
{
	const char *why;
	size_t argc = 0;
	int rc;

	while (argv[argc])
		argc++;
	rc = node_script__parse_cmdline(argv, argc, script, &why);
	assert_true(rc ? why && !*script : !why && *script);
	return rc;
}

static void test_cmdline(void **state)
{
	const char *s;

	(void)state;
	assert_int_equal(cmdline((const char *[]){ "node", "app.js", "--x", NULL }, &s), 0);
	assert_string_equal(s, "app.js");
	/* V8's and node's flags, with and without a value word */
	assert_int_equal(cmdline((const char *[]){ "node", "--perf-basic-prof", "--perf_basic_prof",
						  "--max-old-space-size=64", "--inspect-port",
						  "9230", "--title", "api", "srv/app.js", NULL },
				 &s), 0);
	assert_string_equal(s, "srv/app.js");
	assert_int_equal(cmdline((const char *[]){ "node", "--", "-odd.js", NULL }, &s), 0);
	assert_string_equal(s, "-odd.js");
	/* code besides the script */
	assert_int_equal(cmdline((const char *[]){ "node", "-r", "./pre.js", "a.js", NULL }, &s),
			 -EXDEV);
	assert_int_equal(cmdline((const char *[]){ "node", "--require=./pre.js", "a.js", NULL }, &s),
			 -EXDEV);
	assert_int_equal(cmdline((const char *[]){ "node", "--import", "x", "a.mjs", NULL }, &s),
			 -EXDEV);
	assert_int_equal(cmdline((const char *[]){ "node", "--experimental_loader=x", "a.js", NULL },
				 &s), -EXDEV);
	assert_int_equal(cmdline((const char *[]){ "node", "--watch", "a.js", NULL }, &s), -EXDEV);
	assert_int_equal(cmdline((const char *[]){ "node", "--env-file=.env", "a.js", NULL }, &s),
			 -EXDEV);
	/* no script file */
	assert_int_equal(cmdline((const char *[]){ "node", NULL }, &s), -ENOENT);
	assert_int_equal(cmdline((const char *[]){ "node", "-e", "1", NULL }, &s), -ENOENT);
	assert_int_equal(cmdline((const char *[]){ "node", "--print=1", NULL }, &s), -ENOENT);
	assert_int_equal(cmdline((const char *[]){ "node", "-", NULL }, &s), -ENOENT);
	assert_int_equal(cmdline((const char *[]){ "node", "--", NULL }, &s), -ENOENT);
}

static int options(const char *o)
{
	const char *why;
	int rc = node_script__check_options(o, strlen(o), &why);

	assert_true(rc ? why != NULL : why == NULL);
	return rc;
}

static void test_node_options(void **state)
{
	(void)state;
	assert_int_equal(options(""), 0);
	assert_int_equal(options("  --max-old-space-size=4096 --enable-source-maps  "), 0);
	assert_int_equal(options("--title \"a b\""), 0);
	assert_int_equal(options("--require ./apm.js"), -EXDEV);
	assert_int_equal(options("--enable-source-maps -r ./apm.js"), -EXDEV);
	assert_int_equal(options("\"--import=./a b.mjs\""), -EXDEV);
	assert_int_equal(options("--experimental-loader=ts-node/esm"), -EXDEV);
	/* a quoted word is one, escapes and all; an unterminated one ends the value */
	assert_int_equal(options("--title \"x \\\" --require y\""), 0);
	assert_int_equal(options("--title \"unterminated"), 0);
}

static int scan(const char *text, char *why, size_t len)
{
	int rc = node_script__self_contained(text, strlen(text), why, len);

	assert_true(rc ? why[0] != '\0' : why[0] == '\0');
	return rc;
}

static void test_self_contained(void **state)
{
	static const char *const ok[] = {
		"#!/usr/bin/env node\n'use strict';\nconst fs = require('fs');\n"
		"const http = require( \"node:http\" );\nconst requireX = 1, myrequire = 2;\n"
		"// not required: Array.from('x')\nmodule.exports = { fs };\n",
		"import fs from 'node:fs';\nimport { cpus, totalmem as t } from \"os\";\n"
		"import * as path from 'path';\nimport 'util';\nimport def, { x } from 'fs';\n"
		"export default function f() { return import.meta.url; }\n"
		"export const y = Array.from('z');\n",
		"",
		"const s = 'é 😀';\n",
	};
	static const struct {
		const char *text, *why;
	} refused[] = {
		{ "const l = require('./lib');", "requires './lib'" },
		{ "const l = require(`fs`);", "no plain string" },
		{ "const n = 'fs'; require(n);", "no plain string" },
		{ "require.resolve('fs');", "require is used" },
		{ "const r = require; r('./x');", "require is used" },
		{ "require('fs", "no plain string" },
		{ "require('vm').runInThisContext('1', { filename: 'x.js' });", "requires 'vm'" },
		{ "require('node:module');", "requires 'node:module'" },
		{ "const m = await import('./x.mjs');", "import is used" },
		{ "import x from './x.js';", "imports './x.js'" },
		{ "import './side.js';", "imports './side.js'" },
		{ "import vm from 'node:vm';", "imports 'node:vm'" },
		{ "export * from './y.js';", "imports './y.js'" },
		{ "export { a } from \"./a.js\";", "imports './a.js'" },
		{ "// import stuff\nconst x = 1;", "static import" },
		{ "import { a } from b;", "static import" },
		{ "module.constructor._load('./x');", "_load" },
		{ "process.binding('fs');", "process.binding" },
		{ "process.dlopen(module, 'x.node');", "dlopen" },
		{ "const { createRequire } = m;", "createRequire" },
	};
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (scan(ok[i], why, sizeof(why)))
			fail_msg("refused ok[%zu]: %s", i, why);
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		assert_int_equal(scan(refused[i].text, why, sizeof(why)), -EXDEV);
		if (!strstr(why, refused[i].why))
			fail_msg("%s: '%s' does not say '%s'", refused[i].text, why, refused[i].why);
	}
	/* words run to the end of the text, or a NUL inside it */
	assert_int_equal(node_script__self_contained("require", 7, why, sizeof(why)), -EXDEV);
	assert_int_equal(node_script__self_contained("x\0require('./a')", 16, why, sizeof(why)),
			 -EXDEV);
}

static void test_names_and_paths(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(node_script__name_path("/srv/app.js", out, sizeof(out)), 0);
	assert_string_equal(out, "/srv/app.js");
	assert_int_equal(node_script__name_path("file:///srv/sp%20ace/e%25sm.mjs", out, sizeof(out)),
			 0);
	assert_string_equal(out, "/srv/sp ace/e%sm.mjs");
	assert_int_equal(node_script__name_path("file:///caf%C3%A9.mjs", out, sizeof(out)), 0);
	assert_string_equal(out, "/caf\xc3\xa9.mjs");
	assert_int_equal(node_script__name_path("file:///a%2Fb.mjs", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("file:///a%00.mjs", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("file:///a%zz.mjs", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("file:///a%2", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("file:///a.mjs?x=1", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("file://host/a.mjs", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("node:fs", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("[eval]", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("relative.js", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__name_path("/a/very/long/name/that/does/not/fit/in/the/"
						"buffer/given/here.js", out, 16), -ENAMETOOLONG);

	assert_int_equal(node_script__resolve("/srv", "app.js", out, sizeof(out)), 0);
	assert_string_equal(out, "/srv/app.js");
	assert_int_equal(node_script__resolve("/srv/x/", "../app/./a.js", out, sizeof(out)), 0);
	assert_string_equal(out, "/srv/app/a.js");
	assert_int_equal(node_script__resolve("/srv", "/abs//b/../c.js", out, sizeof(out)), 0);
	assert_string_equal(out, "/abs/c.js");
	assert_int_equal(node_script__resolve("/srv", "../../..", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	assert_int_equal(node_script__resolve("/", "a", out, sizeof(out)), 0);
	assert_string_equal(out, "/a");
	assert_int_equal(node_script__resolve("rel", "a", out, sizeof(out)), -EINVAL);
	assert_int_equal(node_script__resolve("/srv", "a-name-longer-than-the-buffer-given-to-it.js",
					      out, 16), -ENAMETOOLONG);
}

/* ---- a process under node's command line ---------------------------------- */

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* `node SCRIPT` in tmpdir, NODE_OPTIONS set when opts is not NULL. */
static pid_t start_node(const char *script, const char *opts)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (chdir(tmpdir) || setenv(CHILD_ENV, "1", 1) ||
		    (opts && setenv("NODE_OPTIONS", opts, 1)))
			_exit(127);
		execl("/proc/self/exe", "node", "--perf-basic-prof", script, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {
		char path[64], buf[64] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		f = fopen(path, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			fclose(f);
			if (n >= 5 && !memcmp(buf, "node\0", 5))
				return pid;
		}
		usleep(10000);
	}
	fail_msg("the child did not start");
	return -1;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void proc_of(struct discover_proc *p, pid_t pid)
{
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->runtime = DISCOVER_NODE;
	p->uid = getuid();
	p->uid_known = true;
	p->version = "v20.20.2";
}

static const char main_src[] =
	"#!/usr/bin/env node\n// caf\xc3\xa9 \xf0\x9f\x98\x80\r\nconst os = require('node:os');\n"
	"function hot(n) { return n < 2 ? n : hot(n - 1) + hot(n - 2); }\n";

static void test_process(void **state)
{
	char name[256], url[300], other[256], hex[SHA256_HEX_LEN];
	const char *names[1] = { name }, *srcs[1] = { main_src };
	size_t lens[1] = { strlen(main_src) };
	struct read_budget budget;
	struct isolate_registry *reg;
	const struct isolate_info *info;
	struct discover_proc p;
	pid_t pid;

	(void)state;
	put("main.js", main_src);
	put("two.js", "const l = require('./main');\n");
	snprintf(name, sizeof(name), "%s/main.js", tmpdir);
	snprintf(url, sizeof(url), "file://%s/main.js", tmpdir);
	snprintf(other, sizeof(other), "%s/two.js", tmpdir);
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, hex), 0);
	pid = start_node("./main.js", NULL);
	proc_of(&p, pid);
	reg = isolate_registry__new();
	assert_non_null(reg);
	read_budget__init(&budget, 1 << 20);

	/* frames naming the script; two scripts; another; a URL of it; none */
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x1000, name), 0);
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x2000, name), 0);
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x2000, other), 0);
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x3000, other), 0);
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x4000, url), 0);
	assert_int_equal(isolate_registry__note_script(reg, pid, 0x5000, "node:internal/x"), 0);
	/* another process's isolate is left alone */
	assert_int_equal(isolate_registry__note_script(reg, pid + 1, 0x1000, name), 0);
	assert_int_equal(node_script__version_isolates(reg, &p, &budget), 2);
	assert_true(budget.used == 2 * strlen(main_src));

	info = isolate_registry__find(reg, pid, 0x1000);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_FILES);
	assert_string_equal(info->version_full, hex);
	assert_null(info->version_why);
	info = isolate_registry__find(reg, pid, 0x2000);
	assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
	assert_non_null(strstr(info->version_why, "name 2 scripts"));
	info = isolate_registry__find(reg, pid, 0x3000);
	assert_non_null(strstr(info->version_why, "not the script node runs"));
	/* an ES module's name: its own id (the name is hashed), the same file */
	info = isolate_registry__find(reg, pid, 0x4000);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_FILES);
	assert_string_not_equal(info->version_full, hex);
	info = isolate_registry__find(reg, pid, 0x5000);
	assert_non_null(strstr(info->version_why, "name no script"));
	info = isolate_registry__find(reg, pid + 1, 0x1000);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_NONE);
	assert_null(info->version_why);

	/* changed after node read it: no longer what it runs */
	usleep(100000);
	put("main.js", main_src);
	assert_int_equal(node_script__version_isolates(reg, &p, &budget), 0);
	info = isolate_registry__find(reg, pid, 0x1000);
	assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
	assert_non_null(strstr(info->version_why, "changed since node started"));
	stop(pid);
	isolate_registry__free(reg);
}

/* Why a script, or its process, gives no id. */
static void test_process_refused(void **state)
{
	static const struct {
		const char *file, *text, *opts, *why;
	} cases[] = {
		{ "lib.js", "require('./other');\n", NULL, "may load other scripts: requires './other'" },
		{ "bom.js", "\xef\xbb\xbf" "1;\n", NULL, "byte order mark" },
		{ "bad.js", "'\xff';\n", NULL, "not UTF-8" },
		{ "ok.js", "1;\n", "--enable-source-maps --require ./apm.js", "NODE_OPTIONS" },
		{ "gone.js", NULL, NULL, "gone.js: " },
	};
	struct isolate_registry *reg;
	const struct isolate_info *info;
	struct discover_proc p;
	char name[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pid_t pid;

		if (cases[i].text)
			put(cases[i].file, cases[i].text);
		pid = start_node(cases[i].file, cases[i].opts);
		proc_of(&p, pid);
		reg = isolate_registry__new();
		assert_non_null(reg);
		snprintf(name, sizeof(name), "%s/%s", tmpdir, cases[i].file);
		assert_int_equal(isolate_registry__note_script(reg, pid, 0x1000, name), 0);
		assert_int_equal(node_script__version_isolates(reg, &p, NULL), 0);
		info = isolate_registry__find(reg, pid, 0x1000);
		assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
		if (!strstr(info->version_why, cases[i].why))
			fail_msg("%s: '%s' does not say '%s'", cases[i].file, info->version_why,
				 cases[i].why);
		stop(pid);
		isolate_registry__free(reg);
	}
	/* not a node: nothing */
	proc_of(&p, getpid());
	p.runtime = DISCOVER_WORKERD;
	reg = isolate_registry__new();
	assert_int_equal(isolate_registry__note_script(reg, getpid(), 0x1000, "/x.js"), 0);
	assert_int_equal(node_script__version_isolates(reg, &p, NULL), 0);
	assert_null(isolate_registry__find(reg, getpid(), 0x1000)->version_why);
	isolate_registry__free(reg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_node_options),
		cmocka_unit_test(test_self_contained),
		cmocka_unit_test(test_names_and_paths),
		cmocka_unit_test(test_process),
		cmocka_unit_test(test_process_refused),
	};

	/* the child: a process under node's command line until it is killed */
	if (getenv(CHILD_ENV)) {
		/* killed by the test; a test that failed first leaves it to this */
		alarm(60);
		pause();
		return 0;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
