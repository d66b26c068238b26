// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * caps: the privilege plan; see caps.h.  What each capability is for is
 * said once, in caps__phase_set(); docs/security.md repeats it for
 * operators.
 */
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include "lib/fileio.h"
#include "lib/procfs.h"
#include "user/capture/caps.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#define BIT(cap) (1ull << (cap))

static unsigned int caps_needs;
static enum caps_phase caps_now;
static bool caps_started;

/* The running kernel is older than major.minor (unknown: assume older). */
static bool kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return true;
	return ma < major || (ma == major && mi < minor);
}

/*
 * Debian's kernels add a perf_event_paranoid level 3, their default: there
 * perf_event_open() admits CAP_SYS_ADMIN only, CAP_PERFMON is not enough
 * (measured on Debian 12's 6.1.0-57).
 */
static bool perf_events_need_sys_admin(void)
{
	long level;

	return !procfs__sysctl_int("/proc/sys/kernel/perf_event_paranoid", &level) && level > 2;
}

uint64_t caps__phase_set(enum caps_phase phase, unsigned int needs)
{
	uint64_t read =
		/* /proc/PID/{maps,exe,fd,root,environ} of other users' processes */
		BIT(CAP_SYS_PTRACE) |
		/* their files (ELF, perf maps, code logs) in directories not open to root */
		BIT(CAP_DAC_READ_SEARCH) |
		/* /proc/PID/map_files/: the mapped file itself, in any mount namespace (5.9+) */
		BIT(CAP_CHECKPOINT_RESTORE);
	uint64_t set;

	/* kernel addresses in /proc/kallsyms (kptr_restrict, perf_event_paranoid > 1) */
	if (needs & CAPS_NEED_KSYMS)
		read |= BIT(CAP_SYSLOG);
	switch (phase) {
	case CAPS_DISCOVERY:
		return read;
	case CAPS_INSPECTOR:
		/* setns() into a target's network namespace to reach its loopback inspector */
		return read | (needs & CAPS_NEED_NETNS ? BIT(CAP_SYS_ADMIN) : 0);
	case CAPS_ARMING:
		if (!(needs & CAPS_NEED_BPF))
			return read;
		/* load the program and its maps; system-wide cpu-clock perf events */
		set = read | BIT(CAP_BPF) | BIT(CAP_PERFMON);
		/* before 5.11, BPF maps count against RLIMIT_MEMLOCK, which libbpf raises */
		if (kernel_before(5, 11))
			set |= BIT(CAP_SYS_RESOURCE);
		/*
		 * BPF_ENABLE_STATS (--bpf-stats) is checked against CAP_SYS_ADMIN,
		 * and so is perf_event_open() above perf_event_paranoid 2
		 */
		if ((needs & CAPS_NEED_BPF_STATS) || perf_events_need_sys_admin())
			set |= BIT(CAP_SYS_ADMIN);
		return set;
	case CAPS_READING:
		/*
		 * Before 6.5 every bpf() command is checked, even a map update
		 * or lookup on a descriptor isoprof holds (targets removed,
		 * counters read).
		 */
		if ((needs & CAPS_NEED_BPF) && kernel_before(6, 5))
			return read | BIT(CAP_BPF);
		return read;
	case CAPS_NOTHING:
	default:
		return 0;
	}
}

/*
 * Writing outputs for another user (caps.h): permitted in every phase,
 * effective only inside caps__output_step().
 */
static uint64_t output_set(unsigned int needs)
{
	uint64_t set = 0;

	/* setfsuid()/setfsgid() to the owner of the output directory */
	if (needs & CAPS_NEED_OUTPUT_AS)
		set |= BIT(CAP_SETUID) | BIT(CAP_SETGID);
	/* fchown() of a new output to the sudo user */
	if (needs & CAPS_NEED_OUTPUT_GIVE)
		set |= BIT(CAP_CHOWN);
	return set;
}

