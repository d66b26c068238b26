// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8dbg: a layout held to V8's postmortem metadata symbols; see v8dbg.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/v8dbg.h"
#include "symbolize/elf_symtab.h"

/* Each symbol and the layout field it gives (offsets from the untagged start). */
static const struct {
	const char *symbol;
	bool prefix;		/* the field's type is part of the name and changed over time */
	size_t field;		/* offsetof(struct v8_layout, ...) */
	const char *name;
} checks[] = {
#define F(sym, pre, fld) { sym, pre, offsetof(struct v8_layout, fld), #fld }
	F("v8dbg_class_JSFunction__shared__", true, fn_sfi),
	F("v8dbg_class_SharedFunctionInfo__name_or_scope_info__", true, sfi_name_or_scope_info),
	F("v8dbg_class_SharedFunctionInfo__script", true, sfi_script),
	F("v8dbg_class_Script__name__", true, script_name),
	F("v8dbg_class_Script__source__", true, script_source),
	F("v8dbg_class_String__length__", true, string_length),
	F("v8dbg_class_SeqOneByteString__chars__", true, string_chars),
	F("v8dbg_class_Map__instance_type__", true, map_instance_type),
	F("v8dbg_type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", false, sfi_type),
	F("v8dbg_type_ScopeInfo__SCOPE_INFO_TYPE", false, scope_info_type),
	F("v8dbg_type_Script__SCRIPT_TYPE", false, script_type),
	F("v8dbg_FirstNonstringType", false, string_type_limit),
	F("v8dbg_StringRepresentationMask", false, string_repr_mask),
	F("v8dbg_OneByteStringTag", false, string_one_byte_bit),
#undef F
};

#define NCHECKS (sizeof(checks) / sizeof(checks[0]))

int v8dbg__check(const char *path, const struct v8_layout *l, struct v8dbg_check *out)
{
	struct elf_symbol_query q[NCHECKS];
	struct elf_symtab *st;
	size_t pos = 0;
	int fd, err;

	_Static_assert(NCHECKS <= ELF_SYMBOL_QUERY_MAX, "one pass over the symbols");
	memset(out, 0, sizeof(*out));
	memset(q, 0, sizeof(q));
	for (size_t i = 0; i < NCHECKS; i++) {
		q[i].name = checks[i].symbol;
		q[i].prefix = checks[i].prefix;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	st = elf_symtab__open_fd(fd, NULL);
	if (!st) {
		err = -errno;
		close(fd);
		return err ? err : -ENOEXEC;
	}
	err = elf_symtab__find_symbols(st, q, NCHECKS);
	for (size_t i = 0; !err && i < NCHECKS; i++) {
		uint32_t want, have;

		if (q[i].err || q[i].sym.file_offset == UINT64_MAX || q[i].sym.size < 4 ||
		    pread(fd, &want, sizeof(want), (off_t)q[i].sym.file_offset) != sizeof(want))
			continue;
		memcpy(&have, (const char *)l + checks[i].field, sizeof(have));
		out->compared++;
		if (want == have) {
			out->agreed++;
			continue;
		}
		if (pos < sizeof(out->disagree))
			pos += (size_t)snprintf(out->disagree + pos, sizeof(out->disagree) - pos,
						"%s%s v8dbg %u, learnt %u", pos ? ", " : "",
						checks[i].name, want, have);
	}
	elf_symtab__free(st);
	close(fd);
	if (!err && !out->compared)
		err = -ENOENT;
	return err;
}
