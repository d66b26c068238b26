// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: x86_insn__decode() over arbitrary bytes (they come from
 * a target's memory).  Invariants: an instruction is 1 to 15 bytes and
 * within the bytes given, and only branches and calls have a target.
 */
#include <stddef.h>
#include <stdint.h>

#include "symbolize/x86_insn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct x86_insn in;

	for (size_t at = 0; at < size;) {
		if (x86_insn__decode(data + at, size - at, &in)) {
			at++;
			continue;
		}
		if (!in.length || in.length > X86_INSN_MAX || in.length > size - at)
			__builtin_trap();
		if (in.target && in.flow != X86_FLOW_JCC && in.flow != X86_FLOW_JMP &&
		    in.flow != X86_FLOW_CALL)
			__builtin_trap();
		at += in.length;
	}
	return 0;
}
