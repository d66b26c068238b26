// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * isoprof convert IN OUT: between pprof, V8's .cpuprofile and heap profile
 * (input only), and folded stacks.  Every conversion goes through pprof:
 * a non-pprof input is built into a pprof profile first, and a non-pprof
 * output is written from the pprof reader's view, so each direction is
 * written once (v8profile.c) and shared with crosscheck, flame and serve.
 *
 * Formats come from --from/--to, else IN's content (gzip or protobuf:
 * pprof; JSON with "nodes": .cpuprofile; with "head": heap profile; text:
 * folded) and OUT's extension.  "-" reads stdin / writes stdout.  Files
 * are written through a temporary file and renamed, so a failed
 * conversion leaves no partial output.
 */
#include <argp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <zlib.h>

#include "user/cmd/commands.h"
#include "proto/pprof_builder.h"
#include "proto/pprof_reader.h"
#include "proto/v8profile.h"

enum fmt { FMT_AUTO, FMT_PPROF, FMT_CPUPROFILE, FMT_HEAPPROFILE, FMT_FOLDED };

static const char *const fmt_names[] = {
	[FMT_AUTO] = "auto", [FMT_PPROF] = "pprof", [FMT_CPUPROFILE] = "cpuprofile",
	[FMT_HEAPPROFILE] = "heapprofile", [FMT_FOLDED] = "folded",
};

enum {
	OPT_FROM = 0x100,
	OPT_TO,
	OPT_RAW,
	OPT_SAMPLE_INDEX,
	OPT_HEAP_INTERVAL,
};

struct convert_env {
	const char *in, *out;
	enum fmt from, to;
	bool raw;
	const char *sample_index;
	uint64_t heap_interval;
};

/* Raw input cap: pprof's decompressed cap bounds a raw protobuf as well. */
#define INPUT_MAX PPROF_MAX_DECOMPRESSED

static const struct argp_option convert_options[] = {
	{ "from", OPT_FROM, "FORMAT", 0,
	  "Input format: pprof, cpuprofile, heapprofile or folded (default: from the content)",
	  0 },
	{ "to", OPT_TO, "FORMAT", 0,
	  "Output format: pprof, cpuprofile or folded (default: from OUT's extension: "
	  ".pb.gz .pb .pprof, .cpuprofile .json, .folded .txt)",
	  0 },
	{ "raw", OPT_RAW, NULL, 0, "Write pprof uncompressed (default: gzip)", 0 },
	{ "sample-index", OPT_SAMPLE_INDEX, "N|NAME", 0,
	  "Sample type whose values folded output counts (default: the profile's default)", 0 },
	{ "heap-interval", OPT_HEAP_INTERVAL, "BYTES", 0,
	  "Sampling interval the heap profile was taken with, for its pprof period "
	  "(node --heap-prof: 524288; CDP default: 32768)",
	  0 },
	{ 0 },
};

static enum fmt parse_fmt(const char *s)
{
	for (size_t i = FMT_PPROF; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
		if (!strcmp(s, fmt_names[i]))
			return (enum fmt)i;
	return FMT_AUTO;
}

static error_t convert_parse(int key, char *arg, struct argp_state *state)
{
	struct convert_env *env = state->input;
	char *end;

	switch (key) {
	case OPT_FROM:
		env->from = parse_fmt(arg);
		if (env->from == FMT_AUTO)
			argp_error(state, "--from must be pprof, cpuprofile, heapprofile or "
					  "folded, not '%s'",
				   arg);
		break;
	case OPT_TO:
		env->to = parse_fmt(arg);
		if (env->to == FMT_AUTO || env->to == FMT_HEAPPROFILE)
			argp_error(state, "--to must be pprof, cpuprofile or folded, not '%s'",
				   arg);
		break;
	case OPT_RAW:
		env->raw = true;
		break;
	case OPT_SAMPLE_INDEX:
		env->sample_index = arg;
		break;
	case OPT_HEAP_INTERVAL:
		errno = 0;
		env->heap_interval = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-' || !env->heap_interval)
			argp_error(state, "--heap-interval must be a positive number of bytes, "
					  "not '%s'", arg);
		break;
	case ARGP_KEY_ARG:
		if (!env->in)
			env->in = arg;
		else if (!env->out)
			env->out = arg;
		else
			argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env->out)
			argp_error(state, "name an input and an output file: IN OUT");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcasecmp(s + n - m, suffix);
}

static enum fmt fmt_from_name(const char *path)
{
	static const struct {
		const char *ext;
		enum fmt fmt;
	} exts[] = {
		{ ".pb.gz", FMT_PPROF }, { ".pb", FMT_PPROF }, { ".pprof", FMT_PPROF },
		{ ".cpuprofile", FMT_CPUPROFILE }, { ".json", FMT_CPUPROFILE },
		{ ".folded", FMT_FOLDED }, { ".txt", FMT_FOLDED },
	};

	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ends_with(path, exts[i].ext))
			return exts[i].fmt;
	return FMT_AUTO;
}

