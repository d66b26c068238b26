// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reading a profile file of any kind; see profile_file.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "lib/errmsg.h"
#include "lib/fileio.h"
#include "lib/gzip.h"
#include "proto/folded.h"
#include "proto/heapprofile.h"
#include "proto/profile_file.h"
#include "proto/v8json.h"

#define JSON_FORMATS \
	(PROFILE_FORMAT_BIT(PROFILE_CPUPROFILE) | PROFILE_FORMAT_BIT(PROFILE_HEAPPROFILE))

static const char *const format_names[NR_PROFILE_FORMATS] = {
	[PROFILE_AUTO] = "auto",
	[PROFILE_PPROF] = "pprof",
	[PROFILE_CPUPROFILE] = "cpuprofile",
	[PROFILE_HEAPPROFILE] = "heapprofile",
	[PROFILE_FOLDED] = "folded",
};

const char *profile_format__str(enum profile_format f)
{
	return (unsigned int)f < NR_PROFILE_FORMATS ? format_names[f] : "unknown";
}

bool profile_format__parse(const char *s, enum profile_format *f)
{
	for (size_t i = 0; i < NR_PROFILE_FORMATS; i++) {
		if (!strcmp(s, format_names[i])) {
			*f = (enum profile_format)i;
			return true;
		}
	}
	return false;
}

/* ---- Reading ------------------------------------------------------------- */

static int read_result(struct profile_file *pf, int ret, char *err, size_t errlen)
{
	if (!ret && !pf->len) {
		free(pf->data);
		pf->data = NULL;
		errmsg__set(err, errlen, "empty file");
		return -EINVAL;
	}
	if (ret == -EFBIG)
		errmsg__set(err, errlen, "larger than the %llu MiB input limit",
			    PROFILE_FILE_MAX >> 20);
	else if (ret == -ENOMEM)
		errmsg__set(err, errlen, "out of memory");
	else if (ret)
		errmsg__set(err, errlen, "%s", strerror(-ret));
	return ret;
}

int profile_file__read(struct profile_file *pf, const char *path, char *err, size_t errlen)
{
	int ret;

	if (strcmp(path, "-"))
		ret = fileio__read_stream(path, PROFILE_FILE_MAX, &pf->data, &pf->len);
	else
		ret = fileio__read_fd(STDIN_FILENO, PROFILE_FILE_MAX, &pf->data, &pf->len);
	return read_result(pf, ret, err, errlen);
}

int profile_file__set_data(struct profile_file *pf, const void *data, size_t len, char *err,
			   size_t errlen)
{
	int ret = 0;

	pf->data = malloc(len + 1);
	pf->len = 0;
	if (!pf->data) {
		ret = -ENOMEM;
	} else {
		memcpy(pf->data, data, len);
		pf->data[len] = '\0';
		pf->len = len;
	}
	return read_result(pf, ret, err, errlen);
}

/* ---- Telling the format and parsing -------------------------------------- */

