// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * node_script: a node isolate's version id from its main script's file;
 * see node_script.h.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fileio.h"
#include "lib/procfs.h"
#include "lib/safe_open.h"
#include "lib/utf8.h"
#include "user/attribute/node_script.h"

#define CMDLINE_MAX (64 * 1024)
#define MAX_ARGS 512
#define ENVIRON_MAX (1u << 20)
#define LITERAL_MAX 256

/* ---- the command line ----------------------------------------------------- */

/* Options that run no script file: the version is that of no file. */
static const char *const no_script_opts[] = {
	"-e", "--eval", "-p", "--print", "-i", "--interactive", "-c", "--check",
	"-v", "--version", "-h", "--help", "--v8-options", "--completion-bash", "--run",
};

/*
 * Options that load code besides the script, or run other files with it
 * (node 20 `node --help`; node 22's config and env files can hold them).
 */
static const char *const loader_opts[] = {
	"-r", "--require", "--import", "--loader", "--experimental-loader", "--test",
	"--watch", "--watch-path", "--env-file", "--env-file-if-exists", "--snapshot-blob",
	"--build-snapshot", "--build-snapshot-config", "--experimental-sea-config",
	"--experimental-config-file", "--experimental-default-config-file",
};

/*
 * node's own options that take their value as the next word (node 20).
 * One missed makes its value look like the script, which then is not
 * what the JS frames name: no id, never a wrong one.  Unknown options
 * (V8's) take no next word: node hands them to V8 alone.
 */
static const char *const value_opts[] = {
	"-C", "--conditions", "--inspect-port", "--debug-port", "--title", "--input-type",
	"--max-http-header-size", "--secure-heap", "--secure-heap-min", "--unhandled-rejections",
	"--diagnostic-dir", "--dns-result-order", "--disable-proto",
	"--es-module-specifier-resolution", "--experimental-specifier-resolution",
	"--experimental-default-type", "--experimental-policy", "--policy-integrity",
	"--heapsnapshot-signal", "--heapsnapshot-near-heap-limit", "--icu-data-dir",
	"--openssl-config", "--redirect-warnings", "--report-dir", "--report-directory",
	"--report-filename", "--report-signal", "--tls-cipher-list", "--tls-keylog",
	"--trace-event-categories", "--trace-event-file-pattern", "--use-largepages",
	"--v8-pool-size", "--cpu-prof-dir", "--cpu-prof-name", "--cpu-prof-interval",
	"--heap-prof-dir", "--heap-prof-name", "--heap-prof-interval", "--allow-fs-read",
	"--allow-fs-write", "--inspect-publish-uid", "--test-reporter",
	"--test-reporter-destination", "--test-name-pattern", "--test-concurrency",
	"--test-shard", "--test-timeout", "--localstorage-file", "--stack-trace-limit",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* The option's name (up to '='), '_' as '-' as node reads it, into buf. */
static void option_name(const char *a, size_t len, char *buf, size_t buflen)
{
	size_t i;

	for (i = 0; i < len && i + 1 < buflen && a[i] != '='; i++)
		buf[i] = i >= 2 && a[i] == '_' ? '-' : a[i];
	buf[i] = '\0';
}

static bool in(const char *const *set, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(set[i], name))
			return true;
	return false;
}

int node_script__parse_cmdline(const char *const *argv, size_t argc, const char **script,
			       const char **why)
{
	char name[64];

	*script = NULL;
	*why = NULL;
	for (size_t i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			if (i + 1 < argc) {
				*script = argv[i + 1];
				return 0;
			}
			break;
		}
		if (!strcmp(a, "-")) {
			*why = "it reads its script from standard input";
			return -ENOENT;
		}
		if (a[0] != '-') {
			*script = a;
			return 0;
		}
		option_name(a, strlen(a), name, sizeof(name));
		if (in(no_script_opts, ARRAY_LEN(no_script_opts), name)) {
			*why = "it runs no script file (-e, -p, -i, --check, --run: code from its "
			       "command line or the REPL)";
			return -ENOENT;
		}
		if (in(loader_opts, ARRAY_LEN(loader_opts), name)) {
			*why = "its command line loads other code with the script (--require, "
			       "--import, --loader, --test, --watch, --env-file, a snapshot)";
			return -EXDEV;
		}
		if (!strchr(a, '=') && in(value_opts, ARRAY_LEN(value_opts), name))
			i++;
	}
	*why = "it runs no script file (the REPL)";
	return -ENOENT;
}

