// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The report room: flame_svg (the static flamegraph), web_assets (the
 * embedded page) and top (the flat/cum table) over one small profile.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "user/report/flame_svg.h"
#include "user/report/top.h"
#include "proto/pprof_reader.h"
#include "user/report/web_assets.h"

/* root -> hot<&> (a.js) 30, root -> kernel frame with a non-UTF-8 name 10. */
static struct pprof_profile *small_profile(void)
{
	static char *strs[] = { "", "cpu", "nanoseconds", "root", "hot<&>", "a.js",
				"[kernel.kallsyms]", "bad\xff\x01name" };
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType st = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *stp = &st;
	Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT, *mp = &m;
	Perftools__Profiles__Function f[3], *fp[3];
	Perftools__Profiles__Line ln[3], *lnp[3];
	Perftools__Profiles__Location l[3], *lp[3];
	Perftools__Profiles__Sample s[2], *sp[2];
	uint64_t ids[2][2] = { { 2, 1 }, { 3, 1 } };
	int64_t vals[2] = { 30000000, 10000000 };
	struct pprof_profile *prof = NULL;
	uint8_t *buf;
	size_t len;
	char err[256];

	st.type = 1;
	st.unit = 2;
	m.id = 1;
	m.filename = 6;
	for (int i = 0; i < 3; i++) {
		perftools__profiles__function__init(&f[i]);
		f[i].id = (uint64_t)i + 1;
		f[i].name = i == 2 ? 7 : 3 + i;
		f[i].filename = i == 1 ? 5 : 0;
		f[i].start_line = i == 1 ? 7 : 0;
		fp[i] = &f[i];
		perftools__profiles__line__init(&ln[i]);
		ln[i].function_id = (uint64_t)i + 1;
		lnp[i] = &ln[i];
		perftools__profiles__location__init(&l[i]);
		l[i].id = (uint64_t)i + 1;
		l[i].mapping_id = i == 2 ? 1 : 0;
		l[i].n_line = 1;
		l[i].line = &lnp[i];
		lp[i] = &l[i];
	}
	for (int i = 0; i < 2; i++) {
		perftools__profiles__sample__init(&s[i]);
		s[i].location_id = ids[i];
		s[i].n_location_id = 2;
		s[i].value = &vals[i];
		s[i].n_value = 1;
		sp[i] = &s[i];
	}
	p.string_table = strs;
	p.n_string_table = sizeof(strs) / sizeof(strs[0]);
	p.sample_type = &stp;
	p.n_sample_type = 1;
	p.mapping = &mp;
	p.n_mapping = 1;
	p.function = fp;
	p.n_function = 3;
	p.location = lp;
	p.n_location = 3;
	p.sample = sp;
	p.n_sample = 2;
	len = perftools__profiles__profile__get_packed_size(&p);
	buf = malloc(len);
	assert_non_null(buf);
	perftools__profiles__profile__pack(&p, buf);
	assert_int_equal(pprof_profile__parse(buf, len, &prof, err, sizeof(err)), 0);
	free(buf);
	return prof;
}

