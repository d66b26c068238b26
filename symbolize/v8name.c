// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* v8name: split V8 code names; see v8name.h for the forms and the contract. */
#include "symbolize/v8name.h"

#include <errno.h>
#include <string.h>

static const struct {
	const char *name;
	enum v8name_kind kind;
} tag_kinds[] = {
	/* Newest CODE_TYPE_LIST (src/logging/code-events.h). */
	{ "JS", V8NAME_JS },
	{ "Script", V8NAME_SCRIPT },
	{ "Eval", V8NAME_SCRIPT },
	{ "Builtin", V8NAME_BUILTIN },
	{ "BytecodeHandler", V8NAME_BYTECODE_HANDLER },
	{ "RegExp", V8NAME_REGEXP },
	{ "Stub", V8NAME_OTHER },
	{ "Handler", V8NAME_OTHER },
	{ "Callback", V8NAME_OTHER },
	/* Older LOG_EVENTS_AND_TAGS_LIST: function code under other names. */
	{ "LazyCompile", V8NAME_JS },
	{ "Function", V8NAME_JS },
	{ "InterpretedFunction", V8NAME_JS },
};

/* The newest RegExp form has no "RegExp:" tag (V8 comment: a pprof demangling hack). */
static const char regexp_prefix[] = "RegExp.> src: '";
static const char regexp_flags_sep[] = "' flags: '";

/* A tag is a capitalized word: URL schemes ("file:", "node:") are lowercase. */
#define TAG_MAX 64

enum v8name_kind v8name__tag_kind(const char *tag, size_t len)
{
	size_t i;

	if (!len)
		return V8NAME_UNKNOWN;
	for (i = 0; i < sizeof(tag_kinds) / sizeof(tag_kinds[0]); i++) {
		if (strlen(tag_kinds[i].name) == len && !memcmp(tag_kinds[i].name, tag, len))
			return tag_kinds[i].kind;
	}
	return V8NAME_OTHER;
}

bool v8name__marker_tier(const char *marker, size_t len, enum v8name_tier *tier,
			 bool *context_specialized)
{
	enum v8name_tier t;

	*tier = V8NAME_TIER_NONE;
	*context_specialized = false;
	if (!len)
		return true;
	switch (marker[0]) {
	case '~':
		t = V8NAME_TIER_INTERPRETED;
		break;
	case '^':
		t = V8NAME_TIER_BASELINE;
		break;
	case '+':
		t = V8NAME_TIER_MAGLEV;
		break;
	case '*':
		t = V8NAME_TIER_TURBOFAN;
		break;
	case '-':
		t = V8NAME_TIER_NCI;
		break;
	default:
		return false;
	}
	if (len == 2 && marker[1] == '\'' && (t == V8NAME_TIER_MAGLEV || t == V8NAME_TIER_TURBOFAN))
		*context_specialized = true;
	else if (len != 1)
		return false;
	*tier = t;
	return true;
}

/* Static strings for out->marker, so it needs no room in the buffer. */
static const char *marker_str(enum v8name_tier tier, bool context_specialized)
{
	switch (tier) {
	case V8NAME_TIER_INTERPRETED:
		return "~";
	case V8NAME_TIER_BASELINE:
		return "^";
	case V8NAME_TIER_MAGLEV:
		return context_specialized ? "+'" : "+";
	case V8NAME_TIER_TURBOFAN:
		return context_specialized ? "*'" : "*";
	case V8NAME_TIER_NCI:
		return "-";
	case V8NAME_TIER_NONE:
		break;
	}
	return "";
}

static const char *osr_marker_str(enum v8name_tier tier, bool context_specialized)
{
	switch (tier) {
	case V8NAME_TIER_BASELINE:
		return "o^";
	case V8NAME_TIER_MAGLEV:
		return context_specialized ? "o+'" : "o+";
	case V8NAME_TIER_TURBOFAN:
		return context_specialized ? "o*'" : "o*";
	default:
		return "";
	}
}

const char *v8name_kind__str(enum v8name_kind kind)
{
	switch (kind) {
	case V8NAME_JS:
		return "js";
	case V8NAME_SCRIPT:
		return "script";
	case V8NAME_BUILTIN:
		return "builtin";
	case V8NAME_BYTECODE_HANDLER:
		return "bytecode-handler";
	case V8NAME_REGEXP:
		return "regexp";
	case V8NAME_OTHER:
		return "other";
	case V8NAME_UNKNOWN:
		break;
	}
	return "unknown";
}