int node_script__check_options(const char *opts, size_t len, const char **why)
{
	char name[64];
	size_t i = 0;

	*why = NULL;
	/* words split at blanks, a double-quoted word taken whole (node's own rule) */
	while (i < len) {
		size_t start;

		while (i < len && isspace((unsigned char)opts[i]))
			i++;
		if (i >= len)
			break;
		if (opts[i] == '"')
			i++;
		start = i;
		while (i < len && !isspace((unsigned char)opts[i]) && opts[i] != '"')
			i++;
		if (i > start && opts[start] == '-') {
			option_name(opts + start, i - start, name, sizeof(name));
			if (in(loader_opts, ARRAY_LEN(loader_opts), name) ||
			    in(no_script_opts, ARRAY_LEN(no_script_opts), name)) {
				*why = "NODE_OPTIONS loads other code with the script (--require, "
				       "--import, --loader, ...)";
				return -EXDEV;
			}
		}
		/* the rest of a quoted word: its value, not an option */
		if (i < len && opts[i] == '"') {
			i++;
			while (i < len && opts[i] != '"')
				i += opts[i] == '\\' && i + 1 < len ? 2 : 1;
			if (i < len)
				i++;
		}
	}
	return 0;
}

/* ---- the script's text ---------------------------------------------------- */

/*
 * node's built-in modules (node 20's builtinModules) that load or compile
 * no user code: module (createRequire, Module._load), vm (scripts named by
 * their filename), repl and inspector (scripts compiled on request) are
 * not among them.
 */
static const char *const safe_builtins[] = {
	"assert", "assert/strict", "async_hooks", "buffer", "child_process", "cluster",
	"console", "constants", "crypto", "dgram", "diagnostics_channel", "dns",
	"dns/promises", "domain", "events", "fs", "fs/promises", "http", "http2", "https",
	"net", "os", "path", "path/posix", "path/win32", "perf_hooks", "process", "punycode",
	"querystring", "readline", "readline/promises", "stream", "stream/consumers",
	"stream/promises", "stream/web", "string_decoder", "sys", "timers",
	"timers/promises", "tls", "trace_events", "tty", "url", "util", "util/types", "v8",
	"wasi", "worker_threads", "zlib",
};

/*
 * Words that reach node's loader without require or import, or load a
 * native addon (which may compile what it likes): whole words, anywhere.
 */
static const char *const loader_words[] = {
	"_load", "_compile", "_extensions", "runMain", "internalBinding", "dlopen",
	"getBuiltinModule", "createRequire",
};

