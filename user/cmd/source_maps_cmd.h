/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * source_maps_cmd: what record, convert, top and flame say about source
 * maps, and --source-maps DIR on a profile read back (docs/source-maps.md).
 */
#ifndef ISOPROF_CMD_SOURCE_MAPS_CMD_H
#define ISOPROF_CMD_SOURCE_MAPS_CMD_H

struct profile_file;
struct source_maps;

/*
 * One line per script with a map used ("isoprof: source map: ...") and a
 * note per script whose candidates had a problem, on stderr.
 */
void source_maps_cmd__print(const struct source_maps *sms);

/*
 * pf (parsed, any format) with its JS functions named through the maps in
 * dir (remap_pprof.h), as pprof: pf is replaced by the renamed profile
 * (pf->prof set).  Prints the maps' lines, and errors once with path.
 * 0, or a negative errno (pf released).
 */
int source_maps_cmd__apply(struct profile_file *pf, const char *dir, const char *path);

#endif /* ISOPROF_CMD_SOURCE_MAPS_CMD_H */
