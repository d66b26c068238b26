// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The page's files are pulled in with .incbin rather than turned into C
 * arrays: they stay plain files a browser opens directly while they are
 * being written, the build needs no generator, and the Makefile lists them
 * as prerequisites of this object so an edit rebuilds it.  Paths are
 * relative to the top of the tree, where make runs the compiler.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/array.h"
#include "lib/json.h"
#include "user/report/web_assets.h"

/* A trailing NUL lets the page builder use string functions on the bytes. */
#define WEB_INCBIN(sym, file)                                                   \
	__asm__(".pushsection .rodata\n"                                        \
		".globl " #sym "\n"                                             \
		".hidden " #sym "\n"                                            \
		".balign 16\n" #sym ":\n"                                       \
		".incbin \"" file "\"\n"                                        \
		".globl " #sym "_end\n"                                         \
		".hidden " #sym "_end\n" #sym "_end:\n"                         \
		".byte 0\n"                                                     \
		".popsection\n");                                               \
	extern const unsigned char sym[], sym##_end[]

WEB_INCBIN(isoprof_web_index_html, "user/report/web/index.html");
WEB_INCBIN(isoprof_web_isoprof_css, "user/report/web/isoprof.css");
WEB_INCBIN(isoprof_web_pprof_js, "user/report/web/pprof.js");
WEB_INCBIN(isoprof_web_flame_js, "user/report/web/flame.js");
WEB_INCBIN(isoprof_web_app_js, "user/report/web/app.js");

#define HTML "text/html; charset=utf-8"
#define CSS "text/css; charset=utf-8"
#define JS "text/javascript; charset=utf-8"

static struct web_asset assets[] = {
	{ "/index.html", HTML, isoprof_web_index_html, 0 },
	{ "/isoprof.css", CSS, isoprof_web_isoprof_css, 0 },
	{ "/pprof.js", JS, isoprof_web_pprof_js, 0 },
	{ "/flame.js", JS, isoprof_web_flame_js, 0 },
	{ "/app.js", JS, isoprof_web_app_js, 0 },
};

static const unsigned char *const asset_ends[] = {
	isoprof_web_index_html_end, isoprof_web_isoprof_css_end, isoprof_web_pprof_js_end,
	isoprof_web_flame_js_end, isoprof_web_app_js_end,
};

#define NR_ASSETS (sizeof(assets) / sizeof(assets[0]))

_Static_assert(sizeof(asset_ends) / sizeof(asset_ends[0]) == NR_ASSETS,
	       "one end symbol per asset");

/* Lengths come from symbol differences, which are not constant expressions in C. */
static void assets_init(void)
{
	for (size_t i = 0; i < NR_ASSETS; i++)
		assets[i].len = (size_t)(asset_ends[i] - assets[i].data);
}

static pthread_once_t assets_once = PTHREAD_ONCE_INIT;

size_t web_assets__count(void)
{
	return NR_ASSETS;
}

const struct web_asset *web_assets__at(size_t i)
{
	if (i >= NR_ASSETS)
		return NULL;
	pthread_once(&assets_once, assets_init);
	return &assets[i];
}

const struct web_asset *web_assets__find(const char *path)
{
	if (!path)
		return NULL;
	if (!strcmp(path, "/") || !*path)
		path = "/index.html";
	for (size_t i = 0; i < NR_ASSETS; i++)
		if (!strcmp(path, assets[i].path))
			return web_assets__at(i);
	return NULL;
}

/* ---- the standalone page ------------------------------------------------ */

struct buf {
	char *p;
	size_t len, cap;
};

static int buf__add(struct buf *b, const void *data, size_t len)
{
	if (len > SIZE_MAX - b->len - 1 || array_grow(&b->p, &b->cap, b->len + len + 1))
		return -ENOMEM;
	memcpy(b->p + b->len, data, len);
	b->len += len;
	b->p[b->len] = '\0';
	return 0;
}

static int buf__str(struct buf *b, const char *s)
{
	return buf__add(b, s, strlen(s));
}

