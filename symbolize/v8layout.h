/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8layout: what isoprof knows of one V8 build's objects, to name JS frames
 * from the runtime's heap with no runtime flags (docs/v8-frames.md).
 *
 * A layout belongs to one binary, by its ELF build-id: V8 changes its object
 * layouts between versions and build configurations (pointer compression,
 * sandbox), so nothing here is assumed; `isoprof calibrate` learns every
 * field from a run of that binary (user/v8/calibrate.h) and stores it as a
 * small text file, DIR/v8-layouts/BUILDID, one "key value" line per field:
 *
 *   isoprof-v8-layout 3
 *   build_id 0123abcd...
 *   v8_version 15.8.62.5
 *   compressed 1
 *   fn_sfi 16
 *   ...
 *
 * Numbers are decimal or 0x-hex; unknown keys are an error (a layout from a
 * newer isoprof is refused, not half-used); every field must be present.
 *
 * Exactly: the first non-empty line is "isoprof-v8-layout 3"; then one
 * "key value" line per struct field, the key spelled as the field, blanks
 * between, in any order, each once.  Empty lines and lines starting with
 * '#' are skipped (after the header); trailing blanks and CR are dropped;
 * a value has no blanks.  u32 values: decimal without leading zeros, or
 * "0x" hex (format writes offsets and counts in decimal, map words,
 * instance types and masks in hex); bools 0 or 1; build_id 2..64
 * lowercase hex digits; v8_version up to 31 printable ASCII characters,
 * "-" when unknown ("").  A parsed layout also passes v8layout__check().
 *
 * Offsets are bytes from the untagged start of an object.  A tagged field
 * is tagged_size bytes: with compression, the low 32 bits of a pointer into
 * the 4 GiB-aligned cage (the full pointer is the cage base plus the field);
 * without, the full pointer.  Smis: 31-bit (value = (int32)word >> 1) with
 * compression, upper half (value = (int64)word >> 32) without.
 *
 * Errors: negative errno; parse errors also fill err (line and why).
 * Nothing prints.
 */
#ifndef ISOPROF_SYMBOLIZE_V8LAYOUT_H
#define ISOPROF_SYMBOLIZE_V8LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define V8LAYOUT_FORMAT_VERSION 3
#define V8LAYOUT_BUILD_ID_MAX 64	/* hex digits of the longest build-id kept */
#define V8LAYOUT_FILE_MAX 4096		/* a layout file is a few hundred bytes */
#define V8LAYOUT_SUBDIR "v8-layouts"	/* under the state directory */
#define V8LAYOUT_DEFAULT_STATE_DIR "/var/lib/isoprof"

struct v8_layout {
	char build_id[V8LAYOUT_BUILD_ID_MAX + 1]; /* lowercase hex */
	char v8_version[32];		/* "15.8.62.5"; "" when unknown */
	bool compressed;		/* tagged_size 4, cage-relative pointers, 31-bit Smis */
	uint32_t tagged_size;		/* 4 or 8 */

	/* Objects (byte offsets from the untagged start). */
	uint32_t fn_sfi;		/* JSFunction -> SharedFunctionInfo */
	uint32_t sfi_name_or_scope_info; /* SFI -> String name, or ScopeInfo once compiled */
	uint32_t sfi_script;		/* SFI -> Script (or undefined) */
	uint32_t scope_info_flags;	/* ScopeInfo: Smi flags (unused by readers; kept for checks) */
	uint32_t scope_info_context_locals; /* ScopeInfo: Smi context-local count c */
	uint32_t scope_info_start;	/* ScopeInfo: Smi start source position */
	/*
	 * The function name's word index in a ScopeInfo (words of tagged_size
	 * from the object start): name_base + name_stride * c while c is
	 * below name_hashed_from, name_hashed_base + c from there on (a hash
	 * table replaces the list of local names).
	 */
	uint32_t scope_info_name_base;
	uint32_t scope_info_name_stride;
	uint32_t scope_info_name_hashed_from;
	uint32_t scope_info_name_hashed_base;
	uint32_t script_source;		/* Script -> String source */
	uint32_t script_name;		/* Script -> String name */
	uint32_t string_length;		/* u32 */
	uint32_t string_chars;		/* first character of a sequential string */
	uint32_t map_instance_type;	/* u16 instance type in a Map */

