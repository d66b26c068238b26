// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * pyroscope: Grafana Pyroscope's ingest API, POST /ingest (Pyroscope's
 * docs, "Server HTTP API", Ingestion).  The window's metadata goes into
 * the query: name (the application and its labels), from and until (Unix
 * seconds), format=pprof, sampleRate, spyName; the body is the gzipped
 * pprof itself, as application/octet-stream (for format=pprof the server
 * reads a raw body unless the Content-Type is multipart/form-data, and
 * ungzips it).  Authorization: Bearer for a store behind an
 * authenticating proxy (Grafana Cloud), X-Scope-OrgID for a multi-tenant
 * one.
 *
 * With format=pprof, "name" carries only the prefix of the series' name:
 * the profile type comes from the pprof's sample types (isoprof's
 * "cpu"/"nanoseconds" makes the series process_cpu), so the window's
 * profile_type is not appended here; service_name is what comes before
 * the '{'.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/utf8.h"
#include "user/push/protocol.h"

/*
 * Pyroscope's limits on what "name" may carry, and where they come from
 * (grafana/pyroscope):
 *  - api/model/labelset: the application name may hold [A-Za-z0-9_.-/]
 *    only; "{" starts the labels, each "name=value", separated by ",",
 *    closed by "}", with no escape of any kind: a value ends at the first
 *    ',' or '}' and is trimmed of blanks.  So those two bytes cannot be in
 *    a value, and are replaced by '_'.
 *  - pkg/validation/validate.go: a label name must be a valid Prometheus
 *    label name ([a-zA-Z_][a-zA-Z0-9_]*; labelset also allows '.', which
 *    Prometheus' classic rule does not: the stricter rule is kept); a
 *    value valid UTF-8; no name twice.
 *  - pkg/validation/limits.go defaults: -validation.max-length-label-name
 *    1024, -validation.max-length-label-value 2048 (also the
 *    service_name), -validation.max-label-names-per-series 30, which
 *    counts the 4 labels the server adds (__name__, __delta__,
 *    service_name, pyroscope_spy): PUSH_MAX_LABELS (16) stays well below.
 *  - Names starting "__" are private and dropped by the server
 *    (IsLabelAllowedForIngestion); service_name and pyroscope_spy are
 *    set by the server from name and spyName, and a second one would be
 *    refused as a duplicate: all three are left out here.
 * Control bytes and bytes that are not UTF-8 become '_' too, so the log
 * lines and the store's UI show what was sent.
 */
#define PYRO_LABEL_NAME_MAX 1024
#define PYRO_LABEL_VALUE_MAX 2048
#define PYRO_SPY_NAME "isoprof"

static bool name_byte(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && c >= '0' && c <= '9');
}

static bool service_byte(char c)
{
	return name_byte(c, false) || c == '.' || c == '-' || c == '/';
}

/* Appends to a growing string; on failure the string is freed and *s NULL. */
struct sbuf {
	char *s;
	size_t n, cap;
	bool failed;
};

static void sb_putc(struct sbuf *b, char c)
{
	if (b->failed)
		return;
	if (b->n + 2 > b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 256;
		char *ns = realloc(b->s, ncap);

		if (!ns) {
			b->failed = true;
			return;
		}
		b->s = ns;
		b->cap = ncap;
	}
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
}

static void sb_puts(struct sbuf *b, const char *s)
{
	for (; *s; s++)
		sb_putc(b, *s);
}

/* A label name made valid into out (PYRO_LABEL_NAME_MAX + 2 bytes). */
static void clean_name(const char *in, char *out)
{
	size_t n = 0;

	if (*in >= '0' && *in <= '9')
		out[n++] = '_';
	for (; *in && n < PYRO_LABEL_NAME_MAX; in++, n++)
		out[n] = name_byte(*in, n == 0) ? *in : '_';
	out[n] = '\0';
}

