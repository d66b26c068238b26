// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests for symbolize/sha256: FIPS 180-4 examples and sha256sum. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/sha256.h"

static void hex_of(const void *data, size_t len, char hex[SHA256_HEX_LEN])
{
	uint8_t d[SHA256_DIGEST_LEN];

	sha256__digest(data, len, d);
	sha256__hex(d, hex);
}

static void test_fips_vectors(void **state)
{
	/* FIPS 180-4 examples (NIST "SHA256.pdf", "SHA2_Additional"). */
	static const struct {
		const char *msg;
		const char *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1" },
		{ "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
		  "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1" },
	};
	char hex[SHA256_HEX_LEN];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		hex_of(v[i].msg, strlen(v[i].msg), hex);
		assert_string_equal(hex, v[i].hex);
	}
}

static void test_million_a(void **state)
{
	static const char want[] = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_LEN];
	char hex[SHA256_HEX_LEN], chunk[1000];
	char *big = malloc(1000000);
	int i;

	(void)state;
	assert_non_null(big);
	memset(big, 'a', 1000000);
	hex_of(big, 1000000, hex);
	assert_string_equal(hex, want);

	/* The same through the streaming interface, in 1000-byte pieces. */
	memset(chunk, 'a', sizeof(chunk));
	sha256__init(&ctx);
	for (i = 0; i < 1000; i++)
		sha256__update(&ctx, chunk, sizeof(chunk));
	sha256__final(&ctx, d);
	sha256__hex(d, hex);
	assert_string_equal(hex, want);
	free(big);
}

/* Split points must not matter, around the 64-byte block and the 56-byte pad limit. */
static void test_streaming_splits(void **state)
{
	uint8_t msg[300], d[SHA256_DIGEST_LEN];
	char one[SHA256_HEX_LEN], parts[SHA256_HEX_LEN];
	struct sha256_ctx ctx;
	size_t len, cut, i;

	(void)state;
	for (i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 7 + 3);
	for (len = 0; len <= 200; len++) {
		hex_of(msg, len, one);
		for (cut = 0; cut <= len; cut += (len < 70 ? 1 : 13)) {
			sha256__init(&ctx);
			sha256__update(&ctx, msg, cut);
			sha256__update(&ctx, msg + cut, 0);
			sha256__update(&ctx, msg + cut, len - cut);
			sha256__final(&ctx, d);
			sha256__hex(d, parts);
			assert_string_equal(one, parts);
		}
	}
}

/* Independent check: the system's sha256sum on files of awkward sizes. */
static void test_against_sha256sum(void **state)
{
	static const size_t sizes[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 1000, 65537, 1 << 20 };
	char dir[] = "/tmp/isoprof-sha256.XXXXXX", path[256], cmd[512], line[256];
	char hex[SHA256_HEX_LEN];
	uint8_t *data;
	size_t i, j;
	FILE *f;

	(void)state;
	if (system("command -v sha256sum >/dev/null 2>&1") != 0) {
		print_message("sha256sum not found: comparison skipped\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	data = malloc(1 << 20);
	assert_non_null(data);
	srandom(12345);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizes[i]; j++)
			data[j] = (uint8_t)random();
		snprintf(path, sizeof(path), "%s/f%zu", dir, i);
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(data, 1, sizes[i], f), sizes[i]);
		assert_int_equal(fclose(f), 0);

		snprintf(cmd, sizeof(cmd), "sha256sum '%s'", path);
		f = popen(cmd, "r");
		assert_non_null(f);
		assert_non_null(fgets(line, sizeof(line), f));
		assert_int_equal(pclose(f), 0);
		line[64] = '\0';
		hex_of(data, sizes[i], hex);
		assert_string_equal(hex, line);
		unlink(path);
	}
	free(data);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_vectors),
		cmocka_unit_test(test_million_a),
		cmocka_unit_test(test_streaming_splits),
		cmocka_unit_test(test_against_sha256sum),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
