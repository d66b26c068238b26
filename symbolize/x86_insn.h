/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * x86_insn: the length and control flow of one x86-64 instruction.
 *
 * Enough of the instruction set to walk V8's optimized code linearly: the
 * one-byte and 0F maps, 0F38/0F3A, VEX (C4/C5) and EVEX (62) forms, ModRM,
 * SIB, displacements and immediates; what an instruction does is not
 * decoded, only where control goes next (docs/design/js-frames.md, "Inlined
 * functions from deoptimization data").  Instructions that 64-bit mode does
 * not have, and bytes that run past the end, are refused: a walk then
 * knows it lost the instruction boundary.
 *
 * Nothing here reads memory or allocates: the caller hands the bytes.
 */
#ifndef ISOPROF_SYMBOLIZE_X86_INSN_H
#define ISOPROF_SYMBOLIZE_X86_INSN_H

#include <stddef.h>
#include <stdint.h>

#define X86_INSN_MAX 15		/* the architecture's longest instruction */

enum x86_flow {
	X86_FLOW_NEXT = 0,	/* falls through to the next instruction */
	X86_FLOW_JCC,		/* conditional branch to target (or falls through) */
	X86_FLOW_JMP,		/* unconditional branch to target */
	X86_FLOW_CALL,		/* call of target; returns to the next instruction */
	X86_FLOW_CALL_INDIRECT,	/* call through a register or memory */
	X86_FLOW_JMP_INDIRECT,	/* jump through a register or memory */
	X86_FLOW_RET,
	X86_FLOW_STOP,		/* int3, ud2, hlt: execution does not go on here */
};

struct x86_insn {
	uint8_t length;
	enum x86_flow flow;
	/* JCC, JMP, CALL: the target as a signed offset from the instruction's start */
	int64_t target;
};

/*
 * Decode the instruction at code[0..len).  0 with *out filled, or -EINVAL:
 * not an instruction of 64-bit mode, or longer than len (or than 15 bytes).
 */
int x86_insn__decode(const uint8_t *code, size_t len, struct x86_insn *out);

#endif /* ISOPROF_SYMBOLIZE_X86_INSN_H */
