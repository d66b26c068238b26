// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pprof_reader: see pprof_reader.h.  The checks follow what pprof's Go
 * reader rejects (profile.ParseData, postDecode, CheckValid), plus string
 * indices in range, which Go reports only as "malformed profile".
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "lib/gzip.h"
#include "lib/hash.h"
#include "lib/index_table.h"
#include "proto/pprof_reader.h"

/*
 * Profile ids (uint64, never 0) -> their message's index.  Writers
 * (isoprof's builder, Go's pprof) number ids 1, 2, 3... in order, and then
 * the index is the id - 1; only ids out of that order go through an index
 * table.
 */
struct idmap {
	struct index_table t;
	uint64_t *ids;		/* index -> id */
	size_t n;
	bool sparse;		/* an id is not its index + 1: look up in t */
};

static int idmap__init(struct idmap *m, size_t n)
{
	m->ids = malloc((n ? n : 1) * sizeof(*m->ids));
	return m->ids ? 0 : -ENOMEM;
}

static void idmap__release(struct idmap *m)
{
	index_table__release(&m->t);
	free(m->ids);
	m->ids = NULL;
}

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const struct idmap *)ctx)->ids[idx] == *(const uint64_t *)key;
}

static int idmap__index(struct idmap *m, size_t index)
{
	uint32_t hash = hash__fold32(m->ids[index]);
	size_t slot;

	if (index_table__reserve(&m->t))
		return -ENOMEM;
	if (index_table__lookup(&m->t, hash, id_eq, m, &m->ids[index], &slot) >= 0)
		return -EEXIST;
	index_table__set(&m->t, slot, hash, (uint32_t)index);
	return 0;
}

/* Map the next index to id (nonzero): 0, -EEXIST when id is there already, or -ENOMEM. */
static int idmap__add(struct idmap *m, uint64_t id)
{
	size_t index = m->n;
	int ret;

	m->ids[index] = id;
	if (!m->sparse && id == index + 1) {
		m->n++;
		return 0;
	}
	if (!m->sparse) {
		/* the first id out of order: index the ones before it */
		m->sparse = true;
		for (size_t i = 0; i < index; i++) {
			ret = idmap__index(m, i);
			if (ret)
				return ret;
		}
	}
	ret = idmap__index(m, index);
	if (!ret)
		m->n++;
	return ret;
}

static bool idmap__get(const struct idmap *m, uint64_t id, uint32_t *index)
{
	long i;

	if (!m->sparse) {
		if (!id || id > m->n)
			return false;
		*index = (uint32_t)(id - 1);
		return true;
	}
	if (!id)
		return false;
	i = index_table__lookup(&m->t, hash__fold32(id), id_eq, m, &id, NULL);
	if (i < 0)
		return false;
	*index = (uint32_t)i;
	return true;
}

struct idmaps {
	struct idmap mappings, functions, locations;
};

struct pprof_profile {
	Perftools__Profiles__Profile *msg;
	struct idmaps maps;		/* ids -> message indices, kept for pprof_profile__index() */
	struct pprof_frame *frames;
	size_t nframes;
	size_t *loc_frame_off;		/* per location: first frame */
	uint32_t *loc_nframes;		/* per location: frame count */
	uint32_t *sample_locs;		/* location indices of every sample, concatenated */
	size_t *sample_loc_off;		/* per sample: first entry in sample_locs */
};

static void idmaps__release(struct idmaps *maps)
{
	idmap__release(&maps->mappings);
	idmap__release(&maps->functions);
	idmap__release(&maps->locations);
}

/* Validation. */

static bool str_ok(const Perftools__Profiles__Profile *p, int64_t idx)
{
	return idx >= 0 && (uint64_t)idx < p->n_string_table;
}

/* String index idx of what (a printf format) in range?  0, or -EINVAL naming it. */
static int check_str(const Perftools__Profiles__Profile *p, int64_t idx, char *err,
		     size_t errlen, const char *what, ...) __attribute__((format(printf, 5, 6)));

static int check_str(const Perftools__Profiles__Profile *p, int64_t idx, char *err,
		     size_t errlen, const char *what, ...)
{
	char name[128];
	va_list ap;

	if (str_ok(p, idx))
		return 0;
	va_start(ap, what);
	vsnprintf(name, sizeof(name), what, ap);
	va_end(ap);
	return errmsg__fail(err, errlen, -EINVAL, "%s string %" PRId64 " out of range (%zu strings)",
		    name, idx, p->n_string_table);
}

