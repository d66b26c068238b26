// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * calibration: one calibration run; see calibration.h.
 *
 * The workload is pulled in with .incbin, like the web page's files: it
 * stays a plain script that node runs by hand while it is being written,
 * and the Makefile lists it as a prerequisite of this object.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#include "user/v8/calibration.h"
#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "lib/procmem.h"
#include "lib/safe_open.h"
#include "lib/monotime.h"
#include "symbolize/elf_symtab.h"
#include "symbolize/symbolizer.h"
#include "symbolize/v8dbg.h"
#include "symbolize/v8name.h"
#include "user/capture/discover.h"
#include "user/capture/sampler.h"

__asm__(".pushsection .rodata\n"
	".globl isoprof_calib_js\n"
	".hidden isoprof_calib_js\n"
	".balign 16\nisoprof_calib_js:\n"
	".incbin \"user/v8/calibration/calib.js\"\n"
	".globl isoprof_calib_js_end\n"
	".hidden isoprof_calib_js_end\nisoprof_calib_js_end:\n"
	".byte 0\n"
	".popsection\n");
extern const unsigned char isoprof_calib_js[], isoprof_calib_js_end[];

#define NOBODY 65534
#define READY_TIMEOUT_MS 20000
#define MAX_FRAMES 400000	/* JS frames kept from the run */
#define CODE_LOG "v8.log"	/* the run's code log, in its directory */
#define CODE_LOG_MAX (256u << 20)

static const char workerd_entry[] =
	"\nexport default {\n"
	"  async fetch(request) {\n"
	"    const ms = Number(new URL(request.url).searchParams.get(\"ms\")) || 3000;\n"
	"    return new Response(String(calibRun(ms)));\n"
	"  },\n"
	"};\n";

/* node keeps running, idle, until it is stopped: the heap is read after. */
static const char node_entry[] =
	"\ncalibRun(Number(process.argv[2]) || 3000);\n"
	"setInterval(() => {}, 1 << 30);\n";

static const char workerd_config[] =
	"using Workerd = import \"/workerd/workerd.capnp\";\n"
	"const config :Workerd.Config = (\n"
	"  services = [ (name = \"isoprof-calibration\", worker = .calib) ],\n"
	"  sockets = [ (name = \"http\", address = \"127.0.0.1:%u\", http = (),\n"
	"              service = \"isoprof-calibration\") ],\n"
	"  v8Flags = [ \"--perf-basic-prof\", \"--log-code\", \"--no-logfile-per-isolate\",\n"
	"              \"--logfile=%s/" CODE_LOG "\" ],\n"
	");\n"
	"const calib :Workerd.Worker = (\n"
	"  modules = [ (name = \"calib.js\", esModule = embed \"calib.js\") ],\n"
	"  compatibilityDate = \"2024-01-01\",\n"
	");\n";

struct frame_seen {
	uint64_t pc;		/* a return address minus one, or the leaf pc */
	uint64_t function;	/* the tagged JSFunction word */
	uint32_t snapshot;	/* 1 + index into run.snapshots; 0: none */
};

/* A JSFunction's bytes as read when its sample arrived (calibrate.h). */
struct snapshot {
	uint64_t function;
	uint8_t bytes[CALIB_FUNCTION_BYTES];
};

struct run {
	const struct calibration_opts *o;
	struct calibration_result *out;
	char dir[64];
	pid_t pid;
	struct frame_seen *frames;
	size_t nframes, frames_cap;
	bool frames_full;
	struct snapshot *snapshots;
	size_t nsnapshots, snapshots_cap;
	struct index_table by_function;	/* snapshots by function word */
};

static bool snapshot_is(const void *ctx, uint32_t index, const void *key)
{
	const struct run *r = ctx;

	return r->snapshots[index].function == *(const uint64_t *)key;
}