const char *v8name_tier__str(enum v8name_tier tier)
{
	switch (tier) {
	case V8NAME_TIER_INTERPRETED:
		return "interpreted";
	case V8NAME_TIER_BASELINE:
		return "baseline";
	case V8NAME_TIER_MAGLEV:
		return "maglev";
	case V8NAME_TIER_TURBOFAN:
		return "turbofan";
	case V8NAME_TIER_NCI:
		return "nci";
	case V8NAME_TIER_NONE:
		break;
	}
	return "";
}

static void reset(struct v8name *out)
{
	out->kind = V8NAME_UNKNOWN;
	out->tier = V8NAME_TIER_NONE;
	out->context_specialized = false;
	out->osr = false;
	out->tag = "";
	out->marker = "";
	out->function = "";
	out->script = NULL;
	out->regexp_flags = "";
	out->line = 0;
	out->column = 0;
}

/* Copy s[0..n) to *bufp as a C string; the caller sized the buffer. */
static const char *put(char **bufp, const char *s, size_t n)
{
	char *p = *bufp;

	memcpy(p, s, n);
	p[n] = '\0';
	*bufp = p + n + 1;
	return p;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * A trailing ":<decimal>" of s[0..*n): on success *n excludes it.  V8 prints
 * ints, so more than 10 digits or a value above UINT32_MAX is not a
 * position but part of the script name.
 */
static bool trailing_number(const char *s, size_t *n, uint32_t *v)
{
	size_t i = *n, digits;
	uint64_t val = 0;

	while (i > 0 && is_digit(s[i - 1]))
		i--;
	digits = *n - i;
	if (!digits || digits > 10 || i == 0 || s[i - 1] != ':')
		return false;
	for (size_t j = i; j < *n; j++)
		val = val * 10 + (uint64_t)(s[j] - '0');
	if (val > UINT32_MAX)
		return false;
	*v = (uint32_t)val;
	*n = i - 1;
	return true;
}

static const char *find_last(const char *s, size_t n, const char *needle, size_t nlen)
{
	size_t i;

	if (nlen > n)
		return NULL;
	for (i = n - nlen + 1; i-- > 0;) {
		if (!memcmp(s + i, needle, nlen))
			return s + i;
	}
	return NULL;
}

/* Without a position, a blank splits only before something script-like. */
static bool looks_like_script(const char *s, size_t n)
{
	size_t i;

	if (!n)
		return true;
	for (i = 0; i < n; i++) {
		if (s[i] == '/' || s[i] == '.' || s[i] == ':' || s[i] == '[' || s[i] == '<')
			return true;
	}
	return false;
}

enum split_mode {
	SPLIT_V8,		/* a JS or Script name as V8 composes it */
	SPLIT_NEEDS_POSITION,	/* untagged: only a full "name script:pos" is split */
	SPLIT_BARE_SCRIPT,	/* v8.log Script/Eval: a bare name is the script */
};

/* "debugname script:line:col" and its variants, see v8name.h. */
static void split_function(const char *s, size_t n, enum split_mode mode, struct v8name *out,
			   char **bufp)
{
	const char *sp = NULL, *p;
	uint32_t line = 0, col = 0, v;
	bool pos = false;
	size_t m = n, m2;

	if (trailing_number(s, &m, &v)) {
		m2 = m;
		if (trailing_number(s, &m2, &line)) {
			col = v;
			m = m2;
		} else {
			line = v;	/* old V8: "name script:line" */
		}
		pos = true;
	}

	if (m && s[0] == ' ') {
		sp = s;
	} else {
		for (p = s; p + 1 < s + m; p++) {
			if (p[0] == ' ' && p[1] == '/') {
				sp = p;
				break;
			}
		}
		if (!sp && m && s[m - 1] == ')')
			sp = find_last(s, m, " symbol(", 8);
		if (!sp)
			sp = find_last(s, m, " ", 1);
	}
	if (!pos && mode == SPLIT_BARE_SCRIPT && sp != s) {
		/* v8.log writes a top-level script as just its name. */
		out->script = put(bufp, s, n);
		return;
	}
	/*
	 * V8 writes a blank before the script even when the debug name is
	 * empty, so a leading blank is a split; elsewhere, without a position,
	 * a blank may just be part of a name ("get foo").
	 */
	if (!sp || (!pos && (mode == SPLIT_NEEDS_POSITION ||
			     (sp != s && !looks_like_script(sp + 1, (size_t)(s + m - sp - 1)))))) {
		/* Not a "name script" form: the position, if any, was part of the name. */
		out->function = put(bufp, s, n);
		return;
	}
	out->function = put(bufp, s, (size_t)(sp - s));
	out->script = put(bufp, sp + 1, (size_t)(s + m - sp - 1));
	out->line = line;
	out->column = col;
}

static void parse_regexp_new(const char *body, size_t n, struct v8name *out, char **bufp)
{
	const char *sep = find_last(body, n, regexp_flags_sep, sizeof(regexp_flags_sep) - 1);
	const char *flags;

	if (!sep) {
		/* Cut before the flags: keep what there is of the source. */
		out->function = put(bufp, body, n);
		return;
	}
	out->function = put(bufp, body, (size_t)(sep - body));
	flags = sep + sizeof(regexp_flags_sep) - 1;
	n = (size_t)(body + n - flags);
	if (n && flags[n - 1] == '\'')
		n--;
	out->regexp_flags = put(bufp, flags, n);
}

/* The part after the tag (and marker) of a name. */
static void parse_body(const char *s, size_t n, bool log, struct v8name *out, char **bufp)
{
	switch (out->kind) {
	case V8NAME_JS:
		split_function(s, n, SPLIT_V8, out, bufp);
		break;
	case V8NAME_SCRIPT:
		split_function(s, n, log ? SPLIT_BARE_SCRIPT : SPLIT_V8, out, bufp);
		break;
	case V8NAME_UNKNOWN:
		split_function(s, n, SPLIT_NEEDS_POSITION, out, bufp);
		break;
	default:
		out->function = put(bufp, s, n);
		break;
	}
}

int v8name__parse(const char *raw, size_t len, struct v8name *out, char *buf, size_t size)
{
	const char *end = raw + len, *p;
	char *b = buf;
	size_t taglen = 0;

	reset(out);
	if (size < v8name__buf_size(len))
		return -ENOSPC;

	if (len >= sizeof(regexp_prefix) - 1 &&
	    !memcmp(raw, regexp_prefix, sizeof(regexp_prefix) - 1)) {
		out->kind = V8NAME_REGEXP;
		out->tag = put(&b, raw, 6);	/* "RegExp" */
		p = raw + sizeof(regexp_prefix) - 1;
		parse_regexp_new(p, (size_t)(end - p), out, &b);
		return 0;
	}

	if (len && raw[0] >= 'A' && raw[0] <= 'Z') {
		for (p = raw + 1; p < end && p - raw < TAG_MAX; p++) {
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			      is_digit(*p) || *p == '_'))
				break;
		}
		if (p < end && *p == ':')
			taglen = (size_t)(p - raw);
	}
	if (!taglen) {
		parse_body(raw, len, false, out, &b);
		return 0;
	}

	out->tag = put(&b, raw, taglen);
	out->kind = v8name__tag_kind(raw, taglen);
	p = raw + taglen + 1;
	if ((out->kind == V8NAME_JS || out->kind == V8NAME_SCRIPT) && p < end) {
		size_t mlen = 0;

		/* newer V8 marks on-stack-replacement code with a leading 'o': "o+", "o*'" */
		if (p + 1 < end && *p == 'o' && (p[1] == '^' || p[1] == '+' || p[1] == '*')) {
			out->osr = true;
			p++;
		}
		if (p + 1 < end && (*p == '+' || *p == '*') && p[1] == '\'')
			mlen = 2;
		else if (*p == '~' || *p == '^' || *p == '+' || *p == '*' || *p == '-')
			mlen = 1;
		if (mlen) {
			v8name__marker_tier(p, mlen, &out->tier, &out->context_specialized);
			out->marker = out->osr ? osr_marker_str(out->tier, out->context_specialized) :
						 marker_str(out->tier, out->context_specialized);
			p += mlen;
		}
	}
	parse_body(p, (size_t)(end - p), false, out, &b);
	return 0;
}

int v8name__parse_log(const char *tag, const char *marker, const char *name, size_t len,
		      struct v8name *out, char *buf, size_t size)
{
	char *b = buf;

	reset(out);
	if (size < v8name__buf_size(len))
		return -ENOSPC;
	if (!tag)
		tag = "";
	out->tag = tag;
	out->kind = v8name__tag_kind(tag, strlen(tag));
	if (marker && marker[0] == 'o' && marker[1]) {
		out->osr = true;
		marker++;
	}
	if (marker && v8name__marker_tier(marker, strlen(marker), &out->tier,
					  &out->context_specialized))
		out->marker = out->osr ? osr_marker_str(out->tier, out->context_specialized) :
					 marker_str(out->tier, out->context_specialized);
	else
		out->osr = false;
	parse_body(name, len, true, out, &b);
	return 0;
}
