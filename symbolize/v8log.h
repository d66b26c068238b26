/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * v8log: the per-isolate code log V8 writes with
 * --log-code --log-source-code --logfile-per-isolate --logfile=DIR/v8.log,
 * read incrementally while the process runs.
 *
 * Files are named "isolate-0x<isolate address>-<pid>-<basename>", e.g.
 * isolate-0x55d5c8a0e000-12345-v8.log.  One event per line, fields split
 * on ',' (docs/formats.md).  Used here:
 *   v8-version,<major>,<minor>,<build>,<patch>[,<embedder>],<candidate>
 *   code-creation,<tag>,<kind>,<time>,0x<start>,<size>,<name>[,0x<sfi>,<marker>]
 *   code-move,0x<from>,0x<to>           (also bytecode arrays moved by GC)
 *   code-delete,0x<start>               (legacy)
 *   script-source,<id>,<name>,<source>
 *   script-details,<id>,<name>,<line offset>,<column offset>,<sourceMappingURL>
 * and everything else (sfi-move, code-source-info, tick, new/delete...)
 * is skipped.
 *
 * Escapes: V8 writes ',' as \x2C, '\' as \\, newline as \n, other
 * non-printable bytes as \xNN and UTF-16 code units above 0xff as \uXXXX.
 * Decoded text is UTF-8: \uXXXX pairs of surrogates become one code point.
 * \xNN at or above 0x80 in a String (script names, sources, the script part
 * of a code name) is a Latin-1 code unit, U+00NN, and is written as UTF-8,
 * so a decoded source is byte for byte the UTF-8 file that was loaded and
 * its SHA-256 is that of the file.  V8 writes the debug name of a function
 * raw (node 20 / V8 11.3: raw UTF-8 and even raw commas), so in code names
 * raw bytes are kept and a run of \xNN that is valid UTF-8 is kept as those
 * bytes.  Raw commas in a code name are recovered: the name is whatever
 * lies between the size and a trailing ",0x<sfi>,<marker>".
 *
 * Code ranges: the newest code-creation covering an address wins (as in
 * perfmap.h; both keep a code_index.h); code-move moves an entry (it becomes
 * the newest), code-delete and a creation at the same start drop one.
 * Code hidden entirely by newer code is dead (live code objects never
 * overlap) and stays dropped when the newer code moves away.  (No
 * code-move was seen from node 20 / V8 11.3 run with --perf-basic-prof,
 * which turns off code-space compaction; other setups do move code.)
 *
 * Reading follows perfmap.h (lib/line_tail.h): only complete lines appended
 * since the last update are read, a rewritten or replaced file starts
 * over, malformed lines are counted and skipped, never fatal.
 *
 * Ownership and lifetime: the log owns every string and struct it hands
 * out; they stay valid until the next v8log__update(), v8log__parse_buf()
 * or v8log__free().  Not thread-safe.  Constructors return NULL and set
 * errno; actions return a count or 0, or a negative errno.
 */
#ifndef ISOPROF_SYMBOLIZE_V8LOG_H
#define ISOPROF_SYMBOLIZE_V8LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"
#include "lib/sha256.h"
#include "symbolize/v8inline.h"
#include "symbolize/v8name.h"

/*
 * A script-source line holds a whole script: bundles of tens of MB exist.
 * Longer lines are skipped (counted as malformed), never buffered.
 */
#define V8LOG_LINE_MAX (64 * 1024 * 1024)

struct v8log;

struct v8log_script {
	int id;			/* V8's script id, unique within the isolate */
	const char *name;	/* "" when the log gave none; V8 writes "<unknown>" for unnamed */
	const char *source;	/* decoded source, NUL-terminated; NULL without script-source */
	size_t source_len;	/* bytes, without the NUL (a source may contain NULs) */
	uint8_t sha256[SHA256_DIGEST_LEN];  /* of source[0..source_len); zero without source */
	char sha256_hex[SHA256_HEX_LEN];    /* "" without source */
	const char *source_mapping_url;	    /* from script-details; NULL when none */
	int line_offset;	/* from script-details; 0 otherwise */
	int column_offset;
};

struct v8log_sym {
	uint64_t start;		/* where the code is now (after moves) */
	uint64_t size;
	int kind;		/* V8's CodeKind number: version-specific, do not interpret */
	uint64_t sfi;		/* SharedFunctionInfo address; 0 when the line had none */
	const char *raw;	/* decoded name field: no tag, no marker */
	struct v8name name;	/* tag, marker and raw split by v8name__parse_log() */
};