	/*
	 * Map words: the compressed map word of each kind, the same in every
	 * process of a build when read-only maps are shared (compressed
	 * builds); 0 when maps must be checked by instance type instead.
	 */
	uint32_t sfi_map;
	uint32_t scope_info_map;
	uint32_t script_map;
	/* Instance types (u16 at map + map_instance_type). */
	uint32_t sfi_type;
	uint32_t scope_info_type;
	uint32_t script_type;
	/*
	 * Strings: every instance type below string_type_limit is a string;
	 * representation = type & string_repr_mask (sequential: 0), one-byte
	 * when type & string_one_byte_bit.
	 */
	uint32_t string_type_limit;
	uint32_t string_repr_mask;
	uint32_t string_one_byte_bit;

	/*
	 * Where the binary keeps V8's embedded builtins (the interpreter's
	 * trampoline among them), as a range of file offsets: with the JIT
	 * code, the only code a JS frame can run, so the sampler walks no
	 * deeper than the last such frame.  0, 0: unknown (every frame walked).
	 */
	uint32_t builtins_offset;
	uint32_t builtins_size;

	/*
	 * A function with no name of its own (`obj.method = function () {}`)
	 * has the name V8 inferred for it in its ScopeInfo, this many words
	 * after the name's; 0: not learnt.  Inferred names are often cons
	 * strings: type & string_repr_mask == string_cons_tag (0: not learnt),
	 * the two halves tagged fields at string_chars and string_chars +
	 * tagged_size.
	 */
	uint32_t scope_info_inferred_delta;
	uint32_t string_cons_tag;

	/*
	 * Optimized code objects, for the functions they inlined
	 * (symbolize/v8code.h).  code_alignment 0: not learnt, every other
	 * code_ field then 0 and unused.
	 *
	 * An InstructionStream (in the code range) holds the instructions,
	 * code_alignment-aligned, istream_instructions bytes after its start;
	 * its map has instance type istream_type; its tagged word at
	 * istream_code is the Code.  In the Code: the InstructionStream back
	 * (code_istream, compared on its low 32 bits: the code range may
	 * compress against a cage of its own), the instruction start (u64)
	 * and size (u32), flags (u32: kind = flags & code_kind_mask), the
	 * deoptimization data and the source position table (tagged).
	 */
	uint32_t code_alignment;
	uint32_t istream_instructions;
	uint32_t istream_code;
	uint32_t istream_type;
	uint32_t code_istream;
	uint32_t code_instruction_start;
	uint32_t code_instruction_size;
	uint32_t code_flags;
	uint32_t code_kind_mask;
	uint32_t code_kind_turbofan;
	uint32_t code_kind_maglev;	/* 0: no Maglev code seen */
	uint32_t code_deopt_data;
	uint32_t code_position_table;
	/*
	 * The arrays behind a Code (deoptimization data, literals, byte
	 * arrays): a length at array_length, a Smi when array_length_smi,
	 * else a raw u32 (trusted arrays); elements or bytes at
	 * array_elements.
	 */
	uint32_t array_length;
	uint32_t array_length_smi;
	uint32_t array_elements;
	/* Element indices in the deoptimization data. */
	uint32_t deopt_inlined_count;	/* Smi: functions inlined */
	uint32_t deopt_literals;	/* array: their SFIs, first the inlined ones */
	uint32_t deopt_sfi;		/* the code's own SFI ... */
	uint32_t deopt_sfi_wrapper;	/* ... at this offset of a wrapper object; 0: directly */
	uint32_t deopt_inlining_positions; /* byte array of 16-byte InliningPositions */
	/*
	 * The source position table's code-offset field: 1, delta when a
	 * statement else -delta-1; 2, delta << 2 | two flag bits; both
	 * zig-zag varints.
	 */
	uint32_t spt_encoding;

