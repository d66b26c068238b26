// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * V8 profile formats <-> pprof.  See v8profile.h for the contract and
 * docs/formats.md for the field mapping.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "lib/errmsg.h"
#include "proto/v8profile.h"
#include "lib/utf8.h"

#define NO_PARENT UINT32_MAX
/* V8's default --cpu-profiler-sampling-interval, when nothing says otherwise. */
#define DEFAULT_INTERVAL_US 1000

/* Hostile inputs carry any numbers: arithmetic on them saturates instead of overflowing. */
static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

static int64_t sub_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static int vec_grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *nv;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2 / size)
			return -ENOMEM;
		ncap *= 2;
	}
	nv = realloc(*v, ncap * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = ncap;
	return 0;
}

/* Hashing. */

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return mix64(h ^ 0xff);
}

/*
 * Open addressing from a 64-bit hash to a uint32 value.  A table keyed by
 * an exact integer passes no eq callback; one keyed by content compares
 * the candidates whose hash matches.
 */
struct htab {
	uint64_t *hash;
	uint32_t *val1;		/* value + 1; 0 is an empty slot */
	size_t mask, count;
};

typedef bool (*htab_eq_fn)(const void *ctx, uint32_t val, const void *key);

static int htab__reserve(struct htab *t)
{
	size_t nsize;
	uint64_t *nh;
	uint32_t *nv;

	if (t->mask && (t->count + 1) * 2 <= t->mask + 1)
		return 0;
	nsize = t->mask ? (t->mask + 1) * 2 : 64;
	nh = calloc(nsize, sizeof(*nh));
	nv = calloc(nsize, sizeof(*nv));
	if (!nh || !nv) {
		free(nh);
		free(nv);
		return -ENOMEM;
	}
	for (size_t i = 0; t->mask && i <= t->mask; i++) {
		size_t j;

		if (!t->val1[i])
			continue;
		for (j = t->hash[i] & (nsize - 1); nv[j]; j = (j + 1) & (nsize - 1))
			;
		nv[j] = t->val1[i];
		nh[j] = t->hash[i];
	}
	free(t->hash);
	free(t->val1);
	t->hash = nh;
	t->val1 = nv;
	t->mask = nsize - 1;
	return 0;
}

/* Find the value for h/key; when absent and add is set, store new_val. */
static int htab__lookup(struct htab *t, uint64_t h, htab_eq_fn eq, const void *ctx,
			const void *key, bool add, uint32_t new_val, uint32_t *val)
{
	size_t i;
	int err;

	if (add) {
		err = htab__reserve(t);
		if (err)
			return err;
	} else if (!t->mask) {
		return -ENOENT;
	}
	for (i = h & t->mask; t->val1[i]; i = (i + 1) & t->mask) {
		if (t->hash[i] == h && (!eq || eq(ctx, t->val1[i] - 1, key))) {
			*val = t->val1[i] - 1;
			return 0;
		}
	}
	if (!add)
		return -ENOENT;
	t->hash[i] = h;
	t->val1[i] = new_val + 1;
	t->count++;
	*val = new_val;
	return 1;
}

static void htab__release(struct htab *t)
{
	free(t->hash);
	free(t->val1);
	memset(t, 0, sizeof(*t));
}

