// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/attribute/listing_cache: code logs in a temporary
 * directory that stay, grow (a half-written last line included), shrink,
 * are replaced or deleted between listings; each listing reads only what
 * changed and gives the isolate name, version id, V8 version and scripts
 * that a full read gives (isolate_registry__add_log(), v8log_scan__file()).
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

#include "symbolize/v8log_scan.h"
#include "user/attribute/isolates.h"
#include "user/attribute/listing_cache.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(tmpdir, "/tmp/isoprof-listing.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *path, const char *mode, const char *text)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

/* The start of a worker's log: the runtime's script, the user's, code. */
static const char head[] =
	"v8-version,11,3,244,8,-node.38,0\n"
	"script-source,1,workerd:per-isolate/main,'use strict';\\nx\\x2Cy\n"
	"script-source,3,main.js,function main() { return 1; }\n"
	"script-details,3,main.js,0,0,\n"
	"code-creation,JS,2,1,0x2000,16,main main.js:1:1,0x10,~\n"
	"code-creation,JS,2,1,0x2100,16,f main.js:1:1,0x10,~\n"
	"script-source,7,lib/u";	/* half of a line: V8 is writing it */
/* the rest of that line, more code, and a script of the same name, other bytes */
static const char rest[] =
	"til.js,export const u = 1;\n"
	"code-creation,JS,2,1,0x2200,16,g lib/util.js:1:1,0x10,~\n"
	"script-source,9,main.js,function main() { return 2; }\n";
static const char code_only[] =
	"code-creation,JS,2,1,0x2300,16,h main.js:1:1,0x10,*\n"
	"code-creation,JS,2,1,0x2400,16,k main.js:1:1,0x10,*\n";

/* What the cache says of path is what a full read of it says. */
static void same_as_full(const struct listing_log *l, const char *path)
{
	struct isolate_registry *reg = isolate_registry__new();
	const struct isolate_info *const *list;
	struct v8log_scan *scan = v8log_scan__new(NULL, NULL);
	const struct v8log_scan_script *a, *b;
	size_t nr, i;

	assert_non_null(reg);
	assert_non_null(scan);
	assert_true(l->known);
	assert_true(isolate_registry__add_log(reg, path) >= 0);
	list = isolate_registry__list(reg, &nr);
	assert_int_equal(nr, 1);
	assert_string_equal(l->version_full, list[0]->version_full);
	assert_string_equal(l->version, list[0]->version);
	assert_string_equal(l->name, list[0]->name);
	assert_string_equal(v8log_scan__version(l->scan), list[0]->v8_version);
	assert_int_equal(v8log_scan__file(scan, path, NULL, NULL), 0);
	assert_int_equal(v8log_scan__count(l->scan), v8log_scan__count(scan));
	for (i = 0; i < v8log_scan__count(scan); i++) {
		a = v8log_scan__at(l->scan, i);
		b = v8log_scan__at(scan, i);
		assert_int_equal(a->id, b->id);
		assert_string_equal(a->name, b->name);
		assert_string_equal(a->sha256_hex, b->sha256_hex);
		assert_int_equal(a->source_len, b->source_len);
		assert_null(a->source);	/* the cache keeps no source */
	}
	v8log_scan__free(scan);
	isolate_registry__free(reg);
}

/* One listing of the given logs; the stats of it. */
static void list(struct listing_cache *c, const char *const *paths, size_t n,
		 const struct listing_log **out, struct listing_cache_stats *st)
{
	listing_cache__begin(c);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(listing_cache__read(c, 0, paths[i], NULL, &out[i], NULL), 0);
	listing_cache__end(c);
	listing_cache__stats(c, st);
}