static int check_table(const Perftools__Profiles__Profile *p, char *err, size_t errlen)
{
	const size_t n = p->n_string_table;

	if (!n)
		return errmsg__fail(err, errlen, -EINVAL,
			    "string_table is empty (string_table[0] must be \"\")");
	for (size_t i = 0; i < n; i++)
		if (!p->string_table[i])
			return errmsg__fail(err, errlen, -EINVAL, "string_table[%zu] is NULL", i);
	if (p->string_table[0][0])
		return errmsg__fail(err, errlen, -EINVAL, "string_table[0] must be \"\" (is \"%.40s\")",
			    p->string_table[0]);
	return 0;
}

/* The strings samples refer to: sample types and labels. */
static int check_sample_strings(const Perftools__Profiles__Profile *p, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < p->n_sample_type; i++) {
		const Perftools__Profiles__ValueType *t = p->sample_type[i];

		ret = check_str(p, t->type, err, errlen, "sample_type %zu: type", i) ?:
		      check_str(p, t->unit, err, errlen, "sample_type %zu: unit", i);
	}
	for (size_t i = 0; !ret && i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		for (size_t j = 0; !ret && j < s->n_label; j++) {
			const Perftools__Profiles__Label *l = s->label[j];

			ret = check_str(p, l->key, err, errlen, "sample %zu: label %zu: key", i,
					j) ?:
			      check_str(p, l->str, err, errlen, "sample %zu: label %zu: str", i,
					j) ?:
			      check_str(p, l->num_unit, err, errlen,
					"sample %zu: label %zu: num_unit", i, j);
		}
	}
	return ret;
}

/* The strings of mappings and functions. */
static int check_code_strings(const Perftools__Profiles__Profile *p, char *err, size_t errlen)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];

		ret = check_str(p, m->filename, err, errlen, "mapping id %" PRIu64 ": filename",
				m->id) ?:
		      check_str(p, m->build_id, err, errlen, "mapping id %" PRIu64 ": build_id",
				m->id);
	}
	for (size_t i = 0; !ret && i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];

		ret = check_str(p, f->name, err, errlen, "function id %" PRIu64 ": name", f->id) ?:
		      check_str(p, f->system_name, err, errlen,
				"function id %" PRIu64 ": system_name", f->id) ?:
		      check_str(p, f->filename, err, errlen, "function id %" PRIu64 ": filename",
				f->id);
	}
	return ret;
}

/* The profile's own strings: frame filters, period, comments, default type, doc url. */
static int check_header_strings(const Perftools__Profiles__Profile *p, char *err,
				size_t errlen)
{
	int ret;

	ret = check_str(p, p->drop_frames, err, errlen, "drop_frames") ?:
	      check_str(p, p->keep_frames, err, errlen, "keep_frames");
	if (!ret && p->period_type)
		ret = check_str(p, p->period_type->type, err, errlen, "period_type: type") ?:
		      check_str(p, p->period_type->unit, err, errlen, "period_type: unit");
	for (size_t i = 0; !ret && i < p->n_comment; i++)
		ret = check_str(p, p->comment[i], err, errlen, "comment %zu:", i);
	return ret ?: check_str(p, p->default_sample_type, err, errlen, "default_sample_type") ?:
		      check_str(p, p->doc_url, err, errlen, "doc_url");
}

static int check_strings(const Perftools__Profiles__Profile *p, char *err, size_t errlen)
{
	return check_table(p, err, errlen) ?: check_sample_strings(p, err, errlen) ?:
	       check_code_strings(p, err, errlen) ?: check_header_strings(p, err, errlen);
}

/* Index the id of message i of one kind; what names the kind in errors. */
static int add_id(struct idmap *m, uint64_t id, size_t i, const char *what, char *err,
		  size_t errlen)
{
	int ret;

	if (!id)
		return errmsg__fail(err, errlen, -EINVAL, "%s %zu: reserved id 0", what, i);
	ret = idmap__add(m, id);
	if (ret == -EEXIST)
		return errmsg__fail(err, errlen, -EINVAL, "multiple %ss with id %" PRIu64, what, id);
	if (ret)
		return errmsg__fail(err, errlen, ret, "out of memory");
	return 0;
}

