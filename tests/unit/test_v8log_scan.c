// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8log_scan: the listing's one-pass reader of a
 * code log must see the scripts, names, SHA-256 and V8 version exactly as
 * the full parser (v8log) does, keep only the sources asked for, and give
 * the registry the same version id as a full read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/v8log.h"
#include "symbolize/v8log_scan.h"
#include "user/attribute/isolates.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-v8scan.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_str(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/*
 * Scripts in every shape v8log handles: escapes of all kinds, a script
 * logged again under the same id, a rename by script-details, ids out of
 * order, an unnamed one, runtime ones, and code lines in between.
 */
static const char log_text[] =
	"v8-version,11,3,244,8,-node.38,0\n"
	"code-creation,Builtin,2,1,0x1000,16,Abort\n"
	"script-source,9,workerd:per-isolate/main,'use strict';\\nx\\x2Cy\n"
	"script-source,5,/srv/\\xe9\\u65e5.js,a\\x2Cb\\\\c\\nd\\x09e\\x00f\\xe9\\u65e5"
	"\\ud83d\\ude00\\ud83dx\\ude00\n"
	"code-creation,JS,2,1,0x2000,16,f /srv/x.js:1:1,0x10,~\n"
	"code-source-info,0x2000,5,0,10,C0O0,,\n"
	"script-source,3,main.js,function main() {}\n"
	"script-source,3,main.js,function main() { return 2; }\n"
	"script-details,3,main.js,0,0,main.js.map\n"
	"script-source,12,<unknown>,eval(1)\n"
	"script-source,14,node:internal/x,internal\n"
	"script-details,14,lib/util.js,0,0,\n"
	"script-source,20,lib/util.js,export const u = 1;\n"
	"script-details,21,,0,0,\n"
	"tick,0x1,2,0\n";

static void test_same_as_v8log(void **state)
{
	struct v8log *log = v8log__new(NULL, NULL, NULL);
	struct v8log_scan *scan = v8log_scan__new(NULL, NULL);
	const struct v8log_scan_script *a;
	const struct v8log_script *b;
	struct v8log_scan_stats st;
	size_t i;

	(void)state;
	assert_non_null(log);
	assert_non_null(scan);
	assert_true(v8log__parse_buf(log, log_text, strlen(log_text)) >= 0);
	assert_int_equal(v8log_scan__buf(scan, log_text, strlen(log_text)), 0);
	assert_string_equal(v8log_scan__version(scan), v8log__version(log));
	assert_string_equal(v8log_scan__version(scan), "11.3.244.8-node.38");
	assert_int_equal(v8log_scan__count(scan), v8log__script_count(log));
	assert_int_equal(v8log_scan__count(scan), 7);
	for (i = 0; i < v8log__script_count(log); i++) {
		a = v8log_scan__at(scan, i);
		b = v8log__script_at(log, i);
		assert_non_null(a);
		assert_non_null(b);
		assert_int_equal(a->id, b->id);
		assert_string_equal(a->name, b->name);
		assert_int_equal(a->has_source, b->source != NULL);
		assert_int_equal(a->source_len, b->source_len);
		assert_string_equal(a->sha256_hex, b->sha256_hex);
		assert_null(a->source);	/* nothing asked to be kept */
	}
	assert_null(v8log_scan__at(scan, i));
	/* renamed by script-details, with the source of the second script-source */
	a = v8log_scan__at(scan, 0);
	assert_int_equal(a->id, 3);
	assert_int_equal(a->source_len, strlen("function main() { return 2; }"));
	v8log_scan__stats(scan, &st);
	assert_int_equal(st.lines, 15);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.rescans, 0);
	v8log_scan__free(scan);
	v8log__free(log);
}

static bool keep_js(const char *name, void *ctx)
{
	size_t n = strlen(name);

	++*(int *)ctx;
	return n > 3 && !strcmp(name + n - 3, ".js");
}

static void test_keep_and_rescan(void **state)
{
	struct v8log *log = v8log__new(NULL, NULL, NULL);
	struct v8log_scan *scan;
	const struct v8log_scan_script *a;
	const struct v8log_script *b;
	struct v8log_scan_stats st;
	int asked = 0;
	size_t i;

	(void)state;
	assert_non_null(log);
	assert_true(v8log__parse_buf(log, log_text, strlen(log_text)) >= 0);
	scan = v8log_scan__new(keep_js, &asked);
	assert_non_null(scan);
	assert_int_equal(v8log_scan__buf(scan, log_text, strlen(log_text)), 0);
	assert_true(asked > 0);
	/* node:internal/x (id 14) was dropped, then renamed lib/util.js: read again */
	v8log_scan__stats(scan, &st);
	assert_int_equal(st.rescans, 1);
	for (i = 0; i < v8log__script_count(log); i++) {
		a = v8log_scan__at(scan, i);
		b = v8log__script_at(log, i);
		if (!keep_js(a->name, &asked) || !b->source) {
			assert_int_equal(a->source != NULL, a->id == 9 || a->id == 12);
			continue;
		}
		assert_non_null(a->source);
		assert_int_equal(a->source_len, b->source_len);
		assert_memory_equal(a->source, b->source, b->source_len);
		assert_int_equal(a->source[a->source_len], '\0');
	}
	v8log_scan__free(scan);

	/* without the rename, nothing is read twice */
	scan = v8log_scan__new(keep_js, &asked);
	assert_non_null(scan);
	assert_int_equal(v8log_scan__buf(scan, log_text, strstr(log_text, "script-details,14") -
				  log_text), 0);
	v8log_scan__stats(scan, &st);
	assert_int_equal(st.rescans, 0);
	v8log_scan__free(scan);
	v8log__free(log);
}

