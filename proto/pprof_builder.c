// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pprof_builder: see pprof_builder.h.
 *
 * Everything is kept in flat arrays of small records that refer to each
 * other by index; the protobuf-c structs exist only for the duration of
 * pprof_builder__serialize().  Dedup and sample merging use index tables
 * (lib/index_table.h), which keep each entry's 32-bit hash next to its
 * index, so growing a table never rehashes the content and most probe
 * mismatches are rejected without touching the entries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/fileio.h"
#include "lib/gzip.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/pprof_builder.h"
#include "profile.pb-c.h"

struct pb_mapping {
	uint64_t memory_start, memory_limit, file_offset;
	int64_t filename, build_id;
	bool has_functions, has_filenames, has_line_numbers;
};

struct pb_function {
	int64_t name, system_name, filename, start_line;
};

struct pb_location {
	uint64_t mapping_id, address;
	size_t line_off;	/* into b->lines */
	size_t nlines;
};

struct pb_label {
	int64_t key, str, num, num_unit;
};

struct pb_sample {
	size_t loc_off;		/* into b->loc_ids */
	size_t nlocs;
	size_t label_off;	/* into b->labels */
	size_t nlabels;
	/* values live at b->values[index * b->ntypes] */
};

struct pb_value_type {
	int64_t type, unit;
};

struct pprof_builder {
	char **strs;
	size_t nstrs, strs_cap;
	struct index_table str_tab;

	struct pb_value_type *types;
	size_t ntypes, types_cap;
	int64_t default_type;
	struct pb_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	int64_t *comments;
	size_t ncomments, comments_cap;

	struct pb_mapping *mappings;
	size_t nmappings, mappings_cap;
	struct index_table mapping_tab;

	struct pb_function *functions;
	size_t nfunctions, functions_cap;
	struct index_table function_tab;

	struct pb_location *locations;
	size_t nlocations, locations_cap;
	struct index_table location_tab;
	struct pprof_line *lines;
	size_t nlines, lines_cap;

	struct pb_sample *samples;
	size_t nsamples, samples_cap;
	struct index_table sample_tab;
	uint64_t *loc_ids;
	size_t nloc_ids, loc_ids_cap;
	struct pb_label *labels;
	size_t nlabels, labels_cap;
	int64_t *values;
	size_t values_cap;	/* in int64_t; nsamples * ntypes used */

	/* Scratch for sorting one sample's labels before lookup. */
	struct pb_label *scratch;
	size_t scratch_cap;

	/* First error from a setter that cannot report one; serialize fails with it. */
	int sticky_err;
};

/* Fill the slot a lookup ended at with entry idx: indexes are 32-bit. */
static int tab_insert(struct index_table *t, size_t slot, uint32_t hash, size_t idx)
{
	if (idx >= UINT32_MAX)
		return -ENOMEM;
	index_table__set(t, slot, hash, (uint32_t)idx);
	return 0;
}

/* Strings. */

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof_builder *b = ctx;
	return !strcmp(b->strs[idx], key);
}

int64_t pprof_builder__string(struct pprof_builder *b, const char *s)
{
	size_t slot;
	uint32_t hash;
	long found;
	char *copy;

	if (!s || !*s)
		return 0;
	if (index_table__reserve(&b->str_tab))
		goto nomem;
	hash = hash__fold32(hash__bytes(HASH_SEED, s, strlen(s)));
	found = index_table__lookup(&b->str_tab, hash, str_eq, b, s, &slot);
	if (found >= 0)
		return found;
	if (array_grow(&b->strs, &b->strs_cap, b->nstrs + 1))
		goto nomem;
	copy = strdup(s);
	if (!copy)
		goto nomem;
	if (tab_insert(&b->str_tab, slot, hash, b->nstrs)) {
		free(copy);
		goto nomem;
	}
	b->strs[b->nstrs] = copy;
	return (int64_t)b->nstrs++;
nomem:
	errno = ENOMEM;
	return -ENOMEM;
}

/* Like pprof_builder__string() for setters that return void: remembers the failure. */
static int64_t string_sticky(struct pprof_builder *b, const char *s)
{
	int64_t idx = pprof_builder__string(b, s);

	if (idx < 0) {
		if (!b->sticky_err)
			b->sticky_err = (int)idx;
		return 0;
	}
	return idx;
}