static int check_ids(const Perftools__Profiles__Profile *p, struct idmaps *maps, char *err,
		     size_t errlen)
{
	int ret;

	if (idmap__init(&maps->mappings, p->n_mapping) ||
	    idmap__init(&maps->functions, p->n_function) ||
	    idmap__init(&maps->locations, p->n_location))
		return errmsg__fail(err, errlen, -ENOMEM, "out of memory");
	/* Counts above UINT32_MAX cannot come from a 1 GiB message; indices fit in uint32_t. */
	for (size_t i = 0; i < p->n_mapping; i++) {
		ret = add_id(&maps->mappings, p->mapping[i]->id, i, "mapping", err, errlen);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < p->n_function; i++) {
		ret = add_id(&maps->functions, p->function[i]->id, i, "function", err, errlen);
		if (ret)
			return ret;
	}
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		uint32_t idx;

		ret = add_id(&maps->locations, l->id, i, "location", err, errlen);
		if (ret)
			return ret;
		if (l->mapping_id && !idmap__get(&maps->mappings, l->mapping_id, &idx))
			return errmsg__fail(err, errlen, -EINVAL,
				    "location id %" PRIu64 ": mapping id %" PRIu64
				    " does not exist",
				    l->id, l->mapping_id);
		for (size_t j = 0; j < l->n_line; j++) {
			uint64_t fid = l->line[j]->function_id;

			if (!idmap__get(&maps->functions, fid, &idx))
				return errmsg__fail(err, errlen, -EINVAL,
					    "location id %" PRIu64 ": line %zu: function id %"
					    PRIu64 " does not exist",
					    l->id, j, fid);
		}
	}
	return 0;
}

static int check_samples(const Perftools__Profiles__Profile *p, const struct idmaps *maps,
			 char *err, size_t errlen)
{
	if (!p->n_sample_type)
		return errmsg__fail(err, errlen, -EINVAL, "missing sample type information");
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint32_t idx;

		if (s->n_value != p->n_sample_type)
			return errmsg__fail(err, errlen, -EINVAL,
				    "sample %zu: %zu values, %zu sample types", i, s->n_value,
				    p->n_sample_type);
		for (size_t j = 0; j < s->n_location_id; j++)
			if (!idmap__get(&maps->locations, s->location_id[j], &idx))
				return errmsg__fail(err, errlen, -EINVAL,
					    "sample %zu: location id %" PRIu64 " does not exist", i,
					    s->location_id[j]);
	}
	return 0;
}

static int validate(const Perftools__Profiles__Profile *p, struct idmaps *maps, char *err,
		    size_t errlen)
{
	int ret;

	if (p->n_mapping > UINT32_MAX || p->n_function > UINT32_MAX ||
	    p->n_location > UINT32_MAX)
		return errmsg__fail(err, errlen, -EINVAL, "too many mappings, functions or locations");
	ret = check_strings(p, err, errlen);
	if (!ret)
		ret = check_ids(p, maps, err, errlen);
	if (!ret)
		ret = check_samples(p, maps, err, errlen);
	return ret;
}

int pprof_validate(const Perftools__Profiles__Profile *p, char *err, size_t errlen)
{
	struct idmaps maps = { 0 };
	int ret = validate(p, &maps, err, errlen);

	idmaps__release(&maps);
	return ret;
}

/* Decoding. */

/* gzip'd data inflated, at most PPROF_MAX_DECOMPRESSED bytes. */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *out_len, char *err,
		  size_t errlen)
{
	const char *why;
	int ret = gzip__decompress(in, len, PPROF_MAX_DECOMPRESSED, out, out_len, &why);

	if (ret == -EFBIG)
		return errmsg__fail(err, errlen, ret, "decompressed size exceeds %llu bytes",
			    (unsigned long long)PPROF_MAX_DECOMPRESSED);
	if (ret == -EBADMSG)
		return errmsg__fail(err, errlen, ret, "gzip: %s", why);
	if (ret)
		return errmsg__fail(err, errlen, ret, "out of memory");
	return 0;
}

/*
 * Wire-level checks protobuf-c does not make but pprof's Go decoder does,
 * run before unpacking: every known field has the wire type its schema
 * says (a singular scalar is a varint, a repeated one a varint or packed,
 * strings and messages length-delimited), varints are at most 10 bytes,
 * string_table[0] is empty, and time_nanos is not set again once nonzero
 * (concatenated profiles).  Strings must not contain NUL bytes: the C
 * strings protobuf-c hands out would silently cut them.
 */
