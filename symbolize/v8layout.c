// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8layout: a V8 build's object layout as a small text file; see v8layout.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/v8layout.h"
#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "lib/textscan.h"
#include "symbolize/v8deopt.h"

#define HEADER_WORD "isoprof-v8-layout"
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* "0x" and 16 hex digits: leading zeros allowed, anything longer is not a u32 we wrote. */
#define NUMBER_MAX 18
/* Objects are read from their first bytes only; a larger offset is a bad calibration. */
#define OBJECT_OFFSET_LIMIT 256
#define NAME_BASE_LIMIT 64
#define INSTANCE_TYPE_LIMIT 0x10000u

enum field_kind {
	FIELD_BUILD_ID,
	FIELD_VERSION,
	FIELD_BOOL,
	FIELD_DEC,	/* u32, written in decimal: offsets, counts */
	FIELD_HEX,	/* u32, written in 0x-hex: map words, instance types, bit masks */
};

/* What v8layout__check() asks of a u32 field beyond its own line there. */
#define CHECK_OFFSET	0x1	/* an offset into an object: < OBJECT_OFFSET_LIMIT */
#define CHECK_TAGGED	0x2	/* a tagged field: a multiple of tagged_size */
#define CHECK_TYPE	0x4	/* an instance type: u16 */

struct field {
	const char *key;
	size_t off;
	enum field_kind kind;
	unsigned int checks;
};

#define FIELD(name, kind, checks) { #name, offsetof(struct v8_layout, name), kind, checks }