struct pprof_builder *pprof_builder__new(void)
{
	struct pprof_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->strs = malloc(16 * sizeof(*b->strs));
	if (!b->strs)
		goto err;
	b->strs_cap = 16;
	b->strs[0] = strdup("");
	if (!b->strs[0])
		goto err;
	b->nstrs = 1;
	/* "" is index 0 by definition and never looked up in the table. */
	return b;
err:
	free(b->strs);
	free(b);
	errno = ENOMEM;
	return NULL;
}

void pprof_builder__free(struct pprof_builder *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nstrs; i++)
		free(b->strs[i]);
	free(b->strs);
	index_table__release(&b->str_tab);
	free(b->types);
	free(b->comments);
	free(b->mappings);
	index_table__release(&b->mapping_tab);
	free(b->functions);
	index_table__release(&b->function_tab);
	free(b->locations);
	index_table__release(&b->location_tab);
	free(b->lines);
	free(b->samples);
	index_table__release(&b->sample_tab);
	free(b->loc_ids);
	free(b->labels);
	free(b->values);
	free(b->scratch);
	free(b);
}

/* Header fields. */

int pprof_builder__add_sample_type(struct pprof_builder *b, const char *type, const char *unit)
{
	int64_t t, u;

	if (b->nsamples)
		return -EINVAL;
	if (array_grow(&b->types, &b->types_cap, b->ntypes + 1))
		return -ENOMEM;
	t = pprof_builder__string(b, type);
	u = pprof_builder__string(b, unit);
	if (t < 0 || u < 0)
		return -ENOMEM;
	b->types[b->ntypes].type = t;
	b->types[b->ntypes].unit = u;
	b->ntypes++;
	return 0;
}

void pprof_builder__set_default_sample_type(struct pprof_builder *b, const char *type)
{
	b->default_type = string_sticky(b, type);
}

void pprof_builder__set_period(struct pprof_builder *b, const char *type, const char *unit,
			       int64_t period)
{
	b->period_type.type = string_sticky(b, type);
	b->period_type.unit = string_sticky(b, unit);
	b->period = period;
}

void pprof_builder__set_time(struct pprof_builder *b, int64_t time_nanos, int64_t duration_nanos)
{
	b->time_nanos = time_nanos;
	b->duration_nanos = duration_nanos;
}

int pprof_builder__add_comment(struct pprof_builder *b, const char *comment)
{
	int64_t idx;

	if (array_grow(&b->comments, &b->comments_cap, b->ncomments + 1))
		return -ENOMEM;
	idx = pprof_builder__string(b, comment);
	if (idx < 0)
		return (int)idx;
	b->comments[b->ncomments++] = idx;
	return 0;
}

/* Mappings. */

static uint32_t mapping_hash(const struct pb_mapping *m)
{
	uint64_t h = HASH_SEED;

	h = hash__word(h, m->memory_start);
	h = hash__word(h, m->memory_limit);
	h = hash__word(h, m->file_offset);
	h = hash__word(h, (uint64_t)m->filename);
	h = hash__word(h, (uint64_t)m->build_id);
	h = hash__word(h, m->has_functions | m->has_filenames << 1 | m->has_line_numbers << 2);
	return hash__fold32(h);
}

static bool mapping_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof_builder *b = ctx;
	const struct pb_mapping *a = &b->mappings[idx], *k = key;

	return a->memory_start == k->memory_start && a->memory_limit == k->memory_limit &&
	       a->file_offset == k->file_offset && a->filename == k->filename &&
	       a->build_id == k->build_id && a->has_functions == k->has_functions &&
	       a->has_filenames == k->has_filenames && a->has_line_numbers == k->has_line_numbers;
}

