/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * profile_file: reading a profile file of any kind isoprof takes (pprof,
 * gzip'd or not; V8's .cpuprofile or heap profile, bare or as a CDP reply;
 * folded stacks), telling which it is, and making pprof of it.  convert,
 * flame and crosscheck read their inputs through here.
 *
 *	struct profile_file pf = { 0 };
 *
 *	err = profile_file__read(&pf, path, msg, sizeof(msg));
 *	if (!err)
 *		err = profile_file__parse(&pf, PROFILE_FORMATS_ALL, msg, sizeof(msg));
 *	if (!err)
 *		err = profile_file__profile(&pf, msg, sizeof(msg));
 *	... pf.prof ...
 *	profile_file__release(&pf);
 *
 * Telling the format: when one format is accepted, the data is read as
 * that one.  Otherwise gzip is pprof; a JSON object (first non-blank byte
 * '{', after a UTF-8 BOM) is V8's, a CPU profile when it has "nodes" and a
 * heap profile when it has "head" (bare or inside {"result"|"profile":
 * ...}); anything else is tried as pprof, then, when folded stacks are
 * accepted and there is no NUL byte, as folded text.
 *
 * Every function returns 0 or a negative errno with one line in err (the
 * format's own message: the node, field or line at fault).  Nothing
 * prints.  What a struct profile_file points to is its own until
 * profile_file__release(); a caller may take a member and set it to NULL.
 */
#ifndef ISOPROF_PROTO_PROFILE_FILE_H
#define ISOPROF_PROTO_PROFILE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/cpuprofile.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"

struct json_object;

enum profile_format {
	PROFILE_AUTO = 0,	/* not known yet: tell from the content */
	PROFILE_PPROF,
	PROFILE_CPUPROFILE,
	PROFILE_HEAPPROFILE,
	PROFILE_FOLDED,
	NR_PROFILE_FORMATS,
};

#define PROFILE_FORMAT_BIT(f) (1u << (f))
#define PROFILE_FORMATS_ALL                                                           \
	(PROFILE_FORMAT_BIT(PROFILE_PPROF) | PROFILE_FORMAT_BIT(PROFILE_CPUPROFILE) |  \
	 PROFILE_FORMAT_BIT(PROFILE_HEAPPROFILE) | PROFILE_FORMAT_BIT(PROFILE_FOLDED))

/* "auto", "pprof", "cpuprofile", "heapprofile", "folded" */
const char *profile_format__str(enum profile_format f);
/* The format s names ("auto" is PROFILE_AUTO): true and *f, or false. */
bool profile_format__parse(const char *s, enum profile_format *f);

/* Largest file read: pprof's decompressed cap bounds a raw protobuf as well. */
#define PROFILE_FILE_MAX PPROF_MAX_DECOMPRESSED

struct profile_file {
	enum profile_format format;	/* what was read, once parsed */
	uint8_t *data;			/* the file's bytes, NUL-terminated */
	size_t len;
	struct json_object *json;	/* V8's formats: the JSON document */
	struct v8_cpu_profile *cpu;	/* a .cpuprofile */
	struct pprof_profile *prof;	/* pprof as read, or a conversion read back */
	struct pprof_builder *builder;	/* any other format converted to pprof */
};

/*
 * The bytes of path, at most PROFILE_FILE_MAX: "-" is standard input, and
 * a pipe is read to its end.  An empty file is -EINVAL ("empty file").
 */
int profile_file__read(struct profile_file *pf, const char *path, char *err, size_t errlen);
/* The same from memory (copied). */
int profile_file__set_data(struct profile_file *pf, const void *data, size_t len, char *err,
			   size_t errlen);

/*
 * Tell the format among formats (PROFILE_FORMAT_BIT()s; one bit: read as
 * that format) and parse: pprof into pf->prof, a .cpuprofile into pf->cpu,
 * a heap profile into pf->json, folded stacks into pf->builder.
 */
int profile_file__parse(struct profile_file *pf, unsigned int formats, char *err, size_t errlen);

/*
 * Convert what is not pprof into pf->builder: o (may be NULL) adds
 * comments and labels to V8's formats, heap_interval is the heap
 * profile's sampling interval in bytes (0: unknown).  Nothing to do for
 * pprof and folded stacks.
 */
int profile_file__convert(struct profile_file *pf, const struct v8_pprof_opts *o,
			  uint64_t heap_interval, char *err, size_t errlen);

/*
 * pf->prof for any format: pprof as read, else the conversion (made with
 * no options if profile_file__convert() was not called) read back, so it
 * is exactly what a pprof file of it would hold.
 */
int profile_file__profile(struct profile_file *pf, char *err, size_t errlen);

/*
 * The profile as pprof bytes (malloc'd, the caller's): the conversion
 * serialized, or a pprof input packed again; gzip'd when gzip is set.
 */
int profile_file__pprof_bytes(struct profile_file *pf, bool gzip, uint8_t **out, size_t *len,
			      char *err, size_t errlen);

/* Is it V8's own CPU profile: a .cpuprofile, or a pprof converted from one? */
bool profile_file__is_v8_cpu(const struct profile_file *pf);

void profile_file__release(struct profile_file *pf);

#endif /* ISOPROF_PROTO_PROFILE_FILE_H */
