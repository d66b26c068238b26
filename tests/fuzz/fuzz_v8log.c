// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: a V8 code log fed in two batches to v8log__parse_buf(). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/sha256.h"
#include "symbolize/v8log.h"

static volatile size_t sink;

static void check_inline(struct v8log *log, uint64_t addr)
{
	struct v8inline_frame frames[8], outer;
	int n;

	for (uint64_t off = 0; off < 64; off += 7) {
		n = v8log__inline_stack(log, addr, off, frames, 8, &outer);
		if (n < 0 || n > 8)
			__builtin_trap();
		for (int i = 0; i < n; i++)
			sink += strlen(frames[i].function) +
				(frames[i].script ? strlen(frames[i].script) : 0);
	}
}

static void check_lookup(struct v8log *log, uint64_t addr)
{
	struct v8log_sym sym;

	check_inline(log, addr);

	if (v8log__lookup(log, addr, &sym) < 0)
		return;
	if (addr < sym.start || addr - sym.start >= sym.size || !sym.raw || !sym.name.function)
		__builtin_trap();
	sink += strlen(sym.raw) + strlen(sym.name.tag) + (sym.name.script ? strlen(sym.name.script) : 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct v8log_script *s, *prev = NULL;
	uint8_t digest[SHA256_DIGEST_LEN];
	struct v8log_stats st;
	struct v8log *log;
	size_t cut, i;
	const char *p;

	if (!size)
		return 0;
	cut = data[0] % size;
	log = v8log__new(NULL, NULL, NULL);
	if (!log)
		return 0;
	v8log__parse_buf(log, (const char *)data + 1, cut);
	v8log__parse_buf(log, (const char *)data + 1 + cut, size - 1 - cut);

	v8log__stats(log, &st);
	if (st.code != v8log__count(log) || st.scripts != v8log__script_count(log) ||
	    st.events > st.lines || (st.malformed && !st.first_malformed_line) ||
	    strlen(v8log__version(log)) >= 128)
		__builtin_trap();
	for (i = 0; (s = v8log__script_at(log, i)); i++) {
		if (!s->name || (prev && prev->id >= s->id) || v8log__script(log, s->id) != s)
			__builtin_trap();
		if (s->source) {
			if (s->source[s->source_len] != '\0')
				__builtin_trap();
			sha256__digest(s->source, s->source_len, digest);
			if (memcmp(digest, s->sha256, sizeof(digest)) || strlen(s->sha256_hex) != 64)
				__builtin_trap();
		}
		prev = s;
	}
	/* Look up every hex number that follows "0x" in the input. */
	for (p = (const char *)data + 1; p + 2 < (const char *)data + size; p++) {
		if (p[0] == '0' && p[1] == 'x') {
			uint64_t a = 0;
			const char *q;

			for (q = p + 2; q < (const char *)data + size && q < p + 18; q++) {
				int d = (*q >= '0' && *q <= '9')   ? *q - '0'
					: (*q >= 'a' && *q <= 'f') ? *q - 'a' + 10
								   : -1;
				if (d < 0)
					break;
				a = a << 4 | (uint64_t)d;
			}
			check_lookup(log, a);
			check_lookup(log, a + 1);
		}
	}
	v8log__free(log);
	return 0;
}