uint64_t pprof_builder__mapping(struct pprof_builder *b, const struct pprof_mapping_desc *m)
{
	struct pb_mapping key = {
		.memory_start = m->memory_start,
		.memory_limit = m->memory_limit,
		.file_offset = m->file_offset,
		.has_functions = m->has_functions,
		.has_filenames = m->has_filenames,
		.has_line_numbers = m->has_line_numbers,
	};
	size_t slot;
	uint32_t hash;
	long found;

	key.filename = pprof_builder__string(b, m->filename);
	key.build_id = pprof_builder__string(b, m->build_id);
	if (key.filename < 0 || key.build_id < 0)
		goto nomem;
	if (index_table__reserve(&b->mapping_tab))
		goto nomem;
	hash = mapping_hash(&key);
	found = index_table__lookup(&b->mapping_tab, hash, mapping_eq, b, &key, &slot);
	if (found >= 0)
		return (uint64_t)found + 1;
	if (array_grow(&b->mappings, &b->mappings_cap, b->nmappings + 1))
		goto nomem;
	if (tab_insert(&b->mapping_tab, slot, hash, b->nmappings))
		goto nomem;
	b->mappings[b->nmappings++] = key;
	return b->nmappings;
nomem:
	errno = ENOMEM;
	return 0;
}

/* Functions. */

static uint32_t function_hash(const struct pb_function *f)
{
	uint64_t h = HASH_SEED;

	h = hash__word(h, (uint64_t)f->name);
	h = hash__word(h, (uint64_t)f->system_name);
	h = hash__word(h, (uint64_t)f->filename);
	h = hash__word(h, (uint64_t)f->start_line);
	return hash__fold32(h);
}

static bool function_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof_builder *b = ctx;
	const struct pb_function *a = &b->functions[idx], *k = key;

	return a->name == k->name && a->system_name == k->system_name &&
	       a->filename == k->filename && a->start_line == k->start_line;
}

uint64_t pprof_builder__function(struct pprof_builder *b, const char *name,
				 const char *system_name, const char *filename,
				 int64_t start_line)
{
	struct pb_function key = { .start_line = start_line };
	size_t slot;
	uint32_t hash;
	long found;

	key.name = pprof_builder__string(b, name);
	key.system_name = pprof_builder__string(b, system_name);
	key.filename = pprof_builder__string(b, filename);
	if (key.name < 0 || key.system_name < 0 || key.filename < 0)
		goto nomem;
	if (index_table__reserve(&b->function_tab))
		goto nomem;
	hash = function_hash(&key);
	found = index_table__lookup(&b->function_tab, hash, function_eq, b, &key, &slot);
	if (found >= 0)
		return (uint64_t)found + 1;
	if (array_grow(&b->functions, &b->functions_cap, b->nfunctions + 1))
		goto nomem;
	if (tab_insert(&b->function_tab, slot, hash, b->nfunctions))
		goto nomem;
	b->functions[b->nfunctions++] = key;
	return b->nfunctions;
nomem:
	errno = ENOMEM;
	return 0;
}

/* Locations. */

struct location_key {
	uint64_t mapping_id, address;
	const struct pprof_line *lines;
	size_t nlines;
};

static bool location_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof_builder *b = ctx;
	const struct pb_location *a = &b->locations[idx];
	const struct location_key *k = key;
	const struct pprof_line *al = &b->lines[a->line_off];

	if (a->mapping_id != k->mapping_id || a->address != k->address || a->nlines != k->nlines)
		return false;
	for (size_t i = 0; i < k->nlines; i++)
		if (al[i].function_id != k->lines[i].function_id ||
		    al[i].line != k->lines[i].line || al[i].column != k->lines[i].column)
			return false;
	return true;
}

uint64_t pprof_builder__location(struct pprof_builder *b, uint64_t mapping_id,
				 uint64_t address, const struct pprof_line *lines,
				 size_t nlines)
{
	struct location_key key = { mapping_id, address, lines, nlines };
	struct pb_location *loc;
	size_t slot;
	uint64_t h = HASH_SEED;
	uint32_t hash;
	long found;

	if (mapping_id > b->nmappings || (nlines && !lines)) {
		errno = EINVAL;
		return 0;
	}
	h = hash__word(h, mapping_id);
	h = hash__word(h, address);
	for (size_t i = 0; i < nlines; i++) {
		/* A Line must name a function that exists (pprof's CheckValid). */
		if (!lines[i].function_id || lines[i].function_id > b->nfunctions) {
			errno = EINVAL;
			return 0;
		}
		h = hash__word(h, lines[i].function_id);
		h = hash__word(h, (uint64_t)lines[i].line);
		h = hash__word(h, (uint64_t)lines[i].column);
	}
	hash = hash__fold32(h);
	if (index_table__reserve(&b->location_tab))
		goto nomem;
	found = index_table__lookup(&b->location_tab, hash, location_eq, b, &key, &slot);
	if (found >= 0)
		return (uint64_t)found + 1;
	if (array_grow(&b->locations, &b->locations_cap, b->nlocations + 1) ||
	    array_grow(&b->lines, &b->lines_cap, b->nlines + nlines))
		goto nomem;
	if (tab_insert(&b->location_tab, slot, hash, b->nlocations))
		goto nomem;
	loc = &b->locations[b->nlocations++];
	loc->mapping_id = mapping_id;
	loc->address = address;
	loc->line_off = b->nlines;
	loc->nlines = nlines;
	if (nlines)
		memcpy(&b->lines[b->nlines], lines, nlines * sizeof(*lines));
	b->nlines += nlines;
	return b->nlocations;
nomem:
	errno = ENOMEM;
	return 0;
}

