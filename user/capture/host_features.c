// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* host_features: what the host offers isoprof; see host_features.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/utsname.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "user/capture/host_features.h"
#include "lib/procfs.h"
#include "user/capture/caps.h"
#include "user/capture/cpus.h"
#include "user/capture/gc_probes.h"
#include "user/capture/sampler.h"


#define BIT(cap) (1ull << (cap))

static const struct {
	const char *key, *name, *needed_for;
	bool required;
} descs[HOST_FEATURE_COUNT] = {
	[HOST_FEATURE_PRIVILEGE] = { "privilege", "privilege", "record (required)", true },
	[HOST_FEATURE_BTF] = { "btf", "kernel BTF", "record (required)", true },
	[HOST_FEATURE_BPF_PERF_EVENT] = { "bpf_perf_event", "BPF perf_event programs",
					  "record (required)", true },
	[HOST_FEATURE_LOCKDOWN] = { "lockdown", "kernel lockdown",
				    "record (required): BPF reads of kernel memory", true },
	[HOST_FEATURE_SAMPLER] = { "sampler", "the BPF sampler loads", "record (required)", true },
	[HOST_FEATURE_CPU_CLOCK] = { "cpu_clock", "cpu-clock perf events", "record (required)",
				     true },
	[HOST_FEATURE_UPROBE_MULTI] = { "uprobe_multi", "uprobe_multi links",
					"GC pauses (record)", false },
	[HOST_FEATURE_UPROBE_MULTI_PROCESS] = { "uprobe_multi_process",
						"uprobe_multi pid filter per process",
						"GC probes in the target process only (record)",
						false },
	[HOST_FEATURE_GC_PROBES] = { "gc_probes", "the GC probes load", "GC pauses (record)",
				     false },
	[HOST_FEATURE_KALLSYMS] = { "kallsyms", "/proc/kallsyms addresses",
				    "kernel frame names (record)", false },
	[HOST_FEATURE_READ_PROCESSES] = { "read_processes", "reading other processes",
					  "other users' processes (record, targets)", false },
	[HOST_FEATURE_DROP_CAP_BPF] = { "drop_cap_bpf", "CAP_BPF given up after attach",
					"least privilege while record reads (record)", false },
};

