/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * calibration: one calibration run of a V8 runtime binary, start to end
 * (`isoprof calibrate`, and record's first use of an unknown binary).
 *
 * Runs the binary (workerd or node, told apart by its symbols) with V8's
 * perf map on isoprof's bundled workload (user/v8/calibration/calib.js),
 * as nobody when run as root, in a temporary directory of its own; samples
 * it with the BPF sampler in raw mode (each JS frame's JSFunction word);
 * names the frames from the perf map; learns the layout from both
 * (user/v8/calibrate.h) while the process still runs; then stops it and
 * removes everything it made (its perf map included).  A binary with V8's
 * postmortem symbols (node's v8dbg_*) holds the result to them: a field
 * that disagrees fails the run (symbolize/v8dbg.h).
 *
 * Errors: negative errno with a sentence in err (which step, why).  Nothing
 * prints.
 */
#ifndef ISOPROF_V8_CALIBRATION_H
#define ISOPROF_V8_CALIBRATION_H

#include <stddef.h>

#include "symbolize/v8layout.h"
#include "user/v8/calibrate.h"

#define CALIBRATION_DEFAULT_MS 3000

struct calibration_opts {
	const char *binary;	/* the runtime to run */
	unsigned int run_ms;	/* how long the workload runs while sampled; 0: default */
	char *err;		/* why it failed */
	size_t err_len;
};

struct calibration_result {
	struct v8_layout layout;	/* build_id and v8_version (the runtime's version) set */
	struct calib_report report;
	struct calib_code_report code;	/* code objects: why[0] when learnt */
	struct calib_deopt_report deopt; /* deoptimization data: why[0] when learnt */
	char runtime[16];		/* "workerd", "node" */
	size_t samples;			/* samples of the runtime taken */
	size_t js_frames;		/* JS frames among them */
	size_t named_frames;		/* JS frames the perf map named */
	size_t v8dbg_compared;		/* fields the binary's v8dbg_ symbols give (node) */
	size_t v8dbg_agreed;		/* ... equal to what was learnt */
};

int calibration__run(const struct calibration_opts *o, struct calibration_result *out);

#endif /* ISOPROF_V8_CALIBRATION_H */