/* Growable text buffer for the JSON we write. */
struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sbuf_putn(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (vec_grow((void **)&b->p, &b->cap, b->len + n + 1, 1)) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sbuf_puts(struct sbuf *b, const char *s)
{
	sbuf_putn(b, s, strlen(s));
}

static void sbuf_i64(struct sbuf *b, int64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%" PRId64, v);

	sbuf_putn(b, num, (size_t)n);
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD so the text stays valid JSON. */
static void sbuf_json_str(struct sbuf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	char esc[8];

	sbuf_putn(b, "\"", 1);
	while (*u) {
		size_t run = 0, n;

		while (u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\')
			run++;
		if (run) {
			sbuf_putn(b, (const char *)u, run);
			u += run;
			continue;
		}
		if (*u == '"' || *u == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*u;
			sbuf_putn(b, esc, 2);
			u++;
		} else if (*u < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", *u);
			sbuf_putn(b, esc, 6);
			u++;
		} else if ((n = utf8__seq(u, 4))) {
			sbuf_putn(b, (const char *)u, n);
			u += n;
		} else {
			sbuf_puts(b, "\\ufffd");
			u++;
		}
	}
	sbuf_putn(b, "\"", 1);
}

/* JSON input. */

struct json_object *v8_json__parse(const char *json, size_t len, char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *o;
	enum json_tokener_error jerr;
	size_t end;

	if (len > V8_PROFILE_MAX_JSON) {
		errmsg__set(err, errlen, "JSON text of %zu bytes is over the %llu MiB limit", len,
		       V8_PROFILE_MAX_JSON >> 20);
		errno = EFBIG;
		return NULL;
	}
	/* json-c stops at a NUL; say so rather than report a truncated document */
	if (memchr(json, '\0', len)) {
		errmsg__set(err, errlen, "JSON text contains a NUL byte at offset %zu",
		       (size_t)((const char *)memchr(json, '\0', len) - json));
		errno = EINVAL;
		return NULL;
	}
	tok = json_tokener_new_ex(V8_PROFILE_MAX_DEPTH);
	if (!tok) {
		errmsg__set(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	o = json_tokener_parse_ex(tok, json, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!o && jerr == json_tokener_continue) {
		errmsg__set(err, errlen, "JSON text ends early (truncated file?)");
		goto bad;
	}
	if (!o || jerr != json_tokener_success) {
		errmsg__set(err, errlen, "invalid JSON at offset %zu: %s", end,
		       json_tokener_error_desc(jerr));
		goto bad;
	}
	for (; end < len; end++) {
		if (!strchr(" \t\r\n", json[end])) {
			errmsg__set(err, errlen, "invalid JSON: data after the document at offset %zu",
			       end);
			goto bad;
		}
	}
	json_tokener_free(tok);
	return o;
bad:
	json_object_put(o);
	json_tokener_free(tok);
	errno = EINVAL;
	return NULL;
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static bool json_int(struct json_object *o, int64_t *v)
{
	if (!json_object_is_type(o, json_type_int))
		return false;
	*v = json_object_get_int64(o);
	return true;
}

/* Integers, or numbers with no fraction (some tools write times as doubles). */
static bool json_number(struct json_object *o, int64_t *v)
{
	double d;

	if (json_int(o, v))
		return true;
	if (!json_object_is_type(o, json_type_double))
		return false;
	d = json_object_get_double(o);
	if (!(d >= -9.2e18 && d <= 9.2e18))
		return false;
	*v = (int64_t)d;
	return true;
}

static const char *json_str(struct json_object *o)
{
	return json_object_is_type(o, json_type_string) ? json_object_get_string(o) : NULL;
}

/*
 * Find the profile in a bare object, {"profile": ...}, or a CDP reply
 * {"id": N, "result": {"profile": ...}}.  marker is the key a profile has.
 */
static struct json_object *unwrap(struct json_object *o, const char *marker, char *err,
				  size_t errlen)
{
	for (int depth = 0; depth < 4; depth++) {
		struct json_object *inner, *e;

		if (!json_object_is_type(o, json_type_object)) {
			errmsg__set(err, errlen, "the profile is not a JSON object");
			return NULL;
		}
		if (member(o, marker))
			return o;
		e = member(o, "error");
		if (e) {
			const char *msg = json_str(member(e, "message"));

			errmsg__set(err, errlen, "a CDP error reply, not a profile: %s",
			       msg ? msg : json_object_to_json_string(e));
			return NULL;
		}
		inner = member(o, "result");
		if (!inner)
			inner = member(o, "profile");
		if (!inner)
			break;
		o = inner;
	}
	errmsg__set(err, errlen, "no \"%s\" member: not a V8 %s profile", marker,
	       strcmp(marker, "head") ? "CPU" : "heap");
	return NULL;
}

/* CPU profile: load and validate. */

struct call_frame {
	const char *function_name, *script_id, *url;
	int64_t line, column;
};

static const char *type_name(struct json_object *v)
{
	return v ? json_type_to_name(json_object_get_type(v)) : "missing";
}

static int load_call_frame(struct json_object *node, const char *what, struct call_frame *cf,
			   bool strict, char *err, size_t errlen)
{
	struct json_object *c = member(node, "callFrame");
	static const char *const str_keys[] = { "functionName", "scriptId", "url" };
	const char **strs[] = { &cf->function_name, &cf->script_id, &cf->url };
	static const char *const int_keys[] = { "lineNumber", "columnNumber" };
	int64_t *ints[] = { &cf->line, &cf->column };

	if (!json_object_is_type(c, json_type_object)) {
		errmsg__set(err, errlen, "%s: no callFrame object", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < 3; i++) {
		struct json_object *v = member(c, str_keys[i]);

		*strs[i] = json_str(v);
		if (!*strs[i] && (strict || v)) {
			errmsg__set(err, errlen, "%s: callFrame.%s is %s, not a string", what,
			       str_keys[i], type_name(v));
			return -EINVAL;
		}
		if (!*strs[i])
			*strs[i] = "";
	}
	for (size_t i = 0; i < 2; i++) {
		struct json_object *v = member(c, int_keys[i]);

		if (!v && !strict) {
			*ints[i] = -1;
			continue;
		}
		if (!json_int(v, ints[i])) {
			errmsg__set(err, errlen, "%s: callFrame.%s is %s, not an integer", what,
			       int_keys[i], type_name(v));
			return -EINVAL;
		}
		if (*ints[i] < -1 || *ints[i] > INT32_MAX) {
			errmsg__set(err, errlen, "%s: callFrame.%s %" PRId64 " out of range", what,
			       int_keys[i], *ints[i]);
			return -EINVAL;
		}
	}
	return 0;
}

static bool idx_eq_none(const void *ctx, uint32_t val, const void *key)
{
	(void)ctx;
	(void)val;
	(void)key;
	return true;
}

static int cpu_load(struct json_object *prof, struct v8_cpu_profile *p, char *err,
		    size_t errlen)
{
	struct json_object *nodes = member(prof, "nodes"), *samples, *deltas, *v;
	struct htab ids = { 0 };
	uint32_t *queue = NULL;
	size_t n, total_children = 0, used = 0, head = 0, tail = 0;
	int64_t num;
	char what[64];
	int ret = -EINVAL;

	if (!json_object_is_type(nodes, json_type_array) || !json_object_array_length(nodes)) {
		errmsg__set(err, errlen, "\"nodes\" is not a non-empty array");
		return -EINVAL;
	}
	n = json_object_array_length(nodes);
	if (n >= NO_PARENT) {
		errmsg__set(err, errlen, "%zu nodes: too many", n);
		return -EFBIG;
	}
	p->nodes = calloc(n, sizeof(*p->nodes));
	if (!p->nodes)
		return -ENOMEM;
	p->nnodes = n;

	for (size_t i = 0; i < n; i++) {
		struct json_object *node = json_object_array_get_idx(nodes, i), *ch;
		struct v8_cpu_node *nd = &p->nodes[i];
		struct call_frame cf;
		uint32_t other;
		int r;

		snprintf(what, sizeof(what), "nodes[%zu]", i);
		if (!json_object_is_type(node, json_type_object)) {
			errmsg__set(err, errlen, "%s is not an object", what);
			goto out;
		}
		if (!json_int(member(node, "id"), &num) || num < 1 || num > UINT32_MAX) {
			errmsg__set(err, errlen, "%s: id is not a positive 32-bit integer", what);
			goto out;
		}
		nd->id = (uint32_t)num;
		snprintf(what, sizeof(what), "node id %u", nd->id);
		if (load_call_frame(node, what, &cf, true, err, errlen))
			goto out;
		nd->function_name = cf.function_name;
		nd->script_id = cf.script_id;
		nd->url = cf.url;
		nd->line = (int32_t)cf.line;
		nd->column = (int32_t)cf.column;
		nd->parent = NO_PARENT;
		v = member(node, "hitCount");
		if (v) {
			if (!json_int(v, &num) || num < 0 || num > UINT32_MAX) {
				errmsg__set(err, errlen, "%s: hitCount is not a 32-bit count", what);
				goto out;
			}
			nd->hit_count = (uint32_t)num;
		}
		ch = member(node, "children");
		if (ch) {
			if (!json_object_is_type(ch, json_type_array)) {
				errmsg__set(err, errlen, "%s: children is not an array", what);
				goto out;
			}
			nd->nchildren = (uint32_t)json_object_array_length(ch);
			total_children += nd->nchildren;
		}
		r = htab__lookup(&ids, mix64(nd->id), idx_eq_none, NULL, NULL, true, (uint32_t)i,
				 &other);
		if (r < 0) {
			ret = r;
			goto out;
		}
		if (!r) {
			errmsg__set(err, errlen, "nodes[%zu]: id %u repeats nodes[%u]", i, nd->id,
			       other);
			goto out;
		}
	}
	if (strcmp(p->nodes[0].function_name, "(root)")) {
		errmsg__set(err, errlen, "nodes[0] (id %u) is \"%s\", not the \"(root)\" node",
		       p->nodes[0].id, p->nodes[0].function_name);
		goto out;
	}
	p->child_store = malloc((total_children ? total_children : 1) * sizeof(uint32_t));
	queue = malloc(n * sizeof(*queue));
	if (!p->child_store || !queue) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *ch = member(json_object_array_get_idx(nodes, i), "children");
		struct v8_cpu_node *nd = &p->nodes[i];

		nd->children = p->child_store + used;
		for (uint32_t k = 0; k < nd->nchildren; k++) {
			uint32_t j;

			if (!json_int(json_object_array_get_idx(ch, k), &num) || num < 1 ||
			    num > UINT32_MAX ||
			    htab__lookup(&ids, mix64((uint64_t)num), idx_eq_none, NULL, NULL,
					 false, 0, &j)) {
				errmsg__set(err, errlen, "node id %u: children[%u] is not a node id",
				       nd->id, k);
				goto out;
			}
			if (j == 0) {
				errmsg__set(err, errlen, "node id %u: the root is its child (a cycle)",
				       nd->id);
				goto out;
			}
			if (p->nodes[j].parent != NO_PARENT) {
				errmsg__set(err, errlen,
				       "node id %u has two parents (node ids %u and %u)",
				       p->nodes[j].id, p->nodes[p->nodes[j].parent].id, nd->id);
				goto out;
			}
			p->nodes[j].parent = (uint32_t)i;
			nd->children[k] = j;
		}
		used += nd->nchildren;
	}
	/* With one parent each, a walk from the root meets every node at most once. */
	queue[tail++] = 0;
	while (head < tail) {
		const struct v8_cpu_node *nd = &p->nodes[queue[head++]];

		for (uint32_t k = 0; k < nd->nchildren; k++)
			queue[tail++] = nd->children[k];
	}
	if (tail < n) {
		/* Name the first node left out, and say whether it hangs in a loop. */
		bool *reached = calloc(n, sizeof(*reached));
		size_t k, steps;
		uint32_t up;

		if (!reached) {
			ret = -ENOMEM;
			goto out;
		}
		for (k = 0; k < tail; k++)
			reached[queue[k]] = true;
		for (k = 0; reached[k]; k++)
			;
		up = (uint32_t)k;
		for (steps = 0; steps <= n && p->nodes[up].parent != NO_PARENT; steps++)
			up = p->nodes[up].parent;
		free(reached);
		if (p->nodes[up].parent == NO_PARENT)
			errmsg__set(err, errlen, "node id %u is not reachable from the root",
			       p->nodes[k].id);
		else
			errmsg__set(err, errlen, "node id %u is in a cycle", p->nodes[k].id);
		goto out;
	}

	samples = member(prof, "samples");
	if (samples) {
		if (!json_object_is_type(samples, json_type_array)) {
			errmsg__set(err, errlen, "\"samples\" is not an array");
			goto out;
		}
		p->nsamples = json_object_array_length(samples);
		p->samples = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*p->samples));
		if (!p->samples) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < p->nsamples; i++) {
			uint32_t j;

			if (!json_int(json_object_array_get_idx(samples, i), &num) || num < 1 ||
			    num > UINT32_MAX ||
			    htab__lookup(&ids, mix64((uint64_t)num), idx_eq_none, NULL, NULL,
					 false, 0, &j)) {
				errmsg__set(err, errlen, "samples[%zu] is not a node id", i);
				goto out;
			}
			p->samples[i] = j;
		}
	}
	deltas = member(prof, "timeDeltas");
	if (deltas) {
		if (!json_object_is_type(deltas, json_type_array) ||
		    json_object_array_length(deltas) != p->nsamples) {
			errmsg__set(err, errlen,
			       "\"timeDeltas\" is not an array of %zu (as \"samples\")",
			       p->nsamples);
			goto out;
		}
		p->time_deltas = malloc((p->nsamples ? p->nsamples : 1) * sizeof(int64_t));
		if (!p->time_deltas) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < p->nsamples; i++) {
			if (!json_int(json_object_array_get_idx(deltas, i), &p->time_deltas[i])) {
				errmsg__set(err, errlen, "timeDeltas[%zu] is not an integer", i);
				goto out;
			}
		}
	}
	if (!json_number(member(prof, "startTime"), &p->start_time) ||
	    !json_number(member(prof, "endTime"), &p->end_time)) {
		errmsg__set(err, errlen, "\"startTime\" and \"endTime\" must be numbers (µs)");
		goto out;
	}
	if (p->start_time > p->end_time) {
		errmsg__set(err, errlen, "startTime %" PRId64 " is after endTime %" PRId64,
		       p->start_time, p->end_time);
		goto out;
	}
	ret = 0;
out:
	free(queue);
	htab__release(&ids);
	return ret;
}

void v8_cpu_profile__free(struct v8_cpu_profile *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->child_store);
	free(p->samples);
	free(p->time_deltas);
	json_object_put(p->json);
	free(p);
}

int v8_cpu_profile__from_json(struct json_object *profile, struct v8_cpu_profile **out,
			      char *err, size_t errlen)
{
	struct v8_cpu_profile *p;
	struct json_object *prof;
	int ret;

	*out = NULL;
	prof = unwrap(profile, "nodes", err, errlen);
	if (!prof)
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p) {
		errmsg__set(err, errlen, "out of memory");
		return -ENOMEM;
	}
	p->json = json_object_get(prof);
	ret = cpu_load(prof, p, err, errlen);
	if (ret) {
		if (ret == -ENOMEM)
			errmsg__set(err, errlen, "out of memory");
		v8_cpu_profile__free(p);
		return ret;
	}
	*out = p;
	return 0;
}

