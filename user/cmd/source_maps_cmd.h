/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * source_maps_cmd: --source-maps DIR on a profile read back by convert, top,
 * flame and crosscheck (docs/source-maps.md).
 */
#ifndef ISOPROF_CMD_SOURCE_MAPS_CMD_H
#define ISOPROF_CMD_SOURCE_MAPS_CMD_H

#include <stdbool.h>

struct profile_file;
struct source_maps;

/*
 * pf (parsed, any format) with its JS functions named through the maps in
 * dir (remap_pprof.h), as pprof: pf is replaced by the renamed profile
 * (pf->prof set).  Prints the maps' lines, and errors once with path.
 * 0, or a negative errno (pf released).
 */
int source_maps_cmd__apply(struct profile_file *pf, const char *dir, const char *path);

struct pprof_profile;

/* The same for a profile already read: *p replaced (freed) on success. */
int source_maps_cmd__apply_profile(struct pprof_profile **p, const char *dir, const char *path);

/* Are some of p's JS functions named from a source map (remap_pprof.h's test)? */
bool source_maps_cmd__is_mapped(const struct pprof_profile *p);

#endif /* ISOPROF_CMD_SOURCE_MAPS_CMD_H */