/* Samples. */

struct sample_key {
	const uint64_t *locs;
	size_t nlocs;
	const struct pb_label *labels;
	size_t nlabels;
};

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct pprof_builder *b = ctx;
	const struct pb_sample *s = &b->samples[idx];
	const struct sample_key *k = key;

	if (s->nlocs != k->nlocs || s->nlabels != k->nlabels)
		return false;
	if (k->nlocs && memcmp(&b->loc_ids[s->loc_off], k->locs, k->nlocs * sizeof(*k->locs)))
		return false;
	for (size_t i = 0; i < k->nlabels; i++) {
		const struct pb_label *x = &b->labels[s->label_off + i], *y = &k->labels[i];

		if (x->key != y->key || x->str != y->str || x->num != y->num ||
		    x->num_unit != y->num_unit)
			return false;
	}
	return true;
}

static int cmp_i64(int64_t a, int64_t b)
{
	return a < b ? -1 : a > b;
}

/* Label order carries no meaning in pprof, so equal label sets must merge whatever their order. */
static int label_cmp(const void *pa, const void *pb)
{
	const struct pb_label *a = pa, *b = pb;
	int c;

	if ((c = cmp_i64(a->key, b->key)))
		return c;
	if ((c = cmp_i64(a->str, b->str)))
		return c;
	if ((c = cmp_i64(a->num, b->num)))
		return c;
	return cmp_i64(a->num_unit, b->num_unit);
}

/* The labels as interned records in b->scratch, sorted: equal sets compare equal. */
static int intern_labels(struct pprof_builder *b, const struct pprof_label *labels,
			 size_t nlabels)
{
	if (array_grow(&b->scratch, &b->scratch_cap, nlabels))
		return -ENOMEM;
	for (size_t i = 0; i < nlabels; i++) {
		struct pb_label *l = &b->scratch[i];

		if (!labels[i].key || !*labels[i].key)
			return -EINVAL;
		l->key = pprof_builder__string(b, labels[i].key);
		if (labels[i].str) {
			l->str = pprof_builder__string(b, labels[i].str);
			l->num = 0;
			l->num_unit = 0;	/* num_unit only goes with num */
		} else {
			l->str = 0;
			l->num = labels[i].num;
			l->num_unit = pprof_builder__string(b, labels[i].num_unit);
		}
		if (l->key < 0 || l->str < 0 || l->num_unit < 0)
			return -ENOMEM;
	}
	if (nlabels > 1)
		qsort(b->scratch, nlabels, sizeof(*b->scratch), label_cmp);
	return 0;
}

static uint32_t sample_hash(const struct sample_key *k)
{
	uint64_t h = HASH_SEED;

	for (size_t i = 0; i < k->nlocs; i++)
		h = hash__word(h, k->locs[i]);
	h = hash__word(h, k->nlocs);
	for (size_t i = 0; i < k->nlabels; i++) {
		h = hash__word(h, (uint64_t)k->labels[i].key);
		h = hash__word(h, (uint64_t)k->labels[i].str);
		h = hash__word(h, (uint64_t)k->labels[i].num);
		h = hash__word(h, (uint64_t)k->labels[i].num_unit);
	}
	return hash__fold32(h);
}