int v8_cpu_profile__parse(const char *json, size_t len, struct v8_cpu_profile **out, char *err,
			  size_t errlen)
{
	struct json_object *o = v8_json__parse(json, len, err, errlen);
	int ret;

	*out = NULL;
	if (!o)
		return -errno;
	ret = v8_cpu_profile__from_json(o, out, err, errlen);
	json_object_put(o);
	return ret;
}

int v8_cpu_profile__validate_json(const char *json, size_t len, char *err, size_t errlen)
{
	struct v8_cpu_profile *p;
	int ret = v8_cpu_profile__parse(json, len, &p, err, errlen);

	v8_cpu_profile__free(p);
	return ret;
}

/* CPU profile → pprof. */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The nominal interval in µs: the median delta resists V8's occasional bursts and gaps. */
static int64_t interval_us(const struct v8_cpu_profile *p)
{
	int64_t med = 0;

	if (p->time_deltas && p->nsamples) {
		int64_t *d = malloc(p->nsamples * sizeof(*d));

		if (d) {
			memcpy(d, p->time_deltas, p->nsamples * sizeof(*d));
			qsort(d, p->nsamples, sizeof(*d), cmp_i64);
			med = d[p->nsamples / 2];
			free(d);
		}
	}
	if (med <= 0 && p->nsamples)
		med = sub_sat(p->end_time, p->start_time) / (int64_t)p->nsamples;
	return med > 0 ? med : DEFAULT_INTERVAL_US;
}