static const struct {
	int cap;
	const char *name;
} cap_names[] = {
	{ CAP_BPF, "CAP_BPF" },
	{ CAP_PERFMON, "CAP_PERFMON" },
	{ CAP_SYS_RESOURCE, "CAP_SYS_RESOURCE" },
	{ CAP_SYS_PTRACE, "CAP_SYS_PTRACE" },
	{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH" },
	{ CAP_CHECKPOINT_RESTORE, "CAP_CHECKPOINT_RESTORE" },
	{ CAP_SYSLOG, "CAP_SYSLOG" },
};

static void set(struct host_feature *f, enum host_feature_state state, const char *fix,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void set(struct host_feature *f, enum host_feature_state state, const char *fix,
		const char *fmt, ...)
{
	va_list ap;

	f->state = state;
	f->fix = state == HOST_FEATURE_YES ? NULL : fix;
	f->value[0] = '\0';
	if (!fmt)
		return;
	va_start(ap, fmt);
	vsnprintf(f->value, sizeof(f->value), fmt, ap);
	va_end(ap);
}

/* The running kernel is older than major.minor (unknown: not older). */
static bool kernel_before(const struct host_features *hf, int major, int minor)
{
	int ma, mi;

	if (sscanf(hf->kernel, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma < major || (ma == major && mi < minor);
}

/* "CAP_BPF CAP_PERFMON": the capabilities of mask, by name. */
static void cap_list(uint64_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(cap_names) / sizeof(cap_names[0]) && n < len; i++)
		if (mask & BIT(cap_names[i].cap))
			n += snprintf(buf + n, len - n, "%s%s", n ? " " : "", cap_names[i].name);
}

static int read_sysctl(const char *path)
{
	long v;

	if (procfs__sysctl_int(path, &v) || v < INT_MIN + 1 || v > INT_MAX)
		return HOST_SYSCTL_UNKNOWN;
	return (int)v;
}

/* "none [integrity] confidentiality": the bracketed one. */
static void read_lockdown(char *out, size_t len)
{
	char buf[128], *open, *close;

	out[0] = '\0';
	if (procfs__read("/sys/kernel/security/lockdown", buf, sizeof(buf)) <= 0)
		return;
	open = strchr(buf, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close && (size_t)(close - open - 1) < len)
		snprintf(out, len, "%.*s", (int)(close - open - 1), open + 1);
}

/*
 * What record's privilege plan (caps.h) asks for: arming needs what the
 * arming phase adds to the discovery set; reading other users' processes
 * needs the discovery set.
 */
static void privilege(struct host_features *hf)
{
	uint64_t read = caps__phase_set(CAPS_DISCOVERY, 0);
	uint64_t arm = caps__phase_set(CAPS_ARMING, CAPS_NEED_BPF) & ~read;
	struct host_feature *f = &hf->f[HOST_FEATURE_PRIVILEGE];
	char have[96], missing[96];
	const char *fix;

	cap_list(hf->caps & arm, have, sizeof(have));
	cap_list(arm & ~hf->caps, missing, sizeof(missing));
	if (!missing[0]) {
		set(f, HOST_FEATURE_YES, NULL, "uid %u: %s", hf->euid, have);
	} else {
		if (kernel_before(hf, 5, 8))
			fix = "needs Linux 5.8 (CAP_BPF, CAP_PERFMON)";
		else if (hf->caps & BIT(CAP_SYS_ADMIN))
			fix = "CAP_SYS_ADMIN is not enough: record arms with CAP_BPF and "
			      "CAP_PERFMON, and keeps no CAP_SYS_ADMIN";
		else
			fix = "run as root (or with CAP_BPF and CAP_PERFMON)";
		set(f, HOST_FEATURE_NO, fix, "uid %u: missing %s", hf->euid, missing);
	}

	f = &hf->f[HOST_FEATURE_READ_PROCESSES];
	cap_list(read & ~hf->caps, missing, sizeof(missing));
	if (!missing[0])
		set(f, HOST_FEATURE_YES, NULL, NULL);
	else
		set(f, HOST_FEATURE_NO, "run as root: only this user's processes are readable",
		    "missing %s", missing);

	/* the plan's own answer: caps.c keeps CAP_BPF through reading on kernels before 6.5 */
	set(&hf->f[HOST_FEATURE_DROP_CAP_BPF],
	    caps__phase_set(CAPS_READING, CAPS_NEED_BPF) & BIT(CAP_BPF) ? HOST_FEATURE_NO
									: HOST_FEATURE_YES,
	    "needs Linux 6.5 (before, record keeps CAP_BPF until it exits)", NULL);
}

int host_features__init(struct host_features *hf)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	struct utsname u;

	memset(hf, 0, sizeof(*hf));
	if (uname(&u))
		return -errno;
	snprintf(hf->kernel, sizeof(hf->kernel), "%s", u.release);
	snprintf(hf->arch, sizeof(hf->arch), "%s", u.machine);
	if (syscall(SYS_capget, &hdr, data))
		return -errno;
	hf->caps = data[0].permitted | (uint64_t)data[1].permitted << 32;
	hf->euid = (unsigned int)geteuid();
	hf->perf_event_paranoid = read_sysctl("/proc/sys/kernel/perf_event_paranoid");
	hf->unprivileged_bpf_disabled = read_sysctl("/proc/sys/kernel/unprivileged_bpf_disabled");
	hf->kptr_restrict = read_sysctl("/proc/sys/kernel/kptr_restrict");
	read_lockdown(hf->lockdown, sizeof(hf->lockdown));
	for (int i = 0; i < HOST_FEATURE_COUNT; i++) {
		hf->f[i].key = descs[i].key;
		hf->f[i].name = descs[i].name;
		hf->f[i].needed_for = descs[i].needed_for;
		hf->f[i].required = descs[i].required;
		hf->f[i].state = HOST_FEATURE_UNKNOWN;
	}
	privilege(hf);
	return 0;
}

static void btf(struct host_features *hf)
{
	static const char path[] = "/sys/kernel/btf/vmlinux";
	struct btf *b = btf__parse(path, NULL);

	/* CO-RE relocations, and bpf_get_current_task_btf(), need the kernel's own BTF */
	if (b)
		set(&hf->f[HOST_FEATURE_BTF], HOST_FEATURE_YES, NULL, "%s", path);
	else
		set(&hf->f[HOST_FEATURE_BTF], HOST_FEATURE_NO,
		    "a kernel built with CONFIG_DEBUG_INFO_BTF=y", "%s: %s", path,
		    strerror(errno));
	btf__free(b);
}

/* The fix of a probe that needs the privilege of arming. */
static const char *privileged_fix(const struct host_features *hf, const char *otherwise)
{
	const struct host_feature *p = &hf->f[HOST_FEATURE_PRIVILEGE];

	return p->state == HOST_FEATURE_YES ? otherwise : p->fix;
}

static void bpf_programs(struct host_features *hf)
{
	struct host_feature *f = &hf->f[HOST_FEATURE_BPF_PERF_EVENT];
	bool confidential = !strcmp(hf->lockdown, "confidentiality");
	const char *fix;
	int r;

	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL);
	if (r == 1)
		set(f, HOST_FEATURE_YES, NULL, NULL);
	else
		set(f, HOST_FEATURE_NO,
		    privileged_fix(hf, "a kernel with BPF perf_event programs (CONFIG_BPF_EVENTS)"),
		    NULL);

	/*
	 * Lockdown "confidentiality" takes bpf_probe_read_kernel() from
	 * tracing programs (LOCKDOWN_BPF_READ_KERNEL): both programs read the
	 * task (BPF_CORE_READ) and the sampler the saved user registers, so
	 * neither loads.  Asked of the kernel when a program can be loaded,
	 * else read from securityfs (not mounted: unknown).
	 */
	f = &hf->f[HOST_FEATURE_LOCKDOWN];
	fix = confidential ? "boot without lockdown=confidentiality (integrity is enough)"
			   : "a kernel whose BPF programs may read kernel memory (5.5+)";
	if (r == 1) {
		r = libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_probe_read_kernel,
					    NULL);
		set(f, r == 1 ? HOST_FEATURE_YES : HOST_FEATURE_NO, fix, "%s%s%s", hf->lockdown,
		    hf->lockdown[0] && r != 1 ? ": " : "",
		    r == 1 ? "" : "bpf_probe_read_kernel refused");
	} else if (hf->lockdown[0]) {
		set(f, confidential ? HOST_FEATURE_NO : HOST_FEATURE_YES, fix, "%s", hf->lockdown);
	} else {
		set(f, HOST_FEATURE_UNKNOWN, privileged_fix(hf, NULL),
		    "not known: securityfs not mounted, and no BPF program loads");
	}
}