/* A new sample of key with values, indexed at slot. */
static int sample_append(struct pprof_builder *b, const struct sample_key *k,
			 const int64_t *values, uint32_t hash, size_t slot)
{
	struct pb_sample *s;

	if (array_grow(&b->samples, &b->samples_cap, b->nsamples + 1) ||
	    array_grow(&b->loc_ids, &b->loc_ids_cap, b->nloc_ids + k->nlocs) ||
	    array_grow(&b->labels, &b->labels_cap, b->nlabels + k->nlabels) ||
	    array_grow(&b->values, &b->values_cap, (b->nsamples + 1) * b->ntypes))
		return -ENOMEM;
	if (tab_insert(&b->sample_tab, slot, hash, b->nsamples))
		return -ENOMEM;
	s = &b->samples[b->nsamples];
	s->loc_off = b->nloc_ids;
	s->nlocs = k->nlocs;
	s->label_off = b->nlabels;
	s->nlabels = k->nlabels;
	if (k->nlocs)
		memcpy(&b->loc_ids[b->nloc_ids], k->locs, k->nlocs * sizeof(*k->locs));
	b->nloc_ids += k->nlocs;
	if (k->nlabels)
		memcpy(&b->labels[b->nlabels], k->labels, k->nlabels * sizeof(*k->labels));
	b->nlabels += k->nlabels;
	memcpy(&b->values[b->nsamples * b->ntypes], values, b->ntypes * sizeof(*values));
	b->nsamples++;
	return 0;
}

int pprof_builder__add_sample(struct pprof_builder *b, const uint64_t *location_ids,
			      size_t nlocations, const int64_t *values, size_t nvalues,
			      const struct pprof_label *labels, size_t nlabels)
{
	struct sample_key key;
	size_t slot;
	uint32_t hash;
	long found;
	int64_t *dst;
	int ret;

	if (!b->ntypes || nvalues != b->ntypes || !values || (nlocations && !location_ids) ||
	    (nlabels && !labels))
		return -EINVAL;
	for (size_t i = 0; i < nlocations; i++)
		if (!location_ids[i] || location_ids[i] > b->nlocations)
			return -EINVAL;
	ret = intern_labels(b, labels, nlabels);
	if (ret)
		return ret;
	key = (struct sample_key){ location_ids, nlocations, b->scratch, nlabels };
	hash = sample_hash(&key);
	if (index_table__reserve(&b->sample_tab))
		return -ENOMEM;
	found = index_table__lookup(&b->sample_tab, hash, sample_eq, b, &key, &slot);
	if (found < 0)
		return sample_append(b, &key, values, hash, slot);
	dst = &b->values[(size_t)found * b->ntypes];
	/* Wrap rather than trap: counters are summed the way pprof's Go code does. */
	for (size_t i = 0; i < nvalues; i++)
		dst[i] = (int64_t)((uint64_t)dst[i] + (uint64_t)values[i]);
	return 0;
}

size_t pprof_builder__sample_count(const struct pprof_builder *b)
{
	return b->nsamples;
}

/* Serialization. */

/* The protobuf-c view of the builder, borrowing the builder's arrays where it can. */
struct pb_view {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType *types, **type_ptrs, period_type;
	Perftools__Profiles__Mapping *mappings, **mapping_ptrs;
	Perftools__Profiles__Function *functions, **function_ptrs;
	Perftools__Profiles__Location *locations, **location_ptrs;
	Perftools__Profiles__Line *lines, **line_ptrs;
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
};

static void pb_view__release(struct pb_view *v)
{
	free(v->types);
	free(v->type_ptrs);
	free(v->mappings);
	free(v->mapping_ptrs);
	free(v->functions);
	free(v->function_ptrs);
	free(v->locations);
	free(v->location_ptrs);
	free(v->lines);
	free(v->line_ptrs);
	free(v->samples);
	free(v->sample_ptrs);
	free(v->labels);
	free(v->label_ptrs);
}

/* calloc(n, a) and calloc(n, b) together; either may be NULL when n is 0. */
static int alloc_pair(void *pa, size_t a, void *pb, size_t b, size_t n)
{
	void **x = pa, **y = pb;

	if (!n)
		return 0;
	*x = calloc(n, a);
	*y = calloc(n, b);
	return *x && *y ? 0 : -ENOMEM;
}

