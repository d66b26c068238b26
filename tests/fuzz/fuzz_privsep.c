// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target for the messages the serve helper reads from the HTTP
 * process (user/serve/privsep), which may have been taken over: a request
 * the helper accepts must encode back to exactly the same bytes (nothing
 * it ignores), with names free of control characters, values in range and
 * one target (a script, a pid alone, or none); the reply check must never
 * read past what it is given.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "user/serve/privsep.h"

static void check(bool ok)
{
	if (!ok)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t len)
{
	struct privsep_req_wire again;
	struct privsep_req r;

	privsep__check_reply(data, len);
	if (privsep__decode_req(data, len, &r))
		return 0;
	check(len == sizeof(again));
	if (r.op == PRIVSEP_OP_TARGETS) {
		privsep__encode_targets(&again);
	} else {
		bool ns = r.namespace_id[0] != '\0';
		struct privsep_capture c = {
			.script = r.script[0] ? r.script : NULL,
			.version = r.version[0] ? r.version : NULL,
			.namespace_id = ns ? r.namespace_id : NULL, .actor_id = ns ? r.actor_id : NULL,
			.pid = r.pid, .duration_ms = r.duration_ms, .type = r.type, .raw = r.raw,
		};

		check(r.duration_ms >= API_DURATION_MIN_MS && r.duration_ms <= API_DURATION_MAX_MS);
		for (const char *p = r.script; *p; p++)
			check((unsigned char)*p >= 0x20 && *p != 0x7f);
		for (const char *p = r.version; *p; p++)
			check((unsigned char)*p >= 0x20 && *p != 0x7f);
		/* a target: a script (a version, a namespace only with it), a pid alone, or none */
		check(r.pid >= 0 && r.pid <= API_PID_MAX);
		check(!r.pid || (!r.script[0] && !r.version[0] && !ns));
		check(r.script[0] || (!r.version[0] && !ns));
		check(!ns || strlen(r.actor_id) == API_ACTOR_ID_LEN);
		check(!privsep__encode_capture(&c, &again));
	}
	check(!memcmp(&again, data, sizeof(again)));
	return 0;
}