static void test_malformed(void **state)
{
	static const char text[] =
		"script-source,x,a.js,1\n"
		"script-source,4\n"
		"script-details,4,a.js,zero,0,\n"
		"v8-version,11,3\n"
		"script-sourcery,5,b.js,2\n"
		"v8-version,11,3,244,8,0\n";
	struct v8log_scan *scan = v8log_scan__new(NULL, NULL);
	struct v8log_scan_stats st;

	(void)state;
	assert_non_null(scan);
	assert_int_equal(v8log_scan__buf(scan, text, strlen(text)), 0);
	v8log_scan__stats(scan, &st);
	assert_int_equal(st.malformed, 4);
	assert_int_equal(v8log_scan__count(scan), 0);
	assert_string_equal(v8log_scan__version(scan), "11.3.244.8");
	v8log_scan__free(scan);
}

static void test_file(void **state)
{
	char path[128], link[128];
	struct v8log_scan *scan = v8log_scan__new(NULL, NULL);

	(void)state;
	assert_non_null(scan);
	snprintf(path, sizeof(path), "%s/isolate-0x1000-77-v8.log", tmpdir);
	write_str(path, log_text);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	assert_int_equal(v8log_scan__count(scan), 7);
	assert_string_equal(v8log_scan__why(scan), "");
	/* opened through safe_open: a symlink is refused, and said why */
	snprintf(link, sizeof(link), "%s/isolate-0x2000-77-v8.log", tmpdir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(v8log_scan__file(scan, link, NULL, NULL), -ELOOP);
	assert_int_equal(v8log_scan__count(scan), 0);
	snprintf(link, sizeof(link), "%s/none", tmpdir);
	assert_int_equal(v8log_scan__file(scan, link, NULL, NULL), -ENOENT);
	assert_int_equal(v8log_scan__file(scan, NULL, NULL, NULL), -EINVAL);
	v8log_scan__free(scan);
}

/* A source seen before (same name, same bytes) is not hashed again; another is. */
static void test_memo(void **state)
{
	static const char second[] =
		"script-source,9,workerd:per-isolate/main,'use strict';\\nx\\x2Cy\n"
		"script-source,10,workerd:per-isolate/other,'use strict';\\nx\\x2Cy\n"
		"script-source,11,main.js,function main() { return 2; }\n"
		"script-source,12,workerd:per-isolate/main,'use strict';\\nx\\x2Cz\n";
	struct v8log_scan *scan = v8log_scan__new(isolate__keep_source, NULL);
	struct v8log *log = v8log__new(NULL, NULL, NULL);
	struct v8log_scan_stats st;
	char path[128];
	size_t i;

	(void)state;
	assert_non_null(scan);
	assert_non_null(log);
	snprintf(path, sizeof(path), "%s/isolate-0x3000-79-v8.log", tmpdir);
	write_str(path, log_text);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	v8log_scan__stats(scan, &st);
	assert_int_equal(st.rescans, 1);	/* its second pass found all it had hashed */
	assert_int_equal(st.memo_hits, 3);
	write_str(path, second);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	v8log_scan__stats(scan, &st);
	/* only id 9: 10 has another name, 11 is kept (user), 12 other bytes */
	assert_int_equal(st.memo_hits, 1);
	assert_true(v8log__parse_buf(log, second, strlen(second)) >= 0);
	assert_int_equal(v8log_scan__count(scan), 4);
	for (i = 0; i < 4; i++)
		assert_string_equal(v8log_scan__at(scan, i)->sha256_hex,
				    v8log__script_at(log, i)->sha256_hex);
	v8log__free(log);
	v8log_scan__free(scan);
}

/* The registry from a scan: the same isolate as from the full log. */
static void test_registry_same_version(void **state)
{
	char path[128];
	struct isolate_registry *full = isolate_registry__new(), *light = isolate_registry__new();
	const struct isolate_info *a, *b;
	struct v8log_scan *scan = v8log_scan__new(isolate__keep_source, NULL);
	size_t i;

	(void)state;
	assert_non_null(full);
	assert_non_null(light);
	assert_non_null(scan);
	snprintf(path, sizeof(path), "%s/isolate-0xabc000-78-v8.log", tmpdir);
	write_str(path, log_text);
	assert_true(isolate_registry__add_log(full, path) >= 0);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	assert_int_equal(isolate_registry__add_scan(light, 0, path, scan), 0);
	a = isolate_registry__find(full, 78, 0xabc000);
	b = isolate_registry__find(light, 78, 0xabc000);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_equal(a->version_full, b->version_full);
	assert_int_equal(strlen(b->version_full), 64);
	assert_string_equal(a->version, b->version);
	assert_string_equal(a->name, b->name);
	assert_string_equal(b->name, "main.js");	/* the first user script by id */
	assert_int_equal(a->nr_scripts, b->nr_scripts);
	for (i = 0; i < a->nr_scripts; i++)
		assert_string_equal(a->scripts[i], b->scripts[i]);
	assert_int_equal(a->nr_internal, b->nr_internal);
	assert_string_equal(a->v8_version, b->v8_version);
	assert_true(b->has_code_log);
	assert_string_equal(b->code_log_path, path);
	assert_true(b->created_ns > 0);

	/* a scan that dropped a user source cannot give a version id */
	v8log_scan__free(scan);
	scan = v8log_scan__new(NULL, NULL);
	assert_non_null(scan);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	assert_int_equal(isolate_registry__add_scan(light, 0, path, scan), -EINVAL);
	assert_int_equal(isolate_registry__add_scan(light, 0, "v8.log", scan), -EINVAL);
	v8log_scan__free(scan);
	isolate_registry__free(full);
	isolate_registry__free(light);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_v8log),
		cmocka_unit_test(test_keep_and_rescan),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_memo),
		cmocka_unit_test(test_registry_same_version),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
