// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests for symbolize/v8layout: the file format both ways, every
 * refusal of parse and check with its line and reason, and store/load in a
 * temp state directory (symlink, oversize, another build-id, missing).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/v8layout.h"

#define ID_A "0123456789abcdef0123456789abcdef01234567"
#define ID_B "fedcba9876543210fedcba9876543210fedcba98"

/* A layout as calibrate writes one for a pointer-compressed build. */
static void valid_layout(struct v8_layout *l)
{
	memset(l, 0, sizeof(*l));
	strcpy(l->build_id, ID_A);
	strcpy(l->v8_version, "15.8.62.5");
	l->compressed = true;
	l->tagged_size = 4;
	l->fn_sfi = 16;
	l->sfi_name_or_scope_info = 8;
	l->sfi_script = 12;
	l->scope_info_flags = 4;
	l->scope_info_context_locals = 8;
	l->scope_info_start = 12;
	l->scope_info_name_base = 5;
	l->scope_info_name_stride = 1;
	l->scope_info_name_hashed_from = 75;
	l->scope_info_name_hashed_base = 6;
	l->script_source = 4;
	l->script_name = 8;
	l->string_length = 8;
	l->string_chars = 12;
	l->map_instance_type = 12;
	l->sfi_map = 0x4d1;
	l->scope_info_map = 0x6a5;
	l->script_map = 0xa3d;
	l->sfi_type = 0xb9;
	l->scope_info_type = 0xbc;
	l->script_type = 0xa1;
	l->string_type_limit = 0x80;
	l->string_repr_mask = 0x7;
	l->string_one_byte_bit = 0x8;
	l->builtins_offset = 0x1c40000;
	l->builtins_size = 0x2e1b34;
	l->scope_info_inferred_delta = 2;
	l->string_cons_tag = 1;
	l->code_alignment = 64;
	l->istream_instructions = 16;
	l->istream_code = 4;
	l->istream_type = 0xc6;
	l->code_istream = 16;
	l->code_instruction_start = 20;
	l->code_instruction_size = 36;
	l->code_flags = 32;
	l->code_kind_mask = 0x1f;
	l->code_kind_turbofan = 0xd;
	l->code_kind_maglev = 0xc;
	l->code_deopt_data = 4;
	l->code_position_table = 8;
	l->array_length = 4;
	l->array_length_smi = 0;
	l->array_elements = 8;
	l->deopt_inlined_count = 1;
	l->deopt_literals = 3;
	l->deopt_sfi = 7;
	l->deopt_sfi_wrapper = 4;
	l->deopt_inlining_positions = 8;
	l->spt_encoding = 2;
	l->deopt_format = 1;
	l->deopt_opcodes = 47;
	l->deopt_translation = 0;
	l->deopt_exit_start = 9;
	l->deopt_eager_count = 10;
	l->deopt_lazy_count = 11;
	l->deopt_first_entry = 12;
	l->deopt_entry_size = 3;
	l->deopt_entry_translation = 1;
	l->deopt_entry_pc = 2;
	l->deopt_eager_exit_size = 4;
	l->deopt_lazy_exit_size = 4;
	l->maglev_safepoint_length = 4;
	l->maglev_safepoint_config = 8;
	l->maglev_safepoint_header = 16;
}

static size_t format_valid(char *buf, size_t len)
{
	struct v8_layout l;
	size_t n;

	valid_layout(&l);
	n = v8layout__format(&l, buf, len);
	assert_true(n < len);
	return n;
}

/* Parse from an exact-size heap copy, so ASan sees any read past the end. */
static int parse(const char *text, struct v8_layout *out, char *err, size_t err_len)
{
	size_t len = strlen(text);
	char *copy = malloc(len ? len : 1);
	int ret;

	assert_non_null(copy);
	memcpy(copy, text, len);
	ret = v8layout__parse(copy, len, out, err, err_len);
	free(copy);
	return ret;
}