/* Whole file (or stdin) into memory, NUL-terminated, at most INPUT_MAX bytes. */
static int read_input(const char *path, char **data, size_t *len, char *err, size_t errlen)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
	size_t cap = 1 << 16, used = 0;
	char *buf = NULL;
	struct stat st;
	int ret = 0;

	if (fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	if (!fstat(fd, &st) && S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		snprintf(err, errlen, "%s", strerror(EISDIR));
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (!buf || used == cap) {
			char *nb;

			if (used > INPUT_MAX) {
				snprintf(err, errlen, "larger than the %llu MiB input limit",
					 INPUT_MAX >> 20);
				ret = -EFBIG;
				goto out;
			}
			if (buf)
				cap = cap > INPUT_MAX / 2 ? INPUT_MAX + 1 : cap * 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				ret = -ENOMEM;
				snprintf(err, errlen, "out of memory");
				goto out;
			}
			buf = nb;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, errlen, "%s", strerror(-ret));
			goto out;
		}
		if (!n)
			break;
		used += (size_t)n;
	}
	if (!used) {
		ret = -EINVAL;
		snprintf(err, errlen, "empty file");
		goto out;
	}
	buf[used] = '\0';
	*data = buf;
	*len = used;
	buf = NULL;
out:
	free(buf);
	if (fd != STDIN_FILENO)
		close(fd);
	return ret;
}

/* "nodes" names a CPU profile, "head" a heap profile, either bare or inside a CDP reply. */
static enum fmt json_kind(struct json_object *o)
{
	for (int depth = 0; depth < 4 && json_object_is_type(o, json_type_object); depth++) {
		struct json_object *inner;

		if (json_object_object_get_ex(o, "nodes", NULL))
			return FMT_CPUPROFILE;
		if (json_object_object_get_ex(o, "head", NULL))
			return FMT_HEAPPROFILE;
		if (!json_object_object_get_ex(o, "result", &inner) &&
		    !json_object_object_get_ex(o, "profile", &inner))
			break;
		o = inner;
	}
	return FMT_AUTO;
}

static const char *skip_space(const char *s, const char *end)
{
	if (end - s >= 3 && !memcmp(s, "\xef\xbb\xbf", 3))
		s += 3;
	while (s < end && strchr(" \t\r\n", *s))
		s++;
	return s;
}

struct input {
	enum fmt fmt;
	struct json_object *json;	/* JSON inputs */
	struct pprof_profile *prof;	/* pprof, once parsed */
	struct pprof_builder *b;	/* non-pprof inputs, converted */
};

static int detect(const struct convert_env *env, const char *data, size_t len,
		  struct input *in, char *err, size_t errlen)
{
	const char *first = skip_space(data, data + len);
	char perr[256];
	int ret;