struct v8log_stats {
	size_t code;		/* live code entries (v8log__count()) */
	size_t segments;	/* pieces in the address index */
	size_t scripts;
	uint64_t lines;		/* lines read since the (re)start */
	uint64_t events;	/* lines that were used */
	size_t malformed;
	size_t first_malformed_line;	/* 1-based; 0 when none */
	size_t unmatched_moves;	/* code-move/delete of an address never created */
	uint64_t offset;	/* bytes of the file consumed */
	uint64_t bytes_read;	/* bytes read from the file over all updates */
	size_t restarts;
	size_t mem_bytes;	/* heap held, script sources included */
};

/*
 * A log for path (read by the first v8log__update()); the isolate and pid
 * come from the file name when it has the per-isolate form (0 otherwise).
 * path NULL gives a log fed only by v8log__parse_buf().  The file is
 * opened through safe_open.h with open (NULL: any owner; a max_bytes of 0
 * means SAFE_OPEN_CODE_LOG_MAX): a target's log is owned by the target
 * (SAFE_OPEN_OWNER_TARGET).  Reads are charged to budget (NULL: none).
 * errno ENOMEM.
 */
struct v8log *v8log__new(const char *path, const struct safe_open_opts *open,
			 struct read_budget *budget);
void v8log__free(struct v8log *log);

/*
 * Read the lines appended since the last call.  Returns the number of
 * events used, or -ENOENT (file gone; what was read stays), -EINVAL (no
 * path, not a regular file), -ENOMEM, or the errno of open/read.
 */
int v8log__update(struct v8log *log);

/* Why the last v8log__update() failed ("symlink refused"); "" */
const char *v8log__why(const struct v8log *log);

/* Use the lines of buf[0..len) (a last line without newline included). */
int v8log__parse_buf(struct v8log *log, const char *buf, size_t len);

uint64_t v8log__isolate(const struct v8log *log);
pid_t v8log__pid(const struct v8log *log);
/* "11.3.244.8-node.38"; "" before the v8-version line. */
const char *v8log__version(const struct v8log *log);

size_t v8log__script_count(const struct v8log *log);
/* The i-th script in id order, or NULL. */
const struct v8log_script *v8log__script_at(const struct v8log *log, size_t i);
/* The script with that id, or NULL. */
const struct v8log_script *v8log__script(const struct v8log *log, int id);

/* The newest code covering addr: 0, -ENOENT, -ENOMEM. */
int v8log__lookup(struct v8log *log, uint64_t addr, struct v8log_sym *out);

/*
 * The JS functions inlined at pc offset off of the optimized code starting
 * at start (code-source-info lines), innermost first, without the code's
 * own function; *outer gets the position in that outermost function.
 * Returns how many (0 when not inlined there or unknown).  Strings stay
 * valid until the next call or update.  See v8inline.h.
 */
int v8log__inline_stack(struct v8log *log, uint64_t start, uint64_t off,
			struct v8inline_frame *frames, size_t max, struct v8inline_frame *outer);

size_t v8log__count(const struct v8log *log);
size_t v8log__malformed(const struct v8log *log);
size_t v8log__first_malformed_line(const struct v8log *log);
void v8log__stats(const struct v8log *log, struct v8log_stats *st);

/*
 * Split a per-isolate log file name (a path is fine: only its last
 * component is read): 0, or -EINVAL when it is not
 * "isolate-0x<hex>-<pid>-X" (at most 16 hex digits, pid 1..INT_MAX, X not
 * empty).  The one parser of these names: discovery, the registry and
 * v8log__find() all use it.
 */
int v8log__parse_filename(const char *name, uint64_t *isolate, pid_t *pid);

/*
 * Paths ("dir/name", one slash) of the per-isolate logs in dir that belong
 * to pid (pid <= 0: any) by name, are regular files (not symlinks) and
 * whose owner passes opts' owner policy (NULL: any owner), sorted, in a
 * NULL-terminated array to release with v8log__find_free().  dir is
 * opened with safe_open__dir() (resolved inside a /proc/N/root prefix).
 * NULL with errno (ENOENT, EACCES, ELOOP, ENOMEM...) on failure; no match
 * gives an empty array.
 */
char **v8log__find(const char *dir, pid_t pid, const struct safe_open_opts *opts);
void v8log__find_free(char **paths);

/*
 * Decode V8's escapes in a String field (script name, source: see above)
 * in[0..n) into out, which needs n bytes (no escape grows).  Returns the
 * decoded length.  Shared with v8log_scan.h, which must decode alike.
 */
size_t v8log__unescape_string(const char *in, size_t n, char *out);

#endif /* ISOPROF_SYMBOLIZE_V8LOG_H */