enum wire_kind { W_UNKNOWN, W_VARINT, W_VARINTS, W_STRING, W_MSG };

enum wire_msg { M_PROFILE, M_VALUE_TYPE, M_SAMPLE, M_LABEL, M_MAPPING, M_LOCATION, M_LINE,
		M_FUNCTION, M_COUNT };

struct wire_field {
	unsigned char kind;	/* enum wire_kind */
	unsigned char msg;	/* enum wire_msg, for W_MSG */
};

#define WIRE_MAX_FIELD 15

static const struct {
	const char *name;
	struct wire_field f[WIRE_MAX_FIELD + 1];	/* indexed by field number */
} wire_schema[M_COUNT] = {
	[M_PROFILE] = { "Profile", {
		[1] = { W_MSG, M_VALUE_TYPE }, [2] = { W_MSG, M_SAMPLE },
		[3] = { W_MSG, M_MAPPING }, [4] = { W_MSG, M_LOCATION },
		[5] = { W_MSG, M_FUNCTION }, [6] = { W_STRING, 0 },
		[7] = { W_VARINT, 0 }, [8] = { W_VARINT, 0 }, [9] = { W_VARINT, 0 },
		[10] = { W_VARINT, 0 }, [11] = { W_MSG, M_VALUE_TYPE }, [12] = { W_VARINT, 0 },
		[13] = { W_VARINTS, 0 }, [14] = { W_VARINT, 0 }, [15] = { W_VARINT, 0 } } },
	[M_VALUE_TYPE] = { "ValueType", { [1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 } } },
	[M_SAMPLE] = { "Sample", {
		[1] = { W_VARINTS, 0 }, [2] = { W_VARINTS, 0 }, [3] = { W_MSG, M_LABEL } } },
	[M_LABEL] = { "Label", { [1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 },
				 [3] = { W_VARINT, 0 }, [4] = { W_VARINT, 0 } } },
	[M_MAPPING] = { "Mapping", {
		[1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 }, [3] = { W_VARINT, 0 },
		[4] = { W_VARINT, 0 }, [5] = { W_VARINT, 0 }, [6] = { W_VARINT, 0 },
		[7] = { W_VARINT, 0 }, [8] = { W_VARINT, 0 }, [9] = { W_VARINT, 0 },
		[10] = { W_VARINT, 0 } } },
	[M_LOCATION] = { "Location", {
		[1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 }, [3] = { W_VARINT, 0 },
		[4] = { W_MSG, M_LINE }, [5] = { W_VARINT, 0 } } },
	[M_LINE] = { "Line", {
		[1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 }, [3] = { W_VARINT, 0 } } },
	[M_FUNCTION] = { "Function", {
		[1] = { W_VARINT, 0 }, [2] = { W_VARINT, 0 }, [3] = { W_VARINT, 0 },
		[4] = { W_VARINT, 0 }, [5] = { W_VARINT, 0 } } },
};

static bool read_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	const uint8_t *p = *pp;
	uint64_t r = 0;

	for (int i = 0; i < 10 && p < end; i++) {
		r |= (uint64_t)(*p & 0x7f) << (7 * i);
		if (!(*p++ & 0x80)) {
			*v = r;
			*pp = p;
			return true;
		}
	}
	return false;
}

struct wire_state {
	size_t nstrings;
	uint64_t time_nanos;
	char *err;
	size_t errlen;
};