/* What phase and every phase after it use: the permitted set while in phase. */
static uint64_t keep_from(enum caps_phase phase)
{
	uint64_t keep = output_set(caps_needs);

	for (int p = phase; p < CAPS_NOTHING; p++)
		keep |= caps__phase_set(p, caps_needs);
	return keep;
}

/* Effective: eff, permitted: what it holds of perm. */
static int set_caps(uint64_t eff, uint64_t perm)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++) {
		/* never more than is held: capset() refuses to add to permitted */
		data[i].permitted &= (uint32_t)(perm >> (32 * i));
		data[i].effective = data[i].permitted & (uint32_t)(eff >> (32 * i));
		data[i].inheritable = 0;
	}
	if (syscall(SYS_capset, &hdr, data))
		return -errno;
	return 0;
}

int caps__enter(enum caps_phase phase)
{
	caps_now = phase;
	return set_caps(caps__phase_set(phase, caps_needs), keep_from(phase));
}

int caps__output_step(bool raise)
{
	uint64_t eff = caps__phase_set(caps_now, caps_needs);

	/* no plan started (a library caller, a test): nothing to raise or lower */
	if (!caps_started)
		return 0;
	if (raise)
		eff |= output_set(caps_needs);
	return set_caps(eff, keep_from(caps_now));
}

int caps__drop_needs(unsigned int needs)
{
	caps_needs &= ~needs;
	return caps_started ? caps__enter(caps_now) : 0;
}

/* A uid or gid as sudo writes it: decimal digits only, no sign, no (id_t)-1. */
static bool parse_id(const char *s, unsigned long *id)
{
	char *end;

	if (!s || !*s || strlen(s) > 10 || strspn(s, "0123456789") != strlen(s))
		return false;
	errno = 0;
	*id = strtoul(s, &end, 10);
	return !errno && !*end && *id < 0xffffffffUL;
}

bool caps__sudo_user(uid_t *uid, gid_t *gid)
{
	unsigned long u, g;

	if (getuid() != 0 || !parse_id(getenv("SUDO_UID"), &u) ||
	    !parse_id(getenv("SUDO_GID"), &g) || !u)
		return false;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	return true;
}

void caps__output_policy(struct fileio_policy *p)
{
	memset(p, 0, sizeof(*p));
	if (getuid() != 0)
		return;
	p->for_others = true;
	p->give = caps__sudo_user(&p->give_uid, &p->give_gid);
	p->privilege = caps__output_step;
}

unsigned int caps__output_needs(const struct fileio_policy *p)
{
	/* a directory made for the sudo user is theirs: its files are written as them */
	return (p->for_others || p->give ? CAPS_NEED_OUTPUT_AS : 0) |
	       (p->give ? CAPS_NEED_OUTPUT_GIVE : 0);
}

int caps__become(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;

	/* groups first: only root may change them; the uid last, which ends root */
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		return -errno;
	if (getresuid(&ru, &eu, &su) || getresgid(&rg, &eg, &sg))
		return -errno;
	if (ru != uid || eu != uid || su != uid || rg != gid || eg != gid || sg != gid)
		return -EPERM;
	return 0;
}

static bool holds(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1u << (cap % 32));
}

int caps__start(enum caps_phase first, unsigned int needs)
{
	uint64_t keep;
	int bits;

	caps_needs = needs;
	caps_started = true;
	keep = keep_from(first);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	/* before 4.3 there is no ambient set, so nothing to clear */
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		return -errno;
	if (holds(CAP_SETPCAP)) {
		/* the kernel's last capability ends the loop (EINVAL past it) */
		for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
			if (!(keep & BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
				return -errno;
		}
		/* an execve() as root grants nothing, and ambient raises are refused */
		bits = prctl(PR_GET_SECUREBITS, 0, 0, 0, 0);
		if (bits >= 0 &&
		    prctl(PR_SET_SECUREBITS, (unsigned long)bits | SECBIT_NOROOT | SECBIT_NOROOT_LOCKED |
			  SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
			  0, 0, 0))
			return -errno;
	}
	return caps__enter(first);
}
