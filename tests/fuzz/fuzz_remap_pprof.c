// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Fuzz remap_pprof: a profile read back and named through a source map
 * (convert/top/flame --source-maps).  The input is the profile (any bytes:
 * protobuf decoding and pprof's checks come first); the map is a
 * small map of two functions (worker.js lines 1 and 2), written once into
 * a directory of the fuzzer's own, so every JS function whose system name
 * names worker.js is looked up in it.  What comes out must parse again,
 * and a second pass must rename nothing.  The system-name scanner gets
 * the raw input as text too.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/pprof_reader.h"
#include "user/attribute/remap_pprof.h"
#include "user/attribute/source_maps.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/isoprof-fuzz-remap.XXXXXX";
static struct source_maps *maps;

/* A small map of two generated lines, a function on each (names, two sources). */
static const char map_json[] =
	"{\"version\":3,\"sources\":[\"../../src/pricing.ts\",\"../../src/text.ts\"],"
	"\"names\":[\"computeCompoundInterest\",\"principal\",\"tokenizeInvoiceLines\"],"
	"\"mappings\":\"AAMO,SAASA,EAAwBC,EAAmB;ACDlC,SAASC\"}";

static void cleanup(void)
{
	char path[sizeof(dir) + 32];

	source_maps__free(maps);
	snprintf(path, sizeof(path), "%s/worker.js.map", dir);
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[sizeof(dir) + 32];
	FILE *f;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/worker.js.map", dir);
	f = fopen(path, "w");
	if (!f || fputs(map_json, f) < 0 || fclose(f))
		abort();
	atexit(cleanup);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct source_maps_opts o = { .dir = dir };
	uint8_t *out = NULL, *again = NULL;
	size_t out_len, again_len, n, n2;
	struct pprof_profile *p;
	char text[512], err[256];
	const char *script;
	size_t script_len;
	uint32_t line, col;

	/* a fresh set per input: what one input looked up must not hide another's */
	source_maps__free(maps);
	maps = source_maps__new(&o);
	if (!maps)
		return 0;
	if (size < sizeof(text)) {
		memcpy(text, data, size);
		text[size] = '\0';
		if (remap_pprof__position(text, &script, &script_len, &line, &col) &&
		    (script < text || script + script_len > text + size || !line))
			abort();
	}
	if (remap_pprof__apply(maps, data, size, &out, &out_len, &n, err, sizeof(err)))
		return 0;
	/* what it writes is a valid profile, and mapped once is mapped */
	if (pprof_profile__parse(out, out_len, &p, err, sizeof(err)))
		abort();
	pprof_profile__free(p);
	if (remap_pprof__apply(maps, out, out_len, &again, &again_len, &n2, err, sizeof(err)) ||
	    n2)
		abort();
	free(out);
	free(again);
	return 0;
}
