/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof_reader: reads a pprof profile (gzip-compressed or raw protobuf),
 * checks the invariants pprof's own reader checks, and offers a small view
 * the report commands (top, flame, diff, convert) share.
 *
 * Reading:
 *   pprof_profile__read_file() / pprof_profile__parse() return 0 and a
 *   profile that passed pprof_validate(), or a negative errno and, in err,
 *   one line saying what is wrong ("sample 12: 1 values, 2 sample types").
 *   -EBADMSG: not a protobuf / corrupt gzip; -EINVAL: a broken invariant;
 *   -EFBIG: decompresses to more than PPROF_MAX_DECOMPRESSED; -ENOMEM; or
 *   the errno of open()/read().
 *
 * View:
 *   Each location expands to one frame per Line, innermost (inlined) first,
 *   or to a single frame without a function when it has no Line.  A
 *   sample's stack is the concatenation of its locations' frames, leaf
 *   first.  Frames and strings belong to the profile and live until
 *   pprof_profile__free(); a struct pprof_stack is the caller's buffer,
 *   reused across calls and released with pprof_stack__release().
 *
 * Nothing prints.  A profile is immutable after reading, so concurrent
 * readers are fine as long as each uses its own pprof_stack.
 */
#ifndef ISOPROF_PROTO_PPROF_READER_H
#define ISOPROF_PROTO_PPROF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.pb-c.h"

/* Decompression cap: a few bytes of gzip must not become all of memory. */
#define PPROF_MAX_DECOMPRESSED (1ULL << 30)

struct pprof_profile;

struct pprof_frame {
	const char *name;		/* function name; "" when unknown or no function */
	const char *system_name;	/* "" when unknown */
	const char *filename;		/* source file; "" when unknown */
	const char *mapping_file;	/* the location's mapping file; "" without one */
	int64_t line;			/* 0 when unknown */
	int64_t start_line;		/* the function's; 0 when unknown */
	uint64_t address;		/* the location's address */
	uint32_t id;			/* 0 .. pprof_profile__frame_count() - 1 */
	uint32_t location;		/* index of the location in profile order */
	bool has_function;		/* false for a location without Line */
	bool has_mapping;		/* the location names a mapping */
	bool inlined;			/* inlined into the next frame (same location) */
};

struct pprof_stack {
	const struct pprof_frame **frames;	/* frames[0] is the leaf */
	size_t n, cap;
};

int pprof_profile__parse(const uint8_t *data, size_t len, struct pprof_profile **out,
			 char *err, size_t errlen);
int pprof_profile__read_file(const char *path, struct pprof_profile **out, char *err,
			     size_t errlen);
void pprof_profile__free(struct pprof_profile *p);

/*
 * Check pprof's invariants on an unpacked profile: string_table[0] == "",
 * every string index in range, sample_type non-empty, one value per sample
 * type, ids nonzero and unique, every referenced mapping, location and
 * function present.  0 or -EINVAL with the first violation in err.
 */
int pprof_validate(const Perftools__Profiles__Profile *p, char *err, size_t errlen);

enum pprof_table { PPROF_MAPPINGS, PPROF_FUNCTIONS, PPROF_LOCATIONS };

/*
 * The index in the message's table of the mapping, function or location
 * with this id.  The profile was validated, so every id it refers to is
 * there; 0 for one it does not have.
 */
uint32_t pprof_profile__index(const struct pprof_profile *p, enum pprof_table table, uint64_t id);

/* The underlying message, for header fields (time, duration, comments, mappings). */
const Perftools__Profiles__Profile *pprof_profile__proto(const struct pprof_profile *p);
/* String table lookup; "" for an out-of-range index. */
const char *pprof_profile__string(const struct pprof_profile *p, int64_t idx);

size_t pprof_profile__sample_type_count(const struct pprof_profile *p);
/* Type name of sample type i ("cpu"); its unit in *unit when unit is non-NULL. */
const char *pprof_profile__sample_type(const struct pprof_profile *p, size_t i,
				       const char **unit);
/*
 * Resolve a sample index the way pprof's -sample_index does: NULL or "" is
 * default_sample_type when set and present, else the last type; a decimal
 * number is an index; otherwise a type name (an "inuse_" prefix may be
 * omitted from the name).  Returns the index, or -EINVAL with a message.
 */
int pprof_profile__sample_index(const struct pprof_profile *p, const char *name, char *err,
				size_t errlen);

size_t pprof_profile__sample_count(const struct pprof_profile *p);
int64_t pprof_profile__value(const struct pprof_profile *p, size_t sample, size_t index);
/* Fill st with the sample's frames, leaf first.  0 or -ENOMEM. */
int pprof_profile__stack(const struct pprof_profile *p, size_t sample, struct pprof_stack *st);
void pprof_stack__release(struct pprof_stack *st);
/* Number of distinct frames in the profile (bound for pprof_frame.id). */
size_t pprof_profile__frame_count(const struct pprof_profile *p);
/* Frame by id (0 .. pprof_profile__frame_count() - 1), for per-frame tables. */
const struct pprof_frame *pprof_profile__frame(const struct pprof_profile *p, size_t id);

/* First string label value of key in the sample, or NULL. */
const char *pprof_profile__label(const struct pprof_profile *p, size_t sample, const char *key);
/* First numeric label of key; false when there is none. */
bool pprof_profile__num_label(const struct pprof_profile *p, size_t sample, const char *key,
			      int64_t *num);

#endif /* ISOPROF_PROTO_PPROF_READER_H */