static const char *node_class(const struct v8_cpu_profile *p, uint32_t idx)
{
	const struct v8_cpu_node *nd = &p->nodes[idx];

	if (!strcmp(nd->function_name, "(garbage collector)"))
		return "gc";
	if (!strcmp(nd->function_name, "(idle)"))
		return "idle";
	if (!strcmp(nd->function_name, "(program)") || idx == 0)
		return "program";
	if (*nd->url)
		return "js";
	return "v8-builtin";
}

static uint64_t node_location(struct pprof_builder *b, const struct v8_cpu_node *nd)
{
	struct pprof_line line = { 0 };
	int64_t start_line = nd->line >= 0 ? (int64_t)nd->line + 1 : 0;

	line.function_id = pprof_builder__function(
		b, *nd->function_name ? nd->function_name : "(anonymous)", nd->function_name,
		nd->url, start_line);
	if (!line.function_id)
		return 0;
	line.line = start_line;
	line.column = nd->column >= 0 ? (int64_t)nd->column + 1 : 0;
	return pprof_builder__location(b, 0, 0, &line, 1);
}

static int cpu_add_samples(struct pprof_builder *b, const struct v8_cpu_profile *p,
			   const struct v8_pprof_opts *o, const uint64_t *counts,
			   int64_t interval_ns)
{
	uint64_t *locs = NULL, *stack = NULL;
	struct pprof_label *labels = NULL;
	int ret = 0;

	locs = calloc(p->nnodes, sizeof(*locs));
	stack = malloc(p->nnodes * sizeof(*stack));
	labels = calloc(o->nlabels + 1, sizeof(*labels));
	if (!locs || !stack || !labels) {
		ret = -ENOMEM;
		goto out;
	}
	if (o->nlabels)
		memcpy(labels + 1, o->labels, o->nlabels * sizeof(*labels));
	labels[0].key = "class";
	for (size_t i = 0; i < p->nnodes; i++) {
		int64_t values[2];
		size_t depth = 0;

		if (!counts[i])
			continue;
		for (uint32_t up = (uint32_t)i; up != 0; up = p->nodes[up].parent) {
			if (!locs[up]) {
				locs[up] = node_location(b, &p->nodes[up]);
				if (!locs[up]) {
					ret = -ENOMEM;
					goto out;
				}
			}
			stack[depth++] = locs[up];
		}
		values[0] = counts[i] > INT64_MAX ? INT64_MAX : (int64_t)counts[i];
		values[1] = mul_sat(values[0], interval_ns);
		labels[0].str = node_class(p, (uint32_t)i);
		ret = pprof_builder__add_sample(b, stack, depth, values, 2, labels,
						o->nlabels + 1);
		if (ret)
			goto out;
	}
out:
	free(locs);
	free(stack);
	free(labels);
	return ret;
}

int v8_cpu_profile__to_pprof(const struct v8_cpu_profile *p, const struct v8_pprof_opts *o,
			     struct pprof_builder **out)
{
	static const struct v8_pprof_opts no_opts;
	struct pprof_builder *b;
	uint64_t *counts = NULL;
	int64_t interval_ns, deltas = 0, span = sub_sat(p->end_time, p->start_time);
	size_t total = 0;
	char comment[200];
	int ret;

	*out = NULL;
	if (!o)
		o = &no_opts;
	interval_ns = o->interval_ns ? (int64_t)(o->interval_ns > INT64_MAX ? INT64_MAX
								  : o->interval_ns)
				     : mul_sat(interval_us(p), 1000);
	counts = calloc(p->nnodes, sizeof(*counts));
	b = pprof_builder__new();
	if (!counts || !b) {
		ret = -ENOMEM;
		goto out;
	}
	/* One pprof sample per V8 sample; per node first, the builder would merge them anyway. */
	if (p->samples) {
		for (size_t i = 0; i < p->nsamples; i++)
			counts[p->samples[i]]++;
		total = p->nsamples;
		for (size_t i = 0; p->time_deltas && i < p->nsamples; i++)
			deltas = add_sat(deltas, p->time_deltas[i]);
		if (!p->time_deltas)
			deltas = span;
	} else {
		for (size_t i = 0; i < p->nnodes; i++) {
			counts[i] = p->nodes[i].hit_count;
			total += p->nodes[i].hit_count;
		}
		deltas = span;
	}
	ret = pprof_builder__add_sample_type(b, "samples", "count");
	if (!ret)
		ret = pprof_builder__add_sample_type(b, "cpu", "nanoseconds");
	if (ret)
		goto out;
	pprof_builder__set_default_sample_type(b, "cpu");
	pprof_builder__set_period(b, "cpu", "nanoseconds", interval_ns);
	pprof_builder__set_time(b, o->time_nanos, mul_sat(span, 1000));
	for (size_t i = 0; i < o->ncomments; i++) {
		ret = pprof_builder__add_comment(b, o->comments[i]);
		if (ret)
			goto out;
	}
	snprintf(comment, sizeof(comment),
		 "source: V8 CPU profiler (.cpuprofile), %zu samples, mean interval %.1f µs",
		 total, total ? (double)deltas / (double)total : 0.0);
	ret = pprof_builder__add_comment(b, comment);
	if (!ret)
		ret = cpu_add_samples(b, p, o, counts, interval_ns);
out:
	free(counts);
	if (ret) {
		pprof_builder__free(b);
		return ret;
	}
	*out = b;
	return 0;
}

/* pprof → CPU profile. */

struct out_frame {
	const char *name, *url;
	int64_t line;
};

struct out_node {
	uint32_t frame, parent;
	uint64_t hits;
	uint32_t first_child, next_sibling, last_child;	/* NO_PARENT: none */
};

struct tree {
	const struct pprof_profile *prof;
	struct out_frame *frames;
	size_t nframes, frames_cap;
	char **owned;			/* names we made up */
	size_t nowned, owned_cap;
	struct htab frame_tab;		/* content -> frames[] */
	uint32_t *frame_of;		/* pprof frame id -> frames[] (+1) */
	struct out_node *nodes;
	size_t nnodes, nodes_cap;
	struct htab child_tab;		/* (parent, frame) -> nodes[] */
	uint32_t *samples;
	size_t nsamples, samples_cap;
};

static bool frame_eq(const void *ctx, uint32_t val, const void *key)
{
	const struct out_frame *a = &((const struct tree *)ctx)->frames[val];
	const struct out_frame *b = key;

	return a->line == b->line && !strcmp(a->name, b->name) && !strcmp(a->url, b->url);
}

