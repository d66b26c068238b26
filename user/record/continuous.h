/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * continuous: the loop of `isoprof continuous`.  A capture runs window
 * after window (user/record/capture.h); each window's profiles go to a
 * directory (user/report/window_files.h) and/or to a profile store
 * (user/push/push.h), and after each window the run's own metrics are
 * rewritten in Prometheus's text format.
 */
#ifndef ISOPROF_RECORD_CONTINUOUS_H
#define ISOPROF_RECORD_CONTINUOUS_H

#include <stdbool.h>

#include "user/push/push.h"
#include "user/record/capture.h"

struct continuous_opts {
	struct record_env *rec;		/* window_ms set; rec->sink is the loop's own */
	const char *out_dir;		/* NULL: no files */
	long retention_min;		/* with out_dir: 0 no age bound */
	long out_dir_max_mb;		/* with out_dir: 0 no size bound */
	const char *metrics;		/* NULL: no metrics file */
	const char *host;		/* the host label */
	long max_windows;		/* 0: until a signal */
	const struct push_opts *push;	/* NULL or no url: no push */
	bool verbose;			/* a line per window */
};

/*
 * Run until a signal or max_windows: the exit status (user/record_exit.h);
 * RECORD_EXIT_USAGE when the directory or the pusher cannot be set up
 * (said on stderr).  Install capture__catch_signals() first.
 */
int continuous__run(const struct continuous_opts *o);

#endif /* ISOPROF_RECORD_CONTINUOUS_H */
