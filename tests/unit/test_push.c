// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for user/push's pure parts: the spool record (encode, decode,
 * every kind of damage), Pyroscope's request (the name parameter's
 * cleaning and limits, the URL, the headers), what a status means, and
 * the spool's order, cap and file names.
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
#include <zlib.h>

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-test-push.XXXXXX"
#include "tests/unit/temp_dir.h"
#include "user/push/protocol.h"
#include "user/push/spool.h"
#include "user/push/spool_record.h"

static const uint8_t body[] = { 0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5 };

static struct push_window window(void)
{
	struct push_window w = {
		.service = "svc",
		.profile_type = "cpu",
		.labels = { { "script", "app.js" }, { "pid", "42" } },
		.nlabels = 2,
		.from_ns = 1700000000000000000ull,
		.until_ns = 1700000010000000000ull,
		.sample_rate_hz = 99,
		.body = body,
		.len = sizeof(body),
	};
	return w;
}

static void fix_crc(uint8_t *rec, size_t len)
{
	uint32_t c = (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), rec, len - 4);

	for (int i = 0; i < 4; i++)
		rec[len - 4 + i] = (uint8_t)(c >> (8 * i));
}

static void test_record_roundtrip(void **state)
{
	struct push_window w = window(), d;
	const char *why;
	uint8_t *rec;
	size_t len;

	(void)state;
	assert_int_equal(spool_record__encode(&w, &rec, &len), 0);
	assert_int_equal(spool_record__decode(rec, len, &d, &why), 0);
	assert_string_equal(d.service, "svc");
	assert_string_equal(d.profile_type, "cpu");
	assert_int_equal(d.nlabels, 2);
	assert_string_equal(d.labels[0].name, "script");
	assert_string_equal(d.labels[0].value, "app.js");
	assert_string_equal(d.labels[1].name, "pid");
	assert_string_equal(d.labels[1].value, "42");
	assert_true(d.from_ns == w.from_ns && d.until_ns == w.until_ns);
	assert_int_equal(d.sample_rate_hz, 99);
	assert_int_equal(d.len, sizeof(body));
	assert_memory_equal(d.body, body, sizeof(body));
	free(rec);
}

static void test_record_damage(void **state)
{
	struct push_window w = window(), d;
	const char *why;
	uint8_t *rec, *copy;
	size_t len;

	(void)state;
	assert_int_equal(spool_record__encode(&w, &rec, &len), 0);
	copy = malloc(len);
	assert_non_null(copy);
	/* cut short anywhere: refused */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(spool_record__decode(rec, n, &d, &why), -EBADMSG);
	/* any byte changed: refused (the checksum, or what it covers) */
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, rec, len);
		copy[i] ^= 0x40;
		assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
		assert_non_null(why);
	}
	/* damage with a checksum that matches it: each field's own check */
	memcpy(copy, rec, len);
	copy[8] = 2;		/* version */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	assert_string_equal(why, "unknown record version");
	memcpy(copy, rec, len);
	copy[12]++;		/* header_len */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	memcpy(copy, rec, len);
	copy[16 + 20] = PUSH_MAX_LABELS + 1;	/* nlabels */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	assert_string_equal(why, "too many labels");
	memcpy(copy, rec, len);
	copy[16 + 24 + 2 + 3] = 'x';	/* the NUL after "svc" */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	assert_string_equal(why, "string not NUL-terminated or with a NUL inside");
	memcpy(copy, rec, len);
	copy[16 + 24 + 2 + 1] = '\0';	/* a NUL inside "svc" */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	memcpy(copy, rec, len);
	copy[16 + 7] = 0x7f;	/* from_ns far after until_ns */
	fix_crc(copy, len);
	assert_int_equal(spool_record__decode(copy, len, &d, &why), -EBADMSG);
	assert_string_equal(why, "window starts after it ends");
	/* a longer file: the body length no longer adds up */
	copy = realloc(copy, len + 1);
	assert_non_null(copy);
	memcpy(copy, rec, len - 4);
	copy[len - 4] = 0;
	fix_crc(copy, len + 1);
	assert_int_equal(spool_record__decode(copy, len + 1, &d, &why), -EBADMSG);
	free(copy);
	free(rec);
}

static void test_record_refuses(void **state)
{
	struct push_window w;
	char big[SPOOL_STR_MAX + 2];
	uint8_t *rec;
	size_t len;

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	w = window();
	w.service = "";
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.len = 0;
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.from_ns = w.until_ns + 1;
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.nlabels = PUSH_MAX_LABELS + 1;
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.labels[1].value = big;
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.labels[1].value = NULL;
	assert_int_equal(spool_record__encode(&w, &rec, &len), -EINVAL);
	w = window();
	w.profile_type = NULL;
	assert_int_equal(spool_record__encode(&w, &rec, &len), 0);
	free(rec);
}

static void expect_name(struct push_window *w, const char *want)
{
	char *name;

	assert_int_equal(pyroscope__name_param(w, &name), 0);
	assert_string_equal(name, want);
	free(name);
}

