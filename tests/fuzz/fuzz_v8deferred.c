// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: v8deferred__continuation() over arbitrary code bytes
 * (they come from a target's memory).  Invariants: it reads only the bytes
 * given, and an answer is always below the return address and within
 * V8DEFERRED_MAX_BACK of it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "symbolize/v8deferred.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t ret = 0, to;

	if (size < sizeof(ret))
		return 0;
	memcpy(&ret, data, sizeof(ret));
	to = v8deferred__continuation(data + sizeof(ret), size - sizeof(ret), ret);
	if (to && (to >= ret || ret - to > V8DEFERRED_MAX_BACK))
		__builtin_trap();
	return 0;
}
