// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pprof_merge: see pprof_merge.h.
 *
 * Each profile is walked in its own message order: its mappings and
 * functions go into the builder first (which deduplicates them by content
 * and gives them the merged profile's ids), then its locations, whose
 * lines and mapping are rewritten to those ids, then its samples.  The
 * per-profile tables (message index -> merged id; the reader maps a
 * profile's ids to indices) are scratch arrays reused from one profile to
 * the next.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errmsg.h"
#include "lib/timetext.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_merge.h"
#include "proto/pprof_reader.h"

struct pprof_merge {
	struct pprof_builder *b;
	size_t count;

	/* the first profile's sample and period types, which every other must have */
	char **types;		/* name, unit, name, unit... */
	size_t ntypes;
	char *period_type, *period_unit;
	int64_t period;

	bool has_time, finished;
	int64_t from_ns, until_ns;

	/* by builder string index: already a comment of the result */
	uint8_t *is_comment;
	size_t is_comment_cap;

	/* scratch, per profile: its ids' ids in the merged profile, by message index */
	uint64_t *map_ids, *fn_ids, *loc_ids, *sample_locs;
	size_t map_ids_cap, fn_ids_cap, loc_ids_cap, sample_locs_cap;
	struct pprof_line *lines;
	size_t lines_cap;
	struct pprof_label *labels;
	size_t labels_cap;
};

struct pprof_merge *pprof_merge__new(void)
{
	struct pprof_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->b = pprof_builder__new();
	if (!m->b) {
		free(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

void pprof_merge__free(struct pprof_merge *m)
{
	if (!m)
		return;
	pprof_builder__free(m->b);
	for (size_t i = 0; i < 2 * m->ntypes; i++)
		free(m->types[i]);
	free(m->types);
	free(m->period_type);
	free(m->period_unit);
	free(m->is_comment);
	free(m->map_ids);
	free(m->fn_ids);
	free(m->loc_ids);
	free(m->sample_locs);
	free(m->lines);
	free(m->labels);
	free(m);
}

size_t pprof_merge__count(const struct pprof_merge *m)
{
	return m->count;
}

bool pprof_merge__range(const struct pprof_merge *m, int64_t *from_ns, int64_t *until_ns)
{
	if (!m->has_time)
		return false;
	*from_ns = m->from_ns;
	*until_ns = m->until_ns;
	return true;
}

/* ---- ids ----------------------------------------------------------------- */

/* ---- header ------------------------------------------------------------- */

static const char *str(const Perftools__Profiles__Profile *p, int64_t idx)
{
	return idx > 0 && (uint64_t)idx < p->n_string_table ? p->string_table[idx] : "";
}

static const char *vt_type(const Perftools__Profiles__Profile *p,
			   const Perftools__Profiles__ValueType *vt)
{
	return vt ? str(p, vt->type) : "";
}

static const char *vt_unit(const Perftools__Profiles__Profile *p,
			   const Perftools__Profiles__ValueType *vt)
{
	return vt ? str(p, vt->unit) : "";
}

/* "samples/count, cpu/nanoseconds" into buf, for an error. */
static void types_str(const Perftools__Profiles__Profile *p, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < p->n_sample_type && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s/%s", i ? ", " : "",
				      vt_type(p, p->sample_type[i]), vt_unit(p, p->sample_type[i]));
}

static void own_types_str(const struct pprof_merge *m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < m->ntypes && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s/%s", i ? ", " : "", m->types[2 * i],
				      m->types[2 * i + 1]);
}

/* Refuse a profile of another kind than the first, before any of it is merged. */
static int check_kind(const struct pprof_merge *m, const Perftools__Profiles__Profile *p,
		      char *err, size_t errlen)
{
	char have[256], want[256];
	bool same = p->n_sample_type == m->ntypes;

	for (size_t i = 0; same && i < m->ntypes; i++)
		same = !strcmp(vt_type(p, p->sample_type[i]), m->types[2 * i]) &&
		       !strcmp(vt_unit(p, p->sample_type[i]), m->types[2 * i + 1]);
	if (!same) {
		types_str(p, have, sizeof(have));
		own_types_str(m, want, sizeof(want));
		return errmsg__fail(err, errlen, -EINVAL,
			    "sample types [%s] differ from [%s] of the profiles merged before: "
			    "profiles of different kinds do not merge", have, want);
	}
	if (strcmp(vt_type(p, p->period_type), m->period_type) ||
	    strcmp(vt_unit(p, p->period_type), m->period_unit))
		return errmsg__fail(err, errlen, -EINVAL,
			    "period type %s/%s differs from %s/%s of the profiles merged before",
			    vt_type(p, p->period_type), vt_unit(p, p->period_type),
			    m->period_type, m->period_unit);
	return 0;
}

/* The first profile sets the kind: its sample types, period type, default type. */
static int take_kind(struct pprof_merge *m, const Perftools__Profiles__Profile *p)
{
	m->types = calloc(2 * (p->n_sample_type ? p->n_sample_type : 1), sizeof(*m->types));
	if (!m->types)
		return -ENOMEM;
	for (size_t i = 0; i < p->n_sample_type; i++) {
		const char *t = vt_type(p, p->sample_type[i]), *u = vt_unit(p, p->sample_type[i]);

		m->types[2 * i] = strdup(t);
		m->types[2 * i + 1] = strdup(u);
		m->ntypes = i + 1;
		if (!m->types[2 * i] || !m->types[2 * i + 1])
			return -ENOMEM;
		if (pprof_builder__add_sample_type(m->b, t, u))
			return -ENOMEM;
	}
	m->period_type = strdup(vt_type(p, p->period_type));
	m->period_unit = strdup(vt_unit(p, p->period_type));
	if (!m->period_type || !m->period_unit)
		return -ENOMEM;
	pprof_builder__set_default_sample_type(m->b, str(p, p->default_sample_type));
	return 0;
}

static int add_comments(struct pprof_merge *m, const Perftools__Profiles__Profile *p)
{
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = str(p, p->comment[i]);
		int64_t idx;
		int err;

		if (!*c)
			continue;
		idx = pprof_builder__string(m->b, c);
		if (idx < 0)
			return (int)idx;
		if ((size_t)idx < m->is_comment_cap && m->is_comment[idx])
			continue;
		if ((size_t)idx >= m->is_comment_cap) {
			size_t old = m->is_comment_cap;

			if (array_grow(&m->is_comment, &m->is_comment_cap, (size_t)idx + 1))
				return -ENOMEM;
			memset(m->is_comment + old, 0, m->is_comment_cap - old);
		}
		err = pprof_builder__add_comment(m->b, c);
		if (err)
			return err;
		m->is_comment[idx] = 1;
	}
	return 0;
}

static void add_time(struct pprof_merge *m, const Perftools__Profiles__Profile *p)
{
	int64_t end;

	if (!p->time_nanos)
		return;
	/* a hostile duration must not overflow the end */
	end = p->duration_nanos > 0 && p->time_nanos <= INT64_MAX - p->duration_nanos ?
		      p->time_nanos + p->duration_nanos : p->time_nanos;
	if (!m->has_time || p->time_nanos < m->from_ns)
		m->from_ns = p->time_nanos;
	if (!m->has_time || end > m->until_ns)
		m->until_ns = end;
	m->has_time = true;
}

/* ---- content ------------------------------------------------------------ */

static int add_mappings(struct pprof_merge *m, const Perftools__Profiles__Profile *p)
{
	if (array_grow(&m->map_ids, &m->map_ids_cap, p->n_mapping))
		return -ENOMEM;
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *pm = p->mapping[i];
		struct pprof_mapping_desc d = {
			.memory_start = pm->memory_start,
			.memory_limit = pm->memory_limit,
			.file_offset = pm->file_offset,
			.filename = str(p, pm->filename),
			.build_id = str(p, pm->build_id),
			.has_functions = pm->has_functions,
			.has_filenames = pm->has_filenames,
			.has_line_numbers = pm->has_line_numbers,
		};

		m->map_ids[i] = pprof_builder__mapping(m->b, &d);
		if (!m->map_ids[i])
			return -ENOMEM;
	}
	return 0;
}

static int add_functions(struct pprof_merge *m, const Perftools__Profiles__Profile *p)
{
	if (array_grow(&m->fn_ids, &m->fn_ids_cap, p->n_function))
		return -ENOMEM;
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		m->fn_ids[i] = pprof_builder__function(m->b, str(p, f->name),
						       str(p, f->system_name), str(p, f->filename),
						       f->start_line);
		if (!m->fn_ids[i])
			return -ENOMEM;
	}
	return 0;
}