	in->fmt = env->from;
	if (in->fmt == FMT_AUTO && len >= 2 && (uint8_t)data[0] == 0x1f &&
	    (uint8_t)data[1] == 0x8b)
		in->fmt = FMT_PPROF;
	if ((in->fmt == FMT_AUTO || in->fmt == FMT_CPUPROFILE || in->fmt == FMT_HEAPPROFILE) &&
	    first < data + len && *first == '{') {
		in->json = v8_json__parse(data, len, err, errlen);
		if (!in->json)
			return -errno;
		if (in->fmt == FMT_AUTO) {
			in->fmt = json_kind(in->json);
			if (in->fmt == FMT_AUTO) {
				snprintf(err, errlen, "JSON without \"nodes\" or \"head\": "
						      "not a V8 CPU or heap profile");
				return -EINVAL;
			}
		}
		return 0;
	}
	if (in->fmt == FMT_CPUPROFILE || in->fmt == FMT_HEAPPROFILE) {
		snprintf(err, errlen, "not JSON: a V8 profile is a JSON object");
		return -EINVAL;
	}
	if (in->fmt == FMT_AUTO || in->fmt == FMT_PPROF) {
		ret = pprof_profile__parse((const uint8_t *)data, len, &in->prof, perr,
					   sizeof(perr));
		if (!ret) {
			in->fmt = FMT_PPROF;
			return 0;
		}
		if (in->fmt == FMT_PPROF || memchr(data, '\0', len)) {
			snprintf(err, errlen, "%s", perr);
			return ret;
		}
		in->fmt = FMT_FOLDED;
	}
	return 0;
}

static int build_input(const struct convert_env *env, const char *data, size_t len,
		       struct input *in, char *err, size_t errlen)
{
	char comment[600];
	const char *comments[] = { comment };
	struct v8_pprof_opts opts = { .comments = comments, .ncomments = 1 };
	struct v8_cpu_profile *cpu;
	int ret;

	snprintf(comment, sizeof(comment), "converted from %s (%s) by isoprof convert", env->in,
		 fmt_names[in->fmt]);
	switch (in->fmt) {
	case FMT_PPROF:
		return 0;
	case FMT_CPUPROFILE:
		ret = v8_cpu_profile__from_json(in->json, &cpu, err, errlen);
		if (ret)
			return ret;
		ret = v8_cpu_profile__to_pprof(cpu, &opts, &in->b);
		v8_cpu_profile__free(cpu);
		break;
	case FMT_HEAPPROFILE:
		return v8_heap_profile__to_pprof_json(in->json, &opts, env->heap_interval, &in->b,
						      err, errlen);
	case FMT_FOLDED:
		return folded__to_pprof(data, len, &in->b, err, errlen);
	default:
		return -EINVAL;
	}
	if (ret)
		snprintf(err, errlen, "%s", strerror(-ret));
	return ret;
}

/* An output written to a temporary file and renamed over OUT on success. */
struct output {
	const char *path;
	char *tmp;
	FILE *f;
};

static int output__open(struct output *o, const char *path)
{
	int fd;

	o->path = path;
	if (!strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (asprintf(&o->tmp, "%s.tmp.XXXXXX", path) < 0) {
		o->tmp = NULL;
		return -ENOMEM;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
		return -errno;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;

		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
		return -e;
	}
	return 0;
}

static int output__close(struct output *o, bool commit)
{
	int ret = 0;

	if (!o->f)
		return 0;
	if (fflush(o->f) == EOF || ferror(o->f))
		ret = -(errno ? errno : EIO);
	if (o->f != stdout) {
		if (!ret && fsync(fileno(o->f)))
			ret = -errno;
		if (fclose(o->f) && !ret)
			ret = -errno;
		if (commit && !ret && rename(o->tmp, o->path))
			ret = -errno;
		if (!commit || ret)
			unlink(o->tmp);
		free(o->tmp);
	}
	o->f = NULL;
	o->tmp = NULL;
	return ret;
}

static int gzip_buf(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream zs = { 0 };
	uLong bound;
	uint8_t *buf;
	int zr;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	bound = deflateBound(&zs, (uLong)len);
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = buf;
	zs.avail_out = (uInt)bound;
	zr = deflate(&zs, Z_FINISH);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		free(buf);
		return -EIO;
	}
	*out = buf;
	return 0;
}

/* pprof output: the builder's bytes, or an input profile packed again. */
static int write_pprof(const struct convert_env *env, struct input *in, struct output *o)
{
	uint8_t *data = NULL, *gz = NULL;
	size_t len = 0, gzlen = 0;
	int ret;

	if (in->b) {
		ret = pprof_builder__serialize(in->b, !env->raw, &data, &len);
	} else {
		const Perftools__Profiles__Profile *msg = pprof_profile__proto(in->prof);

		len = perftools__profiles__profile__get_packed_size(msg);
		data = malloc(len ? len : 1);
		if (!data)
			return -ENOMEM;
		perftools__profiles__profile__pack(msg, data);
		ret = 0;
		if (!env->raw && len <= UINT32_MAX) {
			ret = gzip_buf(data, len, &gz, &gzlen);
			if (!ret) {
				free(data);
				data = gz;
				len = gzlen;
			}
		}
	}
	if (!ret && fwrite(data, 1, len, o->f) != len)
		ret = -EIO;
	free(data);
	return ret;
}

