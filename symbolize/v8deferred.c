// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8deferred: where Maglev's deferred code goes back to; see v8deferred.h. */
#include <stdbool.h>
#include <string.h>

#include "symbolize/v8deferred.h"

/* REX.W (with R or B): 48, 49, 4c, 4d */
static bool rex_w(uint8_t b)
{
	return (b & 0xfa) == 0x48;
}

uint64_t v8deferred__continuation(const uint8_t *code, size_t len, uint64_t ret)
{
	size_t i = 0;
	bool moved = false;

	/* no code ends at the top of the address space: ret + i never wraps below */
	if (ret > UINT64_MAX - len - 8)
		return 0;
	while (i < len) {
		uint8_t b = code[i];

		if (!moved && i == 0 && i + 3 <= len && rex_w(b) &&
		    (code[i + 1] == 0x8b || code[i + 1] == 0x89) && (code[i + 2] & 0xc0) == 0xc0) {
			/* mov r64, r64: the call's result into its register, first if at all */
			moved = true;
			i += 3;
		} else if (b >= 0x58 && b <= 0x5f) {
			i += 1;				/* pop r64 */
		} else if (b == 0x41 && i + 2 <= len && code[i + 1] >= 0x58 && code[i + 1] <= 0x5f) {
			i += 2;				/* pop r8..r15 */
		} else if (b == 0xe9 && i + 5 <= len) {
			int32_t rel;
			uint64_t next = ret + i + 5, to;

			memcpy(&rel, code + i + 1, sizeof(rel));
			to = next + (int64_t)rel;
			return rel < 0 && to < ret && ret - to <= V8DEFERRED_MAX_BACK ? to : 0;
		} else if (b == 0xeb && i + 2 <= len) {
			int8_t rel = (int8_t)code[i + 1];
			uint64_t next = ret + i + 2, to = next + (int64_t)rel;

			return rel < 0 && to < ret && ret - to <= V8DEFERRED_MAX_BACK ? to : 0;
		} else {
			return 0;
		}
	}
	return 0;
}
