// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/workerd_config (the Cap'n Proto text subset of
 * workerd configs) and the command-line reading of user/attribute/services:
 * services, modules and Durable Object namespaces as workerd reads them,
 * embeds and imports through the caller's reader, errors with line:column,
 * and the limits a hostile file meets.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/workerd_config.h"
#include "user/attribute/isolates.h"
#include "user/attribute/services.h"

/* In-memory files: path -> text; counts reads. */
struct files {
	const char *const *names;
	const char *const *texts;
	size_t nr;
	int reads;
	bool last_import_path;
};

static int read_mem(void *ctx, const char *path, bool import_path, char **data, size_t *len,
		    char *why, size_t whylen)
{
	struct files *f = ctx;

	f->reads++;
	f->last_import_path = import_path;
	for (size_t i = 0; i < f->nr; i++) {
		if (strcmp(f->names[i], path))
			continue;
		*len = strlen(f->texts[i]);
		*data = strdup(f->texts[i]);
		return *data ? 0 : -ENOMEM;
	}
	snprintf(why, whylen, "no such test file");
	return -ENOENT;
}

static int parse(const char *text, struct files *f, struct workerd_config **cfg, char *err,
		 size_t errlen)
{
	return workerd_config__parse_text("conf/config.capnp", text, strlen(text), NULL,
					  read_mem, f, cfg, err, errlen);
}

static const char demo[] =
	"# a demo\n"
	"using Workerd = import \"/workerd/workerd.capnp\";\n"
	"using Shared = import \"shared.capnp\";\n"
	"const config :Workerd.Config = (\n"
	"  services = [\n"
	"    (name = \"alpha\", worker = .alphaWorker),\n"
	"    (name = \"counter\", worker = Shared.counterWorker),\n"
	"    (name = \"inline\", worker = (modules = [(name = \"i.js\", esModule = \"export default {}\\n\")])),\n"
	"    (name = \"sw\", worker = (serviceWorkerScript = embed \"sw.js\", compatibilityDate = \"2024-01-01\")),\n"
	"    (name = \"net\", network = (allow = [\"public\"])),\n"
	"  ],\n"
	"  sockets = [ (name = \"http\", address = \"*:8080\", http = (), service = \"alpha\") ],\n"
	"  v8Flags = [ \"--log-code\" ],\n"
	");\n"
	"const alphaWorker :Workerd.Worker = (\n"
	"  modules = [\n"
	"    (name = \"index.js\", esModule = embed \"alpha/index.js\"),\n"
	"    (name = \"data.bin\", data = embed \"never-read.bin\"),\n"
	"    (name = \"lib.cjs\", commonJsModule = .libSource),\n"
	"  ],\n"
	"  compatibilityDate = \"2024-01-01\", compatibilityFlags = [\"nodejs_compat\"],\n"
	"  bindings = [ (name = \"N\", json = \"{}\"), (name = \"B\", data = 0x\"00 ff\") ],\n"
	"  globalOutbound = \"internet\", cacheApiOutbound = ( name = \"x\" ),\n"
	"  limits = ( cpuMs = 50, heapBytes = -1 ),\n"
	");\n"
	"const libSource :Text = \"module.exports = 1;\\x0a\";\n";

static const char shared[] =
	"@0xabcdef0123456789;\n"
	"using Workerd = import \"/workerd/workerd.capnp\";\n"
	"const counterWorker :Workerd.Worker = (\n"
	"  modules = [ (name = \"index.js\", esModule = embed \"counter.js\") ],\n"
	"  durableObjectNamespaces = [\n"
	"    (className = \"Counter\", uniqueKey = \"counter-key\"),\n"
	"    (className = \"Scratch\", ephemeralLocal = void),\n"
	"  ],\n"
	"  durableObjectStorage = (inMemory = void),\n"
	");\n";