static bool ident_byte(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

struct scan {
	const char *s;
	size_t n, i;
};

static void skip_blank(struct scan *sc)
{
	while (sc->i < sc->n && isspace((unsigned char)sc->s[sc->i]))
		sc->i++;
}

static bool word_is(const struct scan *sc, size_t at, size_t len, const char *w)
{
	return strlen(w) == len && !memcmp(sc->s + at, w, len);
}

/* The word at sc->i (ident_byte run; may be empty); sc->i moves past it. */
static size_t take_word(struct scan *sc, size_t *at)
{
	*at = sc->i;
	while (sc->i < sc->n && ident_byte((unsigned char)sc->s[sc->i]))
		sc->i++;
	return sc->i - *at;
}

/*
 * A plain string literal ('...' or "...", no escape, no newline) at
 * sc->i into lit; false when there is none.
 */
static bool take_literal(struct scan *sc, char lit[LITERAL_MAX])
{
	char q;
	size_t k = 0;

	if (sc->i >= sc->n || (sc->s[sc->i] != '\'' && sc->s[sc->i] != '"'))
		return false;
	q = sc->s[sc->i++];
	while (sc->i < sc->n && sc->s[sc->i] != q) {
		char c = sc->s[sc->i++];

		if (c == '\\' || c == '\n' || c == '\r' || k + 1 >= LITERAL_MAX)
			return false;
		lit[k++] = c;
	}
	if (sc->i >= sc->n)
		return false;
	sc->i++;
	lit[k] = '\0';
	return true;
}

static bool safe_builtin(const char *lit)
{
	if (!strncmp(lit, "node:", 5))
		lit += 5;
	return in(safe_builtins, ARRAY_LEN(safe_builtins), lit);
}

static int refuse(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -EXDEV;
}

/* After `require`: ( 'builtin' ) */
static int scan_require(struct scan *sc, char *why, size_t whylen)
{
	char lit[LITERAL_MAX];

	skip_blank(sc);
	if (sc->i >= sc->n || sc->s[sc->i] != '(')
		return refuse(why, whylen, "require is used other than as require('a built-in')");
	sc->i++;
	skip_blank(sc);
	if (!take_literal(sc, lit))
		return refuse(why, whylen, "require() of a name that is no plain string");
	skip_blank(sc);
	if (sc->i >= sc->n || sc->s[sc->i] != ')')
		return refuse(why, whylen, "require() of a name that is no plain string");
	sc->i++;
	if (!safe_builtin(lit))
		return refuse(why, whylen, "requires '%s'", lit);
	return 0;
}

/* After `from`: 'builtin' (or no literal: the word is no clause's). */
static int scan_from(struct scan *sc, char *why, size_t whylen)
{
	char lit[LITERAL_MAX];
	size_t at = sc->i;

	skip_blank(sc);
	if (sc->i >= sc->n || (sc->s[sc->i] != '\'' && sc->s[sc->i] != '"')) {
		sc->i = at;
		return 0;
	}
	if (!take_literal(sc, lit))
		return refuse(why, whylen, "imports a name that is no plain string");
	if (!safe_builtin(lit))
		return refuse(why, whylen, "imports '%s'", lit);
	return 0;
}

/* After `import`: .meta, 'builtin', or a clause (names, {, }, *, ",", as) then from. */
static int scan_import(struct scan *sc, char *why, size_t whylen)
{
	char lit[LITERAL_MAX];
	size_t at, len;

	skip_blank(sc);
	if (sc->i < sc->n && sc->s[sc->i] == '.') {
		sc->i++;
		skip_blank(sc);
		len = take_word(sc, &at);
		if (word_is(sc, at, len, "meta"))
			return 0;
		return refuse(why, whylen, "import is used other than as a static import");
	}
	if (sc->i < sc->n && (sc->s[sc->i] == '\'' || sc->s[sc->i] == '"')) {
		if (!take_literal(sc, lit))
			return refuse(why, whylen, "imports a name that is no plain string");
		return safe_builtin(lit) ? 0 : refuse(why, whylen, "imports '%s'", lit);
	}
	for (;;) {
		skip_blank(sc);
		if (sc->i >= sc->n)
			break;
		if (strchr("{},*", sc->s[sc->i])) {
			sc->i++;
			continue;
		}
		len = take_word(sc, &at);
		if (!len)
			break;
		if (word_is(sc, at, len, "from")) {
			if (scan_from(sc, why, whylen))
				return -EXDEV;
			/* scan_from() took a literal, or left sc->i after the word */
			if (sc->i == at + len)
				break;
			return 0;
		}
		/* another import on the way: this one had no from */
		if (word_is(sc, at, len, "import"))
			break;
	}
	return refuse(why, whylen, "import is used other than as a static import of a built-in");
}

int node_script__self_contained(const char *text, size_t len, char *why, size_t whylen)
{
	struct scan sc = { text, len, 0 };
	size_t at, wl;
	int err;

	if (whylen)
		why[0] = '\0';
	while (sc.i < sc.n) {
		if (!ident_byte((unsigned char)sc.s[sc.i])) {
			sc.i++;
			continue;
		}
		wl = take_word(&sc, &at);
		if (word_is(&sc, at, wl, "require"))
			err = scan_require(&sc, why, whylen);
		else if (word_is(&sc, at, wl, "import"))
			err = scan_import(&sc, why, whylen);
		else if (word_is(&sc, at, wl, "from"))
			err = scan_from(&sc, why, whylen);
		else if (word_is(&sc, at, wl, "binding") && at && sc.s[at - 1] == '.')
			err = refuse(why, whylen, "it uses process.binding");
		else
			err = 0;
		for (size_t k = 0; !err && k < ARRAY_LEN(loader_words); k++)
			if (word_is(&sc, at, wl, loader_words[k]))
				err = refuse(why, whylen, "it uses %s", loader_words[k]);
		if (err)
			return err;
	}
	return 0;
}

/* ---- names and paths ------------------------------------------------------ */

int node_script__name_path(const char *name, char *out, size_t outlen)
{
	size_t k = 0;
	const char *p;

	if (!outlen)
		return -ENAMETOOLONG;
	if (name[0] == '/') {
		if (strlen(name) >= outlen)
			return -ENAMETOOLONG;
		strcpy(out, name);
		return 0;
	}
	/* node's pathToFileURL(): file:///..., '%' '#' '?' and the rest escaped */
	if (strncmp(name, "file:///", 8))
		return -EINVAL;
	for (p = name + 7; *p; p++) {
		int c = (unsigned char)*p;

		if (c == '?' || c == '#')
			return -EINVAL;
		if (c == '%') {
			int hi = isxdigit((unsigned char)p[1]) ? p[1] : -1;
			int lo = hi >= 0 && isxdigit((unsigned char)p[2]) ? p[2] : -1;

			if (lo < 0)
				return -EINVAL;
			hi = isdigit(hi) ? hi - '0' : tolower(hi) - 'a' + 10;
			lo = isdigit(lo) ? lo - '0' : tolower(lo) - 'a' + 10;
			c = hi << 4 | lo;
			/* node's fileURLToPath() refuses an encoded '/' too */
			if (c == '/' || c == 0)
				return -EINVAL;
			p += 2;
		}
		if (k + 1 >= outlen)
			return -ENAMETOOLONG;
		out[k++] = (char)c;
	}
	out[k] = '\0';
	return 0;
}

int node_script__resolve(const char *dir, const char *path, char *out, size_t outlen)
{
	size_t k = 0, dl = strlen(dir), pl = strlen(path);
	char *joined;

	if (path[0] != '/' && dir[0] != '/')
		return -EINVAL;
	if (dl + pl + 2 > PATH_MAX || outlen < 2)
		return -ENAMETOOLONG;
	joined = malloc(dl + pl + 2);
	if (!joined)
		return -ENOMEM;
	if (path[0] == '/') {
		memcpy(joined, path, pl + 1);
	} else {
		memcpy(joined, dir, dl);
		joined[dl] = '/';
		memcpy(joined + dl + 1, path, pl + 1);
	}
	out[k++] = '/';
	for (char *c = joined; *c;) {
		char *e;
		size_t n;

		while (*c == '/')
			c++;
		e = c;
		while (*e && *e != '/')
			e++;
		n = (size_t)(e - c);
		if (n == 1 && c[0] == '.') {
			/* nothing */
		} else if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (k > 1 && out[k - 1] != '/')
				k--;
			if (k > 1)
				k--;
		} else if (n) {
			if (k + (k > 1) + n + 1 > outlen) {
				free(joined);
				return -ENAMETOOLONG;
			}
			if (k > 1)
				out[k++] = '/';
			memcpy(out + k, c, n);
			k += n;
		}
		c = e;
	}
	out[k] = '\0';
	free(joined);
	return 0;
}