static int add_locations(struct pprof_merge *m, const struct pprof_profile *prof)
{
	const Perftools__Profiles__Profile *p = pprof_profile__proto(prof);

	if (array_grow(&m->loc_ids, &m->loc_ids_cap, p->n_location))
		return -ENOMEM;
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		uint64_t mid = 0;

		if (array_grow(&m->lines, &m->lines_cap, l->n_line))
			return -ENOMEM;
		for (size_t j = 0; j < l->n_line; j++)
			m->lines[j] = (struct pprof_line){
				.function_id = m->fn_ids[pprof_profile__index(prof, PPROF_FUNCTIONS,
									     l->line[j]->function_id)],
				.line = l->line[j]->line,
				.column = l->line[j]->column,
			};
		if (l->mapping_id)
			mid = m->map_ids[pprof_profile__index(prof, PPROF_MAPPINGS, l->mapping_id)];
		m->loc_ids[i] = pprof_builder__location(m->b, mid, l->address, m->lines, l->n_line);
		if (!m->loc_ids[i])
			return errno == EINVAL ? -EINVAL : -ENOMEM;
	}
	return 0;
}

/* A sample's labels as the builder takes them; those pprof would drop are left out. */
static size_t sample_labels(struct pprof_merge *m, const Perftools__Profiles__Profile *p,
			    const Perftools__Profiles__Sample *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		const char *key = str(p, l->key);

		if (!*key || (!l->str && !l->num && !l->num_unit))
			continue;
		if (l->str)
			m->labels[n++] = (struct pprof_label){ .key = key, .str = str(p, l->str) };
		else
			m->labels[n++] = (struct pprof_label){ .key = key, .num = l->num,
								.num_unit = str(p, l->num_unit) };
	}
	return n;
}

