// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Benchmark 12's isoprof side (bench/sourcemaps.sh): the source map decoder
 * (symbolize/sourcemap.h) on a real bundle's map.
 *
 *   sourcemap_bench MAP SCRIPT POSITIONS PASSES [DUMP]
 *
 * Reads the map, the script it describes and the positions ("line column
 * name_len" a line, 0-based; bench/sourcemap_node.js writes them), then
 * times, in this one process (so its peak RSS is this parse's alone):
 *
 *   parse     sourcemap__parse() of the map's text: wall and CPU time, peak
 *             RSS growth (getrusage's ru_maxrss after - before, as node's
 *             process.resourceUsage().maxRSS) and the heap it keeps
 *             (mallinfo2(): in use after - before)
 *   lookup    sourcemap__lookup() of every position, one untimed pass and
 *             PASSES timed passes: ns per call
 *   name      sourcemap__function_name() of every position with its
 *             name_len (0: anonymous, returns at once), the same way
 *   check     sourcemap__check_script() of SCRIPT: wall time
 *
 * and prints one line:
 *
 *   PARSE_WALL_MS PARSE_CPU_MS RSS_KB HEAP_KB LOOKUP_NS NAME_NS CHECK_MS
 *   SEGMENTS SOURCES NAMED_FOUND CHECK_OK CHECKSUM
 *
 * NAMED_FOUND: positions with name_len > 0 given a name; CHECK_OK: 1 when
 * sourcemap_check__matches().  DUMP: each position's lookup,
 * "line col gen_line gen_col orig_line source" (tab-separated; "-" for each
 * field when unmapped), as bench/sourcemap_node.js dumps node's.
 *
 *   sourcemap_bench clean IN OUT
 *
 * Copies such a dump with the source (the last field) cleaned as isoprof
 * cleans the map's sources (sourcemap__clean_source()): node's are raw.
 *
 * Exit status 0, or 1 with one line on stderr.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

#include "lib/fileio.h"
#include "symbolize/sourcemap.h"

struct position {
	uint32_t line, column, name_len;
};

static uint64_t clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static int die(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "sourcemap_bench: ");
	fprintf(stderr, fmt, arg);
	if (err)
		fprintf(stderr, ": %s", strerror(err));
	fputc('\n', stderr);
	return 1;
}

static int read_file(const char *path, char **data, size_t *len)
{
	uint8_t *d;
	int ret = fileio__read_all(path, 0, &d, len);

	if (ret)
		return die("cannot read %s", path, -ret);
	*data = (char *)d;
	return 0;
}

static int read_positions(const char *path, struct position **out, size_t *n)
{
	struct position *pos = NULL;
	size_t cap = 0, cnt = 0;
	unsigned long a, b, c;
	char row[128];
	FILE *f = fopen(path, "r");

	if (!f)
		return die("cannot open %s", path, errno);
	while (fgets(row, sizeof(row), f)) {
		if (sscanf(row, "%lu %lu %lu", &a, &b, &c) != 3) {
			fclose(f);
			free(pos);
			return die("%s: not \"line column name_len\"", path, 0);
		}
		if (cnt == cap) {
			struct position *p;

			cap = cap ? cap * 2 : 4096;
			p = realloc(pos, cap * sizeof(*pos));
			if (!p) {
				fclose(f);
				free(pos);
				return die("%s", "out of memory", 0);
			}
			pos = p;
		}
		pos[cnt++] = (struct position){ (uint32_t)a, (uint32_t)b, (uint32_t)c };
	}
	fclose(f);
	*out = pos;
	*n = cnt;
	return 0;
}

static int dump(const struct sourcemap *sm, const struct position *pos, size_t n,
		const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return die("cannot create %s", path, errno);
	for (size_t i = 0; i < n; i++) {
		struct sourcemap_pos p;

		if (sourcemap__lookup(sm, pos[i].line, pos[i].column, &p))
			fprintf(f, "%u\t%u\t-\t-\t-\t-\n", pos[i].line, pos[i].column);
		else
			fprintf(f, "%u\t%u\t%u\t%u\t%u\t%s\n", pos[i].line, pos[i].column,
				p.gen_line, p.gen_column, p.line, p.source);
	}
	if (fclose(f))
		return die("cannot write %s", path, errno);
	return 0;
}

static int clean(const char *in, const char *out)
{
	FILE *fi = fopen(in, "r"), *fo;
	char *row = NULL, *buf = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!fi)
		return die("cannot open %s", in, errno);
	fo = fopen(out, "w");
	if (!fo) {
		fclose(fi);
		return die("cannot create %s", out, errno);
	}
	while ((len = getline(&row, &cap, fi)) > 0) {
		char *src;

		if (row[len - 1] == '\n')
			row[--len] = '\0';
		src = strrchr(row, '\t');
		src = src ? src + 1 : row;
		if (!strcmp(src, "-")) {
			fprintf(fo, "%s\n", row);
			continue;
		}
		free(buf);
		buf = malloc(strlen(src) + 1);
		if (!buf)
			break;
		sourcemap__clean_source(src, buf, strlen(src) + 1);
		fprintf(fo, "%.*s%s\n", (int)(src - row), row, buf);
	}
	free(buf);
	free(row);
	fclose(fi);
	if (fclose(fo))
		return die("cannot write %s", out, errno);
	return 0;
}

