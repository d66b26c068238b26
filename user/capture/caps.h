/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * caps: isoprof's privilege plan, in one place (docs/security.md,
 * "Privilege: record and targets").
 *
 * isoprof keeps uid 0 (its outputs belong to root, unless it writes them
 * for another user: below) but holds only the capabilities the step it is
 * in needs.  A command calls caps__start() first, before it reads anything
 * a target controls, then caps__enter() at each step.  Phases go one way:
 * a phase never regains what an earlier one gave up, because each keeps in
 * its permitted set only what it or a later phase (of those the needs
 * announce) uses.
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
 * Outputs for another user (lib/fileio.h, struct fileio_owner).  Run by
 * root, isoprof writes into a directory that another user alone can write
 * (sudo isoprof record -o ~/prof.pb.gz, from one's home) as that user,
 * and under sudo gives what it writes into a directory of root's to the
 * user who ran sudo (SUDO_UID:SUDO_GID).  Two capabilities do it, each
 * only where the output needs it, chosen for what else they allow:
 *   CAPS_NEED_OUTPUT_AS    CAP_SETUID + CAP_SETGID: setfsuid()/setfsgid()
 *                          to the directory's owner around the create,
 *                          fchmod, rename and unlink, so that the kernel
 *                          checks the owner's own permissions: isoprof
 *                          can do there nothing the owner could not.
 *                          CAP_DAC_OVERRIDE + CAP_CHOWN would have done it
 *                          too, as root; CAP_DAC_OVERRIDE writes anything.
 *   CAPS_NEED_OUTPUT_GIVE  CAP_CHOWN: fchown() of the file's descriptor
 *                          before its rename, in a directory root writes
 *                          anyway (the user may not be able to write it,
 *                          so writing as them would not do).  An --out-dir
 *                          made there is given to them the same way, and
 *                          its files are then written as them: both.
 * The fs ids are the calling thread's, and the kernel takes the file
 * capabilities (CAP_DAC_READ_SEARCH, ...) out of the effective set while
 * they are not root's.  Both stay in the permitted set only, in every phase (CAPS_NOTHING
 * included), and are effective only between caps__output_step(true) and
 * caps__output_step(false), which lib/fileio calls around that one step
 * (struct fileio_policy's privilege).  Once the output directory is open
 * and its owner known, caps__drop_needs() gives up those it does not use:
 * a capture into a directory of root's without sudo holds neither from
 * then on.  caps__output_policy() says who isoprof writes for.
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

#include <stdbool.h>
#include <stdint.h>
#include <linux/capability.h>

/* Capabilities newer than some C libraries' headers know (Linux 5.8, 5.9). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif
#ifndef CAP_CHECKPOINT_RESTORE
#define CAP_CHECKPOINT_RESTORE 40
#endif
#include <sys/types.h>

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
	CAPS_NEED_OUTPUT_AS = 1u << 4,	/* outputs written as another user (above) */
	CAPS_NEED_OUTPUT_GIVE = 1u << 5, /* outputs given to the sudo user (above) */
};

struct fileio_policy;

int caps__start(enum caps_phase first, unsigned int needs);
int caps__enter(enum caps_phase phase);

/*
 * Raise (true) the output capabilities the needs keep, on top of the
 * current phase's, or lower them (false): the current phase's set exactly.
 * The signature of struct fileio_policy's privilege.
 */
int caps__output_step(bool raise);

/* Give up needs (CAPS_NEED_OUTPUT_*) that turned out not to be needed. */
int caps__drop_needs(unsigned int needs);

/*
 * Run by root through sudo: the invoking user, from SUDO_UID and SUDO_GID
 * (both set, strict decimal numbers, the uid not 0).  Anyone else's
 * environment names nobody: false.
 */
bool caps__sudo_user(uid_t *uid, gid_t *gid);

/*
 * Who isoprof writes outputs for, by how it was run: run by root, for a
 * directory's owner (for_others) and, under sudo, for the sudo user
 * (give); never for anyone when the real uid is not 0 (a capability
 * granted to another user's isoprof must not write into a third's
 * directory).  privilege is caps__output_step.
 */
void caps__output_policy(struct fileio_policy *p);

/* The CAPS_NEED_OUTPUT_* that writing under p may take. */
unsigned int caps__output_needs(const struct fileio_policy *p);

/*
 * Become uid:gid for good (no supplementary group), as a file tool run
 * through sudo does: it then reads and writes what that user can, and
 * holds no capability.  0 or -errno.
 */
int caps__become(uid_t uid, gid_t gid);

/* The capabilities phase keeps (as effective) under the needs of caps__start(). */
uint64_t caps__phase_set(enum caps_phase phase, unsigned int needs);

#endif