static int wire_check(const uint8_t *p, size_t len, enum wire_msg msg, struct wire_state *ws)
{
	const uint8_t *end = p + len;
	const char *name = wire_schema[msg].name;
	uint64_t key, v = 0;

	while (p < end) {
		const uint8_t *payload = NULL;
		struct wire_field f = { W_UNKNOWN, 0 };
		unsigned int type;
		uint64_t field;

		if (!read_varint(&p, end, &key))
			return errmsg__fail(ws->err, ws->errlen, -EBADMSG, "protobuf: %s: bad field key",
				    name);
		field = key >> 3;
		type = key & 7;
		if (field <= WIRE_MAX_FIELD)
			f = wire_schema[msg].f[field];
		switch (type) {
		case 0:
			if (!read_varint(&p, end, &v))
				goto truncated;
			break;
		case 1:
			if (end - p < 8)
				goto truncated;
			p += 8;
			break;
		case 2:
			if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				goto truncated;
			payload = p;
			p += v;
			break;
		case 5:
			if (end - p < 4)
				goto truncated;
			p += 4;
			break;
		default:
			return errmsg__fail(ws->err, ws->errlen, -EBADMSG,
				    "protobuf: %s: field %" PRIu64 ": unknown wire type %u", name,
				    field, type);
		}
		if (f.kind == W_UNKNOWN)
			continue;
		if ((f.kind == W_VARINT && type != 0) ||
		    (f.kind == W_VARINTS && type != 0 && type != 2) ||
		    ((f.kind == W_STRING || f.kind == W_MSG) && type != 2))
			return errmsg__fail(ws->err, ws->errlen, -EBADMSG,
				    "protobuf: %s: field %" PRIu64
				    " has wire type %u (type mismatch)",
				    name, field, type);
		if (f.kind == W_VARINTS && type == 2) {
			const uint8_t *q = payload;

			while (q < p)
				if (!read_varint(&q, p, &v))
					return errmsg__fail(ws->err, ws->errlen, -EBADMSG,
						    "protobuf: %s: field %" PRIu64
						    ": bad packed varint",
						    name, field);
		} else if (f.kind == W_MSG) {
			int ret = wire_check(payload, (size_t)(p - payload), f.msg, ws);

			if (ret)
				return ret;
		} else if (f.kind == W_STRING) {
			/* Only Profile.string_table (6) is a string. */
			if (!ws->nstrings && p > payload)
				return errmsg__fail(ws->err, ws->errlen, -EINVAL,
					    "string_table[0] must be \"\"");
			if (memchr(payload, 0, (size_t)(p - payload)))
				return errmsg__fail(ws->err, ws->errlen, -EINVAL,
					    "string_table[%zu] contains a NUL byte", ws->nstrings);
			ws->nstrings++;
		} else if (msg == M_PROFILE && field == 9) {
			if (ws->time_nanos)
				return errmsg__fail(ws->err, ws->errlen, -EINVAL,
					    "concatenated profiles detected (time_nanos set "
					    "twice)");
			ws->time_nanos = v;
		}
	}
	return 0;
truncated:
	return errmsg__fail(ws->err, ws->errlen, -EBADMSG, "protobuf: %s: truncated field", name);
}

void pprof_profile__free(struct pprof_profile *p)
{
	if (!p)
		return;
	if (p->msg)
		perftools__profiles__profile__free_unpacked(p->msg, NULL);
	free(p->frames);
	free(p->loc_frame_off);
	free(p->loc_nframes);
	free(p->sample_locs);
	free(p->sample_loc_off);
	idmaps__release(&p->maps);
	free(p);
}

uint32_t pprof_profile__index(const struct pprof_profile *p, enum pprof_table table, uint64_t id)
{
	const struct idmap *m = table == PPROF_MAPPINGS ? &p->maps.mappings :
				table == PPROF_FUNCTIONS ? &p->maps.functions :
							   &p->maps.locations;
	uint32_t index = 0;

	idmap__get(m, id, &index);
	return index;
}