static void test_grow_same_shrink_replace_delete(void **state)
{
	char a[128], b[128], tmp[128];
	const char *paths[2] = { a, b };
	const struct listing_log *out[2];
	struct listing_cache *c = listing_cache__new();
	struct listing_cache_stats st;
	char version1[sizeof(out[0]->version_full)];
	const char *why;

	(void)state;
	assert_non_null(c);
	snprintf(a, sizeof(a), "%s/isolate-0xa000-41-v8.log", tmpdir);
	snprintf(b, sizeof(b), "%s/isolate-0xb000-41-v8.log", tmpdir);
	put(a, "w", head);
	put(b, "w", head);

	/* first listing: both read whole */
	list(c, paths, 2, out, &st);
	assert_int_equal(st.whole, 2);
	assert_int_equal(st.logs, 2);
	assert_int_equal(st.bytes, 2 * strlen(head));	/* the half line read, not consumed */
	same_as_full(out[0], a);
	same_as_full(out[1], b);
	assert_string_equal(out[0]->name, "main.js");
	memcpy(version1, out[0]->version_full, sizeof(version1));

	/* nothing changed: nothing opened, nothing read */
	list(c, paths, 2, out, &st);
	assert_int_equal(st.unchanged, 2);
	assert_int_equal(st.bytes, 0);
	assert_int_equal(st.whole + st.appended, 0);
	same_as_full(out[0], a);

	/* a grew by the rest of its half line and a new user script: appended, ids again */
	put(a, "a", rest);
	list(c, paths, 2, out, &st);
	assert_int_equal(st.unchanged, 1);
	assert_int_equal(st.appended, 1);
	assert_int_equal(st.reread, 1);	/* the user sources, for the version id */
	same_as_full(out[0], a);
	assert_string_not_equal(out[0]->version_full, version1);
	memcpy(version1, out[0]->version_full, sizeof(version1));

	/* a grew by code only: just those bytes read, the ids kept */
	put(a, "a", code_only);
	list(c, paths, 2, out, &st);
	assert_int_equal(st.appended, 1);
	assert_int_equal(st.reread, 0);
	assert_int_equal(st.bytes, strlen(code_only));
	same_as_full(out[0], a);
	assert_string_equal(out[0]->version_full, version1);

	/* a shrank (rewritten shorter, same inode): read from the start */
	put(a, "w", "v8-version,12,0,1,2,0\nscript-source,4,other.js,x\n");
	list(c, paths, 2, out, &st);
	assert_int_equal(st.whole, 1);
	same_as_full(out[0], a);
	assert_string_equal(out[0]->name, "other.js");
	assert_string_equal(v8log_scan__version(out[0]->scan), "12.0.1.2");

	/* b replaced by another file (rename over it): read from the start */
	snprintf(tmp, sizeof(tmp), "%s/new", tmpdir);
	put(tmp, "w", head);
	put(tmp, "a", rest);
	assert_int_equal(rename(tmp, b), 0);
	list(c, paths, 2, out, &st);
	assert_int_equal(st.unchanged, 1);
	assert_int_equal(st.whole, 1);
	same_as_full(out[1], b);

	/* a deleted: an error for it, and forgotten by the listing that does not see it */
	assert_int_equal(unlink(a), 0);
	listing_cache__begin(c);
	assert_int_equal(listing_cache__read(c, 0, a, NULL, &out[0], &why), -ENOENT);
	assert_null(out[0]);
	assert_int_equal(listing_cache__read(c, 0, b, NULL, &out[1], NULL), 0);
	listing_cache__end(c);
	listing_cache__stats(c, &st);
	assert_int_equal(st.forgotten, 1);
	assert_int_equal(st.logs, 1);
	assert_int_equal(st.unchanged, 1);
	list(c, paths + 1, 1, out + 1, &st);
	assert_int_equal(st.forgotten, 0);
	assert_int_equal(st.unchanged, 1);

	/* a symlink where a log was: refused (safe_open), not followed */
	assert_int_equal(symlink(b, a), 0);
	listing_cache__begin(c);
	assert_int_equal(listing_cache__read(c, 0, a, NULL, &out[0], &why), -ELOOP);
	assert_string_not_equal(why, "");
	/* not a code log name */
	assert_int_equal(listing_cache__read(c, 0, tmp, NULL, &out[0], NULL), -EINVAL);
	listing_cache__end(c);
	listing_cache__free(c);
}

/* A fresh cache and a long-lived one agree, log by log, after many appends. */
static void test_appends_match_fresh(void **state)
{
	char p[128], line[160];
	const char *paths[1] = { p };
	const struct listing_log *kept, *fresh;
	struct listing_cache *c = listing_cache__new(), *once;
	struct listing_cache_stats st;

	(void)state;
	snprintf(p, sizeof(p), "%s/isolate-0xc000-42-v8.log", tmpdir);
	put(p, "w", "v8-version,11,3,244,8,0\n");
	for (int i = 0; i < 20; i++) {
		snprintf(line, sizeof(line), "code-creation,JS,2,1,0x%x,16,f%d w%d.js:1:1,0x10,~\n",
			 0x1000 + i, i, i);
		put(p, "a", line);
		if (i % 4 == 0) {
			snprintf(line, sizeof(line), "script-source,%d,w%d.js,body %d\n", i + 10,
				 i, i);
			put(p, "a", line);
		}
		list(c, paths, 1, &kept, &st);
		assert_int_equal(st.whole + st.appended, 1);
		once = listing_cache__new();
		list(once, paths, 1, &fresh, &st);
		assert_string_equal(kept->version_full, fresh->version_full);
		assert_string_equal(kept->name, fresh->name);
		same_as_full(kept, p);
		listing_cache__free(once);
	}
	listing_cache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_same_shrink_replace_delete),
		cmocka_unit_test(test_appends_match_fresh),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