/* ---- one process ---------------------------------------------------------- */

/* What the process runs, found once per process. */
struct main_script {
	bool tried;
	char path[PATH_MAX];	/* resolved, as the target sees it; "" with why */
	char why[PATH_MAX + 128];
};

static void set_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* NODE_OPTIONS, if set, from the process's initial environment; 0, or -errno with why. */
static int check_environ(pid_t pid, char *why, size_t whylen)
{
	static const char key[] = "NODE_OPTIONS=";
	const char *w = NULL;
	char path[64], *buf;
	ssize_t n;
	int err = 0;

	buf = malloc(ENVIRON_MAX);
	if (!buf)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = procfs__read(path, buf, ENVIRON_MAX);
	if (n < 0) {
		set_why(why, whylen, "its environment cannot be read to see NODE_OPTIONS (%s)",
			strerror((int)-n));
		err = (int)n;
	} else if ((size_t)n + 1 >= ENVIRON_MAX) {
		set_why(why, whylen, "its environment is too large to see NODE_OPTIONS");
		err = -EFBIG;
	}
	for (ssize_t i = 0; !err && i < n; i += (ssize_t)strlen(buf + i) + 1) {
		if (strncmp(buf + i, key, sizeof(key) - 1))
			continue;
		if (node_script__check_options(buf + i + sizeof(key) - 1,
					       strlen(buf + i + sizeof(key) - 1), &w)) {
			set_why(why, whylen, "%s", w);
			err = -EXDEV;
		}
	}
	/* the rest of the environment is none of isoprof's business */
	explicit_bzero(buf, n > 0 ? (size_t)n : 0);
	free(buf);
	return err;
}