static bool child_eq(const void *ctx, uint32_t val, const void *key)
{
	const struct out_node *n = &((const struct tree *)ctx)->nodes[val];
	const uint32_t *k = key;

	return n->parent == k[0] && n->frame == k[1];
}

static bool url_eq(const void *ctx, uint32_t val, const void *key)
{
	return !strcmp(((const struct tree *)ctx)->frames[val].url, key);
}

static char *tree_own(struct tree *t, char *s)
{
	if (!s || vec_grow((void **)&t->owned, &t->owned_cap, t->nowned + 1, sizeof(char *))) {
		free(s);
		return NULL;
	}
	t->owned[t->nowned++] = s;
	return s;
}

/* The callFrame of a pprof frame: content-deduplicated, so a path is by function. */
static int tree_frame(struct tree *t, const struct pprof_frame *f, uint32_t *out)
{
	struct out_frame key;
	uint32_t idx;
	int r;

	if (t->frame_of[f->id]) {
		*out = t->frame_of[f->id] - 1;
		return 0;
	}
	if (f->has_function) {
		key.name = *f->name ? f->name : f->system_name;
		if (!strcmp(key.name, "(anonymous)"))
			key.name = "";
		key.url = f->filename;
		key.line = f->start_line > 0 && f->start_line <= INT32_MAX ? f->start_line - 1 : -1;
	} else {
		char *s = NULL;

		if (asprintf(&s, "0x%" PRIx64, f->address) < 0)
			s = NULL;
		key.name = tree_own(t, s);
		if (!key.name)
			return -ENOMEM;
		key.url = "";
		key.line = -1;
	}
	r = htab__lookup(&t->frame_tab,
			 mix64(hash_str(hash_str((uint64_t)key.line, key.name), key.url)),
			 frame_eq, t, &key, true, (uint32_t)t->nframes, &idx);
	if (r < 0)
		return r;
	if (r) {
		if (vec_grow((void **)&t->frames, &t->frames_cap, t->nframes + 1,
			     sizeof(*t->frames)))
			return -ENOMEM;
		t->frames[t->nframes++] = key;
	}
	t->frame_of[f->id] = idx + 1;
	*out = idx;
	return 0;
}

static int tree_node(struct tree *t, uint32_t parent, uint32_t frame, uint32_t *out)
{
	uint32_t key[2] = { parent, frame }, idx;
	struct out_node *nd;
	int r;

	r = htab__lookup(&t->child_tab, mix64((uint64_t)parent << 32 | frame), child_eq, t, key,
			 true, (uint32_t)t->nnodes, &idx);
	if (r < 0)
		return r;
	if (r) {
		if (t->nnodes >= NO_PARENT - 1 ||
		    vec_grow((void **)&t->nodes, &t->nodes_cap, t->nnodes + 1, sizeof(*t->nodes)))
			return -ENOMEM;
		nd = &t->nodes[t->nnodes++];
		*nd = (struct out_node){ .frame = frame, .parent = parent,
					 .first_child = NO_PARENT, .next_sibling = NO_PARENT,
					 .last_child = NO_PARENT };
		if (t->nodes[parent].last_child == NO_PARENT)
			t->nodes[parent].first_child = idx;
		else
			t->nodes[t->nodes[parent].last_child].next_sibling = idx;
		t->nodes[parent].last_child = idx;
	}
	*out = idx;
	return 0;
}

static void tree_release(struct tree *t)
{
	for (size_t i = 0; i < t->nowned; i++)
		free(t->owned[i]);
	free(t->owned);
	free(t->frames);
	htab__release(&t->frame_tab);
	free(t->frame_of);
	free(t->nodes);
	htab__release(&t->child_tab);
	free(t->samples);
}

/* v in unit as µs; -1 when unit is not a time unit. */
static int64_t to_us(int64_t v, const char *unit)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {
		{ "nanoseconds", 1 }, { "ns", 1 }, { "microseconds", 1000 }, { "us", 1000 },
		{ "milliseconds", 1000000 }, { "ms", 1000000 }, { "seconds", 1000000000 },
		{ "s", 1000000000 },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(unit, units[i].unit))
			return mul_sat(v, units[i].ns) / 1000;
	return -1;
}

static int build_tree(struct tree *t, size_t count_index, char *err, size_t errlen)
{
	const struct pprof_profile *p = t->prof;
	struct pprof_stack st = { 0 };
	struct out_frame root = { "(root)", "", -1 };
	int ret = 0;

	t->frame_of = calloc(pprof_profile__frame_count(p) + 1, sizeof(*t->frame_of));
	t->frames = malloc(sizeof(*t->frames));
	t->nodes = malloc(sizeof(*t->nodes));
	if (!t->frame_of || !t->frames || !t->nodes)
		return -ENOMEM;
	t->frames_cap = t->nodes_cap = 1;
	t->frames[t->nframes++] = root;
	t->nodes[t->nnodes++] = (struct out_node){ .frame = 0, .parent = NO_PARENT,
						   .first_child = NO_PARENT,
						   .next_sibling = NO_PARENT,
						   .last_child = NO_PARENT };

	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		int64_t c = pprof_profile__value(p, s, count_index);
		uint32_t cur = 0;

		/* A negative count is no number of samples: a diff has no .cpuprofile. */
		if (c <= 0)
			continue;
		if ((uint64_t)c > V8_PROFILE_MAX_SAMPLES - t->nsamples) {
			errmsg__set(err, errlen, "more than %llu samples: too many for a .cpuprofile",
			       V8_PROFILE_MAX_SAMPLES);
			ret = -EFBIG;
			goto out;
		}
		ret = pprof_profile__stack(p, s, &st);
		for (size_t i = st.n; !ret && i-- > 0;) {
			uint32_t frame;

			ret = tree_frame(t, st.frames[i], &frame);
			if (!ret)
				ret = tree_node(t, cur, frame, &cur);
		}
		if (ret)
			goto out;
		t->nodes[cur].hits += (uint64_t)c;
		if (vec_grow((void **)&t->samples, &t->samples_cap, t->nsamples + (size_t)c,
			     sizeof(*t->samples))) {
			ret = -ENOMEM;
			goto out;
		}
		for (int64_t k = 0; k < c; k++)
			t->samples[t->nsamples++] = cur;
	}
out:
	pprof_stack__release(&st);
	return ret;
}