static int build_view(struct pprof_profile *prof, const struct idmaps *maps)
{
	const Perftools__Profiles__Profile *p = prof->msg;
	size_t nframes = 0, nlocs = 0, k = 0;
	uint32_t idx;

	for (size_t i = 0; i < p->n_location; i++)
		nframes += p->location[i]->n_line ? p->location[i]->n_line : 1;
	for (size_t i = 0; i < p->n_sample; i++)
		nlocs += p->sample[i]->n_location_id;
	if (nframes > UINT32_MAX)
		return -ENOMEM;
	prof->frames = calloc(nframes ? nframes : 1, sizeof(*prof->frames));
	prof->loc_frame_off = calloc(p->n_location + 1, sizeof(*prof->loc_frame_off));
	prof->loc_nframes = calloc(p->n_location + 1, sizeof(*prof->loc_nframes));
	prof->sample_locs = calloc(nlocs ? nlocs : 1, sizeof(*prof->sample_locs));
	prof->sample_loc_off = calloc(p->n_sample + 1, sizeof(*prof->sample_loc_off));
	if (!prof->frames || !prof->loc_frame_off || !prof->loc_nframes || !prof->sample_locs ||
	    !prof->sample_loc_off)
		return -ENOMEM;

	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];
		const char *mfile = "";
		size_t n = l->n_line ? l->n_line : 1;

		if (l->mapping_id && idmap__get(&maps->mappings, l->mapping_id, &idx))
			mfile = p->string_table[p->mapping[idx]->filename];
		prof->loc_frame_off[i] = k;
		prof->loc_nframes[i] = (uint32_t)n;
		for (size_t j = 0; j < n; j++, k++) {
			struct pprof_frame *f = &prof->frames[k];

			f->id = (uint32_t)k;
			f->location = (uint32_t)i;
			f->address = l->address;
			f->mapping_file = mfile;
			f->has_mapping = l->mapping_id != 0;
			f->name = f->system_name = f->filename = "";
			if (!l->n_line)
				continue;
			/* Validated: the function exists. */
			idmap__get(&maps->functions, l->line[j]->function_id, &idx);
			f->has_function = true;
			f->name = p->string_table[p->function[idx]->name];
			f->system_name = p->string_table[p->function[idx]->system_name];
			f->filename = p->string_table[p->function[idx]->filename];
			f->start_line = p->function[idx]->start_line;
			f->line = l->line[j]->line;
			f->inlined = j + 1 < n;
		}
	}
	prof->nframes = nframes;

	k = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];

		prof->sample_loc_off[i] = k;
		for (size_t j = 0; j < s->n_location_id; j++) {
			idmap__get(&maps->locations, s->location_id[j], &idx);
			prof->sample_locs[k++] = idx;
		}
	}
	prof->sample_loc_off[p->n_sample] = k;
	return 0;
}

