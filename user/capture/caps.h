/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * caps: isoprof's privilege plan, in one place (docs/security.md,
 * "Privilege: record and targets").
 *
 * isoprof keeps uid 0 (its outputs belong to root) but holds only the
 * capabilities the step it is in needs.  A command calls caps__start()
 * first, before it reads anything a target controls, then caps__enter()
 * at each step.  Phases go one way: a phase never regains what an earlier
 * one gave up, because each keeps in its permitted set only what it or a
 * later phase (of those the needs announce) uses.
 *
 *   CAPS_DISCOVERY   record, targets: /proc and the targets' files
 *   CAPS_INSPECTOR   record --v8/--type heap: inspector sockets, created in
 *                    a target's network namespace (CAPS_NEED_NETNS)
 *   CAPS_ARMING      record, targets --sample-ms: load and attach the BPF
 *                    sampler
 *   CAPS_READING     after attach, to the end: only what reading other
 *                    processes needs; never CAP_DAC_OVERRIDE or
 *                    CAP_SYS_ADMIN
 *   CAPS_NOTHING     top, convert, flame, crosscheck: files the operator
 *                    names, no capability at all
 *
 * caps__start() also sets NO_NEW_PRIVS, clears the ambient set, drops from
 * the bounding set every capability no phase to come uses, and locks
 * SECBIT_NOROOT (when it holds CAP_SETPCAP, i.e. run as root): nothing
 * isoprof might execute, root-owned or set-uid, gets back what it gave up.
 *
 * A capability isoprof was started without stays missing (the operation
 * that needs it fails and says so); dropping is never an error for a
 * process that holds less.  Capabilities are per thread: call these from
 * the main thread before creating others.  Returns 0 or -errno.
 */
#ifndef ISOPROF_CAPTURE_CAPS_H
#define ISOPROF_CAPTURE_CAPS_H

#include <stdint.h>

enum caps_phase {
	CAPS_DISCOVERY,
	CAPS_INSPECTOR,
	CAPS_ARMING,
	CAPS_READING,
	CAPS_NOTHING,
};

/* What a command's later phases will need; caps__start() keeps only these. */
enum caps_need {
	CAPS_NEED_BPF = 1u << 0,	/* it will arm the BPF sampler */
	CAPS_NEED_BPF_STATS = 1u << 1,	/* ... with kernel BPF run-time stats */
	CAPS_NEED_NETNS = 1u << 2,	/* inspector sockets in another network namespace */
	CAPS_NEED_KSYMS = 1u << 3,	/* kernel symbol addresses (/proc/kallsyms) */
};

int caps__start(enum caps_phase first, unsigned int needs);
int caps__enter(enum caps_phase phase);

/* The capabilities phase keeps (as effective) under the needs of caps__start(). */
uint64_t caps__phase_set(enum caps_phase phase, unsigned int needs);

#endif