/* The function's bytes, read now unless read before: 1 + index, or 0. */
static uint32_t snapshot_of(struct run *r, uint64_t function)
{
	uint32_t h = hash__fold32(hash__word(HASH_SEED, function));
	struct snapshot *sn;
	size_t slot;
	long i;

	if (index_table__reserve(&r->by_function))
		return 0;
	i = index_table__lookup(&r->by_function, h, snapshot_is, r, &function, &slot);
	if (i >= 0)
		return (uint32_t)i + 1;
	if (array_grow(&r->snapshots, &r->snapshots_cap, r->nsnapshots + 1))
		return 0;
	sn = &r->snapshots[r->nsnapshots];
	sn->function = function;
	if (procmem__read(r->pid, function & ~3ull, sn->bytes, sizeof(sn->bytes)))
		return 0;
	index_table__set(&r->by_function, slot, h, (uint32_t)r->nsnapshots);
	return (uint32_t)++r->nsnapshots;
}

static int fail(const struct calibration_opts *o, int err, const char *fmt, ...)
{
	va_list ap;

	if (o->err && o->err_len) {
		va_start(ap, fmt);
		vsnprintf(o->err, o->err_len, fmt, ap);
		va_end(ap);
	}
	return err;
}

/* workerd or node, by the symbols only each has (as discover tells them). */
static int runtime_of(const char *binary, enum discover_runtime *rt)
{
	struct elf_symbol_query q[2] = {
		{ .name = "_ZN7workerd", .prefix = true },
		{ .name = "_ZN4node", .prefix = true },
	};
	struct elf_symtab *st = elf_symtab__open(binary, NULL);
	int err;

	if (!st)
		return -errno;
	err = elf_symtab__find_symbols(st, q, 2);
	elf_symtab__free(st);
	if (err)
		return err;
	if (!q[0].err)
		*rt = DISCOVER_WORKERD;
	else if (!q[1].err)
		*rt = DISCOVER_NODE;
	else
		return -ENOEXEC;
	return 0;
}

static int write_file(const char *dir, const char *name, const char *a, size_t alen,
		      const char *b, size_t blen)
{
	char path[128];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wx");
	if (!f)
		return -errno;
	if (fwrite(a, 1, alen, f) != alen || (blen && fwrite(b, 1, blen, f) != blen))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

/* A loopback port nothing listens on now. */
static int free_port(unsigned int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || getsockname(fd, (struct sockaddr *)&a, &len))
		err = -errno;
	close(fd);
	*port = ntohs(a.sin_port);
	return err;
}

/* The child: as nobody when root (a runtime needs no privilege to be calibrated). */
static void exec_runtime(const char *dir, char *const argv[], pid_t parent)
{
	int log, bin;
	char path[128];

	setpgid(0, 0);
	snprintf(path, sizeof(path), "%s/runtime.log", dir);
	log = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (log >= 0) {
		dup2(log, STDOUT_FILENO);
		dup2(log, STDERR_FILENO);
	}
	/* opened as ourselves: /proc/PID/exe of another user's process is not nobody's to open */
	bin = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (bin < 0 || chdir(dir))
		_exit(126);
	if (geteuid() == 0 &&
	    (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY)))
		_exit(126);
	/* after setuid(), which clears it: the run ends with isoprof, even if isoprof crashes */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(126);
	fexecve(bin, argv, environ);
	_exit(127);
}