static void test_round_trip(void **state)
{
	struct v8_layout a, b;
	char buf[V8LAYOUT_FILE_MAX], small[16], err[256];
	size_t n;

	(void)state;
	valid_layout(&a);
	assert_int_equal(v8layout__check(&a, err, sizeof(err)), 0);
	n = v8layout__format(&a, buf, sizeof(buf));
	assert_int_equal(n, strlen(buf));
	assert_true(!strncmp(buf,
			     "isoprof-v8-layout 3\nbuild_id " ID_A "\nv8_version 15.8.62.5\n"
			     "compressed 1\ntagged_size 4\nfn_sfi 16\n",
			     100));
	assert_non_null(strstr(buf, "\nsfi_map 0x4d1\n"));
	assert_non_null(strstr(buf, "\nstring_one_byte_bit 0x8\n"));
	assert_int_equal(parse(buf, &b, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_memory_equal(&a, &b, sizeof(a));

	/* snprintf style: the length needed, a cut but terminated text */
	assert_int_equal(v8layout__format(&a, small, sizeof(small)), n);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(v8layout__format(&a, NULL, 0), n);

	/* uncompressed, version unknown: written "-", read back "" */
	a.compressed = false;
	a.tagged_size = 8;
	a.fn_sfi = 24;
	a.sfi_name_or_scope_info = 16;
	a.sfi_script = 32;
	a.scope_info_flags = 8;
	a.scope_info_context_locals = 16;
	a.scope_info_start = 24;
	a.script_source = 8;
	a.script_name = 16;
	a.sfi_map = a.scope_info_map = a.script_map = 0;
	a.scope_info_name_stride = 2;
	/* node 20's code objects */
	a.istream_code = 8;
	a.code_istream = 32;
	a.code_instruction_start = 40;
	a.code_instruction_size = 56;
	a.code_flags = 48;
	a.code_kind_turbofan = 0x1d;
	a.code_kind_maglev = 0;
	a.code_deopt_data = 16;
	a.code_position_table = 24;
	a.array_length = 8;
	a.array_length_smi = 1;
	a.array_elements = 16;
	a.deopt_literals = 2;
	a.deopt_sfi = 6;
	a.deopt_sfi_wrapper = 0;
	a.deopt_inlining_positions = 7;
	a.spt_encoding = 1;
	/* node 20: no deoptimization data learnt, no Maglev */
	memset(&a.deopt_format, 0, (size_t)((char *)(&a.maglev_safepoint_header + 1) -
					    (char *)&a.deopt_format));
	/* zero-filled, as parse leaves it, for the memcmp */
	memset(a.v8_version, 0, sizeof(a.v8_version));
	assert_int_equal(v8layout__check(&a, err, sizeof(err)), 0);
	v8layout__format(&a, buf, sizeof(buf));
	assert_non_null(strstr(buf, "\nv8_version -\n"));
	assert_non_null(strstr(buf, "\ncompressed 0\n"));
	memset(&b, 0xaa, sizeof(b));
	assert_int_equal(parse(buf, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
}

/* Comments, blank lines, CRLF, trailing blanks, any order, hex anywhere. */
static void test_lenient(void **state)
{
	static const char text[] = "\n\r\n"
				   "isoprof-v8-layout 3\r\n"
				   "# written by hand\n"
				   "string_one_byte_bit 8\n"
				   "v8_version v22.11.0 \t\n"
				   "build_id " ID_A "\r\n"
				   "\n"
				   "compressed\t1\n"
				   "tagged_size   0x4\n"
				   "fn_sfi 0x10\n"
				   "sfi_name_or_scope_info 8\n"
				   "sfi_script 12\n"
				   "scope_info_flags 4\n"
				   "scope_info_context_locals 8\n"
				   "scope_info_start 12\n"
				   "scope_info_name_base 5\n"
				   "scope_info_name_stride 1\n"
				   "scope_info_name_hashed_from 75\n"
				   "scope_info_name_hashed_base 6\n"
				   "script_source 4\n"
				   "script_name 8\n"
				   "string_length 8\n"
				   "string_chars 12\n"
				   "map_instance_type 12\n"
				   "sfi_map 0X4D1\n"
				   "scope_info_map 1701\n"
				   "script_map 0xa3d\n"
				   "sfi_type 185\n"
				   "scope_info_type 0xbc\n"
				   "script_type 0x00a1\n"
				   "string_type_limit 128\n"
				   "string_repr_mask 7\n"
				   "builtins_offset 0x1c40000\n"
				   "builtins_size 3021620\n"
				   "scope_info_inferred_delta 2\n"
				   "string_cons_tag 0x1\n"
				   "code_alignment 64\n"
				   "istream_instructions 16\n"
				   "istream_code 4\n"
				   "istream_type 0xc6\n"
				   "code_istream 16\n"
				   "code_instruction_start 20\n"
				   "code_instruction_size 36\n"
				   "code_flags 32\n"
				   "code_kind_mask 0x1f\n"
				   "code_kind_turbofan 13\n"
				   "code_kind_maglev 0xc\n"
				   "code_deopt_data 4\n"
				   "code_position_table 8\n"
				   "array_length 4\n"
				   "array_length_smi 0\n"
				   "array_elements 8\n"
				   "deopt_inlined_count 1\n"
				   "deopt_literals 3\n"
				   "deopt_sfi 7\n"
				   "deopt_sfi_wrapper 4\n"
				   "deopt_inlining_positions 8\n"
				   "spt_encoding 2\n"
				   "deopt_format 1\n"
				   "deopt_opcodes 47\n"
				   "deopt_translation 0\n"
				   "deopt_exit_start 9\n"
				   "deopt_eager_count 10\n"
				   "deopt_lazy_count 11\n"
				   "deopt_first_entry 12\n"
				   "deopt_entry_size 3\n"
				   "deopt_entry_translation 1\n"
				   "deopt_entry_pc 2\n"
				   "deopt_eager_exit_size 4\n"
				   "deopt_lazy_exit_size 0x4\n"
				   "maglev_safepoint_length 4\n"
				   "maglev_safepoint_config 8\n"
				   "maglev_safepoint_header 16\n"
				   "# the end";
	struct v8_layout want, got;
	char err[256];

	(void)state;
	valid_layout(&want);
	strcpy(want.v8_version, "v22.11.0");
	assert_int_equal(parse(text, &got, err, sizeof(err)), 0);
	assert_memory_equal(&want, &got, sizeof(want));
	/* an err buffer is optional */
	assert_int_equal(parse(text, &got, NULL, 0), 0);
	assert_int_equal(parse("", &got, NULL, 0), -EINVAL);
}

/* buf with the line of key replaced by line (NULL: removed). */
static void edit(char *buf, size_t size, const char *key, const char *line)
{
	char tmp[V8LAYOUT_FILE_MAX], pat[64];
	char *at, *eol;

	snprintf(pat, sizeof(pat), "\n%s ", key);
	at = strstr(buf, pat);
	assert_non_null(at);
	at++;
	eol = strchr(at, '\n');
	assert_non_null(eol);
	snprintf(tmp, sizeof(tmp), "%.*s%s%s%s", (int)(at - buf), buf, line ? line : "",
		 line ? "\n" : "", eol + 1);
	assert_true(strlen(tmp) < size);
	strcpy(buf, tmp);
}

static void expect_error(const char *text, const char *want, const char *what)
{
	struct v8_layout l;
	char err[256];

	print_message("%s\n", what);
	memset(&l, 0xaa, sizeof(l));
	assert_int_equal(parse(text, &l, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("%s: error \"%s\" does not say \"%s\"", what, err, want);
	/* a refused file leaves nothing half-filled behind */
	for (size_t i = 0; i < sizeof(l); i++)
		assert_int_equal(((unsigned char *)&l)[i], 0);
}

static void expect_line_error(const char *key, const char *line, const char *want)
{
	char buf[V8LAYOUT_FILE_MAX];

	format_valid(buf, sizeof(buf));
	edit(buf, sizeof(buf), key, line);
	expect_error(buf, want, line ? line : key);
}

static void test_parse_errors(void **state)
{
	char buf[V8LAYOUT_FILE_MAX], long_id[80], line[128];
	size_t n;

	(void)state;
	/* the header */
	expect_error("", "line 1: empty", "empty");
	expect_error("\n \r\n\t\n", "line 3: empty", "blank lines only");
	expect_error("isoprof-v8-layout 4\nbuild_id 00\n",
		     "line 1: \"isoprof-v8-layout 4\": a layout format of another", "newer format");
	expect_error("\n\nhello\n", "line 3: \"hello\": not an isoprof V8 layout", "not a layout");
	expect_error("isoprof-v8-layout  2\n", "line 1:", "two blanks in the header");
	expect_error("isoprof-v8-layout 3x\n", "line 1:", "header with more");
	expect_error("# comment\nisoprof-v8-layout 2\n", "line 1:", "comment before the header");
	format_valid(buf, sizeof(buf));
	buf[3] = '\0';
	expect_error(buf, "not an isoprof V8 layout", "NUL in the header");

	/* unknown, duplicate and missing keys, with the line they are on */
	expect_error("isoprof-v8-layout 3\n\n# c\nbogus 1\n", "line 4: unknown key \"bogus\"",
		     "unknown key");
	expect_line_error("fn_sfi", "fn_sfi 16\nfn_sfi 16",
			  "line 7: fn_sfi: a second time (first on line 6)");
	expect_line_error("fn_sfi", "FN_SFI 16", "unknown key \"FN_SFI\"");
	expect_line_error("script_type", NULL, "without a script_type line");
	expect_line_error("build_id", NULL, "without a build_id line");
	expect_error("isoprof-v8-layout 3\n", "line 1: end of the file without a build_id line",
		     "header only");
	format_valid(buf, sizeof(buf));
	n = strlen(buf);
	snprintf(buf + n, sizeof(buf) - n, "new_field_of_isoprof_2 4\n");
	expect_error(buf, "line 71: unknown key \"new_field_of_isoprof_2\"", "a newer field");

	/* line shapes */
	expect_line_error("fn_sfi", "fn_sfi", "fn_sfi: no value");
	expect_line_error("fn_sfi", "fn_sfi \t ", "fn_sfi: no value");
	expect_line_error("fn_sfi", " fn_sfi 16", "a line starting with a blank");
	expect_line_error("fn_sfi", "fn_sfi 16 # offset", "fn_sfi: a value with blanks");
	expect_line_error("v8_version", "v8_version 15.8 beta", "a value with blanks");

	/* numbers */
	expect_line_error("fn_sfi", "fn_sfi 1x", "fn_sfi \"1x\": not a decimal or 0x-hex number");
	expect_line_error("fn_sfi", "fn_sfi -4", "not a decimal or 0x-hex number");
	expect_line_error("fn_sfi", "fn_sfi +4", "not a decimal or 0x-hex number");
	expect_line_error("fn_sfi", "fn_sfi 0x", "not a decimal or 0x-hex number");
	expect_line_error("fn_sfi", "fn_sfi 0xg", "not a decimal or 0x-hex number");
	expect_line_error("fn_sfi", "fn_sfi 016", "leading zero");
	expect_line_error("sfi_map", "sfi_map 4294967296",
			  "sfi_map \"4294967296\": above the u32 range");
	expect_line_error("sfi_map", "sfi_map 0x100000000", "above the u32 range");
	expect_line_error("sfi_map", "sfi_map 0x0000000000000000001", "too long for a number");
	expect_line_error("sfi_map", "sfi_map 99999999999999999999999", "too long");
	expect_line_error("sfi_map", "sfi_map 1e3", "not a decimal");
	expect_line_error("compressed", "compressed 2", "compressed \"2\": not 0 or 1");
	expect_line_error("compressed", "compressed true", "not 0 or 1");
	expect_line_error("compressed", "compressed 01", "not 0 or 1");

	/* build_id */
	expect_line_error("build_id", "build_id 0123ABCD", "build_id \"0123ABCD\": not 2");
	expect_line_error("build_id", "build_id 0", "not 2 or more lowercase hex digits");
	expect_line_error("build_id", "build_id 01234g", "lowercase hex");
	memset(long_id, 'a', 65);
	long_id[65] = '\0';
	snprintf(line, sizeof(line), "build_id %s", long_id);
	expect_line_error("build_id", line, "build_id: longer than 64 hex digits");

	/* v8_version */
	expect_line_error("v8_version", "v8_version 0123456789012345678901234567890123",
			  "v8_version: longer than 31 characters");
	expect_line_error("v8_version", "v8_version 15.8\x01", "not printable ASCII");
	expect_line_error("v8_version", "v8_version 15.8\xc3\xa9", "not printable ASCII");

	/* fields that parse but do not check */
	expect_line_error("tagged_size", "tagged_size 8",
			  "tagged_size 8 with compressed 1: must be 4");
	expect_line_error("fn_sfi", "fn_sfi 6", "fn_sfi 6: not a multiple of the tagged size 4");
	expect_line_error("string_chars", "string_chars 256", "past an object's first 256 bytes");
	expect_line_error("scope_info_name_stride", "scope_info_name_stride 0", "not 1 to 4");
}

static void expect_check_error(const struct v8_layout *l, const char *want)
{
	char err[256] = "";

	print_message("%s\n", want);
	assert_int_equal(v8layout__check(l, err, sizeof(err)), -EINVAL);
	if (!strstr(err, want))
		fail_msg("error \"%s\" does not say \"%s\"", err, want);
	assert_int_equal(v8layout__check(l, NULL, 0), -EINVAL);
}

static void test_check(void **state)
{
	struct v8_layout l;

	(void)state;
#define WITH(stmt, want)                      \
	do {                                  \
		valid_layout(&l);             \
		stmt;                         \
		expect_check_error(&l, want); \
	} while (0)
#define OK(stmt)                                                   \
	do {                                                       \
		valid_layout(&l);                                  \
		stmt;                                              \
		assert_int_equal(v8layout__check(&l, NULL, 0), 0); \
	} while (0)

	WITH(l.tagged_size = 8, "tagged_size 8 with compressed 1");
	WITH(l.compressed = false, "tagged_size 4 with compressed 0: must be 8");
	WITH(l.tagged_size = 0, "tagged_size");
	/* offsets: within 256 bytes, tagged fields aligned */
	WITH(l.fn_sfi = 256, "fn_sfi 256: past an object's first 256 bytes");
	OK(l.fn_sfi = 252);
	WITH(l.fn_sfi = 18, "fn_sfi 18: not a multiple of the tagged size 4");
	WITH(l.sfi_name_or_scope_info = 2, "sfi_name_or_scope_info 2: not a multiple");
	WITH(l.sfi_script = 1, "sfi_script");
	WITH(l.script_source = 3, "script_source");
	WITH(l.script_name = 5, "script_name");
	WITH(l.scope_info_flags = 6, "scope_info_flags");
	WITH(l.scope_info_context_locals = 7, "scope_info_context_locals");
	WITH(l.scope_info_start = 9, "scope_info_start");
	WITH(l.scope_info_start = 0x100000, "scope_info_start 1048576: past");
	WITH(l.string_length = 300, "string_length 300: past");
	WITH(l.string_chars = 256, "string_chars");
	WITH(l.map_instance_type = 1000, "map_instance_type");
	/* untagged fields need no alignment */
	OK(l.string_chars = 13; l.string_length = 7; l.map_instance_type = 10);
	/* 8-byte tagged fields without compression */
	WITH(l.compressed = false; l.tagged_size = 8, "not a multiple of the tagged size 8");
	/* ScopeInfo name words */
	WITH(l.scope_info_name_stride = 0, "scope_info_name_stride 0: not 1 to 4");
	WITH(l.scope_info_name_stride = 5, "scope_info_name_stride 5");
	OK(l.scope_info_name_stride = 4);
	WITH(l.scope_info_name_base = 64, "scope_info_name_base 64: not below 64");
	OK(l.scope_info_name_base = 63);
	/* build_id and version */
	WITH(l.build_id[0] = '\0', "build_id");
	WITH(l.build_id[1] = '\0', "build_id");
	WITH(l.build_id[0] = 'A', "build_id");
	WITH(memset(l.build_id, 'a', sizeof(l.build_id)), "build_id");
	OK(memset(l.build_id, 'f', V8LAYOUT_BUILD_ID_MAX));
	OK(strcpy(l.build_id, "ab"));
	WITH(strcpy(l.v8_version, "15 8"), "v8_version");
	WITH(strcpy(l.v8_version, "-"), "v8_version");
	WITH(l.v8_version[0] = '\n', "v8_version");
	WITH(memset(l.v8_version, '1', sizeof(l.v8_version)), "v8_version");
	OK(l.v8_version[0] = '\0');
	/* strings and instance types */
	WITH(l.string_repr_mask = 0, "string_repr_mask 0x0");
	WITH(l.string_repr_mask = 0x10000, "string_repr_mask 0x10000");
	OK(l.string_repr_mask = 0xffff);
	WITH(l.string_one_byte_bit = 0, "string_one_byte_bit 0x0");
	WITH(l.string_one_byte_bit = 0x10000, "string_one_byte_bit");
	WITH(l.string_type_limit = 0, "string_type_limit 0x0: not 1 to 0x10000");
	WITH(l.string_type_limit = 0x10001, "string_type_limit 0x10001");
	OK(l.string_type_limit = 0x10000);
	WITH(l.sfi_type = 0x10000, "sfi_type 0x10000: an instance type is 16 bits");
	WITH(l.scope_info_type = 0x12345, "scope_info_type");
	WITH(l.script_type = 0xffffffff, "script_type");
	OK(l.script_type = 0xffff);
	/* map words are any u32 */
	OK(l.sfi_map = 0xffffffff);
	/* deoptimization data: all or nothing, a format that exists, entries that fit */
	OK(memset(&l.deopt_format, 0, (size_t)((char *)(&l.maglev_safepoint_header + 1) -
					       (char *)&l.deopt_format)));
	WITH(l.deopt_format = 0, "deopt_format 0 (deoptimization data not learnt) with other");
	WITH(l.deopt_opcodes = 12, "deopt_format 1, deopt_opcodes 12: no such translation format");
	WITH(l.deopt_format = 9, "no such translation format");
	WITH(l.deopt_first_entry = 11, "the entries after the rest");
	WITH(l.deopt_exit_start = 40, "must be below 32");
	WITH(l.deopt_entry_size = 1, "deopt_entry_size 1");
	WITH(l.deopt_entry_pc = 1, "not an entry");
	WITH(l.deopt_entry_translation = 3, "not an entry");
	WITH(l.deopt_eager_exit_size = 0, "not 1 to 16 bytes");
	WITH(l.deopt_lazy_exit_size = 17, "not 1 to 16 bytes");
	WITH(l.maglev_safepoint_config = 4, "not a safepoint table header");
	WITH(l.maglev_safepoint_header = 8, "not a safepoint table header");
	WITH(l.code_kind_maglev = 0, "not a safepoint table header");
	OK(l.maglev_safepoint_length = 0; l.maglev_safepoint_config = 0;
	   l.maglev_safepoint_header = 0);
	WITH(l.maglev_safepoint_header = 0, "maglev_safepoint_header 0 with other");
	WITH(memset(&l.code_alignment, 0, (size_t)((char *)(&l.spt_encoding + 1) -
						   (char *)&l.code_alignment)),
	     "deopt_format 1 without code objects");
#undef WITH
#undef OK
}

static void test_path(void **state)
{
	char buf[256], tiny[16];

	(void)state;
	assert_int_equal(v8layout__path("/var/lib/isoprof", ID_A, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/var/lib/isoprof/v8-layouts/" ID_A);
	assert_int_equal(v8layout__path("state//", "ab", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "state/v8-layouts/ab");
	assert_int_equal(v8layout__path("/", "ab", buf, sizeof(buf)), 0);
	assert_string_equal(buf, "//v8-layouts/ab");
	assert_int_equal(v8layout__path("s", "AB", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", "a", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", "", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", "../etc", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", "ab/cd", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("", "ab", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", ID_A ID_A, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(v8layout__path("s", ID_A, tiny, sizeof(tiny)), -ENAMETOOLONG);
	assert_string_equal(tiny, "");
}

#define TEMP_DIR_TEMPLATE "/tmp/isoprof-v8layout.XXXXXX"
#include "tests/unit/temp_dir.h"

static void put_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static void test_store_load(void **state)
{
	char sdir[PATH_MAX], path[PATH_MAX], err[512], text[V8LAYOUT_FILE_MAX + 1];
	struct v8_layout a, b;
	struct stat st;
	FILE *f;
	size_t n;

	snprintf(sdir, sizeof(sdir), "%s/var/lib/isoprof", (const char *)*state);
	valid_layout(&a);

	/* nothing stored yet, the directory missing too */
	assert_int_equal(v8layout__load(sdir, ID_A, &b, err, sizeof(err)), -ENOENT);
	/* a layout that does not check is not stored, and nothing is made */
	a.fn_sfi = 3;
	assert_int_equal(v8layout__store(sdir, &a), -EINVAL);
	assert_int_equal(stat(sdir, &st), -1);
	valid_layout(&a);

	/* stored under a state directory made on the way, read back equal */
	assert_int_equal(v8layout__store(sdir, &a), 0);
	assert_int_equal(stat(sdir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(v8layout__path(sdir, ID_A, path, sizeof(path)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0644);
	memset(&b, 0xaa, sizeof(b));
	assert_int_equal(v8layout__load(sdir, ID_A, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(v8layout__load(sdir, ID_A, &b, NULL, 0), 0);
	/* the file is what format writes */
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	{
		char want[V8LAYOUT_FILE_MAX];

		assert_int_equal(v8layout__format(&a, want, sizeof(want)), n);
		assert_string_equal(text, want);
	}

	/* replaced whole */
	a.fn_sfi = 20;
	memset(a.v8_version, 0, sizeof(a.v8_version));
	strcpy(a.v8_version, "15.9.1");
	assert_int_equal(v8layout__store(sdir, &a), 0);
	assert_int_equal(v8layout__load(sdir, ID_A, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));

	/* a second build beside it; another build-id still missing */
	memset(a.build_id, 0, sizeof(a.build_id));
	strcpy(a.build_id, "abcd");
	assert_int_equal(v8layout__store(sdir, &a), 0);
	assert_int_equal(v8layout__load(sdir, "abcd", &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -ENOENT);
	assert_int_equal(v8layout__load(sdir, "ABCD", &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "build-id \"ABCD\""));

	/* a trailing slash on the state directory names the same place */
	n = strlen(sdir);
	snprintf(sdir + n, sizeof(sdir) - n, "/");
	assert_int_equal(v8layout__load(sdir, "abcd", &b, err, sizeof(err)), 0);
	assert_int_equal(v8layout__store(sdir, &a), 0);
}

static void test_load_refused(void **state)
{
	char sdir[PATH_MAX], path[PATH_MAX], other[PATH_MAX], err[512], text[V8LAYOUT_FILE_MAX * 2];
	struct v8_layout a, b;
	size_t n;

	snprintf(sdir, sizeof(sdir), "%s/state", (const char *)*state);
	valid_layout(&a);
	assert_int_equal(v8layout__store(sdir, &a), 0);
	assert_int_equal(v8layout__path(sdir, ID_A, other, sizeof(other)), 0);
	assert_int_equal(v8layout__path(sdir, ID_B, path, sizeof(path)), 0);

	/* a file at B's name that holds A's layout */
	n = v8layout__format(&a, text, sizeof(text));
	put_file(path, text, n);
	memset(&b, 0xaa, sizeof(b));
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "names build-id " ID_A ", not " ID_B));
	assert_non_null(strstr(err, path));
	for (size_t i = 0; i < sizeof(b); i++)
		assert_int_equal(((unsigned char *)&b)[i], 0);
	assert_int_equal(unlink(path), 0);

	/* a symlink at B's name, even to a good layout, is not followed */
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	assert_int_equal(unlink(path), 0);
	/* a symlink at A's own name, to a copy of its layout, neither */
	snprintf(path, sizeof(path), "%s/copy", (const char *)*state);
	put_file(path, text, n);
	assert_int_equal(unlink(other), 0);
	assert_int_equal(symlink(path, other), 0);
	assert_int_equal(v8layout__load(sdir, ID_A, &b, err, sizeof(err)), -ELOOP);
	/* store replaces the link, never writes through it */
	assert_int_equal(v8layout__store(sdir, &a), 0);
	assert_int_equal(v8layout__load(sdir, ID_A, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));

	/* over the size cap: a good layout padded with comments */
	assert_int_equal(v8layout__path(sdir, ID_B, path, sizeof(path)), 0);
	strcpy(a.build_id, ID_B);
	n = v8layout__format(&a, text, sizeof(text));
	while (n <= V8LAYOUT_FILE_MAX) {
		memcpy(text + n, "# padding\n", 10);
		n += 10;
	}
	put_file(path, text, n);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "larger than 4096 bytes"));
	/* at the cap exactly, it loads */
	n = v8layout__format(&a, text, sizeof(text));
	while (n < V8LAYOUT_FILE_MAX)
		text[n++] = '\n';
	put_file(path, text, n);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), 0);
	assert_memory_equal(&a, &b, sizeof(a));

	/* not a layout: the line and why */
	put_file(path, "isoprof-v8-layout 3\nfn_sfi 4\nfn_sfi 8\n", 38);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, ": line 3: fn_sfi: a second time"));
	/* an earlier isoprof's format: stale, to be calibrated again */
	put_file(path, "isoprof-v8-layout 1\nfn_sfi 4\n", 29);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "calibrate again"));
	/* ... and the one before deoptimization data */
	put_file(path, "isoprof-v8-layout 2\nfn_sfi 4\n", 29);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "without deoptimization data: calibrate again"));
	put_file(path, "", 0);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -EINVAL);
	assert_int_equal(unlink(path), 0);

	/* a directory at the name */
	assert_int_equal(mkdir(path, 0755), 0);
	assert_int_equal(v8layout__load(sdir, ID_B, &b, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	assert_int_equal(rmdir(path), 0);

	/* a file where the state directory should be */
	snprintf(path, sizeof(path), "%s/file", (const char *)*state);
	put_file(path, "x", 1);
	assert_int_equal(v8layout__store(path, &a), -ENOTDIR);
	assert_int_equal(v8layout__load(path, ID_B, &b, err, sizeof(err)), -ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_lenient),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_path),
		cmocka_unit_test_setup_teardown(test_store_load, make_dir, remove_dir),
		cmocka_unit_test_setup_teardown(test_load_refused, make_dir, remove_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