/* The fix for the first required feature missing before `upto`, else otherwise. */
static const char *first_fix(const struct host_features *hf, int upto, const char *otherwise)
{
	for (int i = 0; i < upto; i++)
		if (hf->f[i].required && hf->f[i].state == HOST_FEATURE_NO && hf->f[i].fix)
			return hf->f[i].fix;
	return otherwise;
}

static int no_sample(void *ctx, const struct isoprof_sample *s)
{
	(void)ctx;
	(void)s;
	return 0;
}

/* The real programs, loaded as record loads them, then unloaded. */
static void programs(struct host_features *hf)
{
	struct sampler_opts sopts = { .frequency_hz = 1000, .thread_tags = true };
	struct gc_probes_opts gopts = { 0 };
	char err[160] = "";
	struct sampler *s;
	struct gc_probes *g;

	sopts.err_buf = err;
	sopts.err_len = sizeof(err);
	s = sampler__new(&sopts, no_sample, NULL);
	if (!s) {
		set(&hf->f[HOST_FEATURE_SAMPLER], HOST_FEATURE_NO,
		    first_fix(hf, HOST_FEATURE_SAMPLER,
			      "ISOPROF_DEBUG_LIBBPF=1 isoprof check shows the verifier's log"),
		    "%s", err[0] ? err : strerror(errno));
		set(&hf->f[HOST_FEATURE_GC_PROBES], HOST_FEATURE_UNKNOWN,
		    hf->f[HOST_FEATURE_SAMPLER].fix, "not tried: they share the sampler's maps");
		return;
	}
	set(&hf->f[HOST_FEATURE_SAMPLER], HOST_FEATURE_YES, NULL, NULL);

	gopts.targets_fd = sampler__targets_fd(s);
	gopts.thread_tags_fd = sampler__thread_tags_fd(s);
	gopts.err_buf = err;
	gopts.err_len = sizeof(err);
	err[0] = '\0';
	g = gc_probes__new(&gopts);
	if (g)
		set(&hf->f[HOST_FEATURE_GC_PROBES], HOST_FEATURE_YES, NULL, NULL);
	else
		set(&hf->f[HOST_FEATURE_GC_PROBES], HOST_FEATURE_NO,
		    "ISOPROF_DEBUG_LIBBPF=1 isoprof check shows the verifier's log", "%s",
		    err[0] ? err : strerror(errno));
	gc_probes__free(g);
	sampler__free(s);
}