static int ensure_profile(struct input *in, char *err, size_t errlen)
{
	uint8_t *data;
	size_t len;
	int ret;

	if (in->prof)
		return 0;
	ret = pprof_builder__serialize(in->b, false, &data, &len);
	if (ret) {
		snprintf(err, errlen, "%s", strerror(-ret));
		return ret;
	}
	ret = pprof_profile__parse(data, len, &in->prof, err, errlen);
	free(data);
	return ret;
}

static int convert(const struct convert_env *env, enum fmt to)
{
	struct input in = { 0 };
	struct output o = { 0 };
	char *data = NULL, err[512] = "";
	const char *bad = env->in;
	size_t len = 0;
	int ret, si = 0;

	ret = read_input(env->in, &data, &len, err, sizeof(err));
	if (!ret)
		ret = detect(env, data, len, &in, err, sizeof(err));
	if (!ret)
		ret = build_input(env, data, len, &in, err, sizeof(err));
	if (!ret && to != FMT_PPROF)
		ret = ensure_profile(&in, err, sizeof(err));
	if (!ret && to == FMT_FOLDED) {
		si = pprof_profile__sample_index(in.prof, env->sample_index, err, sizeof(err));
		ret = si < 0 ? si : 0;
	}
	if (ret)
		goto out;
	free(data);
	data = NULL;

	bad = env->out;
	ret = output__open(&o, env->out);
	if (ret) {
		snprintf(err, sizeof(err), "%s", strerror(-ret));
		goto out;
	}
	switch (to) {
	case FMT_PPROF:
		ret = write_pprof(env, &in, &o);
		break;
	case FMT_CPUPROFILE:
		ret = v8_cpu_profile__from_pprof(in.prof, &data, &len, err, sizeof(err));
		if (!ret && fwrite(data, 1, len, o.f) != len)
			ret = -EIO;
		break;
	case FMT_FOLDED:
		ret = folded__from_pprof(in.prof, (size_t)si, o.f);
		break;
	default:
		ret = -EINVAL;
	}
	if (ret && !err[0])
		snprintf(err, sizeof(err), "%s", strerror(-ret));
	{
		int cr = output__close(&o, !ret);

		if (!ret && cr) {
			ret = cr;
			snprintf(err, sizeof(err), "%s", strerror(-cr));
		}
	}
out:
	output__close(&o, false);
	if (ret)
		fprintf(stderr, "isoprof: %s: %s\n", strcmp(bad, "-") ? bad : "<stdin/stdout>",
			err[0] ? err : strerror(-ret));
	free(data);
	json_object_put(in.json);
	pprof_profile__free(in.prof);
	pprof_builder__free(in.b);
	return ret ? 1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	static const struct argp argp = {
		.options = convert_options,
		.parser = convert_parse,
		.args_doc = "IN OUT",
		.doc = "Convert a profile between pprof, V8's .cpuprofile (and, as input, V8's "
		       "heap profile) and folded stacks.  IN or OUT may be - for stdin/stdout.",
	};
	struct convert_env env = { 0 };
	enum fmt to;

	if (argp_parse(&argp, argc, argv, 0, NULL, &env))
		return 2;
	to = env.to != FMT_AUTO ? env.to : fmt_from_name(env.out);
	if (to == FMT_AUTO) {
		fprintf(stderr,
			"isoprof: %s: cannot tell the output format from the name; "
			"use --to pprof|cpuprofile|folded\n",
			env.out);
		return 2;
	}
	if (env.sample_index && to != FMT_FOLDED) {
		fprintf(stderr, "isoprof: convert: --sample-index applies to folded output only\n");
		return 2;
	}
	if (env.raw && to != FMT_PPROF) {
		fprintf(stderr, "isoprof: convert: --raw applies to pprof output only\n");
		return 2;
	}
	return convert(&env, to);
}
