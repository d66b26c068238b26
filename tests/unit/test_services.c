// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/services: a process started as `workerd
 * serve config.capnp` (this test binary, re-executed under that command
 * line in a temporary directory) whose config embeds modules; isolates
 * are matched to services by the content of their user scripts (name,
 * length, SHA-256), an embedded file is read only when its size is that
 * of a script, and a kept map (serve's lister) reads nothing again until
 * a file changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/sha256.h"
#include "user/attribute/services.h"

#define CHILD_ENV "ISOPROF_TEST_SERVICES_CHILD"

static char tmpdir[64];
static pid_t child = -1;

static const char config[] =
	"using Workerd = import \"/workerd/workerd.capnp\";\n"
	"const config :Workerd.Config = (services = [\n"
	"  (name = \"alpha\", worker = (modules = [(name = \"index.js\", esModule = embed \"alpha/index.js\")])),\n"
	"  (name = \"beta\", worker = (modules = [(name = \"index.js\", esModule = embed \"beta/index.js\")])),\n"
	"  (name = \"gamma\", worker = (modules = [(name = \"index.js\", esModule = embed \"gamma/index.js\")])),\n"
	"  (name = \"twin1\", worker = (modules = [(name = \"t.js\", esModule = embed \"twin.js\")])),\n"
	"  (name = \"twin2\", worker = (modules = [(name = \"t.js\", esModule = embed \"twin.js\")])),\n"
	"  (name = \"inline\", worker = (modules = [(name = \"inl.js\", esModule = \"export default 1;\\n\")])),\n"
	"  (name = \"fifo\", worker = (modules = [(name = \"f.js\", esModule = embed \"fifo.js\")])),\n"
	"  (name = \"counter\", worker = (modules = [(name = \"c.js\", esModule = embed \"c.js\")],\n"
	"     durableObjectNamespaces = [(className = \"Counter\", uniqueKey = \"ck\")])),\n"
	"]);\n";

/* alpha and gamma: the same length, other bytes; beta: another length */
static const char src_alpha[] = "export default { a: 1 };\n";
static const char src_gamma[] = "export default { g: 2 };\n";
static const char src_beta[] = "export default { beta: 22 };\n";
static const char src_twin[] = "export default {};\n";
static const char src_inline[] = "export default 1;\n";

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

static void hex_of(const char *text, char hex[SHA256_HEX_LEN])
{
	uint8_t d[SHA256_DIGEST_LEN];

	sha256__digest(text, strlen(text), d);
	sha256__hex(d, hex);
}

static int setup(void **state)
{
	char path[256];

	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-services.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	for (const char *d = "alpha\0beta\0gamma\0"; *d; d += strlen(d) + 1) {
		snprintf(path, sizeof(path), "%s/%s", tmpdir, d);
		if (mkdir(path, 0755))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/fifo.js", tmpdir);
	if (mkfifo(path, 0644))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A process whose command line is `workerd serve config.capnp`, in tmpdir. */
static pid_t start_workerd(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (chdir(tmpdir) || setenv(CHILD_ENV, "1", 1))
			_exit(127);
		execl("/proc/self/exe", "workerd", "serve", "config.capnp", (char *)NULL);
		_exit(127);
	}
	/* wait until it runs under its new command line */
	for (int i = 0; i < 200; i++) {
		char path[64], buf[32] = "";
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		f = fopen(path, "r");
		if (f) {
			size_t n = fread(buf, 1, sizeof(buf) - 1, f);

			fclose(f);
			if (n >= 8 && !memcmp(buf, "workerd\0serve", 13))
				return pid;
		}
		usleep(10000);
	}
	fail_msg("the child did not start");
	return -1;
}

static const struct workerd_service *match(struct service_map *m, uint64_t isolate,
					   const char *name, const char *src)
{
	const struct workerd_service *s = NULL;
	char hex[SHA256_HEX_LEN];
	struct isolate_script sc;

	hex_of(src, hex);
	sc.name = name;
	sc.source_len = strlen(src);
	sc.sha256_hex = hex;
	/* the isolate's version id stands for its content: any id of it does here */
	assert_int_equal(service_map__match(m, child, isolate, hex, &sc, 1, &s), 0);
	return s;
}

static void test_match_by_content(void **state)
{
	struct discover_proc p = { 0 };
	struct service_map_stats st;
	struct service_map *m;
	const struct workerd_service *s;
	struct service_ns_match ns[2];
	char two[2][SHA256_HEX_LEN];
	struct isolate_script sc[3];

	(void)state;
	put("config.capnp", config);
	put("alpha/index.js", src_alpha);
	put("beta/index.js", src_beta);
	put("gamma/index.js", src_gamma);
	put("twin.js", src_twin);
	put("c.js", "export class Counter {}\n");
	child = start_workerd();
	p.pid = child;
	p.runtime = DISCOVER_WORKERD;
	p.uid = getuid();
	p.uid_known = true;

	m = service_map__new();
	assert_non_null(m);
	service_map__begin(m);
	assert_int_equal(service_map__add_process(m, &p), 0);
	assert_null(service_map__why_unknown(m, child));
	assert_int_equal(service_map__config(m, child)->nr_services, 8);
	service_map__stats(m, &st);
	assert_int_equal(st.loads, 1);
	assert_int_equal(st.embeds_hashed, 0);	/* parsing reads no embedded file */

	/* every service names its module index.js: the content decides */
	s = match(m, 0x1000, "index.js", src_alpha);
	assert_non_null(s);
	assert_string_equal(s->name, "alpha");
	service_map__stats(m, &st);
	assert_int_equal(st.embeds_hashed, 2);	/* alpha's and gamma's: the same size */
	assert_int_equal(st.embeds_not_read, 1);	/* beta's: another size */
	s = match(m, 0x2000, "index.js", src_beta);
	assert_non_null(s);
	assert_string_equal(s->name, "beta");
	s = match(m, 0x3000, "index.js", src_gamma);
	assert_string_equal(s->name, "gamma");
	service_map__stats(m, &st);
	assert_int_equal(st.embeds_hashed, 3);	/* each file once */
	/* matched before: not compared again */
	s = match(m, 0x1000, "index.js", src_alpha);
	assert_string_equal(s->name, "alpha");
	service_map__stats(m, &st);
	assert_int_equal(st.memo_hits, 1);
	/* two services running the same code: neither */
	assert_null(match(m, 0x4000, "t.js", src_twin));
	/* a module in the config itself; content no service has; a FIFO never blocks */
	assert_string_equal(match(m, 0x5000, "inl.js", src_inline)->name, "inline");
	assert_null(match(m, 0x6000, "index.js", "export default { z: 9 };\n"));
	assert_null(match(m, 0x7000, "f.js", src_twin));
	{
		const char *const *notes;
		size_t nn = service_map__notes(m, child, &notes);

		assert_int_equal(nn, 1);
		assert_non_null(strstr(notes[0], "service fifo: embedded file fifo.js: "));
		assert_non_null(strstr(notes[0], "FIFO"));
		/* not remembered: asked again, the file is tried again */
		assert_null(match(m, 0x7000, "f.js", src_twin));
		service_map__stats(m, &st);
		assert_int_equal(st.memo_hits, 1);
	}
	/* an isolate with one more user script is not alpha */
	hex_of(src_alpha, two[0]);
	hex_of("x", two[1]);
	sc[0] = (struct isolate_script){ "index.js", strlen(src_alpha), two[0] };
	sc[1] = (struct isolate_script){ "lib.js", 1, two[1] };
	sc[2] = sc[0];	/* a script logged twice counts once */
	assert_int_equal(service_map__match(m, child, 0x8000, two[1], sc, 3, &s), 0);
	assert_null(s);
	assert_int_equal(service_map__match(m, child, 0x9000, two[0], &sc[0], 1, &s), 0);
	assert_string_equal(s->name, "alpha");
	assert_int_equal(service_map__match(m, child, 0xa000, two[0], &sc[2], 1, &s), 0);
	assert_string_equal(s->name, "alpha");
	/* namespaces */
	assert_int_equal(service_map__find_namespace(m, "ck", ns, 2), 1);
	assert_string_equal(ns[0].service->name, "counter");
	assert_int_equal(service_map__find_namespace(m, "counter:Counter", ns, 2), 1);
	service_map__end(m);

	/* the next listing: nothing changed, nothing parsed or hashed again */
	service_map__begin(m);
	assert_int_equal(service_map__add_process(m, &p), 0);
	assert_string_equal(match(m, 0xb000, "index.js", src_alpha)->name, "alpha");
	service_map__stats(m, &st);
	assert_int_equal(st.loads, 0);
	assert_int_equal(st.kept, 1);
	assert_int_equal(st.embeds_hashed, 0);
	service_map__end(m);

	/* alpha's file rewritten (same size, other bytes): hashed again */
	{
		struct timespec later[2] = { { 0, UTIME_OMIT }, { time(NULL) + 5, 0 } };
		char path[256];

		put("alpha/index.js", "export default { a: 7 };\n");
		snprintf(path, sizeof(path), "%s/alpha/index.js", tmpdir);
		assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	}
	service_map__begin(m);
	assert_int_equal(service_map__add_process(m, &p), 0);
	assert_string_equal(match(m, 0xc000, "index.js", "export default { a: 7 };\n")->name,
			    "alpha");
	assert_null(match(m, 0xd000, "index.js", src_alpha));
	service_map__stats(m, &st);
	assert_int_equal(st.loads, 0);
	assert_true(st.embeds_hashed >= 1);
	service_map__end(m);

	/* the config changed: parsed again */
	put("config.capnp", config);
	{
		struct timespec later[2] = { { 0, UTIME_OMIT }, { time(NULL) + 10, 0 } };
		char path[256];

		snprintf(path, sizeof(path), "%s/config.capnp", tmpdir);
		assert_int_equal(utimensat(AT_FDCWD, path, later, 0), 0);
	}
	service_map__begin(m);
	assert_int_equal(service_map__add_process(m, &p), 0);
	service_map__stats(m, &st);
	assert_int_equal(st.loads, 1);
	service_map__end(m);

	/* a listing without the process forgets it */
	service_map__begin(m);
	service_map__end(m);
	assert_null(service_map__config(m, child));
	service_map__free(m);
}

/* An isolate of a service, with no code log: the id its modules' files give. */
static void test_files_version(void **state)
{
	static const char cfg[] =
		"using Workerd = import \"/workerd/workerd.capnp\";\n"
		"const config :Workerd.Config = (services = [\n"
		"  (name = \"alpha\", worker = (modules = [(name = \"index.js\", esModule = embed \"alpha/index.js\"),\n"
		"     (name = \"lib/util.js\", esModule = embed \"util.js\"), (name = \"d.json\", json = embed \"d.json\")])),\n"
		"  (name = \"inline\", worker = (modules = [(name = \"inl.js\", esModule = \"export default 1;\\n\")])),\n"
		"  (name = \"sw\", worker = (serviceWorkerScript = embed \"sw.js\")),\n"
		"  (name = \"bad\", worker = (modules = [(name = \"b.js\", esModule = embed \"bad.js\")])),\n"
		"  (name = \"late\", worker = (modules = [(name = \"l.js\", esModule = embed \"late.js\")])),\n"
		"  (name = \"gone\", worker = (modules = [(name = \"g.js\", esModule = embed \"gone.js\")])),\n"
		"  (name = \"data\", worker = (modules = [(name = \"only.json\", json = embed \"d.json\")])),\n"
		"]);\n";
	static const char util[] = "export const k = 7;\r\n";
	static const char sw[] = "\xef\xbb\xbf" "addEventListener('fetch', () => {});\n";
	struct {
		uint64_t isolate;
		const char *service;
	} iso[] = {
		{ 0x1000, "alpha" }, { 0x2000, "inline" }, { 0x3000, "sw" }, { 0x4000, "bad" },
		{ 0x5000, "late" }, { 0x6000, "gone" }, { 0x7000, "data" }, { 0x8000, NULL },
	};
	const char *names[2], *srcs[2];
	size_t lens[2];
	char alpha_hex[SHA256_HEX_LEN], inline_hex[SHA256_HEX_LEN], sw_hex[SHA256_HEX_LEN];
	struct discover_proc p = { 0 };
	struct isolate_registry *reg;
	struct service_map *m;
	const struct isolate_info *info;

	(void)state;
	put("config.capnp", cfg);
	put("alpha/index.js", src_alpha);
	put("util.js", util);
	put("d.json", "{}");
	put("sw.js", sw);
	put("bad.js", "export default '\xc0\xaf';\n");
	put("late.js", "export default 1;\n");
	names[0] = "index.js", srcs[0] = src_alpha, lens[0] = strlen(src_alpha);
	names[1] = "lib/util.js", srcs[1] = util, lens[1] = strlen(util);
	assert_int_equal(isolate__version_id(names, srcs, lens, 2, alpha_hex), 0);
	names[0] = "inl.js", srcs[0] = src_inline, lens[0] = strlen(src_inline);
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, inline_hex), 0);
	names[0] = "sw", srcs[0] = sw, lens[0] = strlen(sw);
	assert_int_equal(isolate__version_id(names, srcs, lens, 1, sw_hex), 0);
	child = start_workerd();
	p.pid = child;
	p.runtime = DISCOVER_WORKERD;
	p.uid = getuid();
	p.uid_known = true;
	m = service_map__new();
	reg = isolate_registry__new();
	assert_non_null(m);
	assert_non_null(reg);
	assert_int_equal(service_map__add_process(m, &p), 0);
	assert_null(service_map__why_unknown(m, child));
	/* late.js is rewritten after workerd read it */
	usleep(100000);
	put("late.js", "export default 2;\n");
	for (size_t i = 0; i < sizeof(iso) / sizeof(iso[0]); i++) {
		assert_int_equal(isolate_registry__note_script(reg, child, iso[i].isolate, "x.js"), 0);
		assert_int_equal(isolate_registry__set_service_name(reg, child, iso[i].isolate,
								    iso[i].service), 0);
	}
	assert_int_equal(service_map__version_isolates(m, reg), 3);

	info = isolate_registry__find(reg, child, 0x1000);
	assert_int_equal(info->version_from, ISOLATE_VERSION_FROM_FILES);
	assert_string_equal(info->version_full, alpha_hex);
	assert_string_equal(isolate_registry__find(reg, child, 0x2000)->version_full, inline_hex);
	assert_string_equal(isolate_registry__find(reg, child, 0x3000)->version_full, sw_hex);
	info = isolate_registry__find(reg, child, 0x4000);
	assert_string_equal(info->version, ISOLATE_VERSION_UNKNOWN);
	assert_non_null(strstr(info->version_why, "not UTF-8"));
	info = isolate_registry__find(reg, child, 0x5000);
	assert_non_null(strstr(info->version_why, "changed since workerd started"));
	info = isolate_registry__find(reg, child, 0x6000);
	assert_non_null(strstr(info->version_why, "module g.js (gone.js)"));
	info = isolate_registry__find(reg, child, 0x7000);
	assert_non_null(strstr(info->version_why, "no JavaScript module"));
	info = isolate_registry__find(reg, child, 0x8000);
	assert_non_null(strstr(info->version_why, "no workerd service"));
	{
		const char *const *notes;
		size_t nn = service_map__notes(m, child, &notes);
		bool seen = false;

		for (size_t i = 0; i < nn; i++)
			seen |= strstr(notes[i], "service late: no version id without a code log") != NULL;
		assert_true(seen);
	}
	isolate_registry__free(reg);
	service_map__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_match_by_content, setup, teardown),
		cmocka_unit_test_setup_teardown(test_files_version, setup, teardown),
	};

	if (getenv(CHILD_ENV)) {
		/* the stand-in workerd: only its command line and directory are read */
		alarm(60);
		pause();
		return 0;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
