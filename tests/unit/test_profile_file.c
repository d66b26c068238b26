// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for proto/profile_file: telling pprof (raw and gzip), V8's
 * CPU and heap profiles (bare and as CDP replies) and folded stacks apart,
 * the formats a caller accepts, reading from a pipe and from standard
 * input, and the pprof each of them becomes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/profile_file.h"

#define ALL PROFILE_FORMATS_ALL
#define BIT(f) PROFILE_FORMAT_BIT(f)

static const char cpuprofile[] =
	"{\"nodes\":[{\"id\":1,\"callFrame\":{\"functionName\":\"(root)\",\"scriptId\":\"0\","
	"\"url\":\"\",\"lineNumber\":-1,\"columnNumber\":-1},\"children\":[2]},"
	"{\"id\":2,\"callFrame\":{\"functionName\":\"work\",\"scriptId\":\"1\","
	"\"url\":\"file:///a.js\",\"lineNumber\":3,\"columnNumber\":1},\"hitCount\":2}],"
	"\"startTime\":0,\"endTime\":3000,\"samples\":[2,2,2],\"timeDeltas\":[1000,1000,1000]}";

static const char heapprofile[] =
	"{\"head\":{\"id\":1,\"selfSize\":0,\"callFrame\":{\"functionName\":\"(root)\"},"
	"\"children\":[{\"id\":2,\"selfSize\":4096,\"callFrame\":{\"functionName\":\"alloc\","
	"\"url\":\"file:///h.js\",\"lineNumber\":1,\"columnNumber\":2}}]},"
	"\"samples\":[{\"nodeId\":2,\"size\":4096}]}";

static const char folded[] = "main;work 3\nmain;idle 1\n";

/* Parse data with formats; 0 or the error, err filled. */
static int parse(struct profile_file *pf, const void *data, size_t len, unsigned int formats,
		 char *err, size_t errlen)
{
	int ret;

	memset(pf, 0, sizeof(*pf));
	err[0] = '\0';
	ret = profile_file__set_data(pf, data, len, err, errlen);
	return ret ? ret : profile_file__parse(pf, formats, err, errlen);
}

/* A pprof profile's bytes, made from folded stacks. */
static uint8_t *pprof_bytes(bool gzip, size_t *len)
{
	struct profile_file pf;
	uint8_t *out;
	char err[256];

	assert_int_equal(parse(&pf, folded, strlen(folded), BIT(PROFILE_FOLDED), err,
			       sizeof(err)), 0);
	assert_int_equal(profile_file__pprof_bytes(&pf, gzip, &out, len, err, sizeof(err)), 0);
	profile_file__release(&pf);
	return out;
}

static int64_t total(const struct pprof_profile *p, size_t index)
{
	int64_t sum = 0;

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++)
		sum += pprof_profile__value(p, s, index);
	return sum;
}

static void test_format_names(void **state)
{
	enum profile_format f;

	(void)state;
	for (int i = 0; i < NR_PROFILE_FORMATS; i++) {
		assert_true(profile_format__parse(profile_format__str(i), &f));
		assert_int_equal(f, i);
	}
	assert_string_equal(profile_format__str(PROFILE_HEAPPROFILE), "heapprofile");
	assert_false(profile_format__parse("svg", &f));
}

