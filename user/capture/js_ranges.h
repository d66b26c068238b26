/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * js_ranges: where in a V8 runtime's address space a JS frame's pc can be,
 * for the sampler's walk (isoprof_target.js_start/js_end): the JIT code
 * (executable memory backed by no file: V8 reserves its code range up
 * front, and /proc/PID/maps may call it [heap]) and V8's embedded builtins
 * (the interpreter's trampoline among them), a range of the binary's file
 * offsets that each executable mapping of the binary places at an address
 * (node maps a second copy of its builtins).
 *
 * Errors: negative errno; -ENOENT when no range was found (then nothing is
 * set: the sampler walks every frame).  Nothing prints.
 */
#ifndef ISOPROF_CAPTURE_JS_RANGES_H
#define ISOPROF_CAPTURE_JS_RANGES_H

#include <stdint.h>
#include <sys/types.h>

#include "bpf/isoprof.h"

/*
 * Fill t->js_start/js_end for pid, whose binary is exe (as /proc/PID/maps
 * names it) with its builtins at file offsets [builtins_offset,
 * builtins_offset + builtins_size).  More ranges than the sampler holds are
 * merged into the envelope of the last ones (a wider range only walks
 * more).
 */
int js_ranges__find(pid_t pid, const char *exe, uint64_t builtins_offset, uint64_t builtins_size,
		    struct isoprof_target *t);

#endif /* ISOPROF_CAPTURE_JS_RANGES_H */