static void test_pyroscope_name(void **state)
{
	struct push_window w = window();
	char *name, *big = malloc(5000);

	(void)state;
	assert_non_null(big);
	expect_name(&w, "svc{script=app.js,pid=42}");
	/* the service: [A-Za-z0-9_.-/] only */
	w.service = "my app{x}/v1.2-b";
	w.nlabels = 0;
	expect_name(&w, "my_app_x_/v1.2-b{}");
	/* names: Prometheus' rule; reserved and duplicate ones left out */
	w.service = "s";
	w.labels[0] = (struct push_label){ "1st", "a" };
	w.labels[1] = (struct push_label){ "a.b-c", "b" };
	w.labels[2] = (struct push_label){ "__private", "c" };
	w.labels[3] = (struct push_label){ "service_name", "d" };
	w.labels[4] = (struct push_label){ "pyroscope_spy", "e" };
	w.labels[5] = (struct push_label){ "a_b_c", "dup" };
	w.labels[6] = (struct push_label){ "empty", "  " };
	w.labels[7] = (struct push_label){ "", "x" };
	w.nlabels = 8;
	expect_name(&w, "s{_1st=a,a_b_c=b}");
	/* values: no ',' or '}' (no escape exists), no control bytes, UTF-8 only, trimmed */
	w.labels[0] = (struct push_label){ "v", " a,b}c{d=e\x1b\xff caf\xc3\xa9 " };
	w.nlabels = 1;
	expect_name(&w, "s{v=a_b_c{d=e__ caf\xc3\xa9}");
	/* lengths: values cut at 2048 bytes on a character, names at 1024 */
	memset(big, 'a', 2047);
	strcpy(big + 2047, "\xc3\xa9zz");
	w.labels[0] = (struct push_label){ "v", big };
	assert_int_equal(pyroscope__name_param(&w, &name), 0);
	assert_int_equal(strlen(name), strlen("s{v=}") + 2047);
	free(name);
	memset(big, 'n', 4999);
	big[4999] = '\0';
	w.labels[0] = (struct push_label){ big, "x" };
	assert_int_equal(pyroscope__name_param(&w, &name), 0);
	assert_int_equal(strlen(name), strlen("s{=x}") + 1024);
	free(name);
	w.service = "";
	assert_int_equal(pyroscope__name_param(&w, &name), -EINVAL);
	free(big);
}

static void test_pyroscope_request(void **state)
{
	const struct push_protocol *pr = push_protocol__find("pyroscope");
	struct push_target t = { .url = "https://store.example/base" };
	struct push_window w = window();
	struct push_request rq;

	(void)state;
	assert_non_null(pr);
	assert_null(push_protocol__find("nope"));
	assert_string_equal(push_protocol__names(), "pyroscope");
	w.labels[0].value = "a b&c=d";
	assert_int_equal(pr->build(&t, &w, &rq), 0);
	assert_string_equal(rq.url, "https://store.example/base/ingest?name=svc%7Bscript%3Da%20b%26c"
				    "%3Dd%2Cpid%3D42%7D&from=1700000000&until=1700000010"
				    "&format=pprof&sampleRate=99&spyName=isoprof");
	assert_int_equal(rq.nheaders, 1);
	assert_string_equal(rq.headers[0], "Content-Type: application/octet-stream");
	assert_ptr_equal(rq.body, body);
	assert_int_equal(rq.len, sizeof(body));
	push_request__free(&rq);

	/* a window shorter than a second spans one; token and tenant as headers */
	t.token = "tok";
	t.tenant = "team";
	w.from_ns = 1700000000100000000ull;
	w.until_ns = 1700000000200000000ull;
	w.sample_rate_hz = 0;
	assert_int_equal(pr->build(&t, &w, &rq), 0);
	assert_non_null(strstr(rq.url, "&from=1700000000&until=1700000001&format=pprof&sampleRate=100&"));
	assert_int_equal(rq.nheaders, 3);
	assert_string_equal(rq.headers[1], "Authorization: Bearer tok");
	assert_string_equal(rq.headers[2], "X-Scope-OrgID: team");
	push_request__free(&rq);
}

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(push_protocol__classify_http(200), PUSH_DONE);
	assert_int_equal(push_protocol__classify_http(204), PUSH_DONE);
	assert_int_equal(push_protocol__classify_http(400), PUSH_REJECT);
	assert_int_equal(push_protocol__classify_http(401), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(403), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(413), PUSH_REJECT);
	assert_int_equal(push_protocol__classify_http(408), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(429), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(500), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(503), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(301), PUSH_RETRY);
	assert_int_equal(push_protocol__classify_http(0), PUSH_RETRY);
}