static void test_services(void **state)
{
	static const char *const names[] = { "conf/shared.capnp", "conf/alpha/index.js",
					     "conf/counter.js", "conf/sw.js" };
	static const char *const texts[] = { shared, "export default {};\n", "export class Counter {}\n",
					     "addEventListener('fetch', () => {});\n" };
	struct files f = { names, texts, 4, 0, false };
	struct workerd_config *cfg;
	const struct workerd_service *s;
	char err[256];

	(void)state;
	assert_int_equal(parse(demo, &f, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg->nr_services, 5);
	/* alpha: modules by reference, an embed joined to the config's directory */
	s = &cfg->services[0];
	assert_string_equal(s->name, "alpha");
	assert_true(s->is_worker);
	assert_int_equal(s->nr_modules, 3);
	assert_string_equal(s->modules[0].name, "index.js");
	assert_int_equal(s->modules[0].kind, WORKERD_MODULE_ES);
	/* an embedded file is named, not read */
	assert_null(s->modules[0].source);
	assert_string_equal(s->modules[0].embed, "conf/alpha/index.js");
	assert_false(s->modules[0].embed_import_path);
	assert_int_equal(s->modules[1].kind, WORKERD_MODULE_OTHER);
	assert_null(s->modules[1].source);	/* a data module's file is never named */
	assert_null(s->modules[1].embed);
	assert_int_equal(s->modules[2].kind, WORKERD_MODULE_COMMONJS);
	assert_string_equal(s->modules[2].source, "module.exports = 1;\n");
	/* counter: through an import, with its namespaces */
	s = &cfg->services[1];
	assert_string_equal(s->name, "counter");
	assert_int_equal(s->nr_namespaces, 2);
	assert_string_equal(s->namespaces[0].class_name, "Counter");
	assert_string_equal(s->namespaces[0].unique_key, "counter-key");
	assert_string_equal(s->namespaces[1].class_name, "Scratch");
	assert_null(s->namespaces[1].unique_key);
	assert_string_equal(s->modules[0].embed, "conf/counter.js");
	/* an inline worker and module */
	s = &cfg->services[2];
	assert_string_equal(s->modules[0].source, "export default {}\n");
	/* a service worker script is named after its service */
	s = &cfg->services[3];
	assert_true(s->service_worker);
	assert_string_equal(s->modules[0].name, "sw");
	assert_string_equal(s->modules[0].embed, "conf/sw.js");
	/* not a worker */
	assert_false(cfg->services[4].is_worker);
	/* the import only: no embed, and the config itself is not read here */
	assert_int_equal(f.reads, 1);
	workerd_config__free(cfg);
}

static void expect_error(const char *text, const char *want)
{
	struct files f = { NULL, NULL, 0, 0, false };
	struct workerd_config *cfg = (void *)1;
	char err[256];
	int ret = parse(text, &f, &cfg, err, sizeof(err));

	if (ret != -EINVAL && ret != -ENOENT)
		fail_msg("'%s': returned %d", text, ret);
	assert_null(cfg);
	if (!strstr(err, want))
		fail_msg("'%s': error '%s' lacks '%s'", text, err, want);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("const c :Config = (services = [(name = \"a\")])", "config.capnp:1:46: expected ';'");
	expect_error("const c :Config = (\n  services = [ (name = \"a\" worker = .w) ]);",
		     "config.capnp:2:28: expected ',' or ')'");
	expect_error("const c :Config = (name = \"abc);", "1:27: unterminated string");
	expect_error("const c :Config = (x = \"\\q\");", "unknown escape");
	expect_error("struct Foo { }", "1:1: expected using or const");
	expect_error("const c :Config = (services = [.nope]);", "1:32: no such const");
	expect_error("const c :Config = (services = [X.w]);", "no import of that name");
	expect_error("const a :Text = \"x\";", "no const of type Config");
	expect_error("const a :Config = ();\nconst b :Config = ();", "2:1: a second Config const");
	expect_error("using S = import \"gone.capnp\";\nconst a :Config = (services = [S.s]);",
		     "conf/gone.capnp: no such test file");
	expect_error("const c :Config = (services = [(name = \"a\"), (name = \"a\")]);",
		     "a second service of the same name");
	expect_error("const c :Config = (services = 5);", "services is a list");
	expect_error("const c :Config = (x = 0x\"abc\");", "whole bytes");
	expect_error("const c :Config = (x = $);", "unexpected character 0x24");
	/* a reference cycle ends */
	expect_error("const c :Config = .d;\nconst d :Worker = .c;", "chained more than");
	expect_error("using W = import \"/workerd/workerd.capnp\";\n"
		     "const c :Config = W.x;", "workerd's own schema");
}

static void test_limits(void **state)
{
	struct files f = { NULL, NULL, 0, 0, false };
	struct workerd_config *cfg;
	char err[256], *deep;
	size_t n = 10000, off;

	(void)state;
	/* nesting deeper than the limit is an error, never a stack overflow */
	deep = malloc(32 + 2 * n);
	assert_non_null(deep);
	off = (size_t)sprintf(deep, "const c :Config = ");
	memset(deep + off, '[', n);
	memset(deep + off + n, ']', n);
	strcpy(deep + off + 2 * n, ";");
	assert_int_equal(parse(deep, &f, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "nested deeper than"));
	free(deep);
	/* a NUL in a name */
	assert_int_equal(parse("const c :Config = (services = [(name = \"a\\0b\")]);", &f, &cfg,
			       err, sizeof(err)), -EINVAL);
	/* the const named on the command line */
	{
		static const char two[] = "const a :Config = ();\nconst b :Config = (services = []);";

		assert_int_equal(workerd_config__parse_text("c.capnp", two, strlen(two), "b",
							    read_mem, &f, &cfg, err, sizeof(err)),
				 0);
	}
	assert_int_equal(cfg->nr_services, 0);
	workerd_config__free(cfg);
}

static void test_import_path(void **state)
{
	static const char *const names[] = { "/lib/x.js" };
	static const char *const texts[] = { "x" };
	struct files f = { names, texts, 1, 0, false };
	struct workerd_config *cfg;
	char err[256];

	(void)state;
	assert_int_equal(parse("const c :Config = (services = [(name = \"a\", worker = (modules = "
			       "[(name = \"x.js\", esModule = embed \"/lib/x.js\")]))]);",
			       &f, &cfg, err, sizeof(err)), 0);
	assert_int_equal(f.reads, 0);
	assert_true(cfg->services[0].modules[0].embed_import_path);
	assert_string_equal(cfg->services[0].modules[0].embed, "/lib/x.js");
	workerd_config__free(cfg);
}

static void test_cmdline(void **state)
{
	struct services_cmdline cl;
	const char *why;

	(void)state;
#define ARGV(...) (const char *const[]){ __VA_ARGS__ }, sizeof((const char *[]){ __VA_ARGS__ }) / sizeof(char *)
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "config.capnp"), &cl, &why), 0);
	assert_string_equal(cl.config, "config.capnp");
	assert_null(cl.const_name);
	assert_int_equal(services__parse_cmdline(ARGV("/usr/bin/workerd", "serve", "--verbose",
						      "-i", "127.0.0.1:9229", "--experimental",
						      "-I", "/srv/lib", "--import-path=/x",
						      "--socket-addr", "http=*:8080", "c.capnp",
						      "myConfig"), &cl, &why), 0);
	assert_string_equal(cl.config, "c.capnp");
	assert_string_equal(cl.const_name, "myConfig");
	assert_int_equal(cl.nr_import_path, 2);
	assert_string_equal(cl.import_path[0], "/srv/lib");
	assert_string_equal(cl.import_path[1], "/x");
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "-b", "c.bin"), &cl, &why),
			 -ENOTSUP);
	assert_non_null(strstr(why, "binary"));
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "--binary", "c.bin"), &cl,
						 &why), -ENOTSUP);
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "wrangler.json"), &cl,
						 &why), -ENOTSUP);
	/* a `workerd compile` binary: no serve, no config */
	assert_int_equal(services__parse_cmdline(ARGV("./app", "--inspector-addr", "x"), &cl, &why),
			 -ENOENT);
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "--verbose"), &cl, &why),
			 -ENOENT);
	assert_int_equal(services__parse_cmdline(ARGV("workerd"), &cl, &why), -ENOENT);
	assert_int_equal(services__parse_cmdline(ARGV("workerd", "serve", "--", "-odd.capnp"), &cl,
						 &why), 0);
	assert_string_equal(cl.config, "-odd.capnp");
#undef ARGV
}

/* The version id of a service equals the one the code log gives for the same sources. */
static void test_version_matches_code_log(void **state)
{
	const char *names[] = { "index.js" }, *srcs[] = { "export default {};\n" };
	size_t lens[] = { 19 };
	char a[SHA256_HEX_LEN], b[SHA256_HEX_LEN];

	(void)state;
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, a), 0);
	/* what docs/attribution.md says: sha256("index.js\0" source "\0") */
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, b), 0);
	assert_string_equal(a, b);
	assert_int_equal(strlen(a), 64);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_services),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_import_path),
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_version_matches_code_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
