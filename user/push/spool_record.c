// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* spool_record: a window's metadata and body as one checked record; see spool_record.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "user/push/spool_record.h"

static const uint8_t magic[8] = { 'i', 's', 'o', 'p', 'r', 'o', 'f', 0x01 };

static void put_u16(uint8_t **p, uint16_t v)
{
	(*p)[0] = (uint8_t)v;
	(*p)[1] = (uint8_t)(v >> 8);
	*p += 2;
}

static void put_u32(uint8_t **p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		(*p)[i] = (uint8_t)(v >> (8 * i));
	*p += 4;
}

static void put_u64(uint8_t **p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		(*p)[i] = (uint8_t)(v >> (8 * i));
	*p += 8;
}

static void put_str(uint8_t **p, const char *s, size_t n)
{
	put_u16(p, (uint16_t)n);
	memcpy(*p, s, n);
	(*p)[n] = '\0';
	*p += n + 1;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint32_t crc(const uint8_t *p, size_t n)
{
	return (uint32_t)crc32_z(crc32_z(0, Z_NULL, 0), p, n);
}

int spool_record__encode(const struct push_window *w, uint8_t **out, size_t *len)
{
	const char *strs[2 + 2 * PUSH_MAX_LABELS];
	size_t lens[2 + 2 * PUSH_MAX_LABELS], nstr = 0, header = 8 + 8 + 4 + 4, total;
	uint8_t *buf, *p;

	*out = NULL;
	*len = 0;
	if (!w->service || !*w->service || w->nlabels > PUSH_MAX_LABELS || !w->body || !w->len ||
	    w->from_ns > w->until_ns)
		return -EINVAL;
	strs[nstr++] = w->service;
	strs[nstr++] = w->profile_type ? w->profile_type : "";
	for (size_t i = 0; i < w->nlabels; i++) {
		strs[nstr++] = w->labels[i].name;
		strs[nstr++] = w->labels[i].value;
	}
	for (size_t i = 0; i < nstr; i++) {
		if (!strs[i])
			return -EINVAL;
		lens[i] = strlen(strs[i]);
		if (lens[i] > SPOOL_STR_MAX)
			return -EINVAL;
		header += 2 + lens[i] + 1;
	}
	if (w->len > SIZE_MAX - header - 64)
		return -EINVAL;
	total = 8 + 4 + 4 + header + 8 + w->len + 4;
	buf = malloc(total);
	if (!buf)
		return -ENOMEM;
	p = buf;
	memcpy(p, magic, sizeof(magic));
	p += sizeof(magic);
	put_u32(&p, SPOOL_RECORD_VERSION);
	put_u32(&p, (uint32_t)header);
	put_u64(&p, w->from_ns);
	put_u64(&p, w->until_ns);
	put_u32(&p, w->sample_rate_hz);
	put_u32(&p, (uint32_t)w->nlabels);
	for (size_t i = 0; i < nstr; i++)
		put_str(&p, strs[i], lens[i]);
	put_u64(&p, w->len);
	memcpy(p, w->body, w->len);
	p += w->len;
	put_u32(&p, crc(buf, (size_t)(p - buf)));
	*out = buf;
	*len = total;
	return 0;
}

/* The next string at *pos in [0, end): 0, or -EBADMSG with *why. */
static int get_str(const uint8_t *data, size_t *pos, size_t end, const char **s,
		   const char **why)
{
	size_t n;

	if (end - *pos < 3) {
		*why = "header ends inside a string";
		return -EBADMSG;
	}
	n = (size_t)get_le(data + *pos, 2);
	if (n > SPOOL_STR_MAX) {
		*why = "string longer than the format allows";
		return -EBADMSG;
	}
	if (end - *pos - 2 < n + 1) {
		*why = "header ends inside a string";
		return -EBADMSG;
	}
	if (data[*pos + 2 + n] != '\0' || memchr(data + *pos + 2, '\0', n)) {
		*why = "string not NUL-terminated or with a NUL inside";
		return -EBADMSG;
	}
	*s = (const char *)data + *pos + 2;
	*pos += 2 + n + 1;
	return 0;
}

int spool_record__decode(const uint8_t *data, size_t len, struct push_window *w,
			 const char **why)
{
	size_t pos, hend, nlabels;
	uint64_t header_len, body_len;
	uint32_t version;
	const char *s;

	memset(w, 0, sizeof(*w));
	*why = NULL;
	if (len < SPOOL_RECORD_FIXED) {
		*why = "shorter than a record's fixed part";
		return -EBADMSG;
	}
	if (memcmp(data, magic, sizeof(magic))) {
		*why = "not an isoprof spool record (bad magic)";
		return -EBADMSG;
	}
	version = (uint32_t)get_le(data + 8, 4);
	if (version != SPOOL_RECORD_VERSION) {
		*why = "unknown record version";
		return -EBADMSG;
	}
	if (get_le(data + len - 4, 4) != crc(data, len - 4)) {
		*why = "checksum mismatch (cut short or changed)";
		return -EBADMSG;
	}
	header_len = get_le(data + 12, 4);
	/* the header, body_len and the checksum must fit; the body is what is left */
	if (header_len < 8 + 8 + 4 + 4 || header_len > len - 16 - 8 - 4) {
		*why = "header length out of range";
		return -EBADMSG;
	}
	pos = 16;
	hend = 16 + (size_t)header_len;
	w->from_ns = get_le(data + pos, 8);
	w->until_ns = get_le(data + pos + 8, 8);
	w->sample_rate_hz = (unsigned int)get_le(data + pos + 16, 4);
	nlabels = (size_t)get_le(data + pos + 20, 4);
	pos += 24;
	if (w->from_ns > w->until_ns) {
		*why = "window starts after it ends";
		return -EBADMSG;
	}
	if (nlabels > PUSH_MAX_LABELS) {
		*why = "too many labels";
		return -EBADMSG;
	}
	if (get_str(data, &pos, hend, &w->service, why) ||
	    get_str(data, &pos, hend, &w->profile_type, why))
		return -EBADMSG;
	if (!*w->service) {
		*why = "no service name";
		return -EBADMSG;
	}
	for (size_t i = 0; i < nlabels; i++) {
		if (get_str(data, &pos, hend, &w->labels[i].name, why) ||
		    get_str(data, &pos, hend, &s, why))
			return -EBADMSG;
		w->labels[i].value = s;
	}
	w->nlabels = nlabels;
	if (pos != hend) {
		*why = "header length does not match its fields";
		return -EBADMSG;
	}
	body_len = get_le(data + hend, 8);
	if (body_len != len - hend - 8 - 4) {
		*why = "body length does not match the record's size";
		return -EBADMSG;
	}
	if (!body_len) {
		*why = "empty body";
		return -EBADMSG;
	}
	w->body = data + hend + 8;
	w->len = (size_t)body_len;
	return 0;
}