static void test_spool_names(void **state)
{
	uint64_t until, seq;
	char a[48], b[48];

	(void)state;
	spool__name(9, 123, a, sizeof(a));
	assert_string_equal(a, "w-00000000000000000009-0000000123.isp");
	spool__name(10, 0, b, sizeof(b));
	assert_true(strcmp(a, b) < 0);
	assert_true(spool__parse_name(a, &until, &seq));
	assert_true(until == 9 && seq == 123);
	assert_false(spool__parse_name("w-0000000000000000000x-0000000123.isp", &until, &seq));
	assert_false(spool__parse_name("w-00000000000000000009-0000000123.isp.corrupt", &until, &seq));
	assert_false(spool__parse_name(".w-00000000000000000009-0000000123.isp", &until, &seq));
	assert_true(spool__is_tmp(".w-00000000000000000009-0000000123.isp.tmp.abcdefghij"));
	assert_false(spool__is_tmp(".other.tmp.abcdefghij"));
	assert_false(spool__is_tmp(a));
}

/* n records of size bytes, window i ending at until[i] */
static void add(struct spool *s, uint64_t until, size_t size, uint64_t *dropped)
{
	uint8_t *rec = malloc(size);

	assert_non_null(rec);
	memset(rec, (int)until, size);
	assert_int_equal(spool__add(s, rec, size, until, dropped), 0);
}

static void check_order(struct spool *s, const uint64_t *want, size_t n)
{
	struct spool_item it;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(spool__take(s, &it), 0);
		assert_int_equal(it.data[0], (uint8_t)want[i]);
		spool__finish(s, &it, SPOOL_DONE);
	}
	assert_int_equal(spool__take(s, &it), -ENOENT);
}

static void test_spool_memory(void **state)
{
	struct spool *s = spool__open(NULL, 300, NULL, NULL, 0);
	static const uint64_t want[] = { 3, 4, 5 };
	struct spool_item it;
	uint64_t dropped, n, bytes;

	(void)state;
	assert_non_null(s);
	add(s, 2, 100, &dropped);
	add(s, 1, 100, &dropped);	/* older: goes first */
	add(s, 3, 100, &dropped);
	assert_int_equal(dropped, 0);
	/* the one being sent stays; the oldest idle one goes */
	assert_int_equal(spool__take(s, &it), 0);
	assert_int_equal(it.data[0], 1);
	add(s, 4, 100, &dropped);
	assert_int_equal(dropped, 1);
	spool__count(s, &n, &bytes);
	assert_true(n == 3 && bytes == 300);
	spool__finish(s, &it, SPOOL_KEEP);
	add(s, 5, 100, &dropped);
	assert_int_equal(dropped, 1);	/* window 1, no longer busy */
	assert_int_equal(spool__add(s, malloc(301), 301, 6, &dropped), -EFBIG);
	check_order(s, want, 3);
	spool__close(s);
}

static void test_spool_disk(void **state)
{
	const char *dir = *state;
	char path[512], err[256];
	struct spool_open_info info;
	static const uint64_t want[] = { 5, 7, 8 };
	struct spool *s = spool__open(dir, 1000, &info, err, sizeof(err));
	struct spool_item it;
	uint64_t dropped;
	FILE *f;

	assert_non_null(s);
	assert_int_equal(info.recovered, 0);
	/* one user at a time */
	assert_null(spool__open(dir, 1000, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "in use by another isoprof"));
	add(s, 7, 100, &dropped);
	add(s, 5, 100, &dropped);
	assert_int_equal(spool__take(s, &it), 0);
	assert_int_equal(it.data[0], 5);
	assert_true(it.owned);
	spool__finish(s, &it, SPOOL_KEEP);
	spool__close(s);

	/* a torn temporary file and a stranger's file: removed and left alone */
	snprintf(path, sizeof(path), "%s/.w-00000000000000000001-0000000000.isp.tmp.abcdefghij", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
	s = spool__open(dir, 1000, &info, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(info.recovered, 2);
	assert_int_equal(info.recovered_bytes, 200);
	assert_int_equal(info.removed_tmp, 1);
	add(s, 8, 100, &dropped);	/* its sequence follows the predecessor's */
	check_order(s, want, 3);
	spool__close(s);
	assert_int_equal(access(path, F_OK), 0);

	/* a cap smaller than what is left: the oldest go at open */
	s = spool__open(dir, 1000, NULL, err, sizeof(err));
	add(s, 1, 400, &dropped);
	add(s, 2, 400, &dropped);
	spool__close(s);
	s = spool__open(dir, 500, &info, err, sizeof(err));
	assert_non_null(s);
	assert_int_equal(info.dropped, 1);
	assert_int_equal(spool__take(s, &it), 0);
	assert_int_equal(it.data[0], 2);
	spool__finish(s, &it, SPOOL_CORRUPT);
	snprintf(path, sizeof(path), "%s/w-00000000000000000002-0000000001.isp.corrupt", dir);
	assert_int_equal(access(path, F_OK), 0);
	spool__close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_roundtrip),
		cmocka_unit_test(test_record_damage),
		cmocka_unit_test(test_record_refuses),
		cmocka_unit_test(test_pyroscope_name),
		cmocka_unit_test(test_pyroscope_request),
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_spool_names),
		cmocka_unit_test(test_spool_memory),
		cmocka_unit_test_setup_teardown(test_spool_disk, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
