/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * json: the one way isoprof writes and picks apart JSON, over json-c.
 *
 * Writing: build a json_object tree, put any text that came from a profile
 * or a target in with json__text() (names are whatever a binary or script
 * holds: bytes that are not well-formed UTF-8 become U+FFFD, so the output
 * always parses), and serialize with json__dump() or json__write().  '/'
 * is never escaped.
 *
 * Reading: json__member(), json__int64() and json__str() check types, so
 * hostile input (any JSON at all) gives NULL/false, never a crash or a
 * coerced value.
 */
#ifndef ISOPROF_LIB_JSON_H
#define ISOPROF_LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* A JSON string of s with ill-formed UTF-8 replaced; NULL s gives NULL (JSON null). */
struct json_object *json__text(const char *s);
struct json_object *json__text_n(const char *s, size_t len);

/*
 * The text of o, owned by o (valid until o changes or is freed), compact
 * or indented; *len (may be NULL) gets its length.  NULL on ENOMEM.
 */
const char *json__dump(struct json_object *o, bool pretty, size_t *len);

/*
 * Add v to object o as member key, or to the end of array a.  v is
 * consumed either way (freed when adding fails), so calls chain without
 * leaks: a NULL v (a failed json_object_new_...()) or a failed add gives
 * -ENOMEM.
 */
int json__put(struct json_object *o, const char *key, struct json_object *v);
int json__append(struct json_object *a, struct json_object *v);

/* json__dump() of o and a newline to f: 0 or -errno. */
int json__write(FILE *f, struct json_object *o, bool pretty);

/*
 * A part of a tree too large to hold as json-c objects (a profile's nodes):
 * a json_object whose text fn writes, with json_out__*(), when the tree is
 * serialized.  Strings still go through json-c's escaper (json_out__text),
 * so there is one JSON writer.  ctx is the caller's and must outlive the
 * serialization; fn returns 0 or -1.  Write-only: read back through json-c
 * the part is an empty array.  NULL on ENOMEM.
 */
struct json_out;
typedef int (*json_part_fn)(struct json_out *out, const void *ctx);
struct json_object *json__part(json_part_fn fn, const void *ctx);

/* Within a part: raw JSON text, a number, a string as json__text() writes it. */
int json_out__raw(struct json_out *out, const char *s, size_t len);
int json_out__int(struct json_out *out, int64_t v);
int json_out__text(struct json_out *out, const char *s);

/* The member key of object o, or NULL (absent, null, or o not an object). */
struct json_object *json__member(struct json_object *o, const char *key);

/* An integral JSON number into *v; false for anything else (strings, doubles). */
bool json__int64(struct json_object *o, int64_t *v);

/* The text of a JSON string, or NULL for anything else. */
const char *json__str(struct json_object *o);

#endif /* ISOPROF_LIB_JSON_H */