static void cpu_clock(struct host_features *hf)
{
	struct host_feature *f = &hf->f[HOST_FEATURE_CPU_CLOCK];
	struct cpu_set_list cpus;
	int cpu, fd;

	fd = cpus__online(&cpus);
	if (fd) {
		set(f, HOST_FEATURE_UNKNOWN, NULL, "online CPUs: %s", strerror(-fd));
		return;
	}
	cpu = cpus.count ? cpus.ids[0] : 0;
	cpus__free(&cpus);
	fd = sampler__open_cpu_clock(cpu, 1000000);
	if (fd >= 0) {
		close(fd);
		set(f, HOST_FEATURE_YES, NULL, "CPU %d", cpu);
	} else if ((fd == -EACCES || fd == -EPERM) &&
		   hf->f[HOST_FEATURE_PRIVILEGE].state == HOST_FEATURE_YES &&
		   hf->perf_event_paranoid > 2) {
		/*
		 * Debian's kernels (perf_event_paranoid 3, their default) admit
		 * CAP_SYS_ADMIN only, not CAP_PERFMON: measured on 6.1.0-57.
		 * record arms with it there (caps.c); a process given only
		 * CAP_BPF and CAP_PERFMON has not got it.
		 */
		set(f, HOST_FEATURE_NO,
		    "run as root, or give isoprof CAP_SYS_ADMIN too, or sysctl "
		    "kernel.perf_event_paranoid=2: above 2 (Debian's default 3) only "
		    "CAP_SYS_ADMIN opens perf events",
		    "CPU %d: %s without CAP_SYS_ADMIN (perf_event_paranoid %d)", cpu,
		    strerror(-fd), hf->perf_event_paranoid);
	} else if (fd == -EACCES || fd == -EPERM) {
		set(f, HOST_FEATURE_NO, privileged_fix(hf, "run as root (CAP_PERFMON)"),
		    "CPU %d: %s", cpu, strerror(-fd));
	} else {
		set(f, HOST_FEATURE_NO, "a kernel with software perf events (CONFIG_PERF_EVENTS)",
		    "CPU %d: %s", cpu, strerror(-fd));
	}
}

static void uprobe_multi(struct host_features *hf)
{
	struct host_feature *links = &hf->f[HOST_FEATURE_UPROBE_MULTI];
	struct host_feature *process = &hf->f[HOST_FEATURE_UPROBE_MULTI_PROCESS];
	struct gc_probes_kernel k;

	gc_probes__probe_kernel(&k);
	if (!k.links) {
		set(links, HOST_FEATURE_YES, NULL, NULL);
	} else if (k.links == -EOPNOTSUPP) {
		set(links, HOST_FEATURE_NO, "needs Linux 6.6", NULL);
	} else {
		/* the program did not load: no answer from the kernel */
		set(links, HOST_FEATURE_UNKNOWN, privileged_fix(hf, NULL), "not asked: %s",
		    strerror(-k.links));
		set(process, HOST_FEATURE_UNKNOWN, links->fix, NULL);
		return;
	}
	if (!k.process_filter)
		set(process, HOST_FEATURE_YES, NULL, NULL);
	else
		set(process, HOST_FEATURE_NO,
		    k.links ? "needs Linux 6.6"
			    : "needs Linux 6.10, 6.9.5 or 6.6.35 (else every process running "
			      "the target's binary is probed)",
		    NULL);
}

/*
 * Addresses, as record will read them: with CAP_SYSLOG when the caller
 * holds it.  kptr_restrict shows every address as zero to those it hides
 * them from.
 */
static void kallsyms(struct host_features *hf)
{
	struct host_feature *f = &hf->f[HOST_FEATURE_KALLSYMS];
	char buf[4096], *line, *save = NULL;
	unsigned long long addr;
	bool any = false;
	ssize_t n;
	int fd;

	fd = open("/proc/kallsyms", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		set(f, HOST_FEATURE_NO, "a kernel with CONFIG_KALLSYMS", "%s", strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	for (line = strtok_r(buf, "\n", &save); line && !any; line = strtok_r(NULL, "\n", &save))
		any = sscanf(line, "%llx ", &addr) == 1 && addr;
	if (any)
		set(f, HOST_FEATURE_YES, NULL, NULL);
	else if (hf->kptr_restrict >= 2)
		set(f, HOST_FEATURE_NO, "kernel.kptr_restrict=2 hides them even from root: set 1",
		    "all zero (kptr_restrict %d)", hf->kptr_restrict);
	else
		set(f, HOST_FEATURE_NO, "run as root (CAP_SYSLOG)", "all zero");
}

/* libbpf's warnings only on request, as the sampler does */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level;
	return getenv("ISOPROF_DEBUG_LIBBPF") ? vfprintf(stderr, fmt, args) : 0;
}

void host_features__probe(struct host_features *hf)
{
	libbpf_print_fn_t old = libbpf_set_print(libbpf_print);

	btf(hf);
	bpf_programs(hf);
	programs(hf);
	cpu_clock(hf);
	uprobe_multi(hf);
	kallsyms(hf);
	libbpf_set_print(old);
}

bool host_features__record_can_run(const struct host_features *hf)
{
	for (int i = 0; i < HOST_FEATURE_COUNT; i++)
		if (hf->f[i].required && hf->f[i].state != HOST_FEATURE_YES)
			return false;
	return true;
}
