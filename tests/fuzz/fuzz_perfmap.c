// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: perf map text fed in two batches, either from memory
 * (perfmap__parse_buf) or through the file tail reader (a memfd grown
 * between updates, possibly rewritten); and the newest-wins flattening
 * checked by brute force.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolize/code_index.h"
#include "symbolize/perfmap.h"

static volatile size_t sink;

static void check_lookup(struct perfmap *pm, uint64_t addr)
{
	struct perfmap_sym sym;

	if (perfmap__lookup(pm, addr, &sym) < 0)
		return;
	if (addr < sym.start || addr - sym.start >= sym.size || !sym.raw || !sym.name.function)
		__builtin_trap();
	sink += strlen(sym.raw) + strlen(sym.name.function) +
		(sym.name.script ? strlen(sym.name.script) : 0);
}

/* Spans from the input in a 256-byte space: flatten must agree with painting. */
static void check_flatten(const uint8_t *data, size_t size)
{
	struct code_span in[32], *out;
	int winner[256];
	size_t n = 0, nr_out, i, j;
	ptrdiff_t f;

	for (i = 0; i + 1 < size && n < 32; i += 2) {
		in[n].start = data[i];
		in[n].end = (uint64_t)data[i] + 1 + data[i + 1] % 64;
		in[n].id = n;
		n++;
	}
	for (i = 0; i < 256; i++)
		winner[i] = -1;
	for (i = 0; i < n; i++) {
		for (j = in[i].start; j < in[i].end && j < 256; j++)
			winner[j] = (int)i;
	}
	for (i = 1; i < n; i++) {
		struct code_span t = in[i];

		for (j = i; j > 0 && in[j - 1].start > t.start; j--)
			in[j] = in[j - 1];
		in[j] = t;
	}
	if (code_spans__flatten(in, n, &out, &nr_out) < 0)
		return;
	for (i = 0; i < 256; i++) {
		f = code_spans__find(out, nr_out, i);
		if ((winner[i] < 0) != (f < 0) || (f >= 0 && (int)out[f].id != winner[i]))
			__builtin_trap();
	}
	free(out);
}

static struct perfmap *through_file(const uint8_t *data, size_t size, size_t cut, bool rewrite)
{
	struct perfmap *pm = NULL;
	char path[64];
	int fd;

	fd = memfd_create("perfmap-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	pm = perfmap__new(path, NULL, NULL);
	if (!pm || write(fd, data, cut) != (ssize_t)cut)
		goto out;
	perfmap__update(pm);
	if (rewrite && ftruncate(fd, 0) < 0)
		goto out;
	if (write(fd, data + cut, size - cut) != (ssize_t)(size - cut))
		goto out;
	perfmap__update(pm);
	perfmap__update(pm);
out:
	close(fd);
	return pm;
}

/*
 * A filtered map answers every wanted address as the whole map does (the
 * copies it does not keep change no answer); wanted: each line's start,
 * and the byte after it, from the terminated copy text.
 */
static void check_filtered(const uint8_t *data, size_t size, size_t cut, const char *text)
{
	struct perfmap *all = perfmap__new(NULL, NULL, NULL), *some = perfmap__new(NULL, NULL, NULL);
	struct perfmap_sym a, b;
	uint64_t want[64];
	size_t n = 0, i;
	int ea, eb;

	if (!all || !some)
		goto out;
	for (i = 0; i < size && n + 2 <= 64; i++) {
		if (i == 0 || text[i - 1] == '\n') {
			want[n] = strtoull(text + i, NULL, 16);
			want[n + 1] = want[n] + 1;
			n += 2;
		}
	}
	if (perfmap__want(some, want, n) < 0)
		goto out;
	perfmap__parse_buf(all, (const char *)data, cut);
	perfmap__parse_buf(some, (const char *)data, cut);
	perfmap__parse_buf(all, (const char *)data + cut, size - cut);
	perfmap__parse_buf(some, (const char *)data + cut, size - cut);
	for (i = 0; i < n; i++) {
		ea = perfmap__lookup(all, want[i], &a);
		eb = perfmap__lookup(some, want[i], &b);
		if (ea == -ENOMEM || eb == -ENOMEM)
			continue;
		if (ea != eb || (!ea && (a.start != b.start || a.size != b.size ||
					 strcmp(a.raw, b.raw))))
			__builtin_trap();
	}
out:
	perfmap__free(all);
	perfmap__free(some);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap_stats st;
	struct perfmap *pm;
	size_t cut, i;
	uint8_t mode;
	char *text;

	if (size < 2)
		return 0;
	mode = data[0];
	cut = size > 2 ? data[1] % (size - 2) : 0;
	data += 2;
	size -= 2;
	check_flatten(data, size);

	if (mode & 1) {
		pm = through_file(data, size, cut, mode & 2);
	} else {
		pm = perfmap__new(NULL, NULL, NULL);
		if (pm) {
			perfmap__parse_buf(pm, (const char *)data, cut);
			perfmap__parse_buf(pm, (const char *)data + cut, size - cut);
		}
	}
	if (!pm)
		return 0;
	perfmap__stats(pm, &st);
	if (st.entries != perfmap__count(pm) || st.entries > st.lines || st.segments < st.entries ||
	    (st.malformed && !st.first_malformed_line) || st.first_malformed_line > st.lines)
		__builtin_trap();
	/*
	 * Lookups at every line start and at addresses taken from the input;
	 * strtoull needs a terminated copy (the input's last line may be all
	 * hex digits).
	 */
	text = malloc(size + 1);
	if (text) {
		memcpy(text, data, size);
		text[size] = '\0';
		for (i = 0; i < size; i++) {
			if (i == 0 || text[i - 1] == '\n')
				check_lookup(pm, strtoull(text + i, NULL, 16));
		}
		check_filtered(data, size, cut, text);
		free(text);
	}
	for (i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		check_lookup(pm, a);
		check_lookup(pm, a & 0xffff);
	}
	perfmap__free(pm);
	return 0;
}
