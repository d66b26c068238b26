/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * pprof_merge: many pprof profiles of one kind folded into one, as
 * `go tool pprof -proto A B ...` merges them, one profile at a time: the
 * caller reads a profile, adds it, frees it, and reads the next, so memory
 * is bounded by the merged result, never by the sum of the inputs.
 *
 * The result (built by proto/pprof_builder):
 *   - the sample types of the first profile; a profile whose sample types
 *     (names and units, in order) or period type differ is refused with
 *     -EINVAL and a sentence in err, and nothing of it is merged;
 *   - samples with the same stack and the same labels summed, where "the
 *     same" is by value: functions (name, system name, file, start line),
 *     lines, locations (mapping, address, lines) and mappings (range,
 *     offset, file, build id) are matched by content, never by their ids,
 *     which each profile numbers its own way; strings, functions,
 *     locations and mappings deduplicated likewise;
 *   - time_nanos: the earliest start; duration_nanos: the latest end
 *     (time + duration) minus that start; profiles without a time do not
 *     count;
 *   - the largest period, the first profile's default sample type;
 *   - every comment once (the first time it is seen), then one comment
 *     "merged N profiles: FROM to UNTIL" (RFC 3339, UTC) that
 *     pprof_merge__serialize() adds.
 * A label pprof's reader would drop (str and num and num_unit all 0) is
 * dropped; drop_frames, keep_frames and is_folded are not carried.
 *
 * Errors: -EINVAL (above: the merge goes on without that profile), or
 * -ENOMEM (part of the profile may be in: give the merge up).  Nothing
 * prints.
 */
#ifndef ISOPROF_PROTO_PPROF_MERGE_H
#define ISOPROF_PROTO_PPROF_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pprof_merge;
struct pprof_profile;

struct pprof_merge *pprof_merge__new(void);
void pprof_merge__free(struct pprof_merge *m);

/* Fold p in; p stays the caller's (free it once this returns). */
int pprof_merge__add(struct pprof_merge *m, const struct pprof_profile *p, char *err,
		     size_t errlen);

/* Profiles merged so far. */
size_t pprof_merge__count(const struct pprof_merge *m);
/* The merged time range in unix nanoseconds; false when no profile had a time. */
bool pprof_merge__range(const struct pprof_merge *m, int64_t *from_ns, int64_t *until_ns);

/*
 * The merged profile, serialized (gzip or raw protobuf) into a malloc()ed
 * *out; the merge comment is added the first time.  -EINVAL when nothing
 * was merged.
 */
int pprof_merge__serialize(struct pprof_merge *m, bool gzip, uint8_t **out, size_t *len);

#endif /* ISOPROF_PROTO_PPROF_MERGE_H */
