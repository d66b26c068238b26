/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8dbg: the postmortem metadata some V8 builds carry as `v8dbg_*` data
 * symbols (node does; workerd does not), read from the binary, as a check
 * of a calibrated layout (symbolize/v8layout.h): each value the symbols
 * give must equal the field calibration learnt.  They do not suffice on
 * their own (no ScopeInfo name slot, no start position), so calibration
 * still runs; where they exist, it is held to them.
 *
 * Errors: negative errno (-ENOENT: the binary has no v8dbg_ symbols).
 * Nothing prints.
 */
#ifndef ISOPROF_SYMBOLIZE_V8DBG_H
#define ISOPROF_SYMBOLIZE_V8DBG_H

#include <stddef.h>

#include "symbolize/v8layout.h"

struct v8dbg_check {
	size_t compared;	/* v8dbg_ values found and compared */
	size_t agreed;
	char disagree[256];	/* "fn_sfi 24 != 16, ..." for those that differ */
};

/* Compare l with the v8dbg_ symbols of the ELF file at path. */
int v8dbg__check(const char *path, const struct v8_layout *l, struct v8dbg_check *out);

#endif /* ISOPROF_SYMBOLIZE_V8DBG_H */