static int write_cpuprofile(struct tree *t, int64_t delta_us, char **json, size_t *len,
			    char *err, size_t errlen)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(t->prof);
	uint32_t *order = NULL, *new_id = NULL, *stack = NULL, *script_no = NULL, nscripts = 0;
	struct htab scripts = { 0 };
	int64_t start = msg->time_nanos / 1000, end, duration_us = msg->duration_nanos / 1000;
	struct sbuf b = { 0 };
	size_t norder = 0, sp = 0;
	int ret = -ENOMEM;

	/* V8 writes nodes in pre-order; do the same, ids in that order. */
	order = malloc(t->nnodes * sizeof(*order));
	new_id = malloc(t->nnodes * sizeof(*new_id));
	stack = malloc(t->nnodes * sizeof(*stack));
	script_no = calloc(t->nframes, sizeof(*script_no));
	if (!order || !new_id || !stack || !script_no)
		goto out;
	stack[sp++] = 0;
	while (sp) {
		uint32_t i = stack[--sp];
		size_t first = sp;

		new_id[i] = (uint32_t)norder + 1;
		order[norder++] = i;
		for (uint32_t c = t->nodes[i].first_child; c != NO_PARENT;
		     c = t->nodes[c].next_sibling)
			stack[sp++] = c;
		/* children were pushed in order: reverse so the first is visited first */
		for (size_t a = first, z = sp; a + 1 < z; a++, z--) {
			uint32_t tmp = stack[a];

			stack[a] = stack[z - 1];
			stack[z - 1] = tmp;
		}
	}

	sbuf_puts(&b, "{\"nodes\":[");
	for (size_t k = 0; k < norder; k++) {
		const struct out_node *nd = &t->nodes[order[k]];
		const struct out_frame *f = &t->frames[nd->frame];
		uint32_t script = 0;
		char sid[16];

		if (*f->url) {
			int r = htab__lookup(&scripts, hash_str(0, f->url), url_eq, t, f->url,
					     true, nd->frame, &script);

			if (r < 0)
				goto out;
			/* the table maps a url to the first frame naming it; number in order met */
			if (r)
				script_no[nd->frame] = ++nscripts;
			script = script_no[script];
		}
		snprintf(sid, sizeof(sid), "%u", script);
		if (k)
			sbuf_puts(&b, ",");
		sbuf_puts(&b, "{\"id\":");
		sbuf_i64(&b, new_id[order[k]]);
		sbuf_puts(&b, ",\"callFrame\":{\"functionName\":");
		sbuf_json_str(&b, f->name);
		sbuf_puts(&b, ",\"scriptId\":\"");
		sbuf_puts(&b, sid);
		sbuf_puts(&b, "\",\"url\":");
		sbuf_json_str(&b, f->url);
		sbuf_puts(&b, ",\"lineNumber\":");
		sbuf_i64(&b, f->line);
		sbuf_puts(&b, ",\"columnNumber\":-1},\"hitCount\":");
		sbuf_i64(&b, (int64_t)nd->hits);
		if (nd->first_child != NO_PARENT) {
			sbuf_puts(&b, ",\"children\":[");
			for (uint32_t c = nd->first_child; c != NO_PARENT;
			     c = t->nodes[c].next_sibling) {
				sbuf_i64(&b, new_id[c]);
				if (t->nodes[c].next_sibling != NO_PARENT)
					sbuf_puts(&b, ",");
			}
			sbuf_puts(&b, "]");
		}
		sbuf_puts(&b, "}");
	}
	end = add_sat(start, mul_sat(delta_us, (int64_t)t->nsamples));
	if (duration_us > 0 && add_sat(start, duration_us) > end)
		end = add_sat(start, duration_us);
	sbuf_puts(&b, "],\"startTime\":");
	sbuf_i64(&b, start);
	sbuf_puts(&b, ",\"endTime\":");
	sbuf_i64(&b, end);
	sbuf_puts(&b, ",\"samples\":[");
	for (size_t i = 0; i < t->nsamples; i++) {
		if (i)
			sbuf_puts(&b, ",");
		sbuf_i64(&b, new_id[t->samples[i]]);
	}
	sbuf_puts(&b, "],\"timeDeltas\":[");
	for (size_t i = 0; i < t->nsamples; i++) {
		if (i)
			sbuf_puts(&b, ",");
		sbuf_i64(&b, delta_us);
	}
	sbuf_puts(&b, "]}\n");
	if (b.oom)
		goto out;
	if (b.len > V8_PROFILE_MAX_JSON) {
		errmsg__set(err, errlen, ".cpuprofile would be %zu MiB, over the %llu MiB limit",
		       b.len >> 20, V8_PROFILE_MAX_JSON >> 20);
		ret = -EFBIG;
		goto out;
	}
	*json = b.p;
	*len = b.len;
	b.p = NULL;
	ret = 0;
out:
	free(b.p);
	free(order);
	free(new_id);
	free(stack);
	free(script_no);
	htab__release(&scripts);
	return ret;
}

int v8_cpu_profile__from_pprof(const struct pprof_profile *p, char **json, size_t *len,
			       char *err, size_t errlen)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(p);
	struct tree t = { .prof = p };
	size_t count_index = 0;
	int64_t delta_us = -1;
	int ret;

	*json = NULL;
	*len = 0;
	for (size_t i = 0; i < pprof_profile__sample_type_count(p); i++) {
		const char *unit, *type = pprof_profile__sample_type(p, i, &unit);

		if (!strcmp(type, "samples") && !strcmp(unit, "count")) {
			count_index = i;
			break;
		}
	}
	ret = build_tree(&t, count_index, err, errlen);
	if (ret)
		goto out;
	if (msg->period > 0 && msg->period_type)
		delta_us = to_us(msg->period, pprof_profile__string(p, msg->period_type->unit));
	if (delta_us < 0 && msg->duration_nanos > 0 && t.nsamples)
		delta_us = msg->duration_nanos / 1000 / (int64_t)t.nsamples;
	if (delta_us < 0)
		delta_us = DEFAULT_INTERVAL_US;
	/* timeDeltas are whole µs: a sub-µs period still advances the clock */
	if (delta_us == 0)
		delta_us = 1;
	ret = write_cpuprofile(&t, delta_us, json, len, err, errlen);
out:
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	tree_release(&t);
	return ret;
}

/* Heap profile → pprof. */

struct heap_walk {
	struct pprof_builder *b;
	const struct v8_pprof_opts *o;
	struct htab counts;		/* nodeId -> index into ncount */
	uint64_t *ncount;
	size_t ncounts, ncount_cap;
	bool have_samples;
	uint64_t *path;			/* locations, root first */
	size_t path_cap;
	uint64_t *stack;		/* the same, leaf first */
	size_t stack_cap;
	struct { struct json_object *node; size_t depth; } *pending;
	size_t npending, pending_cap;
};