int main(int argc, char **argv)
{
	struct sourcemap *sm;
	struct sourcemap_check chk;
	struct position *pos = NULL;
	char *map, *script, err[256];
	size_t map_len, script_len, n = 0, heap0, heap1, named_found = 0;
	uint64_t t0, t1, c0, c1, sum = 0;
	long rss0, rss1, passes;
	double parse_ms, parse_cpu_ms, lookup_ns, name_ns, check_ms;
	int ret;

	if (argc == 4 && !strcmp(argv[1], "clean"))
		return clean(argv[2], argv[3]);
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: sourcemap_bench MAP SCRIPT POSITIONS PASSES [DUMP]\n"
				"       sourcemap_bench clean IN OUT\n");
		return 2;
	}
	passes = strtol(argv[4], NULL, 10);
	if (passes < 1)
		return die("PASSES %s: not a positive number", argv[4], 0);
	if (read_file(argv[1], &map, &map_len) || read_file(argv[2], &script, &script_len) ||
	    read_positions(argv[3], &pos, &n))
		return 1;

	/* parse */
	rss0 = max_rss_kb();
	heap0 = heap_in_use();
	t0 = clock_ns(CLOCK_MONOTONIC);
	c0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	ret = sourcemap__parse(map, map_len, &sm, err, sizeof(err));
	c1 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	t1 = clock_ns(CLOCK_MONOTONIC);
	rss1 = max_rss_kb();
	heap1 = heap_in_use();
	if (ret)
		return die("%s", err, 0);
	parse_ms = (double)(t1 - t0) / 1e6;
	parse_cpu_ms = (double)(c1 - c0) / 1e6;

	/* lookup: one untimed pass, then PASSES */
	for (long p = 0; p <= passes; p++) {
		if (p == 1)
			t0 = clock_ns(CLOCK_MONOTONIC);
		for (size_t i = 0; i < n; i++) {
			struct sourcemap_pos sp;

			if (!sourcemap__lookup(sm, pos[i].line, pos[i].column, &sp))
				sum += sp.line;
		}
	}
	lookup_ns = n ? (double)(clock_ns(CLOCK_MONOTONIC) - t0) / ((double)n * passes) : 0;

	/* function names, the same way */
	for (long p = 0; p <= passes; p++) {
		if (p == 1)
			t0 = clock_ns(CLOCK_MONOTONIC);
		for (size_t i = 0; i < n; i++) {
			const char *name = sourcemap__function_name(sm, pos[i].line, pos[i].column,
								    pos[i].name_len);

			if (name) {
				sum += (unsigned char)name[0];
				named_found += p == 0;
			}
		}
	}
	name_ns = n ? (double)(clock_ns(CLOCK_MONOTONIC) - t0) / ((double)n * passes) : 0;

	t0 = clock_ns(CLOCK_MONOTONIC);
	sourcemap__check_script(sm, script, script_len, &chk);
	check_ms = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;

	printf("%.2f %.2f %ld %zu %.1f %.1f %.2f %zu %zu %zu %d %llu\n", parse_ms, parse_cpu_ms,
	       rss1 - rss0, heap1 > heap0 ? (heap1 - heap0) / 1024 : 0, lookup_ns, name_ns, check_ms,
	       sourcemap__segment_count(sm), sourcemap__source_count(sm), named_found,
	       sourcemap_check__matches(&chk), (unsigned long long)sum);

	ret = 0;
	if (argc == 6)
		ret = dump(sm, pos, n, argv[5]);
	sourcemap__free(sm);
	free(pos);
	free(script);
	free(map);
	return ret;
}
