/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A V8 runtime made of files, for the unit tests of the middle of the
 * pipeline (frames, attribution, cpu_profile): no root, no BPF, and the
 * real symbolizer names every frame as it would in a capture.
 *
 *   - process FAKE_PID, in a /proc of its own under a temp dir: the
 *     executable mappings of this test binary (copied from /proc/self/maps)
 *     and an anonymous JIT region, NSpid FAKE_NSPID, and the perf map V8
 *     would write at its root (/tmp/perf-FAKE_NSPID.map);
 *   - a kallsyms file with a few kernel functions;
 *   - native functions of this binary whose ELF symbols are named as V8,
 *     cppgc and an embedder name theirs (asm labels), so that frames of
 *     "V8 C++" resolve through the ELF symbol table;
 *   - a V8 code log for an isolate (fake_runtime__code_log()), e.g.
 *     FAKE_INLINE_LOG, in which fib's optimized code inlined inner();
 *   - a capture made of these (struct fake_capture): samples in a
 *     sample_store, an isolate registry, frames and their attribution.
 *
 * Samples are built with fake_sample() from the addresses of functions:
 * the leaf exact, callers as return addresses (one byte in), as BPF
 * reports them.  Include this header in one test file; call
 * fake_runtime__setup() and fake_runtime__teardown() as the group's.
 */
#ifndef ISOPROF_TESTS_FAKE_RUNTIME_H
#define ISOPROF_TESTS_FAKE_RUNTIME_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpf/isoprof.h"
#include "symbolize/symbolizer.h"
#include "user/attribute/attribution.h"
#include "user/attribute/frames.h"
#include "user/attribute/isolates.h"
#include "user/capture/sample_store.h"

#define FAKE_PID 4343
#define FAKE_NSPID 7

/* JIT code, named by the perf map (and the code log, for FAKE_JIT_FIB). */
#define FAKE_JIT_FIB 0x7f0000001000ull		/* JS:*fib /srv/w.js:3:13, 0x100 bytes */
#define FAKE_JIT_PUSH 0x7f0000002000ull		/* Builtin:ArrayPrototypePush */
#define FAKE_JIT_DEOPT 0x7f0000003000ull	/* Builtin:DeoptimizationEntry_Eager */
#define FAKE_JIT_ANON 0x7f0000004000ull		/* JS:~ /srv/w.js:9:1 */
#define FAKE_JIT_UNNAMED 0x7f0000050000ull	/* JIT memory no perf map line covers */

/* Kernel functions, from the kallsyms file. */
#define FAKE_K_SYSCALL 0xffffffff81000100ull	/* do_syscall_64 */
#define FAKE_K_EP_POLL 0xffffffff81000200ull	/* ep_poll: on the way to sleep */
#define FAKE_K_FAULT 0xffffffff81000300ull	/* asm_exc_page_fault */
#define FAKE_K_UNNAMED 0xffffffff82000000ull	/* past _etext */

/*
 * This binary's functions, named as the ELF symbols of V8 and a runtime
 * (distinct bodies, so that no two are folded into one).
 */
static volatile int fake_sink;

#define FAKE_NATIVE(fn, symbol, k)                                                     \
	void fn(void) __asm__(symbol);                                                 \
	__attribute__((noinline, used)) void fn(void)                                  \
	{                                                                              \
		fake_sink = k;                                                         \
		fake_sink += k;                                                        \
	}

FAKE_NATIVE(fake_v8_collect_garbage, "_ZN2v88internal4Heap14CollectGarbageEv", 1)
FAKE_NATIVE(fake_v8_concurrent_marking, "_ZN2v88internal17ConcurrentMarking3RunEv", 2)
FAKE_NATIVE(fake_cppgc_marker, "_ZN5cppgc8internal6Marker4MarkEv", 3)
FAKE_NATIVE(fake_v8_runtime, "_ZN2v88internal7Runtime11GetPropertyEv", 4)
FAKE_NATIVE(fake_v8_deoptimizer, "_ZN2v88internal11Deoptimizer19ComputeOutputFramesEv", 5)
FAKE_NATIVE(fake_v8_builtin, "Builtins_InterpreterEntryTrampoline", 6)
FAKE_NATIVE(fake_runtime_loop, "fake_runtime_event_loop", 7)

#define FN(f) ((uint64_t)(uintptr_t)&(f))

static char fake_tmpdir[] = "/tmp/test_fake_runtime.XXXXXX";
static char fake_root[256], fake_kallsyms[256];

