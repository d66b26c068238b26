/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * source_maps: each script's source map, found and checked once, and JS
 * functions mapped through it to the names, files and lines their authors
 * wrote (docs/source-maps.md).
 *
 * A script is what V8 names it (perf map, code log, heap): workerd's module
 * name ("worker.js"), node's path ("/srv/app/dist/index.js" or a file://
 * URL).  Its text, when it can be had, comes from the isolate's code log
 * (script-source), else workerd's config (the module's embedded file, read
 * through services.h under the target's rules), else, for a path, the file
 * inside the target's root (lib/safe_open.h: regular, never blocking, the
 * target's user or root, capped, charged to the capture's budget).
 *
 * Candidates, in order; the first that parses and matches the script's
 * text (sourcemap__check_script()) is used:
 *   1. the script's own sourceMappingURL comment (or V8's script-details)
 *      as a data: URL: the inline map;
 *   2. that URL as a file name, next to the script's file;
 *   3. in the user's directory (--source-maps DIR): DIR/<script's file
 *      name>.map, then DIR/<the URL's file name>.
 * Without the script's text a map cannot be checked: it is used, and the
 * status says "not checked".  A candidate that is missing (when the URL
 * names it or DIR was given), unreadable, malformed or that does not
 * match is the script's problem, reported once; frames of a script with
 * no usable map keep their generated names.  Runtime scripts
 * (isolate__is_user_script()) are never looked up.
 *
 * Ownership: strings handed out live until source_maps__free().  Not
 * thread-safe.  Nothing prints.
 */
#ifndef ISOPROF_ATTRIBUTE_SOURCE_MAPS_H
#define ISOPROF_ATTRIBUTE_SOURCE_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/safe_open.h"

struct isolate_registry;
struct service_map;
struct source_maps;
struct sourcemap;

struct source_maps_opts {
	const char *dir;		/* --source-maps DIR; NULL: none */
	const char *proc_root;		/* "/proc" when NULL */
	struct read_budget *budget;	/* not owned; NULL: none */
	struct service_map *services;	/* workerd configs; NULL: none (not owned) */
	const struct isolate_registry *reg;	/* code logs; NULL: none (not owned) */
};

/* NULL and errno ENOMEM. */
struct source_maps *source_maps__new(const struct source_maps_opts *o);
void source_maps__free(struct source_maps *sms);

/* A JS function as V8 gives it: positions 1-based (V8's), 0 when unknown. */
struct source_frame {
	const char *function;	/* V8's name; "" or "(anonymous)" when none */
	uint32_t fn_line;	/* where it starts (the '(' of its parameters) */
	uint32_t fn_column;
	uint32_t at_line;	/* where the sample is in it */
	uint32_t at_column;
};

/* The same in the original source, 1-based. */
struct source_origin {
	const char *function;	/* the map's name, or V8's when the map has none */
	const char *file;	/* the original source file */
	uint32_t start_line;	/* the function's */
	uint32_t line;		/* the sample's (at_*) when known and in that file, else start */
	uint32_t column;
};

/*
 * Map frame of script (V8's name) in process pid and isolate (0 when
 * unknown; pid 0: a profile read back, only DIR is looked in).  1 and
 * *out, 0 when the script has no usable map or the function's position
 * is not in it, -ENOMEM.
 */
int source_maps__map(struct source_maps *sms, pid_t pid, uint64_t isolate, const char *script,
		     const struct source_frame *frame, struct source_origin *out);

/*
 * For V8's own profile of one isolate (proto/v8json.h's map_frame, with a
 * struct source_maps_v8 as its context): its frames mapped the same way,
 * so that the cross-check compares like with like.
 */
struct v8_frame_origin;
struct source_maps_v8 {
	struct source_maps *sms;
	pid_t pid;
	uint64_t isolate;
};
bool source_maps__v8_frame(void *ctx, const char *function_name, const char *url, int64_t line,
			   int64_t column, struct v8_frame_origin *out);

/* What became of each script looked up, in the order first looked up. */
struct source_map_status {
	pid_t pid;
	const char *script;
	const char *where;	/* the map used: "inline", or its path; NULL: none */
	bool checked;		/* matched against the script's text */
	size_t sources;		/* original files the map names */
	const char *problem;	/* a candidate's problem worth a note; NULL: none */
	size_t mapped;		/* functions mapped (source_maps__map() 1) */
	size_t unmapped;	/* ... whose position the map did not cover */
};

size_t source_maps__count(const struct source_maps *sms);
void source_maps__status(const struct source_maps *sms, size_t i, struct source_map_status *out);

/* Was DIR given (frames without a map are then worth a note)? */
bool source_maps__has_dir(const struct source_maps *sms);

/*
 * One line per script with a map used ("isoprof: source map: ...") and a
 * note per script whose candidates had a problem, on stderr.
 */
void source_maps__print_notes(const struct source_maps *sms);

#endif /* ISOPROF_ATTRIBUTE_SOURCE_MAPS_H */