static int heap_count_samples(struct heap_walk *w, struct json_object *samples, char *err,
			      size_t errlen)
{
	size_t n;

	if (!samples)
		return 0;
	if (!json_object_is_type(samples, json_type_array)) {
		errmsg__set(err, errlen, "\"samples\" is not an array");
		return -EINVAL;
	}
	w->have_samples = true;
	n = json_object_array_length(samples);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(samples, i);
		int64_t id;
		uint32_t idx;
		int r;

		if (!json_int(member(s, "nodeId"), &id)) {
			errmsg__set(err, errlen, "samples[%zu]: nodeId is not an integer", i);
			return -EINVAL;
		}
		r = htab__lookup(&w->counts, mix64((uint64_t)id), idx_eq_none, NULL, NULL, true,
				 (uint32_t)w->ncounts, &idx);
		if (r < 0)
			return r;
		if (r) {
			if (vec_grow((void **)&w->ncount, &w->ncount_cap, w->ncounts + 1,
				     sizeof(*w->ncount)))
				return -ENOMEM;
			w->ncount[w->ncounts++] = 0;
		}
		w->ncount[idx]++;
	}
	return 0;
}

static int heap_node(struct heap_walk *w, struct json_object *node, size_t depth, char *err,
		     size_t errlen)
{
	struct json_object *children = member(node, "children");
	struct call_frame cf;
	struct v8_cpu_node nd = { 0 };
	int64_t self = 0, id = 0, values[2];
	char what[64];
	uint32_t idx;

	if (!json_object_is_type(node, json_type_object)) {
		errmsg__set(err, errlen, "a heap profile node at depth %zu is not an object", depth);
		return -EINVAL;
	}
	if (!json_int(member(node, "id"), &id)) {
		errmsg__set(err, errlen, "a heap profile node at depth %zu has no integer id", depth);
		return -EINVAL;
	}
	snprintf(what, sizeof(what), "heap node id %" PRId64, id);
	if (!json_number(member(node, "selfSize"), &self) || self < 0) {
		errmsg__set(err, errlen, "%s: selfSize is not a non-negative number", what);
		return -EINVAL;
	}
	if (children && !json_object_is_type(children, json_type_array)) {
		errmsg__set(err, errlen, "%s: children is not an array", what);
		return -EINVAL;
	}
	if (depth) {
		if (load_call_frame(node, what, &cf, false, err, errlen))
			return -EINVAL;
		nd.function_name = cf.function_name;
		nd.url = cf.url;
		nd.line = (int32_t)cf.line;
		nd.column = (int32_t)cf.column;
		if (vec_grow((void **)&w->path, &w->path_cap, depth, sizeof(*w->path)))
			return -ENOMEM;
		w->path[depth - 1] = node_location(w->b, &nd);
		if (!w->path[depth - 1])
			return -ENOMEM;
	}
	for (size_t i = children ? json_object_array_length(children) : 0; i-- > 0;) {
		if (vec_grow((void **)&w->pending, &w->pending_cap, w->npending + 1, sizeof(*w->pending)))
			return -ENOMEM;
		w->pending[w->npending].node = json_object_array_get_idx(children, i);
		w->pending[w->npending++].depth = depth + 1;
	}
	if (!self || !depth)
		return 0;
	values[0] = 0;
	if (!htab__lookup(&w->counts, mix64((uint64_t)id), idx_eq_none, NULL, NULL, false, 0,
			  &idx))
		values[0] = (int64_t)w->ncount[idx];
	else if (!w->have_samples)
		values[0] = 1;
	values[1] = self;
	if (vec_grow((void **)&w->stack, &w->stack_cap, depth, sizeof(*w->stack)))
		return -ENOMEM;
	for (size_t i = 0; i < depth; i++)
		w->stack[i] = w->path[depth - 1 - i];
	return pprof_builder__add_sample(w->b, w->stack, depth, values, 2, w->o->labels,
					 w->o->nlabels);
}

int v8_heap_profile__to_pprof_json(struct json_object *profile, const struct v8_pprof_opts *o,
				   uint64_t sampling_interval, struct pprof_builder **out,
				   char *err, size_t errlen)
{
	static const struct v8_pprof_opts no_opts;
	struct heap_walk w = { .o = o ? o : &no_opts };
	struct json_object *prof;
	char comment[200], interval[48];
	int ret;

	*out = NULL;
	prof = unwrap(profile, "head", err, errlen);
	if (!prof)
		return -EINVAL;
	w.b = pprof_builder__new();
	if (!w.b) {
		ret = -ENOMEM;
		goto out;
	}
	ret = heap_count_samples(&w, member(prof, "samples"), err, errlen);
	if (ret)
		goto out;
	ret = pprof_builder__add_sample_type(w.b, "alloc_objects", "count");
	if (!ret)
		ret = pprof_builder__add_sample_type(w.b, "alloc_space", "bytes");
	if (ret)
		goto out;
	pprof_builder__set_default_sample_type(w.b, "alloc_space");
	pprof_builder__set_period(w.b, "space", "bytes",
				  sampling_interval > INT64_MAX ? INT64_MAX
								: (int64_t)sampling_interval);
	pprof_builder__set_time(w.b, w.o->time_nanos, 0);
	for (size_t i = 0; i < w.o->ncomments; i++) {
		ret = pprof_builder__add_comment(w.b, w.o->comments[i]);
		if (ret)
			goto out;
	}
	if (sampling_interval)
		snprintf(interval, sizeof(interval), "interval %" PRIu64 " bytes",
			 sampling_interval);
	else
		snprintf(interval, sizeof(interval), "interval unknown");
	snprintf(comment, sizeof(comment),
		 "heap: allocations sampled during the window (V8 sampling heap profiler, %s); "
		 "this is not retained memory",
		 interval);
	ret = pprof_builder__add_comment(w.b, comment);
	if (ret)
		goto out;

	/* Iterative: the tree is as deep as the deepest stack V8 kept. */
	w.pending = malloc(sizeof(*w.pending));
	if (!w.pending) {
		ret = -ENOMEM;
		goto out;
	}
	w.pending_cap = 1;
	w.pending[w.npending].node = member(prof, "head");
	w.pending[w.npending++].depth = 0;
	while (!ret && w.npending) {
		w.npending--;
		ret = heap_node(&w, w.pending[w.npending].node, w.pending[w.npending].depth, err, errlen);
	}
out:
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	htab__release(&w.counts);
	free(w.ncount);
	free(w.path);
	free(w.stack);
	free(w.pending);
	if (ret) {
		pprof_builder__free(w.b);
		return ret;
	}
	*out = w.b;
	return 0;
}

int v8_heap_profile__to_pprof(const char *json, size_t len, const struct v8_pprof_opts *o,
			      uint64_t sampling_interval, struct pprof_builder **out, char *err,
			      size_t errlen)
{
	struct json_object *obj = v8_json__parse(json, len, err, errlen);
	int ret;

	*out = NULL;
	if (!obj)
		return -errno;
	ret = v8_heap_profile__to_pprof_json(obj, o, sampling_interval, out, err, errlen);
	json_object_put(obj);
	return ret;
}

