// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* remap_pprof: a profile read back, named through source maps; see remap_pprof.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/attribute/remap_pprof.h"
#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/pprof_reader.h"
#include "user/attribute/source_maps.h"

#include "profile.pb-c.h"

struct remap {
	Perftools__Profiles__Profile *p;
	size_t strings_cap, functions_cap;
	struct index_table added_strings;	/* string_table indices added, by text */
	size_t first_added;
	struct index_table by_id;		/* functions by id */
	struct index_table added_fns;		/* functions added, by content */
	size_t first_added_fn;
	uint64_t next_id;
};

bool remap_pprof__position(const char *system_name, const char **script, size_t *script_len,
			   uint32_t *line, uint32_t *column)
{
	const char *end = system_name + strlen(system_name), *p = end, *space;
	unsigned long v[2];

	for (int k = 1; k >= 0; k--) {
		const char *digits_end = p;

		while (p > system_name && p[-1] >= '0' && p[-1] <= '9')
			p--;
		if (p == digits_end || digits_end - p > 9 || p == system_name || p[-1] != ':')
			return false;
		v[k] = strtoul(p, NULL, 10);
		p--;
	}
	space = p;
	while (space > system_name && space[-1] != ' ')
		space--;
	if (space == system_name || space == p || !v[0])
		return false;
	*script = space;
	*script_len = (size_t)(p - space);
	*line = (uint32_t)v[0];
	*column = (uint32_t)v[1];
	return true;
}

static const char *str(const struct remap *r, int64_t idx)
{
	return idx >= 0 && (size_t)idx < r->p->n_string_table ? r->p->string_table[idx] : "";
}

static bool string_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct remap *r = ctx;

	return !strcmp(r->p->string_table[r->first_added + idx], key);
}

/* The string table index of s, added once.  -1 on ENOMEM. */
static int64_t intern(struct remap *r, const char *s)
{
	uint32_t h = hash__fold32(hash__field(HASH_SEED, s));
	Perftools__Profiles__Profile *p = r->p;
	size_t slot;
	long i;
	char *copy;

	if (index_table__reserve(&r->added_strings))
		return -1;
	i = index_table__lookup(&r->added_strings, h, string_is, r, s, &slot);
	if (i >= 0)
		return (int64_t)(r->first_added + (size_t)i);
	if (array_grow(&p->string_table, &r->strings_cap, p->n_string_table + 1))
		return -1;
	copy = strdup(s);
	if (!copy)
		return -1;
	p->string_table[p->n_string_table] = copy;
	index_table__set(&r->added_strings, slot, h, (uint32_t)(p->n_string_table - r->first_added));
	return (int64_t)p->n_string_table++;
}

static uint32_t fn_hash(const Perftools__Profiles__Function *f)
{
	uint64_t h = hash__word(HASH_SEED, (uint64_t)f->name);

	h = hash__word(h, (uint64_t)f->system_name);
	h = hash__word(h, (uint64_t)f->filename);
	return hash__fold32(hash__word(h, (uint64_t)f->start_line));
}

static bool fn_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct remap *r = ctx;
	const Perftools__Profiles__Function *a = r->p->function[r->first_added_fn + idx], *k = key;

	return a->name == k->name && a->system_name == k->system_name &&
	       a->filename == k->filename && a->start_line == k->start_line;
}

/* The id of a function with k's fields, added once.  0 on ENOMEM. */
static uint64_t function_id(struct remap *r, const Perftools__Profiles__Function *k)
{
	Perftools__Profiles__Profile *p = r->p;
	Perftools__Profiles__Function *f;
	uint32_t h = fn_hash(k);
	size_t slot;
	long i;

	if (index_table__reserve(&r->added_fns))
		return 0;
	i = index_table__lookup(&r->added_fns, h, fn_is, r, k, &slot);
	if (i >= 0)
		return p->function[r->first_added_fn + (size_t)i]->id;
	if (array_grow(&p->function, &r->functions_cap, p->n_function + 1))
		return 0;
	f = malloc(sizeof(*f));
	if (!f)
		return 0;
	perftools__profiles__function__init(f);
	f->id = r->next_id++;
	f->name = k->name;
	f->system_name = k->system_name;
	f->filename = k->filename;
	f->start_line = k->start_line;
	p->function[p->n_function] = f;
	index_table__set(&r->added_fns, slot, h, (uint32_t)(p->n_function - r->first_added_fn));
	p->n_function++;
	return f->id;
}

static bool id_is(const void *ctx, uint32_t idx, const void *key)
{
	const struct remap *r = ctx;

	return r->p->function[idx]->id == *(const uint64_t *)key;
}

static const Perftools__Profiles__Function *find_function(struct remap *r, uint64_t id)
{
	uint32_t h = hash__fold32(hash__word(HASH_SEED, id));
	size_t slot;
	long i = index_table__lookup(&r->by_id, h, id_is, r, &id, &slot);

	return i >= 0 ? r->p->function[i] : NULL;
}