static int add_samples(struct pprof_merge *m, const struct pprof_profile *prof)
{
	const Perftools__Profiles__Profile *p = pprof_profile__proto(prof);

	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		size_t nlabels;
		int err;

		if (array_grow(&m->sample_locs, &m->sample_locs_cap, s->n_location_id) ||
		    array_grow(&m->labels, &m->labels_cap, s->n_label))
			return -ENOMEM;
		for (size_t j = 0; j < s->n_location_id; j++)
			m->sample_locs[j] = m->loc_ids[pprof_profile__index(prof, PPROF_LOCATIONS,
									      s->location_id[j])];
		nlabels = sample_labels(m, p, s);
		err = pprof_builder__add_sample(m->b, m->sample_locs, s->n_location_id, s->value,
						s->n_value, m->labels, nlabels);
		if (err)
			return err;
	}
	return 0;
}

int pprof_merge__add(struct pprof_merge *m, const struct pprof_profile *prof, char *err,
		     size_t errlen)
{
	const Perftools__Profiles__Profile *p = pprof_profile__proto(prof);
	int ret;

	if (m->finished)
		return errmsg__fail(err, errlen, -EINVAL, "the merged profile was written already");
	if (m->types) {
		ret = check_kind(m, p, err, errlen);
		if (ret)
			return ret;
	} else {
		ret = take_kind(m, p);
		if (ret)
			return errmsg__fail(err, errlen, ret, "out of memory");
	}
	if (p->period > m->period) {
		m->period = p->period;
		pprof_builder__set_period(m->b, m->period_type, m->period_unit, m->period);
	}
	add_time(m, p);
	ret = add_comments(m, p);
	if (!ret)
		ret = add_mappings(m, p);
	if (!ret)
		ret = add_functions(m, p);
	if (!ret)
		ret = add_locations(m, prof);
	if (!ret)
		ret = add_samples(m, prof);
	if (ret)
		return errmsg__fail(err, errlen, ret, "%s",
			    ret == -ENOMEM ? "out of memory" : "the profile does not merge");
	m->count++;
	return 0;
}

/* The merge's own comment and header, once. */
static int finish(struct pprof_merge *m)
{
	char from[TIMETEXT_RFC3339_LEN], until[TIMETEXT_RFC3339_LEN], text[128];

	if (m->finished)
		return 0;
	if (m->has_time) {
		timetext__rfc3339(m->from_ns / 1000000000, from, sizeof(from));
		timetext__rfc3339(m->until_ns / 1000000000, until, sizeof(until));
		snprintf(text, sizeof(text), "merged %zu profile%s: %s to %s", m->count,
			 m->count == 1 ? "" : "s", from, until);
		pprof_builder__set_time(m->b, m->from_ns, m->until_ns - m->from_ns);
	} else {
		snprintf(text, sizeof(text), "merged %zu profile%s", m->count,
			 m->count == 1 ? "" : "s");
	}
	if (pprof_builder__add_comment(m->b, text))
		return -ENOMEM;
	m->finished = true;
	return 0;
}

int pprof_merge__serialize(struct pprof_merge *m, bool gzip, uint8_t **out, size_t *len)
{
	int err;

	*out = NULL;
	*len = 0;
	if (!m->count)
		return -EINVAL;
	err = finish(m);
	return err ? err : pprof_builder__serialize(m->b, gzip, out, len);
}