static int pb_view__alloc(struct pb_view *v, const struct pprof_builder *b)
{
	if (alloc_pair(&v->types, sizeof(*v->types), &v->type_ptrs, sizeof(*v->type_ptrs),
		       b->ntypes) ||
	    alloc_pair(&v->mappings, sizeof(*v->mappings), &v->mapping_ptrs,
		       sizeof(*v->mapping_ptrs), b->nmappings) ||
	    alloc_pair(&v->functions, sizeof(*v->functions), &v->function_ptrs,
		       sizeof(*v->function_ptrs), b->nfunctions) ||
	    alloc_pair(&v->locations, sizeof(*v->locations), &v->location_ptrs,
		       sizeof(*v->location_ptrs), b->nlocations) ||
	    alloc_pair(&v->lines, sizeof(*v->lines), &v->line_ptrs, sizeof(*v->line_ptrs),
		       b->nlines) ||
	    alloc_pair(&v->samples, sizeof(*v->samples), &v->sample_ptrs,
		       sizeof(*v->sample_ptrs), b->nsamples) ||
	    alloc_pair(&v->labels, sizeof(*v->labels), &v->label_ptrs, sizeof(*v->label_ptrs),
		       b->nlabels))
		return -ENOMEM;
	return 0;
}

static void view_types(struct pb_view *v, const struct pprof_builder *b)
{
	for (size_t i = 0; i < b->ntypes; i++) {
		perftools__profiles__value_type__init(&v->types[i]);
		v->types[i].type = b->types[i].type;
		v->types[i].unit = b->types[i].unit;
		v->type_ptrs[i] = &v->types[i];
	}
	v->prof.n_sample_type = b->ntypes;
	v->prof.sample_type = v->type_ptrs;
}

static void view_mappings(struct pb_view *v, const struct pprof_builder *b)
{
	for (size_t i = 0; i < b->nmappings; i++) {
		Perftools__Profiles__Mapping *m = &v->mappings[i];

		perftools__profiles__mapping__init(m);
		m->id = i + 1;
		m->memory_start = b->mappings[i].memory_start;
		m->memory_limit = b->mappings[i].memory_limit;
		m->file_offset = b->mappings[i].file_offset;
		m->filename = b->mappings[i].filename;
		m->build_id = b->mappings[i].build_id;
		m->has_functions = b->mappings[i].has_functions;
		m->has_filenames = b->mappings[i].has_filenames;
		m->has_line_numbers = b->mappings[i].has_line_numbers;
		v->mapping_ptrs[i] = m;
	}
	v->prof.n_mapping = b->nmappings;
	v->prof.mapping = v->mapping_ptrs;
}

static void view_functions(struct pb_view *v, const struct pprof_builder *b)
{
	for (size_t i = 0; i < b->nfunctions; i++) {
		Perftools__Profiles__Function *f = &v->functions[i];

		perftools__profiles__function__init(f);
		f->id = i + 1;
		f->name = b->functions[i].name;
		f->system_name = b->functions[i].system_name;
		f->filename = b->functions[i].filename;
		f->start_line = b->functions[i].start_line;
		v->function_ptrs[i] = f;
	}
	v->prof.n_function = b->nfunctions;
	v->prof.function = v->function_ptrs;
}

/* Locations and their lines; the mappings learn whether they have inline frames. */
static void view_locations(struct pb_view *v, const struct pprof_builder *b)
{
	for (size_t i = 0; i < b->nlines; i++) {
		perftools__profiles__line__init(&v->lines[i]);
		v->lines[i].function_id = b->lines[i].function_id;
		v->lines[i].line = b->lines[i].line;
		v->lines[i].column = b->lines[i].column;
		v->line_ptrs[i] = &v->lines[i];
	}
	for (size_t i = 0; i < b->nlocations; i++) {
		const struct pb_location *bl = &b->locations[i];
		Perftools__Profiles__Location *l = &v->locations[i];

		perftools__profiles__location__init(l);
		l->id = i + 1;
		l->mapping_id = bl->mapping_id;
		l->address = bl->address;
		l->n_line = bl->nlines;
		l->line = bl->nlines ? &v->line_ptrs[bl->line_off] : NULL;
		/* Readers trust this flag to know whether inlined frames were recorded. */
		if (bl->nlines > 1 && bl->mapping_id)
			v->mappings[bl->mapping_id - 1].has_inline_frames = true;
		v->location_ptrs[i] = l;
	}
	v->prof.n_location = b->nlocations;
	v->prof.location = v->location_ptrs;
}

