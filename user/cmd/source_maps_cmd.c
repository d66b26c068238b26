// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* source_maps_cmd: source maps at the command line; see source_maps_cmd.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/cmd/source_maps_cmd.h"
#include "lib/textescape.h"
#include "proto/pprof_reader.h"
#include "proto/profile_file.h"
#include "user/attribute/remap_pprof.h"
#include "user/attribute/source_maps.h"

int source_maps_cmd__apply(struct profile_file *pf, const char *dir, const char *path)
{
	struct source_maps_opts o = { .dir = dir };
	struct source_maps *sms = source_maps__new(&o);
	uint8_t *raw = NULL, *mapped = NULL;
	char a[TEXTESCAPE_SIZE(256)];
	size_t raw_len, mapped_len, n = 0;
	char msg[512] = "";
	int err;

	if (!sms) {
		err = -ENOMEM;
		goto out;
	}
	err = profile_file__profile(pf, msg, sizeof(msg));
	if (!err)
		err = profile_file__pprof_bytes(pf, false, &raw, &raw_len, msg, sizeof(msg));
	if (!err)
		err = remap_pprof__apply(sms, raw, raw_len, &mapped, &mapped_len, &n, msg,
					 sizeof(msg));
	if (err)
		goto out;
	profile_file__release(pf);
	memset(pf, 0, sizeof(*pf));
	err = profile_file__set_data(pf, mapped, mapped_len, msg, sizeof(msg));
	if (!err)
		err = profile_file__parse(pf, PROFILE_FORMAT_BIT(PROFILE_PPROF), msg, sizeof(msg));
	if (!err)
		err = profile_file__profile(pf, msg, sizeof(msg));
	source_maps__print_notes(sms);
	if (!err && !n && !source_maps__count(sms))
		fprintf(stderr, "isoprof: note: %s: no JS function with a generated position to "
			"map\n", textescape(path, a, sizeof(a)));
out:
	if (err)
		fprintf(stderr, "isoprof: %s: source maps: %s\n", textescape(path, a, sizeof(a)),
			msg[0] ? msg : strerror(-err));
	free(raw);
	free(mapped);
	source_maps__free(sms);
	return err;
}

int source_maps_cmd__apply_profile(struct pprof_profile **p, const char *dir, const char *path)
{
	const Perftools__Profiles__Profile *msg = pprof_profile__proto(*p);
	struct profile_file pf = { 0 };
	size_t len = perftools__profiles__profile__get_packed_size(msg);
	uint8_t *raw = malloc(len ? len : 1);
	char err[256] = "", a[TEXTESCAPE_SIZE(256)];
	int rc;

	if (!raw) {
		fprintf(stderr, "isoprof: %s: source maps: %s\n", textescape(path, a, sizeof(a)),
			strerror(ENOMEM));
		return -ENOMEM;
	}
	perftools__profiles__profile__pack(msg, raw);
	rc = profile_file__set_data(&pf, raw, len, err, sizeof(err));
	free(raw);
	if (!rc)
		rc = profile_file__parse(&pf, PROFILE_FORMAT_BIT(PROFILE_PPROF), err, sizeof(err));
	if (rc) {
		fprintf(stderr, "isoprof: %s: source maps: %s\n", textescape(path, a, sizeof(a)),
			err[0] ? err : strerror(-rc));
		profile_file__release(&pf);
		return rc;
	}
	rc = source_maps_cmd__apply(&pf, dir, path);
	if (!rc) {
		pprof_profile__free(*p);
		*p = pf.prof;
		pf.prof = NULL;
	}
	profile_file__release(&pf);
	return rc;
}

bool source_maps_cmd__is_mapped(const struct pprof_profile *p)
{
	for (size_t i = 0; i < pprof_profile__frame_count(p); i++) {
		const struct pprof_frame *f = pprof_profile__frame(p, i);
		const char *script;
		size_t len;
		uint32_t line, col;

		if (*f->filename &&
		    remap_pprof__position(f->system_name, &script, &len, &line, &col) &&
		    (strlen(f->filename) != len || memcmp(f->filename, script, len)))
			return true;
	}
	return false;
}