	/*
	 * Deoptimization data, for the inlined function at a pc of code with
	 * no source positions (symbolize/v8deopt.h).  deopt_format 0: not
	 * learnt, every other deopt_ field below then 0 and unused.
	 *
	 * Element indices in the deoptimization data: the frame translation
	 * (a byte array), the offset of the first exit stub, the eager and
	 * lazy entry counts (Smis); then entries of deopt_entry_size elements
	 * from deopt_first_entry, each with its translation index and pc (Smis)
	 * at these positions in it.  The translation format: a family (enum
	 * v8deopt_family) and its opcode count.  Exit stubs are this many
	 * bytes, eager ones first.  Maglev code maps return offsets to entries
	 * in its safepoint table, right after its instructions: the entry
	 * count at maglev_safepoint_length, the entry configuration word at
	 * maglev_safepoint_config, entries from maglev_safepoint_header (all
	 * 0: no Maglev code seen).
	 */
	uint32_t deopt_format;
	uint32_t deopt_opcodes;
	uint32_t deopt_translation;
	uint32_t deopt_exit_start;
	uint32_t deopt_eager_count;
	uint32_t deopt_lazy_count;
	uint32_t deopt_first_entry;
	uint32_t deopt_entry_size;
	uint32_t deopt_entry_translation;
	uint32_t deopt_entry_pc;
	uint32_t deopt_eager_exit_size;
	uint32_t deopt_lazy_exit_size;
	uint32_t maglev_safepoint_length;
	uint32_t maglev_safepoint_config;
	uint32_t maglev_safepoint_header;
};

#define V8LAYOUT_STATE_DIR_ENV "ISOPROF_STATE_DIR"

/*
 * The state directory when no option names one: $ISOPROF_STATE_DIR when it
 * is an absolute path, else V8LAYOUT_DEFAULT_STATE_DIR.
 */
const char *v8layout__state_dir(void);

/* Parse a layout file's text (len bytes, need not be NUL-terminated). */
int v8layout__parse(const char *text, size_t len, struct v8_layout *out, char *err,
		    size_t err_len);

/*
 * The layout as its file's text, into buf; returns the length it needs
 * (snprintf style: a result >= len means buf was too small).
 */
size_t v8layout__format(const struct v8_layout *l, char *buf, size_t len);

/*
 * Are the fields consistent: tagged size 4 or 8 matching compressed,
 * offsets aligned and within an object's first 256 bytes, build-id hex?
 * -EINVAL with the reason in err.
 */
int v8layout__check(const struct v8_layout *l, char *err, size_t err_len);

/* "STATE_DIR/v8-layouts/BUILD_ID" into buf; -ENAMETOOLONG, -EINVAL (not hex). */
int v8layout__path(const char *state_dir, const char *build_id, char *buf, size_t len);

/*
 * The layout stored for build_id under state_dir: -ENOENT when none,
 * -ESTALE when it is in an earlier isoprof's format (calibrate again),
 * -EINVAL (err says why) when the file does not parse, does not check, or
 * names another build-id.  The file is isoprof's own (written by root);
 * it is still read with a size cap and no symlink followed.
 */
int v8layout__load(const char *state_dir, const char *build_id, struct v8_layout *out,
		   char *err, size_t err_len);

/*
 * Store l under state_dir (directories made 0755 as needed), atomically:
 * a reader sees the old layout or the new one.
 */
int v8layout__store(const char *state_dir, const struct v8_layout *l);

#endif /* ISOPROF_SYMBOLIZE_V8LAYOUT_H */