/* Samples and their labels; ids and values are the builder's arrays, borrowed. */
static void view_samples(struct pb_view *v, const struct pprof_builder *b)
{
	for (size_t i = 0; i < b->nlabels; i++) {
		perftools__profiles__label__init(&v->labels[i]);
		v->labels[i].key = b->labels[i].key;
		v->labels[i].str = b->labels[i].str;
		v->labels[i].num = b->labels[i].num;
		v->labels[i].num_unit = b->labels[i].num_unit;
		v->label_ptrs[i] = &v->labels[i];
	}
	for (size_t i = 0; i < b->nsamples; i++) {
		const struct pb_sample *bs = &b->samples[i];
		Perftools__Profiles__Sample *s = &v->samples[i];

		perftools__profiles__sample__init(s);
		s->n_location_id = bs->nlocs;
		s->location_id = bs->nlocs ? &b->loc_ids[bs->loc_off] : NULL;
		s->n_value = b->ntypes;
		s->value = &b->values[i * b->ntypes];
		s->n_label = bs->nlabels;
		s->label = bs->nlabels ? &v->label_ptrs[bs->label_off] : NULL;
		v->sample_ptrs[i] = s;
	}
	v->prof.n_sample = b->nsamples;
	v->prof.sample = v->sample_ptrs;
}

/* Strings, time, period, comments, default type. */
static void view_header(struct pb_view *v, const struct pprof_builder *b)
{
	Perftools__Profiles__Profile *p = &v->prof;

	p->n_string_table = b->nstrs;
	p->string_table = b->strs;
	p->time_nanos = b->time_nanos;
	p->duration_nanos = b->duration_nanos;
	if (b->period_type.type || b->period_type.unit) {
		perftools__profiles__value_type__init(&v->period_type);
		v->period_type.type = b->period_type.type;
		v->period_type.unit = b->period_type.unit;
		p->period_type = &v->period_type;
	}
	p->period = b->period;
	p->n_comment = b->ncomments;
	p->comment = b->comments;
	p->default_sample_type = b->default_type;
}

static int pb_view__init(struct pb_view *v, const struct pprof_builder *b)
{
	memset(v, 0, sizeof(*v));
	perftools__profiles__profile__init(&v->prof);
	if (pb_view__alloc(v, b))
		return -ENOMEM;
	view_types(v, b);
	view_mappings(v, b);
	view_functions(v, b);
	view_locations(v, b);
	view_samples(v, b);
	view_header(v, b);
	return 0;
}

int pprof_builder__serialize(struct pprof_builder *b, bool gzip, uint8_t **out, size_t *len)
{
	struct pb_view v;
	uint8_t *raw;
	size_t n;
	int err;

	*out = NULL;
	*len = 0;
	if (b->sticky_err)
		return b->sticky_err;
	if (!b->ntypes)
		return -EINVAL;
	err = pb_view__init(&v, b);
	if (err)
		goto out;
	n = protobuf_c_message_get_packed_size(&v.prof.base);
	raw = malloc(n ? n : 1);
	if (!raw) {
		err = -ENOMEM;
		goto out;
	}
	if (protobuf_c_message_pack(&v.prof.base, raw) != n) {
		free(raw);
		err = -EIO;
		goto out;
	}
	if (gzip) {
		err = gzip__compress(raw, n, out, len);
		free(raw);
	} else {
		*out = raw;
		*len = n;
	}
out:
	pb_view__release(&v);
	return err;
}

int pprof_builder__write_file(struct pprof_builder *b, const char *path, bool gzip)
{
	uint8_t *data;
	size_t len;
	int err;

	err = pprof_builder__serialize(b, gzip, &data, &len);
	if (err)
		return err;
	/* A profile is an ordinary output file; "-" is a file of that name here, not stdout. */
	err = fileio__write_atomic(strcmp(path, "-") ? path : "./-", data, len, 0644);
	free(data);
	return err;
}