/* Folded stacks. */

struct folded_line {
	char *stack;
	int64_t value;
};

struct folded {
	struct folded_line *lines;
	size_t n, cap;
	struct htab tab;
};

static bool folded_eq(const void *ctx, uint32_t val, const void *key)
{
	return !strcmp(((const struct folded *)ctx)->lines[val].stack, key);
}

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

/* A frame's name in folded text and flame graphs. */
static void folded_name(struct sbuf *b, const struct pprof_frame *f)
{
	const char *name = f->name;
	char addr[24];
	size_t start = b->len;

	if (!f->has_function) {
		snprintf(addr, sizeof(addr), "0x%" PRIx64, f->address);
		name = addr;
	} else if (!*name) {
		name = *f->system_name ? f->system_name : "[unknown]";
	}
	sbuf_puts(b, name);
	for (size_t i = start; !b->oom && i < b->len; i++) {
		if (b->p[i] == ';')
			b->p[i] = ':';
		else if (b->p[i] == '\n' || b->p[i] == '\r')
			b->p[i] = ' ';
	}
}

int folded__from_pprof(const struct pprof_profile *p, size_t sample_index, FILE *out)
{
	struct folded fo = { 0 };
	struct pprof_stack st = { 0 };
	struct sbuf b = { 0 };
	int ret = 0;

	if (sample_index >= pprof_profile__sample_type_count(p))
		return -EINVAL;
	for (size_t s = 0; s < pprof_profile__sample_count(p); s++) {
		int64_t v = pprof_profile__value(p, s, sample_index);
		uint32_t idx;
		int r;

		if (!v)
			continue;
		ret = pprof_profile__stack(p, s, &st);
		if (ret)
			goto out;
		b.len = 0;
		sbuf_puts(&b, "");
		for (size_t i = st.n; i-- > 0;) {
			folded_name(&b, st.frames[i]);
			if (i)
				sbuf_puts(&b, ";");
		}
		if (b.oom) {
			ret = -ENOMEM;
			goto out;
		}
		r = htab__lookup(&fo.tab, hash_str(0, b.p), folded_eq, &fo, b.p, true,
				 (uint32_t)fo.n, &idx);
		if (r < 0) {
			ret = r;
			goto out;
		}
		if (r) {
			char *copy = strdup(b.p);

			if (!copy || vec_grow((void **)&fo.lines, &fo.cap, fo.n + 1,
					      sizeof(*fo.lines))) {
				free(copy);
				/* the table now names a line that does not exist: drop it all */
				ret = -ENOMEM;
				goto out;
			}
			fo.lines[fo.n++] = (struct folded_line){ copy, 0 };
		}
		fo.lines[idx].value = (int64_t)((uint64_t)fo.lines[idx].value + (uint64_t)v);
	}
	if (fo.n)
		qsort(fo.lines, fo.n, sizeof(*fo.lines), cmp_folded);
	for (size_t i = 0; i < fo.n; i++) {
		if (!fo.lines[i].value)
			continue;
		if (fprintf(out, "%s %" PRId64 "\n", fo.lines[i].stack, fo.lines[i].value) < 0) {
			ret = -EIO;
			goto out;
		}
	}
out:
	for (size_t i = 0; i < fo.n; i++)
		free(fo.lines[i].stack);
	free(fo.lines);
	htab__release(&fo.tab);
	pprof_stack__release(&st);
	free(b.p);
	return ret;
}

static int folded_line(struct pprof_builder *b, char *line, size_t lineno, uint64_t **locs,
		       size_t *cap, char *err, size_t errlen)
{
	char *end = line + strlen(line), *count, *numend;
	size_t n = 0;
	int64_t value;
	long long v;
	int ret;

	while (end > line && strchr(" \t\r", end[-1]))
		*--end = '\0';
	if (end == line || line[0] == '#')
		return 0;
	count = end;
	while (count > line && !strchr(" \t", count[-1]))
		count--;
	errno = 0;
	v = strtoll(count, &numend, 10);
	if (count == line || numend != end || errno) {
		errmsg__set(err, errlen, "line %zu: no sample count at the end of the line", lineno);
		return -EINVAL;
	}
	while (count > line && strchr(" \t", count[-1]))
		*--count = '\0';
	if (!v)
		return 0;
	/* frames come root first; pprof wants the leaf first */
	for (char *f = count; f > line;) {
		char *start = f;
		struct pprof_line pl = { 0 };

		while (start > line && start[-1] != ';')
			start--;
		if (start < f) {
			char saved = *f;

			*f = '\0';
			if (vec_grow((void **)locs, cap, n + 1, sizeof(**locs)))
				return -ENOMEM;
			pl.function_id = pprof_builder__function(b, start, start, NULL, 0);
			(*locs)[n] = pl.function_id ? pprof_builder__location(b, 0, 0, &pl, 1) : 0;
			*f = saved;
			if (!(*locs)[n++])
				return -ENOMEM;
		}
		f = start > line ? start - 1 : line;
	}
	if (!n) {
		errmsg__set(err, errlen, "line %zu: no frames before the count", lineno);
		return -EINVAL;
	}
	value = v;
	ret = pprof_builder__add_sample(b, *locs, n, &value, 1, NULL, 0);
	return ret ? ret : 1;
}

int folded__to_pprof(const char *text, size_t len, struct pprof_builder **out, char *err,
		     size_t errlen)
{
	struct pprof_builder *b;
	uint64_t *locs = NULL;
	size_t cap = 0, lineno = 0, stacks = 0;
	char *line = NULL;
	int ret = 0;

	*out = NULL;
	if (memchr(text, '\0', len)) {
		errmsg__set(err, errlen, "a NUL byte at offset %zu: not folded text",
		       (size_t)((const char *)memchr(text, '\0', len) - text));
		return -EINVAL;
	}
	b = pprof_builder__new();
	if (!b || pprof_builder__add_sample_type(b, "samples", "count")) {
		ret = -ENOMEM;
		goto out;
	}
	if (pprof_builder__add_comment(b, "source: folded stacks")) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - text) - pos : len - pos;

		lineno++;
		free(line);
		line = strndup(text + pos, n);
		if (!line) {
			ret = -ENOMEM;
			goto out;
		}
		pos += n + 1;
		ret = folded_line(b, line, lineno, &locs, &cap, err, errlen);
		if (ret < 0)
			goto out;
		stacks += (size_t)ret;
		ret = 0;
	}
	if (!stacks) {
		errmsg__set(err, errlen, "no \"frame;frame;... count\" lines");
		ret = -EINVAL;
	}
out:
	if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	free(line);
	free(locs);
	if (ret) {
		pprof_builder__free(b);
		return ret;
	}
	*out = b;
	return 0;
}
