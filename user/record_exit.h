/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * record_exit: the exit statuses of `isoprof record`, a contract between
 * the command (user/cmd/cmd_record.c) and the daemon that runs it as a
 * child and turns each status into an HTTP status and error code
 * (user/serve/api.h, api__record_exit_code(); docs/daemon.md).  A status
 * renumbered here is renumbered on both sides.  `isoprof check`
 * (user/cmd/cmd_check.c) exits RECORD_EXIT_NO_BPF when record could not
 * run on this host.
 */
#ifndef ISOPROF_RECORD_EXIT_H
#define ISOPROF_RECORD_EXIT_H

enum record_exit {
	RECORD_EXIT_OK = 0,
	RECORD_EXIT_FAILED = 1,		/* anything else; what could be written was */
	RECORD_EXIT_USAGE = 2,
	RECORD_EXIT_NOT_FOUND = 3,	/* no such process, script or version */
	RECORD_EXIT_NO_SAMPLES = 4,	/* it exists but did not run during the window */
	RECORD_EXIT_NO_BPF = 5,		/* BPF programs or perf events unavailable */
	RECORD_EXIT_NO_INSPECTOR = 6,	/* a V8 profile was asked for, no inspector */
};

/* Each status in a word, as record --json gives it when it has no summary. */
static inline const char *record_exit__outcome(int status)
{
	static const char *const outcome[] = {
		[RECORD_EXIT_OK] = "ok",
		[RECORD_EXIT_FAILED] = "failed",
		[RECORD_EXIT_USAGE] = "usage",
		[RECORD_EXIT_NOT_FOUND] = "not found",
		[RECORD_EXIT_NO_SAMPLES] = "no samples",
		[RECORD_EXIT_NO_BPF] = "no BPF",
		[RECORD_EXIT_NO_INSPECTOR] = "no inspector",
	};

	return status >= 0 && status < (int)(sizeof(outcome) / sizeof(outcome[0])) ? outcome[status]
										    : "failed";
}

#endif /* ISOPROF_RECORD_EXIT_H */