static void fake_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		abort();
	}
}

static void fake_path(char *buf, size_t size, const char *fmt, const char *a)
{
	int n = snprintf(buf, size, fmt, a);

	if (n < 0 || (size_t)n >= size)
		abort();
}

/* The executable mappings of this binary, as /proc/FAKE_PID/maps, and JIT memory. */
static int fake_write_maps(const char *dir, const char *exe)
{
	char path[512], *line = NULL;
	size_t cap = 0;
	FILE *in, *out;
	int found = 0;

	in = fopen("/proc/self/maps", "r");
	fake_path(path, sizeof(path), "%s/maps", dir);
	out = fopen(path, "w");
	if (!in || !out)
		return -1;
	while (getline(&line, &cap, in) > 0) {
		char perms[8], *p = strchr(line, '/');

		if (sscanf(line, "%*x-%*x %7s", perms) != 1 || !strchr(perms, 'x') || !p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		if (strcmp(p, exe))
			continue;
		*strchr(p, '\0') = '\n';
		fputs(line, out);
		found++;
	}
	fputs("7f0000000000-7f0000100000 r-xp 00000000 00:00 0 \n", out);
	free(line);
	fclose(in);
	return fclose(out) || !found ? -1 : 0;
}

static int fake_runtime__setup(void **state)
{
	char dir[512], exe[PATH_MAX], path[600], status[256];
	ssize_t n;

	(void)state;
	if (!mkdtemp(fake_tmpdir))
		return -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	fake_path(fake_root, sizeof(fake_root), "%s/proc", fake_tmpdir);
	if (snprintf(dir, sizeof(dir), "%s/%d", fake_root, FAKE_PID) >= (int)sizeof(dir))
		return -1;
	if (mkdir(fake_root, 0755) || mkdir(dir, 0755) || fake_write_maps(dir, exe))
		return -1;
	fake_path(path, sizeof(path), "%s/exe", dir);
	if (symlink(exe, path))
		return -1;
	fake_path(path, sizeof(path), "%s/status", dir);
	/* FAKE_PID, FAKE_NSPID; run by us: its perf map is ours */
	snprintf(status, sizeof(status), "Name:\tnode\nTgid:\t4343\nNSpid:\t4343\t7\n"
		  "Uid:\t%u\t%u\t%u\t%u\n", (unsigned)geteuid(), (unsigned)geteuid(),
		  (unsigned)geteuid(), (unsigned)geteuid());
	fake_write(path, status);
	/* It shares our mount namespace: its mapped files are opened by their paths. */
	fake_path(path, sizeof(path), "%s/ns", dir);
	if (mkdir(path, 0755))
		return -1;
	fake_path(path, sizeof(path), "%s/ns/mnt", dir);
	if (symlink("/proc/self/ns/mnt", path))
		return -1;
	fake_path(path, sizeof(path), "%s/self", fake_root);
	if (mkdir(path, 0755))
		return -1;
	fake_path(path, sizeof(path), "%s/self/ns", fake_root);
	if (mkdir(path, 0755))
		return -1;
	fake_path(path, sizeof(path), "%s/self/ns/mnt", fake_root);
	if (symlink("/proc/self/ns/mnt", path))
		return -1;
	fake_path(path, sizeof(path), "%s/root", dir);
	if (mkdir(path, 0755))
		return -1;
	fake_path(path, sizeof(path), "%s/root/tmp", dir);
	if (mkdir(path, 0755))
		return -1;
	fake_path(path, sizeof(path), "%s/root/tmp/perf-7.map", dir);
	fake_write(path, "7f0000001000 100 JS:*fib /srv/w.js:3:13\n"
			 "7f0000002000 40 Builtin:ArrayPrototypePush\n"
			 "7f0000003000 40 Builtin:DeoptimizationEntry_Eager\n"
			 "7f0000004000 40 JS:~ /srv/w.js:9:1\n");
	fake_path(fake_kallsyms, sizeof(fake_kallsyms), "%s/kallsyms", fake_tmpdir);
	fake_write(fake_kallsyms, "ffffffff81000000 T _stext\n"
				  "ffffffff81000100 T do_syscall_64\n"
				  "ffffffff81000200 T ep_poll\n"
				  "ffffffff81000300 T asm_exc_page_fault\n"
				  "ffffffff81001000 T _etext\n");
	return 0;
}

static int fake_runtime__teardown(void **state)
{
	char cmd[128];

	(void)state;
	fake_path(cmd, sizeof(cmd), "rm -rf '%s'", fake_tmpdir);
	return system(cmd) ? -1 : 0;
}

/* A symbolizer over the fake /proc and kallsyms, tracking FAKE_PID. */
static struct symbolizer *fake_runtime__symbolizer(void)
{
	struct symbolizer_opts opts = { .proc_root = fake_root, .kallsyms_path = fake_kallsyms };
	struct symbolizer *s = symbolizer__new(&opts);

	if (!s || symbolizer__track(s, FAKE_PID))
		abort();
	return s;
}

/*
 * The code log V8 writes for isolate (named for FAKE_NSPID), with text;
 * its path in path.
 */
static void fake_runtime__code_log(uint64_t isolate, const char *text, char *path, size_t size)
{
	int n = snprintf(path, size, "%s/isolate-0x%llx-%d-v8.log", fake_tmpdir,
			 (unsigned long long)isolate, FAKE_NSPID);

	if (n < 0 || (size_t)n >= size)
		abort();
	fake_write(path, text);
}

/*
 * Script 8 of the isolate, /srv/w.js; fib's optimized code (FAKE_JIT_FIB)
 * inlined inner() from pc offset 32 to 63: inner's body at source position
 * 29 ("y * 2", line 2 column 10), called at 65 ("inner(n)", line 5 column
 * 10).
 */
#define FAKE_INLINE_LOG                                                                     \
	"v8-version,12,4,254,21,-node.33,0\n"                                              \
	"script-source,8,/srv/w.js,function inner(y) {\\n  return y * 2;\\n}\\n"            \
	"function fib(n) {\\n  return inner(n) + 1;\\n}\\n\n"                                \
	"code-creation,JS,3,1,0x7f0000009000,100,inner /srv/w.js:1:15,0xa2,~\n"             \
	"code-creation,JS,13,5,0x7f0000001000,256,fib /srv/w.js:4:13,0xa1,*\n"              \
	"code-source-info,0x7f0000001000,8,0,81,C0O0C32O29I0C64O65,F0O65,S0xa2\n"

/*
 * A sample of FAKE_PID (pid may be changed after) on the stack of
 * function addresses kernel[0..nk) then user[0..nu), leaf first.
 */
static void fake_sample(struct isoprof_sample *s, uint64_t time_ns, uint64_t isolate,
			uint32_t tid, const char *comm, const uint64_t *kernel, size_t nk,
			const uint64_t *user, size_t nu)
{
	memset(s, 0, sizeof(*s));
	s->time_ns = time_ns;
	s->isolate = isolate;
	s->pid = FAKE_PID;
	s->tid = tid;
	strncpy(s->comm, comm, sizeof(s->comm) - 1);
	s->kernel_stack_bytes = (int32_t)(nk * sizeof(uint64_t));
	s->user_stack_bytes = (int32_t)(nu * sizeof(uint64_t));
	for (size_t i = 0; i < nk; i++)
		s->kernel_stack[i] = kernel[i] + (i > 0);
	for (size_t i = 0; i < nu; i++)
		s->user_stack[i] = user[i] + (i > 0 || nk > 0);
}

/* What a capture of the fake runtime holds, stage by stage. */
struct fake_capture {
	struct sample_store *store;
	struct isolate_registry *reg;
	struct symbolizer *sym;
	struct frame_table *ft;
	struct attribution a;
};

/* An empty store and registry; the caller adds samples and logs. */
static inline void fake_capture__begin(struct fake_capture *c)
{
	memset(c, 0, sizeof(*c));
	c->store = sample_store__new();
	c->reg = isolate_registry__new();
	if (!c->store || !c->reg)
		abort();
}

/* Frames and attribution of what was added. */
static inline void fake_capture__finish(struct fake_capture *c)
{
	c->sym = fake_runtime__symbolizer();
	c->ft = frame_table__build(c->store, c->sym, c->reg);
	if (!c->ft || attribution__build(&c->a, c->store, c->ft, c->reg))
		abort();
}

static inline void fake_capture__release(struct fake_capture *c)
{
	attribution__release(&c->a);
	frame_table__free(c->ft);
	symbolizer__free(c->sym);
	isolate_registry__free(c->reg);
	sample_store__free(c->store);
}

#endif /* ISOPROF_TESTS_FAKE_RUNTIME_H */
