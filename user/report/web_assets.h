/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * web_assets: the web page's files (user/report/web/), embedded in the binary at
 * build time, and the self-contained page `isoprof flame` writes.
 *
 * Files:
 *   web_assets__find() looks a request path up ("/" is "/index.html") and
 *   returns the asset or NULL.  Assets are static, read-only, live for the
 *   whole program, and their data is followed by a NUL byte (not counted
 *   in len).  web_assets__count()/__at() list them (for the daemon's
 *   routing table and for tests).
 *
 * Standalone page:
 *   web_assets__standalone_page() returns index.html with every stylesheet
 *   and script inlined, the capture panel disabled, and one profile (its
 *   exact bytes, base64) plus optional title and sample index embedded as
 *   JSON in <script type="application/json" id="isoprof-embed">.  It opens
 *   from disk, offline.  Returns 0 and a malloc()ed, NUL-terminated
 *   document in *out (length in *outlen; the caller frees it), or
 *   -ENOMEM, or -EINVAL with err saying which asset broke the contract
 *   (a tag the page no longer has, or "</script" inside a script).
 *
 * Nothing prints; no state besides the constant assets.
 */
#ifndef ISOPROF_REPORT_WEB_ASSETS_H
#define ISOPROF_REPORT_WEB_ASSETS_H

#include <stddef.h>
#include <stdint.h>

struct web_asset {
	const char *path;		/* "/index.html", "/app.js", ... */
	const char *content_type;	/* with charset, ready for Content-Type */
	const unsigned char *data;
	size_t len;
};

const struct web_asset *web_assets__find(const char *path);
size_t web_assets__count(void);
const struct web_asset *web_assets__at(size_t i);

struct web_page_opts {
	const char *title;		/* NULL or "": the page's own */
	const char *filename;		/* Download name; NULL: "profile.pb.gz" */
	int sample_index;		/* initial sample type; -1: the profile's default */
};

int web_assets__standalone_page(const uint8_t *profile, size_t len,
				const struct web_page_opts *opts, char **out, size_t *outlen,
				char *err, size_t errlen);

#endif /* ISOPROF_REPORT_WEB_ASSETS_H */