/* One Line: 1 renamed, 0 left alone, -ENOMEM. */
static int remap_line(struct remap *r, struct source_maps *sms, Perftools__Profiles__Line *ln)
{
	const Perftools__Profiles__Function *f = find_function(r, ln->function_id);
	const char *system, *file, *script;
	char generated[4200], script_buf[4096];
	struct source_frame sf = { 0 };
	struct source_origin o;
	Perftools__Profiles__Function k;
	size_t script_len;
	uint64_t id;
	int rc;

	if (!f)
		return 0;
	system = str(r, f->system_name);
	file = str(r, f->filename);
	if (!*file)
		return 0;
	sf.function = str(r, f->name);
	if (remap_pprof__position(system, &script, &script_len, &sf.fn_line, &sf.fn_column)) {
		/* a script other than the file: mapped already */
		if (strlen(file) != script_len || memcmp(file, script, script_len))
			return 0;
		if (ln->line > 0 && ln->column > 0 && ln->line <= UINT32_MAX &&
		    ln->column <= UINT32_MAX) {
			sf.at_line = (uint32_t)ln->line;
			sf.at_column = (uint32_t)ln->column;
		}
		snprintf(generated, sizeof(generated), "%s", system);
	} else {
		/* V8's, converted: the Line at the start line holds the column */
		if (f->start_line <= 0 || f->start_line > UINT32_MAX || ln->line != f->start_line ||
		    ln->column <= 0 || ln->column > UINT32_MAX)
			return 0;
		sf.fn_line = (uint32_t)f->start_line;
		sf.fn_column = (uint32_t)ln->column;
		snprintf(generated, sizeof(generated), "%s %s:%u:%u", system, file, sf.fn_line,
			 sf.fn_column);
	}
	snprintf(script_buf, sizeof(script_buf), "%s", file);
	rc = source_maps__map(sms, 0, 0, script_buf, &sf, &o);
	if (rc <= 0)
		return rc;
	perftools__profiles__function__init(&k);
	k.name = intern(r, o.function);
	k.system_name = intern(r, generated);
	k.filename = intern(r, o.file);
	k.start_line = o.start_line;
	if (k.name < 0 || k.system_name < 0 || k.filename < 0)
		return -ENOMEM;
	id = function_id(r, &k);
	if (!id)
		return -ENOMEM;
	ln->function_id = id;
	ln->line = o.line;
	ln->column = sf.at_line ? o.column : 0;
	return 1;
}

int remap_pprof__apply(struct source_maps *sms, const uint8_t *in, size_t len, uint8_t **out,
		       size_t *out_len, size_t *mapped, char *err, size_t errlen)
{
	struct remap r = { 0 };
	struct pprof_profile *view;
	Perftools__Profiles__Profile *p;
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	*mapped = 0;
	/* what the reader refuses (its checks are pprof's) is not a profile here either */
	rc = pprof_profile__parse(in, len, &view, err, errlen);
	if (rc)
		return rc;
	pprof_profile__free(view);
	p = perftools__profiles__profile__unpack(NULL, len, in);
	if (!p) {
		errmsg__set(err, errlen, "not a pprof profile");
		return -EINVAL;
	}
	rc = pprof_validate(p, err, errlen);
	if (rc)
		goto out;
	r.p = p;
	r.strings_cap = p->n_string_table;
	r.functions_cap = p->n_function;
	r.first_added = p->n_string_table;
	r.first_added_fn = p->n_function;
	for (size_t i = 0; i < p->n_function; i++) {
		uint32_t h = hash__fold32(hash__word(HASH_SEED, p->function[i]->id));
		size_t slot;

		if (p->function[i]->id >= r.next_id)
			r.next_id = p->function[i]->id + 1;
		if (index_table__reserve(&r.by_id)) {
			rc = -ENOMEM;
			goto out;
		}
		if (index_table__lookup(&r.by_id, h, id_is, &r, &p->function[i]->id, &slot) < 0)
			index_table__set(&r.by_id, slot, h, (uint32_t)i);
	}
	for (size_t i = 0; i < p->n_location && !rc; i++)
		for (size_t j = 0; j < p->location[i]->n_line; j++) {
			rc = remap_line(&r, sms, p->location[i]->line[j]);
			if (rc < 0)
				break;
			*mapped += (size_t)rc;
			rc = 0;
		}
	if (rc)
		goto out;
	*out_len = perftools__profiles__profile__get_packed_size(p);
	*out = malloc(*out_len ? *out_len : 1);
	if (!*out) {
		rc = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(p, *out);
	/*
	 * protobuf-c keeps fields it does not know and writes them back as it
	 * read them, not always decodably (a tag of field 0 in a long varint):
	 * what cannot be read again is refused, not handed on.
	 */
	rc = pprof_profile__parse(*out, *out_len, &view, err, errlen);
	if (rc) {
		free(*out);
		*out = NULL;
		*out_len = 0;
		errmsg__set(err, errlen, "the profile cannot be written back: malformed fields");
		rc = -EINVAL;
		goto out;
	}
	pprof_profile__free(view);
out:
	index_table__release(&r.added_strings);
	index_table__release(&r.by_id);
	index_table__release(&r.added_fns);
	/* what was added is malloc'd like what unpack made: freed with it */
	perftools__profiles__profile__free_unpacked(p, NULL);
	return rc;
}
