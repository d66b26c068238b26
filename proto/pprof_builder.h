/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof_builder: builds a pprof Profile (proto/profile.proto) and enforces
 * the format's rules: string_table[0] == "", ids >= 1 and unique, every
 * sample has one value per sample type, every Line names a function that
 * exists, time_nanos set once.
 *
 * Strings are interned in constant time (hash table); mappings, functions
 * and locations are deduplicated by content; samples with the same
 * locations and labels are merged (values summed), so callers may add one
 * sample per event.
 *
 * Ownership: the builder copies every string it is given.  Errors: -ENOMEM,
 * -EINVAL (e.g. wrong number of values), -errno from I/O.  Nothing prints.
 */
#ifndef ISOPROF_PROTO_PPROF_BUILDER_H
#define ISOPROF_PROTO_PPROF_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof_builder;

struct pprof_mapping_desc {
	uint64_t memory_start;
	uint64_t memory_limit;
	uint64_t file_offset;
	const char *filename;	/* may be NULL */
	const char *build_id;	/* may be NULL or "" */
	bool has_functions;
	bool has_filenames;
	bool has_line_numbers;
};

struct pprof_line {
	uint64_t function_id;
	int64_t line;		/* 0 when unknown */
	int64_t column;		/* 0 when unknown */
};

struct pprof_label {
	const char *key;
	const char *str;	/* string label when non-NULL ... */
	int64_t num;		/* ... numeric label otherwise */
	const char *num_unit;	/* optional, numeric labels only */
};

struct pprof_builder *pprof_builder__new(void);
void pprof_builder__free(struct pprof_builder *b);

/* Interned index of s in the string table ("" and NULL are 0). */
int64_t pprof_builder__string(struct pprof_builder *b, const char *s);

/* Sample types, in order; must all be added before the first sample. */
int pprof_builder__add_sample_type(struct pprof_builder *b, const char *type, const char *unit);
void pprof_builder__set_default_sample_type(struct pprof_builder *b, const char *type);
void pprof_builder__set_period(struct pprof_builder *b, const char *type, const char *unit,
			       int64_t period);
void pprof_builder__set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos);
int pprof_builder__add_comment(struct pprof_builder *b, const char *comment);

/* Each returns an id >= 1, or 0 with errno set (ENOMEM). Deduplicated. */
uint64_t pprof_builder__mapping(struct pprof_builder *b, const struct pprof_mapping_desc *m);
uint64_t pprof_builder__function(struct pprof_builder *b, const char *name,
				 const char *system_name, const char *filename,
				 int64_t start_line);
/*
 * mapping_id may be 0 (no mapping).  lines[0] is the innermost frame, the
 * last line its outermost (inlining) caller, as in profile.proto.
 */
uint64_t pprof_builder__location(struct pprof_builder *b, uint64_t mapping_id,
				 uint64_t address, const struct pprof_line *lines,
				 size_t nlines);

/*
 * Add (or merge into an identical) sample.  location_ids[0] is the leaf.
 * nvalues must equal the number of sample types.
 */
int pprof_builder__add_sample(struct pprof_builder *b, const uint64_t *location_ids,
			      size_t nlocations, const int64_t *values, size_t nvalues,
			      const struct pprof_label *labels, size_t nlabels);

size_t pprof_builder__sample_count(const struct pprof_builder *b);

/* Serialize; *out is malloc()ed and owned by the caller. */
int pprof_builder__serialize(struct pprof_builder *b, bool gzip, uint8_t **out, size_t *len);

/*
 * Serialize and write to path atomically (lib/fileio: a temporary file in
 * the same directory, renamed over path), mode 0644.  "-" names a file
 * here, not standard output.
 */
int pprof_builder__write_file(struct pprof_builder *b, const char *path, bool gzip);

#endif /* ISOPROF_PROTO_PPROF_BUILDER_H */