int pprof_profile__parse(const uint8_t *data, size_t len, struct pprof_profile **out,
			 char *err, size_t errlen)
{
	struct pprof_profile *prof = NULL;
	uint8_t *raw = NULL;
	int ret;

	*out = NULL;
	if (gzip__is_gzip(data, len)) {
		ret = gunzip(data, len, &raw, &len, err, errlen);
		if (ret)
			return ret;
		data = raw;
	} else if (len > PPROF_MAX_DECOMPRESSED) {
		return errmsg__fail(err, errlen, -EFBIG, "profile larger than %llu bytes",
			    (unsigned long long)PPROF_MAX_DECOMPRESSED);
	}
	ret = wire_check(data, len, M_PROFILE,
			 &(struct wire_state){ .err = err, .errlen = errlen });
	if (ret)
		goto out;
	prof = calloc(1, sizeof(*prof));
	if (!prof) {
		ret = errmsg__fail(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	prof->msg = perftools__profiles__profile__unpack(NULL, len, data);
	if (!prof->msg) {
		ret = errmsg__fail(err, errlen, -EBADMSG, "not a pprof profile (protobuf decoding failed)");
		goto out;
	}
	ret = validate(prof->msg, &prof->maps, err, errlen);
	if (ret)
		goto out;
	ret = build_view(prof, &prof->maps);
	if (ret) {
		ret = errmsg__fail(err, errlen, ret, "out of memory");
		goto out;
	}
	*out = prof;
	prof = NULL;
out:
	pprof_profile__free(prof);
	free(raw);
	return ret;
}

int pprof_profile__read_file(const char *path, struct pprof_profile **out, char *err,
			     size_t errlen)
{
	uint8_t *buf;
	size_t len;
	int ret;

	*out = NULL;
	ret = fileio__read_stream(path, PPROF_MAX_DECOMPRESSED, &buf, &len);
	if (ret == -EFBIG)
		return errmsg__fail(err, errlen, ret, "file larger than %llu bytes",
			    (unsigned long long)PPROF_MAX_DECOMPRESSED);
	if (ret)
		return errmsg__fail(err, errlen, ret, "%s", strerror(-ret));
	if (len)
		ret = pprof_profile__parse(buf, len, out, err, errlen);
	else
		ret = errmsg__fail(err, errlen, -EBADMSG, "empty file");
	free(buf);
	return ret;
}

/* View. */

const Perftools__Profiles__Profile *pprof_profile__proto(const struct pprof_profile *p)
{
	return p->msg;
}

const char *pprof_profile__string(const struct pprof_profile *p, int64_t idx)
{
	if (idx < 0 || (uint64_t)idx >= p->msg->n_string_table)
		return "";
	return p->msg->string_table[idx];
}

size_t pprof_profile__sample_type_count(const struct pprof_profile *p)
{
	return p->msg->n_sample_type;
}

const char *pprof_profile__sample_type(const struct pprof_profile *p, size_t i,
				       const char **unit)
{
	const Perftools__Profiles__ValueType *t = p->msg->sample_type[i];

	if (unit)
		*unit = p->msg->string_table[t->unit];
	return p->msg->string_table[t->type];
}

int pprof_profile__sample_index(const struct pprof_profile *p, const char *name, char *err,
				size_t errlen)
{
	const size_t n = p->msg->n_sample_type;
	const char *no_inuse;
	size_t used = 0;
	char *end;
	long v;

	if (!name || !*name) {
		const char *dst = pprof_profile__string(p, p->msg->default_sample_type);

		for (size_t i = 0; *dst && i < n; i++)
			if (!strcmp(pprof_profile__sample_type(p, i, NULL), dst))
				return (int)i;
		return (int)n - 1;
	}
	errno = 0;
	v = strtol(name, &end, 10);
	if (!*end && !errno) {
		if (v < 0 || (size_t)v >= n)
			return errmsg__fail(err, errlen, -EINVAL,
				    "sample index %s is outside the range [0..%zu]", name, n - 1);
		return (int)v;
	}
	/* pprof's legacy aliases: inuse_space selects "space". */
	no_inuse = strncmp(name, "inuse_", 6) ? name : name + 6;
	for (size_t i = 0; i < n; i++) {
		const char *t = pprof_profile__sample_type(p, i, NULL);

		if (!strcmp(t, name) || !strcmp(t, no_inuse))
			return (int)i;
	}
	if (err && errlen) {
		used = (size_t)snprintf(err, errlen, "sample index \"%s\" must be one of:", name);
		for (size_t i = 0; i < n && used < errlen; i++)
			used += (size_t)snprintf(err + used, errlen - used, " %s",
						 pprof_profile__sample_type(p, i, NULL));
	}
	return -EINVAL;
}

size_t pprof_profile__sample_count(const struct pprof_profile *p)
{
	return p->msg->n_sample;
}

int64_t pprof_profile__value(const struct pprof_profile *p, size_t sample, size_t index)
{
	return p->msg->sample[sample]->value[index];
}

size_t pprof_profile__frame_count(const struct pprof_profile *p)
{
	return p->nframes;
}

const struct pprof_frame *pprof_profile__frame(const struct pprof_profile *p, size_t id)
{
	return &p->frames[id];
}

int pprof_profile__stack(const struct pprof_profile *p, size_t sample, struct pprof_stack *st)
{
	size_t from = p->sample_loc_off[sample], to = p->sample_loc_off[sample + 1], n = 0;

	for (size_t i = from; i < to; i++)
		n += p->loc_nframes[p->sample_locs[i]];
	if (n > st->cap) {
		size_t ncap = st->cap ? st->cap : 64;
		const struct pprof_frame **nf;

		while (ncap < n)
			ncap *= 2;
		nf = realloc(st->frames, ncap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		st->frames = nf;
		st->cap = ncap;
	}
	st->n = 0;
	for (size_t i = from; i < to; i++) {
		uint32_t loc = p->sample_locs[i];
		const struct pprof_frame *f = &p->frames[p->loc_frame_off[loc]];

		for (uint32_t j = 0; j < p->loc_nframes[loc]; j++)
			st->frames[st->n++] = &f[j];
	}
	return 0;
}

void pprof_stack__release(struct pprof_stack *st)
{
	free(st->frames);
	st->frames = NULL;
	st->n = st->cap = 0;
}

const char *pprof_profile__label(const struct pprof_profile *p, size_t sample, const char *key)
{
	const Perftools__Profiles__Sample *s = p->msg->sample[sample];

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		/* As in pprof: a label is a string label when str is nonzero. */
		if (l->str && !strcmp(p->msg->string_table[l->key], key))
			return p->msg->string_table[l->str];
	}
	return NULL;
}

bool pprof_profile__num_label(const struct pprof_profile *p, size_t sample, const char *key,
			      int64_t *num)
{
	const Perftools__Profiles__Sample *s = p->msg->sample[sample];

	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];

		if (!l->str && (l->num || l->num_unit) &&
		    !strcmp(p->msg->string_table[l->key], key)) {
			*num = l->num;
			return true;
		}
	}
	return false;
}
