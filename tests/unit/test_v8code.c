// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8code's decoding primitives and calibration's
 * code log reader: source position tables in both of V8's encodings (an
 * encoder written here from the format's description, so the decoder is
 * held to the format, not to itself), SourcePosition's bit fields, and
 * code-creation/code-source-info lines as node 20 writes them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/v8code.h"
#include "user/v8/calibrate.h"

static size_t put_varint(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		p[n] = z & 0x7f;
		z >>= 7;
		if (z)
			p[n] |= 0x80;
		n++;
	} while (z);
	return n;
}

static uint64_t source_position(int32_t script_offset, int32_t inlining_id)
{
	return ((uint64_t)(script_offset + 1) << 1) | ((uint64_t)(inlining_id + 1) << 31);
}

struct entry {
	int64_t offset;
	int32_t position, id;
	int statement;
};

/* V8's writer: offsets and positions as deltas from (-1, 0). */
static size_t encode(const struct entry *e, size_t n, uint32_t encoding, uint8_t *out)
{
	int64_t prev_off = -1;
	uint64_t prev_raw = 0;
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		int64_t d = e[i].offset - prev_off;
		uint64_t raw = source_position(e[i].position, e[i].id);

		if (encoding == 1)
			len += put_varint(out + len, e[i].statement ? d : -d - 1);
		else
			len += put_varint(out + len, d << 2 | (e[i].statement ? 1 : 0));
		len += put_varint(out + len, (int64_t)(raw - prev_raw));
		prev_off = e[i].offset;
		prev_raw = raw;
	}
	return len;
}

static void test_both_encodings(void **state)
{
	static const struct entry want[] = {
		{ -1, 0, -1, 1 }, { 0, 116, -1, 0 }, { 57, 151, -1, 1 }, { 123, 29, 1, 0 },
		{ 130, 170, 0, 1 }, { 130, 34, 1, 0 }, { 1107, 133, -1, 1 }, { 70000, 1 << 20, 300, 0 },
	};
	size_t n = sizeof(want) / sizeof(want[0]);
	uint8_t buf[256];

	(void)state;
	for (uint32_t enc = 1; enc <= 2; enc++) {
		struct v8code_position *got;
		size_t len = encode(want, n, enc, buf);
		long m = v8code__decode_positions(buf, len, enc, &got);

		assert_int_equal(m, (long)n);
		for (size_t i = 0; i < n; i++) {
			assert_int_equal(got[i].code_offset, want[i].offset);
			assert_int_equal(got[i].position, want[i].position);
			assert_int_equal(got[i].inlining_id, want[i].id);
		}
		free(got);
		/* the other encoding reads other offsets, or refuses */
		m = v8code__decode_positions(buf, len, 3 - enc, &got);
		if (m == (long)n) {
			int differ = 0;

			for (size_t i = 0; i < n; i++)
				differ |= got[i].code_offset != want[i].offset;
			assert_true(differ);
		}
		free(got);
		/* cut in the middle of a varint: refused, nothing handed out */
		buf[len - 1] |= 0x80;
		assert_int_equal(v8code__decode_positions(buf, len, enc, &got), -EINVAL);
		assert_null(got);
	}
	assert_int_equal(v8code__decode_positions(buf, 4, 0, &(struct v8code_position *){ NULL }),
			 -EINVAL);
	/* an empty table: no positions */
	{
		struct v8code_position *got = (void *)1;

		assert_int_equal(v8code__decode_positions(buf, 0, 1, &got), 0);
		assert_null(got);
	}
}

static void test_source_position(void **state)
{
	int32_t pos, id;

	(void)state;
	v8code__source_position(source_position(29, 1), &pos, &id);
	assert_int_equal(pos, 29);
	assert_int_equal(id, 1);
	v8code__source_position(source_position(0, -1), &pos, &id);
	assert_int_equal(pos, 0);
	assert_int_equal(id, -1);
	/* external (a wasm offset): no script offset */
	v8code__source_position(source_position(5, 2) | 1, &pos, &id);
	assert_int_equal(pos, -1);
	assert_int_equal(id, 2);
}

/* Lines from a node 20 code log (--log-code), addresses as logged. */
static const char node_log[] =
	"code-creation,JS,11,62638,0x7f60ac005b80,312,outer t.js:3:15,0x130c7baca6f0,^\n"
	"code-creation,JS,10,61502,0x130c7bacb2f6,44,outer t.js:3:15,0x130c7baca6f0,~\n"
	"code-creation,JS,13,64842,0x7f60ac006440,440,mid t.js:2:13,0x130c7baca6a0,*\n"
	"code-source-info,0x7f60ac006440,81,77,120,C0O77C57O86C93O29I0C130O90,F1O87,S0x130c7baca650\n"
	"code-creation,JS,13,64900,0x7f60ac006e80,764,outer t.js:3:15,0x130c7baca6f0,*\n"
	"code-source-info,0x7f60ac006e80,81,0,303,C0O0C57O261C257O133I0C339O29I3,"
	"F0O273F1O170I0F2O77I1F2O87I1,S0x130c7baca6f0S0x130c7baca6a0S0x130c7baca650\n"
	"code-source-info,0x7f60ac006e80,81,0,303,C0O0,F0X,S0x1\n"
	"code-creation,JS,13,64950,0x7f60ac007000,99,x a.js:1:1,0x130c7baca700,*";

static void test_code_log(void **state)
{
	struct calib_code *c;
	size_t n;

	(void)state;
	assert_int_equal(calibrate__parse_code_log(node_log, strlen(node_log), &c, &n), 0);
	/* interpreted code ("~") is not a code object of its own */
	assert_int_equal(n, 4);
	assert_int_equal(c[0].tier, '^');
	assert_int_equal(c[0].start, 0x7f60ac005b80ull);
	assert_int_equal(c[0].size, 312);
	assert_false(c[0].described);

	assert_int_equal(c[1].tier, '*');
	assert_true(c[1].described);
	assert_int_equal(c[1].npositions, 4);
	assert_int_equal(c[1].positions[2].code_offset, 93);
	assert_int_equal(c[1].positions[2].position, 29);
	assert_int_equal(c[1].positions[2].inlining_id, 0);
	assert_int_equal(c[1].positions[3].inlining_id, -1);
	assert_int_equal(c[1].ninlining, 1);
	assert_int_equal(c[1].inlining[0].function, 1);
	assert_int_equal(c[1].inlining[0].parent, -1);
	assert_int_equal(c[1].ninlined, 1);
	assert_int_equal(c[1].inlined[0], 0x130c7baca650ull);

	/* a later malformed line for the same code describes nothing, not half */
	assert_int_equal(c[2].sfi, 0x130c7baca6f0ull);
	assert_false(c[2].described);
	assert_int_equal(c[2].npositions, 0);
	assert_int_equal(c[2].ninlined, 0);

	/* the last line, without its newline, still counts */
	assert_int_equal(c[3].start, 0x7f60ac007000ull);
	calibrate__free_codes(c, n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_encodings),
		cmocka_unit_test(test_source_position),
		cmocka_unit_test(test_code_log),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
