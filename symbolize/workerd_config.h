/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * workerd_config: the services of a workerd config in Cap'n Proto text
 * format (`workerd serve config.capnp [constName]`), as far as isoprof
 * needs them to name isolates (docs/attribution.md "Services
 * and Durable Objects"): each service's name, its worker's modules (name,
 * kind, and the source of JavaScript modules) and its Durable Object
 * namespaces (className, uniqueKey).
 *
 * The subset of the text format read here is what workerd configs use:
 *   using NAME = import "FILE";       (other files' consts: NAME.const)
 *   const NAME :TYPE = VALUE;
 *   @0x...;                          (a file id, ignored)
 *   # comments
 * and values: structs "(field = value, ...)", lists "[v, ...]", strings
 * (C escapes), data 0x"..", numbers, identifiers (true, void, enums),
 * references to consts (".name" in the same file, "Alias.name" in an
 * imported one), `embed "FILE"`.  Struct, enum and interface declarations
 * are not: a file holding them is an error (the schema itself,
 * "/workerd/workerd.capnp", is known and never read).
 *
 * Files are never opened here: read() gets the config and every file it
 * imports that a reference goes through, as the config names it, joined
 * to the directory of the file naming it when relative ("dir/x.js"), as
 * written when absolute ("/x.js": workerd looks those up in its import
 * path).  Embedded files are not read at all: a JavaScript module
 * (esModule, commonJsModule, serviceWorkerScript) embedded from a file
 * carries that file's name, so that a caller reads only the sources it
 * needs, and a big host's config (a thousand workers' bundles) costs the
 * parse of its text; a text, data, json or wasm module carries nothing.
 *
 * The input is a file another user controls: size is the caller's to cap
 * (read()), nesting and reference chains stop at WORKERD_CONFIG_MAX_DEPTH,
 * at most WORKERD_CONFIG_MAX_FILES files are parsed.  Errors come back as
 * -EINVAL with "FILE:LINE:COL: what" in err (never the file's bytes), or
 * the error of read() with its text.
 *
 * Ownership: workerd_config__parse() hands out one struct workerd_config;
 * everything in it belongs to it until workerd_config__free().  Nothing
 * prints.
 */
#ifndef ISOPROF_SYMBOLIZE_WORKERD_CONFIG_H
#define ISOPROF_SYMBOLIZE_WORKERD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#define WORKERD_CONFIG_MAX_DEPTH 64
#define WORKERD_CONFIG_MAX_FILES 32
#define WORKERD_CONFIG_SCHEMA "/workerd/workerd.capnp"

enum workerd_module_kind {
	WORKERD_MODULE_ES,
	WORKERD_MODULE_COMMONJS,
	WORKERD_MODULE_OTHER,		/* text, data, json, wasm, python...: not a V8 script */
};

struct workerd_module {
	char *name;
	enum workerd_module_kind kind;
	/* JavaScript modules: the bytes of a string or data value, else NULL */
	char *source;
	size_t len;
	/*
	 * JavaScript modules: an embedded file, not read, as read() would get
	 * it (joined to the naming file's directory; embed_import_path: an
	 * absolute name for the import path); else NULL
	 */
	char *embed;
	bool embed_import_path;
};

struct workerd_do_namespace {
	char *class_name;
	char *unique_key;		/* NULL: ephemeralLocal (no key) */
};

struct workerd_service {
	char *name;
	bool is_worker;			/* a worker service (not network, external, disk) */
	bool service_worker;		/* serviceWorkerScript: modules[0] is the script */
	struct workerd_module *modules;
	size_t nr_modules;
	struct workerd_do_namespace *namespaces;
	size_t nr_namespaces;
};

struct workerd_config {
	struct workerd_service *services;
	size_t nr_services;
};

/*
 * Read the file path (see above; import_path: an absolute name as written,
 * for the caller to look up in workerd's import path) whole into *data (malloc()ed, *len
 * bytes).  0, or a negative errno with a short reason in why ("symlink
 * refused"; not the file's content).
 */
typedef int (*workerd_config_read_fn)(void *ctx, const char *path, bool import_path,
				      char **data, size_t *len, char *why, size_t whylen);

/*
 * Parse the config at path (read through read()) and the config const
 * const_name, or, when NULL, the one const of type Config (as workerd
 * picks it).  0 and *out, or -EINVAL with err set (malformed, no or
 * several Config consts, a limit), -ENOMEM, or read()'s error.
 */
int workerd_config__parse(const char *path, const char *const_name, workerd_config_read_fn read,
			  void *ctx, struct workerd_config **out, char *err, size_t errlen);

/* The same over text already in memory (tests, the fuzzer). */
int workerd_config__parse_text(const char *path, const char *text, size_t len,
			       const char *const_name, workerd_config_read_fn read, void *ctx,
			       struct workerd_config **out, char *err, size_t errlen);

void workerd_config__free(struct workerd_config *cfg);

#endif /* ISOPROF_SYMBOLIZE_WORKERD_CONFIG_H */