/* A value without what would end it early, trimmed, cut at a whole character. */
static void put_value(struct sbuf *b, const char *v)
{
	size_t len = strlen(v), start = 0, end = len, n = 0;

	while (start < end && (v[start] == ' ' || v[start] == '\t'))
		start++;
	while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
		end--;
	for (size_t i = start; i < end;) {
		size_t k = utf8__seq((const unsigned char *)v + i, end - i);

		if (!k || (unsigned char)v[i] < 0x20 || v[i] == 0x7f || v[i] == ',' || v[i] == '}') {
			k = 1;
			if (n + 1 > PYRO_LABEL_VALUE_MAX)
				break;
			sb_putc(b, '_');
		} else {
			if (n + k > PYRO_LABEL_VALUE_MAX)
				break;
			for (size_t j = 0; j < k; j++)
				sb_putc(b, v[i + j]);
		}
		n += k;
		i += k;
	}
}

static bool value_empty(const char *v)
{
	for (; *v; v++)
		if (*v != ' ' && *v != '\t')
			return false;
	return true;
}

int pyroscope__name_param(const struct push_window *w, char **out)
{
	char names[PUSH_MAX_LABELS][PYRO_LABEL_NAME_MAX + 2];
	struct sbuf b = { 0 };
	size_t nsvc = 0, kept = 0;

	*out = NULL;
	if (!w->service || !*w->service || w->nlabels > PUSH_MAX_LABELS)
		return -EINVAL;
	for (const char *s = w->service; *s && nsvc < PYRO_LABEL_VALUE_MAX; s++, nsvc++)
		sb_putc(&b, service_byte(*s) ? *s : '_');
	sb_putc(&b, '{');
	for (size_t i = 0; i < w->nlabels; i++) {
		const struct push_label *l = &w->labels[i];
		bool dup = false;

		if (!l->name || !l->value || value_empty(l->value))
			continue;
		clean_name(l->name, names[kept]);
		if (!names[kept][0] || !strncmp(names[kept], "__", 2) ||
		    !strcmp(names[kept], "service_name") || !strcmp(names[kept], "pyroscope_spy"))
			continue;
		for (size_t j = 0; j < kept; j++)
			dup |= !strcmp(names[j], names[kept]);
		if (dup)
			continue;
		if (kept)
			sb_putc(&b, ',');
		sb_puts(&b, names[kept]);
		sb_putc(&b, '=');
		put_value(&b, l->value);
		kept++;
	}
	sb_putc(&b, '}');
	if (b.failed) {
		free(b.s);
		return -ENOMEM;
	}
	*out = b.s;
	return 0;
}

static int build(const struct push_target *t, const struct push_window *w,
		 struct push_request *rq)
{
	uint64_t from_s = w->from_ns / 1000000000ull;
	/* a window ending within a second of its start still spans one: until > from */
	uint64_t until_s = (w->until_ns + 999999999ull) / 1000000000ull;
	struct sbuf b = { 0 };
	char *name, tail[160], *bearer;
	int err;

	memset(rq, 0, sizeof(*rq));
	if (!w->body || !w->len)
		return -EINVAL;
	err = pyroscope__name_param(w, &name);
	if (err)
		return err;
	if (until_s <= from_s)
		until_s = from_s + 1;
	snprintf(tail, sizeof(tail),
		 "&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof&sampleRate=%u&spyName=%s",
		 from_s, until_s, w->sample_rate_hz ? w->sample_rate_hz : 100, PYRO_SPY_NAME);
	/* the base URL was checked when the pusher was made: kept as given */
	sb_puts(&b, t->url);
	sb_puts(&b, "/ingest?name=");
	if (b.failed || push__url_escape(name, &b.s, &b.n, &b.cap))
		b.failed = true;
	sb_puts(&b, tail);
	free(name);
	if (b.failed) {
		free(b.s);
		return -ENOMEM;
	}
	rq->url = b.s;
	err = push_request__add_header(rq, "Content-Type", "application/octet-stream");
	if (!err && t->token) {
		if (asprintf(&bearer, "Bearer %s", t->token) < 0) {
			err = -ENOMEM;
		} else {
			err = push_request__add_header(rq, "Authorization", bearer);
			explicit_bzero(bearer, strlen(bearer));
			free(bearer);
		}
	}
	if (!err && t->tenant)
		err = push_request__add_header(rq, "X-Scope-OrgID", t->tenant);
	if (err) {
		push_request__free(rq);
		return err;
	}
	rq->body = w->body;
	rq->len = w->len;
	return 0;
}

const struct push_protocol push_pyroscope = {
	.name = "pyroscope",
	.build = build,
	.classify = push_protocol__classify_http,
};