/* The working directory as the target names it (inside its root). */
static int target_cwd(pid_t pid, char *cwd, size_t len, char *why, size_t whylen)
{
	char path[64], root[PATH_MAX];
	ssize_t n, r;
	size_t rl;

	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	n = readlink(path, cwd, len - 1);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	r = readlink(path, root, sizeof(root) - 1);
	if (n <= 0 || r <= 0 || cwd[0] != '/' || root[0] != '/') {
		set_why(why, whylen, "its working directory cannot be read");
		return -ENOENT;
	}
	cwd[n] = '\0';
	root[r] = '\0';
	if (strstr(cwd, " (deleted)")) {
		set_why(why, whylen, "its working directory was removed");
		return -ENOENT;
	}
	/* both are named from our root: a chroot's or container's cwd is under its root */
	rl = (size_t)r;
	if (rl > 1) {
		if (strncmp(cwd, root, rl) || (cwd[rl] != '/' && cwd[rl])) {
			set_why(why, whylen, "its working directory is outside its root");
			return -ENOENT;
		}
		memmove(cwd, cwd + rl, (size_t)n - rl + 1);
		if (!cwd[0])
			strcpy(cwd, "/");
	}
	return 0;
}

static int main_script__find(struct main_script *ms, const struct discover_proc *p)
{
	static char buf[CMDLINE_MAX];
	const char *argv[MAX_ARGS], *script, *w;
	char path[64], cwd[PATH_MAX];
	size_t argc = 0;
	ssize_t len;
	int err;

	ms->tried = true;
	ms->path[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	len = procfs__read(path, buf, sizeof(buf));
	if (len <= 0 || (size_t)len + 1 >= sizeof(buf)) {
		set_why(ms->why, sizeof(ms->why), "its command line cannot be read whole");
		return 0;
	}
	for (ssize_t i = 0; i < len && argc < MAX_ARGS; i += (ssize_t)strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	if (node_script__parse_cmdline(argv, argc, &script, &w)) {
		set_why(ms->why, sizeof(ms->why), "%s", w);
		return 0;
	}
	err = check_environ(p->pid, ms->why, sizeof(ms->why));
	if (err)
		return err == -ENOMEM ? err : 0;
	if (target_cwd(p->pid, cwd, sizeof(cwd), ms->why, sizeof(ms->why)))
		return 0;
	err = node_script__resolve(cwd, script, ms->path, sizeof(ms->path));
	if (err == -ENOMEM)
		return err;
	if (err) {
		ms->path[0] = '\0';
		set_why(ms->why, sizeof(ms->why), "its script's path is too long");
	}
	return 0;
}

/* node's main is the script as named, or with .js, or a directory's index.js. */
static bool is_main(const char *file, const char *main)
{
	size_t ml = strlen(main);

	if (strncmp(file, main, ml))
		return false;
	return !file[ml] || !strcmp(file + ml, ".js") || !strcmp(file + ml, "/index.js");
}

static int node_major(const struct discover_proc *p)
{
	const char *v = p->version;

	if (!v || v[0] != 'v' || !isdigit((unsigned char)v[1]))
		return -1;
	return atoi(v + 1);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/*
 * The version id of script name (file, as the target sees it) of process
 * p: 1 and hex, 0 with why, or -ENOMEM.
 */
static int file_version(const struct discover_proc *p, struct read_budget *budget,
			const char *name, const char *file, char hex[SHA256_HEX_LEN], char *why,
			size_t whylen)
{
	char root[64], sz[32], wy[PATH_MAX + 64];
	struct safe_open_opts o = {
		.owner = SAFE_OPEN_OWNER_TARGET_OR_ROOT,
		.uid = p->uid_known ? p->uid : (uid_t)-1,
		.root = root,
		.max_bytes = NODE_SCRIPT_MAX,
	};
	struct safe_open_info info;
	uint64_t start_ns, tick_ns, size, take;
	uint8_t *text = NULL;
	size_t len = 0;
	int fd, err, ret = 0;

	snprintf(root, sizeof(root), "/proc/%d/root", (int)p->pid);
	err = procfs__start_realtime(p->pid, &start_ns, &tick_ns);
	if (err) {
		set_why(why, whylen, "when node started is unknown (%s)", strerror(-err));
		return 0;
	}
	memset(&info, 0, sizeof(info));
	fd = safe_open__file(file, &o, &info);
	if (fd < 0) {
		if (fd == -EFBIG)
			safe_open__size_str(NODE_SCRIPT_MAX, sz, sizeof(sz));
		set_why(why, whylen, "%s: %s%s", file,
			fd == -EFBIG ? "larger than the cap of " : "",
			fd == -EFBIG ? sz : info.why[0] ? info.why : strerror(-fd));
		return 0;
	}
	/* root's file that the target's user may not read is not the target's to name */
	if (info.st.st_uid == 0 && o.uid != 0 && !(info.st.st_mode & 0004)) {
		set_why(why, whylen, "%s: owned by root and not readable by the target's user",
			file);
		goto out;
	}
	if (procfs__after_start(&info.st.st_ctim, start_ns, tick_ns)) {
		set_why(why, whylen, "%s changed since node started (it runs what it read then)",
			file);
		goto out;
	}
	size = (uint64_t)info.st.st_size;
	take = read_budget__take(budget, size);
	if (take < size) {
		read_budget__give_back(budget, take);
		set_why(why, whylen, "the capture's read budget is spent");
		goto out;
	}
	err = fileio__read_fd(fd, NODE_SCRIPT_MAX, &text, &len);
	if (err == -ENOMEM) {
		ret = err;
		goto out;
	}
	if (err) {
		set_why(why, whylen, "%s: %s", file, strerror(-err));
		goto out;
	}
	/* node 20 keeps a BOM in CommonJS and drops it from an ES module: neither is assumed */
	if (len >= 3 && !memcmp(text, "\xef\xbb\xbf", 3)) {
		set_why(why, whylen, "%s starts with a byte order mark", file);
		goto out;
	}
	if (!utf8__valid(text, len)) {
		set_why(why, whylen, "%s is not UTF-8 (V8 compiles U+FFFD in its place)", file);
		goto out;
	}
	if (node_script__self_contained((const char *)text, len, wy, sizeof(wy))) {
		set_why(why, whylen, "%s may load other scripts: %s (only a single-file "
			"script's version is known without a code log)", file, wy);
		goto out;
	}
	{
		const char *names[1] = { name }, *srcs[1] = { (const char *)text };
		size_t lens[1] = { len };

		err = isolate__version_id(names, srcs, lens, 1, hex);
		if (err) {
			ret = err == -ENOMEM ? err : 0;
			set_why(why, whylen, "%s", strerror(-err));
			goto out;
		}
	}
	ret = 1;
out:
	free(text);
	close(fd);
	return ret;
}

struct node_hit {
	uint64_t isolate;
	bool have;
	char hex[SHA256_HEX_LEN];
	char why[PATH_MAX + 512];
};

/* One isolate's version or why: 0 or -ENOMEM. */
static int isolate_version(const struct discover_proc *p, struct read_budget *budget,
			   struct main_script *ms, const struct isolate_info *info,
			   struct node_hit *h)
{
	char file[PATH_MAX];
	const char *name;
	int err;

	if (!info->nr_scripts) {
		set_why(h->why, sizeof(h->why), "its JS frames name no script");
		return 0;
	}
	if (info->nr_scripts > 1) {
		set_why(h->why, sizeof(h->why), "its JS frames name %zu scripts (%s, %s%s): only "
			"a single-file script's version is known without a code log",
			info->nr_scripts, info->scripts[0], info->scripts[1],
			info->nr_scripts > 2 ? ", ..." : "");
		return 0;
	}
	name = info->scripts[0];
	if (node_script__name_path(name, file, sizeof(file))) {
		set_why(h->why, sizeof(h->why), "its JS frames name %s, no file", name);
		return 0;
	}
	if (!ms->tried) {
		err = main_script__find(ms, p);
		if (err)
			return err;
	}
	if (!ms->path[0]) {
		set_why(h->why, sizeof(h->why), "%s", ms->why);
		return 0;
	}
	if (!is_main(file, ms->path)) {
		set_why(h->why, sizeof(h->why), "its JS frames name %s, not the script node runs "
			"(%s)", name, ms->path);
		return 0;
	}
	/* node 22 may compile a .js ES module as CommonJS first: another script to log */
	if (name[0] != '/' && !ends_with(file, ".mjs") && node_major(p) >= 22) {
		set_why(h->why, sizeof(h->why), "%s: an ES module in a .js file, which node %s "
			"may compile twice", file, p->version);
		return 0;
	}
	err = file_version(p, budget, name, file, h->hex, h->why, sizeof(h->why));
	if (err < 0)
		return err;
	h->have = err == 1;
	return 0;
}

int node_script__version_isolates(struct isolate_registry *reg, const struct discover_proc *p,
				  struct read_budget *budget)
{
	const struct isolate_info *const *all;
	struct main_script *ms;
	struct node_hit *hits;
	size_t nr, nhits = 0;
	int err = 0, given = 0;

	if (!reg || !p || p->runtime != DISCOVER_NODE)
		return 0;
	all = isolate_registry__list(reg, &nr);
	if (!all)
		return -ENOMEM;
	hits = calloc(nr ? nr : 1, sizeof(*hits));
	ms = calloc(1, sizeof(*ms));
	if (!hits || !ms) {
		free(hits);
		free(ms);
		return -ENOMEM;
	}
	for (size_t i = 0; !err && i < nr; i++) {
		if (all[i]->pid != p->pid || all[i]->version_from == ISOLATE_VERSION_FROM_CODE_LOG)
			continue;
		hits[nhits].isolate = all[i]->isolate;
		err = isolate_version(p, budget, ms, all[i], &hits[nhits]);
		nhits++;
	}
	for (size_t i = 0; !err && i < nhits; i++) {
		err = isolate_registry__set_files_version(reg, p->pid, hits[i].isolate,
							  hits[i].have ? hits[i].hex : NULL,
							  hits[i].have ? NULL : hits[i].why);
		given += hits[i].have;
	}
	free(hits);
	free(ms);
	return err ? err : given;
}
