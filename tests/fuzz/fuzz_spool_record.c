// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the pusher's spool file parser (user/push/
 * spool_record), what it reads back from a disk a crash or a person may
 * have changed.  A record it accepts must encode back to the same bytes
 * (nothing is read that the format does not define), and the window must
 * then make a Pyroscope request whose name parameter holds nothing that
 * would end a value or a label set early.
 *
 * The input is used twice: as it is, and as the body of a record around
 * strings cut from it (so that the checksum matches and the fields
 * behind it are reached).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "user/push/protocol.h"
#include "user/push/spool_record.h"

static void check_window(const struct push_window *w)
{
	const struct push_protocol *pr = push_protocol__find("pyroscope");
	struct push_target t = { .url = "http://127.0.0.1:1", .token = "t", .tenant = "x" };
	struct push_request rq;
	char *name;
	size_t open = 0, close = 0;

	if (pyroscope__name_param(w, &name))
		__builtin_trap();
	for (const char *s = name; *s; s++) {
		open += *s == '{' && !open;
		close += *s == '}';
	}
	/* exactly one '}' (the last byte): no value could end early */
	if (!open || close != 1 || name[strlen(name) - 1] != '}')
		__builtin_trap();
	free(name);
	if (pr->build(&t, w, &rq))
		__builtin_trap();
	for (const char *s = rq.url; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f)
			__builtin_trap();
	push_request__free(&rq);
}

static void decode(const uint8_t *data, size_t size)
{
	struct push_window w;
	const char *why;
	uint8_t *again;
	size_t len;

	if (spool_record__decode(data, size, &w, &why)) {
		if (!why)
			__builtin_trap();
		return;
	}
	if (spool_record__encode(&w, &again, &len))
		__builtin_trap();
	if (len != size || memcmp(again, data, size))
		__builtin_trap();
	free(again);
	check_window(&w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char strs[2 + 2 * 4][64];
	struct push_window w = { 0 };
	size_t pos = 0, n = 0;
	uint8_t *rec;
	size_t len;

	decode(data, size);

	/* a valid record around strings from the input: the parser's deeper checks */
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		size_t k = pos < size ? data[pos++] % 16 : 0;

		for (n = 0; n < k && pos < size; pos++)
			if (data[pos])
				strs[i][n++] = (char)data[pos];
		strs[i][n] = '\0';
	}
	w.service = strs[0][0] ? strs[0] : "s";
	w.profile_type = strs[1];
	w.nlabels = 4;
	for (size_t i = 0; i < 4; i++)
		w.labels[i] = (struct push_label){ strs[2 + 2 * i], strs[3 + 2 * i] };
	w.from_ns = size;
	w.until_ns = size * 2;
	w.body = data;
	w.len = size ? size : 1;
	if (!size)
		w.body = "x";
	if (spool_record__encode(&w, &rec, &len))
		__builtin_trap();
	decode(rec, len);
	/* and cut short: never accepted */
	if (len > 1) {
		struct push_window d;
		const char *why;

		if (!spool_record__decode(rec, len - 1 - (size % (len - 1)), &d, &why))
			__builtin_trap();
	}
	free(rec);
	return 0;
}