static int connect_port(unsigned int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int on_sample(void *ctx, const struct isoprof_sample *s)
{
	struct run *r = ctx;
	size_t nuser = s->user_stack_bytes > 0 ? (size_t)s->user_stack_bytes / 8 : 0;

	if (s->pid != (uint32_t)r->pid)
		return 0;
	r->out->samples++;
	for (size_t i = 0; i < s->user_walked && i < ISOPROF_MAX_JS_WALK && i < nuser; i++) {
		bool ret = i > 0 || s->kernel_stack_bytes > 0;

		if (!(s->user_function[i] & 1))
			continue;
		r->out->js_frames++;
		if (r->nframes == MAX_FRAMES) {
			r->frames_full = true;
			continue;
		}
		if (array_grow(&r->frames, &r->frames_cap, r->nframes + 1))
			return -ENOMEM;
		r->frames[r->nframes].pc = s->user_stack[i] - (ret ? 1 : 0);
		r->frames[r->nframes].function = s->user_function[i];
		r->frames[r->nframes++].snapshot = snapshot_of(r, s->user_function[i]);
	}
	return 0;
}

/* Sample the runtime with a raw layout while its workload runs. */
static int sample(struct run *r, enum discover_runtime rt, unsigned int port)
{
	const struct calibration_opts *o = r->o;
	struct isoprof_v8_layout raw = { .flags = ISOPROF_V8_RAW };
	struct isoprof_target target = { .v8_layout = 1 };
	struct sampler_opts so = { .frequency_hz = 997 };
	char why[256] = "", req[128];
	struct sampler *s;
	uint64_t end;
	int fd = -1, err;

	so.err_buf = why;
	so.err_len = sizeof(why);
	s = sampler__new(&so, on_sample, r);
	if (!s)
		return fail(o, -errno, "BPF sampler: %s", why);
	err = sampler__set_v8_layout(s, 0, &raw);
	if (!err)
		err = sampler__add_target(s, r->pid, &target);
	if (!err) {
		err = sampler__start(s);
		if (err > 0)
			err = 0;
	}
	if (err) {
		sampler__free(s);
		return fail(o, err, "BPF sampler: %s", strerror(-err));
	}
	if (rt == DISCOVER_WORKERD) {
		/* one request runs the workload for run_ms: the answer is not needed */
		fd = connect_port(port);
		snprintf(req, sizeof(req),
			 "GET /?ms=%u HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
			 o->run_ms);
		if (fd < 0 || fileio__write_all(fd, req, strlen(req))) {
			err = fail(o, fd < 0 ? fd : -EIO, "could not send the workload's request");
			goto out;
		}
	}
	end = monotime_ns() + (uint64_t)o->run_ms * 1000000ull;
	while (monotime_ns() < end && !err) {
		err = sampler__poll(s, 100);
		if (err > 0)
			err = 0;
	}
	if (!err)
		err = sampler__stop(s);
	if (err > 0)
		err = 0;
	if (err)
		fail(o, err, "sampling: %s", strerror(-err));
out:
	if (fd >= 0)
		close(fd);
	sampler__free(s);
	return err;
}

static int cmp_frame(const void *a, const void *b)
{
	const struct frame_seen *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return x->function < y->function ? -1 : x->function > y->function;
}

/* Name the frames from the perf map and learn the layout from them. */
static int learn(struct run *r)
{
	const struct calibration_opts *o = r->o;
	struct symbolizer_opts so = { 0 };
	struct symbolizer *sym = symbolizer__new(&so);
	struct calib_observation *obs = NULL;
	size_t nobs = 0, cap = 0;
	int err;

	if (!sym)
		return fail(o, -ENOMEM, "out of memory");
	err = symbolizer__track(sym, r->pid);
	if (err) {
		symbolizer__free(sym);
		return fail(o, err, "pid %d: cannot read its mappings: %s", r->pid, strerror(-err));
	}
	/* one observation per distinct (pc, function): the perf map is asked once each */
	qsort(r->frames, r->nframes, sizeof(*r->frames), cmp_frame);
	for (size_t i = 0; i < r->nframes; i++) {
		struct sym_frame f;

		if (i && !cmp_frame(&r->frames[i - 1], &r->frames[i]))
			continue;
		if (symbolizer__resolve_user(sym, r->pid, r->frames[i].pc, &f) ||
		    f.kind != SYM_FRAME_JIT || f.jit_kind != V8NAME_JS)
			continue;
		r->out->named_frames++;
		if (array_grow(&obs, &cap, nobs + 1)) {
			err = -ENOMEM;
			break;
		}
		obs[nobs].function = r->frames[i].function;
		obs[nobs].has_bytes = r->frames[i].snapshot != 0;
		if (obs[nobs].has_bytes)
			memcpy(obs[nobs].function_bytes, r->snapshots[r->frames[i].snapshot - 1].bytes,
			       CALIB_FUNCTION_BYTES);
		obs[nobs].name = f.name && strcmp(f.name, "(anonymous)") ? f.name : "";
		obs[nobs].script = f.file;
		obs[nobs].line = f.line;
		obs[nobs].column = f.column;
		nobs++;
	}
	if (!err && !nobs)
		err = fail(o, -ENODATA,
			   "no sampled JS frame was named by the perf map (%zu samples, %zu JS frames)",
			   r->out->samples, r->out->js_frames);
	else if (!err) {
		if (getenv("ISOPROF_DEBUG_CALIBRATION"))
			for (size_t i = 0; i < nobs && i < 20; i++)
				fprintf(stderr, "obs %lx %s %s:%u:%u\n", (unsigned long)obs[i].function,
					obs[i].name, obs[i].script ? obs[i].script : "-", obs[i].line,
					obs[i].column);
		err = calibrate__learn(r->pid, obs, nobs, &r->out->layout, &r->out->report);
		if (err == -ENODATA)
			fail(o, err, "%s", r->out->report.why);
	}
	free(obs);
	symbolizer__free(sym);
	return err;
}

/*
 * The code log, made here and given to the runtime: it runs as nobody in a
 * directory that stays root's.
 */
static int make_code_log(const char *dir)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/" CODE_LOG, dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (geteuid() == 0 && fchown(fd, NOBODY, NOBODY)) {
		int err = -errno;

		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * Where optimized code keeps what it inlined, from the run's code log and
 * its code objects (calibrate.h).  A failure costs inlined frames only:
 * the names learnt stand, and the result says why.
 */
static void learn_code(struct run *r)
{
	static const struct safe_open_opts log_opts = {
		.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT,
		.uid = NOBODY,
		.max_bytes = CODE_LOG_MAX,
	};
	struct calib_code_report *rep = &r->out->code;
	struct calib_code *codes = NULL;
	char path[128];
	uint8_t *text = NULL;
	size_t len = 0, n = 0;
	int fd, err;

	snprintf(path, sizeof(path), "%s/" CODE_LOG, r->dir);
	fd = safe_open__file(path, &log_opts, NULL);
	if (fd < 0) {
		snprintf(rep->why, sizeof(rep->why), "the run's code log: %s", strerror(-fd));
		return;
	}
	err = fileio__read_fd(fd, CODE_LOG_MAX, &text, &len);
	close(fd);
	if (!err)
		err = calibrate__parse_code_log((const char *)text, len, &codes, &n);
	free(text);
	if (err) {
		snprintf(rep->why, sizeof(rep->why), "the run's code log: %s", strerror(-err));
		return;
	}
	if (calibrate__learn_code(r->pid, codes, n, &r->out->layout, rep) == -ENOMEM)
		snprintf(rep->why, sizeof(rep->why), "out of memory");
	else if (r->out->layout.code_alignment &&
		 calibrate__learn_deopt(r->pid, codes, n, &r->out->layout, &r->out->deopt) ==
			 -ENOMEM)
		snprintf(r->out->deopt.why, sizeof(r->out->deopt.why), "out of memory");
	if (!r->out->layout.code_alignment)
		snprintf(r->out->deopt.why, sizeof(r->out->deopt.why), "code objects not learnt");
	calibrate__free_codes(codes, n);
}

static void stop_child(struct run *r)
{
	char map[64];
	int status;

	if (r->pid <= 0)
		return;
	/* the child and its group: it may not have made its group yet */
	kill(r->pid, SIGTERM);
	kill(-r->pid, SIGTERM);
	for (int i = 0; i < 50; i++) {
		if (waitpid(r->pid, &status, WNOHANG) == r->pid)
			goto reaped;
		usleep(20000);
	}
	kill(r->pid, SIGKILL);
	kill(-r->pid, SIGKILL);
	waitpid(r->pid, &status, 0);
reaped:
	/* the perf map V8 wrote for the run is the run's to remove */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", r->pid);
	unlink(map);
}

static void remove_dir(const char *dir)
{
	static const char *const names[] = { "calib.js", "config.capnp", "runtime.log", CODE_LOG };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* The end of what the runtime printed, on one line, for an error message. */
static void log_tail(const char *dir, char *buf, size_t len)
{
	char path[128];
	ssize_t n = 0;
	off_t size;
	int fd;

	buf[0] = 0;
	snprintf(path, sizeof(path), "%s/runtime.log", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	size = lseek(fd, 0, SEEK_END);
	if (size > 0 && lseek(fd, size > (off_t)len - 1 ? size - (off_t)len + 1 : 0, SEEK_SET) >= 0)
		n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	for (char *p = buf; *p; p++)
		if (*p == '\n' || (unsigned char)*p < 0x20)
			*p = ' ';
}

/* Wait until the runtime listens (workerd) or has started (node). */
static int wait_ready(struct run *r, enum discover_runtime rt, unsigned int port)
{
	uint64_t end = monotime_ns() + READY_TIMEOUT_MS * 1000000ull;
	int status;

	while (monotime_ns() < end) {
		if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
			char out[256];

			r->pid = 0;
			log_tail(r->dir, out, sizeof(out));
			return fail(r->o, -ECHILD, "%s exited before it was ready%s%s", r->o->binary,
				    out[0] ? ": " : "", out);
		}
		if (rt == DISCOVER_NODE) {
			char map[64];

			/* V8 opens its perf map as it starts: node has exec'd and runs */
			snprintf(map, sizeof(map), "/tmp/perf-%d.map", r->pid);
			if (!access(map, F_OK))
				return 0;
		} else {
			int fd = connect_port(port);

			if (fd >= 0) {
				close(fd);
				return 0;
			}
		}
		usleep(50000);
	}
	return fail(r->o, -ETIMEDOUT, "%s did not start its workload within %d s",
		    r->o->binary, READY_TIMEOUT_MS / 1000);
}

struct builtins_span {
	uint64_t lo, hi;	/* file offsets */
};

static int note_builtin(void *ctx, const struct elf_named_sym *sym)
{
	struct builtins_span *b = ctx;

	if (strncmp(sym->name, "Builtins_", 9) || sym->file_offset == UINT64_MAX || !sym->size)
		return 0;
	if (sym->file_offset < b->lo)
		b->lo = sym->file_offset;
	if (sym->file_offset + sym->size > b->hi)
		b->hi = sym->file_offset + sym->size;
	return 0;
}

/*
 * Where the binary keeps V8's embedded builtins (Builtins_* symbols), as
 * file offsets: with the JIT code, all a JS frame's pc can be in
 * (user/capture/js_ranges.h).  Left 0, 0 when the binary names none.
 */
static void find_builtins(const char *binary, struct v8_layout *l)
{
	struct builtins_span b = { UINT64_MAX, 0 };
	struct elf_symtab *st = elf_symtab__open(binary, NULL);

	if (!st)
		return;
	if (!elf_symtab__each_symbol(st, note_builtin, &b) && b.hi > b.lo && b.hi <= UINT32_MAX) {
		l->builtins_offset = (uint32_t)b.lo;
		l->builtins_size = (uint32_t)(b.hi - b.lo);
	}
	elf_symtab__free(st);
}

/* The build-id and version record will see for this process. */
static int identify(struct run *r)
{
	struct discover_list *list = NULL;
	int err = discover__scan(&r->pid, 1, 0, &list);

	if (!err && (!list->nr || !list->procs[0].build_id[0]))
		err = -ENOEXEC;
	if (err) {
		discover__free(list);
		return fail(r->o, err, "pid %d: not recognized as a V8 runtime with a build-id",
			    r->pid);
	}
	snprintf(r->out->layout.build_id, sizeof(r->out->layout.build_id), "%s",
		 list->procs[0].build_id);
	snprintf(r->out->layout.v8_version, sizeof(r->out->layout.v8_version), "%s",
		 list->procs[0].version);
	snprintf(r->out->runtime, sizeof(r->out->runtime), "%s",
		 discover__runtime_name(list->procs[0].runtime));
	discover__free(list);
	return 0;
}

int calibration__run(const struct calibration_opts *o, struct calibration_result *out)
{
	struct calibration_opts opts = *o;
	struct run r = { .o = &opts, .out = out };
	const char *tmp = getenv("TMPDIR");
	enum discover_runtime rt = DISCOVER_V8;
	unsigned int port = 0;
	pid_t parent;
	char config[1024], ms[16];
	size_t js_len = (size_t)(isoprof_calib_js_end - isoprof_calib_js);
	int err;

	memset(out, 0, sizeof(*out));
	if (!opts.run_ms)
		opts.run_ms = CALIBRATION_DEFAULT_MS;
	err = runtime_of(opts.binary, &rt);
	if (err)
		return fail(o, err, "%s: %s", opts.binary,
			    err == -ENOEXEC ? "neither workerd nor node (no workerd:: or node:: symbols)" :
					      strerror(-err));
	snprintf(r.dir, sizeof(r.dir), "%s/isoprof-calibrate.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(r.dir))
		return fail(o, -errno, "cannot make a temporary directory: %s", strerror(errno));
	/* the runtime runs as nobody and must read its files */
	chmod(r.dir, 0755);
	if (rt == DISCOVER_WORKERD) {
		err = free_port(&port);
		if (!err)
			err = write_file(r.dir, "calib.js", (const char *)isoprof_calib_js, js_len,
					 workerd_entry, sizeof(workerd_entry) - 1);
		snprintf(config, sizeof(config), workerd_config, port, r.dir);
		if (!err)
			err = write_file(r.dir, "config.capnp", config, strlen(config), NULL, 0);
	} else {
		err = write_file(r.dir, "calib.js", (const char *)isoprof_calib_js, js_len, node_entry,
				 sizeof(node_entry) - 1);
	}
	if (!err)
		err = make_code_log(r.dir);
	if (err) {
		fail(o, err, "cannot write the calibration workload: %s", strerror(-err));
		goto out;
	}
	snprintf(ms, sizeof(ms), "%u", opts.run_ms + 2000);
	parent = getpid();
	r.pid = fork();
	if (r.pid < 0) {
		err = fail(o, -errno, "fork: %s", strerror(errno));
		goto out;
	}
	if (!r.pid) {
		char *wargv[] = { (char *)opts.binary, "serve", "config.capnp", NULL };
		char logfile[128];
		char *nargv[] = { (char *)opts.binary, "--perf-basic-prof", "--log-code",
				  "--no-logfile-per-isolate", logfile, "calib.js", ms, NULL };

		snprintf(logfile, sizeof(logfile), "--logfile=%s/" CODE_LOG, r.dir);

		exec_runtime(r.dir, rt == DISCOVER_WORKERD ? wargv : nargv, parent);
	}
	err = wait_ready(&r, rt, port);
	if (!err)
		err = identify(&r);
	if (!err)
		err = sample(&r, rt, port);
	if (!err)
		err = learn(&r);
	if (!err)
		learn_code(&r);
	if (!err) {
		struct v8dbg_check vc;

		find_builtins(opts.binary, &out->layout);
		/* the run's binary: what was exec'd, whatever the path's name */
		if (!v8dbg__check(opts.binary, &out->layout, &vc)) {
			out->v8dbg_compared = vc.compared;
			out->v8dbg_agreed = vc.agreed;
			if (vc.agreed != vc.compared)
				err = fail(o, -ENODATA, "the layout learnt disagrees with the binary's "
					   "v8dbg_ symbols: %s", vc.disagree);
		}
	}
out:
	stop_child(&r);
	remove_dir(r.dir);
	free(r.frames);
	free(r.snapshots);
	index_table__release(&r.by_function);
	return err;
}