/* In struct order: the file's line order. */
static const struct field fields[] = {
	FIELD(build_id, FIELD_BUILD_ID, 0),
	FIELD(v8_version, FIELD_VERSION, 0),
	FIELD(compressed, FIELD_BOOL, 0),
	FIELD(tagged_size, FIELD_DEC, 0),
	FIELD(fn_sfi, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(sfi_name_or_scope_info, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(sfi_script, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(scope_info_flags, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(scope_info_context_locals, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(scope_info_start, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(scope_info_name_base, FIELD_DEC, 0),
	FIELD(scope_info_name_stride, FIELD_DEC, 0),
	FIELD(scope_info_name_hashed_from, FIELD_DEC, 0),
	FIELD(scope_info_name_hashed_base, FIELD_DEC, 0),
	FIELD(script_source, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(script_name, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(string_length, FIELD_DEC, CHECK_OFFSET),
	FIELD(string_chars, FIELD_DEC, CHECK_OFFSET),
	FIELD(map_instance_type, FIELD_DEC, CHECK_OFFSET),
	FIELD(sfi_map, FIELD_HEX, 0),
	FIELD(scope_info_map, FIELD_HEX, 0),
	FIELD(script_map, FIELD_HEX, 0),
	FIELD(sfi_type, FIELD_HEX, CHECK_TYPE),
	FIELD(scope_info_type, FIELD_HEX, CHECK_TYPE),
	FIELD(script_type, FIELD_HEX, CHECK_TYPE),
	FIELD(string_type_limit, FIELD_HEX, 0),
	FIELD(string_repr_mask, FIELD_HEX, 0),
	FIELD(string_one_byte_bit, FIELD_HEX, 0),
	FIELD(builtins_offset, FIELD_HEX, 0),
	FIELD(builtins_size, FIELD_HEX, 0),
	FIELD(scope_info_inferred_delta, FIELD_DEC, 0),
	FIELD(string_cons_tag, FIELD_HEX, 0),
	FIELD(code_alignment, FIELD_DEC, 0),
	FIELD(istream_instructions, FIELD_DEC, CHECK_OFFSET),
	FIELD(istream_code, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(istream_type, FIELD_HEX, CHECK_TYPE),
	FIELD(code_istream, FIELD_DEC, CHECK_OFFSET),
	FIELD(code_instruction_start, FIELD_DEC, CHECK_OFFSET),
	FIELD(code_instruction_size, FIELD_DEC, CHECK_OFFSET),
	FIELD(code_flags, FIELD_DEC, CHECK_OFFSET),
	FIELD(code_kind_mask, FIELD_HEX, 0),
	FIELD(code_kind_turbofan, FIELD_HEX, 0),
	FIELD(code_kind_maglev, FIELD_HEX, 0),
	FIELD(code_deopt_data, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(code_position_table, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(array_length, FIELD_DEC, CHECK_OFFSET),
	FIELD(array_length_smi, FIELD_DEC, 0),
	FIELD(array_elements, FIELD_DEC, CHECK_OFFSET),
	FIELD(deopt_inlined_count, FIELD_DEC, 0),
	FIELD(deopt_literals, FIELD_DEC, 0),
	FIELD(deopt_sfi, FIELD_DEC, 0),
	FIELD(deopt_sfi_wrapper, FIELD_DEC, CHECK_OFFSET | CHECK_TAGGED),
	FIELD(deopt_inlining_positions, FIELD_DEC, 0),
	FIELD(spt_encoding, FIELD_DEC, 0),
	FIELD(deopt_format, FIELD_DEC, 0),
	FIELD(deopt_opcodes, FIELD_DEC, 0),
	FIELD(deopt_translation, FIELD_DEC, 0),
	FIELD(deopt_exit_start, FIELD_DEC, 0),
	FIELD(deopt_eager_count, FIELD_DEC, 0),
	FIELD(deopt_lazy_count, FIELD_DEC, 0),
	FIELD(deopt_first_entry, FIELD_DEC, 0),
	FIELD(deopt_entry_size, FIELD_DEC, 0),
	FIELD(deopt_entry_translation, FIELD_DEC, 0),
	FIELD(deopt_entry_pc, FIELD_DEC, 0),
	FIELD(deopt_eager_exit_size, FIELD_DEC, 0),
	FIELD(deopt_lazy_exit_size, FIELD_DEC, 0),
	FIELD(maglev_safepoint_length, FIELD_DEC, 0),
	FIELD(maglev_safepoint_config, FIELD_DEC, 0),
	FIELD(maglev_safepoint_header, FIELD_DEC, 0),
};

/*
 * Every field from tagged_size on is a u32: a field added to the struct
 * without its line above changes the size and stops the build here.
 */
_Static_assert(offsetof(struct v8_layout, tagged_size) +
			       (ARRAY_SIZE(fields) - 3) * sizeof(uint32_t) ==
		       sizeof(struct v8_layout),
	       "a field of struct v8_layout has no line in fields[]");

static const uint32_t *u32_at(const struct v8_layout *l, const struct field *f)
{
	return (const uint32_t *)((const char *)l + f->off);
}

static bool build_id_ok(const char *s, size_t n)
{
	size_t i;

	if (n < 2 || n > V8LAYOUT_BUILD_ID_MAX)
		return false;
	for (i = 0; i < n; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

static bool version_char_ok(char c)
{
	return c > ' ' && c < 0x7f;
}

/* "-" in the file would read back as "": refused as a version of its own. */
static bool version_ok(const char *s, size_t n)
{
	size_t i;

	if (n >= sizeof(((struct v8_layout *)0)->v8_version) || (n == 1 && s[0] == '-'))
		return false;
	for (i = 0; i < n; i++) {
		if (!version_char_ok(s[i]))
			return false;
	}
	return true;
}

/* Deoptimization data is read from its first elements only. */
#define DEOPT_INDEX_LIMIT 32

/* The code object fields: all 0 (not learnt), or a whole consistent set. */
static int check_code(const struct v8_layout *l, char *err, size_t err_len)
{
	const uint32_t *first = &l->code_alignment, *last = &l->spt_encoding;

	if (!l->code_alignment) {
		for (const uint32_t *v = first; v <= last; v++) {
			if (*v) {
				errmsg__set(err, err_len, "code_alignment 0 (code objects not "
					    "learnt) with other code fields set");
				return -EINVAL;
			}
		}
		return 0;
	}
	if (l->code_alignment & (l->code_alignment - 1) || l->code_alignment > 4096 ||
	    l->code_alignment < 8) {
		errmsg__set(err, err_len, "code_alignment %u: not a power of two from 8 to 4096",
			    l->code_alignment);
		return -EINVAL;
	}
	if (l->istream_instructions > l->code_alignment * 4 ||
	    l->istream_code >= l->istream_instructions) {
		errmsg__set(err, err_len, "istream_code %u, istream_instructions %u: the Code "
			    "word must lie in the header", l->istream_code, l->istream_instructions);
		return -EINVAL;
	}
	if (!l->code_kind_mask || l->code_kind_mask > 0xff ||
	    (l->code_kind_turbofan & ~l->code_kind_mask) ||
	    (l->code_kind_maglev & ~l->code_kind_mask)) {
		errmsg__set(err, err_len, "code_kind_mask 0x%x: kinds must lie within it (at most "
			    "8 bits)", l->code_kind_mask);
		return -EINVAL;
	}
	if (l->array_length_smi > 1 || (l->array_length_smi && l->array_length % l->tagged_size) ||
	    l->array_elements % 4) {
		errmsg__set(err, err_len, "array_length %u, array_length_smi %u, array_elements %u: "
			    "not an array header", l->array_length, l->array_length_smi,
			    l->array_elements);
		return -EINVAL;
	}
	if (l->deopt_inlined_count >= DEOPT_INDEX_LIMIT || l->deopt_literals >= DEOPT_INDEX_LIMIT ||
	    l->deopt_sfi >= DEOPT_INDEX_LIMIT || l->deopt_inlining_positions >= DEOPT_INDEX_LIMIT) {
		errmsg__set(err, err_len, "deoptimization data indices must be below %d",
			    DEOPT_INDEX_LIMIT);
		return -EINVAL;
	}
	if (l->spt_encoding < 1 || l->spt_encoding > 2) {
		errmsg__set(err, err_len, "spt_encoding %u: not 1 or 2", l->spt_encoding);
		return -EINVAL;
	}
	return 0;
}

/* The deoptimization data fields: all 0 (not learnt), or a whole consistent set. */
static int check_deopt(const struct v8_layout *l, char *err, size_t err_len)
{
	const uint32_t *first = &l->deopt_format, *last = &l->maglev_safepoint_header;
	struct v8deopt_format f;

	if (!l->deopt_format) {
		for (const uint32_t *v = first; v <= last; v++) {
			if (*v) {
				errmsg__set(err, err_len, "deopt_format 0 (deoptimization data not "
					    "learnt) with other deopt fields set");
				return -EINVAL;
			}
		}
		return 0;
	}
	if (!l->code_alignment) {
		errmsg__set(err, err_len, "deopt_format %u without code objects", l->deopt_format);
		return -EINVAL;
	}
	if (v8deopt__format(l->deopt_format, l->deopt_opcodes, &f)) {
		errmsg__set(err, err_len, "deopt_format %u, deopt_opcodes %u: no such translation "
			    "format", l->deopt_format, l->deopt_opcodes);
		return -EINVAL;
	}
	if (l->deopt_translation >= DEOPT_INDEX_LIMIT || l->deopt_exit_start >= DEOPT_INDEX_LIMIT ||
	    l->deopt_eager_count >= DEOPT_INDEX_LIMIT || l->deopt_lazy_count >= DEOPT_INDEX_LIMIT ||
	    l->deopt_first_entry >= DEOPT_INDEX_LIMIT || l->deopt_first_entry <= l->deopt_lazy_count ||
	    l->deopt_first_entry <= l->deopt_eager_count ||
	    l->deopt_first_entry <= l->deopt_exit_start ||
	    l->deopt_first_entry <= l->deopt_translation) {
		errmsg__set(err, err_len, "deoptimization data indices must be below %d, the "
			    "entries after the rest", DEOPT_INDEX_LIMIT);
		return -EINVAL;
	}
	if (l->deopt_entry_size < 2 || l->deopt_entry_size > 8 ||
	    l->deopt_entry_translation >= l->deopt_entry_size ||
	    l->deopt_entry_pc >= l->deopt_entry_size ||
	    l->deopt_entry_pc == l->deopt_entry_translation) {
		errmsg__set(err, err_len, "deopt_entry_size %u, deopt_entry_translation %u, "
			    "deopt_entry_pc %u: not an entry", l->deopt_entry_size,
			    l->deopt_entry_translation, l->deopt_entry_pc);
		return -EINVAL;
	}
	if (l->deopt_eager_exit_size < 1 || l->deopt_eager_exit_size > 16 ||
	    l->deopt_lazy_exit_size < 1 || l->deopt_lazy_exit_size > 16) {
		errmsg__set(err, err_len, "deopt_eager_exit_size %u, deopt_lazy_exit_size %u: not "
			    "1 to 16 bytes", l->deopt_eager_exit_size, l->deopt_lazy_exit_size);
		return -EINVAL;
	}
	if (l->maglev_safepoint_header &&
	    (l->maglev_safepoint_config % 4 || l->maglev_safepoint_length % 4 ||
	     l->maglev_safepoint_config == l->maglev_safepoint_length ||
	     l->maglev_safepoint_config + 4 > l->maglev_safepoint_header ||
	     l->maglev_safepoint_length + 4 > l->maglev_safepoint_header ||
	     l->maglev_safepoint_header > 64 || !l->code_kind_maglev)) {
		errmsg__set(err, err_len, "maglev_safepoint_length %u, maglev_safepoint_config %u, "
			    "maglev_safepoint_header %u: not a safepoint table header",
			    l->maglev_safepoint_length, l->maglev_safepoint_config,
			    l->maglev_safepoint_header);
		return -EINVAL;
	}
	if (!l->maglev_safepoint_header && (l->maglev_safepoint_length || l->maglev_safepoint_config)) {
		errmsg__set(err, err_len, "maglev_safepoint_header 0 with other safepoint fields set");
		return -EINVAL;
	}
	return 0;
}

int v8layout__check(const struct v8_layout *l, char *err, size_t err_len)
{
	size_t idlen = strnlen(l->build_id, sizeof(l->build_id));
	size_t vlen = strnlen(l->v8_version, sizeof(l->v8_version));
	const struct field *f;
	uint32_t v;
	size_t i;

	if (idlen == sizeof(l->build_id) || !build_id_ok(l->build_id, idlen)) {
		errmsg__set(err, err_len, "build_id: not 2 to %d lowercase hex digits",
			    V8LAYOUT_BUILD_ID_MAX);
		return -EINVAL;
	}
	if (vlen == sizeof(l->v8_version) || !version_ok(l->v8_version, vlen)) {
		errmsg__set(
			err, err_len,
			"v8_version: not up to %zu printable characters without blanks (nor \"-\")",
			sizeof(l->v8_version) - 1);
		return -EINVAL;
	}
	if (l->tagged_size != (l->compressed ? 4u : 8u)) {
		errmsg__set(err, err_len, "tagged_size %u with compressed %d: must be %u",
			    l->tagged_size, l->compressed, l->compressed ? 4u : 8u);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		f = &fields[i];
		if (f->kind != FIELD_DEC && f->kind != FIELD_HEX)
			continue;
		v = *u32_at(l, f);
		if ((f->checks & CHECK_OFFSET) && v >= OBJECT_OFFSET_LIMIT) {
			errmsg__set(err, err_len, "%s %u: past an object's first %d bytes", f->key,
				    v, OBJECT_OFFSET_LIMIT);
			return -EINVAL;
		}
		if ((f->checks & CHECK_TAGGED) && v % l->tagged_size) {
			errmsg__set(err, err_len, "%s %u: not a multiple of the tagged size %u",
				    f->key, v, l->tagged_size);
			return -EINVAL;
		}
		if ((f->checks & CHECK_TYPE) && v >= INSTANCE_TYPE_LIMIT) {
			errmsg__set(err, err_len, "%s 0x%x: an instance type is 16 bits", f->key,
				    v);
			return -EINVAL;
		}
	}
	if (l->scope_info_name_stride < 1 || l->scope_info_name_stride > 4) {
		errmsg__set(err, err_len, "scope_info_name_stride %u: not 1 to 4",
			    l->scope_info_name_stride);
		return -EINVAL;
	}
	if (l->scope_info_name_base >= NAME_BASE_LIMIT) {
		errmsg__set(err, err_len, "scope_info_name_base %u: not below %d",
			    l->scope_info_name_base, NAME_BASE_LIMIT);
		return -EINVAL;
	}
	if (!l->string_type_limit || l->string_type_limit > INSTANCE_TYPE_LIMIT) {
		errmsg__set(err, err_len, "string_type_limit 0x%x: not 1 to 0x%x",
			    l->string_type_limit, INSTANCE_TYPE_LIMIT);
		return -EINVAL;
	}
	if (!l->string_repr_mask || l->string_repr_mask >= INSTANCE_TYPE_LIMIT) {
		errmsg__set(err, err_len, "string_repr_mask 0x%x: not 1 to 0x%x",
			    l->string_repr_mask, INSTANCE_TYPE_LIMIT - 1);
		return -EINVAL;
	}
	if (l->scope_info_inferred_delta > 8 || l->string_cons_tag > l->string_repr_mask ||
	    (l->string_cons_tag & ~l->string_repr_mask)) {
		errmsg__set(err, err_len, "scope_info_inferred_delta %u, string_cons_tag 0x%x: a delta "
			    "up to 8 words, a tag within string_repr_mask",
			    l->scope_info_inferred_delta, l->string_cons_tag);
		return -EINVAL;
	}
	if (check_code(l, err, err_len) || check_deopt(l, err, err_len))
		return -EINVAL;
	if (!l->string_one_byte_bit || l->string_one_byte_bit >= INSTANCE_TYPE_LIMIT) {
		errmsg__set(err, err_len, "string_one_byte_bit 0x%x: not 1 to 0x%x",
			    l->string_one_byte_bit, INSTANCE_TYPE_LIMIT - 1);
		return -EINVAL;
	}
	return 0;
}

/* The reason for a bad number, or NULL with *out set. */
static const char *parse_u32(const char *v, size_t n, uint32_t *out)
{
	const char *p = v, *end = v + n;
	uint64_t x;
	bool ok;

	if (n > NUMBER_MAX)
		return "too long for a number";
	if (n >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		p += 2;
		ok = textscan__hex(&p, end, &x);
	} else {
		/* "010" could be meant as octal: neither reading is guessed */
		if (n > 1 && v[0] == '0')
			return "a decimal number with a leading zero";
		ok = textscan__dec(&p, end, &x);
	}
	if (!ok || p != end)
		return "not a decimal or 0x-hex number";
	if (x > UINT32_MAX)
		return "above the u32 range";
	*out = (uint32_t)x;
	return NULL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* One "key value" line, p[0..n), into l; the reason in why on error. */
static int parse_line(const char *p, size_t n, struct v8_layout *l, size_t *seen_on, size_t lineno,
		      char *why, size_t why_len)
{
	const char *end = p + n, *k = p, *v;
	const struct field *f = NULL;
	char ex[48];
	size_t klen, vlen, i;

	while (k < end && !is_blank(*k))
		k++;
	klen = (size_t)(k - p);
	if (!klen) {
		errmsg__set(why, why_len, "a line starting with a blank");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		if (strlen(fields[i].key) == klen && !memcmp(fields[i].key, p, klen)) {
			f = &fields[i];
			break;
		}
	}
	if (!f) {
		errmsg__excerpt(ex, sizeof(ex), p, klen);
		errmsg__set(why, why_len, "unknown key \"%s\" (a layout from another isoprof?)",
			    ex);
		return -EINVAL;
	}
	if (seen_on[i]) {
		errmsg__set(why, why_len, "%s: a second time (first on line %zu)", f->key,
			    seen_on[i]);
		return -EINVAL;
	}
	seen_on[i] = lineno;
	for (v = k; v < end && is_blank(*v); v++)
		;
	vlen = (size_t)(end - v);
	if (!vlen) {
		errmsg__set(why, why_len, "%s: no value", f->key);
		return -EINVAL;
	}
	for (i = 0; i < vlen; i++) {
		if (is_blank(v[i])) {
			errmsg__set(why, why_len, "%s: a value with blanks", f->key);
			return -EINVAL;
		}
	}
	errmsg__excerpt(ex, sizeof(ex), v, vlen);

	switch (f->kind) {
	case FIELD_BUILD_ID:
		if (vlen > V8LAYOUT_BUILD_ID_MAX) {
			errmsg__set(why, why_len, "build_id: longer than %d hex digits",
				    V8LAYOUT_BUILD_ID_MAX);
			return -EINVAL;
		}
		if (!build_id_ok(v, vlen)) {
			errmsg__set(why, why_len,
				    "build_id \"%s\": not 2 or more lowercase hex digits", ex);
			return -EINVAL;
		}
		memcpy(l->build_id, v, vlen);
		l->build_id[vlen] = '\0';
		return 0;
	case FIELD_VERSION:
		if (vlen == 1 && v[0] == '-')
			return 0;	/* unknown: "" */
		if (vlen >= sizeof(l->v8_version)) {
			errmsg__set(why, why_len, "v8_version: longer than %zu characters",
				    sizeof(l->v8_version) - 1);
			return -EINVAL;
		}
		for (i = 0; i < vlen; i++) {
			if (!version_char_ok(v[i])) {
				errmsg__set(why, why_len, "v8_version \"%s\": not printable ASCII",
					    ex);
				return -EINVAL;
			}
		}
		memcpy(l->v8_version, v, vlen);
		l->v8_version[vlen] = '\0';
		return 0;
	case FIELD_BOOL:
		if (vlen != 1 || (v[0] != '0' && v[0] != '1')) {
			errmsg__set(why, why_len, "%s \"%s\": not 0 or 1", f->key, ex);
			return -EINVAL;
		}
		*(bool *)((char *)l + f->off) = v[0] == '1';
		return 0;
	case FIELD_DEC:
	case FIELD_HEX: {
		const char *bad = parse_u32(v, vlen, (uint32_t *)((char *)l + f->off));

		if (bad) {
			errmsg__set(why, why_len, "%s \"%s\": %s", f->key, ex, bad);
			return -EINVAL;
		}
		return 0;
	}
	}
	return -EINVAL;
}

int v8layout__parse(const char *text, size_t len, struct v8_layout *out, char *err, size_t err_len)
{
	static const char header[] = HEADER_WORD " 3";
	static const char *const older[] = { HEADER_WORD " 1", HEADER_WORD " 2" };
	const char *p = text, *end = text + len, *nl, *e;
	size_t seen_on[ARRAY_SIZE(fields)] = { 0 };
	size_t lineno = 0, i;
	bool have_header = false, newer;
	struct v8_layout l;
	char why[160], ex[48];
	int ret;

	_Static_assert(V8LAYOUT_FORMAT_VERSION == 3, "header[] spells the version");
	memset(out, 0, sizeof(*out));
	memset(&l, 0, sizeof(l));
	errmsg__set(err, err_len, "%s", "");
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		e = nl ? nl : end;
		lineno++;
		/* trailing blanks and a CR (a file edited elsewhere) are not part of a value */
		while (e > p && (is_blank(e[-1]) || e[-1] == '\r'))
			e--;
		if (e == p)
			goto next;
		if (!have_header) {
			if ((size_t)(e - p) == sizeof(header) - 1 &&
			    !memcmp(p, header, sizeof(header) - 1)) {
				have_header = true;
				goto next;
			}
			for (i = 0; i < ARRAY_SIZE(older); i++) {
				if ((size_t)(e - p) == strlen(older[i]) &&
				    !memcmp(p, older[i], strlen(older[i]))) {
					errmsg__set(err, err_len, "line %zu: a layout of an earlier "
						    "isoprof, without %s: calibrate again", lineno,
						    i ? "deoptimization data" : "code objects");
					return -ESTALE;
				}
			}
			errmsg__excerpt(ex, sizeof(ex), p, (size_t)(e - p));
			newer = (size_t)(e - p) > sizeof(HEADER_WORD) &&
				!memcmp(p, HEADER_WORD " ", sizeof(HEADER_WORD));
			errmsg__set(err, err_len,
				    "line %zu: \"%s\": %s (this isoprof reads \"%s\")", lineno, ex,
				    newer ? "a layout format of another isoprof"
					  : "not an isoprof V8 layout",
				    header);
			return -EINVAL;
		}
		if (*p == '#')
			goto next;
		ret = parse_line(p, (size_t)(e - p), &l, seen_on, lineno, why, sizeof(why));
		if (ret) {
			errmsg__set(err, err_len, "line %zu: %s", lineno, why);
			return ret;
		}
next:
		p = nl ? nl + 1 : end;
	}
	if (!have_header) {
		errmsg__set(err, err_len, "line %zu: empty: no \"%s\" line", lineno ? lineno : 1,
			    header);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		if (!seen_on[i]) {
			errmsg__set(err, err_len, "line %zu: end of the file without a %s line",
				    lineno, fields[i].key);
			return -EINVAL;
		}
	}
	ret = v8layout__check(&l, why, sizeof(why));
	if (ret) {
		errmsg__set(err, err_len, "%s", why);
		return ret;
	}
	memcpy(out, &l, sizeof(l));
	return 0;
}

struct out_buf {
	char *buf;
	size_t len;
	size_t need;
};

static void put(struct out_buf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out_buf *o, const char *fmt, ...)
{
	size_t room = o->need < o->len ? o->len - o->need : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->need += (size_t)n;
}

size_t v8layout__format(const struct v8_layout *l, char *buf, size_t len)
{
	struct out_buf o = { buf, len, 0 };
	const struct field *f;
	size_t i, n;

	if (len)
		buf[0] = '\0';
	put(&o, "%s %d\n", HEADER_WORD, V8LAYOUT_FORMAT_VERSION);
	for (i = 0; i < ARRAY_SIZE(fields); i++) {
		f = &fields[i];
		switch (f->kind) {
		case FIELD_BUILD_ID:
			n = strnlen(l->build_id, sizeof(l->build_id));
			put(&o, "%s %.*s\n", f->key, (int)n, l->build_id);
			break;
		case FIELD_VERSION:
			n = strnlen(l->v8_version, sizeof(l->v8_version));
			put(&o, "%s %.*s\n", f->key, n ? (int)n : 1, n ? l->v8_version : "-");
			break;
		case FIELD_BOOL:
			put(&o, "%s %d\n", f->key,
			    *(const bool *)((const char *)l + f->off) ? 1 : 0);
			break;
		case FIELD_DEC:
			put(&o, "%s %u\n", f->key, *u32_at(l, f));
			break;
		case FIELD_HEX:
			put(&o, "%s 0x%x\n", f->key, *u32_at(l, f));
			break;
		}
	}
	return o.need;
}

int v8layout__path(const char *state_dir, const char *build_id, char *buf, size_t len)
{
	size_t dlen;
	int n;

	if (len)
		buf[0] = '\0';
	if (!state_dir || !*state_dir || !build_id ||
	    !build_id_ok(build_id, strnlen(build_id, V8LAYOUT_BUILD_ID_MAX + 1)))
		return -EINVAL;
	dlen = strlen(state_dir);
	while (dlen > 1 && state_dir[dlen - 1] == '/')
		dlen--;
	if (dlen > INT_MAX)
		return -ENAMETOOLONG;
	n = snprintf(buf, len, "%.*s/%s/%s", (int)dlen, state_dir, V8LAYOUT_SUBDIR, build_id);
	if (n < 0 || (size_t)n >= len) {
		if (len)
			buf[0] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

/* The file's bytes, at most max of them: -EFBIG when there are more (it grew). */
static int read_capped(int fd, char *buf, size_t max, size_t *len)
{
	size_t n = 0;
	ssize_t r;

	for (;;) {
		r = read(fd, buf + n, max + 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!r)
			break;
		n += (size_t)r;
		if (n > max)
			return -EFBIG;
	}
	*len = n;
	return 0;
}

int v8layout__load(const char *state_dir, const char *build_id, struct v8_layout *out, char *err,
		   size_t err_len)
{
	char path[PATH_MAX], text[V8LAYOUT_FILE_MAX + 1], why[256];
	struct stat st;
	size_t len = 0;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	errmsg__set(err, err_len, "%s", "");
	ret = v8layout__path(state_dir, build_id, path, sizeof(path));
	if (ret) {
		if (ret == -EINVAL) {
			errmsg__excerpt(why, 80, build_id ? build_id : "",
					build_id ? strlen(build_id) : 0);
			errmsg__set(err, err_len, "build-id \"%s\": not 2 to %d lowercase hex digits",
				    why, V8LAYOUT_BUILD_ID_MAX);
		} else {
			errmsg__set(err, err_len, "%s/%s/...: path too long", state_dir,
				    V8LAYOUT_SUBDIR);
		}
		return ret;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP)
			errmsg__set(err, err_len, "%s: a symbolic link, not followed", path);
		else
			errmsg__set(err, err_len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		errmsg__set(err, err_len, "%s: %s", path, strerror(-ret));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		errmsg__set(err, err_len, "%s: not a regular file", path);
		goto out;
	}
	if (st.st_size > V8LAYOUT_FILE_MAX) {
		ret = -EFBIG;
		goto too_big;
	}
	ret = read_capped(fd, text, V8LAYOUT_FILE_MAX, &len);
	if (ret == -EFBIG)
		goto too_big;
	if (ret) {
		errmsg__set(err, err_len, "%s: %s", path, strerror(-ret));
		goto out;
	}
	ret = v8layout__parse(text, len, out, why, sizeof(why));
	if (ret) {
		errmsg__set(err, err_len, "%s: %s", path, why);
		goto out;
	}
	if (strcmp(out->build_id, build_id)) {
		errmsg__set(err, err_len, "%s: names build-id %s, not %s", path, out->build_id,
			    build_id);
		memset(out, 0, sizeof(*out));
		ret = -EINVAL;
	}
	goto out;
too_big:
	errmsg__set(err, err_len, "%s: larger than %d bytes", path, V8LAYOUT_FILE_MAX);
out:
	close(fd);
	return ret;
}

/* path as a directory, made 0755 if missing; an existing one is left as it is. */
static int make_dir(const char *path)
{
	struct stat st;

	if (!stat(path, &st))
		return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
	if (errno != ENOENT)
		return -errno;
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* mkdir -p: each missing component of path, from the top. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	size_t n = strlen(path), i;
	int ret;

	if (n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (i = 1; i < n; i++) {
		if (buf[i] != '/' || buf[i - 1] == '/')
			continue;
		buf[i] = '\0';
		ret = make_dir(buf);
		buf[i] = '/';
		if (ret)
			return ret;
	}
	return make_dir(buf);
}

int v8layout__store(const char *state_dir, const struct v8_layout *l)
{
	char path[PATH_MAX], text[V8LAYOUT_FILE_MAX];
	struct atomic_file af;
	size_t n;
	int ret;

	if (v8layout__check(l, NULL, 0))
		return -EINVAL;
	ret = v8layout__path(state_dir, l->build_id, path, sizeof(path));
	if (ret)
		return ret;
	n = v8layout__format(l, text, sizeof(text));
	if (n >= sizeof(text))
		return -EOVERFLOW;
	ret = make_dirs(state_dir);
	if (ret)
		return ret;
	/* path is STATE_DIR/v8-layouts/BUILD_ID: cut at the last '/' for the subdirectory */
	*strrchr(path, '/') = '\0';
	ret = make_dir(path);
	path[strlen(path)] = '/';
	if (ret)
		return ret;
	ret = atomic_file__open(&af, path, 0644);
	if (ret)
		return ret;
	errno = 0;
	if (fwrite(text, 1, n, af.f) != n) {
		ret = -(errno ? errno : EIO);
		atomic_file__abort(&af);
		return ret;
	}
	return atomic_file__commit(&af);
}

const char *v8layout__state_dir(void)
{
	const char *dir = getenv(V8LAYOUT_STATE_DIR_ENV);

	return dir && dir[0] == '/' ? dir : V8LAYOUT_DEFAULT_STATE_DIR;
}