static void test_tell(void **state)
{
	char cdp[sizeof(cpuprofile) + 64], err[256];
	struct profile_file pf;
	uint8_t *pb;
	size_t len;

	(void)state;
	/* pprof, raw and gzip */
	for (int gz = 0; gz < 2; gz++) {
		pb = pprof_bytes(gz, &len);
		assert_int_equal(parse(&pf, pb, len, ALL, err, sizeof(err)), 0);
		assert_int_equal(pf.format, PROFILE_PPROF);
		assert_non_null(pf.prof);
		assert_int_equal(total(pf.prof, 0), 4);
		assert_false(profile_file__is_v8_cpu(&pf));
		profile_file__release(&pf);
		free(pb);
	}
	/* a .cpuprofile, bare and as a CDP reply, after a BOM and blanks */
	assert_int_equal(parse(&pf, cpuprofile, strlen(cpuprofile), ALL, err, sizeof(err)), 0);
	assert_int_equal(pf.format, PROFILE_CPUPROFILE);
	assert_int_equal(pf.cpu->nsamples, 3);
	assert_true(profile_file__is_v8_cpu(&pf));
	profile_file__release(&pf);
	snprintf(cdp, sizeof(cdp), "\xef\xbb\xbf \n{\"id\":7,\"result\":{\"profile\":%s}}",
		 cpuprofile);
	/* json-c takes no BOM: the BOM only routes the text to the JSON reader */
	assert_int_equal(parse(&pf, cdp, strlen(cdp), ALL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "invalid JSON"));
	profile_file__release(&pf);
	assert_int_equal(parse(&pf, cdp + 3, strlen(cdp + 3), ALL, err, sizeof(err)), 0);
	assert_int_equal(pf.format, PROFILE_CPUPROFILE);
	profile_file__release(&pf);
	/* a heap profile */
	assert_int_equal(parse(&pf, heapprofile, strlen(heapprofile), ALL, err, sizeof(err)), 0);
	assert_int_equal(pf.format, PROFILE_HEAPPROFILE);
	assert_false(profile_file__is_v8_cpu(&pf));
	profile_file__release(&pf);
	/* folded text, and garbage with a NUL byte is pprof's error */
	assert_int_equal(parse(&pf, folded, strlen(folded), ALL, err, sizeof(err)), 0);
	assert_int_equal(pf.format, PROFILE_FOLDED);
	assert_non_null(pf.builder);
	profile_file__release(&pf);
	assert_true(parse(&pf, "\x08\xff\x00z", 4, ALL, err, sizeof(err)) < 0);
	assert_int_equal(pf.format, PROFILE_AUTO);
	assert_null(pf.prof);
	assert_true(err[0]);
	profile_file__release(&pf);
	/* JSON that is no V8 profile */
	assert_int_equal(parse(&pf, "{\"a\":1}", 7, ALL, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a V8 CPU or heap profile"));
	profile_file__release(&pf);
	/* empty */
	assert_int_equal(parse(&pf, "", 0, ALL, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty file");
	profile_file__release(&pf);
}

static void test_accepted_formats(void **state)
{
	unsigned int pprof_or_cpu = BIT(PROFILE_PPROF) | BIT(PROFILE_CPUPROFILE);
	struct profile_file pf;
	char err[256];

	(void)state;
	/* one format: read as that one, whatever the content looks like */
	assert_true(parse(&pf, cpuprofile, strlen(cpuprofile), BIT(PROFILE_PPROF), err,
			  sizeof(err)) < 0);
	assert_null(strstr(err, "JSON"));
	profile_file__release(&pf);
	assert_int_equal(parse(&pf, folded, strlen(folded), BIT(PROFILE_CPUPROFILE), err,
			       sizeof(err)), -EINVAL);
	assert_string_equal(err, "not JSON: a V8 profile is a JSON object");
	profile_file__release(&pf);
	/* CPU profiles only among the JSON ones: a heap profile is read as one and fails */
	assert_int_equal(parse(&pf, heapprofile, strlen(heapprofile), pprof_or_cpu, err,
			       sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no \"nodes\" member: not a V8 CPU profile"));
	profile_file__release(&pf);
	/* no folded text accepted: text is pprof's error */
	assert_true(parse(&pf, folded, strlen(folded), pprof_or_cpu, err, sizeof(err)) < 0);
	assert_null(pf.builder);
	profile_file__release(&pf);
}

static void test_to_pprof(void **state)
{
	const char *comments[] = { "from a test" };
	struct v8_pprof_opts o = { .comments = comments, .ncomments = 1 };
	struct profile_file pf, back;
	uint8_t *raw, *gz;
	size_t raw_len, gz_len;
	const char *unit;
	char err[256];

	(void)state;
	/* a .cpuprofile: the conversion read back, V8's by its comment */
	assert_int_equal(parse(&pf, cpuprofile, strlen(cpuprofile), ALL, err, sizeof(err)), 0);
	assert_int_equal(profile_file__convert(&pf, &o, 0, err, sizeof(err)), 0);
	assert_int_equal(profile_file__profile(&pf, err, sizeof(err)), 0);
	assert_int_equal(total(pf.prof, 0), 3);
	assert_int_equal(pprof_profile__proto(pf.prof)->n_comment, 2);
	assert_int_equal(profile_file__pprof_bytes(&pf, false, &raw, &raw_len, err, sizeof(err)),
			 0);
	profile_file__release(&pf);
	assert_int_equal(parse(&back, raw, raw_len, ALL, err, sizeof(err)), 0);
	assert_int_equal(back.format, PROFILE_PPROF);
	assert_true(profile_file__is_v8_cpu(&back));
	/* a pprof input packed again, gzip'd: the same profile */
	assert_int_equal(profile_file__pprof_bytes(&back, true, &gz, &gz_len, err, sizeof(err)),
			 0);
	profile_file__release(&back);
	assert_true(gz[0] == 0x1f && gz[1] == 0x8b);
	assert_int_equal(parse(&back, gz, gz_len, ALL, err, sizeof(err)), 0);
	assert_int_equal(total(back.prof, 0), 3);
	profile_file__release(&back);
	free(raw);
	free(gz);

	/* a heap profile with its interval */
	assert_int_equal(parse(&pf, heapprofile, strlen(heapprofile), ALL, err, sizeof(err)), 0);
	assert_int_equal(profile_file__convert(&pf, NULL, 32768, err, sizeof(err)), 0);
	assert_int_equal(profile_file__profile(&pf, err, sizeof(err)), 0);
	assert_string_equal(pprof_profile__sample_type(pf.prof, 1, &unit), "alloc_space");
	assert_string_equal(unit, "bytes");
	assert_int_equal(total(pf.prof, 1), 4096);
	assert_int_equal(pprof_profile__proto(pf.prof)->period, 32768);
	profile_file__release(&pf);
}

/* A child writes data into the pipe fd, then exits. */
static pid_t feed(int fd, const void *data, size_t len)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		_exit(write(fd, data, len) == (ssize_t)len ? 0 : 1);
	}
	return pid;
}

static void test_read_streams(void **state)
{
	const char *base = getenv("TEST_TMP");
	char dir[4096], path[4200], err[256];
	struct profile_file pf = { 0 };
	int fds[2], saved, status, fd;
	pid_t pid;

	(void)state;
	/* standard input: "-" */
	assert_int_equal(pipe(fds), 0);
	pid = feed(fds[1], folded, strlen(folded));
	close(fds[1]);
	saved = dup(STDIN_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
	close(fds[0]);
	assert_int_equal(profile_file__read(&pf, "-", err, sizeof(err)), 0);
	assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
	close(saved);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(pf.len, strlen(folded));
	assert_int_equal(profile_file__parse(&pf, ALL, err, sizeof(err)), 0);
	assert_int_equal(pf.format, PROFILE_FOLDED);
	profile_file__release(&pf);

	/* a FIFO by name, a directory, a missing file */
	snprintf(dir, sizeof(dir), "%s/test_profile_file.XXXXXX", base && *base ? base : "/tmp");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		fd = open(path, O_WRONLY);
		_exit(fd >= 0 && write(fd, cpuprofile, strlen(cpuprofile)) > 0 ? 0 : 1);
	}
	assert_int_equal(profile_file__read(&pf, path, err, sizeof(err)), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(pf.len, strlen(cpuprofile));
	profile_file__release(&pf);
	assert_int_equal(profile_file__read(&pf, dir, err, sizeof(err)), -EISDIR);
	assert_string_equal(err, strerror(EISDIR));
	unlink(path);
	assert_int_equal(profile_file__read(&pf, path, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, strerror(ENOENT));
	/* an empty file */
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(profile_file__read(&pf, path, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty file");
	assert_null(pf.data);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_names),
		cmocka_unit_test(test_tell),
		cmocka_unit_test(test_accepted_formats),
		cmocka_unit_test(test_to_pprof),
		cmocka_unit_test(test_read_streams),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