static char *base64(const uint8_t *in, size_t len)
{
	static const char tab[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out, *o;
	size_t i;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3) {
		errno = ENOMEM;
		return NULL;
	}
	out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	o = out;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = tab[(v >> 6) & 63];
		*o++ = tab[v & 63];
	}
	if (i < len) {
		uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0);

		*o++ = tab[v >> 18];
		*o++ = tab[(v >> 12) & 63];
		*o++ = i + 1 < len ? tab[(v >> 6) & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/*
 * The embed as JSON.  Inside a <script> element only "</script" and "<!--"
 * can end or confuse the raw text, so every '<' becomes \u003c, which
 * JSON.parse reads back unchanged.
 */
static int add_embed(struct buf *b, const uint8_t *profile, size_t len,
		     const struct web_page_opts *opts)
{
	struct json_object *o = json_object_new_object(), *v;
	const char *s;
	char *b64 = NULL;
	int err = -ENOMEM;

	if (!o)
		return -ENOMEM;
	b64 = base64(profile, len);
	if (!b64)
		goto out;
	if (opts && opts->title && *opts->title) {
		v = json__text(opts->title);
		if (!v || json_object_object_add(o, "title", v))
			goto out;
	}
	v = json__text(opts && opts->filename ? opts->filename : "profile.pb.gz");
	if (!v || json_object_object_add(o, "filename", v))
		goto out;
	if (opts && opts->sample_index >= 0) {
		v = json_object_new_int(opts->sample_index);
		if (!v || json_object_object_add(o, "sample_index", v))
			goto out;
	}
	v = json_object_new_string(b64);
	if (!v || json_object_object_add(o, "profile", v))
		goto out;
	s = json__dump(o, false, NULL);
	if (!s)
		goto out;
	if (buf__str(b, "<script type=\"application/json\" id=\"isoprof-embed\">"))
		goto out;
	for (const char *lt; (lt = strchr(s, '<')); s = lt + 1)
		if (buf__add(b, s, (size_t)(lt - s)) || buf__str(b, "\\u003c"))
			goto out;
	if (buf__str(b, s) || buf__str(b, "</script>\n"))
		goto out;
	err = 0;
out:
	free(b64);
	json_object_put(o);
	return err;
}

static const char *find_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return hay;
	return NULL;
}

/* How index.html names each asset, and what replaces that tag. */
static int inline_tag(const struct web_asset *a, char *tag, size_t tagsz, const char **open,
		      const char **close, const char **forbidden)
{
	const char *name = a->path + 1;
	size_t n = strlen(name);

	if (n > 4 && !strcmp(name + n - 4, ".css")) {
		snprintf(tag, tagsz, "<link rel=\"stylesheet\" href=\"%s\">", name);
		*open = "<style>\n";
		*close = "</style>";
		*forbidden = "</style";
		return 1;
	}
	if (n > 3 && !strcmp(name + n - 3, ".js")) {
		snprintf(tag, tagsz, "<script src=\"%s\"></script>", name);
		*open = "<script>\n";
		*close = "</script>";
		*forbidden = "</script";
		return 1;
	}
	return 0;
}

int web_assets__standalone_page(const uint8_t *profile, size_t len,
				const struct web_page_opts *opts, char **out, size_t *outlen,
				char *err, size_t errlen)
{
	const struct web_asset *index = web_assets__find("/index.html");
	const char *html = (const char *)index->data, *p = html;
	struct buf b = { 0 };
	bool embedded = false;
	int ret = -ENOMEM;

	*out = NULL;
	*outlen = 0;
	/*
	 * Walk index.html once: each asset tag is replaced by the asset's text,
	 * the embed goes in just before </head>, so it exists before the scripts
	 * at the end of <body> run.
	 */
	while (*p) {
		const char *next = NULL, *open = NULL, *close = NULL, *forbidden = NULL;
		const struct web_asset *which = NULL;
		char tag[128];
		size_t taglen = 0;

		for (size_t i = 0; i < NR_ASSETS; i++) {
			const struct web_asset *a = web_assets__at(i);
			const char *o, *c, *f, *hit;

			if (!inline_tag(a, tag, sizeof(tag), &o, &c, &f))
				continue;
			hit = strstr(p, tag);
			if (hit && (!next || hit < next)) {
				next = hit;
				which = a;
				taglen = strlen(tag);
				open = o;
				close = c;
				forbidden = f;
			}
		}
		if (!embedded) {
			const char *head = strstr(p, "</head>");

			if (head && (!next || head < next)) {
				if (buf__add(&b, p, (size_t)(head - p)))
					goto fail;
				ret = add_embed(&b, profile, len, opts);
				if (ret)
					goto fail;
				ret = -ENOMEM;
				embedded = true;
				p = head;
				continue;
			}
		}
		if (!next) {
			if (buf__str(&b, p))
				goto fail;
			break;
		}
		if (find_ci((const char *)which->data, forbidden)) {
			snprintf(err, errlen, "web asset %s contains \"%s\"", which->path, forbidden);
			ret = -EINVAL;
			goto fail;
		}
		if (buf__add(&b, p, (size_t)(next - p)) || buf__str(&b, open) ||
		    buf__add(&b, which->data, which->len) || buf__str(&b, close))
			goto fail;
		p = next + taglen;
	}
	if (!embedded) {
		snprintf(err, errlen, "web asset /index.html has no </head>");
		ret = -EINVAL;
		goto fail;
	}
	for (size_t i = 0; i < NR_ASSETS; i++) {
		const struct web_asset *a = web_assets__at(i);
		const char *o, *c, *f;
		char tag[128];

		/* A renamed tag would leave the page half-inlined: refuse it. */
		if (inline_tag(a, tag, sizeof(tag), &o, &c, &f) && strstr(html, tag) == NULL) {
			snprintf(err, errlen, "web asset /index.html does not load %s", a->path);
			ret = -EINVAL;
			goto fail;
		}
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
fail:
	if (ret == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	free(b.p);
	return ret;
}