/* Does the data look like a JSON object (past a UTF-8 BOM and blanks)? */
static bool looks_like_json(const struct profile_file *pf)
{
	const char *s = (const char *)pf->data, *end = s + pf->len;

	if (end - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n'))
		s++;
	return s < end && *s == '{';
}

static int parse_json(struct profile_file *pf, char *err, size_t errlen)
{
	if (pf->json)
		return 0;
	if (!looks_like_json(pf)) {
		errmsg__set(err, errlen, "not JSON: a V8 profile is a JSON object");
		return -EINVAL;
	}
	pf->json = v8_json__parse((const char *)pf->data, pf->len, err, errlen);
	return pf->json ? 0 : -errno;
}

/* A V8 profile: "nodes" makes it a CPU profile, "head" a heap profile. */
static enum profile_format json_kind(struct json_object *json)
{
	if (v8_json__unwrap(json, "nodes", NULL, 0))
		return PROFILE_CPUPROFILE;
	if (v8_json__unwrap(json, "head", NULL, 0))
		return PROFILE_HEAPPROFILE;
	return PROFILE_AUTO;
}

static int parse_as(struct profile_file *pf, enum profile_format f, char *err, size_t errlen)
{
	int ret;

	switch (f) {
	case PROFILE_PPROF:
		if (pf->prof)	/* parsed while telling the format */
			return 0;
		return pprof_profile__parse(pf->data, pf->len, &pf->prof, err, errlen);
	case PROFILE_CPUPROFILE:
		ret = parse_json(pf, err, errlen);
		return ret ? ret : v8_cpu_profile__from_json(pf->json, &pf->cpu, err, errlen);
	case PROFILE_HEAPPROFILE:
		/* Converting it is the parse: that takes the sampling interval. */
		return parse_json(pf, err, errlen);
	case PROFILE_FOLDED:
		return folded__to_pprof((const char *)pf->data, pf->len, &pf->builder, err,
					errlen);
	default:
		errmsg__set(err, errlen, "no format to read it as");
		return -EINVAL;
	}
}

/* Which of V8's JSON formats it is, parsing the JSON on the way. */
static int tell_json(struct profile_file *pf, unsigned int formats, enum profile_format *f,
		     char *err, size_t errlen)
{
	int ret;

	if ((formats & JSON_FORMATS) != JSON_FORMATS) {
		*f = formats & PROFILE_FORMAT_BIT(PROFILE_CPUPROFILE) ? PROFILE_CPUPROFILE
								      : PROFILE_HEAPPROFILE;
		return 0;
	}
	ret = parse_json(pf, err, errlen);
	if (ret)
		return ret;
	*f = json_kind(pf->json);
	if (*f == PROFILE_AUTO) {
		errmsg__set(err, errlen,
			    "JSON without \"nodes\" or \"head\": not a V8 CPU or heap profile");
		return -EINVAL;
	}
	return 0;
}

/*
 * Neither gzip nor JSON: pprof when it parses as pprof (pf->prof is then
 * set), else, when accepted and text, folded stacks.
 */
static int tell_other(struct profile_file *pf, unsigned int formats, enum profile_format *f,
		      char *err, size_t errlen)
{
	char perr[256] = "";
	int ret;

	if (!(formats & PROFILE_FORMAT_BIT(PROFILE_PPROF))) {
		if (formats & PROFILE_FORMAT_BIT(PROFILE_FOLDED)) {
			*f = PROFILE_FOLDED;
			return 0;
		}
		errmsg__set(err, errlen, "not JSON: a V8 profile is a JSON object");
		return -EINVAL;
	}
	ret = pprof_profile__parse(pf->data, pf->len, &pf->prof, perr, sizeof(perr));
	if (!ret) {
		*f = PROFILE_PPROF;
		return 0;
	}
	if (!(formats & PROFILE_FORMAT_BIT(PROFILE_FOLDED)) || memchr(pf->data, '\0', pf->len)) {
		errmsg__set(err, errlen, "%s", perr);
		return ret;
	}
	*f = PROFILE_FOLDED;
	return 0;
}

static int tell_format(struct profile_file *pf, unsigned int formats, enum profile_format *f,
		       char *err, size_t errlen)
{
	for (int i = PROFILE_PPROF; i < NR_PROFILE_FORMATS; i++) {
		if (formats == PROFILE_FORMAT_BIT(i)) {
			*f = (enum profile_format)i;
			return 0;
		}
	}
	if ((formats & PROFILE_FORMAT_BIT(PROFILE_PPROF)) && gzip__is_gzip(pf->data, pf->len)) {
		*f = PROFILE_PPROF;
		return 0;
	}
	if ((formats & JSON_FORMATS) && looks_like_json(pf))
		return tell_json(pf, formats, f, err, errlen);
	return tell_other(pf, formats, f, err, errlen);
}

int profile_file__parse(struct profile_file *pf, unsigned int formats, char *err, size_t errlen)
{
	enum profile_format f = PROFILE_AUTO;
	int ret;

	pf->format = PROFILE_AUTO;
	ret = tell_format(pf, formats & PROFILE_FORMATS_ALL, &f, err, errlen);
	if (!ret)
		ret = parse_as(pf, f, err, errlen);
	if (!ret)
		pf->format = f;
	return ret;
}

/* ---- Making pprof -------------------------------------------------------- */

int profile_file__convert(struct profile_file *pf, const struct v8_pprof_opts *o,
			  uint64_t heap_interval, char *err, size_t errlen)
{
	int ret = 0;

	if (pf->builder)
		return 0;
	if (pf->format == PROFILE_CPUPROFILE) {
		ret = v8_cpu_profile__to_pprof(pf->cpu, o, &pf->builder);
		if (ret)
			errmsg__set(err, errlen, "converting the .cpuprofile to pprof: %s",
				    strerror(-ret));
	} else if (pf->format == PROFILE_HEAPPROFILE) {
		ret = v8_heap_profile__to_pprof_json(pf->json, o, heap_interval, &pf->builder,
						     err, errlen);
	}
	return ret;
}

int profile_file__profile(struct profile_file *pf, char *err, size_t errlen)
{
	uint8_t *data;
	size_t len;
	int ret;

	if (pf->prof)
		return 0;
	ret = profile_file__convert(pf, NULL, 0, err, errlen);
	if (ret)
		return ret;
	if (!pf->builder) {
		errmsg__set(err, errlen, "no profile read");
		return -EINVAL;
	}
	ret = pprof_builder__serialize(pf->builder, false, &data, &len);
	if (ret) {
		errmsg__set(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	ret = pprof_profile__parse(data, len, &pf->prof, err, errlen);
	free(data);
	return ret;
}

/* A pprof input packed again. */
static int pack_profile(const struct pprof_profile *p, bool gzip, uint8_t **out, size_t *len)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(p);
	size_t n = perftools__profiles__profile__get_packed_size(msg);
	uint8_t *raw = malloc(n ? n : 1);
	int ret = 0;

	if (!raw)
		return -ENOMEM;
	perftools__profiles__profile__pack(msg, raw);
	if (!gzip) {
		*out = raw;
		*len = n;
		return 0;
	}
	ret = gzip__compress(raw, n, out, len);
	free(raw);
	return ret;
}

int profile_file__pprof_bytes(struct profile_file *pf, bool gzip, uint8_t **out, size_t *len,
			      char *err, size_t errlen)
{
	int ret;

	*out = NULL;
	*len = 0;
	ret = profile_file__convert(pf, NULL, 0, err, errlen);
	if (ret)
		return ret;
	if (pf->builder)
		ret = pprof_builder__serialize(pf->builder, gzip, out, len);
	else if (pf->prof)
		ret = pack_profile(pf->prof, gzip, out, len);
	else
		ret = -EINVAL;
	if (ret)
		errmsg__set(err, errlen, "%s", strerror(-ret));
	return ret;
}

bool profile_file__is_v8_cpu(const struct profile_file *pf)
{
	return pf->format == PROFILE_CPUPROFILE ||
	       (pf->prof && v8_cpu_profile__converted(pf->prof));
}

void profile_file__release(struct profile_file *pf)
{
	free(pf->data);
	json_object_put(pf->json);
	v8_cpu_profile__free(pf->cpu);
	pprof_profile__free(pf->prof);
	pprof_builder__free(pf->builder);
	memset(pf, 0, sizeof(*pf));
}