static char *svg_of(struct pprof_profile *prof, const char *title)
{
	struct flame_svg_opts o = { .title = title, .sample_index = 0, .width = 800 };
	char *out = NULL, err[256];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(flame_svg__write(prof, &o, f, err, sizeof(err)), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_svg(void **state)
{
	struct pprof_profile *prof = small_profile();
	char *svg = svg_of(prof, "t<1>");

	(void)state;
	assert_non_null(strstr(svg, "<?xml version=\"1.0\""));
	assert_non_null(strstr(svg, "<title>t&lt;1&gt;</title>"));
	/* hover title: escaped name, file:line, cum and flat shares */
	assert_non_null(strstr(svg, "<title>hot&lt;&amp;&gt; (a.js:7)\ncum 30 ms (75.00%), "
				    "flat 30 ms (75.00%), js</title>"));
	assert_non_null(strstr(svg, "<title>all\ncum 40 ms (100.00%)"));
	/* bytes that are not UTF-8, and control characters, become U+FFFD */
	assert_non_null(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbdname"));
	assert_null(strchr(svg, '\xff'));
	assert_null(strchr(svg, '\x01'));
	assert_non_null(strstr(svg, "kernel</title>"));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
	pprof_profile__free(prof);
}

static char *top_of(struct pprof_profile *prof, const struct top_opts *o)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	assert_non_null(f);
	assert_int_equal(top__print(prof, o, f), 0);
	assert_int_equal(fclose(f), 0);
	return out;
}

static void test_top(void **state)
{
	struct pprof_profile *prof = small_profile();
	struct top_filter focus, bad;
	struct top_opts o = { 0 };
	char *out, err[128];

	(void)state;
	out = top_of(prof, &o);
	assert_non_null(strstr(out, "Type: cpu\n"));
	assert_non_null(strstr(out, "Showing nodes accounting for 40ms, 100% of 40ms total\n"));
	assert_non_null(strstr(out, "      flat  flat%   sum%        cum   cum%\n"
				    "      30ms 75.00% 75.00%       30ms 75.00%  hot<&>\n"
				    "      10ms 25.00%   100%       10ms 25.00%  bad\xff\x01name\n"
				    "         0     0%   100%       40ms   100%  root\n"));
	free(out);

	assert_int_equal(top_filter__compile(&focus, "^hot", err, sizeof(err)), 0);
	o.focus = &focus;
	o.cum_sort = true;
	out = top_of(prof, &o);
	/* percentages stay relative to the unfiltered total */
	assert_non_null(strstr(out, "Active filters:\n   focus=^hot\n"));
	assert_non_null(strstr(out, "      30ms 75.00% 75.00%       30ms 75.00%  hot<&>\n"));
	assert_null(strstr(out, "name\n"));
	free(out);
	top_filter__release(&focus);

	assert_int_equal(top_filter__compile(&bad, "(", err, sizeof(err)), -EINVAL);
	assert_true(err[0]);
	top_filter__release(&bad);
	pprof_profile__free(prof);
}

static void test_kind(void **state)
{
	(void)state;
	assert_string_equal(flame_svg__kind("fib", "w.js", ""), "js");
	assert_string_equal(flame_svg__kind("Builtins_JSEntry", "", "/usr/bin/node"), "v8");
	assert_string_equal(flame_svg__kind("Builtin:ArrayPrototypePush", "", ""), "v8");
	assert_string_equal(flame_svg__kind("do_syscall_64", "", "[kernel.kallsyms]"), "kernel");
	assert_string_equal(flame_svg__kind("(garbage collector)", "", ""), "synthetic");
	assert_string_equal(flame_svg__kind("[unknown] libc.so.6", "", "/lib/libc.so.6"),
			    "unknown");
	assert_string_equal(flame_svg__kind("uv_run", "", "/usr/bin/node"), "native");
}

static void test_assets(void **state)
{
	const struct web_asset *a = web_assets__find("/"), *b;

	(void)state;
	assert_non_null(a);
	assert_string_equal(a->path, "/index.html");
	assert_string_equal(a->content_type, "text/html; charset=utf-8");
	assert_true(a->len > 100);
	assert_int_equal(a->data[a->len], 0);
	assert_memory_equal(a->data, "<!doctype html>", 15);
	b = web_assets__find("/app.js");
	assert_non_null(b);
	assert_string_equal(b->content_type, "text/javascript; charset=utf-8");
	assert_non_null(web_assets__find("/isoprof.css"));
	assert_null(web_assets__find("/../Makefile"));
	assert_null(web_assets__find("/v1/targets"));
	assert_null(web_assets__at(web_assets__count()));
	for (size_t i = 0; i < web_assets__count(); i++)
		assert_true(web_assets__at(i)->len > 0);
}

static void test_standalone_page(void **state)
{
	static const uint8_t profile[] = { 'a', 'b', 'c', '<', 0xff };
	struct web_page_opts o = { .title = "</script><b>", .sample_index = 1 };
	char *page = NULL, err[256] = "";
	size_t len = 0;

	(void)state;
	assert_int_equal(web_assets__standalone_page(profile, sizeof(profile), &o, &page, &len,
						     err, sizeof(err)), 0);
	assert_int_equal(strlen(page), len);
	assert_non_null(strstr(page, "id=\"isoprof-embed\">"));
	assert_non_null(strstr(page, "\"profile\":\"YWJjPP8=\""));
	assert_non_null(strstr(page, "\"title\":\"\\u003c/script>\\u003cb>\""));
	assert_non_null(strstr(page, "\"sample_index\":1"));
	assert_null(strstr(page, "</script><b>"));
	assert_null(strstr(page, "<script src="));
	assert_null(strstr(page, "<link rel=\"stylesheet\""));
	assert_non_null(strstr(page, "IsoprofFlame"));
	assert_true(strstr(page, "isoprof-embed") < strstr(page, "</head>"));
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_assets),
		cmocka_unit_test(test_standalone_page),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
