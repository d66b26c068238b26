/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8deferred: where Maglev's deferred code goes back to.
 *
 * Maglev puts the slow path of an inline allocation in deferred code at the
 * end of the code object, and logs no source position for it: a return
 * address there maps to the last position of the function, outside any
 * inlined function (measured on workerd's V8 15.8: a fetch whose inlined
 * callees allocate, every allocation sample at fetch's last line).  The
 * deferred block ends by going back to the main body, right after the
 * allocation, where the positions are.  On x86-64 it reads, from the
 * return address of the runtime call:
 *
 *     [mov r64, rax]            the new object into its register
 *     pop r64 ...               the registers saved around the call
 *     jmp <continuation>        back into the main body (e9 rel32, eb rel8)
 *
 * v8deferred__continuation() decodes only those instructions; anything
 * else, or a jump that does not go backwards within the code, is no such
 * block.  Nothing here reads memory: the caller hands the bytes.
 */
#ifndef ISOPROF_SYMBOLIZE_V8DEFERRED_H
#define ISOPROF_SYMBOLIZE_V8DEFERRED_H

#include <stddef.h>
#include <stdint.h>

/* Bytes worth reading at a return address (the longest block seen is 24). */
#define V8DEFERRED_READ 48

/*
 * code: len bytes at ret, the return address of a call in Maglev code.
 * The address the block jumps back to (before ret, at most
 * V8DEFERRED_MAX_BACK below it), or 0 when the bytes are not such a block.
 */
#define V8DEFERRED_MAX_BACK (1u << 20)
uint64_t v8deferred__continuation(const uint8_t *code, size_t len, uint64_t ret);

#endif /* ISOPROF_SYMBOLIZE_V8DEFERRED_H */
